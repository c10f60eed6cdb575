import Foundation
import Synchronization

/// Runs a SwiftUI `App` (``App/main()``): its launch, the background tasks of its scenes,
/// and its scene phase. One per process, on the main actor.
@MainActor
enum AppRuntime {
    /// The delegate the app's first `@UIApplicationDelegateAdaptor` made.
    private static var adoptedDelegate: (any UIApplicationDelegate)?
    /// The app, once created.
    private static var evaluateBody: (@MainActor () -> SceneCollection)?
    /// The `.onChange(of:)` modifiers of the last evaluation, in the order of the scene tree.
    private static var changes: [any AnyObservedChange] = []
    /// The phase the body was last evaluated for.
    private static var phase: ScenePhase = .inactive
    /// Each refresh identifier's actions, from the last evaluation (read when a task runs,
    /// from the launch handler's queue).
    private nonisolated static let refreshActions = Mutex<[String: [BackgroundAction]]>([:])
    private static var observers: [any NSObjectProtocol] = []
    /// The windows of the last evaluation.
    private static var windows: [SceneCollection.WindowEntry] = []
    /// The app's first window, once shown (the user opened the app).
    private static var shown: ShownWindow?

    static func adoptDelegate<D: NSObject & UIApplicationDelegate>(ofType type: D.Type) -> D {
        let delegate = ObjectMaking.make(type)
        if adoptedDelegate == nil { adoptedDelegate = delegate }
        return delegate
    }

    static func run<A: App>(_ type: A.Type) -> Never {
        let app = AppHolder(A())
        evaluateBody = {
            var collection = SceneCollection()
            collection.add(app.app.body)
            return collection
        }
        let delegate = adoptedDelegate ?? SwiftUIAppDelegate()
        UIApplicationMain(delegate: delegate) {
            // During the launch, with registrations open: each identifier of a
            // `.backgroundTask(.appRefresh(...))` gets its launch handler.
            let application = UIApplication.shared
            phase = Self.phase(of: application.applicationState)
            evaluate()
            for identifier in refreshActions.withLock({ $0.keys.sorted() }) {
                registerLaunchHandler(for: identifier)
            }
            fireChanges(after: [])
            observePhase(of: application)
            // The user opened the app: its window is shown once the launch has finished.
            // (A SIGTERM meanwhile puts the app in the background: no window then.)
            if phase != .background { DispatchQueue.main.async { MainActor.assumeIsolated { if phase != .background { showWindow() } } } }
        }
    }

    /// The phase of the app's scene in `state`.
    static func phase(of state: UIApplication.State) -> ScenePhase {
        switch state {
        case .active: return .active
        case .background: return .background
        default: return .inactive
        }
    }

    /// Evaluates the app's body in the current phase and keeps what it found.
    private static func evaluate() {
        EnvironmentValues.current.withLock { $0.scenePhase = phase }
        let found = evaluateBody?() ?? SceneCollection()
        var byIdentifier: [String: [BackgroundAction]] = [:]
        for (identifier, action) in found.refreshActions { byIdentifier[identifier, default: []].append(action) }
        refreshActions.withLock { $0 = byIdentifier }
        changes = found.changes
        windows = found.windows
    }

    /// Calls the scene's `.onChange(of:)` actions, each against the same modifier of the
    /// evaluation before (`previous`; none at the launch, when only `initial` ones are called).
    private static func fireChanges(after previous: [any AnyObservedChange]) {
        for (index, change) in changes.enumerated() {
            change.fire(after: previous.indices.contains(index) ? previous[index] : nil)
        }
    }

    /// At each change of the application's state (after its notification, on the main
    /// actor, as the app delegate is told), a new phase evaluates the body again and calls
    /// the `.onChange(of:)` actions whose value changed.
    private static func observePhase(of application: UIApplication) {
        let names = [UIApplication.didBecomeActiveNotification, UIApplication.willResignActiveNotification,
                     UIApplication.didEnterBackgroundNotification, UIApplication.willEnterForegroundNotification]
        for name in names {
            observers.append(NotificationCenter.default.addObserver(forName: name, object: application, queue: .main) { _ in
                MainActor.assumeIsolated { phaseChanged(after: name) }
            })
        }
    }

    private static func phaseChanged(after name: Notification.Name) {
        let new: ScenePhase
        switch name {
        case UIApplication.didBecomeActiveNotification: new = .active
        case UIApplication.didEnterBackgroundNotification: new = .background
        default: new = .inactive
        }
        guard new != phase else { return }
        phase = new
        let previous = changes
        evaluate()
        fireChanges(after: previous)
        // The window's views follow (a process launched in the background shows its window
        // when it first comes to the foreground).
        if let shown {
            shown.update()
        } else if new != .background {
            showWindow()
        }
    }

    /// Shows the app's first window: its views are evaluated, appear, and start their tasks.
    private static func showWindow() {
        guard shown == nil, !windows.isEmpty else { return }
        let window = ShownWindow(
            content: { windows.first?.content() ?? EmptyView() },
            environment: {
                let base = EnvironmentValues.current.withLock { $0 }
                var environment = windows.first?.environment(base: base) ?? HostEnvironment(values: base)
                // An app delegate that is an ObservableObject is in the environment of the
                // app's views, as SwiftUI puts it there (`@EnvironmentObject var appDelegate`).
                if let delegate = adoptedDelegate as? any ObservableObject, environment.objects[ObjectIdentifier(type(of: delegate))] == nil {
                    environment.objects[ObjectIdentifier(type(of: delegate))] = delegate
                }
                return environment
            })
        shown = window
        window.update()
    }

    /// Registers the launch handler of `identifier`: a run calls the identifier's actions
    /// (those of the body's last evaluation) at once, and completes the task when they
    /// have returned; an expiration cancels them.
    private static func registerLaunchHandler(for identifier: String) {
        // An app that registered the identifier itself (in `init()` or its delegate) and also
        // gave it a `.backgroundTask` runs on iOS; its own handler is kept, and said.
        if BGTaskScheduler.shared.hasLaunchHandler(forTaskWithIdentifier: identifier) {
            let context = BGAppContext.resolve()
            context.driver.log(.warning, app: context.app, ".backgroundTask(.appRefresh(\"\(identifier)\")) is not used: the app registered a launch handler for '\(identifier)' itself, which handles its runs")
            return
        }
        BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { task in
            let current = refreshActions.withLock { $0[identifier] ?? [] }
            let work = Task {
                await withTaskGroup(of: Void.self) { group in
                    for action in current { group.addTask { await action.run(()) } }
                }
            }
            task.expirationHandler = { work.cancel() }
            Task {
                await work.value
                task.setTaskCompleted(success: !work.isCancelled)
            }
        }
    }
}

/// The app, kept by the main actor (a main-actor class is Sendable, so the closure that
/// evaluates its body may keep it).
@MainActor
final class AppHolder<A: App> {
    let app: A
    init(_ app: A) { self.app = app }
}

/// The app delegate of a SwiftUI app without `@UIApplicationDelegateAdaptor`.
final class SwiftUIAppDelegate: UIResponder, UIApplicationDelegate {}
