import Foundation

/// What ``NetworkReader`` found.
public struct NetworkReading: Hashable, Sendable {
    /// An interface is up with a default route through it.
    public var available: SourcedValue<Bool>
    /// Whether the connection carrying the default route is metered; `nil` when unknown.
    public var metered: SourcedValue<Bool?>
    /// The interface carrying the default route, when the network is available.
    public var interface: String?
}

/// Reads whether the network is available, and whether it is metered, from files only.
///
/// **Available** when some interface other than `lo`:
/// - is up: `<sys>/class/net/<if>/operstate` is `up`, or `unknown` with `carrier` = `1`
///   (many virtual and tunnel drivers never report an operational state), and
/// - carries a default route: a line of `<proc>/net/route` with destination and mask
///   `00000000`, or of `<proc>/net/ipv6_route` with destination `::/0`, with `RTF_UP` set and
///   `RTF_REJECT` clear (the kernel keeps an unreachable `::/0` on `lo`), on that interface.
///
/// An IPv6 default route also needs a global, non-tentative address on its interface in
/// `<proc>/net/if_inet6` (when that file is readable), because routers advertise the route
/// before the interface may have an address to use it with. IPv4 needs no such check: the
/// kernel accepts a gateway route only through an interface with an address that reaches
/// the gateway.
///
/// **Metered**: NetworkManager decides and publishes metered-ness on D-Bus only; its files
/// hold just what a user configured. So: the interface's NetworkManager run state
/// `<run>/NetworkManager/devices/<ifindex>` gives the active `connection-uuid`; the profile
/// with that `uuid` (in `<run>/NetworkManager/system-connections` or
/// `<etc>/NetworkManager/system-connections`) gives `metered=` in `[connection]`: `1`/`yes`
/// is metered, `2`/`no` is not, anything else (including NetworkManager's own guess for
/// phone tethering, which lives on D-Bus) is unknown (`nil`). A `metered=` key in the device
/// state file itself is honoured too. Profiles are usually readable by root only, so for an
/// ordinary user the answer is mostly `nil`, stated as such in the source.
public struct NetworkReader: Sendable {
    /// Where `/sys` is.
    public var sysRoot: URL
    /// Where `/proc` is.
    public var procRoot: URL
    /// Where `/run` is.
    public var runRoot: URL
    /// Where `/etc` is.
    public var etcRoot: URL

    /// Reads under the given roots.
    public init(sysRoot: URL, procRoot: URL, runRoot: URL, etcRoot: URL) {
        self.sysRoot = sysRoot
        self.procRoot = procRoot
        self.runRoot = runRoot
        self.etcRoot = etcRoot
    }

    /// `RTF_UP`: the route is usable.
    static let routeUp = 0x0001
    /// `RTF_REJECT`: the route refuses traffic (an unreachable route).
    static let routeReject = 0x0200
    /// `RTF_GATEWAY`: the route's next hop is a gateway.
    static let routeGateway = 0x0002

    /// A default route found in a route table.
    struct DefaultRoute: Hashable {
        var interface: String
        var table: String
        /// Whether it is an IPv6 route (`ipv6_route`), not IPv4 (`route`).
        var isIPv6 = false
        /// The route's metric (lower is preferred); 0 when the table gives none.
        var metric: UInt32 = 0
        /// The next hop as an address (`192.0.2.1`, `fe80::1`); `nil` for a route without one
        /// (a point-to-point link).
        var gateway: String?
    }

    /// Reads both values now.
    public func read() -> NetworkReading {
        let (up, upSources) = upInterfaces()
        let routes = defaultRoutes()
        guard let route = routes.first(where: { up.contains($0.interface) }) else {
            let why: String
            if up.isEmpty {
                why = "no interface other than lo is up under \(sysRoot.appendingPathComponent("class/net").path)"
            } else if routes.isEmpty {
                why = "\(up.sorted().joined(separator: ", ")) up but no usable default route in \(procRoot.appendingPathComponent("net/route").path) or \(procRoot.appendingPathComponent("net/ipv6_route").path)"
            } else {
                why = "default route on \(routes.map(\.interface).joined(separator: ", ")), which is down"
            }
            return NetworkReading(
                available: SourcedValue(false, source: why),
                metered: SourcedValue(nil, source: SysfsFile.unknown("no network")),
                interface: nil
            )
        }
        let available = SourcedValue(true, source: "\(route.interface) up (\(upSources[route.interface] ?? "")) with a default route in \(route.table)")
        return NetworkReading(available: available, metered: metered(route.interface), interface: route.interface)
    }

    /// The interfaces that are up, with the file that says so.
    func upInterfaces() -> (Set<String>, [String: String]) {
        let net = sysRoot.appendingPathComponent("class/net")
        var up: Set<String> = []
        var sources: [String: String] = [:]
        for name in SysfsFile.entries(net) where name != "lo" {
            let interface = net.appendingPathComponent(name)
            let operstateURL = interface.appendingPathComponent("operstate")
            switch SysfsFile.contents(of: operstateURL).text {
            case "up":
                up.insert(name)
                sources[name] = "\(operstateURL.path) is up"
            case "unknown":
                // Reading `carrier` of a down interface fails with EINVAL: that is "no".
                let carrierURL = interface.appendingPathComponent("carrier")
                if SysfsFile.contents(of: carrierURL).text == "1" {
                    up.insert(name)
                    sources[name] = "\(operstateURL.path) is unknown, \(carrierURL.path) is 1"
                }
            default:
                continue
            }
        }
        return (up, sources)
    }

    /// Every usable default route, IPv4 first.
    func defaultRoutes() -> [DefaultRoute] {
        var routes: [DefaultRoute] = []
        let ipv4URL = procRoot.appendingPathComponent("net/route")
        if let table = SysfsFile.contents(of: ipv4URL, limit: SysfsFile.maximumSize).text {
            // Iface Destination Gateway Flags RefCnt Use Metric Mask MTU Window IRTT
            for line in table.split(separator: "\n").dropFirst() {
                let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                guard fields.count >= 4, fields[1] == "00000000",
                      fields.count < 8 || fields[7] == "00000000",
                      let flags = Int(fields[3], radix: 16), Self.usable(flags) else { continue }
                // The kernel prints the metric as a signed number: 4294967295 is "-1".
                let metric = fields.count > 6 ? (UInt32(fields[6]) ?? Int32(fields[6]).map { UInt32(bitPattern: $0) } ?? .max) : 0
                routes.append(DefaultRoute(interface: String(fields[0]), table: ipv4URL.path, metric: metric,
                                           gateway: flags & Self.routeGateway != 0 ? Self.ipv4Address(routeHex: fields[2]) : nil))
            }
        }
        let ipv6URL = procRoot.appendingPathComponent("net/ipv6_route")
        if let table = SysfsFile.contents(of: ipv6URL, limit: SysfsFile.maximumSize).text {
            let globals = globalIPv6Interfaces()
            // dest dest_plen src src_plen next_hop metric refcnt use flags iface
            for line in table.split(separator: "\n") {
                let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                guard fields.count >= 10, fields[1] == "00", fields[0].allSatisfy({ $0 == "0" }), fields[0].count == 32,
                      let flags = Int(fields[8], radix: 16), Self.usable(flags) else { continue }
                let interface = String(fields[9])
                if let globals, !globals.contains(interface) { continue }
                routes.append(DefaultRoute(interface: interface, table: ipv6URL.path, isIPv6: true,
                                           metric: UInt32(fields[5], radix: 16) ?? .max,
                                           gateway: Self.ipv6Address(hex: fields[4])))
            }
        }
        return routes
    }

    private static func usable(_ flags: Int) -> Bool {
        flags & routeUp != 0 && flags & routeReject == 0
    }

    /// Interfaces with a global, non-tentative IPv6 address; `nil` when
    /// `<proc>/net/if_inet6` cannot be read (then no address check is made).
    func globalIPv6Interfaces() -> Set<String>? {
        guard let text = SysfsFile.contents(of: procRoot.appendingPathComponent("net/if_inet6"), limit: SysfsFile.maximumSize).text else { return nil }
        var interfaces: Set<String> = []
        // address ifindex prefixlen scope flags name; scope 00 is global; flags 0x40 is
        // tentative (duplicate address detection running) and 0x08 DAD failed.
        for line in text.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 6, fields[3] == "00", let flags = Int(fields[4], radix: 16),
                  flags & 0x48 == 0 else { continue }
            interfaces.insert(String(fields[5]))
        }
        return interfaces
    }

    /// Whether the connection on `interface` is metered, as far as files tell.
    func metered(_ interface: String) -> SourcedValue<Bool?> {
        let dbusOnly = "NetworkManager publishes metered state on D-Bus only"
        let ifindexURL = sysRoot.appendingPathComponent("class/net/\(interface)/ifindex")
        let ifindexContents = SysfsFile.contents(of: ifindexURL)
        guard let ifindex = ifindexContents.text, Int(ifindex) != nil else {
            // Unreadable, or read but not a number: said as it is.
            let what = ifindexContents.text.map { "\(ifindexURL.path) is \(SysfsFile.quoted($0)), not an index" } ?? "\(ifindexURL.path) unreadable"
            return SourcedValue(nil, source: SysfsFile.unknown("\(what); \(dbusOnly)"))
        }
        let stateURL = runRoot.appendingPathComponent("NetworkManager/devices/\(ifindex)")
        let state = SysfsFile.contents(of: stateURL)
        guard let stateText = state.text else {
            let why = state == .missing ? "no NetworkManager device state \(stateURL.path)" : "\(stateURL.path) cannot be read"
            return SourcedValue(nil, source: SysfsFile.unknown("\(why); \(dbusOnly)"))
        }
        if let value = SysfsFile.keyValue(stateText, key: "metered"), let metered = Self.parseMetered(value) {
            return SourcedValue(metered, source: "\(stateURL.path) metered=\(value)")
        }
        guard let uuid = SysfsFile.keyValue(stateText, key: "connection-uuid", section: "device"), !uuid.isEmpty else {
            return SourcedValue(nil, source: SysfsFile.unknown("\(stateURL.path) names no connection; \(dbusOnly)"))
        }
        var unreadable: [String] = []
        for directory in [runRoot.appendingPathComponent("NetworkManager/system-connections"), etcRoot.appendingPathComponent("NetworkManager/system-connections")] {
            for name in SysfsFile.entries(directory) {
                let profileURL = directory.appendingPathComponent(name)
                let profile = SysfsFile.contents(of: profileURL)
                guard let text = profile.text else {
                    if case .unreadable = profile { unreadable.append(profileURL.path) }
                    continue
                }
                guard SysfsFile.keyValue(text, key: "uuid", section: "connection") == uuid else { continue }
                let value = SysfsFile.keyValue(text, key: "metered", section: "connection")
                if let value, let metered = Self.parseMetered(value) {
                    return SourcedValue(metered, source: "NetworkManager profile \(profileURL.path) metered=\(value)")
                }
                return SourcedValue(nil, source: SysfsFile.unknown("NetworkManager profile \(profileURL.path) leaves metered to NetworkManager's guess; \(dbusOnly)"))
            }
        }
        let note = unreadable.isEmpty ? "" : " (unreadable: \(unreadable.joined(separator: ", ")))"
        return SourcedValue(nil, source: SysfsFile.unknown("no readable NetworkManager profile with uuid \(uuid)\(note); \(dbusOnly)"))
    }

    /// `1`/`yes`/`true`/`guess-yes` is metered, `2`/`no`/`false`/`guess-no` is not (the
    /// keyfile stores NetworkManager's `NMMetered` number); anything else unknown.
    static func parseMetered(_ value: String) -> Bool? {
        switch value.lowercased() {
        case "1", "yes", "true", "guess-yes", "3": return true
        case "2", "no", "false", "guess-no", "4": return false
        default: return nil
        }
    }
}
