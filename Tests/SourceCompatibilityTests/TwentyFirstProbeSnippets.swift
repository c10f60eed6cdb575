// Shapes a twenty-first outside compile probe found in public apps (written here in their
// shape, not copied), in Swift 6 mode with warnings as errors, and what they do here.
import BackgroundTasks
import Foundation
import Testing
import UIKit

/// A Swift 6 mail app's delegate declares its fetch handlers `@Sendable` (it hands them to the
/// tasks that sync); against a plain requirement this warned "sendability ... does not match".
final class SendableFetchAppDelegate: UIResponder, UIApplicationDelegate {
    func application(_ application: UIApplication, performFetchWithCompletionHandler completionHandler: @escaping @Sendable (UIBackgroundFetchResult) -> Void) {
        Task.detached { completionHandler(.newData) }
    }

    func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any],
                     fetchCompletionHandler completionHandler: @escaping @Sendable (UIBackgroundFetchResult) -> Void) {
        let result: UIBackgroundFetchResult = userInfo.isEmpty ? .noData : .newData
        Task.detached { completionHandler(result) }
    }
}

/// The plain spelling most apps write, satisfied as well.
final class PlainFetchAppDelegate: UIResponder, UIApplicationDelegate {
    func application(_ application: UIApplication, performFetchWithCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void) {
        completionHandler(.noData)
    }
}

@Suite struct TwentyFirstProbeTests {
    @Test @MainActor func bothSpellingsOfTheFetchHandlerAreTheDelegatesAndAnswer() async {
        let delegates: [any UIApplicationDelegate] = [SendableFetchAppDelegate(), PlainFetchAppDelegate()]
        var answers: [UIBackgroundFetchResult] = []
        for delegate in delegates {
            answers.append(await withCheckedContinuation { continuation in
                delegate.application(UIApplication.shared, performFetchWithCompletionHandler: { continuation.resume(returning: $0) })
            })
        }
        #expect(answers == [.newData, .noData])
        let pushed = await SendableFetchAppDelegate().application(UIApplication.shared, didReceiveRemoteNotification: ["aps": ["content-available": 1]])
        #expect(pushed == .newData)
    }
}
