#if canImport(Glibc)
import Glibc
#endif
import CLinux
import SchedulerCore

/// How much a transport log line matters.
public enum TransportLogLevel: Int, Comparable, Sendable, CustomStringConvertible {
    /// Routine events: a connection opened or closed normally.
    case debug
    /// Worth knowing in normal operation: the server is listening, a stale socket was replaced.
    case info
    /// A peer misbehaved or was refused (bad frame, timeout, another uid); others are unaffected.
    case warning
    /// This side has a problem (out of file descriptors, a failing system call).
    case error

    /// `debug`, `info`, `warning` or `error`.
    public var description: String {
        switch self {
        case .debug: return "debug"
        case .info: return "info"
        case .warning: return "warning"
        case .error: return "error"
        }
    }

    /// Orders by importance.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Where the transport writes its log lines: a closure the caller gives (the daemon routes
/// it to its stderr logger). It is called on transport queues, never while a transport lock
/// is held, and must not block for long.
public typealias TransportLog = @Sendable (TransportLogLevel, String) -> Void

/// Who is at the other end of a Unix socket, as the kernel recorded it when the peer
/// connected (`SO_PEERCRED`): it cannot be forged by the peer.
public struct PeerCredentials: Hashable, Sendable, CustomStringConvertible {
    /// The peer's process id at connect time (0 if the peer is in another pid namespace
    /// the kernel cannot map).
    public var pid: Int32
    /// The peer's effective user id.
    public var uid: UInt32
    /// The peer's effective group id.
    public var gid: UInt32

    /// Credentials from their parts.
    public init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    /// The credentials of the peer of the connected Unix socket `descriptor`, or the errno
    /// of the failing `getsockopt`.
    public static func of(descriptor: Int32) -> Result<PeerCredentials, SystemCallError> {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
        guard clinux_peer_credentials(descriptor, &pid, &uid, &gid) == 0 else {
            return .failure(SystemCallError(call: "getsockopt(SO_PEERCRED)", code: errno))
        }
        return .success(PeerCredentials(pid: pid, uid: uid, gid: gid))
    }

    /// `pid 1234, uid 1000, gid 1000`.
    public var description: String { "pid \(pid), uid \(uid), gid \(gid)" }
}

/// A failed system call: which one and its errno.
public struct SystemCallError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The call, such as `bind` or `getsockopt(SO_PEERCRED)`.
    public var call: String
    /// The errno it set.
    public var code: Int32

    /// An error for `call` failing with `code`.
    public init(call: String, code: Int32) {
        self.call = call
        self.code = code
    }

    /// `bind: Address already in use (errno 98)`.
    public var description: String { "\(call): \(systemErrorText(code))" }
}
