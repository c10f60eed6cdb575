import DeviceConditions

/// The network as a path monitor sees it (Apple: `NWPath`): whether traffic can leave the
/// device, over which interfaces, and what those offer. A value: it never changes; a
/// monitor hands a new one when the network changes.
///
/// On Linux a path is satisfied when an interface is up with a usable default route (the
/// scheduler's own rule, docs/system.md); see docs/porting.md, "Network paths", for how each
/// property is read.
public struct NWPath: Equatable, CustomDebugStringConvertible, Sendable {
    /// Whether a path can be used (Apple: `NWPath.Status`), with Apple's three cases.
    public enum Status: Equatable, Hashable, Sendable {
        /// Traffic can leave the device.
        case satisfied
        /// No interface can carry traffic now.
        case unsatisfied
        /// A connection attempt could bring a link up (a VPN on demand, cellular data not yet
        /// active). Never on Linux: no link here comes up because a connection asks for it.
        case requiresConnection
    }

    /// Why a path is unsatisfied (Apple: `NWPath.UnsatisfiedReason`), with Apple's cases.
    public enum UnsatisfiedReason: Equatable, Hashable, Sendable {
        /// No usable network, or the path is satisfied (Apple gives this value then too).
        case notAvailable
        /// The user turned cellular data off for the app. Never on Linux: no such setting.
        case cellularDenied
        /// The user turned Wi-Fi off for the app. Never on Linux.
        case wifiDenied
        /// The user refused the app the local network. Never on Linux.
        case localNetworkDenied
        /// A VPN the path requires is not active (iOS 18). Never on Linux: no such rule.
        case vpnInactive
    }

    /// Whether the path can be used.
    public let status: Status
    /// The interfaces the path may use, the preferred one first.
    public let availableInterfaces: [NWInterface]
    /// Whether the path uses an interface the user pays for by the byte: a cellular link, or a
    /// connection NetworkManager marks metered (a phone's hotspot); in the simulator, a
    /// metered network.
    public let isExpensive: Bool
    /// Whether Low Data Mode restricts the path (iOS 13). Always `false`: Linux has no Low
    /// Data Mode.
    public let isConstrained: Bool
    /// Whether IPv4 traffic can leave the device (an IPv4 default route).
    public let supportsIPv4: Bool
    /// Whether IPv6 traffic can leave the device (an IPv6 default route and a global address).
    public let supportsIPv6: Bool
    /// Whether a name server is configured.
    public let supportsDNS: Bool
    /// The gateways of the path's interfaces (their default routes' next hops), as host and
    /// port 0, as Apple lists them.
    public let gateways: [NWEndpoint]
    /// The local endpoint of a connection's path: `nil`, as for every monitor's path.
    public let localEndpoint: NWEndpoint?
    /// The remote endpoint of a connection's path: `nil`, as for every monitor's path.
    public let remoteEndpoint: NWEndpoint?

    /// Why the path is unsatisfied: `.notAvailable` (the only reason Linux has), also for a
    /// satisfied path, as on iOS.
    public var unsatisfiedReason: UnsatisfiedReason { .notAvailable }

    /// Whether the path is ultra-constrained (iOS 26: a satellite link that carries only
    /// what an app is entitled to). Always `false`: Linux reports no such link, as
    /// ``isConstrained`` is always `false`.
    public var isUltraConstrained: Bool { false }

    /// The link layer's measured quality (iOS 26), Apple's cases: for tuning an algorithm's
    /// first values, never to gate a connection.
    public enum LinkQuality: Hashable, Sendable {
        /// No measurement is available.
        case unknown
        /// The link's quality is minimal.
        case minimal
        /// The link's quality is moderate.
        case moderate
        /// The link's quality is good.
        case good
    }

    /// The link layer's measured quality: always `.unknown` ("no measurement is available"),
    /// as Linux measures none.
    public var linkQuality: LinkQuality { .unknown }

    /// Whether traffic on the path goes over an interface of `type`: the preferred interface
    /// (the first of ``availableInterfaces``), the one connections use, as on iOS, where a
    /// phone on Wi-Fi with cellular also up answers `false` for `.cellular`.
    public func usesInterfaceType(_ type: NWInterface.InterfaceType) -> Bool {
        status == .satisfied && availableInterfaces.first?.type == type
    }

    /// Apple's form: `satisfied (Path is satisfied), interface: eth0, ipv4, dns`,
    /// `unsatisfied (No network route)`.
    public var debugDescription: String {
        switch status {
        case .satisfied:
            var parts = ["satisfied (Path is satisfied)"]
            if let first = availableInterfaces.first { parts.append("interface: \(first.name)") }
            if isExpensive { parts.append("expensive") }
            if supportsIPv4 { parts.append("ipv4") }
            if supportsIPv6 { parts.append("ipv6") }
            if supportsDNS { parts.append("dns") }
            return parts.joined(separator: ", ")
        case .unsatisfied: return "unsatisfied (No network route)"
        case .requiresConnection: return "satisfiable (Path requires a connection)"
        }
    }

    /// The path a monitor sees in `reading`: only interfaces of `required` type when given,
    /// none of the `prohibited` types.
    init(reading: NetworkPathReading, required: NWInterface.InterfaceType?, prohibited: [NWInterface.InterfaceType]) {
        let usable = reading.interfaces.filter { interface in
            let type = NWInterface.InterfaceType(interface.kind)
            return (required == nil || type == required) && !prohibited.contains(type)
        }
        let interfaces = usable.map(NWInterface.init)
        status = interfaces.isEmpty ? .unsatisfied : .satisfied
        availableInterfaces = interfaces
        // The metered answer is the preferred interface's: it holds only while that one leads.
        let preferredIsFirst = usable.first?.name == reading.interfaces.first?.name
        isExpensive = interfaces.first.map { $0.type == .cellular || (preferredIsFirst && reading.metered == true) } ?? false
        isConstrained = false
        supportsIPv4 = usable.contains(where: \.ipv4)
        supportsIPv6 = usable.contains(where: \.ipv6)
        supportsDNS = !usable.isEmpty && reading.dns
        var gateways: [NWEndpoint] = []
        for interface in usable {
            let nwInterface = NWInterface(interface)
            for text in interface.gateways {
                let host: NWEndpoint.Host
                if let address = IPv4Address(text) {
                    host = .ipv4(address)
                } else if let address = IPv6Address(text) {
                    // A link-local next hop is only meaningful on its interface.
                    host = .ipv6(IPv6Address(address.rawValue, address.isLinkLocal ? nwInterface : nil) ?? address)
                } else {
                    continue
                }
                let endpoint = NWEndpoint.hostPort(host: host, port: .any)
                if !gateways.contains(endpoint) { gateways.append(endpoint) }
            }
        }
        self.gateways = gateways
        localEndpoint = nil
        remoteEndpoint = nil
    }

    /// The path before a monitor has looked: unsatisfied, with nothing.
    static let unevaluated = NWPath(reading: .offline, required: nil, prohibited: [])
}
