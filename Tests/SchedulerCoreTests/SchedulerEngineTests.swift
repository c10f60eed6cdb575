import Foundation
import Testing
@testable import SchedulerCore

/// The engine's state machine (docs/system.md, "Scheduled background tasks"): when requests launch, budgets, expiration and grace,
/// concurrency, the testing hooks and continued processing. Time is always passed explicitly.
@Suite("Scheduler engine")
struct SchedulerEngineTests {
    typealias F = EngineFixtures
    typealias Summary = EngineEffectSummary
    let t0 = EngineFixtures.t0

    /// Submits `request` at `now` and returns the run it launched (the test fails when none).
    private func launch(_ request: PendingRequest, in engine: inout SchedulerEngine, at now: Date) throws -> RunRecord {
        let effects = try F.submit(request, to: &engine, at: now)
        return try #require(effects.launched.first(where: { $0.request.key == request.key }))
    }

    // MARK: Earliest begin date and conditions

    @Test func notLaunchedBeforeEarliestBeginDate() throws {
        var engine = F.engine()
        let submitted = try F.submit(F.refresh(earliest: t0 + 900), to: &engine, at: t0)
        #expect(submitted.launched.isEmpty)
        #expect(submitted.wake == t0 + 900, "the driver is asked to wake at the earliest begin date")
        #expect(engine.location(of: F.key(F.refreshID)) == .waiting)

        let early = Summary(engine.handle(.timerFired, at: t0 + 899.999))
        #expect(early.launched.isEmpty)
        #expect(engine.pendingRequests(of: F.app).count == 1)
    }

    @Test func launchedAtEarliestBeginDate() throws {
        var engine = F.engine()
        _ = try F.submit(F.refresh(earliest: t0 + 900), to: &engine, at: t0)
        let due = Summary(engine.handle(.timerFired, at: t0 + 900))
        #expect(due.launchedIdentifiers == [F.refreshID])
        #expect(due.launched.first?.startedAt == t0 + 900)
        #expect(due.launchBudgets == [30])
    }

    @Test func requestWithoutEarliestBeginDateLaunchesAtSubmission() throws {
        var engine = F.engine()
        let effects = try F.submit(F.refresh(), to: &engine, at: t0)
        #expect(effects.launchedIdentifiers == [F.refreshID])
        #expect(effects.wake == t0 + 30, "next wake is the end of the run's budget")
    }

    @Test func requiresExternalPowerBlocksUntilPowerReturns() throws {
        var engine = F.engine(conditions: F.noPower)
        let submitted = try F.submit(F.processing(power: true), to: &engine, at: t0)
        #expect(submitted.launched.isEmpty)
        #expect(engine.location(of: F.key(F.syncID)) == .blocked(.externalPower))
        #expect(Summary(engine.handle(.timerFired, at: t0 + 3600)).launched.isEmpty)
        #expect(Summary(engine.handle(.conditionsChanged(F.nothing), at: t0 + 3601)).launched.isEmpty)

        let plugged = Summary(engine.handle(.conditionsChanged(.favorable), at: t0 + 3602))
        #expect(plugged.launchedIdentifiers == [F.syncID])
        #expect(plugged.moves.contains(.init(key: F.key(F.syncID), location: .ready)))
    }

    @Test func requiresNetworkBlocksUntilNetworkReturns() throws {
        var engine = F.engine(conditions: F.noNetwork)
        let submitted = try F.submit(F.processing(network: true), to: &engine, at: t0)
        #expect(submitted.launched.isEmpty)
        #expect(engine.location(of: F.key(F.syncID)) == .blocked(.network))

        let online = Summary(engine.handle(.conditionsChanged(.favorable), at: t0 + 10))
        #expect(online.launchedIdentifiers == [F.syncID])
    }

    @Test func readyRequestIsNotLaunchedWhenItsConditionWentAwayBeforeItsDate() throws {
        var engine = F.engine()
        _ = try F.submit(F.processing(earliest: t0 + 60, network: true), to: &engine, at: t0)
        _ = engine.handle(.conditionsChanged(F.noNetwork), at: t0 + 30)
        let due = Summary(engine.handle(.timerFired, at: t0 + 60))
        #expect(due.launched.isEmpty)
        #expect(engine.location(of: F.key(F.syncID)) == .blocked(.network))
    }

    // MARK: Consumption

    @Test func requestIsConsumedAtLaunch() throws {
        var engine = F.engine()
        let run = try launch(F.refresh(), in: &engine, at: t0)
        #expect(engine.pendingRequests(of: F.app).isEmpty)
        #expect(engine.allPendingRequests.isEmpty)
        #expect(engine.location(of: F.key(F.refreshID)) == nil)
        #expect(engine.activeRun(for: F.key(F.refreshID))?.id == run.id)
        #expect(F.rejection(of: F.refresh(submittedAt: t0 + 1), by: engine, at: t0 + 1) == nil,
                "the app may submit the identifier again while it runs")
    }

    // MARK: Budgets and expiration

    @Test func refreshExpiresWhenItsThirtySecondBudgetRunsOut() throws {
        var engine = F.engine()
        let run = try launch(F.refresh(), in: &engine, at: t0)
        #expect(Summary(engine.handle(.timerFired, at: t0 + 29.999)).expired.isEmpty)
        let expiry = Summary(engine.handle(.timerFired, at: t0 + 30))
        #expect(expiry.expired == [run.id])
        #expect(expiry.expireGraces == [2])
        #expect(expiry.expireReasons.first?.contains("30 s") == true)
        #expect(expiry.finished.isEmpty, "expiration is not the end: the grace period starts")
    }

    @Test func processingExpiresWhenItsTenMinuteBudgetRunsOut() throws {
        var engine = F.engine()
        let run = try launch(F.processing(), in: &engine, at: t0)
        #expect(engine.nextWake == t0 + 600)
        #expect(Summary(engine.handle(.timerFired, at: t0 + 599)).expired.isEmpty)
        #expect(Summary(engine.handle(.timerFired, at: t0 + 600)).expired == [run.id])
    }

    @Test func customBudgetsAreHonored() throws {
        var engine = F.engine(SchedulerConfiguration(budgets: [.appRefresh: 10, .processing: 120]))
        let refresh = try F.submit(F.refresh(), to: &engine, at: t0)
        #expect(refresh.launchBudgets == [10])
        let sync = try F.submit(F.processing(), to: &engine, at: t0)
        #expect(sync.launchBudgets == [120])
        let refreshRun = try #require(refresh.launched.first)
        let syncRun = try #require(sync.launched.first)
        #expect(Summary(engine.handle(.timerFired, at: t0 + 10)).expired == [refreshRun.id])
        #expect(Summary(engine.handle(.timerFired, at: t0 + 119)).expired.isEmpty)
        #expect(Summary(engine.handle(.timerFired, at: t0 + 120)).expired == [syncRun.id])
    }

    @Test func completionWithinGraceIsRecordedAsExpired() throws {
        var engine = F.engine()
        let run = try launch(F.refresh(), in: &engine, at: t0)
        _ = engine.handle(.timerFired, at: t0 + 30)
        let done = Summary(engine.handle(.taskCompleted(run.id, success: true), at: t0 + 31))
        let record = try #require(done.finished.first)
        #expect(record.id == run.id)
        #expect(record.outcome == .expired)
        #expect(record.success == true)
        #expect(record.endedAt == t0 + 31)
        #expect(done.terminated.isEmpty)
        #expect(engine.activeRuns.isEmpty)
    }

    @Test func completionAfterTheDeadlineBeforeTheTimerIsRecordedAsExpired() throws {
        // An out-of-process host pushes the expiration at the deadline itself; the app's
        // completion can reach the engine before the engine's own timer event does.
        var engine = F.engine()
        let run = try launch(F.refresh(), in: &engine, at: t0)
        let done = Summary(engine.handle(.taskCompleted(run.id, success: true), at: t0 + 30.001))
        let record = try #require(done.finished.first)
        #expect(record.outcome == .expired)
        #expect(record.success == true)
        #expect(engine.activeRuns.isEmpty)
    }

    @Test func completionJustBeforeTheDeadlineIsStillASuccess() throws {
        var engine = F.engine()
        let run = try launch(F.refresh(), in: &engine, at: t0)
        let done = Summary(engine.handle(.taskCompleted(run.id, success: true), at: t0 + 29.999))
        #expect(done.finished.first?.outcome == .success)
        #expect(done.expired.isEmpty)
    }

    @Test func runNotCompletedWithinDefaultGraceIsTerminatedAtTwoSeconds() throws {
        var engine = F.engine()
        let run = try launch(F.refresh(), in: &engine, at: t0)
        let expiry = Summary(engine.handle(.timerFired, at: t0 + 30))
        #expect(expiry.wake == t0 + 32)
        let stillGrace = Summary(engine.handle(.timerFired, at: t0 + 31.999))
        #expect(stillGrace.terminated.isEmpty && stillGrace.finished.isEmpty)

        let end = Summary(engine.handle(.timerFired, at: t0 + 32))
        #expect(end.terminated == [run.id])
        let record = try #require(end.finished.first)
        #expect(record.outcome == .terminated)
        #expect(record.success == nil)
        #expect(record.endedAt == t0 + 32)
        let terminateIndex = try #require(end.all.firstIndex { if case .terminate = $0 { true } else { false } })
        let finishedIndex = try #require(end.all.firstIndex { if case .runFinished = $0 { true } else { false } })
        #expect(terminateIndex < finishedIndex, "terminate first, then record the end")
    }

    /// The wall clock was set back during the run: its record ends at its start (a
    /// duration of 0), never before it, since the stores refuse a run that ends before it starts.
    @Test func aRunEndingBeforeItsStartByTheClockEndsAtItsStart() throws {
        var engine = F.engine()
        let run = try launch(F.refresh(), in: &engine, at: t0 + 100)
        let done = Summary(engine.handle(.taskCompleted(run.id, success: true), at: t0 + 40))
        let record = try #require(done.finished.first)
        #expect(record.endedAt == t0 + 100)
        #expect(record.duration == 0)
    }

    @Test func expirationGraceIsConfigurable() throws {
        var engine = F.engine(SchedulerConfiguration(expirationGrace: 7))
        let run = try launch(F.refresh(), in: &engine, at: t0)
        #expect(Summary(engine.handle(.timerFired, at: t0 + 30)).expireGraces == [7])
        #expect(Summary(engine.handle(.timerFired, at: t0 + 36.9)).terminated.isEmpty)
        let end = Summary(engine.handle(.timerFired, at: t0 + 37))
        #expect(end.terminated == [run.id])
        #expect(end.finished.first?.stopReason?.contains("7 s") == true)
    }

    @Test func expirationWithoutHandlerIsRecordedAsFailure() throws {
        var engine = F.engine()
        let run = try launch(F.refresh(), in: &engine, at: t0)
        _ = engine.handle(.timerFired, at: t0 + 30)
        let delivered = Summary(engine.handle(.expirationDelivered(run.id, handlerWasSet: false), at: t0 + 30))
        let record = try #require(delivered.finished.first)
        #expect(record.outcome == .failure)
        #expect(record.success == nil)
        #expect(record.stopReason?.contains("no expiration handler") == true)
        #expect(Summary(engine.handle(.timerFired, at: t0 + 32)).terminated.isEmpty, "nothing left to terminate")
    }

    @Test func expirationWithHandlerKeepsTheRunInItsGracePeriod() throws {
        var engine = F.engine()
        let run = try launch(F.refresh(), in: &engine, at: t0)
        _ = engine.handle(.timerFired, at: t0 + 30)
        let delivered = Summary(engine.handle(.expirationDelivered(run.id, handlerWasSet: true), at: t0 + 30))
        #expect(delivered.finished.isEmpty)
        #expect(engine.activeRuns.map(\.id) == [run.id])
    }

    @Test("completion before the budget records success or failure by the flag", arguments: [true, false])
    func completionBeforeBudgetRecordsOutcomeByFlag(success: Bool) throws {
        var engine = F.engine()
        let run = try launch(F.refresh(), in: &engine, at: t0)
        let done = Summary(engine.handle(.taskCompleted(run.id, success: success), at: t0 + 12))
        let record = try #require(done.finished.first)
        #expect(record.outcome == (success ? .success : .failure))
        #expect(record.success == success)
        #expect(record.duration == 12)
        #expect(done.wake == .some(nil), "nothing left to wake for")
        #expect(Summary(engine.handle(.timerFired, at: t0 + 30)).expired.isEmpty, "a finished run never expires")
    }

    @Test func secondCompletionOfFinishedRunIsIgnored() throws {
        var engine = F.engine()
        let run = try launch(F.refresh(), in: &engine, at: t0)
        #expect(Summary(engine.handle(.taskCompleted(run.id, success: true), at: t0 + 1)).finished.count == 1)
        let again = Summary(engine.handle(.taskCompleted(run.id, success: false), at: t0 + 2))
        #expect(again.finished.isEmpty)
        #expect(again.all.count == 1, "only the trailing wake effect")
    }

    @Test func launchFailureAndCrashAreRecorded() throws {
        var engine = F.engine()
        let refresh = try launch(F.refresh(), in: &engine, at: t0)
        let sync = try launch(F.processing(), in: &engine, at: t0)
        let failed = Summary(engine.handle(.launchFailed(refresh.id, reason: "no handler registered"), at: t0 + 1))
        #expect(failed.finished.first?.outcome == .failure)
        #expect(failed.finished.first?.stopReason == "no handler registered")
        let crashed = Summary(engine.handle(.runCrashed(sync.id, reason: "signal 11"), at: t0 + 2))
        #expect(crashed.finished.first?.outcome == .crashed)
    }

    @Test("a run whose app could not be started is a failure with its strike, and its request is filed again (persisted first), held by the throttle")
    func anAppNotStartedKeepsItsRequest() throws {
        // The standard policies, which hold a throttled app's requests.
        var engine = F.engine(policies: PolicySet(configuration: PolicyConfiguration(herdSpreadWindow: 0, coalescingTolerance: 0)))
        _ = try F.submit(F.refresh(), to: &engine, at: t0)
        let refresh = try #require(engine.activeRuns.first { $0.identifier == F.refreshID })
        let effects = engine.handle(.appNotStarted(refresh.id, reason: "cannot launch: ENOEXEC", restoringRequest: true), at: t0 + 1)
        let summary = Summary(effects)
        #expect(summary.finished.first?.outcome == .failure)
        let restoredAt = effects.firstIndex { if case .retryScheduled(let request) = $0 { return request.key == F.key(F.refreshID) } else { return false } }
        let finishedAt = effects.firstIndex { if case .runFinished = $0 { return true } else { return false } }
        #expect(restoredAt != nil && finishedAt != nil && restoredAt! < finishedAt!, "\(effects)")
        #expect(engine.pendingRequests(of: F.app).map(\.identifier) == [F.refreshID])
        // Not relaunched at once: the strike holds it, so a broken executable is not spun on.
        guard case .deferred(let until)? = engine.location(of: F.key(F.refreshID)) else {
            Issue.record("expected the throttle to hold it, got \(String(describing: engine.location(of: F.key(F.refreshID))))")
            return
        }
        // The failure's strike alone (15 minutes, fading as it waits: held about 14.6 minutes):
        // filing again is no submission of the app's, so it earns no over-scheduling strike on top.
        let holdEnd = try #require(engine.policyState(of: F.app)?.throttle.holdEnd(waitingSince: t0 + 1))
        #expect(until == holdEnd && holdEnd > t0 + 1 + 14 * 60 && holdEnd < t0 + 1 + 15 * 60, "\(holdEnd.timeIntervalSince(t0))")
        let throttle = engine.explain(F.key(F.refreshID), at: t0 + 1).evaluation?.decisions.first { $0.policy == "throttle" }
        #expect(throttle?.verdict == .mustNotProceed && throttle?.wait == .until(holdEnd), "\(String(describing: throttle))")
        #expect(engine.policyState(of: F.app)?.throttle.strikes == 1)
        // Its own cause: the handler is not blamed (it said "ended without setTaskCompleted").
        #expect(engine.policyState(of: F.app)?.throttle.recentStrikes.map(\.cause) == [.notStarted])
        // The delay of now, then how long the hold lasts (it ends where the fading delay
        // meets the time waited: the verdict's instant).
        let held = DurationText.spoken(holdEnd.timeIntervalSince(t0 + 1))
        #expect(throttle?.rationale == "throttled 15 min: 1 run never reached the app (its process did not start or finish launching) in the last day; held \(held) more (the delay shrinks as the strikes age)", "\(String(describing: throttle))")
        // The launch did not happen: the rate limit and the ledger forget it (why said
        // "the app was launched 0 s ago").
        #expect(engine.policyState(of: F.app)?.lastLaunch == nil)
        let rateLimit = engine.explain(F.key(F.refreshID), at: t0 + 1).evaluation?.decisions.first { $0.policy == "rate-limit" }
        #expect(rateLimit?.rationale == "no recent background launch of the app", "\(String(describing: rateLimit))")
        // Without restoring (a remote wake), or when the app filed a newer one, nothing is filed.
        _ = try F.submit(F.processing(), to: &engine, at: t0 + 2)
        if !engine.activeRuns.contains(where: { $0.identifier == F.syncID }) { _ = try engine.simulateLaunch(F.key(F.syncID), at: t0 + 2) }
        let second = try #require(engine.activeRuns.first { $0.identifier == F.syncID })
        let plain = engine.handle(.appNotStarted(second.id, reason: "did not connect", restoringRequest: false), at: t0 + 3)
        #expect(!plain.contains { if case .retryScheduled = $0 { return true } else { return false } })
        #expect(engine.pendingRequests(of: F.app).map(\.identifier) == [F.refreshID])
        // A newer request the app filed during the run stands; the old one is not filed over it.
        _ = try F.submit(F.processing(submittedAt: t0 + 4), to: &engine, at: t0 + 4)
        if !engine.activeRuns.contains(where: { $0.identifier == F.syncID }) { _ = try engine.simulateLaunch(F.key(F.syncID), at: t0 + 4) }
        let third = try #require(engine.activeRuns.first { $0.identifier == F.syncID })
        var newer = F.processing(submittedAt: t0 + 5)
        newer.earliestBeginDate = t0 + 7_200
        _ = try F.submit(newer, to: &engine, at: t0 + 5)
        let kept = engine.handle(.appNotStarted(third.id, reason: "did not connect", restoringRequest: true), at: t0 + 6)
        #expect(!kept.contains { if case .retryScheduled = $0 { return true } else { return false } })
        #expect(engine.pendingRequests(of: F.app).first { $0.identifier == F.syncID }?.earliestBeginDate == t0 + 7_200)
    }

    @Test func aRunNotClaimedInASharedStoreIsForgottenWithoutARecord() throws {
        var engine = F.engine(SchedulerConfiguration(maximumConcurrentRuns: 1))
        let first = try launch(F.refresh(), in: &engine, at: t0)
        // A second request waits for the one slot.
        #expect(try F.submit(F.processing(), to: &engine, at: t0).launched.isEmpty)
        let lost = Summary(engine.handle(.runNotClaimed(first.id), at: t0 + 0.01))
        #expect(lost.finished.isEmpty, "another replica runs it: nothing is recorded here")
        #expect(lost.launched.map(\.identifier) == [F.syncID], "its slot is free again")
        #expect(!engine.activeRuns.contains { $0.id == first.id })
        #expect(Summary(engine.handle(.timerFired, at: t0 + 30)).expired.isEmpty, "no deadline is left for it")
        #expect(engine.policyState(of: F.app)?.throttle.delay(at: t0 + 31) == 0, "no strike")
        // The same identifier may be submitted and run again.
        #expect(Summary(engine.handle(.runNotClaimed(first.id), at: t0 + 32)).all.count == 1, "a second word changes nothing")
    }

    @Test func aRunNotClaimedLeavesThePoliciesMemoryAsBefore() throws {
        var engine = F.engine()
        let run = try launch(F.refresh(), in: &engine, at: t0)
        #expect(engine.policyState(of: F.app)?.lastLaunch == t0)
        _ = engine.handle(.runNotClaimed(run.id), at: t0 + 1)
        #expect(engine.policyState(of: F.app)?.lastLaunch == nil, "the launch never happened here")
    }

    /// What becomes of the clean-up that joined a refresh's launch at t0, when the refresh
    /// turns out not claimed here (a shared store: another replica ran it).
    enum JoinedCleanup: CaseIterable { case running, finished, notClaimedEither }

    /// Two tasks of one app started at one instant are one launch: it stands while one of
    /// them ran here, and is forgotten when another replica ran both.
    @Test(arguments: JoinedCleanup.allCases)
    func aRunNotClaimedLeavesTheLaunchAJoinedTaskMade(_ cleanupFate: JoinedCleanup) throws {
        var engine = F.engine()
        let refresh = try launch(F.refresh(), in: &engine, at: t0)
        let cleanup = try launch(F.processing(), in: &engine, at: t0)
        if cleanupFate == .finished { _ = engine.handle(.taskCompleted(cleanup.id, success: true), at: t0 + 1) }
        _ = engine.handle(.runNotClaimed(refresh.id), at: t0 + 2)
        if cleanupFate == .notClaimedEither { _ = engine.handle(.runNotClaimed(cleanup.id), at: t0 + 3) }
        #expect(engine.policyState(of: F.app)?.lastLaunch == (cleanupFate == .notClaimedEither ? nil : t0))
    }

    @Test func aRunNotClaimedDoesNotWipeALaterLaunch() throws {
        var engine = F.engine()
        let first = try launch(F.refresh(), in: &engine, at: t0)
        _ = try launch(F.processing(), in: &engine, at: t0 + 10)
        _ = engine.handle(.runNotClaimed(first.id), at: t0 + 11)
        #expect(engine.policyState(of: F.app)?.lastLaunch == t0 + 10)
    }

    @Test func sharedChangesRemoveFirstThenLaunch() throws {
        // One run at a time: were 0 or 1 launched before their removal, 2 could not be.
        var engine = F.engine(SchedulerConfiguration(maximumConcurrentRuns: 1))
        let soon = F.t0 + 0.5
        _ = try F.submit(F.processing(F.processingID(0), earliest: soon), to: &engine, at: t0)
        _ = try F.submit(F.processing(F.processingID(1), earliest: soon), to: &engine, at: t0)
        // Another replica took 0 and 1 (due by now, not launched here yet), and submitted 2.
        let due = F.processing(F.processingID(2))
        let effects = Summary(engine.applySharedChanges(removed: [F.key(F.processingID(0)), F.key(F.processingID(1))], upserted: [due], at: t0 + 1))
        #expect(effects.launched.map(\.identifier) == [F.processingID(2)], "launched once, after the removals")
        #expect(engine.pendingRequest(for: F.key(F.processingID(0))) == nil)
        #expect(engine.pendingRequest(for: F.key(F.processingID(1))) == nil)
    }

    // MARK: Concurrency

    @Test func atMostMaximumConcurrentRunsRunAtOnce() throws {
        var engine = F.engine(SchedulerConfiguration(maximumConcurrentRuns: 2))
        var launched: [RunRecord] = []
        for number in 0..<3 {
            launched += try F.submit(F.processing(F.processingID(number), submittedAt: t0 + Double(number)), to: &engine, at: t0 + Double(number)).launched
        }
        #expect(launched.map(\.identifier) == [F.processingID(0), F.processingID(1)])
        #expect(engine.activeRuns.count == 2)
        #expect(engine.location(of: F.key(F.processingID(2))) == .ready)

        let freed = Summary(engine.handle(.taskCompleted(launched[0].id, success: true), at: t0 + 10))
        #expect(freed.launchedIdentifiers == [F.processingID(2)])
        #expect(engine.activeRuns.count == 2)
    }

    @Test func expiringRunStillHoldsItsConcurrencySlot() throws {
        var engine = F.engine(SchedulerConfiguration(maximumConcurrentRuns: 1))
        let run = try launch(F.refresh(), in: &engine, at: t0)
        _ = try F.submit(F.processing(), to: &engine, at: t0)
        #expect(Summary(engine.handle(.timerFired, at: t0 + 30)).launched.isEmpty)
        let end = Summary(engine.handle(.timerFired, at: t0 + 32))
        #expect(end.terminated == [run.id])
        #expect(end.launchedIdentifiers == [F.syncID])
    }

    @Test func resubmittedWhileRunningWaitsThenLaunchesWhenRunFinishes() throws {
        var engine = F.engine()
        let first = try launch(F.refresh(), in: &engine, at: t0)
        let resubmitted = try F.submit(F.refresh(submittedAt: t0 + 5), to: &engine, at: t0 + 5)
        #expect(resubmitted.launched.isEmpty, "never two runs of one identifier")
        #expect(engine.location(of: F.key(F.refreshID)) == .busy)
        #expect(engine.activeRuns.count == 1)

        let done = Summary(engine.handle(.taskCompleted(first.id, success: true), at: t0 + 8))
        #expect(done.finished.map(\.id) == [first.id])
        let second = try #require(done.launched.first)
        #expect(second.identifier == F.refreshID)
        #expect(second.id != first.id)
        #expect(second.startedAt == t0 + 8)
    }

    @Test func runningProcessingTaskNeedingNetworkExpiresWhenNetworkGoesAway() throws {
        var engine = F.engine()
        let networked = try launch(F.processing(F.processingID(0), network: true), in: &engine, at: t0)
        _ = try launch(F.processing(F.processingID(1)), in: &engine, at: t0)
        let offline = Summary(engine.handle(.conditionsChanged(F.noNetwork), at: t0 + 100))
        #expect(offline.expired == [networked.id], "only the run that needs the network")
        #expect(offline.expireReasons.first?.contains("network") == true)
        #expect(offline.wake == t0 + 102)
    }

    @Test func runningTaskNeedingPowerExpiresWhenUnplugged() throws {
        var engine = F.engine()
        let run = try launch(F.processing(power: true), in: &engine, at: t0)
        #expect(Summary(engine.handle(.conditionsChanged(F.noPower), at: t0 + 50)).expired == [run.id])
    }

    // MARK: Testing hooks

    @Test func simulateLaunchWithoutPendingRequestThrowsNoPendingRequest() {
        var engine = F.engine()
        let error = #expect(throws: EngineError.self) {
            _ = try engine.simulateLaunch(F.key(F.refreshID), at: t0)
        }
        #expect(error?.code == .noPendingRequest)
        #expect(error?.message.contains(F.refreshID) == true)
    }

    @Test func simulateLaunchIgnoresDateAndConditions() throws {
        var engine = F.engine(conditions: F.nothing)
        _ = try F.submit(F.processing(earliest: t0 + 86_400, network: true, power: true), to: &engine, at: t0)
        let effects = Summary(try engine.simulateLaunch(F.key(F.syncID), at: t0 + 1))
        #expect(effects.launchedIdentifiers == [F.syncID])
        #expect(engine.pendingRequests(of: F.app).isEmpty)
        #expect(effects.wake == t0 + 601)
    }

    @Test func simulateExpirationWithoutRunningTaskThrowsNoRunningTask() throws {
        var engine = F.engine()
        _ = try F.submit(F.refresh(earliest: t0 + 60), to: &engine, at: t0)
        let error = #expect(throws: EngineError.self) {
            _ = try engine.simulateExpiration(F.key(F.refreshID), at: t0)
        }
        #expect(error?.code == .noRunningTask)
    }

    @Test func simulateExpirationExpiresRunningTaskNow() throws {
        var engine = F.engine()
        let run = try launch(F.refresh(), in: &engine, at: t0)
        let effects = Summary(try engine.simulateExpiration(F.key(F.refreshID), at: t0 + 3))
        #expect(effects.expired == [run.id])
        #expect(effects.wake == t0 + 5)
        let again = #expect(throws: EngineError.self, "an expiring run cannot be expired again") {
            _ = try engine.simulateExpiration(F.key(F.refreshID), at: t0 + 4)
        }
        // It says the run is in its grace, not that nothing runs (found from outside: 24 of
        // 25 concurrent `bgtask expire` calls said "no running task").
        #expect(again?.message.contains("already told to expire (expiration simulated)") == true, "\(String(describing: again))")
    }

    @Test func simulatedExpirationAfterFiveSecondsExpiresEveryKind() throws {
        var engine = F.engine(SchedulerConfiguration(maximumConcurrentRuns: 10, simulatedExpirationAfter: 5))
        let runs = [
            try launch(F.refresh(), in: &engine, at: t0),
            try launch(F.processing(), in: &engine, at: t0),
            try launch(F.processing(F.researchID, kind: .healthResearch), in: &engine, at: t0),
            try launch(F.continued(), in: &engine, at: t0),
        ]
        #expect(Summary(engine.handle(.timerFired, at: t0 + 4.999)).expired.isEmpty)
        let expiry = Summary(engine.handle(.timerFired, at: t0 + 5))
        #expect(Set(expiry.expired) == Set(runs.map(\.id)))
        #expect(expiry.sampled.isEmpty, "a continued-processing run past its forced budget is expired, not sampled")
    }

    // MARK: Run numbering and restore

    @Test func lastRunIDContinuesNumbering() throws {
        var engine = F.engine(lastRunID: RunID(41))
        let first = try launch(F.refresh(), in: &engine, at: t0)
        let second = try launch(F.processing(), in: &engine, at: t0)
        #expect(first.id == RunID(42))
        #expect(second.id == RunID(43))
        var fresh = F.engine()
        #expect(try launch(F.refresh(), in: &fresh, at: t0).id == RunID(1), "a new store starts at 1")
    }

    @Test func restoreReinsertsRequestsWithoutEffects() throws {
        var engine = F.engine()
        let due = F.processing(submittedAt: t0 - 100)
        let later = F.refresh(submittedAt: t0 - 200, earliest: t0 + 300)
        engine.restore([due, later], at: t0)
        #expect(engine.pendingRequests(of: F.app) == [later, due], "in submission order")
        #expect(engine.activeRuns.isEmpty, "restore launches nothing by itself")
        #expect(engine.nextWake == t0 + 300)

        let fired = Summary(engine.handle(.timerFired, at: t0))
        #expect(fired.launchedIdentifiers == [F.syncID])
        #expect(Summary(engine.handle(.timerFired, at: t0 + 300)).launchedIdentifiers == [F.refreshID])
    }

    // MARK: Cancellation and effects

    @Test func cancelRemovesPendingRequestOnly() throws {
        var engine = F.engine()
        _ = try F.submit(F.refresh(earliest: t0 + 60), to: &engine, at: t0)
        _ = try F.submit(F.refresh(F.otherRefreshID, app: F.otherApp, earliest: t0 + 60), to: &engine, at: t0)
        let cancelled = engine.handle(.requestCancelled(F.key(F.refreshID)), at: t0)
        #expect(engine.pendingRequests(of: F.app).isEmpty)
        #expect(cancelled.last == .wake(at: t0 + 60), "the other app's request still needs the wake")
        _ = engine.handle(.requestCancelled(F.key(F.refreshID)), at: t0)  // nothing pending: no change
        #expect(engine.pendingRequests(of: F.otherApp).count == 1)
        #expect(Summary(engine.handle(.timerFired, at: t0 + 60)).launchedIdentifiers == [F.otherRefreshID])
    }

    @Test func cancelAllRemovesOneAppsRequests() throws {
        var engine = F.engine()
        _ = try F.submit(F.refresh(earliest: t0 + 60), to: &engine, at: t0)
        _ = try F.submit(F.processing(earliest: t0 + 60), to: &engine, at: t0)
        _ = try F.submit(F.refresh(F.otherRefreshID, app: F.otherApp, earliest: t0 + 60), to: &engine, at: t0)
        _ = engine.handle(.allRequestsCancelled(F.app), at: t0)
        #expect(engine.pendingRequests(of: F.app).isEmpty)
        #expect(engine.allPendingRequests.map(\.identifier) == [F.otherRefreshID])
    }

    @Test func everyCallEndsWithWakeEffect() throws {
        var engine = F.engine()
        let run = try launch(F.refresh(), in: &engine, at: t0)
        let results = [
            Summary(engine.handle(.timerFired, at: t0 + 1)),
            Summary(engine.handle(.conditionsChanged(F.noNetwork), at: t0 + 2)),
            Summary(engine.handle(.progressSampled(run.id, completedUnitCount: 1), at: t0 + 3)),
            Summary(engine.handle(.taskCompleted(run.id, success: true), at: t0 + 4)),
        ]
        for result in results {
            #expect(result.wake != nil, "last effect is .wake(at:): \(result.all)")
        }
    }

    // MARK: Continued processing

    @Test func continuedProcessingQueuesFirstInFirstOutBehindCap() throws {
        var engine = F.engine()
        let first = try launch(F.continued("a"), in: &engine, at: t0)
        let queuedB = try F.submit(F.continued("b", submittedAt: t0 + 1), to: &engine, at: t0 + 1)
        let queuedC = try F.submit(F.continued("c", submittedAt: t0 + 2), to: &engine, at: t0 + 2)
        #expect(queuedB.launched.isEmpty && queuedC.launched.isEmpty)
        #expect(engine.location(of: F.key(F.exportID("b"))) == .continuedQueue)
        #expect(engine.location(of: F.key(F.exportID("c"))) == .continuedQueue)

        let afterA = Summary(engine.handle(.taskCompleted(first.id, success: true), at: t0 + 10))
        #expect(afterA.launchedIdentifiers == [F.exportID("b")])
        let runB = try #require(afterA.launched.first)
        let afterB = Summary(engine.handle(.taskCompleted(runB.id, success: true), at: t0 + 20))
        #expect(afterB.launchedIdentifiers == [F.exportID("c")])
    }

    @Test func continuedProcessingDoesNotTakeScheduledRunSlots() throws {
        var engine = F.engine(SchedulerConfiguration(maximumConcurrentRuns: 1))
        _ = try launch(F.continued("a"), in: &engine, at: t0)
        #expect(try F.submit(F.refresh(), to: &engine, at: t0).launchedIdentifiers == [F.refreshID])
    }

    @Test func continuedProcessingIgnoresEarliestBeginDate() throws {
        var engine = F.engine()
        let effects = try F.submit(F.continued(earliest: t0 + 86_400), to: &engine, at: t0)
        #expect(effects.launchedIdentifiers == [F.exportID("photos")])
        #expect(effects.launchBudgets == [nil], "no fixed budget")
    }

    @Test func failStrategyThrowsImmediateRunIneligibleWhenCapIsReached() throws {
        var engine = F.engine()
        _ = try launch(F.continued("a"), in: &engine, at: t0)
        let rejection = F.rejection(of: F.continued("b", strategy: .fail), by: engine, at: t0 + 1)
        #expect(rejection?.code == .immediateRunIneligible)
        #expect(rejection?.message.contains(F.exportID("b")) == true)
    }

    @Test func failStrategyStartsAtOnceWhenCapIsFree() throws {
        var engine = F.engine()
        #expect(try F.submit(F.continued("a", strategy: .fail), to: &engine, at: t0).launchedIdentifiers == [F.exportID("a")])
    }

    @Test func stalledContinuedProcessingIsSampledThenExpired() throws {
        var engine = F.engine()
        let run = try launch(F.continued(), in: &engine, at: t0)
        #expect(engine.nextWake == t0 + 60)

        let firstCheck = Summary(engine.handle(.timerFired, at: t0 + 60))
        #expect(firstCheck.sampled == [run.id])
        #expect(firstCheck.expired.isEmpty)
        _ = engine.handle(.progressSampled(run.id, completedUnitCount: 10), at: t0 + 60)

        let secondCheck = Summary(engine.handle(.timerFired, at: t0 + 120))
        #expect(secondCheck.sampled == [run.id])
        let stalled = Summary(engine.handle(.progressSampled(run.id, completedUnitCount: 10), at: t0 + 120))
        #expect(stalled.expired == [run.id])
        #expect(stalled.expireReasons.first?.contains("stalled for 60 s") == true)
    }

    @Test func advancingProgressRearmsTheStallCheck() throws {
        var engine = F.engine()
        let run = try launch(F.continued(), in: &engine, at: t0)
        var completed: Int64 = 0
        for minute in 1...20 {
            let now = t0 + Double(minute) * 60
            #expect(Summary(engine.handle(.timerFired, at: now)).sampled == [run.id])
            completed += 5
            let sample = Summary(engine.handle(.progressSampled(run.id, completedUnitCount: completed), at: now))
            #expect(sample.expired.isEmpty)
            #expect(sample.wake == now + 60, "the next check is one stall period later")
        }
        #expect(engine.activeRuns.map(\.id) == [run.id], "an advancing run has no fixed limit")
    }

    @Test func unansweredSampleIsRequestedAgainAfterAStallPeriod() throws {
        var engine = F.engine()
        let run = try launch(F.continued(), in: &engine, at: t0)
        #expect(Summary(engine.handle(.timerFired, at: t0 + 60)).wake == t0 + 120)
        #expect(Summary(engine.handle(.timerFired, at: t0 + 120)).sampled == [run.id])
    }

    // MARK: Found by these tests, fixed

    /// A continued-processing run "whose progress has not advanced for this long is expired":
    /// one still at 0 units one stall period after launch has not advanced.
    @Test func continuedProcessingStuckAtZeroIsExpiredAtFirstSample() throws {
        var engine = F.engine()
        let run = try launch(F.continued(), in: &engine, at: t0)
        _ = engine.handle(.timerFired, at: t0 + 60)
        let sample = Summary(engine.handle(.progressSampled(run.id, completedUnitCount: 0), at: t0 + 60))
        #expect(sample.expired == [run.id])
    }

    /// Never two runs of one identifier: a continued-processing request resubmitted while its
    /// identifier runs waits for that run to end.
    @Test func continuedProcessingResubmittedWhileRunningDoesNotRunTwice() throws {
        var engine = F.engine(SchedulerConfiguration(maximumConcurrentContinuedProcessing: 2))
        _ = try launch(F.continued("a"), in: &engine, at: t0)
        let again = try F.submit(F.continued("a", submittedAt: t0 + 1), to: &engine, at: t0 + 1)
        #expect(again.launched.isEmpty)
        #expect(engine.activeRuns.filter { $0.identifier == F.exportID("a") }.count == 1)
    }

    /// `simulateLaunch` refuses while a run of the same identifier is in progress.
    @Test func simulateLaunchWhileSameIdentifierRunsDoesNotStartASecondRun() throws {
        var engine = F.engine()
        let first = try launch(F.refresh(), in: &engine, at: t0)
        _ = try F.submit(F.refresh(submittedAt: t0 + 1), to: &engine, at: t0 + 1)
        #expect(engine.location(of: F.key(F.refreshID)) == .busy)
        #expect(throws: EngineError.self) { try engine.simulateLaunch(F.key(F.refreshID), at: t0 + 2) }
        #expect(engine.activeRuns.filter { $0.identifier == F.refreshID }.count == 1)
        #expect(engine.activeRun(for: F.key(F.refreshID))?.id == first.id)
    }
}
