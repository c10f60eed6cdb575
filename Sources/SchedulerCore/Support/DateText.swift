import Foundation

/// Instants as messages show them, when they may be no instant at all (an app's
/// `earliestBeginDate`, a simulated device's start): one wording, so the API's description,
/// the engine's refusal and the simulator's say the same thing.
public enum DateText {
    /// `date` as Foundation prints it when it is finite; its number of seconds otherwise
    /// (Foundation's `Date.description` traps on NaN): "nan s from 2001-01-01 (not a finite date)".
    public static func described(_ date: Date) -> String {
        let seconds = date.timeIntervalSinceReferenceDate
        return seconds.isFinite ? "\(date)" : "\(seconds) s from 2001-01-01 (not a finite date)"
    }

    /// Why `date` is outside Foundation's calendar range (`Date.distantPast...Date.distantFuture`,
    /// years 1 to 4001), or `nil` when it is inside: not finite, or its seconds and the bound
    /// it passes. Tools cannot show a date outside it (-1e308 came back as -4712-01-01), and
    /// the engine's integer day counts would trap on one far outside.
    public static func rangeProblem(_ date: Date) -> String? {
        let seconds = date.timeIntervalSinceReferenceDate
        guard seconds.isFinite else { return described(date) }
        if date < .distantPast { return "\(seconds) s from 2001-01-01, before 0001-01-01 (Date.distantPast)" }
        if date > .distantFuture { return "\(seconds) s from 2001-01-01, after 4001-01-01 (Date.distantFuture)" }
        return nil
    }
}
