@testable import BackgroundTasks
@testable import BackgroundTasksTesting
import Foundation
import SchedulerStore
import Synchronization
import Testing
import SchedulerCore

/// A host that records what the driver hands it, as bgtaskd's launcher would receive it.
final class RecordingHost: RemoteTaskHost {
    enum Call: Equatable {
        case launch(RunID, budget: TimeInterval?)
        case expire(RunID)
        case terminate(RunID)
        case finished(RunID, RunOutcome?)
        case sample(RunID)
    }

    let calls = Mutex<[Call]>([])
    func launch(_ run: RunRecord, budget: TimeInterval?) { calls.withLock { $0.append(.launch(run.id, budget: budget)) } }
    func expire(_ run: RunID, reason: String) { calls.withLock { $0.append(.expire(run)) } }
    func terminate(_ run: RunID, reason: String) { calls.withLock { $0.append(.terminate(run)) } }
    func finished(_ run: RunRecord) { calls.withLock { $0.append(.finished(run.id, run.outcome)) } }
    func sampleProgress(_ run: RunID) { calls.withLock { $0.append(.sample(run)) } }
    var recorded: [Call] { calls.withLock { $0 } }
}

/// The driver as bgtaskd hosts it: apps installed with a remote host, their runs handed
/// out of process (docs/daemon.md).
@Suite("Remote task hosts") struct RemoteHostTests {
    func installed(clock: VirtualClock = VirtualClock(start: testStart)) throws -> (SchedulerDriver, RecordingHost, TemporaryStoreFile) {
        let file = try TemporaryStoreFile()
        let driver = SchedulerDriver(clock: clock, store: try file.open(), log: .collecting(), policies: .foundation, meter: nil)
        let host = RecordingHost()
        driver.install(AppRegistration(app: testApp, manifest: testManifest), host: host)
        return (driver, host, file)
    }

    @Test func aLaunchOfAnInstalledAppGoesToItsHostAndItsCompletionIsRecorded() throws {
        let (driver, host, file) = try installed()
        defer { file.cleanUp() }
        try driver.submit(laterRequest(processingID))
        try driver.simulateLaunch(RequestKey(app: testApp, identifier: processingID))
        guard case .launch(let run, _)? = host.recorded.first else {
            Issue.record("no launch handed to the host: \(host.recorded)")
            return
        }
        #expect(driver.app(ofRun: run) == testApp)
        driver.taskCompleted(run, success: true)
        #expect(host.recorded.last == .finished(run, .success))
        #expect(driver.activeRuns.isEmpty)
        #expect(try SchedulerStore.openForReading(at: file.url).runs(app: testApp).map(\.outcome) == [.success])
    }

    /// A run whose start the store refused, whose app then never started: its request is filed
    /// again as it was (the same submission), and the start written late must not consume it
    /// (a reviewer's read: written after the request was saved again, it did, and a restart
    /// lost the request).
    @Test func aRequestFiledAgainAfterAnUnwrittenStartStaysOnDisk() throws {
        let store = try RefusingStore()
        let driver = SchedulerDriver(clock: VirtualClock(start: testStart), store: store, log: .collecting(), policies: .foundation, meter: nil)
        let host = RecordingHost()
        driver.install(AppRegistration(app: testApp, manifest: testManifest), host: host)
        try driver.submit(laterRequest(processingID))
        store.refusing.withLock { $0 = true }
        try driver.simulateLaunch(RequestKey(app: testApp, identifier: processingID))
        guard case .launch(let run, _)? = host.recorded.first else { Issue.record("no launch: \(host.recorded)"); return }
        #expect(try store.inner.runs().isEmpty)
        store.refusing.withLock { $0 = false }
        driver.appNotStarted(run, reason: "the app's executable could not be run")
        #expect(try store.inner.runs().map(\.outcome) == [.failure], "the run is in the log, its start written before the request was saved again")
        #expect(try store.inner.pendingRequests().map(\.identifier) == [processingID], "the request filed again is on disk")
        #expect(driver.pendingRequests(of: testApp).map { $0.identifier } == [processingID])
    }

    @Test func expirationAndTerminationReachTheHost() throws {
        let clock = VirtualClock(start: testStart)
        let (driver, host, file) = try installed(clock: clock)
        defer { file.cleanUp() }
        try driver.submit(laterRequest(processingID))
        try driver.simulateLaunch(RequestKey(app: testApp, identifier: processingID))
        try driver.simulateExpiration(RequestKey(app: testApp, identifier: processingID))
        guard case .launch(let run, _)? = host.recorded.first else {
            Issue.record("no launch: \(host.recorded)")
            return
        }
        #expect(host.recorded.contains(.expire(run)))
        // The host never reports completion: after the grace period the engine terminates.
        while let due = clock.popNext(notAfter: testStart.addingTimeInterval(3600)) { due() }
        #expect(host.recorded.contains(.terminate(run)))
        #expect(host.recorded.last == .finished(run, .terminated))
    }

    @Test func aCrashReportedByTheHostIsRecordedAsCrashed() throws {
        let (driver, host, file) = try installed()
        defer { file.cleanUp() }
        try driver.submit(laterRequest(processingID))
        try driver.simulateLaunch(RequestKey(app: testApp, identifier: processingID))
        guard case .launch(let run, _)? = host.recorded.first else { Issue.record("no launch"); return }
        driver.runCrashed(run, reason: "the app's process was killed by signal 11 during the run")
        #expect(host.recorded.last == .finished(run, .crashed))
    }

    @Test func uninstallRemovesTheRequestsAndEndsTheRunsByForce() throws {
        let (driver, host, file) = try installed()
        defer { file.cleanUp() }
        try driver.submit(laterRequest(processingID))
        try driver.submit(laterRequest("com.example.test.p1"))
        try driver.simulateLaunch(RequestKey(app: testApp, identifier: processingID))
        guard case .launch(let run, _)? = host.recorded.first else { Issue.record("no launch"); return }
        try driver.uninstall(testApp) { store in try store.deleteAllRequests(app: testApp) }
        #expect(host.recorded.contains(.terminate(run)))
        #expect(host.recorded.last == .finished(run, .terminated))
        #expect(driver.allPendingRequests.isEmpty)
        #expect(try file.pendingOnDisk().isEmpty)
        // The engine forgot the app: a submission is refused as from an unknown app.
        #expect(throws: SubmitRejection.self) { try driver.submit(laterRequest(processingID)) }
    }

    @Test func anUninstallWhoseStoreWriteFailsChangesNothing() throws {
        let (driver, host, file) = try installed()
        defer { file.cleanUp() }
        try driver.submit(laterRequest(processingID))
        struct Refused: Error {}
        #expect(throws: Refused.self) { try driver.uninstall(testApp) { _ in throw Refused() } }
        #expect(driver.allPendingRequests.count == 1)
        #expect(host.recorded.isEmpty)
    }
}
