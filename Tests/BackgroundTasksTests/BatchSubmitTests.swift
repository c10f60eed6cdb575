@testable import BackgroundTasks
@testable import BackgroundTasksTesting
import Foundation
import SchedulerStore
import Testing
import SchedulerCore

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

    /// Several requests of one app in one batch: each counts toward the app's pending
    /// limit for the ones after it, as if submitted one after the other.
    @Test func requestsOfOneAppInOneBatchCountTowardItsPendingLimits() throws {
        let file = try TemporaryStoreFile()
        defer { file.cleanUp() }
        let app = AppID("com.example.batch")
        let driver = SchedulerDriver(
            configuration: SchedulerConfiguration(pendingLimits: [.refresh: 1, .processing: 2, .continuedProcessing: 10]),
            clock: VirtualClock(start: testStart), store: try file.open(), log: .collecting(), policies: .foundation, meter: nil)
        let identifiers = (0..<4).map { "\(app).t\($0)" }
        let manifest = AppManifest(appID: app, permittedIdentifiers: identifiers, backgroundModes: ["processing", "fetch"], source: "test")
        driver.install(AppRegistration(app: app, manifest: manifest), host: RecordingHost())
        func refresh(_ identifier: String) -> PendingRequest {
            PendingRequest(app: app, identifier: identifier, kind: .appRefresh, earliestBeginDate: testStart.addingTimeInterval(3600), submittedAt: testStart)
        }
        // t0 is pending as a processing request; the batch turns it into a refresh (out of
        // the processing count, into the refresh one), then asks for two more processing
        // and a second refresh.
        try driver.submit(request(app, identifiers[0]))
        let results = driver.submit(batch: [refresh(identifiers[0]), request(app, identifiers[1]), request(app, identifiers[2]), refresh(identifiers[3])])
        #expect(results.map { (try? $0.get()) != nil } == [true, true, true, false])
        if case .failure(let rejection) = results[3] { #expect(rejection.code == .tooManyPendingTaskRequests, "\(rejection)") }
        #expect(driver.submit(batch: [request(app, identifiers[3])]).map { (try? $0.get()) != nil } == [false], "two processing pending: the limit")
        #expect(Set(try file.pendingOnDisk().map(\.identifier)) == Set(identifiers[0..<3]))
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
