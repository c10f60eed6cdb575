// An app delegate written before Swift concurrency, as many public apps are: an `NSObject`
// adopting UIApplicationDelegate (so main-actor by the protocol) that submits its refresh
// request from a global queue. Apple's delegate protocol is imported from Objective-C and
// so `@preconcurrency`: in Swift 5 mode Xcode warns about the call and builds. Here too (the
// warning's group, ActorIsolatedCall, stays a warning in this target alone: Package.swift); while
// the protocol was plain `@MainActor`, this file did not compile.
import BackgroundTasks

public class PreconcurrencyAppDelegate: NSObject, UIApplicationDelegate {
    public static let refreshIdentifier = "com.example.shaped.preconcurrency.refresh"
    public private(set) var submitted = 0

    public func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]? = nil) -> Bool {
        BGTaskScheduler.shared.register(forTaskWithIdentifier: Self.refreshIdentifier, using: nil) { task in
            task.setTaskCompleted(success: true)
        }
        DispatchQueue.global(qos: .background).async {
            self.submitBackgroundTask()
        }
        return true
    }

    func submitBackgroundTask() {
        let request = BGAppRefreshTaskRequest(identifier: Self.refreshIdentifier)
        request.earliestBeginDate = Date(timeIntervalSinceNow: 60)
        do {
            try BGTaskScheduler.shared.submit(request)
            submitted += 1
        } catch {
            print("Unable to submit task: \(error.localizedDescription)")
        }
    }
}

/// A delegate that says `@MainActor` itself, with the async form of a silent push as Xcode
/// completes it. Without the class's own `@MainActor` (its main actor coming only from the
/// `@preconcurrency` protocol), Swift 5 mode warns here that the dictionary is sent into the
/// main actor (docs/porting.md, "The main actor").
@MainActor
public final class AsyncPushPreconcurrencyDelegate: NSObject, UIApplicationDelegate {
    public func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any]) async -> UIBackgroundFetchResult {
        userInfo.isEmpty ? .noData : .newData
    }
}
