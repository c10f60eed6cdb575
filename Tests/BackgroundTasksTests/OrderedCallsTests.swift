@testable import BackgroundTasks
import Dispatch
import Synchronization
import Testing

/// The driver's remote-host calls run in the order the engine made them, whichever thread
/// gets to run them (a run's launch before its end).
@Suite("Ordered host calls") struct OrderedCallsTests {
    @Test(.timeLimit(.minutes(1)))
    func aKeyStuckInACallHoldsUpOnlyItsOwnCalls() {
        let calls = OrderedCalls<String>()
        let stuck = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        let made = Mutex<[String]>([])
        calls.enqueue("a") {
            entered.signal()
            stuck.wait()
            made.withLock { $0.append("a1") }
        }
        let done = DispatchSemaphore(value: 0)
        DispatchQueue(label: "a").async {
            calls.drain()
            done.signal()
        }
        entered.wait()
        // Another app's expiration is made at once, by this thread, while app a's host is
        // busy; a's next call waits for its first and is made by the thread already
        // draining a, after it (never out of order by this thread's drain).
        calls.enqueue("a") { made.withLock { $0.append("a2") } }
        calls.enqueue("b") { made.withLock { $0.append("b1") } }
        calls.drain()
        #expect(made.withLock { $0 } == ["b1"])
        stuck.signal()
        done.wait()
        #expect(made.withLock { $0 } == ["b1", "a1", "a2"])
    }

    @Test func aCallThatEnqueuesForAnotherKeyDoesNotRunItInside() {
        let calls = OrderedCalls<String>()
        let made = Mutex<[String]>([])
        calls.enqueue("a") {
            made.withLock { $0.append("a begins") }
            calls.enqueue("b") { made.withLock { $0.append("b") } }
            calls.drain()  // nested: returns at once, b runs after this call
            made.withLock { $0.append("a ends") }
        }
        calls.drain()
        #expect(made.withLock { $0 } == ["a begins", "a ends", "b"])
    }

    @Test func aCallThatEnqueuesMoreIsFollowedByThemWithoutDeadlock() {
        let calls = OrderedCalls<String>()
        let made = Mutex<[Int]>([])
        calls.enqueue("a") {
            made.withLock { $0.append(1) }
            calls.enqueue("a") { made.withLock { $0.append(3) } }
            calls.drain()  // re-entered: returns, the outer drain makes 3
            made.withLock { $0.append(2) }
        }
        calls.drain()
        #expect(made.withLock { $0 } == [1, 2, 3])
    }
}
