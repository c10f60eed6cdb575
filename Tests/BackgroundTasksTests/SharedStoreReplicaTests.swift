@testable import BackgroundTasks
import BackgroundTasksTesting
import Foundation
import SchedulerCore
import SchedulerStore
import Testing

/// Replicas of one app on a shared store, in virtual time (docs/replicas.md): a request
/// submitted on one replica reaches the others by word of the change, exactly one replica
/// runs it, and a run whose replica died is run by another once its lease runs out.
@Suite struct SharedStoreReplicaTests {
    /// Replicas of the test app, each a simulated device on `backend`, counting the runs
    /// of every handler into `ran`.
    final class Cluster: Sendable {
        let backend: SharedMemoryBackend
        let replicas: [SimulatedDevice]
        let contexts: [BGAppContext]
        let ran = LockedBox<[String]>([])
        /// The task of `com.example.test.p10` on replica 0, whose handler never ends.
        let hung = LockedBox<BGTask?>(nil)

        /// `prepare` writes into the shared store before any replica starts; every handler
        /// but the hung one works for `workSeconds` of virtual time (0: it completes at once).
        init(count: Int, workSeconds: TimeInterval = 0, prepare: (SharedMemoryBackend) throws -> Void = { _ in }) throws {
            // The server's clock is the first replica's (they advance together).
            let serverClock = LockedBox<VirtualClock?>(nil)
            let backend = SharedMemoryBackend(now: { serverClock.withLock { $0?.now() } ?? testStart })
            self.backend = backend
            try prepare(backend)
            var replicas: [SimulatedDevice] = []
            var contexts: [BGAppContext] = []
            let ran = self.ran
            let hung = self.hung
            for number in 0..<count {
                let device = try SimulatedDevice(start: testStart, store: backend.store(replica: "r\(number)"), policies: PolicySet(profile: .server))
                let context = device.install(app: testApp, manifest: testManifest, launchedByUser: false) {
                    BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.test.p10", using: nil) { task in
                        guard number != 0 else { hung.withLock { $0 = task }; return }
                        ran.withLock { $0.append("r\(number) com.example.test.p10") }
                        task.setTaskCompleted(success: true)
                    }
                    for identifier in [refreshID, processingID] + (0..<10).map({ "com.example.test.p\($0)" }) {
                        BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { task in
                            ran.withLock { $0.append("r\(number) \(identifier)") }
                            guard workSeconds > 0 else { return task.setTaskCompleted(success: true) }
                            device.schedule(after: workSeconds) { task.setTaskCompleted(success: true) }
                        }
                    }
                }
                if number == 0 { serverClock.withLock { $0 = device.clock } }
                replicas.append(device)
                contexts.append(context)
            }
            self.replicas = replicas
            self.contexts = contexts
        }

        /// What the policies learned of the test app, as the shared store keeps it.
        func sharedPolicyState() throws -> AppPolicyState? {
            let text = backend.state.withLock { $0.settings[testApp]?[AppSettingName.policyState] }
            return try text.map { try JSONDecoder().decode(AppPolicyState.self, from: Data($0.utf8)) }
        }

        /// Advances every replica by `seconds`, in small steps, letting word of changes
        /// arrive between steps.
        func run(for seconds: TimeInterval, step: TimeInterval = 1) async {
            var elapsed: TimeInterval = 0
            while elapsed < seconds {
                for replica in replicas { await replica.run(for: step) }
                backend.drain()
                for replica in replicas { await replica.settle() }
                elapsed += step
            }
        }

        /// Submits a processing request `identifier` on replica `number`, beginning after
        /// `delay`, and lets every replica hear of it.
        func submitProcessing(_ identifier: String, on number: Int, after delay: TimeInterval) async throws {
            let request = BGProcessingTaskRequest(identifier: identifier)
            request.earliestBeginDate = Date(timeIntervalSinceNow: delay)
            try submit(request, in: contexts[number])
            backend.drain()
            for replica in replicas { await replica.settle() }
        }
    }

    @Test func aRequestSubmittedOnOneReplicaRunsOnceAcrossAll() async throws {
        let cluster = try Cluster(count: 3)
        try await cluster.submitProcessing(processingID, on: 1, after: 60)
        // Every replica heard of it.
        for context in cluster.contexts {
            #expect(context.driver.pendingRequests(of: testApp).map(\.identifier) == [processingID])
        }
        // Word of the first claim is held back until every replica has reached the instant:
        // all three try to claim it.
        cluster.backend.delivery.suspend()
        for replica in cluster.replicas { await replica.run(for: 61) }
        cluster.backend.delivery.resume()
        await cluster.run(for: 60)
        #expect(cluster.ran.withLock { $0.count } == 1, "\(cluster.ran.withLock { $0 })")
        // The others tried at the same instant and lost the claim.
        let lost = cluster.replicas.dropFirst().flatMap(\.log.messages).filter { $0.text.contains("claimed by another replica") }
        #expect(!lost.isEmpty, "the claims raced")
        #expect(cluster.backend.state.withLock { ($0.claims, $0.lostClaims) } == (1, 2), "one claim committed, two lost")
        for context in cluster.contexts { #expect(context.driver.pendingRequests(of: testApp).isEmpty) }
        // Only the winner recorded a run; the losers left no record.
        let runs = try cluster.contexts[0].driver.store?.runs(app: testApp, since: nil, limit: nil) ?? []
        #expect(runs.count == 1 && runs.first?.outcome == .success, "\(runs)")
    }

    @Test func manyRequestsFromEveryReplicaEachRunOnce() async throws {
        let cluster = try Cluster(count: 3)
        for number in 0..<10 {
            let request = BGProcessingTaskRequest(identifier: "com.example.test.p\(number)")
            try submit(request, in: cluster.contexts[number % 3])
        }
        await cluster.run(for: 30)
        let ran = cluster.ran.withLock { $0 }
        #expect(ran.count == 10, "\(ran)")
        #expect(Set(ran.map { $0.split(separator: " ")[1] }).count == 10, "each request once: \(ran)")
    }

    @Test func aCancellationOnOneReplicaReachesTheOthers() async throws {
        let cluster = try Cluster(count: 2)
        try await cluster.submitProcessing(processingID, on: 0, after: 3600)
        #expect(cluster.contexts[1].driver.pendingRequests(of: testApp).count == 1)
        cluster.contexts[1].withCurrent { BGTaskScheduler.shared.cancel(taskRequestWithIdentifier: processingID) }
        cluster.backend.drain()
        await cluster.replicas[0].settle()
        #expect(cluster.contexts[0].driver.pendingRequests(of: testApp).isEmpty)
    }

    @Test func aRunWhoseReplicaDiedIsRunByAnotherOnceItsLeaseRunsOut() async throws {
        let cluster = try Cluster(count: 2)
        // Replica 0 claims the request but its handler never ends, and it stops renewing
        // (its process is gone: its heartbeat is never called).
        let hung = cluster.hung
        // Replica 1 hears of the request only once replica 0 holds it.
        cluster.backend.delivery.suspend()
        try submit(BGProcessingTaskRequest(identifier: "com.example.test.p10"), in: cluster.contexts[0])
        await cluster.replicas[0].settle()
        #expect(hung.withLock { $0 != nil })
        cluster.contexts[0].driver.sharedCoordinator?.stop()
        cluster.backend.delivery.resume()
        cluster.backend.drain()
        await cluster.replicas[1].settle()
        #expect(cluster.contexts[1].driver.pendingRequests(of: testApp).isEmpty, "claimed by replica 0")
        // Replica 1's heartbeat before the lease runs out changes nothing.
        await cluster.run(for: 20)
        cluster.contexts[1].driver.sharedCoordinator?.beatNow()
        #expect(cluster.ran.withLock { $0.isEmpty })
        // After it, the run is ended as interrupted and the request runs on replica 1.
        await cluster.run(for: 11)
        cluster.contexts[1].driver.sharedCoordinator?.beatNow()
        await cluster.run(for: 2)
        #expect(cluster.ran.withLock { $0 } == ["r1 com.example.test.p10"])
        let runs = try cluster.contexts[1].driver.store?.runs(app: testApp, since: nil, limit: nil) ?? []
        #expect(runs.map(\.outcome) == [.interrupted, .success], "\(runs)")
        // The sweep's throttle strike is in the app's shared memory, and replica 1's run end
        // (which writes its own memory) added to it rather than writing over it; replica 1
        // judges with it from then on.
        let stored = try #require(try cluster.sharedPolicyState())
        #expect(stored.throttle.strikes == 1, "the interrupted run's strike survives the next run end")
        #expect(cluster.contexts[1].driver.policyState(of: testApp)?.throttle.strikes == 1)
    }

    @Test func runsOnEveryReplicaAddUpInTheAppsSharedMemory() async throws {
        let cluster = try Cluster(count: 3, workSeconds: 5)
        for number in 0..<9 {
            try submit(BGProcessingTaskRequest(identifier: "com.example.test.p\(number)"), in: cluster.contexts[number % 3])
        }
        await cluster.run(for: 30)
        let runs = try cluster.contexts[0].driver.store?.runs(app: testApp, since: nil, limit: nil) ?? []
        #expect(runs.count == 9)
        let byReplica = cluster.backend.state.withLock { $0.runs.mapValues(\.count) }
        #expect(byReplica.count > 1, "the runs were spread over replicas: \(byReplica)")
        let spent = runs.compactMap(\.energyJoules).reduce(0, +)
        #expect(spent > 0)
        // What each replica learned from its runs (energy spent, the latest launch) adds up
        // in the stored state: no replica's write replaced another's.
        let stored = try #require(try cluster.sharedPolicyState())
        #expect(abs(stored.energyUsed - spent) < 1e-9 * max(1, spent), "stored \(stored.energyUsed) J, runs spent \(spent) J")
        #expect(stored.lastLaunch == runs.map(\.startedAt).max())
        // The last replica to write holds the stored state as its memory (runs end at the
        // same virtual instant on several replicas, so which one wrote last is not known).
        let memories = cluster.contexts.map { $0.driver.policyState(of: testApp)?.energyUsed ?? 0 }
        #expect(memories.contains(stored.energyUsed), "\(memories) vs \(stored.energyUsed)")
    }

    @Test func aStrikeWrittenElsewhereWeighsOnEveryReplicaAtItsNextHeartbeat() async throws {
        let cluster = try Cluster(count: 2, workSeconds: 5)
        for number in 0..<2 {
            try submit(BGProcessingTaskRequest(identifier: "com.example.test.p\(number)"), in: cluster.contexts[number])
        }
        await cluster.run(for: 10)
        let before = try #require(try cluster.sharedPolicyState())
        #expect(before.throttle.strikes == 0 && before.energyUsed > 0)
        // Another replica (or its sweep) records a strike in the stored state.
        var struck = before
        struck.throttle.recordRunEnded(outcome: .crashed, calledSetTaskCompleted: false, at: cluster.replicas[0].now)
        let text = String(decoding: try JSONEncoder().encode(struck), as: UTF8.self)
        cluster.backend.state.withLock { $0.settings[testApp]?[AppSettingName.policyState] = text }
        for context in cluster.contexts {
            #expect(context.driver.policyState(of: testApp)?.throttle.strikes == 0)
            context.driver.sharedCoordinator?.beatNow()
            let memory = context.driver.policyState(of: testApp)
            #expect(memory?.throttle.strikes == 1, "the strike weighs here")
            #expect(memory?.energyUsed == before.energyUsed, "what was learned before is kept")
        }
        // The next request waits out the throttle's delay (15 min for one strike) on both
        // replicas; its run's end keeps the strike and adds its energy.
        let submitted = cluster.replicas[1].now
        try submit(BGProcessingTaskRequest(identifier: "com.example.test.p5"), in: cluster.contexts[1])
        await cluster.run(for: 600, step: 10)
        #expect(!cluster.ran.withLock { $0 }.contains { $0.hasSuffix("p5") }, "held by the throttle")
        await cluster.run(for: 600, step: 10)
        let runs = try cluster.contexts[0].driver.store?.runs(app: testApp, since: submitted, limit: nil) ?? []
        #expect(runs.map(\.identifier) == ["com.example.test.p5"])
        let after = try #require(try cluster.sharedPolicyState())
        #expect(after.throttle.strikes == 1)
        #expect(after.energyUsed > before.energyUsed)
    }

    @Test func aMergeWhoseCommitLandedUnbeknownIsNotCountedTwice() async throws {
        let cluster = try Cluster(count: 1, workSeconds: 5)
        cluster.backend.state.withLock { $0.loseNextRunEndAfterCommit = true }
        try submit(BGProcessingTaskRequest(identifier: "com.example.test.p1"), in: cluster.contexts[0])
        await cluster.run(for: 10)
        #expect(cluster.contexts[0].driver.log.messages.contains { $0.level == .error && $0.text.contains("lost during COMMIT") })
        // The end is tried again, finds the store holds it already, and is not written twice.
        await cluster.run(for: 5)
        #expect(cluster.contexts[0].driver.log.messages.contains { $0.text.contains("was recorded already (an earlier attempt committed; its answer was lost)") })
        try submit(BGProcessingTaskRequest(identifier: "com.example.test.p2"), in: cluster.contexts[0])
        await cluster.run(for: 10)
        let runs = try cluster.contexts[0].driver.store?.runs(app: testApp, since: nil, limit: nil) ?? []
        let spent = runs.compactMap(\.energyJoules).reduce(0, +)
        #expect(runs.count == 2 && spent > 0)
        let stored = try #require(try cluster.sharedPolicyState())
        #expect(stored.energyUsed == spent, "the first run's joules once, not twice")
    }

    @Test func aRunsEndTheStoreDidNotTakeIsWrittenAgainAndItsLeaseKept() async throws {
        // An outside probe: a handler that completed while the server restarted had its end
        // dropped; its lease lapsed, the run was recorded as interrupted and ran again.
        let cluster = try Cluster(count: 2, workSeconds: 5)
        try submit(BGProcessingTaskRequest(identifier: "com.example.test.p1"), in: cluster.contexts[0])
        await cluster.run(for: 2)
        let started = cluster.ran.withLock { $0 }
        #expect(started.count == 1, "\(started)")
        let runner = started.first?.hasPrefix("r0") == true ? 0 : 1
        // The store goes away before the handler completes, and comes back 20 s later, before
        // the lease (30 s) would run out, but after the end's first attempts.
        cluster.backend.state.withLock { $0.reachable = false }
        await cluster.run(for: 23)
        cluster.backend.state.withLock { $0.reachable = true }
        // The runner's heartbeat renews the lease of the run whose end waits; the other's
        // sweep, past the first lease, finds nothing to end.
        cluster.contexts[runner].driver.sharedCoordinator?.beatNow()
        await cluster.run(for: 8)
        cluster.contexts[1 - runner].driver.sharedCoordinator?.beatNow()
        await cluster.run(for: 12)
        let runs = try cluster.contexts[0].driver.store?.runs(app: testApp, since: nil, limit: nil) ?? []
        #expect(runs.map(\.outcome) == [.success], "\(runs.map { "\(String(describing: $0.outcome)) \($0.stopReason ?? "")" })")
        #expect(cluster.ran.withLock { $0.count } == 1, "ran once: \(cluster.ran.withLock { $0 })")
        let log = cluster.contexts[runner].driver.log.messages.map(\.text)
        #expect(log.contains { $0.contains("it is written again until the store takes it, its lease renewed meanwhile") }, "\(log)")
        #expect(log.contains { $0.contains("once the store took it") }, "\(log)")
    }

    @Test func anEndWaitingForTheStoreIsWrittenOnceTheStoreTakesAnotherWrite() async throws {
        let cluster = try Cluster(count: 1, workSeconds: 5)
        try submit(BGProcessingTaskRequest(identifier: "com.example.test.p1"), in: cluster.contexts[0])
        await cluster.run(for: 2)
        #expect(cluster.ran.withLock { $0.count } == 1)
        // The end (about 5 s in) fails, and so do its attempts 1, 2, 4 and 8 s after: the
        // next is 16 s after the last, well after the store is back.
        cluster.backend.state.withLock { $0.reachable = false }
        await cluster.run(for: 20)
        cluster.backend.state.withLock { $0.reachable = true }
        let log = { cluster.contexts[0].driver.log.messages.map(\.text) }
        #expect(!log().contains { $0.contains("once the store took it") })
        // A submission the store takes shows it is back: the next attempt is brought
        // forward to now, not made after the rest of the backoff's wait (13 s more).
        try submit(BGProcessingTaskRequest(identifier: "com.example.test.p2"), in: cluster.contexts[0])
        await cluster.run(for: 1)
        #expect(log().contains { $0.contains("once the store took it") }, "\(log())")
        let runs = try cluster.contexts[0].driver.store?.runs(app: testApp, since: nil, limit: nil) ?? []
        #expect(runs.filter { $0.identifier.hasSuffix("p1") }.map(\.outcome) == [.success], "\(runs)")
    }

    @Test func aStoreThatTakesOtherWritesButRefusesEndsIsNotTriedAtEveryWrite() async throws {
        let cluster = try Cluster(count: 1, workSeconds: 5)
        cluster.backend.state.withLock { $0.refusesRunEnds = true }
        try submit(BGProcessingTaskRequest(identifier: "com.example.test.p1"), in: cluster.contexts[0])
        await cluster.run(for: 6)
        let first = cluster.backend.state.withLock { $0.runEndAttempts }
        #expect(first >= 1, "the end was tried")
        // 80 submissions the store takes over the next 40 s: the backoff alone tries the end
        // 5 more times (1, 2, 4, 8, 16 s after each); each of its waits may be cut short once.
        let later = Date(timeIntervalSinceNow: 86_400)
        for _ in 0..<80 {
            let request = BGProcessingTaskRequest(identifier: "com.example.test.p2")
            request.earliestBeginDate = later
            try submit(request, in: cluster.contexts[0])
            await cluster.run(for: 0.5, step: 0.5)
        }
        let attempts = cluster.backend.state.withLock { $0.runEndAttempts } - first
        #expect((5...10).contains(attempts), "\(attempts) attempts")
    }

    @Test func theRunsToRenewAreReadWithoutWaitingForASubmitStuckOnTheStore() async throws {
        // A reviewer's find after an outside probe: a submit waiting on the store holds the
        // driver's lock, and the heartbeat read the runs to renew under it.
        let cluster = try Cluster(count: 1, workSeconds: 60)
        try submit(BGProcessingTaskRequest(identifier: "com.example.test.p1"), in: cluster.contexts[0])
        await cluster.run(for: 2)
        let driver = cluster.contexts[0].driver
        let held = driver.activeRunIDs
        #expect(held.count == 1, "the run in progress")
        let gate = DispatchSemaphore(value: 0)
        cluster.backend.submissionGate.withLock { $0 = gate }
        let context = cluster.contexts[0]
        let submitted = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? submit(BGProcessingTaskRequest(identifier: "com.example.test.p2"), in: context)
            submitted.signal()
        }
        #expect(submitted.wait(timeout: .now() + 0.2) == .timedOut, "the submit waits on the store")
        let read = DispatchSemaphore(value: 0)
        let seen = LockedBox<[RunID]>([])
        Thread.detachNewThread {
            // Read outside the box's lock: a read that waits must not keep the test from
            // letting the submit go (it then fails, rather than waiting for ever).
            let ids = driver.activeRunIDs
            seen.withLock { $0 = ids }
            read.signal()
        }
        let readWhileWaiting = read.wait(timeout: .now() + 10) == .success
        cluster.backend.submissionGate.withLock { $0 = nil }
        gate.signal()
        #expect(readWhileWaiting, "read while the submit waits")
        #expect(submitted.wait(timeout: .now() + 10) == .success)
        #expect(readWhileWaiting || read.wait(timeout: .now() + 10) == .success)
        #expect(seen.withLock { $0 } == held)
    }

    @Test func requestsAlreadyDueWhenAReplicaStartsRunOnceItsHandlersAreRegistered() async throws {
        let cluster = try Cluster(count: 1) { backend in
            try backend.store(replica: "earlier").upsertRequests((0..<3).map {
                PendingRequest(app: testApp, identifier: "com.example.test.p\($0)", kind: .processing, submittedAt: testStart)
            })
        }
        await cluster.run(for: 5)
        #expect(cluster.ran.withLock { $0.sorted() } == ["r0 com.example.test.p0", "r0 com.example.test.p1", "r0 com.example.test.p2"])
        let runs = try cluster.contexts[0].driver.store?.runs(app: testApp, since: nil, limit: nil) ?? []
        #expect(runs.allSatisfy { $0.outcome == .success }, "none launched before its handler was registered: \(runs.map(\.stopReason))")
    }

    @Test func claimsThatFailWhileTheStoreIsUnreachableAreMadeAgainOnceItAnswers() async throws {
        let cluster = try Cluster(count: 1) { backend in
            try backend.store(replica: "earlier").upsertRequests((0..<3).map {
                PendingRequest(app: testApp, identifier: "com.example.test.p\($0)", kind: .processing, earliestBeginDate: testStart.addingTimeInterval(60), submittedAt: testStart)
            })
        }
        cluster.backend.state.withLock { $0.reachable = false }
        await cluster.run(for: 70)
        #expect(cluster.ran.withLock { $0.isEmpty }, "nothing runs without a claim")
        #expect(cluster.contexts[0].driver.sharedClaimsFailing)
        cluster.backend.state.withLock { $0.reachable = true }
        cluster.contexts[0].driver.sharedCoordinator?.beatNow()
        await cluster.run(for: 2)
        #expect(cluster.ran.withLock { $0.count } == 3, "the forgotten requests came back: \(cluster.ran.withLock { $0 })")
        #expect(!cluster.contexts[0].driver.sharedClaimsFailing)
    }

    @Test func aRowAnotherProgramWroteBadlyIsQuarantinedByTheFullReadAndHidesNothing() async throws {
        let cluster = try Cluster(count: 1)
        let good = PendingRequest(app: testApp, identifier: processingID, kind: .processing, earliestBeginDate: testStart.addingTimeInterval(3600), submittedAt: testStart)
        let bad = RequestKey(app: testApp, identifier: "com.example.test.p3")
        cluster.backend.delivery.suspend()
        try cluster.backend.store(replica: "outside").upsertRequest(good)
        cluster.backend.state.withLock { state in
            state.pending[bad] = PendingRequest(app: testApp, identifier: bad.identifier, kind: .processing, submittedAt: testStart)
            state.unreadable.insert(bad)
        }
        cluster.contexts[0].driver.applySharedChange(.everything)
        await cluster.replicas[0].settle()
        #expect(cluster.contexts[0].driver.pendingRequests(of: testApp).map(\.key) == [good.key], "the readable request is known")
        #expect(cluster.backend.state.withLock { $0.quarantined.map(\.identifier) } == [bad.identifier])
        #expect(cluster.contexts[0].driver.log.messages.contains { $0.level == .error && $0.text.contains(bad.identifier) && $0.text.contains("quarantine") })
        cluster.backend.delivery.resume()
    }

    @Test func aRemoteWakeIsRefusedOnASharedStore() throws {
        let cluster = try Cluster(count: 1)
        #expect(throws: SubmitRejection.self) {
            try cluster.contexts[0].driver.wake(PendingRequest(app: testApp, identifier: refreshID, kind: .appRefresh, submittedAt: testStart))
        }
    }

    @Test func staleWordOfASubmissionThisReplicaClaimedMeanwhileRunsNothingTwice() async throws {
        let cluster = try Cluster(count: 2)
        // Replica 1 submits; replica 0 claims and runs it before word of the submission
        // reaches it (read from the store when its launch ends); then the late word arrives.
        cluster.backend.delivery.suspend()
        let request = PendingRequest(app: testApp, identifier: processingID, kind: .processing, submittedAt: testStart)
        try cluster.contexts[1].driver.store?.upsertRequest(request)
        cluster.contexts[0].driver.applySharedChange(.everything)
        await cluster.replicas[0].settle()
        await cluster.replicas[0].run(for: 2)
        #expect(cluster.ran.withLock { $0 } == ["r0 \(processingID)"])
        // The late word says the submission is pending: replica 0 takes it as it comes,
        // tries to claim it, loses, reads the store, and runs nothing.
        cluster.contexts[0].driver.applySharedChange(.requests([.upserted(request)]))
        cluster.backend.delivery.resume()
        await cluster.run(for: 5)
        #expect(cluster.ran.withLock { $0 } == ["r0 \(processingID)"], "run once")
        #expect(cluster.contexts[0].driver.pendingRequests(of: testApp).isEmpty)
        #expect(cluster.backend.state.withLock { $0.claims } == 1)
        // The word came after replica 0's own claim: doubted and read, not taken, so no
        // launch tried to claim it again.
        #expect(cluster.backend.state.withLock { $0.lostClaims } == 0)
    }

    @Test func lateWordOfARequestThisReplicaCancelledDoesNotBringItBack() async throws {
        let cluster = try Cluster(count: 2)
        // Replica 1 submits; replica 0's app cancels it before word of the submission came.
        cluster.backend.delivery.suspend()
        let request = BGProcessingTaskRequest(identifier: processingID)
        request.earliestBeginDate = Date(timeIntervalSinceNow: 3600)
        try submit(request, in: cluster.contexts[1])
        cluster.contexts[0].withCurrent { BGTaskScheduler.shared.cancel(taskRequestWithIdentifier: processingID) }
        cluster.backend.delivery.resume()
        cluster.backend.drain()
        await cluster.replicas[0].settle()
        #expect(cluster.contexts[0].driver.pendingRequests(of: testApp).isEmpty, "the late word was read against the store, where it is gone")
        #expect(cluster.backend.state.withLock { $0.pending.isEmpty })
    }

    @Test func aReplacementWhoseWordWasLostIsFoundByTheLostClaim() async throws {
        let cluster = try Cluster(count: 1)
        let first = PendingRequest(app: testApp, identifier: processingID, kind: .processing, earliestBeginDate: testStart.addingTimeInterval(30), submittedAt: testStart)
        try cluster.contexts[0].driver.submit(first)
        // Another replica replaced it, and its word never came.
        let replacement = PendingRequest(app: testApp, identifier: processingID, kind: .processing, earliestBeginDate: testStart.addingTimeInterval(3600), submittedAt: testStart.addingTimeInterval(1))
        cluster.backend.state.withLock { $0.pending[replacement.key] = replacement }
        await cluster.run(for: 40)
        #expect(cluster.ran.withLock { $0.isEmpty }, "the old submission could not be claimed")
        #expect(cluster.contexts[0].driver.pendingRequests(of: testApp) == [replacement], "the lost claim read the replacement")
    }

    @Test func wordIsTakenAsItComesOnlyWhereItCannotUndoThisReplicasOwnChange() {
        var engine = SchedulerEngine(policies: PolicySet(profile: .server))
        engine.register(AppRegistration(app: testApp, manifest: testManifest))
        let mine = PendingRequest(app: testApp, identifier: "mine", kind: .processing, submittedAt: testStart.addingTimeInterval(5))
        _ = engine.submit(mine, at: testStart)
        let elsewhere = PendingRequest(app: testApp, identifier: "elsewhere", kind: .processing, submittedAt: testStart)
        let olderMine = PendingRequest(app: testApp, identifier: "mine", kind: .processing, submittedAt: testStart)
        // A submission this replica does not have, and the claim of the one it has: taken.
        var sorted = SchedulerDriver.sort([.upserted(elsewhere), .removed(mine.key, submittedAt: mine.submittedAt)], against: engine)
        #expect(sorted.known == [elsewhere.key: .some(elsewhere), mine.key: Optional<PendingRequest>.none])
        #expect(sorted.doubtful.isEmpty)
        // Another version of one it has, the claim of another submission, a bare key: read again.
        sorted = SchedulerDriver.sort([.upserted(olderMine)], against: engine)
        #expect(sorted.known.isEmpty && sorted.doubtful == [mine.key])
        sorted = SchedulerDriver.sort([.removed(mine.key, submittedAt: olderMine.submittedAt)], against: engine)
        #expect(sorted.known.isEmpty && sorted.doubtful == [mine.key])
        sorted = SchedulerDriver.sort([.changed(elsewhere.key)], against: engine)
        #expect(sorted.known.isEmpty && sorted.doubtful == [elsewhere.key])
        // In one burst, later word builds on earlier word; doubt is final for the burst.
        sorted = SchedulerDriver.sort([.upserted(elsewhere), .removed(elsewhere.key, submittedAt: elsewhere.submittedAt)], against: engine)
        #expect(sorted.known == [elsewhere.key: Optional<PendingRequest>.none] && sorted.doubtful.isEmpty)
        sorted = SchedulerDriver.sort([.changed(elsewhere.key), .upserted(elsewhere)], against: engine)
        #expect(sorted.known.isEmpty && sorted.doubtful == [elsewhere.key])
        // A submission it removed lately: read again.
        sorted = SchedulerDriver.sort([.upserted(elsewhere)], against: engine) { $0 == elsewhere.key }
        #expect(sorted.known.isEmpty && sorted.doubtful == [elsewhere.key])
        // Word equal to what it has, and a claim of what it does not have: nothing to do.
        sorted = SchedulerDriver.sort([.upserted(mine), .removed(elsewhere.key, submittedAt: testStart)], against: engine)
        #expect(sorted.known == [mine.key: .some(mine), elsewhere.key: Optional<PendingRequest>.none] && sorted.doubtful.isEmpty)
    }
}
