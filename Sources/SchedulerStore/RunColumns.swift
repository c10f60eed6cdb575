import Foundation
import SchedulerCore

/// How a ``RunRecord`` maps to the `runs` table: its id, the full request (see
/// ``RequestColumns``), then the run's own columns, then its measurements (schema step 2).
enum RunColumns {
    /// Every column of a run, in the order ``values(of:)`` binds and ``decode(_:)`` reads them.
    static let names = "id, \(RequestColumns.names), started_at, ended_at, outcome, success, stop_reason, "
        + "cpu_time, peak_memory, energy_joules"
    /// `?` placeholders for ``names``.
    static let placeholders = "?, \(RequestColumns.placeholders), ?, ?, ?, ?, ?, ?, ?, ?"

    /// The values for ``names``.
    static func values(of run: RunRecord) throws(StoreError) -> [SQLiteValue] {
        [.integer(run.id.rawValue)]
            + (try RequestColumns.values(of: run.request))
            + [.date(run.startedAt)]
            + endValues(of: run)
    }

    /// Sets the end of a run and its measurements (``endValues(of:)`` then the id).
    static let finishSQL = """
        UPDATE runs SET ended_at = ?, outcome = ?, success = ?, stop_reason = ?, \
        cpu_time = ?, peak_memory = ?, energy_joules = ? WHERE id = ?
        """

    /// The values for ``finishSQL``.
    static func finishValues(of run: RunRecord) -> [SQLiteValue] {
        endValues(of: run) + [.integer(run.id.rawValue)]
    }

    private static func endValues(of run: RunRecord) -> [SQLiteValue] {
        [
            .date(run.endedAt), .optionalText(run.outcome?.rawValue), .bool(run.success), .optionalText(run.stopReason),
            .optionalReal(run.cpuTime), .optionalInteger(run.peakMemoryBytes), .optionalReal(run.energyJoules),
        ]
    }

    /// The columns a read selects: ``names`` and the run's measurements (step 5), or NULLs
    /// in their place in a store older than step 5 (readers never migrate).
    static func selectNames(withMeasurements: Bool) -> String {
        names + (withMeasurements ? ", m.measured_by, m.bytes_read, m.bytes_written" : ", NULL, NULL, NULL")
    }

    /// What a read selects from: the runs, with their measurements when the store has them.
    static func source(withMeasurements: Bool) -> String {
        withMeasurements ? "runs LEFT JOIN run_measurements m ON m.run_id = runs.id" : "runs"
    }

    /// Records the measurements of a finished run, when it has any.
    static let measurementSQL = """
        INSERT OR REPLACE INTO run_measurements (run_id, measured_by, bytes_read, bytes_written) VALUES (?, ?, ?, ?)
        """

    /// Reads a run from a row selected with ``selectNames(withMeasurements:)``: each column
    /// of the type ``values(of:)`` writes (a TEXT `cpu_time` was read as 0), then the values
    /// within ``RunRecordRules``, or ``StoreError/Code/invalidData`` naming the run and the column.
    static func decode(_ row: SQLiteRow) throws(StoreError) -> RunRecord {
        let id = RunID(row.int64(0))
        let request: PendingRequest
        do throws(StoreError) {
            request = try RequestColumns.decode(row, from: 1)
        } catch {
            throw RunRecordRules.naming(id, in: error)
        }
        func name() -> String { RunRecordRules.name(id, of: request) }
        let end = 1 + RequestColumns.count + 1
        var outcome: RunOutcome?
        if let outcomeName = row.optionalText(end + 1) {
            guard let known = RunOutcome(rawValue: outcomeName) else {
                throw StoreError(code: .invalidData, path: nil, message: "unknown outcome \"\(outcomeName)\" for \(name())")
            }
            outcome = known
        }
        return try RunRecordRules.checked(RunRecord(
            id: id,
            request: request,
            startedAt: try RequestColumns.date(row, 1 + RequestColumns.count, column: "started_at", of: name),
            endedAt: row.isNull(end) ? nil : try RequestColumns.date(row, end, column: "ended_at", of: name),
            outcome: outcome,
            success: row.isNull(end + 2) ? nil : try RequestColumns.flag(row, end + 2, column: "success", of: name),
            stopReason: row.optionalText(end + 3),
            cpuTime: try number(row, end + 4, column: "cpu_time", of: name),
            peakMemoryBytes: try integer(row, end + 5, column: "peak_memory", of: name),
            energyJoules: try number(row, end + 6, column: "energy_joules", of: name),
            measuredBy: row.optionalText(end + 7),
            bytesRead: try integer(row, end + 8, column: "bytes_read", of: name),
            bytesWritten: try integer(row, end + 9, column: "bytes_written", of: name)
        ))
    }

    /// A measurement column: NULL (not measured) or a number.
    private static func number(_ row: SQLiteRow, _ index: Int32, column: String, of name: () -> String) throws(StoreError) -> Double? {
        guard !row.isNull(index) else { return nil }
        guard row.isNumber(index) else {
            throw StoreError(code: .invalidData, path: nil, message: "\(column) of \(name()) is \(row.typeName(index)), not a number")
        }
        return row.double(index)
    }

    /// A count column: NULL (not measured) or an integer (a REAL was truncated, TEXT read as 0).
    private static func integer(_ row: SQLiteRow, _ index: Int32, column: String, of name: () -> String) throws(StoreError) -> Int64? {
        guard !row.isNull(index) else { return nil }
        guard row.isInteger(index) else {
            throw StoreError(code: .invalidData, path: nil, message: "\(column) of \(name()) is \(row.typeName(index)), not an integer")
        }
        return row.int64(index)
    }
}
