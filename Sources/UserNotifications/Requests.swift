import BackgroundTasks
import Foundation

/// A notification an app asks the center to deliver (Apple: `UNNotificationRequest`): its
/// identifier (adding another request with the same identifier replaces it), a copy of its
/// content, and its trigger (`nil`: at once).
open class UNNotificationRequest: NSObject, NSCopying, @unchecked Sendable {
    // @unchecked: immutable after init (the content is an immutable copy).

    /// The app's identifier for it.
    public let identifier: String
    /// What it says (a copy of the content it was made with).
    public let content: UNNotificationContent
    /// When it is delivered; `nil` for at once.
    public let trigger: UNNotificationTrigger?

    /// A request; `content` is copied.
    public init(identifier: String, content: UNNotificationContent, trigger: UNNotificationTrigger?) {
        self.identifier = identifier
        self.content = UNNotificationContent(fields: content.fields)
        self.trigger = trigger
        super.init()
    }

    /// The same object: it is immutable.
    open func copy(with zone: NSZone? = nil) -> Any { self }

    /// A description for logs, as Foundation describes objects.
    open override var description: String {
        "<UNNotificationRequest: identifier: \(identifier), content: \(content), trigger: \(trigger.map { "\($0)" } ?? "(null)")>"
    }
}

/// A delivered notification (Apple: `UNNotification`): when, and the request it came from.
open class UNNotification: NSObject, NSCopying, @unchecked Sendable {
    // @unchecked: immutable after init.

    /// When it was delivered.
    public let date: Date
    /// The request.
    public let request: UNNotificationRequest

    init(date: Date, request: UNNotificationRequest) {
        self.date = date
        self.request = request
        super.init()
    }

    /// The same object: it is immutable.
    open func copy(with zone: NSZone? = nil) -> Any { self }

    /// A description for logs, as Foundation describes objects.
    open override var description: String {
        "<UNNotification: date: \(date), request: \(request)>"
    }
}

/// What the user did with a notification (Apple: `UNNotificationResponse`). Linux shows
/// notifications as lines and has no one to tap them: the center makes one when
/// ``UNUserNotificationCenter/simulateResponse(toNotificationWithIdentifier:actionIdentifier:userText:)``
/// or `bgtask respond` stands for the user, and gives it to the delegate's `didReceive`.
open class UNNotificationResponse: NSObject, @unchecked Sendable {
    // @unchecked: immutable after init.

    /// The notification.
    public let notification: UNNotification
    /// The action chosen: an action's identifier, ``UNNotificationDefaultActionIdentifier``
    /// or ``UNNotificationDismissActionIdentifier``.
    public let actionIdentifier: String

    init(notification: UNNotification, actionIdentifier: String) {
        self.notification = notification
        self.actionIdentifier = actionIdentifier
        super.init()
    }
}

/// A response with the text the user typed (Apple: `UNTextInputNotificationResponse`).
open class UNTextInputNotificationResponse: UNNotificationResponse, @unchecked Sendable {
    // @unchecked: immutable after init.

    /// What the user typed.
    public let userText: String

    init(notification: UNNotification, actionIdentifier: String, userText: String) {
        self.userText = userText
        super.init(notification: notification, actionIdentifier: actionIdentifier)
    }
}

/// An action's icon (Apple: `UNNotificationActionIcon`).
open class UNNotificationActionIcon: NSObject, @unchecked Sendable {
    // @unchecked: immutable after init.

    /// The image's name.
    let name: String

    private init(name: String) {
        self.name = name
        super.init()
    }

    /// An SF Symbol.
    public convenience init(systemImageName: String) { self.init(name: systemImageName) }
    /// An image from the app's asset catalog.
    public convenience init(templateImageName: String) { self.init(name: templateImageName) }
}

/// A button on a notification (Apple: `UNNotificationAction`).
open class UNNotificationAction: NSObject, @unchecked Sendable {
    // @unchecked: immutable after init.

    /// The app's identifier for it (the response's `actionIdentifier`).
    public let identifier: String
    /// The button's title.
    public let title: String
    /// How it behaves.
    public let options: UNNotificationActionOptions
    /// Its icon.
    public let icon: UNNotificationActionIcon?

    /// An action.
    public init(identifier: String, title: String, options: UNNotificationActionOptions = [], icon: UNNotificationActionIcon? = nil) {
        self.identifier = identifier
        self.title = title
        self.options = options
        self.icon = icon
        super.init()
    }

    /// Equal when the identifiers (and, for an action, the title and options) are.
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UNNotificationAction else { return false }
        return other.identifier == identifier && other.title == title && other.options == options
    }

    /// The identifier's hash.
    open override var hash: Int { identifier.hashValue }
}

/// An action that asks for text (Apple: `UNTextInputNotificationAction`).
open class UNTextInputNotificationAction: UNNotificationAction, @unchecked Sendable {
    // @unchecked: immutable after init.

    /// The send button's title.
    public let textInputButtonTitle: String
    /// The text field's placeholder.
    public let textInputPlaceholder: String

    /// A text action.
    public init(identifier: String, title: String, options: UNNotificationActionOptions = [], icon: UNNotificationActionIcon? = nil, textInputButtonTitle: String, textInputPlaceholder: String) {
        self.textInputButtonTitle = textInputButtonTitle
        self.textInputPlaceholder = textInputPlaceholder
        super.init(identifier: identifier, title: title, options: options, icon: icon)
    }

    /// A text action with an empty button title and placeholder (the system's), as Apple's
    /// class inherits the plain action's initializer:
    /// `UNTextInputNotificationAction(identifier: "reply", title: "Reply", options: [])`.
    public convenience override init(identifier: String, title: String, options: UNNotificationActionOptions = [], icon: UNNotificationActionIcon? = nil) {
        self.init(identifier: identifier, title: title, options: options, icon: icon, textInputButtonTitle: "", textInputPlaceholder: "")
    }
}

/// A kind of notification and its actions (Apple: `UNNotificationCategory`). Categories are
/// equal when their identifiers are, so a set holds one per identifier.
open class UNNotificationCategory: NSObject, @unchecked Sendable {
    // @unchecked: immutable after init.

    /// The identifier contents name in `categoryIdentifier`.
    public let identifier: String
    /// Its buttons.
    public let actions: [UNNotificationAction]
    /// The Siri intents it stands for.
    public let intentIdentifiers: [String]
    /// How it behaves.
    public let options: UNNotificationCategoryOptions
    /// The text shown when previews are hidden ("" for the system's).
    public let hiddenPreviewsBodyPlaceholder: String
    /// The format of a group's summary ("" for the system's).
    public let categorySummaryFormat: String

    /// A category with a placeholder and a summary format.
    public init(identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String], hiddenPreviewsBodyPlaceholder: String?, categorySummaryFormat: String?, options: UNNotificationCategoryOptions = []) {
        self.identifier = identifier
        self.actions = actions
        self.intentIdentifiers = intentIdentifiers
        self.options = options
        self.hiddenPreviewsBodyPlaceholder = hiddenPreviewsBodyPlaceholder ?? ""
        self.categorySummaryFormat = categorySummaryFormat ?? ""
        super.init()
    }

    /// A category.
    public convenience init(identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String], options: UNNotificationCategoryOptions = []) {
        self.init(identifier: identifier, actions: actions, intentIdentifiers: intentIdentifiers, hiddenPreviewsBodyPlaceholder: nil, categorySummaryFormat: nil, options: options)
    }

    /// A category with a placeholder for hidden previews.
    public convenience init(identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String], hiddenPreviewsBodyPlaceholder: String, options: UNNotificationCategoryOptions = []) {
        self.init(identifier: identifier, actions: actions, intentIdentifiers: intentIdentifiers, hiddenPreviewsBodyPlaceholder: hiddenPreviewsBodyPlaceholder, categorySummaryFormat: nil, options: options)
    }

    /// Equal when the identifiers (and, for an action, the title and options) are.
    open override func isEqual(_ object: Any?) -> Bool {
        (object as? UNNotificationCategory)?.identifier == identifier
    }

    /// The identifier's hash.
    open override var hash: Int { identifier.hashValue }
}

/// What the app may do, as the user set it (Apple: `UNNotificationSettings`): from
/// ``UNUserNotificationCenter/getNotificationSettings(completionHandler:)``.
open class UNNotificationSettings: NSObject, @unchecked Sendable {
    // @unchecked: immutable after init.

    /// Whether the app may post notifications.
    public let authorizationStatus: UNAuthorizationStatus
    /// Sounds.
    public let soundSetting: UNNotificationSetting
    /// The badge.
    public let badgeSetting: UNNotificationSetting
    /// Alerts.
    public let alertSetting: UNNotificationSetting
    /// Notification Center's list.
    public let notificationCenterSetting: UNNotificationSetting
    /// The lock screen.
    public let lockScreenSetting: UNNotificationSetting
    /// CarPlay (none on Linux).
    public let carPlaySetting: UNNotificationSetting
    /// Critical alerts (an entitlement Apple grants: none on Linux).
    public let criticalAlertSetting: UNNotificationSetting
    /// Announcements by Siri (none on Linux).
    public let announcementSetting: UNNotificationSetting
    /// Time-sensitive delivery.
    public let timeSensitiveSetting: UNNotificationSetting
    /// The scheduled summary (none on Linux).
    public let scheduledDeliverySetting: UNNotificationSetting
    /// Direct messages (none on Linux).
    public let directMessagesSetting: UNNotificationSetting
    /// How alerts look.
    public let alertStyle: UNAlertStyle
    /// When previews show.
    public let showPreviewsSetting: UNShowPreviewsSetting
    /// Whether the app said it has its own settings screen.
    public let providesAppNotificationSettings: Bool

    init(status: UNAuthorizationStatus, options: UNAuthorizationOptions) {
        let allowed = status == .authorized || status == .provisional || status == .ephemeral
        func setting(_ option: UNAuthorizationOptions) -> UNNotificationSetting {
            allowed && options.contains(option) ? .enabled : .disabled
        }
        authorizationStatus = status
        soundSetting = setting(.sound)
        badgeSetting = setting(.badge)
        // A provisional authorization delivers quietly: to the list, not as alerts.
        alertSetting = status == .provisional ? .disabled : setting(.alert)
        notificationCenterSetting = allowed ? .enabled : .disabled
        lockScreenSetting = allowed && status != .provisional ? .enabled : .disabled
        carPlaySetting = .notSupported
        criticalAlertSetting = .notSupported
        announcementSetting = .notSupported
        timeSensitiveSetting = allowed ? .enabled : .disabled
        scheduledDeliverySetting = .notSupported
        directMessagesSetting = .notSupported
        alertStyle = alertSetting == .enabled ? .banner : .none
        showPreviewsSetting = .always
        providesAppNotificationSettings = options.contains(.providesAppNotificationSettings)
        super.init()
    }
}

extension UNNotificationResponse {
    /// The scene the response is for (Apple: `targetScene`): always `nil` here, as no scene
    /// is shown.
    public var targetScene: UIScene? { nil }
}

extension UIScene.ConnectionOptions {
    /// The response to a notification that launched the app (Apple: `notificationResponse`):
    /// the tap bgtaskd started the app for (`bgtask respond`), `nil` for any other launch.
    /// The delegate's `didReceive` hears it too, once the launch has finished, as on iOS.
    public var notificationResponse: UNNotificationResponse? {
        // Only a launch for a tap has one: any other launch asks nothing of the notification
        // center (making it reads the app's kept files).
        guard ProcessInfo.processInfo.environment[UNUserNotificationCenter.launchNotificationVariable] != nil else { return nil }
        return UNUserNotificationCenter.current().launchResponse()
    }
}
