import Foundation
import Testing
@testable import SchedulerCore

/// The developer switch `launchesOnlyWhenSimulated` (`BGTASK_MANUAL_LAUNCH=1`): nothing
/// scheduled launches by itself; `simulateLaunch` does; runs still expire; turning it off
/// launches what is ready.
@Suite struct ManualLaunchTests {
    typealias F = EngineFixtures
    typealias Summary = EngineEffectSummary
    let t0 = EngineFixtures.t0

    private func manualEngine() -> SchedulerEngine {
        F.engine(SchedulerConfiguration(launchesOnlyWhenSimulated: true))
    }

    /// An identifier no request can have (a megabyte, a NUL) is named in the error escaped
    /// and cut short, not echoed whole (an outside probe).
    @Test func anIdentifierNoRequestCanHaveIsNamedShort() throws {
        var engine = F.engine()
        let huge = String(repeating: "x", count: 1_000_000) + "\u{0}"
        for identifier in [huge, "a.b\u{0}c"] {
            let error = try #require(throws: EngineError.self) { _ = try engine.simulateLaunch(RequestKey(app: F.app, identifier: identifier), at: t0) }
            #expect(error.description.utf8.count < 400, "\(error.description.prefix(200))")
            #expect(!error.description.contains("\u{0}"), "\(error.description.prefix(200))")
        }
        let expired = try #require(throws: EngineError.self) { _ = try engine.simulateExpiration(RequestKey(app: F.app, identifier: huge), at: t0) }
        #expect(expired.description.utf8.count < 400)
        // A plausible identifier is quoted as it is.
        let plain = try #require(throws: EngineError.self) { _ = try engine.simulateLaunch(F.key("com.example.none"), at: t0) }
        #expect(plain.description.contains("'com.example.none'"), "\(plain)")
    }

    /// A remote wake (an app refresh the system files, with a payload) needs the app's
    /// `remote-notification` mode, not `fetch`: iOS wakes such an app for a silent push
    /// without the fetch mode (a reviewer found the push refused "needs fetch").
    @Test func aRemoteWakeNeedsRemoteNotificationNotFetch() throws {
        let app = AppID("com.example.pushed")
        let wakeID = "com.example.pushed.remote-notification"
        var engine = SchedulerEngine(configuration: .init(), conditions: .favorable)
        engine.register(AppRegistration(app: app, manifest: AppManifest(appID: app, permittedIdentifiers: [wakeID, "com.example.pushed.refresh"], backgroundModes: ["remote-notification"])))
        var wake = PendingRequest(app: app, identifier: wakeID, kind: .appRefresh, submittedAt: t0)
        wake.remoteNotificationPayload = "{}"
        #expect(throws: Never.self) { _ = try engine.wake(wake, at: t0) }
        // The app's own refresh still needs `fetch`.
        let refresh = PendingRequest(app: app, identifier: "com.example.pushed.refresh", kind: .appRefresh, submittedAt: t0)
        let refused = try #require(throws: SubmitRejection.self) { try engine.checkSubmit(refresh, at: t0) }
        #expect(refused.message.contains("\"fetch\""), "\(refused)")
    }

    @Test func aDueRequestWaitsForSimulateLaunch() throws {
        var engine = manualEngine()
        let submitted = try F.submit(F.processing(), to: &engine, at: t0)
        #expect(submitted.launched.isEmpty, "a processing request with no date would run at once without the switch")
        #expect(Summary(engine.handle(.timerFired, at: t0 + 86_400)).launched.isEmpty)
        #expect(Summary(engine.handle(.conditionsChanged(.favorable), at: t0 + 86_401)).launched.isEmpty)
        #expect(engine.pendingRequests(of: F.app).map(\.identifier) == [F.syncID])

        let launched = Summary(try engine.simulateLaunch(F.key(F.syncID), at: t0 + 86_402))
        #expect(launched.launchedIdentifiers == [F.syncID])
    }

    @Test func simulatedRunsStillExpireAndTerminate() throws {
        var engine = manualEngine()
        _ = try F.submit(F.refresh(), to: &engine, at: t0)
        let run = try #require(Summary(try engine.simulateLaunch(F.key(F.refreshID), at: t0)).launched.first)
        #expect(Summary(engine.handle(.timerFired, at: t0 + 30)).expired == [run.id])
        #expect(Summary(engine.handle(.timerFired, at: t0 + 32)).terminated == [run.id])
    }

    @Test func continuedProcessingIsNotHeld() throws {
        var engine = manualEngine()
        let submitted = try F.submit(F.continued(), to: &engine, at: t0)
        #expect(submitted.launched.count == 1, "user-started work starts at once, as on iOS")
    }

    @Test func turningTheSwitchOffLaunchesWhatIsReady() throws {
        var engine = manualEngine()
        _ = try F.submit(F.processing(), to: &engine, at: t0)
        #expect(Summary(engine.setLaunchesOnlyWhenSimulated(true, at: t0 + 1)).launched.isEmpty)
        let released = Summary(engine.setLaunchesOnlyWhenSimulated(false, at: t0 + 2))
        #expect(released.launchedIdentifiers == [F.syncID])
        #expect(!engine.configuration.launchesOnlyWhenSimulated)
    }

    @Test func theExplanationNamesTheSwitch() throws {
        var engine = manualEngine()
        _ = try F.submit(F.processing(), to: &engine, at: t0)
        let explanation = engine.explain(F.key(F.syncID), at: t0 + 1)
        #expect(explanation.evaluation?.blocking.first?.policy == "manual-launch")
        #expect(explanation.summary.contains("BGTASK_MANUAL_LAUNCH=1"))
        #expect(F.engine().explain(F.key(F.syncID), at: t0).evaluation?.decisions.contains { $0.policy == "manual-launch" } != true)
    }
}
