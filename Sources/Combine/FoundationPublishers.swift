// The publishers Apple's Foundation adds with Combine: notifications, timers, URL loading,
// decoding and encoding, `share()`, and publishers as async sequences (`values`).
import Foundation
#if canImport(FoundationNetworking)
// Re-exported (and so by BackgroundTasks, which re-exports this module): a networking
// service that imports Foundation and Combine, or a refresh handler that imports Foundation
// and BackgroundTasks, uses URLSession, URLResponse and `dataTaskPublisher` as on iOS, where
// Foundation has them; on Linux they live in FoundationNetworking.
@_exported import FoundationNetworking
#endif

/// A publisher that starts its work when told (Apple: `ConnectablePublisher`).
public protocol ConnectablePublisher<Output, Failure>: Publisher {
    /// Starts; cancel the result to stop.
    func connect() -> any Cancellable
}

extension ConnectablePublisher {
    /// Starts with the first subscriber and stops when the last cancels.
    public func autoconnect() -> Publishers.Autoconnect<Self> { Publishers.Autoconnect(upstream: self) }
}

/// The subscribers of a connection made with the first and cancelled when the last leaves
/// (autoconnect, share). A subscriber counts from before it subscribes, so one that cancels
/// while subscribing, or before the connection is made, is counted out correctly: a
/// connection made when nobody is left is cancelled at once.
/// @unchecked Sendable: every `var` is read and written only under `lock`.
final class ConnectionCount: @unchecked Sendable {
    private let lock = NSLock()
    private var subscribers = 0
    private var connecting = false
    private var connection: (any Cancellable)?

    /// A subscriber joins; returns whether it must make the connection.
    func join() -> Bool {
        lock.lock(); defer { lock.unlock() }
        subscribers += 1
        guard connection == nil, !connecting else { return false }
        connecting = true
        return true
    }

    /// The connection the joining subscriber made.
    func connected(_ made: any Cancellable) {
        lock.lock()
        connecting = false
        guard subscribers > 0 else { lock.unlock(); made.cancel(); return }
        connection = made
        lock.unlock()
    }

    /// A subscriber left (cancelled); the last one cancels the connection.
    func leave() {
        lock.lock()
        subscribers = max(0, subscribers - 1)
        let stop = subscribers == 0 ? connection : nil
        if stop != nil { connection = nil }
        lock.unlock()
        stop?.cancel()
    }
}

extension Publishers {
    /// The publisher of ``ConnectablePublisher/autoconnect()``: connects `upstream` with its
    /// first subscriber, cancels the connection when the last one cancels.
    /// @unchecked Sendable: its state is its ConnectionCount's.
    public final class Autoconnect<Upstream: ConnectablePublisher>: Publisher, @unchecked Sendable {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure
        /// The connectable publisher.
        public let upstream: Upstream
        private let count = ConnectionCount()

        /// Connects `upstream` with its first subscriber.
        public init(upstream: Upstream) { self.upstream = upstream }

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            let count = self.count
            let connect = count.join()
            upstream.handleEvents(receiveCancel: { count.leave() }).subscribe(subscriber)
            if connect { count.connected(upstream.connect()) }
        }
    }

    /// The publisher of ``Publisher/share()`` (Apple's is multicast with autoconnect): one
    /// subscription to the upstream, made with the first subscriber and cancelled when the
    /// last one leaves, whose values every subscriber of the moment gets.
    /// @unchecked Sendable: its state is its subject's and its ConnectionCount's.
    public final class Share<Upstream: Publisher>: Publisher, Equatable, @unchecked Sendable {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure
        /// The shared publisher.
        public let upstream: Upstream
        private let subject = PassthroughSubject<Output, Failure>()
        private let count = ConnectionCount()

        /// Shares `upstream`.
        public init(upstream: Upstream) { self.upstream = upstream }

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            let count = self.count
            let connect = count.join()
            subject.handleEvents(receiveCancel: { count.leave() }).subscribe(subscriber)
            if connect { count.connected(upstream.subscribe(subject)) }
        }

        /// Identity.
        public static func == (lhs: Share, rhs: Share) -> Bool { lhs === rhs }
    }
}

extension Publisher {
    /// One subscription to this publisher, shared by every subscriber.
    public func share() -> Publishers.Share<Self> { Publishers.Share(upstream: self) }

    /// Subscribers subscribe to the subject `createSubject` makes (once, when first
    /// needed), which subscribes to this publisher when connected.
    public func multicast<S: Subject>(_ createSubject: @escaping () -> S) -> Publishers.Multicast<Self, S> where S.Output == Output, S.Failure == Failure {
        Publishers.Multicast(upstream: self, createSubject: createSubject)
    }

    /// Subscribers subscribe to `subject`, which subscribes to this publisher when connected.
    public func multicast<S: Subject>(subject: S) -> Publishers.Multicast<Self, S> where S.Output == Output, S.Failure == Failure {
        Publishers.Multicast(upstream: self, createSubject: { subject })
    }
}

extension Publisher where Failure == Never {
    /// This publisher, started only when connected (or with `autoconnect()`).
    public func makeConnectable() -> Publishers.MakeConnectable<Self> { Publishers.MakeConnectable(upstream: self) }
}

extension Publishers {
    /// The publisher of ``Publisher/multicast(_:)``: its subscribers subscribe to one
    /// subject, which subscribes to the upstream when ``connect()`` is called.
    /// @unchecked Sendable: the subject is kept under `lock` (the first one made is kept);
    /// `upstream` and `createSubject` are constants, used as Apple's Combine uses them, from
    /// whichever thread subscribes or connects.
    public final class Multicast<Upstream: Publisher, SubjectType: Subject>: ConnectablePublisher, @unchecked Sendable
    where SubjectType.Output == Upstream.Output, SubjectType.Failure == Upstream.Failure {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure
        /// The publisher multicast.
        public let upstream: Upstream
        /// What makes the subject.
        public let createSubject: () -> SubjectType
        private let lock = NSLock()
        private var made: SubjectType?

        /// Multicasts `upstream` through the subject `createSubject` makes.
        public init(upstream: Upstream, createSubject: @escaping () -> SubjectType) {
            self.upstream = upstream
            self.createSubject = createSubject
        }

        /// The subject, made by the first to need it (app code: called outside the lock, so a
        /// subject that uses this publisher does not deadlock; two made at once keep the first).
        private var subject: SubjectType {
            lock.lock()
            if let made { lock.unlock(); return made }
            lock.unlock()
            let subject = createSubject()
            lock.lock(); defer { lock.unlock() }
            if let made { return made }
            made = subject
            return subject
        }

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            subject.subscribe(subscriber)
        }

        /// Subscribes the subject to the upstream; cancel the result to stop.
        public func connect() -> any Cancellable { upstream.subscribe(subject) }
    }

    /// The publisher of ``Publisher/makeConnectable()``: the upstream, subscribed to once
    /// connected, its values to every subscriber of the moment.
    public struct MakeConnectable<Upstream: Publisher>: ConnectablePublisher {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure
        private let inner: Multicast<Upstream, PassthroughSubject<Output, Failure>>

        /// `upstream`, started when connected.
        public init(upstream: Upstream) {
            inner = Multicast(upstream: upstream, createSubject: { PassthroughSubject() })
        }

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            inner.receive(subscriber: subscriber)
        }

        public func connect() -> any Cancellable { inner.connect() }
    }
}

extension NotificationCenter {
    /// The notifications of a name (Apple: `NotificationCenter.Publisher`), observed while
    /// a subscriber wants them.
    public struct Publisher: Combine.Publisher {
        public typealias Output = Notification
        public typealias Failure = Never
        /// The center.
        public let center: NotificationCenter
        /// The name observed.
        public let name: Notification.Name
        /// The sender observed (nil: any).
        public let object: AnyObject?

        /// The notifications named `name` from `object` posted to `center`.
        public init(center: NotificationCenter, name: Notification.Name, object: AnyObject? = nil) {
            self.center = center
            self.name = name
            self.object = object
        }

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Notification, S.Failure == Never {
            let subject = PassthroughSubject<Notification, Never>()
            let observer = ObserverToken(center: center)
            subject.handleEvents(receiveCancel: { observer.remove() }).subscribe(subscriber)
            observer.token = center.addObserver(forName: name, object: object, queue: nil) { subject.send($0) }
        }
    }

    /// The notifications named `name` (from `object`, if given) as a publisher.
    public func publisher(for name: Notification.Name, object: AnyObject? = nil) -> NotificationCenter.Publisher {
        Publisher(center: self, name: name, object: object)
    }
}

/// An observer to remove when the subscription is cancelled. @unchecked Sendable: `token`
/// is under `lock`.
private final class ObserverToken: @unchecked Sendable {
    private let lock = NSLock()
    private let center: NotificationCenter
    private var stored: NSObjectProtocol?
    private var removed = false
    init(center: NotificationCenter) { self.center = center }
    var token: NSObjectProtocol? {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set {
            lock.lock()
            if removed, let newValue { lock.unlock(); center.removeObserver(newValue); return }
            stored = newValue
            lock.unlock()
        }
    }
    func remove() {
        lock.lock()
        removed = true
        let held = stored
        stored = nil
        lock.unlock()
        if let held { center.removeObserver(held) }
    }
}

extension Timer {
    /// A timer as a publisher of the dates it fires at (Apple: `Timer.TimerPublisher`), which
    /// starts when connected (or with `autoconnect()`).
    /// @unchecked Sendable: `running` is under `lock`; the subject is thread-safe.
    public final class TimerPublisher: ConnectablePublisher, @unchecked Sendable {
        public typealias Output = Date
        public typealias Failure = Never
        /// Seconds between firings.
        public let interval: TimeInterval
        /// The tolerance asked for.
        public let tolerance: TimeInterval?
        /// The run loop it fires on (the main one: on the main queue).
        public let runLoop: RunLoop
        /// The run loop mode.
        public let mode: RunLoop.Mode
        private let subject = PassthroughSubject<Date, Never>()
        private let lock = NSLock()
        private var running: (any Cancellable)?

        /// A timer firing every `interval` seconds on `runLoop`.
        public init(interval: TimeInterval, tolerance: TimeInterval? = nil, runLoop: RunLoop, mode: RunLoop.Mode, options: RunLoop.SchedulerOptions? = nil) {
            self.interval = interval
            self.tolerance = tolerance
            self.runLoop = runLoop
            self.mode = mode
        }

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Date, S.Failure == Never {
            subject.subscribe(subscriber)
        }

        /// Starts firing (once; connecting again returns the same connection).
        public func connect() -> any Cancellable {
            lock.lock(); defer { lock.unlock() }
            if let running { return running }
            let subject = self.subject
            let seconds = interval.isFinite && interval > 0 ? interval : 1e-3
            let timer = runLoop.schedule(after: runLoop.now.advanced(by: .init(seconds)), interval: .init(seconds)) { subject.send(Date()) }
            let connection = AnyCancellable { [weak self] in
                timer.cancel()
                self?.disconnected()
            }
            running = connection
            return connection
        }

        private func disconnected() {
            lock.lock()
            running = nil
            lock.unlock()
        }
    }

    /// A publisher of the dates a timer fires at every `interval` seconds on `runLoop`.
    public static func publish(every interval: TimeInterval, tolerance: TimeInterval? = nil, on runLoop: RunLoop, in mode: RunLoop.Mode,
                               options: RunLoop.SchedulerOptions? = nil) -> TimerPublisher {
        TimerPublisher(interval: interval, tolerance: tolerance, runLoop: runLoop, mode: mode, options: options)
    }
}

extension URLSession {
    /// A data task as a publisher of its data and response (Apple: `URLSession.DataTaskPublisher`):
    /// the task starts at each subscription and is cancelled with it.
    public struct DataTaskPublisher: Publisher {
        public typealias Output = (data: Data, response: URLResponse)
        public typealias Failure = URLError
        /// The request.
        public let request: URLRequest
        /// The session.
        public let session: URLSession

        /// A publisher of `request` on `session`.
        public init(request: URLRequest, session: URLSession) {
            self.request = request
            self.session = session
        }

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == URLError {
            let future = Deferred { [request, session] in
                TaskFuture(session: session, request: request).future
            }
            future.subscribe(subscriber)
        }
    }

    /// A publisher of the data at `url`.
    public func dataTaskPublisher(for url: URL) -> DataTaskPublisher { DataTaskPublisher(request: URLRequest(url: url), session: self) }
    /// A publisher of the data `request` loads.
    public func dataTaskPublisher(for request: URLRequest) -> DataTaskPublisher { DataTaskPublisher(request: request, session: self) }
}

/// Starts a data task and gives its result as a future; cancels the task when the
/// subscription is cancelled.
private struct TaskFuture {
    let future: AnyPublisher<(data: Data, response: URLResponse), URLError>
    init(session: URLSession, request: URLRequest) {
        let holder = TaskHolder()
        future = Future<(data: Data, response: URLResponse), URLError> { unsafePromise in
            let promise = ThreadSafePromise(unsafePromise)
            let task = session.dataTask(with: request) { data, response, error in
                if let error {
                    promise.fulfil(.failure((error as? URLError) ?? URLError(.unknown)))
                } else if let data, let response {
                    promise.fulfil(.success((data, response)))
                } else {
                    promise.fulfil(.failure(URLError(.badServerResponse)))
                }
            }
            holder.task = task
            task.resume()
        }
        .handleEvents(receiveCancel: { holder.task?.cancel() })
        .eraseToAnyPublisher()
    }
}

/// A future's promise handed to the task's completion handler. @unchecked Sendable: a
/// Future's promise keeps its result under the future's lock (the first call counts).
private struct ThreadSafePromise<Output, Failure: Error>: @unchecked Sendable {
    let fulfil: (Result<Output, Failure>) -> Void
    init(_ promise: @escaping (Result<Output, Failure>) -> Void) { fulfil = promise }
}

/// The running task. @unchecked Sendable: `task` is set once before any cancel can read it
/// (the future runs its closure at once), under `lock`.
private final class TaskHolder: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: URLSessionDataTask?
    var task: URLSessionDataTask? {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); stored = newValue; lock.unlock() }
    }
}

/// A decoder of a top-level value (Apple: `TopLevelDecoder`): JSONDecoder, PropertyListDecoder.
public protocol TopLevelDecoder {
    /// What it decodes from.
    associatedtype Input
    /// Decodes a `type` from `from`.
    func decode<T: Decodable>(_ type: T.Type, from: Input) throws -> T
}

/// An encoder of a top-level value (Apple: `TopLevelEncoder`): JSONEncoder, PropertyListEncoder.
public protocol TopLevelEncoder {
    /// What it encodes to.
    associatedtype Output
    /// Encodes `value`.
    func encode<T: Encodable>(_ value: T) throws -> Output
}

extension JSONDecoder: TopLevelDecoder {}
extension PropertyListDecoder: TopLevelDecoder {}
extension JSONEncoder: TopLevelEncoder {}
extension PropertyListEncoder: TopLevelEncoder {}

extension Publisher {
    /// Each value decoded as `type` by `decoder`; an error fails the publisher.
    public func decode<Item: Decodable, Coder: TopLevelDecoder>(type: Item.Type, decoder: Coder) -> Publishers.Step<Self, Item, any Error> where Output == Coder.Input {
        tryMap { try decoder.decode(type, from: $0) }
    }

    /// Each value encoded by `encoder`; an error fails the publisher.
    public func encode<Coder: TopLevelEncoder>(encoder: Coder) -> Publishers.Step<Self, Coder.Output, any Error> where Output: Encodable {
        tryMap { try encoder.encode($0) }
    }
}

/// A value handed from the publisher's thread to the task that iterates. @unchecked
/// Sendable: each value is handed over once and not touched by the sender after, as Apple's
/// `values` hands it.
struct HandedOver<Value>: @unchecked Sendable {
    let value: Value
}

/// A publisher that never fails as an async sequence (Apple: `AsyncPublisher`): `for await
/// value in publisher.values`. The values wait in order until the loop takes them.
public struct AsyncPublisher<P: Publisher>: AsyncSequence where P.Failure == Never {
    public typealias Element = P.Output
    private let publisher: P
    /// The values of `publisher`.
    public init(_ publisher: P) { self.publisher = publisher }

    /// Iterates the values; the subscription ends with the iterator.
    public struct Iterator: AsyncIteratorProtocol {
        private var inner: AsyncStream<HandedOver<Element>>.Iterator
        private let subscription: AnyCancellable
        init(_ publisher: P) {
            let (stream, continuation) = AsyncStream<HandedOver<Element>>.makeStream()
            subscription = publisher.sink(receiveCompletion: { _ in continuation.finish() },
                                          receiveValue: { continuation.yield(HandedOver(value: $0)) })
            inner = stream.makeAsyncIterator()
        }
        /// The next value, or nil once the publisher finished.
        public mutating func next() async -> Element? { await inner.next()?.value }
    }

    public func makeAsyncIterator() -> Iterator { Iterator(publisher) }
}

/// A publisher as a throwing async sequence (Apple: `AsyncThrowingPublisher`).
public struct AsyncThrowingPublisher<P: Publisher>: AsyncSequence {
    public typealias Element = P.Output
    private let publisher: P
    /// The values of `publisher`.
    public init(_ publisher: P) { self.publisher = publisher }

    /// Iterates the values; a failure is thrown.
    public struct Iterator: AsyncIteratorProtocol {
        private var inner: AsyncThrowingStream<HandedOver<Element>, any Error>.Iterator
        private let subscription: AnyCancellable
        init(_ publisher: P) {
            let (stream, continuation) = AsyncThrowingStream<HandedOver<Element>, any Error>.makeStream()
            subscription = publisher.sink(receiveCompletion: { completion in
                if case .failure(let error) = completion { continuation.finish(throwing: error) } else { continuation.finish() }
            }, receiveValue: { continuation.yield(HandedOver(value: $0)) })
            inner = stream.makeAsyncIterator()
        }
        /// The next value, nil once finished; throws the failure.
        public mutating func next() async throws -> Element? { try await inner.next()?.value }
    }

    public func makeAsyncIterator() -> Iterator { Iterator(publisher) }
}

extension Publisher where Failure == Never {
    /// The values as an async sequence.
    public var values: AsyncPublisher<Self> { AsyncPublisher(self) }
}

extension Publisher {
    /// The values as a throwing async sequence.
    public var values: AsyncThrowingPublisher<Self> { AsyncThrowingPublisher(self) }
}
