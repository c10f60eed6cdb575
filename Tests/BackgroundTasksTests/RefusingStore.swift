import Foundation
import SchedulerCore
import SchedulerStore
import Synchronization

/// A store of one owner (an in-memory ``SchedulerStore``) whose writes can be refused, as a
/// full disk refuses them (``StoreError/Code/unavailable``: a failure that may pass), while
/// reads go on: for the driver's handling of a start or an end the store did not take.
final class RefusingStore: SchedulerStorage {
    let inner: SchedulerStore
    /// Whether writes are refused now.
    let refusing = Mutex(false)

    init() throws {
        inner = try SchedulerStore.inMemory()
    }

    private func write<Result>(_ body: () throws(StoreError) -> Result) throws(StoreError) -> Result {
        if refusing.withLock({ $0 }) {
            throw StoreError(code: .unavailable, path: nil, message: "database or disk is full (a test's store refusing writes)")
        }
        return try body()
    }

    var storeDescription: String { inner.storeDescription }
    func upsertRequest(_ request: PendingRequest) throws(StoreError) { try write { () throws(StoreError) in try inner.upsertRequest(request) } }
    func upsertRequests(_ requests: [PendingRequest]) throws(StoreError) { try write { () throws(StoreError) in try inner.upsertRequests(requests) } }
    func deleteRequest(_ key: RequestKey) throws(StoreError) { try write { () throws(StoreError) in try inner.deleteRequest(key) } }
    func deleteAllRequests(app: AppID) throws(StoreError) { try write { () throws(StoreError) in try inner.deleteAllRequests(app: app) } }
    func pendingRequests(app: AppID?) throws(StoreError) -> [PendingRequest] { try inner.pendingRequests(app: app) }
    func quarantineRequests(_ keys: [RequestKey], reason: String, now: Date) throws(StoreError) -> [QuarantinedRequest] {
        try write { () throws(StoreError) in try inner.quarantineRequests(keys, reason: reason, now: now) }
    }
    func quarantinedRequests() throws(StoreError) -> [QuarantinedRequest] { try inner.quarantinedRequests() }
    func recordRunStarted(_ run: RunRecord, onlyItsOwnSubmission: Bool) throws(StoreError) {
        try write { () throws(StoreError) in try inner.recordRunStarted(run, onlyItsOwnSubmission: onlyItsOwnSubmission) }
    }
    func recordRunFinished(_ run: RunRecord, appSettings: [String: String?]) throws(StoreError) {
        try write { () throws(StoreError) in try inner.recordRunFinished(run, appSettings: appSettings) }
    }
    func runs(app: AppID?, since: Date?, limit: Int?) throws(StoreError) -> [RunRecord] { try inner.runs(app: app, since: since, limit: limit) }
    func readableRuns(app: AppID?, since: Date?) throws(StoreError) -> (runs: [RunRecord], unreadable: [(id: RunID, reason: String)]) {
        try inner.readableRuns(app: app, since: since)
    }
    func run(_ id: RunID) throws(StoreError) -> RunRecord? { try inner.run(id) }
    func maxRunID() throws(StoreError) -> RunID? { try inner.maxRunID() }
    func lastLaunch(of app: AppID) throws(StoreError) -> Date? { try inner.lastLaunch(of: app) }
    func pruneRuns(olderThan cutoff: Date) throws(StoreError) -> Int { try write { () throws(StoreError) in try inner.pruneRuns(olderThan: cutoff) } }
    func energySummary(app: AppID?, since: Date?) throws(StoreError) -> [EnergySummary.Row] { try inner.energySummary(app: app, since: since) }
    func appSetting(app: AppID, name: String) throws(StoreError) -> String? { try inner.appSetting(app: app, name: name) }
    func appSettings(named name: String) throws(StoreError) -> [AppID: String] { try inner.appSettings(named: name) }
    func setAppSetting(_ value: String?, app: AppID, name: String) throws(StoreError) {
        try write { () throws(StoreError) in try inner.setAppSetting(value, app: app, name: name) }
    }
    func checkpoint(app: AppID, key: String) throws(StoreError) -> Data? { try inner.checkpoint(app: app, key: key) }
    func removeCheckpoint(app: AppID, key: String) throws(StoreError) { try write { () throws(StoreError) in try inner.removeCheckpoint(app: app, key: key) } }
    func checkpointKeys(app: AppID) throws(StoreError) -> [String] { try inner.checkpointKeys(app: app) }
    func checkpointUsage(app: AppID, excluding key: String) throws(StoreError) -> CheckpointUsage { try inner.checkpointUsage(app: app, excluding: key) }
    func saveCheckpoint(_ data: Data, app: AppID, key: String, at: Date) throws(StoreError) -> String? {
        try write { () throws(StoreError) in try inner.saveCheckpoint(data, app: app, key: key, at: at) }
    }
    func close() { inner.close() }
}
