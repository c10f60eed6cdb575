import Foundation
@testable import SchedulerCore
import Testing

private typealias F = EngineFixtures
private let t0 = F.t0

/// Installing and uninstalling apps (bgtaskd) are engine events: they judge again and end
/// what must end, through the one path every event takes.
@Suite struct EngineInstallTests {
    @Test func uninstallEndsTheRunsByForceAndForgetsTheApp() throws {
        var engine = F.engine()
        let run = try #require(try F.submit(F.processing(), to: &engine, at: t0).launched.first)
        _ = try F.submit(F.processing(F.processingID(1), earliest: t0 + 3600), to: &engine, at: t0)
        let effects = engine.handle(.appUninstalled(F.app), at: t0 + 10)
        #expect(effects.contains(.terminate(run.id, reason: "the app was uninstalled")))
        let finished = effects.compactMap { if case .runFinished(let record) = $0 { record } else { nil } }
        #expect(finished.map(\.outcome) == [.terminated])
        #expect(engine.pendingRequests(of: F.app).isEmpty)
        #expect(engine.activeRuns.isEmpty)
        #expect(engine.registration(of: F.app) == nil)
        #expect(F.rejection(of: F.processing(), by: engine, at: t0 + 20) != nil, "an uninstalled app cannot submit")
        // The other app is untouched.
        #expect(engine.registration(of: F.otherApp) != nil)
    }

    @Test func anUninstallFilesNoRetry() throws {
        var engine = F.engine()
        engine.setRetryPolicy(.fixed(60), for: F.key(F.syncID))
        #expect(try F.submit(F.processing(), to: &engine, at: t0).launched.count == 1)
        let effects = engine.handle(.appUninstalled(F.app), at: t0 + 10)
        #expect(!effects.contains { if case .retryScheduled = $0 { true } else { false } })
        #expect(engine.pendingRequests(of: F.app).isEmpty)
    }

    @Test func installingAgainReleasesWhatTheSwitchHeld() throws {
        var engine = F.engine()
        _ = engine.handle(.backgroundRefreshChanged(F.app, enabled: false), at: t0)
        #expect(F.rejection(of: F.refresh(), by: engine, at: t0)?.code == .unavailable)
        let effects = EngineEffectSummary(engine.handle(.appInstalled(AppRegistration(app: F.app, manifest: F.manifest, backgroundRefreshEnabled: true)), at: t0 + 1))
        #expect(effects.launched.isEmpty)
        #expect(try F.submit(F.refresh(), to: &engine, at: t0 + 2).launched.map(\.identifier) == [F.refreshID])
    }

    @Test func aRemoteWakeLaunchesNowWhateverThePendingLimitsButNotWhatTheAppMayNotRun() throws {
        var engine = F.engine()
        _ = try F.submit(F.refresh(earliest: t0 + 3600), to: &engine, at: t0)
        #expect(F.rejection(of: F.refresh(F.secondRefreshID), by: engine, at: t0)?.code == .tooManyPendingTaskRequests)
        let woken = EngineEffectSummary(try engine.wake(F.refresh(F.secondRefreshID), at: t0 + 1))
        #expect(woken.launched.map(\.identifier) == [F.secondRefreshID])
        #expect(engine.pendingRequests(of: F.app).map(\.identifier) == [F.refreshID], "the queued refresh stays")
        #expect(throws: SubmitRejection.self) { _ = try engine.wake(F.refresh("com.example.app.unlisted"), at: t0 + 2) }
        #expect(throws: SubmitRejection.self) { _ = try engine.wake(F.refresh(F.secondRefreshID), at: t0 + 3) }
    }

    @Test func whyNamesSinceWhenARequestIsDueAndTheLastSharedTrigger() throws {
        var engine = F.engine(conditions: F.noPower)
        _ = try F.submit(F.processing(power: true), to: &engine, at: t0)
        _ = engine.handle(.conditionsChanged(F.nothing), at: t0 + 10)
        _ = engine.handle(.conditionsChanged(Conditions(externalPower: false, networkAvailable: true)), at: t0 + 20)
        let explanation = engine.explain(F.key(F.syncID), at: t0 + 30)
        #expect(explanation.lastSharedTrigger == t0 + 20, "the network came back at t0 + 20")
        #expect(explanation.eligibleSince != nil)
        let text = ExplanationReport.text(explanation, app: F.app, identifier: F.syncID, running: nil, runningWhere: nil, notes: [], conditions: engine.conditions)
        #expect(text.contains("last shared trigger (power or network back): \(t0 + 20)"))
        #expect(ExplanationReport.json(explanation, app: F.app, identifier: F.syncID, running: nil, notes: [], conditions: engine.conditions, now: t0 + 30).contains("\"lastSharedTrigger\""))
    }

    @Test func whyJSONNamesTheRequestAskedAboutWhenNothingIsPending() throws {
        let engine = F.engine()
        let explanation = engine.explain(F.key("com.example.nothere"), at: t0)
        #expect(explanation.request == nil)
        let json = ExplanationReport.json(explanation, app: F.app, identifier: "com.example.nothere", running: nil, notes: [], conditions: engine.conditions, now: t0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["app"] as? String == F.app.rawValue)
        #expect(object["identifier"] as? String == "com.example.nothere")
        #expect(object["pending"] as? Bool == false)
    }

    @Test func whyDoesNotAskToSubmitARequestARunCutOffWillRestore() throws {
        // An outside probe: beside a note that the run cut off would be restored, the
        // summary said "no request is pending: submit one".
        let engine = F.engine()
        let explanation = engine.explain(F.key(F.refreshID), at: t0)
        let cutOff = RunRecord(id: RunID(1), request: PendingRequest(app: F.app, identifier: F.refreshID, kind: .appRefresh, submittedAt: t0 - 60), startedAt: t0 - 30)
        let text = ExplanationReport.text(explanation, app: F.app, identifier: F.refreshID, running: nil, runningWhere: nil, notes: [], conditions: engine.conditions, cutOff: cutOff)
        #expect(text.contains("no request is pending now: run#1 was cut off when the app stopped, and its request is restored when the app starts"), "\(text)")
        #expect(!text.contains("submit one"))
        let json = ExplanationReport.json(explanation, app: F.app, identifier: F.refreshID, running: nil, notes: [], conditions: engine.conditions, now: t0, cutOff: cutOff)
        #expect(json.contains("need not be submitted again") && json.contains("\"pending\" : false"), "\(json)")
        // Without a run cut off, the advice stands.
        #expect(ExplanationReport.text(explanation, app: F.app, identifier: F.refreshID, running: nil, runningWhere: nil, notes: [], conditions: engine.conditions).contains("submit one"))
    }

    @Test func aRemoteWakeDoesNotLaunchAForceQuitApp() {
        var engine = F.engine()
        _ = engine.handle(.appForceQuit(F.app), at: t0)
        #expect(throws: SubmitRejection.self) { _ = try engine.wake(F.refresh(), at: t0 + 1) }
        _ = engine.handle(.appForegrounded(F.app), at: t0 + 2)
        #expect((try? engine.wake(F.refresh(), at: t0 + 3)).map { EngineEffectSummary($0).launched.count } == 1)
    }
}

/// The engine teaches the usage models where the network usually goes away
/// (docs/policies.md, "The usage model").
@Suite struct EngineNetworkLossTests {
    @Test func aLossOfAnHourOrMoreIsLearnedByEveryAppWhenTheNetworkComesBack() {
        var engine = F.engine()
        _ = engine.handle(.appForegrounded(F.app), at: t0)
        // Forty minutes away: too short to learn.
        _ = engine.handle(.conditionsChanged(F.noNetwork), at: t0 + 600)
        _ = engine.handle(.conditionsChanged(.favorable), at: t0 + 3_000)
        #expect(engine.networkHistoryRecorded == 0)
        // Two hours away: learned when the network is back, at the hour the loss began.
        let lost = t0 + 7_200
        _ = engine.handle(.conditionsChanged(F.noNetwork), at: lost)
        _ = engine.handle(.conditionsChanged(F.nothing), at: lost + 3_600)  // the power went too: still away
        #expect(engine.networkHistoryRecorded == 0)
        _ = engine.handle(.conditionsChanged(.favorable), at: lost + 7_200)
        #expect(engine.networkHistoryRecorded == 1)
        for app in [F.app, F.otherApp] {
            let usage = engine.policyState(of: app)?.usage
            let share = usage.map { $0.networkLossShare(hourOfWeek: $0.hourOfWeek(of: lost), at: lost + 7_200) } ?? 0
            #expect(share > 0.99, "\(app): \(share)")
        }
        #expect(engine.appsWithPolicyState == [F.app, F.otherApp].sorted())
    }

    @Test func aLossThatBeganBeforeTheEngineIsNotLearned() {
        var engine = F.engine(conditions: F.noNetwork)
        _ = engine.handle(.appForegrounded(F.app), at: t0)
        _ = engine.handle(.conditionsChanged(.favorable), at: t0 + 7_200)
        #expect(engine.networkHistoryRecorded == 0)
    }
}
