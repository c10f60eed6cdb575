import Foundation
import SchedulerCore

/// A pending request the store set aside instead of loading: moved from `pending_requests`
/// to `quarantined_requests` with its values exactly as they were and the reason, never
/// deleted (docs/ARCHITECTURE.md, "Bad rows are quarantined").
public struct QuarantinedRequest: Sendable, Equatable, CustomStringConvertible {
    /// The row's app column, as text (whatever it held).
    public var app: String
    /// The row's identifier column, as text.
    public var identifier: String
    /// Why it was not loaded, naming the column at fault.
    public var reason: String
    /// When it was set aside.
    public var quarantinedAt: Date

    /// Creates a record of a quarantined row.
    public init(app: String, identifier: String, reason: String, quarantinedAt: Date) {
        self.app = app
        self.identifier = identifier
        self.reason = reason
        self.quarantinedAt = quarantinedAt
    }

    /// `app/identifier: reason`, for logs.
    public var description: String { "\(app)/\(identifier): \(reason)" }
}

/// Sets aside pending requests that must not be loaded, so that one bad row neither hides
/// the app's other requests nor gets launched.
enum RequestQuarantine {
    /// Copies the row `app`/`identifier` into `quarantined_requests` with `reason`, then
    /// deletes it from `pending_requests`. Call inside a transaction.
    static func move(app: String, identifier: String, reason: String, now: Date, on connection: SQLiteConnection) throws(StoreError) {
        try connection.execute(
            """
            INSERT INTO quarantined_requests (\(RequestColumns.names), reason, quarantined_at)
            SELECT \(RequestColumns.names), ?, ? FROM pending_requests WHERE app = ? AND identifier = ?
            """,
            [.text(reason), .date(now), .text(app), .text(identifier)]
        )
        try connection.execute(
            "DELETE FROM pending_requests WHERE app = ? AND identifier = ?",
            [.text(app), .text(identifier)]
        )
    }

    /// Moves every pending request that cannot be loaded: a row that does not decode
    /// (unknown kind, bad extras JSON, a date or flag of the wrong type), or, when `app` is given (a store owned by one app), a row
    /// of another app. One transaction. Returns what was moved, and the requests that loaded (what the owner restores, so it
    /// need not read and decode every row a second time).
    static func quarantineUnloadable(app: AppID?, now: Date, on connection: SQLiteConnection) throws(StoreError) -> (quarantined: [QuarantinedRequest], loaded: [PendingRequest]) {
        try connection.transaction { () throws(StoreError) -> ([QuarantinedRequest], [PendingRequest]) in
            var quarantined: [QuarantinedRequest] = []
            // Rows whose key is not text cannot be named by a text key: move them in one go.
            let badKeyFilter = "typeof(app) != 'text' OR typeof(identifier) != 'text'"
            let badKeys = try connection.query(
                "SELECT CAST(app AS TEXT), CAST(identifier AS TEXT) FROM pending_requests WHERE \(badKeyFilter)"
            ) { row in (row.text(0), row.text(1)) }
            if !badKeys.isEmpty {
                let reason = "its app or identifier is not text"
                try connection.execute(
                    """
                    INSERT INTO quarantined_requests (\(RequestColumns.names), reason, quarantined_at)
                    SELECT \(RequestColumns.names), ?, ? FROM pending_requests WHERE \(badKeyFilter)
                    """,
                    [.text(reason), .date(now)]
                )
                try connection.execute("DELETE FROM pending_requests WHERE \(badKeyFilter)")
                quarantined += badKeys.map { QuarantinedRequest(app: $0.0, identifier: $0.1, reason: reason, quarantinedAt: now) }
            }
            // Decode every row; collect the problems first (no writes while the table is read).
            // Rows go straight into `loaded` (no intermediate array to copy from: a daemon
            // reads 100,000 at start-up); a row's key is read again only for a problem.
            var loaded: [PendingRequest] = []
            var problems: [QuarantinedRequest] = []
            var previousApp: AppID?
            // Whether `previousApp` is an identifier an app can have (asked once per app: the
            // rows come in key order, app first).
            var previousProblem: String?
            try connection.execute("SELECT \(RequestColumns.names) FROM pending_requests") { row in
                do throws(StoreError) {
                    let request = try RequestColumns.decode(row, previousApp: previousApp)
                    if request.app != previousApp { previousProblem = AppID.problem(with: request.app.rawValue) }
                    previousApp = request.app
                    if let problem = previousProblem {
                        // Another program's row: no app could submit it, nor uninstall it.
                        problems.append(QuarantinedRequest(app: request.app.rawValue, identifier: request.identifier, reason: "its app identifier is not one an app can have (\(problem))", quarantinedAt: now))
                    } else if let app, request.app != app {
                        problems.append(QuarantinedRequest(app: request.app.rawValue, identifier: request.identifier, reason: "it belongs to the app \(request.app), and this store is \(app)'s", quarantinedAt: now))
                    } else {
                        loaded.append(request)
                    }
                } catch {
                    problems.append(QuarantinedRequest(app: row.text(0), identifier: row.text(1), reason: error.message, quarantinedAt: now))
                }
            }
            for problem in problems {
                try move(app: problem.app, identifier: problem.identifier, reason: problem.reason, now: now, on: connection)
                quarantined.append(problem)
            }
            return (quarantined, loaded)
        }
    }
}

extension SchedulerStore {
    /// Sets the pending requests `keys` aside (into the quarantine, with `reason`) instead of
    /// deleting them: what the driver does with requests beyond the pending limits it finds
    /// at start-up. Returns what was moved. Committed when it returns.
    @discardableResult
    public func quarantineRequests(_ keys: [RequestKey], reason: String, now: Date) throws(StoreError) -> [QuarantinedRequest] {
        try withConnection { (connection) throws(StoreError) in
            try connection.transaction { () throws(StoreError) -> [QuarantinedRequest] in
                var moved: [QuarantinedRequest] = []
                for key in keys {
                    try RequestQuarantine.move(app: key.app.rawValue, identifier: key.identifier, reason: reason, now: now, on: connection)
                    if connection.changes == 1 {
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
            try connection.query(
                "SELECT CAST(app AS TEXT), CAST(identifier AS TEXT), reason, quarantined_at FROM quarantined_requests ORDER BY rowid"
            ) { row in
                QuarantinedRequest(app: row.text(0), identifier: row.text(1), reason: row.text(2), quarantinedAt: row.date(3))
            }
        }
    }

    /// The pending requests of `app` (or of every app) that can be read, and the rows that
    /// cannot (each with the reason): what a reader such as `bgtask why` uses, so that one
    /// bad row hides nothing else. It moves nothing (the owner quarantines such rows when it
    /// opens the store), so the unreadable rows' `quarantinedAt` is `.distantPast`.
    public func readablePendingRequests(app: AppID? = nil) throws(StoreError) -> (requests: [PendingRequest], unreadable: [QuarantinedRequest]) {
        try withConnection { (connection) throws(StoreError) in
            var sql = "SELECT \(RequestColumns.names) FROM pending_requests"
            var values: [SQLiteValue] = []
            if let app {
                sql += " WHERE app = ?"
                values.append(.text(app.rawValue))
            }
            sql += " ORDER BY app, submitted_at, identifier"
            var requests: [PendingRequest] = []
            var unreadable: [QuarantinedRequest] = []
            _ = try connection.query(sql, values) { row in
                do throws(StoreError) {
                    requests.append(try RequestColumns.decode(row))
                } catch {
                    unreadable.append(QuarantinedRequest(app: row.text(0), identifier: row.text(1), reason: error.message, quarantinedAt: .distantPast))
                }
            }
            return (requests, unreadable)
        }
    }
}
