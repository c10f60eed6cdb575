// Background-work code in the shapes modern apps and SDKs write it, compiled here in Swift 6
// language mode with warnings as errors: the app's lifecycle awaited as a sequence of
// notifications (iOS 15), and a crash reporter's uncaught-exception handler, chained, that
// flushes what it holds (the sixth outside probe, on SDK code). LifecycleSequenceTests runs
// them.
import BackgroundTasks
import UIKit

// MARK: 1. A store that schedules its refresh and saves each time the app enters the
// background, awaiting the notifications in a main-actor task

@MainActor
final class LifecycleAwareStore {
    private(set) var saves = 0
    private(set) var scheduledRefreshes = 0
    private var observation: Task<Void, Never>?

    func startObserving(center: NotificationCenter = .default) {
        // Observed from here, before the task starts, so no entry is missed meanwhile.
        let backgroundEntries = center.notifications(named: UIApplication.didEnterBackgroundNotification)
        observation = Task { [weak self] in
            for await _ in backgroundEntries {
                guard let self else { return }
                self.saves += 1
                self.scheduleRefresh()
            }
        }
    }

    func stopObserving() {
        observation?.cancel()
        observation = nil
    }

    private func scheduleRefresh() {
        let request = BGAppRefreshTaskRequest(identifier: "com.example.store.refresh")
        request.earliestBeginDate = Date(timeIntervalSinceNow: 15 * 60)
        try? BGTaskScheduler.shared.submit(request)
        scheduledRefreshes += 1
    }
}

/// The user names of every notification a task receives, mapped to something `Sendable`
/// before it leaves the loop (Apple's advice for its sequence).
func userNames(of center: NotificationCenter, name: Notification.Name, count: Int) async -> [String] {
    var names: [String] = []
    for await notification in center.notifications(named: name).map({ $0.userInfo?["user"] as? String ?? "?" }) {
        names.append(notification)
        if names.count == count { break }
    }
    return names
}

// MARK: 2. A crash reporter's handler: it keeps the handler installed before it, flushes its
// breadcrumbs, then calls the previous one, as SDKs chain

enum CrashReporter {
    nonisolated(unsafe) static var previousHandler: NSUncaughtExceptionHandler?
    nonisolated(unsafe) static var breadcrumbs: [String] = []

    static func install() {
        previousHandler = NSGetUncaughtExceptionHandler()
        NSSetUncaughtExceptionHandler { exception in
            let line = "\(exception.name.rawValue): \(exception.reason ?? "no reason") (\(exception.callStackSymbols.count) frames)"
            CrashReporter.breadcrumbs.append(line)
            FileHandle.standardError.write(Data(("crash reporter: " + line + "\n").utf8))
            CrashReporter.previousHandler?(exception)
        }
    }
}

/// An SDK's invariant check, raised as Objective-C code does.
func requireConfigured(_ configured: Bool) {
    if !configured {
        NSException(name: .internalInconsistencyException, reason: "the SDK was used before configure()", userInfo: ["step": "flush"]).raise()
    }
}
