import Foundation
import SchedulerCore

extension SchedulerStore {
    /// Saves `request` as pending, replacing any pending request with the same app and
    /// identifier (submitting again replaces, as on iOS). Committed when it returns.
    public func upsertRequest(_ request: PendingRequest) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            try connection.execute(
                "INSERT OR REPLACE INTO pending_requests (\(RequestColumns.names)) VALUES (\(RequestColumns.placeholders))",
                RequestColumns.values(of: request)
            )
        }
    }

    /// Inserts or replaces every request of `requests` in one transaction: one commit (one
    /// `fsync` with `synchronous=FULL`) for all, all or none. Committed when it returns.
    public func upsertRequests(_ requests: [PendingRequest]) throws(StoreError) {
        guard !requests.isEmpty else { return }
        try withConnection { (connection) throws(StoreError) in
            try connection.transaction { () throws(StoreError) in
                for request in requests {
                    try connection.execute(
                        "INSERT OR REPLACE INTO pending_requests (\(RequestColumns.names)) VALUES (\(RequestColumns.placeholders))",
                        RequestColumns.values(of: request)
                    )
                }
            }
        }
    }

    /// Removes the pending request named `key`, if any. Committed when it returns.
    public func deleteRequest(_ key: RequestKey) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            try connection.execute(
                "DELETE FROM pending_requests WHERE app = ? AND identifier = ?",
                [.text(key.app.rawValue), .text(key.identifier)]
            )
        }
    }

    /// Removes every pending request of `app`, and only of `app`. Committed when it returns.
    public func deleteAllRequests(app: AppID) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            try connection.execute("DELETE FROM pending_requests WHERE app = ?", [.text(app.rawValue)])
        }
    }

    /// The pending requests of `app`, or of every app when `nil`, ordered by app, then
    /// submission time, then identifier.
    public func pendingRequests(app: AppID? = nil) throws(StoreError) -> [PendingRequest] {
        try withConnection { (connection) throws(StoreError) in
            let select = "SELECT \(RequestColumns.names) FROM pending_requests"
            let order = "ORDER BY app, submitted_at, identifier"
            if let app {
                return try connection.query(
                    "\(select) WHERE app = ? \(order)",
                    [.text(app.rawValue)]
                ) { (row) throws(StoreError) in try RequestColumns.decode(row) }
            }
            return try connection.query("\(select) \(order)") { (row) throws(StoreError) in
                try RequestColumns.decode(row)
            }
        }
    }
}
