import Foundation

/// Local hours of the week under a fixed UTC offset, by plain arithmetic.
///
/// The usage model must stay pure: no `TimeZone.current`, no `Calendar.current`, no
/// locale. The driver passes the device's offset in ``UsageModelConfiguration/utcOffset``
/// and everything local is derived here from it.
///
/// Hours are numbered from Foundation's reference date, 2001-01-01 00:00 UTC, which was a
/// Monday: absolute hour 0 starts on a Monday at 00:00 local time, so hour-of-week 0 is
/// Monday 00:00-01:00 and 167 is Sunday 23:00-24:00.
struct LocalWeek: Hashable, Sendable {
    static let hoursPerWeek = 168
    static let secondsPerHour: TimeInterval = 3_600
    static let secondsPerWeek: TimeInterval = 604_800
    static let dayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

    /// Seconds east of UTC.
    let utcOffset: TimeInterval

    /// Whether `date` can be turned into an hour number without overflow. Anything within
    /// about 100,000 years of 2001 can; NaN, infinities and absurd instants are ignored by
    /// the model instead of trapping.
    static func isRepresentable(_ date: Date) -> Bool {
        abs(date.timeIntervalSinceReferenceDate) < 3e12
    }

    /// The absolute local hour that contains `date` (floor, also before 2001).
    func absoluteHour(of date: Date) -> Int {
        Int(((date.timeIntervalSinceReferenceDate + utcOffset) / Self.secondsPerHour).rounded(.down))
    }

    /// The instant at which absolute local hour `hour` starts.
    func start(ofHour hour: Int) -> Date {
        Date(timeIntervalSinceReferenceDate: Double(hour) * Self.secondsPerHour - utcOffset)
    }

    /// The local day of `date`: whole days since 1970-01-01 00:00 local time (floor).
    func localDay(of date: Date) -> Int {
        Int(((date.timeIntervalSince1970 + utcOffset) / 86_400).rounded(.down))
    }

    /// The instant local day `day` starts.
    func start(ofLocalDay day: Int) -> Date {
        Date(timeIntervalSince1970: Double(day) * 86_400 - utcOffset)
    }

    /// Seconds since local midnight of `date` (0 ..< 86,400).
    func secondOfDay(of date: Date) -> TimeInterval {
        let seconds = (date.timeIntervalSinceReferenceDate + utcOffset).truncatingRemainder(dividingBy: 86_400)
        return seconds < 0 ? seconds + 86_400 : seconds
    }

    /// 0 (Monday 00:00) ... 167 (Sunday 23:00) for an absolute hour.
    static func hourOfWeek(ofHour hour: Int) -> Int {
        let remainder = hour % hoursPerWeek
        return remainder < 0 ? remainder + hoursPerWeek : remainder
    }

    /// 0 (Monday 00:00) ... 167 (Sunday 23:00) for the hour that contains `date`.
    func hourOfWeek(of date: Date) -> Int {
        Self.hourOfWeek(ofHour: absoluteHour(of: date))
    }

    /// The first absolute hour `>= hour` whose hour of the week is `hourOfWeek`.
    static func firstHour(atOrAfter hour: Int, withHourOfWeek hourOfWeek: Int) -> Int {
        hour + Self.hourOfWeek(ofHour: hourOfWeek - Self.hourOfWeek(ofHour: hour))
    }

    // MARK: Text

    /// "08:00": the local clock time of `date`.
    func clock(_ date: Date) -> String {
        let seconds = Int((date.timeIntervalSinceReferenceDate + utcOffset).rounded(.down))
        let ofDay = ((seconds % 86_400) + 86_400) % 86_400
        return Self.twoDigits(ofDay / 3_600) + ":" + Self.twoDigits(ofDay % 3_600 / 60)
    }

    /// "Mon 08:00".
    func dayAndClock(_ date: Date) -> String {
        Self.dayNames[hourOfWeek(of: date) / 24] + " " + clock(date)
    }

    /// "Mon 2026-05-11 08:00": with the calendar date, for instants further than a week away.
    func dateAndClock(_ date: Date) -> String {
        let (year, month, day) = GregorianDate.civil(daysSince1970: localDay(of: date))
        return Self.dayNames[hourOfWeek(of: date) / 24] + " \(year)-" + Self.twoDigits(month) + "-" + Self.twoDigits(day)
            + " " + clock(date)
    }

    /// "08:00" for an hour of the day.
    static func clock(hourOfDay: Int) -> String { twoDigits(hourOfDay) + ":00" }

    private static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
