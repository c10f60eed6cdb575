import Foundation
import SchedulerCore

/// Repairs the run log after the scheduler stopped while runs were in progress.
///
/// A run is written when it starts (consuming its request) and updated when it ends. A run
/// with no end is interrupted only if its owner is dead, and that is known only to the
/// process that holds the store's lock (``StateDirectoryLock``): so this runs only inside
/// ``SchedulerStore/open(at:now:options:)``, after the lock was taken. Then the run is
/// recorded as interrupted, its request is made pending again, and the stop counts as one
/// throttle strike of its app (a handler that kills the process would otherwise be relaunched after
/// every restart with no delay: a crash loop). A continued-processing run only ends: the
/// user's foreground work is neither restored nor struck (``PendingRequest/isRestoredWhenCutOff``).
package enum InterruptedRunRecovery {
    /// The stop reason written on recovered runs.
    static let stopReason = "the scheduler stopped while the run was in progress"
    /// The stop reason of a recovered continued-processing run, whose request is not restored.
    static let continuedProcessingStopReason = stopReason + "; " + PendingRequest.whyNotRestoredWhenCutOff

    /// What recovery did.
    struct Outcome {
        var interruptedRuns: [RunRecord] = []
        var restoredRequests: [PendingRequest] = []
        /// Runs without an end whose row cannot be read: ended as interrupted, request not
        /// restored.
        var unreadableRuns: [String] = []
    }

    /// Marks every unfinished run interrupted at `now`, restores its request unless a
    /// request with the same key is pending (the app resubmitted during the run, and the
    /// newer request wins) or it is continued processing (the user's foreground work, which
    /// ends with its process), and records one throttle strike per app in its policy state
    /// (``AppSettingName/policyState``). One transaction: a crash during recovery leaves
    /// everything as it was, to be recovered (and counted) once on the next open.
    static func recover(_ connection: SQLiteConnection, now: Date) throws(StoreError) -> Outcome {
        try connection.transaction { () throws(StoreError) -> Outcome in
            // Newest first: if two unfinished runs share a key, the newer request is restored.
            let ids = try connection.query("SELECT id FROM runs WHERE ended_at IS NULL ORDER BY id DESC") { row in row.int64(0) }
            var outcome = Outcome()
            var struck: Set<AppID> = []
            for id in ids {
                let decoded: RunRecord?
                do throws(StoreError) {
                    decoded = try connection.query(
                        "SELECT \(RunColumns.selectNames(withMeasurements: false)) FROM runs WHERE id = ?", [.integer(id)], row: RunColumns.decode
                    ).first
                } catch {
                    // Still ended, so it is not found again at every start; its request is
                    // not put back, because it cannot be read.
                    let reason = "\(stopReason); its row cannot be read (\(error.message)), so its request was not restored"
                    try connection.execute(
                        "UPDATE runs SET ended_at = ?, outcome = ?, stop_reason = ? WHERE id = ?",
                        [.date(now), .text(RunOutcome.interrupted.rawValue), .text(reason), .integer(id)]
                    )
                    outcome.unreadableRuns.append("\(RunID(id)): \(error.message)")
                    continue
                }
                guard var run = decoded else { continue }
                // A clock set back since the start must not make a run end before it began.
                run.endedAt = max(now, run.startedAt)
                run.outcome = .interrupted
                // Continued processing is work the user started in the foreground (a Live
                // Activity they watch): when its process dies it ends, as on iOS, and is not
                // run again unasked at the next start; nor is it a strike, as no
                // continued-processing run is (the engine neither restores one whose app never
                // started nor counts one in the throttle).
                let continued = !run.request.isRestoredWhenCutOff
                run.stopReason = continued ? continuedProcessingStopReason : stopReason
                try connection.execute(RunColumns.finishSQL, RunColumns.finishValues(of: run))
                outcome.interruptedRuns.append(run)
                if continued { continue }
                struck.insert(run.app)
                try connection.execute(
                    "INSERT OR IGNORE INTO pending_requests (\(RequestColumns.names)) VALUES (\(RequestColumns.placeholders))",
                    RequestColumns.values(of: run.request)
                )
                if connection.changes == 1 { outcome.restoredRequests.append(run.request) }
            }
            for app in struck.sorted(by: { $0.rawValue < $1.rawValue }) {
                try recordStrike(of: app, at: now, on: connection)
            }
            outcome.interruptedRuns.reverse()
            outcome.restoredRequests.reverse()
            return outcome
        }
    }

    /// Adds one interrupted-run strike to `app`'s saved throttle state (creating the state
    /// when the app has none yet): one per stop of the process, however many of its runs it
    /// cut off, because the process died once. Saved state that cannot be decoded is left
    /// alone: the driver reports it and starts afresh.
    private static func recordStrike(of app: AppID, at now: Date, on connection: SQLiteConnection) throws(StoreError) {
        let saved = try connection.query(
            "SELECT value FROM app_settings WHERE app = ? AND name = ?",
            [.text(app.rawValue), .text(AppSettingName.policyState)]
        ) { row in row.text(0) }.first
        guard let struck = policyState(saved, struckBy: now) else { return }
        try SchedulerStore.setAppSetting(struck, app: app, name: AppSettingName.policyState, on: connection)
    }

    /// The app's saved policy state (`saved`, the JSON of `AppSettingName.policyState`, or
    /// `nil` for none) with one throttle strike for a run interrupted at `now`; `nil` when
    /// the saved state cannot be read (it is left alone). Both stores record the strike
    /// with it, in the transaction that ends the run.
    package static func policyState(_ saved: String?, struckBy now: Date) -> String? {
        var state: AppPolicyState
        if let saved {
            guard let decoded = try? JSONDecoder().decode(AppPolicyState.self, from: Data(saved.utf8)) else { return nil }
            state = decoded
        } else {
            state = AppPolicyState(usage: UsageModel(createdAt: now))
        }
        state.throttle.recordRunEnded(outcome: .interrupted, calledSetTaskCompleted: false, at: now)
        guard let data = try? JSONEncoder().encode(state) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
