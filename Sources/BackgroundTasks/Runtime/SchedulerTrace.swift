import Foundation
import SchedulerCore

/// What a driver saw happen, in order: the raw material of timelines, reports and
/// assertions in tests.
public enum SchedulerTraceEvent: Hashable, Sendable {
    /// A request was accepted (replacing any pending one with its identifier).
    case submitted(PendingRequest, at: Date)
    /// A pending request was cancelled by the app.
    case cancelled(RequestKey, at: Date)
    /// A pending request moved: became eligible, blocked on a condition, waiting for a run,
    /// held by a policy (`heldBy` names it, or them: ``EligibilityIndex/Transition/heldBy``).
    case moved(RequestKey, EligibilityIndex.Location, at: Date, heldBy: String?)
    /// A handler was launched; `evaluation` is the policies' judgement that let it run
    /// (`nil` for simulated launches and continued processing).
    case launched(RunRecord, budget: TimeInterval?, evaluation: PolicyEvaluation?)
    /// A run's expiration handler was called.
    case expired(RunID, RequestKey, reason: String, at: Date)
    /// A run was terminated by force.
    case terminated(RunID, RequestKey, reason: String, at: Date)
    /// A run ended (its record has the outcome).
    case finished(RunRecord)
    /// The device conditions changed.
    case conditionsChanged(Conditions, at: Date)
    /// An app's lifecycle state changed.
    case lifecycle(AppID, from: ApplicationLifecycleState, to: ApplicationLifecycleState, at: Date)
    /// An app was terminated by the assertion watchdog.
    case appTerminated(AppID, TerminationReason, at: Date)
    /// An app began a background assertion (`beginBackgroundTask`).
    case assertionBegan(AppID, Int, name: String?, at: Date)
    /// An app ended a background assertion (`endBackgroundTask`).
    case assertionEnded(AppID, Int, at: Date)
    /// The background window closed: these assertions' expiration handlers were called.
    case assertionsExpired(AppID, [Int], at: Date)
}
