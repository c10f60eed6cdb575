import Dispatch
import Foundation
import Synchronization
import SchedulerCore

/// Identifies a background assertion (Apple: `UIBackgroundTaskIdentifier`).
///
/// Not `CustomStringConvertible`, as Apple's is not: an app that adds the conformance would
/// get "redundant conformance", an error. It prints as `UIBackgroundTaskIdentifier(rawValue: 3)`.
public struct UIBackgroundTaskIdentifier: RawRepresentable, Hashable, Sendable {
    /// The number (0 is `.invalid`).
    public let rawValue: Int
    /// Wraps a number.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// No assertion: returned when background time cannot be granted; set your variable
    /// to it after ending an assertion so it is never ended twice.
    public static let invalid = UIBackgroundTaskIdentifier(rawValue: 0)
}

// `UIBackgroundRefreshStatus` and `UIBackgroundFetchResult` are C enums (CUIKitTypes), as on
// iOS, so that `switch` statements behave as over Apple's imported enums (docs/porting.md).

/// The app process on Linux, with its lifecycle and background assertions: what
/// `UIApplication` is on iOS, minus the user interface. ``UIApplication`` is the same type.
///
/// ```swift
/// var saveTask: UIBackgroundTaskIdentifier = .invalid
/// saveTask = UIApplication.shared.beginBackgroundTask(withName: "Save draft") {
///     UIApplication.shared.endBackgroundTask(saveTask); saveTask = .invalid
/// }
/// ```
///
/// On iOS the system moves the app between states; here the program (or the simulator)
/// says so: ``finishLaunching()``, ``enterBackground()``, ``enterForeground()``, and in a
/// server ``handleTerminationSignals(exitWhenDone:)`` turns SIGTERM into "entering the
/// background", so assertions get their window before the process exits.
public final class BGApplication: @unchecked Sendable {
    // @unchecked: `context` is set once right after init; the rest is behind `state`.

    /// `UIApplication.State`: the C enum `UIApplicationState` (CUIKitTypes), as on iOS, so a
    /// `switch` over it behaves as over Apple's imported enum (docs/porting.md).
    public typealias State = UIApplicationState

    /// The application of the app whose code is running (see ``BGAppContext``).
    public static var shared: BGApplication { BGAppContext.resolve().application }

    weak var context: BGAppContext?

    private struct LockedState {
        var lifecycle: ApplicationLifecycle
        var expirationHandlers: [Int: AppClosureCall] = [:]
        var deferredTasks: [BGTask] = []
        var timer: (any DriverTimer)?
        var timerAt: Date?
        var observers: [@Sendable (ApplicationLifecycleState) -> Void] = []
        /// ``handleTerminationSignals(exitWhenDone:)``'s exit on suspension or termination:
        /// called after every observer of the change, whenever they were added, so the app's
        /// own observers hear the state the process ends in.
        var exitObserver: (@Sendable (ApplicationLifecycleState) -> Void)?
        var signalSources: [any DispatchSourceSignal] = []
        /// Whether SIGTERM or SIGINT came (``handleTerminationSignals(exitWhenDone:)``):
        /// only then does a suspension end the process.
        var terminationSignalled = false
        /// Whether the process is already on its way out (``exitWhenRunsEnd(status:)``): the
        /// signal and the suspension can both ask, and `exit` must run once.
        var exitRequested = false
        /// The effects of lifecycle changes not yet delivered, in the order the changes were
        /// made (each appended under this lock with its change): delivered one after the
        /// other by one thread at a time (``deliveringEffects``), so two threads changing the
        /// state at once cannot deliver out of order and leave the app's observers and
        /// notifications telling a state it is no longer in.
        var undeliveredEffects: [LifecycleDelivery] = []
        /// Whether a thread is delivering ``undeliveredEffects`` (it takes any appended
        /// meanwhile, a nested change from an observer's code included).
        var deliveringEffects = false
    }

    /// One lifecycle change's effects, as ``change(finishingLaunch:intoBackground:_:)`` made them.
    private struct LifecycleDelivery {
        var effects: [LifecycleEffect]
        var observers: [@Sendable (ApplicationLifecycleState) -> Void]
        var at: Date
        var intoBackground: Bool
        var finishedLaunch: Bool
    }

    private let state: Locked<LockedState>
    /// The legacy background fetch settings (BackgroundFetch.swift).
    let fetch = Locked(BackgroundFetchState())
    /// The remote-notification handler and registration (RemoteNotifications.swift).
    let remoteNotifications = Locked(RemoteNotificationState())
    /// `applicationIconBadgeNumber` (SystemInterface.swift).
    let iconBadgeNumber = Locked(0)
    /// `isIdleTimerDisabled` (SystemInterface.swift).
    let idleTimerDisabled = Locked(false)
    /// `isNetworkActivityIndicatorVisible` and `isStatusBarHidden` (SystemInterface.swift).
    let statusBar = Locked((networkActivity: false, hidden: false))
    /// Scene notifications waiting to be posted (ApplicationNotifications.swift).
    let sceneNotifications = Locked<[(name: Notification.Name, scene: UIScene, announcing: State?)]>([])
    /// Where the lifecycle notifications are posted, in order (ApplicationNotifications.swift).
    let notificationQueue = DispatchQueue(label: "bgtask.application.notifications")
    /// While a lifecycle notification is delivered, the state iOS shows during it, which
    /// ``applicationState`` reads (ApplicationNotifications.swift); nil otherwise.
    let announcedState = Locked<State?>(nil)

    /// The app delegate (Apple: `UIApplication.delegate`), set by ``UIApplicationMain(delegate:)``
    /// or by the program; kept for the life of the application. Once set, the system calls
    /// its methods: the lifecycle ones as the app changes state (after each change's
    /// notification, on the main actor), and its fetch and remote-notification methods
    /// (replacing the handlers given to ``setBackgroundFetchHandler(_:)`` and
    /// ``setRemoteNotificationHandler(_:)``). Its launch methods are ``UIApplicationMain(delegate:)``'s
    /// to call.
    @preconcurrency @MainActor public var delegate: (any UIApplicationDelegate)? {
        didSet {
            remoteNotifications.withLock { [delegate] in $0.delegateIsSet = delegate != nil }
            if delegateObservers.isEmpty, delegate != nil { connectDelegate() }
        }
    }
    /// The notification observers that forward state changes to ``delegate``.
    @MainActor var delegateObservers: [any NSObjectProtocol] = []
    /// The app's scene, connected by ``UIApplicationMain(delegate:)`` when the user started a
    /// scene-based app (UIScene.swift).
    @MainActor var connectedScene: UIScene?
    /// Whether the app's scene was asked for (at the user's launch, or at the first move to
    /// the foreground of a process launched in the background).
    @MainActor var sceneConnectionTried = false
    /// Whether the scene delegate the app configured could not be created (an `NSObject`
    /// subclass: ``connectScene(for:)``): the app delegate is then told of the app's states.
    @MainActor var sceneDelegateCouldNotBeMade = false
    /// The app's connected scenes (Apple: `UIApplication.connectedScenes`): the one scene of
    /// a scene-based app the user started, else none.
    @preconcurrency @MainActor public var connectedScenes: Set<UIScene> { connectedScene.map { [$0] } ?? [] }
    /// The sessions of the app's scenes (Apple: `openSessions`): the connected scene's.
    @preconcurrency @MainActor public var openSessions: Set<UISceneSession> { connectedScene.map { [$0.session] } ?? [] }
    /// Asks for the snapshot of `sceneSession`'s scene to be taken again after the app
    /// updated its content in the background (Apple: `requestSceneSessionRefresh(_:)`, which
    /// refreshes what the app switcher shows): Linux has no app switcher, so nothing is
    /// taken; the call is accepted for any session.
    @preconcurrency @MainActor public func requestSceneSessionRefresh(_ sceneSession: UISceneSession) {}
    /// Whether the app shows several scenes at once (Apple: `supportsMultipleScenes`):
    /// `false`, as on an iPhone; a Linux app connects one scene at most.
    @preconcurrency @MainActor public var supportsMultipleScenes: Bool { false }
    /// The app's Home Screen quick actions (Apple: `shortcutItems`): kept as the app sets them;
    /// Linux has no Home Screen to show them on.
    @preconcurrency @MainActor public var shortcutItems: [UIApplicationShortcutItem]?
    /// The windows made key, oldest first, while they live.
    @MainActor private var keyedWindows: [WeakWindow] = []

    /// The app's windows (Apple: `windows`, deprecated in iOS 15 for
    /// `UIWindowScene.windows`): those made key and visible, while the app keeps them, back
    /// to front by ``UIWindow/windowLevel`` (in the order they were made key within a level).
    @available(*, deprecated, message: "Use UIWindowScene.windows on a relevant window scene instead")
    @preconcurrency @MainActor public var windows: [UIWindow] { liveWindows }
    /// The key window (Apple: `keyWindow`, deprecated in iOS 13): the window last made key,
    /// while the app keeps it.
    @available(*, deprecated, message: "Should not be used for applications that support multiple scenes as it returns a key window across all connected scenes")
    @preconcurrency @MainActor public var keyWindow: UIWindow? { liveWindows.last { $0.isKeyWindow } }

    /// The windows made key that are still alive, back to front by level, as Apple orders
    /// `windows`; within a level, in the order they were first made key (a stable order, so
    /// that a lookup of "the last one" gives the same answer each time).
    @MainActor package var liveWindows: [UIWindow] {
        keyedWindows.removeAll { $0.window == nil }
        return keyedWindows.compactMap(\.window).enumerated()
            .sorted { ($0.element.windowLevel, $0.offset) < ($1.element.windowLevel, $1.offset) }
            .map(\.element)
    }

    /// `window` became key: the others are no longer. Returns those that were key (one at
    /// most), which UIWindow announces as having resigned.
    @MainActor func windowBecameKey(_ window: UIWindow) -> [UIWindow] {
        let resigned = liveWindows.filter { $0 !== window && $0.resignKey() }
        if !keyedWindows.contains(where: { $0.window === window }) { keyedWindows.append(WeakWindow(window: window)) }
        return resigned
    }

    init(assertions: AssertionConfiguration) {
        state = Locked(LockedState(lifecycle: ApplicationLifecycle(configuration: assertions)))
    }

    /// Writes a diagnostic about the app, as its other calls are said (for the UIKit
    /// module's refusals, which have no error to return).
    package func logDiagnostic(_ level: BGDiagnosticMessage.Level, _ text: String) {
        guard let context else { return }
        context.driver.log(level, app: context.app, text)
    }

    /// Runs `body` with this application's own app context current, so that what it resolves
    /// (`UNUserNotificationCenter.current()`) is this app's, whichever app's context is current
    /// where it is called (a simulator runs several in one process).
    package func withOwnContext<R>(_ body: () throws -> R) rethrows -> R {
        guard let context else { return try body() }
        return try context.withCurrent(body)
    }

    var requiredContext: BGAppContext {
        guard let context else { BGProgrammingError.raise("BGApplication used after its app context was released") }
        return context
    }

    // MARK: State

    /// `UIApplication.applicationState`. While a lifecycle notification (or the delegate
    /// method it leads to) is delivered, the state iOS shows then: `.active` during
    /// `willResignActive`, `.background` during `willEnterForeground` (docs/porting.md,
    /// "Lifecycle notifications").
    public var applicationState: State {
        if let announced = announcedState.withLock({ $0 }) { return announced }
        switch lifecycleState {
        case .active: return .active
        case .inactive, .notRunning: return .inactive
        case .background, .suspended: return .background
        }
    }

    /// The full lifecycle state, including not running and suspended.
    public var lifecycleState: ApplicationLifecycleState { state.withLock { $0.lifecycle.state } }

    /// Whether the app finished launching (registrations are closed).
    public var hasFinishedLaunching: Bool { state.withLock { $0.lifecycle.hasFinishedLaunching } }

    /// Whether files protected with `FileProtectionType.complete` can be read: `true`
    /// when the device is unlocked or content protection is not enabled (Apple). Linux has
    /// no Data Protection (a file's readability does not change with the screen lock), so
    /// it is always `true`, and the protected-data notifications and delegate methods never
    /// come.
    public var isProtectedDataAvailable: Bool { true }

    /// Whether the system may run the app's scheduled tasks.
    public var backgroundRefreshStatus: UIBackgroundRefreshStatus {
        let context = requiredContext
        guard context.driver.store != nil || context.driver.isLinkedToDaemon else { return .restricted }
        return context.driver.backgroundRefreshEnabled(for: context.app) ? .available : .denied
    }

    /// Turns the app's Background App Refresh switch on or off (the Settings switch on
    /// iOS; persisted). While off, submitting refresh or processing requests fails with
    /// `unavailable`.
    /// Posts ``backgroundRefreshStatusDidChangeNotification`` when the status changes.
    public func setBackgroundRefreshEnabled(_ enabled: Bool) {
        let context = requiredContext
        let before = backgroundRefreshStatus
        // Exact when the scheduler is this process's (one notification per change, however
        // many threads turn the switch at once); under bgtaskd, judged by reading before and after.
        let changed = context.driver.setBackgroundRefresh(enabled, for: context.app) ?? (backgroundRefreshStatus != before)
        if changed, before != .restricted {
            post([Self.backgroundRefreshStatusDidChangeNotification])
        }
    }

    /// Calls `observer` after every state change.
    public func observeState(_ observer: @escaping @Sendable (ApplicationLifecycleState) -> Void) {
        state.withLock { $0.observers.append(observer) }
    }

    // MARK: Lifecycle (driven by the program or the simulator on Linux)

    /// The process started (not running -> inactive); registrations are open. Launched by
    /// bgtaskd for a task, the app is in the background from here (iOS's background launch:
    /// `applicationState` is `.background` while the delegate's launch methods run).
    public func launch() {
        let intoBackground = requiredContext.launchedInBackground
        _ = change(intoBackground: intoBackground) { lifecycle, now in lifecycle.launch(at: now, intoBackground: intoBackground) }
    }

    /// `didFinishLaunching` returned: closes the registration window, makes the app
    /// active, and delivers tasks that were launched while it was starting.
    /// - Parameter activate: false when the system launched the app into the background
    ///   (the user did not open it): it does not become active, and no foreground is
    ///   recorded for the usage model.
    ///
    /// Launched by bgtaskd for a task (iOS's background launch), the app is in the
    /// background from here (`applicationState` `.background`), as iOS reports it:
    /// `didFinishLaunchingNotification` is posted, `didEnterBackgroundNotification` is not
    /// (there was no foreground to leave), and the daemon, not the app, suspends it.
    public func finishLaunching(activate: Bool = true) {
        let context = requiredContext
        let deferred: [BGTask]
        if context.launchedInBackground {
            deferred = change(finishingLaunch: true, intoBackground: true) { lifecycle, now in lifecycle.finishLaunchingIntoBackground(at: now) }
        } else {
            deferred = change(finishingLaunch: true) { lifecycle, now in lifecycle.finishLaunching(at: now, activate: activate) }
        }
        for task in deferred { context.deliver(task) }
        context.driver.runDueWork()
    }

    /// The app moved to the background: assertions start their clock; without any, the
    /// app is suspended after the suspend delay.
    public func enterBackground() {
        _ = change { lifecycle, now in lifecycle.enterBackground(at: now) }
    }

    /// The app came back to the foreground.
    public func enterForeground() {
        _ = change { lifecycle, now in lifecycle.enterForeground(at: now) }
    }

    /// The user swiped the app away in the app switcher: the system gives it no background
    /// launches until the user opens it again, and cancels its queued continued-processing
    /// requests. Under bgtaskd the app's process is ended (`bgtask force-quit`); called in
    /// the app's own process (the simulator, an embedded scheduler), nothing here ends it,
    /// nor a run in progress.
    public func forceQuit() {
        let context = requiredContext
        context.driver.appForceQuit(context.app)
    }

    func deferUntilLaunched(_ task: BGTask) {
        let deliverNow = state.withLock { state -> Bool in
            if state.lifecycle.hasFinishedLaunching { return true }
            state.deferredTasks.append(task)
            return false
        }
        if deliverNow { requiredContext.deliver(task) }
    }

    /// One of the app's scheduled tasks is handed to its handler: a suspended app is
    /// resumed into the background for it (no `didEnterBackgroundNotification`: the user
    /// did nothing), and the app is not suspended while it runs.
    func taskRunStarted() {
        _ = change(intoBackground: true) { lifecycle, now in lifecycle.taskStarted(at: now) }
    }

    /// One of the app's scheduled tasks is over.
    func taskRunEnded() {
        _ = change { lifecycle, now in lifecycle.taskEnded(at: now) }
    }

    /// Work the system hands the app outside its tasks (the user's response to a
    /// notification with a background action, which iOS runs in the background): a
    /// suspended app is woken into the background for it as for a task, and holds
    /// background time (an assertion named `name`, which bgtaskd sees) until the returned
    /// closure is called or the time runs out, whichever comes first; either ends both once.
    package func beginSystemWork(named name: String) -> @Sendable () -> Void {
        taskRunStarted()
        // The assertion's identifier once known, and whether the work ended (the expiration
        // may come before `beginBackgroundTask` has returned it).
        let held = Mutex<(identifier: UIBackgroundTaskIdentifier?, ended: Bool)>((nil, false))
        let finish: @Sendable () -> Void = { [weak self] in
            let ending = held.withLock { held -> (first: Bool, identifier: UIBackgroundTaskIdentifier?) in
                defer { held.ended = true }
                return (!held.ended, held.identifier)
            }
            guard ending.first else { return }
            if let identifier = ending.identifier { self?.endBackgroundTask(identifier) }
            self?.taskRunEnded()
        }
        let identifier = beginBackgroundTask(withName: name) { finish() }
        guard identifier != .invalid else { return finish }
        let endedMeanwhile = held.withLock { held -> Bool in
            if !held.ended { held.identifier = identifier }
            return held.ended
        }
        if endedMeanwhile { endBackgroundTask(identifier) }
        return finish
    }

    // MARK: Assertions

    /// Asks for extra background time to finish critical work (Apple:
    /// `beginBackgroundTask(withName:expirationHandler:)`). Returns `.invalid` when no time
    /// can be granted. Balance every call with ``endBackgroundTask(_:)``.
    /// - Parameter handler: called shortly before the time runs out; it must be tiny
    ///   (about 1 s): save a flag, cancel, and call ``endBackgroundTask(_:)``. As on iOS it
    ///   is `@MainActor`: it runs on the main queue, which the program must drain
    ///   (`dispatchMain()`, `RunLoop.main.run()`, an async `main`); after 5 s without it
    ///   running, an error naming the assertion is logged.
    @preconcurrency
    public func beginBackgroundTask(withName taskName: String?, expirationHandler handler: (@MainActor @Sendable () -> Void)? = nil) -> UIBackgroundTaskIdentifier {
        var call: AppClosureCall?
        if let handler { call = AppClosureCall(body: handler) }
        return beginAssertion(named: taskName, expiration: call)
    }

    /// `beginBackgroundTask`, with an expiration handler of any isolation (a nonisolated
    /// one runs on the expiration queue: ``ProcessInfo/performExpiringActivity(withReason:using:)``).
    func beginAssertion(named taskName: String?, expiration handler: AppClosureCall?) -> UIBackgroundTaskIdentifier {
        let context = requiredContext
        let now = context.driver.clock.now()
        var refusal: String?
        let identifier = state.withLock { state -> Int? in
            let identifier = state.lifecycle.beginAssertion(name: taskName, hasExpirationHandler: handler != nil, at: now)
            // Only for a refusal, under the same lock: nothing changed since the begin.
            if identifier == nil { refusal = state.lifecycle.assertionRefusal(at: now) }
            if let identifier, let handler { state.expirationHandlers[identifier] = handler }
            // Told under the lock, so that a begin and an end on two threads reach the daemon
            // in the order they happened (the message is only queued on the connection).
            if identifier != nil, state.lifecycle.outstandingAssertions.count == 1 { context.driver.appAssertionsChanged(context.app, held: true) }
            return identifier
        }
        guard let identifier else {
            context.driver.log(.warning, app: context.app, "beginBackgroundTask\(taskName.map { "(withName: \"\($0)\")" } ?? ""): no background time: \(refusal ?? "state \(lifecycleState)"); returned .invalid")
            return .invalid
        }
        context.driver.trace(.assertionBegan(context.app, identifier, name: taskName, at: now))
        rescheduleTimer()
        return UIBackgroundTaskIdentifier(rawValue: identifier)
    }

    /// `beginBackgroundTask(expirationHandler:)`: the same without a name.
    @preconcurrency
    public func beginBackgroundTask(expirationHandler handler: (@MainActor @Sendable () -> Void)? = nil) -> UIBackgroundTaskIdentifier {
        beginBackgroundTask(withName: nil, expirationHandler: handler)
    }

    /// Ends an assertion (Apple: `endBackgroundTask(_:)`); callable from any thread.
    /// Ending `.invalid`, an unknown identifier, or one already ended is logged as an
    /// error naming the identifier (use ``end(_:)`` to get it thrown instead).
    public func endBackgroundTask(_ identifier: UIBackgroundTaskIdentifier) {
        do {
            try end(identifier)
        } catch {
            requiredContext.driver.log(.error, app: requiredContext.app, "\(error)")
        }
    }

    /// Ends an assertion, throwing ``AssertionError`` for `.invalid`, unknown or
    /// already-ended identifiers.
    public func end(_ identifier: UIBackgroundTaskIdentifier) throws(AssertionError) {
        var failure: AssertionError?
        _ = change { lifecycle, now in
            do throws(AssertionError) {
                return try lifecycle.endAssertion(identifier.rawValue, at: now)
            } catch {
                failure = error
                return []
            }
        }
        let context = requiredContext
        state.withLock { state in
            _ = state.expirationHandlers.removeValue(forKey: identifier.rawValue)
            // Under the lock, in order with the begins (see beginAssertion).
            if failure == nil, state.lifecycle.outstandingAssertions.isEmpty { context.driver.appAssertionsChanged(context.app, held: false) }
        }
        if let failure { throw failure }
        context.driver.trace(.assertionEnded(context.app, identifier.rawValue, at: context.driver.clock.now()))
    }

    /// Seconds of background time left: `Double.greatestFiniteMagnitude` in the
    /// foreground, falling in real time in the background. Under 10 s, checkpoint and
    /// stop; under 5 s, defer to the next launch.
    public var backgroundTimeRemaining: TimeInterval {
        let now = requiredContext.driver.clock.now()
        return state.withLock { $0.lifecycle.backgroundTimeRemaining(at: now) }
    }

    /// The assertions held, by identifier.
    public var outstandingBackgroundTasks: [UIBackgroundTaskIdentifier] {
        state.withLock { $0.lifecycle.outstandingAssertions.map(UIBackgroundTaskIdentifier.init(rawValue:)) }
    }

    // MARK: Signals

    /// For servers under a process supervisor: SIGTERM (and SIGINT) means "entering the
    /// background". Background tasks in progress get their expiration at once (and the
    /// grace period to complete); work guarded by assertions gets its window. Once the app,
    /// after such a signal, would be suspended (no assertion left), or once it is terminated
    /// (the watchdog), the process exits when `exitWhenDone` (status 0 after a clean
    /// finish, 1 after the watchdog), after its background tasks ended, so each is recorded
    /// as it ended (expired, or terminated) rather than found unfinished at the next start.
    /// A suspension without a signal (the app sent to the background, `bgtask background`
    /// under bgtaskd) leaves the process as iOS leaves a suspended app: there, to be
    /// launched again for its tasks.
    ///
    /// Call it right after ``launch()``, before the app's own launch code: registering and
    /// submitting can wait on a busy bgtaskd for seconds, and a SIGTERM that comes before
    /// the handlers are installed ends the process by the signal's default (status 143)
    /// instead of this orderly way. A signal during the launch puts the app in the
    /// background, and ``finishLaunching()`` then leaves it there. Call it from the main
    /// thread: it blocks SIGTERM and SIGINT there while libdispatch registers the sources
    /// that read them, so that a signal meanwhile waits for them, and returns once they are
    /// registered (milliseconds), with the thread's signal mask as it was (unless they could
    /// not be registered in time: then they stay blocked, and a warning says so).
    public func handleTerminationSignals(exitWhenDone: Bool = true) {
        let context = requiredContext
        if exitWhenDone {
            let exitObserver: @Sendable (ApplicationLifecycleState) -> Void = { [weak self] newState in
                let status: Int32
                switch newState {
                case .suspended:
                    guard self?.state.withLock({ $0.terminationSignalled }) == true else { return }
                    status = 0
                case .notRunning: status = 1
                default: return
                }
                // Exiting ends the process's runs too: they get their expiration first.
                context.driver.appTerminating(context.app)
                self?.exitWhenRunsEnd(status: status)
            }
            state.withLock { $0.exitObserver = exitObserver }
        }
        // Registered before returning, blocked meanwhile: a SIGTERM that comes during the
        // app's launch waits for its source instead of being dropped (SIG_IGN, as before,
        // lost one that came before libdispatch registered the source).
        let watch = SignalWatch.start([SIGTERM, SIGINT], on: context.expirationQueue, keepBlocked: false) { [weak self] signalNumber in
            context.driver.log(.info, app: context.app, "signal \(signalNumber): entering the background")
            let wasSuspended = self?.state.withLock { state in
                state.terminationSignalled = true
                return state.lifecycle.state == .suspended
            } ?? false
            // Only a process that is about to exit stops launching and expires its runs;
            // one that stays (exitWhenDone: false) goes on running background work.
            if exitWhenDone { context.driver.appTerminating(context.app) }
            // Started by bgtaskd (in the background for its tasks, or for the user's tap),
            // whose SIGTERM means the process is being ended (docs/daemon.md): it exits once
            // the runs it was handed have ended,
            // whatever its lifecycle state (no transition of it would end the process).
            // Suspended already (sent to the background before the signal): no change
            // will come to end the process either, so it ends once its runs have.
            if exitWhenDone, wasSuspended || (context.driver.isLinkedToDaemon && context.launchedByDaemon) {
                self?.exitWhenRunsEnd(status: 0)
            }
            self?.enterBackground()
        }
        if !watch.registeredInTime {
            context.driver.log(.warning, app: context.app, "the SIGTERM and SIGINT sources were not registered within \(SignalWatch.registrationTimeoutText): they stay blocked in the main thread (a signal waits for them), and programs the app starts from it inherit them blocked")
        }
        state.withLock { $0.signalSources += watch.sources }
    }

    /// Exits with `status` once no run of the app is in progress, after the notifications of
    /// the last change (willTerminate...) reached their observers.
    private func exitWhenRunsEnd(status: Int32) {
        let first = state.withLock { state in
            defer { state.exitRequested = true }
            return !state.exitRequested
        }
        guard first else { return }
        let context = requiredContext
        context.driver.whenRunsEnd(of: context.app) { [weak self] in
            self?.waitForPostedNotifications(timeout: 2)
            exit(status)
        }
    }

    // MARK: Internals

    /// Applies a lifecycle change and its effects; returns tasks deferred until launch.
    /// `finishingLaunch`: the change is `finishLaunching`, so `didFinishLaunchingNotification`
    /// is posted (once, before the state notifications) when launch did finish.
    /// `intoBackground`: the change is a background launch, whose move to the background
    /// posts no `didEnterBackgroundNotification`.
    private func change(finishingLaunch: Bool = false, intoBackground: Bool = false, _ body: (inout ApplicationLifecycle, Date) -> [LifecycleEffect]) -> [BGTask] {
        let context = requiredContext
        let now = context.driver.clock.now()
        let (deferred, delivers) = state.withLock { state in
            let wasFinished = state.lifecycle.hasFinishedLaunching
            let effects = body(&state.lifecycle, now)
            var deferred: [BGTask] = []
            if state.lifecycle.hasFinishedLaunching {
                deferred = state.deferredTasks
                state.deferredTasks.removeAll()
            }
            let observers = state.observers + (state.exitObserver.map { [$0] } ?? [])
            state.undeliveredEffects.append(LifecycleDelivery(
                effects: effects, observers: observers, at: now, intoBackground: intoBackground,
                finishedLaunch: finishingLaunch && !wasFinished && state.lifecycle.hasFinishedLaunching))
            // Another thread delivering (or this one, a change made from an observer) takes
            // this change's effects after those before it.
            let delivers = !state.deliveringEffects
            state.deliveringEffects = true
            return (deferred, delivers)
        }
        if delivers { deliverEffects() }
        rescheduleTimer()
        return deferred
    }

    /// Delivers the lifecycle effects not yet delivered, oldest first, until none is left.
    /// Outside the lock: observers of the notifications are app code.
    private func deliverEffects() {
        while let next = state.withLock({ state -> LifecycleDelivery? in
            guard !state.undeliveredEffects.isEmpty else {
                state.deliveringEffects = false
                return nil
            }
            return state.undeliveredEffects.removeFirst()
        }) {
            if next.finishedLaunch {
                // `.inactive` during the notification for a launch that makes the app active,
                // `.background` for one that leaves it in the background (`activate: false`
                // or a launch for a task).
                let becomesActive = next.effects.contains { effect in
                    if case .stateChanged(_, .active) = effect { return true }
                    return false
                }
                post([Self.didFinishLaunchingNotification], launchedIntoBackground: !becomesActive)
            }
            perform(next.effects, observers: next.observers, at: next.at, intoBackground: next.intoBackground)
        }
    }

    private func perform(_ effects: [LifecycleEffect], observers: [@Sendable (ApplicationLifecycleState) -> Void], at now: Date, intoBackground: Bool = false) {
        let context = requiredContext
        for effect in effects {
            switch effect {
            case .stateChanged(let old, let new):
                context.driver.trace(.lifecycle(context.app, from: old, to: new, at: now))
                if new == .active { context.driver.appForegrounded(context.app) }
                // A background launch is no news to the system that made it.
                if new == .background, !intoBackground { context.driver.appBackgrounded(context.app) }
                let names = Self.notifications(from: old, to: new)
                post(intoBackground ? names.filter { $0 != Self.didEnterBackgroundNotification } : names)
                for observer in observers { observer(new) }
            case .expireAssertions(let identifiers):
                context.driver.trace(.assertionsExpired(context.app, identifiers, at: now))
                let handlers = state.withLock { state in identifiers.compactMap { id in state.expirationHandlers[id].map { (id, $0) } } }
                for (identifier, handler) in handlers {
                    context.invoke(handler, otherwiseOn: context.expirationQueue, what: "the expiration handler of background task \(identifier)")
                }
            case .terminate(let reason):
                context.driver.log(.error, app: context.app, "terminated by the system: \(reason)")
                context.driver.trace(.appTerminated(context.app, reason, at: now))
                state.withLock { $0.expirationHandlers.removeAll() }
                // The watchdog ended the assertions it held.
                context.driver.appAssertionsChanged(context.app, held: false)
            }
        }
    }

    private func rescheduleTimer() {
        let context = requiredContext
        state.withLock { state in
            let deadline = state.lifecycle.nextDeadline
            guard deadline != state.timerAt else { return }
            state.timer?.cancel()
            state.timerAt = deadline
            state.timer = deadline.map { instant in
                context.driver.clock.schedule(at: instant) { [weak self] in
                    self?.timerFired()
                }
            }
        }
    }

    private func timerFired() {
        state.withLock { $0.timerAt = nil }
        _ = change { lifecycle, now in lifecycle.tick(at: now) }
    }
}

/// The iOS name of ``BGApplication``, so `UIApplication.shared.beginBackgroundTask { ... }`
/// compiles unchanged.
public typealias UIApplication = BGApplication

extension BGApplication {
    /// ``ProcessInfo/performExpiringActivity(withReason:using:)`` (declared in
    /// FoundationCompat, which reaches this through FoundationHooks.swift): `block` on a
    /// background queue with `false`, guarded by a background assertion; again with `true`
    /// if the assertion expires while it runs; with `true` at once if none can be taken.
    func performExpiringActivity(reason: String, block: @escaping @Sendable (Bool) -> Void) {
        let context = requiredContext
        let identifier = Mutex(UIBackgroundTaskIdentifier.invalid)
        // Not `beginBackgroundTask`, whose handler is main-actor: the block runs on a
        // background queue, as on iOS.
        let assertion = beginAssertion(named: reason, expiration: AppClosureCall(body: { block(true) }))
        guard assertion != .invalid else {
            context.dispatch(on: context.expirationQueue) { block(true) }
            return
        }
        identifier.withLock { $0 = assertion }
        // A serial queue of its own per call (concurrent with other calls' blocks, as on a
        // global queue), never `DispatchQueue.global()`, whose first block starts
        // libdispatch's worker-pool monitor (docs/daemon.md, "Idle cost").
        context.dispatch(on: DispatchQueue(label: "bgtask.expiring-activity")) {
            block(false)
            self.endBackgroundTask(identifier.withLock { $0 })
        }
    }
}

/// A window the application lists without keeping it alive.
struct WeakWindow {
    weak var window: UIWindow?
}
