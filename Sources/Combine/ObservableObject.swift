// Combine's observable-object vocabulary (Apple: `ObservableObject`,
// `ObservableObjectPublisher`, `@Published`), which SwiftUI models and many app services
// use: `@Published var items` publishes each new value to `$items` subscribers, and its
// owner's `objectWillChange` fires before every change.
import Foundation

/// The publisher of an observable object's coming changes (Apple: `ObservableObjectPublisher`).
public final class ObservableObjectPublisher: Publisher, @unchecked Sendable {
    // @unchecked Sendable: its state is the subject's, which is thread-safe.
    public typealias Output = Void
    public typealias Failure = Never
    private let subject = PassthroughSubject<Void, Never>()

    /// A publisher.
    public init() {}
    public func receive<S: Subscriber>(subscriber: S) where S.Input == Void, S.Failure == Never {
        subject.subscribe(subscriber)
    }
    /// Announces a change to the subscribers.
    public func send() { subject.send(()) }
}

/// An object whose changes can be followed (Apple: `ObservableObject`).
public protocol ObservableObject: AnyObject {
    /// The publisher of its coming changes.
    associatedtype ObjectWillChangePublisher: Publisher = ObservableObjectPublisher where ObjectWillChangePublisher.Failure == Never
    /// Fires before the object changes (its `@Published` properties fire it).
    var objectWillChange: ObjectWillChangePublisher { get }
}

extension ObservableObject where ObjectWillChangePublisher == ObservableObjectPublisher {
    /// The object's own publisher, made when first asked for (Apple synthesizes it).
    public var objectWillChange: ObservableObjectPublisher { ObjectWillChangeRegistry.shared.publisher(for: self) }
}

/// The `objectWillChange` publishers of objects that do not declare their own: one per live
/// object, found by identity; entries of released objects are dropped as the table grows.
/// @unchecked Sendable: `entries` is read and written only under `lock`.
final class ObjectWillChangeRegistry: @unchecked Sendable {
    static let shared = ObjectWillChangeRegistry()
    private struct Entry {
        weak var object: AnyObject?
        let publisher: ObservableObjectPublisher
    }
    private let lock = NSLock()
    private var entries: [ObjectIdentifier: Entry] = [:]
    private var pruneAt = 64

    func publisher(for object: AnyObject) -> ObservableObjectPublisher {
        let key = ObjectIdentifier(object)
        var dropped: [ObjectIdentifier: Entry] = [:]
        lock.lock()
        if let entry = entries[key], entry.object === object {
            lock.unlock()
            return entry.publisher
        }
        if entries.count >= pruneAt {
            dropped = entries
            entries = entries.filter { $0.value.object != nil }
            pruneAt = max(64, entries.count * 2)
        }
        let publisher = ObservableObjectPublisher()
        let replaced = entries.updateValue(Entry(object: object, publisher: publisher), forKey: key)
        lock.unlock()
        // Released here, outside the lock: a publisher's subscribers may be app closures.
        withExtendedLifetime((dropped, replaced)) {}
        return publisher
    }

    /// The publisher of `object` if one was made (a change nobody follows makes none).
    func existingPublisher(for object: AnyObject) -> ObservableObjectPublisher? {
        lock.lock(); defer { lock.unlock() }
        guard let entry = entries[ObjectIdentifier(object)], entry.object === object else { return nil }
        return entry.publisher
    }
}

/// The value of a `@Published` property, its subscribers and its owner (the object whose
/// `objectWillChange` fires before each change, known once the property was used through
/// it). @unchecked Sendable: `value`, `owner` and `kept` are read and written only under
/// `core.lock`; subscribers are called outside it.
final class PublishedStorage<Value>: @unchecked Sendable {
    private let core = SubjectCore<Value, Never>()
    private var value: Value
    private weak var owner: AnyObject?
    private var kept: [AnyCancellable] = []

    init(_ value: Value) { self.value = value }

    /// The value now.
    var current: Value {
        core.lock.lock(); defer { core.lock.unlock() }
        return value
    }

    /// Remembers the object the property belongs to.
    func adopt(_ object: AnyObject) {
        core.lock.lock(); defer { core.lock.unlock() }
        if owner == nil { owner = object }
    }

    /// Sets the value as Apple's `willSet` publishes: the owner's `objectWillChange` first,
    /// then the property's subscribers (the old value still stored), then the store.
    func set(_ newValue: Value) {
        core.lock.lock()
        let owner = self.owner
        core.lock.unlock()
        if let owner { ObjectWillChangeRegistry.shared.existingPublisher(for: owner)?.send() }
        core.send(newValue)
        core.lock.lock()
        let replaced = value
        value = newValue
        core.lock.unlock()
        // The old value is released here, outside the lock: its deinit may cancel a
        // subscription to this property.
        withExtendedLifetime(replaced) {}
    }

    /// Subscribes `subscriber`: the value now when it first asks, then every value set.
    func subscribe<S: Subscriber>(_ subscriber: S) where S.Input == Value, S.Failure == Never {
        core.attach(subscriber, latest: { [weak self] in self?.current })
    }

    /// Keeps `subscription` for as long as this storage lives (`assign(to:)`).
    func keep(_ subscription: AnyCancellable) {
        core.lock.lock()
        kept.append(subscription)
        core.lock.unlock()
    }
}

/// A property of an observable object that publishes each new value (Apple: `@Published`):
/// `$property` is a publisher of the current value, then of every value set (sent before
/// the property changes, as Apple's `willSet`); setting it fires the owner's
/// `objectWillChange` first. Only on properties of classes, as on iOS.
@propertyWrapper
public struct Published<Value> {
    private var storage: PublishedStorage<Value>

    /// A published property starting at `wrappedValue`.
    public init(wrappedValue: Value) { storage = PublishedStorage(wrappedValue) }
    /// A published property starting at `initialValue`.
    public init(initialValue: Value) { self.init(wrappedValue: initialValue) }

    /// Use on a property of a class.
    @available(*, unavailable, message: "@Published is only available on properties of classes")
    public var wrappedValue: Value {
        get { fatalError("@Published is only available on properties of classes") }
        set { fatalError("@Published is only available on properties of classes") }
    }

    /// The property's publisher (`$property`).
    public var projectedValue: Publisher {
        get { Publisher(storage: storage) }
        set { storage = newValue.storage }
    }

    /// The value of the property of `object`: setting it fires `objectWillChange`, then the
    /// property's subscribers, then stores it.
    public static subscript<EnclosingSelf: AnyObject>(
        _enclosingInstance object: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Published<Value>>
    ) -> Value {
        get { object[keyPath: storageKeyPath].storage.current }
        set {
            let storage = object[keyPath: storageKeyPath].storage
            storage.adopt(object)
            storage.set(newValue)
        }
    }

    /// The property's publisher (`$property`) on `object`: values set through it
    /// (`assign(to: &$property)`) fire `objectWillChange` too.
    public static subscript<EnclosingSelf: AnyObject>(
        _enclosingInstance object: EnclosingSelf,
        projected wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Publisher>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Published<Value>>
    ) -> Publisher {
        get {
            let storage = object[keyPath: storageKeyPath].storage
            storage.adopt(object)
            return Publisher(storage: storage)
        }
        set {
            newValue.storage.adopt(object)
            object[keyPath: storageKeyPath].storage = newValue.storage
        }
    }

    /// The publisher of a `@Published` property (Apple: `Published.Publisher`): the current
    /// value first, then every value set.
    public struct Publisher: Combine.Publisher {
        public typealias Output = Value
        public typealias Failure = Never
        fileprivate var storage: PublishedStorage<Value>

        fileprivate init(storage: PublishedStorage<Value>) { self.storage = storage }

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Value, S.Failure == Never {
            storage.subscribe(subscriber)
        }

        /// Sends every value of `upstream` into the property (`assign(to: &$property)`),
        /// for as long as the property's storage lives.
        mutating func attach<P: Combine.Publisher>(_ upstream: P) where P.Output == Value, P.Failure == Never {
            let storage = self.storage
            storage.keep(upstream.sink { [weak storage] in storage?.set($0) })
        }
    }
}
