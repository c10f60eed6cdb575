// Shapes a seventeenth outside compile probe found in public SDKs (written here in their shape,
// not copied), in Swift 6 mode with warnings as errors, and what they do here.
import BackgroundTasks
import Foundation
import Testing

/// What a crash reporter's reachability tells its observers.
protocol ConnectivityObserver: AnyObject {
    func connectivityChanged(_ connected: Bool)
}

/// A crash reporter's reachability: observers kept weakly in a hash table under a lock, so one
/// that goes away needs no unregistering; the first observer starts the monitoring, the last
/// one removed stops it.
final class ObservedReachability: @unchecked Sendable {
    // @unchecked: `observers` and `monitoring` are only touched under `lock`.
    private let lock = NSRecursiveLock()
    private let observers = NSHashTable<AnyObject>.weakObjects()
    private(set) var monitoring = false

    func add(_ observer: ConnectivityObserver) {
        lock.lock()
        defer { lock.unlock() }
        if observers.contains(observer) { return }
        observers.add(observer)
        if observers.count > 1 { return }
        monitoring = true
    }

    func remove(_ observer: ConnectivityObserver) {
        lock.lock()
        defer { lock.unlock() }
        observers.remove(observer)
        if observers.count == 0 { monitoring = false }
    }

    func removeAll() {
        lock.lock()
        defer { lock.unlock() }
        observers.removeAllObjects()
        monitoring = false
    }

    /// Tells every observer still there; how many were told.
    @discardableResult
    func report(_ connected: Bool) -> Int {
        lock.lock()
        let current = observers.allObjects
        lock.unlock()
        var told = 0
        for case let observer as ConnectivityObserver in current {
            observer.connectivityChanged(connected)
            told += 1
        }
        return told
    }

    var observerCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return observers.count
    }
}

/// An observer that remembers what it heard.
final class HeardConnectivity: ConnectivityObserver {
    var heard: [Bool] = []
    func connectivityChanged(_ connected: Bool) { heard.append(connected) }
}

/// A value object: two with one key are equal.
final class Keyed: NSObject {
    let key: Int
    init(_ key: Int) { self.key = key }
    override func isEqual(_ object: Any?) -> Bool { (object as? Keyed)?.key == key }
    override var hash: Int { key }
}

/// `NSHashTable` (Sources/FoundationCompat/HashTable.swift), as the SDKs use it.
@Suite struct SeventeenthProbeHashTableTests {
    @Test func aWeakTableLetsAReleasedObserverGo() {
        let reachability = ObservedReachability()
        let kept = HeardConnectivity()
        reachability.add(kept)
        do {
            let passing = HeardConnectivity()
            reachability.add(passing)
            reachability.add(passing)
            #expect(reachability.observerCount == 2)
            #expect(reachability.report(true) == 2)
            #expect(passing.heard == [true])
        }
        // The passing observer was released: it is no longer counted or told.
        #expect(reachability.observerCount == 1)
        #expect(reachability.report(false) == 1)
        #expect(kept.heard == [true, false])
        reachability.remove(kept)
        #expect(!reachability.monitoring)
        reachability.add(kept)
        reachability.removeAll()
        #expect(reachability.observerCount == 0)
    }

    @Test func aStrongTableKeepsItsMembers() {
        let table = NSHashTable<HeardConnectivity>()
        weak var weakly: HeardConnectivity?
        do {
            let member = HeardConnectivity()
            weakly = member
            table.add(member)
        }
        #expect(weakly != nil)
        #expect(table.count == 1)
        #expect(table.anyObject === weakly)
        table.remove(weakly)
        #expect(weakly == nil)
        #expect(table.count == 0 && table.anyObject == nil)
    }

    @Test func theObjectPersonalityComparesWithIsEqualAndThePointerOneByIdentity() throws {
        let first = Keyed(1), equal = Keyed(1), other = Keyed(2)
        let byValue = NSHashTable<Keyed>.weakObjects()
        byValue.add(first)
        byValue.add(equal)
        byValue.add(other)
        #expect(byValue.count == 2)
        #expect(byValue.contains(equal))
        #expect(byValue.member(equal) === first)
        byValue.remove(equal)
        #expect(!byValue.contains(first) && byValue.allObjects.map(\.key) == [2])

        let byIdentity = NSHashTable<Keyed>(options: [.weakMemory, .objectPointerPersonality])
        byIdentity.add(first)
        byIdentity.add(equal)
        #expect(byIdentity.count == 2)
        #expect(byIdentity.member(Keyed(1)) == nil)
        byIdentity.remove(equal)
        #expect(byIdentity.allObjects == [first])
        #expect(NSHashTable<Keyed>(options: NSHashTableStrongMemory).contains(first) == false)
        #expect(NSHashTableWeakMemory.rawValue == 5 && NSHashTableObjectPointerPersonality.rawValue == 512)
    }

    @Test func itsMembersAreIteratedThroughAllObjectsOrItsEnumerator() {
        let members = (0..<100).map(Keyed.init)
        let table = NSHashTable<Keyed>.weakObjects()
        for member in members { table.add(member) }
        table.add(nil)
        #expect(table.count == 100 && !table.contains(nil) && table.member(nil) == nil)
        var keys: [Int] = []
        for case let member as Keyed in table.objectEnumerator() { keys.append(member.key) }
        #expect(keys.sorted() == Array(0..<100))
        #expect(Set(table.allObjects.map(\.key)) == Set(0..<100))
        // As on iOS, the table itself is not a sequence.
        #expect(!((table as Any) is any Sequence))
        withExtendedLifetime(members) {}
    }
}
