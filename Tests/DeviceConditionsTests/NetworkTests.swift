import DeviceConditions
import Foundation
import Testing

@Suite struct NetworkTests {
    func reader(_ machine: FakeMachine) -> NetworkReader {
        NetworkReader(sysRoot: machine.roots.sys, procRoot: machine.roots.proc, runRoot: machine.roots.run, etcRoot: machine.roots.etc)
    }

    /// What a real machine lists in /proc/net/ipv6_route besides defaults: link-local and
    /// loopback routes, and the kernel's unreachable ::/0 on lo (RTF_REJECT).
    static let ipv6Background = """
    fe800000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000002 00000000 00000001     eth0
    00000000000000000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000002 00000000 80200001       lo
    00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo
    """

    @Test func upWithADefaultRouteIsAvailable() throws {
        let machine = try FakeMachine()
        try machine.wiredNetwork()
        let network = reader(machine).read()
        #expect(network.available.value == true)
        #expect(network.interface == "eth0")
        #expect(network.available.source.contains(machine.path("sys/class/net/eth0/operstate")))
        #expect(network.available.source.contains(machine.path("proc/net/route")))
    }

    @Test func interfaceUpWithoutADefaultRouteIsDown() throws {
        let machine = try FakeMachine()
        try machine.loopback()
        try machine.interface("eth0", operstate: "up")
        try machine.ipv4Routes([("eth0", "0002A8C0", "0001", "00FFFFFF")])
        try machine.write("proc/net/ipv6_route", Self.ipv6Background)
        let network = reader(machine).read()
        #expect(network.available.value == false)
        #expect(network.available.source.contains("no usable default route"))
        #expect(network.metered.value == nil)
    }

    @Test func defaultRouteOnADownInterfaceIsDown() throws {
        let machine = try FakeMachine()
        try machine.loopback()
        try machine.interface("eth0", operstate: "down", carrier: "0")
        try machine.interface("wlan0", operstate: "up", ifindex: 3)
        try machine.ipv4Routes([("eth0", "00000000", "0003", "00000000")])
        let network = reader(machine).read()
        #expect(network.available.value == false)
        #expect(network.available.source.contains("default route on eth0, which is down"))
    }

    @Test func aDefaultRouteWithoutRTFUpIsNotUsable() throws {
        let machine = try FakeMachine()
        try machine.loopback()
        try machine.interface("eth0", operstate: "up")
        try machine.ipv4Routes([("eth0", "00000000", "0002", "00000000")])
        #expect(reader(machine).read().available.value == false)
    }

    @Test func anUnreachableDefaultRouteIsNotUsable() throws {
        let machine = try FakeMachine()
        try machine.loopback()
        try machine.interface("eth0", operstate: "up")
        // `ip route add unreachable default`: RTF_UP | RTF_REJECT.
        try machine.ipv4Routes([("eth0", "00000000", "0201", "00000000")])
        #expect(reader(machine).read().available.value == false)
    }

    @Test func noInterfaceButLoopbackIsDown() throws {
        let machine = try FakeMachine()
        try machine.loopback()
        try machine.ipv4Routes([("lo", "00000000", "0001", "00000000")])
        let network = reader(machine).read()
        #expect(network.available.value == false)
        #expect(network.available.source.contains("no interface other than lo is up"))
    }

    @Test func ipv6OnlyDefaultRouteIsAvailable() throws {
        let machine = try FakeMachine()
        try machine.loopback()
        try machine.interface("wlan0", operstate: "up", ifindex: 3)
        try machine.ipv4Routes([])
        try machine.write("proc/net/ipv6_route", Self.ipv6Background.replacingOccurrences(of: "eth0", with: "wlan0") + """

        00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000001 00000400 00000002 00000000 00000003    wlan0
        """)
        try machine.write("proc/net/if_inet6", """
        20010db8000000000000000000000042 03 40 00 00    wlan0
        fe800000000000000000000000000042 03 40 20 80    wlan0
        00000000000000000000000000000001 01 80 10 80       lo
        """)
        let network = reader(machine).read()
        #expect(network.available.value == true)
        #expect(network.interface == "wlan0")
        #expect(network.available.source.contains(machine.path("proc/net/ipv6_route")))
    }

    @Test func ipv6DefaultRouteWithoutAGlobalAddressIsDown() throws {
        let machine = try FakeMachine()
        try machine.loopback()
        try machine.interface("wlan0", operstate: "up", ifindex: 3)
        try machine.write("proc/net/ipv6_route", """
        00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000001 00000400 00000002 00000000 00000003    wlan0
        """)
        // Only a link-local address (scope 20) and a tentative global one (flags 40).
        try machine.write("proc/net/if_inet6", """
        fe800000000000000000000000000042 03 40 20 80    wlan0
        20010db8000000000000000000000042 03 40 00 40    wlan0
        """)
        #expect(reader(machine).read().available.value == false)
    }

    @Test func operstateUnknownWithCarrierCountsAsUp() throws {
        let machine = try FakeMachine()
        try machine.interface("tun0", operstate: "unknown", carrier: "1")
        try machine.ipv4Routes([("tun0", "00000000", "0001", "00000000")])
        let network = reader(machine).read()
        #expect(network.available.value == true)
        #expect(network.available.source.contains("tun0/carrier is 1"))
    }

    @Test func operstateUnknownWithoutCarrierIsDown() throws {
        let machine = try FakeMachine()
        try machine.interface("tun0", operstate: "unknown", carrier: "0")
        try machine.ipv4Routes([("tun0", "00000000", "0001", "00000000")])
        #expect(reader(machine).read().available.value == false)
    }

    @Test func meteredIsUnknownWithoutNetworkManager() throws {
        let machine = try FakeMachine()
        try machine.wiredNetwork()
        let metered = reader(machine).read().metered
        #expect(metered.value == nil)
        #expect(metered.source.hasPrefix("unknown: "))
        #expect(metered.source.contains("D-Bus only"))
    }

    @Test(arguments: [("1", true as Bool?), ("2", false), ("0", nil)])
    func meteredComesFromTheActiveNetworkManagerProfile(value: String, expected: Bool?) throws {
        let machine = try FakeMachine()
        try machine.wiredNetwork()
        try machine.write("run/NetworkManager/devices/2", """
        [device]
        managed=true
        connection-uuid=5fcd2a3c-0000-4000-8000-000000000001
        nm-owned=false
        """)
        try machine.write("etc/NetworkManager/system-connections/Other.nmconnection", """
        [connection]
        id=Other
        uuid=11111111-0000-4000-8000-000000000000
        metered=1
        """)
        try machine.write("etc/NetworkManager/system-connections/Phone.nmconnection", """
        [connection]
        id=Phone
        uuid=5fcd2a3c-0000-4000-8000-000000000001
        type=ethernet
        metered=\(value)
        """)
        let metered = reader(machine).read().metered
        #expect(metered.value == expected)
        #expect(metered.source.contains("Phone.nmconnection"))
    }
}
