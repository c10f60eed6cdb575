import Foundation

// SDKs keep their observers in a hash table that holds them weakly
// (`NSHashTable<AnyObject>.weakObjects()`: a crash reporter's reachability observers, analytics
// and messaging SDKs' listeners: the seventeenth outside probe), so an observer that goes away
// needs no unregistering. swift-corelibs-foundation has no NSHashTable.

/// The memory and personality options of a hash table (Apple's Foundation:
/// `NSPointerFunctions.Options`, with Apple's raw values). Only the options that describe
/// objects are here: the class `NSPointerFunctions` itself (functions over arbitrary
/// pointers) is not, and ``NSHashTable`` takes ``strongMemory`` or ``weakMemory`` with
/// ``objectPersonality`` or ``objectPointerPersonality``.
public enum NSPointerFunctions {
    /// How a table holds its members (the low byte: one value, not bits) and compares them
    /// (the second byte), with Apple's raw values.
    public struct Options: OptionSet, Sendable, Hashable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }

        /// Members are held strongly (Apple's default; raw value 0).
        public static let strongMemory = Options([])
        /// Members are not retained (Apple: for pointers that are not objects). Refused by
        /// ``NSHashTable``: a Swift object cannot be held unretained safely.
        public static let opaqueMemory = Options(rawValue: 2 << 0)
        /// Members are copied from memory `malloc` gave. Refused by ``NSHashTable``.
        public static let mallocMemory = Options(rawValue: 3 << 0)
        /// Mach virtual memory. Refused by ``NSHashTable``.
        public static let machVirtualMemory = Options(rawValue: 4 << 0)
        /// Members are held weakly: one that is released leaves the table.
        public static let weakMemory = Options(rawValue: 5 << 0)
        /// Members are compared with `isEqual(_:)` and hashed with `hash` (Apple's default;
        /// raw value 0).
        public static let objectPersonality = Options([])
        /// Pointers that are not objects. Refused by ``NSHashTable``.
        public static let opaquePersonality = Options(rawValue: 1 << 8)
        /// Members are compared by identity and hashed by address.
        public static let objectPointerPersonality = Options(rawValue: 2 << 8)
        /// C strings. Refused by ``NSHashTable``.
        public static let cStringPersonality = Options(rawValue: 3 << 8)
        /// Structures of a given size. Refused by ``NSHashTable``.
        public static let structPersonality = Options(rawValue: 4 << 8)
        /// Integers. Refused by ``NSHashTable``.
        public static let integerPersonality = Options(rawValue: 5 << 8)
        /// Members are copied (`NSCopying`) as they are added. Refused by ``NSHashTable``.
        public static let copyIn = Options(rawValue: 1 << 16)
    }
}

/// Apple's `NSHashTableStrongMemory`: ``NSPointerFunctions/Options/strongMemory``.
public var NSHashTableStrongMemory: NSPointerFunctions.Options { .strongMemory }
/// Apple's `NSHashTableWeakMemory`: ``NSPointerFunctions/Options/weakMemory``.
public var NSHashTableWeakMemory: NSPointerFunctions.Options { .weakMemory }
/// Apple's `NSHashTableObjectPointerPersonality`:
/// ``NSPointerFunctions/Options/objectPointerPersonality``.
public var NSHashTableObjectPointerPersonality: NSPointerFunctions.Options { .objectPointerPersonality }

/// A set of objects that may hold its members weakly (Apple's Foundation: `NSHashTable`).
///
/// ```swift
/// let observers = NSHashTable<AnyObject>.weakObjects()
/// observers.add(observer)
/// for case let observer as ReachabilityObserver in observers.allObjects { ... }
/// ```
///
/// As Apple's:
/// - ``weakObjects()`` (weak memory, object personality) holds its members weakly: a member
///   released elsewhere leaves the table, and ``count``, ``allObjects``, ``contains(_:)``
///   no longer see it (Apple's may count it until the table is next changed; here it is gone
///   at once). ``init()`` and `init(options: .strongMemory)` hold them strongly.
/// - The object personality (the default, and ``weakObjects()``'s) compares an `NSObject`
///   with `isEqual(_:)` and its `hash`, so two equal objects are one member; an object of a
///   Swift class that does not derive from `NSObject` is compared by identity.
///   ``NSPointerFunctions/Options/objectPointerPersonality`` compares every member by
///   identity.
/// - Adding a member equal to one already there keeps the one there. Adding or asking about
///   `nil` does nothing.
/// - Not safe to change from two threads at once, or while another reads (Apple's is not
///   either): guard it with the lock that guards the state it belongs to. Reads change
///   nothing, so threads that only read may share it between changes.
///
/// Apple's `NSHashTable` is not a `Sequence` (`for x in table` does not compile on iOS
/// either): iterate ``allObjects`` or ``objectEnumerator()``. Not here: the options that
/// describe pointers that are not objects, `copyIn`, `init(pointerFunctions:capacity:)`, the
/// set operations (`union(_:)`, `intersect(_:)`, `minus(_:)`), `setRepresentation` and
/// `NSCopying`/`NSSecureCoding`: a table of other options stops the program, naming the
/// option. As on iOS, `ObjectType` must be a class or `AnyObject` (a protocol existential is
/// not a class type here, where no protocol is `@objc`: use `NSHashTable<AnyObject>`).
open class NSHashTable<ObjectType: AnyObject>: NSObject {
    /// One member: held strongly or weakly, with the hash it was filed under.
    private struct Slot {
        var strong: ObjectType?
        weak var weak: ObjectType?
        var object: ObjectType? { strong ?? weak }
    }

    private let holdsWeakly: Bool
    private let comparesByIdentity: Bool
    /// Members filed by hash; a weak member that was released reads as nil until it is swept.
    private var buckets: [Int: [Slot]] = [:]
    /// How many slots the buckets hold, released ones included.
    private var slotCount = 0
    /// Changes since the last sweep of every bucket: one is made once they reach the
    /// members that sweep left (at least 16), so that sweeping costs a constant per change (a
    /// sweep at every change made adding n observers take n² steps: an outside probe's 40,000
    /// took minutes), and released members never outnumber the live ones and the changes
    /// since by much.
    private var changesSinceSweep = 0
    /// The slots the last sweep of every bucket left.
    private var slotsAfterSweep = 0

    /// An empty table that holds its members strongly and compares them with `isEqual(_:)`
    /// (Apple: `init()`, `NSHashTableStrongMemory`).
    public override convenience init() {
        self.init(options: .strongMemory, capacity: 0)
    }

    /// An empty table with `options` (Apple: `init(options:capacity:)`; the capacity is a
    /// hint). Stops the program for an option other than strong or weak memory and object or
    /// object-pointer personality (a table of pointers that are not objects, or `copyIn`).
    public init(options: NSPointerFunctions.Options = [], capacity initialCapacity: Int) {
        let memory = options.rawValue & 0xFF
        let personality = options.rawValue & 0xFF00
        guard memory == NSPointerFunctions.Options.strongMemory.rawValue || memory == NSPointerFunctions.Options.weakMemory.rawValue else {
            fatalError("NSHashTable: memory option \(memory) is not supported on Linux (only .strongMemory and .weakMemory)")
        }
        guard personality == NSPointerFunctions.Options.objectPersonality.rawValue || personality == NSPointerFunctions.Options.objectPointerPersonality.rawValue else {
            fatalError("NSHashTable: personality option \(personality >> 8) is not supported on Linux (only .objectPersonality and .objectPointerPersonality)")
        }
        guard !options.contains(.copyIn) else {
            fatalError("NSHashTable: .copyIn is not supported on Linux")
        }
        holdsWeakly = memory == NSPointerFunctions.Options.weakMemory.rawValue
        comparesByIdentity = personality == NSPointerFunctions.Options.objectPointerPersonality.rawValue
        // A hint: a huge one (Int.max) is not reserved (reserving it stopped the program).
        buckets.reserveCapacity(min(max(0, initialCapacity), 1 << 16))
        super.init()
    }

    /// An empty table with `options` (Apple: `init(options:)`).
    public convenience init(options: NSPointerFunctions.Options) {
        self.init(options: options, capacity: 0)
    }

    /// A table that holds its members weakly and compares them with `isEqual(_:)` (Apple:
    /// `weakObjectsHashTable`).
    open class func weakObjects() -> NSHashTable<ObjectType> {
        NSHashTable(options: .weakMemory)
    }

    /// The hash a member is filed under: its address in identity personality, else an
    /// `NSObject`'s `hash` or a Swift object's address.
    private func hashOf(_ object: ObjectType) -> Int {
        if !comparesByIdentity, let object = object as? NSObject { return object.hash }
        return ObjectIdentifier(object).hashValue
    }

    /// Whether `a` and `b` are one member.
    private func same(_ a: ObjectType, _ b: ObjectType) -> Bool {
        if a === b { return true }
        if !comparesByIdentity, let a = a as? NSObject, let b = b as? NSObject { return a.isEqual(b) }
        return false
    }

    /// The member equal to `object`. Reads change nothing: released members are passed over
    /// here and swept by the next change (``add(_:)``, ``remove(_:)``), so that readers on
    /// several threads at once, which Apple's table allows between writes (a concurrent
    /// queue's reads with barrier writes, as SDKs keep their observers), never write.
    private func find(_ object: ObjectType) -> ObjectType? {
        guard let slots = buckets[hashOf(object)] else { return nil }
        return slots.lazy.compactMap(\.object).first { self.same($0, object) }
    }

    /// Every member now, released ones passed over (see ``find(_:)``).
    private func liveMembers() -> [ObjectType] {
        buckets.values.flatMap { slots in slots.compactMap(\.object) }
    }

    /// Drops the slots of released members (on a change, never on a read): those of the
    /// bucket `hash` at once, every bucket's once the changes since the last such sweep
    /// reach the members the last such sweep left (at least 16).
    private func sweepReleased(touching hash: Int) {
        guard holdsWeakly else { return }
        if let slots = buckets[hash] {
            let live = Self.live(slots)
            slotCount -= slots.count - (live?.count ?? 0)
            buckets[hash] = live
        }
        changesSinceSweep += 1
        guard changesSinceSweep >= Swift.max(16, slotsAfterSweep) else { return }
        changesSinceSweep = 0
        buckets = buckets.compactMapValues(Self.live)
        slotCount = buckets.values.reduce(0) { $0 + $1.count }
        slotsAfterSweep = slotCount
    }

    /// The slots of members not released, `nil` when none is left (the bucket goes).
    private static func live(_ slots: [Slot]) -> [Slot]? {
        let live = slots.filter { $0.object != nil }
        return live.isEmpty ? nil : live
    }

    /// Adds `object` unless an equal member is there (then the table is unchanged); `nil`
    /// adds nothing.
    open func add(_ object: ObjectType?) {
        guard let object else { return }
        let hash = hashOf(object)
        sweepReleased(touching: hash)
        guard find(object) == nil else { return }
        let slot = holdsWeakly ? Slot(strong: nil, weak: object) : Slot(strong: object, weak: nil)
        buckets[hash, default: []].append(slot)
        slotCount += 1
    }

    /// Removes the member equal to `object`, if there is one.
    open func remove(_ object: ObjectType?) {
        guard let object else { return }
        let hash = hashOf(object)
        sweepReleased(touching: hash)
        guard var slots = buckets[hash] else { return }
        let before = slots.count
        slots.removeAll { slot in slot.object.map { self.same($0, object) } ?? true }
        slotCount -= before - slots.count
        buckets[hash] = slots.isEmpty ? nil : slots
    }

    /// Whether a member is equal to `anObject`.
    open func contains(_ anObject: ObjectType?) -> Bool {
        guard let anObject else { return false }
        return find(anObject) != nil
    }

    /// The member equal to `object` (which may be another object than `object`), or `nil`.
    open func member(_ object: ObjectType?) -> ObjectType? {
        guard let object else { return nil }
        return find(object)
    }

    /// Removes every member.
    open func removeAllObjects() {
        buckets.removeAll()
        slotCount = 0
        changesSinceSweep = 0
        slotsAfterSweep = 0
    }

    /// How many slots are kept, released members not yet swept included (for tests of the
    /// sweep: at most the members the last sweep left plus twice the changes since, and
    /// 16).
    package var storedSlotCount: Int { slotCount }

    /// How many members there are: released weak members are not counted.
    open var count: Int { holdsWeakly ? liveMembers().count : slotCount }

    /// The members, in no particular order.
    open var allObjects: [ObjectType] { liveMembers() }

    /// One of the members, or `nil` when there is none.
    open var anyObject: ObjectType? { liveMembers().first }

    /// An enumerator of the members as they are now (Apple: `objectEnumerator()`); a member
    /// added later is not enumerated. `NSEnumerator` is a `Sequence`: `for case let observer
    /// as Observer in table.objectEnumerator()`.
    open func objectEnumerator() -> NSEnumerator {
        SnapshotEnumerator(liveMembers())
    }

    /// The members, as Apple's `description` lists them.
    open override var description: String {
        "NSHashTable {\n" + liveMembers().enumerated().map { "[\($0.offset)] \($0.element)\n" }.joined() + "}\n"
    }
}

/// Enumerates an array taken when it was made (``NSHashTable/objectEnumerator()``).
private final class SnapshotEnumerator: NSEnumerator {
    private var remaining: IndexingIterator<[AnyObject]>

    init(_ objects: [AnyObject]) {
        remaining = objects.makeIterator()
        super.init()
    }

    override func nextObject() -> Any? {
        remaining.next()
    }
}
