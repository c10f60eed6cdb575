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

    /// A run's start or end: a number of seconds since 2001 (text read as 0 before, so a
    /// damaged row showed 2001-01-01) within about 300 years of it (1e300 printed a year
    /// 506713 and a 300-digit duration).
    private static func runDate(_ row: SQLiteRow, _ index: Int32, column: String, of id: RunID) throws(StoreError) -> Date {
        let date = try RequestColumns.date(row, index, column: column, of: { "\(id)" })
        guard abs(date.timeIntervalSinceReferenceDate) <= 1e10 else {
            throw StoreError(code: .invalidData, path: nil, message: "\(column) of \(id) is \(date.timeIntervalSinceReferenceDate) seconds from 2001-01-01, not a date a run can have")
        }
        return date
    }

    /// Reads a run from a row selected with ``selectNames(withMeasurements:)``.
    static func decode(_ row: SQLiteRow) throws(StoreError) -> RunRecord {
        let id = RunID(row.int64(0))
        let request = try RequestColumns.decode(row, from: 1)
        let end = 1 + RequestColumns.count + 1
        var outcome: RunOutcome?
        if let outcomeName = row.optionalText(end + 1) {
            guard let known = RunOutcome(rawValue: outcomeName) else {
                throw StoreError(code: .invalidData, path: nil, message: "unknown outcome \"\(outcomeName)\" for \(id)")
            }
            outcome = known
        }
        return RunRecord(
            id: id,
            request: request,
            startedAt: try runDate(row, 1 + RequestColumns.count, column: "started_at", of: id),
            endedAt: row.isNull(end) ? nil : try runDate(row, end, column: "ended_at", of: id),
            outcome: outcome,
            success: row.optionalBool(end + 2),
            stopReason: row.optionalText(end + 3),
            cpuTime: row.optionalDouble(end + 4),
            peakMemoryBytes: row.optionalInt64(end + 5),
            energyJoules: row.optionalDouble(end + 6),
            measuredBy: row.optionalText(end + 7),
            bytesRead: row.optionalInt64(end + 8),
            bytesWritten: row.optionalInt64(end + 9)
        )
    }
}
