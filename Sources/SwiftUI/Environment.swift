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
    // @unchecked: the custom values are the app's `EnvironmentKey.Value`s, written by the
    // app's main-actor code (scene and view modifiers); the process's copy is kept under a
    // mutex, and code elsewhere (a `.backgroundTask` action) reads copies of it, so a value
    // of a key must be safe to read from another thread, as SwiftUI's must be Sendable.
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
public struct Environment<Value>: DynamicProperty, HostResolvable {
    private let read: (HostEnvironment) -> Value?
    private let missing: () -> Value
    /// What the hosted view's evaluation resolved (a view's environment, docs/porting.md).
    private let resolved = ResolvedBox()

    /// Reads the environment's value at `keyPath`.
    public init(_ keyPath: KeyPath<EnvironmentValues, Value>) {
        read = { $0.values[keyPath: keyPath] }
        missing = { EnvironmentValues.current.withLock { $0 }[keyPath: keyPath] }
    }

    /// Reads the observable object of `objectType` an ancestor supplied with
    /// `.environment(_:)` (Apple, iOS 17).
    public init(_ objectType: Value.Type) where Value: AnyObject & Observable {
        read = { $0.objects[ObjectIdentifier(objectType)] as? Value }
        missing = { fatalError("No Observable object of type \(Value.self) found: supply it with .environment(_:) on the scene or an ancestor view") }
    }

    /// Reads the observable object of `objectType` an ancestor supplied, or `nil` (Apple's
    /// optional form, `@Environment(Model.self) var model: Model?`).
    public init<T: AnyObject & Observable>(_ objectType: T.Type) where Value == T? {
        read = { .some($0.objects[ObjectIdentifier(objectType)] as? T) }
        missing = { nil }
    }

    /// The value: in a shown view, its environment's; in the app, the app's (for
    /// `scenePhase`: the phase the body is being evaluated for).
    public var wrappedValue: Value {
        if let environment = resolved.environment, let value = read(environment) { return value }
        return missing()
    }

    func resolve(in environment: HostEnvironment) { resolved.environment = environment }
}

/// The environment a shown view's dynamic properties were resolved in.
final class ResolvedBox: @unchecked Sendable {
    // @unchecked: written and read on the main actor, where views are evaluated.
    var environment: HostEnvironment?
}

/// State a view or app owns (Apple: `@State`). Here nothing is drawn again when it
/// changes: it is a value kept across evaluations of the app's body.
@propertyWrapper
public struct State<Value>: DynamicProperty {
    // `@State` of a view is kept by its place in the shown window (StateSlots), as SwiftUI
    // keeps it by the view's identity, so evaluating the window again keeps it.
    private final class Storage {
        var value: Value
        init(_ value: Value) { self.value = value }
    }
    private let storage: Storage
    /// State starting at `wrappedValue` (in a shown view evaluated again, the state its
    /// place in the window already has: ``StateSlots``).
    public init(wrappedValue: Value) { storage = StateSlots.claim(Storage(wrappedValue)) }
    /// State starting at `value`.
    public init(initialValue value: Value) { storage = StateSlots.claim(Storage(value)) }
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
@propertyWrapper @dynamicMemberLookup
public struct Binding<Value> {
    private let get: () -> Value
    private let set: (Value) -> Void
    /// A binding reading and writing through the two closures.
    public init(get: @escaping () -> Value, set: @escaping (Value) -> Void) {
        self.get = get
        self.set = set
    }
    /// The binding a `$item` closure parameter is given (`ForEach($items) { $item in ... }`).
    public init(projectedValue: Binding<Value>) { self = projectedValue }
    /// A binding that always reads `value` and ignores writes.
    public static func constant(_ value: Value) -> Binding<Value> { Binding(get: { value }, set: { _ in }) }
    /// The value, read and written through the binding.
    public var wrappedValue: Value {
        get { get() }
        nonmutating set { set(newValue) }
    }
    /// The binding itself (`$binding`).
    public var projectedValue: Binding<Value> { self }
    /// A binding to the value's property at `keyPath` (`$item.isDone`).
    public subscript<Subject>(dynamicMember keyPath: WritableKeyPath<Value, Subject>) -> Binding<Subject> {
        let binding = self
        return Binding<Subject>(get: { binding.wrappedValue[keyPath: keyPath] }, set: { binding.wrappedValue[keyPath: keyPath] = $0 })
    }
}

/// Makes an app delegate for a SwiftUI app (Apple: `@UIApplicationDelegateAdaptor`): the
/// delegate is created with the app and is the application's delegate, so its
/// `didFinishLaunching` registers launch handlers as in a UIKit app.
@MainActor @propertyWrapper
public struct UIApplicationDelegateAdaptor<DelegateType: NSObject & UIApplicationDelegate>: DynamicProperty {
    /// The delegate.
    public let wrappedValue: DelegateType

    /// Creates the delegate (the first adaptor of the app's is the application's delegate),
    /// by its `init()`, as iOS does: `class AppDelegate: NSObject, UIApplicationDelegate` or
    /// `UIResponder` (``ObjectMaking``).
    public init(_ delegateType: DelegateType.Type = DelegateType.self) {
        wrappedValue = AppRuntime.adoptDelegate(ofType: delegateType)
    }

    /// The delegate (`$appDelegate`).
    public var projectedValue: DelegateType { wrappedValue }
}

extension EnvironmentValues {
    /// Opens URLs (Apple: `\.openURL`). No app opens another on Linux: the action says it
    /// did not.
    public var openURL: OpenURLAction { OpenURLAction() }
    /// Dismisses the presentation (Apple: `\.dismiss`): nothing is presented here.
    public var dismiss: DismissAction { DismissAction() }
    /// Opens a window (Apple: `\.openWindow`, iOS 16): a Linux app shows one scene, so no
    /// other window opens.
    public var openWindow: OpenWindowAction { OpenWindowAction() }
    /// Closes a window (Apple: `\.dismissWindow`, iOS 17): no other window is open.
    public var dismissWindow: DismissWindowAction { DismissWindowAction() }
    /// Whether the app may show several windows (Apple: `\.supportsMultipleWindows`):
    /// `false`, as on an iPhone.
    public var supportsMultipleWindows: Bool { false }
    /// The appearance (Apple: `\.colorScheme`): `.light` unless set, as nothing is shown.
    public var colorScheme: ColorScheme {
        get { self[ColorSchemeKey.self] }
        set { self[ColorSchemeKey.self] = newValue }
    }
}

private struct ColorSchemeKey: EnvironmentKey {
    static let defaultValue = ColorScheme.light
}

/// Opens a URL (Apple: `OpenURLAction`): never here.
public struct OpenURLAction: Sendable {
    /// Opens `url`: nothing opens it on Linux.
    public func callAsFunction(_ url: URL) {}
    /// Opens `url` and says whether it was: `false`.
    public func callAsFunction(_ url: URL, completion: @escaping (Bool) -> Void) { completion(false) }
}

/// Opens a window (Apple: `OpenWindowAction`): no window opens on Linux.
public struct OpenWindowAction: Sendable {
    /// Opens the window group with `id`: nothing opens.
    public func callAsFunction(id: String) {}
    /// Opens the window group for `value`: nothing opens.
    public func callAsFunction<D: Decodable & Encodable & Hashable>(value: D) {}
    /// Opens the window group with `id` for `value`: nothing opens.
    public func callAsFunction<D: Decodable & Encodable & Hashable>(id: String, value: D) {}
}

/// Closes a window (Apple: `DismissWindowAction`): none but the app's one is open.
public struct DismissWindowAction: Sendable {
    /// Closes the window the view is in: the app's one window stays.
    public func callAsFunction() {}
    /// Closes the window group with `id`: none is open.
    public func callAsFunction(id: String) {}
}

/// Dismisses a presentation (Apple: `DismissAction`): nothing is presented here.
public struct DismissAction: Sendable {
    /// Dismisses: nothing to dismiss.
    public func callAsFunction() {}
}

/// Bindings to the properties of an observable object (Apple: `@Bindable`, iOS 17).
@dynamicMemberLookup @propertyWrapper
public struct Bindable<Value: AnyObject & Observable> {
    /// The object.
    public var wrappedValue: Value
    /// Bindings to `wrappedValue`'s properties.
    public init(wrappedValue: Value) { self.wrappedValue = wrappedValue }
    /// Bindings to `object`'s properties.
    public init(_ object: Value) { wrappedValue = object }
    /// `$model`.
    public var projectedValue: Bindable<Value> { self }
    /// A binding to the property at `keyPath`.
    public subscript<Subject>(dynamicMember keyPath: ReferenceWritableKeyPath<Value, Subject>) -> Binding<Subject> {
        let object = wrappedValue
        return Binding(get: { object[keyPath: keyPath] }, set: { object[keyPath: keyPath] = $0 })
    }
}

/// A value kept in the user defaults (Apple: `@AppStorage`): read from and written to
/// `UserDefaults.standard` (or `store`) under `key`, so it lasts between launches.
@propertyWrapper
public struct AppStorage<Value>: DynamicProperty {
    private let key: String
    private let defaultValue: Value
    private let store: UserDefaults
    private let read: (Any) -> Value?
    /// The value to store; `nil` removes the key (an optional value set to `nil`).
    private let write: (Value) -> Any?

    private init(key: String, defaultValue: Value, store: UserDefaults?, read: @escaping (Any) -> Value?, write: @escaping (Value) -> Any?) {
        self.key = key
        self.defaultValue = defaultValue
        self.store = store ?? .standard
        self.read = read
        self.write = write
    }

    /// The stored value, or the default.
    public var wrappedValue: Value {
        get { store.object(forKey: key).flatMap(read) ?? defaultValue }
        nonmutating set { store.set(write(newValue), forKey: key) }
    }
    /// A binding to the stored value.
    public var projectedValue: Binding<Value> {
        let storage = self
        return Binding(get: { storage.wrappedValue }, set: { storage.wrappedValue = $0 })
    }
}

extension AppStorage {
    /// A Boolean under `key`.
    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value == Bool {
        self.init(key: key, defaultValue: wrappedValue, store: store, read: { $0 as? Bool }, write: { $0 })
    }
    /// An integer under `key`.
    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value == Int {
        self.init(key: key, defaultValue: wrappedValue, store: store, read: { $0 as? Int }, write: { $0 })
    }
    /// A number under `key`.
    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value == Double {
        self.init(key: key, defaultValue: wrappedValue, store: store, read: { $0 as? Double }, write: { $0 })
    }
    /// A string under `key`.
    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value == String {
        self.init(key: key, defaultValue: wrappedValue, store: store, read: { $0 as? String }, write: { $0 })
    }
    /// A URL under `key`.
    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value == URL {
        self.init(key: key, defaultValue: wrappedValue, store: store, read: { ($0 as? String).flatMap(URL.init(string:)) }, write: { $0.absoluteString })
    }
    /// Data under `key`.
    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value == Data {
        self.init(key: key, defaultValue: wrappedValue, store: store, read: { $0 as? Data }, write: { $0 })
    }
    /// A date under `key` (as `UserDefaults.set(_:forKey:)` keeps a date).
    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value == Date {
        self.init(key: key, defaultValue: wrappedValue, store: store, read: { $0 as? Date }, write: { $0 })
    }
    /// An enumeration's raw string under `key`.
    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value: RawRepresentable, Value.RawValue == String {
        self.init(key: key, defaultValue: wrappedValue, store: store, read: { ($0 as? String).flatMap(Value.init(rawValue:)) }, write: { $0.rawValue })
    }
    /// An enumeration's raw integer under `key`.
    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value: RawRepresentable, Value.RawValue == Int {
        self.init(key: key, defaultValue: wrappedValue, store: store, read: { ($0 as? Int).flatMap(Value.init(rawValue:)) }, write: { $0.rawValue })
    }
}

extension AppStorage where Value: ExpressibleByNilLiteral {
    /// An optional Boolean under `key`: `nil` until set; setting `nil` removes it.
    public init(_ key: String, store: UserDefaults? = nil) where Value == Bool? {
        self.init(key: key, defaultValue: nil, store: store, read: { ($0 as? Bool).map(Optional.some) }, write: { $0 })
    }
    /// An optional integer under `key`.
    public init(_ key: String, store: UserDefaults? = nil) where Value == Int? {
        self.init(key: key, defaultValue: nil, store: store, read: { ($0 as? Int).map(Optional.some) }, write: { $0 })
    }
    /// An optional number under `key`.
    public init(_ key: String, store: UserDefaults? = nil) where Value == Double? {
        self.init(key: key, defaultValue: nil, store: store, read: { ($0 as? Double).map(Optional.some) }, write: { $0 })
    }
    /// An optional string under `key`.
    public init(_ key: String, store: UserDefaults? = nil) where Value == String? {
        self.init(key: key, defaultValue: nil, store: store, read: { ($0 as? String).map(Optional.some) }, write: { $0 })
    }
    /// An optional URL under `key`.
    public init(_ key: String, store: UserDefaults? = nil) where Value == URL? {
        self.init(key: key, defaultValue: nil, store: store, read: { ($0 as? String).flatMap(URL.init(string:)).map(Optional.some) },
                  write: { $0?.absoluteString })
    }
    /// Optional data under `key`.
    public init(_ key: String, store: UserDefaults? = nil) where Value == Data? {
        self.init(key: key, defaultValue: nil, store: store, read: { ($0 as? Data).map(Optional.some) }, write: { $0 })
    }
    /// An optional date under `key`.
    public init(_ key: String, store: UserDefaults? = nil) where Value == Date? {
        self.init(key: key, defaultValue: nil, store: store, read: { ($0 as? Date).map(Optional.some) }, write: { $0 })
    }
    /// An optional enumeration's raw string under `key`.
    public init<R>(_ key: String, store: UserDefaults? = nil) where Value == R?, R: RawRepresentable, R.RawValue == String {
        self.init(key: key, defaultValue: nil, store: store, read: { ($0 as? String).flatMap(R.init(rawValue:)).map(Optional.some) },
                  write: { $0?.rawValue })
    }
    /// An optional enumeration's raw integer under `key`.
    public init<R>(_ key: String, store: UserDefaults? = nil) where Value == R?, R: RawRepresentable, R.RawValue == Int {
        self.init(key: key, defaultValue: nil, store: store, read: { ($0 as? Int).flatMap(R.init(rawValue:)).map(Optional.some) },
                  write: { $0?.rawValue })
    }
}

/// A value a scene keeps for its restoration (Apple: `@SceneStorage`). Linux restores no
/// scenes: the value lives as long as the process.
@propertyWrapper
public struct SceneStorage<Value>: DynamicProperty {
    private let state: State<Value>
    /// A value under `key`, starting at `wrappedValue`.
    public init(wrappedValue: Value, _ key: String) { state = State(wrappedValue: wrappedValue) }
    /// The value.
    public var wrappedValue: Value {
        get { state.wrappedValue }
        nonmutating set { state.wrappedValue = newValue }
    }
    /// A binding to the value.
    public var projectedValue: Binding<Value> { state.projectedValue }
}

/// Which control has the focus (Apple: `@FocusState`): none does on Linux.
@propertyWrapper
public struct FocusState<Value: Hashable>: DynamicProperty {
    /// A binding of focus (`$focus`, for `.focused(_:)`).
    @propertyWrapper
    public struct Binding {
        let state: State<Value>
        /// The focused value.
        public var wrappedValue: Value {
            get { state.wrappedValue }
            nonmutating set { state.wrappedValue = newValue }
        }
        /// The binding itself.
        public var projectedValue: Binding { self }
    }
    private let state: State<Value>
    /// No focus (`false`).
    public init() where Value == Bool { state = State(wrappedValue: false) }
    /// No focus (`nil`).
    public init<T: Hashable>() where Value == T? { state = State(wrappedValue: nil) }
    /// The focused value.
    public var wrappedValue: Value {
        get { state.wrappedValue }
        nonmutating set { state.wrappedValue = newValue }
    }
    /// The binding for `.focused(_:)`.
    public var projectedValue: Binding { Binding(state: state) }
}

/// Previews for Xcode's canvas (Apple: `PreviewProvider`): nothing shows them on Linux.
@MainActor @preconcurrency
public protocol PreviewProvider {
    /// The previews.
    associatedtype Previews: View
    /// The previews.
    @ViewBuilder static var previews: Previews { get }
}
