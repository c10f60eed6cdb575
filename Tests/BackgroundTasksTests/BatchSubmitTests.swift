@testable import BackgroundTasks
@testable import BackgroundTasksTesting
import Foundation
import SchedulerStore
import Testing

/// `SchedulerDriver.submit(batch:)`, the commit bgtaskd's group commit makes: each request
/// checked as alone, the accepted ones written in one transaction, then applied.
@Suite("Batched submissions") struct BatchSubmitTests {
    func apps(_ count: Int) -> [AppID] { (0..<count).map { AppID("com.example.batch\($0)") } }

    func driver(for apps: [AppID], file: TemporaryStoreFile) throws -> SchedulerDriver {
        let driver = SchedulerDriver(clock: VirtualClock(start: testStart), store: try file.open(), log: .collecting(), policies: .foundation, meter: nil)
        for app in apps {
            let manifest = AppManifest(appID: app, permittedIdentifiers: ["\(app).sync"], backgroundModes: ["processing"], source: "test")
            driver.install(AppRegistration(app: app, manifest: manifest), host: RecordingHost())
        }
        return driver
    }

    func request(_ app: AppID, _ identifier: String? = nil) -> PendingRequest {
        PendingRequest(app: app, identifier: identifier ?? "\(app).sync", kind: .processing, earliestBeginDate: testStart.addingTimeInterval(3600), submittedAt: testStart)
    }

    @Test func acceptedRequestsAreOnDiskAndRefusedOnesChangeNothing() throws {
        let file = try TemporaryStoreFile()
        defer { file.cleanUp() }
        let ids = apps(3)
        let driver = try driver(for: ids, file: file)
        let results = driver.submit(batch: [request(ids[0]), request(ids[1], "not.permitted"), request(ids[2])])
        #expect(results.map { (try? $0.get()) != nil } == [true, false, true])
        if case .failure(let rejection) = results[1] { #expect(rejection.code == .notPermitted) }
        #expect(byKey(driver.allPendingRequests).map(\.app) == [ids[0], ids[2]])
        #expect(byKey(try file.pendingOnDisk()).map(\.app) == [ids[0], ids[2]])
    }

    @Test func theContinuedProcessingCapHoldsAcrossTheAppsOfOneBatch() throws {
        let file = try TemporaryStoreFile()
        defer { file.cleanUp() }
        let ids = apps(3)
        let driver = SchedulerDriver(
            configuration: SchedulerConfiguration(maximumConcurrentContinuedProcessing: 1),
            clock: VirtualClock(start: testStart), store: try file.open(), log: .collecting(), policies: .foundation, meter: nil)
        for app in ids {
            let manifest = AppManifest(appID: app, permittedIdentifiers: ["\(app).export.*", "\(app).sync"], backgroundModes: ["processing"], source: "test")
            driver.install(AppRegistration(app: app, manifest: manifest), host: RecordingHost())
        }
        func export(_ app: AppID, _ strategy: ContinuedProcessingStrategy) -> PendingRequest {
            PendingRequest(app: app, identifier: "\(app).export.1", kind: .continuedProcessing,
                           continuedProcessing: ContinuedProcessingOptions(title: "Export", subtitle: "", strategy: strategy), submittedAt: testStart)
        }
        // Two apps that each must start now, and a third that queues: one slot between them.
        let results = driver.submit(batch: [export(ids[0], .fail), export(ids[1], .fail), request(ids[2])])
        #expect(results.map { (try? $0.get()) != nil } == [true, false, true])
        if case .failure(let rejection) = results[1] { #expect(rejection.code == .immediateRunIneligible, "\(rejection)") }
        #expect(byKey(try file.pendingOnDisk()).map(\.app).contains(ids[1]) == false)
    }

    @Test func aFailedCommitFailsEveryAcceptedRequestAndKeepsMemoryAsTheDisk() throws {
        let file = try TemporaryStoreFile()
        defer { file.cleanUp() }
        let ids = apps(2)
        let driver = try driver(for: ids, file: file)
        try file.execute("CREATE TRIGGER refuse_insert BEFORE INSERT ON pending_requests BEGIN SELECT RAISE(ABORT, 'injected failure'); END;")
        let results = driver.submit(batch: [request(ids[0]), request(ids[1])])
        for result in results {
            guard case .failure(let rejection) = result else {
                Issue.record("a request was acknowledged although its commit failed")
                continue
            }
            #expect(rejection.code == .unavailable)
            #expect(rejection.message.contains("injected failure"))
        }
        #expect(driver.allPendingRequests.isEmpty)
        #expect(try file.pendingOnDisk().isEmpty)
    }
}
