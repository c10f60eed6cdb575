// SwiftUI and neighbouring shapes a second outside probe found missing (Swift 6 language
// mode, warnings as errors): activities continued in SwiftUI, controls with system images,
// a stepper without bounds, a countdown text, optional @AppStorage values, background URL
// sessions matched by a predicate, os_log_type_enabled, URLSession.allTasks on expiration,
// an orientation lock kept beside the background tasks. SwiftUIExtrasTests runs them.
import BackgroundTasks
import os
import SwiftUI

struct TimerSettingsView: View {
    @Environment(\.openWindow) private var openWindow
    @Environment(\.supportsMultipleWindows) private var supportsMultipleWindows
    @AppStorage("lastSyncToken") var lastSyncToken: String?
    @AppStorage("lastSyncCount") var lastSyncCount: Int?
    @State private var minutes = 25
    @State private var sound = true
    let ends: Date

    var body: some View {
        VStack {
            Text(timerInterval: Date()...ends, countsDown: true)
            Stepper("Minutes", value: $minutes, step: 5)
            Toggle("Sound", systemImage: "speaker.wave.2", isOn: $sound)
            Button("Reset", systemImage: "arrow.counterclockwise") { lastSyncToken = nil }
            if supportsMultipleWindows {
                Button("History") { openWindow(id: "history") }
            }
        }
        .onContinueUserActivity("com.example.timer.start") { activity in
            _ = activity.userInfo?["minutes"]
        }
        .userActivity("com.example.timer.running", isActive: sound) { activity in
            activity.title = "Focus timer"
        }
    }
}

struct TimerApp: App {
    var body: some Scene {
        WindowGroup {
            TimerSettingsView(ends: Date().addingTimeInterval(1_500))
        }
        .handlesExternalEvents(matching: ["timer"])
        .backgroundTask(.urlSession(matching: { $0.hasPrefix("com.example.timer.") })) { identifier in
            _ = identifier
        }
    }
}

/// A debug dump built only when debug messages are written.
func logStateIfDebugging(_ log: OSLog, state: () -> String) -> Bool {
    guard os_log_type_enabled(log, .debug) else { return false }
    os_log("state: %{public}@", log: log, type: .debug, state())
    return true
}

/// A session with a cache of its own, as API clients make it.
func cachedSession(in directory: URL) -> URLSession {
    let configuration = URLSessionConfiguration.default
    configuration.urlCache = URLCache(memoryCapacity: 4 << 20, diskCapacity: 20 << 20, directory: directory)
    return URLSession(configuration: configuration)
}

/// What an expiration handler does with a session's transfers.
func cancelEverything(in session: URLSession) async -> Int {
    let tasks = await session.allTasks
    tasks.forEach { $0.cancel() }
    return tasks.count
}

/// The orientation lock an app delegate keeps (iPad apps lock portrait while recording).
final class OrientationLockingDelegate: UIResponder, UIApplicationDelegate {
    var orientationLock = UIInterfaceOrientationMask.allButUpsideDown
    func application(_ application: UIApplication, supportedInterfaceOrientationsFor window: UIWindow?) -> UIInterfaceOrientationMask {
        orientationLock
    }
}
