import CLibPQ
import Foundation
import SchedulerCore
import SchedulerStore

/// A value for one `$n` parameter of a statement. Every parameter is sent as text (libpq's
/// text format, converted by the server to the column's type), except bytes, sent in binary
/// so that a checkpoint needs no escaping.
enum PostgreSQLValue {
    case null
    case text(String)
    case bytes(Data)

    /// A date as seconds since 2001-01-01 00:00:00 UTC (`Date`'s own representation, as the
    /// SQLite store keeps it), in `double precision`. Swift writes the shortest text that
    /// reads back as the same `Double` and the server parses it exactly, so the round trip
    /// is bit for bit.
    static func date(_ date: Date?) -> PostgreSQLValue {
        date.map { .text($0.timeIntervalSinceReferenceDate.description) } ?? .null
    }

    /// A flag as `boolean`.
    static func bool(_ flag: Bool?) -> PostgreSQLValue {
        flag.map { .text($0 ? "true" : "false") } ?? .null
    }

    /// Text, or NULL.
    static func optionalText(_ text: String?) -> PostgreSQLValue {
        text.map { .text($0) } ?? .null
    }

    /// A measurement: NaN and infinities are stored as NULL, as the SQLite store does (an
    /// infinite measurement is no measurement).
    static func optionalReal(_ number: Double?) -> PostgreSQLValue {
        guard let number, number.isFinite else { return .null }
        return .text(number.description)
    }

    /// A `bigint`, or NULL.
    static func integer(_ number: Int64?) -> PostgreSQLValue {
        number.map { .text(String($0)) } ?? .null
    }
}

/// The rows of one statement's result; frees libpq's result when released.
final class PostgreSQLResult {
    private let handle: OpaquePointer

    init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        PQclear(handle)
    }

    /// How many rows it has.
    var rowCount: Int32 { PQntuples(handle) }

    /// How many columns each row has.
    var columnCount: Int32 { PQnfields(handle) }

    /// How many rows the statement inserted, updated or deleted (`PQcmdTuples`), or `nil`
    /// when it says nothing (or something that is not a count).
    var affectedRows: Int? {
        guard let text = PQcmdTuples(handle) else { return nil }
        return Int(String(cString: text))
    }

    /// The command tag, such as `COMMIT` or `ROLLBACK`.
    var commandStatus: String {
        PQcmdStatus(handle).map { String(cString: $0) } ?? ""
    }

    /// Row `index`.
    func row(_ index: Int32) -> PostgreSQLRow { PostgreSQLRow(result: self, index: index, handle: handle) }

    /// Every row through `body`.
    func map<T>(_ body: (PostgreSQLRow) throws(StoreError) -> T) throws(StoreError) -> [T] {
        var values: [T] = []
        values.reserveCapacity(Int(rowCount))
        for index in 0..<rowCount { values.append(try body(row(index))) }
        return values
    }
}

/// One row of a ``PostgreSQLResult`` (text format), read column by column.
struct PostgreSQLRow {
    /// Kept so that the result outlives the row.
    let result: PostgreSQLResult
    let index: Int32
    fileprivate let handle: OpaquePointer

    /// Whether column `column` (0-based) is NULL.
    func isNull(_ column: Int32) -> Bool { PQgetisnull(handle, index, column) == 1 }

    /// The text of column `column` (empty for NULL).
    func text(_ column: Int32) -> String {
        guard let value = PQgetvalue(handle, index, column) else { return "" }
        return String(cString: value)
    }

}

/// One libpq connection (`PGconn`) to the store's server. Not thread-safe, as libpq's
/// connections are not: ``PostgreSQLStore`` keeps it behind a `Mutex`, so only one thread at
/// a time ever uses it.
///
/// It knows whether the server went away during the current call (``lost``), and whether
/// that happened while a write was committing (``lostWhileCommitting``): then nobody can
/// tell whether the write was committed, which the store must say instead of retrying.
final class PostgreSQLConnection {
    private let handle: OpaquePointer
    /// The server, without credentials, for messages.
    let server: String
    /// Whether the server went away (the connection broke) since ``beginCall()``.
    private(set) var lost = false
    /// Whether it went away while a statement that commits (a `COMMIT`, or a write outside
    /// a transaction) was in flight.
    private(set) var lostWhileCommitting = false

    private init(handle: OpaquePointer, server: String) {
        self.handle = handle
        self.server = server
    }

    deinit {
        PQfinish(handle)
    }

    /// Connects to `address` (libpq finds a password in the address, `PGPASSWORD` or a
    /// pgpass file) and sets the session up (``configureSession()``).
    /// - Throws: ``StoreError/Code/unavailable`` naming the server when it cannot be reached
    ///   or refuses the connection (authentication included), with libpq's reason.
    static func connect(to address: PostgreSQLAddress, applicationName: String) throws(StoreError) -> PostgreSQLConnection {
        let options = address.connectionOptions(applicationName: applicationName)
        let secrets = AddressSecrets(values: options.filter { $0.keyword.hasSuffix("password") }.map(\.value).filter { !$0.isEmpty })
        guard let handle = address.openHandle(applicationName: applicationName) else {
            throw StoreError(code: .unavailable, path: address.redacted, message: "cannot connect to the PostgreSQL server \(address.redacted): libpq is out of memory")
        }
        let connection = PostgreSQLConnection(handle: handle, server: address.redacted)
        guard PQstatus(handle) == CONNECTION_OK else {
            throw connection.unavailable("cannot connect to it", reason: secrets.scrub(connection.libpqMessage))
        }
        clibpq_silence_notices(handle)
        try connection.configureSession()
        return connection
    }

    /// The statement timeout a session gets when neither the address (`options=-c
    /// statement_timeout=...`) nor the server (`ALTER ROLE` or `ALTER DATABASE ... SET`,
    /// postgresql.conf) gives it one (an explicit 0, no timeout, is kept as chosen): a statement waiting on a lock nobody releases (an
    /// administrator's `LOCK TABLE`, a session idle in a transaction) fails after a minute,
    /// naming the server and SQLSTATE 57014, instead of holding the submit forever. The
    /// store's statements take milliseconds; schema steps run without it
    /// (PostgreSQLSchema.migrate).
    static let defaultStatementTimeout = "60s"

    /// The session's settings, set again after every reconnection (a new session starts
    /// from the server's defaults): commits wait for the server's disk (what the store
    /// promises, whatever the server's default), floats are written with every digit
    /// (PostgreSQL 12 and later write the shortest exact text anyway; older ones need it),
    /// and a session whose statement timeout is the built-in default gets
    /// ``defaultStatementTimeout``.
    private func configureSession() throws(StoreError) {
        // Constant settings, no parameter: PQexec takes several statements in one round trip
        // and returns the last one's result.
        let script = "SET synchronous_commit = on; SET extra_float_digits = 3; SET client_min_messages = warning; "
            + "SELECT set_config('statement_timeout', '\(Self.defaultStatementTimeout)', false) "
            + "WHERE (SELECT source FROM pg_settings WHERE name = 'statement_timeout') = 'default'"
        guard let result = PQexec(handle, script) else {
            throw unavailable("its session could not be set up", reason: libpqMessage)
        }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_TUPLES_OK else {
            throw failure(of: result, commits: false)
        }
    }

    /// libpq's last error text for the connection, on one line.
    private var libpqMessage: String {
        let text = PQerrorMessage(handle).map { String(cString: $0) } ?? ""
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        return lines.isEmpty ? "no reason given" : lines.joined(separator: "; ")
    }

    /// Starts a call of the store: forgets a loss seen by an earlier call, and rolls back a
    /// transaction an earlier call left open (none should; this keeps one failure from
    /// poisoning every later call).
    func beginCall() {
        lost = false
        lostWhileCommitting = false
        if PQtransactionStatus(handle) == PQTRANS_INERROR || PQtransactionStatus(handle) == PQTRANS_INTRANS {
            if let result = PQexec(handle, "ROLLBACK") { PQclear(result) }
        }
    }

    /// The server process serving this connection (`PQbackendPID`): the notifications its
    /// own writes cause carry it.
    var backendPID: Int32 { PQbackendPID(handle) }

    /// Whether the connection still works, found without waiting: libpq reads what the
    /// server sent meanwhile (`PQconsumeInput` does not block), so a server that restarted
    /// or closed the session since the last call shows here as a broken connection.
    var isAlive: Bool {
        guard PQstatus(handle) == CONNECTION_OK else { return false }
        return PQconsumeInput(handle) == 1 && PQstatus(handle) == CONNECTION_OK
    }

    /// Reconnects once with the same parameters (`PQreset`, which honours `connect_timeout`)
    /// and sets the session up again. Returns whether the connection works.
    func reset() -> Bool {
        PQreset(handle)
        // A new session has none of the old one's prepared statements.
        preparedStatements = [:]
        preparedCount = 0
        preparingStopped = false
        guard PQstatus(handle) == CONNECTION_OK else { return false }
        clibpq_silence_notices(handle)
        do {
            try configureSession()
        } catch {
            return false
        }
        lost = false
        return true
    }

    /// ``StoreError/Code/unavailable`` naming the server: `what` happened, for `reason`.
    func unavailable(_ what: String, reason: String? = nil) -> StoreError {
        StoreError(
            code: .unavailable,
            path: server,
            message: "the PostgreSQL server \(server) is unavailable: \(what)\(reason.map { " (\($0))" } ?? "")"
        )
    }

    /// Why the server cannot be reached now, from libpq's last message.
    func unavailableNow(_ what: String) -> StoreError { unavailable(what, reason: libpqMessage) }

    // MARK: Statements

    /// Runs one statement with `values` for `$1...$n` (`PQexecParams`: values never become
    /// SQL text). `commits` says that the statement commits a write by itself (a `COMMIT`,
    /// or a write outside a transaction): losing the server during it leaves the write's
    /// fate unknown.
    /// - Throws: ``StoreError/Code/unavailable`` when the connection broke (and ``lost`` is
    ///   set), ``StoreError/Code/server`` with the SQLSTATE and the server's text when the
    ///   server refused the statement, ``StoreError/Code/invalidData`` for a text value
    ///   with a NUL byte (PostgreSQL's text cannot hold one, and libpq would cut it there).
    ///
    /// With `prepared`, the statement is parsed and planned once per connection
    /// (`PQprepare`, then `PQexecPrepared`): for the statements a replica runs for every
    /// submit, parsing and planning the upsert again each time cost about as much as the
    /// trigger that follows it. At most ``preparedLimit`` statements are kept per connection;
    /// past that a statement runs unprepared, so statements built per call cannot grow the
    /// server's memory.
    @discardableResult
    func execute(_ sql: String, _ values: [PostgreSQLValue] = [], commits: Bool = false, prepared: Bool = false) throws(StoreError) -> PostgreSQLResult {
        let name = prepared ? try preparedName(for: sql, parameters: values.count) : nil
        let result = try withParameters(values) { count, valuePointers, lengths, formats in
            if let name {
                PQexecPrepared(handle, name, count, valuePointers, lengths, formats, 0)
            } else {
                PQexecParams(handle, sql, count, nil, valuePointers, lengths, formats, 0)
            }
        }
        guard let result else {
            // No result at all: out of memory, or the connection is gone.
            lost = true
            lostWhileCommitting = commits
            throw unavailableNow("the statement could not be sent")
        }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            defer { PQclear(result) }
            // The server no longer has the statement as prepared (a pooler that reset the
            // session, `DISCARD ALL`) or refuses its cached plan after a schema change: the
            // statement did not run, so outside a transaction it is forgotten and run once
            // unprepared, rather than failing every later call on this connection.
            let state = sqlState(of: result) ?? ""
            if prepared, name != nil, Self.stalePreparedStates.contains(state), PQtransactionStatus(handle) == PQTRANS_IDLE {
                preparedStatements[sql] = nil
                // A statement that vanished may vanish again (a pooler handing each call
                // another server session): this connection stops preparing.
                if state == "26000" { preparingStopped = true }
                return try execute(sql, values, commits: commits, prepared: false)
            }
            throw failure(of: result, commits: commits)
        }
        return PostgreSQLResult(handle: result)
    }

    /// SQLSTATEs that say a prepared statement is unusable, not that the statement failed:
    /// 26000 (invalid SQL statement name: not prepared in this session) and 0A000 (cached
    /// plan must not change result type).
    static let stalePreparedStates: Set<String> = ["26000", "0A000"]

    /// The SQLSTATE of a failed result, if the server gave one.
    private func sqlState(of result: OpaquePointer) -> String? {
        PQresultErrorField(result, clibpq_diag_sqlstate()).map { String(cString: $0) }
    }

    /// The statements prepared on this connection, by SQL text: the server's names for them.
    /// A new connection (after the server went away) starts with none, as the server does.
    private var preparedStatements: [String: String] = [:]
    /// How many statements this session prepared: names are never reused, even for a
    /// statement forgotten after it went stale (the server may still hold the old name).
    private var preparedCount = 0
    /// Set once a prepared statement vanished from the session (see ``execute(_:_:commits:prepared:)``).
    private var preparingStopped = false

    /// The most statements one connection keeps prepared.
    static let preparedLimit = 32

    /// The name `sql` is prepared under on this connection, preparing it first if needed;
    /// nil when ``preparedLimit`` statements are prepared already (it then runs unprepared).
    /// - Throws: as ``execute(_:_:commits:prepared:)`` when the server refuses to prepare it
    ///   (a syntax error, a missing table) or the connection broke.
    private func preparedName(for sql: String, parameters: Int) throws(StoreError) -> String? {
        if let name = preparedStatements[sql] { return name }
        guard !preparingStopped, preparedStatements.count < Self.preparedLimit, let count = Int32(exactly: parameters) else { return nil }
        preparedCount += 1
        let name = "bgtask_statement_\(preparedCount)"
        guard let result = PQprepare(handle, name, sql, count, nil) else {
            lost = true
            throw unavailableNow("the statement could not be prepared")
        }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else {
            throw failure(of: result, commits: false)
        }
        preparedStatements[sql] = name
        return name
    }

    /// Calls `body` with libpq's parameter arrays for `values` (count, values, lengths,
    /// formats), valid only during the call.
    /// - Throws: ``StoreError/Code/invalidData`` for a text value with a NUL byte, a value
    ///   too large to send, or too many values.
    private func withParameters<T>(
        _ values: [PostgreSQLValue],
        _ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> T
    ) throws(StoreError) -> T {
        var pointers: [UnsafeMutablePointer<CChar>?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        defer {
            for pointer in pointers { free(pointer) }
        }
        for (offset, value) in values.enumerated() {
            switch value {
            case .null:
                pointers.append(nil)
                lengths.append(0)
                formats.append(0)
            case .text(let text):
                guard !text.utf8.contains(0) else {
                    throw StoreError(
                        code: .invalidData, path: server,
                        message: "value $\(offset + 1) (\"\(text.excerpt(scalars: 40).replacingOccurrences(of: "\0", with: "\\0"))\") holds a NUL byte, which PostgreSQL's text cannot store; nothing was written"
                    )
                }
                pointers.append(strdup(text))
                lengths.append(0)
                formats.append(0)
            case .bytes(let data):
                guard let length = Int32(exactly: data.count) else {
                    throw StoreError(code: .invalidData, path: server, message: "a value of \(data.count) bytes is too large to send")
                }
                // malloc(0) may return NULL, which would send SQL NULL: allocate at least one byte.
                let buffer = malloc(max(1, data.count))!.assumingMemoryBound(to: CChar.self)
                data.withUnsafeBytes { bytes in
                    if let base = bytes.baseAddress { memcpy(buffer, base, data.count) }
                }
                pointers.append(buffer)
                lengths.append(length)
                formats.append(1)
            }
        }
        guard let count = Int32(exactly: values.count) else {
            throw StoreError(code: .invalidData, path: server, message: "too many parameters (\(values.count))")
        }
        let constPointers = pointers.map { UnsafePointer($0) }
        return constPointers.withUnsafeBufferPointer { valuePointers in
            lengths.withUnsafeBufferPointer { lengthPointer in
                formats.withUnsafeBufferPointer { formatPointer in
                    body(count, valuePointers.baseAddress, lengthPointer.baseAddress, formatPointer.baseAddress)
                }
            }
        }
    }

    /// The error a failed result stands for: the connection's loss, or the server's refusal.
    private func failure(of result: OpaquePointer, commits: Bool) -> StoreError {
        let sqlState = PQresultErrorField(result, clibpq_diag_sqlstate()).map { String(cString: $0) }
        // Class 08 is a connection exception; 57P01-57P03 are the server shutting down,
        // crashing or starting: the session is gone either way.
        let connectionGone = PQstatus(handle) != CONNECTION_OK
            || sqlState?.hasPrefix("08") == true
            || ["57P01", "57P02", "57P03"].contains(sqlState ?? "")
        if connectionGone {
            lost = true
            lostWhileCommitting = commits
            return unavailableNow("the connection was lost")
        }
        let primary = PQresultErrorField(result, clibpq_diag_message_primary()).map { String(cString: $0) } ?? libpqMessage
        let detail = PQresultErrorField(result, clibpq_diag_message_detail()).map { " (\(String(cString: $0)))" } ?? ""
        var refused = StoreError(
            code: .server,
            path: server,
            message: "the PostgreSQL server \(server) refused a statement: SQLSTATE \(sqlState ?? "unknown"): \(primary)\(detail)"
        )
        refused.sqlState = sqlState
        return refused
    }

    /// Runs a constant script of several statements (schema steps): `PQexec`, which runs
    /// them in one round trip; it takes no parameters, and the scripts have none.
    func executeScript(_ sql: String) throws(StoreError) {
        guard let result = PQexec(handle, sql) else {
            lost = true
            throw unavailableNow("the statement could not be sent")
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw failure(of: result, commits: false)
        }
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    /// A commit the server answers with a rollback (an error inside that was swallowed) is
    /// an error, never a success.
    func transaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try execute("BEGIN")
        let value: T
        do {
            value = try body()
        } catch {
            if !lost, let result = PQexec(handle, "ROLLBACK") { PQclear(result) }
            throw error
        }
        let commit = try execute("COMMIT", commits: true)
        guard commit.commandStatus == "COMMIT" else {
            throw StoreError(code: .server, path: server, message: "the PostgreSQL server \(server) rolled the transaction back instead of committing it (\(commit.commandStatus))")
        }
        return value
    }
}
