#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SchedulerCore

/// systemd socket activation without libsystemd (`sd_listen_fds(3)`): the listening
/// sockets a service manager passed to this process (docs/protocol.md, "Socket activation
/// and notify").
///
/// The environment is passed in; the caller unsets `LISTEN_PID`, `LISTEN_FDS` and
/// `LISTEN_FDNAMES` itself so children do not inherit them.
public enum SystemdActivation {
    /// The first descriptor systemd passes (`SD_LISTEN_FDS_START`).
    public static let firstDescriptor: Int32 = 3
    /// The most descriptors accepted (systemd itself passes far fewer).
    public static let maximumCount = 4096

    /// What the activation variables say, before any descriptor is looked at.
    public enum Announcement: Hashable, Sendable {
        /// No `LISTEN_PID`/`LISTEN_FDS`: not socket-activated.
        case none
        /// The variables were meant for another process (`LISTEN_PID` is not ours: they
        /// were inherited); they are ignored, as `sd_listen_fds` does.
        case otherProcess(pid: Int32)
        /// `count` descriptors from the first one, with their names when
        /// `LISTEN_FDNAMES` was set.
        case descriptors(count: Int, names: [String]?)
    }

    /// One passed listening socket.
    public struct ListeningSocket: Hashable, Sendable {
        /// The descriptor (now close-on-exec).
        public var descriptor: Int32
        /// Its name from `LISTEN_FDNAMES` (the socket unit's `FileDescriptorName=`), if given.
        public var name: String?

        /// The path it is bound to (the unit's `ListenStream=`), or `nil` for an abstract or
        /// unnamed socket: what clients must connect to, whatever the default path is.
        public var boundPath: String? { UnixSocket.boundPath(of: descriptor) }
    }

    /// Why the activation variables or descriptors cannot be used.
    public typealias ActivationError = SystemdError

    /// Reads the variables (pure).
    ///
    /// - Throws: ``ActivationError`` for a `LISTEN_PID` or `LISTEN_FDS` that is not a
    ///   decimal number in range, one without the other, or a `LISTEN_FDNAMES` whose count
    ///   differs from `LISTEN_FDS`.
    public static func announcement(environment: [String: String], pid: Int32) throws(ActivationError) -> Announcement {
        let pidText = environment["LISTEN_PID"]
        let countText = environment["LISTEN_FDS"]
        if pidText == nil && countText == nil { return .none }
        guard let pidText else {
            throw ActivationError(culprit: "LISTEN_PID", message: "LISTEN_FDS is set but LISTEN_PID is not; socket activation needs both")
        }
        guard let listenPID = decimal(pidText), listenPID > 0, listenPID <= Int(Int32.max) else {
            throw ActivationError(culprit: "LISTEN_PID", message: "LISTEN_PID=\(pidText) is not a process id (a decimal number from 1 to \(Int32.max))")
        }
        guard listenPID == Int(pid) else { return .otherProcess(pid: Int32(listenPID)) }
        guard let countText else {
            throw ActivationError(culprit: "LISTEN_FDS", message: "LISTEN_PID is set but LISTEN_FDS is not; socket activation needs both")
        }
        guard let count = decimal(countText), count <= maximumCount else {
            throw ActivationError(culprit: "LISTEN_FDS", message: "LISTEN_FDS=\(countText) is not a descriptor count (a decimal number from 0 to \(maximumCount))")
        }
        var names: [String]?
        if let namesText = environment["LISTEN_FDNAMES"] {
            let split = namesText.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard split.count == count else {
                throw ActivationError(culprit: "LISTEN_FDNAMES", message: "LISTEN_FDNAMES=\(namesText) names \(split.count) descriptors but LISTEN_FDS=\(count)")
            }
            names = split
        }
        return .descriptors(count: count, names: names)
    }

    /// The listening sockets passed to process `pid`: each descriptor from `base` (3, or a
    /// test's own) is checked to be an open, listening Unix stream socket, then made
    /// close-on-exec. Empty when not activated or when the variables are another
    /// process's.
    ///
    /// - Throws: ``ActivationError`` from ``announcement(environment:pid:)``, or naming the
    ///   first descriptor that is not open, not a Unix socket, not a stream socket or not
    ///   listening.
    public static func listeningSockets(environment: [String: String], pid: Int32 = getpid(), base: Int32 = firstDescriptor) throws(ActivationError) -> [ListeningSocket] {
        guard case .descriptors(let count, let names) = try announcement(environment: environment, pid: pid) else { return [] }
        guard base >= 0, Int(base) + count <= Int(Int32.max) else {
            throw ActivationError(culprit: "LISTEN_FDS", message: "LISTEN_FDS=\(count) from fd \(base) overflows the descriptor range")
        }
        var sockets: [ListeningSocket] = []
        for index in 0..<count {
            let descriptor = base + Int32(index)
            let name = names?[index]
            try verify(descriptor, name: name)
            guard UnixSocket.setCloseOnExec(descriptor) else {
                throw ActivationError(culprit: "fd \(descriptor)", message: "cannot set close-on-exec on fd \(descriptor) from LISTEN_FDS: \(systemErrorText(errno))")
            }
            sockets.append(ListeningSocket(descriptor: descriptor, name: name))
        }
        return sockets
    }

    private static func verify(_ descriptor: Int32, name: String?) throws(ActivationError) {
        let label = "fd \(descriptor)" + (name.map { " (\($0))" } ?? "")
        func fail(_ problem: String) -> ActivationError {
            ActivationError(culprit: "fd \(descriptor)", message: "\(label) from LISTEN_FDS \(problem); the socket unit must be ListenStream= on a path")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw fail("is not open (\(systemErrorText(errno)))") }
        guard info.st_mode & S_IFMT == S_IFSOCK else { throw fail("is \(FileKind(mode: info.st_mode)), not a socket") }
        guard let domain = UnixSocket.integerOption(descriptor, UnixSocket.socketOptionDomain) else {
            throw fail("cannot be queried (\(systemErrorText(errno)))")
        }
        guard domain == AF_UNIX else { throw fail("is not a Unix socket (address family \(domain))") }
        guard let type = UnixSocket.integerOption(descriptor, UnixSocket.socketOptionType), type == UnixSocket.stream else {
            throw fail("is not a stream socket")
        }
        guard let listening = UnixSocket.integerOption(descriptor, UnixSocket.socketOptionAcceptConnections), listening != 0 else {
            throw fail("is not listening")
        }
    }

    /// A non-negative decimal number made only of ASCII digits (no sign, no spaces), or nil
    /// (also when it would overflow).
    static func decimal(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text)
    }
}
