@testable import BGTaskDaemon
import BackgroundTasks
import Dispatch
import Foundation
import SchedulerCore
import SchedulerStore
import Synchronization
import Testing

/// Group commit: concurrent submissions from many apps share commits, and each is answered
/// only once it is on disk.
@Suite struct GroupCommitterTests {
    final class NoHost: RemoteTaskHost {
        func launch(_ run: RunRecord, budget: TimeInterval?) {}
        func expire(_ run: RunID, reason: String) {}
        func terminate(_ run: RunID, reason: String) {}
        func finished(_ run: RunRecord) {}
        func sampleProgress(_ run: RunID) {}
    }

    @Test(.timeLimit(.minutes(1)))
    func concurrentSubmissionsOfSixteenAppsAreAllDurable() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bgtaskd-group-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("scheduler.sqlite")
        let start = Date(timeIntervalSince1970: 1_796_083_200)
        let store = try SchedulerStore.open(at: url, now: start).0
        let driver = SchedulerDriver(clock: DispatchDriverClock(), store: store, log: .collecting(), meter: nil)
        let apps = (0..<16).map { AppID("com.example.app\($0)") }
        for app in apps {
            let identifiers = (0..<10).map { "\(app).task\($0)" }
            driver.install(AppRegistration(app: app, manifest: AppManifest(appID: app, permittedIdentifiers: identifiers, backgroundModes: ["processing"], source: "test")), host: NoHost())
        }
        let committer = GroupCommitter(driver: driver)
        let acknowledged = Mutex<[RequestKey]>([])
        let group = DispatchGroup()
        for app in apps {
            for number in 0..<10 {
                group.enter()
                DispatchQueue.global().async {
                    let request = PendingRequest(app: app, identifier: "\(app).task\(number)", kind: .processing,
                                                 earliestBeginDate: Date().addingTimeInterval(86_400), submittedAt: Date())
                    committer.submit(request) { result in
                        if case .success = result { acknowledged.withLock { $0.append(request.key) } }
                        group.leave()
                    }
                }
            }
        }
        #expect(group.wait(timeout: .now() + 50) == .success)
        let onDisk = Set(try SchedulerStore.openForReading(at: url).pendingRequests().map(\.key))
        let acked = acknowledged.withLock { $0 }
        #expect(acked.count == 160)
        #expect(Set(acked).isSubset(of: onDisk), "every acknowledged submission is on disk")
        store.close()
    }

    @Test(.timeLimit(.minutes(1)))
    func submissionsArrivingDuringACommitShareTheNextOneAtMostOnePerKey() {
        // The first commit blocks until the others have queued behind it.
        let firstCommitStarted = DispatchSemaphore(value: 0)
        let releaseFirstCommit = DispatchSemaphore(value: 0)
        let batches = Mutex<[[PendingRequest]]>([])
        let committer = GroupCommitter { batch in
            let isFirst = batches.withLock { batches in
                batches.append(batch)
                return batches.count == 1
            }
            if isFirst {
                firstCommitStarted.signal()
                releaseFirstCommit.wait()
            }
            return batch.map { _ in .success(()) }
        }
        @Sendable func request(_ app: String, _ number: Int) -> PendingRequest {
            PendingRequest(app: AppID(app), identifier: "\(app).task\(number)", kind: .processing, submittedAt: Date(timeIntervalSince1970: 0))
        }
        let answered = DispatchGroup()
        answered.enter()
        DispatchQueue.global().async { committer.submit(request("com.example.a", 0)) { _ in answered.leave() } }
        firstCommitStarted.wait()
        // While that commit is in flight: three apps, one with two requests, one request twice.
        for (app, number) in [("com.example.b", 0), ("com.example.c", 0), ("com.example.b", 1), ("com.example.b", 0), ("com.example.d", 0)] {
            answered.enter()
            committer.submit(request(app, number)) { _ in answered.leave() }
        }
        releaseFirstCommit.signal()
        #expect(answered.wait(timeout: .now() + 30) == .success)
        let sizes = batches.withLock { $0.map { $0.map(\.identifier) } }
        #expect(sizes == [
            ["com.example.a.task0"],
            ["com.example.b.task0", "com.example.c.task0", "com.example.b.task1", "com.example.d.task0"],
            ["com.example.b.task0"],
        ], "one commit for all that waited, a key's second submission in the next")
    }

    @Test(.timeLimit(.minutes(1)))
    func submissionsFromOneSerialQueueShareCommits() {
        // bgtaskd reads every connection on one serial queue: a submit there must return at
        // once, so that the next ones are read and join the commit in flight.
        let queued = DispatchSemaphore(value: 0)
        let batches = Mutex<[[String]]>([])
        let committer = GroupCommitter { batch in
            let isFirst = batches.withLock { batches in
                batches.append(batch.map(\.identifier))
                return batches.count == 1
            }
            // The first commit is in flight until the three others have been submitted.
            if isFirst { for _ in 0..<3 { _ = queued.wait(timeout: .now() + 5) } }
            return batch.map { _ in .success(()) }
        }
        let connections = DispatchQueue(label: "connections")
        let answered = DispatchGroup()
        for app in ["a", "b", "c", "d"] {
            answered.enter()
            connections.async {
                let request = PendingRequest(app: AppID("com.example.\(app)"), identifier: "com.example.\(app).task", kind: .processing, submittedAt: Date(timeIntervalSince1970: 0))
                committer.submit(request) { _ in answered.leave() }
                if app != "a" { queued.signal() }
            }
        }
        #expect(answered.wait(timeout: .now() + 30) == .success)
        // One commit for all four, or the first alone and one for the rest; one commit each
        // (the first blocking the queue until it gave up waiting) was the fault.
        let made = batches.withLock { $0 }
        #expect(made.count <= 2, "\(made)")
        #expect(made.flatMap { $0 } == ["a", "b", "c", "d"].map { "com.example.\($0).task" })
    }
}
