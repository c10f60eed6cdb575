import Foundation
import SchedulerCore
import SchedulerStore
import Synchronization

/// The scheduler's durable state in a PostgreSQL database shared by several replicas of a
/// service (docs/replicas.md): the same contract as the SQLite ``SchedulerStore``
/// (``SchedulerStorage``), through libpq.
///
/// - Every mutating call commits before it returns (`synchronous_commit = on` for the
///   session, whatever the server's default); on a thrown error nothing of the call was
///   written.
/// - The pending requests, checkpoints and app settings are shared by every replica. The
///   run log is shared too but keyed by (replica, run id): each replica numbers its own runs
///   from ``maxRunID()``, and ``run(_:)``, ``recordRunFinished(_:appSettings:)`` and
///   ``maxRunID()`` are this ``replica``'s, while ``runs(app:since:limit:)``,
///   ``energySummary(app:since:)`` and ``pruneRuns(olderThan:)`` cover every replica.
/// - One connection, behind a `Mutex` (libpq's connections must not be used from two
///   threads). When the server went away (restarted, or unreachable), a call reconnects once
///   (`PQreset`) and goes on; if the server is still unreachable it throws
///   ``StoreError/Code/unavailable`` naming the server without credentials. When the
///   connection broke while a write was committing, nobody can tell whether it was
///   committed: the call throws ``StoreError/Code/unavailable`` saying so, never success.
/// - Statements the server refuses are ``StoreError/Code/server`` with the SQLSTATE.
///
/// What replicas share beyond the contract (claims, leases, the sweep, word of changes) is
/// in `PostgreSQLStore+Sharing.swift`.
public final class PostgreSQLStore: SchedulerStorage {
    /// Where the store is.
    public let address: PostgreSQLAddress
    /// The name of this replica: the owner of the runs it records.
    public let replica: String
    /// The pending requests that could not be read when the store was opened, moved to the
    /// quarantine then (a row another program wrote, or a newer version's task kind), so that
    /// the others load.
    public let quarantinedAtOpen: [QuarantinedRequest]

    /// The connection; `nil` once ``close()`` gave it up.
    private let held: Mutex<PostgreSQLConnection?>
    /// The server process of the connection's current session: a notification it sent is
    /// this store's own write, which its replica's engine already has.
    let ownBackendPID = Mutex<Int32>(0)
    /// The connection lease renewals go through, made at the first renewal: apart from
    /// ``held``, so that a call stuck on the main connection (a lock another session holds,
    /// a server slow to answer) does not hold the renewal back until the lease runs out
    /// while the replica is alive and its handler runs (an outside probe saw a second
    /// replica start the same request so). Renewals touch only runs, which notify nobody.
    let leaseHeld = Mutex<PostgreSQLConnection?>(nil)
    /// Whether ``close()`` ran: read by calls on the lease connection, which must not wait
    /// for ``held`` (a stuck call holds it).
    let isClosed = Mutex(false)

    private init(address: PostgreSQLAddress, replica: String, connection: sending PostgreSQLConnection, quarantined: [QuarantinedRequest]) {
        self.address = address
        self.replica = replica
        self.quarantinedAtOpen = quarantined
        self.ownBackendPID.withLock { $0 = connection.backendPID }
        self.held = Mutex(connection)
    }

    /// The server and database, without credentials (``PostgreSQLAddress/redacted``).
    public var storeDescription: String { address.redacted }

    /// Opens the store at `address` (a `postgresql://` or `postgres://` URL, or libpq's
    /// key/value pairs; see ``PostgreSQLAddress/parse(_:)``) as the replica `replica`.
    ///
    /// Connects, sets the session up (`synchronous_commit = on`), applies the schema steps
    /// the database lacks (``PostgreSQLSchema``: each in its own transaction, under an
    /// advisory lock so that replicas opening at once do not race), and moves pending
    /// requests that cannot be read to the quarantine at `now` (``quarantinedAtOpen``).
    ///
    /// - Parameters:
    ///   - address: The server and database.
    ///   - replica: This replica's name, unique among the replicas sharing the database
    ///     (for example the host name): its runs are numbered apart from the others'.
    ///   - now: The current instant, from the caller's clock: the time stamp of what is
    ///     quarantined.
    /// - Throws: ``StoreError/Code/invalidAddress`` for a malformed address;
    ///   ``StoreError/Code/invalidData`` for an empty replica name or one with control
    ///   characters; ``StoreError/Code/unavailable`` when the server cannot be reached or
    ///   refuses the connection; ``StoreError/Code/schemaTooNew`` when a newer version
    ///   migrated the database (it is left untouched); ``StoreError/Code/server`` when the
    ///   server refuses a statement (for example the user may not create tables).
    public static func open(address: String, replica: String, now: Date) throws(StoreError) -> PostgreSQLStore {
        try open(address: PostgreSQLAddress.parse(address), replica: replica, now: now)
    }

    /// ``open(address:replica:now:)`` with an address already parsed.
    public static func open(address: PostgreSQLAddress, replica: String, now: Date) throws(StoreError) -> PostgreSQLStore {
        try checkReplicaName(replica)
        let connection = try PostgreSQLConnection.connect(to: address, applicationName: applicationName("bgtask \(replica)"))
        try PostgreSQLSchema.migrate(connection, replica: replica)
        let quarantined = try quarantineUnreadable(on: connection, now: now)
        return PostgreSQLStore(address: address, replica: replica, connection: connection, quarantined: quarantined)
    }

    /// Calls `body` with the store at `address` opened for reading (``openForReading(address:)``)
    /// and closes it afterwards.
    public static func reading<T>(address: String, _ body: (PostgreSQLStore) throws -> T) throws -> T {
        let store = try openForReading(address: address)
        defer { store.close() }
        return try body(store)
    }

    /// Opens the store at `address` to read it (`bgtask log --store`, `bgtask pending`):
    /// nothing is created, migrated or quarantined. A database without the scheduler's
    /// tables is refused (``StoreError/Code/invalidData``, saying so), one a newer version
    /// wrote too (``StoreError/Code/schemaTooNew``). Its writes would go under the replica
    /// name `bgtask-reader`; read commands make none.
    public static func openForReading(address: String) throws(StoreError) -> PostgreSQLStore {
        let parsed = try PostgreSQLAddress.parse(address)
        let connection = try PostgreSQLConnection.connect(to: parsed, applicationName: "bgtask reader")
        let version = try PostgreSQLSchema.version(on: connection)
        guard version > 0 else {
            throw StoreError(code: .invalidData, path: parsed.redacted, message: "the PostgreSQL database \(parsed.redacted) holds no scheduler store (no replica has opened it yet)")
        }
        guard version <= PostgreSQLSchema.latestVersion else {
            throw StoreError(
                code: .schemaTooNew, path: parsed.redacted,
                message: "the scheduler's tables in the PostgreSQL database \(parsed.redacted) have schema version \(version), but this build knows versions up to \(PostgreSQLSchema.latestVersion)")
        }
        return PostgreSQLStore(address: parsed, replica: "bgtask-reader", connection: connection, quarantined: [])
    }

    /// `text` cut to the 63 bytes `application_name` holds, keeping whole characters.
    static func applicationName(_ text: String) -> String {
        var name = text
        while name.utf8.count > 63 { name.removeLast() }
        return name
    }

    /// The error of a call on a store ``close()`` gave up.
    var closedError: StoreError {
        StoreError(code: .closed, path: address.redacted, message: "the scheduler store on the PostgreSQL server \(address.redacted) was closed")
    }

    private static func checkReplicaName(_ replica: String) throws(StoreError) {
        let bad = replica.unicodeScalars.contains { $0.properties.generalCategory == .control }
        guard !replica.isEmpty, !bad, replica.utf8.count <= 200 else {
            throw StoreError(
                code: .invalidData, path: nil,
                message: "the replica name \(bad ? "holds a control character" : replica.isEmpty ? "is empty" : "is longer than 200 bytes"); "
                    + "give each replica a short printable name (its host name, for example)"
            )
        }
    }

    /// Gives the connection up: later calls fail with ``StoreError/Code/closed``. Twice does
    /// nothing. A store also closes when it is released.
    public func close() {
        isClosed.withLock { $0 = true }
        held.withLock { $0 = nil }
        leaseHeld.withLock { $0 = nil }
    }

    /// Runs `body` with exclusive use of the connection, reconnecting at most once per call.
    ///
    /// A connection found broken before the call (the server restarted since the last one)
    /// is reset first. One that breaks during the call is reset and the call is run again,
    /// unless it broke while a write was committing: whether that write was committed is
    /// unknown, so the call throws ``StoreError/Code/unavailable`` saying so (after the
    /// reconnection, so the next call finds a working connection).
    func withConnection<Result: Sendable>(
        _ body: (PostgreSQLConnection) throws(StoreError) -> Result
    ) throws(StoreError) -> Result {
        try held.withLock { (held) throws(StoreError) -> Result in
            guard let connection = held else { throw closedError }
            var mayReset = true
            if !connection.isAlive {
                mayReset = false
                guard connection.reset() else {
                    throw connection.unavailableNow("it cannot be reached, so nothing was read or written")
                }
            }
            connection.beginCall()
            ownBackendPID.withLock { $0 = connection.backendPID }
            do throws(StoreError) {
                return try body(connection)
            } catch where connection.lost {
                if connection.lostWhileCommitting {
                    let reason = error.message
                    _ = mayReset && connection.reset()
                    throw connection.unavailable(
                        "the connection was lost while a write was committing, so whether it was committed is unknown; "
                            + "trying it again is safe for submissions, cancellations and settings", reason: reason
                    )
                }
                guard mayReset, connection.reset() else {
                    throw connection.unavailableNow("the connection was lost and it cannot be reached again, so nothing was written")
                }
            } catch {
                throw Self.named(error, server: address.redacted)
            }
            // Reconnected after a loss before anything committed: the call once more.
            connection.beginCall()
            ownBackendPID.withLock { $0 = connection.backendPID }
            do throws(StoreError) {
                return try body(connection)
            } catch {
                throw Self.named(error, server: address.redacted)
            }
        }
    }

    /// An error that does not name the store yet (a row that cannot be decoded) with the
    /// server's name, as the SQLite store names its file.
    static func named(_ error: StoreError, server: String) -> StoreError {
        guard error.path == nil else { return error }
        var named = error
        named.path = server
        named.message = "the scheduler store on the PostgreSQL server \(server): \(error.message)"
        return named
    }
}
