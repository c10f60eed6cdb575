@testable import BackgroundTasks
import Dispatch
import Foundation
import SchedulerStore
import Synchronization
import Testing
import SchedulerCore

/// Group commit of the embedded scheduler's synchronous submits (``SubmitGroup``): threads
/// that submit while a commit is in flight share the next one, each gets its own answer,
/// and every acknowledged request is on disk.
@Suite struct SubmitGroupTests {
    private func request(_ identifier: String, app: String = "com.example.group") -> PendingRequest {
        PendingRequest(app: AppID(app), identifier: identifier, kind: .processing, submittedAt: testStart)
    }

    /// Waits for `count` submitters to queue behind the commit in flight (threads just
    /// started, which will arrive; the test's time limit bounds a failure).
    private func waitUntil(_ group: SubmitGroup, holds count: Int) {
        while group.queuedCount < count { usleep(1_000) }
    }

    @Test(.timeLimit(.minutes(1)))
    func submittersThatArriveDuringACommitShareTheNextOneAndGetTheirOwnAnswers() async {
        let group = SubmitGroup()
        let firstCommitStarted = DispatchSemaphore(value: 0)
        let releaseFirstCommit = DispatchSemaphore(value: 0)
        let batches = Mutex<[[String]]>([])
        // Refuses "bad", accepts the rest; the first commit waits until the others queued.
        let commit: @Sendable ([PendingRequest]) -> ([SubmitGroup.Outcome], () -> Void) = { batch in
            let isFirst = batches.withLock { batches in
                batches.append(batch.map(\.identifier))
                return batches.count == 1
            }
            if isFirst {
                firstCommitStarted.signal()
                releaseFirstCommit.wait()
            }
            return (batch.map { $0.identifier == "bad" ? .failure(SubmitRejection(.notPermitted, "bad")) : .success(()) }, {})
        }
        let outcomes = Mutex<[String: Bool]>([:])
        let done = DispatchGroup()
        func start(_ identifier: String) {
            done.enter()
            Thread.detachNewThread {
                let outcome = group.submit(request(identifier), commit: commit)
                outcomes.withLock { $0[identifier + "#\(Thread.current.hashValue)"] = (try? outcome.get()) != nil }
                done.leave()
            }
        }
        start("first")
        firstCommitStarted.wait()
        for identifier in ["a", "bad", "b", "a"] { start(identifier) }
        waitUntil(group, holds: 4)
        releaseFirstCommit.signal()
        #expect(done.wait(timeout: .now() + 30) == .success)
        let seen = batches.withLock { $0 }
        #expect(seen.first == ["first"])
        #expect(seen.dropFirst().flatMap { $0 }.sorted() == ["a", "a", "b", "bad"], "every submission committed once")
        #expect(seen.dropFirst().allSatisfy { Set($0).count == $0.count }, "one request per key per commit: \(seen)")
        #expect(seen.count == 3, "the four that waited share one commit, but for the second 'a': \(seen)")
        let answers = outcomes.withLock { $0 }
        #expect(answers.filter { $0.key.hasPrefix("bad#") }.values.allSatisfy { !$0 })
        #expect(answers.filter { !$0.key.hasPrefix("bad#") }.values.allSatisfy { $0 })
        #expect(answers.count == 5)
    }

    /// What a commit leads to (traces, launches: app code) runs on the leader's thread only
    /// once the leader has answered the others and given up the lead: app code there that
    /// waits for another submitter, or submits again itself, does not deadlock.
    @Test(.timeLimit(.minutes(1)))
    func theLeaderCarriesOutItsCommitOnlyOnceItLeadsNoMore() {
        let group = SubmitGroup()
        let firstCommitStarted = DispatchSemaphore(value: 0)
        let releaseFirstCommit = DispatchSemaphore(value: 0)
        let followerAnswered = DispatchSemaphore(value: 0)
        let commits = Mutex(0)
        let resubmitted = Mutex<Bool?>(nil)
        @Sendable func commit(_ batch: [PendingRequest]) -> ([SubmitGroup.Outcome], () -> Void) {
            let number = commits.withLock { count -> Int in
                count += 1
                return count
            }
            guard number == 1 else { return (batch.map { _ in .success(()) }, {}) }
            firstCommitStarted.signal()
            releaseFirstCommit.wait()
            return (batch.map { _ in .success(()) }, {
                // App code on the leader's thread: it waits for the follower's answer (a
                // deadlock if the leader still held it), then submits again.
                let answered = followerAnswered.wait(timeout: .now() + 10) == .success
                let again = group.submit(self.request("again"), commit: commit)
                resubmitted.withLock { $0 = answered && (try? again.get()) != nil }
            })
        }
        let done = DispatchGroup()
        done.enter()
        Thread.detachNewThread {
            _ = group.submit(self.request("leader"), commit: commit)
            done.leave()
        }
        firstCommitStarted.wait()
        done.enter()
        Thread.detachNewThread {
            _ = group.submit(self.request("follower"), commit: commit)
            followerAnswered.signal()
            done.leave()
        }
        waitUntil(group, holds: 1)
        releaseFirstCommit.signal()
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(resubmitted.withLock { $0 } == true, "the follower was answered before the leader's app code ran, and a submit from there went through")
    }

    @Test(.timeLimit(.minutes(1)))
    func sixteenThreadsSubmittingThroughOneDriverAreAllOnDisk() throws {
        let file = try TemporaryStoreFile()
        defer { file.cleanUp() }
        let app = AppID("com.example.group")
        let identifiers = (0..<320).map { "\(app).t\($0)" }
        let driver = SchedulerDriver(
            configuration: SchedulerConfiguration(pendingLimits: [.refresh: 1, .processing: 1_000, .continuedProcessing: 10]),
            clock: DispatchDriverClock(), store: try file.open(), log: .collecting(), policies: .foundation, meter: nil)
        let manifest = AppManifest(appID: app, permittedIdentifiers: identifiers, backgroundModes: ["processing"], source: "test")
        driver.install(AppRegistration(app: app, manifest: manifest), host: RecordingHost())
        let acknowledged = Mutex<[String]>([])
        let done = DispatchGroup()
        for worker in 0..<16 {
            done.enter()
            Thread.detachNewThread {
                for number in 0..<20 {
                    let identifier = identifiers[worker * 20 + number]
                    let request = PendingRequest(app: app, identifier: identifier, kind: .processing, earliestBeginDate: Date().addingTimeInterval(86_400), submittedAt: Date())
                    if (try? driver.submit(request)) != nil { acknowledged.withLock { $0.append(identifier) } }
                }
                done.leave()
            }
        }
        #expect(done.wait(timeout: .now() + 50) == .success)
        let acked = acknowledged.withLock { $0 }
        #expect(acked.count == 320)
        #expect(Set(try file.pendingOnDisk().map(\.identifier)) == Set(acked), "every acknowledged submission is on disk")
        #expect(driver.pendingRequests(of: app).count == 320)
        // 16 threads each waiting out a commit with an fsync: they overlap, and share commits.
        #expect(driver.submitGroupLargestBatch > 1, "no commit was shared")
    }
}
