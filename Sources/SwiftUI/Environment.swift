import Synchronization

/// Whether a scene is in the foreground and active (Apple: `ScenePhase`), read with
/// `@Environment(\.scenePhase)`. Here the app's one scene follows the application's
/// state: active, inactive (launching, or between foreground and background), background
/// (suspended too).
public enum ScenePhase: Comparable, Hashable, Sendable {
    /// Not shown: the app is in the background.
    case background
    /// Shown but not receiving events.
    case inactive
    /// In the foreground, receiving events.
    case active
}

/// The values a view or scene reads from its environment (Apple: `EnvironmentValues`):
/// here the scene phase, and values of the app's own keys.
public struct EnvironmentValues: @unchecked Sendable {
    // @unchecked: the custom values are the app's `EnvironmentKey.Value`s, read and written
    // by the app's main-actor code only; the process's copy is kept under a mutex.
    /// The phase of the app's scene.
    public var scenePhase: ScenePhase = .inactive
    private var custom: [ObjectIdentifier: Any] = [:]

    /// The environment with its default values.
    public init() {}

    /// The value of an app-defined key (its default until set).
    public subscript<K: EnvironmentKey>(key: K.Type) -> K.Value {
        get { custom[ObjectIdentifier(key)] as? K.Value ?? K.defaultValue }
        set { custom[ObjectIdentifier(key)] = newValue }
    }

    /// The environment the app's body is evaluated in.
    static let current = Mutex(EnvironmentValues())
}

/// A key for a value of the environment that the app defines (Apple: `EnvironmentKey`).
public protocol EnvironmentKey {
    /// The key's value type.
    associatedtype Value
    /// The value when nobody set one.
    static var defaultValue: Value { get }
}

/// Marks the property wrappers SwiftUI updates (Apple: `DynamicProperty`).
public protocol DynamicProperty {}

/// Reads a value of the environment (Apple: `@Environment(\.scenePhase)`).
@propertyWrapper
public struct Environment<Value>: DynamicProperty {
    private let keyPath: KeyPath<EnvironmentValues, Value>
    /// Reads the environment's value at `keyPath`.
    public init(_ keyPath: KeyPath<EnvironmentValues, Value>) { self.keyPath = keyPath }
    /// The value now (for `scenePhase`: the phase the app's body is being evaluated for).
    public var wrappedValue: Value {
        let values = EnvironmentValues.current.withLock { $0 }
        return values[keyPath: keyPath]
    }
}

/// State a view or app owns (Apple: `@State`). Here nothing is drawn again when it
/// changes: it is a value kept across evaluations of the app's body.
@propertyWrapper
public struct State<Value>: DynamicProperty {
    private final class Storage {
        var value: Value
        init(_ value: Value) { self.value = value }
    }
    private let storage: Storage
    /// State starting at `wrappedValue`.
    public init(wrappedValue: Value) { storage = Storage(wrappedValue) }
    /// State starting at `value`.
    public init(initialValue value: Value) { storage = Storage(value) }
    /// The current value.
    public var wrappedValue: Value {
        get { storage.value }
        nonmutating set { storage.value = newValue }
    }
    /// A binding to the value (`$state`).
    public var projectedValue: Binding<Value> {
        let storage = storage
        return Binding(get: { storage.value }, set: { storage.value = $0 })
    }
}

extension State where Value: ExpressibleByNilLiteral {
    /// State starting at `nil`.
    public init() { self.init(wrappedValue: nil) }
}

/// A reference to a value owned elsewhere (Apple: `Binding`).
@propertyWrapper
public struct Binding<Value> {
    private let get: () -> Value
    private let set: (Value) -> Void
    /// A binding reading and writing through the two closures.
    public init(get: @escaping () -> Value, set: @escaping (Value) -> Void) {
        self.get = get
        self.set = set
    }
    /// A binding that always reads `value` and ignores writes.
    public static func constant(_ value: Value) -> Binding<Value> { Binding(get: { value }, set: { _ in }) }
    /// The value, read and written through the binding.
    public var wrappedValue: Value {
        get { get() }
        nonmutating set { set(newValue) }
    }
    /// The binding itself (`$binding`).
    public var projectedValue: Binding<Value> { self }
}

/// Makes an app delegate for a SwiftUI app (Apple: `@UIApplicationDelegateAdaptor`): the
/// delegate is created with the app and is the application's delegate, so its
/// `didFinishLaunching` registers launch handlers as in a UIKit app.
@MainActor @propertyWrapper
public struct UIApplicationDelegateAdaptor<DelegateType: UIResponder & UIApplicationDelegate>: DynamicProperty {
    /// The delegate.
    public let wrappedValue: DelegateType
    /// Creates the delegate (the first adaptor of the app's is the application's delegate).
    public init(_ delegateType: DelegateType.Type = DelegateType.self) {
        wrappedValue = AppRuntime.adoptDelegate(ofType: delegateType)
    }
    /// The delegate (`$appDelegate`).
    public var projectedValue: DelegateType { wrappedValue }
}
