// Local notifications as apps wrote them before iOS 10 (Apple: `UILocalNotification`,
// `UIUserNotificationSettings`, `UIApplication.scheduleLocalNotification(_:)`), still in the
// SDK, deprecated: background-fetch apps of that time tell the user what a fetch found with
// `presentLocalNotificationNow`. Each call is the UserNotifications center's
// (Sources/UserNotifications): permission asked once and kept, the schedule on the app's
// clock, delivery as a line on standard error (docs/porting.md, "Local notifications").
import BackgroundTasks
import Foundation
import UserNotifications

/// The sound of a notification that plays the default one (Apple: `UILocalNotificationDefaultSoundName`).
public let UILocalNotificationDefaultSoundName = "UILocalNotificationDefaultSoundName"

/// A local notification, before iOS 10 (Apple: `UILocalNotification`). Schedule it with
/// ``BackgroundTasks/BGApplication/scheduleLocalNotification(_:)`` or present it with
/// ``BackgroundTasks/BGApplication/presentLocalNotificationNow(_:)``.
@available(*, deprecated, message: "Use UserNotifications Framework's UNNotificationRequest")
open class UILocalNotification: NSObject, @unchecked Sendable {
    // @unchecked Sendable: as Apple's, a value the app fills in on one thread before handing it over.
    /// When it fires (nil or past: at once).
    open var fireDate: Date?
    /// The time zone of `fireDate` (nil: absolute time).
    open var timeZone: TimeZone?
    /// How often it repeats (`.day`, `.hour`, `.weekOfYear`...; empty: once).
    open var repeatInterval: NSCalendar.Unit = []
    /// The calendar of the repetition.
    open var repeatCalendar: Calendar?
    /// The message.
    open var alertBody: String?
    /// The title.
    open var alertTitle: String?
    /// The action button's title.
    open var alertAction: String?
    /// Whether it has an action button.
    open var hasAction = true
    /// The launch image.
    open var alertLaunchImage: String?
    /// The sound (``UILocalNotificationDefaultSoundName`` for the default one).
    open var soundName: String?
    /// The badge to show (0: none).
    open var applicationIconBadgeNumber = 0
    /// The app's data.
    open var userInfo: [AnyHashable: Any]?
    /// The category's identifier.
    open var category: String?
    /// The identifier of the request it is scheduled as.
    let requestIdentifier = "UILocalNotification-" + UUID().uuidString

    /// A notification to fill in.
    public override init() { super.init() }

    /// The request the UserNotifications center schedules for it.
    func request(now: Date) -> UNNotificationRequest {
        let content = UNMutableNotificationContent()
        content.title = alertTitle ?? ""
        content.body = alertBody ?? ""
        if let soundName {
            content.sound = soundName == UILocalNotificationDefaultSoundName ? .default : UNNotificationSound(named: UNNotificationSoundName(soundName))
        }
        if applicationIconBadgeNumber > 0 { content.badge = NSNumber(value: applicationIconBadgeNumber) }
        if let userInfo { content.userInfo = userInfo }
        if let category { content.categoryIdentifier = category }
        return UNNotificationRequest(identifier: requestIdentifier, content: content, trigger: trigger(now: now))
    }

    /// When it fires: nil (at once) for no date, or a past one without repetition; once, after
    /// the time left; repeating, a calendar trigger matching the units below the interval.
    private func trigger(now: Date) -> UNNotificationTrigger? {
        guard let fireDate else { return nil }
        var calendar = repeatCalendar ?? Calendar(identifier: .gregorian)
        if let timeZone { calendar.timeZone = timeZone }
        let units: Set<Calendar.Component>
        switch repeatInterval {
        case []:
            // Once: after the time left, on the app's clock (the simulator's, when simulated).
            let delay = fireDate.timeIntervalSince(now)
            return delay > 0 ? UNTimeIntervalNotificationTrigger(timeInterval: delay, repeats: false) : nil
        case .minute: units = [.second]
        case .hour: units = [.minute, .second]
        case .day: units = [.hour, .minute, .second]
        case .weekday, .weekOfYear, .weekOfMonth: units = [.weekday, .hour, .minute, .second]
        case .month: units = [.day, .hour, .minute, .second]
        case .year: units = [.month, .day, .hour, .minute, .second]
        default: units = [.hour, .minute, .second]
        }
        return UNCalendarNotificationTrigger(dateMatching: calendar.dateComponents(units, from: fireDate), repeats: repeatInterval != [])
    }
}

/// What a notification may do, before iOS 10 (Apple: `UIUserNotificationType`).
@available(*, deprecated, message: "Use UserNotifications Framework's UNAuthorizationOptions")
public struct UIUserNotificationType: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// Nothing.
    public static let none: UIUserNotificationType = []
    /// A badge.
    public static let badge = UIUserNotificationType(rawValue: 1 << 0)
    /// A sound.
    public static let sound = UIUserNotificationType(rawValue: 1 << 1)
    /// An alert.
    public static let alert = UIUserNotificationType(rawValue: 1 << 2)
}

/// A category of notifications, before iOS 10 (Apple: `UIUserNotificationCategory`).
@available(*, deprecated, message: "Use UserNotifications Framework's UNNotificationCategory")
open class UIUserNotificationCategory: NSObject, @unchecked Sendable {
    // @unchecked Sendable: immutable after init.
    /// Its identifier.
    public let identifier: String?
    /// A category of `identifier`.
    public init(identifier: String?) {
        self.identifier = identifier
        super.init()
    }
}

/// The notifications an app asks to show, before iOS 10 (Apple: `UIUserNotificationSettings`).
@available(*, deprecated, message: "Use UserNotifications Framework's UNNotificationSettings")
open class UIUserNotificationSettings: NSObject, @unchecked Sendable {
    // @unchecked Sendable: immutable after init.
    /// What the notifications may do.
    public let types: UIUserNotificationType
    /// Their categories.
    public let categories: Set<UIUserNotificationCategory>?
    /// Settings of `types` and `categories`.
    public init(types: UIUserNotificationType, categories: Set<UIUserNotificationCategory>?) {
        self.types = types
        self.categories = categories
        super.init()
    }
}

/// The legacy notifications scheduled by this process, by request identifier, so that
/// `scheduledLocalNotifications` gives back the objects the app made. @unchecked Sendable:
/// `notifications` is read and written only under `lock`.
@available(*, deprecated)
private final class ScheduledLegacyNotifications: @unchecked Sendable {
    static let shared = ScheduledLegacyNotifications()
    private let lock = NSLock()
    private var notifications: [String: UILocalNotification] = [:]
    func keep(_ notification: UILocalNotification) {
        lock.lock(); defer { lock.unlock() }
        notifications[notification.requestIdentifier] = notification
    }
    func forget(_ identifiers: [String]?) {
        lock.lock()
        var dropped: [UILocalNotification] = []
        if let identifiers {
            dropped = identifiers.compactMap { notifications.removeValue(forKey: $0) }
        } else {
            dropped = Array(notifications.values)
            notifications = [:]
        }
        lock.unlock()
        withExtendedLifetime(dropped) {}
    }
    func notifications(for identifiers: [String]) -> [UILocalNotification] {
        lock.lock(); defer { lock.unlock() }
        return identifiers.compactMap { notifications[$0] }
    }
}

@available(*, deprecated, message: "Use UserNotifications Framework's UNUserNotificationCenter")
extension BGApplication {
    /// Asks to show notifications of `notificationSettings.types` (the center's permission
    /// request, answered once and kept).
    public func registerUserNotificationSettings(_ notificationSettings: UIUserNotificationSettings) {
        var options: UNAuthorizationOptions = []
        if notificationSettings.types.contains(.alert) { options.insert(.alert) }
        if notificationSettings.types.contains(.sound) { options.insert(.sound) }
        if notificationSettings.types.contains(.badge) { options.insert(.badge) }
        UNUserNotificationCenter.current().requestAuthorization(options: options) { _, _ in }
    }

    /// What the user allowed (nil before the app asked).
    public var currentUserNotificationSettings: UIUserNotificationSettings? {
        let settings = UNUserNotificationCenter.current().currentSettings()
        guard settings.authorizationStatus != .notDetermined else { return nil }
        var types: UIUserNotificationType = []
        if settings.alertSetting == .enabled { types.insert(.alert) }
        if settings.soundSetting == .enabled { types.insert(.sound) }
        if settings.badgeSetting == .enabled { types.insert(.badge) }
        return UIUserNotificationSettings(types: types, categories: nil)
    }

    /// Schedules `notification` at its `fireDate` (at once when it has none or it passed).
    public func scheduleLocalNotification(_ notification: UILocalNotification) {
        ScheduledLegacyNotifications.shared.keep(notification)
        UNUserNotificationCenter.current().add(notification.request(now: Date()))
    }

    /// Shows `notification` now.
    public func presentLocalNotificationNow(_ notification: UILocalNotification) {
        notification.fireDate = nil
        notification.repeatInterval = []
        UNUserNotificationCenter.current().add(notification.request(now: Date()))
    }

    /// The notifications scheduled by this process and still pending; setting it cancels
    /// them all and schedules the new ones.
    public var scheduledLocalNotifications: [UILocalNotification]? {
        get {
            ScheduledLegacyNotifications.shared.notifications(for: UNUserNotificationCenter.current().pendingRequestsNow().map(\.identifier))
        }
        set {
            cancelAllLocalNotifications()
            for notification in newValue ?? [] { scheduleLocalNotification(notification) }
        }
    }

    /// Cancels `notification` if it is scheduled.
    public func cancelLocalNotification(_ notification: UILocalNotification) {
        UNUserNotificationCenter.current().removePendingNotificationRequests(withIdentifiers: [notification.requestIdentifier])
        ScheduledLegacyNotifications.shared.forget([notification.requestIdentifier])
    }

    /// Cancels every scheduled notification.
    public func cancelAllLocalNotifications() {
        UNUserNotificationCenter.current().removeAllPendingNotificationRequests()
        ScheduledLegacyNotifications.shared.forget(nil)
    }
}
