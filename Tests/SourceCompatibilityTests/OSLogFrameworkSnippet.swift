// `import OSLog` (Apple's framework for `Logger`), and a model that imports Foundation with
// BackgroundTasks and declares an `ObservableObject` (Foundation brings it on iOS), in Swift 6
// mode with warnings as errors.
import BackgroundTasks
import Foundation
import OSLog

@MainActor
final class RefreshStatus: ObservableObject {
    @Published var lastRefresh: Date?
    @Published var running = false
    private let logger = Logger(subsystem: "com.example.app", category: "status")
    private let legacyLog = OSLog(subsystem: "com.example.app", category: "legacy")

    func finished(at date: Date) {
        objectWillChange.send()
        lastRefresh = date
        running = false
        logger.debug("refresh finished at \(date, privacy: .public)")
        os_log("refresh finished", log: legacyLog, type: .debug)
    }
}
