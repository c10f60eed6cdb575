import CSQLite
import Foundation
import SchedulerCore

/// One SQLite connection with a cache of prepared statements.
///
/// A connection is not thread-safe in the way Swift needs (it is not `Sendable`), so
/// ``SchedulerStore`` keeps its only connection behind a `Mutex`; nothing else holds one.
final class SQLiteConnection {
    /// How to open the file.
    enum AccessMode {
        /// Read and write, creating the file if missing: what the store always uses.
        case readWrite
        /// Read only. Used by tests to reproduce, even as root, what SQLite does with a file
        /// it cannot write (it silently falls back to a read-only connection).
        case readOnly
        /// Read and write an existing file, never creating one: for a reader that may have to
        /// migrate a store but must not conjure one up where there was none.
        case readWriteExisting
        /// Read only, and promise SQLite the file does not change while open (`immutable=1`):
        /// SQLite then takes no locks and needs no `-shm` file, so a WAL database whose
        /// directory cannot be written can still be read (https://www.sqlite.org/wal.html,
        /// "Read-Only Databases"). Only safe when no `-wal` holds commits, which it ignores.
        case readOnlyImmutable
    }

    /// The `sqlite3` handle.
    let handle: OpaquePointer
    /// The database file, or `nil` for an in-memory database. Used in error messages.
    let path: String?
    /// Prepared statements by SQL text: each distinct statement is compiled once.
    private var statements: [String: SQLiteStatement] = [:]
    /// Whether commits wait for the disk (`PRAGMA synchronous = FULL`, the store's default),
    /// as ``SchedulerStore/configure(_:options:)`` set it: what a transaction that need not
    /// wait (``transaction(waitingForDisk:_:)``) returns to after it.
    var commitsWaitForDisk = false

    private init(handle: OpaquePointer, path: String?) {
        self.handle = handle
        self.path = path
    }

    deinit {
        // Statements must be finalized before the connection can really close.
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Opens (or, in ``AccessMode/readWrite``, creates) the database at `path`, or a private
    /// in-memory database when `path` is `nil`.
    static func open(path: String?, mode: AccessMode) throws(StoreError) -> SQLiteConnection {
        var handle: OpaquePointer?
        // NOMUTEX: the store's Mutex already serializes every use of the connection.
        var flags = SQLITE_OPEN_NOMUTEX
        switch mode {
        case .readWrite: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        case .readWriteExisting: flags |= SQLITE_OPEN_READWRITE
        case .readOnlyImmutable: flags |= SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
        }
        if let path { try refuseSpecialFiles(at: path) }
        var filename = path ?? ":memory:"
        if mode == .readOnlyImmutable, let path {
            // A URI, so `?`, `#` and `%` in the path are escaped to stay part of it.
            filename = "file:" + (path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path) + "?immutable=1"
        }
        let result = sqlite3_open_v2(filename, &handle, flags, nil)
        guard result == SQLITE_OK, let handle else {
            let sqliteMessage = handle.map { String(cString: sqlite3_errmsg($0)) }
                ?? String(cString: sqlite3_errstr(result))
            let systemError = handle.map { sqlite3_system_errno($0) } ?? 0
            sqlite3_close_v2(handle)
            throw makeError(result: result, sqliteMessage: sqliteMessage, path: path, action: "cannot open", systemError: systemError)
        }
        // Report extended codes (for example SQLITE_READONLY_DBMOVED) in messages.
        sqlite3_extended_result_codes(handle, 1)
        return SQLiteConnection(handle: handle, path: path)
    }

    /// Installs ``checkpointWhenDue`` in place of SQLite's automatic checkpoint, on a
    /// connection that writes a file in write-ahead-log mode (the page size, fixed in that
    /// mode, goes with it as the hook's context: the hook captures nothing).
    func installCheckpointHook() {
        guard path != nil, let pageSize = (try? query("PRAGMA page_size") { row in row.int64(0) })?.first, pageSize > 0 else { return }
        sqlite3_wal_hook(handle, Self.checkpointWhenDue, UnsafeMutableRawPointer(bitPattern: Int(pageSize)))
    }

    /// The most pages the -wal holds before a commit checkpoints it, as SQLite's own
    /// automatic checkpoint does (1,000 pages, about 4 MB), on a disk with room.
    static let autoCheckpointPages: Int32 = 1_000

    /// After every commit of a connection that writes (SQLite's `wal_hook`, which replaces
    /// its automatic checkpoint): checkpoints the -wal at ``autoCheckpointPages`` as SQLite
    /// would, and sooner when the file system has less room left than eight times what the
    /// -wal holds (looked at from 16 pages on): on a disk with under about 4 MB free, the
    /// -wal grew until it had taken the last byte, and the checkpoint that would give it
    /// back then needs room for the database to grow (an outside probe: a 1 MiB disk held a
    /// 1 MB -wal beside a 4 KB database, every write refused for good). A passive checkpoint,
    /// which never waits for a reader (a `bgtask log` holding a snapshot would hold every
    /// commit for the busy timeout): once it has copied every frame, the next commit writes
    /// the log from its start, so it grows no further. Returns SQLITE_OK whatever the
    /// checkpoint did: a commit's own success does not depend on it. The context is the page
    /// size (``installCheckpointHook()``).
    private static let checkpointWhenDue: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = { context, database, name, pages in
        guard let database else { return SQLITE_OK }
        if pages >= autoCheckpointPages {
            sqlite3_wal_checkpoint_v2(database, name, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            return SQLITE_OK
        }
        // statvfs takes about a microsecond: nothing beside a commit's fsync.
        guard pages >= 16, let file = sqlite3_db_filename(database, name) else { return SQLITE_OK }
        var info = statvfs()
        guard statvfs(file, &info) == 0 else { return SQLITE_OK }
        let free = Double(info.f_bavail) * Double(info.f_frsize)
        // A frame is a page and a 24-byte header.
        let pageSize = Double(min(max(Int(bitPattern: context), 512), 65_536))
        let logBytes = Double(pages) * (pageSize + 24)
        if free < 8 * logBytes {
            sqlite3_wal_checkpoint_v2(database, name, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        }
        return SQLITE_OK
    }

    /// Refuses a database, or a `-wal`, `-shm` or `-journal` file beside it, that is
    /// something other than a regular file (a FIFO, a device, a socket, a directory).
    ///
    /// SQLite would open such a thing as it is: a read-only open of a FIFO blocks until a
    /// writer comes, forever, and a device is read as a database. Symbolic links are followed,
    /// as SQLite follows them. A file that does not exist is no problem here.
    static func refuseSpecialFiles(at path: String) throws(StoreError) {
        let base = companionBase(of: path)
        for candidate in [path, base + "-wal", base + "-shm", base + "-journal"] {
            var info = stat()
            guard stat(candidate, &info) == 0, let what = BoundedFile.nonRegularKind(info.st_mode) else { continue }
            throw StoreError(
                code: .cannotOpen,
                path: path,
                message: "cannot open the scheduler store at \(path): \(candidate) is \(what), "
                    // The store named is the caller's to correct; a file beside it is the store's.
                    + (candidate == path ? "not a regular file: a scheduler store is a SQLite file" : "not a regular file; remove what is there")
            )
        }
    }

    /// Where SQLite keeps the `-wal`, `-shm` and `-journal` files of the database at `path`:
    /// beside the file a symbolic link leads to, not beside the link (`path` itself when it
    /// cannot be resolved).
    static func companionBase(of path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    // MARK: Running SQL

    /// Runs one statement that returns no rows of interest.
    func execute(_ sql: String, _ bindings: [SQLiteValue] = []) throws(StoreError) {
        // A statement of its own is rolled back whole when it fails, so it may be tried again;
        // one inside a transaction is the transaction's to try again.
        guard sqlite3_get_autocommit(handle) != 0 else {
            _ = try query(sql, bindings) { _ in () }
            return
        }
        try retryingOnceWhenFull { () throws(StoreError) in _ = try query(sql, bindings) { _ in () } }
    }

    /// Runs one statement and calls `body` with each row it returns, in order (for readers
    /// that sort rows into more than one result as they go).
    func execute(_ sql: String, _ bindings: [SQLiteValue] = [], forEachRow body: (SQLiteRow) throws(StoreError) -> Void) throws(StoreError) {
        let statement = try preparedStatement(sql)
        defer { statement.reset() }
        let bound = statement.bind(bindings)
        guard bound == SQLITE_OK else { throw error(result: bound, action: "cannot bind values for `\(sql)`") }
        while true {
            let stepped = sqlite3_step(statement.handle)
            if stepped == SQLITE_DONE { return }
            guard stepped == SQLITE_ROW else { throw error(result: stepped, action: "cannot run `\(Self.shown(sql))`") }
            try body(SQLiteRow(handle: statement.handle))
        }
    }

    /// Runs one statement and maps each row it returns.
    func query<Row>(
        _ sql: String,
        _ bindings: [SQLiteValue] = [],
        row makeRow: (SQLiteRow) throws(StoreError) -> Row
    ) throws(StoreError) -> [Row] {
        var rows: [Row] = []
        try execute(sql, bindings) { (row) throws(StoreError) in rows.append(try makeRow(row)) }
        return rows
    }

    /// Runs several statements separated by semicolons, uncached (migrations, set-up).
    func executeScript(_ sql: String) throws(StoreError) {
        let result = sqlite3_exec(handle, sql, nil, nil, nil)
        guard result == SQLITE_OK else { throw error(result: result, action: "cannot run a script") }
    }

    /// The number of rows the last INSERT, UPDATE or DELETE changed.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// Whether SQLite opened the main database read-only (it does so silently when it cannot
    /// open the file for writing).
    var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    /// How long a statement waits for another connection's lock before failing with
    /// SQLITE_BUSY: the daemon and a tool may open the same file.
    func setBusyTimeout(milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
    }

    /// Whether closing the connection may delete the `-wal` and `-shm` files, as it normally
    /// does once everything is checkpointed. Turned off while a file is examined at open, so
    /// that if it turns out damaged its WAL is kept to move aside with it.
    func setDeletesWriteAheadLogOnClose(_ deletes: Bool) {
        var persist: Int32 = deletes ? 0 : 1
        sqlite3_file_control(handle, "main", SQLITE_FCNTL_PERSIST_WAL, &persist)
    }

    /// Runs `body` in one transaction: committed when `body` returns, rolled back when it
    /// throws. `BEGIN IMMEDIATE` takes the write lock at once, so two writers wait for each
    /// other (`busy_timeout`) instead of failing when a read turns into a write.
    ///
    /// - Parameter waitingForDisk: `false` commits without waiting for the disk even when
    ///   the connection's commits do (`PRAGMA synchronous = NORMAL` for this commit alone,
    ///   then `FULL` again): the commit survives a crash of the process (its WAL frames are
    ///   with the system), and reaches the disk with the next commit that waits; a power cut
    ///   before that may undo it, whole (WAL stays consistent). For a write whose loss to a
    ///   power cut only repeats work, on a path where the disk's latency counts (a launch).
    func transaction<Result>(waitingForDisk: Bool = true, _ body: () throws(StoreError) -> Result) throws(StoreError) -> Result {
        let relaxes = !waitingForDisk && commitsWaitForDisk
        // Run at once, not through the statement cache: SQLite applies this pragma when it
        // prepares the statement, and a cached one is not prepared again.
        if relaxes { try executeScript("PRAGMA synchronous = NORMAL") }
        // Back to waiting for the disk whatever happens. SQLite refuses the change only inside
        // an open transaction, which is left open only when the rollback below failed; the
        // next BEGIN then fails too, so no later commit goes through without waiting.
        defer { if relaxes { try? executeScript("PRAGMA synchronous = FULL") } }
        // Rolled back whole when it fails, so it may be tried again: its body only reads and
        // writes the store.
        return try retryingOnceWhenFull { () throws(StoreError) -> Result in
            try execute("BEGIN IMMEDIATE")
            do throws(StoreError) {
                let result = try body()
                try execute("COMMIT")
                return result
            } catch {
                // After a failed COMMIT SQLite may already have rolled back; ignore that error.
                if sqlite3_get_autocommit(handle) == 0 {
                    sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
                }
                throw error
            }
        }
    }

    /// Runs `attempt`, a write that leaves nothing behind when it fails, and once more when it
    /// failed for a full file system and a checkpoint gave the -wal's space back: the disk
    /// may be full of this store's own -wal (an outside probe: a 1 MiB disk held a 1 MB -wal
    /// beside a 4 KB database, every write refused, for good).
    private func retryingOnceWhenFull<Result>(_ attempt: () throws(StoreError) -> Result) throws(StoreError) -> Result {
        do {
            return try attempt()
        } catch where Self.isFull(error) && checkpointTruncatingTheLog() {
            return try attempt()
        }
    }

    /// `sql` as an error names it: a long statement's first words (a whole INSERT with
    /// its column list buried the cause at the end of a long line: an outside probe).
    static func shown(_ sql: String) -> String {
        // One line; a SELECT's column list and every parenthesized list elided, so the
        // statement's verb and table stay: `SELECT ... FROM runs WHERE id = ?`,
        // `INSERT OR REPLACE INTO pending_requests (...) VALUES (...)`.
        var text = sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        if text.hasPrefix("SELECT "), let from = text.range(of: " FROM ") {
            text = "SELECT ..." + text[from.lowerBound...]
        }
        var elided = ""
        var depth = 0
        for character in text {
            if character == "(" {
                if depth == 0 { elided += "(...)" }
                depth += 1
            } else if character == ")", depth > 0 {
                depth -= 1
            } else if depth == 0 {
                elided.append(character)
            }
        }
        let limit = 80
        guard elided.count > limit else { return elided }
        let cut = elided.prefix(limit)
        return String(cut[..<(cut.lastIndex(of: " ") ?? cut.endIndex)]) + " ..."
    }

    /// Whether `error` says the file system is full (`SQLITE_FULL`, or an I/O error whose
    /// system error is ENOSPC or EDQUOT: growing the -shm).
    static func isFull(_ error: StoreError) -> Bool {
        guard let result = error.sqliteResult else { return false }
        return result & 0xFF == SQLITE_FULL || (result & 0xFF == SQLITE_IOERR && [ENOSPC, EDQUOT].contains(error.systemError))
    }

    /// Copies the -wal into the database and truncates it to nothing; whether it completed
    /// (not when another connection reads from the log, or the database cannot grow).
    func checkpointTruncatingTheLog() -> Bool {
        var logFrames: Int32 = 0, checkpointed: Int32 = 0
        return sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_TRUNCATE, &logFrames, &checkpointed) == SQLITE_OK
    }

    // MARK: Internals

    private func preparedStatement(_ sql: String) throws(StoreError) -> SQLiteStatement {
        if let cached = statements[sql] { return cached }
        var statementHandle: OpaquePointer?
        // PERSISTENT tells SQLite the statement is kept for a long time (it allocates it
        // outside the lookaside pool).
        let result = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statementHandle, nil)
        guard result == SQLITE_OK, let statementHandle else {
            sqlite3_finalize(statementHandle)
            throw error(result: result, action: "cannot prepare `\(sql)`")
        }
        let statement = SQLiteStatement(handle: statementHandle)
        statements[sql] = statement
        return statement
    }

    /// A ``StoreError`` for a failed SQLite call on this connection.
    func error(result: Int32, action: String) -> StoreError {
        Self.makeError(result: result, sqliteMessage: String(cString: sqlite3_errmsg(handle)), path: path, action: action, systemError: sqlite3_system_errno(handle))
    }

    /// Maps SQLite's result code to a store error code and writes a message that names the
    /// file, so that a log line alone says which store is affected. `systemError`, the
    /// errno of SQLite's last failed system call, is said for a file that could not be
    /// opened: SQLite's "unable to open database file" alone does not say that the
    /// permission was denied.
    static func makeError(result: Int32, sqliteMessage: String, path: String?, action: String, systemError: Int32 = 0) -> StoreError {
        let code: StoreError.Code
        switch result & 0xFF {
        case SQLITE_CORRUPT, SQLITE_NOTADB: code = .corrupt
        case SQLITE_READONLY: code = .readOnly
        case SQLITE_CANTOPEN: code = .cannotOpen
        default: code = .sqlite
        }
        let location = path.map { "the scheduler store at \($0)" } ?? "the in-memory scheduler store"
        // What SQLite's words mean for the user, when its statement would hide it (`cannot
        // run \`PRAGMA application_id\`: database is locked`).
        let meaning: String = switch result & 0xFF {
        case SQLITE_BUSY, SQLITE_LOCKED: "; another process holds it locked (it was waited for)"
        case SQLITE_NOTADB: "; the file is not an SQLite database"
        default: ""
        }
        // The system's own error where SQLite's words hide it: "disk I/O error (4874)" was
        // ENOSPC growing the -shm file (an outside full-disk probe).
        // SQLite sets the system error only for a failed open and an I/O error, and never
        // clears it: read with any other result, it is an earlier failure's (and SQLITE_FULL
        // leaves it alone), so it is not said, nor taken for this one's cause.
        let primary = result & 0xFF
        let fresh = primary == SQLITE_IOERR || primary == SQLITE_CANTOPEN ? systemError : 0
        let saysSystemError = fresh != 0
        let full = primary == SQLITE_FULL || fresh == ENOSPC
        var error = StoreError(
            code: code,
            path: path,
            message: "\(location): \(action): \(sqliteMessage) (SQLite result code \(result))"
                + (saysSystemError ? ": \(systemErrorText(fresh))" : "")
                + meaning
                + (full ? "; the file system holding it is full" : fresh == EDQUOT ? "; its disk quota is used up" : "")
        )
        error.sqliteMessage = sqliteMessage
        error.sqliteResult = result
        error.systemError = fresh
        return error
    }

    /// Whether `error` is SQLite's `SQLITE_READONLY_DIRECTORY`: a read-only connection to a
    /// WAL database could not create the `-shm` file beside it, because the directory
    /// cannot be written.
    static func isReadOnlyDirectory(_ error: StoreError) -> Bool {
        // sqlite3.h defines it as SQLITE_READONLY | (6<<8), a macro Swift does not import.
        error.sqliteResult == SQLITE_READONLY | (6 << 8)
    }
}
