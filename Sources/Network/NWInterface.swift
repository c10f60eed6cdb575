import DeviceConditions

/// A network interface a path can use (Apple: `NWInterface`): its name, kind and index, as
/// the kernel knows it (`eth0`, `wlp2s0`, `wwan0`); in the simulator, the simulated
/// device's one link, named as iOS names them (`en0` for Wi-Fi, `pdp_ip0` for cellular).
public struct NWInterface: Hashable, CustomDebugStringConvertible, Sendable {
    /// The kinds of interface (Apple: `NWInterface.InterfaceType`), with Apple's five cases
    /// (docs/porting.md, "Network paths": how Linux links are told apart).
    public enum InterfaceType: Hashable, Sendable {
        /// Virtual or otherwise unclassified links (bridges, tunnels, VPNs, PPP).
        case other
        /// A Wi-Fi link.
        case wifi
        /// A cellular link (a mobile-broadband modem; in the simulator, a metered network).
        case cellular
        /// A wired Ethernet link.
        case wiredEthernet
        /// The loopback interface.
        case loopback
    }

    /// What kind of link it is.
    public let type: InterfaceType
    /// Its name (`eth0`).
    public let name: String
    /// The kernel's index for it.
    public let index: Int

    /// The name, as Apple's shows an interface.
    public var debugDescription: String { name }

    init(type: InterfaceType, name: String, index: Int) {
        self.type = type
        self.name = name
        self.index = index
    }

    init(_ reading: NetworkPathInterface) {
        self.init(type: InterfaceType(reading.kind), name: reading.name, index: reading.index)
    }
}

extension NWInterface.InterfaceType {
    init(_ kind: NetworkInterfaceKind) {
        switch kind {
        case .wifi: self = .wifi
        case .cellular: self = .cellular
        case .wiredEthernet: self = .wiredEthernet
        case .loopback: self = .loopback
        case .other: self = .other
        }
    }
}
