import Foundation
import SchedulerCore

/// A row of `installed_apps` or `app_processes` that could not be read back (written by
/// hand or by another program): reported with the reason, never dropped silently and never
/// a crash, so that one bad row hides no other app (docs/ARCHITECTURE.md, "Bad rows are
/// quarantined").
public struct UnreadableAppRow: Sendable, Equatable, CustomStringConvertible {
    /// The table: `installed_apps` or `app_processes`.
    public var table: String
    /// The row's app column, as text (whatever it held).
    public var app: String
    /// Why it cannot be read, naming the column at fault.
    public var reason: String

    /// Creates a record of an unreadable row.
    public init(table: String, app: String, reason: String) {
        self.table = table
        self.app = app
        self.reason = reason
    }

    /// `table/app: reason`, for logs.
    public var description: String { "\(table)/\(app): \(reason)" }
}

/// What ``SchedulerStore/uninstallApp(_:)`` removed, in one transaction. The app's run
/// history is kept: the energy log reports on apps that are gone.
public struct UninstallReport: Sendable, Equatable {
    /// The app.
    public var app: AppID
    /// Whether it was installed (had an `installed_apps` row).
    public var wasInstalled: Bool
    /// The identifiers of the pending requests removed, sorted.
    public var removedRequests: [String]
    /// The names of the app settings removed (the Background App Refresh switch, what the
    /// policies learned), sorted.
    public var removedSettings: [String]
    /// The keys of the checkpoints removed, sorted.
    public var removedCheckpoints: [String]
    /// The process the daemon had recorded for the app, when there was a readable one:
    /// the caller ends it if it still runs (the store only forgets it).
    public var removedProcess: AppProcessRecord?
    /// Whether an `app_processes` row was removed (also when it could not be read).
    public var removedProcessRow: Bool
    /// How many runs of the app the run log keeps.
    public var keptRuns: Int

    /// Creates a report.
    public init(
        app: AppID,
        wasInstalled: Bool,
        removedRequests: [String] = [],
        removedSettings: [String] = [],
        removedCheckpoints: [String] = [],
        removedProcess: AppProcessRecord? = nil,
        removedProcessRow: Bool = false,
        keptRuns: Int = 0
    ) {
        self.app = app
        self.wasInstalled = wasInstalled
        self.removedRequests = removedRequests
        self.removedSettings = removedSettings
        self.removedCheckpoints = removedCheckpoints
        self.removedProcess = removedProcess
        self.removedProcessRow = removedProcessRow
        self.keptRuns = keptRuns
    }

    /// Whether anything at all was removed.
    public var removedAnything: Bool {
        wasInstalled || !removedRequests.isEmpty || !removedSettings.isEmpty || !removedCheckpoints.isEmpty || removedProcessRow
    }
}

extension SchedulerStore {
    // MARK: Installed apps

    /// Installs `app`, replacing the record of an app with the same identifier (a reinstall
    /// takes the new manifest and executable). Its requests, settings and checkpoints are
    /// kept across a reinstall. Committed when it returns.
    public func installApp(_ app: InstalledApp) throws(StoreError) {
        let values = try InstalledAppColumns.values(of: app)
        try withConnection { (connection) throws(StoreError) in
            try connection.execute(
                "INSERT OR REPLACE INTO installed_apps (\(InstalledAppColumns.names)) VALUES (\(InstalledAppColumns.placeholders))",
                values
            )
        }
    }

    /// Uninstalls `id` in one transaction: its `installed_apps` row, its pending requests,
    /// its app settings, its checkpoints and its recorded process are removed; its run
    /// history (and any quarantined request rows, kept as evidence) stay. The report says
    /// what was removed; uninstalling an app that is not installed removes whatever it left
    /// and says it was not installed.
    @discardableResult
    public func uninstallApp(_ id: AppID) throws(StoreError) -> UninstallReport {
        try withConnection { (connection) throws(StoreError) in
            try connection.transaction { () throws(StoreError) -> UninstallReport in
                let key: [SQLiteValue] = [.text(id.rawValue)]
                var report = UninstallReport(app: id, wasInstalled: false)
                report.removedRequests = try connection.query(
                    "SELECT CAST(identifier AS TEXT) FROM pending_requests WHERE app = ? ORDER BY 1", key
                ) { row in row.text(0) }
                report.removedSettings = try connection.query(
                    "SELECT name FROM app_settings WHERE app = ? ORDER BY name", key
                ) { row in row.text(0) }
                report.removedCheckpoints = try connection.query(
                    "SELECT key FROM checkpoints WHERE app = ? ORDER BY key", key
                ) { row in row.text(0) }
                let process = try connection.query(
                    "SELECT \(AppProcessColumns.names) FROM app_processes WHERE app = ?", key
                ) { row in try? AppProcessColumns.decode(row) }
                report.removedProcessRow = !process.isEmpty
                report.removedProcess = process.first ?? nil
                report.keptRuns = try connection.query("SELECT count(*) FROM runs WHERE app = ?", key) { row in Int(row.int64(0)) }.first ?? 0

                try connection.execute("DELETE FROM installed_apps WHERE app = ?", key)
                report.wasInstalled = connection.changes > 0
                try connection.execute("DELETE FROM pending_requests WHERE app = ?", key)
                try connection.execute("DELETE FROM app_settings WHERE app = ?", key)
                try connection.execute("DELETE FROM checkpoints WHERE app = ?", key)
                try connection.execute("DELETE FROM app_processes WHERE app = ?", key)
                return report
            }
        }
    }

    /// Every installed app that can be read, by identifier, and the rows that cannot (each
    /// with the reason). Works on a store opened with ``openForReading(at:)``; a store from
    /// before installed apps existed (an embedded app's) lists none.
    public func installedApps() throws(StoreError) -> (apps: [InstalledApp], unreadable: [UnreadableAppRow]) {
        try withConnection { (connection) throws(StoreError) in
            guard try SchemaMigrations.hasTable("installed_apps", on: connection) else { return ([], []) }
            var apps: [InstalledApp] = []
            var unreadable: [UnreadableAppRow] = []
            _ = try connection.query("SELECT \(InstalledAppColumns.names) FROM installed_apps ORDER BY app") { row in
                do throws(StoreError) {
                    apps.append(try InstalledAppColumns.decode(row))
                } catch {
                    unreadable.append(UnreadableAppRow(table: "installed_apps", app: row.text(0), reason: error.message))
                }
            }
            return (apps, unreadable)
        }
    }

    /// The installed app `id`, or `nil` when it is not installed.
    /// - Throws: ``StoreError/Code/invalidData`` naming the column when its row cannot be read.
    public func installedApp(_ id: AppID) throws(StoreError) -> InstalledApp? {
        try withConnection { (connection) throws(StoreError) in
            guard try SchemaMigrations.hasTable("installed_apps", on: connection) else { return nil }
            return try connection.query(
                "SELECT \(InstalledAppColumns.names) FROM installed_apps WHERE app = ?", [.text(id.rawValue)]
            ) { (row) throws(StoreError) in try InstalledAppColumns.decode(row) }.first
        }
    }

    // MARK: App processes

    /// Records the process the daemon launched for `record.app`, replacing the previous one
    /// (one process per app). Committed when it returns, so a daemon killed right after
    /// still finds it at its next start.
    /// - Throws: ``StoreError/Code/invalidData`` for a pid or process group that is not
    ///   above 1 (signalling group 0 or 1 would reach the daemon's own group or every
    ///   process) or a start time beyond SQLite's integers.
    public func recordAppProcess(_ record: AppProcessRecord) throws(StoreError) {
        let values = try AppProcessColumns.values(of: record)
        try withConnection { (connection) throws(StoreError) in
            try connection.execute(
                "INSERT OR REPLACE INTO app_processes (\(AppProcessColumns.names)) VALUES (\(AppProcessColumns.placeholders))",
                values
            )
        }
    }

    /// Forgets the process recorded for `app` (it exited or was ended). Returns whether a
    /// row was removed. Committed when it returns.
    @discardableResult
    public func removeAppProcess(app: AppID) throws(StoreError) -> Bool {
        try withConnection { (connection) throws(StoreError) in
            try connection.execute("DELETE FROM app_processes WHERE app = ?", [.text(app.rawValue)])
            return connection.changes > 0
        }
    }

    /// Every recorded app process that can be read, by app, and the rows that cannot: what a
    /// restarted daemon ends before it launches anything. Works read-only; an older store
    /// lists none.
    public func appProcesses() throws(StoreError) -> (processes: [AppProcessRecord], unreadable: [UnreadableAppRow]) {
        try withConnection { (connection) throws(StoreError) in
            guard try SchemaMigrations.hasTable("app_processes", on: connection) else { return ([], []) }
            var processes: [AppProcessRecord] = []
            var unreadable: [UnreadableAppRow] = []
            _ = try connection.query("SELECT \(AppProcessColumns.names) FROM app_processes ORDER BY app") { row in
                do throws(StoreError) {
                    processes.append(try AppProcessColumns.decode(row))
                } catch {
                    unreadable.append(UnreadableAppRow(table: "app_processes", app: row.text(0), reason: error.message))
                }
            }
            return (processes, unreadable)
        }
    }
}

/// How an ``InstalledApp`` maps to `installed_apps`.
enum InstalledAppColumns {
    static let names = "app, manifest_path, executable, arguments, permitted_identifiers, background_modes, installed_at"
    static let placeholders = "?, ?, ?, ?, ?, ?, ?"

    static func values(of app: InstalledApp) throws(StoreError) -> [SQLiteValue] {
        [
            .text(app.app.rawValue),
            .text(app.manifestPath),
            .text(app.executable),
            .text(try StoredColumn.encode(app.launchArguments, column: "arguments", of: app.app.rawValue)),
            .text(try StoredColumn.encode(app.permittedIdentifiers, column: "permitted_identifiers", of: app.app.rawValue)),
            // Sorted: the same app always gives the same row.
            .text(try StoredColumn.encode(app.backgroundModes.sorted(), column: "background_modes", of: app.app.rawValue)),
            .date(app.installedAt),
        ]
    }

    /// Reads a row strictly: text where text was written, JSON arrays of strings, a finite
    /// date; anything else is ``StoreError/Code/invalidData`` naming the app and column.
    static func decode(_ row: SQLiteRow) throws(StoreError) -> InstalledApp {
        let name = row.text(0)
        guard row.isText(0) else { throw StoredColumn.invalid("the app of an installed_apps row is \(row.typeName(0)), not text") }
        // Another program's row: `bgtask install` never writes such a name, and nothing could
        // uninstall it (the command and the protocol refuse the name).
        if let problem = AppID.problem(with: name) { throw StoredColumn.invalid("an installed_apps row's app identifier is not one an app can have (\(problem))") }
        let manifestPath = try StoredColumn.text(row, 1, column: "manifest_path", of: name)
        let executable = try StoredColumn.text(row, 2, column: "executable", of: name)
        let arguments = try StoredColumn.stringArray(row, 3, column: "arguments", of: name)
        let permitted = try StoredColumn.stringArray(row, 4, column: "permitted_identifiers", of: name)
        let modes = try StoredColumn.stringArray(row, 5, column: "background_modes", of: name)
        let installedAt = try StoredColumn.date(row, 6, column: "installed_at", of: name)
        return InstalledApp(
            app: AppID(name), manifestPath: manifestPath, executable: executable, launchArguments: arguments,
            permittedIdentifiers: permitted, backgroundModes: Set(modes), installedAt: installedAt)
    }
}

/// How an ``AppProcessRecord`` maps to `app_processes`.
enum AppProcessColumns {
    static let names = "app, pid, process_group, start_time, cgroup_path, started_at"
    static let placeholders = "?, ?, ?, ?, ?, ?"

    static func values(of record: AppProcessRecord) throws(StoreError) -> [SQLiteValue] {
        let name = record.app.rawValue
        if let problem = problem(pid: Int64(record.pid), processGroup: Int64(record.processGroup)) {
            throw StoredColumn.invalid("cannot record the process of \(name): \(problem)")
        }
        guard let startTime = Int64(exactly: record.startTime) else {
            throw StoredColumn.invalid("cannot record the process of \(name): its start time \(record.startTime) is beyond SQLite's integers")
        }
        return [
            .text(name), .integer(Int64(record.pid)), .integer(Int64(record.processGroup)), .integer(startTime),
            .optionalText(record.cgroupPath), .date(record.startedAt),
        ]
    }

    /// Why a pid or process group must not be recorded (or, read back, acted on): a
    /// restarted daemon signals the recorded group, and `kill(-1)` reaches every process
    /// the user owns, `kill(0)` the daemon's own group.
    static func problem(pid: Int64, processGroup: Int64) -> String? {
        if pid <= 1 || pid > Int64(Int32.max) { return "its pid \(pid) is not a process the daemon can have launched (2 to \(Int32.max))" }
        if processGroup <= 1 || processGroup > Int64(Int32.max) {
            return "its process group \(processGroup) is not a group the daemon can have created (2 to \(Int32.max))"
        }
        return nil
    }

    static func decode(_ row: SQLiteRow) throws(StoreError) -> AppProcessRecord {
        let name = row.text(0)
        guard row.isText(0) else { throw StoredColumn.invalid("the app of an app_processes row is \(row.typeName(0)), not text") }
        let pid = try StoredColumn.integer(row, 1, column: "pid", of: name)
        let group = try StoredColumn.integer(row, 2, column: "process_group", of: name)
        if let problem = problem(pid: pid, processGroup: group) {
            throw StoredColumn.invalid("the process of \(name) cannot be used: \(problem)")
        }
        let startTime = try StoredColumn.integer(row, 3, column: "start_time", of: name)
        guard startTime >= 0 else { throw StoredColumn.invalid("start_time of \(name) is \(startTime), not clock ticks since boot") }
        var cgroup: String?
        if !row.isNull(4) { cgroup = try StoredColumn.text(row, 4, column: "cgroup_path", of: name) }
        let startedAt = try StoredColumn.date(row, 5, column: "started_at", of: name)
        return AppProcessRecord(
            app: AppID(name), pid: Int32(pid), processGroup: Int32(group), startTime: UInt64(startTime),
            cgroupPath: cgroup, startedAt: startedAt)
    }
}

/// Strict readers of single columns, shared by the installed-app tables.
private enum StoredColumn {
    static func invalid(_ message: String) -> StoreError {
        StoreError(code: .invalidData, path: nil, message: message)
    }

    static func text(_ row: SQLiteRow, _ index: Int32, column: String, of name: String) throws(StoreError) -> String {
        guard row.isText(index) else { throw invalid("\(column) of \(name) is \(row.typeName(index)), not text") }
        return row.text(index)
    }

    static func integer(_ row: SQLiteRow, _ index: Int32, column: String, of name: String) throws(StoreError) -> Int64 {
        guard row.isNumber(index), row.double(index) == Double(row.int64(index)) else {
            throw invalid("\(column) of \(name) is \(row.typeName(index)) \(row.text(index).excerpt(scalars: 40)), not an integer")
        }
        return row.int64(index)
    }

    static func date(_ row: SQLiteRow, _ index: Int32, column: String, of name: String) throws(StoreError) -> Date {
        guard row.isNumber(index) else {
            throw invalid("\(column) of \(name) is \(row.typeName(index)), not seconds since 2001-01-01")
        }
        // One rule for every stored date (finite, 0001 to 4001: what the tools can print).
        return try RequestColumns.storedDate(row.double(index), column: column, of: { name })
    }

    static func stringArray(_ row: SQLiteRow, _ index: Int32, column: String, of name: String) throws(StoreError) -> [String] {
        let json = try text(row, index, column: column, of: name)
        // What `encode` writes for plain strings is read without a JSONDecoder (a daemon
        // reads three arrays for each of 10,000 apps at start-up); anything else (escapes,
        // control characters, invalid UTF-8, another shape) goes to the strict decoder.
        if let strings = PlainStringArray.parse(json) { return strings }
        do {
            return try JSONDecoder().decode([String].self, from: Data(json.utf8))
        } catch {
            throw invalid("\(column) of \(name) is not a JSON array of strings (\"\(json.excerpt(scalars: 40))\")")
        }
    }

    static func encode(_ strings: [String], column: String, of name: String) throws(StoreError) -> String {
        let encoder = JSONEncoder()
        // Paths stay readable in the row (`/opt/app`, not `\/opt\/app`).
        encoder.outputFormatting = [.withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(strings), as: UTF8.self)
        } catch {
            throw invalid("cannot encode \(column) of \(name): \(error)")
        }
    }
}

/// A reader of JSON arrays of strings in their plain form, `["a", "b"]`: strings without
/// escapes or control characters, whitespace between tokens. It answers nil for anything
/// else, which the caller hands to `JSONDecoder`, so it never accepts what the strict
/// decoder would refuse.
enum PlainStringArray {
    static func parse(_ json: String) -> [String]? {
        var json = json
        return json.withUTF8 { bytes -> [String]? in
            var index = 0
            func skipWhitespace() {
                while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 { index += 1 }
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "[") else { return nil }
            index += 1
            var strings: [String] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
            } else {
                while true {
                    guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
                    index += 1
                    let start = index
                    while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                        // An escape or a control character: the strict decoder's business.
                        if bytes[index] == UInt8(ascii: "\\") || bytes[index] < 0x20 { return nil }
                        index += 1
                    }
                    guard index < bytes.count,
                          let string = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self) else { return nil }
                    strings.append(string)
                    index += 1
                    skipWhitespace()
                    guard index < bytes.count else { return nil }
                    if bytes[index] == UInt8(ascii: "]") { index += 1; break }
                    guard bytes[index] == UInt8(ascii: ",") else { return nil }
                    index += 1
                    skipWhitespace()
                }
            }
            skipWhitespace()
            return index == bytes.count ? strings : nil
        }
    }
}
