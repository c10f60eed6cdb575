import Foundation

/// Durations as people read them: one place, so rationales, logs, tables and reports agree.
public enum DurationText {
    /// Rounded to the unit a person would say: "45 s", "1.5 s", "2 min", "1 h 30 min",
    /// "3 d 4 h". For one-line explanations (`bgtask why`, log messages) that are read, not
    /// parsed; the exact values are in the JSON. Under 10 s a fraction is kept to a tenth
    /// ("a grace of 1.5 s"); beyond about 30 million years it says "forever".
    public static func spoken(_ seconds: TimeInterval) -> String {
        guard !seconds.isNaN else { return "?" }
        if seconds < 0 { return "-" + spoken(-seconds) }
        // Beyond this the integer conversions below could overflow.
        guard seconds < 1e15 else { return "forever" }
        // Integer arithmetic, not `String(format:)`: rationales are written at every launch,
        // and Foundation's formatter costs microseconds on Linux.
        let tenths = Int((seconds * 10).rounded())
        if tenths < 100, tenths % 10 != 0 { return "\(tenths / 10).\(tenths % 10) s" }
        if seconds < 59.5 { return "\(Int(seconds.rounded())) s" }
        let minutes = Int((seconds / 60).rounded())
        if minutes < 60 { return "\(minutes) min" }
        if minutes < 24 * 60 {
            let (hours, rest) = minutes.quotientAndRemainder(dividingBy: 60)
            return rest == 0 ? "\(hours) h" : "\(hours) h \(rest) min"
        }
        let hours = Int((seconds / 3_600).rounded())
        let (days, rest) = hours.quotientAndRemainder(dividingBy: 24)
        return rest == 0 ? "\(days) d" : "\(days) d \(rest) h"
    }

    /// With a precision that suits the size, for tables of measurements: "0.12 s",
    /// "42.5 s", "10.0 min", "2.5 h", "3.1 d".
    public static func measured(_ seconds: TimeInterval) -> String {
        guard seconds.isFinite else { return seconds.isNaN ? "?" : (seconds > 0 ? "forever" : "-forever") }
        let magnitude = abs(seconds)
        if magnitude < 10 { return String(format: "%.2f s", seconds) }
        if magnitude < 100 { return String(format: "%.1f s", seconds) }
        if magnitude < 6_000 { return String(format: "%.1f min", seconds / 60) }
        if magnitude < 2 * 86_400 { return String(format: "%.1f h", seconds / 3_600) }
        return String(format: "%.1f d", seconds / 86_400)
    }
}
