import Foundation

// Associated objects, which Apple's Foundation brings with the Objective-C runtime: Swift
// extensions store a property on a class they do not own with them
// (`objc_setAssociatedObject(self, &Keys.task, task, .OBJC_ASSOCIATION_RETAIN_NONATOMIC)`,
// a download library's tasks on its requests). Linux has no Objective-C runtime: the values
// are kept in one table by object identity, with the object held weakly. Without the
// runtime nothing is told when an object goes, so its values are released at the next
// association made after (a table sweep), not at once (docs/porting.md, "Imports").

/// How an associated value is held (Apple: `objc_AssociationPolicy`, with its raw values).
public enum objc_AssociationPolicy: UInt, Sendable {
    /// Not retained: here held weakly when it is an object (Apple: unretained, dangling once
    /// it goes), kept as is otherwise.
    case OBJC_ASSOCIATION_ASSIGN = 0
    /// Retained.
    case OBJC_ASSOCIATION_RETAIN_NONATOMIC = 1
    /// Copied (`copy()` of an `NSCopying` value), then retained.
    case OBJC_ASSOCIATION_COPY_NONATOMIC = 3
    /// Retained (atomically on Apple's; every association is behind one lock here).
    case OBJC_ASSOCIATION_RETAIN = 769
    /// Copied, then retained.
    case OBJC_ASSOCIATION_COPY = 771
}

/// Associates `value` with `object` under `key` (Apple's ObjectiveC:
/// `objc_setAssociatedObject`); `nil` removes it. `key` is compared by address, as Apple's
/// (`&Keys.task`, a static's address). A value that is not an object (a struct, an
/// optional holding nothing) associates nothing, as Apple's needs an object too.
public func objc_setAssociatedObject(_ object: Any, _ key: UnsafeRawPointer, _ value: Any?, _ policy: objc_AssociationPolicy) {
    guard let owner = AssociatedObjects.owner(object) else { return }
    let held: AssociatedObjects.Held?
    switch (value, policy) {
    case (nil, _):
        held = nil
    case (let value?, .OBJC_ASSOCIATION_COPY_NONATOMIC), (let value?, .OBJC_ASSOCIATION_COPY):
        held = .strong((value as? NSCopying)?.copy() ?? value)
    case (let value?, .OBJC_ASSOCIATION_ASSIGN):
        held = type(of: value) is AnyClass ? .weak(WeakReference(value as AnyObject)) : .strong(value)
    case (let value?, _):
        held = .strong(value)
    }
    AssociatedObjects.set(held, for: owner, key: UInt(bitPattern: key))
}

/// The value associated with `object` under `key` (Apple's ObjectiveC:
/// `objc_getAssociatedObject`), or `nil`.
public func objc_getAssociatedObject(_ object: Any, _ key: UnsafeRawPointer) -> Any? {
    guard let owner = AssociatedObjects.owner(object) else { return nil }
    return AssociatedObjects.value(for: owner, key: UInt(bitPattern: key))
}

/// Removes every value associated with `object` (Apple's ObjectiveC:
/// `objc_removeAssociatedObjects`).
public func objc_removeAssociatedObjects(_ object: Any) {
    guard let owner = AssociatedObjects.owner(object) else { return }
    AssociatedObjects.removeAll(for: owner)
}

/// A weak reference to an associated object (`OBJC_ASSOCIATION_ASSIGN`). @unchecked
/// Sendable: a weak reference is read and written atomically by the Swift runtime, and it is
/// only read under the table's mutex.
final class WeakReference: @unchecked Sendable {
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
}

/// The table of associated values.
enum AssociatedObjects {
    /// How one value is held.
    enum Held: @unchecked Sendable {
        // @unchecked: the values are the app's, handed over to be kept and handed back as
        // they are; they are only reached under the table's mutex.
        case strong(Any)
        case weak(WeakReference)

        var value: Any? {
            switch self {
            case .strong(let value): value
            case .weak(let reference): reference.object
            }
        }
    }

    /// One object's values, with the object held weakly (an object made where a released one
    /// was does not find its values).
    private struct Entry: @unchecked Sendable {
        // @unchecked: the weak reference is only read and written under the table's mutex.
        weak var owner: AnyObject?
        var values: [UInt: Held] = [:]
    }

    private struct Table {
        var entries: [ObjectIdentifier: Entry] = [:]
        /// Associations made since the last sweep: the next comes after 128 of them, or a
        /// quarter of the table's entries if more (each sweep reads every entry).
        var setsSinceSweep = 0
    }

    /// The table behind a lock (an `NSLock`, as ObjectSynchronization's table: this module
    /// takes no `Mutex`, whose ThreadSanitizer stand-in lives in SchedulerCore). @unchecked
    /// Sendable: `table` is only read and written while `lock` is held.
    private final class Locked: @unchecked Sendable {
        let lock = NSLock()
        var table = Table()
        func withLock<Result>(_ body: (inout Table) -> Result) -> Result {
            lock.lock()
            defer { lock.unlock() }
            return body(&table)
        }
    }

    private static let table = Locked()

    /// The object `object` is (an optional unwrapped), or `nil` for a value.
    static func owner(_ object: Any) -> AnyObject? {
        guard let value = ObjectSynchronization.unwrapped(object), type(of: value) is AnyClass else { return nil }
        return value as AnyObject
    }

    static func set(_ held: Held?, for owner: AnyObject, key: UInt) {
        let released = table.withLock { table -> [Entry] in
            let identifier = ObjectIdentifier(owner)
            var released: [Entry] = []
            var entry: Entry
            if let kept = table.entries[identifier], kept.owner === owner {
                entry = kept
            } else {
                // Another object's, made where a released one was: its values go.
                if let stale = table.entries[identifier] { released.append(stale) }
                entry = Entry(owner: owner)
            }
            if let replaced = entry.values[key] { released.append(Entry(owner: nil, values: [key: replaced])) }
            entry.values[key] = held
            table.entries[identifier] = entry.values.isEmpty ? nil : entry
            // The values of objects that went are released at a sweep.
            table.setsSinceSweep += 1
            if table.setsSinceSweep >= max(128, table.entries.count / 4) {
                released += table.entries.values.filter { $0.owner == nil }
                table.entries = table.entries.filter { $0.value.owner != nil }
                table.setsSinceSweep = 0
            }
            return released
        }
        // Released after the lock: a value's deinit may be anything, even an association.
        withExtendedLifetime(released) {}
    }

    static func value(for owner: AnyObject, key: UInt) -> Any? {
        table.withLock { table in
            guard let entry = table.entries[ObjectIdentifier(owner)], entry.owner === owner else { return nil }
            return entry.values[key]?.value
        }
    }

    static func removeAll(for owner: AnyObject) {
        let removed = table.withLock { table -> Entry? in
            let identifier = ObjectIdentifier(owner)
            guard let entry = table.entries[identifier], entry.owner === owner else { return nil }
            table.entries[identifier] = nil
            return entry
        }
        withExtendedLifetime(removed) {}
    }
}
