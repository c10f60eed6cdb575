import Foundation
import SchedulerCore

extension SchedulerStore {
    /// The name of the lock file that says who owns the store at `url`: the database's
    /// name plus `.lock`, beside it in the state directory.
    public static func lockFileName(for url: URL) -> String { url.lastPathComponent + ".lock" }

    /// The process that owns the store at `url` (holds its lock file), or `nil` when none
    /// does: then a run without an end was really cut off.
    public static func owner(of url: URL) -> StateDirectoryLock.Holder? {
        StateDirectoryLock.holder(in: url.deletingLastPathComponent(), name: lockFileName(for: url))
    }

    /// Opens the store at `url` as its owner, creating it if the file does not exist, and
    /// repairs what a previous owner left behind.
    ///
    /// - Ownership first: the store's lock file (``lockFileName(for:)``, a
    ///   ``StateDirectoryLock``) is taken, without waiting, and held until the store is
    ///   released. When another process (or another store object in this one) owns it, the
    ///   open fails with ``StoreError/Code/locked`` naming the holder's process id, and
    ///   nothing is read or repaired: its runs without an end are really running.
    /// - The parent directory must exist and be writable; it is never created, so a typo in a
    ///   path fails loudly instead of scattering databases. A read-only file or directory is
    ///   refused with ``StoreError/Code/readOnly`` and left exactly as it is.
    /// - Another program's SQLite database (another `application_id`, or tables without the
    ///   scheduler's schema) is refused with ``StoreError/Code/foreignDatabase`` and never
    ///   written. An empty file is a new store. Every store opened is stamped with the
    ///   scheduler's `application_id`.
    /// - A database written by a newer version is refused with
    ///   ``StoreError/Code/schemaTooNew`` and left untouched.
    /// - A file that is not a database, or a damaged one, is moved aside to
    ///   `<name>.corrupt-<yyyyMMdd-HHmmss>` (UTC, from `now`), together with its `-wal`,
    ///   `-shm` and `-journal` companions, and a fresh store is created in its place, with
    ///   every row that can still be read from the file moved aside (``CorruptStoreSalvage``).
    ///   The report says where it went, why, and what was copied back.
    /// - Runs that never ended are recorded as ``RunOutcome/interrupted`` at `now`, their
    ///   requests are pending again unless the app submitted a newer one meanwhile, and the
    ///   stop counts as one throttle strike of each app concerned (a continued-processing
    ///   run only ends: neither restored nor struck).
    /// - Pending requests that cannot be loaded (a row that does not decode, or, with
    ///   ``StoreOptions/app``, another app's) are moved to the quarantine, never deleted,
    ///   and listed in the report.
    ///
    /// - Parameters:
    ///   - url: The database file.
    ///   - now: The current instant, from the caller's clock: the end of interrupted runs and
    ///     the time stamp of a moved-aside file.
    ///   - options: How durable each commit is; which app the store belongs to.
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
        let ownership: StateDirectoryLock
        do throws(StoreError) {
            ownership = try StateDirectoryLock.acquire(in: url.deletingLastPathComponent(), name: lockFileName(for: url))
        } catch where error.code == .locked {
            var refused = error
            refused.path = path
            refused.message = "the scheduler store at \(path) is owned by "
                + "\(StateDirectoryLock.Holder(pid: error.holderPID)) (it holds \(error.path ?? "its lock file")); "
                + "only the owner recovers, launches and enforces the limits, so this one was not opened"
            throw refused
        }
        var report = StoreOpenReport()
        if let moved = try moveAsideIfCopiedWithoutItsWAL(path: path, now: now) {
            report.movedAsideWithoutSchema = URL(fileURLWithPath: moved)
        }
        // What was beside the file before SQLite opens it (which makes a -wal and -shm beside
        // a WAL database): only those move with it if it is damaged.
        let companionsFound = Set(CorruptStoreQuarantine.companionSuffixes.filter { FileManager.default.fileExists(atPath: path + $0) })
        // A store this open makes (no file, or an empty regular one: not a link, a FIFO or
        // anything else refused below) holds nothing of anyone's until its schema is committed.
        var before = stat()
        let existed = lstat(path, &before) == 0
        let makesANewStore = companionsFound.isEmpty && mode == .readWrite
            && (existed ? before.st_mode & S_IFMT == S_IFREG && before.st_size == 0 : errno == ENOENT)
        let connection: SQLiteConnection
        do throws(StoreError) {
            connection = try openConfiguredAndMigrated(path: path, options: options, mode: mode)
        } catch let error where makesANewStore && SQLiteConnection.isFull(error) {
            // Its making failed for a full disk: what it left (a write-ahead-log header and no
            // table) would read next time as a store copied without its -wal, set aside with
            // advice about a -wal that never existed (an outside probe). Undone, so the next
            // open makes it afresh, if it still holds nothing: emptied when the file was
            // there (its owner and mode kept), removed when this open made it; the -wal and
            // -shm it made removed. The error stands.
            if !Self.isEmptyDatabase(path: path, inWriteAheadLogMode: false) && ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) != 0 {
                throw error
            }
            if existed { truncate(path, 0) } else { unlink(path) }
            for suffix in CorruptStoreQuarantine.companionSuffixes { unlink(path + suffix) }
            throw error
        } catch let error where error.code == .corrupt {
            // The damaged connection is already closed: it was a local of the call that threw.
            let movedTo = try CorruptStoreQuarantine.moveAside(path: path, now: now, companionsFound: companionsFound)
            report.movedAsideCorruptFile = URL(fileURLWithPath: movedTo)
            report.corruptionDetail = error.sqliteMessage ?? error.message
            connection = try openConfiguredAndMigrated(path: path, options: options, mode: mode)
            // What can still be read comes back before the checks below judge it.
            report.salvage = CorruptStoreSalvage.salvage(from: movedTo, into: connection)
        }
        let recovery = try InterruptedRunRecovery.recover(connection, now: now)
        report.interruptedRuns = recovery.interruptedRuns
        report.restoredRequests = recovery.restoredRequests
        report.unreadableRuns = recovery.unreadableRuns
        (report.quarantinedRequests, report.loadedRequests) = try RequestQuarantine.quarantineUnloadable(app: options.app, now: now, on: connection)
        return (SchedulerStore(connection: connection, url: url, ownership: ownership), report)
    }

    /// A database file with no tables at all and no `-wal` beside it is what a running
    /// store copied without its `-wal` looks like (every commit is in that file; an outside
    /// probe restored such a copy): taken over, it would be given a fresh schema, and the
    /// `-wal`, if found later, could never be put back. It is moved aside first
    /// (`<name>.no-schema-<time>`), and the report says so. An empty file, or one with its
    /// `-wal`, is opened as usual. Returns where it went, `nil` when nothing moved.
    private static func moveAsideIfCopiedWithoutItsWAL(path: String, now: Date) throws(StoreError) -> String? {
        guard looksCopiedWithoutItsWAL(path: path) else { return nil }
        return try CorruptStoreQuarantine.moveAside(path: path, now: now, as: "no-schema", because: "has no tables and no -wal beside it (a store copied without its -wal)")
    }

    /// Whether `path` is a database in write-ahead-log mode with no table and no `-wal` beside
    /// it: a running store copied without its `-wal`. Read from the file itself (BoundedFile:
    /// a regular file only, never a FIFO), not through SQLite, which would make a -wal and
    /// -shm beside it: SQLite's header, then the first page's b-tree header (at byte 100). A
    /// missing or empty file reads short. Only a database in write-ahead-log mode (the
    /// header's bytes 18 and 19 are 2) keeps its commits apart (an empty database in rollback
    /// mode is only empty), and the schema table with no cell (bytes 103-104) holds no table,
    /// index or anything else. The owner moves such a file aside; readers say where its
    /// commits may be.
    static func looksCopiedWithoutItsWAL(path: String) -> Bool {
        guard !FileManager.default.fileExists(atPath: SQLiteConnection.companionBase(of: path) + "-wal") else { return false }
        return isEmptyDatabase(path: path, inWriteAheadLogMode: true)
    }

    /// Whether the file at `path` is a database whose schema table holds nothing (the header
    /// bytes ``looksCopiedWithoutItsWAL(path:)`` reads), in write-ahead-log mode when asked.
    static func isEmptyDatabase(path: String, inWriteAheadLogMode: Bool) -> Bool {
        guard let header = try? BoundedFile.head(path: path, count: 105), header.count == 105 else { return false }
        return header.starts(with: Array("SQLite format 3\0".utf8))
            && (!inWriteAheadLogMode || header[18] == 2 && header[19] == 2) && header[100] == 0x0D && header[103] == 0 && header[104] == 0
    }

    /// Opens an existing store only to read it, beside the app that may own it and write
    /// it: what `bgtask why`, `bgtask log` and `bgtask energy` use.
    ///
    /// The connection is SQLite's `SQLITE_OPEN_READONLY`: it takes no lock file, repairs
    /// nothing, migrates nothing, prunes nothing, and works while the owner holds the lock
    /// and writes (WAL: readers see the last commit). A missing file is not created; a
    /// damaged one is reported (``StoreError/Code/corrupt``), never moved aside; runs without
    /// an end stay as they are (``owner(of:)`` tells whether they are really running). A
    /// read-only connection cannot remove the `-wal` and `-shm` files SQLite needs beside a
    /// WAL database, so reading a store nobody has open may leave them (empty of commits)
    /// behind; the owner's next open and close removes them.
    ///
    /// A WAL store in a directory this process cannot write (another user's, a read-only
    /// mount) needs a `-shm` file SQLite cannot create there. When no `-wal` file holds
    /// commits and no owner holds the store's lock file, everything is in the database file
    /// and nobody is writing it, so it is read as unchanging (`immutable=1`); otherwise the
    /// error (``StoreError/Code/readOnly``) names the directory and says it is not writable.
    ///
    /// - Throws: ``StoreError/Code/cannotOpen`` when there is no file at `url`,
    ///   ``StoreError/Code/schemaTooNew`` for a store from a newer version,
    ///   ``StoreError/Code/foreignDatabase`` or ``StoreError/Code/invalidData`` for a
    ///   database that is not a scheduler store, and ``StoreError/Code/readOnly`` for a store
    ///   too old to read without migrating (open it once with the app, which migrates it)
    ///   or one whose commits are in a `-wal` in a directory that cannot be written.
    /// Whether nothing at all is at `url`, in a directory that could hold a store: what a
    /// reader takes for "no store kept here yet" (a fresh account). Anything else there (a
    /// directory, a link that leads nowhere) or a directory that cannot hold it (a regular
    /// file, a link loop) is not absence: ``openForReading(at:)`` names it.
    public static func isAbsent(at url: URL) -> Bool {
        BoundedFile.lookupProblem(at: url.path) == .missing
            && DirectoryProblem.find(in: url.deletingLastPathComponent().path) == nil
    }

    public static func openForReading(at url: URL) throws(StoreError) -> SchedulerStore {
        let path = url.path
        switch BoundedFile.lookupProblem(at: path) {
        case .missing?:
            // Nothing there because its directory cannot hold it (a regular file, a link
            // leading nowhere): named, not "no store", which reads as a fresh account.
            if let problem = DirectoryProblem.find(in: (path as NSString).deletingLastPathComponent) {
                throw StoreError(code: .cannotOpen, path: path, message: "cannot read the scheduler store at \(path): \(problem)")
            }
            throw StoreError(code: .cannotOpen, path: path, message: "there is no scheduler store at \(path)")
        case let problem?:
            // A link that loops or leads nowhere is there, in `ls`: named for what it is.
            throw StoreError(code: .cannotOpen, path: path, message: "cannot read the scheduler store at \(path): it is \(problem.found)")
        case nil: break
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw StoreError(code: .cannotOpen, path: path, message: "\(path) is a directory, not a scheduler store")
        }
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size == 0 {
            // An empty file is a store nobody has written yet (its owner adopts it as a new
            // one): read as a store with nothing in it, not refused as "no schema".
            let empty = try SQLiteConnection.open(path: nil, mode: .readWrite)
            try SchemaMigrations.migrate(empty)
            return SchedulerStore(connection: empty, url: url, ownership: nil)
        }
        // Looked at before opening: SQLite creates an empty -wal beside a WAL store it opens.
        if looksCopiedWithoutItsWAL(path: path) {
            throw StoreError(
                code: .invalidData, path: path,
                message: "\(path) is not a scheduler store: it has no schema (version 0); if it was copied from a running scheduler, its commits may still be in its -wal file, which must be copied beside it (\(path)-wal)"
            )
        }
        let connection: SQLiteConnection
        do throws(StoreError) {
            connection = try openCheckedForReading(path: path, mode: .readOnly)
        } catch where refusedForUnwritableDirectory(error, path: path) {
            connection = try openInUnwritableDirectory(path: path, refused: error)
        }
        return SchedulerStore(connection: connection, url: url, ownership: nil)
    }

    /// Whether SQLite refused to read the WAL store at `path` because it cannot create its
    /// `-shm` beside it: `SQLITE_READONLY_DIRECTORY`, or (SQLite's answer when a `-wal` is
    /// there) "unable to open" or "readonly" while the file is readable and its directory is not
    /// writable. Root may write anywhere, so it never sees this.
    private static func refusedForUnwritableDirectory(_ error: StoreError, path: String) -> Bool {
        if SQLiteConnection.isReadOnlyDirectory(error) { return true }
        // SQLite's own refusal only: this file's errors (a schema too old, `readOnly` too)
        // keep their message.
        guard error.sqliteResult != nil else { return false }
        guard error.code == .cannotOpen || error.code == .readOnly, access(path, R_OK) == 0 else { return false }
        return access((SQLiteConnection.companionBase(of: path) as NSString).deletingLastPathComponent, W_OK) != 0
    }

    /// ``openForReading(at:)`` of a WAL store SQLite refused for want of a writable
    /// directory (`refused`): read as unchanging when its `-wal` holds no commits, else an
    /// error naming the directory.
    private static func openInUnwritableDirectory(path: String, refused: StoreError) throws(StoreError) -> SQLiteConnection {
        let base = SQLiteConnection.companionBase(of: path)
        let directory = (base as NSString).deletingLastPathComponent
        let wal = base + "-wal"
        let problem = "it is in write-ahead-log mode and its directory \(directory) is not writable, so SQLite cannot create \(base)-shm, which a reader needs"
        // Read as unchanging only while no owner has it open: an owner's -wal is empty until
        // its first write, and a checkpoint would rewrite pages under a reader that takes no
        // locks. The lock file is tested with a shared lock on a read-only descriptor.
        if let owner = owner(of: URL(fileURLWithPath: path)) {
            throw StoreError(
                code: .readOnly, path: path,
                message: "the scheduler store at \(path) cannot be read while \(owner) has it open: \(problem); make \(directory) writable, or read it once its owner has stopped"
            )
        }
        // Only a -wal that is not there counts as empty; one that cannot be looked at may hold commits.
        var info = stat()
        let walSize: Int64
        if lstat(wal, &info) == 0 {
            walSize = Int64(info.st_size)
        } else if errno == ENOENT {
            walSize = 0
        } else {
            walSize = -1
        }
        guard walSize == 0 else {
            throw StoreError(
                code: .readOnly, path: path,
                message: "the scheduler store at \(path) cannot be read: \(problem) to read the commits in \(wal) (\(walSize < 0 ? "its size unknown" : "\(walSize) bytes")); "
                    + "make \(directory) writable, or let the app open and close the store once (it moves them into the database)"
            )
        }
        do throws(StoreError) {
            return try openCheckedForReading(path: path, mode: .readOnlyImmutable)
        } catch {
            throw StoreError(
                code: error.code, path: path,
                message: "the scheduler store at \(path) cannot be read: \(problem) (\(refused.sqliteMessage ?? refused.message)), "
                    + "and reading the file alone failed too: \(error.message)"
            )
        }
    }

    /// Opens `path` read-only in `mode` and checks it is a scheduler store this build can read.
    private static func openCheckedForReading(path: String, mode: SQLiteConnection.AccessMode) throws(StoreError) -> SQLiteConnection {
        let connection = try SQLiteConnection.open(path: path, mode: mode)
        connection.setBusyTimeout(milliseconds: 5_000)
        // The first read: a file that is not a database fails here, with `corrupt`.
        try SchemaMigrations.refuseIfForeign(connection)
        try SchemaMigrations.refuseIfTooNew(connection)
        let version = try SchemaMigrations.version(of: connection)
        guard version > 0 else {
            // (One copied without its -wal was named before opening: looksCopiedWithoutItsWAL.)
            throw StoreError(
                code: .invalidData,
                path: path,
                message: "\(path) is not a scheduler store: it has no schema (version 0)"
            )
        }
        guard version >= SchemaMigrations.minimumReadableVersion else {
            throw StoreError(
                code: .readOnly,
                path: path,
                message: "the scheduler store at \(path) has schema version \(version) and must be "
                    + "upgraded to version \(SchemaMigrations.latestVersion) before it can be read; "
                    + "diagnostics never write, so start the app once (its owner migrates it)"
            )
        }
        return connection
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
            try SchemaMigrations.refuseIfForeign(connection)
            try SchemaMigrations.refuseIfTooNew(connection)
            try checkIntegrity(connection)
        } catch {
            // Only a damaged file is moved aside; anything else is left as SQLite keeps it.
            if error.code != .corrupt { connection.setDeletesWriteAheadLogOnClose(true) }
            throw error
        }
        connection.setDeletesWriteAheadLogOnClose(true)
        try enableWriteAheadLog(connection)
        // The -wal checkpointed sooner on a disk with little room (SQLiteConnection.checkpointWhenDue).
        if mode != .readOnly, mode != .readOnlyImmutable { connection.installCheckpointHook() }
        try configure(connection, options: options)
        try SchemaMigrations.migrate(connection)
        try SchemaMigrations.stampApplicationID(connection)
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
        // An in-memory store has no disk to wait for.
        connection.commitsWaitForDisk = options.synchronous == .full && connection.path != nil
    }
}
