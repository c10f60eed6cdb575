import Synchronization

/// The kinds of background task a scene can handle (Apple: `BackgroundTask`), for
/// ``Scene/backgroundTask(_:action:)``.
public struct BackgroundTask<Request, Response>: Sendable {
    enum Kind: Sendable, Equatable {
        case appRefresh(String)
        case urlSession(String)
        case anyURLSession
    }
    let kind: Kind

    /// The app refresh task with `identifier` (a `BGAppRefreshTaskRequest` the app
    /// submitted): the action runs when the scheduler launches it.
    public static func appRefresh(_ identifier: String) -> BackgroundTask<Void, Void> {
        BackgroundTask<Void, Void>(kind: .appRefresh(identifier))
    }

    /// Events of the background `URLSession` with `identifier`. Linux has no background
    /// URL sessions (docs/porting.md): the modifier is accepted and its action never runs.
    public static func urlSession(_ identifier: String) -> BackgroundTask<Void, Void> {
        BackgroundTask<Void, Void>(kind: .urlSession(identifier))
    }

    /// Events of any background `URLSession` (the action gets its identifier). Never runs
    /// on Linux, as ``urlSession(_:)``.
    public static var urlSession: BackgroundTask<String, Void> {
        BackgroundTask<String, Void>(kind: .anyURLSession)
    }

    /// Events of the background `URLSession`s whose identifier `matching` accepts (Apple:
    /// `urlSession(matching:)`, iOS 16). Never runs on Linux, as ``urlSession(_:)``.
    public static func urlSession(matching: @escaping @Sendable (String) -> Bool) -> BackgroundTask<String, Void> {
        BackgroundTask<String, Void>(kind: .anyURLSession)
    }
}

nonisolated extension Scene {
    /// Runs `action` when the system launches the app for `task` (Apple:
    /// `backgroundTask(_:action:)`): for ``BackgroundTask/appRefresh(_:)``, a launch handler
    /// for the identifier is registered during the launch (the manifest must permit it, as
    /// `BGTaskSchedulerPermittedIdentifiers` must on iOS); each run calls every action
    /// given for it, and the task completes, successfully, when they have all returned. An
    /// expiration cancels them (`Task.isCancelled`), and the task completes as failed.
    /// The app still submits the request itself.
    public nonisolated func backgroundTask<D: Sendable, R: Sendable>(
        _ task: BackgroundTask<D, R>, action: @escaping @Sendable (D) async -> R
    ) -> some Scene {
        BackgroundTaskScene(content: self, kind: task.kind, action: BackgroundAction(run: { value in
            guard let request = value as? D else { return }
            _ = await action(request)
        }))
    }

    /// Calls `action` with the new value when `value` changes (Apple's iOS 14 form); the
    /// value is compared each time the app's body is evaluated again (at each change of
    /// the scene phase).
    public func onChange<V: Equatable>(of value: V, perform action: @escaping (V) -> Void) -> some Scene {
        ChangeObservingScene(content: self, change: ObservedChange(value: value, initial: false) { _, new in action(new) })
    }

    /// Calls `action` with the old and new values when `value` changes, and once at the
    /// first evaluation when `initial` (Apple's iOS 17 form).
    public func onChange<V: Equatable>(of value: V, initial: Bool = false, _ action: @escaping (V, V) -> Void) -> some Scene {
        ChangeObservingScene(content: self, change: ObservedChange(value: value, initial: initial, action: action))
    }

    /// Calls `action` when `value` changes, and once at the first evaluation when
    /// `initial` (Apple's iOS 17 form).
    public func onChange<V: Equatable>(of value: V, initial: Bool = false, _ action: @escaping () -> Void) -> some Scene {
        ChangeObservingScene(content: self, change: ObservedChange(value: value, initial: initial) { _, _ in action() })
    }
}

/// An action of `.backgroundTask`, its request type erased.
struct BackgroundAction: Sendable {
    let run: @Sendable (Any) async -> Void
}

/// A scene with a `.backgroundTask` modifier.
struct BackgroundTaskScene<Content: Scene, Request, Response> {
    let content: Content
    let kind: BackgroundTask<Request, Response>.Kind
    let action: BackgroundAction
    var body: Never { Self.bodyOfPrimitive(Self.self) }
    @MainActor func collect(into collection: inout SceneCollection) {
        collection.add(content)
        switch kind {
        case .appRefresh(let identifier): collection.refreshActions.append((identifier, action))
        case .urlSession, .anyURLSession: collection.urlSessionActions += 1
        }
    }
}

/// A scene with an `.onChange(of:)` modifier.
struct ChangeObservingScene<Content: Scene, V: Equatable> {
    let content: Content
    let change: ObservedChange<V>
    var body: Never { Self.bodyOfPrimitive(Self.self) }
    @MainActor func collect(into collection: inout SceneCollection) {
        collection.add(content)
        collection.changes.append(change)
    }
}

/// One `.onChange(of:)`: the value at an evaluation of the body and what to call.
@MainActor
protocol AnyObservedChange {
    /// Whether this is the first evaluation's call (`initial: true`).
    var initial: Bool { get }
    /// Calls the action if `previous` (the same modifier at the last evaluation) held
    /// another value; `nil`: the first evaluation, called when `initial`.
    func fire(after previous: (any AnyObservedChange)?)
}

struct ObservedChange<V: Equatable> {
    let value: V
    let initial: Bool
    let action: (V, V) -> Void

    @MainActor func fire(after previous: (any AnyObservedChange)?) {
        guard let previous else {
            if initial { action(value, value) }
            return
        }
        // A modifier at the same place with another type of value: a new one, not a change.
        guard let old = previous as? ObservedChange<V> else { return }
        if old.value != value { action(old.value, value) }
    }
}

/// What an evaluation of the app's body found, in the order of the scene tree.
@MainActor
struct SceneCollection {
    var changes: [any AnyObservedChange] = []
    var refreshActions: [(identifier: String, action: BackgroundAction)] = []
    var urlSessionActions = 0
    /// The window groups, in order: the first is shown when the user opens the app.
    var windows: [WindowEntry] = []

    /// A window group's content and what the scene modifiers around it supply to its views.
    struct WindowEntry {
        let content: @MainActor () -> any View
        var supplies: [(inout HostEnvironment) -> Void] = []

        /// The environment of the window's views: the app's, with what its scenes supply
        /// (the outermost modifier first, so an inner one wins for the same key).
        func environment(base: EnvironmentValues) -> HostEnvironment {
            var environment = HostEnvironment(values: base)
            for supply in supplies.reversed() { supply(&environment) }
            return environment
        }
    }

    /// Reads `scene`: a primitive one directly, another through its body.
    mutating func add<S: Scene>(_ scene: S) {
        if let primitive = scene as? any PrimitiveScene {
            primitive.collect(into: &self)
        } else {
            add(scene.body)
        }
    }
}

// Conformances apart from the types, so that their initializers are not main-actor isolated.
extension BackgroundTaskScene: Scene, PrimitiveScene {}
extension ChangeObservingScene: Scene, PrimitiveScene {}
extension ObservedChange: AnyObservedChange {}
