import Synchronization

/// Counts app work in flight (handlers running, async handler tasks not parked), so the
/// virtual-time driver knows when everything that can run at the current instant has run
/// and time may advance. The real-time driver keeps the count too; nobody waits on it.
public final class ActivityTracker: Sendable {
    private struct State {
        var active = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
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
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            precondition(state.active > 0, "ActivityTracker.leave() without enter()")
            state.active -= 1
            guard state.active == 0 else { return [] }
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Work in flight now.
    public var activeCount: Int { state.withLock { $0.active } }

    /// Returns once nothing is in flight.
    public func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state -> Bool in
                if state.active == 0 { return true }
                state.waiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }
}
