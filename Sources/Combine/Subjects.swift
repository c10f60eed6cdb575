// Subjects (Apple: `Subject`, `PassthroughSubject`, `CurrentValueSubject`): publishers that
// the code sends values into. Each subscriber gets values as far as it asked for them; a
// value sent to a subscriber that asked for none is dropped for it, as on Apple's.
import Foundation

/// A publisher the code sends values into (Apple: `Subject`).
public protocol Subject<Output, Failure>: AnyObject, Publisher {
    /// Sends `value` to the subscribers.
    func send(_ value: Output)
    /// Ends the subject: the subscribers get `completion`, later ones get it at once.
    func send(completion: Subscribers.Completion<Failure>)
    /// Gives `subscription` unlimited demand (a subject subscribed to a publisher).
    func send(subscription: any Subscription)
}

extension Subject where Output == Void {
    /// Sends the empty value.
    public func send() { send(()) }
}

extension Publisher {
    /// Sends every value and the completion of this publisher into `subject`.
    public func subscribe<S: Subject>(_ subject: S) -> AnyCancellable where S.Output == Output, S.Failure == Failure {
        let sink = Subscribers.Sink<Output, Failure>(receiveCompletion: { subject.send(completion: $0) }, receiveValue: { subject.send($0) })
        subscribe(sink)
        return AnyCancellable(sink)
    }
}

/// The subscribers of a subject and what each asked for; shared by both subjects.
/// @unchecked Sendable: `subscriptions`, `completion` and `upstreams` are read and written
/// only under `lock`; subscribers are called after it is released.
class SubjectCore<Output, Failure: Error>: @unchecked Sendable {
    let lock = NSLock()
    private var subscriptions: [SubjectSubscription<Output, Failure>] = []
    private var completion: Subscribers.Completion<Failure>?
    private var upstreams: [any Subscription] = []

    /// Adds `subscriber`, or completes it at once if the subject ended. With `latest` (a
    /// subject that keeps its value), the subscriber gets that value when it first asks, and
    /// again after it missed one for want of demand.
    func attach<S: Subscriber>(_ subscriber: S, latest: (() -> Output?)? = nil) where S.Input == Output, S.Failure == Failure {
        lock.lock()
        if let completion {
            lock.unlock()
            subscriber.receive(subscription: Subscriptions.empty)
            subscriber.receive(completion: completion)
            return
        }
        let subscription = SubjectSubscription<Output, Failure>(AnySubscriber(subscriber), core: self, latest: latest)
        // Held from before the subscription can be found: a value or the completion sent
        // from another thread waits until the subscriber has its subscription. Nobody else
        // can hold a new subscription's lock, so taking it under `lock` cannot deadlock.
        subscription.holdDownstream()
        subscriptions.append(subscription)
        lock.unlock()
        subscription.start()
    }

    func detach(_ subscription: SubjectSubscription<Output, Failure>) {
        lock.lock()
        let index = subscriptions.firstIndex { $0 === subscription }
        let removed = index.map { subscriptions.remove(at: $0) }
        lock.unlock()
        withExtendedLifetime(removed) {}
    }

    /// Whether the subject ended (the caller holds `lock`).
    var hasCompletedLocked: Bool { completion != nil }

    /// Sends `value` to every subscriber that wants one.
    func send(_ value: Output) {
        lock.lock()
        let targets = completion == nil ? subscriptions : []
        lock.unlock()
        for target in targets { target.offer(value) }
    }

    /// Ends: every subscriber gets `completion`, once.
    func send(completion newCompletion: Subscribers.Completion<Failure>) {
        lock.lock()
        guard completion == nil else { lock.unlock(); return }
        completion = newCompletion
        let targets = subscriptions
        subscriptions = []
        let held = upstreams
        upstreams = []
        lock.unlock()
        _ = held
        for target in targets { target.finish(newCompletion) }
    }

    /// Keeps an upstream subscription (a subject subscribed to a publisher) and asks it for
    /// every value.
    func send(subscription: any Subscription) {
        lock.lock()
        upstreams.append(subscription)
        lock.unlock()
        subscription.request(.unlimited)
    }
}

/// One subscriber's subscription to a subject: its demand and whether it ended.
///
/// Calls into the subscriber are serialized, as Apple's subjects serialize them (one lock per
/// downstream): `send` from several threads at once delivers to each subscriber one value at
/// a time, and its completion after any value being delivered, never during it; no value
/// follows the completion. The lock is recursive, so a subscriber may send into the subject
/// (or request more) from inside its own `receive`, on the same thread. Two subscribers
/// that send into each other's subjects from their `receive` on two threads at once can
/// each wait for the other's lock, as with Apple's lock per downstream.
/// @unchecked Sendable: `demand`, `ended` and `owesLatest` are read and written only under
/// `lock`; the subscriber is called only under `downstreamLock`, never under `lock`.
final class SubjectSubscription<Output, Failure: Error>: Subscription, @unchecked Sendable {
    private let lock = NSLock()
    /// Held while the subscriber is called: its calls come one at a time.
    private let downstreamLock = NSRecursiveLock()
    private let subscriber: AnySubscriber<Output, Failure>
    private weak var core: SubjectCore<Output, Failure>?
    private var demand = Subscribers.Demand.none
    private var ended = false
    /// The subject's value now, for a subject that keeps one (nil once it is gone).
    private let latest: (() -> Output?)?
    /// Whether the subscriber is owed the subject's value (it has not had it, or missed a
    /// newer one for want of demand): sent at its next request.
    private var owesLatest: Bool

    init(_ subscriber: AnySubscriber<Output, Failure>, core: SubjectCore<Output, Failure>, latest: (() -> Output?)?) {
        self.subscriber = subscriber
        self.core = core
        self.latest = latest
        owesLatest = latest != nil
    }

    /// Takes the subscriber's lock before the subscription is published (``start()``
    /// releases it, on the same thread).
    func holdDownstream() { downstreamLock.lock() }

    /// Hands the subscriber its subscription, under the lock ``holdDownstream()`` took: a
    /// value or the completion sent meanwhile from another thread waits until it has it.
    func start() {
        defer { downstreamLock.unlock() }
        subscriber.receive(subscription: self)
    }

    func request(_ more: Subscribers.Demand) {
        guard more > .none else { return }
        lock.lock()
        guard !ended else { lock.unlock(); return }
        demand += more
        let owed = owesLatest ? latest : nil
        owesLatest = false
        lock.unlock()
        guard let owed else { return }
        // The subject's value is read under the subscriber's lock, so a newer one sent from
        // another thread meanwhile comes after it, never before.
        downstreamLock.lock()
        defer { downstreamLock.unlock() }
        if let value = owed() { offer(value) }
    }

    /// Delivers `value` if the subscriber wants one; adds what it asks for in return.
    func offer(_ value: Output) {
        downstreamLock.lock()
        defer { downstreamLock.unlock() }
        lock.lock()
        guard !ended else { lock.unlock(); return }
        guard demand > .none else {
            if latest != nil { owesLatest = true }
            lock.unlock()
            return
        }
        demand -= .max(1)
        lock.unlock()
        let more = subscriber.receive(value)
        guard more > .none else { return }
        lock.lock()
        if !ended { demand += more }
        lock.unlock()
    }

    func finish(_ completion: Subscribers.Completion<Failure>) {
        lock.lock()
        guard !ended else { lock.unlock(); return }
        ended = true
        lock.unlock()
        // After any value being delivered on another thread; an offer that comes after this
        // finds the subscription ended.
        downstreamLock.lock()
        defer { downstreamLock.unlock() }
        subscriber.receive(completion: completion)
    }

    func cancel() {
        lock.lock()
        guard !ended else { lock.unlock(); return }
        ended = true
        lock.unlock()
        core?.detach(self)
    }
}

/// A subject that passes each value to the subscribers of the moment, keeping none (Apple:
/// `PassthroughSubject`).
public final class PassthroughSubject<Output, Failure: Error>: Subject, @unchecked Sendable {
    // @unchecked Sendable: its state is its SubjectCore's, kept under that core's lock.
    private let core = SubjectCore<Output, Failure>()

    /// A subject with no subscriber.
    public init() {}

    public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
        core.attach(subscriber)
    }
    public func send(_ input: Output) { core.send(input) }
    public func send(completion: Subscribers.Completion<Failure>) { core.send(completion: completion) }
    public func send(subscription: any Subscription) { core.send(subscription: subscription) }
}

/// A subject that keeps its latest value and gives it to each new subscriber first (Apple:
/// `CurrentValueSubject`).
public final class CurrentValueSubject<Output, Failure: Error>: Subject, @unchecked Sendable {
    // @unchecked Sendable: `currentValue` is read and written under the core's lock; the rest
    // is the core's.
    private let core = SubjectCore<Output, Failure>()
    private var currentValue: Output

    /// A subject holding `value`.
    public init(_ value: Output) { currentValue = value }

    /// The latest value; setting it sends it.
    public var value: Output {
        get {
            core.lock.lock(); defer { core.lock.unlock() }
            return currentValue
        }
        set { send(newValue) }
    }

    public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
        core.attach(subscriber, latest: { [weak self] in self?.value })
    }

    /// Sends `input` and keeps it as the value (an ended subject keeps its last value).
    public func send(_ input: Output) {
        core.lock.lock()
        guard !core.hasCompletedLocked else { core.lock.unlock(); return }
        let replaced = currentValue
        currentValue = input
        core.lock.unlock()
        // The old value is released here, outside the lock: its deinit may cancel a
        // subscription to this subject.
        withExtendedLifetime(replaced) {}
        core.send(input)
    }
    public func send(completion: Subscribers.Completion<Failure>) { core.send(completion: completion) }
    public func send(subscription: any Subscription) { core.send(subscription: subscription) }
}
