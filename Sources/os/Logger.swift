// `import os` as iOS code writes it (docs/porting.md, "Logging"): Apple's unified logging
// API (`Logger`, `OSLog`, `os_log`) over standard error, so the logging lines of background
// task code compile and run unchanged. There is no log store: a message is written at once,
// one line, with its subsystem, category and level; private values are redacted as Apple's
// log shows them outside a debugger.

import Foundation
import SchedulerCore
// The Clang module `os` this Swift module overlays (Sources/COSModuleMap): it declares
// nothing, and gives `import os.log` a submodule to resolve.
@_exported import os
// `import os` brings os_unfair_lock too (Apple's <os/lock.h> is in the os module).
@_exported import COSLock
// What Apple's Foundation brings beside it (Combine, Observation, os_unfair_lock, Dispatch's
// time constants, `ProcessInfo()`): Sources/FoundationCompat.
@_exported import FoundationCompat

/// A log's level (Apple: `OSLogType`).
public struct OSLogType: RawRepresentable, Hashable, Sendable {
    /// The level's number, as Apple's (`OS_LOG_TYPE_*`).
    public let rawValue: UInt8
    /// Creates a level from its number.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The default level (notice).
    public static let `default` = OSLogType(rawValue: 0x00)
    /// Information that may help troubleshooting.
    public static let info = OSLogType(rawValue: 0x01)
    /// Debugging detail.
    public static let debug = OSLogType(rawValue: 0x02)
    /// An error.
    public static let error = OSLogType(rawValue: 0x10)
    /// A fault: a bug.
    public static let fault = OSLogType(rawValue: 0x11)

    /// The word a line shows for the level.
    var name: String {
        switch self {
        case .info: "info"
        case .debug: "debug"
        case .error: "error"
        case .fault: "fault"
        default: "notice"
        }
    }
}

/// A log: a subsystem and a category (Apple: `OSLog`).
public final class OSLog: Sendable {
    /// The subsystem (reverse DNS, usually the app's identifier).
    public let subsystem: String
    /// The category within the subsystem.
    public let category: String
    let enabled: Bool

    /// A log for `subsystem` and `category`.
    public init(subsystem: String, category: String) {
        self.subsystem = subsystem
        self.category = category
        self.enabled = true
    }

    private init(disabled: Void) {
        subsystem = ""
        category = ""
        enabled = false
    }

    /// The process's default log.
    public static let `default` = OSLog(subsystem: "", category: "")
    /// A log that writes nothing.
    public static let disabled = OSLog(disabled: ())

    /// Whether messages of `type` are written (debug and info only with `BGTASK_LOG=debug`).
    public func isEnabled(type: OSLogType) -> Bool { enabled && LogSink.writes(type) }
}

/// Logs messages whose interpolated values carry their privacy (Apple: `Logger`).
public struct Logger: Sendable {
    let log: OSLog

    /// A logger for `subsystem` and `category`.
    public init(subsystem: String, category: String) { log = OSLog(subsystem: subsystem, category: category) }
    /// A logger writing to `log`.
    public init(_ log: OSLog) { self.log = log }
    /// The process's default logger.
    public init() { log = .default }

    /// Logs `message` at the default level.
    public func log(_ message: OSLogMessage) { write(.default, message) }
    /// Logs `message` at `level`.
    public func log(level: OSLogType, _ message: OSLogMessage) { write(level, message) }
    /// Logs at the debug level (Apple: `trace` is debug).
    public func trace(_ message: OSLogMessage) { write(.debug, message) }
    /// Logs at the debug level.
    public func debug(_ message: OSLogMessage) { write(.debug, message) }
    /// Logs at the info level.
    public func info(_ message: OSLogMessage) { write(.info, message) }
    /// Logs at the default level (notice).
    public func notice(_ message: OSLogMessage) { write(.default, message) }
    /// Logs at the error level (Apple: `warning` is error).
    public func warning(_ message: OSLogMessage) { write(.error, message) }
    /// Logs at the error level.
    public func error(_ message: OSLogMessage) { write(.error, message) }
    /// Logs at the fault level (Apple: `critical` is fault).
    public func critical(_ message: OSLogMessage) { write(.fault, message) }
    /// Logs at the fault level.
    public func fault(_ message: OSLogMessage) { write(.fault, message) }

    private func write(_ type: OSLogType, _ message: OSLogMessage) {
        // The message's values are only evaluated when the line is written (autoclosures).
        guard log.isEnabled(type: type) else { return }
        LogSink.write(type, log: log, message.rendered())
    }
}

/// Where lines go: standard error, one `write(2)` each so lines of threads never mix.
enum LogSink {
    /// The least level written, from `BGTASK_LOG` as bgtaskd reads it (read once; bgtaskd
    /// passes its own on to the apps it launches): `debug` writes every level, `info` all
    /// but debug, `error` errors and faults; unset or anything else (`warning`), the default
    /// level and above, as Apple's log keeps by default.
    static let minimumLevel = minimumLevel(setting: ProcessInfo.processInfo.environment["BGTASK_LOG"])
    /// Whether private values are shown: `BGTASK_LOG_PRIVATE=1` (read once), as Apple's log
    /// shows them to a debugger. Sensitive values stay redacted.
    static let showsPrivate = ProcessInfo.processInfo.environment["BGTASK_LOG_PRIVATE"] == "1"

    /// The rank of the least level written under `BGTASK_LOG=setting` (see ``rank(of:)``).
    static func minimumLevel(setting: String?) -> Int {
        switch setting?.lowercased() {
        case "debug": rank(of: .debug)
        case "info": rank(of: .info)
        case "error": rank(of: .error)
        default: rank(of: .default)
        }
    }

    /// Levels in order of importance: debug 0, info 1, default 2, error 3, fault 4 (Apple's
    /// raw values are not in that order: debug is 2, default 0).
    static func rank(of type: OSLogType) -> Int {
        switch type {
        case .debug: 0
        case .info: 1
        case .error: 3
        case .fault: 4
        default: 2
        }
    }

    static func writes(_ type: OSLogType, minimum: Int = minimumLevel) -> Bool {
        rank(of: type) >= minimum
    }

    /// The line written for `text`: its origin, level and text, line breaks escaped (a
    /// break inside a message would forge another line) and every other control character
    /// shown, not obeyed (``StandardStream/terminalSafe(_:)``, as the runtime's own lines).
    static func line(_ type: OSLogType, log: OSLog, _ text: String) -> String {
        let origin = log.subsystem.isEmpty ? "" : log.category.isEmpty ? "\(log.subsystem) " : "\(log.subsystem)[\(log.category)] "
        let flat = StandardStream.oneLine("\(origin)\(type.name): \(text)")
        return flat + "\n"
    }

    static func write(_ type: OSLogType, log: OSLog, _ text: String) {
        StandardStream.writeError(line(type, log: log, text))
    }

    /// A value as the line shows it under `privacy`; `dynamic` says whether `.auto` hides
    /// it (strings and objects: yes; numbers and booleans: no, as Apple's).
    static func shown(_ text: String, privacy: OSLogPrivacy, dynamic: Bool, showsPrivate: Bool = showsPrivate) -> String {
        let hidden: Bool
        switch privacy.level {
        case .public: hidden = false
        case .private, .sensitive: hidden = true
        case .auto: hidden = dynamic
        }
        // BGTASK_LOG_PRIVATE shows private values, never sensitive ones (as Apple's).
        guard hidden, privacy.level == .sensitive || !showsPrivate else { return text }
        if privacy.mask == .hash {
            var hasher = Hasher()
            hasher.combine(text)
            return "<mask.hash: '\(String(UInt(bitPattern: hasher.finalize()), radix: 16))'>"
        }
        return "<private>"
    }
}
