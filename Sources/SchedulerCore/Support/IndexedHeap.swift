/// Where each key of a ``PositionedHeap`` sits in its array. The heap asks it on every
/// swap, so its cost is the heap's cost: a hash table for arbitrary keys, a plain array
/// for small dense integers.
public protocol HeapPositions {
    /// The keys the heap holds.
    associatedtype Key
    /// An empty map.
    init()
    /// The position of `key` in the heap's array, or `nil` when it is not in the heap.
    subscript(key: Key) -> Int? { get set }
    /// Makes room for `capacity` keys.
    mutating func reserveCapacity(_ capacity: Int)
}

/// Positions of arbitrary hashable keys, in a dictionary.
public struct HashedPositions<Key: Hashable>: HeapPositions {
    @usableFromInline var table: [Key: Int] = [:]

    /// An empty map.
    @inlinable public init() {}

    /// The position of `key`, or `nil`.
    @inlinable public subscript(key: Key) -> Int? {
        get { table[key] }
        set { table[key] = newValue }
    }

    /// Makes room for `capacity` keys.
    @inlinable public mutating func reserveCapacity(_ capacity: Int) { table.reserveCapacity(capacity) }
}

/// Positions of small, dense, non-negative integer keys (slot numbers), in an array
/// indexed by the key: no hashing on the heap's hot path.
public struct SlotPositions: HeapPositions {
    @usableFromInline var table: ContiguousArray<Int32> = []

    /// An empty map.
    @inlinable public init() {}

    /// The position of slot `key`, or `nil`.
    @inlinable public subscript(key: Int32) -> Int? {
        get {
            let index = Int(key)
            guard index < table.count else { return nil }
            let position = table[index]
            return position < 0 ? nil : Int(position)
        }
        set {
            let index = Int(key)
            if index >= table.count {
                guard newValue != nil else { return }
                table.append(contentsOf: repeatElement(-1, count: index - table.count + 1))
            }
            table[index] = newValue.map { Int32($0) } ?? -1
        }
    }

    /// Makes room for slots below `capacity`.
    @inlinable public mutating func reserveCapacity(_ capacity: Int) { table.reserveCapacity(capacity) }
}

/// A binary min-heap of keyed elements that also knows where each key sits, so that
/// removing or re-prioritising an arbitrary key costs O(log n) instead of a scan.
///
/// The engine keeps pending requests (by slot number) and run deadlines (by run) in
/// these; cancelling a request or finishing a run must not scan everything pending.
public struct PositionedHeap<Positions: HeapPositions, Priority: Comparable> {
    /// The keys the heap holds.
    public typealias Key = Positions.Key

    @usableFromInline var elements: [(key: Key, priority: Priority)] = []
    @usableFromInline var positions = Positions()

    /// Creates an empty heap.
    @inlinable public init() {}

    /// The number of keys in the heap.
    @inlinable public var count: Int { elements.count }
    /// Whether the heap holds no key.
    @inlinable public var isEmpty: Bool { elements.isEmpty }
    /// The key with the smallest priority, and that priority, without removing it.
    @inlinable public var min: (key: Key, priority: Priority)? { elements.first }

    /// The smallest priority of a key other than `key`: the root's, or when `key` is the
    /// root, the smaller of its two children's (the heap property puts the second
    /// smallest there).
    @inlinable public func minPriority(excluding key: Key) -> Priority? {
        guard let first = elements.first else { return nil }
        guard positions[key] == 0 else { return first.priority }
        switch elements.count {
        case 1: return nil
        case 2: return elements[1].priority
        default: return Swift.min(elements[1].priority, elements[2].priority)
        }
    }

    /// Makes room for `capacity` keys at once (bulk moves avoid repeated regrowth).
    @inlinable public mutating func reserveCapacity(_ capacity: Int) {
        elements.reserveCapacity(capacity)
        positions.reserveCapacity(capacity)
    }

    /// Whether `key` is in the heap.
    @inlinable public func contains(_ key: Key) -> Bool { positions[key] != nil }

    /// The priority of `key`, if present.
    @inlinable public func priority(of key: Key) -> Priority? { positions[key].map { elements[$0].priority } }

    /// Inserts `key`, or changes its priority when already present.
    @inlinable public mutating func update(_ key: Key, priority: Priority) {
        if let index = positions[key] {
            let old = elements[index].priority
            elements[index].priority = priority
            if priority < old { siftUp(index) } else { siftDown(index) }
        } else {
            elements.append((key, priority))
            positions[key] = elements.count - 1
            siftUp(elements.count - 1)
        }
    }

    /// Removes `key`; returns its priority when it was present.
    @discardableResult
    @inlinable public mutating func remove(_ key: Key) -> Priority? {
        guard let index = positions[key] else { return nil }
        let removed = elements[index].priority
        let last = elements.count - 1
        if index != last {
            swapAt(index, last)
        }
        elements.removeLast()
        positions[key] = nil
        if index < elements.count {
            siftDown(index)
            siftUp(index)
        }
        return removed
    }

    /// Removes and returns the key with the smallest priority.
    @inlinable public mutating func popMin() -> (key: Key, priority: Priority)? {
        guard let first = elements.first else { return nil }
        remove(first.key)
        return first
    }

    /// Every key, in the heap's array order (deterministic for a given history).
    @inlinable public var keys: [Key] { elements.map(\.key) }

    @inlinable mutating func swapAt(_ i: Int, _ j: Int) {
        elements.swapAt(i, j)
        positions[elements[i].key] = i
        positions[elements[j].key] = j
    }

    @inlinable mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard elements[child].priority < elements[parent].priority else { return }
            swapAt(child, parent)
            child = parent
        }
    }

    @inlinable mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < elements.count, elements[left].priority < elements[smallest].priority { smallest = left }
            if right < elements.count, elements[right].priority < elements[smallest].priority { smallest = right }
            guard smallest != parent else { return }
            swapAt(parent, smallest)
            parent = smallest
        }
    }
}

/// A keyed min-heap over arbitrary hashable keys.
public typealias IndexedHeap<Key: Hashable, Priority: Comparable> = PositionedHeap<HashedPositions<Key>, Priority>

/// A keyed min-heap over slot numbers (small dense integers), without hashing.
public typealias SlotHeap<Priority: Comparable> = PositionedHeap<SlotPositions, Priority>

extension HashedPositions: Sendable where Key: Sendable {}
extension SlotPositions: Sendable {}
extension PositionedHeap: Sendable where Key: Sendable, Priority: Sendable, Positions: Sendable {}
