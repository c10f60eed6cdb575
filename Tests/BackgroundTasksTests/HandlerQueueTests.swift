import BackgroundTasks
import DaemonProtocol
import Foundation
import Synchronization
import Testing
import SchedulerCore

/// Where launch and expiration handlers run (docs/porting.md, "Queues"): a handler that
/// blocks its queue delays no other identifier's launch handler and no other run's
/// expiration handler.
@Suite struct HandlerQueueTests {
    /// An uplink that accepts everything: the runs come from the test, as bgtaskd's would.
    private final class SilentUplink: SchedulerUplink {
        func call(_ request: AppRequest) throws(DaemonFailure) -> Reply { .done(nil) }
        func post(_ request: AppRequest) {}
        var daemonDescription: String { "a silent uplink" }
    }

    /// A gate app code waits at until the test opens it (bounded, so a failing test ends).
    private final class Gate: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        func wait() { _ = semaphore.wait(timeout: .now() + 20) }
        func open() { semaphore.signal() }
    }

    /// Records that something happened, for a test waiting on another thread.
    private final class Signal: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        func fire() { semaphore.signal() }
        /// Whether it fired within 10 s.
        func waited() -> Bool { semaphore.wait(timeout: .now() + 10) == .success }
    }

    private let first = "com.example.test.p0"
    private let second = "com.example.test.p1"

    /// A linked app (its runs come from `handle(_:)`) whose handlers `register` installs.
    private func linkedApp(_ register: () -> Void) -> SchedulerDriver {
        let driver = SchedulerDriver(clock: DispatchDriverClock(), store: nil, log: .collecting(), meter: nil, uplink: SilentUplink())
        let context = BGAppContext(app: testApp, manifest: testManifest, driver: driver, launchedInBackground: true)
        context.withCurrent {
            context.application.launch()
            register()
            context.application.finishLaunching()
        }
        return driver
    }

    private func record(_ number: Int64, _ identifier: String) -> RunRecord {
        RunRecord(id: RunID(number), request: PendingRequest(app: testApp, identifier: identifier, kind: .processing, submittedAt: testStart), startedAt: Date())
    }

    @Test func aLaunchHandlerThatBlocksDoesNotDelayAnotherIdentifiersHandlerRegisteredWithoutAQueue() async {
        let gate = Gate()
        let secondStarted = Signal()
        let driver = linkedApp {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: first, using: nil) { task in
                gate.wait()
                task.setTaskCompleted(success: true)
            }
            BGTaskScheduler.shared.register(forTaskWithIdentifier: second, using: nil) { task in
                secondStarted.fire()
                task.setTaskCompleted(success: true)
            }
        }
        driver.handle(.launch(record(1, first), budget: nil))
        driver.handle(.launch(record(2, second), budget: nil))
        #expect(secondStarted.waited(), "the second identifier's handler waited for the first's queue")
        gate.open()
        #expect(await driver.activity.waitUntilIdle(timeout: .seconds(10)))
    }

    @Test func anExpirationHandlerThatBlocksDoesNotDelayAnotherRunsExpiration() async {
        let gate = Gate()
        let firstExpiring = Signal()
        let secondExpired = Signal()
        let driver = linkedApp {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: first, using: nil) { task in
                task.expirationHandler = {
                    firstExpiring.fire()
                    gate.wait()
                    task.setTaskCompleted(success: false)
                }
            }
            BGTaskScheduler.shared.register(forTaskWithIdentifier: second, using: nil) { task in
                task.expirationHandler = {
                    secondExpired.fire()
                    task.setTaskCompleted(success: false)
                }
            }
        }
        driver.handle(.launch(record(1, first), budget: nil))
        driver.handle(.launch(record(2, second), budget: nil))
        #expect(await driver.activity.waitUntilIdle(timeout: .seconds(10)), "both handlers returned")
        driver.handle(.expire(run: RunID(1), reason: "test"))
        #expect(firstExpiring.waited())
        driver.handle(.expire(run: RunID(2), reason: "test"))
        #expect(secondExpired.waited(), "the second run's expiration handler waited for the first's")
        gate.open()
        #expect(await driver.activity.waitUntilIdle(timeout: .seconds(10)))
    }
}
