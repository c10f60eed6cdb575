import BackgroundTasks
import Foundation
import Synchronization
import Testing

/// `os_unfair_lock` (Sources/COSLock) as iOS code uses it: `os_unfair_lock()` in a class,
/// `os_unfair_lock_lock(&lock)` and `os_unfair_lock_unlock(&lock)` around the state.
@Suite struct UnfairLockTests {
    /// What public apps write: a lock stored beside the state it guards.
    final class Counter: @unchecked Sendable {
        // @unchecked: `value` is read and written only while `lock` is held.
        private var lock = os_unfair_lock()
        private var value = 0

        func increment() {
            os_unfair_lock_lock(&lock)
            value += 1
            os_unfair_lock_unlock(&lock)
        }

        var current: Int {
            os_unfair_lock_lock(&lock)
            defer { os_unfair_lock_unlock(&lock) }
            os_unfair_lock_assert_owner(&lock)
            return value
        }

        /// Runs `body` with the lock held by this thread.
        func whileLocked<Result>(_ body: () -> Result) -> Result {
            os_unfair_lock_lock(&lock)
            defer { os_unfair_lock_unlock(&lock) }
            return body()
        }
    }

    @Test func threadsContendingForTheLockLoseNoIncrement() {
        let counter = Counter()
        // Eight threads on two cores: most acquisitions find the lock taken, and the
        // waiters sleep in the kernel (FUTEX_LOCK_PI) until it is handed over.
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<20_000 { counter.increment() }
        }
        #expect(counter.current == 160_000)
    }

    /// A lock in memory of its own, whose address threads share (a Swift `var`'s address
    /// is valid only within the call it is passed to).
    static func makeLock() -> UnsafeMutablePointer<os_unfair_lock> {
        let lock = UnsafeMutablePointer<os_unfair_lock>.allocate(capacity: 1)
        lock.initialize(to: os_unfair_lock())
        return lock
    }

    /// Whether another thread can take `lock` now (releasing it at once when it could).
    static func takenElsewhere(_ lock: UnsafeMutablePointer<os_unfair_lock>) -> Bool {
        let address = UInt(bitPattern: lock)
        let finished = DispatchSemaphore(value: 0)
        let taken = Mutex(false)
        Thread.detachNewThread {
            let pointer = UnsafeMutablePointer<os_unfair_lock>(bitPattern: address)!
            os_unfair_lock_assert_not_owner(pointer)
            let got = os_unfair_lock_trylock(pointer)
            if got { os_unfair_lock_unlock(pointer) }
            taken.withLock { $0 = got }
            finished.signal()
        }
        finished.wait()
        return taken.withLock { $0 }
    }

    @Test func tryLockTakesOnlyAFreeLock() {
        let lock = Self.makeLock()
        defer { lock.deallocate() }
        #expect(lock.pointee._os_unfair_lock_opaque == 0, "zero is unlocked, as OS_UNFAIR_LOCK_INIT")
        #expect(os_unfair_lock_trylock(lock))
        #expect(lock.pointee._os_unfair_lock_opaque != 0, "the owner's thread id")
        #expect(!os_unfair_lock_trylock(lock), "not even by its owner")
        os_unfair_lock_assert_owner(lock)
        #expect(!Self.takenElsewhere(lock))
        os_unfair_lock_unlock(lock)
        os_unfair_lock_assert_not_owner(lock)
        #expect(Self.takenElsewhere(lock))
        #expect(lock.pointee._os_unfair_lock_opaque == 0)
    }

    @Test func aWaiterGetsTheLockWhenItsOwnerReleasesIt() {
        let counter = Counter()
        let waiting = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        counter.whileLocked {
            Thread.detachNewThread {
                waiting.signal()
                counter.increment()  // sleeps until the owner's unlock hands the lock over
                done.signal()
            }
            waiting.wait()
            #expect(done.wait(timeout: .now() + 0.05) == .timedOut, "it waits for the owner")
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(counter.current == 1)
    }
}

/// Misusing `os_unfair_lock` stops the program, as Apple's does ("BUG IN CLIENT OF
/// LIBPLATFORM"). Exit tests run each body in a child process.
extension ProcessTests {
    @Suite struct UnfairLockMisuse {
        /// Expects the child process of an exit test to have said `message`, Apple's words.
        static func expectMessage(_ result: ExitTest.Result?, _ message: String) {
            let text = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? "(no result)"
            #expect(text.contains("BUG IN CLIENT OF LIBPLATFORM: " + message), "\(text)")
        }

        @Test func lockingALockTheThreadHoldsStopsTheProgram() async {
            Self.expectMessage(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                var lock = os_unfair_lock()
                os_unfair_lock_lock(&lock)
                os_unfair_lock_lock(&lock)
            }, "Trying to recursively lock an os_unfair_lock")
        }

        @Test func unlockingALockNobodyHoldsStopsTheProgram() async {
            Self.expectMessage(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                var lock = os_unfair_lock()
                os_unfair_lock_unlock(&lock)
            }, "Unlock of an os_unfair_lock not owned by current thread")
        }

        @Test func unlockingAnotherThreadsLockStopsTheProgram() async {
            Self.expectMessage(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let lock = UnfairLockTests.makeLock()
                let address = UInt(bitPattern: lock)
                let locked = DispatchSemaphore(value: 0)
                Thread.detachNewThread {
                    os_unfair_lock_lock(UnsafeMutablePointer<os_unfair_lock>(bitPattern: address)!)
                    locked.signal()
                    while true { sleep(60) }
                }
                locked.wait()
                os_unfair_lock_unlock(lock)
            }, "Unlock of an os_unfair_lock not owned by current thread")
        }

        @Test func anOwnerAssertionThatFailsStopsTheProgram() async {
            Self.expectMessage(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                var lock = os_unfair_lock()
                os_unfair_lock_assert_owner(&lock)
            }, "Assertion failed: Lock unexpectedly not owned by current thread")
            Self.expectMessage(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                var lock = os_unfair_lock()
                os_unfair_lock_lock(&lock)
                os_unfair_lock_assert_not_owner(&lock)
            }, "Assertion failed: Lock unexpectedly owned by current thread")
        }
    }
}
