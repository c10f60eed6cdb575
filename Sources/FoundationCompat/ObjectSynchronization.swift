import Foundation

/// The recursive locks of `objc_sync_enter` and `objc_sync_exit`, by object identity: one
/// table under one lock, each entry the owning thread, its depth and how many threads wait,
/// each waiting thread parked on a condition of the table (`NSCondition`), so no lock is
/// allocated per object and an entry goes once nobody holds or waits for it.
enum ObjectSynchronization {
    /// One object's lock.
    private struct Entry {
        /// The holding thread (`pthread_self`), `nil` while free.
        var owner: pthread_t?
        /// How many times the owner took it.
        var depth = 0
        /// Threads waiting for it.
        var waiting = 0
    }

    /// The table and the condition waiters sleep on. @unchecked Sendable: the dictionary is
    /// only read and written while `condition` is locked.
    private final class Table: @unchecked Sendable {
        let condition = NSCondition()
        var entries: [ObjectIdentifier: Entry] = [:]
    }

    private static let table = Table()

    /// `object` out of any optionals around it (`nil` for an empty one), as Apple's bridging
    /// hands the runtime's functions the object an optional holds.
    static func unwrapped(_ object: Any) -> Any? {
        var value = object
        while case let mirror = Mirror(reflecting: value), mirror.displayStyle == .optional {
            guard let wrapped = mirror.children.first?.value else { return nil }
            value = wrapped
        }
        return value
    }

    /// The identity of `object`: an instance of a class, or a class, unwrapped from any
    /// optionals around it (`objc_sync_enter(weakDelegate)` locks the delegate, as Apple's
    /// bridging does); `nil` for a value or an empty optional.
    static func key(of object: Any) -> ObjectIdentifier? {
        guard let value = unwrapped(object) else { return nil }
        if let type = value as? AnyObject.Type { return ObjectIdentifier(type) }
        guard type(of: value) is AnyClass else { return nil }
        return ObjectIdentifier(value as AnyObject)
    }

    /// Takes the lock of `key` for the calling thread, waiting while another holds it.
    static func enter(_ key: ObjectIdentifier) {
        let me = pthread_self()
        let table = self.table
        table.condition.lock()
        defer { table.condition.unlock() }
        var entry = table.entries[key] ?? Entry()
        if let owner = entry.owner, pthread_equal(owner, me) != 0 {
            entry.depth += 1
            table.entries[key] = entry
            return
        }
        entry.waiting += 1
        table.entries[key] = entry
        while table.entries[key]?.owner != nil { table.condition.wait() }
        table.entries[key]?.waiting -= 1
        table.entries[key]?.owner = me
        table.entries[key]?.depth = 1
    }

    /// Releases the calling thread's hold of `key` once; `false` when it holds none.
    static func exit(_ key: ObjectIdentifier) -> Bool {
        let me = pthread_self()
        let table = self.table
        table.condition.lock()
        defer { table.condition.unlock() }
        guard var entry = table.entries[key], let owner = entry.owner, pthread_equal(owner, me) != 0 else { return false }
        entry.depth -= 1
        if entry.depth > 0 {
            table.entries[key] = entry
            return true
        }
        entry.owner = nil
        if entry.waiting == 0 {
            table.entries[key] = nil
        } else {
            table.entries[key] = entry
            table.condition.broadcast()
        }
        return true
    }
}
