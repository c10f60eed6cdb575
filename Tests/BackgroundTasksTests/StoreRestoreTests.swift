import BackgroundTasks
import DeviceConditions
import Foundation
import SchedulerStore
import Testing
import SchedulerCore

/// docs/ARCHITECTURE.md, "Limits hold for what is loaded" and "Bad rows are quarantined":
/// what the embedded scheduler loads at start-up.
@Suite struct StoreRestoreTests {
    private func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-restore-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func aStoreWithTwelveProcessingRequestsLoadsTenAndQuarantinesTheRest() throws {
        let state = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: state) }
        let database = state.appendingPathComponent("scheduler.sqlite")
        let start = Date()
        let requests = (0..<12).map {
            PendingRequest(app: testApp, identifier: "\(processingID).\($0)", kind: .processing,
                           earliestBeginDate: start.addingTimeInterval(86_400), submittedAt: start.addingTimeInterval(Double($0)))
        }
        do {
            let (store, _) = try SchedulerStore.open(at: database, now: start)
            for request in requests { try store.upsertRequest(request) }
        }

        let log = BGDiagnosticLog.collecting()
        let context = EmbeddedScheduler.makeContext(.init(app: testApp, manifest: testManifest, stateDirectory: state, scheduler: EmbeddedScheduler.defaultSchedulerConfiguration(environment: [:], machineIDFile: nil), conditions: FixedConditions(), log: log))
        // The first ten submitted load; the two beyond the limit are reported and set aside.
        #expect(context.driver.pendingRequests(of: testApp).map(\.identifier).sorted() == requests.prefix(10).map(\.identifier).sorted())
        let quarantined = try #require(context.driver.store).quarantinedRequests()
        #expect(quarantined.map(\.identifier) == requests.suffix(2).map(\.identifier))
        #expect(quarantined.allSatisfy { $0.reason.contains("pending limit") })
        for request in requests.suffix(2) {
            #expect(log.messages.contains { $0.level == .error && $0.text.contains("'\(request.identifier)' was not loaded") })
        }
        #expect(try context.driver.store?.pendingRequests(app: testApp).count == 10, "the store and the scheduler disagree")
    }

    @Test func anUnreadableRowIsQuarantinedAndLoggedAndTheOthersLoad() throws {
        let state = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: state) }
        let database = state.appendingPathComponent("scheduler.sqlite")
        let good = PendingRequest(app: testApp, identifier: processingID, kind: .processing, earliestBeginDate: Date().addingTimeInterval(86_400), submittedAt: Date())
        do {
            let (store, _) = try SchedulerStore.open(at: database, now: Date())
            try store.upsertRequest(good)
            // Another app's request, as a bad copy or a second program might leave it.
            try store.upsertRequest(PendingRequest(app: AppID("com.example.intruder"), identifier: "com.example.intruder.sync", kind: .processing, submittedAt: Date()))
        }
        let log = BGDiagnosticLog.collecting()
        let context = EmbeddedScheduler.makeContext(.init(app: testApp, manifest: testManifest, stateDirectory: state, scheduler: EmbeddedScheduler.defaultSchedulerConfiguration(environment: [:], machineIDFile: nil), conditions: FixedConditions(), log: log))
        #expect(context.driver.allPendingRequests.map(\.identifier) == [processingID])
        #expect(try context.driver.store?.quarantinedRequests().map(\.identifier) == ["com.example.intruder.sync"])
        #expect(log.messages.contains { $0.text.contains("com.example.intruder/com.example.intruder.sync was not loaded") && $0.text.contains("belongs to the app com.example.intruder") })
    }
}
