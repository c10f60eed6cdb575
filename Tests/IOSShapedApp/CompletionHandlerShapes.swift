// Completion handlers as public apps write them in Swift 5 (found by the 2026-12-06 probe:
// WordPress's task coordinator, expiring activities in a reader app and an analytics SDK).
// Apple's declarations come from Objective-C and are implicitly `@preconcurrency`: a
// handler that mutates a captured variable, calls a non-Sendable completion or captures a
// non-Sendable `self` compiles without a warning in Swift 5 (and warns in Swift 6). This
// file is built with warnings as errors, so each shape here fails the build if ours is not.
import BackgroundTasks

/// A coordinator that collects what each call reported, then calls its caller back.
public final class PendingTaskAuditor {
    public typealias Completion = (Result<[String], Error>) -> Void
    var lastIdentifiers: [String] = []

    public init() {}

    /// Only compiled: running it needs an app context (`BGTaskScheduler.shared`).
    public func audit(refreshIdentifier: String, completion: @escaping Completion) {
        var tasksAndErrors = [String: Error?]()
        BGTaskScheduler.shared.submitTaskRequest(BGAppRefreshTaskRequest(identifier: refreshIdentifier)) { error in
            tasksAndErrors[refreshIdentifier] = error
            if let error { completion(.failure(error)) }
        }
        BGTaskScheduler.shared.getPendingTaskRequests { [weak self] requests in
            guard let self else { return }
            self.lastIdentifiers = requests.map(\.identifier)
            tasksAndErrors["pending"] = nil
            completion(.success(self.lastIdentifiers))
        }
    }
}

/// An SDK that flushes its queue when the process may be suspended.
public final class BeaconFlusher {
    var queue: [String] = []

    public init() {}

    /// Only compiled, as above.
    public func flushBeforeSuspension(expirationHandler: (() -> Void)?) {
        ProcessInfo.processInfo.performExpiringActivity(withReason: "flush beacons") { expired in
            if expired {
                expirationHandler?()
                return
            }
            self.queue.removeAll()
        }
    }
}
