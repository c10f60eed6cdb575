import Foundation
@testable import SchedulerCore
import Testing

private typealias F = EngineFixtures
private let t0 = F.t0

/// docs/policies.md, "eligible": a request read back from a store has been eligible since
/// its due date, so a restart neither starts the starvation guard's count again nor pushes a
/// throttled request later; the throttle's wait counts from the app's last strike when that
/// came after the request became eligible.
@Suite struct EngineRestoreEligibilityTests {
    private static let policy = PolicyConfiguration(minimumLaunchInterval: 0, herdSpreadWindow: 0, coalescingTolerance: 0)

    private func engine(_ conditions: Conditions = .favorable) -> SchedulerEngine {
        F.engine(conditions: conditions, policies: PolicySet(configuration: Self.policy))
    }

    @Test func aRestoredRequestIsEligibleSinceItsDueDateAndASubmissionSinceNow() throws {
        var engine = engine(F.nothing)
        let due = F.refresh(submittedAt: t0, earliest: t0 + 600)
        let begunBeforeItsSubmission = F.processing(submittedAt: t0 + 100, earliest: t0 - 3600)
        let notYetDue = F.refresh(F.otherRefreshID, app: F.otherApp, submittedAt: t0, earliest: t0 + 86_400)
        let restart = t0 + 7200
        engine.restore([due, begunBeforeItsSubmission, notYetDue], at: restart)
        #expect(engine.eligibleSince(of: due.key) == t0 + 600)
        #expect(engine.eligibleSince(of: begunBeforeItsSubmission.key) == t0 + 100, "not before it existed")
        #expect(engine.eligibleSince(of: notYetDue.key) == nil)
        // A submission is eligible from when it is filed, whatever date it asks for.
        let submitted = F.processing(F.researchID, submittedAt: restart, earliest: t0, power: true)
        _ = try F.submit(submitted, to: &engine, at: restart)
        #expect(engine.eligibleSince(of: submitted.key) == restart)
        // A clock set back since: never eligible after now.
        var earlier = self.engine(F.nothing)
        earlier.restore([F.refresh(submittedAt: t0 + 600)], at: t0)
        #expect(earlier.eligibleSince(of: F.key(F.refreshID)) == nil, "due in the future: not eligible yet")
    }

    @Test func aRequestReadBackAfterTheGuaranteedDeferralMustRun() {
        var engine = engine(F.noPower)
        let waiting = F.processing(submittedAt: t0, power: true)
        let restart = t0 + 3 * 86_400
        engine.restore([waiting], at: restart)
        let starvation = engine.explain(waiting.key, at: restart).evaluation?.decisions.first { $0.policy == "starvation" }
        #expect(starvation?.verdict == .mustProceed, "\(String(describing: starvation))")
    }

    @Test func aRestartDoesNotPushAThrottledRequestLater() throws {
        var running = engine()
        // A run that ignores its expiration earns a strike at t0 + 32.
        let run = try #require(try F.submit(F.refresh(), to: &running, at: t0).launched.first)
        _ = running.handle(.timerFired, at: t0 + 30)
        #expect(EngineEffectSummary(running.handle(.timerFired, at: t0 + 32)).terminated == [run.id])
        // The app asks for the next refresh one cadence after that run: due at t0 + 900.
        let next = F.refresh(submittedAt: t0 + 40, earliest: t0 + 900)
        _ = try F.submit(next, to: &running, at: t0 + 40)
        _ = running.handle(.timerFired, at: t0 + 900)
        let restart = t0 + 1200
        _ = running.handle(.timerFired, at: restart)
        guard case .deferred(let held)? = running.location(of: next.key) else {
            Issue.record("expected the throttle to hold it, got \(String(describing: running.location(of: next.key)))")
            return
        }
        #expect(held > restart)
        // The same store opened again five minutes after the hold began holds it to the
        // same moment, not five minutes later.
        var restarted = engine()
        restarted.restorePolicyState(try #require(running.policyState(of: F.app)), of: F.app)
        restarted.restore([next], at: restart)
        _ = restarted.handle(.timerFired, at: restart)
        #expect(restarted.location(of: next.key) == .deferred(until: held), "\(restarted.explain(next.key, at: restart).summary)")
    }

    @Test func aStrikeStampedLaterThanNowIsNotWaitedFor() {
        // A clock set back after the strike (or a replica's clock ahead): the hold is the
        // delay after the request became eligible, not a year.
        var app = AppPolicyState(usage: UsageModel(createdAt: t0))
        app.throttle.recordAppNotStarted(at: t0 + 365 * 86_400)
        let request = F.refresh(submittedAt: t0)
        let context = PolicyContext(request: request, now: t0 + 60, eligibleSince: t0, conditions: .favorable, app: app)
        guard case (.mustNotProceed, .until(let until)?) = ThrottlePolicy().verdict(context) else {
            Issue.record("expected the throttle to hold it, got \(ThrottlePolicy().verdict(context))")
            return
        }
        #expect(until <= t0 + 900, "\(until.timeIntervalSince(t0))")
    }

    @Test func aRequestFiledAgainForAnAppThatNeverGotItKeepsItsWaitAsARestartWould() throws {
        var engine = engine()
        let refresh = F.refresh(submittedAt: t0)
        let run = try #require(try F.submit(refresh, to: &engine, at: t0).launched.first)
        _ = engine.handle(.appNotStarted(run.id, reason: "cannot launch: ENOEXEC", restoringRequest: true), at: t0 + 5)
        #expect(engine.eligibleSince(of: refresh.key) == t0, "waiting since its due date, not since the failure")
    }

    @Test func aRequestEligibleBeforeAStrikeWaitsTheDelayAfterIt() throws {
        var engine = engine(F.noPower)
        // Filed at t0, waiting for power for two hours.
        let sync = F.processing(submittedAt: t0, power: true)
        _ = try F.submit(sync, to: &engine, at: t0)
        // Meanwhile a refresh of the same app ignores its expiration: a strike at t0 + 7232.
        let run = try #require(try F.submit(F.refresh(submittedAt: t0 + 7200), to: &engine, at: t0 + 7200).launched.first)
        _ = engine.handle(.timerFired, at: t0 + 7230)
        #expect(EngineEffectSummary(engine.handle(.timerFired, at: t0 + 7232)).terminated == [run.id])
        // Power comes a minute later: the sync waits the throttle's delay after the strike
        // (counted from its own eligibility, two hours ago, the delay had long passed).
        let plugged = EngineEffectSummary(engine.handle(.conditionsChanged(.favorable), at: t0 + 7300))
        #expect(plugged.launched.isEmpty)
        guard case .deferred(let until)? = engine.location(of: sync.key) else {
            Issue.record("expected the throttle to hold it, got \(String(describing: engine.location(of: sync.key)))")
            return
        }
        #expect(until > t0 + 7232 + 800, "\(until.timeIntervalSince(t0))")
        let throttle = engine.explain(sync.key, at: t0 + 7300).evaluation?.blocking.map(\.policy)
        #expect(throttle == ["throttle"])
    }
}
