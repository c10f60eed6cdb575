#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import CLinux
import Foundation
import SchedulerCore
import Synchronization

/// Accepts connections on a listening Unix stream socket and hands each one, with its
/// peer's credentials, to a handler (docs/protocol.md, "Frames and connections").
///
/// The socket is either bound here to a path (mode 0600, in a directory the caller has
/// verified with ``DaemonPaths/prepareSocketDirectory(_:uid:)``) or adopted from systemd
/// (``SystemdActivation``). A Dispatch read source accepts everything waiting with
/// `accept4(SOCK_NONBLOCK | SOCK_CLOEXEC)`; each peer's credentials are read with
/// `SO_PEERCRED`, and a peer of another uid than ``allowedUID`` is closed at once with a
/// logged line naming its pid and uid. When the process is out of descriptors (`EMFILE`,
/// `ENFILE`) the server logs it, stops accepting for a moment and tries again: waiting
/// clients stay in the kernel's backlog, no thread spins. At ``maximumConnections`` the
/// connections' queue first handles the closes it holds (once each time the cap is
/// reached); while they are still open, a new peer is sent ``refusalAtCapacity`` (when
/// given) and closed at once (it
/// learns why, or sees the connection end, never a hang), and such refusals are logged at
/// most once a minute, with how many came in between. A connection that closes on a fault
/// (a peer gone mid-frame or before its reply, a timeout, a bad frame) is logged by the
/// server, at most ``faultyCloseLogBurst`` lines a minute at its level, the rest at debug,
/// the next line saying how many: a flood of connections cannot grow this process, or its
/// log, without bound.
///
/// Each accepted ``FrameConnection`` is handed to `onConnection`, which must call
/// ``FrameConnection/start(onFrame:onClose:)`` on it; a bad frame or a timeout closes that
/// connection only.
public final class FrameServer: Sendable {
    /// Why a server could not listen.
    public struct ListenError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The kinds of failure.
        public enum Code: Hashable, Sendable {
            /// Another process is listening on the path (a daemon is already running).
            case inUse
            /// Something that is not a socket is at the path; it is left alone.
            case notASocket
            /// The path cannot be a socket address (too long, empty).
            case invalidPath
            /// A system call failed.
            case systemCall
        }

        /// What went wrong.
        public var code: Code
        /// The socket path concerned (or `fd N` for an adopted descriptor).
        public var path: String
        /// The whole explanation, naming the path.
        public var message: String

        /// An error from its parts.
        public init(code: Code, path: String, message: String) {
            self.code = code
            self.path = path
            self.message = message
        }

        /// ``message``.
        public var description: String { message }
    }

    /// What the server listens on.
    public enum Endpoint: Hashable, Sendable {
        /// Bind a new socket at this path (a stale socket nobody listens on is replaced).
        case path(String)
        /// Adopt this already listening descriptor (systemd socket activation); the server
        /// takes ownership.
        case adopted(descriptor: Int32)
    }

    /// The uid a peer must have; others are refused.
    public let allowedUID: UInt32
    /// The socket path, when the server bound one (it is removed again by ``close()``).
    public let path: String?
    /// The options each accepted connection gets.
    public let connectionOptions: FrameConnection.Options
    /// How many connections may be open at once; a peer beyond them is closed at once.
    public let maximumConnections: Int
    /// The payload of the one frame a peer refused at ``maximumConnections`` is sent before
    /// its connection is closed, so that it can say why (the daemon's "at its connection
    /// limit" failure, docs/protocol.md, "Limits") rather than report a reset; nil sends
    /// nothing. The transport does not read it: what it means is the messages' business.
    public let refusalAtCapacity: Data?
    /// The least time between two log lines about refusals at ``maximumConnections``: a
    /// minute (the line says how many were refused in between).
    public static let capacityLogInterval: Duration = .seconds(60)
    /// How many closes on a fault (warning or error: ``FrameConnection/CloseReason/logLevel``)
    /// are logged at their level per ``capacityLogInterval``; the others are logged at
    /// debug, and the next line at their level says how many there were. Enough for every
    /// such close of normal use; a client churning thousands of connections a second
    /// (connect, part of a frame, close) made two warning lines each.
    public static let faultyCloseLogBurst = 10

    /// The default of ``maximumConnections``: 2,048, far more than a user's apps and tools
    /// hold (1,000 clients connecting at once are all served), but never more than the
    /// process's descriptor limit leaves after 128 kept for its own files, pipes and
    /// children (at least 16): a cap above the limit would never apply, and a flood would
    /// leave the process without descriptors instead (see ``raiseDescriptorLimit(to:)``).
    /// With each connection's unread output bounded by
    /// ``FrameConnection/Options/pauseReadingAboveBufferedOutput``, this bounds what a
    /// flood of same-uid clients can make the process hold.
    public static var defaultMaximumConnections: Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 16 }
        let soft = Int(clamping: limit.rlim_cur) // RLIM_INFINITY (all ones) clamps to Int.max
        return min(2_048, max(16, soft - 128))
    }

    /// Raises this process's soft descriptor limit (`RLIMIT_NOFILE`) towards `wanted`, as far
    /// as the hard limit allows, and returns the soft limit in force afterwards. A server
    /// calls it once at start: the usual soft limit of 1,024 is below a useful
    /// ``maximumConnections``, and the hard limit is there to be used (systemd sets 1,024
    /// soft for select(2)-era programs, and a much higher hard limit).
    @discardableResult
    public static func raiseDescriptorLimit(to wanted: Int = 65_536) -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        let soft = Int(clamping: limit.rlim_cur)
        let hard = Int(clamping: limit.rlim_max)
        let target = min(max(wanted, 0), hard)
        guard target > soft else { return soft }
        limit.rlim_cur = rlim_t(target)
        return setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 ? target : soft
    }

    private let listener: Int32
    private let queue: DispatchQueue
    private let connectionQueue: DispatchQueue?
    private let log: TransportLog
    private let onConnection: @Sendable (FrameConnection) -> Void
    private let accept: @Sendable (Int32) -> Int32
    private let retryDelay: Duration
    /// The clock of the log throttles (tests pass their own).
    private let now: @Sendable () -> ContinuousClock.Instant
    private let state: Mutex<State>

    /// The file identity of the socket this server bound, so ``close()`` removes only its own.
    private let boundIdentity: (device: UInt64, inode: UInt64)?

    /// The accept source. `nonisolated(unsafe)`: a Dispatch source is thread-safe; whether
    /// it is suspended is tracked in `state`, under the lock.
    nonisolated(unsafe) private let source: any DispatchSourceRead

    /// Signalled when the listening descriptor has been closed (by the source's cancel
    /// handler), so ``close()`` can return only then.
    private let listenerClosed = DispatchSemaphore(value: 0)
    /// Marks the server's queue: ``close()`` called there cannot wait for the cancel handler.
    private static let queueKey = DispatchSpecificKey<Void>()

    /// Why accepting waits: out of descriptors (``pauseAccepting(_:)``), or at the cap for
    /// the connections' queue to handle the closes it holds (``waitForClosesAtCapacity(on:)``).
    private enum AcceptPause { case descriptors, closes }

    private struct State {
        /// Why the accept source is suspended, when it is: one reason at a time, so
        /// ``close()`` resumes it once whichever it was.
        var acceptPause: AcceptPause?
        /// The queue was waited for since the cap was last reached: a peer accepted at the
        /// cap now is refused.
        var closesHandledAtCapacity = false
        /// Refusals at ``maximumConnections``: one line a minute at most, however the
        /// connections churn at the cap (``capacityLogInterval``).
        var capacityLog = LogThrottle(interval: FrameServer.capacityLogInterval)
        /// Closes on a fault (``faultyCloseLogBurst``).
        var faultyCloseLog = LogThrottle(interval: FrameServer.capacityLogInterval, burst: FrameServer.faultyCloseLogBurst)
        var refusedForCapacityCount = 0
        var closed = false
        var connections: [ObjectIdentifier: FrameConnection] = [:]
        var refusedCount = 0
        var acceptedCount = 0
    }

    /// The kernel clamps the backlog to `net.core.somaxconn` (4096 on current kernels).
    public static let listenBacklog: Int32 = 4096

    /// Listens on `endpoint` and starts accepting.
    ///
    /// - Parameters:
    ///   - allowedUID: the only uid admitted (this process's real uid by default).
    ///   - connectionOptions: timeouts and limits of accepted connections.
    ///   - connectionQueue: the target queue of the connections' serial queues.
    ///   - refusalAtCapacity: the payload of a frame sent to a peer refused at
    ///     `maximumConnections` before it is closed (nil: none).
    ///   - log: receives every log line (level and text); never called under a lock.
    ///   - onConnection: called on the server's queue with each admitted connection.
    /// - Throws: ``ListenError`` naming the path: in use by a live listener (with its pid
    ///   when the kernel tells), not a socket, too long, or a failing call.
    public convenience init(
        endpoint: Endpoint,
        allowedUID: UInt32 = getuid(),
        connectionOptions: FrameConnection.Options = .server,
        maximumConnections: Int = FrameServer.defaultMaximumConnections,
        connectionQueue: DispatchQueue? = nil,
        refusalAtCapacity: Data? = nil,
        log: @escaping TransportLog,
        onConnection: @escaping @Sendable (FrameConnection) -> Void
    ) throws(ListenError) {
        try self.init(
            endpoint: endpoint, allowedUID: allowedUID, connectionOptions: connectionOptions,
            maximumConnections: maximumConnections, connectionQueue: connectionQueue,
            refusalAtCapacity: refusalAtCapacity, log: log, retryDelay: .milliseconds(100), accept: { clinux_accept_nonblocking($0) },
            onConnection: onConnection
        )
    }

    /// The designated initializer; tests inject `accept` to simulate running out of
    /// descriptors, and `now` to move the log throttles' clock.
    init(
        endpoint: Endpoint,
        allowedUID: UInt32,
        connectionOptions: FrameConnection.Options,
        maximumConnections: Int = FrameServer.defaultMaximumConnections,
        connectionQueue: DispatchQueue?,
        refusalAtCapacity: Data? = nil,
        log: @escaping TransportLog,
        retryDelay: Duration,
        accept: @escaping @Sendable (Int32) -> Int32,
        now: @escaping @Sendable () -> ContinuousClock.Instant = { .now },
        onConnection: @escaping @Sendable (FrameConnection) -> Void
    ) throws(ListenError) {
        self.now = now
        self.allowedUID = allowedUID
        self.connectionOptions = connectionOptions
        self.maximumConnections = max(1, maximumConnections)
        self.refusalAtCapacity = refusalAtCapacity
        self.connectionQueue = connectionQueue
        self.log = log
        self.onConnection = onConnection
        self.accept = accept
        self.retryDelay = retryDelay
        self.queue = DispatchQueue(label: "bgtaskd.server")
        switch endpoint {
        case .path(let path):
            let (descriptor, identity) = try Self.bindListener(path: path, log: log)
            self.listener = descriptor
            self.path = path
            self.boundIdentity = identity
        case .adopted(let descriptor):
            guard UnixSocket.setNonBlocking(descriptor), UnixSocket.setCloseOnExec(descriptor) else {
                throw ListenError(code: .systemCall, path: "fd \(descriptor)", message: "cannot use the listening socket fd \(descriptor): \(SystemCallError(call: "fcntl", code: errno))")
            }
            self.listener = descriptor
            self.path = nil
            self.boundIdentity = nil
        }
        self.state = Mutex(State())
        let listener = self.listener
        let listenerClosed = self.listenerClosed
        queue.setSpecific(key: Self.queueKey, value: ())
        self.source = DispatchSource.makeReadSource(fileDescriptor: listener, queue: queue)
        source.setEventHandler { [weak self] in self?.acceptWaiting() }
        source.setCancelHandler {
            Glibc.close(listener)
            listenerClosed.signal()
        }
        source.activate()
        log(.info, "listening on \(path ?? "fd \(listener)") for uid \(allowedUID)")
    }

    deinit { close() }

    /// How many connections are open now.
    public var connectionCount: Int { state.withLock { $0.connections.count } }
    /// How many peers of another uid were refused so far.
    public var refusedCount: Int { state.withLock { $0.refusedCount } }
    /// How many peers were closed at once because ``maximumConnections`` were open.
    public var refusedForCapacityCount: Int { state.withLock { $0.refusedForCapacityCount } }
    /// How many connections were admitted so far.
    public var acceptedCount: Int { state.withLock { $0.acceptedCount } }

    /// Stops accepting, closes the listening socket, removes the socket file if it is still
    /// the one this server bound, and closes every open connection (each gets its
    /// `onClose`). Idempotent. Called from anywhere but the server's own queue (where
    /// `onConnection` runs), the listening socket is closed when it returns.
    public func close() {
        let closing = state.withLock { state -> (connections: [FrameConnection], suspended: Bool)? in
            guard !state.closed else { return nil }
            state.closed = true
            let result = (Array(state.connections.values), state.acceptPause != nil)
            state.connections = [:]
            state.acceptPause = nil
            return result
        }
        guard let (connections, suspended) = closing else { return }
        if let path, let boundIdentity {
            var info = stat()
            if lstat(path, &info) == 0, UInt64(info.st_dev) == boundIdentity.device, UInt64(info.st_ino) == boundIdentity.inode {
                unlink(path)
            }
        }
        source.cancel()
        if suspended { source.resume() }
        for connection in connections { connection.close(reason: "the server is shutting down") }
        // The cancel handler runs on the server's queue; from anywhere else, wait for it so
        // the listening socket is closed when this returns (a successor can adopt or bind).
        if DispatchQueue.getSpecific(key: Self.queueKey) == nil {
            _ = listenerClosed.wait(timeout: .now() + 10)
        }
    }

    // MARK: Accepting (on the server's queue)

    private func acceptWaiting() {
        while true {
            if let connectionQueue, waitForClosesAtCapacity(on: connectionQueue) { return }
            let descriptor = accept(listener)
            if descriptor < 0 {
                let code = errno
                switch code {
                case EINTR, ECONNABORTED, EPROTO:
                    continue
                case EAGAIN, EWOULDBLOCK:
                    return
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    pauseAccepting(code)
                    return
                default:
                    log(.error, "accept on \(path ?? "fd \(listener)") failed: \(systemErrorText(code)); retrying in \(DurationText.spoken(retryDelay.transportSeconds))")
                    pauseAccepting(nil)
                    return
                }
            }
            admit(descriptor)
        }
    }

    /// Out of descriptors (or memory): the waiting peers stay in the backlog, and the
    /// source is suspended for ``retryDelay`` so the level-triggered readiness does not
    /// spin a core.
    private func pauseAccepting(_ code: Int32?) {
        let suspended = state.withLock { state -> Bool in
            guard !state.closed, state.acceptPause == nil else { return false }
            source.suspend()
            state.acceptPause = .descriptors
            return true
        }
        guard suspended else { return }
        if let code {
            log(.error, "cannot accept connections on \(path ?? "fd \(listener)"): \(systemErrorText(code)) (\(connectionCount) open); clients wait in the backlog, retrying in \(DurationText.spoken(retryDelay.transportSeconds))")
        }
        queue.asyncAfter(deadline: .now() + retryDelay.dispatchInterval) { [weak self] in
            guard let self else { return }
            self.state.withLock { state in
                guard state.acceptPause == .descriptors, !state.closed else { return }
                state.acceptPause = nil
                self.source.resume()
            }
        }
    }

    /// At ``maximumConnections``, before refusing anyone, lets the connections' queue handle
    /// what it has, once each time the cap is reached: the peers waiting stay in the backlog
    /// meanwhile. Accepting runs on the server's queue and a connection's end is handled on
    /// the connections' queue, so a client that connects and closes in a loop (one connection
    /// open at a time) made accepting outrun the closes and filled the cap with connections
    /// already over; real clients were refused (found from outside: `bgtask status` 1 time in 60,
    /// and an app that fell back to a scheduler of its own). Returns whether accepting waits.
    private func waitForClosesAtCapacity(on connectionQueue: DispatchQueue) -> Bool {
        let waits = state.withLock { state -> Bool in
            guard state.connections.count >= maximumConnections else {
                state.closesHandledAtCapacity = false
                return false
            }
            guard !state.closesHandledAtCapacity, !state.closed, state.acceptPause == nil else { return false }
            source.suspend()
            state.acceptPause = .closes
            return true
        }
        guard waits else { return false }
        // Behind what the connections' queue holds now, then back on the server's queue.
        connectionQueue.async { [weak self] in
            guard let self else { return }
            self.queue.async { [weak self] in
                guard let self else { return }
                self.state.withLock { state in
                    guard state.acceptPause == .closes, !state.closed else { return }
                    state.acceptPause = nil
                    state.closesHandledAtCapacity = true
                    self.source.resume()
                }
            }
        }
        return true
    }

    private func admit(_ descriptor: Int32) {
        let credentials: PeerCredentials
        switch PeerCredentials.of(descriptor: descriptor) {
        case .success(let found):
            credentials = found
        case .failure(let error):
            Glibc.close(descriptor)
            log(.warning, "refused a connection whose credentials cannot be read (\(error))")
            return
        }
        guard credentials.uid == allowedUID else {
            Glibc.close(descriptor)
            state.withLock { $0.refusedCount += 1 }
            log(.warning, "refused a connection from pid \(credentials.pid), uid \(credentials.uid): only uid \(allowedUID) may connect")
            return
        }
        // No log of its own: the server logs its close (``closed(_:reason:)``), throttled.
        let connection = FrameConnection(adopting: descriptor, peer: credentials, options: connectionOptions, targetQueue: connectionQueue, log: nil)
        let admittedAt = self.now()
        // `full` carries the refusals not logged before this one, or nil when this one is
        // not logged either.
        enum Admission { case admitted, closing, full(loggingAfter: Int?) }
        let admission = state.withLock { state -> Admission in
            guard !state.closed else { return .closing }
            guard state.connections.count < maximumConnections else {
                state.refusedForCapacityCount += 1
                return .full(loggingAfter: state.capacityLog.admit(at: admittedAt))
            }
            state.connections[ObjectIdentifier(connection)] = connection
            state.acceptedCount += 1
            return .admitted
        }
        switch admission {
        case .admitted:
            break
        case .closing:
            connection.close(reason: "the server is shutting down")
            return
        case .full(let unlogged):
            // A fresh socket's buffer takes one small frame whole, so this never waits; a
            // peer already gone just misses it. Its request may still be unread here: its
            // side then reads this frame first, and the reset after it.
            if let refusalAtCapacity { try? connection.send(refusalAtCapacity) }
            connection.close(reason: "\(maximumConnections) connections are open, the most this server keeps")
            if let unlogged {
                let before = unlogged > 0 ? " (\(unlogged) more refused since the last such line)" : ""
                log(.warning, "refused a connection from pid \(credentials.pid): \(maximumConnections) connections are open, the most this server keeps; new ones are closed at once until one ends\(before)")
            }
            return
        }
        connection.addCloseObserver { [weak self] reason in self?.closed(connection, reason: reason) }
        log(.debug, "\(connection.name): accepted")
        onConnection(connection)
    }

    /// Forgets a closed connection and logs its close (called from its close observer):
    /// a close on a fault at its level while ``faultyCloseLogBurst`` allows, else at debug.
    private func closed(_ connection: FrameConnection, reason: FrameConnection.CloseReason) {
        let line = "\(connection.name): closed: \(reason)"
        let level = reason.logLevel
        let at = level >= .warning ? now() : nil
        let heldBack = state.withLock { state -> Int? in
            _ = state.connections.removeValue(forKey: ObjectIdentifier(connection))
            guard let at else { return 0 }
            return state.faultyCloseLog.admit(at: at)
        }
        guard let heldBack else {
            // Kept for whoever debugs a client (BGTASK_LOG=debug), not at warning level.
            log(.debug, line)
            return
        }
        log(level, heldBack > 0 ? "\(line) (\(heldBack) more connections closed on a fault since the last such line, logged at debug level)" : line)
    }

    // MARK: Binding

    /// Creates, binds (mode 0600) and listens on a socket at `path`, replacing a stale
    /// socket file nobody listens on.
    ///
    /// Two servers starting on one path at once take turns through `<path>.lock` (an
    /// exclusive `flock`, held from before the first `bind` until `listen`): without it, one
    /// could probe the other's socket between its `bind` and `listen`, find nobody
    /// listening, take it for stale and replace it, and both would say they were ready. With
    /// it, the second finds the first listening and is refused. The lock file stays (removing
    /// a lock file races with the next one to open it).
    private static func bindListener(path: String, log: TransportLog) throws(ListenError) -> (Int32, (device: UInt64, inode: UInt64)) {
        do {
            // The address is checked first, so that a path no socket can have leaves no lock
            // file behind.
            _ = try UnixSocket.withAddress(.path(path)) { _, _ in Int32(0) }
        } catch {
            throw ListenError(code: .invalidPath, path: path, message: "cannot listen on \(path): \(error)")
        }
        let lock = try BindingLock(socketPath: path)
        defer { lock.release() }
        let descriptor = socket(AF_UNIX, UnixSocket.stream | UnixSocket.closeOnExec | UnixSocket.nonBlocking, 0)
        guard descriptor >= 0 else {
            throw ListenError(code: .systemCall, path: path, message: "cannot listen on \(path): \(SystemCallError(call: "socket", code: errno))")
        }
        // The socket file takes the socket inode's mode (less the umask) at bind: 0600 from
        // the first instant, without touching the process-wide umask.
        fchmod(descriptor, 0o600)
        var replacedStale = false
        while true {
            let bound: Int32
            do {
                bound = try UnixSocket.withAddress(.path(path)) { Glibc.bind(descriptor, $0, $1) }
            } catch {
                Glibc.close(descriptor)
                throw ListenError(code: .invalidPath, path: path, message: "cannot listen on \(path): \(error)")
            }
            if bound == 0 { break }
            let code = errno
            guard code == EADDRINUSE, !replacedStale else {
                Glibc.close(descriptor)
                throw ListenError(code: .systemCall, path: path, message: "cannot listen on \(path): \(SystemCallError(call: "bind", code: code))")
            }
            do {
                try replaceIfStale(path: path, log: log)
            } catch {
                Glibc.close(descriptor)
                throw error
            }
            replacedStale = true
        }
        chmod(path, 0o600)
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw ListenError(code: .systemCall, path: path, message: "cannot listen on \(path): \(SystemCallError(call: "lstat", code: code))")
        }
        guard listen(descriptor, listenBacklog) == 0 else {
            let code = errno
            unlink(path)
            Glibc.close(descriptor)
            throw ListenError(code: .systemCall, path: path, message: "cannot listen on \(path): \(SystemCallError(call: "listen", code: code))")
        }
        return (descriptor, (UInt64(info.st_dev), UInt64(info.st_ino)))
    }

    /// Removes the socket at `path` if nobody listens on it (a previous daemon died without
    /// cleaning up); throws if someone does, or if it is not a socket.
    private static func replaceIfStale(path: String, log: TransportLog) throws(ListenError) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            // Gone in the meantime: binding again will tell.
            return
        }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw ListenError(code: .notASocket, path: path, message: "cannot listen on \(path): it exists and is \(FileKind(mode: info.st_mode)), not a socket; it was left alone (remove it if it is not needed)")
        }
        let probe = socket(AF_UNIX, UnixSocket.stream | UnixSocket.closeOnExec | UnixSocket.nonBlocking, 0)
        guard probe >= 0 else {
            throw ListenError(code: .systemCall, path: path, message: "cannot check the existing socket \(path): \(SystemCallError(call: "socket", code: errno))")
        }
        defer { Glibc.close(probe) }
        let connected = (try? UnixSocket.withAddress(.path(path)) { Glibc.connect(probe, $0, $1) }) ?? -1
        let code = errno
        if connected == 0 {
            let holder: String
            switch PeerCredentials.of(descriptor: probe) {
            case .success(let peer): holder = "pid \(peer.pid) (uid \(peer.uid))"
            case .failure: holder = "another process"
            }
            throw ListenError(code: .inUse, path: path, message: "cannot listen on \(path): \(holder) is listening on it (is a daemon already running?)")
        }
        switch code {
        case ECONNREFUSED:
            guard unlink(path) == 0 || errno == ENOENT else {
                throw ListenError(code: .systemCall, path: path, message: "cannot replace the stale socket \(path): \(SystemCallError(call: "unlink", code: errno))")
            }
            log(.info, "replaced the stale socket \(path) (nobody was listening on it)")
        case EAGAIN:
            // A full backlog: someone listens but is busy.
            throw ListenError(code: .inUse, path: path, message: "cannot listen on \(path): another process is listening on it (its backlog is full; is a daemon already running?)")
        default:
            throw ListenError(code: .systemCall, path: path, message: "cannot check whether anyone listens on \(path): \(SystemCallError(call: "connect", code: code)); it was left alone")
        }
    }
}

/// The exclusive lock two servers binding one socket path take turns through
/// (`FrameServer.bindListener`): `flock` on `<path>.lock`, created 0600 if missing.
struct BindingLock {
    /// How long a server waits for another's bind to finish (milliseconds: the other holds
    /// the lock from its bind to its listen) before it gives up, naming the lock.
    static let patience: Duration = .seconds(2)

    let descriptor: Int32

    /// Takes the lock of `socketPath`, waiting at most ``patience`` for another holder.
    init(socketPath: String) throws(FrameServer.ListenError) {
        let lockPath = socketPath + ".lock"
        // O_NONBLOCK: a FIFO put there opens at once (and is refused below) instead of
        // waiting for a writer; O_NOFOLLOW: a link put there is not followed.
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
        guard descriptor >= 0 else {
            throw FrameServer.ListenError(code: .systemCall, path: socketPath, message: "cannot listen on \(socketPath): cannot open its lock file \(lockPath): \(SystemCallError(call: "open", code: errno))")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            let kind = FileKind(mode: info.st_mode)
            Glibc.close(descriptor)
            throw FrameServer.ListenError(code: .systemCall, path: socketPath, message: "cannot listen on \(socketPath): its lock file \(lockPath) is \(kind), not a regular file; it was left alone (remove it if it is not needed)")
        }
        // In a shared directory another user could hold the lock for good: refused at once,
        // naming the owner, rather than waited on.
        guard info.st_uid == getuid() else {
            Glibc.close(descriptor)
            throw FrameServer.ListenError(code: .systemCall, path: socketPath, message: "cannot listen on \(socketPath): its lock file \(lockPath) belongs to uid \(info.st_uid), not to uid \(getuid()); another user may have made it (choose another --socket, or remove it if it is not needed)")
        }
        if let code = ExclusiveFileLock.take(descriptor, patience: Self.patience, interval: .milliseconds(5)) {
            Glibc.close(descriptor)
            let reason = code == EWOULDBLOCK
                ? "another process has held its lock file \(lockPath) for over \(Self.patience) (is a daemon starting?)"
                : "cannot lock \(lockPath): \(SystemCallError(call: "flock", code: code))"
            throw FrameServer.ListenError(code: code == EWOULDBLOCK ? .inUse : .systemCall, path: socketPath, message: "cannot listen on \(socketPath): \(reason)")
        }
        self.descriptor = descriptor
    }

    /// Releases the lock (closing the file does).
    func release() {
        Glibc.close(descriptor)
    }
}

/// What kind of file a mode describes, for messages: `a regular file`, `a directory`...
struct FileKind: CustomStringConvertible {
    var mode: mode_t
    var description: String {
        switch mode & S_IFMT {
        case S_IFREG: return "a regular file"
        case S_IFDIR: return "a directory"
        case S_IFLNK: return "a symbolic link"
        case S_IFSOCK: return "a socket"
        case S_IFIFO: return "a FIFO"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        default: return "a file of unknown type"
        }
    }
}
