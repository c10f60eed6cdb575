import CSQLite
/// An error from the durable store.
///
/// Errors are an extensible struct with a nested ``Code`` (the swift-service-lifecycle
/// style) rather than an enum, so new codes can be added without breaking callers that
/// switch over them. The ``message`` is written for a person and names the file involved.
public struct StoreError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What kind of failure this is.
    public var code: Code
    /// The database file involved, or `nil` for an in-memory store; for a server's store,
    /// its address without credentials.
    public var path: String?
    /// A human-readable explanation, naming the path when there is one.
    public var message: String

    /// SQLite's own text for the failure, when SQLite reported it (for
    /// ``StoreOpenReport/corruptionDetail``).
    var sqliteMessage: String?

    /// SQLite's extended result code, when SQLite reported the failure: what a caller
    /// decides on (a reader retries a store whose directory is not writable).
    var sqliteResult: Int32?

    /// The system's error behind SQLite's failure (`sqlite3_system_errno`), 0 when none: an
    /// I/O error that was the file system being full (ENOSPC) is told from another by it.
    var systemError: Int32 = 0

    /// For ``Code/locked``: the process id of the owner, as it wrote it into the lock file
    /// (`nil` when unknown).
    public var holderPID: Int32?

    /// For ``Code/server``: the SQLSTATE the PostgreSQL server gave (`23505` for a unique
    /// key taken, `57014` for a statement cancelled by its timeout), for callers that decide
    /// on it rather than on the message's words.
    public var sqlState: String?

    /// Whether the same write may succeed if tried again later: the store could not be
    /// reached (``Code/unavailable``), SQLite was busy, locked, out of space or failed to do
    /// its I/O, or the server gave up on a wait it may not meet again (a statement or lock
    /// timeout, a serialization failure or deadlock, too little memory or disk). A refusal of
    /// the write itself (``Code/invalidData``), a store closed, damaged or of another
    /// program, or a statement the server refuses, is not.
    public var mayPassIfRetried: Bool {
        switch code {
        case .unavailable:
            return true
        case .sqlite:
            let primary = (sqliteResult ?? 0) & 0xFF
            return [SQLITE_BUSY, SQLITE_LOCKED, SQLITE_FULL, SQLITE_IOERR].contains(primary)
        case .server:
            // Cancelled by a timeout, a lock not available, a serialization failure or
            // deadlock, or insufficient resources (class 53).
            guard let sqlState else { return false }
            return ["57014", "55P03", "40001", "40P01"].contains(sqlState) || sqlState.hasPrefix("53")
        default:
            return false
        }
    }

    /// Creates an error.
    public init(code: Code, path: String?, message: String) {
        self.code = code
        self.path = path
        self.message = message
    }

    /// Errors are equal when their code, path and message are (the SQLite detail is part
    /// of the message already).
    public static func == (lhs: StoreError, rhs: StoreError) -> Bool {
        lhs.code == rhs.code && lhs.path == rhs.path && lhs.message == rhs.message
    }

    /// The message, which names the file or server (the code is for programs: a Swift type
    /// name in front of it told a person nothing).
    public var description: String { message }

    /// The kinds of store failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The database could not be opened or created: the parent directory is missing or
        /// is not a directory, or SQLite could not open the file.
        public static let cannotOpen = Code("cannotOpen")
        /// The database file or its directory cannot be written. The store is left as it is:
        /// a read-only store is never moved aside or replaced.
        public static let readOnly = Code("readOnly")
        /// The database was written by a newer version of this software (its
        /// `PRAGMA user_version` is higher than any migration known here). It is left untouched.
        public static let schemaTooNew = Code("schemaTooNew")
        /// SQLite reported an error (the message carries SQLite's code and text).
        public static let sqlite = Code("sqlite")
        /// The file is not a database or is damaged. ``SchedulerStore/open(at:now:options:)``
        /// handles this itself by moving the file aside; later queries may still report it.
        public static let corrupt = Code("corrupt")
        /// A stored row could not be turned back into a value (for example an unknown task
        /// kind), or a call referred to a record that does not exist.
        public static let invalidData = Code("invalidData")

        /// Another owner (another process of the app, or another store object in this one)
        /// holds the store's lock file (see ``StateDirectoryLock``); ``StoreError/holderPID``
        /// says which process. Nothing was read or written.
        public static let locked = Code("locked")
        /// The file is an SQLite database of another program (its `application_id` is not
        /// ours, or it has tables but no scheduler schema). It is refused and never written.
        public static let foreignDatabase = Code("foreignDatabase")

        /// The store was closed (``SchedulerStore/close()``): it gave up its file and its
        /// ownership, and reads and writes through it fail.
        public static let closed = Code("closed")

        /// The store's server cannot be reached or stopped answering (PostgreSQL restarted,
        /// the network gone): the call was not committed, or, when the connection was lost
        /// while a write was committing, its outcome is unknown (the message says which);
        /// submissions, cancellations and settings may be tried again either way.
        public static let unavailable = Code("unavailable")
        /// The server refused the statement (the message carries its SQLSTATE and text).
        public static let server = Code("server")
        /// The store's address (`BGTASK_STORE_URL`, a connection string) is malformed; the
        /// message names the part at fault and never shows a password.
        public static let invalidAddress = Code("invalidAddress")

        /// The code's name, for example `cannotOpen`.
        public var description: String { name }
    }
}
