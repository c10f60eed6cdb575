import Foundation
import Synchronization
import SchedulerCore

/// An abstract background task that the system launched (Apple: `BGTask`).
///
/// The handler receives one of the subclasses (`task as! BGAppRefreshTask` works as on
/// iOS), sets ``expirationHandler``, does its work, and calls
/// ``setTaskCompleted(success:)`` exactly once. Like Apple's, it is an `NSObject`.
open class BGTask: NSObject, @unchecked Sendable {
    // @unchecked: mutable state lives in `state`, behind a mutex.

    /// The identifier of the task's request.
    public let identifier: String
    let runID: RunID
    let key: RequestKey
    let kind: TaskKind
    /// A remote wake's payload (RemoteNotifications.swift).
    let remoteNotificationPayload: String?
    weak var context: BGAppContext?
    /// Where this run's expiration handler runs (when it is not isolated to an actor): a
    /// serial queue of the run's own, apart from its launch handler's queue (so it runs
    /// while the handler's queue is busy with the work it cancels) and from every other
    /// run's (so one expiration handler that blocks delays no other run's).
    let expirationQueue: DispatchQueue

    private struct State {
        var expirationHandler: (() -> Void)?
        /// Whether ``expirationHandler`` was set on the main actor (see its documentation).
        var expirationHandlerSetOnMainActor = false
        var completed = false
        var finished = false
        var terminated = false
        /// The expiration was delivered (or is being delivered): a run expires once, whoever
        /// says so first (the daemon's push, the app's own deadline timer, a SIGTERM).
        var expirationBegun = false
        /// A linked run's own budget-deadline timer (``armDeadline(_:)``).
        var deadlineTimer: (any DriverTimer)?
        var onExpiration: [@Sendable () -> Void] = []
        /// Whether the app's lifecycle counts this run as running (from its hand-over to
        /// its handler until it is over): counted once, uncounted once.
        var countedAsRunning = false
        /// Called once the app completes the task (``whenCompleted(_:)``).
        var completionWaiters: [@Sendable () -> Void] = []
    }

    private let state = Locked(State())

    init(record: RunRecord, context: BGAppContext) {
        self.identifier = record.identifier
        self.runID = record.id
        self.key = record.request.key
        self.kind = record.request.kind
        self.remoteNotificationPayload = record.request.remoteNotificationPayload
        self.context = context
        // Serial with a QoS, not targeting `.global(qos:)` (that is the non-overcommit pool),
        // and not bound to the app's context with `setSpecific`: the queue is released with
        // the run, and libdispatch frees a released queue's specific values with a block on
        // a global queue. Either would start libdispatch's worker-pool monitor, a wakeup a
        // second for the rest of the process's life (docs/daemon.md, "Idle cost"). Nothing
        // needs the binding: everything the queue runs is app work started by
        // `BGAppContext.dispatch(on:)`, with the context current (a task-local).
        self.expirationQueue = DispatchQueue(label: "bgtask.expiration.\(record.identifier).\(record.id)", qos: .userInitiated)
    }

    static func make(for record: RunRecord, context: BGAppContext) -> BGTask {
        switch record.request.kind {
        case .appRefresh: return BGAppRefreshTask(record: record, context: context)
        case .processing: return BGProcessingTask(record: record, context: context)
        case .healthResearch: return BGHealthResearchTask(record: record, context: context)
        case .continuedProcessing: return BGContinuedProcessingTask(record: record, context: context)
        }
    }

    /// Called shortly before the task's time runs out, or early when conditions change:
    /// cancel the work, release locks, save a checkpoint, then call
    /// ``setTaskCompleted(success:)``. Cleared after it has run (it is still set while it
    /// runs) or at completion.
    /// Without one, an expired task is recorded as failed.
    ///
    /// Apple's type, `(() -> Void)?`, so that an app's protocol that copies it (`var
    /// expirationHandler: (() -> Void)? { get set }`, a common test seam) is satisfied by an
    /// empty `extension BGTask: ...`, and an earlier handler can be called synchronously.
    /// A plain closure does not say where it must run, so the handler runs where it was
    /// set: one set on the main actor (by a launch handler in a `@MainActor` type, which
    /// runs there, so the closure is main-actor isolated; or on the main thread) runs on the
    /// main actor (the main queue); any other on a queue of the run's own, so it runs even
    /// while the launch handler's queue is busy with the work it cancels.
    open var expirationHandler: (() -> Void)? {
        get { state.withLock { $0.expirationHandler } }
        set {
            let onMainActor = MainActorCheck.isCurrent
            takingExpirationHandler { state in
                state.expirationHandler = newValue
                state.expirationHandlerSetOnMainActor = onMainActor
            }
        }
    }

    /// Takes the expiration handler out of the state (leaving none), runs `update` on the
    /// state, both under the lock, and releases the handler taken after the lock is let go:
    /// the app's closure may hold the last reference to an object whose deinit calls back
    /// into this task, which under the lock would wait for ever.
    private func takingExpirationHandler<Result>(_ update: (inout State) -> Result) -> Result {
        let (result, taken) = state.withLock { state -> (Result, (() -> Void)?) in
            let taken = state.expirationHandler
            state.expirationHandler = nil
            return (update(&state), taken)
        }
        _ = taken
        return result
    }

    /// Tells the system the work is done. Call it exactly once; a second call is ignored
    /// with a warning. After expiration, call it within the grace period.
    open func setTaskCompleted(success: Bool) {
        let (first, waiters) = takingExpirationHandler { state -> (Bool, [@Sendable () -> Void]) in
            guard !state.completed else { return (false, []) }
            state.completed = true
            defer { state.completionWaiters.removeAll() }
            return (true, state.completionWaiters)
        }
        // A completed run has nothing left to expire: its own deadline timer goes.
        if first { cancelDeadline() }
        for waiter in waiters { waiter() }
        guard let context else { return }
        guard first else {
            context.driver.log(.warning, app: context.app, "setTaskCompleted(success:) called again for task '\(identifier)' (\(runID)); ignored")
            return
        }
        if state.withLock({ $0.finished }) {
            context.driver.log(.warning, app: context.app, "setTaskCompleted(success:) for task '\(identifier)' (\(runID)) came after the run was already over; ignored")
            return
        }
        context.driver.taskCompleted(runID, success: success)
    }

    /// Whether ``setTaskCompleted(success:)`` was called.
    public var isCompleted: Bool { state.withLock { $0.completed } }

    /// Whether the run was terminated by force after its grace period (in-process work
    /// cannot be killed; well-behaved code checks this or its cancellation).
    public var isTerminated: Bool { state.withLock { $0.terminated } }

    /// Registers a callback run at expiration, beside the app's expiration handler (the
    /// async handler form cancels its Swift task through this).
    func onExpiration(_ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.onExpiration.append(action) }
    }

    /// Keeps the timer of this run's budget deadline, cancelled when the run ends or
    /// expires otherwise (a linked run: SchedulerUplink.swift, "armDeadline").
    func armDeadline(_ timer: any DriverTimer) {
        let stale = state.withLock { state -> (any DriverTimer)? in
            guard !state.expirationBegun, !state.finished, !state.terminated else { return timer }
            defer { state.deadlineTimer = timer }
            return state.deadlineTimer
        }
        stale?.cancel()
    }

    /// Cancels the budget-deadline timer, if one is armed.
    private func cancelDeadline() {
        state.withLock { state -> (any DriverTimer)? in
            defer { state.deadlineTimer = nil }
            return state.deadlineTimer
        }?.cancel()
    }

    /// Calls the expiration handler (on the run's expiration queue, or on its actor when it
    /// is isolated) and reports whether one was set; returns false, and does nothing, when
    /// the run's expiration was delivered already (a run expires once).
    @discardableResult
    func deliverExpiration() -> Bool {
        guard let context else { return false }
        // A run expires once; and one that is over (completed, finished, terminated) not
        // at all: its deadline timer or a late push may still come.
        let first = state.withLock { state -> Bool in
            defer { state.expirationBegun = true }
            return !state.expirationBegun && !state.completed && !state.finished && !state.terminated
        }
        cancelDeadline()
        guard first else { return false }
        // Read on the expiration queue, at the moment the handler is due: a task completed
        // meanwhile has no handler to call.
        context.dispatch(on: expirationQueue) { [self] in
            // The handler stays set while it runs, as on iOS ("sets the value to nil after the
            // handler completes"): one that reads its own property finds itself. It is called
            // once whatever it does (the run expires once: `expirationBegun`).
            let (handler, extra, completed) = state.withLock { state -> (AppClosureCall?, [@Sendable () -> Void], Bool) in
                defer { state.onExpiration.removeAll() }
                let handler = state.completed ? nil : state.expirationHandler
                return (handler.map { AppClosureCall(plain: $0, onMainActor: state.expirationHandlerSetOnMainActor) }, state.onExpiration, state.completed)
            }
            let runID = runID
            // A task the app completed meanwhile (its completion on its way to the engine) is
            // no task without a handler: reported as handled, so the completion decides the
            // run (it was recorded "no expiration handler was set", its success dropped).
            let handlerWasSet = handler != nil || !extra.isEmpty || completed
            let finish: @Sendable () -> Void = { [self] in
                takingExpirationHandler { _ in }
                for action in extra { action() }
                context.driver.expirationDelivered(runID, handlerWasSet: handlerWasSet)
            }
            guard let handler else { return finish() }
            // Set on the main actor: there; otherwise here again.
            context.invoke(handler, otherwiseOn: expirationQueue, what: "the expiration handler of task '\(identifier)' (\(runID))", then: finish)
        }
        return true
    }

    /// The run is over (completed, failed, terminated): later completions are ignored.
    func runDidFinish(_ record: RunRecord) {
        takingExpirationHandler { $0.finished = true }
        cancelDeadline()
        noteRunOver()
    }

    /// The run is handed to its handler: the app's lifecycle counts it as running (a
    /// suspended app is resumed into the background for it).
    func noteHandedOver() {
        let first = state.withLock { state -> Bool in
            guard !state.countedAsRunning, !state.finished, !state.terminated else { return false }
            state.countedAsRunning = true
            return true
        }
        if first { context?.application.taskRunStarted() }
    }

    /// The run is over (finished or terminated): the lifecycle stops counting it.
    private func noteRunOver() {
        let counted = state.withLock { state -> Bool in
            defer { state.countedAsRunning = false }
            return state.countedAsRunning
        }
        if counted { context?.application.taskRunEnded() }
    }

    /// Calls `body` once the app has called ``setTaskCompleted(success:)`` (at once if it has).
    func whenCompleted(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            guard !state.completed else { return true }
            state.completionWaiters.append(body)
            return false
        }
        if now { body() }
    }

    /// The grace period passed without completion (or, with `advise` false, the run ended
    /// for a reason of the system's, such as the loss of bgtaskd, and the app was told by
    /// its expiration).
    func terminate(reason: String, advise: Bool = true) {
        state.withLock { $0.terminated = true }
        cancelDeadline()
        noteRunOver()
        if let context {
            let advice = advise ? "; call setTaskCompleted(success:) from the expiration handler" : ""
            context.driver.log(.warning, app: context.app, "task '\(identifier)' (\(runID)) terminated: \(reason)\(advice)")
        }
    }

    /// A measure of a continued-processing task's progress that grows when the progress
    /// moves (``BGContinuedProcessingTask`` counts the samples that saw it move); the engine
    /// expires a run whose measure did not grow since the sample before.
    var progressCompletedUnitCount: Int64 { 0 }

    override open var description: String { "<\(type(of: self)) identifier: \(identifier), \(runID)>" }
}

/// A task that refreshes the app's content (Apple: `BGAppRefreshTask`). About 30 s.
open class BGAppRefreshTask: BGTask, @unchecked Sendable {}

/// A task for deferrable heavy work (Apple: `BGProcessingTask`). Minutes.
open class BGProcessingTask: BGTask, @unchecked Sendable {}

/// A processing task for health research (Apple: `BGHealthResearchTask`).
open class BGHealthResearchTask: BGProcessingTask, @unchecked Sendable {}

/// User-started work continuing in the background with visible progress (Apple:
/// `BGContinuedProcessingTask`). Advance ``progress``: a task whose progress stalls is
/// expired. It is `ProgressReporting`, as on iOS.
open class BGContinuedProcessingTask: BGTask, ProgressReporting, @unchecked Sendable {
    private let texts: Mutex<(title: String, subtitle: String)>

    /// The task's progress, shown to the user; it must advance.
    public let progress = Progress(totalUnitCount: 100)

    override init(record: RunRecord, context: BGAppContext) {
        let options = record.request.continuedProcessing
        texts = Mutex((options?.title ?? "", options?.subtitle ?? ""))
        super.init(record: record, context: context)
    }

    /// The title shown to the user.
    public var title: String { texts.withLock { $0.title } }
    /// The subtitle shown to the user.
    public var subtitle: String { texts.withLock { $0.subtitle } }

    /// Changes the title and subtitle shown to the user.
    open func updateTitle(_ title: String, subtitle: String) {
        texts.withLock { $0 = (title, subtitle) }
    }

    /// How many samples saw ``progress`` move since the sample before: its own completed
    /// units or its fraction completed rising (the fraction counts the children the app
    /// attached, `progress.addChild(_:withPendingUnitCount:)`, the usual way for a
    /// download's or an export's progress, whose units reach the parent's
    /// `completedUnitCount` only when each child finishes: an outside probe's export advancing
    /// a child every 30 s was expired as stalled at 60 s), or its total changing (the app
    /// found more work: its fraction falls, then rises from there). Compared with the sample
    /// before, not with the most ever seen, so progress that starts again lower after the
    /// total grew still counts. The engine only compares samples, so the count stands in for
    /// the completed units its protocol names.
    override var progressCompletedUnitCount: Int64 {
        let now = (completed: progress.completedUnitCount, total: progress.totalUnitCount, fraction: progress.fractionCompleted)
        return progressSeen.withLock { seen in
            if now.completed > seen.last.completed || now.fraction > seen.last.fraction || now.total != seen.last.total {
                seen.advances += 1
            }
            seen.last = now
            return seen.advances
        }
    }

    /// ``progress`` at the sample before, and how many samples saw it move. The first
    /// sample is compared with a progress of nothing done of the default total (100).
    private let progressSeen = Mutex<(last: (completed: Int64, total: Int64, fraction: Double), advances: Int64)>(((0, 100, 0), 0))
}
