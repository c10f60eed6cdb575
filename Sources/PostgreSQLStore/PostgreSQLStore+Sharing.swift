import Foundation
import SchedulerCore
import SchedulerStore

/// The store shared by replicas (docs/replicas.md, "The guarantee"): claims with a lease
/// from the server's clock, their renewal and sweep, and word of changes through
/// `LISTEN`/`NOTIFY` (the trigger of schema steps 2 and 3 notifies every change of a
/// pending row, with the row: ``PostgreSQLColumns/Payload``).
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
        let values = [PostgreSQLValue.text(replica)] + (try PostgreSQLColumns.runValues(of: run)) + [.optionalReal(lease)]
        let keySlot = values.count + 1
        do throws(StoreError) {
            return try claim(values: values, keySlot: keySlot, run: run)
        } catch where error.sqlState == "23505" {
            // A unique key taken: the claim's only insert is the run's (replica, id), and runs
            // are numbered per replica, each counting its own, so a number taken already is
            // another live process counting under the same name.
            throw StoreError(
                code: .invalidData, path: error.path,
                message: "could not claim \(run.id) as the replica '\(replica)': that replica already has a run numbered so, so another process runs under the same replica name; give each replica a name of its own (BGTASK_REPLICA; unset, it is the host name and the process id) (\(error.message))")
        }
    }

    /// The statement of ``claimRun(_:lease:)``.
    private func claim(values: [PostgreSQLValue], keySlot: Int, run: RunRecord) throws(StoreError) -> Bool {
        try withConnection { (connection) throws(StoreError) -> Bool in
            // One statement, one round trip: the row is taken only if it is still the run's
            // submission, and the run recorded only if it was taken.
            let result = try connection.execute(
                """
                WITH taken AS (
                    DELETE FROM bgtask_pending_requests WHERE app = $\(keySlot) AND identifier = $\(keySlot + 1) AND submitted_at = $\(keySlot + 2)
                    RETURNING 1
                )
                INSERT INTO bgtask_runs (replica, \(PostgreSQLColumns.runNames), lease_expires_at)
                SELECT \(PostgreSQLColumns.placeholders(values.count - 1)), now() + make_interval(secs => $\(values.count)) FROM taken
                """,
                values + [.text(run.app.rawValue), .text(run.identifier), .date(run.request.submittedAt)],
                commits: true
            )
            return result.affectedRows == 1
        }
    }

    /// Extends the leases of this replica's runs `runs` still in progress to `lease`
    /// seconds from the server's now.
    public func renewLeases(_ runs: [RunID], lease: TimeInterval) throws(StoreError) {
        guard !runs.isEmpty else { return }
        let list = "{" + runs.map { String($0.rawValue) }.joined(separator: ",") + "}"
        // A renewal that waits (a row lock another session holds) gives up within a third
        // of the lease, so the next heartbeat tries again before the lease runs out.
        let limit = Int((max(1, min(lease, 3600)) / 3 * 1000).rounded(.up))
        try withLeaseConnection { (connection) throws(StoreError) in
            try connection.transaction { () throws(StoreError) in
                _ = try connection.execute("SET LOCAL statement_timeout = \(limit)")
                // A row locked meanwhile (its end being written on the main connection) is
                // passed over, not waited for: the others are renewed all the same.
                _ = try connection.execute(
                    """
                    UPDATE bgtask_runs SET lease_expires_at = now() + make_interval(secs => $2)
                    WHERE replica = $1 AND id IN (
                        SELECT id FROM bgtask_runs
                        WHERE replica = $1 AND ended_at IS NULL AND lease_expires_at IS NOT NULL AND id = ANY($3::bigint[])
                        FOR UPDATE SKIP LOCKED)
                    """,
                    [.text(replica), .optionalReal(lease), .text(list)]
                )
            }
        }
    }

    /// Runs `body` on the lease connection (``leaseHeld``), connecting it first when there
    /// is none or it broke; one that breaks during the call is dropped, for the next to
    /// connect again (a renewal is safe to repeat).
    private func withLeaseConnection(_ body: (PostgreSQLConnection) throws(StoreError) -> Void) throws(StoreError) {
        try leaseHeld.withLock { (held) throws(StoreError) in
            // Under the lease connection's lock, which close() takes too: no connection is
            // made after it.
            guard !isClosed.withLock({ $0 }) else { throw closedError }
            let connection: PostgreSQLConnection
            if let alive = held, alive.isAlive {
                connection = alive
            } else {
                connection = try PostgreSQLConnection.connect(to: address, applicationName: Self.applicationName("bgtask \(replica) leases"))
                held = connection
            }
            connection.beginCall()
            do throws(StoreError) {
                try body(connection)
            } catch {
                if connection.lost { held = nil }
                throw Self.named(error, server: address.redacted)
            }
        }
    }

    /// Ends every run whose lease ran out, of any replica, as interrupted, and restores its
    /// request unless one with the same key is pending again or it is continued processing
    /// (the user's work, which ends with its process: a store of one's own restores none
    /// either, ``InterruptedRunRecovery``); in one statement, with `SKIP LOCKED`, so
    /// replicas sweeping at once end each run once.
    public func recoverExpiredLeases() throws(StoreError) -> LeaseSweep {
        try withConnection { (connection) throws(StoreError) -> LeaseSweep in
            // One transaction: the runs ended, their requests restored, and one throttle
            // strike per app, as a stop does to a store of one's own.
            try connection.transaction { () throws(StoreError) -> LeaseSweep in
                // GREATEST: the start came from the replica's clock, the end from the server's;
                // a replica ahead of the server must not leave a run that ends before it
                // starts (RunRecordRules refuses such a row).
                let result = try connection.execute(
                    """
                    WITH expired AS (
                        SELECT replica, id FROM bgtask_runs
                        WHERE ended_at IS NULL AND lease_expires_at < now()
                        FOR UPDATE SKIP LOCKED
                    ), ended AS (
                        UPDATE bgtask_runs AS r
                        SET ended_at = GREATEST(\(Self.serverNow), r.started_at), outcome = 'interrupted', success = NULL,
                            stop_reason = 'its lease ran out: its replica ' || r.replica || ' stopped renewing it'
                                || CASE WHEN r.kind = '\(TaskKind.continuedProcessing.rawValue)' THEN '; \(PendingRequest.whyNotRestoredWhenCutOff.replacingOccurrences(of: "'", with: "''"))' ELSE '' END,
                            lease_expires_at = NULL
                        FROM expired AS e WHERE r.replica = e.replica AND r.id = e.id
                        RETURNING r.*
                    ), restored AS (
                        INSERT INTO bgtask_pending_requests (\(PostgreSQLColumns.requestNames))
                        SELECT \(PostgreSQLColumns.requestNames) FROM ended
                        WHERE kind <> '\(TaskKind.continuedProcessing.rawValue)'
                        ON CONFLICT (app, identifier) DO NOTHING
                    )
                    SELECT \(PostgreSQLColumns.runNames) FROM ended ORDER BY replica, id
                    """
                )
                // Row by row: a run this build cannot read (a newer kind) was ended and its
                // request restored all the same; only its record is left out of the answer.
                let ended = (0..<result.rowCount).compactMap { try? PostgreSQLColumns.decodeRun(result.row($0)) }
                // No strike for continued processing, as the engine counts none in the throttle.
                let endings = Dictionary(ended.filter(\.request.isRestoredWhenCutOff).map { ($0.app, $0.endedAt ?? $0.startedAt) }, uniquingKeysWith: max)
                for (app, at) in endings.sorted(by: { $0.key < $1.key }) {
                    try Self.updateAppSetting(app: app, name: AppSettingName.policyState, on: connection) { saved in
                        InterruptedRunRecovery.policyState(saved, struckBy: at)
                    }
                }
                let counted = try connection.execute("SELECT count(*) FROM bgtask_runs WHERE ended_at IS NULL AND lease_expires_at IS NOT NULL")
                let inProgress = counted.rowCount == 1 ? Int(counted.row(0).text(0)) ?? 0 : 0
                return LeaseSweep(ended: ended, runsInProgress: inProgress)
            }
        }
    }

    /// The pending requests among `keys`, in one statement (the keys travel as one JSON
    /// array of `[app, identifier]` pairs, so no SQL is built from them). A row that cannot
    /// be read is left out (the store's full read reports and quarantines such rows).
    public func pendingRequests(keys: Set<RequestKey>) throws(StoreError) -> [PendingRequest] {
        guard !keys.isEmpty else { return [] }
        let pairs = keys.sorted { ($0.app.rawValue, $0.identifier) < ($1.app.rawValue, $1.identifier) }.map { [$0.app.rawValue, $0.identifier] }
        guard let data = try? JSONSerialization.data(withJSONObject: pairs), let list = String(data: data, encoding: .utf8) else {
            throw StoreError(code: .invalidData, path: address.redacted, message: "the keys of \(keys.count) pending request(s) cannot be written as JSON")
        }
        return try withConnection { (connection) throws(StoreError) -> [PendingRequest] in
            let result = try connection.execute(
                """
                SELECT \(PostgreSQLColumns.requestNames) \
                FROM json_array_elements($1::json) AS k(pair) \
                JOIN bgtask_pending_requests ON app = k.pair->>0 AND identifier = k.pair->>1
                """,
                [.text(list)]
            )
            // Row by row: one row this build cannot read (a newer kind) leaves the others
            // readable; it is left out, as a key that is not pending.
            return (0..<result.rowCount).compactMap { try? PostgreSQLColumns.decodeRequest(result.row($0)) }
        }
    }

    /// Listens on a connection of its own (``PostgreSQLListener``). Word of this store's
    /// own writes is not passed on: its replica's engine made them (the sweep's restores
    /// excepted, which the sweeping replica applies from ``recoverExpiredLeases()``'s result).
    public func listen(_ onChange: @escaping @Sendable (SharedStoreChange) -> Void) -> any SharedStoreListener {
        PostgreSQLListener.start(address: address, replica: replica, ownBackend: { [weak self] in self?.ownBackendPID.withLock { $0 } }, onChange: onChange)
    }
}
