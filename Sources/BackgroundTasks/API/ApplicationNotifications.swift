import Foundation

// UIApplication's lifecycle notifications, posted on `NotificationCenter.default` with the
// application as the object, at the transitions iOS posts them (docs/porting.md). In the
// simulator many apps share one process and one default center: observe with
// `object: UIApplication.shared` to hear only your app.
extension BGApplication {
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
