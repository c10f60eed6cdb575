// `import os.log`, as most iOS code spells it (the Clang submodule of Sources/COSModuleMap,
// which loads the Swift module os), in Swift 6 mode with warnings as errors.
import os.log

enum SubmoduleImportLogging {
    static let logger = Logger(subsystem: "com.example.app", category: "refresh")

    static func refreshed(count: Int) {
        logger.info("refreshed \(count, privacy: .public) items")
        os_log("refresh done: %d", log: OSLog(subsystem: "com.example.app", category: "refresh"), type: .info, count)
    }
}
