import DeviceConditions
import Foundation
@testable import Network
import Testing

/// Paths as a monitor makes them from a reading, and the endpoint types they carry.
@Suite struct NWPathTests {
    static let laptop = NetworkPathReading(
        interfaces: [
            NetworkPathInterface(name: "eth0", index: 2, kind: .wiredEthernet, ipv4: true, ipv6: true, gateways: ["192.0.2.1", "fe80::1"]),
            NetworkPathInterface(name: "wlan0", index: 3, kind: .wifi, ipv4: true, ipv6: false, gateways: ["192.168.1.1"]),
            NetworkPathInterface(name: "wwan0", index: 4, kind: .cellular, ipv4: true, ipv6: false, gateways: []),
        ],
        dns: true, metered: false
    )

    @Test func aPathOverEveryInterface() {
        let path = NWPath(reading: Self.laptop, required: nil, prohibited: [])
        #expect(path.status == .satisfied)
        #expect(path.availableInterfaces.map(\.name) == ["eth0", "wlan0", "wwan0"])
        #expect(path.availableInterfaces.map(\.type) == [.wiredEthernet, .wifi, .cellular])
        // Traffic goes over the preferred interface: the others are available, not used.
        #expect(path.usesInterfaceType(.wiredEthernet))
        #expect(!path.usesInterfaceType(.cellular) && !path.usesInterfaceType(.wifi) && !path.usesInterfaceType(.loopback))
        #expect(!path.isExpensive && !path.isConstrained)
        #expect(!path.isUltraConstrained && path.linkQuality == .unknown, "iOS 26's: no such link, no measurement")
        #expect(path.supportsIPv4 && path.supportsIPv6 && path.supportsDNS)
        #expect(path.gateways.map(\.debugDescription) == ["192.0.2.1:0", "[fe80::1]:0", "192.168.1.1:0"])
        // A link-local next hop is scoped to its interface.
        if case .hostPort(.ipv6(let address), _) = path.gateways[1] {
            #expect(address.interface?.name == "eth0")
        } else {
            Issue.record("the second gateway is not an IPv6 host: \(path.gateways[1])")
        }
        #expect(path.unsatisfiedReason == .notAvailable)
        #expect(path.localEndpoint == nil && path.remoteEndpoint == nil)
        #expect(path.debugDescription == "satisfied (Path is satisfied), interface: eth0, ipv4, ipv6, dns")
    }

    @Test func aRequiredTypeKeepsOnlyThatType() {
        let wifi = NWPath(reading: Self.laptop, required: .wifi, prohibited: [])
        #expect(wifi.status == .satisfied)
        #expect(wifi.availableInterfaces.map(\.name) == ["wlan0"])
        #expect(!wifi.supportsIPv6)
        #expect(!wifi.usesInterfaceType(.wiredEthernet))
        let loopback = NWPath(reading: Self.laptop, required: .loopback, prohibited: [])
        #expect(loopback.status == .unsatisfied)
        #expect(loopback.availableInterfaces.isEmpty && loopback.gateways.isEmpty)
        #expect(!loopback.supportsDNS && !loopback.supportsIPv4)
        #expect(loopback.debugDescription == "unsatisfied (No network route)")
    }

    @Test func prohibitedTypesAreLeftOut() {
        let path = NWPath(reading: Self.laptop, required: nil, prohibited: [.wiredEthernet, .wifi])
        #expect(path.availableInterfaces.map(\.name) == ["wwan0"])
        // Only cellular is left: expensive, whatever NetworkManager said of eth0.
        #expect(path.isExpensive)
        let none = NWPath(reading: Self.laptop, required: .wifi, prohibited: [.wifi])
        #expect(none.status == .unsatisfied)
    }

    @Test func aMeteredPreferredConnectionIsExpensiveOnlyWhileItLeads() {
        var reading = Self.laptop
        reading.metered = true
        #expect(NWPath(reading: reading, required: nil, prohibited: []).isExpensive)
        // Without eth0 the metered answer (eth0's) says nothing of Wi-Fi.
        #expect(!NWPath(reading: reading, required: .wifi, prohibited: []).isExpensive)
        #expect(!NWPath(reading: .offline, required: nil, prohibited: []).isExpensive)
    }

    @Test func pathsCompareByWhatTheySay() {
        #expect(NWPath(reading: Self.laptop, required: nil, prohibited: []) == NWPath(reading: Self.laptop, required: nil, prohibited: []))
        var moved = Self.laptop
        moved.interfaces.swapAt(0, 1)
        #expect(NWPath(reading: moved, required: nil, prohibited: []) != NWPath(reading: Self.laptop, required: nil, prohibited: []))
    }

    @Test func addresses() throws {
        let v4 = try #require(IPv4Address("192.0.2.1"))
        #expect(v4.rawValue == Data([192, 0, 2, 1]))
        #expect(v4.debugDescription == "192.0.2.1")
        #expect(!v4.isLoopback && !v4.isLinkLocal && !v4.isMulticast)
        #expect(IPv4Address.loopback.isLoopback && IPv4Address("169.254.3.4")?.isLinkLocal == true)
        #expect(IPv4Address.mdnsGroup.isMulticast && IPv4Address.mdnsGroup.debugDescription == "224.0.0.251")
        for bad in ["", "192.0.2", "192.0.2.256", "1.2.3.4.5", "example.com", "::1", "192.0.2.1\u{0}"] {
            #expect(IPv4Address(bad) == nil, "\(bad.debugDescription) is not an IPv4 address")
        }
        #expect(IPv4Address(Data([1, 2, 3])) == nil)
        #expect(IPv4Address(Data([10, 0, 0, 1]))?.debugDescription == "10.0.0.1")

        let v6 = try #require(IPv6Address("2001:0db8:0000:0000:0000:0000:0000:0001"))
        #expect(v6.debugDescription == "2001:db8::1")
        #expect(v6.rawValue.count == 16)
        #expect(IPv6Address("fe80::1%eth0")?.isLinkLocal == true)
        #expect(IPv6Address("fe80::1%") == nil)
        #expect(IPv6Address.loopback.isLoopback && IPv6Address.loopback.debugDescription == "::1")
        #expect(IPv6Address.linkLocalRouters.isMulticast)
        #expect(IPv6Address("fd00::2")?.isUniqueLocal == true)
        let mapped = try #require(IPv6Address("::ffff:192.0.2.7"))
        #expect(mapped.isIPv4Mapped && mapped.asIPv4 == IPv4Address("192.0.2.7"))
        #expect(v6.asIPv4 == nil)
        #expect(IPv6Address("ff02::1")?.multicastScope == .linkLocal && IPv6Address("ff0e::1")?.multicastScope == .global)
        #expect(IPv6Address("ff03::1")?.multicastScope == nil && v6.multicastScope == nil)
        #expect(IPv6Address("2002:c000:201::1")?.is6to4 == true && !v6.is6to4)
        #expect(IPv6Address("::192.0.2.1")?.isIPv4Compatabile == true)
        #expect(!IPv6Address.loopback.isIPv4Compatabile && !IPv6Address.any.isIPv4Compatabile && !mapped.isIPv4Compatabile)
        for bad in ["", ":::", "2001:db8::g", "192.0.2.1", "1:2:3:4:5:6:7:8:9"] {
            #expect(IPv6Address(bad) == nil, "\(bad.debugDescription) is not an IPv6 address")
        }
    }

    @Test func hostsAndPorts() {
        let named: NWEndpoint.Host = "example.com"
        #expect(named == .name("example.com", nil))
        #expect(NWEndpoint.Host("192.0.2.1") == .ipv4(IPv4Address("192.0.2.1")!))
        #expect(NWEndpoint.Host("::1") == .ipv6(.loopback))
        let port: NWEndpoint.Port = 443
        #expect(port == .https && port.rawValue == 443)
        #expect(NWEndpoint.Port("8080")?.rawValue == 8080)
        #expect(NWEndpoint.Port("65536") == nil && NWEndpoint.Port("http") == nil && NWEndpoint.Port("-1") == nil)
        #expect(NWEndpoint.hostPort(host: "example.com", port: .http).debugDescription == "example.com:80")
        #expect(NWEndpoint.hostPort(host: "::1", port: 8443).debugDescription == "[::1]:8443")
        #expect(NWEndpoint.unix(path: "/run/app.sock").debugDescription == "/run/app.sock")
    }
}
