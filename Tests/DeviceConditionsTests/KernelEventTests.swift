import DeviceConditions
import Dispatch
import Foundation
import ProbeSupport
import SchedulerCore
import Synchronization
import Testing

/// The parent of every suite in this target that spawns processes or changes the machine
/// (a network link): Swift Testing runs tests in parallel, these must not.
@Suite(.serialized) struct DeviceProcessTests {}

@Suite struct KernelEventParsingTests {
    static func uevent(_ fields: [String]) -> [UInt8] {
        fields.flatMap { Array($0.utf8) + [0] }
    }

    /// One netlink message: a 16-byte `nlmsghdr` (host-endian) and a payload.
    static func netlinkMessage(type: UInt16, payload: Int = 16) -> [UInt8] {
        var bytes: [UInt8] = []
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value) { bytes.append(contentsOf: $0) } }
        append(UInt32(16 + payload))
        append(type)
        append(UInt16(0))
        append(UInt32(0))
        append(UInt32(0))
        bytes.append(contentsOf: [UInt8](repeating: 0, count: payload))
        return bytes
    }

    @Test func powerSupplyUeventIsPower() {
        let message = Self.uevent(["change@/devices/LNXSYSTM:00/ACPI0003:00/power_supply/AC", "ACTION=change", "DEVPATH=/devices/LNXSYSTM:00/ACPI0003:00/power_supply/AC", "SUBSYSTEM=power_supply", "POWER_SUPPLY_ONLINE=1", "SEQNUM=4242"])
        #expect(KernelEventMonitor.changes(fromUevent: message) == .power)
    }

    @Test func thermalUeventIsThermalAndOthersAreNothing() {
        #expect(KernelEventMonitor.changes(fromUevent: Self.uevent(["change@/devices/virtual/thermal/thermal_zone0", "ACTION=change", "SUBSYSTEM=thermal"])) == .thermal)
        #expect(KernelEventMonitor.changes(fromUevent: Self.uevent(["add@/devices/virtual/net/bgtest0", "ACTION=add", "SUBSYSTEM=net"])).isEmpty)
        #expect(KernelEventMonitor.changes(fromUevent: []).isEmpty)
    }

    @Test(arguments: [UInt16(16), 17, 20, 21, 24, 25])
    func linkAddressAndRouteMessagesAreNetwork(type: UInt16) {
        #expect(KernelEventMonitor.changes(fromRouteMessages: Self.netlinkMessage(type: 3) + Self.netlinkMessage(type: type)) == .network)
    }

    @Test func otherAndTruncatedRouteMessagesAreNothing() {
        #expect(KernelEventMonitor.changes(fromRouteMessages: Self.netlinkMessage(type: 3)).isEmpty) // NLMSG_DONE
        #expect(KernelEventMonitor.changes(fromRouteMessages: Self.netlinkMessage(type: 28)).isEmpty) // RTM_NEWNEIGH
        // A header claiming more bytes than arrived is dropped, not read past the end.
        #expect(KernelEventMonitor.changes(fromRouteMessages: Array(Self.netlinkMessage(type: 16, payload: 64).prefix(40))).isEmpty)
        #expect(KernelEventMonitor.changes(fromRouteMessages: [1, 2, 3]).isEmpty)
    }
}

/// Waits for readings from a watcher without sleeping: each reading resumes a waiter.
final class ReadingInbox: Sendable {
    private struct State {
        var readings: [DeviceReading] = []
        var waiter: (id: Int, continuation: CheckedContinuation<DeviceReading?, Never>)?
        var nextID = 0
    }

    private let state = Mutex(State())

    func deliver(_ reading: DeviceReading) {
        let waiter = state.withLock { state -> CheckedContinuation<DeviceReading?, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter.continuation
            }
            state.readings.append(reading)
            return nil
        }
        waiter?.resume(returning: reading)
    }

    var count: Int { state.withLock { $0.readings.count } }

    /// The next reading, or `nil` after `timeout` seconds (a failure the test reports).
    func next(timeout: TimeInterval = 10) async -> DeviceReading? {
        await withCheckedContinuation { continuation in
            let (ready, id) = state.withLock { state -> (DeviceReading?, Int) in
                if !state.readings.isEmpty { return (state.readings.removeFirst(), -1) }
                state.nextID += 1
                state.waiter = (state.nextID, continuation)
                return (nil, state.nextID)
            }
            if let ready { continuation.resume(returning: ready); return }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [self] in
                // Only this call's waiter: a later call's must not be cut short.
                let waiter = state.withLock { state -> CheckedContinuation<DeviceReading?, Never>? in
                    guard let waiter = state.waiter, waiter.id == id else { return nil }
                    state.waiter = nil
                    return waiter.continuation
                }
                waiter?.resume(returning: nil)
            }
        }
    }
}

@Suite struct ConditionsWatcherTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    func watcher(_ machine: FakeMachine, inbox: ReadingInbox, sample: Bool = true) -> ConditionsWatcher {
        ConditionsWatcher(
            reader: machine.reader, settleDelay: 0, kernelEvents: false, sampling: false,
            now: { Self.now }, shouldSample: { sample }, onReading: { inbox.deliver($0) }
        )
    }

    @Test func aPowerEventReReadsPowerOnly() async throws {
        let machine = try FakeMachine()
        try machine.mains(online: false)
        try machine.battery(status: "Discharging", capacity: "50")
        try machine.thermalZone(0, millidegrees: "40000")
        let inbox = ReadingInbox()
        let watcher = watcher(machine, inbox: inbox)
        defer { watcher.cancel() }
        #expect(watcher.current.externalPower == false)

        try machine.mains(online: true)
        try machine.battery(status: "Charging", capacity: "51")
        try machine.thermalZone(0, millidegrees: "99000")
        watcher.kernelChanged(.power)
        let reading = try #require(await inbox.next())
        #expect(reading.externalPower == true)
        #expect(reading.batteryState == .charging)
        #expect(reading.thermalState == .nominal) // thermal is sampled, not re-read on a power event
    }

    @Test func aNetworkEventReReadsTheNetwork() async throws {
        let machine = try FakeMachine()
        try machine.loopback()
        try machine.interface("eth0", operstate: "down", carrier: "0")
        try machine.ipv4Routes([])
        let inbox = ReadingInbox()
        let watcher = watcher(machine, inbox: inbox)
        defer { watcher.cancel() }
        #expect(watcher.current.networkAvailable == false)

        try machine.wiredNetwork()
        watcher.kernelChanged(.network)
        let reading = try #require(await inbox.next())
        #expect(reading.networkAvailable == true)
    }

    @Test func samplingHappensOnlyWhileSomethingDependsOnConditions() async throws {
        let machine = try FakeMachine()
        try machine.thermalZone(0, millidegrees: "40000")
        let idleInbox = ReadingInbox()
        let idle = watcher(machine, inbox: idleInbox, sample: false)
        defer { idle.cancel() }
        idle.sample()
        _ = idle.current // waits for the queue, so the sample has been handled
        #expect(idleInbox.count == 0)

        let busyInbox = ReadingInbox()
        let busy = watcher(machine, inbox: busyInbox, sample: true)
        defer { busy.cancel() }
        try machine.thermalZone(0, millidegrees: "90000")
        busy.sample()
        let reading = try #require(await busyInbox.next())
        #expect(reading.thermalState == .serious)
        // Without kernel events the network is sampled too.
        #expect(busy.sampledParts.contains(.network))
    }

    /// The sampling timer exists only while something depends on conditions: armed when
    /// the owner reports work, cancelled when it goes (no wakeups for an idle process).
    @Test func theSamplingTimerIsArmedOnlyWhileSomethingDependsOnConditions() throws {
        final class Armed: SamplerTimer {
            let cancelled = Mutex(false)
            func cancel() { cancelled.withLock { $0 = true } }
        }
        let machine = try FakeMachine()
        try machine.thermalZone(0, millidegrees: "40000")
        let timers = Mutex<[Armed]>([])
        let depends = Mutex(false)
        let watcher = ConditionsWatcher(
            reader: machine.reader, settleDelay: 0, kernelEvents: false, sampling: true,
            makeTimer: { _, _, _ in
                let timer = Armed()
                timers.withLock { $0.append(timer) }
                return timer
            },
            now: { Self.now }, shouldSample: { depends.withLock { $0 } }, onReading: { _ in }
        )
        defer { watcher.cancel() }
        #expect(timers.withLock { $0 }.isEmpty && !watcher.isSampling, "idle: no timer")
        depends.withLock { $0 = true }
        watcher.reconsiderSampling()
        #expect(timers.withLock { $0 }.count == 1 && watcher.isSampling)
        depends.withLock { $0 = false }
        watcher.reconsiderSampling()
        #expect(!watcher.isSampling)
        #expect(timers.withLock { $0 }.allSatisfy { $0.cancelled.withLock { $0 } })
    }
}

extension DeviceProcessTests {
    /// Creates and deletes a real network link and expects rtnetlink to announce both.
    /// Needs CAP_NET_ADMIN and iproute2; skipped (with the reason) where either is missing.
    @Suite struct NetlinkTests {
        @Test func creatingAndDeletingALinkAreNetworkEvents() async throws {
            guard let ip = IPRoute.find() else { try Test.cancel("iproute2 (`ip`) is not installed") }
            let events = Mutex<[KernelEventMonitor.Changes]>([])
            let signal = ReadingInbox()
            let placeholder = DeviceReading(externalPower: true, batteryLevel: nil, batteryState: .unknown, lowPowerMode: false, thermalState: .nominal, networkAvailable: false, networkMetered: nil, deviceIdle: true, cpuPressure: nil)
            let monitor = KernelEventMonitor(queue: DispatchQueue(label: "netlink-test")) { changes in
                events.withLock { $0.append(changes) }
                if changes.contains(.network) { signal.deliver(placeholder) }
            }
            defer { monitor.cancel() }
            guard monitor.watching.contains(.network) else {
                try Test.cancel("rtnetlink socket unavailable here: \(monitor.problems.joined(separator: "; "))")
            }

            let name = "bgtest\(getpid() % 100_000)"
            var created = false
            var refusals: [String] = []
            // `dummy` needs its kernel module; a bridge is built in almost everywhere.
            for type in ["dummy", "bridge"] {
                let result = try await IPRoute.run(ip, ["link", "add", name, "type", type])
                if result.status == 0 { created = true; break }
                refusals.append("\(type): \(result.stderr)")
            }
            guard created else { try Test.cancel("cannot create a network link here (\(refusals.joined(separator: "; ")))") }

            let added = await signal.next(timeout: 10)
            // Whatever else the creation announced is not the deletion's event.
            while signal.count > 0 { _ = await signal.next(timeout: 0) }
            let deletion = try await IPRoute.run(ip, ["link", "del", name])
            #expect(deletion.status == 0, "ip link del \(name): \(deletion.stderr)")
            let deleted = await signal.next(timeout: 10)
            #expect(added != nil, "no rtnetlink event after creating \(name)")
            #expect(deleted != nil, "no rtnetlink event after deleting \(name)")
        }
    }
}
