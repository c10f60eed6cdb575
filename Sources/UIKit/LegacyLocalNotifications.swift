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
    var requestIdentifier = UILocalNotification.identifierPrefix + UUID().uuidString
    /// What the identifiers of its requests begin with (to find them after a relaunch).
    static let identifierPrefix = "UILocalNotification-"

    /// A notification to fill in.
    public override init() { super.init() }

    /// A copy of `original` with a request identifier of its own, as the system keeps a copy
    /// of each notification scheduled (Apple: "The system keeps a copy of this object"): the
    /// same object scheduled three times, its date changed between, fires three times.
    init(copyOf original: UILocalNotification) {
        super.init()
        fireDate = original.fireDate
        timeZone = original.timeZone
        repeatInterval = original.repeatInterval
        repeatCalendar = original.repeatCalendar
        alertBody = original.alertBody
        alertTitle = original.alertTitle
        alertAction = original.alertAction
        hasAction = original.hasAction
        alertLaunchImage = original.alertLaunchImage
        soundName = original.soundName
        applicationIconBadgeNumber = original.applicationIconBadgeNumber
        userInfo = original.userInfo
        category = original.category
        scheduledFrom = original
    }

    /// The object this copy was scheduled from (``cancelLocalNotification(_:)`` given the
    /// app's own object cancels the copies made of it); weak, so that another object made
    /// where a released one was is not taken for it.
    weak var scheduledFrom: UILocalNotification?

    /// Why `fireDate` can be no moment to fire at (NaN, an infinity, or outside the years
    /// the calendar counts, 1 to 4001); nil when it can.
    var fireDateProblem: String? {
        guard let fireDate else { return nil }
        let seconds = fireDate.timeIntervalSinceReferenceDate
        guard !seconds.isFinite || fireDate < Date.distantPast || fireDate > Date.distantFuture else { return nil }
        return "its fireDate (\(seconds) seconds from 2001) is no date to fire at"
    }

    /// A notification kept by the center from an earlier launch.
    init(rebuiltFrom request: UNNotificationRequest) {
        super.init()
        requestIdentifier = request.identifier
        let content = request.content
        alertTitle = content.title.isEmpty ? nil : content.title
        alertBody = content.body
        applicationIconBadgeNumber = content.badge?.intValue ?? 0
        if content.sound != nil { soundName = UILocalNotificationDefaultSoundName }
        userInfo = content.userInfo.isEmpty ? nil : content.userInfo
        category = content.categoryIdentifier.isEmpty ? nil : content.categoryIdentifier
        fireDate = (request.trigger as? UNCalendarNotificationTrigger)?.nextTriggerDate()
            ?? (request.trigger as? UNTimeIntervalNotificationTrigger)?.nextTriggerDate()
    }

    /// The request the UserNotifications center schedules for it (`immediately`: shown now,
    /// under an identifier of its own, so a scheduled one stays scheduled).
    func request(now: Date, immediately: Bool = false) -> UNNotificationRequest {
        let content = UNMutableNotificationContent()
        content.title = alertTitle ?? ""
        content.body = alertBody ?? ""
        if let soundName {
            content.sound = soundName == UILocalNotificationDefaultSoundName ? .default : UNNotificationSound(named: UNNotificationSoundName(soundName))
        }
        if applicationIconBadgeNumber > 0 { content.badge = NSNumber(value: applicationIconBadgeNumber) }
        if let userInfo { content.userInfo = userInfo }
        if let category { content.categoryIdentifier = category }
        if immediately {
            return UNNotificationRequest(identifier: Self.identifierPrefix + UUID().uuidString, content: content, trigger: nil)
        }
        return UNNotificationRequest(identifier: requestIdentifier, content: content, trigger: trigger(now: now))
    }

    /// When it fires: nil (at once) for no date, or a past one without repetition; once, after
    /// the time left; repeating, a calendar trigger matching the units below the interval (in
    /// its calendar and time zone). A repeating one fires at the first match from now, even if
    /// `fireDate` is later (the center has no trigger that starts at a date): documented.
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
        var components = calendar.dateComponents(units, from: fireDate)
        components.calendar = calendar
        components.timeZone = calendar.timeZone
        return UNCalendarNotificationTrigger(dateMatching: components, repeats: true)
    }
}

/// What a notification may do, before iOS 10 (Apple: `UIUserNotificationType`).
@available(*, deprecated, message: "Use UserNotifications Framework's UNAuthorizationOptions")
public struct UIUserNotificationType: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// A badge.
    public static let badge = UIUserNotificationType(rawValue: 1 << 0)
    /// A sound.
    public static let sound = UIUserNotificationType(rawValue: 1 << 1)
    /// An alert.
    public static let alert = UIUserNotificationType(rawValue: 1 << 2)
}

/// A category of notifications, before iOS 10 (Apple: `UIUserNotificationCategory`): its
/// actions are kept; Linux shows no buttons.
@available(*, deprecated, message: "Use UserNotifications Framework's UNNotificationCategory")
open class UIUserNotificationCategory: NSObject, @unchecked Sendable {
    // @unchecked Sendable: as Apple's, filled in on one thread before it is handed over.
    /// Its identifier.
    open internal(set) var identifier: String?
    var actionsByContext: [UIUserNotificationActionContext: [UIUserNotificationAction]] = [:]
    /// A category to fill in (``UIMutableUserNotificationCategory``).
    public override init() { super.init() }
    /// Its actions in `context`.
    open func actions(for context: UIUserNotificationActionContext) -> [UIUserNotificationAction]? { actionsByContext[context] }
}

/// A category being filled in (Apple: `UIMutableUserNotificationCategory`).
@available(*, deprecated, message: "Use UserNotifications Framework's UNNotificationCategory")
open class UIMutableUserNotificationCategory: UIUserNotificationCategory, @unchecked Sendable {
    // @unchecked Sendable: as its superclass.
    /// Its identifier.
    open override var identifier: String? {
        get { super.identifier }
        set { super.identifier = newValue }
    }
    /// Sets its actions in `context`.
    open func setActions(_ actions: [UIUserNotificationAction]?, for context: UIUserNotificationActionContext) {
        actionsByContext[context] = actions
    }
}

/// Where a category's actions show, before iOS 10 (Apple: `UIUserNotificationActionContext`).
@available(*, deprecated)
public enum UIUserNotificationActionContext: UInt, Sendable {
    /// The alert's full set.
    case `default`
    /// Where room is short.
    case minimal
}

/// How an action runs the app, before iOS 10 (Apple: `UIUserNotificationActivationMode`).
@available(*, deprecated)
public enum UIUserNotificationActivationMode: UInt, Sendable {
    /// In the foreground.
    case foreground
    /// In the background.
    case background
}

/// A button of a notification, before iOS 10 (Apple: `UIUserNotificationAction`).
@available(*, deprecated, message: "Use UserNotifications Framework's UNNotificationAction")
open class UIUserNotificationAction: NSObject, @unchecked Sendable {
    // @unchecked Sendable: as Apple's, filled in on one thread before it is handed over.
    /// Its identifier.
    open internal(set) var identifier: String?
    /// Its title.
    open internal(set) var title: String?
    /// How it runs the app.
    open internal(set) var activationMode: UIUserNotificationActivationMode = .background
    /// Whether it needs the device unlocked.
    open internal(set) var isAuthenticationRequired = false
    /// Whether it destroys something.
    open internal(set) var isDestructive = false
    /// An action to fill in (``UIMutableUserNotificationAction``).
    public override init() { super.init() }
}

/// A button being filled in (Apple: `UIMutableUserNotificationAction`).
@available(*, deprecated, message: "Use UserNotifications Framework's UNNotificationAction")
open class UIMutableUserNotificationAction: UIUserNotificationAction, @unchecked Sendable {
    // @unchecked Sendable: as its superclass.
    open override var identifier: String? { get { super.identifier } set { super.identifier = newValue } }
    open override var title: String? { get { super.title } set { super.title = newValue } }
    open override var activationMode: UIUserNotificationActivationMode { get { super.activationMode } set { super.activationMode = newValue } }
    open override var isAuthenticationRequired: Bool { get { super.isAuthenticationRequired } set { super.isAuthenticationRequired = newValue } }
    open override var isDestructive: Bool { get { super.isDestructive } set { super.isDestructive = newValue } }
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

/// The legacy notifications scheduled by this process, per app (a simulated device runs
/// several apps in one process, each with its own center) and by request identifier, so that
/// `scheduledLocalNotifications` gives back the copies the system keeps.
@available(*, deprecated)
private final class ScheduledLegacyNotifications: Sendable {
    static let shared = ScheduledLegacyNotifications()
    /// Each app's notifications, with its application held weakly: a table whose application
    /// is gone is another app's place no longer (an identifier may be reused), and goes.
    private let tables = WeaklyKeyedTable<BGApplication, [String: UILocalNotification]>()

    /// `body` on `application`'s notifications, under the table's lock.
    private func withTable<Result>(of application: BGApplication, _ body: (inout [String: UILocalNotification]) -> Result) -> Result {
        tables.update(application, default: [:], body)
    }

    func keep(_ notification: UILocalNotification, for application: BGApplication) {
        withTable(of: application) { $0[notification.requestIdentifier] = notification }
    }
    /// The request identifiers `notification` stands for: its own, and those of the copies
    /// scheduled from it.
    func identifiers(of notification: UILocalNotification, for application: BGApplication) -> [String] {
        withTable(of: application) { notifications in
            [notification.requestIdentifier] + notifications.filter { $0.value.scheduledFrom === notification }.map(\.key).sorted()
        }
    }
    func forget(_ identifiers: [String], for application: BGApplication) {
        let dropped = withTable(of: application) { notifications in identifiers.compactMap { notifications.removeValue(forKey: $0) } }
        withExtendedLifetime(dropped) {}
    }
    /// The notifications of the pending `requests`: the copies scheduled in this process, and
    /// objects rebuilt from the request for those kept from an earlier launch; entries no
    /// longer pending are dropped.
    func notifications(for requests: [UNNotificationRequest], of application: BGApplication) -> [UILocalNotification] {
        let legacy = requests.filter { $0.identifier.hasPrefix(UILocalNotification.identifierPrefix) }
        let (result, dropped) = withTable(of: application) { notifications -> ([UILocalNotification], [String: UILocalNotification]) in
            var result: [UILocalNotification] = []
            var kept: [String: UILocalNotification] = [:]
            for request in legacy {
                let notification = notifications[request.identifier] ?? UILocalNotification(rebuiltFrom: request)
                kept[request.identifier] = notification
                result.append(notification)
            }
            defer { notifications = kept }
            return (result, notifications)
        }
        withExtendedLifetime(dropped) {}
        return result
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
        ownNotificationCenter.requestAuthorization(options: options) { _, _ in }
    }

    /// What the user allowed (nil before the app asked).
    public var currentUserNotificationSettings: UIUserNotificationSettings? {
        let settings = ownNotificationCenter.currentSettings()
        guard settings.authorizationStatus != .notDetermined else { return nil }
        var types: UIUserNotificationType = []
        if settings.alertSetting == .enabled { types.insert(.alert) }
        if settings.soundSetting == .enabled { types.insert(.sound) }
        if settings.badgeSetting == .enabled { types.insert(.badge) }
        return UIUserNotificationSettings(types: types, categories: nil)
    }

    /// Schedules a copy of `notification` at its `fireDate` (at once when it has none or it
    /// passed), as iOS keeps a copy: scheduling the object again, changed or not, schedules
    /// another. A `fireDate` that is no date (NaN, an infinity, beyond the years 1 to 4001)
    /// schedules nothing, said in the app's log.
    public func scheduleLocalNotification(_ notification: UILocalNotification) {
        if let problem = notification.fireDateProblem {
            logDiagnostic(.warning, "scheduleLocalNotification: \(problem): not scheduled")
            return
        }
        let copy = UILocalNotification(copyOf: notification)
        ScheduledLegacyNotifications.shared.keep(copy, for: self)
        ownNotificationCenter.add(copy.request(now: Date()))
    }

    /// Shows `notification` now (a scheduled one stays scheduled; its `fireDate` is not read).
    public func presentLocalNotificationNow(_ notification: UILocalNotification) {
        ownNotificationCenter.add(notification.request(now: Date(), immediately: true))
    }

    /// The notifications scheduled by this process and still pending; setting it cancels
    /// them all and schedules the new ones.
    public var scheduledLocalNotifications: [UILocalNotification]? {
        get {
            ScheduledLegacyNotifications.shared.notifications(for: ownNotificationCenter.pendingRequestsNow(), of: self)
        }
        set {
            cancelAllLocalNotifications()
            for notification in newValue ?? [] { scheduleLocalNotification(notification) }
        }
    }

    /// Cancels `notification` if it is scheduled: one of `scheduledLocalNotifications` (a
    /// copy the system keeps), or the app's own object, whose every scheduled copy is cancelled.
    public func cancelLocalNotification(_ notification: UILocalNotification) {
        let identifiers = ScheduledLegacyNotifications.shared.identifiers(of: notification, for: self)
        ownNotificationCenter.removePendingNotificationRequests(withIdentifiers: identifiers)
        ScheduledLegacyNotifications.shared.forget(identifiers, for: self)
    }

    /// Cancels every scheduled notification (those of `UILocalNotification`; requests the
    /// app added through UNUserNotificationCenter stay).
    public func cancelAllLocalNotifications() {
        let center = ownNotificationCenter
        let legacy = center.pendingRequestsNow().map(\.identifier).filter { $0.hasPrefix(UILocalNotification.identifierPrefix) }
        center.removePendingNotificationRequests(withIdentifiers: legacy)
        ScheduledLegacyNotifications.shared.forget(legacy, for: self)
    }
}

@available(*, deprecated)
extension BGApplication {
    /// This app's notification center, whichever app's context is current where the legacy
    /// call is made.
    fileprivate var ownNotificationCenter: UNUserNotificationCenter {
        withOwnContext { UNUserNotificationCenter.current() }
    }
}
