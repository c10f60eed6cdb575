import Synchronization

/// Calls made in the order they were enqueued, one at a time, never under the enqueuer's
/// lock: what the driver uses for its remote hosts (bgtaskd's app supervisors), so that a
/// run's `launch` always reaches its host before its `expire`, `terminate` or `finished`,
/// even when two threads change the engine one right after the other.
///
/// Enqueue while holding the lock that orders the calls (the driver's), then ``drain()``
/// after releasing it. Whoever finds nobody draining runs the calls, including those others
/// enqueue meanwhile; a call that enqueues more (a host reporting back into the driver)
/// finds the queue being drained and returns, and its calls run next, in order.
final class OrderedCalls: Sendable {
    private struct Queue {
        var calls: [@Sendable () -> Void] = []
        var draining = false
    }

    private let queue = Mutex(Queue())

    /// Adds `call` after every call enqueued before it.
    func enqueue(_ call: @escaping @Sendable () -> Void) {
        queue.withLock { $0.calls.append(call) }
    }

    /// Runs the waiting calls, in order, unless another thread is already doing so (it
    /// will run them).
    func drain() {
        let starts = queue.withLock { queue -> Bool in
            guard !queue.draining, !queue.calls.isEmpty else { return false }
            queue.draining = true
            return true
        }
        guard starts else { return }
        while let batch = nextBatch() {
            for call in batch { call() }
        }
    }

    /// The calls waiting now; nil (and no longer draining) when there are none.
    private func nextBatch() -> [@Sendable () -> Void]? {
        queue.withLock { queue in
            guard !queue.calls.isEmpty else {
                queue.draining = false
                return nil
            }
            defer { queue.calls.removeAll(keepingCapacity: true) }
            return queue.calls
        }
    }
}
