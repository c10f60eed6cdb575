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
            var chunk: [UInt8] = []
            var index = 0
            var ended = false

            /// The next byte, or `nil` at the end of the file (or when the other end of a
            /// pipe or socket closed). Throws `CancellationError` when the task was
            /// cancelled before a read, and the read's error (a `POSIXError`) otherwise.
            public mutating func next() async throws -> UInt8? {
                if index < chunk.count {
                    defer { index += 1 }
                    return chunk[index]
                }
                guard !ended else { return nil }
                try Task.checkCancellation()
                chunk = try await FileHandle.readChunk(from: handle)
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

    /// One `read(2)` of up to `chunkSize` bytes on a thread of Dispatch's pool, so that a read
    /// that waits (a pipe, a terminal, a socket) never holds a thread of Swift's cooperative
    /// pool. Empty at the end of the file.
    static func readChunk(from handle: FileHandle) async throws -> [UInt8] {
        let descriptor = handle.fileDescriptor
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                var buffer = [UInt8](repeating: 0, count: chunkSize)
                while true {
                    let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                    if count >= 0 {
                        buffer.removeSubrange(count...)
                        continuation.resume(returning: buffer)
                        return
                    }
                    switch errno {
                    case EINTR:
                        continue
                    case EAGAIN, EWOULDBLOCK:
                        // A descriptor in non-blocking mode (a socket an app set so): wait
                        // until it can be read, as a blocking read would have.
                        var readable = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                        _ = poll(&readable, 1, -1)
                    default:
                        continuation.resume(throwing: POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO))
                        return
                    }
                }
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

    /// Opens a file for reading on a thread of Dispatch's pool: opening a FIFO waits for a
    /// writer, and must not hold a thread of the cooperative pool meanwhile.
    static func openForReading(_ url: URL) async throws -> FileHandle {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try FileHandle(forReadingFrom: url) })
            }
        }
    }
}

// MARK: URLSession

extension URLSession {
    /// The body of a response, as its bytes arrive (Apple: `URLSession.AsyncBytes`). Single
    /// pass: iterators made from one value share its bytes. Dropping every copy of the value
    /// and its iterators before the end cancels the transfer.
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
                        guard transfer.transfer.finishedWhole else { throw URLError(.cancelled) }
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
    /// authentication challenges and redirections and told the metrics, as on iOS; it is not
    /// given the response or the data.
    @_disfavoredOverload
    public func bytes(from url: URL, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> (AsyncBytes, URLResponse) {
        try await bytes(for: URLRequest(url: url), delegate: delegate)
    }

    /// Sends `request` and returns its response as soon as it arrives, with the body's bytes
    /// to read as they come (Apple: `bytes(for:delegate:)`, iOS 15). Throws the transfer's
    /// error, and `URLError(.cancelled)` when the calling task is cancelled first.
    @_disfavoredOverload
    public func bytes(for request: URLRequest, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> (AsyncBytes, URLResponse) {
        let transfer = StreamedTransfer(taskDelegate: delegate ?? self.delegate as? URLSessionTaskDelegate)
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
/// delegate queue calls it.
///
/// `@unchecked Sendable`: its mutable state, `state`, is read and written only with `lock`
/// held (an `NSLock`: this module takes no `Mutex`, see WeaklyKeyedTable); `chunks` and
/// `chunkSink` are Sendable; `taskDelegate` is the app's object, called only from the
/// session's delegate queue, as a session calls a delegate.
final class StreamedTransfer: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    struct State {
        var response: CheckedContinuation<URLResponse, any Error>?
        var finishedWhole = false
    }

    let chunks: AsyncThrowingStream<Data, any Error>
    private let chunkSink: AsyncThrowingStream<Data, any Error>.Continuation
    private let lock = NSLock()
    private var state = State()
    private let taskDelegate: (any URLSessionTaskDelegate)?

    init(taskDelegate: (any URLSessionTaskDelegate)?) {
        (chunks, chunkSink) = AsyncThrowingStream.makeStream(of: Data.self)
        self.taskDelegate = taskDelegate
    }

    /// Whether the body arrived whole (the task completed without an error).
    var finishedWhole: Bool { lock.withLock { state.finishedWhole } }

    /// Cancels `task` when the task iterating the bytes is cancelled (the stream then ends
    /// at once, and the iterator throws `URLError(.cancelled)`).
    func cancelWhenAbandoned(_ task: URLSessionDataTask) {
        chunkSink.onTermination = { [weak task] termination in
            if case .cancelled = termination { task?.cancel() }
        }
    }

    func awaitResponse(_ continuation: CheckedContinuation<URLResponse, any Error>) {
        lock.withLock { state.response = continuation }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let waiting = lock.withLock {
            defer { state.response = nil }
            return state.response
        }
        waiting?.resume(returning: response)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        chunkSink.yield(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let waiting = lock.withLock {
            defer { state.response = nil }
            state.finishedWhole = error == nil
            return state.response
        }
        if let error {
            waiting?.resume(throwing: error)
            chunkSink.finish(throwing: error)
        } else {
            // A task that completes without a response (no body at all) still answers.
            waiting?.resume(returning: task.response ?? URLResponse(url: task.originalRequest?.url ?? URL(fileURLWithPath: "/"),
                                                                      mimeType: nil, expectedContentLength: 0, textEncodingName: nil))
            chunkSink.finish()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        guard let taskDelegate else { return completionHandler(.performDefaultHandling, nil) }
        taskDelegate.urlSession(session, task: task, didReceive: challenge, completionHandler: completionHandler)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        guard let taskDelegate else { return completionHandler(request) }
        taskDelegate.urlSession(session, task: task, willPerformHTTPRedirection: response, newRequest: request,
                                completionHandler: completionHandler)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        taskDelegate?.urlSession(session, task: task, didFinishCollecting: metrics)
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
