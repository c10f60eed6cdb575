import Foundation

/// Calendar arithmetic without `Calendar`: pure, locale-free and the same on every
/// machine, for the usage model's explanations and the simulator's traces.
public enum GregorianDate {
    /// The proleptic Gregorian year, month (1-12) and day (1-31) of a count of days since
    /// 1970-01-01 (Howard Hinnant's `civil_from_days`).
    public static func civil(daysSince1970 days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468  // shifted to 0000-03-01
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    /// The count of days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
    /// `days_from_civil`, the inverse of ``civil(daysSince1970:)``); the fields are not
    /// checked (February 30 is March 2).
    public static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// How many days `month` (1-12) of `year` has, leap years counted.
    public static func daysInMonth(_ month: Int, of year: Int) -> Int {
        let isLeap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        return [31, isLeap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
    }

    /// The UTC calendar date and time of the whole second `secondsSince1970` falls in.
    public static func utc(secondsSince1970 seconds: Int64) -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400  // rounded down
        let inDay = Int(seconds - days * 86_400)
        let (year, month, day) = civil(daysSince1970: Int(days))
        return (year, month, day, inDay / 3600, inDay / 60 % 60, inDay % 60)
    }

    /// `instant` in ISO 8601, UTC, proleptic Gregorian: `2026-11-30T08:00:00Z`, or with
    /// `milliseconds` `2026-11-30T08:00:00.250Z` (to the nearest millisecond: the simulator's
    /// traces are written with it, so their fingerprints fix its rounding). Foundation's formatters switch to the Julian calendar before October 1582,
    /// so a date read as Gregorian (`--since 1500-01-01`) was echoed ten days off. Years
    /// outside 0...9999 get a sign and at least four digits; an instant beyond the
    /// representable seconds is written as the nearest one (it has no calendar date).
    public static func iso8601(_ instant: Date, milliseconds: Bool = false) -> String {
        let interval = instant.timeIntervalSince1970
        let limit = 1e15  // about 31 million years either way: far inside Int64 seconds
        let clamped = interval.isNaN ? 0 : min(max(interval, -limit), limit)
        // Milliseconds rounded first, so 0.9996 s is 1.000 s, not 0.1000.
        let totalMilliseconds = Int64((clamped * 1000).rounded())
        let wholeSeconds = milliseconds ? floorDivision(totalMilliseconds, 1000) : Int64(clamped.rounded(.down))
        let (year, month, day, hour, minute, second) = utc(secondsSince1970: wholeSeconds)
        func padded(_ value: Int, _ width: Int) -> String {
            let digits = String(value.magnitude)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let yearText = year < 0 ? "-" + padded(year, 4) : year > 9999 ? "+" + padded(year, 4) : padded(year, 4)
        var text = "\(yearText)-\(padded(month, 2))-\(padded(day, 2))T\(padded(hour, 2)):\(padded(minute, 2)):\(padded(second, 2))"
        if milliseconds { text += "." + padded(Int(totalMilliseconds - wholeSeconds * 1000), 3) }
        return text + "Z"
    }

    /// `value / divisor` rounded down (Swift's `/` rounds toward zero).
    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> Int64 {
        value >= 0 ? value / divisor : -((-value + divisor - 1) / divisor)
    }
}
