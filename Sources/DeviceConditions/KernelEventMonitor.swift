#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation

/// Tells when the kernel announces a change of power supplies, thermal zones or the
/// network, so the device is re-read on events instead of being polled (docs/system.md, "Properties":
/// event-driven, not polling).
///
/// Two netlink sockets, each read on a `DispatchSourceRead`:
/// - `NETLINK_KOBJECT_UEVENT`, kernel multicast group 1: device uevents. `SUBSYSTEM=power_supply`
///   (plugged in, unplugged, and on most drivers a capacity or status change) reports
///   ``Changes/power``; `SUBSYSTEM=thermal` (some drivers announce trip crossings) reports
///   ``Changes/thermal``;
/// - `NETLINK_ROUTE` subscribed to `RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR |
///   RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE`: `RTM_NEWLINK`/`DELLINK`, `NEWADDR`/`DELADDR`,
///   `NEWROUTE`/`DELROUTE` report ``Changes/network``.
///
/// Messages are classified, not decoded further: the handler re-reads the files, which
/// stay the one source of truth. Only messages from the kernel (netlink port 0) count. All
/// messages waiting on a socket are drained before the handler is called once, so a burst
/// of route updates causes one call. A receive-queue overflow (`ENOBUFS`) reports that
/// socket's kind anyway: something changed and was lost.
///
/// Opening either socket can fail (a sandbox that forbids netlink); ``watching`` then
/// lacks that kind and ``problems`` says why, and the caller polls for it instead. Inside a
/// network namespace other than the host's (most containers) the kernel does not deliver
/// power-supply uevents at all; the socket opens, but only the caller's periodic sampling
/// notices power changes there.
public final class KernelEventMonitor: @unchecked Sendable {
    // @unchecked: the only stored state is immutable after init; dispatch sources are
    // thread-safe to cancel.

    /// What changed.
    public struct Changes: OptionSet, Hashable, Sendable, CustomStringConvertible {
        /// The bits: power 1, network 2, thermal 4.
        public let rawValue: Int
        /// Creates a set from its raw bits.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// A power supply (plugged, unplugged, battery status or capacity).
        public static let power = Changes(rawValue: 1 << 0)
        /// A link, an address or a route.
        public static let network = Changes(rawValue: 1 << 1)
        /// A thermal zone (trip crossing, on drivers that announce it).
        public static let thermal = Changes(rawValue: 1 << 2)

        /// The kinds, comma-separated (`power, network`), or `nothing`.
        public var description: String {
            var names: [String] = []
            if contains(.power) { names.append("power") }
            if contains(.network) { names.append("network") }
            if contains(.thermal) { names.append("thermal") }
            return names.isEmpty ? "nothing" : names.joined(separator: ", ")
        }
    }

    /// What the open sockets report: `[.power, .thermal]` from the uevent socket,
    /// `.network` from the route socket.
    public let watching: Changes
    /// Why a socket could not be opened (empty when both are open).
    public let problems: [String]

    private let sources: [any DispatchSourceRead]

    /// Opens the sockets and starts reading them on `queue`; `onChange` is called on
    /// `queue` with what changed. `kinds` says which sockets are wanted: the uevent socket
    /// for power or thermal, the route socket for the network (`import Network`'s monitors
    /// open the route socket only).
    public init(queue: DispatchQueue, kinds: Changes = [.power, .network, .thermal], onChange: @escaping @Sendable (Changes) -> Void) {
        var watching: Changes = []
        var problems: [String] = []
        var sources: [any DispatchSourceRead] = []

        if !kinds.isDisjoint(with: [.power, .thermal]) {
            switch Self.openSocket(protocol: Self.netlinkKobjectUevent, type: Self.socketDatagram, groups: Self.ueventKernelGroup) {
            case .success(let descriptor):
                sources.append(Self.makeSource(descriptor, queue: queue, overflow: [.power, .thermal], classify: Self.changes(fromUevent:), onChange: onChange))
                watching.formUnion([.power, .thermal])
            case .failure(let problem):
                problems.append("uevent socket (power supplies): \(problem)")
            }
        }
        if kinds.contains(.network) {
            switch Self.openSocket(protocol: Self.netlinkRoute, type: Self.socketRaw, groups: Self.routeGroups) {
            case .success(let descriptor):
                sources.append(Self.makeSource(descriptor, queue: queue, overflow: .network, classify: Self.changes(fromRouteMessages:), onChange: onChange))
                watching.insert(.network)
            case .failure(let problem):
                problems.append("rtnetlink socket (network): \(problem)")
            }
        }
        self.watching = watching
        self.problems = problems
        self.sources = sources
    }

    /// Stops reading and closes the sockets. Idempotent.
    public func cancel() {
        for source in sources where !source.isCancelled { source.cancel() }
    }

    deinit { cancel() }

    // MARK: Classifying messages (pure, so tests can feed bytes)

    /// The changes one uevent datagram (`ACTION@DEVPATH\0KEY=VALUE\0...`) announces.
    public static func changes(fromUevent bytes: [UInt8]) -> Changes {
        var changes: Changes = []
        for field in bytes.split(separator: 0, omittingEmptySubsequences: true) {
            switch String(decoding: field, as: UTF8.self) {
            case "SUBSYSTEM=power_supply": changes.insert(.power)
            case "SUBSYSTEM=thermal": changes.insert(.thermal)
            default: continue
            }
        }
        return changes
    }

    /// The changes one rtnetlink datagram (a sequence of `nlmsghdr`-framed messages)
    /// announces.
    public static func changes(fromRouteMessages bytes: [UInt8]) -> Changes {
        var offset = 0
        var changes: Changes = []
        while offset + 16 <= bytes.count {
            let length = Int(bytes.loadUInt32(at: offset))
            let type = bytes.loadUInt16(at: offset + 4)
            guard length >= 16, offset + length <= bytes.count else { break }
            if networkMessageTypes.contains(type) { changes.insert(.network) }
            offset += (length + 3) & ~3 // NLMSG_ALIGN
        }
        return changes
    }

    // MARK: Sockets

    // Linux ABI constants, spelled out because Glibc's module does not export the netlink
    // header and imports the socket types as an enum.
    static let addressFamilyNetlink: Int32 = 16 // AF_NETLINK
    static let socketDatagram: Int32 = 2 // SOCK_DGRAM
    static let socketRaw: Int32 = 3 // SOCK_RAW
    static let socketCloseOnExec: Int32 = 0o2000000 // SOCK_CLOEXEC
    static let socketNonBlocking: Int32 = 0o4000 // SOCK_NONBLOCK
    static let netlinkRoute: Int32 = 0 // NETLINK_ROUTE
    static let netlinkKobjectUevent: Int32 = 15 // NETLINK_KOBJECT_UEVENT
    /// The kernel's own uevent group (group 2 is udev's re-broadcast).
    static let ueventKernelGroup: UInt32 = 1
    /// `RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_IFADDR | RTMGRP_IPV6_ROUTE`.
    static let routeGroups: UInt32 = 0x1 | 0x10 | 0x40 | 0x100 | 0x400
    /// `RTM_NEWLINK`, `RTM_DELLINK`, `RTM_NEWADDR`, `RTM_DELADDR`, `RTM_NEWROUTE`, `RTM_DELROUTE`.
    static let networkMessageTypes: Set<UInt16> = [16, 17, 20, 21, 24, 25]
    /// Large enough for any one netlink datagram the kernel sends these groups.
    static let bufferSize = 64 * 1024

    /// Why a socket could not be opened (the failing call and `strerror`).
    struct SocketProblem: Error, CustomStringConvertible {
        var text: String
        var description: String { text }
    }

    private static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }

    /// Opens, configures and binds one netlink socket.
    static func openSocket(protocol netlinkProtocol: Int32, type: Int32, groups: UInt32) -> Result<Int32, SocketProblem> {
        let descriptor = socket(addressFamilyNetlink, type | socketCloseOnExec | socketNonBlocking, netlinkProtocol)
        guard descriptor >= 0 else { return .failure(SocketProblem(text: "socket: \(errorText(errno))")) }
        // A bigger receive buffer makes overflow during a burst (a VPN bringing up many
        // routes) less likely; the kernel caps it at rmem_max for unprivileged users.
        var size: Int32 = 1 << 20
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        // struct sockaddr_nl { sa_family_t nl_family; unsigned short nl_pad; __u32 nl_pid; __u32 nl_groups; }
        var address = [UInt8](repeating: 0, count: 12)
        address.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: UInt16(addressFamilyNetlink), toByteOffset: 0, as: UInt16.self)
            raw.storeBytes(of: groups, toByteOffset: 8, as: UInt32.self)
        }
        let bound = address.withUnsafeBytes { raw in
            bind(descriptor, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
        guard bound == 0 else {
            let problem = SocketProblem(text: "bind: \(errorText(errno))")
            close(descriptor)
            return .failure(problem)
        }
        return .success(descriptor)
    }

    private static func makeSource(
        _ descriptor: Int32,
        queue: DispatchQueue,
        overflow: Changes,
        classify: @escaping @Sendable ([UInt8]) -> Changes,
        onChange: @escaping @Sendable (Changes) -> Void
    ) -> any DispatchSourceRead {
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        source.setEventHandler {
            let changes = drain(descriptor, overflow: overflow, classify: classify)
            if !changes.isEmpty { onChange(changes) }
        }
        source.setCancelHandler { close(descriptor) }
        source.activate()
        return source
    }

    /// Reads every waiting datagram, keeping those from the kernel.
    private static func drain(_ descriptor: Int32, overflow: Changes, classify: ([UInt8]) -> Changes) -> Changes {
        var changes: Changes = []
        var buffer = [UInt8](repeating: 0, count: bufferSize)
        while true {
            var sender = sockaddr_storage()
            var senderLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let count = buffer.withUnsafeMutableBytes { raw in
                withUnsafeMutablePointer(to: &sender) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                        recvfrom(descriptor, raw.baseAddress, raw.count, 0, address, &senderLength)
                    }
                }
            }
            if count < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == ENOBUFS { changes.formUnion(overflow); continue }
                break // EAGAIN: drained (or an error the next event will show again)
            }
            if count == 0 { break }
            // nl_pid sits at offset 4 of sockaddr_nl; 0 is the kernel. Anything else is a
            // user-space process multicasting, which must not be trusted to mean a change.
            let senderPort = withUnsafeBytes(of: &sender) { $0.load(fromByteOffset: 4, as: UInt32.self) }
            guard senderPort == 0 else { continue }
            changes.formUnion(classify(Array(buffer[0..<count])))
        }
        return changes
    }
}

extension Array where Element == UInt8 {
    /// A native-endian (netlink is host-endian) 32-bit value at `offset`.
    fileprivate func loadUInt32(at offset: Int) -> UInt32 {
        withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
    }

    /// A native-endian 16-bit value at `offset`.
    fileprivate func loadUInt16(at offset: Int) -> UInt16 {
        withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt16.self) }
    }
}
