// `import UserNotifications` alone brings Foundation, as Apple's module does (`NSObject`,
// `DateComponents`, `Date`), in Swift 6 mode with warnings as errors.
import UserNotifications

final class ReminderScheduler: NSObject, Sendable {
    func morningTrigger() -> UNCalendarNotificationTrigger {
        var components = DateComponents()
        components.hour = 7
        return UNCalendarNotificationTrigger(dateMatching: components, repeats: true)
    }

    func localizedTitle(count: Int) -> String {
        NSString.localizedUserNotificationString(forKey: "%d new stories", arguments: [count])
    }

    func lastChecked() -> Date { Date(timeIntervalSince1970: 0) }
}
