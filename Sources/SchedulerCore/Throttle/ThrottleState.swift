import Foundation

/// One app's penalty for bad behaviour: over-scheduling, runs that expire, runs that never
/// call `setTaskCompleted`. The penalty is an extra delay the policy engine adds before the
/// app's next runs; it grows with each strike and fades with good behaviour.
///
/// A pure value: every event and question takes `now` from the caller; the store persists
/// it as Codable.
///
/// ## The penalty
///
/// - A strike at `t` sets the penalty to `min(maximumPenalty, max(basePenalty, 2 × d(t)))`
///   where `d(t)` is the delay just before it: 15 min, 30 min, 1 h, 2 h ... up to 24 h for
///   strikes in quick succession; a strike long after the last one starts again at 15 min,
///   because the old penalty has faded.
/// - Between events the delay decays exponentially: `d(t) = penalty × 2^(−(t − t₀) / decayHalfLife)`
///   with `t₀` the last strike (or successful run): 6 hours of good behaviour halve it.
/// - A successful run multiplies the delay by `successDecayFactor` (½) at once: evidence of
///   good behaviour is worth one half-life of waiting.
/// - A delay under one second is reported as 0, so the app is not "throttled 0 s" forever.
///
/// ## What counts as a strike
///
/// - **Over-scheduling** (``recordSubmission(kind:earliestBeginDate:previousRunOfSameIdentifier:at:)``):
///   asking for a run less than the kind's minimum cadence (refresh 15 min, processing
///   1 h) after the previous run of the same identifier, or, with no previous run, after
///   the submission itself. Repeats within one cadence fold into one strike: the app is
///   punished for the cadence it asks for, not for how many times it asks.
/// - **Launches that never reached the app** (``recordAppNotStarted(at:)``): its process
///   could not be started for a run, or did not finish launching.
/// - **Runs that end badly** (``recordRunEnded(outcome:calledSetTaskCompleted:expiredForConditions:at:)``):
///   expired at the end of the budget, terminated after the grace, ended without
///   `setTaskCompleted`, crashed, or interrupted: a run still without an end when the
///   state's next owner opened it (the process died during it; a handler that kills its
///   process would otherwise be relaunched with no delay after every restart).
///
/// Not strikes: a run that called `setTaskCompleted(success: false)` (reporting failure
/// is correct behaviour), and a run the system expired early because conditions changed
/// but which then completed within the grace.
public struct ThrottleState: Sendable, Codable, Hashable {
    /// The tunables. The owner may replace them (for example after loading a new policy
    /// configuration); the recorded penalty is kept.
    public var configuration: ThrottleConfiguration
    /// How many strikes were recorded in total, ever.
    public private(set) var strikes: Int = 0
    /// The strikes of the last ``ThrottleConfiguration/reasonWindow`` (default 24 h) as of
    /// the latest one recorded, oldest first, at most
    /// ``ThrottleConfiguration/recentStrikeLimit`` (default 64).
    public private(set) var recentStrikes: [ThrottleStrike] = []
    /// When the latest strike was recorded, or `nil` if never.
    public private(set) var lastStrikeAt: Date?

    /// The penalty as of `penaltyAsOf`, before decay.
    private var penalty: TimeInterval = 0
    /// The instant of the last strike or successful run: where decay starts.
    private var penaltyAsOf: Date?

    /// A delay below this is reported as none.
    static let negligibleDelay: TimeInterval = 1

    /// Creates a state with no strikes and no delay.
    public init(configuration: ThrottleConfiguration = .init()) {
        self.configuration = configuration
    }

    // MARK: Events

    /// Records a submission of a request of `kind` at `now`, and returns the strike it
    /// earned, if any.
    ///
    /// The request asks for a run at `begin = max(earliestBeginDate ?? now, now)`. Measured
    /// from `previousRunOfSameIdentifier` (the start of the identifier's latest run), or
    /// from `now` when there was no run, an interval shorter than the kind's minimum
    /// cadence is over-scheduling. Two exceptions keep ordinary apps clear:
    /// - a request with no previous run of its identifier is never a strike: the cadence
    ///   is between runs, and an app starting its schedule (often with a short first
    ///   delay) has not resubmitted anything yet;
    /// - a second over-scheduling strike of the same kind within one cadence of the
    ///   previous one is folded into it (a loop that resubmits every second earns one
    ///   strike per cadence, not sixty per minute).
    /// Kinds without a cadence (continued processing) are never over-scheduled.
    @discardableResult
    public mutating func recordSubmission(
        kind: TaskKind, earliestBeginDate: Date?, previousRunOfSameIdentifier: Date?, at now: Date
    ) -> ThrottleStrike? {
        guard now.timeIntervalSinceReferenceDate.isFinite,
            let cadence = configuration.minimumCadence(for: kind)
        else { return nil }
        let requested = earliestBeginDate.flatMap { $0.timeIntervalSinceReferenceDate.isFinite ? $0 : nil } ?? now
        let begin = max(requested, now)
        guard let previous = previousRunOfSameIdentifier, previous.timeIntervalSinceReferenceDate.isFinite else { return nil }
        let interval = max(0, begin.timeIntervalSince(previous))
        guard interval < cadence else { return nil }
        let previousStrike = recentStrikes.last {
            if case .overScheduling(kind, _, _) = $0.cause { return true }
            return false
        }
        if let previousStrike, now.timeIntervalSince(previousStrike.at) < cadence { return nil }
        return strike(.overScheduling(kind: kind, interval: interval, cadence: cadence), at: now)
    }

    /// Records how a run of the app ended at `now`, and returns the strike it earned, if any.
    ///
    /// - `.success` with `setTaskCompleted` called: no strike; the delay is multiplied by
    ///   ``ThrottleConfiguration/successDecayFactor`` (½ by default).
    /// - `.failure` with `setTaskCompleted` called: neutral.
    /// - `.interrupted`: a strike (the process stopped during the run; crash recovery
    ///   records one per stop).
    /// - `.expired`: a strike, unless `expiredForConditions` says the system expired the
    ///   run early because conditions changed (the user became active, the device got
    ///   hot) rather than because the budget ran out: that was not the app's doing, and
    ///   it completed within the grace.
    /// - `.terminated`: a strike whatever the expiration's cause: the app ignored it.
    /// - `.crashed`: a strike.
    /// - `endedByTheUser`: the system ended the app's process during the run at the user's
    ///   word (a force-quit, a reinstall; bgtaskd: SIGTERM, SIGKILL after the grace; the
    ///   connection of a process the user started closed with the SIGTERM): no strike however
    ///   the run ended (crashed, terminated, never completed), the user's doing; a success
    ///   still counts.
    /// - `.success` or `.failure` without `setTaskCompleted`: a strike (`neverCompleted`).
    @discardableResult
    public mutating func recordRunEnded(
        outcome: RunOutcome, calledSetTaskCompleted: Bool, expiredForConditions: Bool = false, endedByTheUser: Bool = false, at now: Date
    ) -> ThrottleStrike? {
        guard now.timeIntervalSinceReferenceDate.isFinite else { return nil }
        if endedByTheUser, outcome != .success { return nil }
        switch outcome {
        case .success where calledSetTaskCompleted:
            let factor = min(1, max(0, configuration.successDecayFactor))
            penalty = delay(at: now) * factor
            penaltyAsOf = max(now, penaltyAsOf ?? now)
            return nil
        case .failure where calledSetTaskCompleted:
            return nil
        case .interrupted:
            return strike(.interrupted, at: now)
        case .success, .failure:
            return strike(.neverCompleted, at: now)
        case .expired:
            return expiredForConditions ? nil : strike(.expired, at: now)
        case .terminated:
            return strike(.terminated, at: now)
        case .crashed:
            return strike(.crashed, at: now)
        }
    }

    /// Records, at `now`, a run whose app's process could not be started or did not finish
    /// launching, and returns its strike (``ThrottleStrike/Cause/notStarted``): the app never
    /// got the run, so it is not blamed for the handler, but a broken install is not spawned
    /// again at once.
    @discardableResult
    public mutating func recordAppNotStarted(at now: Date) -> ThrottleStrike? {
        guard now.timeIntervalSinceReferenceDate.isFinite else { return nil }
        // The runs queued for one process fail together: one launch that failed, one strike.
        if let last = recentStrikes.last, last.cause == .notStarted, last.at == now { return nil }
        return strike(.notStarted, at: now)
    }

    private mutating func strike(_ cause: ThrottleStrike.Cause, at now: Date) -> ThrottleStrike {
        let raised = min(configuration.maximumPenalty, max(configuration.basePenalty, 2 * delay(at: now)))
        penalty = raised
        // Events arrive in time order; one that does not is treated as happening at the
        // latest instant known, so decay never runs backwards.
        penaltyAsOf = max(now, penaltyAsOf ?? now)
        strikes += 1
        lastStrikeAt = max(now, lastStrikeAt ?? now)

        let recorded = ThrottleStrike(cause: cause, at: now, penalty: raised)
        recentStrikes.append(recorded)
        let horizon = now.addingTimeInterval(-configuration.reasonWindow)
        recentStrikes.removeAll { $0.at < horizon }
        let excess = recentStrikes.count - max(0, configuration.recentStrikeLimit)
        if excess > 0 { recentStrikes.removeFirst(excess) }
        return recorded
    }

    // MARK: Questions

    /// The extra delay, in seconds, to add before the app's next runs at `now`: the
    /// penalty of the last strike decayed by `2^(−elapsed / decayHalfLife)`, at most
    /// ``ThrottleConfiguration/maximumPenalty``; 0 when it has faded below one second or
    /// the app never misbehaved.
    public func delay(at now: Date) -> TimeInterval {
        let decayed = min(configuration.maximumPenalty, undecayedDelay(at: now))
        return decayed < Self.negligibleDelay ? 0 : decayed
    }

    /// When a request of the app that has waited since `start` has waited out the delay:
    /// the first instant `t` (to the second, rounded up) at which `t − start` reaches
    /// `delay(at: t)`. The delay fades while the request waits, so the hold ends before
    /// `start + delay(at: start)`; `start` when there is no delay. It depends on nothing
    /// but `start` and this state, so the hold does not move with the instant it is judged
    /// at (`bgtask why` gave two ends seconds apart, asked at two instants).
    public func holdEnd(waitingSince start: Date) -> Date {
        guard start.timeIntervalSinceReferenceDate.isFinite else { return start }
        var high = delay(at: start)
        guard high > 0 else { return start }
        // An endless penalty (a configuration's infinite maximum) never fades: no end.
        guard high.isFinite else { return .distantFuture }
        // Held after `low` seconds of waiting, free after `high` (the delay never grows
        // while no event comes): bisect to half a second, at most 18 steps for 24 hours.
        var low = 0.0
        while high - low > 0.5 {
            let middle = (low + high) / 2
            if middle >= delay(at: start.addingTimeInterval(middle)) { high = middle } else { low = middle }
        }
        return start.addingTimeInterval(high.rounded(.up))
    }

    /// One line for `bgtask why` when the app is throttled at `now`, `nil` when it is not:
    /// the delay, then what the app did in the last day, for example
    /// `throttled 30 min: 3 runs expired in the last day; refresh resubmitted every 2 min, cadence is 15 min`.
    /// When the strikes are older than the window, the line says how many there were,
    /// when the last was, and how fast the delay fades.
    public func reason(at now: Date) -> String? {
        let current = delay(at: now)
        guard current > 0 else { return nil }
        let window = configuration.reasonWindow
        let recent = recentStrikes.filter { $0.at <= now && now.timeIntervalSince($0.at) <= window }

        var parts: [String] = []
        var runPhrases: [String] = []
        func count(_ cause: ThrottleStrike.Cause, _ verb: String) {
            let n = recent.filter { $0.cause == cause }.count
            if n > 0 { runPhrases.append("\(CountText.counted(n, "run")) \(verb)") }
        }
        count(.expired, "expired")
        count(.terminated, "terminated after the grace period")
        count(.neverCompleted, "ended without setTaskCompleted")
        count(.notStarted, "never reached the app (its process did not start or finish launching)")
        count(.crashed, "crashed")
        count(.interrupted, "cut off by a stop of the process")
        if !runPhrases.isEmpty {
            let span = window == 86_400 ? "the last day" : "the last \(DurationText.spoken(window))"
            parts.append(runPhrases.joined(separator: ", ") + " in " + span)
        }
        // Over-scheduling: the latest interval per kind says what the app is doing now.
        for kind in TaskKind.allCases {
            let latest = recent.last {
                if case .overScheduling(kind, _, _) = $0.cause { return true }
                return false
            }
            if let latest { parts.append(latest.cause.description) }
        }
        if parts.isEmpty {
            var earlier = CountText.counted(strikes, "earlier strike")
            if let lastStrikeAt { earlier += ", the last \(DurationText.spoken(now.timeIntervalSince(lastStrikeAt))) ago" }
            parts.append(earlier)
            parts.append("the delay halves every \(DurationText.spoken(configuration.decayHalfLife)) of good behaviour")
        }
        return "throttled \(DurationText.spoken(current)): " + parts.joined(separator: "; ")
    }
}

// MARK: Replicas

extension ThrottleState {
    /// This state (the one stored now, which other writers may have changed) with what
    /// `mine` changed since `baseline` (the stored state it started from): how replicas
    /// sharing one app's memory add their strikes up instead of overwriting each other's
    /// (docs/replicas.md, "Per-replica judgement, shared memory").
    ///
    /// When only one side changed, that side is the answer. When both did: the strikes
    /// `mine` recorded since `baseline` join this state's (each once, oldest first, within
    /// the reason window and the recent-strike limit), the strike count adds `mine`'s new
    /// ones, and the penalty is the larger of the two delays, as of the later instant (a
    /// strike on one side and a success on the other leave the stricter). This state's
    /// configuration is kept.
    public func merging(changesIn mine: ThrottleState, since baseline: ThrottleState) -> ThrottleState {
        if mine == baseline { return self }
        if self == baseline { return mine }
        var merged = self
        let known = Set(recentStrikes)
        let added = mine.recentStrikes.filter { !baseline.recentStrikes.contains($0) && !known.contains($0) }
        merged.strikes = strikes + max(0, mine.strikes - baseline.strikes)
        merged.lastStrikeAt = [lastStrikeAt, mine.lastStrikeAt].compactMap { $0 }.max()
        var recent = (recentStrikes + added).sorted { $0.at < $1.at }
        if let latest = recent.last?.at {
            let horizon = latest.addingTimeInterval(-configuration.reasonWindow)
            recent.removeAll { $0.at < horizon }
        }
        let excess = recent.count - max(0, configuration.recentStrikeLimit)
        if excess > 0 { recent.removeFirst(excess) }
        merged.recentStrikes = recent
        let asOf = [penaltyAsOf, mine.penaltyAsOf].compactMap { $0 }.max()
        if let asOf {
            merged.penalty = max(undecayedDelay(at: asOf), mine.undecayedDelay(at: asOf))
            merged.penaltyAsOf = asOf
        }
        return merged
    }

    /// The penalty decayed to `now`, neither capped nor cut to 0 below a second: what
    /// ``delay(at:)`` reports once capped and cut, and what a merge compares and keeps.
    private func undecayedDelay(at now: Date) -> TimeInterval {
        guard penalty > 0, let asOf = penaltyAsOf else { return 0 }
        return penalty * configuration.decayFactor(elapsed: now.timeIntervalSince(asOf))
    }
}
