import Foundation
import SchedulerCore

/// The contract every durable store of the scheduler keeps (docs/replicas.md, "Two stores,
/// one contract"): ``SchedulerStore`` (SQLite, the default, one file per owner) and the
/// PostgreSQL store (`PostgreSQLStore`, shared by replicas) both implement it, and one test
/// suite holds both to it.
///
/// The promises, whatever the implementation:
/// - every mutating call commits before it returns: what a caller was told is saved is
///   durable, and on a thrown error nothing of the call was written;
/// - a run's start consumes its request in the same transaction
///   (``recordRunStarted(_:onlyItsOwnSubmission:)``),
///   and its end writes the app's settings in the same transaction as the record
///   (``recordRunFinished(_:appSettings:)``);
/// - a row that cannot be read back is never returned as something else: it is reported
///   or set aside (``quarantineRequests(_:reason:now:)``);
/// - errors are ``StoreError``s whose message names the store (a file, or a server without
///   its password).
///
/// Implementations are safe to call from any thread.
public protocol SchedulerStorage: AnyObject, Sendable {
    /// Where the store is, for messages: a file's path, or a server's address without its
    /// credentials.
    var storeDescription: String { get }

    // MARK: Pending requests

    /// Saves `request`, replacing the pending one with the same app and identifier.
    func upsertRequest(_ request: PendingRequest) throws(StoreError)
    /// Saves every request of `requests` in one transaction: all or none.
    func upsertRequests(_ requests: [PendingRequest]) throws(StoreError)
    /// Removes the pending request `key` (nothing when there is none).
    func deleteRequest(_ key: RequestKey) throws(StoreError)
    /// Removes every pending request of `app`.
    func deleteAllRequests(app: AppID) throws(StoreError)
    /// The pending requests (of `app`, or of every app), ordered by app and identifier.
    func pendingRequests(app: AppID?) throws(StoreError) -> [PendingRequest]
    /// Moves the pending requests `keys` aside with `reason` (they are not loaded again,
    /// and never deleted); returns what was moved.
    @discardableResult
    func quarantineRequests(_ keys: [RequestKey], reason: String, now: Date) throws(StoreError) -> [QuarantinedRequest]
    /// The requests set aside so far, oldest first.
    func quarantinedRequests() throws(StoreError) -> [QuarantinedRequest]

    // MARK: The run log

    /// Records that `run` was launched and consumes its request, in one transaction: the
    /// pending row of its app and identifier (a remote wake's run consumes the app's own
    /// request it replaced), or, `onlyItsOwnSubmission`, that row only while it is still the
    /// submission the run ran (its `submittedAt`): a start written after the launch, the store
    /// having refused it then, leaves a submission the app made since.
    func recordRunStarted(_ run: RunRecord, onlyItsOwnSubmission: Bool) throws(StoreError)
    /// Records how `run` ended and writes `appSettings` (name to value; `nil` deletes) for
    /// its app in the same transaction. The run must have been recorded as started.
    func recordRunFinished(_ run: RunRecord, appSettings: [String: String?]) throws(StoreError)
    /// The run log, oldest first: of `app` (or every app), started at or after `since`, at
    /// most the newest `limit`.
    func runs(app: AppID?, since: Date?, limit: Int?) throws(StoreError) -> [RunRecord]
    /// The run log as ``runs(app:since:limit:)`` reads it (no limit), but a row that cannot
    /// be read is listed with its number and the reason instead of failing the whole read,
    /// so that a diagnostic (`bgtask log`, `why`) shows the rest.
    func readableRuns(app: AppID?, since: Date?) throws(StoreError) -> (runs: [RunRecord], unreadable: [(id: RunID, reason: String)])
    /// One run, or `nil` when the log has none with that id.
    func run(_ id: RunID) throws(StoreError) -> RunRecord?
    /// The highest run id this store's owner has recorded (runs are numbered from it).
    func maxRunID() throws(StoreError) -> RunID?
    /// When this store's owner last launched `app` in the background: the latest start of
    /// its runs other than continued processing (which the rate limit does not space), or
    /// `nil`. A restarted scheduler spaces its next launch from it: the policy state saved at
    /// each run's end misses a run whose end was never recorded (the process was killed).
    func lastLaunch(of app: AppID) throws(StoreError) -> Date?
    /// ``lastLaunch(of:)`` of each of `apps` that has one, in one read where the store can
    /// (bgtaskd's start-up installs every app at once); by default app by app.
    func lastLaunches(of apps: [AppID]) throws(StoreError) -> [AppID: Date]
    /// Deletes the runs that ended before `cutoff`; returns how many.
    func pruneRuns(olderThan cutoff: Date) throws(StoreError) -> Int
    /// Energy and time per app and task kind, from the run log.
    func energySummary(app: AppID?, since: Date?) throws(StoreError) -> [EnergySummary.Row]

    // MARK: Per-app settings and checkpoints

    /// The setting `name` of `app`, or `nil`.
    func appSetting(app: AppID, name: String) throws(StoreError) -> String?
    /// The setting `name` of every app that has one.
    func appSettings(named name: String) throws(StoreError) -> [AppID: String]
    /// Writes (or, with `nil`, deletes) the setting `name` of `app`.
    func setAppSetting(_ value: String?, app: AppID, name: String) throws(StoreError)
    /// The checkpoint `key` of `app`, or `nil`.
    func checkpoint(app: AppID, key: String) throws(StoreError) -> Data?
    /// Removes the checkpoint `key` of `app`.
    func removeCheckpoint(app: AppID, key: String) throws(StoreError)
    /// The keys of `app`'s checkpoints, sorted.
    func checkpointKeys(app: AppID) throws(StoreError) -> [String]
    /// How much `app`'s checkpoints other than `key` hold (``CheckpointRules``).
    func checkpointUsage(app: AppID, excluding key: String) throws(StoreError) -> CheckpointUsage
    /// Writes the checkpoint `key` of `app` (replacing an older one; `at` records when)
    /// unless ``CheckpointRules`` refuse it (the key, the value's size, or the app's totals
    /// with it), the totals counted and the value written in one transaction, so that
    /// writers at once (threads, replicas) cannot together pass the limits each checked
    /// alone. The only way a checkpoint is written: no caller can skip the rules. Returns
    /// the rule's complaint, with nothing written, or `nil` once the value is committed.
    func saveCheckpoint(_ data: Data, app: AppID, key: String, at: Date) throws(StoreError) -> String?

    /// Gives the store up: later calls fail with ``StoreError/Code/closed``. Twice does nothing.
    func close()
}

/// The run log's rows as ``SchedulerStorage/readableRuns(app:since:)`` reads them, one at
/// a time: the same for every store.
public enum RunLogRows {
    /// The runs that were read, in order, and the number and reason of every row that could
    /// not be.
    public static func split(_ rows: [(id: RunID, result: Result<RunRecord, StoreError>)]) -> (runs: [RunRecord], unreadable: [(id: RunID, reason: String)]) {
        let tagged = split(rows.map { ((), $0.id, $0.result) })
        return (tagged.runs.map(\.run), tagged.unreadable.map { ($0.id, $0.reason) })
    }

    /// ``split(_:)`` of rows that each carry a `tag` (the replica that recorded them).
    public static func split<Tag>(_ rows: [(tag: Tag, id: RunID, result: Result<RunRecord, StoreError>)]) -> (runs: [(tag: Tag, run: RunRecord)], unreadable: [(tag: Tag, id: RunID, reason: String)]) {
        var runs: [(tag: Tag, run: RunRecord)] = []
        var unreadable: [(tag: Tag, id: RunID, reason: String)] = []
        for row in rows {
            switch row.result {
            case .success(let run): runs.append((row.tag, run))
            case .failure(let error): unreadable.append((row.tag, row.id, error.message))
            }
        }
        return (runs, unreadable)
    }
}

extension SchedulerStorage {
    /// Every app's pending requests.
    public func pendingRequests() throws(StoreError) -> [PendingRequest] { try pendingRequests(app: nil) }
    /// Records that `run` was launched, consuming the pending row of its app and identifier.
    public func recordRunStarted(_ run: RunRecord) throws(StoreError) { try recordRunStarted(run, onlyItsOwnSubmission: false) }
    /// Records how `run` ended, writing no setting.
    public func recordRunFinished(_ run: RunRecord) throws(StoreError) { try recordRunFinished(run, appSettings: [:]) }
    /// ``lastLaunch(of:)`` of each app in turn, for a store without a read for many.
    public func lastLaunches(of apps: [AppID]) throws(StoreError) -> [AppID: Date] {
        var launches: [AppID: Date] = [:]
        for app in apps { launches[app] = try lastLaunch(of: app) }
        return launches
    }
}

extension SchedulerStore: SchedulerStorage {
    /// The database file's path, or "an in-memory store".
    public var storeDescription: String { url?.path ?? "an in-memory store" }
}
