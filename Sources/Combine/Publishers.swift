// The publishers apps make directly (Apple: `Just`, `Empty`, `Fail`, `Future`, `Deferred`,
// `AnyPublisher`).
import Foundation

/// A subscription that sends a fixed sequence of values then a completion, as its
/// subscriber asks for them (Just, Empty, Fail, Future's result, Sequence's publisher).
/// @unchecked Sendable: `pending`, `demand`, `ended` and `delivering` are read and written
/// only under `lock`; the subscriber is called after it is released.
final class ReplaySubscription<Output, Failure: Error>: Subscription, @unchecked Sendable {
    private let lock = NSLock()
    private let subscriber: AnySubscriber<Output, Failure>
    private var pending: [Output]
    private let completion: Subscribers.Completion<Failure>
    private var demand = Subscribers.Demand.none
    private var ended = false
    private var delivering = false

    init(_ values: [Output], then completion: Subscribers.Completion<Failure>, to subscriber: AnySubscriber<Output, Failure>) {
        pending = values.reversed()
        self.completion = completion
        self.subscriber = subscriber
    }

    /// Subscribes `subscriber` and, with no values to send, completes it at once.
    static func start<S: Subscriber>(_ values: [Output], then completion: Subscribers.Completion<Failure>, to subscriber: S) where S.Input == Output, S.Failure == Failure {
        let subscription = ReplaySubscription(values, then: completion, to: AnySubscriber(subscriber))
        subscriber.receive(subscription: subscription)
        if values.isEmpty { subscription.drain() }
    }

    func request(_ more: Subscribers.Demand) {
        guard more > .none else { return }
        lock.lock()
        demand += more
        lock.unlock()
        drain()
    }

    /// Sends what is wanted; one thread at a time (a subscriber that asks for more from
    /// `receive` is served by the loop already running).
    private func drain() {
        lock.lock()
        guard !delivering else { lock.unlock(); return }
        delivering = true
        while !ended {
            if pending.isEmpty {
                ended = true
                lock.unlock()
                subscriber.receive(completion: completion)
                lock.lock()
                break
            }
            guard demand > .none else { break }
            demand -= .max(1)
            let value = pending.removeLast()
            lock.unlock()
            let more = subscriber.receive(value)
            lock.lock()
            demand += more
        }
        delivering = false
        lock.unlock()
    }

    func cancel() {
        lock.lock()
        ended = true
        pending = []
        lock.unlock()
    }
}

/// A publisher of one value, then finished (Apple: `Just`).
public struct Just<Output>: Publisher {
    public typealias Failure = Never
    /// The value.
    public let output: Output
    /// A publisher of `output`.
    public init(_ output: Output) { self.output = output }
    public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Never {
        ReplaySubscription.start([output], then: .finished, to: subscriber)
    }
}

extension Just: Equatable where Output: Equatable {}

/// A publisher that sends nothing and finishes at once, or never (Apple: `Empty`).
public struct Empty<Output, Failure: Error>: Publisher, Equatable {
    /// Whether it finishes at once.
    public let completeImmediately: Bool
    /// An empty publisher.
    public init(completeImmediately: Bool = true) { self.completeImmediately = completeImmediately }
    /// An empty publisher of the given types.
    public init(completeImmediately: Bool = true, outputType: Output.Type, failureType: Failure.Type) {
        self.completeImmediately = completeImmediately
    }
    public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
        if completeImmediately {
            ReplaySubscription.start([], then: .finished, to: subscriber)
        } else {
            subscriber.receive(subscription: Subscriptions.empty)
        }
    }
    /// Empty publishers with the same behaviour are equal.
    public static func == (lhs: Empty, rhs: Empty) -> Bool { lhs.completeImmediately == rhs.completeImmediately }
}

/// A publisher that fails at once with an error (Apple: `Fail`).
public struct Fail<Output, Failure: Error>: Publisher {
    /// The error.
    public let error: Failure
    /// A publisher failing with `error`.
    public init(error: Failure) { self.error = error }
    /// A publisher of `Output` failing with `failure`.
    public init(outputType: Output.Type, failure: Failure) { error = failure }
    public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
        ReplaySubscription.start([], then: .failure(error), to: subscriber)
    }
}

/// A publisher that makes its publisher for each subscriber (Apple: `Deferred`).
public struct Deferred<DeferredPublisher: Publisher>: Publisher {
    public typealias Output = DeferredPublisher.Output
    public typealias Failure = DeferredPublisher.Failure
    /// Makes the publisher.
    public let createPublisher: () -> DeferredPublisher
    /// A publisher made by `createPublisher` at each subscription.
    public init(createPublisher: @escaping () -> DeferredPublisher) { self.createPublisher = createPublisher }
    public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
        createPublisher().receive(subscriber: subscriber)
    }
}

/// A publisher that eventually produces one value or fails (Apple: `Future`). The closure
/// runs at once, when the future is made; every subscriber gets the result.
public final class Future<Output, Failure: Error>: Publisher, @unchecked Sendable {
    // @unchecked Sendable: `result` and `waiting` are read and written only under `lock`;
    // subscribers are started after it is released.
    /// The closure's way to give the result (the first call counts).
    public typealias Promise = (Result<Output, Failure>) -> Void
    private let lock = NSLock()
    private var result: Result<Output, Failure>?
    private var waiting: [(Result<Output, Failure>) -> Void] = []

    /// Runs `attemptToFulfill` now; its promise gives the result.
    public init(_ attemptToFulfill: @escaping (@escaping Promise) -> Void) {
        attemptToFulfill { [self] result in fulfill(result) }
    }

    private func fulfill(_ newResult: Result<Output, Failure>) {
        lock.lock()
        guard result == nil else { lock.unlock(); return }
        result = newResult
        let starters = waiting
        waiting = []
        lock.unlock()
        for start in starters { start(newResult) }
    }

    public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
        let start: (Result<Output, Failure>) -> Void = { result in
            switch result {
            case .success(let value): ReplaySubscription.start([value], then: .finished, to: subscriber)
            case .failure(let error): ReplaySubscription.start([], then: .failure(error), to: subscriber)
            }
        }
        lock.lock()
        if let result {
            lock.unlock()
            start(result)
        } else {
            waiting.append(start)
            lock.unlock()
        }
    }
}

/// A publisher of erased type (Apple: `AnyPublisher`).
public struct AnyPublisher<Output, Failure: Error>: Publisher, CustomStringConvertible {
    private let subscribeBody: (AnySubscriber<Output, Failure>) -> Void
    /// Wraps `publisher`.
    public init<P: Publisher>(_ publisher: P) where P.Output == Output, P.Failure == Failure {
        if let erased = publisher as? AnyPublisher<Output, Failure> {
            subscribeBody = erased.subscribeBody
        } else {
            subscribeBody = { publisher.receive(subscriber: $0) }
        }
    }
    public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
        subscribeBody(AnySubscriber(subscriber))
    }
    /// "AnyPublisher".
    public var description: String { "AnyPublisher" }
}

extension Publisher {
    /// This publisher with its type erased.
    public func eraseToAnyPublisher() -> AnyPublisher<Output, Failure> { AnyPublisher(self) }
}

extension Publishers {
    /// A publisher of a sequence's elements, then finished (Apple: `Publishers.Sequence`).
    public struct Sequence<Elements: Swift.Sequence, Failure: Error>: Publisher {
        public typealias Output = Elements.Element
        /// The elements.
        public let sequence: Elements
        /// A publisher of `sequence`.
        public init(sequence: Elements) { self.sequence = sequence }
        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            ReplaySubscription.start(Array(sequence), then: .finished, to: subscriber)
        }
    }
}

extension Sequence {
    /// A publisher of the elements (Apple: `[1, 2, 3].publisher`).
    public var publisher: Publishers.Sequence<Self, Never> { Publishers.Sequence(sequence: self) }
}

extension Result {
    /// A publisher of the result (Apple: `Result.Publisher`).
    public var publisher: AnyPublisher<Success, Failure> {
        switch self {
        case .success(let value): return Just(value).setFailureType(to: Failure.self).eraseToAnyPublisher()
        case .failure(let error): return Fail(error: error).eraseToAnyPublisher()
        }
    }
}
