import Foundation
import SchedulerCore
import SchedulerStore

/// The store shared by replicas (docs/replicas.md, "The guarantee"): claims with a lease
/// from the server's clock, their renewal and sweep, and word of changes through
/// `LISTEN`/`NOTIFY` (the trigger of schema step 2 notifies every change of a pending row).
extension PostgreSQLStore: SharedSchedulerStorage {
    /// The channel the pending requests' trigger notifies.
    static let changeChannel = "bgtask_requests"

    /// The server's now as seconds since 2001-01-01 UTC, the store's date form.
    static let serverNow = "(EXTRACT(EPOCH FROM now()) - 978307200)"

    /// Claims the request `run` was made from for this replica and records the run with a
    /// lease of `lease` seconds from the server's clock, in one transaction. Returns
    /// `false`, writing nothing, when that request is no longer pending (another replica
    /// claimed it, or it was replaced or cancelled): the row must have the run's app,
    /// identifier and submission instant.
    public func claimRun(_ run: RunRecord, lease: TimeInterval) throws(StoreError) -> Bool {
        let values = [PostgreSQLValue.text(replica)] + (try PostgreSQLColumns.runValues(of: run))
        let leaseSlot = values.count + 1
        return try withConnection { (connection) throws(StoreError) -> Bool in
            try connection.transaction { () throws(StoreError) -> Bool in
                let taken = try connection.execute(
                    "DELETE FROM bgtask_pending_requests WHERE app = $1 AND identifier = $2 AND submitted_at = $3",
                    [.text(run.app.rawValue), .text(run.identifier), .date(run.request.submittedAt)]
                )
                guard taken.affectedRows == 1 else { return false }
                try connection.execute(
                    "INSERT INTO bgtask_runs (replica, \(PostgreSQLColumns.runNames), lease_expires_at) VALUES (\(PostgreSQLColumns.placeholders(values.count)), now() + make_interval(secs => $\(leaseSlot)))",
                    values + [.optionalReal(lease)]
                )
                return true
            }
        }
    }

    /// Extends the leases of this replica's runs `runs` still in progress to `lease`
    /// seconds from the server's now.
    public func renewLeases(_ runs: [RunID], lease: TimeInterval) throws(StoreError) {
        guard !runs.isEmpty else { return }
        let list = "{" + runs.map { String($0.rawValue) }.joined(separator: ",") + "}"
        try withConnection { (connection) throws(StoreError) in
            _ = try connection.execute(
                "UPDATE bgtask_runs SET lease_expires_at = now() + make_interval(secs => $2) WHERE replica = $1 AND ended_at IS NULL AND lease_expires_at IS NOT NULL AND id = ANY($3::bigint[])",
                [.text(replica), .optionalReal(lease), .text(list)],
                commits: true
            )
        }
    }

    /// Ends every run whose lease ran out, of any replica, as interrupted, and restores its
    /// request unless one with the same key is pending again; in one statement, with
    /// `SKIP LOCKED`, so replicas sweeping at once end each run once.
    public func recoverExpiredLeases() throws(StoreError) -> LeaseSweep {
        try withConnection { (connection) throws(StoreError) -> LeaseSweep in
            let ended = try connection.transaction { () throws(StoreError) -> [RunRecord] in
                let result = try connection.execute(
                    """
                    WITH expired AS (
                        SELECT replica, id FROM bgtask_runs
                        WHERE ended_at IS NULL AND lease_expires_at < now()
                        FOR UPDATE SKIP LOCKED
                    ), ended AS (
                        UPDATE bgtask_runs AS r
                        SET ended_at = \(Self.serverNow), outcome = 'interrupted', success = NULL,
                            stop_reason = 'its lease ran out: its replica ' || r.replica || ' stopped renewing it',
                            lease_expires_at = NULL
                        FROM expired AS e WHERE r.replica = e.replica AND r.id = e.id
                        RETURNING r.*
                    ), restored AS (
                        INSERT INTO bgtask_pending_requests (\(PostgreSQLColumns.requestNames))
                        SELECT \(PostgreSQLColumns.requestNames) FROM ended
                        ON CONFLICT (app, identifier) DO NOTHING
                    )
                    SELECT \(PostgreSQLColumns.runNames) FROM ended ORDER BY replica, id
                    """
                )
                return try result.map { row throws(StoreError) in try PostgreSQLColumns.decodeRun(row) }
            }
            let counted = try connection.execute("SELECT count(*) FROM bgtask_runs WHERE ended_at IS NULL AND lease_expires_at IS NOT NULL")
            let inProgress = counted.rowCount == 1 ? Int(counted.row(0).text(0)) ?? 0 : 0
            return LeaseSweep(ended: ended, runsInProgress: inProgress)
        }
    }

    /// The pending request `key`, or `nil`.
    public func pendingRequest(_ key: RequestKey) throws(StoreError) -> PendingRequest? {
        try withConnection { (connection) throws(StoreError) -> PendingRequest? in
            let result = try connection.execute(
                "SELECT \(PostgreSQLColumns.requestNames) FROM bgtask_pending_requests WHERE app = $1 AND identifier = $2",
                [.text(key.app.rawValue), .text(key.identifier)]
            )
            guard result.rowCount == 1 else { return nil }
            return try PostgreSQLColumns.decodeRequest(result.row(0))
        }
    }

    /// Listens on a connection of its own (``PostgreSQLListener``). Word of this store's
    /// own writes is not passed on: its replica's engine made them (the sweep's restores
    /// excepted, which the sweeping replica applies from ``recoverExpiredLeases()``'s result).
    public func listen(_ onChange: @escaping @Sendable (SharedStoreChange) -> Void) -> any SharedStoreListener {
        PostgreSQLListener.start(address: address, replica: replica, ownBackend: { [weak self] in self?.ownBackendPID.withLock { $0 } }, onChange: onChange)
    }
}
