import Foundation
import SchedulerCore
import SchedulerStore

/// How a ``PendingRequest`` and a ``RunRecord`` map to the columns of the PostgreSQL tables
/// (the same columns as the SQLite store's, see ``PostgreSQLSchema``).
///
/// Reading is strict, as in the SQLite store: the column types already rule out most bad
/// values, and what they allow but a request cannot hold (an unknown task kind, extras that
/// are not the JSON the store writes, a NaN or infinite date) is
/// ``StoreError/Code/invalidData`` naming the row and the column, never read as something else.
enum PostgreSQLColumns {
    /// The request columns, in the order ``requestValues(of:)`` sends them.
    static let requestNames = "app, identifier, kind, earliest_begin, submitted_at, requires_network, requires_power, extras"
    /// How many columns ``requestNames`` lists.
    static let requestCount: Int32 = 8

    /// `$1, $2, ...` for `count` parameters.
    static func placeholders(_ count: Int) -> String {
        (0..<count).map { "$\($0 + 1)" }.joined(separator: ", ")
    }

    /// The values for ``requestNames``.
    static func requestValues(of request: PendingRequest) throws(StoreError) -> [PostgreSQLValue] {
        try checkFinite(request.submittedAt, column: "submitted_at", of: request.key)
        if let earliest = request.earliestBeginDate { try checkFinite(earliest, column: "earliest_begin", of: request.key) }
        return [
            .text(request.app.rawValue),
            .text(request.identifier),
            .text(request.kind.rawValue),
            .date(request.earliestBeginDate),
            .date(request.submittedAt),
            .bool(request.requiresNetworkConnectivity),
            .bool(request.requiresExternalPower),
            .optionalText(try RequestColumns.encodeExtras(of: request)),
        ]
    }

    /// A date that is not finite would be written (PostgreSQL has `Infinity` and `NaN`) but
    /// could never be read back as a `Date` of the request: refused before anything is written.
    private static func checkFinite(_ date: Date, column: String, of key: RequestKey) throws(StoreError) {
        guard date.timeIntervalSinceReferenceDate.isFinite else {
            throw invalid("\(column) of \(key) is \(date.timeIntervalSinceReferenceDate), not a finite date; nothing was written")
        }
    }

    /// Reads a request from `row`, whose columns `offset ..< offset + requestCount` are
    /// ``requestNames``.
    static func decodeRequest(_ row: some PostgreSQLColumnSource, from offset: Int32 = 0) throws(StoreError) -> PendingRequest {
        let app = AppID(row.text(offset))
        let identifier = row.text(offset + 1)
        func name() -> String { "\(app)/\(identifier)" }
        let kind = try RequestColumns.kind(row.text(offset + 2), of: name)
        let submittedAt = try date(row, offset + 4, column: "submitted_at", of: name)
        let earliestBegin = row.isNull(offset + 3) || Double(row.text(offset + 3)).map({ RequestColumns.ignoresEarliestBegin(kind: kind, seconds: $0) }) == true
            ? nil : try date(row, offset + 3, column: "earliest_begin", of: name)
        return try RequestColumns.assemble(
            app: app, identifier: identifier, kind: kind, earliestBegin: earliestBegin, submittedAt: submittedAt,
            requiresNetwork: try flag(row, offset + 5, column: "requires_network", of: name),
            requiresPower: try flag(row, offset + 6, column: "requires_power", of: name),
            extras: row.optionalText(offset + 7), of: name
        )
    }

    // MARK: Runs

    /// Every column of a run but its replica, in the order ``runValues(of:)`` sends them
    /// (after the replica) and ``decodeRun(_:)`` reads them.
    static let runNames = "id, \(requestNames), started_at, ended_at, outcome, success, stop_reason, "
        + "cpu_time, peak_memory, energy_joules, measured_by, bytes_read, bytes_written"
    /// How many columns ``runNames`` lists (a column selected after them is at this index).
    static let runColumnCount = Int32(runNames.split(separator: ",").count)

    /// The values of a started run: its id, its request, its start and whatever end it
    /// already has. The measurement's source and I/O are written only with the run's end,
    /// as the SQLite store does.
    static func runValues(of run: RunRecord) throws(StoreError) -> [PostgreSQLValue] {
        guard run.startedAt.timeIntervalSinceReferenceDate.isFinite else {
            throw invalid("started_at of \(run.id) is not a finite date; nothing was written")
        }
        return [.integer(run.id.rawValue)] + (try requestValues(of: run.request)) + [.date(run.startedAt)]
            + (try endValues(of: run)) + [.null, .null, .null]
    }

    /// Sets the end of this replica's run `$9` (`$10` is the replica): ``endValues(of:)``,
    /// then its measurement's source and I/O, replaced only when the run was measured (a
    /// run without a source keeps what it had, as in the SQLite store). A run already ended
    /// as interrupted (its lease ran out and another replica may have run its request) is
    /// not ended again: its replica's late word is refused.
    static let finishSQL = """
        UPDATE bgtask_runs SET ended_at = $1, outcome = $2, success = $3, stop_reason = $4, \
        cpu_time = $5, peak_memory = $6, energy_joules = $7, \
        measured_by = coalesce($8::text, measured_by), \
        bytes_read = CASE WHEN $8::text IS NULL THEN bytes_read ELSE $11::bigint END, \
        bytes_written = CASE WHEN $8::text IS NULL THEN bytes_written ELSE $12::bigint END \
        WHERE id = $9 AND replica = $10 AND (ended_at IS NULL OR outcome IS DISTINCT FROM 'interrupted')
        """

    /// The values for ``finishSQL``.
    static func finishValues(of run: RunRecord, replica: String) throws(StoreError) -> [PostgreSQLValue] {
        try endValues(of: run)
            + [.optionalText(run.measuredBy), .integer(run.id.rawValue), .text(replica), .integer(run.bytesRead), .integer(run.bytesWritten)]
    }

    private static func endValues(of run: RunRecord) throws(StoreError) -> [PostgreSQLValue] {
        if let end = run.endedAt, !end.timeIntervalSinceReferenceDate.isFinite {
            throw invalid("ended_at of \(run.id) is not a finite date; nothing was written")
        }
        return [
            .date(run.endedAt), .optionalText(run.outcome?.rawValue), .bool(run.success), .optionalText(run.stopReason),
            .optionalReal(run.cpuTime), .integer(run.peakMemoryBytes), .optionalReal(run.energyJoules),
        ]
    }

    /// Reads a run from a row selected as ``runNames``: its columns, then its values within
    /// ``RunRecordRules`` (the SQLite store's rule), or ``StoreError/Code/invalidData``
    /// naming the run and the column.
    static func decodeRun(_ row: PostgreSQLRow) throws(StoreError) -> RunRecord {
        let id = RunID(try integer(row, 0, column: "id", of: { "a run" }) ?? 0)
        let request: PendingRequest
        do throws(StoreError) {
            request = try decodeRequest(row, from: 1)
        } catch {
            throw RunRecordRules.naming(id, in: error)
        }
        let end = 1 + requestCount + 1
        func name() -> String { RunRecordRules.name(id, of: request) }
        var outcome: RunOutcome?
        if let outcomeName = row.optionalText(end + 1) {
            guard let known = RunOutcome(rawValue: outcomeName) else {
                throw invalid("unknown outcome \"\(outcomeName)\" for \(name())")
            }
            outcome = known
        }
        return try RunRecordRules.checked(RunRecord(
            id: id,
            request: request,
            startedAt: try date(row, 1 + requestCount, column: "started_at", of: name),
            endedAt: row.isNull(end) ? nil : try date(row, end, column: "ended_at", of: name),
            outcome: outcome,
            success: row.isNull(end + 2) ? nil : try flag(row, end + 2, column: "success", of: name),
            stopReason: row.optionalText(end + 3),
            cpuTime: try real(row, end + 4, column: "cpu_time", of: name),
            peakMemoryBytes: try integer(row, end + 5, column: "peak_memory", of: name),
            energyJoules: try real(row, end + 6, column: "energy_joules", of: name),
            measuredBy: row.optionalText(end + 7),
            bytesRead: try integer(row, end + 8, column: "bytes_read", of: name),
            bytesWritten: try integer(row, end + 9, column: "bytes_written", of: name)
        ))
    }

    // MARK: Columns

    /// A date column: finite seconds since 2001-01-01 (the text of a `double precision`).
    static func date(_ row: some PostgreSQLColumnSource, _ column: Int32, column name: String, of rowName: () -> String) throws(StoreError) -> Date {
        let text = row.text(column)
        guard let seconds = Double(text), seconds.isFinite else {
            throw invalid("\(name) of \(rowName()) is \(text.excerpt(scalars: 40)), not a finite number of seconds since 2001-01-01")
        }
        return try RequestColumns.storedDate(seconds, column: name, of: rowName)
    }

    /// A `boolean` column: `t` or `f`.
    private static func flag(_ row: some PostgreSQLColumnSource, _ column: Int32, column name: String, of rowName: () -> String) throws(StoreError) -> Bool {
        switch row.text(column) {
        case "t": return true
        case "f": return false
        case let other: throw invalid("\(name) of \(rowName()) is \"\(other.excerpt(scalars: 40))\", not a boolean")
        }
    }

    /// A `bigint` column, or `nil` for NULL.
    private static func integer(_ row: PostgreSQLRow, _ column: Int32, column name: String, of rowName: () -> String) throws(StoreError) -> Int64? {
        guard !row.isNull(column) else { return nil }
        guard let number = Int64(row.text(column)) else {
            throw invalid("\(name) of \(rowName()) is \"\(row.text(column).excerpt(scalars: 40))\", not a 64-bit integer")
        }
        return number
    }

    /// A `double precision` measurement, or `nil` for NULL. `Infinity` and `NaN` are read
    /// as they are (they were read as "not measured"), for ``RunRecordRules`` to refuse.
    private static func real(_ row: PostgreSQLRow, _ column: Int32, column name: String, of rowName: () -> String) throws(StoreError) -> Double? {
        guard !row.isNull(column) else { return nil }
        guard let number = Double(row.text(column)) else {
            throw invalid("\(name) of \(rowName()) is \"\(row.text(column).excerpt(scalars: 40))\", not a number")
        }
        return number
    }

    static func invalid(_ message: String) -> StoreError {
        StoreError(code: .invalidData, path: nil, message: message)
    }
}

/// Where a row's text columns come from: a result row, or a notification's payload.
protocol PostgreSQLColumnSource {
    /// Whether column `column` (0-based) is NULL.
    func isNull(_ column: Int32) -> Bool
    /// The text of column `column` (empty for NULL).
    func text(_ column: Int32) -> String
}

extension PostgreSQLColumnSource {
    /// The text of column `column`, or `nil` for NULL.
    func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }
}

extension PostgreSQLRow: PostgreSQLColumnSource {}

/// Text columns carried by a notification (``PostgreSQLColumns/Payload``).
struct PostgreSQLPayloadColumns: PostgreSQLColumnSource {
    var values: [String?]
    func isNull(_ column: Int32) -> Bool { Int(column) >= values.count || values[Int(column)] == nil }
    func text(_ column: Int32) -> String { Int(column) < values.count ? values[Int(column)] ?? "" : "" }
}

extension PostgreSQLColumns {
    /// What the trigger's notification on ``PostgreSQLStore/changeChannel`` carries (schema
    /// step 3), a JSON array of strings and nulls, columns in the text the server writes:
    /// - `["submitted", <the columns of requestNames>]`: pending as this;
    /// - `["removed", "app", "identifier", "submitted_at"]`: that submission is gone;
    /// - `["app", "identifier"]`: the request changed, read it again (a row too long for a
    ///   notification's 8000 bytes, and the word of schema step 2);
    /// - anything else, an empty payload included: read everything.
    enum Payload {
        /// The change `payload` says; `nil` for "read everything".
        static func change(from payload: String) -> SharedRequestChange? {
            guard let data = payload.data(using: .utf8),
                  let array = try? JSONSerialization.jsonObject(with: data) as? [Any] else { return nil }
            let values = array.map { $0 as? String }
            // Anything but strings and nulls is not a payload of ours.
            guard zip(array, values).allSatisfy({ $1 != nil || $0 is NSNull }) else { return nil }
            switch values.first ?? nil {
            case "submitted" where values.count == 1 + Int(requestCount):
                if let request = try? decodeRequest(PostgreSQLPayloadColumns(values: Array(values.dropFirst()))) { return .upserted(request) }
            case "removed" where values.count == 4:
                if let app = values[1], let identifier = values[2], let instant = values[3], let seconds = Double(instant), seconds.isFinite {
                    return .removed(RequestKey(app: AppID(app), identifier: identifier), submittedAt: Date(timeIntervalSinceReferenceDate: seconds))
                }
            default:
                if values.count == 2, let app = values[0], let identifier = values[1] {
                    return .changed(RequestKey(app: AppID(app), identifier: identifier))
                }
                return nil
            }
            // A word of ours this replica cannot read: its key, read again.
            if values.count >= 3, let app = values[1], let identifier = values[2] {
                return .changed(RequestKey(app: AppID(app), identifier: identifier))
            }
            return nil
        }
    }
}
