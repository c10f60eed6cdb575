import Foundation

/// The exact answer to "why hasn't my task run?" (`bgtask why`): the request, where it
/// sits, every policy's verdict with its rationale (blocking ones first), the earliest
/// instant it could run given what is known, and the predicted next run.
public struct Explanation: Hashable, Sendable {
    /// The request, when one is pending.
    public var request: PendingRequest?
    /// The run in progress for the identifier, if any.
    public var activeRun: RunRecord?
    /// Where the request sits (waiting, eligible, blocked, held...).
    public var location: EligibilityIndex.Location?
    /// The policies' verdicts now.
    public var evaluation: PolicyEvaluation?
    /// The earliest instant the request could run, when only time stands in the way.
    public var earliestPossibleRun: Date?
    /// What else it waits for (a condition, the app being opened...), in words.
    public var waitingFor: [String]
    /// When the system expects to run it, given what it knows now.
    public var predictedNextRun: Date?
    /// Since when the request has been due (its wait the policies see), when it is due.
    public var eligibleSince: Date?
    /// The last moment every device (and app) saw the same trigger: power or network coming
    /// back; herd spreading spreads what such a trigger frees.
    public var lastSharedTrigger: Date?

    /// A summary line: "running now", "eligible now: ...", "could run at T" (only time
    /// stands in the way), "waits for A; B[, and not before T]", or that no request is pending.
    public var summary: String {
        if activeRun != nil, request == nil { return "running now" }
        guard request != nil else { return "no request is pending: submit one (requests are consumed when they run)" }
        if let evaluation, evaluation.proceeds { return "eligible now: it runs at the next wake" }
        // What it waits for first: an instant is only a bound while something else (the
        // network, the user's switch) must change before it can run at all.
        guard !waitingFor.isEmpty else { return earliestPossibleRun.map { "could run at \($0)" } ?? "" }
        return "waits for " + waitingFor.joined(separator: "; ") + (earliestPossibleRun.map { ", and not before \($0)" } ?? "")
    }
}

extension SchedulerEngine {
    /// Explains the request `key` at `now`: read-only, the same policies the engine uses.
    public func explain(_ key: RequestKey, at now: Date) -> Explanation {
        let active = activeRun(for: key)
        guard let request = pendingRequests(of: key.app).first(where: { $0.identifier == key.identifier }) else {
            return Explanation(request: nil, activeRun: active, location: nil, evaluation: nil, earliestPossibleRun: nil, waitingFor: [], predictedNextRun: nil, lastSharedTrigger: lastSharedTrigger)
        }
        var evaluation = evaluate(request, at: now)
        let location = self.location(of: key)
        var waitingFor: [String] = []
        var instants: [Date] = []
        if request.kind != .continuedProcessing, request.dueDate > now {
            // Not due yet: say so first, as a blocking verdict of its own.
            evaluation.decisions.insert(
                PolicyDecision(policy: "earliest-begin-date", verdict: .mustNotProceed, rationale: "earliestBeginDate is \(request.dueDate); the system never runs a task before it", wait: .until(request.dueDate)),
                at: 0
            )
            instants.append(request.dueDate)
        }
        if configuration.launchesOnlyWhenSimulated, request.kind != .continuedProcessing {
            // The developer switch holds everything scheduled, whatever the policies say.
            evaluation.decisions.insert(
                PolicyDecision(policy: "manual-launch", verdict: .mustNotProceed, rationale: "the manual launch switch is on (BGTASK_MANUAL_LAUNCH=1, SchedulerConfiguration.launchesOnlyWhenSimulated): it runs only when simulateLaunch(forTaskWithIdentifier:) triggers it", wait: .appChange),
                at: 0
            )
        }
        if active != nil {
            waitingFor.append("the run of the same identifier in progress to end")
        }
        for decision in evaluation.blocking {
            switch decision.wait {
            case .until(let date)?, .untilWake(let date)?: instants.append(date)
            case .deviceChange?: waitingFor.append("\(decision.policy): \(decision.rationale)")
            case .appChange?: waitingFor.append("\(decision.policy): \(decision.rationale)")
            case .capacity?: waitingFor.append("a free run slot")
            case nil: break
            }
        }
        if evaluation.blocking.isEmpty, !evaluation.proceeds {
            waitingFor.append(String(format: "a better moment: the weighted score %.2f is below the threshold %.2f", evaluation.score, evaluation.threshold))
        }
        let earliest = instants.max()
        var predicted: Date?
        if waitingFor.isEmpty {
            predicted = earliest ?? now
            if request.kind == .appRefresh, let state = policyState(of: request.app) {
                predicted = state.usage.preferredRefreshTime(
                    eligibleAt: earliest ?? now, now: now, lastRefresh: state.lastRefresh,
                    leadSpread: AppUsagePolicy.leadSpread(of: request.key, salt: configuration.deviceSalt),
                    requestedInterval: AppUsagePolicy.requestedInterval(of: request),
                    launches: state.launchLedger)
            }
        }
        return Explanation(
            request: request,
            activeRun: active,
            location: location,
            evaluation: evaluation,
            earliestPossibleRun: earliest,
            waitingFor: waitingFor,
            predictedNextRun: predicted,
            eligibleSince: eligibleSince(of: key),
            lastSharedTrigger: lastSharedTrigger
        )
    }
}
