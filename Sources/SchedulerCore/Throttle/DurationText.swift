import Foundation

/// Durations for one-line explanations: "45 s", "2 min", "1 h 30 min", "3 d 4 h".
///
/// Rounded to the unit a person would say: seconds under a minute, whole minutes under an
/// hour, hours and minutes under a day, days and hours beyond. `bgtask why` lines are read,
/// not parsed; the exact values are in the JSON.
func durationText(_ seconds: TimeInterval) -> String {
    guard !seconds.isNaN else { return "?" }
    if seconds < 0 { return "-" + durationText(-seconds) }
    // Beyond about 30 million years the integer conversions below could overflow.
    guard seconds < 1e15 else { return "forever" }
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
