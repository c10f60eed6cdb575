import Foundation

/// Values kept per object for classes that have no storage for them: the URL loading
/// classes' switches, an app's legacy notifications, associated objects. The object is held
/// weakly: a new object at the address of one that went does not inherit its value. Without
/// the Objective-C runtime nothing is told when an object goes, so the entries of objects that
/// went are swept after 128 writes, or a quarter of the entries if more (each sweep reads
/// every entry), and their values released then, outside the lock (a value's deinit may be
/// anything, even another write here). Behind an `NSLock`: this module takes no `Mutex`, whose
/// ThreadSanitizer stand-in is SchedulerCore's. @unchecked Sendable: `entries` and
/// `writesSinceSweep` are only read and written while `lock` is held.
package final class WeaklyKeyedTable<Object: AnyObject, Value>: @unchecked Sendable {
    private struct Entry {
        weak var object: Object?
        var value: Value
    }
    private let lock = NSLock()
    private var entries: [ObjectIdentifier: Entry] = [:]
    private var writesSinceSweep = 0

    /// An empty table.
    package init() {}

    /// The value of `object`, or nil when none was set.
    package func value(of object: Object) -> Value? {
        lock.lock()
        defer { lock.unlock() }
        guard let entry = entries[ObjectIdentifier(object)], entry.object === object else { return nil }
        return entry.value
    }

    /// Changes the value of `object` (from `initial` when none was set) and returns what
    /// `change` returns.
    @discardableResult
    package func update<Result>(_ object: Object, default initial: @autoclosure () -> Value, _ change: (inout Value) -> Result) -> Result {
        var released: [Entry] = []
        lock.lock()
        let key = ObjectIdentifier(object)
        var value: Value
        if let entry = entries[key], entry.object === object {
            value = entry.value
        } else {
            if let stale = entries[key] { released.append(stale) }
            value = initial()
        }
        let result = change(&value)
        entries[key] = Entry(object: object, value: value)
        writesSinceSweep += 1
        if writesSinceSweep >= max(128, entries.count / 4) {
            released += entries.values.filter { $0.object == nil }
            entries = entries.filter { $0.value.object != nil }
            writesSinceSweep = 0
        }
        lock.unlock()
        withExtendedLifetime(released) {}
        return result
    }

    /// Forgets the value of `object`; the value, if there was one.
    @discardableResult
    package func remove(_ object: Object) -> Value? {
        lock.lock()
        let key = ObjectIdentifier(object)
        guard let entry = entries[key], entry.object === object else {
            lock.unlock()
            return nil
        }
        entries[key] = nil
        lock.unlock()
        return entry.value
    }
}
