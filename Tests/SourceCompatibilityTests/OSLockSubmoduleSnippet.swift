// `import os.lock` alone, as iOS code that guards a counter with os_unfair_lock writes it
// (the Clang submodule of Sources/COSModuleMap, which loads the Swift module os), in Swift 6
// mode with warnings as errors.
import os.lock

/// A counter behind an unfair lock, as a background upload manager keeps one.
final class SubmoduleLockedCounter: @unchecked Sendable {  // @unchecked: `count` is read and written under `lock` only.
    private let lock: UnsafeMutablePointer<os_unfair_lock> = {
        let lock = UnsafeMutablePointer<os_unfair_lock>.allocate(capacity: 1)
        lock.initialize(to: os_unfair_lock())
        return lock
    }()
    private var count = 0

    func increment() -> Int {
        os_unfair_lock_lock(lock)
        defer { os_unfair_lock_unlock(lock) }
        count += 1
        return count
    }

    deinit {
        lock.deinitialize(count: 1)
        lock.deallocate()
    }
}
