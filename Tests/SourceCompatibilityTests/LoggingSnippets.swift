// Logging as background-task code on iOS writes it (`import os`), compiled here in Swift 6
// language mode with warnings as errors (docs/porting.md, "Logging").
import BackgroundTasks
import Foundation
import os

// MARK: A logger per type, interpolations with privacy and formats

final class RefreshScheduler: @unchecked Sendable {
    // @unchecked: a test shape; its one stored property is immutable.
    private let logger = Logger(subsystem: "com.example.feeds", category: "BackgroundRefresh")
    static let identifier = "com.example.feeds.refresh"

    func schedule() {
        let request = BGAppRefreshTaskRequest(identifier: Self.identifier)
        request.earliestBeginDate = Date(timeIntervalSinceNow: 15 * 60)
        do {
            try BGTaskScheduler.shared.submit(request)
            logger.info("Scheduled \(Self.identifier, privacy: .public) for \(request.earliestBeginDate?.description ?? "now", privacy: .public)")
        } catch {
            logger.error("Could not schedule app refresh: \(error.localizedDescription, privacy: .public)")
        }
    }

    func handle(_ task: BGAppRefreshTask, fetched count: Int, seconds: Double) {
        logger.debug("Refresh \(task.identifier) fetched \(count) items in \(seconds, format: .fixed(precision: 2)) s")
        logger.notice("items: \(count, format: .hex, align: .right(columns: 6)), ok: \(true, format: .answer)")
        logger.log(level: .fault, "unexpected state \(String(describing: task), privacy: .private(mask: .hash))")
        task.setTaskCompleted(success: true)
    }
}

// MARK: OSLog and os_log, the older API

enum LegacyLogging {
    static let log = OSLog(subsystem: "com.example.feeds", category: "Sync")

    static func report(identifier: String, attempts: Int) {
        os_log("Background task %{public}@ started", log: log, type: .info, identifier)
        os_log("Attempt %d of %{private}@", log: log, type: .error, attempts, identifier)
        os_log(.debug, log: log, "Sync done")
        os_log("default log, default level")
        // The interpolated forms (iOS 14).
        os_log("Fetched \(attempts) items for \(identifier, privacy: .public)")
        os_log(.error, log: log, "Sync of \(identifier) failed after \(attempts) attempts")
        os_log(log: log, "done")
    }
}

// MARK: A static logger in an extension, as apps share one

extension Logger {
    nonisolated static let backgroundTasks = Logger(subsystem: Bundle.main.bundleIdentifier ?? "app", category: "BGTask")
}

func logExpiration(of task: BGTask) {
    Logger.backgroundTasks.warning("Task \(task.identifier, privacy: .public) expired before completion")
}

// MARK: Objects as `%@` arguments of os_log (NSError, NSNumber, NSDate, a request)

enum ObjectArgumentLogging {
    static let log = OSLog(subsystem: "com.example.feeds", category: "Submit")

    static func submit(_ request: BGTaskRequest) {
        do {
            try BGTaskScheduler.shared.submit(request)
            os_log("Submitted %{public}@ at %{public}@", log: log, type: .info, request, NSDate())
        } catch {
            // A contact-tracing app's shape: the error coerced to CVarArg (bridged to NSError).
            os_log("Submit task request=%@ failed: %@", log: log, type: .error, request.description, error as CVarArg)
            os_log("Could not schedule %{public}@: %{public}@ (%@ attempts)", log: log, type: .error, request.identifier, error as NSError, NSNumber(value: 3))
        }
    }
}
