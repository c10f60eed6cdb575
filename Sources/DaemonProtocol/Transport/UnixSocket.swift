#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SchedulerCore

/// Small wrappers over the socket calls the transport makes (Linux ABI). Internal: the
/// public types own their descriptors.
enum UnixSocket {
    // Glibc imports the socket types as an enum and hides some constants; spelled out.
    static let stream: Int32 = Int32(SOCK_STREAM.rawValue)
    static let datagram: Int32 = Int32(SOCK_DGRAM.rawValue)
    static let closeOnExec: Int32 = 0o2000000 // SOCK_CLOEXEC
    static let nonBlocking: Int32 = 0o4000 // SOCK_NONBLOCK
    static let noSignal: Int32 = 0x4000 // MSG_NOSIGNAL
    static let dontWait: Int32 = 0x40 // MSG_DONTWAIT
    static let socketOptionDomain: Int32 = 39 // SO_DOMAIN
    static let socketOptionAcceptConnections: Int32 = 30 // SO_ACCEPTCONN
    static let socketOptionType: Int32 = 3 // SO_TYPE
    /// `sizeof(sun_path)`: a path (with its terminating NUL) must fit.
    static let pathCapacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path)

    /// Where a Unix socket lives: a path in the file system, or a name in the abstract
    /// namespace (Linux; written `@name`, stored with a leading NUL).
    enum Address: Equatable {
        case path(String)
        case abstract(String)

        /// The address `text` spells: `@name` is abstract, anything else a path.
        init(_ text: String) {
            if text.hasPrefix("@") { self = .abstract(String(text.dropFirst())) } else { self = .path(text) }
        }

        var text: String {
            switch self {
            case .path(let path): return path
            case .abstract(let name): return "@" + name
            }
        }
    }

    /// Why an address cannot be used.
    enum AddressProblem: Error, CustomStringConvertible {
        case tooLong(String, limit: Int)
        case empty
        case containsNUL(String)
        var description: String {
            switch self {
            case .tooLong(let text, let limit): return "socket address \(text) is \(text.utf8.count) bytes, over the limit of \(limit)"
            case .empty: return "socket address is empty"
            case .containsNUL(let text): return "socket address \(text.debugDescription) contains a NUL byte"
            }
        }
    }

    /// The file-system path the Unix socket `descriptor` is bound to (`getsockname`), or
    /// `nil` for one that is unnamed, abstract (`@name`), not a Unix socket, or unreadable.
    static func boundPath(of descriptor: Int32) -> String? {
        var storage = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let read = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard read == 0, storage.sun_family == sa_family_t(AF_UNIX) else { return nil }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)!
        let pathLength = min(Int(length) - pathOffset, pathCapacity)
        guard pathLength > 0 else { return nil }
        return withUnsafeBytes(of: &storage.sun_path) { bytes -> String? in
            let path = bytes.prefix(pathLength)
            // An abstract name starts with a NUL; a path ends at its first NUL.
            guard let first = path.first, first != 0 else { return nil }
            return String(decoding: path.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    /// Calls `body` with a `sockaddr_un` for `address` and its length.
    static func withAddress<R>(_ address: Address, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) throws(AddressProblem) -> R {
        var storage = sockaddr_un()
        storage.sun_family = sa_family_t(AF_UNIX)
        let bytes: [UInt8]
        let leadingNUL: Bool
        switch address {
        case .path(let path): bytes = Array(path.utf8); leadingNUL = false
        case .abstract(let name): bytes = Array(name.utf8); leadingNUL = true
        }
        guard !bytes.isEmpty || leadingNUL else { throw .empty }
        guard !bytes.contains(0) else { throw .containsNUL(address.text) }
        // A path needs room for its terminating NUL; an abstract name for its leading one.
        guard bytes.count + 1 <= pathCapacity else { throw .tooLong(address.text, limit: pathCapacity - 1) }
        withUnsafeMutableBytes(of: &storage.sun_path) { raw in
            raw.initializeMemory(as: UInt8.self, repeating: 0)
            for (index, byte) in bytes.enumerated() { raw[index + (leadingNUL ? 1 : 0)] = byte }
        }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)!
        // A path's length covers its NUL; an abstract name's covers exactly its bytes.
        let length = pathOffset + bytes.count + 1
        return withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(length)) }
        }
    }

    /// Sets `O_NONBLOCK` on `descriptor`; false with errno set on failure.
    @discardableResult
    static func setNonBlocking(_ descriptor: Int32) -> Bool {
        let flags = fcntl(descriptor, F_GETFL)
        guard flags >= 0 else { return false }
        return fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0
    }

    /// Clears `O_NONBLOCK` on `descriptor`; false with errno set on failure.
    @discardableResult
    static func setBlocking(_ descriptor: Int32) -> Bool {
        let flags = fcntl(descriptor, F_GETFL)
        guard flags >= 0 else { return false }
        return fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) == 0
    }

    /// Sets `FD_CLOEXEC` on `descriptor`; false with errno set on failure.
    @discardableResult
    static func setCloseOnExec(_ descriptor: Int32) -> Bool {
        let flags = fcntl(descriptor, F_GETFD)
        guard flags >= 0 else { return false }
        return fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) == 0
    }

    /// An integer socket option, or nil with errno set.
    static func integerOption(_ descriptor: Int32, level: Int32 = SOL_SOCKET, _ option: Int32) -> Int32? {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, level, option, &value, &length) == 0 else { return nil }
        return value
    }

    /// A `timeval` for `seconds` (for `SO_SNDTIMEO`).
    static func timeval(seconds: Double) -> timeval {
        let clamped = max(0, min(seconds, 86_400 * 365))
        let whole = clamped.rounded(.down)
        return Glibc.timeval(tv_sec: Int(whole), tv_usec: Int((clamped - whole) * 1_000_000))
    }
}

extension Duration {
    /// The duration in seconds as a `Double` (for Dispatch, `timeval` and log lines).
    public var transportSeconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }

    /// A Dispatch interval, clamped to [0, one year] so a huge duration cannot trap.
    var dispatchInterval: DispatchTimeInterval {
        let seconds = max(0, min(transportSeconds, 86_400 * 365))
        return .nanoseconds(Int((seconds * 1e9).rounded()))
    }
}
