import Foundation

/// When the engine retries a failed run of one task identifier (what the app's
/// `BGRetryPolicy` says, in the engine's terms).
///
/// The engine decides retries itself, inside the handling of the run's end
/// (``SchedulerEngine/handle(_:at:)``): it knows whether the app already submitted a new
/// request for the identifier (that request stands, and no retry is made), and the
/// count of consecutive failures lives in the app's ``AppPolicyState`` (saved with each
/// run's record), so it survives a restart.
public struct RetryPolicy: Hashable, Sendable {
    /// The delay before the first retry.
    public var initialDelay: TimeInterval
    /// Each further retry waits this many times longer (1 for a fixed interval).
    public var multiplier: Double
    /// No retry waits longer than this.
    public var maximumDelay: TimeInterval
    /// Give up after this many consecutive failures (`nil`: never give up).
    public var maximumAttempts: Int?

    /// Creates a policy; the caller validates the numbers (`BGRetryPolicy` does).
    public init(initialDelay: TimeInterval, multiplier: Double, maximumDelay: TimeInterval, maximumAttempts: Int?) {
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maximumDelay = max(initialDelay, maximumDelay)
        self.maximumAttempts = maximumAttempts
    }

    /// The delay after the `attempt`-th consecutive failure (1-based), or `nil` to give up.
    public func delay(afterFailedAttempt attempt: Int) -> TimeInterval? {
        if let maximumAttempts, attempt > maximumAttempts { return nil }
        let exponent = Double(max(0, attempt - 1))
        return min(maximumDelay, initialDelay * pow(multiplier, exponent))
    }
}
