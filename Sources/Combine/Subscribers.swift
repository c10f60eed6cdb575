// The two subscribers apps use (Apple: `Subscribers.Sink`, `Subscribers.Assign`), and
// `sink`/`assign`, which attach them and return what cancels them.
import Foundation

/// The part of a subscriber that keeps its upstream subscription: set once, taken once on
/// cancel or completion, so that cancelling twice or after the end does nothing.
/// @unchecked Sendable: `subscription` and `ended` are read and written only under `lock`.
class UpstreamLink: @unchecked Sendable {
    private let lock = NSLock()
    private var subscription: (any Subscription)?
    private var ended = false

    /// Keeps `subscription` unless this already ended or has one: then cancels it; returns
    /// whether it was kept.
    func attach(_ newSubscription: any Subscription) -> Bool {
        lock.lock()
        guard !ended, subscription == nil else {
            lock.unlock()
            newSubscription.cancel()
            return false
        }
        subscription = newSubscription
        lock.unlock()
        return true
    }

    /// Ends the link; returns the subscription it held (to cancel), or nil if it had ended.
    func end() -> (any Subscription)?? {
        lock.lock(); defer { lock.unlock() }
        guard !ended else { return nil }
        ended = true
        let held = subscription
        subscription = nil
        return .some(held)
    }

    /// Whether it ended.
    var isEnded: Bool {
        lock.lock(); defer { lock.unlock() }
        return ended
    }

    /// The subscription, if attached and not ended.
    var current: (any Subscription)? {
        lock.lock(); defer { lock.unlock() }
        return ended ? nil : subscription
    }
}

extension Subscribers {
    /// A subscriber that asks for every value and hands each to a closure (Apple:
    /// `Subscribers.Sink`).
    public final class Sink<Input, Failure: Error>: Subscriber, Cancellable {
        /// What it does with a value.
        public let receiveValue: (Input) -> Void
        /// What it does with the completion.
        public let receiveCompletion: (Subscribers.Completion<Failure>) -> Void
        private let link = UpstreamLink()

        /// A sink of the two closures.
        public init(receiveCompletion: @escaping (Subscribers.Completion<Failure>) -> Void, receiveValue: @escaping (Input) -> Void) {
            self.receiveCompletion = receiveCompletion
            self.receiveValue = receiveValue
        }

        public func receive(subscription: any Subscription) {
            if link.attach(subscription) { subscription.request(.unlimited) }
        }

        public func receive(_ input: Input) -> Subscribers.Demand {
            if !link.isEnded { receiveValue(input) }
            return .none
        }

        public func receive(completion: Subscribers.Completion<Failure>) {
            guard link.end() != nil else { return }
            receiveCompletion(completion)
        }

        /// Cancels the subscription; no value or completion follows.
        public func cancel() {
            if case let held?? = link.end() { held.cancel() }
        }
    }

    /// A subscriber that writes each value to a property of an object (Apple:
    /// `Subscribers.Assign`). It keeps the object until cancelled or completed.
    public final class Assign<Root, Input>: Subscriber, Cancellable {
        public typealias Failure = Never
        /// The object written to (nil once cancelled or completed).
        public var object: Root? {
            objectLock.lock(); defer { objectLock.unlock() }
            return heldObject
        }
        private let objectLock = NSLock()
        private var heldObject: Root?
        /// The property written.
        public let keyPath: ReferenceWritableKeyPath<Root, Input>
        private let link = UpstreamLink()

        /// Writes to `object[keyPath: keyPath]`.
        public init(object: Root, keyPath: ReferenceWritableKeyPath<Root, Input>) {
            heldObject = object
            self.keyPath = keyPath
        }

        public func receive(subscription: any Subscription) {
            if link.attach(subscription) { subscription.request(.unlimited) }
        }

        public func receive(_ value: Input) -> Subscribers.Demand {
            if !link.isEnded, let object { object[keyPath: keyPath] = value }
            return .none
        }

        public func receive(completion: Subscribers.Completion<Never>) {
            guard link.end() != nil else { return }
            release()
        }

        private func release() {
            objectLock.lock()
            let released = heldObject
            heldObject = nil
            objectLock.unlock()
            _ = released  // released here, outside the lock (its deinit is app code)
        }

        /// Cancels the subscription and lets the object go.
        public func cancel() {
            if case let held?? = link.end() {
                held.cancel()
            }
            release()
        }
    }
}

extension Publisher {
    /// Attaches a subscriber that asks for every value: `receiveValue` gets each, then
    /// `receiveCompletion` the end. Keep the returned cancellable for as long as it should run.
    public func sink(receiveCompletion: @escaping (Subscribers.Completion<Failure>) -> Void,
                     receiveValue: @escaping (Output) -> Void) -> AnyCancellable {
        let sink = Subscribers.Sink<Output, Failure>(receiveCompletion: receiveCompletion, receiveValue: receiveValue)
        subscribe(sink)
        return AnyCancellable(sink)
    }

    /// Writes each value to `object[keyPath: keyPath]` (a publisher that never fails).
    public func assign<Root>(to keyPath: ReferenceWritableKeyPath<Root, Output>, on object: Root) -> AnyCancellable where Failure == Never {
        let assign = Subscribers.Assign(object: object, keyPath: keyPath)
        subscribe(assign)
        return AnyCancellable(assign)
    }
}

extension Publisher where Failure == Never {
    /// Attaches a subscriber that hands every value to `receiveValue`.
    public func sink(receiveValue: @escaping (Output) -> Void) -> AnyCancellable {
        sink(receiveCompletion: { _ in }, receiveValue: receiveValue)
    }
}
