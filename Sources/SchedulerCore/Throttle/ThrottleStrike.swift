import Foundation

/// One act of misbehaviour that raised an app's throttle penalty.
public struct ThrottleStrike: Hashable, Sendable, Codable, CustomStringConvertible {
    /// What the app did.
    public enum Cause: Hashable, Sendable, Codable, CustomStringConvertible {
        /// A submission asked for a run `interval` seconds after the previous run of the
        /// same identifier, less than the kind's `cadence`.
        case overScheduling(kind: TaskKind, interval: TimeInterval, cadence: TimeInterval)
        /// A run used its whole budget and was expired (it completed within the grace).
        case expired
        /// A run was expired and did not complete within the grace, so it was terminated.
        case terminated
        /// A run ended without calling `setTaskCompleted` (for example it expired with no
        /// expiration handler set, or its handler never started).
        case neverCompleted
        /// The app's process could not be started for a run, or did not finish launching
        /// (bgtaskd: the executable could not be run, timed out, exited or lost its
        /// connection first): the app never got the run, but a broken install must not be
        /// spawned again at once.
        case notStarted
        /// The process running the handler died.
        case crashed
        /// A run had no end when the state's next owner opened it: the process stopped
        /// (crashed, was killed) while the run was in progress. Recorded once per stop by
        /// crash recovery (docs/ARCHITECTURE.md, "Crash loops are throttled").
        case interrupted

        public var description: String {
            switch self {
            case let .overScheduling(kind, interval, cadence):
                return "\(kind) resubmitted every \(DurationText.spoken(interval)), cadence is \(DurationText.spoken(cadence))"
            case .expired: return "run expired"
            case .terminated: return "run terminated after its grace period"
            case .neverCompleted: return "run never called setTaskCompleted"
            case .notStarted: return "the app's process did not start or finish launching"
            case .crashed: return "run crashed"
            case .interrupted: return "process stopped during a run"
            }
        }
    }

    /// What the app did.
    public var cause: Cause
    /// When the strike was recorded.
    public var at: Date
    /// The delay right after this strike, in seconds.
    public var penalty: TimeInterval

    /// Creates a strike.
    public init(cause: Cause, at: Date, penalty: TimeInterval) {
        self.cause = cause
        self.at = at
        self.penalty = penalty
    }

    public var description: String { "\(cause) (penalty \(DurationText.spoken(penalty)))" }
}
