import Foundation

/// When a notification is delivered (Apple: `UNNotificationTrigger`, the abstract base of
/// the concrete triggers). A request without a trigger is delivered at once.
open class UNNotificationTrigger: NSObject, NSCopying, @unchecked Sendable {
    // @unchecked: immutable after init.

    /// Whether it fires again after it fired.
    public let repeats: Bool

    init(repeats: Bool) {
        self.repeats = repeats
        super.init()
    }

    /// When it fires, counted from `scheduled` (when the request was added); after it fired
    /// at `previous`, when it fires again (`nil`: never), later than `now`: a repeating
    /// trigger whose moments passed while nothing ran (the process stopped, the device
    /// asleep) fires once, not once per moment missed. The center's question; the
    /// subclasses answer it.
    func fireDate(scheduled: Date, after previous: Date?, now: Date) -> Date? { nil }

    /// Why a request with this trigger cannot be added, or `nil`. iOS raises an
    /// Objective-C exception at the trigger's creation for some of these; here the request
    /// is refused when added (``UNUserNotificationCenter/add(_:withCompletionHandler:)``).
    func problem() -> String? { nil }

    /// The same object: it is immutable.
    open func copy(with zone: NSZone? = nil) -> Any { self }
}

/// Fires a number of seconds after the request is added, and every as many seconds after
/// when it repeats (Apple: `UNTimeIntervalNotificationTrigger`).
open class UNTimeIntervalNotificationTrigger: UNNotificationTrigger, @unchecked Sendable {
    // @unchecked: immutable after init.

    /// The seconds between the request's addition and its delivery (and between repeats).
    public let timeInterval: TimeInterval

    /// A trigger `timeInterval` seconds after the request is added. iOS requires more than
    /// 0, and at least 60 when it repeats (and raises an exception otherwise); here such a
    /// trigger is made and its request refused when added, with the reason.
    public init(timeInterval: TimeInterval, repeats: Bool) {
        self.timeInterval = timeInterval
        super.init(repeats: repeats)
    }

    /// When it would fire if its request were added now (Apple's answer for a trigger
    /// not yet scheduled), `nil` for an interval the center refuses.
    open func nextTriggerDate() -> Date? {
        guard problem() == nil else { return nil }
        return Date(timeIntervalSinceNow: timeInterval)
    }

    override func fireDate(scheduled: Date, after previous: Date?, now: Date) -> Date? {
        guard problem() == nil else { return nil }
        guard let previous else { return scheduled.addingTimeInterval(timeInterval) }
        guard repeats else { return nil }
        // The first moment of the series after `now` (the interval is at least 60 s and
        // at most 1e12: the count is finite and exact enough).
        let elapsed = max(0, now.timeIntervalSince(previous))
        let steps = (elapsed / timeInterval).rounded(.down) + 1
        return previous.addingTimeInterval(steps * timeInterval)
    }

    override func problem() -> String? {
        guard timeInterval.isFinite, timeInterval > 0 else {
            return "the time interval must be greater than 0 (it is \(timeInterval))"
        }
        // About 31,700 years: beyond it a date is no longer exact to the second.
        guard timeInterval <= 1e12 else { return "the time interval \(timeInterval) s is too long" }
        if repeats, timeInterval < 60 {
            return "the time interval must be at least 60 if repeating (it is \(timeInterval))"
        }
        return nil
    }

    /// A description for logs, as Foundation describes objects.
    open override var description: String {
        "<UNTimeIntervalNotificationTrigger: repeats: \(repeats ? "YES" : "NO"), timeInterval: \(timeInterval)>"
    }
}

/// Fires at the date and time its components match (Apple: `UNCalendarNotificationTrigger`):
/// `DateComponents(hour: 8, minute: 30)` every day at 08:30 when it repeats. The calendar and
/// time zone are the components' own, else the current ones; a moment the calendar does not
/// have (the 31st in a 30-day month) is skipped.
open class UNCalendarNotificationTrigger: UNNotificationTrigger, @unchecked Sendable {
    // @unchecked: immutable after init.

    /// The components a date must match.
    public let dateComponents: DateComponents

    /// A trigger at the next date matching `dateComponents`.
    public init(dateMatching dateComponents: DateComponents, repeats: Bool) {
        self.dateComponents = dateComponents
        super.init(repeats: repeats)
    }

    /// The next date after now that matches, or `nil`.
    open func nextTriggerDate() -> Date? {
        nextMatch(after: Date())
    }

    override func fireDate(scheduled: Date, after previous: Date?, now: Date) -> Date? {
        guard let previous else { return nextMatch(after: scheduled) }
        guard repeats else { return nil }
        return nextMatch(after: max(previous, now))
    }

    override func problem() -> String? {
        let fields: [Int?] = [
            dateComponents.era, dateComponents.year, dateComponents.month, dateComponents.day,
            dateComponents.hour, dateComponents.minute, dateComponents.second, dateComponents.weekday,
            dateComponents.weekdayOrdinal, dateComponents.weekOfMonth, dateComponents.weekOfYear,
            dateComponents.yearForWeekOfYear, dateComponents.nanosecond, dateComponents.dayOfYear,
        ]
        guard fields.contains(where: { $0 != nil }) else { return "the date components match no date (none is set)" }
        return nil
    }

    /// The next date strictly after `date` that matches the components.
    private func nextMatch(after date: Date) -> Date? {
        guard problem() == nil else { return nil }
        var calendar = dateComponents.calendar ?? Calendar.current
        if let zone = dateComponents.timeZone { calendar.timeZone = zone }
        var components = dateComponents
        components.calendar = nil
        components.timeZone = nil
        // Strict: a date the calendar does not have (the 31st of a 30-day month, 02:30 on a
        // day the clock skips it) is not moved to the next day or hour: that moment is
        // skipped, as a monthly trigger on the 31st fires only in months that have one.
        return calendar.nextDate(after: date, matching: components, matchingPolicy: .strict, repeatedTimePolicy: .first, direction: .forward)
    }

    /// A description for logs, as Foundation describes objects.
    open override var description: String {
        "<UNCalendarNotificationTrigger: repeats: \(repeats ? "YES" : "NO"), dateComponents: \(dateComponents)>"
    }
}

/// The trigger of a remote notification (Apple: `UNPushNotificationTrigger`). Linux
/// delivers no visible remote notifications (`bgtask push` is a silent wake): an app
/// cannot make one, and a request never carries one.
open class UNPushNotificationTrigger: UNNotificationTrigger, @unchecked Sendable {
    // @unchecked: immutable after init.
    init() { super.init(repeats: false) }
}
