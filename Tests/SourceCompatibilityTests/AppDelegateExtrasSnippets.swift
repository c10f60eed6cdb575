// What app delegates hold beside their background tasks, in the shapes public iOS apps
// write them (an outside probe found each missing): universal links and Handoff through
// NSUserActivity, Home Screen quick actions, the key window found through the scenes or the
// application, a privacy screen laid over the window, the device's idiom, app-group
// containers and iOS 16's directory URLs, process activities, Control Center reloads.
// Swift 6 language mode with warnings as errors; AppDelegateExtrasTests runs them.
import BackgroundTasks
import UIKit
import WidgetKit

/// A banking app's delegate: links, quick actions, a privacy cover.
final class LinkingAppDelegate: UIResponder, UIApplicationDelegate {
    var window: UIWindow?
    private(set) var openedPaths: [String] = []
    private(set) var performedShortcuts: [String] = []
    static let coverTag = 0xC0FE

    func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?) -> Bool {
        application.shortcutItems = [
            UIApplicationShortcutItem(type: "com.example.bank.transfer", localizedTitle: "Transfer", localizedSubtitle: nil,
                                      icon: UIApplicationShortcutIcon(type: .compose), userInfo: nil),
            UIApplicationShortcutItem(type: "com.example.bank.scan", localizedTitle: "Scan a cheque", localizedSubtitle: "Deposit",
                                      icon: UIApplicationShortcutIcon(systemImageName: "camera"), userInfo: ["source": "home" as NSString]),
        ]
        if let shortcut = launchOptions?[.shortcutItem] as? UIApplicationShortcutItem { _ = handle(shortcut) }
        return true
    }

    func application(_ application: UIApplication, continue userActivity: NSUserActivity,
                     restorationHandler: @escaping ([any UIUserActivityRestoring]?) -> Void) -> Bool {
        guard userActivity.activityType == NSUserActivityTypeBrowsingWeb, let url = userActivity.webpageURL else { return false }
        openedPaths.append(url.path)
        restorationHandler(window?.rootViewController.map { [$0] })
        return true
    }

    func application(_ application: UIApplication, performActionFor shortcutItem: UIApplicationShortcutItem,
                     completionHandler: @escaping (Bool) -> Void) {
        completionHandler(handle(shortcutItem))
    }

    func handle(_ item: UIApplicationShortcutItem) -> Bool {
        performedShortcuts.append(item.type)
        return item.type.hasPrefix("com.example.bank.")
    }

    func applicationWillResignActive(_ application: UIApplication) {
        guard let window else { return }
        let cover = UIView(frame: window.bounds)
        cover.backgroundColor = .systemBackground
        cover.tag = Self.coverTag
        window.addSubview(cover)
        window.bringSubviewToFront(cover)
    }

    func applicationDidBecomeActive(_ application: UIApplication) {
        window?.viewWithTag(Self.coverTag)?.removeFromSuperview()
    }
}

/// A scene delegate continuing activities and quick actions.
final class LinkingSceneDelegate: UIResponder, UIWindowSceneDelegate {
    var window: UIWindow?
    private(set) var continued: [String] = []

    func scene(_ scene: UIScene, willConnectTo session: UISceneSession, options connectionOptions: UIScene.ConnectionOptions) {
        if let activity = connectionOptions.userActivities.first { self.scene(scene, continue: activity) }
        if let shortcut = connectionOptions.shortcutItem { continued.append(shortcut.type) }
        scene.userActivity = NSUserActivity(activityType: "com.example.bank.browsing")
    }

    func scene(_ scene: UIScene, continue userActivity: NSUserActivity) {
        continued.append(userActivity.activityType)
    }

    func windowScene(_ windowScene: UIWindowScene, performActionFor shortcutItem: UIApplicationShortcutItem,
                     completionHandler: @escaping (Bool) -> Void) {
        continued.append(shortcutItem.type)
        completionHandler(true)
    }
}

/// The key window, found through the connected scenes as iOS 15 code does.
@MainActor func currentKeyWindow() -> UIWindow? {
    UIApplication.shared.connectedScenes
        .compactMap { $0 as? UIWindowScene }
        .flatMap(\.windows)
        .first { $0.isKeyWindow }
}

/// How the app names the device in its support mail.
func deviceKind() -> String {
    switch UIDevice.current.userInterfaceIdiom {
    case .phone: return "iPhone"
    case .pad: return "iPad"
    case .mac: return "Mac"
    case .unspecified: return "unknown"
    default: return "other"
    }
}

/// Where a widget-sharing app keeps its feed cache, as such apps write it.
func sharedFeedCacheURL() -> URL {
    if let container = FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: "group.com.example.feed") {
        return container.appendingPathComponent("feed-cache.json")
    }
    return URL.cachesDirectory.appendingPathComponent("feed-cache.json")
}

/// A save that must not be cut short, as Mac-aware code brackets it.
func saveBracketedByAnActivity(_ save: () -> Void) {
    guard !ProcessInfo.processInfo.isiOSAppOnMac, !ProcessInfo.processInfo.isMacCatalystApp else { return save() }
    let activity = ProcessInfo.processInfo.beginActivity(options: [.userInitiated, .suddenTerminationDisabled], reason: "Saving")
    defer { ProcessInfo.processInfo.endActivity(activity) }
    save()
}

/// A refresh handler's last step: widgets and controls reloaded.
func reloadSurfaces() {
    WidgetCenter.shared.reloadAllTimelines()
    ControlCenter.shared.reloadControls(ofKind: "com.example.feed.toggle")
}

let documentsExport = URL.documentsDirectory.appendingPathComponent("export.csv")
