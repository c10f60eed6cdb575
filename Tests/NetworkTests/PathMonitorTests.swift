import BackgroundTasks
import BackgroundTasksTesting
import DeviceConditions
import Foundation
@testable import Network
import SchedulerCore
import Synchronization
import Testing

/// `NWPathMonitor` over a simulated device (its conditions change in virtual time) and over
/// a fake machine's files.
@Suite struct PathMonitorTests {
    static let start = Date(timeIntervalSince1970: 1_796_083_200)

    /// What a handler saw: when (seconds after start), the status, the first interface, and
    /// whether the path was expensive.
    struct Seen: Equatable, CustomStringConvertible {
        var at: TimeInterval
        var status: NWPath.Status
        var interface: String?
        var expensive: Bool
        var description: String { "\(at) \(status) \(interface ?? "-") \(expensive ? "expensive" : "")" }
    }

    /// What the app under test saw, and the monitor it made.
    final class Recorder: Sendable {
        let seen = Mutex<[Seen]>([])
        let made = Mutex<NWPathMonitor?>(nil)
    }

    /// A simulated app whose launch starts a monitor, recording every path handed to it.
    func simulatedApp(required: NWInterface.InterfaceType? = nil) throws -> (SimulatedDevice, Recorder) {
        let device = try SimulatedDevice(start: Self.start, conditions: Conditions(externalPower: true, networkAvailable: true, networkMetered: false))
        let recorder = Recorder()
        let app = AppID("com.example.paths")
        let manifest = AppManifest(appID: app, permittedIdentifiers: ["com.example.paths.refresh"], backgroundModes: ["fetch"], source: "test")
        device.install(app: app, manifest: manifest) {
            let monitor = required.map { NWPathMonitor(requiredInterfaceType: $0) } ?? NWPathMonitor()
            monitor.pathUpdateHandler = { [clock = device.clock] path in
                let entry = Seen(at: clock.now().timeIntervalSince(Self.start), status: path.status,
                                 interface: path.availableInterfaces.first?.name, expensive: path.isExpensive)
                recorder.seen.withLock { $0.append(entry) }
            }
            monitor.start(queue: DispatchQueue(label: "paths"))
            recorder.made.withLock { $0 = monitor }
        }
        return (device, recorder)
    }

    @Test func aSimulatedAppSeesItsDevicesNetworkChangeInVirtualTime() async throws {
        let (device, recorder) = try simulatedApp()
        // Only the monitor's weak trail is kept: a started monitor lives on by itself.
        recorder.made.withLock { $0 = nil }
        device.setConditions(Conditions(externalPower: true, networkAvailable: false), at: Self.start + 3_600)
        device.setConditions(Conditions(externalPower: true, networkAvailable: true, networkMetered: true), at: Self.start + 7_200)
        // The same network again (the battery moved): no new path.
        device.setConditions(Conditions(externalPower: false, networkAvailable: true, networkMetered: true), at: Self.start + 9_000)
        device.setConditions(Conditions(externalPower: true, networkAvailable: true, networkMetered: false), at: Self.start + 10_800)
        await device.run(for: 4 * 3_600)
        #expect(recorder.seen.withLock { $0 } == [
            Seen(at: 0, status: .satisfied, interface: "en0", expensive: false),
            Seen(at: 3_600, status: .unsatisfied, interface: nil, expensive: false),
            Seen(at: 7_200, status: .satisfied, interface: "pdp_ip0", expensive: true),
            Seen(at: 10_800, status: .satisfied, interface: "en0", expensive: false),
        ])
    }

    @Test func aWifiOnlyMonitorIsUnsatisfiedOnCellular() async throws {
        let (device, recorder) = try simulatedApp(required: .wifi)
        device.setConditions(Conditions(externalPower: true, networkAvailable: true, networkMetered: true), at: Self.start + 600)
        await device.run(for: 1_200)
        #expect(recorder.seen.withLock { $0.map(\.status) } == [.satisfied, .unsatisfied])
        let monitor = try #require(recorder.made.withLock { $0 })
        #expect(monitor.currentPath.status == .unsatisfied)
        #expect(monitor.currentPath.availableInterfaces.isEmpty)
    }

    @Test func aCancelledMonitorHandsNothingMore() async throws {
        let (device, recorder) = try simulatedApp()
        await device.run(for: 60)
        let monitor = try #require(recorder.made.withLock { $0 })
        monitor.cancel()
        device.setConditions(Conditions(externalPower: true, networkAvailable: false), at: Self.start + 600)
        await device.run(for: 1_200)
        #expect(recorder.seen.withLock { $0.count } == 1)
        // Starting again does nothing.
        monitor.start(queue: DispatchQueue(label: "again"))
        await device.run(for: 60)
        #expect(recorder.seen.withLock { $0.count } == 1)
        #expect(monitor.debugDescription == "NWPathMonitor (cancelled)")
    }

    /// A fake machine with eth0 (wired, with hardware) up and a default route.
    func wiredMachine() throws -> (URL, NetworkReader) {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-nwpath-\(UUID().uuidString)")
        func write(_ relative: String, _ text: String) throws {
            let url = base.appendingPathComponent(relative)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
        try write("sys/class/net/eth0/operstate", "up\n")
        try write("sys/class/net/eth0/ifindex", "2\n")
        try write("sys/class/net/eth0/type", "1\n")
        try FileManager.default.createDirectory(at: base.appendingPathComponent("sys/class/net/eth0/device"), withIntermediateDirectories: true)
        try write("proc/net/route", "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\neth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n")
        try write("etc/resolv.conf", "nameserver 192.0.2.53\n")
        let roots = DeviceRoots(fakeRoot: base)
        return (base, NetworkReader(sysRoot: roots.sys, procRoot: roots.proc, runRoot: roots.run, etcRoot: roots.etc))
    }

    @Test func theMachinesPathIsReadAtStartAndHandedOnTheQueue() async throws {
        let (base, reader) = try wiredMachine()
        defer { try? FileManager.default.removeItem(at: base) }
        let monitor = NWPathMonitor(source: .machine(reader), required: nil, prohibited: [])
        #expect(monitor.currentPath.status == .unsatisfied)
        #expect(monitor.queue == nil)
        let queue = DispatchQueue(label: "machine paths")
        let path: NWPath = await withCheckedContinuation { continuation in
            monitor.pathUpdateHandler = { path in
                dispatchPrecondition(condition: .onQueue(queue))
                continuation.resume(returning: path)
            }
            monitor.start(queue: queue)
            // Evaluated already when start returns.
            #expect(monitor.currentPath.status == .satisfied)
        }
        monitor.pathUpdateHandler = nil
        monitor.cancel()
        #expect(path.availableInterfaces == [NWInterface(type: .wiredEthernet, name: "eth0", index: 2)])
        #expect(path.gateways == [.hostPort(host: .ipv4(IPv4Address("192.0.2.1")!), port: .any)])
        #expect(path.supportsDNS && path.supportsIPv4 && !path.supportsIPv6)
        #expect(monitor.queue === queue)
    }

    @Test func theMonitorIsAnAsyncSequenceThatEndsWhenCancelled() async throws {
        let (base, reader) = try wiredMachine()
        defer { try? FileManager.default.removeItem(at: base) }
        let monitor = NWPathMonitor(source: .machine(reader), required: .wiredEthernet, prohibited: [])
        var iterator = monitor.makeAsyncIterator()
        let first = await iterator.next()
        #expect(first?.status == .satisfied)
        #expect(monitor.queue != nil)
        // A second sequence starts with the current path too.
        var second = monitor.makeAsyncIterator()
        #expect(await second.next() == first)
        monitor.cancel()
        #expect(await iterator.next() == nil)
        #expect(await second.next() == nil)
        // After cancellation a new sequence is empty.
        var late = monitor.makeAsyncIterator()
        #expect(await late.next() == nil)
    }

    /// The fake machine's only default route, removed: the network is gone.
    func dropRoute(under base: URL) throws {
        try Data("Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n".utf8)
            .write(to: base.appendingPathComponent("proc/net/route"))
    }

    @Test func changesFasterThanTheQueueAreHandedAsTheLatestOnce() async throws {
        let (base, reader) = try wiredMachine()
        defer { try? FileManager.default.removeItem(at: base) }
        let monitor = NWPathMonitor(source: .machine(reader), required: nil, prohibited: [])
        defer { monitor.cancel() }
        let handed = Mutex<[NWPath.Status]>([])
        let queue = DispatchQueue(label: "busy")
        monitor.pathUpdateHandler = { path in handed.withLock { $0.append(path.status) } }
        queue.suspend()
        monitor.start(queue: queue)
        try dropRoute(under: base)
        monitor.evaluate()
        // The same reading again is no change.
        monitor.evaluate()
        #expect(monitor.currentPath.status == .unsatisfied)
        queue.resume()
        queue.sync {}
        #expect(handed.withLock { $0 } == [.unsatisfied], "two hand-overs were queued; the first gave the latest path, the second nothing")
    }

    @Test func aCancelOnTheQueueDropsAPathOnItsWay() throws {
        let (base, reader) = try wiredMachine()
        defer { try? FileManager.default.removeItem(at: base) }
        let monitor = NWPathMonitor(source: .machine(reader), required: nil, prohibited: [])
        let handed = Mutex(0)
        let queue = DispatchQueue(label: "cancelling")
        monitor.pathUpdateHandler = { _ in handed.withLock { $0 += 1 } }
        queue.suspend()
        queue.async { monitor.cancel() }
        monitor.start(queue: queue)
        queue.resume()
        queue.sync {}
        #expect(handed.withLock { $0 } == 0)
        #expect(monitor.pathUpdateHandler == nil, "a cancelled monitor lets its handler go")
    }

    @Test func aCancelledMonitorWhoseHandlerRefersToItIsFreed() async throws {
        let (base, reader) = try wiredMachine()
        defer { try? FileManager.default.removeItem(at: base) }
        let queue = DispatchQueue(label: "self-referring")
        weak var weakMonitor: NWPathMonitor?
        do {
            let monitor = NWPathMonitor(source: .machine(reader), required: nil, prohibited: [])
            // The shape of a refresh gate that cancels its own monitor from its handler.
            monitor.pathUpdateHandler = { _ in monitor.cancel() }
            monitor.start(queue: queue)
            weakMonitor = monitor
        }
        queue.sync {}
        // The kernel watch's Dispatch sources let their handlers go once their cancellation
        // has run on the watch's queue: a moment, not a scheduler's wait.
        for _ in 0..<200 where weakMonitor != nil { try await Task.sleep(for: .milliseconds(10)) }
        #expect(weakMonitor == nil)
    }

    @Test func aMonitorThatALoopStartedStopsWhenTheLoopEnds() async throws {
        let (base, reader) = try wiredMachine()
        defer { try? FileManager.default.removeItem(at: base) }
        let monitor = NWPathMonitor(source: .machine(reader), required: nil, prohibited: [])
        var first: NWPath?
        for await path in monitor {
            first = path
            break
        }
        #expect(first?.status == .satisfied)
        #expect(monitor.debugDescription == "NWPathMonitor (cancelled)")
        // One started by the app is not the loop's to stop.
        let started = NWPathMonitor(source: .machine(reader), required: nil, prohibited: [])
        started.start(queue: DispatchQueue(label: "the app's"))
        for await _ in started { break }
        #expect(started.debugDescription.hasPrefix("NWPathMonitor: satisfied"))
        started.cancel()
    }
}
