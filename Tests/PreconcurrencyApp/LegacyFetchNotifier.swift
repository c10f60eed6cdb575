// A background-fetch app of the iOS 8-9 years telling the user what a fetch found, with
// the local-notification API of that time (deprecated in iOS 10, still in the SDK): Xcode
// warns about each use and builds; so does this target (the group DeprecatedDeclaration stays
// a warning here: Package.swift). Run by SourceCompatibilityTests on a simulated device.
import UIKit

public enum LegacyFetchNotifier {
    /// Asks for alerts, badges and sounds, as `didFinishLaunching` did.
    public static func askPermission() {
        let settings = UIUserNotificationSettings(types: [.alert, .badge, .sound], categories: nil)
        UIApplication.shared.registerUserNotificationSettings(settings)
    }

    /// Whether the user allowed alerts.
    public static var alertsAllowed: Bool {
        UIApplication.shared.currentUserNotificationSettings?.types.contains(.alert) ?? false
    }

    /// Tells the user at once, from `performFetchWithCompletionHandler`.
    public static func tellUser(found count: Int) {
        let notification = UILocalNotification()
        notification.alertBody = "\(count) new stories"
        notification.soundName = UILocalNotificationDefaultSoundName
        notification.applicationIconBadgeNumber = count
        UIApplication.shared.presentLocalNotificationNow(notification)
    }

    /// A reminder in an hour, also shown now (the scheduled one stays scheduled).
    public static func remindLater() {
        let notification = UILocalNotification()
        notification.fireDate = Date(timeIntervalSinceNow: 3600)
        notification.alertTitle = "Reminder"
        notification.alertBody = "Stories are waiting"
        UIApplication.shared.scheduleLocalNotification(notification)
        UIApplication.shared.presentLocalNotificationNow(notification)
    }

    /// The reminders still to come.
    public static var scheduledCount: Int { UIApplication.shared.scheduledLocalNotifications?.count ?? 0 }

    /// Cancels them all.
    public static func cancelAll() { UIApplication.shared.cancelAllLocalNotifications() }

    /// One notification object scheduled for each of `hours` hours from now, its date changed
    /// between (the system keeps a copy of each: as many reminders as schedules); returned so
    /// that the app can cancel it.
    public static func remind(inHours hours: [Int]) -> UILocalNotification {
        let notification = UILocalNotification()
        notification.alertBody = "Stories are waiting"
        for hour in hours {
            notification.fireDate = Date(timeIntervalSinceNow: TimeInterval(hour) * 3600)
            UIApplication.shared.scheduleLocalNotification(notification)
        }
        return notification
    }

    /// Cancels `notification` (the app's own object, or one of `scheduledLocalNotifications`).
    public static func cancel(_ notification: UILocalNotification) {
        UIApplication.shared.cancelLocalNotification(notification)
    }

    /// The scheduled copies the system keeps.
    public static var scheduled: [UILocalNotification] { UIApplication.shared.scheduledLocalNotifications ?? [] }

    /// A notification at `fireDate`, repeating every `repeatInterval` (none: once).
    public static func schedule(at fireDate: Date, repeatInterval: NSCalendar.Unit = []) {
        let notification = UILocalNotification()
        notification.fireDate = fireDate
        notification.repeatInterval = repeatInterval
        notification.alertBody = "At a date"
        UIApplication.shared.scheduleLocalNotification(notification)
    }
}
