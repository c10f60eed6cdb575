@testable import BackgroundTasks
@testable import BackgroundTasksTesting
import CSQLite
import DeviceConditions
import Dispatch
import Foundation
import SchedulerStore
import Synchronization
import Testing
import SchedulerCore

/// A store file in a fresh temporary directory, removed by `cleanUp()`.
struct TemporaryStoreFile {
    let directory: URL
    var url: URL { directory.appendingPathComponent("bgtask.sqlite") }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-driver-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func open(now: Date = testStart) throws -> SchedulerStore {
        try SchedulerStore.open(at: url, now: now).0
    }

    /// The pending requests on disk, read beside the store's owner (as `bgtask why` reads).
    func pendingOnDisk() throws -> [PendingRequest] {
        try SchedulerStore.openForReading(at: url).pendingRequests()
    }

    /// Runs `sql` on a connection of its own (a second writer, as another process would be).
    func execute(_ sql: String) throws {
        var handle: OpaquePointer?
        guard sqlite3_open(url.path, &handle) == SQLITE_OK else {
            sqlite3_close(handle)
            throw CocoaError(.fileReadUnknown)
        }
        defer { sqlite3_close(handle) }
        sqlite3_busy_timeout(handle, 5000)
        var message: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(handle, sql, nil, nil, &message) == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? "?"
            sqlite3_free(message)
            throw TestFailure("\(sql): \(text)")
        }
    }

    func cleanUp() { try? FileManager.default.removeItem(at: directory) }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A driver over `store` in virtual time (timers fire only when the test says), with the
/// test app attached and launched, a handler registered for every identifier it names.
func makeDriver(store: SchedulerStore, log: BGDiagnosticLog = .collecting(), clock: VirtualClock = VirtualClock(start: testStart)) -> (SchedulerDriver, BGAppContext) {
    let driver = SchedulerDriver(clock: clock, store: store, log: log, policies: .foundation, meter: nil)
    let context = BGAppContext(app: testApp, manifest: testManifest, driver: driver)
    context.withCurrent {
        context.application.launch()
        for identifier in testManifest.permittedIdentifiers where !identifier.hasSuffix("*") {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { $0.setTaskCompleted(success: true) }
        }
        context.application.finishLaunching(activate: false)
    }
    return (driver, context)
}

/// A processing request for `identifier`, an hour after `testStart` (nothing launches).
func laterRequest(_ identifier: String, submittedAt: Date = testStart) -> PendingRequest {
    PendingRequest(app: testApp, identifier: identifier, kind: .processing, earliestBeginDate: testStart.addingTimeInterval(3600), submittedAt: submittedAt)
}

/// Sorted by key, so stores and drivers that order differently compare.
func byKey(_ requests: [PendingRequest]) -> [PendingRequest] { requests.sorted { $0.key < $1.key } }

@Suite("Driver consistency") struct DriverConsistencyTests {
    // MARK: Cancel

    @Test func cancelThatCannotDeleteKeepsTheRequestInMemoryAsOnDisk() throws {
        let file = try TemporaryStoreFile()
        defer { file.cleanUp() }
        let log = BGDiagnosticLog.collecting()
        let (driver, _) = makeDriver(store: try file.open(), log: log)
        try driver.submit(laterRequest(processingID))
        try driver.submit(laterRequest("com.example.test.p1"))
        try file.execute("CREATE TRIGGER refuse_delete BEFORE DELETE ON pending_requests BEGIN SELECT RAISE(ABORT, 'injected failure'); END;")

        driver.cancel(RequestKey(app: testApp, identifier: processingID))
        driver.cancelAll(of: testApp)
        #expect(driver.pendingRequests(of: testApp).count == 2, "memory keeps what the disk keeps")
        #expect(try file.pendingOnDisk().count == 2)
        #expect(log.messages.filter { $0.level == .error && $0.text.contains("stay") && $0.text.contains("pending") }.count == 2)

        try file.execute("DROP TRIGGER refuse_delete;")
        driver.cancel(RequestKey(app: testApp, identifier: processingID))
        #expect(driver.pendingRequests(of: testApp).map(\.identifier) == ["com.example.test.p1"])
        driver.cancelAll(of: testApp)
        #expect(driver.pendingRequests(of: testApp).isEmpty)
        driver.store?.close()  // the process stops: its ownership ends
        let (reopened, _) = makeDriver(store: try file.open())
        #expect(reopened.allPendingRequests.isEmpty, "cancelled requests do not come back after a restart")
    }

    @Test(.timeLimit(.minutes(1)))
    func theDiagnosticsSinkRunsOutsideTheDriversLock() throws {
        let file = try TemporaryStoreFile()
        defer { file.cleanUp() }
        // The sink calls back into the driver, as an app's sink may: under the driver's
        // (non-recursive) lock this would deadlock.
        let box = Mutex<SchedulerDriver?>(nil)
        let seen = Mutex<[Int]>([])
        let log = BGDiagnosticLog { _ in
            if let driver = box.withLock({ $0 }) { seen.withLock { $0.append(driver.allPendingRequests.count) } }
        }
        let (driver, _) = makeDriver(store: try file.open(), log: log)
        box.withLock { $0 = driver }
        try driver.submit(laterRequest(processingID))
        try file.execute("CREATE TRIGGER refuse_delete BEFORE DELETE ON pending_requests BEGIN SELECT RAISE(ABORT, 'injected failure'); END;")
        driver.cancel(RequestKey(app: testApp, identifier: processingID))
        #expect(seen.withLock { $0 } == [1])
    }

    // MARK: Many threads, one driver

    /// Submits, cancels, cancels all and lists from many threads at once on one driver
    /// with a real SQLite file, then compares memory, the file and a driver reopened on it.
    @Test(.timeLimit(.minutes(1)), arguments: [UInt64(1), 2, 3])
    func concurrentSubmitsAndCancelsLeaveMemoryAndDiskAgreeing(seed: UInt64) throws {
        let file = try TemporaryStoreFile()
        defer { file.cleanUp() }
        let (driver, context) = makeDriver(store: try file.open())
        let identifiers = (0..<12).map { "com.example.test.p\($0)" } + [refreshID]
        let threads = 8
        let operations = 120
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var random = SeededRandom(seed: seed, stream: UInt64(thread))
            for _ in 0..<operations {
                let identifier = identifiers[random.int(in: 0...(identifiers.count - 1))]
                switch random.int(in: 0...99) {
                case 0..<55:
                    let request: BGTaskRequest = identifier == refreshID ? BGAppRefreshTaskRequest(identifier: identifier) : BGProcessingTaskRequest(identifier: identifier)
                    request.earliestBeginDate = testStart.addingTimeInterval(3600 + Double(random.int(in: 0...600)))
                    do {
                        try context.scheduler.submit(request)
                    } catch let error as BGTaskScheduler.Error where error.code == .tooManyPendingTaskRequests {
                        continue  // ten processing requests at most: a refusal is a right answer
                    } catch {
                        failures.withLock { $0.append("submit \(identifier): \(error)") }
                    }
                case 55..<85:
                    context.scheduler.cancel(taskRequestWithIdentifier: identifier)
                case 85..<90:
                    context.scheduler.cancelAllTaskRequests()
                default:
                    context.scheduler.getPendingTaskRequests { requests in
                        if requests.count > 11 { failures.withLock { $0.append("\(requests.count) pending") } }
                    }
                }
            }
        }
        BGTaskScheduler.callbackQueue.sync {}  // the completion handlers called so far have run
        #expect(failures.withLock { $0 }.isEmpty)
        let memory = byKey(driver.allPendingRequests)
        let disk = byKey(try file.pendingOnDisk())
        driver.store?.close()  // the process stops: its ownership ends
        let (reopened, _) = makeDriver(store: try file.open())
        #expect(memory == disk)
        #expect(byKey(reopened.allPendingRequests) == memory)
    }

    // MARK: Public API

    @Test func cancelAllTaskRequestsRemovesEveryPendingRequestOfTheApp() async throws {
        let (device, context) = try makeDevice {
            for identifier in [refreshID, processingID, "com.example.test.p1"] {
                BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { $0.setTaskCompleted(success: true) }
            }
        }
        try submit(refresh(after: 600), in: context)
        for identifier in [processingID, "com.example.test.p1"] {
            let later = BGProcessingTaskRequest(identifier: identifier)
            later.earliestBeginDate = Date(timeIntervalSinceNow: 3600)
            try submit(later, in: context)
        }
        #expect(await context.scheduler.pendingTaskRequests().count == 3)
        context.withCurrent { BGTaskScheduler.shared.cancelAllTaskRequests() }
        #expect(device.driver.pendingRequests(of: testApp).isEmpty)
        await device.run(for: 7200)
        #expect(device.runs().isEmpty, "nothing cancelled runs")
        #expect(device.trace.filter { if case .cancelled = $0 { true } else { false } }.count == 3)
    }

    /// iOS code that holds a lock while it asks, and takes the lock in the handler (or
    /// waits for the handler on the queue it asked from), finishes: the handler runs later,
    /// on the scheduler's queue. Called on the spot it would deadlock (or trap, for
    /// `DispatchQueue.main.sync` from the main queue).
    @Test(.timeLimit(.minutes(1))) func completionHandlersRunLaterSoACallerHoldingALockCannotDeadlock() throws {
        let (_, context) = try makeDevice {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { $0.setTaskCompleted(success: true) }
        }
        let lock = Mutex(0)
        let done = DispatchSemaphore(value: 0)
        context.withCurrent {
            lock.withLock { _ in
                BGTaskScheduler.shared.getPendingTaskRequests { _ in
                    lock.withLock { $0 += 1 }
                    done.signal()
                }
                BGTaskScheduler.shared.submitTaskRequest(BGAppRefreshTaskRequest(identifier: refreshID)) { error in
                    lock.withLock { $0 += error == nil ? 10 : 100 }
                    done.signal()
                }
            }
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(lock.withLock { $0 } == 11, "both handlers ran, in call order, the submit accepted")
    }

    /// Bridges nested twelve deep (each handler waits for the next call's completion) all
    /// finish: beyond the eight levels of queues, each completion gets a queue of its own
    /// (an outside probe hung from eight levels on, when the deepest shared one).
    @Test(.timeLimit(.minutes(1))) func deeplyNestedBridgesFinish() throws {
        let (_, context) = try makeDevice {}
        @Sendable func bridge(depth: Int) -> Int {
            guard depth > 0 else { return 0 }
            let answer = Mutex<Int?>(nil)
            let done = DispatchSemaphore(value: 0)
            BGTaskScheduler.shared.getPendingTaskRequests { _ in
                let below = bridge(depth: depth - 1)
                answer.withLock { $0 = below + 1 }
                done.signal()
            }
            guard done.wait(timeout: .now() + 10) == .success else { return -1_000 }
            return answer.withLock { $0 } ?? -1_000
        }
        let reached = Mutex<Int?>(nil)
        let finished = DispatchSemaphore(value: 0)
        context.withCurrent {
            BGTaskScheduler.shared.getPendingTaskRequests { _ in
                reached.withLock { $0 = bridge(depth: 11) + 1 }
                finished.signal()
            }
        }
        #expect(finished.wait(timeout: .now() + 40) == .success)
        #expect(reached.withLock { $0 } == 12)
    }

    /// A completion handler that waits for a nested call's completion (iOS code bridging the
    /// API synchronously with a semaphore) is not waiting on itself: the nested completion
    /// runs on the next level's queue (found by an outside probe: it hung for ever, and every
    /// later completion handler of the process with it).
    @Test(.timeLimit(.minutes(1))) func aCompletionHandlerMayWaitForANestedCallsCompletion() throws {
        let (_, context) = try makeDevice {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { $0.setTaskCompleted(success: true) }
        }
        let outcomes = Mutex<[String]>([])
        let done = DispatchSemaphore(value: 0)
        context.withCurrent {
            BGTaskScheduler.shared.getPendingTaskRequests { _ in
                let inner = DispatchSemaphore(value: 0)
                // From inside a queue.sync of the app's own: still a nested call.
                let appQueue = DispatchQueue(label: "app.state")
                appQueue.sync {
                BGTaskScheduler.shared.submitTaskRequest(BGAppRefreshTaskRequest(identifier: refreshID)) { error in
                    let innermost = DispatchSemaphore(value: 0)
                    BGTaskScheduler.shared.getPendingTaskRequests { requests in
                        outcomes.withLock { $0.append(requests.count <= 1 ? "pending" : "pending \(requests.count)") }
                        innermost.signal()
                    }
                    let waited = innermost.wait(timeout: .now() + 10)
                    outcomes.withLock { $0.append("submit \(error == nil) \(waited == .success)") }
                    inner.signal()
                }
                }
                let waited = inner.wait(timeout: .now() + 10)
                outcomes.withLock { $0.append("outer \(waited == .success)") }
                done.signal()
            }
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(outcomes.withLock { $0 } == ["pending", "submit true true", "outer true"])
        // Later calls from outside handlers are served as before.
        let later = DispatchSemaphore(value: 0)
        context.withCurrent { BGTaskScheduler.shared.getPendingTaskRequests { _ in later.signal() } }
        #expect(later.wait(timeout: .now() + 10) == .success)
    }

    /// An app may not schedule the system's remote wake itself in-process either (bgtaskd
    /// refuses it from an app's connection): refused as an unlisted identifier, nothing
    /// queued, and a retry policy for it is not kept.
    @Test func anAppCannotScheduleTheSystemsRemoteWakeItself() throws {
        let (_, context) = try makeDevice {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { $0.setTaskCompleted(success: true) }
        }
        let wake = "\(testApp.rawValue).remote-notification"
        let error = try #require(throws: BGTaskScheduler.Error.self) { try submit(BGAppRefreshTaskRequest(identifier: wake), in: context) }
        #expect(error.code == .notPermitted)
        #expect(error.message.contains(wake), "\(error.message)")
        #expect(context.driver.pendingRequests(of: testApp).isEmpty)
        // The fetch identifier the app's own setMinimumBackgroundFetchInterval submits stays its own.
        #expect(context.declaredManifest.systemOnlyIdentifierRefusal("\(testApp.rawValue).background-fetch", of: testApp) == nil)
    }

    @Test func getPendingTaskRequestsHandsOutCopiesOfWhatIsPending() throws {
        let (_, context) = try makeDevice {
            for identifier in [refreshID, processingID] {
                BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { $0.setTaskCompleted(success: true) }
            }
        }
        try submit(refresh(after: 600), in: context)
        let later = BGProcessingTaskRequest(identifier: processingID)
        later.requiresExternalPower = true
        later.earliestBeginDate = Date(timeIntervalSinceNow: 7200)  // from the wall clock, as iOS code does
        try submit(later, in: context)
        let received = Mutex<[BGTaskRequest]>([])
        let arrived = DispatchSemaphore(value: 0)
        let caller = pthread_self()
        let onCaller = Mutex(true)
        context.withCurrent {
            BGTaskScheduler.shared.getPendingTaskRequests { requests in
                received.withLock { $0 = requests }
                onCaller.withLock { $0 = pthread_equal(pthread_self(), caller) != 0 }
                arrived.signal()
            }
        }
        #expect(arrived.wait(timeout: .now() + 10) == .success)
        #expect(!onCaller.withLock { $0 }, "called later, on the scheduler's queue, as iOS does")
        let requests = received.withLock { $0 }.sorted { $0.identifier < $1.identifier }
        #expect(requests.map(\.identifier) == [processingID, refreshID])
        #expect(requests[0] is BGProcessingTaskRequest)
        #expect((requests[0] as? BGProcessingTaskRequest)?.requiresExternalPower == true)
        // Read back on the wall clock it was computed from (the scheduler keeps it on the
        // virtual one: below).
        let offset = requests[0].earliestBeginDate.map { $0.timeIntervalSinceNow } ?? 0
        #expect(abs(offset - 7200) < 60, "\(offset)")
        #expect(requests[1] is BGAppRefreshTaskRequest)
        // A copy: changing it changes nothing pending.
        requests[0].earliestBeginDate = nil
        #expect(context.driver.pendingRequests(of: testApp).first { $0.identifier == processingID }?.earliestBeginDate == testStart.addingTimeInterval(7200))
    }

    @Test func aTaskNotCompletedWithinItsGracePeriodIsTerminated() async throws {
        let held = Mutex<BGTask?>(nil)
        let (device, context) = try makeDevice {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { task in
                task.expirationHandler = {}  // ignores its expiration: never completes
                held.withLock { $0 = task }
            }
        }
        try submit(refresh(after: 0), in: context)
        await device.run(for: 31)
        let task = try #require(held.withLock { $0 })
        #expect(!task.isTerminated, "expired at 30 s, still within its grace period")
        await device.run(for: 5)
        #expect(task.isTerminated)
        #expect(device.runs(of: refreshID).map(\.outcome) == [.terminated])
    }

    // MARK: Background App Refresh switch

    @Test func turningTheSwitchBackOnReleasesWhatItHeldAtOnce() async throws {
        let (device, context) = try makeDevice {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { $0.setTaskCompleted(success: true) }
        }
        try submit(refresh(after: 60), in: context)
        context.application.setBackgroundRefreshEnabled(false)
        await device.run(for: 600)
        #expect(device.runs().isEmpty)
        #expect(device.driver.location(of: RequestKey(app: testApp, identifier: refreshID)) == .parkedForApp)
        context.application.setBackgroundRefreshEnabled(true)
        await device.settle()
        #expect(device.runs(of: refreshID).map(\.startedAt) == [testStart.addingTimeInterval(600)], "launched when the switch came on, not at the next foreground")
    }

    @Test func aSwitchThatCannotBeSavedDoesNotChange() throws {
        let file = try TemporaryStoreFile()
        defer { file.cleanUp() }
        let log = BGDiagnosticLog.collecting()
        let (driver, context) = makeDriver(store: try file.open(), log: log)
        try file.execute("CREATE TRIGGER refuse_switch BEFORE INSERT ON app_settings WHEN NEW.name = '\(AppSettingName.backgroundRefresh)' BEGIN SELECT RAISE(ABORT, 'injected failure'); END;")
        context.application.setBackgroundRefreshEnabled(false)
        #expect(driver.backgroundRefreshEnabled(for: testApp), "memory keeps what the disk keeps")
        #expect(log.messages.contains { $0.level == .error && $0.text.contains("Background App Refresh switch") })
        try file.execute("DROP TRIGGER refuse_switch;")
        context.application.setBackgroundRefreshEnabled(false)
        #expect(!driver.backgroundRefreshEnabled(for: testApp))
        driver.store?.close()  // the process stops: its ownership ends
        let (reopened, _) = makeDriver(store: try file.open())
        #expect(!reopened.backgroundRefreshEnabled(for: testApp))
    }

    // MARK: Retry policy

    @Test func aRequestTheAppSubmittedBeforeFailingStandsInsteadOfTheRetry() async throws {
        let (device, context) = try makeDevice {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: processingID, using: nil) { task in
                let next = BGProcessingTaskRequest(identifier: processingID)
                next.earliestBeginDate = Date(timeIntervalSinceNow: 3000)
                try? BGTaskScheduler.shared.submit(next)
                task.setTaskCompleted(success: false)
            }
            BGTaskScheduler.shared.setRetryPolicy(.fixed(60), forTaskWithIdentifier: processingID)
        }
        try submit(BGProcessingTaskRequest(identifier: processingID), in: context)
        await device.run(for: 600)
        #expect(device.runs(of: processingID).map(\.outcome) == [.failure])
        let pending = device.driver.pendingRequests(of: testApp)
        #expect(pending.map(\.earliestBeginDate) == [testStart.addingTimeInterval(3000)], "the app's own request, not a retry at 60 s")
    }

    @Test func theCountOfFailuresSurvivesARestart() async throws {
        let file = try TemporaryStoreFile()
        defer { file.cleanUp() }
        let policy = BGRetryPolicy.exponentialBackoff(initial: 60, multiplier: 2, cap: 3600)
        func install(on device: SimulatedDevice) {
            device.install(app: testApp, manifest: testManifest) {
                BGTaskScheduler.shared.register(forTaskWithIdentifier: processingID, using: nil) { $0.setTaskCompleted(success: false) }
                BGTaskScheduler.shared.setRetryPolicy(policy, forTaskWithIdentifier: processingID)
            }
        }
        let first = try SimulatedDevice(start: testStart, store: try file.open(), policies: .foundation)
        install(on: first)
        try submit(BGProcessingTaskRequest(identifier: processingID), in: try #require(first.context(of: testApp)))
        await first.run(for: 30)
        #expect(first.runs(of: processingID).count == 1)
        #expect(first.driver.pendingRequests(of: testApp).map(\.earliestBeginDate) == [testStart.addingTimeInterval(60)])

        // The process restarts: the retry is restored, fails again, and waits twice as long.
        first.driver.store?.close()
        let restart = testStart.addingTimeInterval(40)
        let second = try SimulatedDevice(start: restart, store: try file.open(now: restart), policies: .foundation)
        install(on: second)
        await second.run(for: 30)
        let failed = try #require(second.runs(of: processingID).first)
        #expect(failed.startedAt == testStart.addingTimeInterval(60))
        #expect(second.driver.pendingRequests(of: testApp).map(\.earliestBeginDate) == [testStart.addingTimeInterval(60 + 120)], "second failure in a row: 120 s")
    }

    // MARK: Virtual time

    /// The trace a handler that spends `delayBefore` of wall time, computes its next date,
    /// then spends `wallDelay` before submitting it, produces.
    static func traceOfResubmittingHandler(wallDelay: TimeInterval, delayBefore: TimeInterval = 0) async throws -> [Date] {
        let (device, context) = try makeDevice {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { task in
                // Slow app code, not a wait on the scheduler.
                if delayBefore > 0 { Thread.sleep(forTimeInterval: delayBefore) }
                let next = BGAppRefreshTaskRequest(identifier: refreshID)
                next.earliestBeginDate = Date(timeIntervalSinceNow: 900)
                if wallDelay > 0 { Thread.sleep(forTimeInterval: wallDelay) }
                try? BGTaskScheduler.shared.submit(next)
                task.setTaskCompleted(success: true)
            }
        }
        try submit(refresh(after: 900), in: context)
        await device.run(for: 2 * 900 + 1)
        return device.trace.compactMap { event in
            if case .submitted(let request, _) = event { return request.earliestBeginDate }
            return nil
        }
    }

    @Test func slowAppCodeBetweenComputingADateAndSubmittingItChangesNothing() async throws {
        let fast = try await Self.traceOfResubmittingHandler(wallDelay: 0)
        let slow = try await Self.traceOfResubmittingHandler(wallDelay: 0.5)
        #expect(fast == [900, 1800, 2700].map { testStart.addingTimeInterval($0) })
        #expect(slow == fast)
    }

    @Test func slowAppCodeBeforeComputingADateChangesNothingEither() async throws {
        let slow = try await Self.traceOfResubmittingHandler(wallDelay: 0, delayBefore: 0.5)
        #expect(slow == [900, 1800, 2700].map { testStart.addingTimeInterval($0) })
    }

    @Test func theRoundestOffsetInTheIntervalIsTheOneTheAppMeant() {
        #expect(VirtualClock.roundestOffset(from: 899.4, to: 900.6) == 900)
        #expect(VirtualClock.roundestOffset(from: 29.2, to: 30.3) == 30)
        #expect(VirtualClock.roundestOffset(from: 1.49, to: 1.52) == 1.5)
        #expect(VirtualClock.roundestOffset(from: -0.2, to: 0.3) == 0, "Date() itself: now")
        #expect(VirtualClock.roundestOffset(from: 7_199.9, to: 7_200.2) == 7_200)
        #expect(abs(VirtualClock.roundestOffset(from: 0.1229, to: 0.1236) - 0.123) < 1e-9, "a millisecond inside")
        #expect(VirtualClock.roundestOffset(from: 0.12341, to: 0.12349) == 0.12349, "no round value inside: the longest")
        #expect(VirtualClock.roundestOffset(from: -900.5, to: -899.7) == -900)
    }

    /// A modelled handler resubmits as it launches (nested in the launch's effects), for an
    /// instant before the run's budget deadline, which the launch's own wake effect asked
    /// for. That wake is superseded: the device must keep the nested, earlier one.
    @Test func aModelledDeviceAppliesNoWakeANestedEffectSuperseded() throws {
        var script = try #require(Scenario.builtIn(named: "commuter")).script(start: Simulation.defaultStart, days: 1, seed: 1)
        script.initialConditions = .favorable
        script.changes = []
        script.sessions = []
        let task = ModelledTask(identifier: processingID, kind: .processing, interval: 300, requiresNetwork: false, duration: 400, durationJitter: 0)
        var device = ModelledDevice(
            apps: [ModelledApp(app: testApp, manifest: testManifest, tasks: [task])], script: script,
            options: .init(configuration: .simulation(), policies: .foundation)
        )
        device.run(until: script.start.addingTimeInterval(301))
        let launched = try #require(device.trace.compactMap { event -> Date? in
            if case .launched(let record, _, _) = event { return record.startedAt }
            return nil
        }.first)
        #expect(device.scheduledWakeInstant == device.engineNextWake)
        #expect(device.scheduledWakeInstant == launched.addingTimeInterval(300), "the resubmitted request's due date, not the budget deadline at 600 s")
    }

    @Test func simulationsReadNoEnvironmentUnlessGiven() {
        #expect(SchedulerConfiguration.simulation().simulatedExpirationAfter == nil)
        #expect(SchedulerConfiguration.simulation(simulatesExpiration: true).simulatedExpirationAfter == 5)
        #expect(SchedulerConfiguration.simulation(environment: ["BACKGROUND_TASK_SIMULATE_EXPIRATION": "YES"]).simulatedExpirationAfter == 5)
        // The manual launch switch is for the developer's real app: a simulation still runs.
        #expect(!SchedulerConfiguration.simulation(environment: ["BGTASK_MANUAL_LAUNCH": "1"]).launchesOnlyWhenSimulated)
    }
}

// MARK: Conditions sampling

/// A timer factory that counts arms and cancels; the test fires ticks by hand.
final class CountingTimers: Sendable {
    final class Timer: SamplerTimer {
        let tick: @Sendable () -> Void
        let queue: DispatchQueue
        let cancelled = Mutex(false)
        init(tick: @escaping @Sendable () -> Void, queue: DispatchQueue) {
            self.tick = tick
            self.queue = queue
        }
        func cancel() { cancelled.withLock { $0 = true } }
    }

    private let made = Mutex<[Timer]>([])

    var factory: ArmedSampler.TimerFactory {
        { [self] _, queue, tick in
            let timer = Timer(tick: tick, queue: queue)
            made.withLock { $0.append(timer) }
            return timer
        }
    }

    var arms: Int { made.withLock { $0.count } }
    var live: [Timer] { made.withLock { $0 }.filter { !$0.cancelled.withLock { $0 } } }

    /// Fires every live timer once, on its queue, and waits for it.
    func fireAll() { for timer in live { timer.queue.sync { timer.tick() } } }
}

@Suite("Conditions sampling") struct ConditionsSamplingTests {
    @Test func samplingRunsOnlyWhileADueRequestOrARunDependsOnTheDevice() throws {
        let timers = CountingTimers()
        let (driver, _) = makeDriver(store: try SchedulerStore.inMemory())
        var unplugged = Conditions.favorable
        unplugged.externalPower = false
        let provider = FixedConditions(unplugged)
        driver.conditionsChanged(unplugged)
        ConditionsMonitor.start(provider, driver: driver, makeTimer: timers.factory)
        #expect(timers.arms == 0, "nothing pending: no timer, no wakeups")

        try driver.submit(laterRequest(processingID))
        #expect(timers.arms == 0, "due in an hour: nothing depends on a reading until then")
        #expect(!driver.dependsOnConditions)

        var needsPower = PendingRequest(app: testApp, identifier: "com.example.test.p1", kind: .processing, submittedAt: testStart)
        needsPower.requiresExternalPower = true
        try driver.submit(needsPower)
        #expect(timers.arms == 1, "a due request blocked on a reading: armed")
        #expect(timers.live.count == 1)
        try driver.submit(needsPower)
        #expect(timers.arms == 1, "already armed")

        var plugged = unplugged
        plugged.batteryLevel = 0.5
        provider.set(plugged)
        timers.fireAll()
        #expect(driver.conditions == plugged, "a tick samples the provider")

        driver.cancel(needsPower.key)
        #expect(timers.live.isEmpty, "only a request due later is left: disarmed")
        try driver.submit(needsPower)
        #expect(timers.arms == 2, "a due request came back: armed again")
        #expect(timers.live.count == 1)
    }

    @Test func anArmedSamplerDisarmsOnATickWithNothingToSample() throws {
        let timers = CountingTimers()
        let ticks = Mutex(0)
        let shouldSample = Mutex(false)
        let sampler = ArmedSampler(interval: 30, queue: DispatchQueue(label: "test.sampler"), makeTimer: timers.factory, shouldRun: { shouldSample.withLock { $0 } }) {
            ticks.withLock { $0 += 1 }
        }
        sampler.reconsider()
        #expect(timers.arms == 0)
        shouldSample.withLock { $0 = true }
        sampler.reconsider()
        timers.fireAll()
        #expect(ticks.withLock { $0 } == 1)
        // Work went without a reconsider (a lost notification): the next tick disarms.
        shouldSample.withLock { $0 = false }
        timers.fireAll()
        #expect(ticks.withLock { $0 } == 1)
        #expect(timers.live.isEmpty)
        #expect(!sampler.isArmed)
    }
}
