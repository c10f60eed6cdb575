import Dispatch
import Foundation
import SchedulerCore
import Synchronization

/// A client's connection to bgtaskd in terms of messages: numbered requests whose replies
/// are matched by number, and the messages the daemon pushes (docs/protocol.md,
/// "Messages"). The app side and `bgtask` both use it.
///
/// Pushes are handled on the connection's queue, in the order the daemon sent them. A
/// caller of ``call(_:timeout:)`` waits on a semaphore of its own, so a call from any
/// thread or queue but the connection's (where ``onPush`` runs) cannot deadlock, and every
/// wait is bounded. On a connection read by its own thread
/// (``FrameConnection/Options/Reading/readerThread``, a client's default) that thread
/// wakes the caller of a reply itself, unless pushes sent before the reply are still
/// waiting for or running on the queue: then the reply waits behind them there, so a
/// caller never sees its reply before the daemon's earlier pushes were handled.
///
/// A reply numbered ``connectionReplyID`` answers no request but the connection itself:
/// a daemon at its connection limit sends one (`failed`) and closes, and every call on the
/// link then fails with what it said instead of a reset (docs/protocol.md, "Limits").
public final class MessageLink: Sendable {
    /// The number of the reply that answers the connection as a whole: requests are
    /// numbered from 1, so no request's reply carries it.
    public static let connectionReplyID: UInt64 = 0

    private struct State {
        var nextID: UInt64 = 1
        var waiting: [UInt64: Waiter] = [:]
        var closed: String?
        var onPush: (@Sendable (AppPush) -> Void)?
        var onClose: (@Sendable (String) -> Void)?
        /// Messages the reader thread queued on the connection's queue that have not been
        /// handled yet.
        var queuedMessages = 0
        /// The daemon's failure of the connection itself (``connectionReplyID``): why it
        /// closes, so calls fail with it.
        var refusal: DaemonFailure?

        /// What a call on the closed link fails with: the daemon's word when it gave one.
        func failureOfClosedLink(path: String) -> DaemonFailure {
            refusal ?? DaemonFailure(.failed, "the connection to bgtaskd at \(path) is closed: \(closed ?? "closed")")
        }
    }

    /// One caller waiting for its reply.
    private final class Waiter: Sendable {
        let arrived = DispatchSemaphore(value: 0)
        let reply = Mutex<Reply?>(nil)
    }

    /// The connection.
    public let connection: FrameConnection
    /// The socket path (for messages).
    public let path: String
    private let state = Mutex(State())

    /// Starts `connection` (not started yet) as a message link to the daemon at `path`.
    public init(connection: FrameConnection, path: String) {
        self.connection = connection
        self.path = path
        connection.start(
            onFrame: { [weak self] frame in self?.received(frame) },
            onClose: { [weak self] reason in self?.closed("\(reason)") }
        )
    }

    /// Connects to the daemon at `path` and starts a link.
    /// - Throws: ``ConnectError`` (``ConnectError/isNoDaemon`` when none is running).
    public static func connect(path: String, timeout: Duration = .seconds(5)) throws(ConnectError) -> MessageLink {
        MessageLink(connection: try FrameClient.connect(path: path, timeout: timeout, options: .client), path: path)
    }

    /// Calls `body` with every message the daemon pushes (on the connection's queue).
    public func onPush(_ body: @escaping @Sendable (AppPush) -> Void) {
        state.withLock { $0.onPush = body }
    }

    /// Calls `body` once when the link closes (on the connection's queue), now if it has.
    public func onClose(_ body: @escaping @Sendable (String) -> Void) {
        let already = state.withLock { state -> String? in
            if state.closed == nil { state.onClose = body }
            return state.closed
        }
        if let already { body(already) }
    }

    /// Whether the link is closed.
    public var isClosed: Bool { state.withLock { $0.closed != nil } }

    /// Sends `request` and waits up to `timeout` for its reply.
    /// - Throws: a ``DaemonFailure`` (code `failed`) naming the daemon's socket when the
    ///   link is closed, the send fails, or no reply comes in time. A reply of
    ///   ``Reply/failed(_:)`` is returned, not thrown.
    public func call(_ request: ClientRequest, timeout: Duration = .seconds(10)) throws(DaemonFailure) -> Reply {
        guard !connection.isCurrentQueue else {
            throw DaemonFailure(.failed, "a request to bgtaskd was made on its connection's own queue, where the reply could never arrive")
        }
        let waiter = Waiter()
        let registered = state.withLock { state -> Result<UInt64, DaemonFailure> in
            if state.closed != nil { return .failure(state.failureOfClosedLink(path: path)) }
            let id = state.nextID
            state.nextID += 1
            state.waiting[id] = waiter
            return .success(id)
        }
        let id: UInt64
        switch registered {
        case .success(let value): id = value
        case .failure(let failure): throw failure
        }
        let deadline = DispatchTime.now() + timeout.dispatchInterval
        if let failure = send(ClientEnvelope(id: id, request: request)) {
            // The daemon may have answered the connection itself and closed it before this
            // request went out (a refusal at its connection limit): once the reader has
            // handed that answer on, the link closes (waking this waiter), and the answer
            // says more than the failed send.
            if failure.closedLink { _ = waiter.arrived.wait(timeout: deadline) }
            let refusal = state.withLock { state -> DaemonFailure? in
                state.waiting.removeValue(forKey: id)
                return state.refusal
            }
            throw refusal ?? failure.failure
        }
        if waiter.arrived.wait(timeout: deadline) == .timedOut {
            _ = state.withLock { $0.waiting.removeValue(forKey: id) }
            if let reply = waiter.reply.withLock({ $0 }) { return reply }
            // Sent, so not "never happened": a stopped daemon that resumes carries it out.
            throw DaemonFailure(.failed, "bgtaskd at \(path) did not answer within \(DurationText.spoken(timeout.transportSeconds)) (the request was sent; it may still take effect if bgtaskd resumes)")
        }
        if let reply = waiter.reply.withLock({ $0 }) { return reply }
        // Sent, and the link closed before the reply: the daemon may have done it (a stop
        // closes every connection), so the message does not say it never happened.
        throw state.withLock { state -> DaemonFailure in
            if let refusal = state.refusal { return refusal }
            return DaemonFailure(.failed, "bgtaskd at \(path) closed the connection before answering (\(state.closed ?? "closed")); it may be stopping, and whether the request took effect is unknown")
        }
    }

    /// Sends `request` without waiting for its reply (it is dropped when it comes);
    /// ordered after every earlier send. A failure is returned for the caller to log.
    @discardableResult
    public func post(_ request: ClientRequest) -> DaemonFailure? {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextID += 1 }
            return state.nextID
        }
        return send(ClientEnvelope(id: id, request: request))?.failure
    }

    /// Closes the link.
    public func close() { connection.close(reason: "closed by the client") }

    /// Sends `envelope`: nil, or why it could not be sent and whether the connection is
    /// closed (or closing) for it.
    private func send(_ envelope: ClientEnvelope) -> (failure: DaemonFailure, closedLink: Bool)? {
        let payload: Data
        do {
            payload = try MessageCoding.encode(envelope)
        } catch {
            return (DaemonFailure(.invalid, "the request could not be encoded: \(error)"), false)
        }
        do {
            try connection.send(payload)
            return nil
        } catch {
            var closedLink = false
            if case .closed = error { closedLink = true }
            return (DaemonFailure(.failed, "could not send to bgtaskd at \(path): \(error)"), closedLink)
        }
    }

    private func received(_ frame: Frame) {
        let envelope: DaemonEnvelope
        do {
            envelope = try MessageCoding.decode(DaemonEnvelope.self, from: frame.payload)
        } catch {
            // A push this build does not know is a newer daemon's (a message added since):
            // passed over, as a decoder passes over a key it does not know. Anything else
            // malformed ends the link.
            if PlainMessageReader.unknownPushName(frame.payload) != nil { return }
            connection.close(reason: "bgtaskd sent a message this client does not understand: \(error)")
            return
        }
        guard connection.options.reading == .readerThread else {
            handle(envelope)  // already on the connection's queue
            return
        }
        let handledHere = state.withLock { state -> Bool in
            if case .reply = envelope, state.queuedMessages == 0 { return true }
            state.queuedMessages += 1
            return false
        }
        if handledHere {
            handle(envelope)
            return
        }
        let connection = connection
        connection.queue.async {
            connection.onQueue { self.handle(envelope) }
            self.state.withLock { $0.queuedMessages -= 1 }
        }
    }

    /// Wakes the caller of a reply, or hands a push to ``onPush(_:)``.
    private func handle(_ envelope: DaemonEnvelope) {
        switch envelope {
        case .reply(Self.connectionReplyID, let reply):
            // Kept for every call until the close that follows; anything but a failure
            // here says nothing a call could use.
            if case .failed(let failure) = reply { state.withLock { $0.refusal = failure } }
        case .reply(let id, let reply):
            // A reply nobody waits for answers a post, or a call that gave up waiting: dropped.
            // One numbered for a request this client never sent is a fault of the peer, said
            // at once rather than left for the waiting call to time out.
            let (waiter, neverSent) = state.withLock { state in
                (state.waiting.removeValue(forKey: id), id >= state.nextID)
            }
            guard let waiter else {
                if neverSent {
                    connection.close(reason: "bgtaskd sent a reply to request \(id), which this client never sent (a peer that does not speak this protocol)")
                }
                return
            }
            waiter.reply.withLock { $0 = reply }
            waiter.arrived.signal()
        case .push(let push):
            state.withLock { $0.onPush }?(push)
        }
    }

    private func closed(_ reason: String) {
        let (waiters, onClose) = state.withLock { state -> ([Waiter], (@Sendable (String) -> Void)?) in
            state.closed = reason
            let waiters = Array(state.waiting.values)
            state.waiting.removeAll()
            let onClose = state.onClose
            state.onClose = nil
            return (waiters, onClose)
        }
        for waiter in waiters { waiter.arrived.signal() }
        onClose?(reason)
    }
}
