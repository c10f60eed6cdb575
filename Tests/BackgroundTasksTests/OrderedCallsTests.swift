@testable import BackgroundTasks
import Dispatch
import Synchronization
import Testing

/// The driver's remote-host calls run in the order the engine made them, whichever thread
/// gets to run them (a run's launch before its end).
@Suite("Ordered host calls") struct OrderedCallsTests {
    @Test(.timeLimit(.minutes(1)))
    func callsEnqueuedWhileAnotherThreadDrainsRunAfterItsCallsInOrder() {
        let calls = OrderedCalls()
        let made = Mutex<[String]>([])
        let firstRunning = DispatchSemaphore(value: 0)
        let secondEnqueued = DispatchSemaphore(value: 0)
        calls.enqueue {
            firstRunning.signal()
            secondEnqueued.wait()
            made.withLock { $0.append("launch") }
        }
        let drained = DispatchSemaphore(value: 0)
        DispatchQueue(label: "first").async {
            calls.drain()
            drained.signal()
        }
        firstRunning.wait()
        // Another thread, later in lock order: its drain returns at once, and its call is
        // made by the thread already draining, after the first.
        calls.enqueue { made.withLock { $0.append("finished") } }
        calls.drain()
        #expect(made.withLock { $0 }.isEmpty, "not made out of order by the second thread")
        secondEnqueued.signal()
        drained.wait()
        #expect(made.withLock { $0 } == ["launch", "finished"])
    }

    @Test func aCallThatEnqueuesMoreIsFollowedByThemWithoutDeadlock() {
        let calls = OrderedCalls()
        let made = Mutex<[Int]>([])
        calls.enqueue {
            made.withLock { $0.append(1) }
            calls.enqueue { made.withLock { $0.append(3) } }
            calls.drain()  // re-entered: returns, the outer drain makes 3
            made.withLock { $0.append(2) }
        }
        calls.drain()
        #expect(made.withLock { $0 } == [1, 2, 3])
    }
}
