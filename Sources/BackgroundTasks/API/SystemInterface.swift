import Foundation

// The members of `UIApplication` that reach the system's user interface (the Home Screen's
// badge, the Settings app, other apps): background-task code calls them (a refresh sets
// the badge; a "Background App Refresh is off" row opens Settings), and Linux has none of
// that interface. They compile and answer as iOS answers when it cannot do the thing
// (docs/porting.md, "Push registration, badge, Settings and the device").

extension BGApplication {
    /// The number on the app's icon (Apple: `applicationIconBadgeNumber`, deprecated in
    /// iOS 17 for `UNUserNotificationCenter.setBadgeCount`). Linux has no Home Screen: the
    /// number is kept (it reads back what was set; 0 at launch) and shown nowhere.
    public var applicationIconBadgeNumber: Int {
        get { iconBadgeNumber.withLock { $0 } }
        set { iconBadgeNumber.withLock { $0 = newValue } }
    }

    /// Whether the app keeps the screen from locking while it is in front (Apple:
    /// `isIdleTimerDisabled`; apps set it during a long upload or export). Linux has no
    /// screen lock an app can hold off: the value is kept (it reads back what was set;
    /// `false` at launch) and changes nothing, the device's idleness included (the
    /// scheduler reads that from the session: docs/system.md, "On Linux").
    public var isIdleTimerDisabled: Bool {
        get { idleTimerDisabled.withLock { $0 } }
        set { idleTimerDisabled.withLock { $0 = newValue } }
    }

    /// Whether the status bar shows network activity (Apple:
    /// `isNetworkActivityIndicatorVisible`, deprecated in iOS 13; apps set it around a
    /// sync). Linux shows no status bar: kept and read back (`false` at launch).
    @available(*, deprecated, message: "Provide a custom network activity UI in your app if desired.")
    public var isNetworkActivityIndicatorVisible: Bool {
        get { statusBar.withLock { $0.networkActivity } }
        set { statusBar.withLock { $0.networkActivity = newValue } }
    }

    /// Whether the status bar is hidden (Apple: `isStatusBarHidden`, deprecated in iOS 13):
    /// kept and read back, as ``setStatusBarHidden(_:with:)`` sets it; Linux shows none.
    @available(*, deprecated, message: "Use the statusBarManager property of the window scene instead.")
    public var isStatusBarHidden: Bool { statusBar.withLock { $0.hidden } }

    /// Hides or shows the status bar (Apple: `setStatusBarHidden(_:with:)`, deprecated in
    /// iOS 9): kept (``isStatusBarHidden``); Linux shows none.
    @available(*, deprecated, message: "Use -[UIViewController prefersStatusBarHidden]")
    public func setStatusBarHidden(_ hidden: Bool, with animation: UIStatusBarAnimation) {
        statusBar.withLock { $0.hidden = hidden }
    }

    /// Where the status bar is (Apple: `statusBarFrame`, deprecated in iOS 13): empty, as
    /// Linux shows none (iOS reports an empty frame while the bar is hidden).
    @available(*, deprecated, message: "Use the statusBarManager property of the window scene instead.")
    public var statusBarFrame: CGRect { .zero }

    /// The direction of the interface's layout (Apple: `userInterfaceLayoutDirection`):
    /// left to right, the direction of the program's messages.
    public var userInterfaceLayoutDirection: UIUserInterfaceLayoutDirection { .leftToRight }

    /// Starts receiving remote-control events (the lock screen's and headphones' play and
    /// pause: Apple's `beginReceivingRemoteControlEvents()`, which audio and download apps
    /// call beside their task registrations). Linux sends an app no such events: it does
    /// nothing.
    public func beginReceivingRemoteControlEvents() {}

    /// Stops receiving remote-control events (Apple's `endReceivingRemoteControlEvents()`):
    /// nothing to stop here.
    public func endReceivingRemoteControlEvents() {}

    /// The URL string of the app's page in the Settings app (Apple's value, `"app-settings:"`).
    /// Linux has no Settings app: ``open(_:options:completionHandler:)`` opens nothing. The
    /// switch such a page holds here is ``setBackgroundRefreshEnabled(_:)``.
    public static let openSettingsURLString = "app-settings:"

    /// The URL string of the app's notification settings (Apple: iOS 16's
    /// `openNotificationSettingsURLString`; this package's value). Opens nothing here, as
    /// ``openSettingsURLString``; the switch it leads to is `BGTASK_NOTIFICATIONS`
    /// (docs/porting.md, "Local notifications").
    public static let openNotificationSettingsURLString = "app-settings:notifications"

    /// Options of ``open(_:options:completionHandler:)`` (Apple: `UIApplication.OpenExternalURLOptionsKey`).
    public struct OpenExternalURLOptionsKey: Hashable, RawRepresentable, Sendable {
        /// The key's name.
        public let rawValue: String
        /// A key by name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Open the URL only if it is a universal link an installed app handles.
        public static let universalLinksOnly = OpenExternalURLOptionsKey(rawValue: "UIApplicationOpenURLOptionUniversalLinksOnly")
        /// Tap attribution data for the browser.
        public static let eventAttribution = OpenExternalURLOptionsKey(rawValue: "UIApplicationOpenExternalURLOptionsEventAttributionKey")
    }

    /// Opens a URL in the app that handles it (Apple: `open(_:options:completionHandler:)`).
    /// Linux has no such app (no Settings, no browser the system hands URLs to): nothing is
    /// opened, and `completion` is called with `false` on the main actor, later, as iOS calls
    /// it for a URL it cannot open.
    @preconcurrency
    public func open(_ url: URL, options: [OpenExternalURLOptionsKey: Any] = [:], completionHandler completion: (@MainActor @Sendable (Bool) -> Void)? = nil) {
        let context = notOpening(url)
        guard let completion else { return }
        context.invoke(AppClosureCall(body: { @MainActor in completion(false) }), otherwiseOn: context.expirationQueue, what: "the completion handler of open(\(url.absoluteString))")
    }

    /// `open(_:options:)` in its `async` form: `false`, nothing opened (see
    /// ``open(_:options:completionHandler:)``).
    @discardableResult
    public func open(_ url: URL, options: [OpenExternalURLOptionsKey: Any] = [:]) async -> Bool {
        _ = notOpening(url)
        return false
    }

    /// Whether an app can open `url` (Apple: `canOpenURL(_:)`): `false`, as no app opens URLs
    /// for another on Linux.
    public func canOpenURL(_ url: URL) -> Bool { false }

    /// Logs (at info) that `url` is not opened; the app's context.
    private func notOpening(_ url: URL) -> BGAppContext {
        let context = requiredContext
        context.driver.log(.info, app: context.app, "open(\(url.absoluteString)): Linux has no app to open it with; nothing was opened")
        return context
    }
}
