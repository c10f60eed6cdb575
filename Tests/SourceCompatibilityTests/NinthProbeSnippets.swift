// The shapes a ninth outside compile probe found in public apps beside their background work
// (push, scenes, SDKs, upload managers), in Swift 6 mode with warnings as errors, and what
// they do here (NinthProbeTests).
import BackgroundTasks
import BackgroundTasksTesting
import Foundation
import Network
import os.log
import SchedulerCore
import Synchronization
import Testing
import UIKit
import UserNotifications

/// Xcode's scene delegate without a storyboard: the window made in code over the scene's space.
final class CodeWindowSceneDelegate: UIResponder, UIWindowSceneDelegate {
    var window: UIWindow?

    func scene(_ scene: UIScene, willConnectTo session: UISceneSession, options connectionOptions: UIScene.ConnectionOptions) {
        guard let windowScene = scene as? UIWindowScene else { return }
        window = UIWindow(frame: windowScene.coordinateSpace.bounds)
        window?.windowScene = windowScene
        window?.makeKeyAndVisible()
        scene.title = connectionOptions.userActivities.first?.title
    }
}

/// An SDK's background-task bookkeeping guarded by `objc_sync_enter`, as before Swift locks.
final class BackgroundTaskBook: @unchecked Sendable {
    // @unchecked: every access to `active` is between objc_sync_enter and objc_sync_exit.
    private var active: [Int: String] = [:]

    func synced<T>(_ body: () -> T) -> T {
        objc_sync_enter(self)
        defer { objc_sync_exit(self) }
        return body()
    }

    func add(_ identifier: Int, _ name: String) { synced { active[identifier] = name } }
    func remove(_ identifier: Int) { synced { active[identifier] = nil } }
    var count: Int { synced { active.count } }
}

/// An upload loop reading each chunk inside an autorelease pool.
func readChunks(of url: URL, count: Int) -> [Data] {
    (0..<count).compactMap { _ in autoreleasepool { try? Data(contentsOf: url) } }
}

/// A silent push handler's log line of its payload, and an action registered with the push.
func logPush(_ userInfo: [AnyHashable: Any], identifiers: [String]) {
    os_log("didReceiveRemoteNotification %{public}@", log: .default, type: .info, userInfo)
    os_log("pending %{public}@", log: .default, type: .debug, identifiers)
}

func replyAction() -> UNTextInputNotificationAction {
    UNTextInputNotificationAction(identifier: "reply", title: "Reply", options: [])
}

/// An app's launch lines beside its task registrations.
@MainActor
func launchChores(tabs: UITabBarController, unread: Int) {
    _ = nw_tls_create_options()
    UIWindow.appearance().tintColor = .systemBlue
    tabs.viewControllers?.first?.tabBarItem.badgeValue = unread > 0 ? String(unread) : nil
    if UIApplication.shared.userInterfaceLayoutDirection == .rightToLeft { tabs.selectedIndex = 0 }
    UIDevice.current.beginGeneratingDeviceOrientationNotifications()
    if UIDevice.current.orientation.isLandscape { tabs.selectedIndex = 1 }
}

/// A scene delegate on NSObject, as SwiftUI apps write one for quick actions, with an
/// `init()` of its own (not `required`) and the states it heard.
final class ObjectSceneDelegate: NSObject, UIWindowSceneDelegate {
    var window: UIWindow?
    var events: [String]

    override init() {
        events = ["init"]
        super.init()
    }

    func scene(_ scene: UIScene, willConnectTo session: UISceneSession, options connectionOptions: UIScene.ConnectionOptions) {
        events.append("willConnect")
    }
    func sceneDidEnterBackground(_ scene: UIScene) { events.append("didEnterBackground") }
}

/// A scene delegate that is a plain Swift class (not NSObject's): it has no `init()` the
/// runtime can find.
final class PlainSceneDelegate: UIWindowSceneDelegate {}

/// An app delegate that configures that scene delegate and hears the app's states.
final class ObjectSceneAppDelegate: UIResponder, UIApplicationDelegate {
    var events: [String] = []

    func application(_ application: UIApplication, configurationForConnecting connectingSceneSession: UISceneSession, options: UIScene.ConnectionOptions) -> UISceneConfiguration {
        let configuration = UISceneConfiguration(name: "Default Configuration", sessionRole: connectingSceneSession.role)
        configuration.delegateClass = ObjectSceneDelegate.self
        return configuration
    }

    func applicationDidEnterBackground(_ application: UIApplication) { events.append("didEnterBackground") }
}

/// An app delegate whose scene delegate is named by the manifest, or is the code-made window's.
final class NamedSceneAppDelegate: UIResponder, UIApplicationDelegate {
    var events: [String] = []
    var delegateClass: AnyClass?

    func application(_ application: UIApplication, configurationForConnecting connectingSceneSession: UISceneSession, options: UIScene.ConnectionOptions) -> UISceneConfiguration {
        let configuration = UISceneConfiguration(name: "Default Configuration", sessionRole: connectingSceneSession.role)
        configuration.delegateClass = delegateClass
        return configuration
    }

    func applicationDidEnterBackground(_ application: UIApplication) { events.append("didEnterBackground") }
}

/// A window class of the app's own, whose appearance proxy no other test shares.
final class BrandedWindow: UIWindow {}

@Suite struct NinthProbeTests {
    /// The app launched by the user on a simulated device, with a scene configuration (its
    /// delegate class named by `manifestClass`, or by the app delegate), one second played.
    @MainActor
    private func launchedByUser(_ delegate: any UIApplicationDelegate, manifestClass: String? = nil) async throws -> (SimulatedDevice, BGAppContext) {
        let device = try compatDevice()
        var manifest = compatManifest
        manifest.sceneConfigurations = [.init(name: "Default Configuration", delegateClassName: manifestClass)]
        let context = device.install(app: compatApp, manifest: manifest, launchedByUser: true) {
            UIApplication.shared.delegate = delegate
        }
        await device.run(for: 1)
        return (device, context)
    }

    @Test @MainActor func anNSObjectSceneDelegateIsMadeByItsInitAndHearsTheScenesStates() async throws {
        let delegate = ObjectSceneAppDelegate()
        let (device, context) = try await launchedByUser(delegate)
        let scene = try #require(context.application.connectedScenes.first)
        let sceneDelegate = try #require(scene.delegate as? ObjectSceneDelegate)
        #expect(sceneDelegate.events == ["init", "willConnect", "didEnterBackground"])
        #expect(delegate.events.isEmpty, "the scene delegate hears the app's states")
        #expect(!device.log.messages.contains { $0.level == .error }, "\(device.log.messages)")
    }

    @Test @MainActor func aSceneDelegateThatIsNotAnNSObjectIsSaidAndTheAppDelegateHearsTheAppsStates() async throws {
        let delegate = NamedSceneAppDelegate()
        delegate.delegateClass = PlainSceneDelegate.self
        let (device, context) = try await launchedByUser(delegate)
        #expect(context.application.connectedScenes.isEmpty)
        let said = device.log.messages.map(\.text).filter { $0.contains("PlainSceneDelegate") }
        #expect(said.count == 1, "\(device.log.messages)")
        #expect(said.first?.contains("does not derive from NSObject") == true)
        #expect(delegate.events == ["didEnterBackground"], "told instead of the scene delegate")
    }

    @Test @MainActor func aManifestsMissingSceneDelegateIsSaidAndTheAppDelegateHearsTheAppsStates() async throws {
        let delegate = NamedSceneAppDelegate()
        let (device, context) = try await launchedByUser(delegate, manifestClass: "NoSuchModule.NoSuchSceneDelegate")
        #expect(context.application.connectedScenes.isEmpty)
        #expect(device.log.messages.contains { $0.text.contains("NoSuchSceneDelegate") && $0.text.contains("app delegate is told") })
        #expect(delegate.events == ["didEnterBackground"])
    }

    @Test @MainActor func aSceneDelegateMakesItsWindowInCodeAndTheWindowJoinsTheScene() async throws {
        let delegate = NamedSceneAppDelegate()
        delegate.delegateClass = CodeWindowSceneDelegate.self
        let (_, context) = try await launchedByUser(delegate)
        let scene = try #require(context.application.connectedScenes.first as? UIWindowScene)
        let sceneDelegate = try #require(scene.delegate as? CodeWindowSceneDelegate)
        let window = try #require(sceneDelegate.window)
        context.withCurrent {
            #expect(scene.windows.contains { $0 === window } && scene.keyWindow === window)
        }
        #expect(window.frame == UIScreen.main.bounds && window.windowScene === scene)
        #expect(delegate.events.isEmpty, "the scene delegate hears the app's states")
    }

    @Test @MainActor func aWindowMadeInCodeJoinsItsSceneAndTheSpacesConvert() {
        let window = UIWindow(frame: UIScreen.main.coordinateSpace.bounds)
        #expect(window.frame.size.width == 390)
        let outer = UIView(frame: CGRect(x: 10, y: 20, width: 100, height: 100))
        let inner = UIView(frame: CGRect(x: 5, y: 5, width: 10, height: 10))
        outer.addSubview(inner)
        #expect(inner.convert(CGPoint(x: 1, y: 1), to: UIScreen.main) == CGPoint(x: 16, y: 26))
        #expect(outer.convert(CGPoint(x: 16, y: 26), from: UIScreen.main) == CGPoint(x: 6, y: 6))
        #expect(inner.convert(CGRect(x: 0, y: 0, width: 3, height: 3), to: outer) == CGRect(x: 5, y: 5, width: 3, height: 3))
        #expect(UIInterfaceOrientation.landscapeLeft.isLandscape && !UIInterfaceOrientation.portrait.isLandscape)
    }

    @Test func objcSyncIsARecursiveLockPerObject() async {
        let book = BackgroundTaskBook()
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask { for n in 0..<500 { book.add(task * 1_000 + n, "t"); book.remove(task * 1_000 + n - 1) } }
            }
        }
        #expect(book.count == 8, "the last of each task's 500, added under the lock")
    }

    @Test func objcSyncIsRecursiveAndOnlyTheHoldingThreadReleases() {
        final class Token: Sendable {}
        let lock = Token()
        #expect(objc_sync_enter(lock) == OBJC_SYNC_SUCCESS && objc_sync_enter(lock) == OBJC_SYNC_SUCCESS)
        // Another thread neither releases it nor takes it while it is held.
        let results = Mutex<[Int32]>([])
        let done = DispatchSemaphore(value: 0)
        let other = Thread {
            results.withLock { $0.append(objc_sync_exit(lock)) }
            done.signal()
        }
        other.start()
        done.wait()
        #expect(results.withLock { $0 } == [OBJC_SYNC_NOT_OWNING_THREAD_ERROR])
        let started = DispatchSemaphore(value: 0)
        let waiter = Thread {
            started.signal()
            objc_sync_enter(lock)
            results.withLock { $0.append(1) }
            objc_sync_exit(lock)
            done.signal()
        }
        waiter.start()
        started.wait()
        Thread.sleep(forTimeInterval: 0.05)
        #expect(results.withLock { $0.count } == 1, "the waiter waits while this thread holds the lock")
        #expect(objc_sync_exit(lock) == OBJC_SYNC_SUCCESS && objc_sync_exit(lock) == OBJC_SYNC_SUCCESS)
        done.wait()
        #expect(results.withLock { $0.count } == 2, "then takes it once released")
        #expect(objc_sync_exit(lock) == OBJC_SYNC_NOT_OWNING_THREAD_ERROR, "released once per enter")
        #expect(objc_sync_enter(42) == OBJC_SYNC_SUCCESS, "a value locks nothing")
        // An optional object is its object: entered through one, exited through the other.
        let optional: Token? = lock
        #expect(objc_sync_enter(optional as Any) == OBJC_SYNC_SUCCESS)
        #expect(objc_sync_exit(lock) == OBJC_SYNC_SUCCESS)
        #expect(objc_sync_enter(Token?.none as Any) == OBJC_SYNC_SUCCESS && objc_sync_exit(Token?.none as Any) == OBJC_SYNC_SUCCESS)
    }

    @Test func collectionsAreFormatArgumentsAndAPoolRunsItsBody() throws {
        #expect(String(format: "%@", ["a", "b"]) == #"["a", "b"]"#)
        #expect(String(format: "%@ %@", ["k": 1] as [String: Int], Set([3])) == #"["k": 1] [3]"#)
        logPush(["aps": ["content-available": 1]], identifiers: ["refresh"])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-pool-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("chunk")
        try Data("chunk".utf8).write(to: file)
        #expect(readChunks(of: file, count: 2) == [Data("chunk".utf8), Data("chunk".utf8)])
        #expect(throws: CocoaError.self) { try autoreleasepool { try Data(contentsOf: directory.appendingPathComponent("none")) } }
    }

    @Test @MainActor func itemsBadgesProxiesAndTheDeviceAreKept() throws {
        let reply = replyAction()
        #expect(reply.identifier == "reply" && reply.textInputButtonTitle.isEmpty && reply.textInputPlaceholder.isEmpty)
        let chats = UIViewController()
        chats.title = "Chats"
        #expect(chats.tabBarItem.title == "Chats" && chats.tabBarItem.badgeValue == nil)
        chats.tabBarItem.badgeValue = "3"
        #expect(chats.tabBarItem.badgeValue == "3")
        // A class's proxy gives windows made afterwards its settings; other classes keep theirs.
        BrandedWindow.appearance().overrideUserInterfaceStyle = .dark
        #expect(BrandedWindow.appearance() === BrandedWindow.appearance())
        #expect(BrandedWindow(frame: .zero).overrideUserInterfaceStyle == .dark)
        #expect(BrandedWindow(frame: .zero).traitCollection.userInterfaceStyle == .dark)
        #expect(UIWindow(frame: .zero).overrideUserInterfaceStyle == .unspecified)
        // The device: no orientation sensor; requests counted.
        let device = try compatDevice()
        let context = device.install(app: compatApp, manifest: compatManifest) {}
        let phone = context.device
        #expect(phone.orientation == .unknown && !phone.orientation.isValidInterfaceOrientation)
        phone.beginGeneratingDeviceOrientationNotifications()
        #expect(phone.isGeneratingDeviceOrientationNotifications)
        phone.endGeneratingDeviceOrientationNotifications()
        phone.endGeneratingDeviceOrientationNotifications()
        #expect(!phone.isGeneratingDeviceOrientationNotifications)
        #expect(UIDevice.orientationDidChangeNotification.rawValue == "UIDeviceOrientationDidChangeNotification")
        #expect(context.application.userInterfaceLayoutDirection == .leftToRight)
    }
}

/// The status bar's legacy switches (deprecated by Apple and here), reached through a
/// protocol the application conforms to, so the test reads them without a warning (this
/// target treats warnings as errors).
@MainActor
protocol LegacyStatusBar {
    var isNetworkActivityIndicatorVisible: Bool { get set }
    var isStatusBarHidden: Bool { get }
    var statusBarFrame: CGRect { get }
    func setStatusBarHidden(_ hidden: Bool, with animation: UIStatusBarAnimation)
}

extension UIApplication: LegacyStatusBar {}

@Suite struct LegacyStatusBarTests {
    @Test @MainActor func theStatusBarsSwitchesAreKeptAndItsFrameIsEmpty() throws {
        let device = try compatDevice()
        let context = device.install(app: compatApp, manifest: compatManifest) {}
        var statusBar: any LegacyStatusBar = context.application
        #expect(!statusBar.isNetworkActivityIndicatorVisible && !statusBar.isStatusBarHidden)
        statusBar.isNetworkActivityIndicatorVisible = true
        statusBar.setStatusBarHidden(true, with: .fade)
        #expect(statusBar.isNetworkActivityIndicatorVisible && statusBar.isStatusBarHidden && statusBar.statusBarFrame == .zero)
    }
}

/// An app context's alert when Background App Refresh is off, as public apps build it.
@MainActor
func refreshOffAlert(openSettings: @escaping () -> Void) -> UIAlertController {
    let alert = UIAlertController(title: "Background App Refresh is off", message: "Turn it on to get new stories.", preferredStyle: .alert)
    alert.addAction(UIAlertAction(title: "Settings", style: .default) { _ in openSettings() })
    alert.addAction(UIAlertAction(title: "Not now", style: .cancel))
    alert.preferredAction = alert.actions.first
    return alert
}

@Suite struct AlertTests {
    @Test @MainActor func anAlertIsKeptAsBuiltPresentedAndNeverAnswered() {
        var opened = false
        let alert = refreshOffAlert { opened = true }
        #expect(alert.title == "Background App Refresh is off" && alert.message == "Turn it on to get new stories.")
        #expect(alert.preferredStyle == .alert && alert.actions.map(\.title) == ["Settings", "Not now"])
        #expect(alert.actions.map(\.style) == [.default, .cancel] && alert.preferredAction === alert.actions.first)
        let root = UIViewController()
        root.present(alert, animated: true)
        #expect(root.presentedViewController === alert && alert.presentingViewController === root)
        #expect(!opened, "nobody taps on Linux")
        let sheet = UIAlertController(title: nil, message: nil, preferredStyle: .actionSheet)
        #expect(sheet.preferredStyle == .actionSheet && sheet.actions.isEmpty)
    }
}
