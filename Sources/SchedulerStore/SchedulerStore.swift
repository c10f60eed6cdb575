import Foundation
import SchedulerCore
import Synchronization

/// The scheduler's durable state in one SQLite database: pending requests, the run log
/// (the energy log), checkpoints, and small per-app settings.
///
/// Every mutating call commits its own transaction before it returns, so anything a caller
/// has been told is saved survives a kill of the process at any instant (WAL journal, and
/// with ``StoreOptions/Synchronous/full`` a power cut too).
///
/// Open a file with ``open(at:now:options:)`` as its one owner (it takes the store's lock
/// file and repairs what a crash left behind, see ``StoreOpenReport``), read it beside its
/// owner with ``openForReading(at:)``, or use ``inMemory(options:)`` for simulations and tests.
/// The store is safe to share between threads: its single connection is confined behind a
/// `Mutex`, because an SQLite connection must not be used from two threads at once.
public final class SchedulerStore: Sendable {
    /// The database file, or `nil` for an in-memory store.
    public let url: URL?

    /// The connection, and the lock that makes this store its file's owner; both `nil`
    /// once ``close()`` gave them up.
    private struct Held {
        var connection: SQLiteConnection?
        var ownership: StateDirectoryLock?
    }

    private let held: Mutex<Held>

    /// The lock that makes this store its file's owner (``open(at:now:options:)``), held
    /// until the store is closed or released; `nil` for a reader (``openForReading(at:)``),
    /// in memory, and after ``close()``.
    public var ownership: StateDirectoryLock? { held.withLock { $0.ownership } }

    init(connection: sending SQLiteConnection, url: URL?, ownership: StateDirectoryLock?) {
        self.url = url
        self.held = Mutex(Held(connection: connection, ownership: ownership))
    }

    /// Closes the database and gives up ownership of the file (its lock is released), so
    /// another store (a restarted scheduler, another process) can own it. Later calls
    /// through this store fail with ``StoreError/Code/closed``. Closing twice does nothing.
    ///
    /// A store also closes when it is released; `close()` is for owners whose lifetime
    /// is longer than their use of the file (an app context lives as long as the process).
    public func close() {
        held.withLock { held in
            // The connection closes (and checkpoints) before the lock is released, so the
            // next owner never finds this one still writing.
            held.connection = nil
            held.ownership = nil
        }
    }

    /// Creates a private, empty store that lives only as long as this object: for
    /// simulations and tests that need no file.
    public static func inMemory(options: StoreOptions = .init()) throws(StoreError) -> SchedulerStore {
        let connection = try SQLiteConnection.open(path: nil, mode: .readWrite)
        try configure(connection, options: options)
        try SchemaMigrations.migrate(connection)
        try SchemaMigrations.stampApplicationID(connection)
        return SchedulerStore(connection: connection, url: nil, ownership: nil)
    }

    /// Runs `body` with exclusive use of the connection. Errors that do not name the file yet
    /// (for example a row that cannot be decoded) are given its path here.
    func withConnection<Result: Sendable>(
        _ body: (SQLiteConnection) throws(StoreError) -> Result
    ) throws(StoreError) -> Result {
        try held.withLock { (held) throws(StoreError) -> Result in
            guard let connection = held.connection else {
                throw StoreError(code: .closed, path: url?.path, message: "the scheduler store\(url.map { " at \($0.path)" } ?? "") was closed")
            }
            do throws(StoreError) {
                return try body(connection)
            } catch {
                throw Self.namingFile(error, path: connection.path)
            }
        }
    }

    private static func namingFile(_ error: StoreError, path: String?) -> StoreError {
        guard error.path == nil, let path else { return error }
        var named = error
        named.path = path
        named.message = "the scheduler store at \(path): \(error.message)"
        return named
    }
}
