// iOS code as public apps write it, compiled in Swift 5 language mode against this
// package's BackgroundTasks (docs/porting.md). Only `import BackgroundTasks`: Foundation's
// types (Date, NSError, NotificationCenter, OperationQueue) come with it, as on iOS.
import BackgroundTasks

/// A protocol copying Apple's exact signatures, as apps write for dependency injection.
public protocol BackgroundTaskProviding {
    func beginBackgroundTask(withName taskName: String?, expirationHandler handler: (@MainActor @Sendable () -> Void)?) -> UIBackgroundTaskIdentifier
    func endBackgroundTask(_ identifier: UIBackgroundTaskIdentifier)
}

extension UIApplication: BackgroundTaskProviding {}

/// Set on the main queue so code can tell, without trapping, whether it runs there.
public let mainQueueMarker = DispatchSpecificKey<Bool>()

/// Whether the caller runs on the main queue (the main actor's executor on Linux).
public func isOnMainQueue() -> Bool {
    DispatchQueue.getSpecific(key: mainQueueMarker) == true
}

/// An `AppDelegate`: main-actor, its handlers touching its own state.
@MainActor
public final class LegacyAppDelegate {
    public let refreshIdentifier: String
    let operationQueue = OperationQueue()
    var bgTask: UIBackgroundTaskIdentifier = .invalid
    let backgroundTasks: BackgroundTaskProviding
    /// What happened, in order ("refresh main=true", "expired main=true", ...).
    public private(set) var events: [String] = []
    private var observers: [NSObjectProtocol] = []
    /// Called after every event (the executable exits from it).
    public var onEvent: ((String) -> Void)?

    public init(refreshIdentifier: String, backgroundTasks: BackgroundTaskProviding) {
        self.refreshIdentifier = refreshIdentifier
        self.backgroundTasks = backgroundTasks
        DispatchQueue.main.setSpecific(key: mainQueueMarker, value: true)
    }

    /// Builds the identifier from the bundle, as most apps do.
    public nonisolated static func identifierFromBundle() -> String {
        Bundle.main.bundleIdentifier! + ".refresh"
    }

    private func record(_ event: String) {
        events.append(event)
        onEvent?(event)
    }

    public func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [String: Any]? = nil) -> Bool {
        BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshIdentifier, using: nil) { task in
            self.handleAppRefresh(task: task as! BGAppRefreshTask)
        }
        observers.append(NotificationCenter.default.addObserver(forName: UIApplication.didEnterBackgroundNotification, object: application, queue: .main) { _ in
            MainActor.assumeIsolated { self.record("didEnterBackground") }
        })
        observers.append(NotificationCenter.default.addObserver(forName: UIApplication.willEnterForegroundNotification, object: application, queue: .main) { _ in
            MainActor.assumeIsolated { self.record("willEnterForeground") }
        })
        return true
    }

    /// The pre-iOS 13 fetch API (for an app whose manifest lists no BGTaskScheduler
    /// identifiers: a list of its own turns it off, as on iOS 13 and later).
    public func enableLegacyFetch(_ application: UIApplication, every interval: TimeInterval = UIApplication.backgroundFetchIntervalMinimum) {
        application.setMinimumBackgroundFetchInterval(interval)
        application.setBackgroundFetchHandler { completionHandler in
            self.record("fetch main=\(isOnMainQueue())")
            completionHandler(.newData)
        }
    }

    public func scheduleAppRefresh(after delay: TimeInterval) {
        let request = BGAppRefreshTaskRequest(identifier: refreshIdentifier)
        request.earliestBeginDate = Date(timeIntervalSinceNow: delay)
        do {
            try BGTaskScheduler.shared.submit(request)
        } catch {
            record("submit failed: \(Self.describe(error))")
        }
    }

    /// What apps log when a submission fails, through NSError.
    public nonisolated static func describe(_ error: Error) -> String {
        let nsError = error as NSError
        if nsError.domain == BGTaskScheduler.errorDomain, nsError.code == BGTaskScheduler.Error.Code.notPermitted.rawValue {
            return "not permitted (\(nsError.domain) \(nsError.code))"
        }
        return "\(nsError.domain) \(nsError.code): \(nsError.localizedDescription)"
    }

    func handleAppRefresh(task: BGAppRefreshTask) {
        record("refresh main=\(isOnMainQueue())")
        task.expirationHandler = {
            self.operationQueue.cancelAllOperations()
            self.record("expired main=\(isOnMainQueue())")
            task.setTaskCompleted(success: false)
        }
    }

    /// Guards work with a background assertion whose handler touches main-actor state.
    public func beginSavingDraft() {
        bgTask = backgroundTasks.beginBackgroundTask(withName: "Save draft") {
            self.record("assertion expired main=\(isOnMainQueue())")
            self.backgroundTasks.endBackgroundTask(self.bgTask)
            self.bgTask = .invalid
        }
    }

    /// The legacy form, straight on UIApplication.
    public func beginUnnamedWork() {
        bgTask = UIApplication.shared.beginBackgroundTask {
            UIApplication.shared.endBackgroundTask(self.bgTask)
            self.bgTask = .invalid
        }
    }

    public func describeState(_ application: UIApplication) -> String {
        switch application.applicationState {
        case .active: return "active"
        case .inactive: return "inactive"
        case .background: return "background"
        default: return "unknown"
        }
    }

    public func describeRefreshStatus(_ application: UIApplication) -> String {
        switch application.backgroundRefreshStatus {
        case .available: return "available"
        case .denied: return "denied"
        case .restricted: return "restricted"
        default: return "unknown"
        }
    }

    /// Xcode's fix-it for an imported enum: `@unknown default:` (clean, as on iOS).
    public func describeFetchResult(_ result: UIBackgroundFetchResult) -> String {
        switch result {
        case .newData: return "newData"
        case .noData: return "noData"
        case .failed: return "failed"
        @unknown default: return "unknown"
        }
    }
}

/// `main.swift` of an app that names its delegate class, compiled in Swift 5 mode (never
/// called: `UIApplicationMain` does not return).
public func startAsApplicationMainNamesIt() -> Int32 {
    UIApplicationMain(CommandLine.argc, CommandLine.unsafeArgv, nil, "IOSShapedApp.NoDelegateHere")
}
