import Foundation
import SchedulerCore

extension SchedulerStore {
    /// Records that `run` was launched and consumes its request, in one transaction: after a
    /// crash either both happened or neither did, so a request is never lost nor run twice
    /// from the log's point of view. `onlyItsOwnSubmission`: the pending row is consumed only
    /// while it is the submission the run ran (a start written late: ``SchedulerStorage``).
    ///
    /// The commit does not wait for the disk (the launch waits for it: its `fsync` was most
    /// of a launch's latency, and its tail the p99's): a crash of the process keeps it, and
    /// the next commit that waits (the run's end, a submission) puts it on disk. A power cut
    /// before then undoes the launch whole, so the request is pending again and runs again,
    /// without the `interrupted` record and throttle strike a crash after it leaves
    /// (docs/ARCHITECTURE.md, "Durability").
    public func recordRunStarted(_ run: RunRecord, onlyItsOwnSubmission: Bool) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            try connection.transaction(waitingForDisk: false) { () throws(StoreError) in
                if onlyItsOwnSubmission {
                    try connection.execute(
                        "DELETE FROM pending_requests WHERE app = ? AND identifier = ? AND submitted_at = ?",
                        [.text(run.app.rawValue), .text(run.identifier), .date(run.request.submittedAt)]
                    )
                } else {
                    try connection.execute(
                        "DELETE FROM pending_requests WHERE app = ? AND identifier = ?",
                        [.text(run.app.rawValue), .text(run.identifier)]
                    )
                }
                try connection.execute(
                    "INSERT INTO runs (\(RunColumns.names)) VALUES (\(RunColumns.placeholders))",
                    RunColumns.values(of: run)
                )
            }
        }
    }

    /// Records how `run` ended: its `endedAt`, `outcome`, `success`, `stopReason` and its
    /// measurements (`cpuTime`, `peakMemoryBytes`, `energyJoules`; `nil` stores "unknown")
    /// replace the stored ones. The run must have been recorded as started. `appSettings`
    /// (name to value; `nil` deletes) are written for the run's app in the same transaction:
    /// what a run teaches the scheduler about its app costs no second commit. Committed when
    /// it returns; on an error nothing is written.
    public func recordRunFinished(_ run: RunRecord, appSettings: [String: String?] = [:]) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            try connection.transaction { () throws(StoreError) in
                try connection.execute(RunColumns.finishSQL, RunColumns.finishValues(of: run))
                guard connection.changes == 1 else {
                    throw StoreError(
                        code: .invalidData,
                        path: nil,
                        message: "cannot record the end of \(run.id): it was never recorded as started"
                    )
                }
                if let measuredBy = run.measuredBy {
                    try connection.execute(RunColumns.measurementSQL, [
                        .integer(run.id.rawValue), .text(measuredBy), .optionalInteger(run.bytesRead), .optionalInteger(run.bytesWritten),
                    ])
                }
                for (name, value) in appSettings.sorted(by: { $0.key < $1.key }) {
                    try Self.setAppSetting(value, app: run.app, name: name, on: connection)
                }
            }
        }
    }

    /// The run log, oldest first (newest last).
    ///
    /// - Parameters:
    ///   - app: Only this app's runs, or every app's when `nil`.
    ///   - since: Only runs started at or after this instant.
    ///   - limit: At most this many runs: the newest ones.
    public func runs(app: AppID? = nil, since: Date? = nil, limit: Int? = nil) throws(StoreError) -> [RunRecord] {
        let (filter, filterValues) = Self.runFilter(app: app, since: since)
        var values = filterValues
        // Newest first so LIMIT keeps the newest runs, then reversed. A negative LIMIT means
        // none, which keeps the number of distinct (cached) statements small.
        values.append(.integer(Int64(limit.map { max(0, $0) } ?? -1)))
        let newestFirst = try withConnection { (connection) throws(StoreError) in
            let measured = try SchemaMigrations.hasTable("run_measurements", on: connection)
            let sql = "SELECT \(RunColumns.selectNames(withMeasurements: measured)) FROM \(RunColumns.source(withMeasurements: measured)) \(filter) ORDER BY started_at DESC, id DESC LIMIT ?"
            return try connection.query(sql, values, row: RunColumns.decode)
        }
        return newestFirst.reversed()
    }

    /// The run log as ``runs(app:since:limit:)`` reads it, but a row that cannot be read
    /// (an unknown outcome, a date that is text or out of any range) is listed with its
    /// number and the reason instead of failing the whole read: a diagnostic shows the rest.
    public func readableRuns(app: AppID? = nil, since: Date? = nil) throws(StoreError) -> (runs: [RunRecord], unreadable: [(id: RunID, reason: String)]) {
        let (filter, values) = Self.runFilter(app: app, since: since)
        let rows = try withConnection { (connection) throws(StoreError) in
            let measured = try SchemaMigrations.hasTable("run_measurements", on: connection)
            let sql = "SELECT \(RunColumns.selectNames(withMeasurements: measured)) FROM \(RunColumns.source(withMeasurements: measured)) \(filter) ORDER BY started_at, id"
            return try connection.query(sql, values) { (row) throws(StoreError) -> (id: RunID, result: Result<RunRecord, StoreError>) in
                do throws(StoreError) {
                    return (RunID(row.int64(0)), .success(try RunColumns.decode(row)))
                } catch {
                    return (RunID(row.int64(0)), .failure(error))
                }
            }
        }
        return RunLogRows.split(rows)
    }

    /// The `WHERE` clause and its values that select the runs of `app` (every app's when
    /// `nil`) started at or after `since`: one filter for both readers of the run log.
    private static func runFilter(app: AppID?, since: Date?) -> (filter: String, values: [SQLiteValue]) {
        var conditions: [String] = []
        var values: [SQLiteValue] = []
        if let app {
            conditions.append("app = ?")
            values.append(.text(app.rawValue))
        }
        if let since {
            conditions.append("started_at >= ?")
            values.append(.date(since))
        }
        return (conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "), values)
    }

    /// The run numbered `id`, or `nil` if there is none.
    public func run(_ id: RunID) throws(StoreError) -> RunRecord? {
        try withConnection { (connection) throws(StoreError) in
            let measured = try SchemaMigrations.hasTable("run_measurements", on: connection)
            return try connection.query(
                "SELECT \(RunColumns.selectNames(withMeasurements: measured)) FROM \(RunColumns.source(withMeasurements: measured)) WHERE id = ?",
                [.integer(id.rawValue)],
                row: RunColumns.decode
            ).first
        }
    }

    /// The highest run number in the log, or `nil` when it is empty, so that run numbers keep
    /// increasing across restarts.
    public func maxRunID() throws(StoreError) -> RunID? {
        try withConnection { (connection) throws(StoreError) in
            try connection.query("SELECT MAX(id) FROM runs") { row in
                row.isNull(0) ? nil : RunID(row.int64(0))
            }.first ?? nil
        }
    }

    /// When each of `apps` was last launched in the background, from the run log: the
    /// latest start of its runs other than continued processing (which the rate limit does
    /// not space; ``SchedulerEngine``'s `lastLaunch`). bgtaskd's driver restores the rate
    /// limit's memory from it at start-up: the policy state saved with each run's end misses a
    /// launch whose end was never recorded (the daemon was killed during the run). A start
    /// that is not a number (a row written by hand) is left out. One app's rows are found
    /// through its index; for more, one query reads every app's.
    public func lastLaunches(of apps: [AppID]) throws(StoreError) -> [AppID: Date] {
        if apps.count == 1, let app = apps.first { return try latestStarts(of: app) }
        let wanted = Set(apps)
        return try latestStarts(of: nil).filter { wanted.contains($0.key) }
    }

    /// ``lastLaunches(of:)`` of one app (an embedded scheduler's start-up).
    public func lastLaunch(of app: AppID) throws(StoreError) -> Date? {
        try latestStarts(of: app)[app]
    }

    /// The latest start of each app's runs other than continued processing (of `app` alone
    /// when given), leaving out starts that are not numbers.
    private func latestStarts(of app: AppID?) throws(StoreError) -> [AppID: Date] {
        try withConnection { (connection) throws(StoreError) in
            var launches: [AppID: Date] = [:]
            let sql = """
                SELECT app, MAX(started_at) FROM runs \
                WHERE kind <> ? AND typeof(started_at) IN ('real', 'integer')\(app == nil ? "" : " AND app = ?") GROUP BY app
                """
            var values: [SQLiteValue] = [.text(TaskKind.continuedProcessing.rawValue)]
            if let app { values.append(.text(app.rawValue)) }
            for (app, start) in try connection.query(sql, values, row: { row in (row.text(0), row.double(1)) })
            where start.isFinite {
                launches[AppID(app)] = Date(timeIntervalSinceReferenceDate: start)
            }
            return launches
        }
    }

    /// Deletes the finished runs that ended before `cutoff` (the energy log's retention) and
    /// returns how many were deleted. Committed when it returns.
    ///
    /// Never deleted: runs still in progress (they have no end; crash recovery needs them),
    /// and the run with the highest number, so that ``maxRunID()`` and therefore run numbers
    /// keep increasing across restarts even after a long idle spell emptied the log.
    @discardableResult
    public func pruneRuns(olderThan cutoff: Date) throws(StoreError) -> Int {
        try withConnection { (connection) throws(StoreError) in
            try connection.execute(
                """
                DELETE FROM runs WHERE ended_at IS NOT NULL AND ended_at < ? \
                AND id < (SELECT MAX(id) FROM runs)
                """,
                [.date(cutoff)]
            )
            let deleted = connection.changes
            if deleted > 0, try SchemaMigrations.hasTable("run_measurements", on: connection) {
                try connection.execute("DELETE FROM run_measurements WHERE run_id NOT IN (SELECT id FROM runs)")
            }
            return deleted
        }
    }

    /// The energy log summed per app and task identifier (see ``EnergySummary``), over the
    /// runs ``runs(app:since:limit:)`` returns for `app` and `since`.
    public func energySummary(app: AppID? = nil, since: Date? = nil) throws(StoreError) -> [EnergySummary.Row] {
        EnergySummary.make(from: try runs(app: app, since: since))
    }
}
