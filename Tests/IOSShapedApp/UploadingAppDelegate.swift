// An app delegate written before Swift concurrency, Swift 5 mode (a sensor-upload app's
// shape, from a probe of public apps): it keeps its upload's background task in a property
// and ends it from a helper that is not main-actor. UIKit's classes are `@preconcurrency`
// main-actor on iOS, so such code compiles there; it did not here while UIResponder was plain
// `@MainActor` ("main actor-isolated property can not be mutated from a nonisolated context").
import BackgroundTasks

/// The app delegate, with the upload's state.
public final class UploadingAppDelegate: UIResponder, UIApplicationDelegate {
    /// The upload's background task, while one is running.
    public var uploadBackgroundTaskId: UIBackgroundTaskIdentifier?
    /// Uploads finished.
    public var uploads = 0
}

/// Called when an upload finishes (written as a plain function, as the app's is).
public func finishUpload(of delegate: UploadingAppDelegate) {
    delegate.uploads += 1
    if let identifier = delegate.uploadBackgroundTaskId { UIApplication.shared.endBackgroundTask(identifier) }
    delegate.uploadBackgroundTaskId = nil
}
