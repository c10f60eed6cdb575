@testable import BackgroundTasks
@testable import BackgroundTasksTesting
import Foundation
import SchedulerStore
import Testing
import SchedulerCore

/// bgtaskd's start-up as the driver sees it: the apps installed together, with what the
/// store keeps of them, before any restored request is judged (docs/daemon.md, "Start-up").
/// An outside probe found a daemon restarted with SIGTERM launching at once a refresh the
/// rate limit held, and a request of an app whose Background App Refresh was off.
@Suite("Remote hosts installed at start-up") struct RemoteHostStartUpTests {
    static let other = AppID("com.example.other")
    static let otherRefresh = "com.example.other.refresh"
    static let otherManifest = AppManifest(appID: other, permittedIdentifiers: [otherRefresh], backgroundModes: ["fetch"], source: "other manifest")
    /// The rules these tests are about, with nothing else holding a refresh.
    static let policies = PolicySet(
        configuration: PolicyConfiguration(herdSpreadWindow: 0, coalescingTolerance: 0),
        policies: [BackgroundAppRefreshPolicy(), RateLimitPolicy(), ConcurrencyPolicy()])

    static func refresh(_ app: AppID, _ identifier: String, at instant: Date) -> PendingRequest {
        PendingRequest(app: app, identifier: identifier, kind: .appRefresh, submittedAt: instant)
    }

    static func driver(_ store: SchedulerStore, at instant: Date) -> (SchedulerDriver, VirtualClock) {
        let clock = VirtualClock(start: instant)
        return (SchedulerDriver(clock: clock, store: store, log: .collecting(), policies: policies, meter: nil), clock)
    }

    static func launches(_ host: RecordingHost) -> [RunID] {
        host.recorded.compactMap { if case .launch(let run, _) = $0 { run } else { nil } }
    }

    @Test("a restored request of an app whose Background App Refresh is off is not launched at start-up, whichever app is installed first")
    func switchOffHoldsRestoredRequests() throws {
        let file = try TemporaryStoreFile()
        defer { file.cleanUp() }
        let store = try file.open()
        try store.upsertRequest(Self.refresh(testApp, refreshID, at: testStart.addingTimeInterval(-60)))
        let (driver, _) = Self.driver(store, at: testStart)
        let other = RecordingHost(), switchedOff = RecordingHost()
        // Installing the other app first judged the test app's refresh as an unknown app's.
        driver.install([
            (AppRegistration(app: Self.other, manifest: Self.otherManifest), other),
            (AppRegistration(app: testApp, manifest: testManifest, backgroundRefreshEnabled: false), switchedOff),
        ])
        #expect(switchedOff.recorded.isEmpty, "launched with its switch off: \(switchedOff.recorded)")
        #expect(driver.pendingRequests(of: testApp).map(\.identifier) == [refreshID])
        driver.setBackgroundRefresh(true, for: testApp)
        #expect(Self.launches(switchedOff).count == 1, "turned on, it runs: \(switchedOff.recorded)")
    }

    @Test("a request the installed manifest no longer allows is removed at start-up without judging the other apps before they are registered")
    func removingWhatIsNoLongerAllowedJudgesNothingEarly() throws {
        let file = try TemporaryStoreFile()
        defer { file.cleanUp() }
        let store = try file.open()
        // The test app's refresh is due, its switch off; the other app's refresh is due and
        // its manifest no longer lists it (a reinstall the daemon did not finish).
        try store.upsertRequest(Self.refresh(testApp, refreshID, at: testStart.addingTimeInterval(-60)))
        try store.upsertRequest(Self.refresh(Self.other, Self.otherRefresh, at: testStart.addingTimeInterval(-60)))
        let (driver, _) = Self.driver(store, at: testStart)
        let other = RecordingHost(), switchedOff = RecordingHost()
        let narrower = AppManifest(appID: Self.other, permittedIdentifiers: [], backgroundModes: ["fetch"], source: "other manifest")
        let removed = driver.install([
            (AppRegistration(app: Self.other, manifest: narrower), other),
            (AppRegistration(app: testApp, manifest: testManifest, backgroundRefreshEnabled: false), switchedOff),
        ], removingWhatIsNoLongerAllowed: true)
        #expect(removed.map(\.key) == [RequestKey(app: Self.other, identifier: Self.otherRefresh)])
        #expect(removed.first?.reason.contains("BGTaskSchedulerPermittedIdentifiers") == true)
        #expect(switchedOff.recorded.isEmpty, "judged before its switch was known: \(switchedOff.recorded)")
        #expect(other.recorded.isEmpty, "\(other.recorded)")
        #expect(driver.pendingRequests(of: Self.other).isEmpty)
        #expect(try store.pendingRequests(app: Self.other).isEmpty, "removed from the store too")
        #expect(driver.pendingRequests(of: testApp).map(\.identifier) == [refreshID])
    }

    @Test("the rate limit remembers launches across a restart: from the saved policy state, and from the run log for a run whose end was never saved")
    func rateLimitSurvivesARestart() throws {
        let file = try TemporaryStoreFile()
        defer { file.cleanUp() }
        // The daemon before: both apps launched at testStart. The test app's run ended (its
        // policy state saved with it); the other's was still running when the daemon was
        // killed. Each then had a refresh due, which the rate limit held.
        let store = try file.open(now: testStart)
        let (before, beforeClock) = Self.driver(store, at: testStart)
        let testHost = RecordingHost(), otherHost = RecordingHost()
        before.install([(AppRegistration(app: testApp, manifest: testManifest), testHost), (AppRegistration(app: Self.other, manifest: Self.otherManifest), otherHost)])
        try before.submit(Self.refresh(testApp, refreshID, at: testStart))
        try before.submit(Self.refresh(Self.other, Self.otherRefresh, at: testStart))
        let ended = try #require(Self.launches(testHost).first)
        #expect(Self.launches(otherHost).count == 1)
        beforeClock.advance(to: testStart.addingTimeInterval(1))
        before.taskCompleted(ended, success: true)
        try before.submit(Self.refresh(testApp, refreshID, at: testStart.addingTimeInterval(1)))
        #expect(Self.launches(testHost).count == 1, "held by the rate limit")
        store.close()

        // Restarted 20 s after the launches; the other app installed first.
        let restart = testStart.addingTimeInterval(20)
        let reopened = try file.open(now: restart)
        let lastLaunches = try reopened.lastLaunches(of: [testApp, Self.other])
        #expect(lastLaunches == [testApp: testStart, Self.other: testStart], "the run log's last launches: \(lastLaunches)")
        let (after, clock) = Self.driver(reopened, at: restart)
        let testAfter = RecordingHost(), otherAfter = RecordingHost()
        // The driver reads them from its store, as it reads the saved policy states.
        after.install([(AppRegistration(app: Self.other, manifest: Self.otherManifest), otherAfter), (AppRegistration(app: testApp, manifest: testManifest), testAfter)])
        #expect(testAfter.recorded.isEmpty, "the saved state's launch was forgotten: \(testAfter.recorded)")
        #expect(otherAfter.recorded.isEmpty, "the run log's launch was forgotten: \(otherAfter.recorded)")
        for key in [RequestKey(app: testApp, identifier: refreshID), RequestKey(app: Self.other, identifier: Self.otherRefresh)] {
            let rateLimit = after.explain(key).evaluation?.decisions.first { $0.policy == "rate-limit" }
            #expect(rateLimit?.rationale == "the app was launched 20 s ago; launches are at least 1 min apart", "\(key): \(String(describing: rateLimit))")
        }
        // A minute after the launches, both run.
        while let due = clock.popNext(notAfter: testStart.addingTimeInterval(60)) { due() }
        #expect(Self.launches(testAfter).count == 1 && Self.launches(otherAfter).count == 1, "\(testAfter.recorded) \(otherAfter.recorded)")
    }

    @Test("a last launch the run log places after now (the clock was set back) holds launches one interval from now at most")
    func aLaunchInTheFutureCountsAsNow() {
        var engine = SchedulerEngine(policies: Self.policies)
        engine.register(AppRegistration(app: testApp, manifest: testManifest))
        engine.restoreLastLaunch(testStart.addingTimeInterval(86_400), of: testApp, at: testStart)
        #expect(engine.policyState(of: testApp)?.lastLaunch == testStart)
        engine.restoreLastLaunch(testStart.addingTimeInterval(-30), of: testApp, at: testStart)
        #expect(engine.policyState(of: testApp)?.lastLaunch == testStart, "an earlier launch changes nothing")
    }
}

/// The same for an embedded app (its own process's scheduler): killed during a run, its
/// launch is in the run log only.
@Suite("An embedded app restarted after a kill") struct EmbeddedRestartTests {
    @Test("the rate limit spaces the restarted app's first launch from the run the kill cut off")
    func rateLimitFromTheRunLog() async throws {
        let file = try TemporaryStoreFile()
        defer { file.cleanUp() }
        let first = try SimulatedDevice(start: testStart, store: try file.open(), policies: RemoteHostStartUpTests.policies)
        // The handler never completes: the process is killed during the run.
        first.install(app: testApp, manifest: testManifest) {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { _ in }
        }
        try submit(BGAppRefreshTaskRequest(identifier: refreshID), in: try #require(first.context(of: testApp)))
        await first.run(for: 1)
        #expect(first.driver.activeRuns.map(\.startedAt) == [testStart])
        first.driver.store?.close()

        let restart = testStart.addingTimeInterval(20)
        let store = try file.open(now: restart)
        #expect(try store.lastLaunch(of: testApp) == testStart)
        let second = try SimulatedDevice(start: restart, store: store, policies: RemoteHostStartUpTests.policies)
        second.install(app: testApp, manifest: testManifest) {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { $0.setTaskCompleted(success: true) }
        }
        try submit(BGAppRefreshTaskRequest(identifier: refreshID), in: try #require(second.context(of: testApp)))
        await second.run(for: 1)
        let rateLimit = second.driver.explain(RequestKey(app: testApp, identifier: refreshID)).evaluation?.decisions.first { $0.policy == "rate-limit" }
        #expect(rateLimit?.rationale == "the app was launched 21 s ago; launches are at least 1 min apart", "\(String(describing: rateLimit))")
        await second.run(for: 40)
        #expect(second.runs(of: refreshID).map(\.startedAt) == [testStart.addingTimeInterval(60)], "a minute after the launch the kill cut off")
    }
}
