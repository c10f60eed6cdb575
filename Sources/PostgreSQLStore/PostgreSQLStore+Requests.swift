import Foundation
import SchedulerCore
import SchedulerStore

extension PostgreSQLStore {
    /// Inserts `$1...$8` (``PostgreSQLColumns/requestNames``) or replaces the pending request
    /// with the same key, as submitting again does on iOS.
    private static let upsertSQL = upsertSQL(rows: 1)

    /// The upsert of `rows` requests in one statement (their placeholders numbered in order).
    private static func upsertSQL(rows: Int) -> String {
        let columns = Int(PostgreSQLColumns.requestCount)
        let values = (0..<rows).map { row in
            "(" + (0..<columns).map { "$\(row * columns + $0 + 1)" }.joined(separator: ", ") + ")"
        }.joined(separator: ", ")
        return """
            INSERT INTO bgtask_pending_requests (\(PostgreSQLColumns.requestNames)) VALUES \(values) \
            ON CONFLICT (app, identifier) DO UPDATE SET kind = excluded.kind, earliest_begin = excluded.earliest_begin, \
            submitted_at = excluded.submitted_at, requires_network = excluded.requires_network, \
            requires_power = excluded.requires_power, extras = excluded.extras
            """
    }

    /// The most requests one multi-row upsert carries (PostgreSQL takes at most 65,535
    /// parameters in a statement; a group commit rarely comes near).
    static let rowsPerUpsert = 256

    /// The largest batch whose upsert runs prepared: each row count is a statement of its
    /// own, so batches of 1 to 16 (threads of one replica submitting at once) keep at most
    /// 16 statements prepared, well within the connection's limit of 32; larger batches are
    /// rare and their statements vary.
    static let preparedUpsertRows = 16

    /// Saves `request` as pending, replacing the pending request with the same app and
    /// identifier (from any replica). Committed when it returns.
    /// - Throws: ``StoreError/Code/invalidData`` for a value PostgreSQL cannot hold (a NUL
    ///   byte in a name, a date that is not finite); nothing is written then.
    public func upsertRequest(_ request: PendingRequest) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            _ = try connection.execute(Self.upsertSQL, PostgreSQLColumns.requestValues(of: request), commits: true, prepared: true)
        }
    }

    /// Saves every request of `requests` in one transaction: one commit for all, all or none.
    /// Up to ``rowsPerUpsert`` requests go in one statement, committed by itself (one round
    /// trip: a group commit's latency is its submitters'); more take one transaction.
    /// - Precondition: no two requests with the same key (one statement cannot upsert a
    ///   row twice).
    public func upsertRequests(_ requests: [PendingRequest]) throws(StoreError) {
        guard !requests.isEmpty else { return }
        try withConnection { (connection) throws(StoreError) in
            // Every value first: one that PostgreSQL cannot hold fails the batch before it starts.
            var rows: [[PostgreSQLValue]] = []
            for request in requests { rows.append(try PostgreSQLColumns.requestValues(of: request)) }
            let chunks = stride(from: 0, to: rows.count, by: Self.rowsPerUpsert).map { rows[$0..<min($0 + Self.rowsPerUpsert, rows.count)] }
            if chunks.count == 1 {
                _ = try connection.execute(Self.upsertSQL(rows: rows.count), rows.flatMap { $0 }, commits: true, prepared: rows.count <= Self.preparedUpsertRows)
                return
            }
            try connection.transaction { () throws(StoreError) in
                for chunk in chunks { _ = try connection.execute(Self.upsertSQL(rows: chunk.count), chunk.flatMap { $0 }) }
            }
        }
    }

    /// Removes the pending request `key`, if any. Committed when it returns.
    public func deleteRequest(_ key: RequestKey) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            _ = try connection.execute(
                "DELETE FROM bgtask_pending_requests WHERE app = $1 AND identifier = $2",
                [.text(key.app.rawValue), .text(key.identifier)], commits: true
            )
        }
    }

    /// Removes every pending request of `app`, and only of `app`. Committed when it returns.
    public func deleteAllRequests(app: AppID) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            _ = try connection.execute("DELETE FROM bgtask_pending_requests WHERE app = $1", [.text(app.rawValue)], commits: true)
        }
    }

    /// The statement that reads the pending requests of `app` (or of every app), ordered by
    /// app, then submission time, then identifier, with its values.
    private static func pendingSelect(app: AppID?) -> (sql: String, values: [PostgreSQLValue]) {
        let columns = "SELECT \(PostgreSQLColumns.requestNames) FROM bgtask_pending_requests"
        let order = " ORDER BY app, submitted_at, identifier"
        guard let app else { return (columns + order, []) }
        return (columns + " WHERE app = $1" + order, [.text(app.rawValue)])
    }

    /// The pending requests of `app` (or of every app), ordered by app, then submission time,
    /// then identifier, as the SQLite store orders them.
    /// - Throws: ``StoreError/Code/invalidData`` naming a row that cannot be read (written
    ///   since the store was opened by another program; the next open quarantines it).
    public func pendingRequests(app: AppID? = nil) throws(StoreError) -> [PendingRequest] {
        let (sql, values) = Self.pendingSelect(app: app)
        return try withConnection { (connection) throws(StoreError) in
            try connection.execute(sql, values).map { (row) throws(StoreError) in try PostgreSQLColumns.decodeRequest(row) }
        }
    }

    /// The pending requests of `app` (or of every app) that can be read, in the order of
    /// ``pendingRequests(app:)``, with the rows that cannot moved to the quarantine (rows
    /// another program or a newer version wrote since the store was opened): one bad row
    /// never hides the others. A bad row found sends the whole store through what opening
    /// does (``quarantineUnreadable(on:now:)``: suspects locked, decoded again, moved), and
    /// the rows are read again.
    public func loadPendingRequests(app: AppID?, now: Date) throws(StoreError) -> (loaded: [PendingRequest], quarantined: [QuarantinedRequest]) {
        let (sql, values) = Self.pendingSelect(app: app)
        return try withConnection { (connection) throws(StoreError) in
            func read() throws(StoreError) -> (loaded: [PendingRequest], complete: Bool) {
                let result = try connection.execute(sql, values)
                let loaded = (0..<result.rowCount).compactMap { try? PostgreSQLColumns.decodeRequest(result.row($0)) }
                return (loaded, loaded.count == Int(result.rowCount))
            }
            let first = try read()
            guard !first.complete else { return (first.loaded, []) }
            let quarantined = try Self.quarantineUnreadable(on: connection, now: now)
            // A row written badly again meanwhile is left out, for the next full read.
            return (try read().loaded, quarantined)
        }
    }

    // MARK: Quarantine

    /// Moves the pending request `$1`/`$2` into the quarantine with the reason `$3` at `$4`,
    /// in one statement (the row is deleted and inserted together, with its values as
    /// they were).
    private static let moveSQL = """
        WITH moved AS (DELETE FROM bgtask_pending_requests WHERE app = $1 AND identifier = $2 \
        RETURNING \(PostgreSQLColumns.requestNames)) \
        INSERT INTO bgtask_quarantined_requests (\(PostgreSQLColumns.requestNames), reason, quarantined_at) \
        SELECT \(PostgreSQLColumns.requestNames), $3::text, $4::double precision FROM moved
        """

    /// Sets the pending requests `keys` aside (into the quarantine, with `reason`) instead of
    /// deleting them, in one transaction. Returns what was moved (keys with no pending
    /// request are skipped). Committed when it returns.
    @discardableResult
    public func quarantineRequests(_ keys: [RequestKey], reason: String, now: Date) throws(StoreError) -> [QuarantinedRequest] {
        try withConnection { (connection) throws(StoreError) in
            try connection.transaction { () throws(StoreError) -> [QuarantinedRequest] in
                var moved: [QuarantinedRequest] = []
                for key in keys {
                    let result = try connection.execute(
                        Self.moveSQL, [.text(key.app.rawValue), .text(key.identifier), .text(reason), .date(now)]
                    )
                    if result.affectedRows == 1 {
                        moved.append(QuarantinedRequest(app: key.app.rawValue, identifier: key.identifier, reason: reason, quarantinedAt: now))
                    }
                }
                return moved
            }
        }
    }

    /// Every request in the quarantine, oldest first.
    public func quarantinedRequests() throws(StoreError) -> [QuarantinedRequest] {
        try withConnection { (connection) throws(StoreError) in
            try connection.execute("SELECT app, identifier, reason, quarantined_at FROM bgtask_quarantined_requests ORDER BY seq").map { (row) throws(StoreError) in
                QuarantinedRequest(
                    app: row.text(0), identifier: row.text(1), reason: row.text(2),
                    quarantinedAt: try PostgreSQLColumns.date(row, 3, column: "quarantined_at", of: { "\(row.text(0))/\(row.text(1))" })
                )
            }
        }
    }

    /// Moves every pending request that cannot be read to the quarantine, with the reason,
    /// in one transaction; returns what was moved.
    ///
    /// Only the rows that may be bad are read, and locked (`FOR UPDATE`) so that a replica
    /// replacing one meanwhile does not see its new row quarantined: an unknown kind, a date
    /// that is not finite, or extras (their JSON is decoded here, strictly). Every app's
    /// rows are loaded: the store is shared.
    static func quarantineUnreadable(on connection: PostgreSQLConnection, now: Date) throws(StoreError) -> [QuarantinedRequest] {
        let kinds = "{" + TaskKind.allCases.map(\.rawValue).joined(separator: ",") + "}"
        // A date outside what a stored date may be (RequestColumns.storedDate: 0001 to 4001;
        // NaN sorts above every number in PostgreSQL, and the infinities lie outside too).
        return try connection.transaction { () throws(StoreError) -> [QuarantinedRequest] in
            let suspects = try connection.execute(
                """
                SELECT \(PostgreSQLColumns.requestNames) FROM bgtask_pending_requests \
                WHERE NOT (kind = ANY ($1::text[])) OR submitted_at NOT BETWEEN $2::double precision AND $3::double precision \
                OR earliest_begin NOT BETWEEN $2::double precision AND $3::double precision OR extras IS NOT NULL FOR UPDATE
                """,
                [.text(kinds), .date(.distantPast), .date(.distantFuture)]
            )
            var problems: [QuarantinedRequest] = []
            for index in 0..<suspects.rowCount {
                let row = suspects.row(index)
                do throws(StoreError) {
                    _ = try PostgreSQLColumns.decodeRequest(row)
                } catch {
                    problems.append(QuarantinedRequest(app: row.text(0), identifier: row.text(1), reason: error.message, quarantinedAt: now))
                }
            }
            for problem in problems {
                try connection.execute(moveSQL, [.text(problem.app), .text(problem.identifier), .text(problem.reason), .date(now)])
            }
            return problems
        }
    }
}
