import BackgroundTasks
import BackgroundTasksTesting
import DaemonProtocol
import Foundation
import Synchronization
import Testing
import SchedulerCore

/// An uplink that records what the app tells the daemon.
private final class RecordingUplink: SchedulerUplink {
    let posted = Mutex<[AppRequest]>([])
    func call(_ request: AppRequest) throws(DaemonFailure) -> Reply { .done(nil) }
    func post(_ request: AppRequest) { posted.withLock { $0.append(request) } }
    var daemonDescription: String { "a recording uplink" }

    /// The `expirationDelivered` reports sent so far.
    var expirationReports: [AppRequest] {
        posted.withLock { $0 }.filter { if case .expirationDelivered = $0 { true } else { false } }
    }
}

/// A clock whose timers fire only when the test says so.
private final class ManualClock: DriverClock {
    private struct State {
        var now: Date
        var timers: [(instant: Date, id: Int, action: @Sendable () -> Void)] = []
        var nextID = 0
    }
    private let state: Mutex<State>

    init(start: Date) { state = Mutex(State(now: start)) }

    func now() -> Date { state.withLock { $0.now } }

    func schedule(at instant: Date, _ action: @escaping @Sendable () -> Void) -> any DriverTimer {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            state.timers.append((instant, state.nextID, action))
            return state.nextID
        }
        return Timer(clock: self, id: id)
    }

    /// The instants of the timers not yet fired or cancelled.
    var armed: [Date] { state.withLock { $0.timers.map(\.instant) } }

    /// Moves to `instant` and fires every timer due by then, in order.
    func advance(to instant: Date) {
        let due = state.withLock { state -> [@Sendable () -> Void] in
            state.now = instant
            let due = state.timers.filter { $0.instant <= instant }.sorted { $0.instant < $1.instant }
            state.timers.removeAll { $0.instant <= instant }
            return due.map(\.action)
        }
        for action in due { action() }
    }

    private struct Timer: DriverTimer {
        let clock: ManualClock
        let id: Int
        func cancel() { clock.state.withLock { $0.timers.removeAll { $0.id == id } } }
    }
}

/// Counts calls from app code on other queues.
private final class Counter: Sendable {
    private let value = Mutex(0)
    func increment() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}

/// A run handed down by bgtaskd expires at its budget's deadline by the app's own timer as
/// well as by the daemon's push, and exactly once whichever comes first (docs/daemon.md,
/// "Launching for tasks").
@Suite struct LinkedExpirationTests {
    private struct Linked {
        let clock: ManualClock
        let uplink: RecordingUplink
        let driver: SchedulerDriver
        let context: BGAppContext
        let started: Counter
        let expired: Counter
    }

    /// A linked app whose refresh handler waits for its expiration (or, with
    /// `completeAtOnce`, completes at once).
    private func linkedApp(completeAtOnce: Bool = false) -> Linked {
        let clock = ManualClock(start: testStart)
        let uplink = RecordingUplink()
        let driver = SchedulerDriver(clock: clock, store: nil, log: .collecting(), meter: nil, uplink: uplink)
        let context = BGAppContext(app: testApp, manifest: testManifest, driver: driver, launchedInBackground: true)
        let started = Counter()
        let expired = Counter()
        context.withCurrent {
            context.application.launch()
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { task in
                started.increment()
                if completeAtOnce { return task.setTaskCompleted(success: true) }
                task.expirationHandler = {
                    expired.increment()
                    task.setTaskCompleted(success: false)
                }
            }
            context.application.finishLaunching()
        }
        return Linked(clock: clock, uplink: uplink, driver: driver, context: context, started: started, expired: expired)
    }

    private func record(_ number: Int64) -> RunRecord {
        RunRecord(id: RunID(number), request: PendingRequest(app: testApp, identifier: refreshID, kind: .appRefresh, submittedAt: testStart), startedAt: testStart)
    }

    private func settle(_ linked: Linked) async {
        #expect(await linked.driver.activity.waitUntilIdle(timeout: .seconds(10)), "the app's work finished")
    }

    @Test func theAppsOwnTimerExpiresTheRunAtTheDeadlineAndTheDaemonsLatePushFindsItDone() async {
        let linked = linkedApp()
        let run = record(1)
        linked.driver.handle(.launch(run, budget: 30))
        await settle(linked)
        #expect(linked.started.count == 1)
        #expect(linked.clock.armed == [testStart.addingTimeInterval(30)], "the deadline is the daemon's: startedAt + budget")
        linked.clock.advance(to: testStart.addingTimeInterval(29.999))
        await settle(linked)
        #expect(linked.expired.count == 0, "not before the deadline")
        linked.clock.advance(to: testStart.addingTimeInterval(30))
        await settle(linked)
        #expect(linked.expired.count == 1, "expired by the app's own timer, with no push")
        #expect(linked.uplink.expirationReports == [.expirationDelivered(run: run.id, handlerWasSet: true)])
        linked.driver.handle(.expire(run: run.id, reason: "budget of 30 s exhausted"))
        await settle(linked)
        #expect(linked.expired.count == 1, "the daemon's push comes late and finds the run expired")
        #expect(linked.uplink.expirationReports.count == 1, "reported once: a second report would say no handler was set")
    }

    @Test func anEarlyPushExpiresTheRunOnceAndDisarmsTheTimer() async {
        let linked = linkedApp()
        let run = record(2)
        linked.driver.handle(.launch(run, budget: 30))
        await settle(linked)
        linked.driver.handle(.expire(run: run.id, reason: "conditions no longer met"))
        await settle(linked)
        #expect(linked.expired.count == 1)
        #expect(linked.clock.armed.isEmpty, "the deadline timer went with the expiration")
        linked.clock.advance(to: testStart.addingTimeInterval(60))
        await settle(linked)
        #expect(linked.expired.count == 1)
        #expect(linked.uplink.expirationReports == [.expirationDelivered(run: run.id, handlerWasSet: true)])
    }

    @Test func aRunThatEndsBeforeItsDeadlineLeavesNoTimer() async {
        let linked = linkedApp(completeAtOnce: true)
        var run = record(3)
        linked.driver.handle(.launch(run, budget: 30))
        await settle(linked)
        #expect(linked.clock.armed.isEmpty, "the completion disarmed it, before the daemon's word that the run is over")
        linked.clock.advance(to: testStart.addingTimeInterval(30))
        linked.driver.handle(.expire(run: run.id, reason: "budget of 30 s exhausted"))
        await settle(linked)
        #expect(linked.uplink.expirationReports.isEmpty, "a completed run is not expired, even by a late push")
        run.endedAt = testStart.addingTimeInterval(1)
        run.outcome = .success
        linked.driver.handle(.finished(run))
        #expect(linked.clock.armed.isEmpty, "the end disarms the deadline")
        linked.clock.advance(to: testStart.addingTimeInterval(60))
        await settle(linked)
        #expect(linked.uplink.expirationReports.isEmpty)
    }

    @Test func theRealClockFiresATimerOnTheQueueItIsGiven() {
        let queue = DispatchQueue(label: "linked-expiration-test.target")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 7)
        let fired = DispatchSemaphore(value: 0)
        let onQueue = Mutex<Int?>(nil)
        // An instant already past: fires at once (no wait on the wall clock).
        let timer = DispatchDriverClock().schedule(at: Date(timeIntervalSinceNow: -1), on: queue) {
            onQueue.withLock { $0 = DispatchQueue.getSpecific(key: key) }
            fired.signal()
        }
        #expect(fired.wait(timeout: .now() + 10) == .success)
        #expect(onQueue.withLock { $0 } == 7, "run on the queue given, not the clock's own")
        timer.cancel()
    }

    /// A launch whose budget no real daemon gives (1e300 s, negative, infinite) is
    /// refused, not armed: `Int(budget)` trapped the app's process before.
    @Test(arguments: [1e300, -1e300, -1, Double.infinity, Double.nan])
    func aLaunchWithAnImpossibleBudgetIsRefusedNotCrashed(budget: Double) async {
        let linked = linkedApp()
        let run = record(9)
        linked.driver.handle(.launch(run, budget: budget))
        await settle(linked)
        #expect(linked.started.count == 0)
        #expect(linked.clock.armed.isEmpty)
        #expect(linked.uplink.posted.withLock { $0 }.contains { if case .launchFailed(run.id, let reason) = $0 { reason.contains("budget") } else { false } })
    }

    @Test func aRunWithoutBudgetHasNoDeadline() async {
        let linked = linkedApp()
        linked.driver.handle(.launch(record(4), budget: nil))
        await settle(linked)
        #expect(linked.started.count == 1)
        #expect(linked.clock.armed.isEmpty)
    }

    @Test func aLaunchHandedOverAfterItsDeadlineExpiresAtOnce() async {
        let linked = linkedApp()
        linked.clock.advance(to: testStart.addingTimeInterval(45))
        let run = record(5)
        linked.driver.handle(.launch(run, budget: 30))
        await settle(linked)
        // The clock fires a timer for the past as soon as it is run (as Dispatch and the
        // virtual clock do).
        linked.clock.advance(to: testStart.addingTimeInterval(45))
        await settle(linked)
        #expect(linked.started.count == 1)
        #expect(linked.expired.count == 1)
    }
}
