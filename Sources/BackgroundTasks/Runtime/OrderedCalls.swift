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
/// and its calls run next, in order.
final class OrderedCalls<Key: Hashable & Sendable>: Sendable {
    private struct Queue {
        var calls: [@Sendable () -> Void] = []
        var draining = false
    }

    private let queues = Mutex<[Key: Queue]>([:])

    /// Adds `call` after every call enqueued before it for `key`.
    func enqueue(_ key: Key, _ call: @escaping @Sendable () -> Void) {
        queues.withLock { $0[key, default: Queue()].calls.append(call) }
    }

    /// Makes the waiting calls of every key nobody else is draining, each key's in order.
    func drain() {
        while let key = claimKey() {
            while let batch = nextBatch(of: key) {
                for call in batch { call() }
            }
        }
    }

    /// A key with calls waiting and nobody making them, now marked as drained by the
    /// caller; nil when there is none.
    private func claimKey() -> Key? {
        queues.withLock { queues in
            guard let key = queues.first(where: { !$0.value.draining && !$0.value.calls.isEmpty })?.key else { return nil }
            queues[key]?.draining = true
            return key
        }
    }

    /// The calls waiting for `key` now; nil (the key no longer drained, and forgotten)
    /// when there are none.
    private func nextBatch(of key: Key) -> [@Sendable () -> Void]? {
        queues.withLock { queues in
            guard let calls = queues[key]?.calls, !calls.isEmpty else {
                queues[key] = nil
                return nil
            }
            queues[key]?.calls.removeAll()
            return calls
        }
    }
}
