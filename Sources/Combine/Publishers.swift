// The publishers apps make directly (Apple: `Just`, `Empty`, `Fail`, `Future`, `Deferred`,
// `AnyPublisher`).
import Foundation

/// A subscription that sends a sequence's values, as its subscriber asks for them, then a
/// completion (Just, Empty, Fail, a sequence's publisher, a Future's result). The values are
/// taken from the sequence one at a time, one ahead (so the end is known, and sent, right
/// after the last value), on the thread that delivers, outside the lock: a lazy or endless
/// sequence is fine. A Future's subscription gets its sequence later (``supply(_:then:)``).
/// @unchecked Sendable: every stored `var` is read and written only under `lock`; the
/// sequence and the subscriber are called after it is released, by one thread at a time
/// (`delivering`).
final class ReplaySubscription<Output, Failure: Error>: Subscription, @unchecked Sendable {
    private let lock = NSLock()
    private let subscriber: AnySubscriber<Output, Failure>
    private var iterator: AnyIterator<Output>?
    private var next: Output?
    /// The end, once the values are known (nil: a Future still pending).
    private var completion: Subscribers.Completion<Failure>?
    private var demand = Subscribers.Demand.none
    private var ended = false
    private var delivering = false
    /// Whether the subscriber has its subscription (nothing is sent before).
    private var subscribed = false
    private var onCancel: (() -> Void)?

    private init(_ subscriber: AnySubscriber<Output, Failure>) { self.subscriber = subscriber }

    /// Subscribes `subscriber` to `values`, then `completion`.
    static func start<S: Subscriber, Values: Sequence>(_ values: Values, then completion: Subscribers.Completion<Failure>, to subscriber: S)
    where S.Input == Output, S.Failure == Failure, Values.Element == Output {
        let subscription = ReplaySubscription(AnySubscriber(subscriber))
        subscription.handOver(to: subscriber)
        subscription.supply(AnyIterator(values.makeIterator()), then: completion)
    }

    /// A subscription for `subscriber` whose values come later; `onCancel` runs if it is
    /// cancelled first. Give it with ``handOver(to:)``.
    static func pending(for subscriber: AnySubscriber<Output, Failure>, onCancel: @escaping () -> Void) -> ReplaySubscription {
        let subscription = ReplaySubscription(subscriber)
        subscription.onCancel = onCancel
        return subscription
    }

    /// Gives the subscriber this subscription, then sends what is due.
    func handOver<S: Subscriber>(to subscriber: S) where S.Input == Output, S.Failure == Failure {
        subscriber.receive(subscription: self)
        lock.lock()
        subscribed = true
        lock.unlock()
        drain()
    }

    /// The values to send, then `completion`.
    func supply(_ values: AnyIterator<Output>, then completion: Subscribers.Completion<Failure>) {
        let first = values.next()
        lock.lock()
        guard !ended, self.completion == nil else { lock.unlock(); return }
        iterator = values
        next = first
        self.completion = completion
        lock.unlock()
        drain()
    }

    func request(_ more: Subscribers.Demand) {
        guard more > .none else { return }
        lock.lock()
        demand += more
        subscribed = true
        lock.unlock()
        drain()
    }

    /// Sends what is wanted; one thread at a time (a subscriber that asks for more from
    /// `receive` is served by the loop already running).
    private func drain() {
        lock.lock()
        guard !delivering, subscribed else { lock.unlock(); return }
        delivering = true
        while !ended, let end = completion {
            guard let value = next else {
                ended = true
                onCancel = nil
                lock.unlock()
                subscriber.receive(completion: end)
                lock.lock()
                break
            }
            guard demand > .none else { break }
            demand -= .max(1)
            next = nil
            let values = iterator
            lock.unlock()
            let more = subscriber.receive(value)
            let following = values?.next()
            lock.lock()
            demand += more
            if !ended { next = following }
        }
        delivering = false
        lock.unlock()
    }

    func cancel() {
        lock.lock()
        ended = true
        let dropped = (next, iterator)
        next = nil
        iterator = nil
        let hook = onCancel
        onCancel = nil
        lock.unlock()
        // Released here, outside the lock (their deinit may be app code).
        withExtendedLifetime(dropped) {}
        hook?()
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
            ReplaySubscription.start(EmptyCollection<Output>(), then: .finished, to: subscriber)
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
        ReplaySubscription.start(EmptyCollection<Output>(), then: .failure(error), to: subscriber)
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
/// runs at once, when the future is made; every subscriber gets the result, and gets its
/// subscription at once (cancelling it before the result forgets the subscriber).
public final class Future<Output, Failure: Error>: Publisher, @unchecked Sendable {
    // @unchecked Sendable: `result` and `waiting` are read and written only under `lock`;
    // subscribers are served after it is released.
    /// The closure's way to give the result (the first call counts).
    public typealias Promise = (Result<Output, Failure>) -> Void
    private let lock = NSLock()
    private var result: Result<Output, Failure>?
    private var waiting: [ObjectIdentifier: ReplaySubscription<Output, Failure>] = [:]

    /// Runs `attemptToFulfill` now; its promise gives the result.
    public init(_ attemptToFulfill: @escaping (@escaping Promise) -> Void) {
        attemptToFulfill { [self] result in fulfill(result) }
    }

    private func fulfill(_ newResult: Result<Output, Failure>) {
        lock.lock()
        guard result == nil else { lock.unlock(); return }
        result = newResult
        let subscriptions = Array(waiting.values)
        waiting = [:]
        lock.unlock()
        for subscription in subscriptions { Self.supply(newResult, to: subscription) }
    }

    private static func supply(_ result: Result<Output, Failure>, to subscription: ReplaySubscription<Output, Failure>) {
        switch result {
        case .success(let value): subscription.supply(AnyIterator(CollectionOfOne(value).makeIterator()), then: .finished)
        case .failure(let error): subscription.supply(AnyIterator { nil }, then: .failure(error))
        }
    }

    private func forget(_ key: ObjectIdentifier) {
        lock.lock()
        let forgotten = waiting.removeValue(forKey: key)
        lock.unlock()
        withExtendedLifetime(forgotten) {}
    }

    public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
        // The key is set before the subscription can be cancelled (it is handed over below).
        let key = Held<ObjectIdentifier?>(nil)
        let subscription = ReplaySubscription<Output, Failure>.pending(for: AnySubscriber(subscriber)) { [weak self] in
            if let key = key.value { self?.forget(key) }
        }
        key.update { $0 = ObjectIdentifier(subscription) }
        lock.lock()
        let known = result
        if known == nil { waiting[ObjectIdentifier(subscription)] = subscription }
        lock.unlock()
        subscription.handOver(to: subscriber)
        if let known { Self.supply(known, to: subscription) }
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
            ReplaySubscription.start(sequence, then: .finished, to: subscriber)
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
