#if canImport(Glibc)
import Glibc
#endif
import DeviceConditions
import Foundation

/// Where a connection goes (Apple: `NWEndpoint`). Here for what a path reports (its
/// gateways) and for code that builds endpoints beside a path monitor; this package has no
/// `NWConnection` (docs/porting.md, "Network paths").
public enum NWEndpoint: Hashable, CustomDebugStringConvertible, Sendable {
    /// A host and a port.
    case hostPort(host: NWEndpoint.Host, port: NWEndpoint.Port)
    /// A Bonjour service.
    case service(name: String, type: String, domain: String, interface: NWInterface?)
    /// A Unix domain socket's path.
    case unix(path: String)
    /// A URL.
    case url(URL)

    /// `192.0.2.1:443`, `[fe80::1]:0`, `name.type.domain`, the path or the URL.
    public var debugDescription: String {
        switch self {
        case .hostPort(let host, let port):
            if case .ipv6 = host { return "[\(host.debugDescription)]:\(port.rawValue)" }
            return "\(host.debugDescription):\(port.rawValue)"
        case .service(let name, let type, let domain, _): return "\(name).\(type).\(domain)"
        case .unix(let path): return path
        case .url(let url): return url.absoluteString
        }
    }

    /// A host: a name or an address (Apple: `NWEndpoint.Host`).
    public enum Host: Hashable, CustomDebugStringConvertible, ExpressibleByStringLiteral, Sendable {
        /// A name to resolve, optionally on one interface.
        case name(String, NWInterface?)
        /// An IPv4 address.
        case ipv4(IPv4Address)
        /// An IPv6 address.
        case ipv6(IPv6Address)

        /// An address when `string` is one (`192.0.2.1`, `fe80::1`), else a name.
        public init(_ string: String) {
            if let address = IPv4Address(string) {
                self = .ipv4(address)
            } else if let address = IPv6Address(string) {
                self = .ipv6(address)
            } else {
                self = .name(string, nil)
            }
        }

        /// As ``init(_:)``.
        public init(stringLiteral value: String) { self.init(value) }

        /// The interface the host is scoped to, if any.
        public var interface: NWInterface? {
            switch self {
            case .name(_, let interface): return interface
            case .ipv4(let address): return address.interface
            case .ipv6(let address): return address.interface
            }
        }

        /// The name or the address's text.
        public var debugDescription: String {
            switch self {
            case .name(let name, _): return name
            case .ipv4(let address): return address.debugDescription
            case .ipv6(let address): return address.debugDescription
            }
        }
    }

    /// A port number (Apple: `NWEndpoint.Port`).
    public struct Port: Hashable, CustomDebugStringConvertible, ExpressibleByIntegerLiteral, RawRepresentable, Sendable {
        /// The number.
        public let rawValue: UInt16

        /// Any port (0).
        public static let any = Port(rawValue: 0)!
        /// SSH (22).
        public static let ssh = Port(rawValue: 22)!
        /// SMTP (25).
        public static let smtp = Port(rawValue: 25)!
        /// HTTP (80).
        public static let http = Port(rawValue: 80)!
        /// POP (110).
        public static let pop = Port(rawValue: 110)!
        /// IMAP (143).
        public static let imap = Port(rawValue: 143)!
        /// HTTPS (443).
        public static let https = Port(rawValue: 443)!
        /// IMAPS (993).
        public static let imaps = Port(rawValue: 993)!
        /// SOCKS (1080).
        public static let socks = Port(rawValue: 1080)!

        /// A port; never `nil` (every `UInt16` is one), as Apple's.
        public init?(rawValue: UInt16) { self.rawValue = rawValue }

        /// A port from its decimal text (`"443"`); `nil` for anything else.
        public init?(_ string: String) {
            guard let value = UInt16(string) else { return nil }
            self.rawValue = value
        }

        /// A port from a literal (`let port: NWEndpoint.Port = 443`).
        public init(integerLiteral value: UInt16) { self.rawValue = value }

        /// The number.
        public var debugDescription: String { String(rawValue) }
    }
}

/// An IP address (Apple: `IPAddress`).
public protocol IPAddress: Sendable {
    /// The address from its bytes in network order (4 for IPv4, 16 for IPv6), optionally
    /// scoped to an interface; `nil` for the wrong number of bytes.
    init?(_ rawValue: Data, _ interface: NWInterface?)
    /// The bytes, in network order.
    var rawValue: Data { get }
    /// The interface the address is scoped to, if any.
    var interface: NWInterface? { get }
    /// Whether it is a loopback address.
    var isLoopback: Bool { get }
    /// Whether it is a link-local address.
    var isLinkLocal: Bool { get }
    /// Whether it is a multicast address.
    var isMulticast: Bool { get }
}

/// Addresses from text, through the C library's `inet_pton`.
enum AddressParsing {
    /// The bytes of `text` as an address of `family` (`size` bytes), with an IPv6 `%scope`
    /// split off; `nil` for anything else.
    static func parse(_ text: String, family: Int32, size: Int) -> [UInt8]? {
        var address = text
        if family == AF_INET6, let percent = text.firstIndex(of: "%") {
            guard text.index(after: percent) < text.endIndex else { return nil }
            address = String(text[..<percent])
        }
        guard !address.isEmpty, !address.utf8.contains(0) else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        let parsed = address.withCString { pointer in
            bytes.withUnsafeMutableBytes { inet_pton(family, pointer, $0.baseAddress) }
        }
        return parsed == 1 ? bytes : nil
    }
}

/// An IPv4 address (Apple: `IPv4Address`).
public struct IPv4Address: IPAddress, Hashable, CustomDebugStringConvertible {
    private let bytes: [UInt8]
    /// The interface the address is scoped to, if any.
    public let interface: NWInterface?

    /// 0.0.0.0.
    public static let any = IPv4Address(bytes: [0, 0, 0, 0])
    /// 255.255.255.255.
    public static let broadcast = IPv4Address(bytes: [255, 255, 255, 255])
    /// 127.0.0.1.
    public static let loopback = IPv4Address(bytes: [127, 0, 0, 1])
    /// 224.0.0.1.
    public static let allHostsGroup = IPv4Address(bytes: [224, 0, 0, 1])
    /// 224.0.0.2.
    public static let allRoutersGroup = IPv4Address(bytes: [224, 0, 0, 2])
    /// 224.0.0.22.
    public static let allReportsGroup = IPv4Address(bytes: [224, 0, 0, 22])
    /// 224.0.0.251.
    public static let mdnsGroup = IPv4Address(bytes: [224, 0, 0, 251])

    private init(bytes: [UInt8], interface: NWInterface? = nil) {
        self.bytes = bytes
        self.interface = interface
    }

    /// The address from four bytes in network order; `nil` for any other count.
    public init?(_ rawValue: Data, _ interface: NWInterface? = nil) {
        guard rawValue.count == 4 else { return nil }
        self.init(bytes: Array(rawValue), interface: interface)
    }

    /// The address in dotted-decimal text (`"192.0.2.1"`); `nil` for anything else.
    public init?(_ string: String) {
        guard let bytes = AddressParsing.parse(string, family: AF_INET, size: 4) else { return nil }
        self.init(bytes: bytes)
    }

    /// The four bytes, in network order.
    public var rawValue: Data { Data(bytes) }
    /// 127.0.0.0/8.
    public var isLoopback: Bool { bytes[0] == 127 }
    /// 169.254.0.0/16.
    public var isLinkLocal: Bool { bytes[0] == 169 && bytes[1] == 254 }
    /// 224.0.0.0/4.
    public var isMulticast: Bool { bytes[0] & 0xF0 == 0xE0 }
    /// Dotted-decimal text.
    public var debugDescription: String { AddressText.format(bytes, family: AF_INET) ?? "?" }
}

/// An IPv6 address (Apple: `IPv6Address`).
public struct IPv6Address: IPAddress, Hashable, CustomDebugStringConvertible {
    private let bytes: [UInt8]
    /// The interface the address is scoped to, if any.
    public let interface: NWInterface?

    /// `::`.
    public static let any = IPv6Address(bytes: [UInt8](repeating: 0, count: 16))
    /// `::1`.
    public static let loopback = IPv6Address(bytes: [UInt8](repeating: 0, count: 15) + [1])
    /// `ff01::1`.
    public static let nodeLocalNodes = IPv6Address(bytes: [0xFF, 0x01] + [UInt8](repeating: 0, count: 13) + [1])
    /// `ff02::1`.
    public static let linkLocalNodes = IPv6Address(bytes: [0xFF, 0x02] + [UInt8](repeating: 0, count: 13) + [1])
    /// `ff02::2`.
    public static let linkLocalRouters = IPv6Address(bytes: [0xFF, 0x02] + [UInt8](repeating: 0, count: 13) + [2])

    private init(bytes: [UInt8], interface: NWInterface? = nil) {
        self.bytes = bytes
        self.interface = interface
    }

    /// The address from sixteen bytes in network order; `nil` for any other count.
    public init?(_ rawValue: Data, _ interface: NWInterface? = nil) {
        guard rawValue.count == 16 else { return nil }
        self.init(bytes: Array(rawValue), interface: interface)
    }

    /// The address in text (`"fe80::1"`, `"2001:db8::1"`); a `%scope` suffix is accepted
    /// and dropped (Apple looks the interface up; here ``interface`` stays `nil`). `nil`
    /// for anything else.
    public init?(_ string: String) {
        guard let bytes = AddressParsing.parse(string, family: AF_INET6, size: 16) else { return nil }
        self.init(bytes: bytes)
    }

    /// The sixteen bytes, in network order.
    public var rawValue: Data { Data(bytes) }
    /// `::1`.
    public var isLoopback: Bool { bytes == IPv6Address.loopback.bytes }
    /// fe80::/10.
    public var isLinkLocal: Bool { bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 }
    /// ff00::/8.
    public var isMulticast: Bool { bytes[0] == 0xFF }
    /// fc00::/7.
    public var isUniqueLocal: Bool { bytes[0] & 0xFE == 0xFC }
    /// The reach of a multicast address (Apple: `IPv6Address.Scope`), its scope field.
    public enum Scope: UInt8, Sendable {
        /// ff01::/16.
        case nodeLocal = 1
        /// ff02::/16.
        case linkLocal = 2
        /// ff05::/16.
        case siteLocal = 5
        /// ff08::/16.
        case organizationLocal = 8
        /// ff0e::/16.
        case global = 14
    }

    /// The scope of a multicast address; `nil` for any other, or an unassigned scope.
    public var multicastScope: Scope? {
        guard isMulticast else { return nil }
        return Scope(rawValue: bytes[1] & 0x0F)
    }
    /// `::a.b.c.d` (deprecated IPv4-compatible form; Apple spells the name so).
    public var isIPv4Compatabile: Bool {
        bytes[0..<12].allSatisfy { $0 == 0 } && !(bytes[12] == 0 && bytes[13] == 0 && bytes[14] == 0 && bytes[15] <= 1)
    }
    /// 2002::/16.
    public var is6to4: Bool { bytes[0] == 0x20 && bytes[1] == 0x02 }
    /// `::ffff:a.b.c.d`.
    public var isIPv4Mapped: Bool { bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF }
    /// The IPv4 address an IPv4-mapped address carries; `nil` for any other.
    public var asIPv4: IPv4Address? {
        guard isIPv4Mapped else { return nil }
        return IPv4Address(Data(bytes[12..<16]), interface)
    }
    /// RFC 5952 text (`fe80::1`).
    public var debugDescription: String { AddressText.format(bytes, family: AF_INET6) ?? "?" }
}
