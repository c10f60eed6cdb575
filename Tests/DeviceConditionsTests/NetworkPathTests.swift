@testable import DeviceConditions
import Foundation
import Testing

/// ``NetworkReader/readPath()``: the interfaces that carry a default route, their kinds,
/// order, route families and gateways, and DNS (what `NWPathMonitor` reports).
@Suite struct NetworkPathTests {
    func reader(_ machine: FakeMachine) -> NetworkReader {
        NetworkReader(sysRoot: machine.roots.sys, procRoot: machine.roots.proc, runRoot: machine.roots.run, etcRoot: machine.roots.etc)
    }

    /// `/proc/net/route` from (interface, destination, gateway, flags, metric, mask) rows.
    func routes(_ machine: FakeMachine, _ rows: [(String, String, String, String, Int64, String)]) throws {
        var text = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
        for (interface, destination, gateway, flags, metric, mask) in rows {
            text += "\(interface)\t\(destination)\t\(gateway)\t\(flags)\t0\t0\t\(metric)\t\(mask)\t0\t0\t0\n"
        }
        try machine.write("proc/net/route", text, newline: false)
    }

    /// A wired NIC (Ethernet type with hardware behind it), a Wi-Fi card and a modem.
    func laptop(_ machine: FakeMachine) throws {
        try machine.loopback()
        try machine.write("sys/class/net/lo/type", "772")
        try machine.interface("eth0", operstate: "up", ifindex: 2)
        try machine.write("sys/class/net/eth0/type", "1")
        try machine.write("sys/class/net/eth0/uevent", "INTERFACE=eth0\nIFINDEX=2")
        try machine.directory("sys/class/net/eth0/device")
        try machine.interface("wlan0", operstate: "up", ifindex: 3)
        try machine.write("sys/class/net/wlan0/type", "1")
        try machine.write("sys/class/net/wlan0/uevent", "DEVTYPE=wlan\nINTERFACE=wlan0\nIFINDEX=3")
        try machine.directory("sys/class/net/wlan0/device")
        try machine.interface("wwan0", operstate: "unknown", carrier: "1", ifindex: 4)
        try machine.write("sys/class/net/wwan0/type", "519")
        try machine.directory("sys/class/net/wwan0/device")
        try machine.write("etc/resolv.conf", "# generated\nsearch example.org\nnameserver 192.168.1.1")
    }

    @Test func interfacesComeInOrderOfRouteMetricWithTheirKindsAndGateways() throws {
        let machine = try FakeMachine()
        try laptop(machine)
        try routes(machine, [
            ("wlan0", "00000000", "0101A8C0", "0003", 600, "00000000"),
            ("eth0", "00000000", "010200C0", "0003", 100, "00000000"),
            ("wwan0", "00000000", "00000000", "0001", 700, "00000000"),
            ("eth0", "000200C0", "00000000", "0001", 100, "00FFFFFF"),
        ])
        let path = reader(machine).readPath()
        #expect(path.interfaces.map(\.name) == ["eth0", "wlan0", "wwan0"])
        #expect(path.interfaces.map(\.kind) == [.wiredEthernet, .wifi, .cellular])
        #expect(path.interfaces.map(\.index) == [2, 3, 4])
        #expect(path.interfaces[0].gateways == ["192.0.2.1"])
        #expect(path.interfaces[1].gateways == ["192.168.1.1"])
        // A point-to-point default route (no RTF_GATEWAY) has no next hop.
        #expect(path.interfaces[2].gateways.isEmpty)
        #expect(path.interfaces.allSatisfy { $0.ipv4 && !$0.ipv6 })
        #expect(path.dns)
        #expect(path.metered == nil)
    }

    @Test func theOrderIsTheMetricsNotTheIndexes() throws {
        let machine = try FakeMachine()
        try laptop(machine)
        // The modem (index 4) leads with the lowest metric; the kernel prints 4294967295 as -1,
        // the least preferred; a metric that cannot be read is least preferred too.
        try routes(machine, [
            ("eth0", "00000000", "010200C0", "0003", -1, "00000000"),
            ("wlan0", "00000000", "0101A8C0", "0003", 50, "00000000"),
            ("wwan0", "00000000", "00000000", "0001", 10, "00000000"),
        ])
        #expect(reader(machine).readPath().interfaces.map(\.name) == ["wwan0", "wlan0", "eth0"])
    }

    @Test func atEqualMetricsIPv4ComesBeforeIPv6OnlyThenTheIndex() throws {
        let machine = try FakeMachine()
        try laptop(machine)
        // wwan0 and eth0 have IPv4 at metric 100; wlan0 only IPv6 at metric 0x64 (100).
        try routes(machine, [
            ("wwan0", "00000000", "00000000", "0001", 100, "00000000"),
            ("eth0", "00000000", "010200C0", "0003", 100, "00000000"),
        ])
        try machine.write("proc/net/ipv6_route", """
        00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000001 00000064 00000003 00000000 00000003     wlan0
        """)
        try machine.write("proc/net/if_inet6", "20010db8000000000000000000000002 03 40 00 00     wlan0")
        #expect(reader(machine).readPath().interfaces.map(\.name) == ["eth0", "wwan0", "wlan0"])
    }

    @Test func aModemByItsDeviceTypeAndWiFiByItsWirelessEntry() throws {
        let machine = try FakeMachine()
        try machine.interface("wwp0s20", operstate: "up", ifindex: 9)
        try machine.write("sys/class/net/wwp0s20/type", "1")
        try machine.write("sys/class/net/wwp0s20/uevent", "DEVTYPE=wwan\nINTERFACE=wwp0s20")
        try machine.interface("wl0", operstate: "up", ifindex: 10)
        try machine.write("sys/class/net/wl0/type", "1")
        try machine.directory("sys/class/net/wl0/wireless")
        #expect(reader(machine).kind(of: "wwp0s20") == .cellular)
        #expect(reader(machine).kind(of: "wl0") == .wifi)
    }

    @Test func downInterfacesAndInterfacesWithoutADefaultRouteAreNotInThePath() throws {
        let machine = try FakeMachine()
        try laptop(machine)
        try machine.write("sys/class/net/wlan0/operstate", "down")
        try routes(machine, [
            ("wlan0", "00000000", "0101A8C0", "0003", 600, "00000000"),
            ("eth0", "000200C0", "00000000", "0001", 100, "00FFFFFF"),
        ])
        let path = reader(machine).readPath()
        #expect(path.interfaces.isEmpty)
        #expect(path == NetworkPathReading(interfaces: [], dns: true, metered: nil))
    }

    @Test func anIPv6OnlyInterfaceHasItsNextHopInTextForm() throws {
        let machine = try FakeMachine()
        try laptop(machine)
        try machine.write("proc/net/route", "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n", newline: false)
        try machine.write("proc/net/ipv6_route", """
        00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000001 00000400 00000003 00000000 00000003     wlan0
        00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo
        """)
        try machine.write("proc/net/if_inet6", "20010db8000000000000000000000002 03 40 00 00     wlan0")
        let path = reader(machine).readPath()
        #expect(path.interfaces.map(\.name) == ["wlan0"])
        #expect(path.interfaces[0].ipv6 && !path.interfaces[0].ipv4)
        #expect(path.interfaces[0].gateways == ["fe80::1"])
    }

    @Test func virtualLinksAreOtherAndBridgesToo() throws {
        let machine = try FakeMachine()
        try machine.loopback()
        // A veth pair end: Ethernet framing, no hardware behind it.
        try machine.interface("veth0", operstate: "up", ifindex: 5)
        try machine.write("sys/class/net/veth0/type", "1")
        // A bridge names its DEVTYPE even with a device link faked.
        try machine.interface("br0", operstate: "up", ifindex: 6)
        try machine.write("sys/class/net/br0/type", "1")
        try machine.write("sys/class/net/br0/uevent", "DEVTYPE=bridge")
        try machine.directory("sys/class/net/br0/device")
        // A tunnel.
        try machine.interface("tun0", operstate: "unknown", carrier: "1", ifindex: 7)
        try machine.write("sys/class/net/tun0/type", "65534")
        // A Wi-Fi card known by its phy80211 link only.
        try machine.interface("wlp2s0", operstate: "up", ifindex: 8)
        try machine.write("sys/class/net/wlp2s0/type", "1")
        try machine.directory("sys/class/net/wlp2s0/phy80211")
        let reader = reader(machine)
        #expect(reader.kind(of: "veth0") == .other)
        #expect(reader.kind(of: "br0") == .other)
        #expect(reader.kind(of: "tun0") == .other)
        #expect(reader.kind(of: "wlp2s0") == .wifi)
        #expect(reader.kind(of: "lo") == .other)
        try machine.write("sys/class/net/lo/type", "772")
        #expect(reader.kind(of: "lo") == .loopback)
        // Nothing readable: other, never a guess.
        #expect(reader.kind(of: "missing0") == .other)
    }

    @Test func theMeteredAnswerIsThePreferredInterfaces() throws {
        let machine = try FakeMachine()
        try laptop(machine)
        try routes(machine, [("wlan0", "00000000", "0101A8C0", "0003", 600, "00000000")])
        try machine.write("run/NetworkManager/devices/3", "[device]\nmetered=yes")
        #expect(reader(machine).readPath().metered == true)
    }

    @Test func noResolvConfMeansNoDNS() throws {
        let machine = try FakeMachine()
        try machine.wiredNetwork()
        #expect(reader(machine).readPath().dns == false)
        try machine.write("etc/resolv.conf", "search example.org\n# nameserver 10.0.0.1")
        #expect(reader(machine).readPath().dns == false)
    }

    @Test func addressesFromTheRouteTables() {
        #expect(NetworkReader.ipv4Address(routeHex: "010200C0") == "192.0.2.1")
        #expect(NetworkReader.ipv4Address(routeHex: "00000000") == nil)
        #expect(NetworkReader.ipv4Address(routeHex: "1234") == nil)
        #expect(NetworkReader.ipv4Address(routeHex: "ZZZZZZZZ") == nil)
        #expect(NetworkReader.ipv6Address(hex: "fe800000000000000000000000000001") == "fe80::1")
        #expect(NetworkReader.ipv6Address(hex: "20010db8000000010000000000000001") == "2001:db8:0:1::1")
        #expect(NetworkReader.ipv6Address(hex: "20010db8000100010001000100010001") == "2001:db8:1:1:1:1:1:1")
        #expect(NetworkReader.ipv6Address(hex: "20010000000000000001000000000000") == "2001::1:0:0:0")
        #expect(NetworkReader.ipv6Address(hex: "00000000000000000000000000000001") == "::1")
        #expect(NetworkReader.ipv6Address(hex: "00000000000000000000000000000000") == nil)
        #expect(NetworkReader.ipv6Address(hex: "fe80") == nil)
        #expect(NetworkReader.ipv6Address(hex: "ge800000000000000000000000000001") == nil)
    }

    @Test func aNetworkOnlyKernelMonitorOpensTheRouteSocketAlone() {
        let monitor = KernelEventMonitor(queue: DispatchQueue(label: "route only"), kinds: .network) { _ in }
        defer { monitor.cancel() }
        #expect(monitor.watching.isSubset(of: .network))
        #expect(!monitor.problems.contains { $0.contains("uevent") })
    }
}
