import Foundation
import Synchronization

// The app's window shown without a screen (docs/porting.md, "A SwiftUI app"): when the user
// opens the app, the content of its first `WindowGroup` is shown, which here means that the
// view tree is evaluated (each view's `body`, with its `@Environment` and `@EnvironmentObject`
// resolved), the `.onAppear` actions run and the `.task` actions start; at each change of the
// scene phase the tree is evaluated again, the `.onChange(of:)` of views whose value changed
// are called, views that came run `.onAppear` (and start their tasks), views that went run
// `.onDisappear` (and their tasks are cancelled). Nothing is drawn and nobody taps.

/// The environment a shown view is evaluated in: the values (with the app's own keys) and the
/// objects supplied by `.environmentObject(_:)` and `.environment(_:)`.
struct HostEnvironment {
    var values: EnvironmentValues
    var objects: [ObjectIdentifier: AnyObject] = [:]
}

extension HostEnvironment {
    /// Supplies `object` as the environment object of its type.
    static func supplying<T: AnyObject>(_ object: T?) -> (inout HostEnvironment) -> Void {
        { $0.objects[ObjectIdentifier(T.self)] = object }
    }
    /// Sets the value at `keyPath`.
    static func supplying<V>(_ keyPath: WritableKeyPath<EnvironmentValues, V>, _ value: V) -> (inout HostEnvironment) -> Void {
        { $0.values[keyPath: keyPath] = value }
    }
}

/// A dynamic property resolved before a shown view's body is evaluated.
protocol HostResolvable {
    func resolve(in environment: HostEnvironment)
}

/// A view that tells the walk something (an action, an environment), then its content.
@MainActor
protocol HostedModifier {
    func host(in walk: inout ViewWalk, path: String)
}

/// A `ForEach`: the views of its elements.
@MainActor
protocol ElementViews {
    /// Each element's identifier (as text) and view, the first `limit`, each view made with
    /// `place`/identifier as the place of its state.
    func elementViews(limit: Int, at place: String) -> [(String, any View)]
}

/// One evaluation of the shown view tree: what its views ask for, by path.
@MainActor
struct ViewWalk {
    /// The most views one evaluation reads (a list of thousands of rows is read in part).
    static let viewLimit = 20_000

    var environment: HostEnvironment
    var changes: [(path: String, change: any AnyObservedChange)] = []
    var appears: [(path: String, action: () -> Void)] = []
    var disappears: [String: () -> Void] = [:]
    var tasks: [(path: String, priority: TaskPriority, action: @Sendable () async -> Void, id: AnyEquatable?)] = []
    /// Every path that holds a view with `.onAppear`, `.onDisappear` or `.task`.
    var lifecyclePaths: Set<String> = []
    private var budget = ViewWalk.viewLimit

    init(environment: HostEnvironment) { self.environment = environment }

    mutating func walk(_ view: any View, path: String) {
        guard budget > 0 else { return }
        budget -= 1
        if let hosted = view as? any HostedModifier {
            hosted.host(in: &self, path: path)
        } else if let elements = view as? any ElementViews {
            // Rows are known by their identifier, and their views keep state by it.
            for (identifier, child) in elements.elementViews(limit: budget, at: path) { walk(child, path: path + "/" + identifier) }
        } else if view is any PrimitiveView {
            for (index, child) in Mirror(reflecting: view).children.enumerated() { walkStored(child.value, path: path + "/" + (child.label ?? "\(index)")) }
        } else {
            // A view of the app's: its dynamic properties see this environment, then its body.
            Self.resolveProperties(of: view, in: environment, depth: 0)
            // The views its body makes keep their state by this place.
            let placed = path + "/" + String(describing: type(of: view))
            let body = StateSlots.evaluating(at: placed) { Self.body(of: view) }
            walk(body, path: placed)
        }
    }

    /// A value a primitive view stores: a view, or tuples, enums and optionals of views.
    private mutating func walkStored(_ value: Any, path: String) {
        if let view = value as? any View {
            walk(view, path: path)
            return
        }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .tuple?, .enum?, .optional?:
            for (index, child) in mirror.children.enumerated() { walkStored(child.value, path: path + "/" + (child.label ?? "\(index)")) }
        default: break
        }
    }

    private static func body<V: View>(of view: V) -> any View { view.body }

    /// Resolves the `@Environment` and `@EnvironmentObject` of `value`'s stored properties,
    /// and of the app's own `DynamicProperty` types among them (a few levels deep).
    static func resolveProperties(of value: Any, in environment: HostEnvironment, depth: Int) {
        for child in Mirror(reflecting: value).children {
            if let resolvable = child.value as? any HostResolvable {
                resolvable.resolve(in: environment)
            } else if depth < 4, child.value is any DynamicProperty {
                resolveProperties(of: child.value, in: environment, depth: depth + 1)
            }
        }
    }
}

/// What the shown tree asked for at its last evaluation, and the tasks it started.
@MainActor
final class ShownWindow {
    private let content: () -> any View
    private let environment: () -> HostEnvironment
    private var changes: [String: any AnyObservedChange] = [:]
    private var disappears: [String: () -> Void] = [:]
    private var lifecyclePaths: Set<String> = []
    private var running: [String: Task<Void, Never>] = [:]
    private var taskIDs: [String: AnyEquatable?] = [:]
    /// The `@State` and `@StateObject` of the window's views, by place.
    private let state = StateStore()

    init(content: @escaping () -> any View, environment: @escaping () -> HostEnvironment) {
        self.content = content
        self.environment = environment
    }

    /// Evaluates the tree again and does what changed: `.onChange` whose value changed (or
    /// that is new, with `initial`), `.onAppear` of views that came, `.onDisappear` of views
    /// that went, tasks started and cancelled.
    func update() {
        var walk = ViewWalk(environment: environment())
        StateSlots.walking(with: state) { walk.walk(StateSlots.evaluating(at: "window", content), path: "window") }
        for (path, change) in walk.changes { change.fire(after: changes[path]) }
        changes = Dictionary(walk.changes.map { ($0.path, $0.change) }, uniquingKeysWith: { first, _ in first })
        for path in lifecyclePaths.subtracting(walk.lifecyclePaths).sorted() {
            disappears[path]?()
            running.removeValue(forKey: path)?.cancel()
        }
        for (path, action) in walk.appears where !lifecyclePaths.contains(path) { action() }
        for (path, priority, action, id) in walk.tasks {
            // A new view's task starts; a shown view's restarts when its `.task(id:)` changed.
            if lifecyclePaths.contains(path), taskIDs[path] == id { continue }
            running.removeValue(forKey: path)?.cancel()
            running[path] = Task(priority: priority) { await action() }
        }
        taskIDs = Dictionary(walk.tasks.map { ($0.path, $0.id) }, uniquingKeysWith: { first, _ in first })
        disappears = walk.disappears
        lifecyclePaths = walk.lifecyclePaths
    }
}

/// A view with `.onChange(of:)`.
struct ChangeObservingView<Content: View, V: Equatable> {
    let content: Content
    let change: ObservedChange<V>
    @MainActor func host(in walk: inout ViewWalk, path: String) {
        walk.changes.append((path, change))
        walk.walk(content, path: path + "/c")
    }
}

/// A view with `.onAppear`, `.onDisappear` or `.task`.
struct LifecycleView<Content: View> {
    let content: Content
    var appear: (() -> Void)?
    var disappear: (() -> Void)?
    var task: (priority: TaskPriority, action: @Sendable () async -> Void)?
    /// `.task(id:)`'s value: a change restarts the task.
    var taskID: AnyEquatable?
    @MainActor func host(in walk: inout ViewWalk, path: String) {
        walk.lifecyclePaths.insert(path)
        if let appear { walk.appears.append((path, appear)) }
        if let disappear { walk.disappears[path] = disappear }
        if let task { walk.tasks.append((path, task.priority, task.action, taskID)) }
        walk.walk(content, path: path + "/c")
    }
}

/// What `.onReceive` subscribes to and calls. @unchecked Sendable: the view's task only
/// reads it, on the main actor, where `action` (written in a view's body) belongs.
struct ReceivedValues<P: Publisher>: @unchecked Sendable where P.Failure == Never {
    let publisher: P
    let action: (P.Output) -> Void
}

/// A view with an object or value supplied to the views below.
struct EnvironmentSupplyingView<Content: View> {
    let content: Content
    let supply: (inout HostEnvironment) -> Void
    @MainActor func host(in walk: inout ViewWalk, path: String) {
        let saved = walk.environment
        supply(&walk.environment)
        walk.walk(content, path: path + "/c")
        walk.environment = saved
    }
}

extension ForEach: ElementViews {
    func elementViews(limit: Int, at place: String) -> [(String, any View)] {
        data.prefix(limit).map { element in
            let identifier = String(describing: element[keyPath: idPath])
            return (identifier, StateSlots.evaluating(at: place + "/" + identifier) { content(element) })
        }
    }
}

nonisolated extension View {
    /// Calls `action` with the new value when `value` changes while the view is shown (the
    /// tree is evaluated again at each change of the scene phase).
    public func onChange<V: Equatable>(of value: V, perform action: @escaping (V) -> Void) -> some View {
        ChangeObservingView(content: self, change: ObservedChange(value: value, initial: false) { _, new in action(new) })
    }
    /// Calls `action` with the old and new values when `value` changes while the view is
    /// shown, and when it is first shown with `initial`.
    public func onChange<V: Equatable>(of value: V, initial: Bool = false, _ action: @escaping (V, V) -> Void) -> some View {
        ChangeObservingView(content: self, change: ObservedChange(value: value, initial: initial, action: action))
    }
    /// Calls `action` when `value` changes while the view is shown, and when it is first
    /// shown with `initial`.
    public func onChange<V: Equatable>(of value: V, initial: Bool = false, _ action: @escaping () -> Void) -> some View {
        ChangeObservingView(content: self, change: ObservedChange(value: value, initial: initial) { _, _ in action() })
    }
    /// Calls `action` when the view is shown: the app's window when the user opens the app,
    /// or a view that comes in it at a later evaluation.
    public func onAppear(perform action: (() -> Void)? = nil) -> some View {
        LifecycleView(content: self, appear: action)
    }
    /// Calls `action` when the view stops being shown (a branch that goes at a later
    /// evaluation).
    public func onDisappear(perform action: (() -> Void)? = nil) -> some View {
        LifecycleView(content: self, disappear: action)
    }
    /// Starts `action` as a task when the view is shown, cancelled when it stops being shown;
    /// written in a view's body, it runs on the main actor, as on iOS.
    public func task(priority: TaskPriority = .userInitiated, @_inheritActorContext _ action: @escaping @Sendable () async -> Void) -> some View {
        LifecycleView(content: self, task: (priority, action))
    }
    /// The same, started again (the running one cancelled) when `id` changes.
    public func task<T: Equatable>(id value: T, priority: TaskPriority = .userInitiated, @_inheritActorContext _ action: @escaping @Sendable () async -> Void) -> some View {
        LifecycleView(content: self, task: (priority, action), taskID: AnyEquatable(value))
    }
    /// Calls `action` on the main actor with each value `publisher` sends while the view is
    /// shown (subscribed when it is shown, cancelled when it stops being shown, as
    /// ``task(priority:_:)`` is). The values reach `action` in order, each a moment after it
    /// was sent (through the main actor's queue), not within the sender's call as on iOS.
    public func onReceive<P: Publisher>(_ publisher: P, perform action: @escaping (P.Output) -> Void) -> some View where P.Failure == Never {
        let subscription = ReceivedValues(publisher: publisher, action: action)
        return LifecycleView(content: self, task: (.userInitiated, { @MainActor in
            for await value in subscription.publisher.values { subscription.action(value) }
        }))
    }
    /// Supplies `object` to the views below (`@EnvironmentObject`).
    public func environmentObject<T: ObservableObject>(_ object: T) -> some View {
        EnvironmentSupplyingView(content: self, supply: HostEnvironment.supplying(object))
    }
    /// Supplies an observable object (`@Observable`) to the views below (`@Environment(T.self)`).
    public func environment<T: AnyObject & Observable>(_ object: T?) -> some View {
        EnvironmentSupplyingView(content: self, supply: HostEnvironment.supplying(object))
    }
    /// Sets an environment value for the views below.
    public func environment<V>(_ keyPath: WritableKeyPath<EnvironmentValues, V>, _ value: V) -> some View {
        EnvironmentSupplyingView(content: self, supply: HostEnvironment.supplying(keyPath, value))
    }
}

nonisolated extension Scene {
    /// Supplies `object` to the views of the scene (`@EnvironmentObject`).
    public func environmentObject<T: ObservableObject>(_ object: T) -> some Scene {
        EnvironmentSupplyingScene(content: self, supply: HostEnvironment.supplying(object))
    }
    /// Supplies an observable object (`@Observable`) to the views of the scene.
    public func environment<T: AnyObject & Observable>(_ object: T?) -> some Scene {
        EnvironmentSupplyingScene(content: self, supply: HostEnvironment.supplying(object))
    }
    /// Sets an environment value for the views of the scene.
    public func environment<V>(_ keyPath: WritableKeyPath<EnvironmentValues, V>, _ value: V) -> some Scene {
        EnvironmentSupplyingScene(content: self, supply: HostEnvironment.supplying(keyPath, value))
    }
}

/// A scene supplying an object or value to its views.
struct EnvironmentSupplyingScene<Content: Scene> {
    let content: Content
    let supply: (inout HostEnvironment) -> Void
    var body: Never { Self.bodyOfPrimitive(Self.self) }
    @MainActor func collect(into collection: inout SceneCollection) {
        let before = collection.windows.count
        collection.add(content)
        // The windows of this scene see the supply.
        for index in before..<collection.windows.count { collection.windows[index].supplies.append(supply) }
    }
}

extension EnvironmentSupplyingScene: Scene, PrimitiveScene {}

/// The `@State` and `@StateObject` storage of one shown window, by place (``StateSlots``).
final class StateStore: @unchecked Sendable {
    // @unchecked: read and written only under StateSlots' mutex, during its window's walk.
    var slots: [String: AnyObject] = [:]
    var claimed: Set<String> = []
}

/// Which window's state a `@State` or `@StateObject` made now belongs to: a view's state is
/// claimed, while its parent's body is evaluated (or a `ForEach` makes its rows), as the
/// parent's place and the order of creation (the same views made in the same order get the
/// same storage back, as SwiftUI keeps state by structural identity; a row's place is its
/// element's identifier, so rows keep their state when others are inserted). Views that a
/// body makes conditionally before a sibling shift the sibling's order, so the sibling's
/// state is then not kept. Storage a walk did not claim is dropped at its end. Outside a
/// walk (the app's own state, anything made on another thread meanwhile) state is not kept
/// here. The state itself belongs to its window (`StateStore`); this says only which window
/// is walking and where.
enum StateSlots {
    private struct Walk: @unchecked Sendable {
        // @unchecked: `store` is a class only touched under this mutex (StateStore).
        var store: StateStore?
        var place: String?
        var next = 0
        /// The thread walking (`pthread_self`).
        var walker: UInt = 0
    }
    private static let state = Mutex(Walk())

    /// `storage`, or the storage of its type its place already has.
    static func claim<Storage: AnyObject>(_ storage: Storage) -> Storage {
        let box = UncheckedBox(storage)
        let caller = UInt(pthread_self())
        let kept = state.withLock { walk -> UncheckedBox<Storage>? in
            // Only the walk's own thread claims: state made elsewhere meanwhile is not the window's.
            guard let store = walk.store, let place = walk.place, walk.walker == caller else { return nil }
            let key = "\(place)#\(walk.next)"
            walk.next += 1
            store.claimed.insert(key)
            if let kept = store.slots[key] as? Storage { return UncheckedBox(kept) }
            store.slots[key] = box.value
            return nil
        }
        return kept?.value ?? storage
    }

    /// A storage object crossing the mutex (see `Walk`).
    private struct UncheckedBox<Value: AnyObject>: @unchecked Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    /// Runs `body`, a walk of the window whose state is `store`, then drops the state it did
    /// not claim.
    @MainActor
    static func walking<R>(with store: StateStore, _ body: () -> R) -> R {
        let caller = UInt(pthread_self())
        state.withLock { walk in
            walk.store = store
            walk.walker = caller
            store.claimed = []
        }
        defer {
            state.withLock { walk in
                store.slots = store.slots.filter { store.claimed.contains($0.key) }
                walk = Walk()
            }
        }
        return body()
    }

    /// Runs `body` (a view's body, or the window's content) with `place` as the place of the
    /// state it creates.
    @MainActor
    static func evaluating<R>(at place: String, _ body: () -> R) -> R {
        let saved = state.withLock { walk -> (String?, Int) in
            defer { walk.place = place; walk.next = 0 }
            return (walk.place, walk.next)
        }
        defer { state.withLock { $0.place = saved.0; $0.next = saved.1 } }
        return body()
    }
}

// Conformances apart from the types, so that the modifiers, which are nonisolated as Apple's
// are, can make them.
extension ChangeObservingView: PrimitiveView, HostedModifier {}
extension LifecycleView: PrimitiveView, HostedModifier {}
extension EnvironmentSupplyingView: PrimitiveView, HostedModifier {}

/// A value compared with another of any type (`.task(id:)`).
struct AnyEquatable: Equatable {
    private let value: Any
    private let equals: (Any) -> Bool
    init<T: Equatable>(_ value: T) {
        self.value = value
        equals = { ($0 as? T) == value }
    }
    static func == (lhs: AnyEquatable, rhs: AnyEquatable) -> Bool { lhs.equals(rhs.value) }
}

/// A modifier of views the app writes (Apple: `ViewModifier`): its `body(content:)` is
/// evaluated with the shown view it modifies.
@MainActor @preconcurrency
public protocol ViewModifier {
    /// What the modifier makes of the view.
    associatedtype Body: View
    /// What the modifier makes of `content`.
    @ViewBuilder func body(content: Content) -> Body
    /// The view being modified.
    typealias Content = _ViewModifier_Content<Self>
}

/// The view a ``ViewModifier`` modifies (Apple: `_ViewModifier_Content`).
public struct _ViewModifier_Content<Modifier: ViewModifier> {
    let content: AnyView
}

/// A view with a modifier (Apple: `ModifiedContent`).
public struct ModifiedContent<Content, Modifier> {
    /// The view.
    public var content: Content
    /// The modifier.
    public var modifier: Modifier
    /// `content` modified by `modifier`.
    public init(content: Content, modifier: Modifier) {
        self.content = content
        self.modifier = modifier
    }
}

extension _ViewModifier_Content: PrimitiveView {}
extension ModifiedContent: View where Content: View, Modifier: ViewModifier {}
extension ModifiedContent: PrimitiveView where Content: View, Modifier: ViewModifier {}
extension ModifiedContent: HostedModifier where Content: View, Modifier: ViewModifier {
    @MainActor func host(in walk: inout ViewWalk, path: String) {
        ViewWalk.resolveProperties(of: modifier, in: walk.environment, depth: 0)
        let place = path + "/" + String(describing: Modifier.self)
        let body = StateSlots.evaluating(at: place) { modifier.body(content: _ViewModifier_Content(content: AnyView(content))) }
        walk.walk(body, path: place)
    }
}

nonisolated extension View {
    /// This view modified by `modifier`.
    public func modifier<M: ViewModifier>(_ modifier: M) -> ModifiedContent<Self, M> {
        ModifiedContent(content: self, modifier: modifier)
    }
}

/// A list of values pushed on a navigation stack (Apple: `NavigationPath`); nothing is
/// pushed here, but the app may build one.
public struct NavigationPath: Equatable, Sendable {
    private var elements: [AnyHashableBox] = []
    /// An empty path.
    public init() {}
    /// How many values it holds.
    public var count: Int { elements.count }
    /// Whether it holds none.
    public var isEmpty: Bool { elements.isEmpty }
    /// Pushes `value`.
    public mutating func append<V: Hashable & Sendable>(_ value: V) { elements.append(AnyHashableBox(value)) }
    /// Pops `k` values.
    public mutating func removeLast(_ k: Int = 1) { elements.removeLast(k) }

    private struct AnyHashableBox: Equatable, @unchecked Sendable {
        // @unchecked: it holds only values appended as Sendable.
        let value: AnyHashable
        init<V: Hashable & Sendable>(_ value: V) { self.value = AnyHashable(value) }
    }
}

extension NavigationStack {
    /// A stack whose pushed values are `path`.
    public init(path: Binding<NavigationPath>, @ViewBuilder root: () -> Root) { self.init(root: root) }
    /// A stack whose pushed values are the collection `path`.
    public init<Data: MutableCollection & RandomAccessCollection & RangeReplaceableCollection>(path: Binding<Data>, @ViewBuilder root: () -> Root) where Data.Element: Hashable {
        self.init(root: root)
    }
}
