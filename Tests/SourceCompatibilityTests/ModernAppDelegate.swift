// iOS code in Swift 6 language mode (this target's mode), compiled against this package's
// BackgroundTasks exactly as against Apple's SDK. Only `import BackgroundTasks` is needed
// for Foundation's types.
import BackgroundTasks
import IOSShapedApp

/// Apple's exact signatures, copied into an app's own protocol.
protocol BackgroundTaskProvidingSwift6 {
    func beginBackgroundTask(withName taskName: String?, expirationHandler handler: (@MainActor @Sendable () -> Void)?) -> UIBackgroundTaskIdentifier
    func endBackgroundTask(_ identifier: UIBackgroundTaskIdentifier)
}

extension UIApplication: BackgroundTaskProvidingSwift6 {}

/// A Swift 6 `AppDelegate`.
@MainActor
final class ModernAppDelegate {
    nonisolated static let refreshIdentifier = "com.example.compat.refresh"
    nonisolated static let cleanupIdentifier = "com.example.compat.cleanup"
    let operationQueue = OperationQueue()
    var bgTask: UIBackgroundTaskIdentifier = .invalid
    var otherTask: UIBackgroundTaskIdentifier = .invalid
    private(set) var events: [String] = []
    private var observers: [any NSObjectProtocol] = []
    let provider: any BackgroundTaskProvidingSwift6

    init(provider: any BackgroundTaskProvidingSwift6) {
        self.provider = provider
        DispatchQueue.main.setSpecific(key: mainQueueMarker, value: true)
    }

    func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [String: Any]? = nil) -> Bool {
        BGTaskScheduler.shared.register(forTaskWithIdentifier: Self.refreshIdentifier, using: nil) { task in
            self.handleAppRefresh(task: task as! BGAppRefreshTask)
        }
        BGTaskScheduler.shared.register(forTaskWithIdentifier: Self.cleanupIdentifier, using: nil) { [weak self] task in
            guard let self else { return }
            self.events.append("cleanup main=\(isOnMainQueue())")
            task.expirationHandler = { [weak self] in
                self?.operationQueue.cancelAllOperations()
                self?.events.append("cleanup expired main=\(isOnMainQueue())")
            }
            task.setTaskCompleted(success: true)
        }
        observers.append(NotificationCenter.default.addObserver(forName: UIApplication.didEnterBackgroundNotification, object: application, queue: .main) { _ in
            MainActor.assumeIsolated { self.events.append("didEnterBackground") }
        })
        return true
    }

    func handleAppRefresh(task: BGAppRefreshTask) {
        events.append("refresh main=\(isOnMainQueue())")
        scheduleAppRefresh()
        task.expirationHandler = {
            self.operationQueue.cancelAllOperations()
            self.events.append("expired main=\(isOnMainQueue())")
            task.setTaskCompleted(success: false)
        }
    }

    func scheduleAppRefresh() {
        let request = BGAppRefreshTaskRequest(identifier: Self.refreshIdentifier)
        request.earliestBeginDate = Date(timeIntervalSinceNow: 15 * 60)
        do {
            try BGTaskScheduler.shared.submit(request)
        } catch BGTaskScheduler.Error.notPermitted {
            events.append("not permitted")
        } catch let error as NSError where error.domain == BGTaskSchedulerErrorDomain {
            events.append("submit failed \(error.code)")
        } catch {
            events.append("submit failed: \(error)")
        }
    }

    func applicationDidEnterBackground(_ application: UIApplication) {
        bgTask = provider.beginBackgroundTask(withName: "Finish upload") {
            self.events.append("assertion expired main=\(isOnMainQueue())")
            self.provider.endBackgroundTask(self.bgTask)
            self.bgTask = .invalid
        }
        otherTask = UIApplication.shared.beginBackgroundTask {
            self.events.append("other expired main=\(isOnMainQueue())")
            UIApplication.shared.endBackgroundTask(self.otherTask)
            self.otherTask = .invalid
        }
    }

    func stateName(_ application: UIApplication) -> String {
        switch application.applicationState {
        case .active: "active"
        case .inactive: "inactive"
        case .background: "background"
        default: "unknown"
        }
    }

    func fetchResultName(_ result: UIBackgroundFetchResult) -> String {
        switch result {
        case .newData: "newData"
        case .noData: "noData"
        case .failed: "failed"
        default: "unknown"
        }
    }
}
