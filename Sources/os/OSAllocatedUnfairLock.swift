// `OSAllocatedUnfairLock` (iOS 16), which `import os` brings on iOS and which Swift 6
// background-task code uses to share a flag between a launch handler's work and its
// expiration handler. Linux has no `os_unfair_lock`: a `pthread_mutex_t` stands in (the
// same contract: not recursive, unlocked by the thread that locked it).

import Foundation
import Synchronization

/// A lock that protects `State` (Apple: `OSAllocatedUnfairLock`). Copies share one lock and
/// one state, as Apple's do.
public struct OSAllocatedUnfairLock<State>: @unchecked Sendable {
    // @unchecked: the state is only reached under the mutex.

    /// Whether the calling thread holds the lock (for ``precondition(_:)``).
    public enum Ownership: Hashable, Sendable {
        case owner
        case notOwner
    }

    let storage: Storage

    /// Creates a lock around `initialState` without checking that it is `Sendable`.
    public init(uncheckedState initialState: State) {
        storage = Storage(initialState)
    }

    /// Runs `body` with the state, under the lock; the closure need not be `@Sendable`.
    public func withLockUnchecked<R>(_ body: (inout State) throws -> R) rethrows -> R {
        storage.lock()
        defer { storage.unlock() }
        return try body(&storage.state)
    }

    /// Runs `body` with the state, under the lock.
    public func withLock<R: Sendable>(_ body: @Sendable (inout State) throws -> R) rethrows -> R {
        try withLockUnchecked(body)
    }

    /// Runs `body` under the lock if it can be taken at once; otherwise `nil`.
    public func withLockIfAvailableUnchecked<R>(_ body: (inout State) throws -> R) rethrows -> R? {
        guard storage.tryLock() else { return nil }
        defer { storage.unlock() }
        return try body(&storage.state)
    }

    /// Runs `body` under the lock if it can be taken at once; otherwise `nil`.
    public func withLockIfAvailable<R: Sendable>(_ body: @Sendable (inout State) throws -> R) rethrows -> R? {
        try withLockIfAvailableUnchecked(body)
    }

    /// Stops the program unless the calling thread's ownership of the lock is `condition`.
    public func precondition(_ condition: Ownership) {
        let owned = storage.isOwnedByCurrentThread
        switch condition {
        // fatalError, not Swift.precondition: an optimized build would drop the message.
        case .owner: if !owned { fatalError("OSAllocatedUnfairLock is not owned by the current thread") }
        case .notOwner: if owned { fatalError("OSAllocatedUnfairLock is owned by the current thread") }
        }
    }
}

extension OSAllocatedUnfairLock where State: Sendable {
    /// Creates a lock around `initialState`.
    public init(initialState: State) {
        self.init(uncheckedState: initialState)
    }
}

extension OSAllocatedUnfairLock where State == () {
    /// Creates a lock that protects no state (code between `lock()` and `unlock()`).
    public init() {
        self.init(uncheckedState: ())
    }

    /// Takes the lock, waiting for it. Taking it again on the thread that holds it stops
    /// the program, as an unfair lock does.
    public func lock() { storage.lock() }

    /// Releases the lock, which the calling thread must hold.
    public func unlock() { storage.unlock() }

    /// Takes the lock if it is free; `false` otherwise.
    public func lockIfAvailable() -> Bool { storage.tryLock() }

    /// Runs `body` under the lock; the closure need not be `@Sendable`.
    public func withLockUnchecked<R>(_ body: () throws -> R) rethrows -> R {
        storage.lock()
        defer { storage.unlock() }
        return try body()
    }

    /// Runs `body` under the lock.
    public func withLock<R: Sendable>(_ body: @Sendable () throws -> R) rethrows -> R {
        try withLockUnchecked(body)
    }

    /// Runs `body` under the lock if it can be taken at once; otherwise `nil`.
    public func withLockIfAvailableUnchecked<R>(_ body: () throws -> R) rethrows -> R? {
        guard storage.tryLock() else { return nil }
        defer { storage.unlock() }
        return try body()
    }

    /// Runs `body` under the lock if it can be taken at once; otherwise `nil`.
    public func withLockIfAvailable<R: Sendable>(_ body: @Sendable () throws -> R) rethrows -> R? {
        try withLockIfAvailableUnchecked(body)
    }
}

extension OSAllocatedUnfairLock {
    /// The lock's one allocation, shared by every copy of the lock.
    final class Storage {
        private let mutex: UnsafeMutablePointer<pthread_mutex_t>
        /// The thread holding the lock, 0 when none (read by `precondition` from any thread).
        private let owner = Atomic<UInt>(0)
        var state: State

        init(_ state: State) {
            self.state = state
            mutex = .allocate(capacity: 1)
            mutex.initialize(to: pthread_mutex_t())
            var attributes = pthread_mutexattr_t()
            pthread_mutexattr_init(&attributes)
            // Error checking: unlocking a lock another thread holds stops the program
            // instead of corrupting it, as os_unfair_lock does.
            pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
            // Robust: a lock whose holder thread exited is reported (EOWNERDEAD) to the next
            // taker, which stops the program as os_unfair_lock does, instead of waiting for
            // ever (an outside probe).
            pthread_mutexattr_setrobust(&attributes, Int32(PTHREAD_MUTEX_ROBUST))
            pthread_mutex_init(mutex, &attributes)
            pthread_mutexattr_destroy(&attributes)
        }

        deinit {
            pthread_mutex_destroy(mutex)
            mutex.deinitialize(count: 1)
            mutex.deallocate()
        }

        private static var currentThread: UInt { UInt(pthread_self()) }

        func lock() {
            let result = pthread_mutex_lock(mutex)
            if result == EOWNERDEAD { Self.ownerExited() }
            if result != 0 { fatalError("OSAllocatedUnfairLock: lock taken again by the thread that holds it") }
            owner.store(Self.currentThread, ordering: .relaxed)
        }

        func tryLock() -> Bool {
            let result = pthread_mutex_trylock(mutex)
            if result == EOWNERDEAD { Self.ownerExited() }
            guard result == 0 else { return false }
            owner.store(Self.currentThread, ordering: .relaxed)
            return true
        }

        /// Apple's message when a thread exited holding the lock, then the stop.
        private static func ownerExited() -> Never {
            fatalError("BUG IN CLIENT OF LIBPLATFORM: os_unfair_lock is corrupt, or owner thread exited without unlocking")
        }

        func unlock() {
            owner.store(0, ordering: .relaxed)
            let result = pthread_mutex_unlock(mutex)
            if result != 0 { fatalError("OSAllocatedUnfairLock: unlocked by a thread that does not hold it") }
        }

        var isOwnedByCurrentThread: Bool { owner.load(ordering: .relaxed) == Self.currentThread }
    }
}
