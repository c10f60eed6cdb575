#if canImport(Glibc)
import Glibc
#endif
import CLinux
import Dispatch
import Foundation
import SchedulerCore
import Synchronization

/// One end of a connected Unix stream socket carrying frames (docs/protocol.md, "Frames
/// and connections").
///
/// The connection owns its descriptor. After ``start(onFrame:onClose:)`` what arrives is
/// read, decoded with a ``FrameDecoder`` and handed to `onFrame` once per frame, in order:
/// by a Dispatch read source on the connection's own serial queue, or by a thread of the
/// connection's own (``Options/Reading``). ``send(_:)`` may be
/// called from any thread: it writes what the socket takes at once (`MSG_NOSIGNAL`: a peer
/// that went away is an error, never a `SIGPIPE` that would kill the process), keeps the
/// rest and writes it when the socket is writable again; output that piles up beyond
/// ``Options/maximumBufferedOutput`` (a peer that never reads) closes the connection
/// instead of growing this process's memory. A server's connection also stops reading (and
/// so answering) while more than ``Options/pauseReadingAboveBufferedOutput`` waits: a peer
/// that sends requests without reading the replies gets no more work done for it than it
/// takes away, and its requests wait in the socket, lost never.
///
/// `onClose` is called exactly once, with the ``CloseReason``: the peer closed, a bad
/// frame, a failed read or write, the output cap, a timeout, or ``close(reason:)``. No
/// shared thread ever waits for a peer: writes never block, reads on a Dispatch source only
/// happen when the kernel says they will not block, a reader thread waits only for its own
/// peer (closing the connection shuts the socket down, which wakes it), and a peer that
/// sends no complete frame within ``Options/firstFrameTimeout`` is closed.
///
/// `onFrame` runs on the connection's queue or its reader thread, `onClose` on the queue
/// after the last `onFrame`; neither while the connection's lock is held, so they may call
/// ``send(_:)`` and ``close(reason:)``. The connection stays alive while it is
/// open (its Dispatch sources and reader thread hold it); after closing it lets go of the
/// callbacks.
public final class FrameConnection: Sendable {
    /// Limits and timeouts of a connection.
    public struct Options: Sendable, Hashable {
        /// A connection that has not sent one complete frame this long after it started is
        /// closed (``CloseReason/firstFrameTimeout(_:)``); nil waits forever. Default 10 s.
        public var firstFrameTimeout: Duration?
        /// A connection that sends no frame for this long (after its first) is closed
        /// (``CloseReason/idleTimeout(_:)``); nil (the default) waits forever, as an app's
        /// long-lived connection must.
        public var idleTimeout: Duration?
        /// A frame whose first bytes arrived must be whole within this long, or the
        /// connection is closed (``CloseReason/partialFrameTimeout(_:)``): a peer that sends
        /// most of a large frame and stalls holds its buffer no longer (a flood of them held
        /// a megabyte each, for ever). Not counted while this side does not read (output
        /// waiting: ``pauseReadingAboveBufferedOutput``). Nil waits forever. Default 10 s.
        public var partialFrameTimeout: Duration?
        /// Output bytes that may wait for a peer that does not read before the connection
        /// is closed (``CloseReason/outputLimitExceeded(buffered:limit:)``). Default 4 MiB;
        /// raised to at least one largest frame.
        public var maximumBufferedOutput: Int
        /// The largest payload accepted from the peer (at most
        /// ``FrameFormat/maximumPayloadLength``).
        public var maximumPayloadLength: Int
        /// While more output than this waits for the peer, no more frames are read or
        /// handed on; reading resumes once the output has drained. Nil never pauses. A
        /// server's connections pause (default 64 KiB) so that a peer sending requests
        /// without reading replies cannot make this process compute and hold them without
        /// end; a client's never do, or client and server could each wait for the other
        /// to read.
        public var pauseReadingAboveBufferedOutput: Int?
        /// Who reads the socket, and where `onFrame` runs (see ``Reading``).
        public var reading: Reading

        /// Who reads a connection's socket, and so where `onFrame` runs.
        public enum Reading: Sendable, Hashable {
            /// A Dispatch read source on the connection's queue; `onFrame` runs on the
            /// queue. One event thread serves any number of connections (a server's), at
            /// the price of three thread wake-ups per frame: libdispatch's event thread,
            /// a worker for the queue, and whoever the callback wakes.
            case dispatchSource
            /// A thread of the connection's own, blocked in `recv(2)` on the socket, which
            /// calls `onFrame` itself, in order; `onClose` runs on the queue once that
            /// thread has handed on its last frame. A frame costs one wake-up (this thread),
            /// plus the one of whoever it wakes: a client's connection, whose synchronous
            /// requests wait for their replies, and bgtaskd's connections, whose requests
            /// are answered on that thread (docs/protocol.md, "Frames and connections").
            /// While more than ``pauseReadingAboveBufferedOutput`` waits to be sent, the
            /// thread waits before handing on the next frame.
            case readerThread
        }

        /// Options from their parts.
        public init(
            firstFrameTimeout: Duration? = .seconds(10),
            idleTimeout: Duration? = nil,
            partialFrameTimeout: Duration? = .seconds(10),
            maximumBufferedOutput: Int = 4 * 1_048_576,
            maximumPayloadLength: Int = FrameFormat.maximumPayloadLength,
            pauseReadingAboveBufferedOutput: Int? = 64 * 1_024,
            reading: Reading = .dispatchSource
        ) {
            self.firstFrameTimeout = firstFrameTimeout
            self.idleTimeout = idleTimeout
            self.partialFrameTimeout = partialFrameTimeout
            self.maximumBufferedOutput = maximumBufferedOutput
            self.maximumPayloadLength = maximumPayloadLength
            // Negative marks would never be drained below: at least 0.
            self.pauseReadingAboveBufferedOutput = pauseReadingAboveBufferedOutput.map { max(0, $0) }
            self.reading = reading
        }

        /// For connections a server accepts: a peer must speak within 10 s, and one that
        /// does not read its replies is not read either; one event thread reads them all.
        public static var server: Options { Options() }
        /// For connections a client opens: the daemon may stay silent as long as it likes,
        /// replies are always read, and by a thread of the connection's own, so a caller
        /// waiting for its reply is woken by the thread that read it.
        public static var client: Options { Options(firstFrameTimeout: nil, partialFrameTimeout: nil, pauseReadingAboveBufferedOutput: nil, reading: .readerThread) }
    }

    /// Why a connection closed.
    public enum CloseReason: Hashable, Sendable, CustomStringConvertible {
        /// The peer closed its end between frames.
        case peerClosed
        /// The peer closed its end with part of a frame sent (`received` bytes of it).
        case truncatedFrame(received: Int)
        /// The peer sent a header this side refuses (oversized length, unknown version).
        case malformedFrame(FrameError)
        /// Reading failed with this errno (such as `ECONNRESET`).
        case readFailed(errno: Int32)
        /// Writing failed with this errno (such as `EPIPE`: the peer is gone).
        case writeFailed(errno: Int32)
        /// The peer does not read: `buffered` bytes were waiting, over `limit`.
        case outputLimitExceeded(buffered: Int, limit: Int)
        /// No complete frame within this long of the start.
        case firstFrameTimeout(Duration)
        /// No frame for this long.
        case idleTimeout(Duration)
        /// A frame begun was not whole this long after its first bytes.
        case partialFrameTimeout(Duration)
        /// This side called ``FrameConnection/close(reason:)`` with this reason.
        case closedLocally(String)
        /// This side closed it because the peer broke the protocol (a malformed message, a
        /// first request that was not hello: ``FrameConnection/close(refusingPeer:)``). A
        /// fault of the peer's, logged at warning level by a server's throttle with the others.
        case refusedPeer(String)
        /// No thread could be started to read the connection
        /// (``Options/Reading/readerThread``): `pthread_create` failed with this errno
        /// (`EAGAIN`: the process or its user is out of threads).
        case readerUnavailable(errno: Int32)

        /// How the close is logged: a frame this side refuses is an error (a broken or
        /// hostile client), other faults of the peer are warnings, a normal end is debug.
        public var logLevel: TransportLogLevel {
            switch self {
            case .malformedFrame, .readerUnavailable: return .error
            case .peerClosed, .closedLocally: return .debug
            case .truncatedFrame, .readFailed, .writeFailed, .outputLimitExceeded, .firstFrameTimeout, .idleTimeout, .partialFrameTimeout, .refusedPeer: return .warning
            }
        }

        /// One phrase, such as `malformed frame: frame protocol version 9 is unknown (this side speaks 1)`.
        public var description: String {
            switch self {
            case .peerClosed: return "the peer closed the connection"
            case .truncatedFrame(let received): return "the peer closed the connection in the middle of a frame (\(received) bytes of it received)"
            case .malformedFrame(let error): return "malformed frame: \(error)"
            case .readFailed(let code): return "read failed: \(systemErrorText(code))"
            case .writeFailed(let code): return "write failed: \(systemErrorText(code))"
            case .outputLimitExceeded(let buffered, let limit): return "the peer does not read: \(buffered) bytes of output waiting, over the limit of \(limit)"
            case .firstFrameTimeout(let duration): return "no complete frame within \(DurationText.spoken(duration.transportSeconds)) of connecting"
            case .idleTimeout(let duration): return "no frame for \(DurationText.spoken(duration.transportSeconds))"
            case .partialFrameTimeout(let duration): return "a frame begun was not finished within \(DurationText.spoken(duration.transportSeconds))"
            case .closedLocally(let reason): return "closed by this side: \(reason)"
            case .refusedPeer(let reason): return "closed by this side, the peer at fault: \(reason)"
            case .readerUnavailable(let code): return "no thread could be started to read the connection: \(systemErrorText(code))"
            }
        }
    }

    /// Why ``send(_:)`` did not queue a frame.
    public enum SendError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The payload cannot be a frame (too long).
        case frame(FrameError)
        /// The connection is closed (possibly by this very send: the output cap).
        case closed(CloseReason)

        /// One phrase naming what went wrong.
        public var description: String {
            switch self {
            case .frame(let error): return "cannot send: \(error)"
            case .closed(let reason): return "cannot send: the connection is closed (\(reason))"
            }
        }
    }

    /// The credentials of the peer: the client's for a connection a ``FrameServer``
    /// accepted, the server's for one ``FrameClient`` opened (nil if unknown).
    public let peer: PeerCredentials?
    /// A short name for log lines: `connection 12 (pid 1234, uid 1000)`.
    public let name: String
    /// The options the connection was made with.
    public let options: Options

    /// The connection's serial queue, where its callbacks run.
    let queue: DispatchQueue
    private let identifier: UInt64
    private let log: TransportLog?
    /// Starts the reader thread (``Options/Reading/readerThread``): 0, or an errno.
    private let startReader: @Sendable (@escaping @Sendable () -> Void) -> Int32
    private let state: Mutex<State>

    private static let counter = Atomic<UInt64>(0)
    /// The thread running one of the connection's callbacks on its queue, 0 when none, so
    /// a synchronous wait on that very queue can be refused instead of deadlocking
    /// (``RequestChannel``). Not `DispatchQueue.setSpecific`: libdispatch frees a disposed
    /// queue's specific values on a global (non-overcommit) queue, and on Linux the first
    /// block run there starts a pool monitor that wakes the process every second for the
    /// rest of its life (docs/daemon.md, "Idle cost"); connections come and go.
    private let callbackThread = Atomic<UInt>(0)
    /// The connection's reader thread while it runs (``Options/Reading/readerThread``), 0
    /// otherwise: a synchronous wait there would never see its reply either. A slot of its
    /// own, since that thread and the queue run callbacks at the same time.
    private let readerThread = Atomic<UInt>(0)
    /// Signalled when a paused reader thread may go on: the output drained, or the
    /// connection closed.
    private let outputDrained = DispatchSemaphore(value: 0)

    private enum Phase { case created, started, closed }
    private enum WriteSourceState { case none, inactive, running, suspended }

    private struct State {
        var descriptor: Int32
        var phase: Phase = .created
        var decoder: FrameDecoder
        var output: [UInt8] = []
        var outputIndex = 0
        var readSource: (any DispatchSourceRead)?
        var writeSource: (any DispatchSourceWrite)?
        var writeSourceState: WriteSourceState = .none
        /// Whether reading waits for output to drain
        /// (``Options/pauseReadingAboveBufferedOutput``): the read source is suspended, or
        /// the reader thread hands on nothing more.
        var readingPaused = false
        /// Whether the reader thread waits on ``outputDrained`` (signalled once for each
        /// wait, by whoever clears this).
        var readerWaitsForDrain = false
        /// The close callback and its reason, kept for the reader thread to queue once it
        /// has handed on its last frame (``Options/Reading/readerThread``).
        var closeAfterReader: (callback: @Sendable (CloseReason) -> Void, reason: CloseReason)?
        /// Whether the reader thread was started (it then queues `onClose` itself).
        var readerStarted = false
        /// The errno of a write that found the peer gone while the reader thread runs: the
        /// thread reads what the peer sent before, then closes with this write failure.
        var peerGoneOnWrite: Int32?
        var timer: (any DispatchSourceTimer)?
        var receivedFrame = false
        /// The ``Options/partialFrameTimeout`` timer, made when a frame is first begun.
        var partialTimer: (any DispatchSourceTimer)?
        /// When the frame now in the decoder began to arrive; nil when none is begun.
        var partialSince: DispatchTime?
        /// The most bytes the decoder held: a connection that held many gives memory back
        /// when it closes (``TransportMemory``).
        var mostBuffered = 0
        /// Sources whose cancel handler has not run; the descriptor is closed when the last
        /// one has (closing it under a live source is undefined in libdispatch).
        var liveSources = 0
        var onFrame: (@Sendable (Frame) -> Void)?
        var onClose: (@Sendable (CloseReason) -> Void)?
        var closeReason: CloseReason?
        /// Internal observers (the server's bookkeeping and its close lines), called before
        /// `onClose` is queued, so a close is logged before its `onClose` runs.
        var closeObservers: [@Sendable (CloseReason) -> Void] = []

        var bufferedOutput: Int { output.count - outputIndex }
    }

    /// Takes ownership of `descriptor`, a connected Unix stream socket (made non-blocking
    /// and close-on-exec here). Nothing is read until ``start(onFrame:onClose:)``.
    ///
    /// - Parameters:
    ///   - peer: the peer's credentials, when known (a server reads them at accept).
    ///   - targetQueue: where the connection's serial queue runs. By default it runs on
    ///     libdispatch's overcommit pool like any serial queue, never on a global
    ///     (non-overcommit) queue: on Linux the first block run there starts a pool monitor
    ///     that wakes the process every second for the rest of its life (docs/daemon.md,
    ///     "Idle cost").
    ///   - log: where to log closes; nil logs nothing.
    public convenience init(
        adopting descriptor: Int32,
        peer: PeerCredentials? = nil,
        options: Options = .server,
        targetQueue: DispatchQueue? = nil,
        log: TransportLog? = nil
    ) {
        self.init(adopting: descriptor, peer: peer, options: options, targetQueue: targetQueue, log: log, startReader: Self.startThread)
    }

    /// As the public initializer, with the function that starts the reader thread (a test
    /// makes it fail).
    init(
        adopting descriptor: Int32,
        peer: PeerCredentials?,
        options: Options,
        targetQueue: DispatchQueue?,
        log: TransportLog?,
        startReader: @escaping @Sendable (@escaping @Sendable () -> Void) -> Int32
    ) {
        self.startReader = startReader
        UnixSocket.setNonBlocking(descriptor)
        UnixSocket.setCloseOnExec(descriptor)
        let identifier = Self.counter.wrappingAdd(1, ordering: .relaxed).newValue
        self.identifier = identifier
        self.peer = peer
        self.options = options
        self.name = peer.map { "connection \(identifier) (\($0))" } ?? "connection \(identifier)"
        self.log = log
        let queue = targetQueue.map { DispatchQueue(label: "bgtaskd.connection.\(identifier)", target: $0) }
            ?? DispatchQueue(label: "bgtaskd.connection.\(identifier)")
        self.queue = queue
        self.state = Mutex(State(descriptor: descriptor, decoder: FrameDecoder(maximumPayloadLength: options.maximumPayloadLength)))
    }

    deinit {
        // Only reachable unstarted or fully closed (sources hold the connection while open).
        state.withLock { state in
            if state.phase == .created, state.descriptor >= 0 { Glibc.close(state.descriptor) }
        }
    }

    /// Whether the connection has closed (for any reason).
    public var isClosed: Bool { state.withLock { $0.phase == .closed } }

    /// Why the connection closed, once it has.
    public var closeReason: CloseReason? { state.withLock { $0.closeReason } }

    /// Bytes sent but not yet taken by the socket.
    public var bufferedOutputCount: Int { state.withLock { $0.bufferedOutput } }

    /// Whether reading is paused until waiting output drains
    /// (``Options/pauseReadingAboveBufferedOutput``).
    public var isReadingPaused: Bool { state.withLock { $0.readingPaused } }

    /// Starts reading: `onFrame` is called for every frame (on the connection's queue, or
    /// its reader thread: ``Options/Reading``), `onClose` once when the connection ends, on
    /// the queue, after the last `onFrame`. Call once; later calls are ignored. A
    /// connection closed before it started calls `onClose` at once (on its queue); one
    /// whose reader thread cannot start closes with ``CloseReason/readerUnavailable(errno:)``.
    public func start(onFrame: @escaping @Sendable (Frame) -> Void, onClose: @escaping @Sendable (CloseReason) -> Void) {
        var readerFailure: CloseReason?
        let alreadyClosed = state.withLock { state -> CloseReason? in
            switch state.phase {
            case .started: return nil
            case .closed: return state.closeReason
            case .created: break
            }
            state.phase = .started
            state.onFrame = onFrame
            state.onClose = onClose

            let readSource: (any DispatchSourceRead)?
            switch options.reading {
            case .dispatchSource:
                let source = DispatchSource.makeReadSource(fileDescriptor: state.descriptor, queue: queue)
                source.setEventHandler { self.onQueue { self.handleReadable() } }
                source.setCancelHandler { self.onQueue { self.sourceCancelled() } }
                readSource = source
            case .readerThread:
                readSource = nil
            }
            let writeSource = DispatchSource.makeWriteSource(fileDescriptor: state.descriptor, queue: queue)
            writeSource.setEventHandler { self.onQueue { self.handleWritable() } }
            writeSource.setCancelHandler { self.onQueue { self.sourceCancelled() } }
            state.readSource = readSource
            state.writeSource = writeSource
            state.writeSourceState = .inactive
            state.liveSources = 2
            if state.bufferedOutput > 0 {
                Self.resumeWriting(&state)
                Self.pauseReadingIfBehind(&state, mark: options.pauseReadingAboveBufferedOutput)
            }
            if let timeout = options.firstFrameTimeout ?? options.idleTimeout {
                let timer = DispatchSource.makeTimerSource(queue: queue)
                timer.setEventHandler { self.onQueue { self.handleTimer() } }
                timer.schedule(deadline: .now() + timeout.dispatchInterval, leeway: .milliseconds(10))
                state.timer = timer
                timer.activate()
            }
            if let readSource {
                readSource.activate()
            } else {
                // The thread's recv blocks (sends never do: MSG_DONTWAIT); it counts as
                // the read source among the live sources, so the descriptor stays open
                // until it has returned.
                UnixSocket.setBlocking(state.descriptor)
                let descriptor = state.descriptor
                let code = startReader { self.readOnThread(descriptor) }
                if code == 0 {
                    state.readerStarted = true
                } else {
                    state.liveSources -= 1
                    readerFailure = .readerUnavailable(errno: code)
                }
            }
            return nil
        }
        if let alreadyClosed { queue.async { self.onQueue { onClose(alreadyClosed) } } }
        if let readerFailure { finish(readerFailure) }
    }

    /// Queues one frame carrying `payload`, writing at once what the socket takes. Never
    /// blocks; callable from any thread.
    ///
    /// - Throws: ``SendError/frame(_:)`` for a payload over the limit (the connection stays
    ///   open), ``SendError/closed(_:)`` when the connection is closed, including when this
    ///   frame would push the waiting output over ``Options/maximumBufferedOutput`` or the
    ///   write fails (the connection is then closed by this call, except that a connection
    ///   read by its own thread whose peer is gone closes once that thread has handed on
    ///   what the peer sent before it went: ``peerGoneGrace``).
    public func send(_ payload: Data) throws(SendError) {
        let bytes: Data
        do { bytes = try FrameEncoder.encode(payload) } catch { throw .frame(error) }
        let limit = max(options.maximumBufferedOutput, FrameFormat.maximumPayloadLength + FrameFormat.headerLength)
        enum Outcome {
            case queued
            /// The connection is (or must now be) closed, for this reason.
            case close(CloseReason)
            /// The peer is gone; the reader thread closes the connection once it has read
            /// what is left (`firstTime`: this send found it out).
            case readerDrains(CloseReason, firstTime: Bool)
        }
        let outcome = state.withLock { state -> Outcome in
            if state.phase == .closed { return .close(state.closeReason ?? .closedLocally("closed")) }
            if let code = state.peerGoneOnWrite { return .readerDrains(.writeFailed(errno: code), firstTime: false) }
            var offset = 0
            if state.bufferedOutput == 0 {
                let result = bytes.withUnsafeBytes { Self.write(state.descriptor, $0) }
                switch result {
                case .written(let count): offset = count
                case .failed(let code):
                    // A server that answered and closed (a refusal at its connection cap)
                    // before this request went out: its answer is still in the socket, and
                    // closing now would drop it unread. Only a reader thread can wait for
                    // it; a read source's connection closes as before.
                    guard code == EPIPE || code == ECONNRESET, state.phase == .started, state.readerStarted else {
                        return .close(.writeFailed(errno: code))
                    }
                    state.peerGoneOnWrite = code
                    return .readerDrains(.writeFailed(errno: code), firstTime: true)
                }
            }
            guard offset < bytes.count else { return .queued }
            let waiting = state.bufferedOutput + bytes.count - offset
            if waiting > limit { return .close(.outputLimitExceeded(buffered: waiting, limit: limit)) }
            state.output.append(contentsOf: bytes[(bytes.startIndex + offset)...])
            if state.phase == .started {
                Self.resumeWriting(&state)
                Self.pauseReadingIfBehind(&state, mark: options.pauseReadingAboveBufferedOutput)
            }
            return .queued
        }
        switch outcome {
        case .queued:
            return
        case .close(let failure):
            finish(failure)
            throw .closed(closeReason ?? failure)
        case .readerDrains(let failure, let firstTime):
            // The peer is gone, so the thread meets the end of the stream at once; a peer
            // that only stopped reading (shutdown(SHUT_RD)) and keeps the connection open
            // must not keep it open here: closed after a grace in any case.
            if firstTime {
                queue.asyncAfter(deadline: .now() + Self.peerGoneGrace.dispatchInterval) { self.finish(failure) }
            }
            throw .closed(failure)
        }
    }

    /// How long a reader thread has, after a write found its peer gone, to hand on what the
    /// peer sent before it went; the connection is closed then if the end of the stream
    /// has not come (it comes at once from a peer that closed).
    static let peerGoneGrace: Duration = .seconds(1)

    /// Closes the connection (idempotent): pending output is dropped, `onClose` is called
    /// with ``CloseReason/closedLocally(_:)`` unless the connection had already closed.
    public func close(reason: String = "closed") {
        finish(.closedLocally(reason))
    }

    /// Closes the connection as ``close(reason:)`` does, for a fault of the peer's
    /// (``CloseReason/refusedPeer(_:)``): a server logs it at warning level through the
    /// throttle of its faulty closes, so a client sending malformed messages in a loop
    /// cannot flood the log with a line each.
    public func close(refusingPeer reason: String) {
        finish(.refusedPeer(reason))
    }

    // MARK: Events (on the connection's queue)

    private static let readChunk = 64 * 1024
    /// The reader thread's stack: 8 MiB of address space, as libdispatch's workers and
    /// glibc's default have, since `onFrame` may parse what the peer sent (nesting up to
    /// 512 levels); untouched pages cost nothing.
    private static let readerStackSize = 8 << 20
    /// The reader thread's buffer, held while the thread lives (a frame of 1 MiB takes
    /// 64 reads).
    private static let readerChunk = 16 * 1024

    /// Starts a detached thread running `body`; 0, or the errno of `pthread_create`.
    private static func startThread(_ body: @escaping @Sendable () -> Void) -> Int32 {
        final class Body {
            let run: @Sendable () -> Void
            init(_ run: @escaping @Sendable () -> Void) { self.run = run }
        }
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        let code = clinux_start_thread({ raw in
            guard let raw else { return nil }
            Unmanaged<Body>.fromOpaque(raw).takeRetainedValue().run()
            return nil
        }, context, readerStackSize)
        if code != 0 { Unmanaged<Body>.fromOpaque(context).release() }
        return code
    }
    /// Bytes read per readiness event before yielding the queue to others: one peer that
    /// streams without pause cannot starve the rest.
    private static let readBudget = 16 * readChunk

    /// One step of ``handleReadable()``, decided under the lock and carried out outside it.
    private enum ReadStep {
        /// Hand this frame to the callback, then go on.
        case deliver(Frame, (@Sendable (Frame) -> Void)?)
        /// Bytes were read; decode them.
        case readMore
        /// Nothing more now: the socket is empty, the read budget spent, reading paused, or
        /// the connection closed.
        case stop
        /// The reader thread waits for the output to drain.
        case waitForOutput
        /// The connection ends for this reason.
        case end(CloseReason)
    }

    /// Hands on the frames already decoded, one at a time, and reads more only when none is
    /// left: a frame is delivered only while reading is not paused, so the replies a peer
    /// leaves unread stop its requests from being handled; the rest wait in the decoder and
    /// the socket.
    private func handleReadable() {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.readChunk, alignment: 1)
        defer { buffer.deallocate() }
        var budget = Self.readBudget
        while true {
            let step = state.withLock { state -> ReadStep in
                guard state.phase == .started, !state.readingPaused else { return .stop }
                if let step = decodedFrame(&state) { return step }
                // Level-triggered: bytes left in the socket when the budget is spent make
                // the source fire again, after the other queues had their turn.
                guard budget > 0 else { return .stop }
                while true {
                    let count = read(state.descriptor, buffer.baseAddress, buffer.count)
                    if count > 0 {
                        budget -= count
                        state.decoder.append(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                        trackPartialFrame(&state)
                        return .readMore
                    }
                    if count == 0 {
                        let partial = state.decoder.bufferedByteCount
                        return .end(partial > 0 ? .truncatedFrame(received: partial) : .peerClosed)
                    }
                    let code = errno
                    if code == EINTR { continue }
                    if code == EAGAIN || code == EWOULDBLOCK { return .stop }
                    return .end(.readFailed(errno: code))
                }
            }
            switch step {
            case .deliver(let frame, let onFrame): onFrame?(frame)
            case .readMore: continue
            case .stop, .waitForOutput: return
            case .end(let reason):
                finish(reason)
                return
            }
        }
    }

    /// The reader thread's loop (``Options/Reading/readerThread``): hands on each decoded
    /// frame, in order, on this thread, and blocks in `recv` when none is left, until the
    /// peer closes, a frame is refused, or ``finish(_:)`` shuts the socket down to wake it.
    private func readOnThread(_ descriptor: Int32) {
        readerThread.store(UInt(pthread_self()), ordering: .relaxed)
        // Named for ps and perf (a new thread takes its creator's name otherwise).
        _ = clinux_set_thread_name("bgtask-reader")
        defer {
            readerThread.store(0, ordering: .relaxed)
            let close = state.withLock { state in
                defer { state.closeAfterReader = nil }
                return state.closeAfterReader
            }
            sourceCancelled()
            if let close { queue.async { self.onQueue { close.callback(close.reason) } } }
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.readerChunk, alignment: 1)
        defer { buffer.deallocate() }
        while true {
            let step = state.withLock { state -> ReadStep in
                guard state.phase == .started else { return .stop }
                // The peer does not read what it was sent: its next request waits (in the
                // decoder and the socket) until the output drains.
                if state.readingPaused {
                    state.readerWaitsForDrain = true
                    return .waitForOutput
                }
                if let step = decodedFrame(&state) { return step }
                return .readMore
            }
            switch step {
            case .deliver(let frame, let onFrame):
                onFrame?(frame)
                continue
            case .waitForOutput:
                outputDrained.wait()
                continue
            case .stop:
                return
            case .end(let reason):
                finish(reason)
                return
            case .readMore:
                break
            }
            // Outside the lock: the descriptor stays open while this thread runs.
            let count = recv(descriptor, buffer.baseAddress, buffer.count, 0)
            if count > 0 {
                state.withLock { state in
                    state.decoder.append(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                    trackPartialFrame(&state)
                }
                continue
            }
            let code = errno
            if count < 0, code == EINTR { continue }
            if count < 0, code == EAGAIN || code == EWOULDBLOCK {
                // Only if someone made the socket non-blocking again: wait for bytes.
                var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                _ = poll(&waiting, 1, -1)
                continue
            }
            // The end of the stream, or a failure; after a local close (the shutdown that
            // woke this thread) there is nothing to report.
            let reason = state.withLock { state -> CloseReason? in
                guard state.phase == .started else { return nil }
                // What went wrong first: a write found the peer gone before this read did.
                if let written = state.peerGoneOnWrite { return .writeFailed(errno: written) }
                if count < 0 { return .readFailed(errno: code) }
                let partial = state.decoder.bufferedByteCount
                return partial > 0 ? .truncatedFrame(received: partial) : .peerClosed
            }
            if let reason { finish(reason) }
            return
        }
    }

    /// The next frame already decoded, to hand on, or the end of a connection whose bytes
    /// are no frame; nil when the decoder needs more bytes.
    private func decodedFrame(_ state: inout State) -> ReadStep? {
        do throws(FrameError) {
            guard let frame = try state.decoder.next() else { return nil }
            noteFrameReceived(&state)
            return .deliver(frame, state.onFrame)
        } catch {
            return .end(.malformedFrame(error))
        }
    }

    /// A frame arrived: the first-frame timer is done with, the idle timer starts again, and
    /// the bytes left (if any) are the next frame's, begun now.
    private func noteFrameReceived(_ state: inout State) {
        state.receivedFrame = true
        state.partialSince = nil
        trackPartialFrame(&state)
        if let idle = options.idleTimeout, let timer = state.timer {
            timer.schedule(deadline: .now() + idle.dispatchInterval, leeway: .milliseconds(10))
        } else if let timer = state.timer {
            timer.cancel()
            state.timer = nil
        }
    }

    private func handleWritable() {
        var resumedReading = false
        let failure = state.withLock { state -> CloseReason? in
            guard state.phase == .started else { return nil }
            defer {
                // Drained to half the pause mark: read again, and hand on what was decoded
                // before the pause (the source fires only for new bytes).
                if state.readingPaused, state.phase == .started,
                   state.bufferedOutput <= (options.pauseReadingAboveBufferedOutput ?? 0) / 2 {
                    state.readingPaused = false
                    switch options.reading {
                    case .dispatchSource:
                        state.readSource?.resume()
                        resumedReading = true
                    case .readerThread:
                        if state.readerWaitsForDrain {
                            state.readerWaitsForDrain = false
                            outputDrained.signal()
                        }
                    }
                }
            }
            let result = state.output.withUnsafeBytes { raw in
                Self.write(state.descriptor, UnsafeRawBufferPointer(rebasing: raw[state.outputIndex...]))
            }
            switch result {
            case .failed(let code):
                return .writeFailed(errno: code)
            case .written(let written):
                state.outputIndex += written
                if state.bufferedOutput == 0 {
                    state.output = []
                    state.outputIndex = 0
                    if state.writeSourceState == .running {
                        state.writeSource?.suspend()
                        state.writeSourceState = .suspended
                    }
                } else if state.outputIndex >= 64 * 1024, state.outputIndex * 2 >= state.output.count {
                    state.output.removeFirst(state.outputIndex)
                    state.outputIndex = 0
                }
                return nil
            }
        }
        if let failure {
            finish(failure)
        } else if resumedReading {
            handleReadable()
        }
    }

    /// Starts the partial-frame clock when the decoder holds bytes of a frame not begun
    /// before (``Options/partialFrameTimeout``); stops it when it holds none.
    private func trackPartialFrame(_ state: inout State) {
        // Closed meanwhile (a reader thread appending what it read as another thread
        // finished the connection): a timer made now would never be cancelled, and its
        // handler would keep the connection alive.
        guard state.phase == .started, let timeout = options.partialFrameTimeout else { return }
        let buffered = state.decoder.bufferedByteCount
        state.mostBuffered = max(state.mostBuffered, buffered)
        guard buffered > 0 else {
            state.partialSince = nil
            return
        }
        guard state.partialSince == nil else { return }
        let now = DispatchTime.now()
        state.partialSince = now
        if state.partialTimer == nil {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.setEventHandler { self.onQueue { self.handlePartialFrameTimer() } }
            timer.schedule(deadline: now + timeout.dispatchInterval, leeway: .milliseconds(50))
            state.partialTimer = timer
            timer.activate()
        } else {
            state.partialTimer?.schedule(deadline: now + timeout.dispatchInterval, leeway: .milliseconds(50))
        }
    }

    private func handlePartialFrameTimer() {
        let reason = state.withLock { state -> CloseReason? in
            guard state.phase == .started, let timeout = options.partialFrameTimeout, let since = state.partialSince else { return nil }
            // Not reading (replies wait unread): the frame is not the peer's to finish yet.
            if state.readingPaused {
                state.partialSince = .now()
                state.partialTimer?.schedule(deadline: .now() + timeout.dispatchInterval, leeway: .milliseconds(50))
                return nil
            }
            let deadline = since + timeout.dispatchInterval
            guard DispatchTime.now() >= deadline else {
                state.partialTimer?.schedule(deadline: deadline, leeway: .milliseconds(50))
                return nil
            }
            return .partialFrameTimeout(timeout)
        }
        if let reason { finish(reason) }
    }

    private func handleTimer() {
        let reason = state.withLock { state -> CloseReason? in
            guard state.phase == .started else { return nil }
            // Paused, this side is not reading: the peer's frames wait unread, so it is not
            // silent. The timeout starts again from now.
            if state.readingPaused, let timeout = options.idleTimeout ?? options.firstFrameTimeout, let timer = state.timer {
                timer.schedule(deadline: .now() + timeout.dispatchInterval, leeway: .milliseconds(10))
                return nil
            }
            if !state.receivedFrame, let timeout = options.firstFrameTimeout { return .firstFrameTimeout(timeout) }
            if let idle = options.idleTimeout { return .idleTimeout(idle) }
            return nil
        }
        if let reason { finish(reason) }
    }

    private func sourceCancelled() {
        state.withLock { state in
            state.liveSources -= 1
            if state.liveSources == 0, state.descriptor >= 0 {
                Glibc.close(state.descriptor)
                state.descriptor = -1
            }
        }
    }

    // MARK: Closing

    /// Ends the connection once: records the reason, stops the sources (the descriptor is
    /// closed when both have stopped), logs, and calls `onClose` on the queue.
    private func finish(_ reason: CloseReason) {
        var observers: [@Sendable (CloseReason) -> Void] = []
        let onClose = state.withLock { state -> (@Sendable (CloseReason) -> Void)?? in
            guard state.phase != .closed else { return .none }
            let wasStarted = state.phase == .started
            state.phase = .closed
            state.closeReason = reason
            state.output = []
            state.outputIndex = 0
            state.timer?.cancel()
            state.timer = nil
            state.partialTimer?.cancel()
            state.partialTimer = nil
            // A connection that held much gives it back: freed, it stays in the allocator's
            // arenas (a flood of half frames kept 1.8 GB after its clients left).
            if options.partialFrameTimeout != nil, max(state.mostBuffered, state.decoder.bufferedByteCount) >= TransportMemory.releaseThreshold {
                TransportMemory.releaseSoon()
            }
            if wasStarted {
                // A reader thread blocked in recv wakes to the shutdown and leaves; the
                // descriptor is closed once it has (it is one of the live sources).
                if state.readerStarted, state.descriptor >= 0 { shutdown(state.descriptor, Int32(SHUT_RDWR)) }
                state.readSource?.cancel()
                // A suspended source runs its cancel handler only once resumed; a paused
                // reader thread must wake to leave.
                if state.readingPaused { state.readSource?.resume() }
                state.readingPaused = false
                if state.readerWaitsForDrain {
                    state.readerWaitsForDrain = false
                    outputDrained.signal()
                }
                if let writeSource = state.writeSource {
                    writeSource.cancel()
                    // A cancel handler only runs once the source runs.
                    switch state.writeSourceState {
                    case .inactive: writeSource.activate()
                    case .suspended: writeSource.resume()
                    case .running, .none: break
                    }
                }
            } else if state.descriptor >= 0 {
                Glibc.close(state.descriptor)
                state.descriptor = -1
            }
            state.readSource = nil
            state.writeSource = nil
            state.writeSourceState = .none
            var onClose = state.onClose
            if wasStarted, state.readerStarted, let callback = onClose {
                // Called once the reader thread has handed on its last frame.
                state.closeAfterReader = (callback, reason)
                onClose = nil
            }
            observers = state.closeObservers
            state.onClose = nil
            state.onFrame = nil
            state.closeObservers = []
            return .some(onClose)
        }
        guard case .some(let callback) = onClose else { return }
        log?(reason.logLevel, "\(name): closed: \(reason)")
        for observer in observers { observer(reason) }
        if let callback { queue.async { self.onQueue { callback(reason) } } }
    }

    /// Adds `observer`, called once with the reason (on any thread, no lock held) when the
    /// connection closes; at once if it already has.
    func addCloseObserver(_ observer: @escaping @Sendable (CloseReason) -> Void) {
        let closed = state.withLock { state -> CloseReason? in
            if state.phase == .closed { return state.closeReason ?? .closedLocally("closed") }
            state.closeObservers.append(observer)
            return nil
        }
        if let closed { observer(closed) }
    }

    // MARK: Helpers

    /// Pauses reading when more output than `mark` waits (once: the flag keeps suspends
    /// and resumes paired): suspends the read source, or tells the reader thread to hand
    /// on nothing more. The connection must have started.
    private static func pauseReadingIfBehind(_ state: inout State, mark: Int?) {
        guard let mark, state.bufferedOutput > mark, !state.readingPaused else { return }
        state.readSource?.suspend()
        state.readingPaused = true
    }

    private static func resumeWriting(_ state: inout State) {
        switch state.writeSourceState {
        case .inactive:
            state.writeSource?.activate()
            state.writeSourceState = .running
        case .suspended:
            state.writeSource?.resume()
            state.writeSourceState = .running
        case .running, .none:
            break
        }
    }

    private enum WriteOutcome {
        case written(Int)
        case failed(Int32)
    }

    /// Writes as much of `bytes` as the socket takes now: the count, or the errno of a
    /// real failure (`EAGAIN` is not one: it writes 0).
    private static func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> WriteOutcome {
        var offset = 0
        while offset < bytes.count {
            let count = Glibc.send(descriptor, bytes.baseAddress! + offset, bytes.count - offset, UnixSocket.noSignal | UnixSocket.dontWait)
            if count >= 0 {
                offset += count
                continue
            }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { break }
            return .failed(code)
        }
        return .written(offset)
    }

    /// Whether the caller runs on this connection's queue or its reader thread (a
    /// synchronous wait there would never see its reply).
    var isCurrentQueue: Bool {
        let current = UInt(pthread_self())
        return callbackThread.load(ordering: .relaxed) == current || readerThread.load(ordering: .relaxed) == current
    }

    /// Runs `body`, one of the connection's callbacks, on its queue, marked as running
    /// there for ``isCurrentQueue``. Only the thread that set the mark puts back what was
    /// there before (so a callback inside another stays marked), so no other thread can
    /// ever read its own id there by mistake.
    func onQueue<Result>(_ body: () throws -> Result) rethrows -> Result {
        let previous = callbackThread.exchange(UInt(pthread_self()), ordering: .relaxed)
        defer { callbackThread.store(previous, ordering: .relaxed) }
        return try body()
    }
}

/// Memory given back after connections that held much of it: glibc keeps freed memory in
/// its arenas (a reader thread's arena is its own), so a flood of large frames left the
/// daemon's resident size near its peak after the clients left. One release runs a second
/// after a close asks for it; the closes of that second share it. Only a server's
/// connections ask (those with a ``FrameConnection/Options/partialFrameTimeout``).
enum TransportMemory {
    /// A connection whose decoder held this much asks for a release when it closes: 256 KiB.
    static let releaseThreshold = 256 * 1_024
    private static let pending = Atomic<Bool>(false)
    /// A serial queue of its own: a block on a global queue would start libdispatch's
    /// worker-pool monitor, a once-a-second timer for the rest of the process's life
    /// (docs/daemon.md, "Idle cost").
    private static let queue = DispatchQueue(label: "bgtask.transport.memory", qos: .utility)

    /// Releases free memory a second from now, unless a release is already due.
    static func releaseSoon() {
        guard pending.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        queue.asyncAfter(deadline: .now() + 1) {
            pending.store(false, ordering: .releasing)
            _ = clinux_release_free_memory()
        }
    }
}
