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
        // Eight threads of their own on two cores: most acquisitions find the lock taken,
        // and waiters sleep in the kernel (FUTEX_LOCK_PI) until it is handed over.
        let group = DispatchGroup()
        for _ in 0..<8 {
            group.enter()
            Thread.detachNewThread {
                for _ in 0..<20_000 { counter.increment() }
                group.leave()
            }
        }
        #expect(group.wait(timeout: .now() + 120) == .success)
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

    @Test func aWaiterSleepsInTheKernelAndIsHandedTheLock() {
        let lock = Self.makeLock()
        defer { lock.deallocate() }
        let address = UInt(bitPattern: lock)
        let handedOver = DispatchSemaphore(value: 0)
        os_unfair_lock_lock(lock)
        Thread.detachNewThread {
            let pointer = UnsafeMutablePointer<os_unfair_lock>(bitPattern: address)!
            os_unfair_lock_lock(pointer)  // sleeps until the owner's unlock hands it over
            os_unfair_lock_assert_owner(pointer)
            os_unfair_lock_unlock(pointer)
            handedOver.signal()
        }
        // The kernel marks the word when a thread sleeps on it (FUTEX_WAITERS): the waiter
        // is in FUTEX_LOCK_PI, not merely not started. (The kernel, not the scheduler, sets
        // it: a bounded look, no clock of ours.)
        let waitersBit: UInt32 = 0x8000_0000
        var looks = 0
        while Self.word(lock) & waitersBit == 0, looks < 60_000 {
            looks += 1
            usleep(500)
        }
        #expect(Self.word(lock) & waitersBit != 0, "a waiter sleeps on the lock")
        os_unfair_lock_unlock(lock)  // FUTEX_UNLOCK_PI: handed to the waiter
        #expect(handedOver.wait(timeout: .now() + 30) == .success)
        #expect(lock.pointee._os_unfair_lock_opaque == 0, "released by the waiter")
    }

    /// The lock's word as it is now. While the owner (this thread) holds it, only the
    /// kernel writes it (setting FUTEX_WAITERS), which no Swift access races with; the read
    /// is through a pointer, after a system call, so it is made again each time.
    static func word(_ lock: UnsafeMutablePointer<os_unfair_lock>) -> UInt32 {
        lock.pointee._os_unfair_lock_opaque
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

        @Test func aLockWhoseOwnerThreadExitedStopsTheNextLocker() async {
            Self.expectMessage(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let lock = UnfairLockTests.makeLock()
                let address = UInt(bitPattern: lock)
                let owner = Mutex<Int32>(0)
                Thread.detachNewThread {
                    os_unfair_lock_lock(UnsafeMutablePointer<os_unfair_lock>(bitPattern: address)!)
                    // The thread's id: /proc/thread-self leads to <pid>/task/<tid>.
                    let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
                    owner.withLock { $0 = Int32((link as NSString).lastPathComponent) ?? -1 }
                }
                // Until the owner thread is gone from the process (the kernel's word for it).
                while owner.withLock({ $0 }) == 0 || access("/proc/self/task/\(owner.withLock { $0 })", F_OK) == 0 { usleep(1_000) }
                os_unfair_lock_lock(lock)
            }, "os_unfair_lock is corrupt, or owner thread exited without unlocking")
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
