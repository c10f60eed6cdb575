// A scene-based iOS app as Xcode 11's template wrote it (iOS 13): `@UIApplicationMain` on
// the app delegate (Xcode 12 writes `@main`), which registers the background task and says
// which scene configuration to use; the scene delegate (SceneDelegate.swift) schedules the
// refresh when its scene enters the background. Compiled in Swift 5 language mode with
// warnings as errors (docs/porting.md, "Scenes"); the `print`s are what the tests read
// (DaemonTests.SceneApp). The manifest names SceneDelegate in UIApplicationSceneManifest.
import UIKit
import BackgroundTasks

@UIApplicationMain
class AppDelegate: UIResponder, UIApplicationDelegate {
    static let refreshIdentifier = "com.example.sceneapp.refresh"

    func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?) -> Bool {
        setvbuf(stdout, nil, _IOLBF, 0)
        print("event didFinishLaunching")
        // The scene's notifications, as apps observe them beside the delegate (a prefix of
        // their own: the tests read the delegate's events and these apart).
        for name in [UIScene.willConnectNotification, UIScene.willEnterForegroundNotification, UIScene.didActivateNotification,
                     UIScene.willDeactivateNotification, UIScene.didEnterBackgroundNotification] {
            _ = NotificationCenter.default.addObserver(forName: name, object: nil, queue: .main) { notification in
                // With the application's state as the observer reads it (what iOS shows then).
                let state = MainActor.assumeIsolated { stateWord(UIApplication.shared.applicationState) }
                print("scene-notification \(notification.name.rawValue) \(notification.object is UIScene) \(state)")
            }
        }
        BGTaskScheduler.shared.register(forTaskWithIdentifier: AppDelegate.refreshIdentifier, using: nil) { task in
            print("event handleAppRefresh scenes=\(UIApplication.shared.connectedScenes.count)")
            self.scheduleAppRefresh()
            task.setTaskCompleted(success: true)
        }
        return true
    }

    func application(_ application: UIApplication, configurationForConnecting connectingSceneSession: UISceneSession, options: UIScene.ConnectionOptions) -> UISceneConfiguration {
        print("event configurationForConnecting")
        return UISceneConfiguration(name: "Default Configuration", sessionRole: connectingSceneSession.role)
    }

    func applicationDidBecomeActive(_ application: UIApplication) {
        // Not called in an app with scenes: the scene delegate is.
        print("event applicationDidBecomeActive")
    }

    func scheduleAppRefresh() {
        let request = BGAppRefreshTaskRequest(identifier: AppDelegate.refreshIdentifier)
        request.earliestBeginDate = Date(timeIntervalSinceNow: 15 * 60)
        do {
            try BGTaskScheduler.shared.submit(request)
            print("event submitted")
        } catch {
            print("Could not schedule app refresh: \(error)")
        }
    }
}

/// `UIApplication.State` as a word, for the tests that read the output.
func stateWord(_ state: UIApplication.State) -> String {
    switch state {
    case .active: return "active"
    case .inactive: return "inactive"
    case .background: return "background"
    @unknown default: return "unknown"
    }
}
