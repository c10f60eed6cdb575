// The operators apps chain (Apple: `map`, `filter`, `compactMap`, `removeDuplicates`, ...).
// Most are one step applied to each value and to the completion (`Publishers.Step`); the
// ones that subscribe to other publishers (`flatMap`, `catch`, `merge`, `combineLatest`,
// `switchToLatest`) have their own subscriptions (Combining.swift).
import Foundation

/// What a step does with a value.
enum StepOutcome<Output, Failure: Error> {
    /// Pass this value on.
    case emit(Output)
    /// Drop the value (and ask upstream for another).
    case skip
    /// Pass this value on, then finish.
    case emitThenFinish(Output)
    /// Finish without passing the value.
    case finish
    /// Fail.
    case fail(Failure)
}

extension Publishers {
    /// A publisher that applies a step to each value and to the completion of its upstream;
    /// `makeStep` runs at each subscription, so a step's own state (the previous value of
    /// `removeDuplicates`, the count of `dropFirst`) belongs to one subscriber.
    public struct Step<Upstream: Publisher, Output, Failure: Error>: Publisher {
        let upstream: Upstream
        let makeStep: () -> (value: (Upstream.Output) -> StepOutcome<Output, Failure>,
                             completion: (Subscribers.Completion<Upstream.Failure>) -> Subscribers.Completion<Failure>?)

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            let step = makeStep()
            upstream.subscribe(StepSubscription(downstream: AnySubscriber(subscriber), value: step.value, completion: step.completion))
        }
    }
}

/// One subscriber's link through a step: it is the upstream's subscriber and the
/// downstream's subscription. @unchecked Sendable: its state is `link`'s (under its lock);
/// the step and the downstream are called outside it.
final class StepSubscription<Input, UpstreamFailure: Error, Output, Failure: Error>: Subscriber, Subscription, @unchecked Sendable {
    private let downstream: AnySubscriber<Output, Failure>
    private let step: (Input) -> StepOutcome<Output, Failure>
    private let completionStep: (Subscribers.Completion<UpstreamFailure>) -> Subscribers.Completion<Failure>?
    private let link = UpstreamLink()

    init(downstream: AnySubscriber<Output, Failure>, value: @escaping (Input) -> StepOutcome<Output, Failure>,
         completion: @escaping (Subscribers.Completion<UpstreamFailure>) -> Subscribers.Completion<Failure>?) {
        self.downstream = downstream
        step = value
        completionStep = completion
    }

    func receive(subscription: any Subscription) {
        if link.attach(subscription) { downstream.receive(subscription: self) }
    }

    func receive(_ input: Input) -> Subscribers.Demand {
        guard !link.isEnded else { return .none }
        switch step(input) {
        case .emit(let output): return downstream.receive(output)
        case .skip: return .max(1)
        case .emitThenFinish(let output):
            _ = downstream.receive(output)
            end(with: .finished)
        case .finish: end(with: .finished)
        case .fail(let error): end(with: .failure(error))
        }
        return .none
    }

    /// Cancels upstream and completes downstream, once.
    private func end(with completion: Subscribers.Completion<Failure>) {
        guard case let held?? = link.end() else { return }
        held.cancel()
        downstream.receive(completion: completion)
    }

    func receive(completion: Subscribers.Completion<UpstreamFailure>) {
        guard link.end() != nil else { return }
        if let mapped = completionStep(completion) { downstream.receive(completion: mapped) }
    }

    func request(_ demand: Subscribers.Demand) { link.current?.request(demand) }

    func cancel() {
        if case let held?? = link.end() { held.cancel() }
    }
}

/// The completion of a publisher that cannot fail, as any failure type.
func neverFails<Failure: Error>(_ completion: Subscribers.Completion<Never>) -> Subscribers.Completion<Failure> { .finished }

extension Publisher {
    /// A step publisher with per-subscription state made by `makeStep`, passing the
    /// completion through.
    func step<T>(_ makeStep: @escaping () -> (Output) -> StepOutcome<T, Failure>) -> Publishers.Step<Self, T, Failure> {
        Publishers.Step(upstream: self) { (value: makeStep(), completion: { $0 }) }
    }

    /// Each value transformed.
    public func map<T>(_ transform: @escaping (Output) -> T) -> Publishers.Step<Self, T, Failure> {
        step { { .emit(transform($0)) } }
    }

    /// Each value's property at `keyPath`.
    public func map<T>(_ keyPath: KeyPath<Output, T>) -> Publishers.Step<Self, T, Failure> {
        step { { .emit($0[keyPath: keyPath]) } }
    }

    /// Each value transformed by a closure that may throw: an error fails the publisher.
    public func tryMap<T>(_ transform: @escaping (Output) throws -> T) -> Publishers.Step<Self, T, any Error> {
        Publishers.Step(upstream: self) {
            (value: { value in
                do { return .emit(try transform(value)) } catch { return .fail(error) }
            }, completion: { completion in
                switch completion {
                case .finished: return .finished
                case .failure(let error): return .failure(error)
                }
            })
        }
    }

    /// The values the closure turns into non-nil ones.
    public func compactMap<T>(_ transform: @escaping (Output) -> T?) -> Publishers.Step<Self, T, Failure> {
        step { { transform($0).map { .emit($0) } ?? .skip } }
    }

    /// The values that pass `isIncluded`.
    public func filter(_ isIncluded: @escaping (Output) -> Bool) -> Publishers.Step<Self, Output, Failure> {
        step { { isIncluded($0) ? .emit($0) : .skip } }
    }

    /// The values that differ from the previous one by `predicate` (true: a duplicate).
    public func removeDuplicates(by predicate: @escaping (Output, Output) -> Bool) -> Publishers.Step<Self, Output, Failure> {
        step {
            var previous: Output?
            return { value in
                defer { previous = value }
                if let previous, predicate(previous, value) { return .skip }
                return .emit(value)
            }
        }
    }

    /// The values without the first `count`.
    public func dropFirst(_ count: Int = 1) -> Publishers.Step<Self, Output, Failure> {
        step {
            var dropped = 0
            return { value in
                guard dropped >= count else { dropped += 1; return .skip }
                return .emit(value)
            }
        }
    }

    /// The first `maxLength` values, then finished.
    public func prefix(_ maxLength: Int) -> Publishers.Step<Self, Output, Failure> {
        step {
            var passed = 0
            return { value in
                passed += 1
                if passed > maxLength { return .finish }
                return passed == maxLength ? .emitThenFinish(value) : .emit(value)
            }
        }
    }

    /// The first value, then finished.
    public func first() -> Publishers.Step<Self, Output, Failure> { prefix(1) }

    /// The first value that passes `predicate`, then finished.
    public func first(where predicate: @escaping (Output) -> Bool) -> Publishers.Step<Self, Output, Failure> {
        step { { predicate($0) ? .emitThenFinish($0) : .skip } }
    }

    /// Each value folded with the previous result, starting at `initialResult`.
    public func scan<T>(_ initialResult: T, _ nextPartialResult: @escaping (T, Output) -> T) -> Publishers.Step<Self, T, Failure> {
        step {
            var result = initialResult
            return { value in
                result = nextPartialResult(result, value)
                return .emit(result)
            }
        }
    }

    /// Runs the closures at each event, passing everything through unchanged.
    public func handleEvents(receiveSubscription: ((any Subscription) -> Void)? = nil,
                             receiveOutput: ((Output) -> Void)? = nil,
                             receiveCompletion: ((Subscribers.Completion<Failure>) -> Void)? = nil,
                             receiveCancel: (() -> Void)? = nil,
                             receiveRequest: ((Subscribers.Demand) -> Void)? = nil) -> Publishers.HandleEvents<Self> {
        Publishers.HandleEvents(upstream: self, receiveSubscription: receiveSubscription, receiveOutput: receiveOutput,
                                receiveCompletion: receiveCompletion, receiveCancel: receiveCancel, receiveRequest: receiveRequest)
    }

    /// The failure transformed.
    public func mapError<E: Error>(_ transform: @escaping (Failure) -> E) -> Publishers.Step<Self, Output, E> {
        Publishers.Step(upstream: self) {
            (value: { .emit($0) }, completion: { completion in
                switch completion {
                case .finished: return .finished
                case .failure(let error): return .failure(transform(error))
                }
            })
        }
    }

    /// The values, and the failure replaced by finishing after `output`.
    public func replaceError(with output: Output) -> Publishers.Catch<Self, Just<Output>> {
        self.catch { _ in Just(output) }
    }

    /// Each nil value replaced by `output`.
    public func replaceNil<T>(with output: T) -> Publishers.Step<Self, T, Failure> where Output == T? {
        step { { .emit($0 ?? output) } }
    }

    /// Every value collected into one array, sent when the upstream finishes.
    public func collect() -> Publishers.Collect<Self> { Publishers.Collect(upstream: self) }

    /// Ignores the values; only the completion passes.
    public func ignoreOutput() -> Publishers.Step<Self, Never, Failure> {
        step { { _ in .skip } }
    }
}

extension Publisher where Output: Equatable {
    /// The values that differ from the previous one.
    public func removeDuplicates() -> Publishers.Step<Self, Output, Failure> { removeDuplicates(by: ==) }
}

extension Publisher where Failure == Never {
    /// The same publisher, typed as one that may fail with `failureType`.
    public func setFailureType<E: Error>(to failureType: E.Type) -> Publishers.Step<Self, Output, E> {
        Publishers.Step(upstream: self) { (value: { .emit($0) }, completion: neverFails) }
    }

    /// Writes each value to a `@Published` property (`.assign(to: &$value)`): the
    /// subscription lives as long as the property's owner.
    public func assign(to published: inout Published<Output>.Publisher) {
        published.attach(self)
    }
}

extension Publishers {
    /// The publisher of ``Publisher/handleEvents(receiveSubscription:receiveOutput:receiveCompletion:receiveCancel:receiveRequest:)``.
    public struct HandleEvents<Upstream: Publisher>: Publisher {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure
        let upstream: Upstream
        let receiveSubscription: ((any Subscription) -> Void)?
        let receiveOutput: ((Output) -> Void)?
        let receiveCompletion: ((Subscribers.Completion<Failure>) -> Void)?
        let receiveCancel: (() -> Void)?
        let receiveRequest: ((Subscribers.Demand) -> Void)?

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            let events = self
            upstream.subscribe(AnySubscriber<Output, Failure>(
                receiveSubscription: { subscription in
                    events.receiveSubscription?(subscription)
                    subscriber.receive(subscription: EventSubscription(subscription, onRequest: events.receiveRequest, onCancel: events.receiveCancel))
                },
                receiveValue: { value in
                    events.receiveOutput?(value)
                    return subscriber.receive(value)
                },
                receiveCompletion: { completion in
                    events.receiveCompletion?(completion)
                    subscriber.receive(completion: completion)
                }))
        }
    }

    /// The publisher of ``Publisher/collect()``.
    public struct Collect<Upstream: Publisher>: Publisher {
        public typealias Output = [Upstream.Output]
        public typealias Failure = Upstream.Failure
        let upstream: Upstream

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            let collected = Held<[Upstream.Output]>([])
            upstream.subscribe(AnySubscriber<Upstream.Output, Failure>(
                receiveSubscription: { subscription in
                    subscriber.receive(subscription: EventSubscription(subscription, onRequest: nil, onCancel: nil, upstreamDemand: .unlimited))
                },
                receiveValue: { value in
                    collected.update { $0.append(value) }
                    return .none
                },
                receiveCompletion: { completion in
                    if case .finished = completion { _ = subscriber.receive(collected.value) }
                    subscriber.receive(completion: completion)
                }))
        }
    }
}

/// A subscription passed through with hooks on requests and cancellation (once). With
/// `upstreamDemand`, the first request asks upstream for that instead (collect wants all).
/// @unchecked Sendable: `askedUpstream` and `cancelled` are read and written under `lock`.
final class EventSubscription: Subscription, @unchecked Sendable {
    private let upstream: any Subscription
    private let onRequest: ((Subscribers.Demand) -> Void)?
    private let onCancel: (() -> Void)?
    private let upstreamDemand: Subscribers.Demand?
    private let lock = NSLock()
    private var askedUpstream = false
    private var cancelled = false

    init(_ upstream: any Subscription, onRequest: ((Subscribers.Demand) -> Void)?, onCancel: (() -> Void)?, upstreamDemand: Subscribers.Demand? = nil) {
        self.upstream = upstream
        self.onRequest = onRequest
        self.onCancel = onCancel
        self.upstreamDemand = upstreamDemand
    }

    func request(_ demand: Subscribers.Demand) {
        onRequest?(demand)
        guard let upstreamDemand else { return upstream.request(demand) }
        lock.lock()
        let first = !askedUpstream
        askedUpstream = true
        lock.unlock()
        if first { upstream.request(upstreamDemand) }
    }

    func cancel() {
        lock.lock()
        let first = !cancelled
        cancelled = true
        lock.unlock()
        guard first else { return }
        onCancel?()
        upstream.cancel()
    }
}
