#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// What kind of link a network interface is, as Apple's Network framework tells them apart
/// (`NWInterface.InterfaceType`).
public enum NetworkInterfaceKind: String, Hashable, Sendable, CaseIterable {
    /// A Wi-Fi link.
    case wifi
    /// A cellular (mobile broadband) link.
    case cellular
    /// A wired Ethernet link on hardware.
    case wiredEthernet
    /// The loopback interface.
    case loopback
    /// Anything else: virtual interfaces (bridges, tunnels, VPNs, container links), PPP.
    case other
}

/// One interface that can carry traffic off the machine: up, with a default route.
public struct NetworkPathInterface: Hashable, Sendable {
    /// Its name (`eth0`, `wlp2s0`).
    public var name: String
    /// The kernel's index for it (`ifindex`); 0 when unreadable.
    public var index: Int
    /// What kind of link it is.
    public var kind: NetworkInterfaceKind
    /// Whether an IPv4 default route goes through it.
    public var ipv4: Bool
    /// Whether an IPv6 default route goes through it.
    public var ipv6: Bool
    /// Its default routes' next hops (`192.0.2.1`, `fe80::1`), IPv4 first, without duplicates.
    public var gateways: [String]

    /// An interface.
    public init(name: String, index: Int, kind: NetworkInterfaceKind, ipv4: Bool, ipv6: Bool, gateways: [String]) {
        self.name = name
        self.index = index
        self.kind = kind
        self.ipv4 = ipv4
        self.ipv6 = ipv6
        self.gateways = gateways
    }
}

/// The machine's network path as an app sees it (what `NWPathMonitor` reports): the
/// interfaces that carry a default route, in order of preference, and what they offer.
public struct NetworkPathReading: Hashable, Sendable {
    /// The interfaces that are up with a usable default route, the preferred one first
    /// (lowest route metric; IPv4 before IPv6, then kernel index, at equal metric). Empty
    /// when the network is not available.
    public var interfaces: [NetworkPathInterface]
    /// Whether a name server is configured (`nameserver` in `<etc>/resolv.conf`).
    public var dns: Bool
    /// Whether the preferred interface's connection is metered, as NetworkManager's files
    /// say (``NetworkReader``); `nil` when nothing readable says.
    public var metered: Bool?

    /// A reading.
    public init(interfaces: [NetworkPathInterface], dns: Bool, metered: Bool?) {
        self.interfaces = interfaces
        self.dns = dns
        self.metered = metered
    }

    /// No network.
    public static let offline = NetworkPathReading(interfaces: [], dns: false, metered: nil)
}

extension NetworkReader {
    /// ARPHRD_ETHER: an Ethernet-framed link (wired, Wi-Fi, and most virtual ones).
    static let hardwareEther = 1
    /// ARPHRD_LOOPBACK.
    static let hardwareLoopback = 772
    /// ARPHRD_RAWIP: raw IP with no link layer, what mobile-broadband modems (QMI, MBIM) use.
    static let hardwareRawIP = 519

    /// Reads the path now: the interfaces that are up (as ``read()`` judges them) and carry a
    /// usable default route, with their kinds, route families and gateways; whether DNS is
    /// configured; whether the preferred interface's connection is metered.
    public func readPath() -> NetworkPathReading {
        let (up, _) = upInterfaces()
        var byInterface: [String: [DefaultRoute]] = [:]
        for route in defaultRoutes() where up.contains(route.interface) {
            byInterface[route.interface, default: []].append(route)
        }
        var interfaces: [(interface: NetworkPathInterface, metric: UInt32, ipv6Only: Bool)] = []
        for (name, routes) in byInterface {
            var gateways: [String] = []
            for route in routes.sorted(by: { !$0.isIPv6 && $1.isIPv6 }) {
                if let gateway = route.gateway, !gateways.contains(gateway) { gateways.append(gateway) }
            }
            let ipv4 = routes.contains { !$0.isIPv6 }
            let interface = NetworkPathInterface(
                name: name, index: index(of: name), kind: kind(of: name),
                ipv4: ipv4, ipv6: routes.contains(where: \.isIPv6), gateways: gateways
            )
            interfaces.append((interface, routes.map(\.metric).min() ?? 0, !ipv4))
        }
        interfaces.sort { left, right in
            if left.metric != right.metric { return left.metric < right.metric }
            if left.ipv6Only != right.ipv6Only { return !left.ipv6Only }
            if left.interface.index != right.interface.index { return left.interface.index < right.interface.index }
            return left.interface.name < right.interface.name
        }
        let ordered = interfaces.map(\.interface)
        return NetworkPathReading(
            interfaces: ordered,
            dns: hasNameServer(),
            metered: ordered.first.flatMap { metered($0.name).value }
        )
    }

    /// The interface's kernel index; 0 when unreadable.
    func index(of name: String) -> Int {
        SysfsFile.contents(of: sysRoot.appendingPathComponent("class/net/\(name)/ifindex")).text.flatMap { Int($0) } ?? 0
    }

    /// What kind of link `name` is, from sysfs:
    /// - loopback: hardware type 772;
    /// - Wi-Fi: `DEVTYPE=wlan` in its `uevent`, or a `wireless` or `phy80211` entry;
    /// - cellular: `DEVTYPE=wwan`, or hardware type 519 (raw IP, what QMI and MBIM modems use);
    /// - wired Ethernet: hardware type 1 with a `device` (real hardware behind it) and no
    ///   `DEVTYPE` (bridges, VLANs and bonds name theirs);
    /// - anything else (virtual links without hardware: veth, tun, bridges; PPP): other.
    func kind(of name: String) -> NetworkInterfaceKind {
        let directory = sysRoot.appendingPathComponent("class/net/\(name)")
        let type = SysfsFile.contents(of: directory.appendingPathComponent("type")).text.flatMap { Int($0) }
        if type == Self.hardwareLoopback { return .loopback }
        let deviceType = SysfsFile.contents(of: directory.appendingPathComponent("uevent")).text
            .flatMap { SysfsFile.keyValue($0, key: "DEVTYPE") }
        let manager = FileManager.default
        if deviceType == "wlan"
            || manager.fileExists(atPath: directory.appendingPathComponent("wireless").path)
            || manager.fileExists(atPath: directory.appendingPathComponent("phy80211").path) {
            return .wifi
        }
        if deviceType == "wwan" || type == Self.hardwareRawIP { return .cellular }
        if type == Self.hardwareEther, deviceType == nil,
           manager.fileExists(atPath: directory.appendingPathComponent("device").path) {
            return .wiredEthernet
        }
        return .other
    }

    /// Whether `<etc>/resolv.conf` names a name server.
    func hasNameServer() -> Bool {
        guard let text = SysfsFile.contents(of: etcRoot.appendingPathComponent("resolv.conf"), limit: SysfsFile.valueLimit).text else { return false }
        return text.split(whereSeparator: \.isNewline).contains { line in
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            return fields.count >= 2 && fields[0] == "nameserver"
        }
    }

    /// An IPv4 address from `/proc/net/route`'s eight hex digits, which are the address's
    /// four bytes read as one number in the machine's byte order (`010200C0` is `192.0.2.1`
    /// on a little-endian machine): the number's bytes in memory are the address in network
    /// order on any machine. `nil` for anything else, or for 0.0.0.0.
    static func ipv4Address<S: StringProtocol>(routeHex hex: S) -> String? {
        guard hex.count == 8, hex.allSatisfy(\.isHexDigit), let value = UInt32(hex, radix: 16), value != 0 else { return nil }
        return AddressText.format(withUnsafeBytes(of: value) { Array($0) }, family: AF_INET)
    }

    /// An IPv6 address from `/proc/net/ipv6_route`'s 32 hex digits (network order), in
    /// RFC 5952's text form (`fe80::1`, by the C library's `inet_ntop`); `nil` for anything
    /// else, or for `::`.
    static func ipv6Address<S: StringProtocol>(hex: S) -> String? {
        guard hex.count == 32, hex.allSatisfy(\.isHexDigit) else { return nil }
        let digits = Array(hex)
        let bytes = (0..<16).map { UInt8(String(digits[($0 * 2)..<($0 * 2 + 2)]), radix: 16) ?? 0 }
        guard bytes.contains(where: { $0 != 0 }) else { return nil }
        return AddressText.format(bytes, family: AF_INET6)
    }
}

/// Addresses as text, through the C library's `inet_ntop`.
package enum AddressText {
    /// `bytes` (4 for `AF_INET`, 16 for `AF_INET6`, network order) as text (`192.0.2.1`,
    /// `fe80::1`); `nil` when the C library refuses them.
    package static func format(_ bytes: [UInt8], family: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let written = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        guard written != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
