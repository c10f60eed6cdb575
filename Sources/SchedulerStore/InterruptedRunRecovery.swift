import Foundation
import SchedulerCore

/// Repairs the run log after the scheduler stopped while runs were in progress.
///
/// A run is written when it starts (consuming its request) and updated when it ends. A run
/// with no end at open time was cut off by a crash or kill: the app never had its chance,
/// so the run is recorded as interrupted and its request is made pending again.
enum InterruptedRunRecovery {
    /// The stop reason written on recovered runs.
    static let stopReason = "the scheduler stopped while the run was in progress"

    /// Marks every unfinished run interrupted at `now` and restores its request, unless a
    /// request with the same key is pending (the app resubmitted during the run, and the
    /// newer request wins). One transaction: a crash during recovery leaves everything as it
    /// was, to be recovered on the next open.
    static func recover(
        _ connection: SQLiteConnection,
        now: Date
    ) throws(StoreError) -> (interruptedRuns: [RunRecord], restoredRequests: [PendingRequest]) {
        try connection.transaction { () throws(StoreError) in
            // Newest first: if two unfinished runs share a key, the newer request is restored.
            let unfinished = try connection.query(
                "SELECT \(RunColumns.names) FROM runs WHERE ended_at IS NULL ORDER BY id DESC",
                row: RunColumns.decode
            )
            var interrupted: [RunRecord] = []
            var restored: [PendingRequest] = []
            for var run in unfinished {
                run.endedAt = now
                run.outcome = .interrupted
                run.stopReason = stopReason
                try connection.execute(RunColumns.finishSQL, RunColumns.finishValues(of: run))
                interrupted.append(run)
                try connection.execute(
                    "INSERT OR IGNORE INTO pending_requests (\(RequestColumns.names)) VALUES (\(RequestColumns.placeholders))",
                    RequestColumns.values(of: run.request)
                )
                if connection.changes == 1 { restored.append(run.request) }
            }
            return (interrupted.reversed(), restored.reversed())
        }
    }
}
