import BackgroundTasks
import BackgroundTasksTesting
import Foundation
import Synchronization

extension FeedReader {
    /// Installs the feed reader, real handler code and all, on a simulated device: its
    /// feed server answers in virtual time (``SimulatedFeedService``), its work takes
    /// virtual time (the device's clock), and every time the user leaves the app it saves
    /// the draft under a background assertion, as `applicationDidEnterBackground` does.
    /// - Parameter backlog: articles the clean-up has to work through at first (a large one
    ///   makes the first clean-up expire and the next resume from its checkpoint).
    @discardableResult
    public static func install(on device: SimulatedDevice, backlog: Int = 2_000) -> FeedReader {
        let reader = FeedReader(service: SimulatedFeedService(device: device), workClock: device.swiftClock, database: FeedDatabase(backlog: backlog))
        let context = device.install(app: manifest.appID!, manifest: manifest) {
            reader.didFinishLaunching()
        }
        // Only a return to the background from the foreground is the user leaving; the
        // install itself ends in the background before any observer is set.
        // The context keeps its observers: holding it strongly here would keep it forever.
        let wasActive = Mutex(false)
        context.application.observeState { [weak context] state in
            guard let context else { return }
            let leaving = wasActive.withLock { active in
                defer { active = state == .active }
                return active && state == .background
            }
            if leaving { context.withCurrent { reader.didEnterBackground() } }
        }
        return reader
    }
}
