import Foundation

extension AppPolicyState {
    /// This state (the one stored now, which other replicas may have changed since `mine`
    /// read it) with what `mine` changed since `baseline` (the stored state `mine` started
    /// from; `nil` when there was none): a three-way merge, so that replicas sharing one
    /// app's memory add their runs, strikes, energy and foregrounds up instead of the last
    /// writer's memory replacing the others' (docs/replicas.md, "Per-replica judgement,
    /// shared memory").
    ///
    /// Field by field, a field only one side changed takes that side's value; when both
    /// changed:
    /// - the Background App Refresh switch and the force-quit mark: `mine` (the later word);
    /// - the usage history and the throttle: ``UsageModel/merging(changesIn:since:)`` and
    ///   ``ThrottleState/merging(changesIn:since:)``;
    /// - energy: of one local day, this state's joules plus what `mine` spent since
    ///   `baseline`; of different days, the later day's;
    /// - the last launch and the last successful refresh: the later;
    /// - the launch ledger: the launches `mine` counted since `baseline` added to the stored
    ///   ledger (``LaunchLedger/merging(changesIn:since:)``); a stored state without one
    ///   takes `mine`'s;
    /// - retries: per task identifier, failures `mine` counted since `baseline` add to the
    ///   stored count; a reset by `mine` (a success) clears it.
    ///
    /// The tunables of the usage model and the throttle are `mine`'s (this replica's time
    /// zone and policy configuration).
    public func merging(changesIn mine: AppPolicyState, since baseline: AppPolicyState?) -> AppPolicyState {
        let baseline = baseline ?? mine.startingPoint
        if self == baseline { return mine }
        var merged = mine == baseline ? self : combined(with: mine, since: baseline)
        // This replica's tunables (its time zone, its policy file) stay its own.
        merged.usage.configuration = mine.usage.configuration
        merged.throttle.configuration = mine.throttle.configuration
        return merged
    }

    /// Both sides changed since `baseline`: field by field.
    private func combined(with mine: AppPolicyState, since baseline: AppPolicyState) -> AppPolicyState {
        var merged = self
        if mine.backgroundRefreshEnabled != baseline.backgroundRefreshEnabled { merged.backgroundRefreshEnabled = mine.backgroundRefreshEnabled }
        if mine.forceQuit != baseline.forceQuit { merged.forceQuit = mine.forceQuit }
        merged.usage = usage.merging(changesIn: mine.usage, since: baseline.usage)
        merged.throttle = throttle.merging(changesIn: mine.throttle, since: baseline.throttle)
        if mine.energyDay > energyDay {
            // The stored state has nothing of that day (it is older, or was written over):
            // this replica's count of it is all that is known.
            merged.energyDay = mine.energyDay
            merged.energyUsed = mine.energyUsed
        } else if mine.energyDay == energyDay {
            let spent = mine.energyDay == baseline.energyDay ? mine.energyUsed - baseline.energyUsed : mine.energyUsed
            merged.energyUsed = energyUsed + max(0, spent)
        }
        merged.lastLaunch = Self.later(lastLaunch, mine.lastLaunch)
        merged.lastRefresh = Self.later(lastRefresh, mine.lastRefresh)
        if let ours = mine.launchLedger, ours != baseline.launchLedger || launchLedger == nil {
            merged.launchLedger = launchLedger.map { $0.merging(changesIn: ours, since: baseline.launchLedger) } ?? ours
        }
        let identifiers = Set((retryAttempts ?? [:]).keys).union((mine.retryAttempts ?? [:]).keys)
        var retries: [String: Int] = [:]
        for identifier in identifiers {
            let ours = mine.retryAttempts?[identifier]
            let before = baseline.retryAttempts?[identifier]
            let stored = retryAttempts?[identifier]
            if let ours, ours > (before ?? 0) {
                // Failures here since the baseline add to the ones stored (a count, not a switch).
                retries[identifier] = (stored ?? 0) + ours - (before ?? 0)
            } else if ours != before {
                retries[identifier] = ours  // a success here reset it
            } else {
                retries[identifier] = stored
            }
        }
        merged.retryAttempts = retries.isEmpty && retryAttempts == nil ? nil : retries
        return merged
    }

    /// What `mine` was before it learned anything: the baseline of a replica that found
    /// nothing stored (its whole memory is its own changes).
    private var startingPoint: AppPolicyState {
        var fresh = AppPolicyState(usage: UsageModel(createdAt: usage.createdAt, configuration: usage.configuration), throttle: ThrottleState(configuration: throttle.configuration))
        fresh.retryAttempts = nil
        return fresh
    }

    private static func later(_ a: Date?, _ b: Date?) -> Date? {
        [a, b].compactMap { $0 }.max()
    }
}
