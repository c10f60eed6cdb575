#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Calls made, for each key, in the order they were enqueued, one at a time, never under
/// the enqueuer's lock: what the driver uses for its remote hosts (bgtaskd's app
/// supervisors, one key per app), so that a run's `launch` always reaches its host before
/// its `expire`, `terminate` or `finished`, even when two threads change the engine one
/// right after the other. Keys are independent: a host that is slow to take a call (its
/// supervisor busy freezing the app) holds up its own calls only, never another app's
/// expiration.
///
/// Enqueue while holding the lock that orders the calls (the driver's), then ``drain()``
/// after releasing it. Whoever finds a key's calls waiting and nobody making them makes
/// them, including those others enqueue meanwhile; a call that enqueues more for its own
/// key (a host reporting back into the driver) finds that key being drained and returns,
/// and its calls run next, in order. A drain inside a call (the host reporting back into the
/// driver) returns at once on that thread: the outer drain takes the other keys' calls after
/// the call returns, so calls never nest one app inside another's.
final class OrderedCalls<Key: Hashable & Sendable>: Sendable {
    private struct Queue {
        var calls: [@Sendable () -> Void] = []
        var draining = false
    }

    private struct State {
        var queues: [Key: Queue] = [:]
        /// The threads inside ``drain()`` (by `pthread_self`), so a nested drain returns.
        var drainers: Set<UInt> = []
    }

    private let state = Mutex(State())

    /// Adds `call` after every call enqueued before it for `key`.
    func enqueue(_ key: Key, _ call: @escaping @Sendable () -> Void) {
        state.withLock { $0.queues[key, default: Queue()].calls.append(call) }
    }

    /// Makes the waiting calls of every key nobody else is draining, each key's in order.
    func drain() {
        let thread = UInt(pthread_self())
        // Nothing waiting (every call of an app without remote hosts): one lock, no more.
        guard state.withLock({ !$0.queues.isEmpty && $0.drainers.insert(thread).inserted }) else { return }
        defer { _ = state.withLock { $0.drainers.remove(thread) } }
        while let key = claimKey() {
            while let batch = nextBatch(of: key) {
                for call in batch { call() }
            }
        }
    }

    /// A key with calls waiting and nobody making them, now marked as drained by the
    /// caller; nil when there is none.
    private func claimKey() -> Key? {
        state.withLock { state in
            guard let key = state.queues.first(where: { !$0.value.draining && !$0.value.calls.isEmpty })?.key else { return nil }
            state.queues[key]?.draining = true
            return key
        }
    }

    /// The calls waiting for `key` now; nil (the key no longer drained, and forgotten)
    /// when there are none.
    private func nextBatch(of key: Key) -> [@Sendable () -> Void]? {
        state.withLock { state in
            guard let calls = state.queues[key]?.calls, !calls.isEmpty else {
                state.queues[key] = nil
                return nil
            }
            state.queues[key]?.calls.removeAll()
            return calls
        }
    }
}
