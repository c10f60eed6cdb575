import Foundation

/// When to try a failed task again (docs/system.md, "Best practice"); the app's
/// `BGRetryPolicy` is this type.
///
/// Set with `BGTaskScheduler.setRetryPolicy(_:forTaskWithIdentifier:)`. When a run ends in
/// anything but success (failure, expiration, termination, crash) and the app did not
/// already submit a new request for the identifier, the scheduler submits a copy of the
/// request with `earliestBeginDate` moved by the policy's delay. A success resets the count.
///
/// The engine decides retries itself, inside the handling of the run's end
/// (``SchedulerEngine/handle(_:at:)``): a request the app submitted for the identifier
/// before the run ended (from the handler) stands, and one it submits afterwards (from a
/// completion block) replaces the retry, as any resubmission does. The count of consecutive
/// failures lives in the app's ``AppPolicyState`` (saved with each run's record), so it
/// survives a restart. A retry the submission checks would refuse (Background App Refresh
/// turned off, the pending limit reached) is not made.
public struct RetryPolicy: Hashable, Sendable {
    /// The delay before the first retry.
    public var initialDelay: TimeInterval
    /// Each further retry waits this many times longer (1 for a fixed interval).
    public var multiplier: Double
    /// No retry waits longer than this.
    public var maximumDelay: TimeInterval
    /// Give up after this many consecutive failures (`nil`: never give up).
    public var maximumAttempts: Int?

    /// Creates a policy; prefer ``fixed(_:maximumAttempts:)`` and
    /// ``exponentialBackoff(initial:multiplier:cap:maximumAttempts:)``.
    /// - Precondition: `initialDelay` finite and not negative, `multiplier` finite and at
    ///   least 1 (a programming error otherwise, named in the message).
    public init(initialDelay: TimeInterval, multiplier: Double, maximumDelay: TimeInterval, maximumAttempts: Int?) {
        // fatalError, not precondition: an optimized build would drop a precondition's message.
        if !(initialDelay >= 0 && initialDelay.isFinite) { fatalError("BGRetryPolicy: initialDelay must be a finite, non-negative number of seconds, got \(initialDelay)") }
        if !(multiplier >= 1 && multiplier.isFinite) { fatalError("BGRetryPolicy: multiplier must be at least 1, got \(multiplier)") }
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maximumDelay = max(initialDelay, maximumDelay)
        self.maximumAttempts = maximumAttempts
    }

    /// Retry after the same interval every time.
    public static func fixed(_ interval: TimeInterval, maximumAttempts: Int? = nil) -> RetryPolicy {
        RetryPolicy(initialDelay: interval, multiplier: 1, maximumDelay: interval, maximumAttempts: maximumAttempts)
    }

    /// Retry after `initial`, then `initial × multiplier`, ... never more than `cap`.
    public static func exponentialBackoff(initial: TimeInterval, multiplier: Double = 2, cap: TimeInterval, maximumAttempts: Int? = nil) -> RetryPolicy {
        RetryPolicy(initialDelay: initial, multiplier: multiplier, maximumDelay: cap, maximumAttempts: maximumAttempts)
    }

    /// The delay after the `attempt`-th consecutive failure (1-based), or `nil` to give up.
    public func delay(afterFailedAttempt attempt: Int) -> TimeInterval? {
        if let maximumAttempts, attempt > maximumAttempts { return nil }
        let exponent = Double(max(0, attempt - 1))
        return min(maximumDelay, initialDelay * pow(multiplier, exponent))
    }
}
