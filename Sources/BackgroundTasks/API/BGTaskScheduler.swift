import Dispatch
import Foundation
import Synchronization
import SchedulerCore

/// A class for scheduling tasks run by launching the app in the background
/// (Apple: `BGTaskScheduler`).
///
/// ```swift
/// BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.refresh", using: nil) { task in
///     scheduleAppRefresh()
///     task.expirationHandler = { operation.cancel() }
///     ...
///     task.setTaskCompleted(success: true)
/// }
/// ```
///
/// `shared` is the scheduler of the app whose code is running (see ``BGAppContext``): the
/// process's own app in an ordinary program, each simulated app in the simulator.
public final class BGTaskScheduler: @unchecked Sendable {
    // @unchecked: `context` is set once, right after init, before the object is shared;
    // everything else is behind `state`.

    /// The scheduler of the app whose code is running.
    public static var shared: BGTaskScheduler { BGAppContext.resolve().scheduler }

    /// Resources continued-processing requests may require on this system.
    public static var supportedResources: BGContinuedProcessingTaskRequest.Resources {
        BGContinuedProcessingTaskRequest.Resources(names: Array(BGAppContext.resolve().driver.configuration.supportedResources))
    }

    weak var context: BGAppContext?

    struct Registration: Sendable {
        enum Handler: Sendable {
            /// `queue` is the app's, or, when it passed `nil`, a serial queue of this
            /// registration's own: a handler that blocks its queue delays no other
            /// identifier's handler.
            case closure(queue: DispatchQueue, body: @isolated(any) @Sendable (BGTask) -> Void)
            case async(priority: TaskPriority?, body: @Sendable (BGTask) async -> Bool)
        }
        let identifier: String
        let handler: Handler

        func invoke(_ task: BGTask, context: BGAppContext) {
            switch handler {
            case .closure(let queue, let body):
                context.bind(queue)
                context.invoke(LaunchHandlerCall(body: body, task: task), otherwiseOn: queue, what: "the launch handler of task '\(task.identifier)'")
            case .async(let priority, let body):
                context.driver.runAppWork { startAsync(task, context: context, priority: priority, body: body) }
            }
        }

        private func startAsync(_ task: BGTask, context: BGAppContext, priority: TaskPriority?, body: @escaping @Sendable (BGTask) async -> Bool) {
            context.driver.activity.enter()
            let work = Task(priority: priority) {
                context.driver.clock.appWorkStarted()
                context.driver.activity.trackCurrentTask()
                let success = await BGAppContext.$current.withValue(context) { await body(task) }
                if !task.isCompleted { task.setTaskCompleted(success: success) }
                context.driver.activity.untrackCurrentTask()
                context.driver.activity.leave()
            }
            task.onExpiration { work.cancel() }
        }
    }

    private struct State {
        var registrations: [String: Registration] = [:]
    }

    private let state = Mutex(State())

    init() {}

    private var requiredContext: BGAppContext {
        guard let context else { BGProgrammingError.raise("BGTaskScheduler used after its app context was released") }
        return context
    }

    // MARK: Registering

    /// Registers the launch handler for a task identifier. Call it before the app
    /// finishes launching (``BGApplication/finishLaunching()``), once per identifier.
    ///
    /// - Parameters:
    ///   - identifier: one of `BGTaskSchedulerPermittedIdentifiers` (a `prefix.*` entry
    ///     admits continued-processing identifiers, which may register later).
    ///   - queue: where the handler runs; `nil` for a background serial queue of the system.
    ///     A handler isolated to an actor runs on that actor instead: one written in a
    ///     `@MainActor` type (an `AppDelegate`) runs on the main actor, i.e. the main
    ///     queue, which the program must drain (`dispatchMain()`, `RunLoop.main.run()`, an
    ///     async `main`); after 5 s without it running, an error naming the task is logged.
    ///   - launchHandler: called with the task when the system runs it. It takes the
    ///     isolation of the code that registers it (`@isolated(any)`), as a closure passed
    ///     to `Task {}` does. As in Apple's declaration it need not be `@Sendable`: it may
    ///     capture the app's non-`Sendable` objects, and is called once per launch on its
    ///     queue or actor (what it shares with other threads is the app's to guard, as on iOS).
    /// - Returns: `false` when the identifier is not permitted by the manifest.
    /// - Precondition: not a second registration of `identifier`, and not after launch
    ///   finished (except continued processing). Apple raises an exception; this stops
    ///   the program with a message naming the identifier.
    @preconcurrency @discardableResult
    public func register(
        forTaskWithIdentifier identifier: String,
        using queue: DispatchQueue?,
        launchHandler: @escaping @isolated(any) (BGTask) -> Void
    ) -> Bool {
        // Apple's parameter is a plain `(BGTask) -> Void`: iOS code captures non-Sendable
        // services in it. The scheduler hands it to one queue or actor per launch, as iOS
        // does; `@Sendable` is not part of a function's representation, so the cast keeps
        // the closure and its isolation unchanged.
        let handler = unsafeBitCast(launchHandler, to: (@isolated(any) @Sendable (BGTask) -> Void).self)
        return register(Registration(identifier: identifier, handler: .closure(queue: queue ?? Self.defaultQueue(for: identifier), body: handler)))
    }

    /// Registers an `async` launch handler: it runs in a Swift task that is cancelled when
    /// the task expires, and its result is passed to `setTaskCompleted(success:)` unless
    /// the handler already called it. Same rules as the closure form.
    @discardableResult
    public func register(
        forTaskWithIdentifier identifier: String,
        priority: TaskPriority? = nil,
        launchHandler: @escaping @Sendable (BGTask) async -> Bool
    ) -> Bool {
        register(Registration(identifier: identifier, handler: .async(priority: priority, body: launchHandler)))
    }

    /// Registers a handler of the system's own (the legacy fetch API's), at any time,
    /// replacing an earlier one: it is not the app's registration, so the launch window
    /// and duplicate rules do not apply.
    func registerInternally(forTaskWithIdentifier identifier: String, launchHandler: @escaping @Sendable (BGTask) -> Void) {
        state.withLock { state in
            // A replacement keeps the queue: a queue that ran a handler carries the app's
            // context (`setSpecific`), and releasing such a queue has libdispatch free the
            // value with a block on a global queue (docs/daemon.md, "Idle cost").
            var queue = Self.defaultQueue(for: identifier)
            if case .closure(let existing, _)? = state.registrations[identifier]?.handler { queue = existing }
            state.registrations[identifier] = Registration(identifier: identifier, handler: .closure(queue: queue, body: launchHandler))
        }
    }

    /// The "default background queue" of a registration made with `using: nil`: serial, and
    /// one per identifier (two identifiers' handlers never wait for each other). Given a QoS,
    /// not a global queue as target: a serial queue targeting `.global(qos:)` runs on the
    /// non-overcommit pool, whose first block starts libdispatch's worker-pool monitor (a
    /// wakeup a second for the rest of the process's life, docs/daemon.md "Idle cost").
    private static func defaultQueue(for identifier: String) -> DispatchQueue {
        DispatchQueue(label: "bgtask.handler.\(identifier)", qos: .utility)
    }

    private func register(_ registration: Registration) -> Bool {
        let context = requiredContext
        let identifier = registration.identifier
        let verdict = state.withLock { state -> RegistrationVerdict in
            let verdict = RegistrationRules.verdict(
                for: identifier,
                manifest: context.manifest,
                hasFinishedLaunching: context.application.hasFinishedLaunching,
                alreadyRegistered: state.registrations[identifier] != nil
            )
            if verdict == .accept { state.registrations[identifier] = registration }
            return verdict
        }
        switch verdict {
        case .accept:
            return true
        case .notPermitted(let message):
            context.driver.log(.error, app: context.app, "register(forTaskWithIdentifier:) refused: \(message)")
            return false
        case .programmingError(let message):
            BGProgrammingError.raise(message)
        }
    }

    /// The identifiers with a registered handler (the app's and the system's own).
    var registeredIdentifiers: [String] { state.withLock { Array($0.registrations.keys) } }

    /// Whether a launch handler is registered for exactly `identifier` (SwiftUI's
    /// `.backgroundTask` leaves an identifier the app registered itself to the app's handler).
    package func hasLaunchHandler(forTaskWithIdentifier identifier: String) -> Bool {
        state.withLock { $0.registrations[identifier] != nil }
    }

    /// The registration that handles `identifier`: exact, else the longest matching
    /// `prefix.*` registration (continued processing).
    func registration(for identifier: String) -> Registration? {
        state.withLock { state in
            if let exact = state.registrations[identifier] { return exact }
            return state.registrations
                .filter { $0.key.hasSuffix(".*") && identifier.hasPrefix(String($0.key.dropLast())) && identifier.count > $0.key.count - 1 }
                .max { $0.key.count < $1.key.count }?.value
        }
    }

    /// Whether a handler is registered for `identifier`.
    public func hasRegisteredHandler(forTaskWithIdentifier identifier: String) -> Bool {
        registration(for: identifier) != nil
    }

    // MARK: Submitting

    /// Submits a request; a pending request with the same identifier is replaced. When
    /// this returns, the request is committed to disk.
    ///
    /// Checks, in order (the first that fails throws): a handler is registered for a
    /// well-formed identifier the manifest permits (a programming error otherwise, as on
    /// iOS), then the engine's checks: malformed identifier (`notPermitted`), app unknown or Background App Refresh off
    /// (`unavailable`), identifier or background mode missing from the manifest, or
    /// resource unsupported (`notPermitted`), malformed date or title (`invalidRequest`),
    /// pending limit reached (`tooManyPendingTaskRequests`), continued processing with
    /// `.fail` that cannot start now (`immediateRunIneligible`); last, the store must
    /// accept the write (`unavailable`).
    public func submit(_ taskRequest: BGTaskRequest) throws {
        let context = requiredContext
        // The system's own identifiers (the remote wake's) are scheduled by the system only,
        // unless the manifest lists them: refused as bgtaskd refuses them.
        if let refusal = context.declaredManifest.systemOnlyIdentifierRefusal(taskRequest.identifier, of: context.app) {
            throw Error(refusal)
        }
        if TaskIdentifierRules.problem(with: taskRequest.identifier) == nil,
           context.manifest.permits(identifier: taskRequest.identifier, allowWildcard: taskRequest.kind == .continuedProcessing),
           registration(for: taskRequest.identifier) == nil {
            BGProgrammingError.raise("No launch handler registered for task with identifier '\(taskRequest.identifier)'")
        }
        var record = taskRequest.pendingRequest(app: context.app, submittedAt: context.driver.clock.now())
        record.earliestBeginDate = record.earliestBeginDate.map(context.driverDate(forAppDate:))
        do {
            try context.driver.submit(record)
        } catch {
            throw Error(error)
        }
    }

    /// Submits a request (the iOS 27 `async` shape of ``submit(_:)``).
    public func submitTaskRequest(_ taskRequest: BGTaskRequest) async throws {
        try submit(taskRequest)
    }

    /// Submits a request and reports the outcome to `completionHandler` (`nil` on success).
    /// The request is submitted before this returns; the handler runs later, as on iOS,
    /// on a queue of the scheduler's own (``callbackQueue``), never on the caller's thread.
    @preconcurrency
    public func submitTaskRequest(_ taskRequest: BGTaskRequest, completionHandler: @escaping @Sendable ((any Swift.Error)?) -> Void) {
        let context = requiredContext
        let outcome: (any Swift.Error)?
        do {
            try submit(taskRequest)
            outcome = nil
        } catch {
            outcome = error
        }
        Self.callLater(in: context) { completionHandler(outcome) }
    }

    /// Cancels the pending request with `identifier` (a running task is not affected).
    public func cancel(taskRequestWithIdentifier identifier: String) {
        let context = requiredContext
        context.driver.cancel(RequestKey(app: context.app, identifier: identifier))
    }

    /// Cancels every pending request of the app.
    public func cancelAllTaskRequests() {
        let context = requiredContext
        context.driver.cancelAll(of: context.app)
    }

    /// Calls `completionHandler` with copies of the pending requests, as they are when this
    /// is called. The handler runs later, as on iOS ("may execute on a background thread"),
    /// on a queue of the scheduler's own (``callbackQueue``), never on the caller's thread:
    /// a caller that holds a lock the handler takes, or that waits for the handler on its
    /// own queue (`DispatchQueue.main.sync` from the main queue), cannot deadlock or trap.
    @preconcurrency
    public func getPendingTaskRequests(completionHandler: @escaping @Sendable ([BGTaskRequest]) -> Void) {
        let context = requiredContext
        let requests = pendingRequestCopies()
        Self.callLater(in: context) { completionHandler(requests) }
    }

    /// Where completion handlers run: serial queues (handlers of calls made at one level run
    /// in the order their calls were made), on libdispatch's overcommit pool, not a global
    /// queue (whose first block starts a pool monitor that wakes the process every second on
    /// Linux, docs/daemon.md "Idle cost"). A call made inside a completion handler gets its
    /// completion on the next level's queue: iOS code that bridges the API synchronously
    /// (a semaphore waited on in one completion handler for another's) would otherwise wait
    /// for a handler queued behind itself, for ever, and hold up every later handler.
    /// Beyond ``callbackQueues``' depth, each level gets a serial queue made when a call
    /// first needs it and dropped once its handlers have run (``deepQueues``): sharing the
    /// last level would make a ninth-level bridge wait for a handler queued behind itself (an
    /// outside probe hung so), and a queue per call would lose the order of one level.
    static let callbackQueues: [DispatchQueue] = (0..<8).map { DispatchQueue(label: "bgtask.scheduler.completion-handlers.\($0)") }

    /// The level of the completion handler running on this thread, if any. A task-local:
    /// bound around the handler in synchronous code it lives in the thread's storage, so it
    /// holds inside a `queue.sync` the handler makes (a queue-specific value would not).
    @TaskLocal private static var callbackLevel: Int?

    /// The queue for the completion of a call made now: one level below the handler the
    /// caller runs in, the first outside handlers.
    /// (Of the first eight levels: what a test waits on from outside handlers.)
    static var callbackQueue: DispatchQueue { callbackQueues[min(nextCallbackLevel, callbackQueues.count - 1)] }

    /// The level of ``callbackQueue``: one below the handler running, the first outside them.
    private static var nextCallbackLevel: Int { callbackLevel.map { $0 + 1 } ?? 0 }

    /// The queues of the levels beyond ``callbackQueues``, each with the handlers it has not
    /// run yet: a level's queue goes when its last handler has run, so a level reached once
    /// keeps nothing, and the next call there (all earlier handlers done) keeps their order.
    private static let deepQueues = Mutex<[Int: (queue: DispatchQueue, pending: Int)]>([:])

    /// Runs `work` on the queue of `level`, in the order of the calls made at that level.
    private static func enqueue(level: Int, _ work: @escaping @Sendable () -> Void) {
        guard level >= callbackQueues.count else { return callbackQueues[level].async(execute: work) }
        let queue = deepQueues.withLock { queues -> DispatchQueue in
            if var entry = queues[level] {
                entry.pending += 1
                queues[level] = entry
                return entry.queue
            }
            let made = DispatchQueue(label: "bgtask.scheduler.completion-handlers.\(level)")
            queues[level] = (made, 1)
            return made
        }
        queue.async {
            work()
            deepQueues.withLock { queues in
                guard var entry = queues[level] else { return }
                entry.pending -= 1
                queues[level] = entry.pending == 0 ? nil : entry
            }
        }
    }

    /// Runs `handler` on ``callbackQueue`` with `context` current, so that
    /// `BGTaskScheduler.shared` inside it is this app's scheduler.
    private static func callLater(in context: BGAppContext, _ handler: @escaping @Sendable () -> Void) {
        let level = nextCallbackLevel
        enqueue(level: level) { $callbackLevel.withValue(level) { context.withCurrent(handler) } }
    }

    /// Copies of the pending requests.
    public func pendingTaskRequests() async -> [BGTaskRequest] {
        pendingRequestCopies()
    }

    /// Copies of the pending requests, each `earliestBeginDate` as the app reads dates:
    /// in the simulator, on the wall clock the app computed it from (an outside probe: a
    /// date submitted as `Date(timeIntervalSinceNow: 900)` came back as the virtual clock's,
    /// days before `Date()`, so "resubmit if my request's date has passed" did).
    private func pendingRequestCopies() -> [BGTaskRequest] {
        let context = requiredContext
        return context.driver.pendingRequests(of: context.app).map { pending in
            var request = pending
            request.earliestBeginDate = pending.earliestBeginDate.map(context.appDate(forDriverDate:))
            return BGTaskRequest.make(from: request)
        }
    }

    // MARK: Testing hooks (public twins of Apple's debugger-only calls)

    /// Launches the pending task `identifier` now, whatever its date and conditions.
    /// Throws when no request with that identifier is pending (as the LLDB call fails).
    public func simulateLaunch(forTaskWithIdentifier identifier: String) throws {
        let context = requiredContext
        try context.driver.simulateLaunch(RequestKey(app: context.app, identifier: identifier))
    }

    /// Expires the running task `identifier` now. Throws when it is not running.
    public func simulateExpiration(forTaskWithIdentifier identifier: String) throws {
        let context = requiredContext
        try context.driver.simulateExpiration(RequestKey(app: context.app, identifier: identifier))
    }

    // MARK: Retry

    /// Resubmits a copy of a failed task's request after a delay, unless the app already
    /// submitted one (see ``BGRetryPolicy``). Setting a policy keeps the count of
    /// consecutive failures, which is persisted (set the policy on every launch, as you
    /// register handlers); `nil` removes the policy and forgets the count.
    public func setRetryPolicy(_ policy: BGRetryPolicy?, forTaskWithIdentifier identifier: String) {
        let context = requiredContext
        // A policy for a task the app may not submit would never apply: said, not kept.
        guard context.manifest.permits(identifier: identifier, allowWildcard: true),
              context.declaredManifest.systemOnlyIdentifierRefusal(identifier, of: context.app) == nil else {
            context.driver.log(.error, app: context.app, "setRetryPolicy(_:forTaskWithIdentifier:) ignored: \(identifier) is not in BGTaskSchedulerPermittedIdentifiers of \(context.manifest.source ?? "the manifest")")
            return
        }
        context.driver.setRetryPolicy(policy, for: RequestKey(app: context.app, identifier: identifier))
    }

    /// The app's durable checkpoint store (resume idempotent work: docs/system.md, "Best practice").
    public var checkpoints: BGCheckpointStore { BGCheckpointStore(context: requiredContext) }
}

/// Programming errors (Apple raises an uncatchable `NSInternalInconsistencyException`).
enum BGProgrammingError {
    /// Stops the program with `message` on standard error. `fatalError`, not
    /// `preconditionFailure`: an optimized build (how an app ships) drops a precondition's
    /// message and prints only "precondition failure", so the app would not learn which
    /// identifier or call was wrong.
    static func raise(_ message: String) -> Never {
        fatalError("BackgroundTasks: \(message)")
    }
}
