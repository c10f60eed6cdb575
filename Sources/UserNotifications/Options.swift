// As Apple's module, `import UserNotifications` alone brings Foundation (`NSObject`, `Date`,
// `DateComponents`, `URL`).
@_exported import Foundation
// `UNAuthorizationStatus`, `UNNotificationSetting`, `UNAlertStyle`, `UNShowPreviewsSetting`
// and `UNNotificationInterruptionLevel` are C enums, imported as open enums as on iOS (a
// `switch` with `@unknown default:` compiles without a warning): CUserNotificationsTypes.
@_exported import CUserNotificationsTypes
// What Apple's Foundation brings beside it (Combine, Observation, os_unfair_lock, Dispatch's
// time constants, `ProcessInfo()`): Sources/FoundationCompat.
@_exported import FoundationCompat

// The option sets, constants and errors of Apple's UserNotifications, with Apple's names
// and raw values (docs/porting.md, "Local notifications").

/// What an app asks the user to allow (Apple: `UNAuthorizationOptions`).
public struct UNAuthorizationOptions: OptionSet, Hashable, Sendable {
    /// The option bits (Apple's values).
    public let rawValue: UInt
    /// Options from their bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// Update the app's badge.
    public static let badge = UNAuthorizationOptions(rawValue: 1 << 0)
    /// Play sounds.
    public static let sound = UNAuthorizationOptions(rawValue: 1 << 1)
    /// Show alerts.
    public static let alert = UNAuthorizationOptions(rawValue: 1 << 2)
    /// Show notifications in CarPlay.
    public static let carPlay = UNAuthorizationOptions(rawValue: 1 << 3)
    /// Play sounds for critical alerts (an entitlement Apple grants).
    public static let criticalAlert = UNAuthorizationOptions(rawValue: 1 << 4)
    /// The app has its own notification settings screen.
    public static let providesAppNotificationSettings = UNAuthorizationOptions(rawValue: 1 << 5)
    /// Deliver quietly, without asking first.
    public static let provisional = UNAuthorizationOptions(rawValue: 1 << 6)
    /// Siri may read notifications aloud (deprecated on iOS 15).
    public static let announcement = UNAuthorizationOptions(rawValue: 1 << 7)
    /// Time-sensitive notifications (deprecated on iOS 15: an entitlement instead).
    public static let timeSensitive = UNAuthorizationOptions(rawValue: 1 << 8)
}

/// How a notification presents while the app is in the foreground, the answer of
/// ``UNUserNotificationCenterDelegate/userNotificationCenter(_:willPresent:withCompletionHandler:)``
/// (Apple: `UNNotificationPresentationOptions`). An empty set shows nothing.
public struct UNNotificationPresentationOptions: OptionSet, Hashable, Sendable {
    /// The option bits (Apple's values).
    public let rawValue: UInt
    /// Options from their bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// Apply the notification's badge.
    public static let badge = UNNotificationPresentationOptions(rawValue: 1 << 0)
    /// Play its sound.
    public static let sound = UNNotificationPresentationOptions(rawValue: 1 << 1)
    /// Show it as an alert (deprecated on iOS 14: `.banner` and `.list`).
    public static let alert = UNNotificationPresentationOptions(rawValue: 1 << 2)
    /// Keep it in Notification Center.
    public static let list = UNNotificationPresentationOptions(rawValue: 1 << 3)
    /// Show it as a banner.
    public static let banner = UNNotificationPresentationOptions(rawValue: 1 << 4)
}

/// How an action behaves (Apple: `UNNotificationActionOptions`).
public struct UNNotificationActionOptions: OptionSet, Hashable, Sendable {
    /// The option bits (Apple's values).
    public let rawValue: UInt
    /// Options from their bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// Only on an unlocked device.
    public static let authenticationRequired = UNNotificationActionOptions(rawValue: 1 << 0)
    /// Shown as destructive.
    public static let destructive = UNNotificationActionOptions(rawValue: 1 << 1)
    /// Opens the app.
    public static let foreground = UNNotificationActionOptions(rawValue: 1 << 2)
}

/// How a category behaves (Apple: `UNNotificationCategoryOptions`).
public struct UNNotificationCategoryOptions: OptionSet, Hashable, Sendable {
    /// The option bits (Apple's values).
    public let rawValue: UInt
    /// Options from their bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// Tell the delegate when the user dismisses.
    public static let customDismissAction = UNNotificationCategoryOptions(rawValue: 1 << 0)
    /// Allowed in CarPlay.
    public static let allowInCarPlay = UNNotificationCategoryOptions(rawValue: 1 << 1)
    /// Show the title when previews are hidden.
    public static let hiddenPreviewsShowTitle = UNNotificationCategoryOptions(rawValue: 1 << 2)
    /// Show the subtitle when previews are hidden.
    public static let hiddenPreviewsShowSubtitle = UNNotificationCategoryOptions(rawValue: 1 << 3)
    /// Siri may announce them.
    public static let allowAnnouncement = UNNotificationCategoryOptions(rawValue: 1 << 4)
}

/// The action identifier of a response to a notification the user opened (Apple's value).
public let UNNotificationDefaultActionIdentifier = "com.apple.UNNotificationDefaultActionIdentifier"
/// The action identifier of a response to a notification the user dismissed (Apple's value).
public let UNNotificationDismissActionIdentifier = "com.apple.UNNotificationDismissActionIdentifier"

/// The error domain of the notification center's errors (Apple: `UNErrorDomain`).
public let UNErrorDomain = "UNErrorDomain"

/// An error of the notification center (Apple: `UNError`), an `NSError` of ``UNErrorDomain``
/// when bridged: `catch UNError.notificationsNotAllowed`, or `catch let error as UNError`
/// and its `code`. Its description names the request and the reason.
public struct UNError: CustomNSError, Hashable, @unchecked Sendable {
    // @unchecked: immutable; `userInfo` holds what the maker gave, as Apple's error does.

    /// Apple's codes: an open C enum, as on iOS (a `switch` takes `@unknown default:`).
    public typealias Code = UNErrorCode

    /// What went wrong.
    public let code: Code
    /// The error's user info (Apple's); the center's own errors carry their message as
    /// `NSLocalizedDescriptionKey`.
    public let userInfo: [String: Any]

    /// An error with `code` (Apple's initializer: what an app's tests use to fake a refusal).
    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.code = code
        self.userInfo = userInfo
    }

    /// The center's error with `code`, described by `message` (naming the culprit).
    init(_ code: Code, message: String) {
        self.init(code, userInfo: [NSLocalizedDescriptionKey: message])
    }

    /// The description: the message given, else Apple's wording for the code.
    var message: String {
        if let message = userInfo[NSLocalizedDescriptionKey] as? String { return message }
        switch code {
        case .notificationsNotAllowed: return "Notifications are not allowed for this application"
        case .notificationInvalidNoDate: return "Invalid notification: no date"
        case .badgeInputInvalid: return "Invalid badge count"
        default: return "The operation couldn't be completed. (UNErrorDomain error \(code.rawValue).)"
        }
    }

    /// ``UNErrorDomain``.
    public static var errorDomain: String { UNErrorDomain }
    /// The code's raw value.
    public var errorCode: Int { code.rawValue }
    /// `userInfo`, with the description.
    public var errorUserInfo: [String: Any] {
        userInfo.merging([NSLocalizedDescriptionKey: message]) { given, _ in given }
    }
    /// The description.
    public var localizedDescription: String { message }

    /// The app is not allowed to post notifications.
    public static let notificationsNotAllowed = Code.notificationsNotAllowed
    /// An attachment's URL is not a readable file.
    public static let attachmentInvalidURL = Code.attachmentInvalidURL
    /// An attachment's type is not one the system shows.
    public static let attachmentUnrecognizedType = Code.attachmentUnrecognizedType
    /// An attachment's file is too large.
    public static let attachmentInvalidFileSize = Code.attachmentInvalidFileSize
    /// An attachment is not in the data store.
    public static let attachmentNotInDataStore = Code.attachmentNotInDataStore
    /// An attachment could not be moved into the data store.
    public static let attachmentMoveIntoDataStoreFailed = Code.attachmentMoveIntoDataStoreFailed
    /// An attachment's file is corrupt.
    public static let attachmentCorrupt = Code.attachmentCorrupt
    /// The trigger has no date to come.
    public static let notificationInvalidNoDate = Code.notificationInvalidNoDate
    /// The notification has no content.
    public static let notificationInvalidNoContent = Code.notificationInvalidNoContent
    /// The content-providing object is not allowed.
    public static let contentProvidingObjectNotAllowed = Code.contentProvidingObjectNotAllowed
    /// The content-providing object is invalid.
    public static let contentProvidingInvalid = Code.contentProvidingInvalid
    /// The badge count is invalid.
    public static let badgeInputInvalid = Code.badgeInputInvalid

    /// Errors compare by code, as Apple's `UNError` values do.
    public static func == (lhs: UNError, rhs: UNError) -> Bool { lhs.code == rhs.code }
    /// The code's hash.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

extension UNError.Code {
    /// `catch UNError.notificationsNotAllowed`: whether `error` is a ``UNError`` (or an
    /// `NSError` of ``UNErrorDomain``) with this code.
    public static func ~= (code: UNError.Code, error: any Error) -> Bool {
        if let error = error as? UNError { return error.code == code }
        let bridged = error as NSError
        return bridged.domain == UNErrorDomain && bridged.code == code.rawValue
    }
}

extension UNAuthorizationStatus {
    /// The status of `rawValue` when it is one of Apple's five (an imported C enum takes any
    /// raw value).
    static func known(rawValue: Int) -> UNAuthorizationStatus? {
        [.notDetermined, .denied, .authorized, .provisional, .ephemeral].first { $0.rawValue == rawValue }
    }
}
