// Operators that subscribe to more than one publisher (Apple: `catch`, `flatMap`, `merge`,
// `combineLatest`, `switchToLatest`). Each asks its upstreams for every value (flatMap with
// `maxPublishers` for as many as it may follow) and hands them to its subscriber as far as
// it asked for them, keeping the rest in order (a sink asks for all: nothing waits); a
// subscriber that asks for fewer gets them later, never loses them.
import Foundation

/// The downstream side shared by these operators: demand, values waiting for demand, the
/// upstream subscriptions to cancel, and one delivery at a time (values from several
/// upstreams on several threads reach the subscriber one after another, never at once).
/// With `deliverer` (receive(on:)), values a request releases are delivered through it, on
/// the scheduler, not on the requesting thread.
/// @unchecked Sendable: every stored `var` is read and written only under `lock`; the
/// subscriber is called outside it, and what the lock's fields held is released outside it.
final class Funnel<Output, Failure: Error>: Subscription, @unchecked Sendable {
    private let lock = NSLock()
    private let downstream: AnySubscriber<Output, Failure>
    private let deliverer: ((@escaping () -> Void) -> Void)?
    private var demand = Subscribers.Demand.none
    private var waiting: [Output] = []
    private var completion: Subscribers.Completion<Failure>?
    private var ended = false
    private var delivering = false
    private var upstreams: [ObjectIdentifier: any Subscription] = [:]

    init(_ downstream: AnySubscriber<Output, Failure>, deliverer: ((@escaping () -> Void) -> Void)? = nil) {
        self.downstream = downstream
        self.deliverer = deliverer
    }

    /// Gives the subscriber its subscription (call once, first).
    func start() { downstream.receive(subscription: self) }

    /// Keeps `subscription` under `owner` and asks it for `demand`; one arriving after the
    /// end (or its start) is cancelled.
    func attach(_ subscription: any Subscription, owner: AnyObject, demand: Subscribers.Demand = .unlimited) {
        lock.lock()
        guard !ended, completion == nil else { lock.unlock(); subscription.cancel(); return }
        upstreams[ObjectIdentifier(owner)] = subscription
        lock.unlock()
        subscription.request(demand)
    }

    /// Asks `owner`'s subscription for `demand` more.
    func request(_ demand: Subscribers.Demand, from owner: AnyObject) {
        lock.lock()
        let held = upstreams[ObjectIdentifier(owner)]
        lock.unlock()
        held?.request(demand)
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

    /// Queues `value` with at most `limit` values waiting for demand: beyond, drops the
    /// newest or the oldest, or fails (`buffer(size:prefetch:whenFull:)`).
    func send(_ value: Output, limit: Int, whenFull: Publishers.BufferingStrategy<Failure>) {
        lock.lock()
        guard completion == nil, !ended else { lock.unlock(); return }
        guard demand == .none, waiting.count >= limit else {
            waiting.append(value)
            lock.unlock()
            return drain()
        }
        switch whenFull {
        case .dropNewest:
            lock.unlock()
        case .dropOldest:
            let dropped = waiting.isEmpty ? nil : waiting.removeFirst()
            if limit > 0 { waiting.append(value) }
            lock.unlock()
            withExtendedLifetime(dropped) {}
        case .customError(let makeError):
            lock.unlock()
            finish(.failure(makeError()))
        }
    }

    /// Ends after the queued values (a failure: at once); cancels every upstream.
    func finish(_ newCompletion: Subscribers.Completion<Failure>) {
        lock.lock()
        guard completion == nil, !ended else { lock.unlock(); return }
        completion = newCompletion
        var dropped: [Output] = []
        if case .failure = newCompletion { swap(&dropped, &waiting) }
        let held = Array(upstreams.values)
        upstreams = [:]
        lock.unlock()
        withExtendedLifetime(dropped) {}
        for subscription in held { subscription.cancel() }
        drain()
    }

    func request(_ more: Subscribers.Demand) {
        guard more > .none else { return }
        lock.lock()
        demand += more
        lock.unlock()
        if let deliverer { deliverer { [self] in drain() } } else { drain() }
    }

    func cancel() {
        lock.lock()
        ended = true
        var dropped: [Output] = []
        swap(&dropped, &waiting)
        let held = Array(upstreams.values)
        upstreams = [:]
        lock.unlock()
        withExtendedLifetime(dropped) {}
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

/// An upstream's subscriber inside a funnel: hands values and completion to closures; after
/// its completion, a value that comes late (from another thread) is dropped.
/// @unchecked Sendable: `completed` is read and written only under `lock`; the closures are
/// immutable.
final class FunnelInput<Input, Failure: Error>: Subscriber, @unchecked Sendable {
    private let onSubscription: (FunnelInput, any Subscription) -> Void
    private let onValue: (Input) -> Void
    private let onCompletion: (FunnelInput, Subscribers.Completion<Failure>) -> Void
    private let lock = NSLock()
    private var completed = false

    init(onSubscription: @escaping (FunnelInput, any Subscription) -> Void, onValue: @escaping (Input) -> Void,
         onCompletion: @escaping (FunnelInput, Subscribers.Completion<Failure>) -> Void) {
        self.onSubscription = onSubscription
        self.onValue = onValue
        self.onCompletion = onCompletion
    }

    func receive(subscription: any Subscription) { onSubscription(self, subscription) }

    func receive(_ input: Input) -> Subscribers.Demand {
        lock.lock()
        let late = completed
        lock.unlock()
        if !late { onValue(input) }
        return .none
    }

    func receive(completion: Subscribers.Completion<Failure>) {
        lock.lock()
        let again = completed
        completed = true
        lock.unlock()
        if !again { onCompletion(self, completion) }
    }
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
    /// With `demand`, asks for that many first (more with ``request(_:from:)``, `owner`
    /// being what `owned` was given).
    func follow<P: Publisher>(_ publisher: P, demand: Subscribers.Demand = .unlimited, owned: ((AnyObject) -> Void)? = nil,
                              onValue: @escaping (P.Output) -> Void,
                              onCompletion: @escaping (Subscribers.Completion<P.Failure>) -> Void) {
        publisher.subscribe(FunnelInput<P.Output, P.Failure>(
            onSubscription: { [self] input, subscription in
                owned?(input)
                attach(subscription, owner: input, demand: demand)
            },
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
        /// How many of the publishers it makes run at once; the upstream is asked for a
        /// value each time one finishes.
        public let maxPublishers: Subscribers.Demand
        let transform: (Upstream.Output) -> NewPublisher

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            let funnel = Funnel<Output, Failure>(AnySubscriber(subscriber))
            funnel.start()
            let running = RunningCount(1)
            let upstreamOwner = Held<WeakObject>(WeakObject())
            let transform = self.transform, limited = maxPublishers != .unlimited
            funnel.follow(upstream, demand: maxPublishers, owned: { owner in upstreamOwner.update { $0.object = owner } }, onValue: { value in
                running.add()
                funnel.follow(transform(value)) { completion in
                    if limited, case .finished = completion, let owner = upstreamOwner.value.object { funnel.request(.max(1), from: owner) }
                    funnel.endOne(of: running, completion)
                }
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
        /// The first publisher.
        public let a: A
        /// The second publisher.
        public let b: B

        /// The latest values of `a` and `b`, once each sent one.
        public init(_ a: A, _ b: B) {
            self.a = a
            self.b = b
        }

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
                let generation = current.begin()
                let input = FunnelInput<Output, Failure>(
                    onSubscription: { input, subscription in
                        // An inner already replaced when its subscription comes is cancelled.
                        if current.isCurrent(generation) { funnel.attach(subscription, owner: input) } else { subscription.cancel() }
                    },
                    onValue: { if current.isCurrent(generation) { funnel.send($0) } },
                    onCompletion: { input, completion in
                        funnel.detach(owner: input)
                        guard current.finish(generation) else { return }
                        if case .failure = completion { return funnel.finish(completion) }
                        if upstreamDone.isDone { funnel.finish(.finished) }
                    })
                if let previous = current.follow(input, generation: generation) { funnel.detach(owner: previous, cancelling: true) }
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

/// The inner publisher `switchToLatest` follows, by generation. @unchecked Sendable: under `lock`.
final class LatestInner: @unchecked Sendable {
    private let lock = NSLock()
    private var generation = 0
    private var current: AnyObject?
    private var following = false
    /// A new inner publisher's generation: the previous ones are no longer current.
    func begin() -> Int {
        lock.lock(); defer { lock.unlock() }
        generation += 1
        following = true
        return generation
    }
    /// Keeps `input` as generation `generation`'s subscriber; returns the one it replaced.
    func follow(_ input: AnyObject, generation: Int) -> AnyObject? {
        lock.lock(); defer { lock.unlock() }
        guard generation == self.generation else { return nil }
        let previous = current
        current = input
        return previous
    }
    /// Whether `generation` is the inner followed now.
    func isCurrent(_ generation: Int) -> Bool {
        lock.lock(); defer { lock.unlock() }
        return following && generation == self.generation
    }
    /// Generation `generation` ended; returns whether it was the followed one.
    func finish(_ generation: Int) -> Bool {
        lock.lock(); defer { lock.unlock() }
        guard following, generation == self.generation else { return false }
        following = false
        current = nil
        return true
    }
    /// Whether no inner publisher is followed.
    var isIdle: Bool { lock.lock(); defer { lock.unlock() }; return !following }
}

/// A weak reference (flatMap keeps its upstream's subscriber so, to ask it for more).
struct WeakObject {
    weak var object: AnyObject?
}

extension Publisher {
    /// On failure, the values of the publisher `handler` makes from the error.
    public func `catch`<P: Publisher>(_ handler: @escaping (Failure) -> P) -> Publishers.Catch<Self, P> where P.Output == Output {
        Publishers.Catch(upstream: self, handler: handler)
    }

    /// The values of the publishers `transform` makes from each value.
    public func flatMap<T, P: Publisher>(maxPublishers: Subscribers.Demand = .unlimited, _ transform: @escaping (Output) -> P) -> Publishers.FlatMap<P, Self> where T == P.Output, P.Failure == Failure {
        Publishers.FlatMap(upstream: self, maxPublishers: maxPublishers, transform: transform)
    }

    /// The values of the publishers `transform` makes, which never fail, from each value
    /// of this one, which may (Apple's iOS 14 overload).
    public func flatMap<P: Publisher>(maxPublishers: Subscribers.Demand = .unlimited, _ transform: @escaping (Output) -> P) -> Publishers.FlatMap<Publishers.Step<P, P.Output, Failure>, Self> where P.Failure == Never {
        Publishers.FlatMap(upstream: self, maxPublishers: maxPublishers) { transform($0).setFailureType(to: Failure.self) }
    }

    /// The values of this publisher and `other`, as they come.
    public func merge<P: Publisher>(with other: P) -> Publishers.Merge<Self, P> where P.Output == Output, P.Failure == Failure {
        Publishers.Merge(self, other)
    }

    /// The values of this publisher and two others, as they come.
    public func merge<B: Publisher, C: Publisher>(with b: B, _ c: C) -> Publishers.Merge3<Self, B, C>
    where B.Output == Output, B.Failure == Failure, C.Output == Output, C.Failure == Failure {
        Publishers.Merge3(self, b, c)
    }

    /// The values of this publisher and three others, as they come.
    public func merge<B: Publisher, C: Publisher, D: Publisher>(with b: B, _ c: C, _ d: D) -> Publishers.Merge4<Self, B, C, D>
    where B.Output == Output, B.Failure == Failure, C.Output == Output, C.Failure == Failure, D.Output == Output, D.Failure == Failure {
        Publishers.Merge4(self, b, c, d)
    }

    /// The latest value of each, once both sent one.
    public func combineLatest<P: Publisher>(_ other: P) -> Publishers.CombineLatest<Self, P> where P.Failure == Failure {
        Publishers.CombineLatest(self, other)
    }

    /// The latest value of each, transformed.
    public func combineLatest<P: Publisher, T>(_ other: P, _ transform: @escaping (Output, P.Output) -> T) -> Publishers.Step<Publishers.CombineLatest<Self, P>, T, Failure> where P.Failure == Failure {
        combineLatest(other).map(transform)
    }
}

extension Publisher {
    /// The latest value of this publisher and two others, once each sent one.
    public func combineLatest<B: Publisher, C: Publisher>(_ b: B, _ c: C) -> Publishers.CombineLatest3<Self, B, C>
    where B.Failure == Failure, C.Failure == Failure {
        Publishers.CombineLatest3(self, b, c)
    }

    /// The latest value of this publisher and three others, once each sent one.
    public func combineLatest<B: Publisher, C: Publisher, D: Publisher>(_ b: B, _ c: C, _ d: D) -> Publishers.CombineLatest4<Self, B, C, D>
    where B.Failure == Failure, C.Failure == Failure, D.Failure == Failure {
        Publishers.CombineLatest4(self, b, c, d)
    }
}

extension Publishers {
    /// The values of two publishers as they come (Apple: `Publishers.Merge`); finished when
    /// both finished, failed at the first failure.
    public struct Merge<A: Publisher, B: Publisher>: Publisher where A.Output == B.Output, A.Failure == B.Failure {
        public typealias Output = A.Output
        public typealias Failure = A.Failure
        /// The first publisher.
        public let a: A
        /// The second publisher.
        public let b: B
        /// Merges `a` and `b`.
        public init(_ a: A, _ b: B) {
            self.a = a
            self.b = b
        }
        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            MergeMany(a.eraseToAnyPublisher(), b.eraseToAnyPublisher()).receive(subscriber: subscriber)
        }
    }

    /// The values of three publishers as they come (Apple: `Publishers.Merge3`).
    public struct Merge3<A: Publisher, B: Publisher, C: Publisher>: Publisher
    where A.Output == B.Output, A.Failure == B.Failure, A.Output == C.Output, A.Failure == C.Failure {
        public typealias Output = A.Output
        public typealias Failure = A.Failure
        /// The publishers.
        public let a: A, b: B, c: C
        /// Merges `a`, `b` and `c`.
        public init(_ a: A, _ b: B, _ c: C) {
            self.a = a
            self.b = b
            self.c = c
        }
        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            MergeMany(a.eraseToAnyPublisher(), b.eraseToAnyPublisher(), c.eraseToAnyPublisher()).receive(subscriber: subscriber)
        }
    }

    /// The values of four publishers as they come (Apple: `Publishers.Merge4`).
    public struct Merge4<A: Publisher, B: Publisher, C: Publisher, D: Publisher>: Publisher
    where A.Output == B.Output, A.Failure == B.Failure, A.Output == C.Output, A.Failure == C.Failure, A.Output == D.Output, A.Failure == D.Failure {
        public typealias Output = A.Output
        public typealias Failure = A.Failure
        /// The publishers.
        public let a: A, b: B, c: C, d: D
        /// Merges `a`, `b`, `c` and `d`.
        public init(_ a: A, _ b: B, _ c: C, _ d: D) {
            self.a = a
            self.b = b
            self.c = c
            self.d = d
        }
        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            MergeMany(a.eraseToAnyPublisher(), b.eraseToAnyPublisher(), c.eraseToAnyPublisher(), d.eraseToAnyPublisher())
                .receive(subscriber: subscriber)
        }
    }

    /// The latest values of three publishers, once each sent one (Apple: `Publishers.CombineLatest3`).
    public struct CombineLatest3<A: Publisher, B: Publisher, C: Publisher>: Publisher where A.Failure == B.Failure, A.Failure == C.Failure {
        public typealias Output = (A.Output, B.Output, C.Output)
        public typealias Failure = A.Failure
        /// The publishers.
        public let a: A, b: B, c: C
        /// The latest values of `a`, `b` and `c`.
        public init(_ a: A, _ b: B, _ c: C) {
            self.a = a
            self.b = b
            self.c = c
        }
        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            CombineLatest(CombineLatest(a, b), c).map { ($0.0, $0.1, $1) }.receive(subscriber: subscriber)
        }
    }

    /// The latest values of four publishers, once each sent one (Apple: `Publishers.CombineLatest4`).
    public struct CombineLatest4<A: Publisher, B: Publisher, C: Publisher, D: Publisher>: Publisher
    where A.Failure == B.Failure, A.Failure == C.Failure, A.Failure == D.Failure {
        public typealias Output = (A.Output, B.Output, C.Output, D.Output)
        public typealias Failure = A.Failure
        /// The publishers.
        public let a: A, b: B, c: C, d: D
        /// The latest values of `a`, `b`, `c` and `d`.
        public init(_ a: A, _ b: B, _ c: C, _ d: D) {
            self.a = a
            self.b = b
            self.c = c
            self.d = d
        }
        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            CombineLatest(CombineLatest(a, b), CombineLatest(c, d)).map { ($0.0, $0.1, $1.0, $1.1) }.receive(subscriber: subscriber)
        }
    }
}

extension Publisher where Output: Publisher, Output.Failure == Failure {
    /// The values of the latest publisher this one sent.
    public func switchToLatest() -> Publishers.SwitchToLatest<Self> { Publishers.SwitchToLatest(upstream: self) }
}

extension Publisher where Failure == Never {
    /// The values of the publishers `transform` makes, which may fail, from each value of
    /// this one, which never fails (Apple's iOS 14 overload: a timer that polls a request).
    public func flatMap<P: Publisher>(maxPublishers: Subscribers.Demand = .unlimited, _ transform: @escaping (Output) -> P) -> Publishers.FlatMap<P, Publishers.Step<Self, Output, P.Failure>> {
        Publishers.FlatMap(upstream: setFailureType(to: P.Failure.self), maxPublishers: maxPublishers, transform: transform)
    }

    /// Neither fails: the publisher itself, as the general overload (Apple's iOS 14 overload
    /// that settles the choice between the two above).
    public func flatMap<P: Publisher>(maxPublishers: Subscribers.Demand = .unlimited, _ transform: @escaping (Output) -> P) -> Publishers.FlatMap<P, Self> where P.Failure == Never {
        Publishers.FlatMap(upstream: self, maxPublishers: maxPublishers, transform: transform)
    }
}
