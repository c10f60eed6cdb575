import Foundation
import SchedulerCore

extension SchedulerStore {
    /// Opens the store at `url`, creating it if the file does not exist, and repairs what a
    /// previous crash left behind.
    ///
    /// - The parent directory must exist and be writable; it is never created, so a typo in a
    ///   path fails loudly instead of scattering databases. A read-only file or directory is
    ///   refused with ``StoreError/Code/readOnly`` and left exactly as it is.
    /// - A database written by a newer version is refused with
    ///   ``StoreError/Code/schemaTooNew`` and left untouched.
    /// - A file that is not a database, or a damaged one, is moved aside to
    ///   `<name>.corrupt-<yyyyMMdd-HHmmss>` (UTC, from `now`), together with its `-wal`,
    ///   `-shm` and `-journal` companions, and a fresh store is created in its place. The
    ///   report says where it went and why.
    /// - Runs that never ended are recorded as ``RunOutcome/interrupted`` at `now`, and their
    ///   requests are pending again unless the app submitted a newer one meanwhile.
    ///
    /// - Parameters:
    ///   - url: The database file.
    ///   - now: The current instant, from the caller's clock: the end of interrupted runs and
    ///     the time stamp of a moved-aside file.
    ///   - options: How durable each commit is.
    /// - Returns: The open store, and a report of what was repaired.
    public static func open(
        at url: URL,
        now: Date,
        options: StoreOptions = .init()
    ) throws(StoreError) -> (SchedulerStore, StoreOpenReport) {
        try open(at: url, now: now, options: options, mode: .readWrite)
    }

    /// ``open(at:now:options:)`` with a choice of access mode, so tests can reproduce a
    /// read-only file even when they run as root (root may write any file regardless of its
    /// permission bits).
    static func open(
        at url: URL,
        now: Date,
        options: StoreOptions,
        mode: SQLiteConnection.AccessMode
    ) throws(StoreError) -> (SchedulerStore, StoreOpenReport) {
        let path = url.path
        try StoreLocation.checkUsable(path)
        var report = StoreOpenReport()
        let connection: SQLiteConnection
        do throws(StoreError) {
            connection = try openConfiguredAndMigrated(path: path, options: options, mode: mode)
        } catch let error where error.code == .corrupt {
            // The damaged connection is already closed: it was a local of the call that threw.
            let movedTo = try CorruptStoreQuarantine.moveAside(path: path, now: now)
            report.movedAsideCorruptFile = URL(fileURLWithPath: movedTo)
            report.corruptionDetail = error.sqliteMessage ?? error.message
            connection = try openConfiguredAndMigrated(path: path, options: options, mode: mode)
        }
        let recovery = try InterruptedRunRecovery.recover(connection, now: now)
        report.interruptedRuns = recovery.interruptedRuns
        report.restoredRequests = recovery.restoredRequests
        return (SchedulerStore(connection: connection, url: url), report)
    }

    /// Opens an existing store only to read it, beside the app that may be using it: what
    /// `bgtask log` and `bgtask energy` use.
    ///
    /// Unlike ``open(at:now:options:)`` it repairs nothing. A missing file is not created; a
    /// damaged one is reported (``StoreError/Code/corrupt`` from the first read), never moved
    /// aside; runs without an end stay as they are, because they may really be in progress
    /// in the app that owns the store. A store written by an older version is migrated
    /// first (every step only adds, and the app does the same on its next start); that is
    /// the only change to its content, and the connection then refuses writes
    /// (`PRAGMA query_only`). (Closing may still checkpoint the WAL into the file, which
    /// moves committed pages and changes nothing they say.)
    ///
    /// - Throws: ``StoreError/Code/cannotOpen`` when there is no file at `url`,
    ///   ``StoreError/Code/schemaTooNew`` for a store from a newer version,
    ///   ``StoreError/Code/invalidData`` for a database that is not a scheduler store, and
    ///   ``StoreError/Code/readOnly`` when an older store needs migrating but cannot be written.
    public static func openForReading(at url: URL) throws(StoreError) -> SchedulerStore {
        let path = url.path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw StoreError(code: .cannotOpen, path: path, message: "there is no scheduler store at \(path)")
        }
        // Read-write (when the file allows it) rather than read-only: a read-only connection
        // cannot remove the `-wal` and `-shm` files it had to create, so every `bgtask log`
        // would leave them behind in the app's state directory. `query_only` below keeps
        // this connection from writing anyway.
        let connection = try SQLiteConnection.open(path: path, mode: .readWriteExisting)
        connection.setBusyTimeout(milliseconds: 5_000)
        // The first read: a file that is not a database fails here, with `corrupt`.
        try SchemaMigrations.refuseIfTooNew(connection)
        let version = try SchemaMigrations.version(of: connection)
        guard version > 0 else {
            throw StoreError(
                code: .invalidData,
                path: path,
                message: "\(path) is not a scheduler store: it has no schema (version 0)"
            )
        }
        if version < SchemaMigrations.latestVersion {
            guard !connection.isReadOnly else {
                throw StoreError(
                    code: .readOnly,
                    path: path,
                    message: "the scheduler store at \(path) has schema version \(version) and must be "
                        + "upgraded to version \(SchemaMigrations.latestVersion) before it can be read, "
                        + "but it is not writable; open it once with the app, or make it writable"
                )
            }
            try SchemaMigrations.migrate(connection)
        }
        try connection.executeScript("PRAGMA query_only = ON")
        return SchedulerStore(connection: connection, url: url)
    }

    /// Opens the file and brings it to a usable state. Throws ``StoreError/Code/corrupt``
    /// for any sign of damage, so the caller can move the file aside.
    private static func openConfiguredAndMigrated(
        path: String,
        options: StoreOptions,
        mode: SQLiteConnection.AccessMode
    ) throws(StoreError) -> SQLiteConnection {
        let connection = try SQLiteConnection.open(path: path, mode: mode)
        if connection.isReadOnly {
            throw StoreError(
                code: .readOnly,
                path: path,
                message: "the scheduler store at \(path) can only be opened read-only; "
                    + "make the file and its directory writable (the file was left as it is)"
            )
        }
        connection.setBusyTimeout(milliseconds: 5_000)
        // Until the file is known to be sound, keep its WAL on close: a damaged database is
        // moved aside together with its WAL. (Closing may still checkpoint the WAL into it.)
        connection.setDeletesWriteAheadLogOnClose(false)
        do throws(StoreError) {
            // Check the version before anything writes: even switching to WAL rewrites the
            // header. This first read is also where a file that is not a database shows up.
            try SchemaMigrations.refuseIfTooNew(connection)
            try checkIntegrity(connection)
        } catch {
            // Only a damaged file is moved aside; anything else is left as SQLite keeps it.
            if error.code != .corrupt { connection.setDeletesWriteAheadLogOnClose(true) }
            throw error
        }
        connection.setDeletesWriteAheadLogOnClose(true)
        try enableWriteAheadLog(connection)
        try configure(connection, options: options)
        try SchemaMigrations.migrate(connection)
        return connection
    }

    /// `PRAGMA quick_check`: damage in pages the first query did not read shows up here, at
    /// open, rather than as an error in the middle of scheduling.
    private static func checkIntegrity(_ connection: SQLiteConnection) throws(StoreError) {
        let findings = try connection.query("PRAGMA quick_check") { row in row.text(0) }
        guard findings != ["ok"] else { return }
        let detail = findings.joined(separator: "; ")
        var error = StoreError(
            code: .corrupt,
            path: connection.path,
            message: "the scheduler store at \(connection.path ?? "(in memory)") is damaged: \(detail)"
        )
        error.sqliteMessage = detail
        throw error
    }

    /// WAL: a commit appends to the log (one fsync), and readers never block the writer.
    private static func enableWriteAheadLog(_ connection: SQLiteConnection) throws(StoreError) {
        let modes = try connection.query("PRAGMA journal_mode = WAL") { row in row.text(0).lowercased() }
        guard modes == ["wal"] else {
            throw StoreError(
                code: .cannotOpen,
                path: connection.path,
                message: "the scheduler store at \(connection.path ?? "(in memory)") cannot use "
                    + "write-ahead logging (journal mode is \(modes.first ?? "unknown")); "
                    + "is it on a file system without shared memory support?"
            )
        }
    }

    /// Settings that live in the connection, not the file, so they are set on every open.
    static func configure(_ connection: SQLiteConnection, options: StoreOptions) throws(StoreError) {
        try connection.executeScript(
            "PRAGMA foreign_keys = ON; PRAGMA synchronous = \(options.synchronous.pragmaValue)"
        )
    }
}
