import Foundation
import SchedulerCore

/// A store several schedulers share: the replicas of one service on PostgreSQL
/// (docs/replicas.md). Beyond the ``SchedulerStorage`` contract it decides which replica
/// runs a request (a claim, with a lease that a heartbeat renews), ends the runs of a
/// replica that died, and tells every replica of the changes the others make.
///
/// The guarantee it exists for: while a run's lease is valid, no other replica runs the
/// same request; a replica that dies mid-run loses its lease, the run is recorded as
/// interrupted and its request restored, and another replica runs it (at least once
/// overall; continued processing, the user's foreground work, only ends).
public protocol SharedSchedulerStorage: SchedulerStorage {
    /// This scheduler's name among the replicas: its runs are recorded, and its leases
    /// held, under it.
    var replica: String { get }

    /// Claims the request `run` was made from, for this replica: in one transaction, the
    /// pending row is taken if it is still that request (same app, identifier and
    /// submission instant) and the run is recorded with a lease of `lease` seconds from
    /// the server's clock. Returns `false`, writing nothing, when the request is no longer
    /// pending as such (another replica claimed it, or it was replaced or cancelled).
    func claimRun(_ run: RunRecord, lease: TimeInterval) throws(StoreError) -> Bool

    /// Extends the leases of this replica's runs `runs` (those this process has in
    /// progress: a restarted replica of the same name never renews its predecessor's) to
    /// `lease` seconds from the server's now.
    func renewLeases(_ runs: [RunID], lease: TimeInterval) throws(StoreError)

    /// Ends every run whose lease expired (a replica that died or lost the server): it is
    /// recorded as interrupted and its request restored unless one with the same key is
    /// pending again or it is continued processing (neither restored nor struck). Safe to
    /// call from every replica at once: each run is ended once.
    @discardableResult
    func recoverExpiredLeases() throws(StoreError) -> LeaseSweep

    /// The pending requests of `app` (or of every app) that can be read, ordered as
    /// ``SchedulerStorage/pendingRequests(app:)`` orders them, with every row that cannot
    /// be read moved to the quarantine (rows written since the store was opened by another
    /// program, or by a newer version): how a replica reads everything again without one
    /// bad row hiding the others. An implementation may set other apps' unreadable rows
    /// aside in the same pass; it reports every row it moved.
    func loadPendingRequests(app: AppID?, now: Date) throws(StoreError) -> (loaded: [PendingRequest], quarantined: [QuarantinedRequest])

    /// Sets the setting `name` of `app` to what `update` makes of the value stored now
    /// (`nil` when there is none; `update` returning `nil` leaves it), atomically: no
    /// other replica's write lands between the read and the write. How replicas add their
    /// changes to an app's shared memory (the policies' state) instead of overwriting the
    /// others'. `update` may be called more than once (a retried transaction); it must only
    /// compute.
    func updateAppSetting(app: AppID, name: String, _ update: (String?) -> String?) throws(StoreError)

    /// Records the end of `run` (as ``SchedulerStorage/recordRunFinished(_:appSettings:)``)
    /// and, in the same transaction, updates the app's setting `name` as
    /// ``updateAppSetting(app:name:_:)`` does.
    func recordRunFinished(_ run: RunRecord, updatingAppSetting name: String, _ update: (String?) -> String?) throws(StoreError)

    /// The pending requests among `keys` (those not pending are left out), read at once:
    /// how a replica catches up with a burst of changes the others made.
    func pendingRequests(keys: Set<RequestKey>) throws(StoreError) -> [PendingRequest]

    /// Starts listening for the changes the replicas make to pending requests (an
    /// implementation may leave out this store's own writes, which its replica's engine
    /// made; the restores of ``recoverExpiredLeases()`` are then applied by the replica
    /// that swept, from its result). `onChange` is called on the listener's own thread,
    /// never under a lock of the store's. Stop the listener before the store is closed.
    func listen(_ onChange: @escaping @Sendable (SharedStoreChange) -> Void) -> any SharedStoreListener
}

/// What changed in a shared store.
public enum SharedStoreChange: Sendable, Hashable {
    /// Pending requests were submitted, replaced, claimed or cancelled somewhere, in this
    /// order of arrival (a listener gathers what arrived together, so that a burst of
    /// changes is applied at once).
    case requests([SharedRequestChange])
    /// Word of changes may have been missed (the listening connection was lost and made
    /// again): read every pending request again.
    case everything
    /// The listening connection is down (`true`) or back (`false`); while down, the
    /// scheduler reads the store on a slow safety poll.
    case listening(down: Bool)
}

/// One change of a pending request that another replica made, as word of it arrived.
///
/// Word is a hint, never the truth: it may arrive after this replica's own later change of
/// the same request. The truth is the store, and a claim checks it before anything runs
/// (docs/replicas.md, "No polling").
public enum SharedRequestChange: Sendable, Hashable {
    /// The request was submitted or replaced, and is pending as this.
    case upserted(PendingRequest)
    /// The submission of `key` made at `submittedAt` is no longer pending: claimed (it runs
    /// somewhere) or cancelled (a replacement comes as ``upserted(_:)``).
    case removed(RequestKey, submittedAt: Date)
    /// The request `key` changed, and how is not said: read it again.
    case changed(RequestKey)

    /// The request the change is about.
    public var key: RequestKey {
        switch self {
        case .upserted(let request): return request.key
        case .removed(let key, _), .changed(let key): return key
        }
    }
}

/// A running listener of a shared store.
public protocol SharedStoreListener: AnyObject, Sendable {
    /// Stops listening and closes its connection; no call of `onChange` starts after it
    /// returns.
    func stop()
}

/// What ``SharedSchedulerStorage/recoverExpiredLeases()`` did and saw.
public struct LeaseSweep: Sendable, Hashable {
    /// The runs it ended (recorded as interrupted; their requests restored but continued
    /// processing's).
    public var ended: [RunRecord]
    /// Runs without an end that hold a lease, of every replica (this one's included, and
    /// a run another sweeper is ending at the same moment): while there are any, a replica
    /// sweeps again at its heartbeat, in case their replica dies.
    public var runsInProgress: Int

    /// A sweep's result.
    public init(ended: [RunRecord], runsInProgress: Int) {
        self.ended = ended
        self.runsInProgress = runsInProgress
    }
}
