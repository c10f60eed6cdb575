import Foundation
import SchedulerCore

// UIApplication's lifecycle notifications, posted on `NotificationCenter.default` with the
// application as the object, at the transitions iOS posts them (docs/porting.md). In the
// simulator many apps share one process and one default center: observe with
// `object: UIApplication.shared` to hear only your app.
//
// They are posted asynchronously, in order, from the application's own serial queue, never
// from the main queue and never under a lock: swift-corelibs-foundation delivers to an
// observer registered with `queue: .main` by adding an operation to the main queue and
// waiting for it, which deadlocks when the poster is the main queue itself (under
// `dispatchMain()` or an async `main`, the main queue is not served by the main thread,
// so Foundation does not recognise it as current). From a queue of our own, `.main`
// observers run on the main actor, as on iOS; `queue: nil` observers run on that queue
// with the app's context bound.
extension BGApplication {
    /// Posts each name with its object, in order, from the notification queue, as app work
    /// (the device's change notifications: `ProcessInfo`'s and `UIDevice`'s; UIKit's through
    /// ``postFromCurrentApp(_:)``). An object held weakly that was let go before delivery is
    /// not announced (``PostedObject/weakly(_:)``).
    package func post(_ posts: [(Notification.Name, PostedObject)]) {
        guard !posts.isEmpty, let context else { return }
        context.dispatch(on: notificationQueue) { Self.deliver(posts) }
    }

    /// Posts UIKit's notifications (a window's key and visibility changes, a pasteboard's
    /// writes), in order: from the notification queue of the app whose code runs, as app work,
    /// as the application's own notifications are; in a process with no app, from a serial
    /// queue of its own. Never from the main queue: a `.main` observer then runs on the main
    /// actor without the deadlock a post from the main queue risks. So they arrive after the
    /// call that made the change returns, where iOS posts them during it on the main thread.
    package static func postFromCurrentApp(_ posts: [(Notification.Name, PostedObject)]) {
        guard !posts.isEmpty else { return }
        if let application = BGAppContext.resolveExisting()?.application {
            application.post(posts)
        } else {
            notificationQueueWithoutApp.async { deliver(posts) }
        }
    }

    /// Where ``postFromCurrentApp(_:)`` posts in a process with no app: serial, so in the order
    /// the changes were made.
    private static let notificationQueueWithoutApp = DispatchQueue(label: "bgtask.uikit.notifications")

    /// Posts each name with its object, if it is still there.
    private static func deliver(_ posts: [(Notification.Name, PostedObject)]) {
        for (name, posted) in posts {
            guard let object = posted.object else { continue }
            NotificationCenter.default.post(name: name, object: object)
        }
    }

    /// Posts `names`, in order, from the notification queue, as app work (the simulator
    /// waits for the observers before time moves on). While each is delivered,
    /// ``applicationState`` reads what iOS shows during it (``stateAnnounced(by:launchedIntoBackground:)``),
    /// not the state the app has reached since: the change is made at once and posted
    /// after, so an observer (or a delegate method) of `willResignActive` would otherwise
    /// read `.background`, and one of `didEnterBackground` `.active` if the app came back
    /// meanwhile (an outside probe's).
    func post(_ names: [Notification.Name], launchedIntoBackground: Bool = false) {
        guard !names.isEmpty, let context else { return }
        context.dispatch(on: notificationQueue) { [self] in
            for name in names {
                announcedState.withLock { $0 = Self.stateAnnounced(by: name, launchedIntoBackground: launchedIntoBackground) }
                NotificationCenter.default.post(name: name, object: self)
                // What the scene's delegate did on hearing it (its `.main` observer ran
                // before `post` returned) comes next, before the app's next notification.
                postQueuedSceneNotifications()
            }
            announcedState.withLock { $0 = nil }
        }
    }

    /// What `applicationState` reads on iOS while `name` is delivered (UIKit changes the
    /// state on the main thread in step with posting): `.active` until `willResignActive`
    /// has been heard, `.background` from `didEnterBackground` and still during
    /// `willEnterForeground`, `.active` from `didBecomeActive`; during
    /// `didFinishLaunching`, `.inactive` for a launch into the foreground and `.background`
    /// for one into the background; `.background` while the app is told it will terminate.
    /// Nil for a notification that changes no state (background refresh status).
    static func stateAnnounced(by name: Notification.Name, launchedIntoBackground: Bool) -> State? {
        switch name {
        case didFinishLaunchingNotification: launchedIntoBackground ? .background : .inactive
        case willResignActiveNotification, didBecomeActiveNotification: .active
        case didEnterBackgroundNotification, willEnterForegroundNotification, willTerminateNotification: .background
        default: nil
        }
    }

    /// Queues a scene notification, posted (with the scene as the object) right after the
    /// application notification being delivered, or by ``postSceneNotificationsSoon()``.
    /// The scene's delegate is told of a change on the main actor while the notification
    /// queue waits for that `.main` observer: a post queued behind it would come after the
    /// app's next notification (a scene's `willEnterForeground` after its `sceneDidBecomeActive`).
    /// `announcing`: the state ``applicationState`` reads while it is delivered, when not
    /// the application notification's (a scene that connects and enters the foreground
    /// during the app's `didBecomeActive`).
    func queueSceneNotification(_ name: Notification.Name, of scene: UIScene, announcing: State? = nil) {
        sceneNotifications.withLock { $0.append((name, scene, announcing)) }
    }

    /// Runs `body` (app code: a delegate method) with ``applicationState`` reading `state`,
    /// then as before.
    func announcing(_ state: State, _ body: () -> Void) {
        let before = announcedState.withLock { announced in
            defer { announced = state }
            return announced
        }
        body()
        announcedState.withLock { $0 = before }
    }

    /// Posts the queued scene notifications from the notification queue, as app work: for
    /// a scene connected outside any application notification (the user's launch).
    func postSceneNotificationsSoon() {
        guard let context else { return }
        context.dispatch(on: notificationQueue) { [self] in
            // The user's launch, which may have made the app active since: `.inactive` while
            // the scene's notifications of the launch are delivered.
            announcedState.withLock { $0 = .inactive }
            postQueuedSceneNotifications()
            announcedState.withLock { $0 = nil }
        }
    }

    /// Posts what ``queueSceneNotification(_:of:)`` queued, in order (on the notification queue).
    private func postQueuedSceneNotifications() {
        let queued = sceneNotifications.withLock { queued in
            defer { queued.removeAll() }
            return queued
        }
        for (name, scene, announcing) in queued {
            if let announcing {
                self.announcing(announcing) { NotificationCenter.default.post(name: name, object: scene) }
            } else {
                NotificationCenter.default.post(name: name, object: scene)
            }
        }
    }

    /// Waits, at most `timeout` seconds, until the notifications posted so far have been
    /// delivered: an exiting process must not lose `willTerminateNotification`. Bounded,
    /// because an observer on the main queue waits for a main queue the exiting thread
    /// may itself be blocking.
    func waitForPostedNotifications(timeout: TimeInterval) {
        let delivered = DispatchSemaphore(value: 0)
        notificationQueue.async { delivered.signal() }
        _ = delivered.wait(timeout: .now() + timeout)
    }

    /// Posted once ``finishLaunching(activate:)`` closed the registration window.
    public static let didFinishLaunchingNotification = Notification.Name("UIApplicationDidFinishLaunchingNotification")
    /// Posted when the app became active (launched into the foreground, or brought back).
    public static let didBecomeActiveNotification = Notification.Name("UIApplicationDidBecomeActiveNotification")
    /// Posted when the app stops being active (before `didEnterBackgroundNotification`).
    public static let willResignActiveNotification = Notification.Name("UIApplicationWillResignActiveNotification")
    /// Posted when the app entered the background (``enterBackground()``; SIGTERM under
    /// ``handleTerminationSignals(exitWhenDone:)``).
    public static let didEnterBackgroundNotification = Notification.Name("UIApplicationDidEnterBackgroundNotification")
    /// Posted when the app leaves the background for the foreground (before
    /// `didBecomeActiveNotification`).
    public static let willEnterForegroundNotification = Notification.Name("UIApplicationWillEnterForegroundNotification")
    /// Posted when the system terminates the app while it runs (not when it is suspended).
    public static let willTerminateNotification = Notification.Name("UIApplicationWillTerminateNotification")
    /// Posted when ``backgroundRefreshStatus`` changed (``setBackgroundRefreshEnabled(_:)``).
    public static let backgroundRefreshStatusDidChangeNotification = Notification.Name("UIApplicationBackgroundRefreshStatusDidChangeNotification")

    /// Posted on iOS when the device locks and files protected with `.complete` become
    /// unreadable; never posted here (Linux has no Data Protection: ``isProtectedDataAvailable``).
    public static let protectedDataWillBecomeUnavailableNotification = Notification.Name("UIApplicationProtectedDataWillBecomeUnavailable")
    /// Posted on iOS when the device unlocks and protected files become readable; never
    /// posted here (``isProtectedDataAvailable`` is always `true`).
    public static let protectedDataDidBecomeAvailableNotification = Notification.Name("UIApplicationProtectedDataDidBecomeAvailable")

    /// Posted on iOS when the system is low on memory; never posted here (Linux has no
    /// memory warnings: a process over its cgroup's limit is killed, docs/daemon.md).
    public static let didReceiveMemoryWarningNotification = Notification.Name("UIApplicationDidReceiveMemoryWarningNotification")
    /// Posted on iOS at a significant change of time (midnight, a new time zone, daylight
    /// saving); never posted here.
    public static let significantTimeChangeNotification = Notification.Name("UIApplicationSignificantTimeChangeNotification")
    /// Posted on iOS when the user takes a screenshot; never posted here.
    public static let userDidTakeScreenshotNotification = Notification.Name("UIApplicationUserDidTakeScreenshotNotification")

    /// The notifications iOS posts when the app moves from `old` to `new`, in order.
    static func notifications(from old: ApplicationLifecycleState, to new: ApplicationLifecycleState) -> [Notification.Name] {
        var names: [Notification.Name] = []
        if old == .active, new != .active { names.append(willResignActiveNotification) }
        let wasInBackground = old == .background || old == .suspended
        switch new {
        case .active:
            if wasInBackground { names.append(willEnterForegroundNotification) }
            names.append(didBecomeActiveNotification)
        case .inactive:
            if wasInBackground { names.append(willEnterForegroundNotification) }
        case .background:
            if old == .active || old == .inactive { names.append(didEnterBackgroundNotification) }
        case .notRunning:
            // A suspended app is killed without running any code, as on iOS.
            if old != .suspended { names.append(willTerminateNotification) }
        case .suspended:
            break
        }
        return names
    }
}

/// A notification's object as the application holds it until the notification is delivered.
/// @unchecked Sendable: it is made by the code that changed the object and read once, on the
/// queue that delivers the notification, as UIKit hands its main-thread objects to observers;
/// the object is not touched here but to be handed over.
package struct PostedObject: @unchecked Sendable {
    private let kept: AnyObject?
    private weak var held: AnyObject?

    /// Kept until delivered.
    package static func kept(_ object: AnyObject) -> PostedObject { PostedObject(kept: object, held: nil) }

    /// Held weakly: not announced if the app let it go before delivery (a window: a queued
    /// notification must not keep a window the app released listed in `windows`).
    package static func weakly(_ object: AnyObject) -> PostedObject { PostedObject(kept: nil, held: object) }

    private init(kept: AnyObject?, held: AnyObject?) {
        self.kept = kept
        self.held = held
    }

    /// The object, when it is still there.
    var object: AnyObject? { kept ?? held }
}
