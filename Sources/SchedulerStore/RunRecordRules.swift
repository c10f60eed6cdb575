import Foundation
import SchedulerCore

/// What a run row may hold, in either store (the SQLite store's `runs`, the PostgreSQL
/// store's `bgtask_runs`): one rule for both, checked on every read after the columns'
/// types were.
///
/// A row outside these bounds was not written by a scheduler (by hand, by another program,
/// by a damaged disk): it is refused with ``StoreError/Code/invalidData`` naming the run, its
/// app and identifier, and the column, so `readableRuns` lists it as unreadable and shows
/// the others. It is never shown or summed as it is: an infinite energy made `bgtask log
/// --json` fail in the JSON encoder, and two CPU times of 1e308 s summed to infinity. Run
/// rows are history, never loaded into the engine, so the row stays where it is (the owner
/// moves nothing; compare ``RequestQuarantine``) and is named on every read.
///
/// The bounds are wide enough for any run that happened and narrow enough that sums of any
/// number of rows a store can hold stay finite in a `Double`.
package enum RunRecordRules {
    /// The furthest a run's start or end may lie from 2001-01-01, in seconds (about 317
    /// years either way): 1e300 printed a year 506713 and a 300-digit duration.
    package static let dateBound: TimeInterval = 1e10
    /// The most CPU seconds one run may have used (about 317 years: a month on 3,800 cores).
    package static let cpuTimeBound: TimeInterval = 1e10
    /// The most joules one run may be estimated at (a petajoule: a megawatt for 30 years):
    /// ``EnergyModel/maximumEstimate``, where the estimates stop.
    package static let energyBound: Double = EnergyModel.maximumEstimate

    /// How messages name a run: `run#3 (com.example.app/com.example.app.refresh)`.
    package static func name(_ id: RunID, of request: PendingRequest) -> String {
        "\(id) (\(request.app)/\(request.identifier))"
    }

    private static func name(of run: RunRecord) -> String { name(run.id, of: run.request) }

    /// `error`, from reading the request part of the run `id`, with the run named in front:
    /// the request's own message names only its app and identifier.
    package static func naming(_ id: RunID, in error: StoreError) -> StoreError {
        var named = error
        named.message = "\(id): \(error.message)"
        return named
    }

    /// `run` as it was read, once every value is one a run can have: its start and end
    /// within ``dateBound`` of 2001, its end not before its start (the writers never record
    /// one: the engine, crash recovery and the lease sweep end a run no earlier than it
    /// started, whatever the clock did), its CPU time and energy finite, at least 0 and within their bounds, and
    /// its byte counts at least 0.
    package static func checked(_ run: RunRecord) throws(StoreError) -> RunRecord {
        try checkDate(run.startedAt, column: "started_at", of: run)
        if let end = run.endedAt {
            try checkDate(end, column: "ended_at", of: run)
            guard end >= run.startedAt else {
                throw invalid("ended_at of \(name(of: run)) is \(run.startedAt.timeIntervalSince(end)) seconds before its started_at: a run cannot end before it starts")
            }
        }
        try checkMeasure(run.cpuTime, column: "cpu_time", unit: "seconds", bound: cpuTimeBound, of: run)
        try checkMeasure(run.energyJoules, column: "energy_joules", unit: "joules", bound: energyBound, of: run)
        for (column, value) in [("peak_memory", run.peakMemoryBytes), ("bytes_read", run.bytesRead), ("bytes_written", run.bytesWritten)] {
            if let value, value < 0 {
                throw invalid("\(column) of \(name(of: run)) is \(value), not a number of bytes of at least 0")
            }
        }
        return run
    }

    private static func checkDate(_ date: Date, column: String, of run: RunRecord) throws(StoreError) {
        let seconds = date.timeIntervalSinceReferenceDate
        guard seconds.isFinite, abs(seconds) <= dateBound else {
            throw invalid("\(column) of \(name(of: run)) is \(seconds) seconds from 2001-01-01, not a date a run can have")
        }
    }

    private static func checkMeasure(_ value: Double?, column: String, unit: String, bound: Double, of run: RunRecord) throws(StoreError) {
        guard let value else { return }
        // NaN fails both comparisons, so it is refused with infinities and negatives.
        guard value >= 0, value <= bound else {
            throw invalid("\(column) of \(name(of: run)) is \(value), not a number of \(unit) from 0 to \(bound)")
        }
    }

    private static func invalid(_ message: String) -> StoreError {
        StoreError(code: .invalidData, path: nil, message: message)
    }
}
