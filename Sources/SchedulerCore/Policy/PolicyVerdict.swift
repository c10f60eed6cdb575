import Foundation

/// One policy's answer about one request (dasd's vocabulary: WWDC 2020 "Background
/// execution demystified").
public enum PolicyVerdict: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The request must not run now, whatever the other policies say.
    case mustNotProceed
    /// The request may run; `score` (0...1) says how good a moment this is.
    case canProceed(score: Double)
    /// The request must run now (it has waited long enough, or the user asked for it).
    case mustProceed

    public var description: String {
        switch self {
        case .mustNotProceed: return "must not proceed"
        case .canProceed(let score): return String(format: "can proceed (score %.2f)", score)
        case .mustProceed: return "must proceed"
        }
    }
}

/// What unblocks a `mustNotProceed`, so the engine files the request where that change
/// will find it instead of asking again at every wake.
public enum PolicyWait: Hashable, Sendable, Codable, CustomStringConvertible {
    /// A device condition must change (battery, low power mode, thermal, idleness, CPU).
    case deviceChange
    /// Something about the app must change (opened by the user, switch turned on).
    case appChange
    /// Time must pass until this instant.
    case until(Date)
    /// Time must pass until this instant, or a run must start earlier (the device wakes
    /// for it, and the request may start in that wake): what wake sharing holds for.
    case untilWake(Date)
    /// A run slot must free up.
    case capacity

    /// The instant a time-bound wait ends (`until` or `untilWake`), else `nil`.
    public var instant: Date? {
        switch self {
        case .until(let date), .untilWake(let date): return date
        case .deviceChange, .appChange, .capacity: return nil
        }
    }

    public var description: String {
        switch self {
        case .deviceChange: return "a change of the device's conditions"
        case .appChange: return "a change of the app's state"
        case .until(let date): return "\(date)"
        case .untilWake(let date): return "\(date), or a wake before it"
        case .capacity: return "a free run slot"
        }
    }
}

/// One policy's verdict with its reason, as `bgtask why` shows it.
public struct PolicyDecision: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The policy's name, for example `low-power-mode`.
    public var policy: String
    /// The verdict.
    public var verdict: PolicyVerdict
    /// One line that says why, with the numbers that led to it.
    public var rationale: String
    /// For `mustNotProceed`: what would lift it.
    public var wait: PolicyWait?

    /// Creates a decision.
    public init(policy: String, verdict: PolicyVerdict, rationale: String, wait: PolicyWait? = nil) {
        self.policy = policy
        self.verdict = verdict
        self.rationale = rationale
        self.wait = wait
    }

    /// Whether this decision blocks the request.
    public var blocks: Bool { verdict == .mustNotProceed }

    public var description: String { "\(policy): \(verdict) - \(rationale)" }
}
