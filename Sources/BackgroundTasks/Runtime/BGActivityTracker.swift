import Dispatch
import Synchronization

/// Counts app work in flight (handlers running, async handler tasks not parked), so the
/// virtual-time driver knows when everything that can run at the current instant has run
/// and time may advance. The real-time driver keeps the count too; nobody waits on it.
public final class BGActivityTracker: Sendable {
    private struct State {
        var active = 0
        var waiters: [@Sendable () -> Void] = []
        var trackedTasks: Set<Int> = []
    }

    private let state = Mutex(State())

    /// Creates a tracker with nothing in flight.
    public init() {}

    /// Work was handed to the app (a handler dispatched, a sleeper resumed).
    public func enter() {
        state.withLock { $0.active += 1 }
    }

    /// The work returned, finished, or parked on the virtual clock.
    public func leave() {
        let waiters = state.withLock { state -> [@Sendable () -> Void] in
            if state.active <= 0 { fatalError("BGActivityTracker.leave() without enter()") }
            state.active -= 1
            guard state.active == 0 else { return [] }
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter() }
    }

    /// Marks the current Swift task as tracked work (the async handler form does this),
    /// so that its sleeps on a simulated clock count as parked.
    public func trackCurrentTask() {
        guard let id = Self.currentTaskID else { return }
        state.withLock { _ = $0.trackedTasks.insert(id) }
    }

    /// Ends ``trackCurrentTask()``.
    public func untrackCurrentTask() {
        guard let id = Self.currentTaskID else { return }
        state.withLock { _ = $0.trackedTasks.remove(id) }
    }

    /// Whether the current Swift task is tracked work. Child tasks are not: their sleeps
    /// are invisible to the count, which is why simulated work belongs in the handler.
    public var isCurrentTaskTracked: Bool {
        guard let id = Self.currentTaskID else { return false }
        return state.withLock { $0.trackedTasks.contains(id) }
    }

    private static var currentTaskID: Int? {
        withUnsafeCurrentTask { $0?.hashValue }
    }

    /// Work in flight now.
    public var activeCount: Int { state.withLock { $0.active } }

    /// Returns once nothing is in flight.
    public func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            whenIdle { continuation.resume() }
        }
    }

    /// Returns `true` once nothing is in flight, or `false` when `timeout` (wall clock)
    /// passes first: a safety net for app code that blocks a thread instead of parking
    /// on the simulated clock, which would otherwise stop a simulation for good.
    ///
    /// A simulation waits like this after every step, thousands of times a simulated day:
    /// idle now, it returns at once and arms nothing; otherwise the timeout is a timer that
    /// is cancelled as soon as the work is done. (An `asyncAfter` per wait kept every
    /// timeout, and what it captured, alive for the whole wall-clock timeout: a comparison
    /// of many seeds grew by megabytes a second.)
    public func waitUntilIdle(timeout: Duration) async -> Bool {
        if activeCount == 0 { return true }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let resumed = Mutex(false)
            let timer = TimeoutTimer(queue: BGActivityTracker.timeoutQueue)
            let resume: @Sendable (Bool) -> Void = { idle in
                guard resumed.withLock({ done in defer { done = true }; return !done }) else { return }
                timer.source.cancel()  // frees the timer and its handler now, not at the deadline
                continuation.resume(returning: idle)
            }
            let (seconds, attoseconds) = timeout.components
            let nanoseconds = Int(min(max(seconds, 0), 86_400 * 365)) * 1_000_000_000 + Int(max(attoseconds, 0) / 1_000_000_000)
            timer.source.setEventHandler { resume(false) }
            timer.source.schedule(deadline: .now() + .nanoseconds(nanoseconds))
            timer.source.activate()
            whenIdle { resume(true) }
        }
    }

    /// One wait's timeout timer.
    // @unchecked: a DispatchSourceTimer is thread-safe (libdispatch sources may be
    // cancelled from any thread), just not annotated Sendable; nothing else is stored.
    private final class TimeoutTimer: @unchecked Sendable {
        let source: any DispatchSourceTimer
        init(queue: DispatchQueue) { source = DispatchSource.makeTimerSource(queue: queue) }
    }

    /// Where ``waitUntilIdle(timeout:)``'s timeouts fire: serial, not a global queue
    /// (docs/daemon.md, "Idle cost").
    private static let timeoutQueue = DispatchQueue(label: "bgtask.activity.timeouts")

    /// Calls `action` once nothing is in flight (at once when idle now).
    private func whenIdle(_ action: @escaping @Sendable () -> Void) {
        let idle = state.withLock { state -> Bool in
            if state.active == 0 { return true }
            state.waiters.append(action)
            return false
        }
        if idle { action() }
    }
}
