// Operators that subscribe to more than one publisher (Apple: `catch`, `flatMap`, `merge`,
// `combineLatest`, `switchToLatest`). Each asks its upstreams for every value and hands
// them to its subscriber as far as it asked for them, keeping the rest in order (a sink asks
// for all: nothing waits); a subscriber that asks for fewer gets them later, never lost.
import Foundation

/// The downstream side shared by these operators: demand, values waiting for demand, the
/// upstream subscriptions to cancel, and one delivery at a time (values from several
/// upstreams on several threads reach the subscriber one after another, never at once).
/// @unchecked Sendable: every stored `var` is read and written only under `lock`; the
/// subscriber is called outside it.
final class Funnel<Output, Failure: Error>: Subscription, @unchecked Sendable {
    private let lock = NSLock()
    private let downstream: AnySubscriber<Output, Failure>
    private var demand = Subscribers.Demand.none
    private var waiting: [Output] = []
    private var completion: Subscribers.Completion<Failure>?
    private var ended = false
    private var delivering = false
    private var upstreams: [ObjectIdentifier: any Subscription] = [:]
    private var nextKey = 0

    init(_ downstream: AnySubscriber<Output, Failure>) { self.downstream = downstream }

    /// Gives the subscriber its subscription (call once, first).
    func start() { downstream.receive(subscription: self) }

    /// Keeps `subscription` under `owner`, and asks it for every value; one arriving after
    /// the end is cancelled.
    func attach(_ subscription: any Subscription, owner: AnyObject) {
        lock.lock()
        guard !ended else { lock.unlock(); subscription.cancel(); return }
        upstreams[ObjectIdentifier(owner)] = subscription
        lock.unlock()
        subscription.request(.unlimited)
    }

    /// Forgets `owner`'s subscription (it completed), and cancels it when `cancelling`.
    func detach(owner: AnyObject, cancelling: Bool = false) {
        lock.lock()
        let held = upstreams.removeValue(forKey: ObjectIdentifier(owner))
        lock.unlock()
        if cancelling { held?.cancel() }
    }

    /// Queues `value` for the subscriber.
    func send(_ value: Output) {
        lock.lock()
        guard completion == nil, !ended else { lock.unlock(); return }
        waiting.append(value)
        lock.unlock()
        drain()
    }

    /// Ends after the queued values; cancels every upstream.
    func finish(_ newCompletion: Subscribers.Completion<Failure>) {
        lock.lock()
        guard completion == nil, !ended else { lock.unlock(); return }
        completion = newCompletion
        if case .failure = newCompletion { waiting = [] }
        let held = Array(upstreams.values)
        upstreams = [:]
        lock.unlock()
        for subscription in held { subscription.cancel() }
        drain()
    }

    func request(_ more: Subscribers.Demand) {
        guard more > .none else { return }
        lock.lock()
        demand += more
        lock.unlock()
        drain()
    }

    func cancel() {
        lock.lock()
        ended = true
        waiting = []
        let held = Array(upstreams.values)
        upstreams = [:]
        lock.unlock()
        for subscription in held { subscription.cancel() }
    }

    private func drain() {
        lock.lock()
        guard !delivering else { lock.unlock(); return }
        delivering = true
        while !ended {
            if !waiting.isEmpty, demand > .none {
                demand -= .max(1)
                let value = waiting.removeFirst()
                lock.unlock()
                let more = downstream.receive(value)
                lock.lock()
                demand += more
            } else if waiting.isEmpty, let completion {
                ended = true
                lock.unlock()
                downstream.receive(completion: completion)
                lock.lock()
            } else {
                break
            }
        }
        delivering = false
        lock.unlock()
    }
}

/// An upstream's subscriber inside a funnel: hands values and completion to closures.
/// @unchecked Sendable: immutable after init.
final class FunnelInput<Input, Failure: Error>: Subscriber, @unchecked Sendable {
    private let onSubscription: (FunnelInput, any Subscription) -> Void
    private let onValue: (Input) -> Void
    private let onCompletion: (FunnelInput, Subscribers.Completion<Failure>) -> Void

    init(onSubscription: @escaping (FunnelInput, any Subscription) -> Void, onValue: @escaping (Input) -> Void,
         onCompletion: @escaping (FunnelInput, Subscribers.Completion<Failure>) -> Void) {
        self.onSubscription = onSubscription
        self.onValue = onValue
        self.onCompletion = onCompletion
    }

    func receive(subscription: any Subscription) { onSubscription(self, subscription) }
    func receive(_ input: Input) -> Subscribers.Demand { onValue(input); return .none }
    func receive(completion: Subscribers.Completion<Failure>) { onCompletion(self, completion) }
}

/// Counts the upstreams still running: the funnel finishes when none is.
/// @unchecked Sendable: `running` under `lock`.
final class RunningCount: @unchecked Sendable {
    private let lock = NSLock()
    private var running: Int
    init(_ running: Int) { self.running = running }
    func add() { lock.lock(); running += 1; lock.unlock() }
    /// One finished; returns whether none is left.
    func finishOne() -> Bool { lock.lock(); defer { lock.unlock() }; running -= 1; return running == 0 }
    /// Whether none is left.
    var isDone: Bool { lock.lock(); defer { lock.unlock() }; return running == 0 }
}

extension Funnel {
    /// Subscribes to `publisher`: its subscription kept (asked for every value, cancelled
    /// with the funnel), each value to `onValue`, its end to `onCompletion` once the
    /// subscription is forgotten.
    func follow<P: Publisher>(_ publisher: P, onValue: @escaping (P.Output) -> Void,
                              onCompletion: @escaping (Subscribers.Completion<P.Failure>) -> Void) {
        publisher.subscribe(FunnelInput<P.Output, P.Failure>(
            onSubscription: { [self] input, subscription in attach(subscription, owner: input) },
            onValue: onValue,
            onCompletion: { [self] input, completion in
                detach(owner: input)
                onCompletion(completion)
            }))
    }

    /// Follows `publisher`, sending its values on.
    func follow<P: Publisher>(_ publisher: P, onCompletion: @escaping (Subscribers.Completion<P.Failure>) -> Void) where P.Output == Output {
        follow(publisher, onValue: { [self] in send($0) }, onCompletion: onCompletion)
    }

    /// One of `running` upstreams ended: a failure ends the funnel, the last one finishing
    /// finishes it.
    func endOne(of running: RunningCount, _ completion: Subscribers.Completion<Failure>) {
        switch completion {
        case .failure: finish(completion)
        case .finished: if running.finishOne() { finish(.finished) }
        }
    }
}

extension Publishers {
    /// The publisher of ``Publisher/catch(_:)``.
    public struct Catch<Upstream: Publisher, NewPublisher: Publisher>: Publisher where NewPublisher.Output == Upstream.Output {
        public typealias Output = Upstream.Output
        public typealias Failure = NewPublisher.Failure
        let upstream: Upstream
        let handler: (Upstream.Failure) -> NewPublisher

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            let funnel = Funnel<Output, Failure>(AnySubscriber(subscriber))
            funnel.start()
            let handler = self.handler
            funnel.follow(upstream) { completion in
                switch completion {
                case .finished: funnel.finish(.finished)
                case .failure(let error): funnel.follow(handler(error)) { funnel.finish($0) }
                }
            }
        }
    }

    /// The publisher of ``Publisher/flatMap(maxPublishers:_:)``: the values of every
    /// publisher the transform makes, as they come; finished when the upstream and all of
    /// them finished; failed at the first failure.
    public struct FlatMap<NewPublisher: Publisher, Upstream: Publisher>: Publisher where NewPublisher.Failure == Upstream.Failure {
        public typealias Output = NewPublisher.Output
        public typealias Failure = Upstream.Failure
        let upstream: Upstream
        let transform: (Upstream.Output) -> NewPublisher

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            let funnel = Funnel<Output, Failure>(AnySubscriber(subscriber))
            funnel.start()
            let running = RunningCount(1)
            let transform = self.transform
            funnel.follow(upstream, onValue: { value in
                running.add()
                funnel.follow(transform(value)) { funnel.endOne(of: running, $0) }
            }, onCompletion: { funnel.endOne(of: running, $0) })
        }
    }

    /// The publisher of ``Publisher/merge(with:)``: the values of all its upstreams as they
    /// come; finished when all finished; failed at the first failure.
    public struct MergeMany<Upstream: Publisher>: Publisher {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure
        /// The merged publishers.
        public let publishers: [Upstream]
        /// Merges `upstream`.
        public init(_ upstream: Upstream...) { publishers = upstream }
        /// Merges `upstream`.
        public init<S: Swift.Sequence>(_ upstream: S) where S.Element == Upstream { publishers = Array(upstream) }

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            let funnel = Funnel<Output, Failure>(AnySubscriber(subscriber))
            funnel.start()
            guard !publishers.isEmpty else { return funnel.finish(.finished) }
            let running = RunningCount(publishers.count)
            for publisher in publishers {
                funnel.follow(publisher) { funnel.endOne(of: running, $0) }
            }
        }
    }

    /// The publisher of ``Publisher/combineLatest(_:)``: once each upstream sent a value,
    /// the latest of each, at every value of either; finished when both finished (or one
    /// finished without a value); failed at the first failure.
    public struct CombineLatest<A: Publisher, B: Publisher>: Publisher where A.Failure == B.Failure {
        public typealias Output = (A.Output, B.Output)
        public typealias Failure = A.Failure
        let a: A
        let b: B

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            let funnel = Funnel<Output, Failure>(AnySubscriber(subscriber))
            funnel.start()
            let latest = LatestPair<A.Output, B.Output>()
            let running = RunningCount(2)
            /// A side that finished without a value ends it: no pair can come.
            func end(_ completion: Subscribers.Completion<Failure>, hadValue: Bool) {
                if case .finished = completion, !hadValue { return funnel.finish(.finished) }
                funnel.endOne(of: running, completion)
            }
            funnel.follow(a, onValue: { if let pair = latest.setFirst($0) { funnel.send(pair) } },
                          onCompletion: { end($0, hadValue: latest.hasFirst) })
            funnel.follow(b, onValue: { if let pair = latest.setSecond($0) { funnel.send(pair) } },
                          onCompletion: { end($0, hadValue: latest.hasSecond) })
        }
    }

    /// The publisher of ``Publisher/switchToLatest()``: the values of the latest inner
    /// publisher only (the previous one is cancelled when a new one comes).
    public struct SwitchToLatest<Upstream: Publisher>: Publisher where Upstream.Output: Publisher, Upstream.Output.Failure == Upstream.Failure {
        public typealias Output = Upstream.Output.Output
        public typealias Failure = Upstream.Failure
        let upstream: Upstream

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            let funnel = Funnel<Output, Failure>(AnySubscriber(subscriber))
            funnel.start()
            let current = LatestInner()
            let upstreamDone = RunningCount(1)
            funnel.follow(upstream, onValue: { inner in
                    let input = FunnelInput<Output, Failure>(
                        onSubscription: { input, subscription in funnel.attach(subscription, owner: input) },
                        onValue: { funnel.send($0) },
                        onCompletion: { input, completion in
                            funnel.detach(owner: input)
                            if case .failure = completion { return funnel.finish(completion) }
                            if current.finish(input), upstreamDone.isDone { funnel.finish(.finished) }
                        })
                    if let previous = current.replace(with: input) { funnel.detach(owner: previous, cancelling: true) }
                    inner.subscribe(input)
                }, onCompletion: { completion in
                    if case .failure = completion { return funnel.finish(completion) }
                    _ = upstreamDone.finishOne()
                    if current.isIdle { funnel.finish(.finished) }
                })
        }
    }
}

/// The latest value of each side of `combineLatest`. @unchecked Sendable: under `lock`.
final class LatestPair<First, Second>: @unchecked Sendable {
    private let lock = NSLock()
    private var first: First?
    private var second: Second?
    var hasFirst: Bool { lock.lock(); defer { lock.unlock() }; return first != nil }
    var hasSecond: Bool { lock.lock(); defer { lock.unlock() }; return second != nil }
    func setFirst(_ value: First) -> (First, Second)? {
        lock.lock(); defer { lock.unlock() }
        first = value
        return second.map { (value, $0) }
    }
    func setSecond(_ value: Second) -> (First, Second)? {
        lock.lock(); defer { lock.unlock() }
        second = value
        return first.map { ($0, value) }
    }
}

/// The inner publisher `switchToLatest` follows. @unchecked Sendable: under `lock`.
final class LatestInner: @unchecked Sendable {
    private let lock = NSLock()
    private var current: AnyObject?
    /// Follows `input`; returns the one it replaced.
    func replace(with input: AnyObject) -> AnyObject? {
        lock.lock(); defer { lock.unlock() }
        let previous = current
        current = input
        return previous
    }
    /// The followed inner finished (if it is `input`); returns whether it was.
    func finish(_ input: AnyObject) -> Bool {
        lock.lock(); defer { lock.unlock() }
        guard current === input else { return false }
        current = nil
        return true
    }
    /// Whether no inner publisher is followed.
    var isIdle: Bool { lock.lock(); defer { lock.unlock() }; return current == nil }
}

extension Publisher {
    /// On failure, the values of the publisher `handler` makes from the error.
    public func `catch`<P: Publisher>(_ handler: @escaping (Failure) -> P) -> Publishers.Catch<Self, P> where P.Output == Output {
        Publishers.Catch(upstream: self, handler: handler)
    }

    /// The values of the publishers `transform` makes from each value.
    public func flatMap<T, P: Publisher>(maxPublishers: Subscribers.Demand = .unlimited, _ transform: @escaping (Output) -> P) -> Publishers.FlatMap<P, Self> where T == P.Output, P.Failure == Failure {
        Publishers.FlatMap(upstream: self, transform: transform)
    }

    /// The values of this publisher and `other`, as they come.
    public func merge(with other: Self) -> Publishers.MergeMany<Self> { Publishers.MergeMany(self, other) }

    /// The values of this publisher and the others, as they come.
    public func merge(with others: Self...) -> Publishers.MergeMany<Self> { Publishers.MergeMany([self] + others) }

    /// The latest value of each, once both sent one.
    public func combineLatest<P: Publisher>(_ other: P) -> Publishers.CombineLatest<Self, P> where P.Failure == Failure {
        Publishers.CombineLatest(a: self, b: other)
    }

    /// The latest value of each, transformed.
    public func combineLatest<P: Publisher, T>(_ other: P, _ transform: @escaping (Output, P.Output) -> T) -> Publishers.Step<Publishers.CombineLatest<Self, P>, T, Failure> where P.Failure == Failure {
        combineLatest(other).map(transform)
    }
}

extension Publisher where Output: Publisher, Output.Failure == Failure {
    /// The values of the latest publisher this one sent.
    public func switchToLatest() -> Publishers.SwitchToLatest<Self> { Publishers.SwitchToLatest(upstream: self) }
}
