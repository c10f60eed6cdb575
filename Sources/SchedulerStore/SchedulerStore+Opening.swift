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
