import DeviceConditions
import Foundation
import ProbeSupport
@testable import Network
import Synchronization
import Testing

/// Tests that change the machine's own network (a veth pair with a default route of the
/// lowest preference, removed at the end): one at a time.
@Suite(.serialized) struct MachineNetworkTests {
    /// Waits up to 10 s of wall-clock time (the kernel's announcement, not the scheduler) for
    /// a path handed to the monitor that satisfies `condition`.
    static func waitForPath(in paths: borrowing Mutex<[NWPath]>, _ condition: (NWPath) -> Bool) async -> NWPath? {
        for _ in 0..<200 {
            if let path = paths.withLock({ $0.last }), condition(path) { return path }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    @Test func aMonitorOfTheMachineSeesALinkWithADefaultRouteComeAndGo() async throws {
        guard let ip = IPRoute.find() else { try Test.cancel("iproute2 (`ip`) is not installed") }
        // The machine's own trees, whatever the environment says.
        let reader = LinuxConditionsReader(roots: .system, environment: [:]).networkReader
        let monitor = NWPathMonitor(source: .machine(reader), required: nil, prohibited: [])
        let paths = Mutex<[NWPath]>([])
        monitor.pathUpdateHandler = { path in paths.withLock { $0.append(path) } }
        monitor.start(queue: DispatchQueue(label: "machine paths"))
        defer { monitor.cancel() }
        let name = "bgnw\(getpid() % 100_000)"
        #expect(await Self.waitForPath(in: paths) { _ in true } != nil, "no first path")
        #expect(!monitor.currentPath.availableInterfaces.contains { $0.name == name })

        let created = try await IPRoute.run(ip, ["link", "add", name, "type", "veth", "peer", "name", name + "p"])
        guard created.status == 0 else { try Test.cancel("cannot create a veth pair here: \(created.stderr)") }
        defer { Task { _ = try? await IPRoute.run(ip, ["link", "del", name]) } }
        for link in [name, name + "p"] {
            let up = try await IPRoute.run(ip, ["link", "set", link, "up"])
            #expect(up.status == 0, "ip link set \(link) up: \(up.stderr)")
        }
        // The least preferred default route there can be: the machine's traffic stays where it is.
        let route = try await IPRoute.run(ip, ["route", "add", "default", "dev", name, "metric", "4294967295"])
        #expect(route.status == 0, "ip route add default dev \(name): \(route.stderr)")

        let joined = await Self.waitForPath(in: paths) { $0.availableInterfaces.contains { $0.name == name } }
        #expect(joined != nil, "no path with \(name) after its default route was added")
        if let joined {
            #expect(joined.status == .satisfied)
            #expect(joined.availableInterfaces.last?.name == name, "the least preferred route's link comes last")
            #expect(joined.availableInterfaces.last?.type == .other, "a veth link has no hardware: other")
        }

        let deleted = try await IPRoute.run(ip, ["link", "del", name])
        #expect(deleted.status == 0, "ip link del \(name): \(deleted.stderr)")
        let left = await Self.waitForPath(in: paths) { !$0.availableInterfaces.contains { $0.name == name } }
        #expect(left != nil, "the path still has \(name) after it was deleted")
    }
}
