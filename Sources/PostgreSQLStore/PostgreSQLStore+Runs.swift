import Foundation
import SchedulerCore
import SchedulerStore

extension PostgreSQLStore {
    /// Records that `run` was launched by this replica and consumes its request (with
    /// `onlyItsOwnSubmission`, only while the pending row is the submission the run ran: a
    /// start written late), in one transaction: either both happened or neither did.
    /// - Throws: ``StoreError/Code/server`` when this replica already recorded a run with
    ///   that number (the request stays pending).
    public func recordRunStarted(_ run: RunRecord, onlyItsOwnSubmission: Bool) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            let values = [PostgreSQLValue.text(replica)] + (try PostgreSQLColumns.runValues(of: run))
            try connection.transaction { () throws(StoreError) in
                try connection.execute(
                    "DELETE FROM bgtask_pending_requests WHERE app = $1 AND identifier = $2" + (onlyItsOwnSubmission ? " AND submitted_at = $3" : ""),
                    [.text(run.app.rawValue), .text(run.identifier)] + (onlyItsOwnSubmission ? [.date(run.request.submittedAt)] : [])
                )
                try connection.execute(
                    "INSERT INTO bgtask_runs (replica, \(PostgreSQLColumns.runNames)) VALUES (\(PostgreSQLColumns.placeholders(values.count)))",
                    values
                )
            }
        }
    }

    /// Records how this replica's `run` ended (its end, outcome, success, stop reason and
    /// measurements replace the stored ones; the measurement's source and I/O only when
    /// `measuredBy` is set), and writes `appSettings` (name to value; `nil` deletes) for its
    /// app in the same transaction. Committed when it returns; on an error nothing is written.
    /// - Throws: ``StoreError/Code/invalidData`` naming the run when this replica never
    ///   recorded it as started, or it was already ended as interrupted (its lease ran out
    ///   and another replica's sweep ended it: docs/replicas.md, "The guarantee").
    public func recordRunFinished(_ run: RunRecord, appSettings: [String: String?] = [:]) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            let values = try PostgreSQLColumns.finishValues(of: run, replica: replica)
            try connection.transaction { () throws(StoreError) in
                try Self.recordEnd(of: run, values: values, replica: replica, on: connection)
                for (name, value) in appSettings.sorted(by: { $0.key < $1.key }) {
                    try Self.setAppSetting(value, app: run.app, name: name, on: connection, commits: false)
                }
            }
        }
    }

    /// Records the end of `run` as ``recordRunFinished(_:appSettings:)`` does and, in the
    /// same transaction, sets the app's setting `name` to what `update` makes of the value
    /// stored now, under its row lock (``updateAppSetting(app:name:_:)``).
    public func recordRunFinished(_ run: RunRecord, updatingAppSetting name: String, _ update: (String?) -> String?) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            let values = try PostgreSQLColumns.finishValues(of: run, replica: replica)
            try connection.transaction { () throws(StoreError) in
                try Self.recordEnd(of: run, values: values, replica: replica, on: connection)
                try Self.updateAppSetting(app: run.app, name: name, on: connection, update)
            }
        }
    }

    /// The statement that ends a run this replica started, in a transaction on `connection`.
    private static func recordEnd(of run: RunRecord, values: [PostgreSQLValue], replica: String, on connection: PostgreSQLConnection) throws(StoreError) {
        let updated = try connection.execute(PostgreSQLColumns.finishSQL, values)
        guard updated.affectedRows == 1 else {
            throw StoreError(
                code: .invalidData, path: nil,
                message: "cannot record the end of \(run.id): the replica \(replica) never recorded it as started, or it was already ended as interrupted when its lease ran out"
            )
        }
    }

    /// The run log of every replica, oldest first: of `app` (or every app), started at or
    /// after `since`, at most the newest `limit`. Runs that start at the same instant are
    /// ordered by number, then by replica.
    public func runs(app: AppID? = nil, since: Date? = nil, limit: Int? = nil) throws(StoreError) -> [RunRecord] {
        let (filter, filterValues) = Self.runFilter(app: app, since: since)
        var values = filterValues
        // Newest first so LIMIT keeps the newest runs, then reversed. LIMIT NULL is no limit.
        values.append(.integer(limit.map { Int64(max(0, $0)) }))
        let sql = "SELECT \(PostgreSQLColumns.runNames) FROM bgtask_runs \(filter) "
            + "ORDER BY started_at DESC, id DESC, replica DESC LIMIT $\(values.count)::bigint"
        let newestFirst = try withConnection { (connection) throws(StoreError) in
            try connection.execute(sql, values).map(PostgreSQLColumns.decodeRun)
        }
        return newestFirst.reversed()
    }

    /// The run log of every replica as ``runs(app:since:limit:)`` reads it (no limit), but
    /// a row that cannot be read is listed with its number and the reason instead of
    /// failing the whole read.
    public func readableRuns(app: AppID? = nil, since: Date? = nil) throws(StoreError) -> (runs: [RunRecord], unreadable: [(id: RunID, reason: String)]) {
        let read = try readableRunsOfReplicas(app: app, since: since)
        return (read.runs.map(\.run), read.unreadable.map { ($0.id, $0.reason) })
    }

    /// ``readableRuns(app:since:)`` with the replica that recorded each run (its `tag`): run
    /// numbers are each replica's own, so two replicas' logs both have a `run-1`.
    public func readableRunsOfReplicas(app: AppID? = nil, since: Date? = nil) throws(StoreError) -> (runs: [(tag: String, run: RunRecord)], unreadable: [(tag: String, id: RunID, reason: String)]) {
        let (filter, values) = Self.runFilter(app: app, since: since)
        let sql = "SELECT \(PostgreSQLColumns.runNames), replica FROM bgtask_runs \(filter) ORDER BY started_at, id, replica"
        let rows = try withConnection { (connection) throws(StoreError) in
            try connection.execute(sql, values).map { (row) throws(StoreError) -> (tag: String, id: RunID, result: Result<RunRecord, StoreError>) in
                let id = RunID(Int64(row.text(0)) ?? 0)
                let replica = row.text(PostgreSQLColumns.runColumnCount)
                do throws(StoreError) {
                    return (replica, id, .success(try PostgreSQLColumns.decodeRun(row)))
                } catch {
                    return (replica, id, .failure(error))
                }
            }
        }
        return RunLogRows.split(rows)
    }

    /// The `WHERE` clause and its values that select the runs of `app` (every app's when
    /// `nil`) started at or after `since`: one filter for both readers of the run log.
    private static func runFilter(app: AppID?, since: Date?) -> (filter: String, values: [PostgreSQLValue]) {
        var conditions: [String] = []
        var values: [PostgreSQLValue] = []
        if let app {
            values.append(.text(app.rawValue))
            conditions.append("app = $\(values.count)")
        }
        if let since {
            values.append(.date(since))
            conditions.append("started_at >= $\(values.count)::double precision")
        }
        return (conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "), values)
    }

    /// This replica's run numbered `id`, or `nil`.
    public func run(_ id: RunID) throws(StoreError) -> RunRecord? {
        try withConnection { (connection) throws(StoreError) in
            try connection.execute(
                "SELECT \(PostgreSQLColumns.runNames) FROM bgtask_runs WHERE replica = $1 AND id = $2::bigint",
                [.text(replica), .integer(id.rawValue)]
            ).map(PostgreSQLColumns.decodeRun).first
        }
    }

    /// The highest run number this replica recorded, or `nil` when it recorded none, so
    /// that its run numbers keep increasing across restarts.
    public func maxRunID() throws(StoreError) -> RunID? {
        try withConnection { (connection) throws(StoreError) in
            let result = try connection.execute("SELECT max(id) FROM bgtask_runs WHERE replica = $1", [.text(replica)])
            guard result.rowCount == 1, !result.row(0).isNull(0) else { return nil }
            guard let id = Int64(result.row(0).text(0)) else {
                throw PostgreSQLColumns.invalid("the highest run number \"\(result.row(0).text(0).excerpt(scalars: 40))\" is not a 64-bit integer")
            }
            return RunID(id)
        }
    }

    /// When this replica last launched `app` in the background (the latest start of its
    /// runs other than continued processing), or `nil`: what a restarted replica spaces its
    /// next launch of the app from (``SchedulerStorage/lastLaunch(of:)``). Other replicas'
    /// launches are theirs to space: the rate limit is each scheduler's own.
    public func lastLaunch(of app: AppID) throws(StoreError) -> Date? {
        try withConnection { (connection) throws(StoreError) in
            let result = try connection.execute(
                "SELECT max(started_at) FROM bgtask_runs WHERE replica = $1 AND app = $2 AND kind <> $3",
                [.text(replica), .text(app.rawValue), .text(TaskKind.continuedProcessing.rawValue)])
            guard result.rowCount == 1, !result.row(0).isNull(0) else { return nil }
            guard let start = Double(result.row(0).text(0)), start.isFinite else {
                throw PostgreSQLColumns.invalid("the latest start of \(app)'s runs, \"\(result.row(0).text(0).excerpt(scalars: 40))\", is not a finite number of seconds")
            }
            return Date(timeIntervalSinceReferenceDate: start)
        }
    }

    /// Deletes the finished runs of every replica that ended before `cutoff` and returns
    /// how many. Never deleted: runs still in progress, and each replica's highest-numbered
    /// run, so that every replica's ``maxRunID()`` keeps its run numbers increasing.
    /// Committed when it returns.
    @discardableResult
    public func pruneRuns(olderThan cutoff: Date) throws(StoreError) -> Int {
        try withConnection { (connection) throws(StoreError) in
            let result = try connection.execute(
                """
                DELETE FROM bgtask_runs r WHERE r.ended_at IS NOT NULL AND r.ended_at < $1::double precision \
                AND r.id < (SELECT max(m.id) FROM bgtask_runs m WHERE m.replica = r.replica)
                """,
                [.date(cutoff)], commits: true
            )
            return result.affectedRows ?? 0
        }
    }

    /// The energy log of every replica summed per app and task identifier (see
    /// ``EnergySummary``), over the runs ``runs(app:since:limit:)`` returns for `app` and `since`.
    public func energySummary(app: AppID? = nil, since: Date? = nil) throws(StoreError) -> [EnergySummary.Row] {
        EnergySummary.make(from: try runs(app: app, since: since, limit: nil))
    }
}
