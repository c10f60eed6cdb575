// The asynchronous byte sources of Apple's Foundation (iOS 15) that swift-corelibs-foundation
// lacks: `URLSession.bytes(from:)` and `bytes(for:)`, `FileHandle.bytes`, `URL.resourceBytes`
// and `URL.lines`. Their text views are AsyncTextSequences.swift; docs/porting.md ("Foundation
// beside the API", streaming bytes) says what differs from iOS. Properties and methods are
// disfavoured overloads, as in URLLoadingAdditions.swift.
import Foundation
import FoundationNetworking
import Glibc

// MARK: FileHandle

extension FileHandle {
    /// The bytes read from a file handle, in order, as they are asked for (Apple:
    /// `FileHandle.AsyncBytes`).
    public struct AsyncBytes: AsyncSequence, Sendable {
        /// A byte.
        public typealias Element = UInt8

        let handle: FileHandle

        /// Reads the handle a chunk at a time, off the caller's thread.
        public struct AsyncIterator: AsyncIteratorProtocol {
            let handle: FileHandle
            /// Made at the first read, not with the iterator: its pipe is two descriptors,
            /// which iterators made and never read held (an outside probe: 400 of them, 800
            /// descriptors).
            var reader: CancellableRead?
            var chunk: [UInt8] = []
            var index = 0
            var ended = false

            /// The next byte, or `nil` at the end of the file (or when the other end of a
            /// pipe or socket closed). Throws `CancellationError` when the task is cancelled,
            /// before a read or while one waits, and the read's error (a `POSIXError`;
            /// `EBADF` for a handle closed before the read) otherwise. A handle closed while
            /// a read waits is not noticed (Linux wakes no `poll` for it) until the task is
            /// cancelled.
            public mutating func next() async throws -> UInt8? {
                if index < chunk.count {
                    defer { index += 1 }
                    return chunk[index]
                }
                guard !ended else { return nil }
                try Task.checkCancellation()
                let descriptor = handle.fileDescriptor
                let reader = self.reader ?? CancellableRead()
                self.reader = reader
                chunk = try await withTaskCancellationHandler {
                    try await withCheckedThrowingContinuation { continuation in
                        // The reader's own queue: a read that waits (a pipe, a terminal, a
                        // socket) holds neither one of Swift's cooperative threads nor one of
                        // Dispatch's shared pool (as few as the processors: two silent pipes
                        // would stall every other user of it).
                        reader.queue.async {
                            continuation.resume(with: Result { try reader.read(descriptor, upTo: FileHandle.chunkSize) })
                        }
                    }
                } onCancel: {
                    reader.cancel()
                }
                index = 0
                guard !chunk.isEmpty else {
                    ended = true
                    return nil
                }
                index = 1
                return chunk[0]
            }
        }

        /// An iterator that reads from the handle's current offset.
        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(handle: handle) }
    }

    /// The handle's bytes from its current offset, as an asynchronous sequence (Apple:
    /// `bytes`, iOS 15); `for try await line in handle.bytes.lines` reads text line by line.
    @_disfavoredOverload
    public var bytes: AsyncBytes { AsyncBytes(handle: self) }

    /// How many bytes one read asks for.
    static let chunkSize = 64 * 1024
}

/// Reads a descriptor so that a read that waits can be stopped: it waits in `poll` on the
/// descriptor and on a pipe of its own, which ``cancel()`` writes to. Without that pipe (no
/// descriptors left) it reads as a plain blocking read, which only new data, the end of the
/// file or a signal ends.
///
/// `@unchecked Sendable`: its two descriptors are set once and closed in `deinit`, which
/// cannot run while a read or a cancel holds it; `write` and `poll` on them are safe from
/// any thread.
final class CancellableRead: @unchecked Sendable {
    private let wake: (read: Int32, write: Int32)?
    /// Where the reads wait: a serial queue of its own, which Dispatch gives a thread of
    /// its own when it blocks.
    let queue = DispatchQueue(label: "FileHandle.AsyncBytes")

    init() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            wake = nil
            return
        }
        // Glibc's module leaves out pipe2: the flags are set after (a program started in
        // between would inherit the two ends, and never use them).
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        wake = (ends[0], ends[1])
    }

    deinit {
        if let wake {
            close(wake.read)
            close(wake.write)
        }
    }

    /// Makes a read that waits, and every later one, throw `CancellationError`.
    func cancel() {
        guard let wake else { return }
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    /// One `read(2)` of up to `count` bytes once the descriptor is readable (or at its end);
    /// empty at the end of the file.
    func read(_ descriptor: Int32, upTo count: Int) throws -> [UInt8] {
        // A closed FileHandle gives -1, which poll would pass over (waiting for ever).
        guard descriptor >= 0 else { throw POSIXError(.EBADF) }
        var buffer = [UInt8](repeating: 0, count: count)
        while true {
            // Wait until the descriptor can be read (or is at its end), or the read is
            // cancelled: so a descriptor in non-blocking mode (a socket an app set so) is
            // waited for as a blocking read would have, and a wait can be ended.
            var waits = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
            if let wake { waits.append(pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)) }
            if poll(&waits, nfds_t(waits.count), -1) < 0 {
                guard errno == EINTR else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                continue
            }
            if waits.count > 1, waits[1].revents != 0 { throw CancellationError() }
            // Closed by the app between the look at the handle and the wait.
            if waits[0].revents & Int16(POLLNVAL) != 0 { throw POSIXError(.EBADF) }
            let got = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if got >= 0 {
                buffer.removeSubrange(got...)
                return buffer
            }
            // Interrupted, or readable no more (another reader took the bytes): wait again.
            guard errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK else {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        }
    }
}

// MARK: URL

extension URL {
    /// The bytes of the resource a URL names, as they arrive (Apple: `URL.AsyncBytes`): a file
    /// URL's file read a chunk at a time, any other URL's body loaded by `URLSession.shared`.
    public struct AsyncBytes: AsyncSequence, Sendable {
        /// A byte.
        public typealias Element = UInt8

        let url: URL

        /// Opens the resource at the first byte asked for.
        public struct AsyncIterator: AsyncIteratorProtocol {
            enum Source {
                case unopened(URL)
                case file(FileHandle.AsyncBytes.AsyncIterator)
                case network(URLSession.AsyncBytes.AsyncIterator)
            }

            var source: Source

            /// The next byte, or `nil` at the end of the resource. Throws what opening the
            /// file or loading the URL throws.
            public mutating func next() async throws -> UInt8? {
                switch source {
                case .unopened(let url):
                    if url.isFileURL {
                        source = .file(try await URL.openForReading(url).bytes.makeAsyncIterator())
                    } else {
                        source = .network(try await URLSession.shared.bytes(from: url).0.makeAsyncIterator())
                    }
                    return try await next()
                case .file(var bytes):
                    defer { source = .file(bytes) }
                    return try await bytes.next()
                case .network(var bytes):
                    defer { source = .network(bytes) }
                    return try await bytes.next()
                }
            }
        }

        /// An iterator over the resource's bytes (each iterator loads the resource anew).
        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(source: .unopened(url)) }
    }

    /// The resource's bytes as they arrive (Apple: `resourceBytes`, iOS 15).
    @_disfavoredOverload
    public var resourceBytes: AsyncBytes { AsyncBytes(url: self) }

    /// The resource's text, line by line as it arrives (Apple: `lines`, iOS 15): breaks are
    /// LF, VT, FF, CR, CR LF, NEL, U+2028 and U+2029; empty lines are skipped.
    @_disfavoredOverload
    public var lines: AsyncLineSequence<AsyncBytes> { resourceBytes.lines }

    /// Opens a file for reading on a queue of its own: opening a FIFO waits for a writer,
    /// and must hold neither a thread of the cooperative pool nor one of Dispatch's shared
    /// pool meanwhile.
    static func openForReading(_ url: URL) async throws -> FileHandle {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue(label: "URL.AsyncBytes.open").async {
                continuation.resume(with: Result { try FileHandle(forReadingFrom: url) })
            }
        }
    }
}

// MARK: URLSession

extension URLSession {
    /// The body of a response, as its bytes arrive (Apple: `URLSession.AsyncBytes`). Single
    /// pass, and one reader at a time: iterators made from one value share its bytes, and two
    /// tasks reading at once stop the program (as two readers of one `AsyncThrowingStream`
    /// do). Dropping every copy of the value and its iterators before the end cancels the
    /// transfer.
    public struct AsyncBytes: AsyncSequence, Sendable {
        /// A byte.
        public typealias Element = UInt8
        /// Apple's name for the iterator.
        public typealias Iterator = AsyncIterator

        /// The data task that carries the transfer (Apple: `task`): its `state`, byte counts
        /// and `cancel()`. It belongs to a session of its own, made with this session's
        /// configuration (see docs/porting.md, "Foundation beside the API", streaming bytes).
        public var task: URLSessionDataTask { transfer.task }

        let transfer: StreamedTransfer.Lease

        /// Produces the body's bytes as they arrive.
        public struct AsyncIterator: AsyncIteratorProtocol {
            let transfer: StreamedTransfer.Lease
            var chunks: AsyncThrowingStream<Data, any Error>.AsyncIterator
            var chunk = Data()
            var index = 0

            /// The next byte, or `nil` once the whole body has arrived. Throws the transfer's
            /// error (a `URLError`), and `URLError(.cancelled)` when the transfer was
            /// cancelled, by `task.cancel()` or by cancelling the task that iterates, so that
            /// a body cut short never reads as whole.
            public mutating func next() async throws -> UInt8? {
                while index >= chunk.count {
                    guard let next = try await chunks.next() else {
                        // The stream also ends at once when the reading task is cancelled,
                        // whatever the transfer does after.
                        guard transfer.transfer.finishedWhole, !Task.isCancelled else { throw URLError(.cancelled) }
                        return nil
                    }
                    chunk = next
                    index = 0
                }
                defer { index += 1 }
                return chunk[chunk.startIndex + index]
            }
        }

        /// An iterator over the bytes not yet read.
        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(transfer: transfer, chunks: transfer.transfer.chunks.makeAsyncIterator())
        }
    }

    /// Loads `url` and returns its response as soon as it arrives, with the body's bytes to
    /// read as they come (Apple: `bytes(from:delegate:)`, iOS 15). `delegate` is asked about
    /// authentication challenges and redirections and told the metrics, on this session's
    /// delegate queue, as on iOS; it is not given the response or the data.
    @_disfavoredOverload
    public func bytes(from url: URL, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> (AsyncBytes, URLResponse) {
        try await bytes(for: URLRequest(url: url), delegate: delegate)
    }

    /// Sends `request` and returns its response as soon as it arrives, with the body's bytes
    /// to read as they come (Apple: `bytes(for:delegate:)`, iOS 15). Throws the transfer's
    /// error, and `URLError(.cancelled)` when the calling task is cancelled first.
    @_disfavoredOverload
    public func bytes(for request: URLRequest, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> (AsyncBytes, URLResponse) {
        let transfer = StreamedTransfer(taskDelegate: delegate ?? self.delegate as? URLSessionTaskDelegate, delegateQueue: delegateQueue)
        // A session of its own, so that the transfer's data comes to it and not to this
        // session's delegate (or into a completion handler's buffer); invalidated at once,
        // it lets the task finish and then releases the transfer.
        let session = URLSession(configuration: configuration, delegate: transfer, delegateQueue: nil)
        let task = session.dataTask(with: request)
        let lease = StreamedTransfer.Lease(transfer: transfer, task: task)
        transfer.cancelWhenAbandoned(task)
        let response = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                transfer.awaitResponse(continuation)
                task.resume()
                session.finishTasksAndInvalidate()
            }
        } onCancel: {
            task.cancel()
        }
        return (AsyncBytes(transfer: lease), response)
    }
}

/// The delegate of one streamed transfer: it hands the response to the caller of
/// `bytes(for:)` and the body to the bytes' iterator, in the order the session's serial
/// delegate queue calls it, and passes the app's task delegate what iOS tells it, on the
/// app's session's delegate queue.
///
/// `@unchecked Sendable`: its mutable state, `state`, is read and written only with `lock`
/// held (an `NSLock`: this module takes no `Mutex`, see WeaklyKeyedTable); `chunks` and
/// `chunkSink` are Sendable; `taskDelegate` is the app's object, called only on
/// `delegateQueue`, as a session calls its delegate.
final class StreamedTransfer: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    struct State {
        /// The caller of `bytes(for:)`, until the response or the failure comes.
        var waiting: CheckedContinuation<URLResponse, any Error>?
        /// The response or the failure, when it came before the caller waited (a task
        /// cancelled before it was resumed completes at once).
        var outcome: Result<URLResponse, any Error>?
        /// The task completed without an error.
        var completed = false
        /// Data came after the reader had gone (the stream was terminated): the body was
        /// not read whole, whatever the task's end.
        var dropped = false
    }

    let chunks: AsyncThrowingStream<Data, any Error>
    private let chunkSink: AsyncThrowingStream<Data, any Error>.Continuation
    private let lock = NSLock()
    private var state = State()
    private let taskDelegate: (any URLSessionTaskDelegate)?
    /// The app's session's delegate queue, where `taskDelegate` is called.
    private let delegateQueue: OperationQueue

    init(taskDelegate: (any URLSessionTaskDelegate)?, delegateQueue: OperationQueue) {
        (chunks, chunkSink) = AsyncThrowingStream.makeStream(of: Data.self)
        self.taskDelegate = taskDelegate
        self.delegateQueue = delegateQueue
    }

    /// Whether the body arrived whole: the task completed without an error and every byte
    /// it delivered was handed on.
    var finishedWhole: Bool { lock.withLock { state.completed && !state.dropped } }

    /// Cancels `task` when the task iterating the bytes is cancelled (the stream then ends
    /// at once, and the iterator throws `URLError(.cancelled)`).
    func cancelWhenAbandoned(_ task: URLSessionDataTask) {
        chunkSink.onTermination = { [weak task] termination in
            if case .cancelled = termination { task?.cancel() }
        }
    }

    /// Resumes `continuation` with the response or the failure: now if it came already.
    func awaitResponse(_ continuation: CheckedContinuation<URLResponse, any Error>) {
        let outcome = lock.withLock {
            if state.outcome == nil { state.waiting = continuation }
            return state.outcome
        }
        if let outcome { continuation.resume(with: outcome) }
    }

    /// Gives the caller `outcome`, or keeps it for a caller not waiting yet; only the first
    /// outcome counts.
    private func answer(_ outcome: Result<URLResponse, any Error>) {
        let waiting = lock.withLock { () -> CheckedContinuation<URLResponse, any Error>? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.waiting = nil }
            return state.waiting
        }
        waiting?.resume(with: outcome)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        answer(.success(response))
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        if case .terminated = chunkSink.yield(data) { lock.withLock { state.dropped = true } }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        lock.withLock { state.completed = error == nil }
        if let error {
            answer(.failure(error))
            chunkSink.finish(throwing: error)
        } else {
            // A task that completes without a response (no body at all) still answers.
            answer(.success(task.response ?? URLResponse(url: task.originalRequest?.url ?? URL(fileURLWithPath: "/"),
                                                         mimeType: nil, expectedContentLength: 0, textEncodingName: nil)))
            chunkSink.finish()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        guard let taskDelegate else { return completionHandler(.performDefaultHandling, nil) }
        delegateQueue.addOperation {
            taskDelegate.urlSession(session, task: task, didReceive: challenge, completionHandler: completionHandler)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        guard let taskDelegate else { return completionHandler(request) }
        delegateQueue.addOperation {
            taskDelegate.urlSession(session, task: task, willPerformHTTPRedirection: response, newRequest: request,
                                    completionHandler: completionHandler)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        guard let taskDelegate else { return }
        delegateQueue.addOperation { taskDelegate.urlSession(session, task: task, didFinishCollecting: metrics) }
    }

    /// What the bytes and their iterators hold: the transfer and its task, cancelled when
    /// the last of them goes (an app that stops reading early does not go on downloading
    /// into memory).
    final class Lease: Sendable {
        let transfer: StreamedTransfer
        let task: URLSessionDataTask

        init(transfer: StreamedTransfer, task: URLSessionDataTask) {
            self.transfer = transfer
            self.task = task
        }

        deinit {
            if task.state == .running || task.state == .suspended { task.cancel() }
        }
    }
}
