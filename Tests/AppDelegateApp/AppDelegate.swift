// An iOS app delegate as Apple's sample "Refreshing and Maintaining Your App Using
// Background Tasks" and public apps write it: `@main`, `UIResponder, UIApplicationDelegate`,
// handlers registered in didFinishLaunching, the refresh scheduled on entering the
// background, an OperationQueue cancelled on expiration, a local notification posted with
// what the refresh found (permission asked at launch). Compiled in Swift 5 language mode
// with warnings as errors (docs/porting.md, "An app delegate"); the only lines that are not
// iOS code are the `print`s the tests read (DaemonTests.AppDelegateApp) and a slow launch
// they may ask for (DELEGATEAPP_LAUNCH_GATE, which also reports the state of SIGTERM:
// SignalState.swift).
import UIKit
import BackgroundTasks
import UserNotifications

@main
class AppDelegate: UIResponder, UIApplicationDelegate {
    var window: UIWindow?
    let operationQueue = OperationQueue()
    let refreshIdentifier = "com.example.delegateapp.refresh"

    func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?) -> Bool {
        setvbuf(stdout, nil, _IOLBF, 0)
        print("event didFinishLaunching state=\(describe(application.applicationState)) options=\(launchOptions == nil ? "none" : "some")")
        // Test instrumentation (not iOS code): a slow launch, as one waiting on a busy network,
        // that lasts until the test creates the gate file (at most 30 s), saying when the
        // app's state changes meanwhile (a SIGTERM puts it in the background), so the test
        // knows the signal was handled while the launch still ran, however loaded the machine.
        if let gate = ProcessInfo.processInfo.environment["DELEGATEAPP_LAUNCH_GATE"] {
            print("event launching signals \(SignalState.describeTermination())")
            var seen = application.applicationState
            let deadline = Date(timeIntervalSinceNow: 30)
            while !FileManager.default.fileExists(atPath: gate), Date() < deadline {
                if application.applicationState != seen {
                    seen = application.applicationState
                    print("event launching state=\(describe(seen))")
                }
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshIdentifier, using: nil) { task in
            self.handleAppRefresh(task: task as! BGAppRefreshTask)
        }
        UNUserNotificationCenter.current().requestAuthorization(options: [.alert, .sound, .badge]) { granted, error in
            if let error = error {
                print("Notification permission failed: \(error)")
            }
        }
        return true
    }

    func applicationDidBecomeActive(_ application: UIApplication) {
        print("event applicationDidBecomeActive")
    }

    func applicationDidEnterBackground(_ application: UIApplication) {
        print("event applicationDidEnterBackground")
        scheduleAppRefresh()
    }

    func scheduleAppRefresh() {
        let request = BGAppRefreshTaskRequest(identifier: refreshIdentifier)
        request.earliestBeginDate = Date(timeIntervalSinceNow: 15 * 60)
        do {
            try BGTaskScheduler.shared.submit(request)
            print("event submitted")
        } catch {
            print("Could not schedule app refresh: \(error)")
        }
    }

    func handleAppRefresh(task: BGAppRefreshTask) {
        print("event handleAppRefresh state=\(describe(UIApplication.shared.applicationState)) main=\(Thread.isMainThread)")
        scheduleAppRefresh()
        let operation = BlockOperation {
            // A real app fetches here; `import UIKit` brings URLSession, as on iOS.
            let session = URLSession.shared
            print("event refreshed \(session.configuration.timeoutIntervalForRequest > 0)")
        }
        task.expirationHandler = {
            self.operationQueue.cancelAllOperations()
        }
        operation.completionBlock = {
            guard !operation.isCancelled else {
                task.setTaskCompleted(success: false)
                return
            }
            let content = UNMutableNotificationContent()
            content.title = "Feed updated"
            content.body = "New stories are waiting"
            content.sound = UNNotificationSound.default
            content.badge = 1
            let request = UNNotificationRequest(identifier: "feed-updated", content: content, trigger: nil)
            UNUserNotificationCenter.current().add(request) { error in
                print("event notified \(error.map { "\($0)" } ?? "ok")")
                task.setTaskCompleted(success: true)
            }
        }
        operationQueue.addOperation(operation)
    }

    func describe(_ state: UIApplication.State) -> String {
        switch state {
        case .active: return "active"
        case .inactive: return "inactive"
        case .background: return "background"
        @unknown default: return "unknown"
        }
    }
}
