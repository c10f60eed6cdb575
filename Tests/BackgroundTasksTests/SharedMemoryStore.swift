import Dispatch
import Foundation
import SchedulerCore
import SchedulerStore
import Synchronization

/// A store shared by several in-process replicas, in memory: the driver's side of
/// replicas (claims, word of changes, leases) tested in virtual time without a server.
/// The PostgreSQL store keeps the same contract against a real server
/// (Tests/StoreContractTests); this one is only as faithful as the contract says.
final class SharedMemoryBackend: Sendable {
    struct Run: Sendable {
        var record: RunRecord
        var leaseUntil: Date
    }

    struct State: Sendable {
        var pending: [RequestKey: PendingRequest] = [:]
        var runs: [String: [RunID: Run]] = [:]
        var settings: [AppID: [String: String]] = [:]
        var checkpoints: [AppID: [String: Data]] = [:]
        var listeners: [UUID: (replica: String, onChange: @Sendable (SharedStoreChange) -> Void)] = [:]
        var reachable = true
        /// The next run end commits, then reports the server lost (a commit whose outcome
        /// its writer cannot know).
        var loseNextRunEndAfterCommit = false
        /// Run ends are refused as if the server timed out (a row lock on the app's policy
        /// state held elsewhere), other writes taken; each attempt is counted.
        var refusesRunEnds = false
        var runEndAttempts = 0
        /// Rows another program wrote badly: the plain read fails on them, the loading read
        /// moves them to `quarantined`, as the PostgreSQL store does.
        var unreadable: Set<RequestKey> = []
        var quarantined: [QuarantinedRequest] = []
        var claims = 0
        /// Claims that found the row gone or changed.
        var lostClaims = 0
    }

    let state = Mutex(State())
    /// While set, a submission waits on it before it reaches the store (a call stuck on a
    /// lock another session holds), outside `state`, so that every other call goes on.
    let submissionGate = Mutex<DispatchSemaphore?>(nil)
    /// The server's clock.
    let now: @Sendable () -> Date
    /// Word of changes goes out on its own queue, as a notification connection's would.
    let delivery = DispatchQueue(label: "shared-memory-store.delivery")

    init(now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    /// A replica's view.
    func store(replica: String) -> SharedMemoryStore { SharedMemoryStore(backend: self, replica: replica) }

    /// Waits until every change word sent so far was delivered.
    func drain() { delivery.sync {} }

    /// Tells every listener but `writer`'s own (as PostgreSQL's store leaves out its own
    /// writes) of `keys`: read them again.
    func notify(_ keys: [RequestKey], from writer: String) {
        notify(changes: keys.map { .changed($0) }, from: writer)
    }

    /// Tells every other replica's listener of `changes`, one word each, as the PostgreSQL
    /// store's listener does when word arrives spread out.
    func notify(changes: [SharedRequestChange], from writer: String) {
        let listeners = state.withLock { $0.listeners.values.filter { $0.replica != writer }.map(\.onChange) }
        for change in changes {
            delivery.async { for listener in listeners { listener(.requests([change])) } }
        }
    }
}

final class SharedMemoryStore: SharedSchedulerStorage {
    let backend: SharedMemoryBackend
    let replica: String
    var storeDescription: String { "shared memory store (replica \(replica))" }

    init(backend: SharedMemoryBackend, replica: String) {
        self.backend = backend
        self.replica = replica
    }

    private func access<Result>(_ body: (inout SharedMemoryBackend.State) throws(StoreError) -> Result) throws(StoreError) -> Result {
        try backend.state.withLock { (state) throws(StoreError) -> Result in
            guard state.reachable else { throw StoreError(code: .unavailable, path: storeDescription, message: "\(storeDescription) cannot be reached") }
            return try body(&state)
        }
    }

    func upsertRequest(_ request: PendingRequest) throws(StoreError) { try upsertRequests([request]) }
    func upsertRequests(_ requests: [PendingRequest]) throws(StoreError) {
        if let gate = backend.submissionGate.withLock({ $0 }) {
            gate.wait()
            gate.signal()
        }
        try access { state in for request in requests { state.pending[request.key] = request } }
        backend.notify(changes: requests.map { .upserted($0) }, from: replica)
    }
    // Deletes say which submission went, and nothing for a row that was not there, as the
    // PostgreSQL store's trigger does.
    func deleteRequest(_ key: RequestKey) throws(StoreError) {
        let gone = try access { state in state.pending.removeValue(forKey: key) }
        backend.notify(changes: gone.map { [.removed($0.key, submittedAt: $0.submittedAt)] } ?? [], from: replica)
    }
    func deleteAllRequests(app: AppID) throws(StoreError) {
        let gone = try access { state in
            let keys = state.pending.keys.filter { $0.app == app }
            return keys.compactMap { state.pending.removeValue(forKey: $0) }
        }
        backend.notify(changes: gone.map { .removed($0.key, submittedAt: $0.submittedAt) }, from: replica)
    }
    func pendingRequests(app: AppID?) throws(StoreError) -> [PendingRequest] {
        try access { (state) throws(StoreError) in
            if let bad = state.unreadable.first(where: { app == nil || $0.app == app }) {
                throw StoreError(code: .invalidData, path: nil, message: "the pending request \(bad.app)/\(bad.identifier) cannot be read")
            }
            return state.pending.values.filter { app == nil || $0.app == app }.sorted { $0.key < $1.key }
        }
    }
    func quarantineRequests(_ keys: [RequestKey], reason: String, now: Date) throws(StoreError) -> [QuarantinedRequest] {
        try access { state in
            keys.compactMap { key in state.pending.removeValue(forKey: key).map { QuarantinedRequest(app: $0.app.rawValue, identifier: $0.identifier, reason: reason, quarantinedAt: now) } }
        }
    }
    func quarantinedRequests() throws(StoreError) -> [QuarantinedRequest] { try access { $0.quarantined } }
    func recordRunStarted(_ run: RunRecord, onlyItsOwnSubmission: Bool) throws(StoreError) {
        _ = try claimRun(run, lease: 30)
    }
    func recordRunFinished(_ run: RunRecord, appSettings: [String: String?]) throws(StoreError) {
        try access { (state) throws(StoreError) in
            guard state.runs[replica]?[run.id]?.record.endedAt == nil, state.runs[replica]?[run.id] != nil else {
                throw StoreError(code: .invalidData, path: nil, message: "cannot record the end of \(run.id): it is not in progress")
            }
            state.runs[replica]?[run.id]?.record = run
            for (name, value) in appSettings { state.settings[run.app, default: [:]][name] = value }
        }
    }
    func recordRunFinished(_ run: RunRecord, updatingAppSetting name: String, _ update: (String?) -> String?) throws(StoreError) {
        try access { (state) throws(StoreError) in
            state.runEndAttempts += 1
            if state.refusesRunEnds {
                throw StoreError(code: .unavailable, path: storeDescription, message: "canceling statement due to statement timeout")
            }
            guard state.runs[replica]?[run.id]?.record.endedAt == nil, state.runs[replica]?[run.id] != nil else {
                throw StoreError(code: .invalidData, path: nil, message: "cannot record the end of \(run.id): it is not in progress")
            }
            state.runs[replica]?[run.id]?.record = run
            if let value = update(state.settings[run.app]?[name]) { state.settings[run.app, default: [:]][name] = value }
            if state.loseNextRunEndAfterCommit {
                state.loseNextRunEndAfterCommit = false
                throw StoreError(code: .unavailable, path: storeDescription, message: "the server was lost during COMMIT")
            }
        }
    }
    func updateAppSetting(app: AppID, name: String, _ update: (String?) -> String?) throws(StoreError) {
        try access { state in
            if let value = update(state.settings[app]?[name]) { state.settings[app, default: [:]][name] = value }
        }
    }
    func runs(app: AppID?, since: Date?, limit: Int?) throws(StoreError) -> [RunRecord] {
        try access { state in
            let all = state.runs.values.flatMap(\.values).map(\.record)
                .filter { (app == nil || $0.app == app) && (since == nil || $0.startedAt >= since!) }
                .sorted { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }
            return limit.map { Array(all.suffix($0)) } ?? all
        }
    }
    func readableRuns(app: AppID?, since: Date?) throws(StoreError) -> (runs: [RunRecord], unreadable: [(id: RunID, reason: String)]) {
        (try runs(app: app, since: since, limit: nil), [])  // records in memory are always readable
    }
    func run(_ id: RunID) throws(StoreError) -> RunRecord? { try access { $0.runs[replica]?[id]?.record } }
    func maxRunID() throws(StoreError) -> RunID? { try access { $0.runs[replica]?.keys.max() } }
    func lastLaunch(of app: AppID) throws(StoreError) -> Date? {
        try access { state in
            state.runs[replica]?.values.map(\.record)
                .filter { $0.app == app && $0.request.kind != .continuedProcessing }.map(\.startedAt).max()
        }
    }
    func pruneRuns(olderThan cutoff: Date) throws(StoreError) -> Int { 0 }
    func energySummary(app: AppID?, since: Date?) throws(StoreError) -> [EnergySummary.Row] { [] }
    func appSetting(app: AppID, name: String) throws(StoreError) -> String? { try access { $0.settings[app]?[name] } }
    func appSettings(named name: String) throws(StoreError) -> [AppID: String] {
        try access { state in state.settings.compactMapValues { $0[name] } }
    }
    func setAppSetting(_ value: String?, app: AppID, name: String) throws(StoreError) {
        try access { state in state.settings[app, default: [:]][name] = value }
    }
    func checkpoint(app: AppID, key: String) throws(StoreError) -> Data? { try access { $0.checkpoints[app]?[key] } }
    func removeCheckpoint(app: AppID, key: String) throws(StoreError) {
        try access { state in state.checkpoints[app]?[key] = nil }
    }
    func checkpointKeys(app: AppID) throws(StoreError) -> [String] { try access { ($0.checkpoints[app] ?? [:]).keys.sorted() } }
    func checkpointUsage(app: AppID, excluding key: String) throws(StoreError) -> CheckpointUsage {
        try access { state in
            let others = (state.checkpoints[app] ?? [:]).filter { $0.key != key }
            return CheckpointUsage(keys: others.count, bytes: others.reduce(0) { $0 + $1.key.utf8.count + $1.value.count })
        }
    }
    func saveCheckpoint(_ data: Data, app: AppID, key: String, at: Date) throws(StoreError) -> String? {
        try access { state in
            let others = (state.checkpoints[app] ?? [:]).filter { $0.key != key }
            let usage = CheckpointUsage(keys: others.count, bytes: others.reduce(0) { $0 + $1.key.utf8.count + $1.value.count })
            if let problem = CheckpointRules.saveProblem(key: key, valueBytes: data.count, others: usage) { return problem }
            state.checkpoints[app, default: [:]][key] = data
            return nil
        }
    }
    func close() {}

    func claimRun(_ run: RunRecord, lease: TimeInterval) throws(StoreError) -> Bool {
        let now = backend.now()
        let claimed = try access { state in
            guard let pending = state.pending[run.request.key], pending.submittedAt == run.request.submittedAt else {
                state.lostClaims += 1
                return false
            }
            state.pending[run.request.key] = nil
            state.runs[replica, default: [:]][run.id] = .init(record: run, leaseUntil: now.addingTimeInterval(lease))
            state.claims += 1
            return true
        }
        if claimed { backend.notify(changes: [.removed(run.request.key, submittedAt: run.request.submittedAt)], from: replica) }
        return claimed
    }
    func renewLeases(_ runs: [RunID], lease: TimeInterval) throws(StoreError) {
        let now = backend.now()
        try access { state in
            for id in runs where state.runs[replica]?[id]?.record.endedAt == nil {
                state.runs[replica]?[id]?.leaseUntil = now.addingTimeInterval(lease)
            }
        }
    }
    func recoverExpiredLeases() throws(StoreError) -> LeaseSweep {
        let now = backend.now()
        let (ended, inProgress, restored) = try access { state -> ([RunRecord], Int, [RequestKey]) in
            var ended: [RunRecord] = []
            var restored: [RequestKey] = []
            var struck: Set<AppID> = []
            var inProgress = 0
            for (name, runs) in state.runs {
                for (id, run) in runs where run.record.endedAt == nil {
                    guard run.leaseUntil <= now else { inProgress += 1; continue }
                    var record = run.record
                    record.endedAt = now
                    record.outcome = .interrupted
                    record.stopReason = "its lease ran out"
                    state.runs[name]?[id]?.record = record
                    ended.append(record)
                    // Continued processing ends with its process: neither restored nor struck,
                    // as PostgreSQL's sweep does.
                    if !record.request.isRestoredWhenCutOff { continue }
                    struck.insert(record.app)
                    if state.pending[record.request.key] == nil {
                        state.pending[record.request.key] = record.request
                        restored.append(record.request.key)
                    }
                }
            }
            // One throttle strike per app in its shared policy state, as PostgreSQL's sweep writes.
            for app in struck {
                if let policyState = InterruptedRunRecovery.policyState(state.settings[app]?[AppSettingName.policyState], struckBy: now) {
                    state.settings[app, default: [:]][AppSettingName.policyState] = policyState
                }
            }
            return (ended, inProgress, restored)
        }
        backend.notify(restored, from: replica)
        return LeaseSweep(ended: ended, runsInProgress: inProgress)
    }
    func loadPendingRequests(app: AppID?, now: Date) throws(StoreError) -> (loaded: [PendingRequest], quarantined: [QuarantinedRequest]) {
        try access { state in
            let bad = state.unreadable.filter { app == nil || $0.app == app }.sorted()
            state.unreadable.subtract(bad)
            let moved = bad.map { key in
                state.pending.removeValue(forKey: key)
                return QuarantinedRequest(app: key.app.rawValue, identifier: key.identifier, reason: "cannot be read", quarantinedAt: now)
            }
            state.quarantined += moved
            return (state.pending.values.filter { app == nil || $0.app == app }.sorted { $0.key < $1.key }, moved)
        }
    }
    /// Unreadable rows are left out, as the PostgreSQL store leaves them out.
    func pendingRequests(keys: Set<RequestKey>) throws(StoreError) -> [PendingRequest] {
        try access { state in keys.subtracting(state.unreadable).compactMap { state.pending[$0] } }
    }

    func listen(_ onChange: @escaping @Sendable (SharedStoreChange) -> Void) -> any SharedStoreListener {
        let id = UUID()
        backend.state.withLock { $0.listeners[id] = (replica, onChange) }
        return Listener(backend: backend, id: id)
    }

    final class Listener: SharedStoreListener {
        let backend: SharedMemoryBackend
        let id: UUID
        init(backend: SharedMemoryBackend, id: UUID) {
            self.backend = backend
            self.id = id
        }
        func stop() {
            _ = backend.state.withLock { $0.listeners.removeValue(forKey: id) }
        }
    }
}
