// What each import brings, as on iOS, in Swift 6 mode with warnings as errors: `import UIKit`
// alone brings UserNotifications (an app delegate that is the notification center's
// delegate), and a deep-link method with its options' keys.
import UIKit

@MainActor
final class UIKitOnlyAppDelegate: UIResponder, UIApplicationDelegate, UNUserNotificationCenterDelegate {
    var opened: [URL] = []

    func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]? = nil) -> Bool {
        UNUserNotificationCenter.current().delegate = self
        UNUserNotificationCenter.current().requestAuthorization(options: [.alert, .badge]) { _, _ in }
        return true
    }

    func application(_ app: UIApplication, open url: URL, options: [UIApplication.OpenURLOptionsKey: Any] = [:]) -> Bool {
        let source = options[.sourceApplication] as? String
        opened.append(url)
        return source != nil || url.scheme == "feedreader"
    }

    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification) async -> UNNotificationPresentationOptions {
        [.banner, .list]
    }

    /// Settings stored through key-value coding, as older apps write it.
    func rememberLastRefresh(_ date: Date) {
        UserDefaults.standard.setValue(date, forKey: "lastRefresh")
    }

    func lastRefresh() -> Date? {
        UserDefaults.standard.value(forKey: "lastRefresh") as? Date
    }
}

/// A `main.swift` that names its delegate, as apps without `@main` write it: with `import
/// UIKit`, whose Clang side declares the C entry of `@UIApplicationMain`, the call still
/// means the Swift `UIApplicationMain` (compiled, never called: it does not return).
func mainSwiftShapeWithUIKit() -> Int32 {
    UIApplicationMain(CommandLine.argc, CommandLine.unsafeArgv, nil, NSStringFromClass(UIKitOnlyAppDelegate.self))
}
