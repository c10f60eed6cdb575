import BackgroundTasks
import BackgroundTasksTesting
import Foundation
import Synchronization
import Testing
import SchedulerCore

@Suite struct ExpirationTests {
    /// A refresh handler that never finishes on its own.
    private func stuckRefresh(onExpiration: (@Sendable (BGTask) -> Void)?) throws -> (SimulatedDevice, BGAppContext) {
        let (device, context) = try makeDevice {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { task in
                if let onExpiration {
                    task.expirationHandler = { onExpiration(task) }
                }
            }
        }
        try submit(refresh(after: 0), in: context)
        return (device, context)
    }

    @Test func refreshExpiresAfterItsThirtySecondBudgetAndCompletesWithinGrace() async throws {
        let expiredAt = Mutex<Date?>(nil)
        let (device, _) = try stuckRefresh { task in
            expiredAt.withLock { $0 = BGAppContext.current?.driver.clock.now() }
            task.setTaskCompleted(success: false)
        }
        await device.run(for: 60)
        #expect(expiredAt.withLock { $0 } == testStart.addingTimeInterval(30))
        let run = try #require(device.runs(of: refreshID).first)
        #expect(run.outcome == .expired)
        #expect(run.success == false)
        #expect(run.endedAt == testStart.addingTimeInterval(30))
    }

    @Test func runIsTerminatedWhenItDoesNotCompleteWithinTheGrace() async throws {
        let (device, _) = try stuckRefresh { _ in }  // handler set, but never completes
        await device.run(for: 60)
        let run = try #require(device.runs(of: refreshID).first)
        #expect(run.outcome == .terminated)
        #expect(run.endedAt == testStart.addingTimeInterval(32))
        #expect(device.trace.contains { if case .terminated = $0 { return true } else { return false } })
    }

    @Test func runWithoutAnExpirationHandlerIsRecordedAsFailed() async throws {
        let (device, _) = try stuckRefresh(onExpiration: nil)
        await device.run(for: 60)
        let run = try #require(device.runs(of: refreshID).first)
        #expect(run.outcome == .failure)
        #expect(run.stopReason?.contains("no expiration handler") == true)
    }

    @Test func secondSetTaskCompletedIsIgnoredWithAWarning() async throws {
        let (device, context) = try makeDevice {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { task in
                task.setTaskCompleted(success: true)
                task.setTaskCompleted(success: false)
            }
        }
        try submit(refresh(after: 0), in: context)
        await device.run(for: 10)
        #expect(device.runs(of: refreshID).map(\.outcome) == [.success])
        #expect(device.log.messages.contains { $0.level == .warning && $0.text.contains("called again") && $0.text.contains(refreshID) })
    }

    @Test func simulatedExpirationFiresTheHandlerOfARunningTask() async throws {
        let fired = Mutex(false)
        let (device, context) = try stuckRefresh { task in
            fired.withLock { $0 = true }
            task.setTaskCompleted(success: false)
        }
        await device.run(for: 1)
        try context.withCurrent { try BGTaskScheduler.shared.simulateExpiration(forTaskWithIdentifier: refreshID) }
        await device.settle()
        #expect(fired.withLock { $0 })
        #expect(device.runs(of: refreshID).first?.endedAt == testStart.addingTimeInterval(1))
    }

    @Test func simulateExpirationSwitchExpiresEveryRunWithinFiveSeconds() async throws {
        let configuration = EmbeddedScheduler.defaultSchedulerConfiguration(environment: ["BACKGROUND_TASK_SIMULATE_EXPIRATION": "YES"])
        let expiredAt = Mutex<Date?>(nil)
        let (device, context) = try makeDevice(configuration: configuration) {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: processingID, using: nil) { task in
                task.expirationHandler = {
                    expiredAt.withLock { $0 = BGAppContext.current?.driver.clock.now() }
                    task.setTaskCompleted(success: false)
                }
            }
        }
        try submit(BGProcessingTaskRequest(identifier: processingID), in: context)
        await device.run(for: 60)
        #expect(expiredAt.withLock { $0 } == testStart.addingTimeInterval(5))
    }

    @Test func asyncHandlerIsCancelledOnExpirationAndKeepsItsCheckpoint() async throws {
        let deviceBox = Mutex<SimulatedDevice?>(nil)
        let (device, context) = try makeDevice {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: processingID) { task in
                let clock = deviceBox.withLock { $0 }!.swiftClock
                let checkpoints = BGTaskScheduler.shared.checkpoints
                var done = (try? checkpoints.load(Int.self, forKey: "done")) ?? 0
                do {
                    while done < 30 {
                        try await clock.sleep(for: .seconds(70))
                        done += 1
                        try checkpoints.save(done, forKey: "done")
                    }
                    return true
                } catch {
                    return false
                }
            }
        }
        deviceBox.withLock { $0 = device }
        try submit(BGProcessingTaskRequest(identifier: processingID), in: context)
        await device.run(for: 700)
        let first = try #require(device.runs(of: processingID).first)
        #expect(first.outcome == .expired)
        #expect(first.endedAt == testStart.addingTimeInterval(600))
        let saved = try context.withCurrent { try BGTaskScheduler.shared.checkpoints.load(Int.self, forKey: "done") }
        #expect(saved == 8, "chunks finished at 70, 140 ... 560 s; the ninth was cancelled at 600 s")
    }

    /// A checkpoint holds progress: a bad key, an oversized value, or more keys or bytes
    /// than one app may hold are refused naming the limit, and nothing is written.
    @Test func checkpointsBeyondTheirLimitsAreRefused() throws {
        let (_, context) = try makeDevice {}
        try context.withCurrent {
            let checkpoints = BGTaskScheduler.shared.checkpoints
            for key in ["", String(repeating: "k", count: 256), "a\u{0}b"] {
                #expect(throws: BGCheckpointStore.Error.self) { try checkpoints.save(1, forKey: key) }
                #expect(throws: BGCheckpointStore.Error.self) { try checkpoints.load(Int.self, forKey: key) }
            }
            let big = String(repeating: "x", count: CheckpointRules.maximumValueBytes)  // its JSON form has two quotes more
            do {
                try checkpoints.save(big, forKey: "big")
                Issue.record("a value over the limit was saved")
            } catch let error as BGCheckpointStore.Error {
                #expect(error.message.contains("at most \(CheckpointRules.maximumValueBytes) bytes"), "\(error)")
            }
            #expect(try checkpoints.keys().isEmpty)
            // The per-app count: 1,000 keys, then a new key is refused, a replaced one is not.
            for index in 0..<CheckpointRules.maximumKeysPerApp { try checkpoints.save(index, forKey: "k\(index)") }
            #expect(throws: BGCheckpointStore.Error.self) { try checkpoints.save(1, forKey: "one-more") }
            try checkpoints.save(7, forKey: "k0")
            #expect(try checkpoints.load(Int.self, forKey: "k0") == 7)
            // The per-app bytes: 16 MiB in values just under the value limit.
            for index in 0..<CheckpointRules.maximumKeysPerApp { try checkpoints.remove(forKey: "k\(index)") }
            let chunk = String(repeating: "y", count: CheckpointRules.maximumValueBytes - 100)
            var saved = 0
            var refusal: BGCheckpointStore.Error?
            while refusal == nil, saved < 100 {
                do { try checkpoints.save(chunk, forKey: "chunk\(saved)"); saved += 1 } catch let error as BGCheckpointStore.Error { refusal = error }
            }
            // Each holds its key's bytes and the chunk's JSON form (two quotes more).
            var expected = 0
            var total = 0
            while total + "chunk\(expected)".utf8.count + chunk.utf8.count + 2 <= CheckpointRules.maximumBytesPerApp {
                total += "chunk\(expected)".utf8.count + chunk.utf8.count + 2
                expected += 1
            }
            #expect(saved == expected && saved > 50, "\(saved) saved, \(expected) expected")
            #expect(refusal?.message.contains("over the \(CheckpointRules.maximumBytesPerApp)") == true, "\(String(describing: refusal))")
        }
    }

    /// A retry policy for a task the manifest does not list would never apply: it is
    /// refused with an error naming the identifier, and the listed task's policy is kept.
    @Test func aRetryPolicyForAnUnlistedTaskIsRefusedNamingIt() async throws {
        let (device, context) = try makeDevice {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: processingID, using: nil) { $0.setTaskCompleted(success: false) }
            BGTaskScheduler.shared.setRetryPolicy(.fixed(60, maximumAttempts: 1), forTaskWithIdentifier: processingID)
            BGTaskScheduler.shared.setRetryPolicy(.fixed(60), forTaskWithIdentifier: "com.example.other.task")
        }
        #expect(device.log.messages.contains { $0.level == .error && $0.text.contains("com.example.other.task is not in BGTaskSchedulerPermittedIdentifiers") }, "\(device.log.messages)")
        try submit(BGProcessingTaskRequest(identifier: processingID), in: context)
        await device.run(for: 600)
        #expect(device.runs(of: processingID).count == 2, "the listed task's policy retried once")
    }

    @Test func retryPolicyResubmitsAFailedTaskWithBackoff() async throws {
        let (device, context) = try makeDevice {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: processingID, using: nil) { $0.setTaskCompleted(success: false) }
            BGTaskScheduler.shared.setRetryPolicy(.exponentialBackoff(initial: 60, multiplier: 2, cap: 200, maximumAttempts: 4), forTaskWithIdentifier: processingID)
        }
        try submit(BGProcessingTaskRequest(identifier: processingID), in: context)
        await device.run(for: 3600)
        let starts = device.runs(of: processingID).map { $0.startedAt.timeIntervalSince(testStart) }
        #expect(starts == [0, 60, 180, 380, 580], "delays 60, 120, 200 (capped), 200, then give up")
    }

    @Test func handlerBlockingAThreadIsReportedInsteadOfHangingTheSimulation() async throws {
        let release = DispatchSemaphore(value: 0)
        let device = try SimulatedDevice(start: testStart, policies: .foundation, stuckWorkLimit: .milliseconds(200))
        let context = device.install(app: testApp, manifest: testManifest) {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { task in
                release.wait()  // blocks a thread: virtual time cannot know when it ends
                task.setTaskCompleted(success: true)
            }
        }
        try submit(refresh(after: 0), in: context)
        await device.run(for: 60)
        release.signal()
        #expect(device.now == testStart.addingTimeInterval(60))
        #expect(device.log.messages.contains { $0.level == .error && $0.text.contains("neither returned nor parked") })
    }
}
