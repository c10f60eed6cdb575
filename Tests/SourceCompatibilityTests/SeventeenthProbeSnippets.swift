// Shapes a seventeenth outside compile probe found in public SDKs (written here in their shape,
// not copied), in Swift 6 mode with warnings as errors, and what they do here.
import BackgroundTasks
import BackgroundTasksTesting
import Foundation
import Glibc
import Network
import SchedulerCore
import Synchronization
import SystemConfiguration
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
/// An observer whose hash is its number: released ones never share a bucket with later ones.
final class NumberedObserver: NSObject {
    let number: Int
    init(_ number: Int) { self.number = number }
    override var hash: Int { number }
    override func isEqual(_ object: Any?) -> Bool { (object as? NumberedObserver)?.number == number }
}

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

    @Test func releasedMembersAreSweptAsTheTableChangesNotAtEveryChange() {
        let table = NSHashTable<AnyObject>.weakObjects()
        var kept: [NSObject] = []
        do {
            let gone = (0..<1_000).map { _ in NSObject() }
            for object in gone { table.add(object) }
            kept = (0..<10).map { _ in NSObject() }
            for object in kept { table.add(object) }
            #expect(table.count == 1_010)
        }
        // The thousand are released: gone from the count at once, their slots swept within
        // as many changes as there were slots.
        #expect(table.count == 10)
        #expect(table.storedSlotCount == 1_010, "nothing swept by a read")
        let churn = NSObject()
        // One change sweeps its own bucket (where a released member may lie), not every one.
        table.add(churn)
        #expect(table.storedSlotCount >= 1_009, "\(table.storedSlotCount) slots after one change")
        table.remove(churn)
        for _ in 0..<600 {
            table.add(churn)
            table.remove(churn)
        }
        #expect(table.storedSlotCount == 10, "\(table.storedSlotCount) slots kept")
        #expect(table.count == 10 && kept.allSatisfy(table.contains))
        // Observers added and released without being removed, their hashes all different
        // (the weak-observer pattern): the slots stay within a small multiple of the live ones.
        for round in 0..<20_000 {
            let passing = NumberedObserver(round)
            table.add(passing)
        }
        #expect(table.count == 10 && table.storedSlotCount < 100, "\(table.storedSlotCount) slots kept for 10 members")
        // Adding many, none released: every one is kept and found.
        let many = (0..<20_000).map { _ in NSObject() }
        for object in many { table.add(object) }
        #expect(table.count == 20_010 && table.storedSlotCount == 20_010 && many.allSatisfy(table.contains))
    }

    @Test func aHugeCapacityIsAHintNotAReservation() {
        let table = NSHashTable<AnyObject>(options: .weakMemory, capacity: Int.max)
        let member = NSObject()
        table.add(member)
        #expect(table.count == 1 && NSHashTable<AnyObject>(options: [], capacity: -5).count == 0)
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

/// An image pipeline's memory cache: emptied when the system reports memory pressure, through
/// a memory-pressure dispatch source made on the main queue and cancelled with the cache.
final class TrimmingCache: @unchecked Sendable {
    // @unchecked: `values` is only touched under `lock`; the source is set once in init.
    private let lock = NSLock()
    private var values: [String: Data] = [:]
    let memoryPressure: DispatchSourceMemoryPressure

    init(queue: DispatchQueue = .main) {
        memoryPressure = DispatchSource.makeMemoryPressureSource(eventMask: [.warning, .critical], queue: queue)
        memoryPressure.setEventHandler { [weak self] in
            self?.removeAllCachedValues()
        }
        memoryPressure.activate()
    }

    deinit {
        memoryPressure.cancel()
    }

    func set(_ value: Data, for key: String) {
        lock.lock()
        defer { lock.unlock() }
        values[key] = value
    }

    func removeAllCachedValues() {
        lock.lock()
        defer { lock.unlock() }
        values.removeAll()
    }

    var totalCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return values.count
    }
}

/// `DispatchSource.makeMemoryPressureSource(eventMask:queue:)`
/// (Sources/FoundationCompat/MemoryPressureSource.swift): a real source that Linux never fires.
@Suite struct SeventeenthProbeMemoryPressureTests {
    @Test func aCacheTrimmedOnMemoryPressureCompilesAndKeepsItsValues() async {
        let queue = DispatchQueue(label: "cache")
        let cache = TrimmingCache(queue: queue)
        cache.set(Data([1]), for: "a")
        #expect(cache.memoryPressure.mask == [.warning, .critical])
        #expect(cache.memoryPressure.data == [])
        #expect(!cache.memoryPressure.isCancelled)
        // Nothing reports memory pressure on Linux: the handler has not run once the queue
        // has drained.
        await withCheckedContinuation { done in queue.async { done.resume() } }
        #expect(cache.totalCount == 1)
        #expect(DispatchSource.MemoryPressureEvent.all.rawValue == 0x7 && DispatchSource.MemoryPressureEvent.warning.rawValue == 0x2)
    }

    @Test func itsHandlersRunOnItsQueueAsADispatchSourcesDo() async {
        let queue = DispatchQueue(label: "pressure")
        let source = DispatchSource.makeMemoryPressureSource(eventMask: .all, queue: queue)
        let ran = await withCheckedContinuation { (done: CheckedContinuation<[String], Never>) in
            let steps = NSLock()
            nonisolated(unsafe) var seen: [String] = []
            func note(_ step: String) { steps.lock(); seen.append(step); steps.unlock() }
            source.setRegistrationHandler { note("registered") }
            source.setCancelHandler {
                note("cancelled")
                steps.lock()
                let all = seen
                steps.unlock()
                done.resume(returning: all)
            }
            source.resume()
            source.cancel()
        }
        #expect(ran == ["registered", "cancelled"] || ran == ["cancelled"])
        #expect(source.isCancelled)
        #expect(source.mask == .all)
    }
}

/// Core Foundation's Info.plist keys (Sources/FoundationCompat/BundleKeys.swift), read from a
/// real Info.plist as `Bundle` reads one on Linux.
@Suite struct SeventeenthProbeBundleKeysTests {
    /// An analytics SDK's app properties, read as it reads them.
    static func appProperties(of bundle: Bundle) -> [String: Any] {
        var properties: [String: Any] = [:]
        let infoDictionary = bundle.infoDictionary
        if let appName = infoDictionary?[kCFBundleNameKey as String] {
            properties["$app_name"] = appName
        } else if let appName = infoDictionary?["CFBundleDisplayName"] {
            properties["$app_name"] = appName
        }
        if let build = infoDictionary?[kCFBundleVersionKey as String] as? String {
            properties["$app_build"] = build
        }
        if let identifier = bundle.object(forInfoDictionaryKey: kCFBundleIdentifierKey as String) as? String {
            properties["$app_namespace"] = identifier
        }
        return properties
    }

    @Test func theKeysReadTheBundlesInfoPlist() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-cfkeys-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let plist: [String: Any] = ["CFBundleName": "Reader", "CFBundleVersion": "42", "CFBundleIdentifier": "com.example.reader",
                                    "CFBundleExecutable": "reader", "CFBundleInfoDictionaryVersion": "6.0",
                                    "CFBundleDevelopmentRegion": "en", "CFBundleLocalizations": ["en", "de"]]
        try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
            .write(to: directory.appendingPathComponent("Info.plist"))
        let bundle = try #require(Bundle(url: directory))
        let properties = Self.appProperties(of: bundle)
        #expect(properties["$app_name"] as? String == "Reader")
        #expect(properties["$app_build"] as? String == "42")
        #expect(properties["$app_namespace"] as? String == "com.example.reader")
        let info = try #require(bundle.infoDictionary)
        #expect(info[kCFBundleExecutableKey as String] as? String == "reader")
        #expect(info[kCFBundleInfoDictionaryVersionKey as String] as? String == "6.0")
        #expect(info[kCFBundleDevelopmentRegionKey as String] as? String == "en")
        #expect(info[kCFBundleLocalizationsKey as String] as? [String] == ["en", "de"])
        #expect([kCFBundleNameKey, kCFBundleVersionKey, kCFBundleIdentifierKey, kCFBundleExecutableKey, kCFBundleInfoDictionaryVersionKey,
                 kCFBundleDevelopmentRegionKey, kCFBundleLocalizationsKey] == [
                    "CFBundleName", "CFBundleVersion", "CFBundleIdentifier", "CFBundleExecutable", "CFBundleInfoDictionaryVersion",
                    "CFBundleDevelopmentRegion", "CFBundleLocalizations"])
    }
}

/// An analytics SDK's connection status from reachability flags, as it reads them.
enum ProbeConnectionStatus: Equatable {
    case offline, wifi, cellular, unknown

    init(reachabilityFlags flags: SCNetworkReachabilityFlags) {
        let connectionRequired = flags.contains(.connectionRequired)
        let isReachable = flags.contains(.reachable)
        let isCellular = flags.contains(.isWWAN)
        if !connectionRequired && isReachable {
            self = isCellular ? .cellular : .wifi
        } else {
            self = .offline
        }
    }

    /// The default route's status now, through the address 0.0.0.0.
    static func now() -> ProbeConnectionStatus {
        var zeroAddress = sockaddr_in()
        zeroAddress.sin_family = sa_family_t(AF_INET)
        guard let defaultRouteReachability = (withUnsafePointer(to: &zeroAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { zeroSockAddress in
                SCNetworkReachabilityCreateWithAddress(nil, zeroSockAddress)
            }
        }) else {
            return .unknown
        }
        var flags: SCNetworkReachabilityFlags = []
        if !SCNetworkReachabilityGetFlags(defaultRouteReachability, &flags) {
            return .unknown
        }
        return ProbeConnectionStatus(reachabilityFlags: flags)
    }
}

/// An HTTP library's reachability manager: a weak box handed through the context (retained and
/// released by the target), a callback that captures nothing, the first status reported by
/// hand, and the callback and queue taken away when it stops.
final class ProbeReachabilityManager: @unchecked Sendable {
    // @unchecked: `statuses` is only touched under `lock`; `reachability` is set in init.
    private final class WeakManager {
        weak var manager: ProbeReachabilityManager?
        init(manager: ProbeReachabilityManager?) { self.manager = manager }
    }

    private let reachability: SCNetworkReachability
    private let lock = NSLock()
    private var statuses: [ProbeConnectionStatus] = []
    let reachabilityQueue = DispatchQueue(label: "reachability")

    init?(host: String) {
        guard let reachability = SCNetworkReachabilityCreateWithName(nil, host) else { return nil }
        self.reachability = reachability
    }

    deinit { stopListening() }

    var flags: SCNetworkReachabilityFlags? {
        var flags = SCNetworkReachabilityFlags()
        return SCNetworkReachabilityGetFlags(reachability, &flags) ? flags : nil
    }

    var heard: [ProbeConnectionStatus] { lock.withLock { statuses } }

    @discardableResult
    func startListening() -> Bool {
        stopListening()
        let weakManager = WeakManager(manager: self)
        var context = SCNetworkReachabilityContext(
            version: 0,
            info: Unmanaged.passUnretained(weakManager).toOpaque(),
            retain: { info in
                let unmanaged = Unmanaged<WeakManager>.fromOpaque(info)
                _ = unmanaged.retain()
                return UnsafeRawPointer(unmanaged.toOpaque())
            },
            release: { info in
                Unmanaged<WeakManager>.fromOpaque(info).release()
            },
            copyDescription: nil
        )
        let callback: SCNetworkReachabilityCallBack = { _, flags, info in
            guard let info else { return }
            let weakManager = Unmanaged<WeakManager>.fromOpaque(info).takeUnretainedValue()
            weakManager.manager?.notify(flags)
        }
        let queueAdded = SCNetworkReachabilitySetDispatchQueue(reachability, reachabilityQueue)
        let callbackAdded = SCNetworkReachabilitySetCallback(reachability, callback, &context)
        if let currentFlags = flags {
            reachabilityQueue.async { self.notify(currentFlags) }
        }
        return callbackAdded && queueAdded
    }

    func stopListening() {
        SCNetworkReachabilitySetCallback(reachability, nil, nil)
        SCNetworkReachabilitySetDispatchQueue(reachability, nil)
    }

    func notify(_ flags: SCNetworkReachabilityFlags) {
        lock.withLock { statuses.append(ProbeConnectionStatus(reachabilityFlags: flags)) }
    }
}

/// `import SystemConfiguration` (Sources/SystemConfiguration): reachability from the path
/// monitor's reading, on the machine and on a simulated device.
@Suite struct SeventeenthProbeReachabilityTests {
    static let start = Date(timeIntervalSince1970: 1_796_083_200)

    @Test func theSDKShapesCompileAndAgreeWithThePathMonitor() throws {
        let monitor = NWPathMonitor()
        monitor.start(queue: DispatchQueue(label: "paths"))
        defer { monitor.cancel() }
        let expected: ProbeConnectionStatus = monitor.currentPath.status != .satisfied ? .offline
            : monitor.currentPath.usesInterfaceType(.cellular) ? .cellular : .wifi
        #expect(ProbeConnectionStatus.now() == expected)
        let manager = try #require(ProbeReachabilityManager(host: "api.example.com"))
        #expect(manager.flags.map(ProbeConnectionStatus.init(reachabilityFlags:)) == expected)
        #expect(manager.startListening())
        manager.stopListening()
        #expect(SCNetworkReachabilityCreateWithName(nil, "") == nil)
        var unix = sockaddr()
        unix.sa_family = sa_family_t(AF_UNIX)
        #expect(SCNetworkReachabilityCreateWithAddress(nil, &unix) == nil)
        #expect(SCNetworkReachabilityFlags.isWWAN.rawValue == 1 << 18 && SCNetworkReachabilityFlags.reachable.rawValue == 2
                && SCNetworkReachabilityFlags.connectionAutomatic == .connectionOnTraffic)
    }

    @Test func aChangeOfTheDevicesNetworkIsReportedToTheCallbackOnItsQueue() async throws {
        let device = try SimulatedDevice(start: Self.start, conditions: Conditions(externalPower: true, networkAvailable: true, networkMetered: false))
        let app = AppID("com.example.reachability")
        let manifest = AppManifest(appID: app, permittedIdentifiers: ["com.example.reachability.refresh"], backgroundModes: ["fetch"], source: "test")
        let made = Mutex<ProbeReachabilityManager?>(nil)
        let queueChecked = Mutex<[Bool]>([])
        let checker = Mutex<SCNetworkReachability?>(nil)
        device.install(app: app, manifest: manifest) {
            let manager = ProbeReachabilityManager(host: "api.example.com")
            manager?.startListening()
            made.withLock { $0 = manager }
            // A second target whose callback checks the queue it is called on.
            let key = DispatchSpecificKey<Bool>()
            let queue = DispatchQueue(label: "checked")
            queue.setSpecific(key: key, value: true)
            let target = SCNetworkReachabilityCreateWithName(nil, "example.com")!
            var context = SCNetworkReachabilityContext(version: 0, info: Unmanaged.passUnretained(QueueProbe.shared).toOpaque(),
                                                       retain: nil, release: nil, copyDescription: nil)
            SCNetworkReachabilitySetCallback(target, { _, _, info in
                let probe = Unmanaged<QueueProbe>.fromOpaque(info!).takeUnretainedValue()
                probe.record(DispatchQueue.getSpecific(key: probe.key) == true)
            }, &context)
            QueueProbe.shared.key = key
            QueueProbe.shared.record = { onQueue in queueChecked.withLock { $0.append(onQueue) } }
            SCNetworkReachabilitySetDispatchQueue(target, queue)
            checker.withLock { $0 = target }
        }
        device.setConditions(Conditions(externalPower: true, networkAvailable: false), at: Self.start + 3_600)
        device.setConditions(Conditions(externalPower: true, networkAvailable: true, networkMetered: true), at: Self.start + 7_200)
        // The battery moved, the network did not: no callback.
        device.setConditions(Conditions(externalPower: false, networkAvailable: true, networkMetered: true), at: Self.start + 9_000)
        await device.run(for: 3 * 3_600)
        let manager = try #require(made.withLock { $0 })
        // Drain the manager's queue, where its first status was reported by hand.
        await withCheckedContinuation { done in manager.reachabilityQueue.async { done.resume() } }
        // A target made by name gets the flags found when its queue was set as its first
        // callback, as Apple's does (Alamofire reports them by hand too, and drops the
        // repeat: this manager keeps both).
        #expect(manager.heard == [.wifi, .wifi, .offline, .cellular])
        #expect(manager.flags == [.reachable, .isWWAN])
        #expect(queueChecked.withLock { $0 } == [true, true, true])
        manager.stopListening()
        checker.withLock { target in
            if let target { SCNetworkReachabilitySetDispatchQueue(target, nil) }
        }
    }
}

/// Counts a reachability context's retains, releases and callouts (C function pointers
/// capture nothing: they reach it through a static).
final class ContextCounter: @unchecked Sendable {
    // @unchecked: `counts` is only touched under `lock`.
    static let shared = ContextCounter()
    private let lock = NSLock()
    private var counts = (retains: 0, releases: 0, callouts: 0)
    func count(_ change: (inout (retains: Int, releases: Int, callouts: Int)) -> Void) { lock.withLock { change(&counts) } }
    var now: (retains: Int, releases: Int, callouts: Int) { lock.withLock { counts } }
}

@Suite struct SeventeenthProbeReachabilityContextTests {
    @Test func aByAddressTargetGetsNoFirstCallbackAndItsContextIsReleasedOnce() async throws {
        // A reviewer's finds: a target is on one queue at a time, a by-address target is
        // told of changes only, and the context's retain and release balance.
        let device = try SimulatedDevice(start: SeventeenthProbeReachabilityTests.start, conditions: Conditions(externalPower: true, networkAvailable: true, networkMetered: false))
        let app = AppID("com.example.reachability.context")
        let manifest = AppManifest(appID: app, permittedIdentifiers: [], backgroundModes: [], source: "test")
        let target = Mutex<SCNetworkReachability?>(nil)
        let secondQueueRefused = Mutex(false)
        let queue = DispatchQueue(label: "context")
        device.install(app: app, manifest: manifest) {
            var zero = sockaddr_in()
            zero.sin_family = sa_family_t(AF_INET)
            let made = withUnsafePointer(to: &zero) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { SCNetworkReachabilityCreateWithAddress(nil, $0) }
            }!
            var context = SCNetworkReachabilityContext(
                version: 0, info: Unmanaged.passUnretained(ContextCounter.shared).toOpaque(),
                retain: { info in ContextCounter.shared.count { $0.retains += 1 }; return info },
                release: { _ in ContextCounter.shared.count { $0.releases += 1 } },
                copyDescription: nil)
            SCNetworkReachabilitySetCallback(made, { _, _, _ in ContextCounter.shared.count { $0.callouts += 1 } }, &context)
            SCNetworkReachabilitySetDispatchQueue(made, queue)
            secondQueueRefused.withLock { $0 = !SCNetworkReachabilitySetDispatchQueue(made, DispatchQueue(label: "another")) }
            target.withLock { $0 = made }
        }
        await device.run(for: 60)
        #expect(secondQueueRefused.withLock { $0 }, "a second queue without nil first is refused")
        #expect(ContextCounter.shared.now == (1, 0, 0), "retained once when set; no first callback for an address")
        device.setConditions(Conditions(externalPower: true, networkAvailable: false), at: SeventeenthProbeReachabilityTests.start + 600)
        await device.run(for: 900)
        let made = try #require(target.withLock { $0 })
        await withCheckedContinuation { done in queue.async { done.resume() } }
        #expect(ContextCounter.shared.now.callouts == 1, "the change, once")
        // Unscheduled and the callback taken away: the context is released, once.
        SCNetworkReachabilitySetDispatchQueue(made, nil)
        SCNetworkReachabilitySetCallback(made, nil, nil)
        #expect(ContextCounter.shared.now == (1, 1, 1))
    }
}

/// What the queue-checking callback reaches through its context's `info`.
final class QueueProbe: @unchecked Sendable {
    // @unchecked: set once by the test before the target is scheduled, read after.
    static let shared = QueueProbe()
    var key = DispatchSpecificKey<Bool>()
    var record: @Sendable (Bool) -> Void = { _ in }
}
