import Foundation
@testable import SchedulerCore
import Testing

private typealias F = EngineFixtures
private typealias Summary = EngineEffectSummary

/// The inputs that go through `handle(_:at:)` like every other event: the refresh switch,
/// cancellations, a terminating app, and the retries the engine decides at a run's end.
@Suite struct EngineEventTests {
    let t0 = F.t0

    @Test func turningTheSwitchOnLaunchesWhatItHeldInTheSameHandling() throws {
        var engine = F.engine()
        _ = try F.submit(F.refresh(earliest: t0 + 60), to: &engine, at: t0)
        _ = engine.handle(.backgroundRefreshChanged(F.app, enabled: false), at: t0)
        #expect(Summary(engine.handle(.timerFired, at: t0 + 60)).launched.isEmpty)
        #expect(engine.location(of: F.key(F.refreshID)) == .parkedForApp)
        let on = Summary(engine.handle(.backgroundRefreshChanged(F.app, enabled: true), at: t0 + 120))
        #expect(on.launchedIdentifiers == [F.refreshID])
        #expect(engine.registration(of: F.app)?.backgroundRefreshEnabled == true)
    }

    @Test func cancellingRecomputesTheWake() throws {
        var engine = F.engine()
        _ = try F.submit(F.refresh(earliest: t0 + 60), to: &engine, at: t0)
        let cancelled = Summary(engine.handle(.requestCancelled(F.key(F.refreshID)), at: t0))
        #expect(cancelled.wake == .some(nil), "nothing left to wake for")
    }

    @Test func aTerminatingAppsRunsExpireAndNothingMoreOfItLaunches() throws {
        var engine = F.engine()
        let started = try F.submit(F.processing(), to: &engine, at: t0)
        let run = try #require(started.launched.first)
        _ = try F.submit(F.processing(F.processingID(1), earliest: t0 + 10), to: &engine, at: t0)
        let terminating = Summary(engine.handle(.appTerminating(F.app), at: t0 + 1))
        #expect(terminating.expired == [run.id])
        #expect(terminating.expireReasons.allSatisfy { $0.contains("terminating") })
        #expect(Summary(engine.handle(.taskCompleted(run.id, success: false), at: t0 + 2)).finished.map(\.outcome) == [.expired])
        #expect(Summary(engine.handle(.timerFired, at: t0 + 10)).launched.isEmpty, "the app is exiting")
        // Launched again (a new process registers), it runs what is due.
        engine.register(AppRegistration(app: F.app, manifest: F.manifest))
        #expect(Summary(engine.handle(.appForegrounded(F.app), at: t0 + 20)).launchedIdentifiers == [F.processingID(1)])
    }

    /// The user force-quits an app during its runs; bgtaskd then ends its process: a run that
    /// ends with it (crashed, or never launched) is the user's doing, no strike against the
    /// app. A crash after the system expired a run for another reason is still the app's.
    @Test func aRunTheUserForceQuitIsNoStrikeHoweverItEnds() throws {
        var engine = F.engine()
        let running = try #require(try F.submit(F.processing(), to: &engine, at: t0).launched.first)
        let launching = try #require(try F.submit(F.processing(F.processingID(1)), to: &engine, at: t0).launched.first)
        _ = engine.handle(.appForceQuit(F.app), at: t0 + 1)
        let expired = Summary(engine.handle(.appEndedByTheUser(F.app, reason: "the user force-quit the app"), at: t0 + 1))
        #expect(expired.expired == [running.id, launching.id] && expired.expireReasons.allSatisfy { $0 == "the user force-quit the app" }, "\(expired.expired)")
        let crashed = Summary(engine.handle(.runCrashed(running.id, reason: "the app's connection was closed during the run"), at: t0 + 1.1))
        #expect(crashed.finished.map(\.outcome) == [.crashed])
        _ = engine.handle(.appNotStarted(launching.id, reason: "the app was stopped before the task could start", restoringRequest: true), at: t0 + 1.2)
        #expect(engine.policyState(of: F.app)?.throttle.strikes == 0)
        // Opened again: a run that crashes after an expiration for the device's sake is struck.
        _ = engine.handle(.appForegrounded(F.app), at: t0 + 2)
        let later = try #require(try F.submit(F.processing(F.processingID(2)), to: &engine, at: t0 + 3).launched.first)
        _ = engine.handle(.runsExpired(F.app, reason: "the user started another process of the app"), at: t0 + 4)
        _ = engine.handle(.runCrashed(later.id, reason: "the app's process killed by signal 11 (SIGSEGV) during the run"), at: t0 + 5)
        #expect(engine.policyState(of: F.app)?.throttle.strikes == 1)
        // A force-quit alone (the app's own, in its process: nothing ends it) exempts nothing.
        _ = engine.handle(.appForegrounded(F.app), at: t0 + 6)
        let third = try #require(try F.submit(F.processing(F.processingID(3)), to: &engine, at: t0 + 7).launched.first)
        _ = engine.handle(.appForceQuit(F.app), at: t0 + 8)
        _ = engine.handle(.runCrashed(third.id, reason: "the app's process killed by signal 6 (SIGABRT) during the run"), at: t0 + 9)
        #expect(engine.policyState(of: F.app)?.throttle.strikes == 2)
    }

    @Test func expiringAnAppsRunsExpiresThemOnceAndLaunchesGoOn() throws {
        var engine = F.engine()
        let started = try F.submit(F.processing(), to: &engine, at: t0)
        let run = try #require(started.launched.first)
        _ = try F.submit(F.processing(F.processingID(1), earliest: t0 + 10), to: &engine, at: t0)
        let reason = "the user started another process of the app"
        let expired = Summary(engine.handle(.runsExpired(F.app, reason: reason), at: t0 + 1))
        #expect(expired.expired == [run.id])
        #expect(expired.expireReasons == [reason])
        #expect(Summary(engine.handle(.runsExpired(F.app, reason: reason), at: t0 + 1.5)).expired.isEmpty, "a run already expiring is not expired again")
        #expect(Summary(engine.handle(.taskCompleted(run.id, success: true), at: t0 + 2)).finished.map(\.outcome) == [.expired])
        #expect(engine.policyState(of: F.app)?.throttle.strikes == 0, "the host's decision is no strike against the app")
        #expect(Summary(engine.handle(.runsExpired(AppID("com.example.other"), reason: reason), at: t0 + 3)).expired.isEmpty)
        // Unlike a terminating app, the app's next request launches when due.
        #expect(Summary(engine.handle(.timerFired, at: t0 + 10)).launchedIdentifiers == [F.processingID(1)])
    }

    @Test func aFailedRunIsRetriedWithinItsEndAndTheCountIsKeptInThePolicyState() throws {
        var engine = F.engine()
        engine.setRetryPolicy(RetryPolicy(initialDelay: 60, multiplier: 2, maximumDelay: 600, maximumAttempts: 3), for: F.key(F.syncID))
        let run = try #require(try F.submit(F.processing(), to: &engine, at: t0).launched.first)
        let end = engine.handle(.taskCompleted(run.id, success: false), at: t0 + 5)
        let retryIndex = try #require(end.firstIndex { if case .retryScheduled = $0 { true } else { false } })
        let finishedIndex = try #require(end.firstIndex { if case .runFinished = $0 { true } else { false } })
        #expect(retryIndex < finishedIndex, "the retry is persisted before the count that made it")
        #expect(engine.pendingRequests(of: F.app).map(\.earliestBeginDate) == [t0 + 65])
        #expect(engine.policyState(of: F.app)?.retryAttempts == [F.syncID: 1])

        // The saved state restores the count: the next failure waits twice as long.
        var restarted = F.engine()
        restarted.restorePolicyState(try #require(engine.policyState(of: F.app)), of: F.app)
        restarted.setRetryPolicy(RetryPolicy(initialDelay: 60, multiplier: 2, maximumDelay: 600, maximumAttempts: 3), for: F.key(F.syncID))
        let second = try #require(try F.submit(F.processing(), to: &restarted, at: t0 + 100).launched.first)
        _ = restarted.handle(.taskCompleted(second.id, success: false), at: t0 + 100)
        #expect(restarted.pendingRequests(of: F.app).map(\.earliestBeginDate) == [t0 + 220])

        // A success forgets the failures.
        let third = try #require(Summary(restarted.handle(.timerFired, at: t0 + 220)).launched.first)
        _ = restarted.handle(.taskCompleted(third.id, success: true), at: t0 + 221)
        #expect(restarted.policyState(of: F.app)?.retryAttempts == [:])
        #expect(restarted.pendingRequests(of: F.app).isEmpty)
    }

    @Test func theAppsOwnResubmissionStandsAndNoRetryIsMade() throws {
        var engine = F.engine()
        engine.setRetryPolicy(RetryPolicy(initialDelay: 60, multiplier: 1, maximumDelay: 60, maximumAttempts: nil), for: F.key(F.syncID))
        let run = try #require(try F.submit(F.processing(), to: &engine, at: t0).launched.first)
        _ = try F.submit(F.processing(earliest: t0 + 3600), to: &engine, at: t0 + 1)  // from the handler
        let end = engine.handle(.taskCompleted(run.id, success: false), at: t0 + 5)
        #expect(!end.contains { if case .retryScheduled = $0 { true } else { false } })
        #expect(engine.pendingRequests(of: F.app).map(\.earliestBeginDate) == [t0 + 3600])
    }

    @Test func aRetryPolicyThatGivesUpMakesNoRetry() throws {
        var engine = F.engine()
        engine.setRetryPolicy(RetryPolicy(initialDelay: 10, multiplier: 1, maximumDelay: 10, maximumAttempts: 1), for: F.key(F.syncID))
        var run = try #require(try F.submit(F.processing(), to: &engine, at: t0).launched.first)
        _ = engine.handle(.taskCompleted(run.id, success: false), at: t0)
        run = try #require(Summary(engine.handle(.timerFired, at: t0 + 10)).launched.first)
        _ = engine.handle(.taskCompleted(run.id, success: false), at: t0 + 10)
        #expect(engine.pendingRequests(of: F.app).isEmpty, "the second failure exceeds maximumAttempts")
        #expect(engine.policyState(of: F.app)?.retryAttempts == [F.syncID: 2])
    }
}
