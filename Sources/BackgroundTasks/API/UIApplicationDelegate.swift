import Dispatch
import Foundation
import Synchronization

// iOS's app delegate, so that an `AppDelegate` written for iOS compiles and runs unchanged
// (docs/porting.md, "An app delegate"):
//
//     @main
//     class AppDelegate: UIResponder, UIApplicationDelegate {
//         var window: UIWindow?
//         func application(_ application: UIApplication,
//                          didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?) -> Bool {
//             BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.refresh", using: nil) { task in ... }
//             return true
//         }
//         func applicationDidEnterBackground(_ application: UIApplication) { scheduleAppRefresh() }
//     }
//
// `@main` runs ``UIApplicationMain(delegate:)``: the delegate's launch methods, the
// registration window closed after `didFinishLaunching`, the lifecycle methods called as
// the app changes state, SIGTERM as "entering the background", and the main queue served
// on the main thread by its run loop.

/// The base class of an iOS app delegate (Apple: `UIResponder`). On Linux it has no events
/// to respond to; it gives `AppDelegate` its superclass and the initializer
/// ``UIApplicationMain(delegate:)`` creates it with. Main-actor `@preconcurrency`, as
/// UIKit's classes are to Swift: an app delegate written before concurrency (Swift 5 mode)
/// that touches its state from a function that is not main-actor compiles, as on iOS (it
/// was an error while this was plain `@MainActor`). The delegate protocol is too.
@preconcurrency @MainActor
open class UIResponder: NSObject, UIUserActivityRestoring {
    /// Creates a responder. Not `required`, as Apple's is not: `@main` and the delegate
    /// adaptor make an app delegate from its type as iOS does, whatever `init()` it has
    /// (``ObjectMaking``), so a delegate's own `override init()` compiles unchanged.
    public override init() {
        super.init()
    }

    /// The activity the responder keeps current (Apple: `userActivity`; a scene's is the one
    /// it restores from). Kept as set: Linux hands no activities.
    open var userActivity: NSUserActivity?
    /// Updates `activity` before it is saved (never called on Linux).
    open func updateUserActivityState(_ activity: NSUserActivity) {}
    /// Restores the state `activity` carries (called by the app's own restoration handler).
    open func restoreUserActivityState(_ activity: NSUserActivity) {}
}

/// A window (Apple: `UIWindow`). Linux draws no user interface: this type exists so that an
/// app or scene delegate's `var window: UIWindow?`, `UIWindow(windowScene:)`,
/// `UIWindow(frame:)` and `makeKeyAndVisible()` compile; nothing shows it. `import UIKit`
/// adds its `rootViewController` (Sources/UIKit/ViewControllers.swift).
@preconcurrency @MainActor
open class UIWindow: UIResponder {
    /// The scene the window belongs to (Apple: settable, as a scene delegate that makes its
    /// window in code sets it: the window then counts among that scene's `windows`).
    public weak var windowScene: UIWindowScene?
    /// Whether ``makeKeyAndVisible()`` was called.
    public private(set) var isKeyWindow = false
    /// The window's rectangle (empty unless the app gave one: there is no screen).
    public var frame: CGRect = .zero
    /// The window's rectangle in its own coordinates.
    public var bounds: CGRect { CGRect(origin: .zero, size: frame.size) }
    /// What UIKit's `rootViewController` keeps: the UIKit module's view controller types
    /// are not known here.
    package var rootViewControllerObject: AnyObject?
    /// What UIKit's `backgroundColor` keeps.
    package var backgroundColorObject: AnyObject?
    /// The view UIKit keeps what is added to the window in.
    package var contentViewObject: AnyObject?
    /// Whether the window is hidden: until ``makeKeyAndVisible()``, as Apple's windows are.
    /// A change is announced (``didBecomeVisibleNotification``, ``didBecomeHiddenNotification``),
    /// as UIKit announces one.
    package var windowIsHidden = true {
        didSet {
            if windowIsHidden != oldValue { announce([windowIsHidden ? Self.didBecomeHiddenNotification : Self.didBecomeVisibleNotification]) }
        }
    }
    /// Where the window stands among the app's windows (Apple: `windowLevel`; `.normal`
    /// unless the app sets it). Nothing is drawn, so the level only orders the windows the
    /// application lists (`UIApplication.windows`, `UIWindowScene.windows`): back to front by
    /// level, as Apple's `windows` are; it does not change which window is key.
    open var windowLevel: UIWindow.Level = .normal

    // Apple's designated initializers (a window subclass writes `override init(frame:)` or
    // `override init(windowScene:)` and `required init?(coder:)`, as Xcode asks), and `init()`
    // as a convenience over them, so that a subclass overriding all three inherits it.

    /// A window of `windowScene`.
    public init(windowScene: UIWindowScene) {
        super.init()
        self.windowScene = windowScene
    }

    /// A window of `frame` (apps pass `UIScreen.main.bounds`).
    public init(frame: CGRect) {
        self.frame = frame
        super.init()
    }

    /// A window from an archive. Linux has no storyboards: an empty window, as `init()`.
    public required init?(coder: NSCoder) {
        super.init()
    }

    /// A window with an empty frame, not in a scene.
    public convenience override init() {
        self.init(frame: .zero)
    }

    /// Makes the window the key window (it shows nothing on Linux): its root view
    /// controller's view is loaded (`viewDidLoad` runs), as on iOS; the application lists it
    /// in `windows`, and it becomes `keyWindow` (the previous key window is no longer key).
    /// Announced as iOS announces it: the window became visible (if it was hidden), then the
    /// previous key window resigned key, then this one became key (Apple: "Shows the window
    /// and makes it the key window").
    open func makeKeyAndVisible() {
        windowIsHidden = false
        makeKey()
        (rootViewControllerObject as? WindowRoot)?.loadForWindow(self)
    }

    /// Makes the window the key window without listing it as shown (Apple: `makeKey()`):
    /// ``didResignKeyNotification`` is posted for the window that was key, then
    /// ``didBecomeKeyNotification`` for this one (nothing when it already was).
    open func makeKey() {
        let resigned = BGAppContext.resolveExisting()?.application.windowBecameKey(self) ?? []
        let becomesKey = !isKeyWindow
        isKeyWindow = true
        announce(resigned.map { _ in Self.didResignKeyNotification } + (becomesKey ? [Self.didBecomeKeyNotification] : []),
                 objects: resigned + (becomesKey ? [self] : []))
    }

    /// Another window became key: returns whether this one was key (and so resigned).
    func resignKey() -> Bool {
        defer { isKeyWindow = false }
        return isKeyWindow
    }

    /// Posts `names`, in order, each with its window of `objects` as object (the window itself
    /// by default), as UIKit's other notifications here are (``BGApplication/postFromCurrentApp(_:)``),
    /// the windows held weakly meanwhile: one the app let go by then is not announced.
    private func announce(_ names: [Notification.Name], objects: [UIWindow]? = nil) {
        BGApplication.postFromCurrentApp(zip(names, objects ?? Array(repeating: self, count: names.count)).map { ($0, .weakly($1)) })
    }
}

extension UIWindow {
    // UIKit's window notifications, with Apple's names (`"UIWindowDidBecomeKeyNotification"`...),
    // the window as object and no user info. Analytics SDKs observe them to read the screen's
    // size when a window becomes key (PostHog, the seventeenth outside probe).

    /// Posted when a window becomes the key window (``makeKey()``, ``makeKeyAndVisible()``).
    nonisolated public static let didBecomeKeyNotification = Notification.Name("UIWindowDidBecomeKeyNotification")
    /// Posted when the key window stops being key because another window became key.
    nonisolated public static let didResignKeyNotification = Notification.Name("UIWindowDidResignKeyNotification")
    /// Posted when a hidden window is shown (``makeKeyAndVisible()``, `isHidden = false`).
    nonisolated public static let didBecomeVisibleNotification = Notification.Name("UIWindowDidBecomeVisibleNotification")
    /// Posted when a shown window is hidden (`isHidden = true`).
    nonisolated public static let didBecomeHiddenNotification = Notification.Name("UIWindowDidBecomeHiddenNotification")
}

extension UIWindow {
    /// A window's place among the app's windows (Apple: `UIWindow.Level`): a number, the
    /// higher in front, with UIKit's three named levels and the arithmetic UIKit's Swift
    /// overlay gives it (`UIWindow.Level.alert + 1` for a lock screen above alerts).
    public struct Level: RawRepresentable, Hashable, Comparable, Sendable {
        /// The level's number.
        public var rawValue: CGFloat
        /// A level of `rawValue`.
        public init(rawValue: CGFloat) { self.rawValue = rawValue }
        /// A level of `rawValue`.
        public init(_ rawValue: CGFloat) { self.rawValue = rawValue }

        /// The default level (0).
        public static let normal = Level(0)
        /// The status bar's level (1000).
        public static let statusBar = Level(1000)
        /// The level of alerts (2000).
        public static let alert = Level(2000)

        /// Whether `lhs` stands behind `rhs`.
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
        /// The level `rhs` above `lhs`.
        public static func + (lhs: Level, rhs: CGFloat) -> Level { Level(lhs.rawValue + rhs) }
        /// The level `lhs` above `rhs`.
        public static func + (lhs: CGFloat, rhs: Level) -> Level { Level(lhs + rhs.rawValue) }
        /// The level `rhs` below `lhs`.
        public static func - (lhs: Level, rhs: CGFloat) -> Level { Level(lhs.rawValue - rhs) }
        /// How far `lhs` stands above `rhs`.
        public static func - (lhs: Level, rhs: Level) -> CGFloat { lhs.rawValue - rhs.rawValue }
        /// Raises `lhs` by `rhs`.
        public static func += (lhs: inout Level, rhs: CGFloat) { lhs.rawValue += rhs }
        /// Lowers `lhs` by `rhs`.
        public static func -= (lhs: inout Level, rhs: CGFloat) { lhs.rawValue -= rhs }
    }
}

/// What a window's root controller does when the window becomes key (UIKit's
/// UIViewController loads its view).
@MainActor
package protocol WindowRoot: AnyObject {
    /// Loads the view, and the shown child's, the root's view placed in `window`.
    func loadForWindow(_ window: UIWindow)
}

extension BGApplication {
    /// The keys of the launch options an app delegate is given (Apple:
    /// `UIApplication.LaunchOptionsKey`). On Linux a launch has no options (`nil`); the keys
    /// exist so that code reading them compiles.
    public struct LaunchOptionsKey: Hashable, RawRepresentable, Sendable {
        /// The key's name.
        public let rawValue: String
        /// A key by name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A key by name.
        public init(_ rawValue: String) { self.rawValue = rawValue }

        /// A remote notification launched the app.
        public static let remoteNotification = LaunchOptionsKey("UIApplicationLaunchOptionsRemoteNotificationKey")
        /// A URL was opened.
        public static let url = LaunchOptionsKey("UIApplicationLaunchOptionsURLKey")
        /// The app that opened the URL.
        public static let sourceApplication = LaunchOptionsKey("UIApplicationLaunchOptionsSourceApplicationKey")
        /// A location event launched the app.
        public static let location = LaunchOptionsKey("UIApplicationLaunchOptionsLocationKey")
        /// A Home Screen quick action launched the app.
        public static let shortcutItem = LaunchOptionsKey("UIApplicationLaunchOptionsShortcutItemKey")
        /// A user activity continued in the app.
        public static let userActivityDictionary = LaunchOptionsKey("UIApplicationLaunchOptionsUserActivityDictionaryKey")
        /// The type of that activity.
        public static let userActivityType = LaunchOptionsKey("UIApplicationLaunchOptionsUserActivityTypeKey")
        /// A local notification launched the app (before iOS 10).
        @available(*, deprecated, message: "Use UserNotifications Framework's -[UNUserNotificationCenterDelegate didReceiveNotificationResponse:withCompletionHandler:]")
        public static let localNotification = LaunchOptionsKey("UIApplicationLaunchOptionsLocalNotificationKey")
    }

    /// The keys of the options given with a URL to open (Apple: `UIApplication.OpenURLOptionsKey`),
    /// for the delegate's `application(_:open:options:)`. Linux hands an app no URLs: the
    /// method is never called; the keys exist so that code reading them compiles.
    public struct OpenURLOptionsKey: Hashable, RawRepresentable, Sendable {
        /// The key's name.
        public let rawValue: String
        /// A key by name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A key by name.
        public init(_ rawValue: String) { self.rawValue = rawValue }

        /// The bundle identifier of the app that asked to open the URL.
        public static let sourceApplication = OpenURLOptionsKey("UIApplicationOpenURLOptionsSourceApplicationKey")
        /// The property list the opening app passed.
        public static let annotation = OpenURLOptionsKey("UIApplicationOpenURLOptionsAnnotationKey")
        /// Whether the file must be opened in place.
        public static let openInPlace = OpenURLOptionsKey("UIApplicationOpenURLOptionsOpenInPlaceKey")
        /// Tap attribution data.
        public static let eventAttribution = OpenURLOptionsKey("UIApplicationOpenURLOptionsEventAttributionKey")
    }

    /// A kind of app extension the system would let the app use (Apple:
    /// `UIApplication.ExtensionPointIdentifier`), for the delegate's
    /// `application(_:shouldAllowExtensionPointIdentifier:)`, with which banking and wallet
    /// apps refuse third-party keyboards. Linux has no app extensions: the method compiles as
    /// the app's own and is never called (not a requirement of the protocol, as the other
    /// methods the system never calls: docs/porting.md); the identifiers exist so that the
    /// delegate compiles.
    public struct ExtensionPointIdentifier: Hashable, RawRepresentable, Sendable {
        /// The extension point's name.
        public let rawValue: String
        /// An extension point by name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// An extension point by name.
        public init(_ rawValue: String) { self.rawValue = rawValue }

        /// Custom keyboards.
        public static let keyboard = ExtensionPointIdentifier("com.apple.keyboard-service")
    }
}

/// iOS's app delegate protocol (Apple: `UIApplicationDelegate`), with the methods the
/// system calls about launching, the app's states and background work. Every method has a
/// default that does nothing (for the fetch and remote-notification methods: completes
/// with `.noData`), as Apple's are optional; implement the ones you need with Apple's
/// signatures. The system calls them on the main actor. Main-actor `@preconcurrency`, as
/// Apple's (imported from Objective-C) is to Swift: an `NSObject` delegate written before
/// concurrency that calls its own methods from a global queue compiles in Swift 5 mode with
/// Xcode's warning, not an error. The `async` remote-notification method's default is
/// nonisolated (it hops to the main actor): a main-actor default could not receive a
/// non-Sendable dictionary from a caller the `@preconcurrency` protocol treats as outside
/// the main actor.
@preconcurrency @MainActor
public protocol UIApplicationDelegate: AnyObject {
    /// Launch has begun; registrations are open.
    func application(_ application: UIApplication, willFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?) -> Bool
    /// Launch is about to finish: register the background task handlers here. The
    /// registration window closes when it returns.
    func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?) -> Bool
    /// The app became active (in the foreground).
    func applicationDidBecomeActive(_ application: UIApplication)
    /// The app is about to stop being active.
    func applicationWillResignActive(_ application: UIApplication)
    /// The app is in the background (a good moment to schedule a refresh).
    func applicationDidEnterBackground(_ application: UIApplication)
    /// The app is about to come back to the foreground.
    func applicationWillEnterForeground(_ application: UIApplication)
    /// The app is about to be ended while it runs.
    func applicationWillTerminate(_ application: UIApplication)
    /// Protected files are about to become unreadable (the device locks). Never called on
    /// Linux, which has no Data Protection (``BGApplication/isProtectedDataAvailable``).
    func applicationProtectedDataWillBecomeUnavailable(_ application: UIApplication)
    /// Protected files are readable again (the device unlocked). Never called on Linux.
    func applicationProtectedDataDidBecomeAvailable(_ application: UIApplication)
    /// A background fetch (``BGApplication/setMinimumBackgroundFetchInterval(_:)``): call
    /// the completion handler once with what it found. The handler is `@Sendable` here, so a
    /// delegate may declare it with or without `@Sendable` and hear nothing in either language
    /// mode (declared plain here, a Swift 6 mail app's `@escaping @Sendable` warned
    /// "sendability ... does not match": the twenty-first outside probe). Apple's is plain (a
    /// main-actor protocol's completion handlers are not imported `@Sendable`), so one
    /// difference is left: a delegate that forwards its own plain handler to another one
    /// warns in Swift 6 mode here (the `@preconcurrency` protocol keeps it a warning);
    /// declaring its handler `@escaping @Sendable` silences it (docs/porting.md).
    func application(_ application: UIApplication, performFetchWithCompletionHandler completionHandler: @escaping @Sendable (UIBackgroundFetchResult) -> Void)
    /// A remote wake (`bgtask push`, iOS's silent push): call the completion handler once.
    func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any], fetchCompletionHandler completionHandler: @escaping @Sendable (UIBackgroundFetchResult) -> Void)
    /// The same, in its `async` form (the system calls this one; by default it calls the
    /// completion-handler form).
    func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any]) async -> UIBackgroundFetchResult
    /// ``BGApplication/registerForRemoteNotifications()`` succeeded: `deviceToken` is
    /// ``BGApplication/remoteNotificationDeviceToken`` (the app identifier's UTF-8 bytes,
    /// what `bgtask push` takes).
    func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data)
    /// ``BGApplication/registerForRemoteNotifications()`` failed: the manifest has no
    /// `remote-notification` background mode.
    func application(_ application: UIApplication, didFailToRegisterForRemoteNotificationsWithError error: any Error)
    /// The configuration of the scene about to connect (the default: the manifest's
    /// "Default Configuration" for the session's role, see ``UISceneConfiguration``).
    func application(_ application: UIApplication, configurationForConnecting connectingSceneSession: UISceneSession, options: UIScene.ConnectionOptions) -> UISceneConfiguration
    /// Scene sessions were discarded.
    func application(_ application: UIApplication, didDiscardSceneSessions sceneSessions: Set<UISceneSession>)
    /// Asked to open a URL (a deep link, a file). Linux hands an app no URLs: never called.
    func application(_ app: UIApplication, open url: URL, options: [UIApplication.OpenURLOptionsKey: Any]) -> Bool
}

/// The defaults of the delegate's methods: the launch methods return `true`, the state
/// and registration methods do nothing, and the fetch and remote-notification methods complete with
/// `.noData`; the `async` remote-notification method calls the completion-handler one.
extension UIApplicationDelegate {
    public func application(_ application: UIApplication, willFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?) -> Bool { true }
    public func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?) -> Bool { true }
    public func applicationDidBecomeActive(_ application: UIApplication) {}
    public func applicationWillResignActive(_ application: UIApplication) {}
    public func applicationDidEnterBackground(_ application: UIApplication) {}
    public func applicationWillEnterForeground(_ application: UIApplication) {}
    public func applicationWillTerminate(_ application: UIApplication) {}
    public func applicationProtectedDataWillBecomeUnavailable(_ application: UIApplication) {}
    public func applicationProtectedDataDidBecomeAvailable(_ application: UIApplication) {}
    public func application(_ application: UIApplication, performFetchWithCompletionHandler completionHandler: @escaping @Sendable (UIBackgroundFetchResult) -> Void) {
        completionHandler(.noData)
    }
    public func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any], fetchCompletionHandler completionHandler: @escaping @Sendable (UIBackgroundFetchResult) -> Void) {
        completionHandler(.noData)
    }
    /// Calls the completion-handler method and returns the first result it completes with;
    /// an app that calls its handler twice does not trap (only the first call counts, as on iOS).
    /// Nonisolated, so that its caller keeps its dictionary (the `@preconcurrency` protocol
    /// makes a main-actor default take it across isolation: Swift 6 callers would have to
    /// give it up); it hops to the main actor for the completion-handler method.
    nonisolated(nonsending) public func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any]) async -> UIBackgroundFetchResult {
        let call = SilentPushCall(delegate: self, userInfo: userInfo)
        return await withCheckedContinuation { continuation in
            let pending = Mutex<CheckedContinuation<UIBackgroundFetchResult, Never>?>(continuation)
            Task { @MainActor in
                call.delegate.application(application, didReceiveRemoteNotification: call.userInfo) { result in
                    pending.withLock { waiting in
                        let first = waiting
                        waiting = nil
                        return first
                    }?.resume(returning: result)
                }
            }
        }
    }
    public func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {}
    public func application(_ application: UIApplication, didFailToRegisterForRemoteNotificationsWithError error: any Error) {}
    public func application(_ application: UIApplication, configurationForConnecting connectingSceneSession: UISceneSession, options: UIScene.ConnectionOptions) -> UISceneConfiguration {
        UISceneConfiguration(name: "Default Configuration", sessionRole: connectingSceneSession.role)
    }
    public func application(_ application: UIApplication, didDiscardSceneSessions sceneSessions: Set<UISceneSession>) {}
    public func application(_ app: UIApplication, open url: URL, options: [UIApplication.OpenURLOptionsKey: Any]) -> Bool { false }
}

/// The delegate and payload of a silent push, carried to the main actor by the async
/// method's default. @unchecked Sendable: the delegate is main-actor by its protocol and is
/// only called there; the dictionary is the system's payload for this one call, read there
/// and nowhere else, as iOS hands it.
private struct SilentPushCall<Delegate: UIApplicationDelegate>: @unchecked Sendable {
    let delegate: Delegate
    let userInfo: [AnyHashable: Any]
}

extension UIApplicationDelegate where Self: NSObject {
    /// `@main` on an app delegate: creates it (by its `init()`, as iOS does, ``ObjectMaking``)
    /// and runs ``UIApplicationMain(delegate:)``, as iOS does for `@main class AppDelegate:
    /// UIResponder, UIApplicationDelegate` (or `NSObject`).
    public static func main() {
        UIApplicationMain(delegate: ObjectMaking.make(Self.self))
    }
}

/// Runs the app around `delegate` and never returns (Apple: `UIApplicationMain`): makes it
/// ``BGApplication/delegate``, starts the launch (`willFinishLaunching`, then
/// `didFinishLaunching`, where handlers are registered), connects the delegate's fetch and
/// remote-notification methods, closes the registration window, then runs the main run
/// loop. The lifecycle methods follow the app's state changes (each after its
/// notification is posted, on the main actor). SIGTERM means "entering the background"
/// (``BGApplication/handleTerminationSignals(exitWhenDone:)``): background tasks get their
/// expiration and the process exits once they ended. The main queue is served by the main
/// run loop on the main thread, as on iOS. Call ``EmbeddedScheduler/bootstrap(_:)``
/// before, if at all (the manifest is otherwise found as `BGTaskScheduler.shared` finds it).
@MainActor
public func UIApplicationMain(delegate: any UIApplicationDelegate) -> Never {
    UIApplicationMain(delegate: delegate, beforeFinishingLaunch: {})
}

/// ``UIApplicationMain(delegate:)`` with `beforeFinishingLaunch` run after the delegate's
/// launch methods, while registrations are still open (SwiftUI's `App` registers its
/// scenes' background tasks there).
@MainActor
package func UIApplicationMain(delegate: any UIApplicationDelegate, beforeFinishingLaunch: () -> Void) -> Never {
    let application = UIApplication.shared
    application.delegate = delegate
    application.launch()
    // Before the delegate's launch code, which may wait on a busy bgtaskd: a SIGTERM
    // meanwhile is handled, not the end of the process by the signal's default.
    application.handleTerminationSignals()
    _ = delegate.application(application, willFinishLaunchingWithOptions: nil)
    _ = delegate.application(application, didFinishLaunchingWithOptions: nil)
    // The user's launch connects the app's scene (a background launch connects none).
    if !application.requiredContext.launchedInBackground {
        application.sceneConnectionTried = true
        if let scene = application.connectScene(for: delegate) {
            application.connectedScene = scene
            scene.activationState = .foregroundInactive
            scene.delegate?.sceneWillEnterForeground(scene)
            application.queueSceneNotification(UIScene.willEnterForegroundNotification, of: scene)
        }
        application.postSceneNotificationsSoon()
    }
    beforeFinishingLaunch()
    application.finishLaunching()
    runMainRunLoop()
}

/// Serves the main queue on the main thread for ever, as iOS's main run loop does: blocks
/// on the main queue (and so the main actor) run on the main thread, where
/// `Thread.isMainThread` is true, as iOS code expects. (`dispatchMain()` parks the main
/// thread and drains the main queue on another one.) A timer due at the end of time keeps
/// the run loop waiting rather than returning: no wakeups while nothing happens.
@MainActor
func runMainRunLoop() -> Never {
    let keepAlive = Timer(fire: .distantFuture, interval: 0, repeats: false) { _ in }
    RunLoop.main.add(keepAlive, forMode: .default)
    while true {
        _ = RunLoop.main.run(mode: .default, before: .distantFuture)
    }
}

/// Apple's `UIApplicationMain(argc, argv, principalClassName, delegateClassName)` for a
/// `main.swift` that names its delegate class, as in
/// `UIApplicationMain(CommandLine.argc, CommandLine.unsafeArgv, nil, NSStringFromClass(AppDelegate.self))`.
/// The delegate class must be a ``UIResponder`` adopting ``UIApplicationDelegate``; one
/// that cannot be found or created stops the program with a message naming it. The
/// principal class is ignored (there is one application class). Call it from the main
/// thread (top-level code of `main.swift`), as on iOS; it is nonisolated so that Swift 5
/// code calls it as it does Apple's.
public func UIApplicationMain(
    _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>,
    _ principalClassName: String?, _ delegateClassName: String?
) -> Int32 {
    MainActor.assumeIsolated {
        switch makeApplicationDelegate(named: delegateClassName) {
        case .success(let delegate): UIApplicationMain(delegate: delegate)
        case .failure(let problem): fatalError("UIApplicationMain: \(problem.message)")
        }
    }
}

/// Why ``makeApplicationDelegate(named:)`` made no delegate.
public struct ApplicationDelegateError: Error, Equatable, Sendable {
    /// What is wrong, naming the class.
    public var message: String
    /// An error with `message`.
    public init(message: String) { self.message = message }
}

/// Creates the app delegate whose class is named `name` (as `NSStringFromClass` gives it:
/// `Module.AppDelegate`), as `UIApplicationMain` does with its last argument.
@MainActor
public func makeApplicationDelegate(named name: String?) -> Result<any UIApplicationDelegate, ApplicationDelegateError> {
    guard let name, !name.isEmpty else {
        return .failure(ApplicationDelegateError(message: "no delegate class named; pass NSStringFromClass(AppDelegate.self)"))
    }
    guard let found = NSClassFromString(name) else {
        return .failure(ApplicationDelegateError(message: "no class named '\(name)' was found (NSStringFromClass(AppDelegate.self) gives the name with its module)"))
    }
    guard let type = found as? NSObject.Type else {
        return .failure(ApplicationDelegateError(message: "'\(name)' does not derive from NSObject (an app delegate is 'class AppDelegate: UIResponder, UIApplicationDelegate')"))
    }
    // Asked before the object is made: making it runs the app's `init()`.
    guard type is any UIApplicationDelegate.Type else {
        return .failure(ApplicationDelegateError(message: "'\(name)' does not adopt UIApplicationDelegate"))
    }
    return .success(ObjectMaking.make(type) as! any UIApplicationDelegate)
}

extension BGApplication {
    /// Forwards the system's calls to the app delegate: fetches and remote wakes to its
    /// methods, each state change to its lifecycle method (after the change's notification,
    /// on the main actor, in the order of the notifications).
    @MainActor
    func connectDelegate() {
        let application = self
        setBackgroundFetchHandler { @MainActor completion in
            guard let delegate = application.delegate else { return completion(.noData) }
            delegate.application(application, performFetchWithCompletionHandler: completion)
        }
        setRemoteNotificationHandler { @MainActor userInfo, completion in
            guard let delegate = application.delegate else { return completion(.noData) }
            // The async form, which by default calls the completion-handler one: whichever
            // the delegate implements is called.
            Task { @MainActor in
                completion(await delegate.application(application, didReceiveRemoteNotification: userInfo.userInfo))
            }
        }
        for name in [Self.didBecomeActiveNotification, Self.willResignActiveNotification, Self.didEnterBackgroundNotification,
                     Self.willEnterForegroundNotification, Self.willTerminateNotification] {
            let token = NotificationCenter.default.addObserver(forName: name, object: application, queue: .main) { _ in
                // As the app: its delegates' code (a scene delegate making its window key,
                // a submit from applicationDidEnterBackground) resolves to this app's context,
                // also where one process plays several (the simulator).
                MainActor.assumeIsolated { application.requiredContext.withCurrent { application.forwardToDelegates(name) } }
            }
            delegateObservers.append(token)
        }
    }

    /// One state change, told to the scene's delegate when the app has a connected scene
    /// (iOS then tells the app delegate nothing of it but termination), else to the app
    /// delegate.
    @MainActor
    private func forwardToDelegates(_ name: Notification.Name) {
        // A process launched in the background gets its scene when it first comes to the
        // foreground, as iOS connects the scene when the user opens the app.
        let toForeground = name == Self.willEnterForegroundNotification || name == Self.didBecomeActiveNotification
        if connectedScene == nil, !sceneConnectionTried, toForeground, let delegate {
            sceneConnectionTried = true
            if let scene = connectScene(for: delegate) {
                connectedScene = scene
                if name == Self.didBecomeActiveNotification {
                    // Entering the foreground comes before becoming active: `.background`
                    // while the scene hears it, as during the app's willEnterForeground.
                    scene.activationState = .foregroundInactive
                    announcing(.background) { scene.delegate?.sceneWillEnterForeground(scene) }
                    queueSceneNotification(UIScene.willEnterForegroundNotification, of: scene, announcing: .background)
                }
            }
        }
        if let scene = connectedScene {
            let sceneDelegate = scene.delegate
            switch name {
            case Self.didBecomeActiveNotification:
                scene.activationState = .foregroundActive
                sceneDelegate?.sceneDidBecomeActive(scene)
                queueSceneNotification(UIScene.didActivateNotification, of: scene)
            case Self.willResignActiveNotification:
                scene.activationState = .foregroundInactive
                sceneDelegate?.sceneWillResignActive(scene)
                queueSceneNotification(UIScene.willDeactivateNotification, of: scene)
            case Self.didEnterBackgroundNotification:
                scene.activationState = .background
                sceneDelegate?.sceneDidEnterBackground(scene)
                queueSceneNotification(UIScene.didEnterBackgroundNotification, of: scene)
            case Self.willEnterForegroundNotification:
                scene.activationState = .foregroundInactive
                sceneDelegate?.sceneWillEnterForeground(scene)
                queueSceneNotification(UIScene.willEnterForegroundNotification, of: scene)
            default:
                delegate?.applicationWillTerminate(self)
                scene.activationState = .unattached
                sceneDelegate?.sceneDidDisconnect(scene)
                queueSceneNotification(UIScene.didDisconnectNotification, of: scene)
            }
            return
        }
        guard let delegate else { return }
        // An app whose manifest declares scenes is told of its states by its scene only,
        // as on iOS: without one connected, its app delegate hears termination alone; but for
        // a scene delegate that could not be created here (connectScene said so).
        if !requiredContext.manifest.sceneConfigurations.isEmpty, !sceneDelegateCouldNotBeMade,
           name != Self.willTerminateNotification { return }
        switch name {
        case Self.didBecomeActiveNotification: delegate.applicationDidBecomeActive(self)
        case Self.willResignActiveNotification: delegate.applicationWillResignActive(self)
        case Self.didEnterBackgroundNotification: delegate.applicationDidEnterBackground(self)
        case Self.willEnterForegroundNotification: delegate.applicationWillEnterForeground(self)
        default: delegate.applicationWillTerminate(self)
        }
    }
}
