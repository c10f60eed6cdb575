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
    func elementViews(limit: Int) -> [any View]
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
    var tasks: [(path: String, priority: TaskPriority, action: @Sendable () async -> Void)] = []
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
            for (index, child) in elements.elementViews(limit: budget).enumerated() { walk(child, path: path + "/\(index)") }
        } else if view is any PrimitiveView {
            for (index, child) in Mirror(reflecting: view).children.enumerated() { walkStored(child.value, path: path + "/" + (child.label ?? "\(index)")) }
        } else {
            // A view of the app's: its dynamic properties see this environment, then its body.
            for child in Mirror(reflecting: view).children {
                (child.value as? any HostResolvable)?.resolve(in: environment)
            }
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

    init(content: @escaping () -> any View, environment: @escaping () -> HostEnvironment) {
        self.content = content
        self.environment = environment
    }

    /// Evaluates the tree again and does what changed: `.onChange` whose value changed (or
    /// that is new, with `initial`), `.onAppear` of views that came, `.onDisappear` of views
    /// that went, tasks started and cancelled.
    func update() {
        var walk = ViewWalk(environment: environment())
        StateSlots.beginWalk()
        walk.walk(StateSlots.evaluating(at: "window", content), path: "window")
        StateSlots.endWalk()
        for (path, change) in walk.changes { change.fire(after: changes[path]) }
        changes = Dictionary(walk.changes.map { ($0.path, $0.change) }, uniquingKeysWith: { first, _ in first })
        for path in lifecyclePaths.subtracting(walk.lifecyclePaths).sorted() {
            disappears[path]?()
            running.removeValue(forKey: path)?.cancel()
        }
        for (path, action) in walk.appears where !lifecyclePaths.contains(path) { action() }
        for (path, priority, action) in walk.tasks where !lifecyclePaths.contains(path) {
            running[path] = Task(priority: priority) { await action() }
        }
        disappears = walk.disappears
        lifecyclePaths = walk.lifecyclePaths
    }
}

/// A view with `.onChange(of:)`.
struct ChangeObservingView<Content: View, V: Equatable>: PrimitiveView, HostedModifier {
    let content: Content
    let change: ObservedChange<V>
    func host(in walk: inout ViewWalk, path: String) {
        walk.changes.append((path, change))
        walk.walk(content, path: path + "/c")
    }
}

/// A view with `.onAppear`, `.onDisappear` or `.task`.
struct LifecycleView<Content: View>: PrimitiveView, HostedModifier {
    let content: Content
    var appear: (() -> Void)?
    var disappear: (() -> Void)?
    var task: (priority: TaskPriority, action: @Sendable () async -> Void)?
    func host(in walk: inout ViewWalk, path: String) {
        walk.lifecyclePaths.insert(path)
        if let appear { walk.appears.append((path, appear)) }
        if let disappear { walk.disappears[path] = disappear }
        if let task { walk.tasks.append((path, task.priority, task.action)) }
        walk.walk(content, path: path + "/c")
    }
}

/// A view with an object or value supplied to the views below.
struct EnvironmentSupplyingView<Content: View>: PrimitiveView, HostedModifier {
    let content: Content
    let supply: (inout HostEnvironment) -> Void
    func host(in walk: inout ViewWalk, path: String) {
        let saved = walk.environment
        supply(&walk.environment)
        walk.walk(content, path: path + "/c")
        walk.environment = saved
    }
}

extension ForEach: ElementViews {
    func elementViews(limit: Int) -> [any View] { data.prefix(limit).map { content($0) } }
}

extension View {
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
    /// Starts `action` as a task when the view is shown, cancelled when it stops being shown.
    public func task(priority: TaskPriority = .userInitiated, _ action: @escaping @Sendable () async -> Void) -> some View {
        LifecycleView(content: self, task: (priority, action))
    }
    /// Supplies `object` to the views below (`@EnvironmentObject`).
    public func environmentObject<T: ObservableObject>(_ object: T) -> some View {
        EnvironmentSupplyingView(content: self) { $0.objects[ObjectIdentifier(T.self)] = object }
    }
    /// Supplies an observable object (`@Observable`) to the views below (`@Environment(T.self)`).
    public func environment<T: AnyObject & Observable>(_ object: T?) -> some View {
        EnvironmentSupplyingView(content: self) { $0.objects[ObjectIdentifier(T.self)] = object }
    }
    /// Sets an environment value for the views below.
    public func environment<V>(_ keyPath: WritableKeyPath<EnvironmentValues, V>, _ value: V) -> some View {
        EnvironmentSupplyingView(content: self) { $0.values[keyPath: keyPath] = value }
    }
}

extension Scene {
    /// Supplies `object` to the views of the scene (`@EnvironmentObject`).
    public func environmentObject<T: ObservableObject>(_ object: T) -> some Scene {
        EnvironmentSupplyingScene(content: self) { $0.objects[ObjectIdentifier(T.self)] = object }
    }
    /// Supplies an observable object (`@Observable`) to the views of the scene.
    public func environment<T: AnyObject & Observable>(_ object: T?) -> some Scene {
        EnvironmentSupplyingScene(content: self) { $0.objects[ObjectIdentifier(T.self)] = object }
    }
    /// Sets an environment value for the views of the scene.
    public func environment<V>(_ keyPath: WritableKeyPath<EnvironmentValues, V>, _ value: V) -> some Scene {
        EnvironmentSupplyingScene(content: self) { $0.values[keyPath: keyPath] = value }
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

/// The `@State` and `@StateObject` storage of shown views, by place: a view's state is
/// claimed, while its parent's body is evaluated, as the parent's place and the order of
/// creation (the same views made in the same order get the same storage back, as SwiftUI
/// keeps state by structural identity). Storage no evaluation claimed is dropped at the end
/// of a walk. Outside a walk (the app's own state, anything made off the main thread) state
/// is not kept here.
enum StateSlots {
    private struct Slots: @unchecked Sendable {
        // @unchecked: the storage objects are only handed to views evaluated on the main
        // actor (`evaluating(at:)` runs there); the mutex orders the claims.
        var place: String?
        var next = 0
        var slots: [String: AnyObject] = [:]
        var claimed: Set<String> = []
    }
    private static let state = Mutex(Slots())

    /// `storage`, or the storage of its type its place already has.
    static func claim<Storage: AnyObject>(_ storage: Storage) -> Storage {
        let box = UncheckedBox(storage)
        let kept = state.withLock { slots -> UncheckedBox<Storage>? in
            guard let place = slots.place else { return nil }
            let key = "\(place)#\(slots.next)"
            slots.next += 1
            slots.claimed.insert(key)
            if let kept = slots.slots[key] as? Storage { return UncheckedBox(kept) }
            slots.slots[key] = box.value
            return nil
        }
        return kept?.value ?? storage
    }

    /// A storage object crossing the mutex (see `Slots`).
    private struct UncheckedBox<Value: AnyObject>: @unchecked Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    /// Runs `body` (a view's body, or the window's content) with `place` as the place of the
    /// state it creates.
    @MainActor
    static func evaluating<R>(at place: String, _ body: () -> R) -> R {
        let saved = state.withLock { slots -> (String?, Int) in
            defer { slots.place = place; slots.next = 0 }
            return (slots.place, slots.next)
        }
        defer { state.withLock { $0.place = saved.0; $0.next = saved.1 } }
        return body()
    }

    @MainActor
    static func beginWalk() { state.withLock { $0.claimed = [] } }

    @MainActor
    static func endWalk() {
        state.withLock { slots in
            slots.slots = slots.slots.filter { slots.claimed.contains($0.key) }
        }
    }
}
