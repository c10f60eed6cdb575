#if BGTASK_PTHREAD_MUTEX
import Glibc

/// `Synchronization.Mutex`'s API over a pthread mutex, for the ThreadSanitizer build only
/// (`-Xswiftc -DBGTASK_PTHREAD_MUTEX`, docs/testing.md, "ThreadSanitizer"): on Linux
/// `Mutex` is a futex the sanitizer does not see, so every access it guards reads as a
/// race; a pthread mutex is one it models. Each module that takes locks declares
/// `typealias Mutex = PthreadMutex` under the same condition (its `SanitizerMutex.swift`),
/// which shadows the imported one. Never in a shipped build: a class and an allocation per
/// lock where `Mutex` is an inline word.
///
/// `@unchecked Sendable`: `value` is read and written only between `pthread_mutex_lock`
/// and `pthread_mutex_unlock` of `lock`, which the class owns for its whole life. Looser
/// than `Mutex`, which takes and gives its values `sending`: this build does not check
/// that what goes in and out may cross threads; the normal build, with `Mutex`, does.
///
/// The value is held out of line: stored in the object, a value of no size (`Mutex(())`)
/// sits at the object's own address, which Swift reads (its class metadata) outside the lock,
/// and the sanitizer paired that read with the locked write (an outside probe: bgtaskd exited
/// 66 on such a report in ten of the daemon's tests).
public final class PthreadMutex<Value>: @unchecked Sendable {
    private let value: UnsafeMutablePointer<Value>
    private let lock: UnsafeMutablePointer<pthread_mutex_t>

    /// A mutex guarding `initialValue`.
    public init(_ initialValue: Value) {
        value = .allocate(capacity: 1)
        value.initialize(to: initialValue)
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_mutex_t())
        pthread_mutex_init(lock, nil)
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
        pthread_mutex_destroy(lock)
        lock.deinitialize(count: 1)
        lock.deallocate()
    }

    /// Runs `body` with the guarded value while holding the lock.
    public func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return try body(&value.pointee)
    }

    /// ``withLock(_:)`` when the lock is free now; `nil` without running `body` otherwise.
    public func withLockIfAvailable<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result? {
        guard pthread_mutex_trylock(lock) == 0 else { return nil }
        defer { pthread_mutex_unlock(lock) }
        return try body(&value.pointee)
    }
}
#endif
