import Foundation

// Associated objects, which Apple's Foundation brings with the Objective-C runtime: Swift
// extensions store a property on a class they do not own with them
// (`objc_setAssociatedObject(self, &Keys.task, task, .OBJC_ASSOCIATION_RETAIN_NONATOMIC)`,
// a download library's tasks on its requests). Linux has no Objective-C runtime: the values
// are kept in one table by object identity, with the object held weakly. Without the
// runtime nothing is told when an object goes, so its values are released at a later sweep
// of the table, not at once (docs/porting.md, "Imports").

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

/// A weak reference to an associated object (`OBJC_ASSOCIATION_ASSIGN`).
final class WeakReference {
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
}

/// The table of associated values: each object's values by key, the object held weakly
/// (``WeaklyKeyedTable``: one made where a released one was finds nothing, and the values of
/// one that went are released at a sweep).
enum AssociatedObjects {
    /// How one value is held.
    enum Held {
        case strong(Any)
        case weak(WeakReference)

        var value: Any? {
            switch self {
            case .strong(let value): value
            case .weak(let reference): reference.object
            }
        }
    }

    private static let table = WeaklyKeyedTable<AnyObject, [UInt: Held]>()

    /// The object `object` is (an optional unwrapped), or `nil` for a value.
    static func owner(_ object: Any) -> AnyObject? {
        guard let value = ObjectSynchronization.unwrapped(object), type(of: value) is AnyClass else { return nil }
        return value as AnyObject
    }

    static func set(_ held: Held?, for owner: AnyObject, key: UInt) {
        // The value replaced is released after the table's lock, as the table releases those
        // of objects that went.
        let replaced = table.update(owner, default: [:]) { values in
            defer { values[key] = held }
            return values[key]
        }
        withExtendedLifetime(replaced) {}
    }

    static func value(for owner: AnyObject, key: UInt) -> Any? {
        table.value(of: owner)?[key]?.value
    }

    static func removeAll(for owner: AnyObject) {
        let removed = table.remove(owner)
        withExtendedLifetime(removed) {}
    }
}
