#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import SchedulerCore
import Synchronization

/// Why connecting to the daemon's socket failed.
public struct ConnectError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kinds of failure, so a caller can say what to do.
    public enum Code: Hashable, Sendable {
        /// Nobody listens at the path: no socket file (`ENOENT`), or a socket nobody listens
        /// on (`ECONNREFUSED`). The daemon is not running; the caller should say how to
        /// start it.
        case noDaemon
        /// This user may not reach the socket (`EACCES`, `EPERM`): a directory or socket of
        /// another user.
        case permissionDenied
        /// The daemon did not accept within the timeout (its backlog stayed full).
        case timedOut
        /// The path cannot be a socket address (too long, empty).
        case invalidPath
        /// The process listening on the socket runs as another user than required (in a
        /// shared directory such as `/tmp`, someone else may have put a socket where the
        /// daemon's was expected); nothing was sent to it.
        case foreignServer
        /// Any other failure.
        case other
    }

    /// What went wrong.
    public var code: Code
    /// The socket path.
    public var path: String
    /// The errno of the failing call, when one failed.
    public var errno: Int32?
    /// The explanation, naming the path.
    public var message: String

    /// An error from its parts.
    public init(code: Code, path: String, errno: Int32?, message: String) {
        self.code = code
        self.path = path
        self.errno = errno
        self.message = message
    }

    /// Whether the daemon is simply not running (``Code/noDaemon``).
    public var isNoDaemon: Bool { code == .noDaemon }

    /// ``message``.
    public var description: String { message }
}

/// Opens connections to a ``FrameServer`` at a socket path.
///
/// Two ways to use one: ``connect(path:timeout:serverUID:options:targetQueue:log:)`` gives an unstarted
/// ``FrameConnection`` for a long-lived connection on which the daemon pushes frames (the
/// app side); ``RequestChannel`` wraps it for synchronous request and reply (`bgtask`).
public enum FrameClient {
    /// Connects to the Unix stream socket at `path`, waiting at most `timeout` for the
    /// server to accept (a full backlog), and checks with `SO_PEERCRED` that the server runs
    /// as `serverUID` (this process's uid by default; nil skips the check); the result is
    /// not started yet.
    ///
    /// - Throws: ``ConnectError`` naming the path: ``ConnectError/Code/noDaemon`` when no
    ///   socket exists or nobody listens on it, ``ConnectError/Code/permissionDenied``,
    ///   ``ConnectError/Code/timedOut``, ``ConnectError/Code/invalidPath``,
    ///   ``ConnectError/Code/foreignServer`` or ``ConnectError/Code/other``.
    public static func connect(
        path: String,
        timeout: Duration = .seconds(5),
        serverUID: UInt32? = getuid(),
        options: FrameConnection.Options = .client,
        targetQueue: DispatchQueue? = nil,
        log: TransportLog? = nil
    ) throws(ConnectError) -> FrameConnection {
        let descriptor = socket(AF_UNIX, UnixSocket.stream | UnixSocket.closeOnExec, 0)
        guard descriptor >= 0 else {
            let code = Glibc.errno
            throw ConnectError(code: .other, path: path, errno: code, message: "cannot connect to \(path): \(SystemCallError(call: "socket", code: code))")
        }
        // A blocking connect on a Unix socket waits for room in the listener's backlog, up
        // to SO_SNDTIMEO: the timeout without a polling loop. Non-blocking afterwards.
        var limit = UnixSocket.timeval(seconds: timeout.transportSeconds)
        if limit.tv_sec == 0 && limit.tv_usec == 0 { limit.tv_usec = 1 }
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        let result: Int32
        do {
            result = try UnixSocket.withAddress(.path(path)) { address, length in
                var outcome: Int32
                repeat { outcome = Glibc.connect(descriptor, address, length) } while outcome != 0 && Glibc.errno == EINTR
                return outcome
            }
        } catch {
            Glibc.close(descriptor)
            throw ConnectError(code: .invalidPath, path: path, errno: nil, message: "cannot connect to \(path): \(error)")
        }
        guard result == 0 else {
            let code = Glibc.errno
            Glibc.close(descriptor)
            throw connectError(for: code, path: path, timeout: timeout)
        }
        var none = timeval()
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &none, socklen_t(MemoryLayout<timeval>.size))
        let server: PeerCredentials
        switch PeerCredentials.of(descriptor: descriptor) {
        case .success(let credentials):
            server = credentials
        case .failure(let failure):
            Glibc.close(descriptor)
            throw ConnectError(code: .other, path: path, errno: failure.code, message: "cannot connect to \(path): \(failure)")
        }
        if let serverUID, server.uid != serverUID {
            Glibc.close(descriptor)
            throw ConnectError(
                code: .foreignServer, path: path, errno: nil,
                message: "refusing the socket \(path): the process listening on it (pid \(server.pid)) runs as uid \(server.uid), not uid \(serverUID); nothing was sent"
            )
        }
        return FrameConnection(adopting: descriptor, peer: server, options: options, targetQueue: targetQueue, log: log)
    }

    /// The ``ConnectError`` for a failed `connect` with `code`.
    static func connectError(for code: Int32, path: String, timeout: Duration) -> ConnectError {
        let reason = systemErrorText(code)
        switch code {
        case ENOENT:
            return ConnectError(code: .noDaemon, path: path, errno: code, message: "no daemon is running: there is no socket at \(path) (\(reason))")
        case ECONNREFUSED:
            // Linux refuses a connect to a path that is no socket at all the same way: say
            // what is there instead of suggesting a daemon start that would fail on it.
            var info = stat()
            if stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFSOCK {  // connect follows links; so does this
                let kind = BoundedFile.nonRegularKind(info.st_mode) ?? "a regular file"
                return ConnectError(code: .other, path: path, errno: code, message: "cannot connect to \(path): it is \(kind), not a socket")
            }
            return ConnectError(code: .noDaemon, path: path, errno: code, message: "no daemon is running: nobody listens on \(path) (\(reason))")
        case EACCES, EPERM:
            return ConnectError(code: .permissionDenied, path: path, errno: code, message: "cannot connect to \(path): \(reason) (the socket or its directory belongs to another user, or is not writable)")
        case EAGAIN, ETIMEDOUT:
            return ConnectError(code: .timedOut, path: path, errno: code, message: "cannot connect to \(path): the daemon did not accept within \(DurationText.spoken(timeout.transportSeconds)) (it is overloaded or stuck)")
        case ENOTDIR, ENOTSOCK:
            return ConnectError(code: .other, path: path, errno: code, message: "cannot connect to \(path): \(reason) (it is not a socket)")
        default:
            return ConnectError(code: .other, path: path, errno: code, message: "cannot connect to \(path): \(reason)")
        }
    }
}

/// A connection used from synchronous code: send a request, wait for the reply with a
/// timeout (`bgtask`), or wait for the next pushed frame.
///
/// Frames are queued here by the connection's reader thread (or its queue); the caller's
/// thread waits on a semaphore, so calling from the main thread or any Dispatch queue
/// cannot deadlock, except from the connection's own callbacks (its queue or reader
/// thread), which is refused with ``RequestError/calledOnConnectionQueue``.
public final class RequestChannel: Sendable {
    /// Why a request or a wait failed.
    public enum RequestError: Error, Hashable, Sendable, CustomStringConvertible {
        /// No frame arrived within the timeout (the connection stays open).
        case timedOut(Duration)
        /// The connection closed before a frame arrived.
        case closed(FrameConnection.CloseReason)
        /// The request could not be sent.
        case send(FrameConnection.SendError)
        /// Called from one of the connection's own callbacks (on its queue or reader
        /// thread), where the reply could never be delivered.
        case calledOnConnectionQueue

        /// One phrase naming what went wrong.
        public var description: String {
            switch self {
            case .timedOut(let duration): return "no reply from the daemon within \(DurationText.spoken(duration.transportSeconds))"
            case .closed(let reason): return "the connection to the daemon closed: \(reason)"
            case .send(let error): return error.description
            case .calledOnConnectionQueue: return "a synchronous request was made on the connection's own queue, where its reply could never arrive"
            }
        }
    }

    /// The underlying connection (started by the channel).
    public let connection: FrameConnection

    private let inbox = Inbox()

    /// What arrived and is not yet taken, shared with the connection's callbacks.
    private final class Inbox: Sendable {
        struct Contents {
            var frames: [Frame] = []
            var closed: FrameConnection.CloseReason?
        }
        let state = Mutex(Contents())
        /// Signalled once per arrival (a frame or the close).
        let arrivals = DispatchSemaphore(value: 0)
    }

    /// Wraps and starts `connection` (which must not be started yet).
    public init(connection: FrameConnection) {
        self.connection = connection
        connection.start(
            onFrame: { [inbox] frame in
                inbox.state.withLock { $0.frames.append(frame) }
                inbox.arrivals.signal()
            },
            onClose: { [inbox] reason in
                inbox.state.withLock { $0.closed = reason }
                inbox.arrivals.signal()
            }
        )
    }

    /// Connects to `path` (see ``FrameClient/connect(path:timeout:serverUID:options:targetQueue:log:)``)
    /// and wraps the connection.
    public convenience init(path: String, timeout: Duration = .seconds(5), serverUID: UInt32? = getuid(), log: TransportLog? = nil) throws(ConnectError) {
        self.init(connection: try FrameClient.connect(path: path, timeout: timeout, serverUID: serverUID, options: .client, log: log))
    }

    /// Sends `payload` and waits up to `timeout` for the next frame, the reply.
    public func request(_ payload: Data, timeout: Duration = .seconds(10)) throws(RequestError) -> Frame {
        guard !connection.isCurrentQueue else { throw .calledOnConnectionQueue }
        do { try connection.send(payload) } catch { throw .send(error) }
        return try receive(timeout: timeout)
    }

    /// Waits up to `timeout` for the next frame that has not been returned yet.
    public func receive(timeout: Duration = .seconds(10)) throws(RequestError) -> Frame {
        guard !connection.isCurrentQueue else { throw .calledOnConnectionQueue }
        let deadline = DispatchTime.now() + timeout.dispatchInterval
        while true {
            let next = inbox.state.withLock { inbox -> Result<Frame, RequestError>? in
                if !inbox.frames.isEmpty { return .success(inbox.frames.removeFirst()) }
                if let reason = inbox.closed { return .failure(.closed(reason)) }
                return nil
            }
            switch next {
            case .success(let frame): return frame
            case .failure(let error): throw error
            case nil: break
            }
            // Each signal is one arrival; a stale one (consumed by an earlier check) only
            // makes the loop look again.
            if inbox.arrivals.wait(timeout: deadline) == .timedOut {
                let last = inbox.state.withLock { $0.frames.isEmpty ? nil : $0.frames.removeFirst() }
                if let last { return last }
                if let reason = inbox.state.withLock({ $0.closed }) { throw .closed(reason) }
                throw .timedOut(timeout)
            }
        }
    }

    /// Sends `payload` without waiting for anything.
    public func send(_ payload: Data) throws(FrameConnection.SendError) {
        try connection.send(payload)
    }

    /// Closes the connection.
    public func close() { connection.close() }

    /// The channel owns its connection: dropping the channel closes it.
    deinit { connection.close(reason: "the request channel was released") }
}
