import Foundation
@testable import SchedulerCore
import Testing

private typealias F = EngineFixtures
private let t0 = F.t0

/// The engine with the standard policy set: held requests are filed by what lifts their
/// verdict and come back when it changes; coalescing, herd spreading, expiry on heat and
/// user activity, and explanations.
@Suite struct EnginePolicyTests {
    private func engine(_ conditions: Conditions = .favorable, policy: PolicyConfiguration = PolicyConfiguration(herdSpreadWindow: 0, coalescingTolerance: 0)) -> SchedulerEngine {
        F.engine(conditions: conditions, policies: PolicySet(configuration: policy))
    }

    @Test func lowPowerModeHoldsARefreshUntilTheDeviceChanges() throws {
        let lowPower = Conditions(externalPower: false, networkAvailable: true, lowPowerMode: true)
        var engine = engine(lowPower)
        let submitted = try F.submit(F.refresh(), to: &engine, at: t0)
        #expect(submitted.launched.isEmpty)
        #expect(engine.location(of: F.key(F.refreshID)) == .parkedForDevice)
        #expect(engine.nextWake == nil, "nothing to wake for: only a device change can help")
        let changed = EngineEffectSummary(engine.handle(.conditionsChanged(Conditions(externalPower: false, networkAvailable: true)), at: t0 + 60))
        #expect(changed.launched.map(\.identifier) == [F.refreshID])
    }

    @Test func aWeighedHoldNamesEveryBlockingPolicyWhenTheEngineExplains() throws {
        // Low Power Mode and heat together: neither is among the quick verdicts, so the
        // weighed judgement holds the refresh and names both.
        let hotAndSaving = Conditions(externalPower: false, networkAvailable: true, lowPowerMode: true, thermalState: .serious)
        var explaining = engine(hotAndSaving)
        let held = try F.submit(F.refresh(), to: &explaining, at: t0)
        let names = try #require(held.moves.last { $0.key == F.key(F.refreshID) }?.heldBy)
        #expect(Set(names.components(separatedBy: " and ")) == ["low-power-mode", "thermal"], "\(names)")
        // Without rationales (fleets, simulations that keep no trace) no name is built.
        var quiet = F.engine(SchedulerConfiguration(explainsLaunches: false), conditions: hotAndSaving,
                             policies: PolicySet(configuration: PolicyConfiguration(herdSpreadWindow: 0, coalescingTolerance: 0)))
        let unnamed = try F.submit(F.refresh(), to: &quiet, at: t0)
        let move = try #require(unnamed.moves.last { $0.key == F.key(F.refreshID) })
        #expect(move.heldBy == nil && move.location == .parkedForDevice)
    }

    @Test func onlyASuccessfulRefreshMakesTheContentNew() throws {
        // The refresh placement measures the content's age from the last refresh that
        // succeeded, not from any background launch: a clean-up fetched nothing.
        var engine = engine()
        let cleanup = try #require(try F.submit(F.processing(), to: &engine, at: t0).launched.first)
        _ = engine.handle(.taskCompleted(cleanup.id, success: true), at: t0 + 180)
        #expect(engine.policyState(of: F.app)?.lastLaunch == t0)
        #expect(engine.policyState(of: F.app)?.lastRefresh == nil)
        let failed = try #require(try F.submit(F.refresh(), to: &engine, at: t0 + 200).launched.first)
        _ = engine.handle(.taskCompleted(failed.id, success: false), at: t0 + 204)
        #expect(engine.policyState(of: F.app)?.lastRefresh == nil, "a failed refresh left the content as old as it was")
        let refresh = try #require(try F.submit(F.refresh(F.secondRefreshID), to: &engine, at: t0 + 300).launched.first)
        _ = engine.handle(.taskCompleted(refresh.id, success: true), at: t0 + 304)
        #expect(engine.policyState(of: F.app)?.lastRefresh == t0 + 300, "the content is as old as the fetch's start")
    }

    @Test func runStartsThatCanNoLongerEarnAStrikeAreForgotten() throws {
        // The over-scheduling check keeps when each key last started a run. A process that
        // launches ever new identifiers must not keep one entry per identifier it ever ran:
        // starts older than every cadence of the app's throttle are dropped as the table
        // doubles, and the recent ones still count.
        let app = AppID("com.example.many")
        let identifiers = (0..<1_100).map { "com.example.many.task\($0)" }
        var engine = F.engine()
        engine.register(AppRegistration(app: app, manifest: AppManifest(
            appID: app, permittedIdentifiers: identifiers, backgroundModes: ["processing"], source: "fixtures/many/Info.plist")))
        for (number, identifier) in identifiers.enumerated() {
            let at = t0 + Double(number) * 10
            let run = try #require(try F.submit(F.processing(identifier, app: app, submittedAt: at), to: &engine, at: at).launched.first)
            _ = engine.handle(.taskCompleted(run.id, success: true), at: at + 5)
        }
        // The prune at 1,024 starts kept the last hour's 360 (processing's cadence, the
        // longest), and 76 came since: not 1,100.
        #expect(engine.lastRunStartCount == 360 + 76)
        let strikes = engine.policyState(of: app)?.throttle.recentStrikes.count ?? 0
        // A start 10 minutes old is still there: asking again at once is over-scheduling.
        let now = t0 + 11_000
        _ = try F.submit(F.processing(identifiers[1_039], app: app, submittedAt: now), to: &engine, at: now)
        #expect(engine.policyState(of: app)?.throttle.recentStrikes.count == strikes + 1)
        _ = engine.handle(.appUninstalled(app), at: now + 1)
        #expect(engine.lastRunStartCount == 0, "an uninstalled app's starts go with it")
    }

    @Test func forceQuitHoldsUntilTheAppIsOpened() throws {
        var engine = engine()
        _ = engine.handle(.appForceQuit(F.app), at: t0)
        let held = try F.submit(F.refresh(), to: &engine, at: t0)
        #expect(engine.location(of: F.key(F.refreshID)) == .parkedForApp)
        // The move names the policy that held it (what the trace and the timeline say).
        let move = try #require(held.moves.last { $0.key == F.key(F.refreshID) })
        #expect(move.heldBy == "force-quit")
        #expect(move.location.description(heldBy: move.heldBy) == "held by force-quit until the app's state changes")
        // Another app is not affected.
        #expect(try F.submit(F.refresh(F.otherRefreshID, app: F.otherApp), to: &engine, at: t0).launched.count == 1)
        let opened = EngineEffectSummary(engine.handle(.appForegrounded(F.app), at: t0 + 300))
        #expect(opened.launched.map(\.identifier) == [F.refreshID])
    }

    @Test func aForceQuitParksTheRequestsAWeighedPolicyHeldUntilAnInstant() throws {
        var engine = engine(policy: PolicyConfiguration(minimumLaunchInterval: 0, herdSpreadWindow: 0, coalescingTolerance: 0))
        // A run that ignores its expiration: the throttle then holds the next refresh until an instant.
        let run = try #require(try F.submit(F.refresh(), to: &engine, at: t0).launched.first)
        _ = engine.handle(.timerFired, at: t0 + 30)
        _ = engine.handle(.timerFired, at: t0 + 32)
        #expect(!engine.activeRuns.contains { $0.id == run.id })
        _ = try F.submit(F.refresh(submittedAt: t0 + 40, earliest: t0 + 900), to: &engine, at: t0 + 40)
        _ = engine.handle(.timerFired, at: t0 + 900)
        guard case .deferred? = engine.location(of: F.key(F.refreshID)) else {
            Issue.record("expected the throttle to hold it, got \(String(describing: engine.location(of: F.key(F.refreshID))))")
            return
        }
        // Force-quit: held until the app is opened, not until that instant (`bgtask why`'s
        // "now:" line said the instant beside the force-quit's verdict). A policy the launch
        // loop asks before force-quit (the rate limit) still files it at its own instant.
        _ = engine.handle(.appForceQuit(F.app), at: t0 + 960)
        #expect(engine.location(of: F.key(F.refreshID)) == .parkedForApp)
    }

    @Test func rateLimitDefersTheSecondLaunchOfAnAppToAnInstant() throws {
        var engine = engine()
        let first = try F.submit(F.processing(F.processingID(0)), to: &engine, at: t0)
        #expect(first.launched.count == 1)
        let second = try F.submit(F.processing(F.processingID(1)), to: &engine, at: t0 + 1)
        #expect(second.launched.isEmpty)
        #expect(engine.location(of: F.key(F.processingID(1))) == .deferred(until: t0 + 60))
        #expect(second.moves.last { $0.key == F.key(F.processingID(1)) }?.heldBy == "rate-limit")
        #expect(engine.nextWake == t0 + 60)
        let later = EngineEffectSummary(engine.handle(.timerFired, at: t0 + 60))
        #expect(later.launched.map(\.identifier) == [F.processingID(1)])
    }

    @Test func processingWaitsForAnIdleDeviceAndIsExpiredWhenTheUserReturns() throws {
        let inUse = Conditions(externalPower: true, networkAvailable: true, deviceIdle: false)
        var engine = engine(inUse)
        #expect(try F.submit(F.processing(), to: &engine, at: t0).launched.isEmpty)
        let idle = EngineEffectSummary(engine.handle(.conditionsChanged(.favorable), at: t0 + 600))
        let run = try #require(idle.launched.first)
        let back = EngineEffectSummary(engine.handle(.conditionsChanged(inUse), at: t0 + 700))
        #expect(back.expired == [run.id])
        #expect(back.expireReasons.first?.contains("user") == true)
        // Completing within the grace after such an expiry is not the app's fault: no throttle.
        _ = engine.handle(.taskCompleted(run.id, success: false), at: t0 + 701)
        #expect(engine.policyState(of: F.app)?.throttle.delay(at: t0 + 702) == 0)
    }

    @Test func seriousThermalStateExpiresRunningWork() throws {
        var engine = engine()
        let run = try #require(try F.submit(F.refresh(), to: &engine, at: t0).launched.first)
        let hot = Conditions(externalPower: true, networkAvailable: true, thermalState: .serious)
        #expect(EngineEffectSummary(engine.handle(.conditionsChanged(hot), at: t0 + 5)).expired == [run.id])
    }

    @Test func energyBudgetHoldsTheAppUntilLocalMidnight() throws {
        var engine = engine(policy: PolicyConfiguration(energyBudgetPerAppPerDay: 100, minimumLaunchInterval: 0, herdSpreadWindow: 0, coalescingTolerance: 0))
        engine.recordEnergy(150, for: F.app, at: t0)
        _ = try F.submit(F.refresh(), to: &engine, at: t0)
        guard case .deferred(let until)? = engine.location(of: F.key(F.refreshID)) else {
            Issue.record("expected a deferral, got \(String(describing: engine.location(of: F.key(F.refreshID))))")
            return
        }
        #expect(until > t0 && until <= t0 + 86_400)
        #expect(EngineEffectSummary(engine.handle(.timerFired, at: until)).launched.count == 1)
    }

    @Test func herdSpreadingStaggersWhatAPluggedInChargerFreesAppByApp() throws {
        var engine = engine(F.noPower, policy: PolicyConfiguration(minimumLaunchInterval: 0, herdSpreadWindow: 600, coalescingTolerance: 0))
        // Five apps with a processing task each, and the first app with two more.
        let apps = (0..<5).map { AppID("com.example.spread\($0)") }
        var requests: [PendingRequest] = []
        for app in apps {
            let identifiers = (0..<(app == apps[0] ? 3 : 1)).map { "\(app.rawValue).sync\($0)" }
            engine.register(AppRegistration(app: app, manifest: AppManifest(appID: app, permittedIdentifiers: identifiers, backgroundModes: ["processing"], source: "\(app.rawValue)/Info.plist")))
            requests += identifiers.map { F.processing($0, app: app, power: true) }
        }
        for request in requests { _ = try F.submit(request, to: &engine, at: t0) }
        let plugged = EngineEffectSummary(engine.handle(.conditionsChanged(.favorable), at: t0 + 3600))
        #expect(plugged.launched.count < 5, "not everything at the trigger instant")
        var starts: [Date] = plugged.launched.map(\.startedAt)
        var started: [RequestKey: Date] = Dictionary(uniqueKeysWithValues: plugged.launched.map { ($0.request.key, $0.startedAt) })
        var now = t0 + 3600
        while let wake = engine.nextWake, wake <= t0 + 3600 + 600 {
            now = wake
            let fired = EngineEffectSummary(engine.handle(.timerFired, at: now))
            for run in fired.launched {
                starts.append(run.startedAt)
                started[run.request.key] = run.startedAt
                _ = engine.handle(.taskCompleted(run.id, success: true), at: now)
            }
        }
        #expect(starts.count == requests.count)
        #expect(Set(starts).count == apps.count, "each app at its own instant, spread over distinct instants")
        #expect(starts.allSatisfy { $0 >= t0 + 3600 && $0 <= t0 + 3600 + 600 })
        // The first app's three tasks share one launch: the first of their turns.
        #expect(Set(requests.filter { $0.app == apps[0] }.map { started[$0.key] }).count == 1)
    }

    @Test func requestsDueWithinTheToleranceStartInOneWake() throws {
        var engine = engine(policy: PolicyConfiguration(minimumLaunchInterval: 0, herdSpreadWindow: 0, coalescingTolerance: 60))
        _ = try F.submit(F.refresh(earliest: t0 + 100), to: &engine, at: t0)
        _ = try F.submit(F.refresh(F.otherRefreshID, app: F.otherApp, earliest: t0 + 130), to: &engine, at: t0)
        #expect(engine.nextWake == t0 + 100)
        let first = EngineEffectSummary(engine.handle(.timerFired, at: t0 + 100))
        #expect(first.launched.isEmpty, "held for the request due 30 s later")
        #expect(engine.nextWake == t0 + 130)
        let both = EngineEffectSummary(engine.handle(.timerFired, at: t0 + 130))
        #expect(Set(both.launched.map(\.identifier)) == [F.refreshID, F.otherRefreshID])
    }

    /// With launches at least 30 minutes apart: launches the other app's refresh at t0 (it
    /// fails, so the usage model keeps no content age and runs the next one when eligible)
    /// and submits it again to begin at its cadence, t0 + 15 min; the rate limit then holds
    /// it until t0 + 30 min, the engine's next wake.
    private let thirdApp = AppID("com.example.third")
    private let thirdCleanupID = "com.example.third.cleanup"

    /// `before` is submitted first, at its own submission date (after the apps were opened once).
    private func engineWithAWakePlanned(_ conditions: Conditions = .favorable, window: TimeInterval = 3600, before: PendingRequest? = nil) throws -> SchedulerEngine {
        var engine = engine(conditions, policy: PolicyConfiguration(minimumLaunchInterval: 1800, herdSpreadWindow: 0, coalescingTolerance: 0, wakeSharingWindow: window))
        // A third app with a clean-up.
        engine.register(AppRegistration(app: thirdApp, manifest: AppManifest(appID: thirdApp, permittedIdentifiers: [thirdCleanupID], backgroundModes: ["processing"], source: "test")))
        // Opened once, four hours earlier: the wake at t0 + 30 min is not before a likely launch.
        _ = engine.handle(.appForegrounded(F.app), at: t0 - 4 * 3600)
        _ = engine.handle(.appForegrounded(thirdApp), at: t0 - 4 * 3600)
        if let before { _ = try F.submit(before, to: &engine, at: before.submittedAt) }
        let first = try #require(try F.submit(F.refresh(F.otherRefreshID, app: F.otherApp), to: &engine, at: t0).launched.first)
        _ = engine.handle(.taskCompleted(first.id, success: false), at: t0 + 5)
        _ = try F.submit(F.refresh(F.otherRefreshID, app: F.otherApp, submittedAt: t0 + 10, earliest: t0 + 900), to: &engine, at: t0 + 10)
        #expect(EngineEffectSummary(engine.handle(.timerFired, at: t0 + 900)).launched.isEmpty)
        #expect(engine.location(of: F.key(F.otherRefreshID, app: F.otherApp)) == .deferred(until: t0 + 1800))
        return engine
    }

    @Test func processingWaitsForThePlannedWakeAndStartsInIt() throws {
        var engine = try engineWithAWakePlanned()
        // This app's clean-up, ready at t0 + 1000, waits for that wake rather than waking
        // the device alone, and both start in it.
        let cleanup = F.processing(submittedAt: t0 + 1000, power: true)
        #expect(try F.submit(cleanup, to: &engine, at: t0 + 1000).launched.isEmpty, "waits for the wake planned at t0 + 1800")
        #expect(engine.location(of: cleanup.key) == .deferred(until: t0 + 1800))
        #expect(engine.explain(cleanup.key, at: t0 + 1000).evaluation?.blocking.map(\.policy) == ["wake-sharing"])
        // With the refresh cancelled, the clean-up's own hold is the only one left: `why`
        // does not take it for a wake to wait for.
        _ = engine.handle(.requestCancelled(F.key(F.otherRefreshID, app: F.otherApp)), at: t0 + 1100)
        let alone = engine.explain(cleanup.key, at: t0 + 1100).evaluation
        #expect(alone?.decisions.first { $0.policy == "wake-sharing" }?.rationale == "no wake planned within 1 h of when it became ready")
        // Put back, so the wake below is planned again.
        _ = try F.submit(F.refresh(F.otherRefreshID, app: F.otherApp, submittedAt: t0 + 1200, earliest: t0 + 1200), to: &engine, at: t0 + 1200)
        let wake = EngineEffectSummary(engine.handle(.timerFired, at: t0 + 1800))
        #expect(Set(wake.launched.map(\.identifier)) == [F.otherRefreshID, F.syncID])
        #expect(Set(wake.launched.map(\.startedAt)) == [t0 + 1800], "one wake")
    }

    @Test func processingHeldBeforeARunStartsAtTheSameInstantJoinsItWhateverTheOrder() throws {
        var engine = try engineWithAWakePlanned()
        // This app's refresh, launched at t0 + 10 min, is held by the rate limit until
        // t0 + 40 min.
        let own = try #require(try F.submit(F.refresh(submittedAt: t0 + 600), to: &engine, at: t0 + 600).launched.first)
        _ = engine.handle(.taskCompleted(own.id, success: false), at: t0 + 605)
        _ = try F.submit(F.refresh(submittedAt: t0 + 610, earliest: t0 + 1500), to: &engine, at: t0 + 610)
        // A third app's clean-up, due at t0 + 700 (so it is judged before the other app's
        // refresh, due at t0 + 15 min, when both are ready), waits for the wake at t0 + 30 min.
        let cleanup = F.processing(thirdCleanupID, app: thirdApp, submittedAt: t0 + 700)
        _ = try F.submit(cleanup, to: &engine, at: t0 + 700)
        #expect(engine.location(of: cleanup.key) == .deferred(until: t0 + 1800))
        #expect(EngineEffectSummary(engine.handle(.timerFired, at: t0 + 1500)).launched.isEmpty)
        #expect(engine.location(of: F.key(F.refreshID)) == .deferred(until: t0 + 2400))
        // At t0 + 30 min the clean-up, judged first, sees the later wake planned and is
        // held for it; the other app's refresh then starts, and the clean-up with it.
        let wake = EngineEffectSummary(engine.handle(.timerFired, at: t0 + 1800))
        #expect(Set(wake.launched.map(\.identifier)) == [F.otherRefreshID, thirdCleanupID])
    }

    @Test func processingHeldUntilAWakeStartsInAnEarlierOne() throws {
        var engine = try engineWithAWakePlanned()
        let cleanup = F.processing(thirdCleanupID, app: thirdApp, submittedAt: t0 + 20)
        _ = try F.submit(cleanup, to: &engine, at: t0 + 20)
        #expect(engine.location(of: cleanup.key) == .deferred(until: t0 + 1800))
        // This app's refresh wakes the device at t0 + 10 min, sooner than the wake planned:
        // the clean-up starts in it.
        let own = try F.submit(F.refresh(submittedAt: t0 + 600), to: &engine, at: t0 + 600)
        #expect(Set(own.launched.map(\.identifier)) == [F.refreshID, thirdCleanupID])
    }

    @Test func processingHeldUntilAWakeStartsInAPushsWake() throws {
        var engine = try engineWithAWakePlanned()
        #expect(try F.submit(F.processing(submittedAt: t0 + 1000, power: true), to: &engine, at: t0 + 1000).launched.isEmpty)
        // A silent push wakes the device before the planned wake: the clean-up starts in it.
        let pushed = EngineEffectSummary(try engine.wake(F.refresh(F.secondRefreshID, submittedAt: t0 + 1200), at: t0 + 1200))
        #expect(Set(pushed.launched.map(\.identifier)) == [F.secondRefreshID, F.syncID])
    }

    @Test func processingWithNoWakePlannedWithinTheWindowStartsAtOnce() throws {
        var engine = try engineWithAWakePlanned(window: 600)
        // Ready at t0 + 1000; the planned wake (t0 + 1800) is beyond its 10-minute window.
        let started = try F.submit(F.processing(submittedAt: t0 + 1000, power: true), to: &engine, at: t0 + 1000)
        #expect(started.launched.map(\.identifier) == [F.syncID])
    }

    @Test func processingBlockedOnPowerWaitsFromWhenItIsPluggedIn() throws {
        // Due two hours before on battery: the window counts from the plug-in, not the due date.
        var engine = try engineWithAWakePlanned(F.noPower, window: 900, before: F.processing(submittedAt: t0 - 7200, power: true))
        #expect(engine.location(of: F.key(F.syncID)) == .blocked(.externalPower))
        let plugged = EngineEffectSummary(engine.handle(.conditionsChanged(.favorable), at: t0 + 1200))
        #expect(plugged.launched.isEmpty, "ready from the plug-in, with a wake planned 10 min later")
        let wake = EngineEffectSummary(engine.handle(.timerFired, at: t0 + 1800))
        #expect(Set(wake.launched.map(\.identifier)) == [F.otherRefreshID, F.syncID])
    }

    @Test func processingOfTheSameAppJoinsItsLaunchAtTheSameInstant() throws {
        // The app's refresh starts at t0 + 60 (held by the rate limit since its due date);
        // its clean-up, held as long by the same limit, starts with it: one launch of the app.
        var engine = engine(policy: PolicyConfiguration(herdSpreadWindow: 0, coalescingTolerance: 0, wakeSharingWindow: 0))
        let first = try #require(try F.submit(F.refresh(F.secondRefreshID), to: &engine, at: t0).launched.first)
        _ = engine.handle(.taskCompleted(first.id, success: false), at: t0 + 5)
        _ = try F.submit(F.refresh(submittedAt: t0 + 10), to: &engine, at: t0 + 10)
        #expect(try F.submit(F.processing(submittedAt: t0 + 20, power: true), to: &engine, at: t0 + 20).launched.isEmpty)
        let wake = EngineEffectSummary(engine.handle(.timerFired, at: t0 + 60))
        #expect(Set(wake.launched.map(\.identifier)) == [F.refreshID, F.syncID], "the rate limit lets a task join its app's launch")
    }

    @Test func coalescingNeverHoldsLongerThanTheTolerance() throws {
        var engine = engine(policy: PolicyConfiguration(minimumLaunchInterval: 0, herdSpreadWindow: 0, coalescingTolerance: 60))
        _ = try F.submit(F.refresh(earliest: t0 + 100), to: &engine, at: t0)
        _ = try F.submit(F.refresh(F.otherRefreshID, app: F.otherApp, earliest: t0 + 200), to: &engine, at: t0)
        let first = EngineEffectSummary(engine.handle(.timerFired, at: t0 + 100))
        #expect(first.launched.map(\.identifier) == [F.refreshID], "the next one is 100 s away, beyond the tolerance")
    }

    @Test func explainListsBlockingVerdictsFirstAndTheEarliestInstant() throws {
        let lowPower = Conditions(externalPower: false, networkAvailable: true, lowPowerMode: true)
        var engine = engine(lowPower)
        _ = try F.submit(F.refresh(earliest: t0 + 900), to: &engine, at: t0)
        let explanation = engine.explain(F.key(F.refreshID), at: t0)
        let blocking = explanation.evaluation?.blocking.map(\.policy) ?? []
        #expect(blocking == ["earliest-begin-date", "low-power-mode"])
        #expect(explanation.earliestPossibleRun == t0 + 900)
        #expect(explanation.waitingFor.contains { $0.contains("Low Power Mode") })
        #expect(explanation.predictedNextRun == nil, "it also waits for the device: no prediction")
        // What it waits for first; the instant is a bound after it, not when it could run.
        #expect(explanation.summary.hasPrefix("waits for low-power-mode: "), "\(explanation.summary)")
        #expect(explanation.summary.hasSuffix(", and not before \(t0 + 900)"), "\(explanation.summary)")
        #expect(!explanation.summary.contains("could run at"), "\(explanation.summary)")
        // Not yet due: the starvation guard says its wait has not begun (it said "eligible for -15 min").
        let starvation = explanation.evaluation?.decisions.first { $0.policy == "starvation" }?.rationale
        #expect(starvation == "not eligible yet (in 15 min): its wait has not begun", "\(String(describing: starvation))")
        let unknown = engine.explain(F.key(F.secondRefreshID), at: t0)
        #expect(unknown.summary.contains("no request is pending"))
    }

    @Test func throttledAppWaitsAfterARunIgnoredItsExpiration() throws {
        var engine = engine()
        let run = try #require(try F.submit(F.refresh(), to: &engine, at: t0).launched.first)
        _ = engine.handle(.timerFired, at: t0 + 30)   // budget: expired
        let terminated = EngineEffectSummary(engine.handle(.timerFired, at: t0 + 32))  // grace: terminated
        #expect(terminated.terminated == [run.id])
        let now = t0 + 3600
        _ = try F.submit(F.refresh(submittedAt: now), to: &engine, at: now)
        guard case .deferred(let until)? = engine.location(of: F.key(F.refreshID)) else {
            Issue.record("expected the throttle to defer, got \(String(describing: engine.location(of: F.key(F.refreshID))))")
            return
        }
        #expect(until > now)
        let reason = engine.explain(F.key(F.refreshID), at: now).evaluation?.blocking.first { $0.policy == "throttle" }?.rationale
        #expect(reason?.contains("throttled") == true)
        // Good behaviour decays the penalty: a day later it no longer holds.
        #expect(engine.policyState(of: F.app)?.throttle.delay(at: now + 86_400) ?? 1 < 60)
    }
}
