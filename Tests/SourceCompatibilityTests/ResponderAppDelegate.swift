// An app delegate the iOS way, in Swift 6 language mode: `UIResponder, UIApplicationDelegate`,
// `UIWindow?`, Apple's method signatures (docs/porting.md, "An app delegate").
import BackgroundTasks

final class ResponderAppDelegate: UIResponder, UIApplicationDelegate {
    nonisolated static let refreshIdentifier = ModernAppDelegate.refreshIdentifier
    var window: UIWindow?
    private(set) var events: [String] = []

    func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?) -> Bool {
        events.append("didFinishLaunching \(launchOptions?[.remoteNotification] == nil ? "plain" : "push")")
        BGTaskScheduler.shared.register(forTaskWithIdentifier: Self.refreshIdentifier, using: nil) { task in
            self.events.append("refresh")
            task.setTaskCompleted(success: true)
        }
        return true
    }

    func applicationDidBecomeActive(_ application: UIApplication) { events.append("didBecomeActive") }
    func applicationWillResignActive(_ application: UIApplication) { events.append("willResignActive") }
    func applicationDidEnterBackground(_ application: UIApplication) { events.append("didEnterBackground") }
    func applicationWillEnterForeground(_ application: UIApplication) { events.append("willEnterForeground") }

    func application(_ application: UIApplication, performFetchWithCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void) {
        events.append("performFetch")
        completionHandler(.newData)
    }
}

/// A scene delegate the iOS way, in Swift 6 language mode.
final class ResponderSceneDelegate: UIResponder, UIWindowSceneDelegate {
    var window: UIWindow?
    private(set) var events: [String] = []

    func scene(_ scene: UIScene, willConnectTo session: UISceneSession, options connectionOptions: UIScene.ConnectionOptions) {
        guard let windowScene = scene as? UIWindowScene else { return }
        events.append("willConnectTo \(windowScene.windows.count) \(session.role == .windowApplication)")
    }

    func sceneDidEnterBackground(_ scene: UIScene) {
        events.append("didEnterBackground")
    }
}
