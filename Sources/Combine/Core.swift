// Combine's core (Apple: the Combine framework, iOS 13), which Linux's toolchain lacks: the
// publisher and subscriber protocols, demand, completion and cancellation. Apple's
// Foundation re-exports Combine, so BackgroundTasks re-exports this module
// (docs/porting.md, "Combine"). Values are delivered synchronously on the thread that sends
// them, as Apple's Combine does; `receive(on:)` moves them (Schedulers.swift). Every class
// here that holds state keeps it under its own lock and calls subscribers (app code) only
// after releasing it.
import Foundation

/// A type that can cancel an activity (Apple: `Cancellable`).
public protocol Cancellable {
    /// Cancels the activity; calling it again does nothing.
    func cancel()
}

/// A unique identity for a subscription or subscriber (Apple: `CombineIdentifier`).
public struct CombineIdentifier: Hashable, Sendable, CustomStringConvertible {
    private let value: UInt64
    /// The last identifier made; above any address an object can have.
    private static let counter = Held<UInt64>(1 << 62)

    /// A new unique identifier.
    public init() { value = Self.counter.update { $0 += 1; return $0 } }
    /// The identifier of `object`.
    public init(_ object: AnyObject) { value = UInt64(UInt(bitPattern: ObjectIdentifier(object))) }
    /// The identifier, in hexadecimal.
    public var description: String { "0x" + String(value, radix: 16) }
}

/// A value shared by the closures of one subscription (or one type), read and changed
/// under its own lock: the small state of operators and publishers. @unchecked Sendable:
/// `stored` is read and written only under `lock`, and `update`'s body must not call out
/// (app code runs after it returns).
final class Held<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    /// Reads or changes the value under the lock.
    func update<R>(_ body: (inout Value) -> R) -> R {
        lock.lock(); defer { lock.unlock() }
        return body(&stored)
    }
    /// The value now.
    var value: Value { update { $0 } }
}

/// A type with a `CombineIdentifier` (Apple: `CustomCombineIdentifierConvertible`).
public protocol CustomCombineIdentifierConvertible {
    /// The identifier.
    var combineIdentifier: CombineIdentifier { get }
}

extension CustomCombineIdentifierConvertible where Self: AnyObject {
    /// The object's identity.
    public var combineIdentifier: CombineIdentifier { CombineIdentifier(self) }
}

/// A link between a publisher and one subscriber (Apple: `Subscription`): the subscriber
/// asks for values through it and cancels it.
public protocol Subscription: Cancellable, CustomCombineIdentifierConvertible {
    /// Asks for `demand` more values.
    func request(_ demand: Subscribers.Demand)
}

/// A type that receives values and a completion from a publisher (Apple: `Subscriber`).
public protocol Subscriber<Input, Failure>: CustomCombineIdentifierConvertible {
    /// The values it receives.
    associatedtype Input
    /// The error it may receive.
    associatedtype Failure: Error
    /// The publisher subscribed it: ask for values through `subscription`.
    func receive(subscription: any Subscription)
    /// A value; returns how many more values it wants (added to what it asked for).
    func receive(_ input: Input) -> Subscribers.Demand
    /// The end: finished or failed. No value follows.
    func receive(completion: Subscribers.Completion<Failure>)
}

extension Subscriber where Input == Void {
    /// Receives the empty value.
    public func receive() -> Subscribers.Demand { receive(()) }
}

/// A type that sends values over time to its subscribers (Apple: `Publisher`).
public protocol Publisher<Output, Failure> {
    /// The values it sends.
    associatedtype Output
    /// The error it may end with (`Never`: it never fails).
    associatedtype Failure: Error
    /// Attaches `subscriber`: it gets a subscription, then values as it asks for them.
    func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure
}

extension Publisher {
    /// Attaches `subscriber` (Apple's name for ``receive(subscriber:)`` at the call site).
    public func subscribe<S: Subscriber>(_ subscriber: S) where S.Input == Output, S.Failure == Failure {
        receive(subscriber: subscriber)
    }
}

/// Namespace of the subscribers (Apple: `Subscribers`).
public enum Subscribers {}

/// Namespace of the publishers (Apple: `Publishers`).
public enum Publishers {}

/// Namespace of subscriptions (Apple: `Subscriptions`).
public enum Subscriptions {
    /// A subscription that does nothing, for publishers that complete at once.
    public static var empty: any Subscription { EmptySubscription() }
}

private final class EmptySubscription: Subscription {
    func request(_ demand: Subscribers.Demand) {}
    func cancel() {}
}

extension Subscribers {
    /// How a publisher ended (Apple: `Subscribers.Completion`).
    public enum Completion<Failure: Error> {
        /// It sent everything.
        case finished
        /// It failed with an error.
        case failure(Failure)
    }

    /// How many values a subscriber wants (Apple: `Subscribers.Demand`): a number, or
    /// `unlimited`. Adding to `unlimited` stays `unlimited`; subtracting never goes below 0.
    public struct Demand: Hashable, Comparable, Sendable, CustomStringConvertible {
        /// `nil`: unlimited.
        private let count: Int?

        private init(count: Int?) { self.count = count }

        /// Every value.
        public static let unlimited = Demand(count: nil)
        /// No value.
        public static let none = Demand(count: 0)
        /// At most `value` values (a negative number means none).
        public static func max(_ value: Int) -> Demand { Demand(count: Swift.max(0, value)) }

        /// The number, `nil` when unlimited.
        public var max: Int? { count }

        /// The sum (saturating at unlimited).
        public static func + (lhs: Demand, rhs: Demand) -> Demand {
            guard let a = lhs.count, let b = rhs.count else { return .unlimited }
            let (sum, overflow) = a.addingReportingOverflow(b)
            return overflow ? .unlimited : Demand(count: sum)
        }
        /// Adds to `lhs`.
        public static func += (lhs: inout Demand, rhs: Demand) { lhs = lhs + rhs }
        /// The difference, never below none; unlimited stays unlimited.
        public static func - (lhs: Demand, rhs: Demand) -> Demand {
            guard let a = lhs.count else { return .unlimited }
            guard let b = rhs.count else { return .none }
            return .max(a - b)
        }
        /// Subtracts from `lhs`.
        public static func -= (lhs: inout Demand, rhs: Demand) { lhs = lhs - rhs }
        /// Unlimited is more than any number.
        public static func < (lhs: Demand, rhs: Demand) -> Bool {
            switch (lhs.count, rhs.count) {
            case (nil, _): return false
            case (_, nil): return true
            case (let a?, let b?): return a < b
            }
        }
        /// `unlimited` or `max(n)`.
        public var description: String { count.map { "max(\($0))" } ?? "unlimited" }
    }
}

extension Subscribers.Completion: Equatable where Failure: Equatable {}
extension Subscribers.Completion: Hashable where Failure: Hashable {}
extension Subscribers.Completion: Sendable where Failure: Sendable {}

/// A cancellable that cancels when it is released (Apple: `AnyCancellable`): keep it (in a
/// `Set<AnyCancellable>` with ``store(in:)-(inout Set<AnyCancellable>)``) for as long as the
/// subscription should live.
public final class AnyCancellable: Cancellable, Hashable, @unchecked Sendable {
    // @unchecked Sendable: `cancelAction` is taken and cleared under `lock`, and run after.
    private let lock = NSLock()
    private var cancelAction: (() -> Void)?

    /// Runs `cancel` when cancelled or released.
    public init(_ cancel: @escaping () -> Void) { cancelAction = cancel }
    /// Cancels `canceller` when cancelled or released.
    public init<C: Cancellable>(_ canceller: C) { cancelAction = canceller.cancel }

    deinit { cancel() }

    /// Cancels, once.
    public func cancel() {
        lock.lock()
        let action = cancelAction
        cancelAction = nil
        lock.unlock()
        action?()
    }

    /// Keeps it in `set`.
    public func store(in set: inout Set<AnyCancellable>) { set.insert(self) }
    /// Keeps it in `collection`.
    public func store<C: RangeReplaceableCollection>(in collection: inout C) where C.Element == AnyCancellable {
        collection.append(self)
    }

    /// Identity.
    public static func == (lhs: AnyCancellable, rhs: AnyCancellable) -> Bool { lhs === rhs }
    /// Identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

extension Cancellable {
    /// Keeps it, as an ``AnyCancellable``, in `set`.
    public func store(in set: inout Set<AnyCancellable>) { AnyCancellable(self).store(in: &set) }
    /// Keeps it, as an ``AnyCancellable``, in `collection`.
    public func store<C: RangeReplaceableCollection>(in collection: inout C) where C.Element == AnyCancellable {
        AnyCancellable(self).store(in: &collection)
    }
}

/// A subscriber of erased type (Apple: `AnySubscriber`).
public struct AnySubscriber<Input, Failure: Error>: Subscriber {
    private let receiveSubscription: (any Subscription) -> Void
    private let receiveValue: (Input) -> Subscribers.Demand
    private let receiveCompletion: (Subscribers.Completion<Failure>) -> Void
    /// The wrapped subscriber's identity.
    public let combineIdentifier: CombineIdentifier

    /// Wraps `subscriber`.
    public init<S: Subscriber>(_ subscriber: S) where S.Input == Input, S.Failure == Failure {
        receiveSubscription = subscriber.receive(subscription:)
        receiveValue = subscriber.receive(_:)
        receiveCompletion = subscriber.receive(completion:)
        combineIdentifier = subscriber.combineIdentifier
    }

    /// A subscriber of three closures.
    public init(receiveSubscription: ((any Subscription) -> Void)? = nil,
                receiveValue: ((Input) -> Subscribers.Demand)? = nil,
                receiveCompletion: ((Subscribers.Completion<Failure>) -> Void)? = nil) {
        self.receiveSubscription = receiveSubscription ?? { _ in }
        self.receiveValue = receiveValue ?? { _ in .none }
        self.receiveCompletion = receiveCompletion ?? { _ in }
        combineIdentifier = CombineIdentifier()
    }

    public func receive(subscription: any Subscription) { receiveSubscription(subscription) }
    public func receive(_ input: Input) -> Subscribers.Demand { receiveValue(input) }
    public func receive(completion: Subscribers.Completion<Failure>) { receiveCompletion(completion) }
}
