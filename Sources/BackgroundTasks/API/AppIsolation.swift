import Dispatch
import Foundation
import Synchronization
import SchedulerCore

// Calling app closures where their isolation says they belong.
//
// iOS code registers handlers from main-actor types (every `AppDelegate` is `@MainActor`),
// so the closures it passes are main-actor isolated: they touch main-actor state
// synchronously. The API takes them as `@isolated(any)` functions, whose `isolation` says
// where they must run: an isolated closure is run on its actor (the main actor: the main
// dispatch queue), a nonisolated one on the queue the API documents (the handler queue,
// the expiration queue), synchronously, exactly as before. A task's expiration handler has
// Apple's plain type, which says nothing, so it runs where it was set (`MainActorCheck`).
// docs/porting.md explains it.

/// An app closure with its argument, ready to be called on its isolation.
protocol AppCall: Sendable {
    /// Where the closure must run; `nil` for anywhere.
    var isolation: (any Actor)? { get }
    /// Calls the closure. `nonisolated(nonsending)`: it runs on the caller's executor, so
    /// a nonisolated synchronous closure is called without any hop.
    nonisolated(nonsending) func call() async
    /// What to do when the call has not started on its actor after
    /// ``BGAppContext/isolatedCallStallWarning``, when the general advice does not apply.
    var stallHint: String? { get }
}

extension AppCall {
    var stallHint: String? { nil }
}

/// A launch handler and its task.
struct LaunchHandlerCall: AppCall, @unchecked Sendable {
    // @unchecked: both members are Sendable; `@isolated(any)` function values are not
    // yet recognised as such inside a struct by the checker in every position.
    let body: @isolated(any) @Sendable (BGTask) -> Void
    let task: BGTask
    var isolation: (any Actor)? { body.isolation }
    nonisolated(nonsending) func call() async { await body(task) }
}

/// An app closure without arguments: an expiration handler (a task's, or an assertion's),
/// or a call to the app delegate or a completion handler, made on the main actor as iOS
/// makes it (a `{ @MainActor in ... }` body).
struct AppClosureCall: AppCall, @unchecked Sendable {
    // @unchecked: `BGTask.expirationHandler` is not `@Sendable` (as on iOS, it is set from
    // anywhere and captures what the app likes); the handler is called once, on its
    // isolation when it has one, else on the expiration queue, never concurrently with itself.
    private enum Body {
        case isolated(@isolated(any) () -> Void)
        case plain(() -> Void)
    }
    private let body: Body
    let isolation: (any Actor)?

    /// A handler that says where it runs (an assertion's).
    init(body: @escaping @isolated(any) () -> Void) {
        self.body = .isolated(body)
        isolation = body.isolation
    }

    /// A handler of Apple's plain type (``BGTask/expirationHandler``), which does not say:
    /// on the main actor when `onMainActor`, else nonisolated.
    init(plain: @escaping () -> Void, onMainActor: Bool) {
        body = .plain(plain)
        isolation = onMainActor ? MainActor.shared : nil
    }

    /// A plain handler's place comes from where it was set, not from its isolation.
    var stallHint: String? {
        guard case .plain = body, isolation != nil else { return nil }
        return BGAppContext.undrainedMainQueue + ", or set the handler from another queue (a handler set on the main actor runs there)"
    }

    nonisolated(nonsending) func call() async {
        switch body {
        case .isolated(let body): await body()
        // Called synchronously, so it runs on the executor this call runs on (the main
        // actor's, or the expiration queue): through `@isolated(any)` with no isolation
        // it would hop to the global executor, and a main-actor closure would trap there.
        case .plain(let body): body()
        }
    }
}

/// Whether the caller runs on the main actor, for closures of Apple's plain types that
/// do not say where they must run (``BGTask/expirationHandler``).
enum MainActorCheck {
    /// Marks the main queue, once: the main actor's jobs run as its blocks, on whichever
    /// thread drains it (an async `main` drains it from a worker thread). The main queue is
    /// never released, so the value never costs a block on a global queue.
    private static let key: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// True on the main thread (top-level code, a synchronous `main`) and in the main
    /// queue's blocks (the main actor).
    static var isCurrent: Bool { Thread.isMainThread || DispatchQueue.getSpecific(key: key) == true }
}

extension BGAppContext {
    /// How long an isolated app closure may wait for its actor before the app is told why
    /// nothing happens (a main thread that runs no loop never drains the main queue).
    static let isolatedCallStallWarning: TimeInterval = 5

    /// Why a main-actor call has not started, and the usual remedy.
    static let undrainedMainQueue = "the main queue is not being drained: end main with dispatchMain() or RunLoop.main.run() (or await something in an async main)"

    /// Calls `call` as app work: on its actor when it is isolated, else synchronously on
    /// `queue`; `then` runs after it returned (on a serial queue of ours, or on `queue`). `what` names
    /// the closure in the diagnostic given when its actor does not run it within
    /// ``isolatedCallStallWarning``.
    func invoke(_ call: some AppCall, otherwiseOn queue: DispatchQueue, what: String, then: (@Sendable () -> Void)? = nil) {
        guard let isolation = call.isolation else {
            dispatch(on: queue) {
                // Starts synchronously on this thread; a nonisolated synchronous closure
                // runs to its end before `immediate` returns, on this queue.
                Task.immediate {
                    await call.call()
                    then?()
                }
            }
            return
        }
        driver.runAppWork {
            // Armed before the task starts: on the actor's own thread the call may run to
            // its end inside `immediate`, and it cancels the check when it starts.
            let stall = IsolatedCallStall(queue: BGAppContext.stallCheckQueue) { [weak self] in
                guard let self else { return }
                let actor = (isolation as AnyObject) === MainActor.shared ? "the main actor" : "actor \(type(of: isolation))"
                let hint = call.stallHint ?? ((isolation as AnyObject) === MainActor.shared
                    ? BGAppContext.undrainedMainQueue + ", or make the closure nonisolated"
                    : "that actor is busy")
                self.driver.log(.error, app: self.app, "\(what) is isolated to \(actor) and has not started after \(DurationText.spoken(BGAppContext.isolatedCallStallWarning)): \(hint)")
            }
            self.driver.activity.enter()
            // The task's own code is nonisolated: without an executor preference, once the
            // call returns from the actor the task would resume on Swift concurrency's
            // global executor (swift_task_switch -> swift_task_enqueueGlobal), a global
            // non-overcommit queue whose first block starts libdispatch's worker-pool
            // monitor, a 1 s timer for the rest of the process's life (docs/daemon.md,
            // "Idle cost"). So the task prefers a serial queue of ours: `then` and `leave`
            // run there after the call returns, off the actor (they take the driver's lock
            // and may write the store, which the app's main actor should not wait for).
            // `immediate` still starts on this thread at once, so the hop to the actor is
            // enqueued in the order of the calls.
            Task.immediate(executorPreference: BGAppContext.continuationExecutor) {
                await BGAppContext.$current.withValue(self) {
                    await BGAppContext.run(on: isolation, call, stall: stall, clock: self.driver.clock)
                }
                then?()
                self.driver.activity.leave()
            }
        }
    }

    /// Where an isolated call's task runs its nonisolated code (see ``invoke(_:otherwiseOn:what:then:)``).
    static let continuationExecutor = SerialQueueTaskExecutor(label: "bgtask.isolated-call-continuations")

    /// Where the stall diagnostic's timer fires: serial, never a global queue (docs/daemon.md, "Idle cost").
    static let stallCheckQueue = DispatchQueue(label: "bgtask.isolated-call-stall")

    /// Runs `call` on `actor` (its own isolation, so calling it does not hop).
    private static func run(on actor: isolated any Actor, _ call: some AppCall, stall: IsolatedCallStall, clock: any DriverClock) async {
        stall.started()
        // The app's code starts now, on its actor: dates it computes from the wall clock are
        // measured from here (the simulator's exact virtual dates), not from before the hop.
        clock.appWorkStarted()
        await call.call()
    }
}

/// The stall diagnostic of an isolated call: a one-shot timer on a serial queue, cancelled
/// when the call starts (a cancelled timer leaves nothing to wake the process later).
final class IsolatedCallStall: @unchecked Sendable {
    // @unchecked: DispatchSourceTimer is thread-safe, just not annotated Sendable; `flag`
    // is atomic.
    private let flag = Atomic<Bool>(false)
    private let timer: any DispatchSourceTimer

    init(queue: DispatchQueue, _ report: @escaping @Sendable () -> Void) {
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + BGAppContext.isolatedCallStallWarning)
        timer.setEventHandler { [weak self] in
            guard let self, !self.flag.load(ordering: .acquiring) else { return }
            report()
        }
        timer.activate()
    }

    /// The call started: the diagnostic is not needed.
    func started() {
        flag.store(true, ordering: .releasing)
        timer.cancel()
    }
}

/// A task executor that runs its jobs on a serial Dispatch queue of the runtime's (the
/// overcommit pool), so that the nonisolated code of a task that prefers it never reaches
/// Swift concurrency's global executor (docs/daemon.md, "Idle cost").
final class SerialQueueTaskExecutor: TaskExecutor {
    let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
