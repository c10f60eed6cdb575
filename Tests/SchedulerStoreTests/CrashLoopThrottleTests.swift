import Foundation
import SchedulerCore
import Testing
@testable import SchedulerStore

/// docs/ARCHITECTURE.md, "Crash loops are throttled": a run cut off by the death of its
/// process is a throttle strike, saved with the policy state in recovery's transaction.
@Suite("Crash loops are throttled")
struct CrashLoopThrottleTests {
    static let identifier = "com.example.feedreader.sync"

    /// The throttle policy's decision for the request after restoring what the store holds.
    private func throttleDecision(_ store: SchedulerStore, at now: Date) throws -> PolicyDecision? {
        var engine = SchedulerEngine(configuration: .init(), conditions: .favorable, lastRunID: try store.maxRunID(), policies: PolicySet())
        let manifest = AppManifest(appID: Sample.app, permittedIdentifiers: [Self.identifier], backgroundModes: ["processing"], source: "test")
        engine.register(AppRegistration(app: Sample.app, manifest: manifest))
        let saved = try #require(try store.appSetting(app: Sample.app, name: AppSettingName.policyState))
        engine.restorePolicyState(try JSONDecoder().decode(AppPolicyState.self, from: Data(saved.utf8)), of: Sample.app)
        #expect(engine.restore(try store.pendingRequests(app: Sample.app), at: now).isEmpty)
        let explanation = engine.explain(RequestKey(app: Sample.app, identifier: Self.identifier), at: now)
        return explanation.evaluation?.decisions.first { $0.policy == "throttle" }
    }

    @Test("each crash during a run adds a strike; the restarted process holds the request with a growing delay")
    func crashRestartCycles() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let request = PendingRequest(app: Sample.app, identifier: Self.identifier, kind: .processing, submittedAt: Sample.now)
        do { try openStore(url).upsertRequest(request) }

        var now = Sample.now
        var delays: [TimeInterval] = []
        for cycle in 1...4 {
            // The process launches the request, and its handler kills the process: the run
            // has no end, and the lock dies with the store.
            do {
                let store = try openStore(url, now: now)
                let pending = try #require(try store.pendingRequests(app: Sample.app).first)
                try store.recordRunStarted(RunRecord(id: RunID(Int64(cycle)), request: pending, startedAt: now))
            }
            now = now.addingTimeInterval(60)
            let (store, report) = try SchedulerStore.open(at: url, now: now)
            #expect(report.interruptedRuns.map(\.id) == [RunID(Int64(cycle))])
            #expect(report.restoredRequests.map(\.identifier) == [Self.identifier])

            let saved = try #require(try store.appSetting(app: Sample.app, name: AppSettingName.policyState))
            let state = try JSONDecoder().decode(AppPolicyState.self, from: Data(saved.utf8))
            #expect(state.throttle.strikes == cycle)
            #expect(state.throttle.recentStrikes.last?.cause == .interrupted)
            delays.append(state.throttle.delay(at: now))

            let decision = try #require(try throttleDecision(store, at: now))
            #expect(decision.blocks, "cycle \(cycle): the throttle let the crashing request run at once")
            #expect(decision.rationale.contains("cut off by a stop of the process"), "\(decision.rationale)")
        }
        // About 15 min, 30 min, 1 h, 2 h: each crash doubles the delay (less the minute of
        // decay between crashes).
        #expect(delays.first == 900)
        #expect(zip(delays, delays.dropFirst()).allSatisfy { $1 > 1.9 * $0 }, "\(delays)")
    }

    @Test("one stop that cuts off several runs of an app is one strike")
    func oneStrikePerStop() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        do {
            let store = try openStore(url)
            for id in 1...3 {
                try store.recordRunStarted(Sample.run(Int64(id), of: Sample.request("com.example.feedreader.t\(id)"), startedAt: Sample.now))
            }
        }
        let (store, report) = try SchedulerStore.open(at: url, now: Sample.now.addingTimeInterval(1))
        #expect(report.interruptedRuns.count == 3)
        let saved = try #require(try store.appSetting(app: Sample.app, name: AppSettingName.policyState))
        #expect(try JSONDecoder().decode(AppPolicyState.self, from: Data(saved.utf8)).throttle.strikes == 1)
    }
}
