import DaemonProtocol
import Foundation
import SchedulerStore
import Synchronization
import SchedulerCore

/// Hosts one ``SchedulerEngine``: feeds it events with the time of its clock, persists
/// what it decides, launches handlers in the apps attached to it, and keeps one timer for
/// the engine's next wake.
///
/// The same class serves the real-time driver (``DispatchDriverClock``, a SQLite file)
/// and the simulator's virtual-time driver (a virtual clock, an in-memory store), so a
/// simulation exercises exactly the production code path.
///
/// Locking: one mutex guards the engine and the driver's tables; store writes happen
/// under it (they must be durable before a call returns), app code never does: handlers,
/// expiration handlers, observers and the diagnostics sink (which the app may supply) are
/// called after the lock is released, from the actions a lock hold queued.
public final class SchedulerDriver: Sendable {
    /// Where time comes from.
    public let clock: any DriverClock
    /// The durable store, or `nil` when it could not be opened (see ``unavailableReason``).
    public let store: (any SchedulerStorage)?
    /// Why the store is missing: every submission then fails with `unavailable` and this text.
    public let unavailableReason: String?
    /// App work in flight (the virtual-time driver waits for it to settle).
    public let activity: BGActivityTracker
    /// Where warnings go.
    public let log: BGDiagnosticLog
    /// Shares commits among threads that submit at once (``submit(_:)``).
    private let submitGroup = SubmitGroup()
    /// The most submissions one shared commit has written (for tests).
    var submitGroupLargestBatch: Int { submitGroup.largestBatchCommitted }
    /// Measures what runs cost: the process's CPU time and memory for in-process runs, or,
    /// in the simulator (whose runs take virtual time, so measuring the real CPU would make
    /// traces differ between runs), a cost model (`SimulatedRunMeter`).
    public let meter: (any RunMeter)?
    /// Turns wall and CPU time into estimated joules (the energy log, the energy budget).
    public let energyModel: EnergyModel
    /// Whether calls into app code are queued on the clock one at a time (the simulator:
    /// handlers launched at one instant then run one after the other, each until it
    /// returns or parks, so traces are deterministic) or started at once (real time).
    public let serializesAppWork: Bool
    /// The link to bgtaskd when the app runs under it (the daemon's engine decides; this
    /// driver's engine stays empty), else `nil`.
    public let uplink: (any SchedulerUplink)?
    /// Runs the daemon handed to this process, by run (only with an ``uplink``).
    let linkedRuns = Mutex<[RunID: BGTask]>([:])
    /// Set while the app's lifecycle moves because the daemon said so (`bgtask open`,
    /// `bgtask background`): that move is not reported back to the daemon.
    let movingAtTheDaemonsWord = Mutex(false)

    private struct State: @unchecked Sendable {
        // @unchecked: BGTask and BGAppContext are reference types guarded by this mutex.
        var engine: SchedulerEngine
        /// Makes the policy states' texts for the store, keeping the last usage models' texts.
        var policyStateTexts = PolicyStateTextEncoder()
        var contexts: [AppID: BGAppContext] = [:]
        var tasks: [RunID: BGTask] = [:]
        var wakeTimer: (any DriverTimer)?
        var wakeAt: Date?
        var observers: [@Sendable (SchedulerTraceEvent) -> Void] = []
        var retained: [AnyObject] = []
        var lastPrune: Date?
        /// Messages noted under the lock, sent to ``log`` once it is released.
        var notes: [BGDiagnosticMessage] = []
        /// Effects of an engine event the driver itself raised while applying others (a run
        /// not claimed in a shared store), applied after them: a loop, not a recursion, so a
        /// long series of lost claims cannot exhaust the stack.
        var followUps: [EngineEffect] = []
        /// A claim in the shared store failed with an error (the server unreachable): later
        /// launches are forgotten at once instead of each waiting for the server, until a
        /// read of the whole store succeeds again (the heartbeat tries), which also brings
        /// back the requests forgotten meanwhile.
        var sharedClaimsFailing = false
        /// What this replica removed from a shared store lately (cancelled or claimed: by
        /// key; cancelled all: by app), and when: word of another replica's earlier
        /// submission of it that arrives late is read from the store, not taken
        /// (``sort(_:against:removedHere:)``).
        var removedHere = RecentRemovals()
        /// A shared store: what the policies' state of each app was as this replica last
        /// read or wrote it (the base of a three-way merge: what this replica changed since
        /// then is written into what is stored now, ``writeSharedPolicyState(of:in:write:)``).
        var sharedPolicyBaselines: [AppID: AppPolicyState] = [:]
        /// Whether the engine had work after the last lock hold (see ``onWorkChanged(_:)``).
        var dependedOnReadings = false
        var workListeners: [@Sendable () -> Void] = []
        /// Called once the app has no run in progress (``whenRunsEnd(of:_:)``).
        var runWaiters: [AppID: [@Sendable () -> Void]] = [:]

        /// Whether ``SchedulerDriver/detachAllApps()`` ran: submissions are refused after it.
        var detachedAll = false
        /// Ends of runs the store did not take (unreachable, full), oldest first: written
        /// again until it does (``retryUnrecordedEnds(generation:broughtForward:)``), their shared leases renewed
        /// meanwhile, so a run that finished is neither recorded as interrupted nor run again.
        var unrecordedEnds: [RunRecord] = []
        /// Runs launched whose start the store (one owner's) did not take: written again
        /// with the ends (``unrecordedEnds``' timer), and with the run's own end at the
        /// latest. Until then their requests stay pending on disk (a restart runs them again).
        var unrecordedStarts: [RunID: RunRecord] = [:]
        /// The timer of the next attempt at ``unrecordedEnds``.
        var endRetryTimer: (any DriverTimer)?
        /// How many attempts at ``unrecordedEnds`` in a row the store refused (the next
        /// waits ``SchedulerDriver/endRetryBackoff``'s delay after that many).
        var endRetryFailures = 0
        /// Which armed attempt is the current one: a timer cancelled while its handler
        /// already waited for the lock finds another number and does nothing (else it would
        /// start a second chain of attempts beside the one armed since).
        var endRetryGeneration = 0
        /// Whether the current wait was cut short because the store took another write
        /// (``SchedulerDriver/storeTookAWrite(_:at:)``): once per wait of the backoff, so a
        /// store that takes other writes but keeps refusing ends is not tried at every write.
        var endRetryBroughtForward = false
        /// What ``SchedulerDriver/detachAllApps()`` takes out of the state.
        struct Detached {
            var contexts: [AppID: BGAppContext] = [:]
            var tasks: [RunID: BGTask] = [:]
            var runWaiters: [AppID: [@Sendable () -> Void]] = [:]
            var wakeTimer: (any DriverTimer)?
            var endRetryTimer: (any DriverTimer)?
        }
        /// Apps living in other processes (bgtaskd's), and the runs handed to them.
        var remoteHosts: [AppID: any RemoteTaskHost] = [:]
        var remoteRuns: [RunID: RequestKey] = [:]
    }

    private let state: Mutex<State>
    /// The remote hosts' calls, enqueued under `state`'s lock and made after it, in that
    /// order (``OrderedCalls``).
    private let hostCalls = OrderedCalls<AppID>()

    /// Things to do once the lock is released.
    private enum Action {
        case invoke(BGTask, BGAppContext)
        case launchFailed(RunID, String)
        case expire(BGTask)
        case finish(BGTask, RunRecord)
        case terminate(BGTask, String)
        case sampleProgress(BGTask)
        case trace(SchedulerTraceEvent)
        case log(BGDiagnosticMessage)
        case call([@Sendable () -> Void])
        case sharedRunStarted
    }

    /// Creates a driver over `store` (pending requests are restored from it).
    /// - Parameters:
    ///   - store: the durable store, or `nil` when it could not be opened.
    ///   - loadedRequests: the store's pending requests as its opening loaded them
    ///     (``StoreOpenReport/loadedRequests``); `nil` reads them from `store`.
    ///   - unavailableReason: why there is no store (shown in `unavailable` errors).
    public init(
        configuration: SchedulerConfiguration = .init(),
        conditions: Conditions = .favorable,
        clock: any DriverClock,
        store: (any SchedulerStorage)?,
        unavailableReason: String? = nil,
        activity: BGActivityTracker = BGActivityTracker(),
        log: BGDiagnosticLog = .standardError(),
        serializesAppWork: Bool = false,
        policies: PolicySet = PolicySet(),
        meter: (any RunMeter)? = RunResourceMeter(),
        energyModel: EnergyModel = .init(),
        uplink: (any SchedulerUplink)? = nil,
        loadedRequests: [PendingRequest]? = nil,
        sharedStoreLease: TimeInterval = SchedulerDriver.defaultSharedStoreLease
    ) {
        self.sharedStoreLease = sharedStoreLease
        self.sharedStore = store as? any SharedSchedulerStorage
        self.sharedCoordinator = sharedStore.map { SharedStoreCoordinator(store: $0, lease: sharedStoreLease) }
        self.uplink = uplink
        self.serializesAppWork = serializesAppWork
        self.meter = meter
        self.energyModel = energyModel
        self.clock = clock
        self.store = store
        self.unavailableReason = store == nil ? (unavailableReason ?? "the scheduler has no store") : nil
        self.activity = activity
        self.log = log
        var engine = SchedulerEngine(configuration: configuration, conditions: conditions, lastRunID: (try? store?.maxRunID()) ?? nil, policies: policies)
        if let store {
            do {
                // The limits hold for what is loaded too (docs/ARCHITECTURE.md, "One owner per
                // state directory"): the excess is reported and quarantined, never launched.
                let now = clock.now()
                // The rows the opening already read and checked, when the caller has them.
                let refused = engine.restore(try loadedRequests ?? store.pendingRequests(), at: now)
                if !refused.isEmpty {
                    let reason = "over the app's pending limit for its kind when the scheduler started"
                    try store.quarantineRequests(refused.map(\.key), reason: reason, now: now)
                    for request in refused {
                        log(.error, app: request.app, "'\(request.identifier)' was not loaded: \(reason); it was moved to the store's quarantine")
                    }
                }
            } catch {
                log(.error, app: nil, "could not read pending requests from the store: \(error)")
            }
        }
        state = Mutex(State(engine: engine, dependedOnReadings: engine.dependsOnSlowReadings))
        sharedCoordinator?.start(driver: self)
    }

    /// How long a claim in a shared store holds without renewal before another replica may
    /// run the request (docs/replicas.md, "The guarantee").
    public static let defaultSharedStoreLease: TimeInterval = 30

    /// The lease of this driver's claims in a shared store.
    public let sharedStoreLease: TimeInterval
    /// The store, when replicas share it (`nil` for a store of one's own).
    private let sharedStore: (any SharedSchedulerStorage)?
    /// The listener and heartbeat of a shared store (`nil` for a store of one's own).
    let sharedCoordinator: SharedStoreCoordinator?

    deinit { sharedCoordinator?.stop() }

    /// Stops listening to a shared store and the heartbeat (nothing for a store of one's
    /// own): what a replica does before its store or server goes away. Its runs' leases are
    /// no longer renewed.
    public func stopSharing() { sharedCoordinator?.stop() }

    /// The runs whose claims this driver holds: those in progress, and those ended whose end
    /// the store has not taken yet (their leases are renewed until it does). Read without
    /// the driver's lock (``heldRuns``): a submit that waits on the store holds that lock,
    /// and the renewal of the leases must not wait behind it.
    var activeRunIDs: [RunID] { heldRuns.withLock { $0 } }

    /// ``activeRunIDs`` as of the end of the driver's last change, kept apart from its state
    /// for the shared store's heartbeat (set under the driver's lock, read under none).
    private let heldRuns = Mutex<[RunID]>([])

    /// Whether a claim in the shared store failed and no read has succeeded since.
    var sharedClaimsFailing: Bool { state.withLock { $0.sharedClaimsFailing } }

    /// Applies what another replica changed in the shared store, without writing anything
    /// back: word of the changes as it came where it cannot undo this replica's own changes,
    /// the store read again where it might (``sort(_:against:removedHere:)``), or every
    /// pending request of this driver's apps read again (`.everything`). A request equal to
    /// the engine's is left alone.
    func applySharedChange(_ change: SharedStoreChange) {
        guard let shared = sharedStore else { return }
        // Only apps that finished launching: a change brought in earlier could launch a
        // run before the app registered its handlers. `runDueWork` catches up at the end
        // of the launch.
        // (The application's lock is taken outside the driver's.)
        let contexts = state.withLock { Array($0.contexts.values) }
        let apps = Set(contexts.filter(\.application.hasFinishedLaunching).map(\.app))
        // The store is read under the driver's lock (driver, then store: the order claims
        // take too), so that no submit of this replica's can fall between the read and its
        // application and be undone by a stale snapshot.
        switch change {
        case .requests(let changes):
            let relevant = changes.filter { apps.contains($0.key.app) }
            guard !relevant.isEmpty else { return }
            mutate { state, now in
                let removedHere = state.removedHere
                let (known, doubtful) = Self.sort(relevant, against: state.engine) { removedHere.contains($0, at: now) }
                var rows = known.values.compactMap { $0 }
                if !doubtful.isEmpty {
                    do {
                        rows += try shared.pendingRequests(keys: doubtful)
                    } catch {
                        let what = doubtful.count == 1 ? "'\(doubtful.first!.identifier)'" : "\(doubtful.count) pending requests"
                        note(.error, app: doubtful.count == 1 ? doubtful.first!.app : nil, "could not read \(what) from \(shared.storeDescription) after another replica changed them: \(error); reading everything once the store answers", in: &state)
                        readEverythingLater(&state)
                        return Self.bring(&state.engine, keys: Set(known.keys), to: rows, at: now)
                    }
                }
                return Self.bring(&state.engine, keys: Set(known.keys).union(doubtful), to: rows, at: now)
            }
        case .everything:
            let sortedApps = apps.sorted()
            var failed = false
            for app in sortedApps {
                mutate { state, now in
                    let rows: [PendingRequest]
                    do {
                        let read = try shared.loadPendingRequests(app: app, now: now)
                        rows = read.loaded
                        for row in read.quarantined { note(.error, app: app, row.setAsideMessage(in: shared.storeDescription), in: &state) }
                    } catch {
                        failed = true
                        note(.error, app: app, "could not read the pending requests from \(shared.storeDescription): \(error)", in: &state)
                        return []
                    }
                    // Every app's requests read: claims may be tried again (an app whose read
                    // failed keeps the next full read coming).
                    if !failed, app == sortedApps.last { state.sharedClaimsFailing = false }
                    let keys = Set(state.engine.pendingRequests(of: app).map(\.key) + rows.map(\.key))
                    return Self.bring(&state.engine, keys: keys, to: rows, at: now)
                }
            }
        case .listening:
            break
        }
    }

    /// What word of other replicas' changes says, against what the engine has: the keys
    /// whose state it tells (pending as the row, or not pending: `nil`), and the keys it
    /// leaves in doubt, to be read from the store.
    ///
    /// Word is taken as it comes for a request the engine does not have (a submission
    /// elsewhere), unless this replica removed it lately (`removedHere`), and for the
    /// removal of the submission it has (claimed or cancelled elsewhere). Anything else may be older than this replica's own change of the same
    /// request (word of its own writes is not passed on, so word from before it may
    /// arrive after it): a replacement of a request it has, the removal of another
    /// submission, or a bare key, are read again. Taking word as it comes cannot run anything twice or wrongly: a
    /// launch claims the row first, and a lost claim reads it again (docs/replicas.md,
    /// "No polling").
    static func sort(
        _ changes: [SharedRequestChange], against engine: SchedulerEngine,
        removedHere: (RequestKey) -> Bool = { _ in false }
    ) -> (known: [RequestKey: PendingRequest?], doubtful: Set<RequestKey>) {
        var known: [RequestKey: PendingRequest?] = [:]
        var doubtful = Set<RequestKey>()
        for change in changes {
            let key = change.key
            guard !doubtful.contains(key) else { continue }
            let current: PendingRequest? = known[key] ?? engine.pendingRequest(for: key)
            switch change {
            case .upserted(let row):
                // A request this replica removed lately may be word from before the removal.
                if (current == nil && !(known[key] == nil && removedHere(key))) || current == row {
                    known[key] = .some(row)
                } else {
                    doubtful.insert(key)
                }
            case .removed(_, let submittedAt):
                if current == nil || current?.submittedAt == submittedAt {
                    known[key] = .some(nil)
                } else {
                    doubtful.insert(key)
                }
            case .changed:
                doubtful.insert(key)
            }
            if doubtful.contains(key) { known.removeValue(forKey: key) }
        }
        return (known, doubtful)
    }

    /// The engine's effects of making its pending requests among `keys` be the store's
    /// `rows` (a key without a row is not pending). Only what differs is applied: this
    /// replica's own changes, heard back, cost nothing.
    private static func bring(_ engine: inout SchedulerEngine, keys: Set<RequestKey>, to rows: [PendingRequest], at now: Date) -> [EngineEffect] {
        let stored = Dictionary(rows.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        let removed = keys.filter { stored[$0] == nil && engine.pendingRequest(for: $0) != nil }
            .sorted { ($0.app.rawValue, $0.identifier) < ($1.app.rawValue, $1.identifier) }
        let upserted = rows.filter { keys.contains($0.key) && engine.pendingRequest(for: $0.key) != $0 }
        guard !removed.isEmpty || !upserted.isEmpty else { return [] }
        return engine.applySharedChanges(removed: removed, upserted: upserted, at: now)
    }

    /// The engine's configuration.
    public var configuration: SchedulerConfiguration { state.withLock { $0.engine.configuration } }

    /// Calls `observer` with every trace event, after the event happened (not under a lock).
    public func observe(_ observer: @escaping @Sendable (SchedulerTraceEvent) -> Void) {
        state.withLock { $0.observers.append(observer) }
    }

    /// Calls `listener` (after the lock is released) whenever ``dependsOnConditions`` turns
    /// true or false (a run starts or ends, a request comes due or goes): the conditions sampler
    /// arms and disarms on it. Calls from concurrent changes may arrive out of order, so
    /// a listener reads ``dependsOnConditions`` rather than trusting the order.
    public func onWorkChanged(_ listener: @escaping @Sendable () -> Void) {
        state.withLock { $0.workListeners.append(listener) }
    }

    /// Notes a message under the lock; it is sent to ``log`` after the lock is released.
    private func note(_ level: BGDiagnosticMessage.Level, app: AppID?, _ text: String, in state: inout State) {
        state.notes.append(BGDiagnosticMessage(level, app: app, text))
    }

    /// Starts a call into app code: now, or queued on the clock when ``serializesAppWork``.
    func runAppWork(_ start: @escaping @Sendable () -> Void) {
        if serializesAppWork {
            _ = clock.schedule(at: clock.now(), start)
        } else {
            start()
        }
    }

    // MARK: Apps

    /// The contexts attached to this driver (under a daemon, the process's one app).
    var linkedContexts: [BGAppContext] { state.withLock { Array($0.contexts.values) } }

    func linkedContext(of app: AppID) -> BGAppContext? { state.withLock { $0.contexts[app] } }

    /// The linked app has no run in progress any more: whoever waits for that is called.
    func linkedRunsEnded() {
        let waiters = state.withLock { state -> [@Sendable () -> Void] in
            let all = state.runWaiters.values.flatMap { $0 }
            state.runWaiters.removeAll()
            return all
        }
        for waiter in waiters { waiter() }
    }

    /// For a simulated device that is done (``SimulatedDevice``'s `shutDown`), never a live
    /// host: forgets every attached app context, the tasks of runs still in progress, the
    /// waiters for runs to end and the wake timer, breaking the cycle between the driver and
    /// the contexts (which hold it) and the app code they hold. Nothing is delivered to
    /// those apps afterwards; a run still in progress stays in progress in the store.
    public func detachAllApps() {
        // Swapped out under the lock, released after it: a closure's deinit may be anything.
        var detached = State.Detached()
        state.withLock { state in
            swap(&detached.contexts, &state.contexts)
            swap(&detached.tasks, &state.tasks)
            swap(&detached.runWaiters, &state.runWaiters)
            swap(&detached.wakeTimer, &state.wakeTimer)
            swap(&detached.endRetryTimer, &state.endRetryTimer)
            state.wakeAt = nil
            state.detachedAll = true
        }
        detached.wakeTimer?.cancel()
        detached.endRetryTimer?.cancel()
    }

    /// Attaches an app: the engine learns its manifest, and runs of its tasks are
    /// delivered to it. Runs that are due now launch.
    func attach(_ context: BGAppContext, backgroundRefreshEnabled: Bool) {
        let saved = loadPolicyState(of: context.app)
        let lastLaunch = loadLastLaunches(of: [context.app])[context.app]
        mutate { state, now in
            state.contexts[context.app] = context
            state.engine.register(AppRegistration(app: context.app, manifest: context.manifest, backgroundRefreshEnabled: backgroundRefreshEnabled))
            if sharedStore != nil, let saved { state.sharedPolicyBaselines[context.app] = saved }
            if var saved {
                saved.backgroundRefreshEnabled = backgroundRefreshEnabled
                state.engine.restorePolicyState(saved, of: context.app)
            }
            // As bgtaskd does for its apps: a run the process was killed in never saved the
            // launch with the policy state, but the run log has it.
            if let lastLaunch { state.engine.restoreLastLaunch(lastLaunch, of: context.app, at: now) }
            return []
        }
    }

    /// Installs an app that lives in another process: its runs are handed to `host`
    /// (bgtaskd's launcher). Installing again replaces the manifest and the host.
    /// With `removingWhatIsNoLongerAllowed`, see ``install(_:removingWhatIsNoLongerAllowed:)``.
    @discardableResult
    public func install(_ registration: AppRegistration, host: any RemoteTaskHost, removingWhatIsNoLongerAllowed: Bool = false) -> [RemovedRequest] {
        install([(registration, host)], removingWhatIsNoLongerAllowed: removingWhatIsNoLongerAllowed)
    }

    /// A pending request an install removed because the app's manifest no longer allows it
    /// (``AppManifest/refusal(of:)``), with the reason in words.
    public struct RemovedRequest: Sendable, Equatable {
        /// The request's key.
        public var key: RequestKey
        /// Why the manifest does not allow it.
        public var reason: String
    }

    /// Installs many apps in one hold of the lock (bgtaskd's start-up), with what the
    /// policies learned of each as the store keeps it, and when each was last launched as the
    /// store's run log says (``SchedulerEngine/restoreLastLaunch(_:of:at:)``), both read
    /// before the lock is taken.
    ///
    /// Every app is registered, with its switch and saved state, before any is judged:
    /// installing one app judges every ready request, and a request of an app installed
    /// later in the list was judged as an unknown app's (its switch on, no launch to space
    /// from), then launched at start-up though its Background App Refresh was off or it had
    /// just been launched (an outside probe: its saved state was never restored either).
    ///
    /// With `removingWhatIsNoLongerAllowed` (bgtaskd, whose manifests are the installed
    /// ones), pending requests the app's manifest no longer allows (an identifier taken out
    /// of `BGTaskSchedulerPermittedIdentifiers`, a background mode out of
    /// `UIBackgroundModes`: a reinstall) are removed first, in the same hold of the lock, so
    /// nothing judges them under the new manifest: left, they would launch the app for tasks
    /// it may no longer have. One the store could not delete stays pending and is logged,
    /// not returned. Not for an embedded app, whose manifest may be a stand-in when its file
    /// could not be read ("no manifest"): its requests are not the stand-in's to remove.
    /// - Returns: The requests removed.
    @discardableResult
    public func install(_ apps: [(AppRegistration, any RemoteTaskHost)], removingWhatIsNoLongerAllowed: Bool = false) -> [RemovedRequest] {
        let savedPolicyStates = savedPolicyStates(of: apps.map(\.0.app))
        // The rate limit judges as before the restart: a launch whose run never ended (the
        // process was killed) is in the run log, not in the saved policy state.
        let lastLaunches = loadLastLaunches(of: apps.map(\.0.app))
        var removed: [RemovedRequest] = []
        mutate { state, now in
            // Withdrawn without judging (a cancel's launch pass would judge every app before
            // any is registered, each as an unknown app): the `.appInstalled` pass below
            // judges once, after every app is registered with its switch and saved state.
            for (registration, _) in apps where removingWhatIsNoLongerAllowed {
                for request in state.engine.pendingRequests(of: registration.app) {
                    guard let refusal = registration.manifest.refusal(of: request) else { continue }
                    // The mode first: without it the system's own identifier (the legacy
                    // fetch's) is not listed either, and the mode is what went.
                    let reason = refusal.missingMode.map { "a \(request.kind) task, and \"\($0)\" is not in UIBackgroundModes any more" }
                        ?? "not in \(AppManifest.Key.permittedIdentifiers) any more"
                    do {
                        try store?.deleteRequest(request.key)
                    } catch {
                        note(.error, app: request.app, "could not remove '\(request.identifier)', which the manifest no longer allows (\(reason)), from the store; it stays pending: \(error)", in: &state)
                        continue
                    }
                    state.removedHere.note(request.key, at: now)
                    state.engine.withdraw(request.key)
                    removed.append(RemovedRequest(key: request.key, reason: reason))
                }
            }
            var effects: [EngineEffect] = []
            for (registration, host) in apps {
                state.remoteHosts[registration.app] = host
                state.engine.register(registration)
                if var saved = savedPolicyStates[registration.app], state.engine.policyState(of: registration.app) == nil {
                    if sharedStore != nil { state.sharedPolicyBaselines[registration.app] = saved }
                    saved.backgroundRefreshEnabled = registration.backgroundRefreshEnabled
                    state.engine.restorePolicyState(saved, of: registration.app)
                }
                if let launched = lastLaunches[registration.app] {
                    state.engine.restoreLastLaunch(launched, of: registration.app, at: now)
                }
            }
            for (registration, _) in apps {
                effects += state.engine.handle(.appInstalled(registration), at: now).filter {
                    if case .wake = $0 { false } else { true }
                }
            }
            effects.append(.wake(at: state.engine.nextWake))
            return effects
        } prefix: { now in removed.map { .cancelled($0.key, at: now) } }
        return removed
    }

    /// What the policies learned of `apps`, as the store keeps it: one app's own row, or
    /// for many (bgtaskd's start-up) every row in one query. Unreadable entries are logged
    /// and left out (the app starts afresh).
    private func savedPolicyStates(of apps: [AppID]) -> [AppID: AppPolicyState] {
        if apps.count == 1, let app = apps.first { return [app: loadPolicyState(of: app)].compactMapValues { $0 } }
        guard let store, !apps.isEmpty else { return [:] }
        let texts: [AppID: String]
        do {
            texts = try store.appSettings(named: AppSettingName.policyState)
        } catch {
            log(.warning, app: nil, "could not read the saved usage histories: \(error)")
            return [:]
        }
        let wanted = Set(apps)
        return texts.reduce(into: [:]) { states, entry in
            guard wanted.contains(entry.key) else { return }
            states[entry.key] = decodePolicyState(entry.value, of: entry.key)
        }
    }

    /// Uninstalls an app installed with ``install(_:host:)``: `removeFromStore` runs first
    /// under the driver's lock (one transaction removing the app and its requests); when it
    /// throws nothing changes. Then its runs in progress are ended by force (their host is
    /// told to terminate them) and the engine forgets the app.
    public func uninstall(_ app: AppID, removeFromStore: (any SchedulerStorage) throws -> Void) throws {
        try mutate { (state, now) throws(any Error) in
            if let store { try removeFromStore(store) }
            return state.engine.handle(.appUninstalled(app), at: now)
        }
        state.withLock { state in
            state.remoteHosts[app] = nil
            state.remoteRuns = state.remoteRuns.filter { $0.value.app != app }
        }
    }

    // MARK: What the policies learn

    /// When the store's run log says each of `apps` was last launched
    /// (``SchedulerStorage/lastLaunches(of:)``: one app's, or for many, bgtaskd's start-up,
    /// every app's in one query); empty, with a warning, when it cannot be read.
    private func loadLastLaunches(of apps: [AppID]) -> [AppID: Date] {
        guard let store, !apps.isEmpty else { return [:] }
        do {
            return try store.lastLaunches(of: apps)
        } catch {
            if apps.count == 1 {
                log(.warning, app: apps.first, "could not read the app's last launch from the run log: \(error); the rate limit counts only what the saved policy state says")
            } else {
                log(.warning, app: nil, "could not read the apps' last launches from the run log: \(error); the rate limit counts only what the saved policy states say")
            }
            return [:]
        }
    }

    private func loadPolicyState(of app: AppID) -> AppPolicyState? {
        guard let store else { return nil }
        let text: String?
        do {
            text = try store.appSetting(app: app, name: AppSettingName.policyState)
        } catch {
            log(.warning, app: app, "could not read the saved usage history: \(error)")
            return nil
        }
        return text.flatMap { decodePolicyState($0, of: app) }
    }

    /// A saved usage history, or nil (and a warning) when it cannot be read; a warning too
    /// when its launch ledger could not be read and was dropped (the rest is kept).
    private func decodePolicyState(_ text: String, of app: AppID) -> AppPolicyState? {
        do {
            let data = Data(text.utf8)
            let state = try JSONDecoder().decode(AppPolicyState.self, from: data)
            if state.launchLedger == nil, let problem = AppPolicyState.launchLedgerProblem(in: data) {
                log(.warning, app: app, "the saved launch ledger could not be read (\(problem)); it starts again at the app's next background launch")
            }
            return state
        } catch {
            log(.warning, app: app, "the saved usage history could not be read (\(error)); starting afresh")
            return nil
        }
    }

    /// What the policies learned of `app` (usage history, throttle, energy used), as the
    /// store keeps it, or `nil` when there is nothing to keep.
    private func policyStateText(of app: AppID, in state: inout State) -> String? {
        guard store != nil, let policyState = state.engine.policyState(of: app) else { return nil }
        return state.policyStateTexts.text(of: policyState, for: app)
    }

    /// Persists what the policies learned of `app`, under the driver's lock so that saves
    /// land in the order the engine learned (a restart and `bgtask why` see the latest).
    private func savePolicyState(of app: AppID, in state: inout State) {
        do {
            if let shared = sharedStore {
                try writeSharedPolicyState(of: app, in: &state) { (update) throws(StoreError) in
                    try shared.updateAppSetting(app: app, name: AppSettingName.policyState, update)
                }
                return
            }
            guard let store, let text = policyStateText(of: app, in: &state) else { return }
            try store.setAppSetting(text, app: app, name: AppSettingName.policyState)
        } catch {
            note(.error, app: app, "could not save the usage history: \(error)", in: &state)
        }
    }

    /// Writes what the policies learned of `app` into a shared store without losing what
    /// other replicas wrote meanwhile: `write` hands the store an update that merges this
    /// replica's changes since its baseline into the state stored now
    /// (``AppPolicyState/merging(changesIn:since:)``, under the row's lock). Once written,
    /// the merge is this replica's memory and its new baseline, so the others' runs,
    /// strikes and energy count in its judgement from here on. A stored state that cannot
    /// be read is replaced by this replica's (and said in the log).
    private func writeSharedPolicyState(of app: AppID, in state: inout State, write: ((String?) -> String?) throws(StoreError) -> Void) throws(StoreError) {
        guard let mine = state.engine.policyState(of: app) else { return try write { _ in nil } }
        let baseline = state.sharedPolicyBaselines[app]
        var merged = mine
        var unreadable: String?
        var written: String?
        var texts = state.policyStateTexts
        defer { state.policyStateTexts = texts }
        do {
            try write { stored in
                merged = mine
                unreadable = nil
                if let stored {
                    do {
                        merged = try JSONDecoder().decode(AppPolicyState.self, from: Data(stored.utf8)).merging(changesIn: mine, since: baseline)
                    } catch {
                        unreadable = "\(error)"
                    }
                }
                written = texts.text(of: merged, for: app)
                return written
            }
        } catch {
            // The server may have been lost during the commit: if the merge is what the
            // store holds now, it landed, and merging the same changes again would count
            // them twice. Otherwise memory and baseline stay, and the next write retries.
            if let written, let store, (try? store.appSetting(app: app, name: AppSettingName.policyState)) == written {
                adoptWritten(merged, of: app, in: &state)
            }
            throw error
        }
        if let unreadable { note(.warning, app: app, "the shared usage history could not be read (\(unreadable)); this replica's replaced it", in: &state) }
        adoptWritten(merged, of: app, in: &state)
    }

    /// What this replica wrote into the shared store is its memory and its baseline.
    private func adoptWritten(_ merged: AppPolicyState, of app: AppID, in state: inout State) {
        state.engine.restorePolicyState(merged, of: app)
        state.sharedPolicyBaselines[app] = merged
    }

    /// The user brought `app` to the foreground: learned by the usage model; lifts a force-quit.
    public func appForegrounded(_ app: AppID) {
        if let uplink {
            if !movingAtTheDaemonsWord.withLock({ $0 }) { uplink.post(.lifecycle(.foreground)) }
            return
        }
        mutate { state, now in
            let effects = state.engine.handle(.appForegrounded(app), at: now)
            savePolicyState(of: app, in: &state)
            return effects
        }
    }

    /// `app` moved to the background. Under bgtaskd the daemon learns it (an app it
    /// launched is suspended once idle); the embedded engine has nothing to do with it.
    public func appBackgrounded(_ app: AppID) {
        if movingAtTheDaemonsWord.withLock({ $0 }) { return }
        uplink?.post(.lifecycle(.background))
    }

    /// `app` began its first background assertion or ended its last. Under bgtaskd the
    /// daemon learns it (it does not suspend a process holding one); the embedded engine has
    /// nothing to do with it (the app's lifecycle keeps the window).
    public func appAssertionsChanged(_ app: AppID, held: Bool) {
        uplink?.post(.assertionsHeld(held))
    }

    /// The user force-quit `app`: no background launches until it is opened again, and its
    /// queued continued-processing requests are cancelled (Apple: "The system cancels queued
    /// BGContinuedProcessingTaskRequest objects if someone closes your app using the app
    /// switcher"), from disk first as ``cancel(_:)`` removes; one the store does not take
    /// stays pending, with an error logged.
    public func appForceQuit(_ app: AppID) {
        if let uplink { uplink.post(.lifecycle(.forceQuit)); return }
        var cancelled: [RequestKey] = []
        mutate { state, now in
            var effects: [EngineEffect] = []
            for request in state.engine.pendingRequests(of: app) where request.continuedProcessing != nil {
                do {
                    try store?.deleteRequest(request.key)
                } catch {
                    note(.error, app: app, "could not remove the queued continued processing '\(request.identifier)' from the store at the force-quit; it stays pending: \(error)", in: &state)
                    continue
                }
                cancelled.append(request.key)
                state.removedHere.note(request.key, at: now)
                note(.info, app: app, "cancelled the queued continued processing '\(request.identifier)': the app was force-quit", in: &state)
                effects += state.engine.handle(.requestCancelled(request.key), at: now)
            }
            effects += state.engine.handle(.appForceQuit(app), at: now)
            savePolicyState(of: app, in: &state)
            return effects
        } prefix: { now in cancelled.map { .cancelled($0, at: now) } }
    }

    /// Replaces the policy configuration (validated by `PolicyConfiguration.parse`).
    public func setPolicyConfiguration(_ configuration: PolicyConfiguration) {
        mutate { state, now in state.engine.setPolicyConfiguration(configuration, at: now) }
    }

    /// Turns the manual launch switch (`SchedulerConfiguration.launchesOnlyWhenSimulated`,
    /// `BGTASK_MANUAL_LAUNCH=1`) on or off; off, what is ready launches at once.
    public func setLaunchesOnlyWhenSimulated(_ manual: Bool) {
        mutate { state, now in state.engine.setLaunchesOnlyWhenSimulated(manual, at: now) }
    }

    /// The policy configuration in force.
    public var policyConfiguration: PolicyConfiguration { state.withLock { $0.engine.policies.configuration } }

    /// Why the request `key` has not run (the same judgement the engine makes).
    public func explain(_ key: RequestKey) -> Explanation {
        let now = clock.now()
        return state.withLock { $0.engine.explain(key, at: now) }
    }

    /// Delivers what is due now (after an app finished launching, or at start-up).
    public func runDueWork() {
        if let uplink {
            // Under the daemon this is the end of the registration window: the daemon now
            // hands over the runs it launched the app for.
            let registered = linkedContexts.flatMap { $0.scheduler.registeredIdentifiers }.sorted()
            uplink.post(.finishedLaunching(registered: registered))
            return
        }
        // What other replicas changed while the app was launching (not applied then: its
        // handlers were not registered yet).
        if sharedStore != nil { applySharedChange(.everything) }
        mutate { state, now in state.engine.handle(.timerFired, at: now) }
    }

    /// Turns an app's Background App Refresh switch on or off: saved first, then an engine
    /// event (turned on, what the switch held is judged again and may launch at once).
    /// When the save fails the switch does not change (in memory either: a restart would
    /// read the old value) and an error is logged.
    ///
    /// Returns whether the switch changed, judged in the same hold of the lock as the change
    /// (so of two threads turning it off at once, one sees the change); `nil` under bgtaskd,
    /// whose switch another client may turn at the same time (read it before and after).
    @discardableResult
    public func setBackgroundRefresh(_ enabled: Bool, for app: AppID) -> Bool? {
        setBackgroundRefreshSaying(enabled, for: app).changed
    }

    /// ``setBackgroundRefresh(_:for:)``, with the store's refusal when it did not take the
    /// switch: what `bgtask settings` answers with (it said only "see the daemon's log":
    /// an outside full-disk probe).
    public func setBackgroundRefreshSaying(_ enabled: Bool, for app: AppID) -> (changed: Bool?, problem: String?) {
        if let uplink {
            do { _ = try linkedCall(.setBackgroundRefresh(enabled: enabled), uplink: uplink) } catch {
                log(.error, app: app, "could not change the Background App Refresh switch: \(error)")
                return (nil, "\(error)")
            }
            return (nil, nil)
        }
        var changed = false
        var problem: String?
        mutate { state, now in
            let before = state.engine.registration(of: app)?.backgroundRefreshEnabled ?? false
            do {
                try store?.setAppSetting(enabled ? "on" : "off", app: app, name: AppSettingName.backgroundRefresh)
            } catch {
                let refusal = "could not save the Background App Refresh switch (\(enabled ? "on" : "off")); it stays \(enabled ? "off" : "on"): \(error)"
                problem = refusal
                note(.error, app: app, refusal, in: &state)
                return []
            }
            let effects = state.engine.handle(.backgroundRefreshChanged(app, enabled: enabled), at: now)
            changed = before != (state.engine.registration(of: app)?.backgroundRefreshEnabled ?? false)
            return effects
        }
        return (changed, problem)
    }

    /// Sets (or with `nil` removes) the retry policy of `key`'s identifier: the engine
    /// retries failed runs itself (see ``RetryPolicy``).
    public func setRetryPolicy(_ policy: RetryPolicy?, for key: RequestKey) {
        if let uplink {
            uplink.post(.setRetryPolicy(identifier: key.identifier, policy: policy.map(RetryPolicyTerms.init)))
            return
        }
        state.withLock { $0.engine.setRetryPolicy(policy, for: key) }
    }

    /// Whether the app's Background App Refresh switch is on.
    public func backgroundRefreshEnabled(for app: AppID) -> Bool {
        if let uplink {
            guard case .flag(let enabled)? = try? linkedCall(.backgroundRefreshStatus, uplink: uplink) else { return false }
            return enabled
        }
        return state.withLock { $0.engine.registration(of: app)?.backgroundRefreshEnabled ?? false }
    }

    /// Reports an event that happened outside the engine (app lifecycle, assertions).
    func trace(_ event: SchedulerTraceEvent) {
        let observers = state.withLock { $0.observers }
        for observer in observers { observer(event) }
    }

    // MARK: Requests

    /// Checks, persists, then applies a submission: when it returns, the request is on disk.
    /// Threads that submit at once share commits (``SubmitGroup``): one transaction writes
    /// every request that arrived while the previous one was in flight. What a shared commit
    /// leads to (its `.submitted` traces to ``observe(_:)``'s observers, launches) is carried
    /// out by the thread that led it, which may be after this call returned on another
    /// thread: the order of trace events is the order of the state's changes, not of each
    /// submitting thread's later calls (a cancel made at once may be traced first).
    public func submit(_ request: PendingRequest) throws(SubmitRejection) {
        if let uplink {
            do { _ = try linkedCall(.submit(request), uplink: uplink) } catch { throw Self.submitRejection(error) }
            trace(.submitted(request, at: clock.now()))
            return
        }
        // One that must start at once is judged against the runs in progress, which a
        // batch changes as it is applied: alone, as `submit(batch:)` would take it.
        if request.continuedProcessing?.strategy == .fail { return try submitAlone(request) }
        try submitGroup.submit(request) { batch in
            // Alone (the simulator, a single submitter): the plain path, as before.
            guard batch.count > 1 else {
                let (outcome, carryOut) = prepareSubmit(batch[0])
                return ([outcome], carryOut)
            }
            return submitDeferringEffects(batch: batch)
        }.get()
    }

    /// ``submit(_:)`` of one request in a commit of its own.
    private func submitAlone(_ request: PendingRequest) throws(SubmitRejection) {
        let (outcome, carryOut) = prepareSubmit(request)
        carryOut()
        try outcome.get()
    }

    /// Checks, persists and applies one submission under the lock; returns its outcome and
    /// what is to be carried out after (``changeState(_:prefix:)``).
    private func prepareSubmit(_ request: PendingRequest) -> (Result<Void, SubmitRejection>, () -> Void) {
        var result: Result<Void, SubmitRejection> = .success(())
        let carryOut = changeState({ (state, now) -> [EngineEffect] in
            do throws(SubmitRejection) {
                try Self.checkAttached(request, in: state)
                try state.engine.checkSubmit(request, at: now)
                guard let store else {
                    throw SubmitRejection(.unavailable, "the scheduler cannot schedule '\(request.identifier)': \(unavailableReason ?? "no store")")
                }
                do {
                    try store.upsertRequest(request)
                } catch {
                    throw SubmitRejection(.unavailable, "the scheduler cannot schedule '\(request.identifier)': \(error)")
                }
                storeTookAWrite(&state, at: now)
                return state.engine.submit(request, at: now)
            } catch {
                result = .failure(error)
                return []
            }
        }, prefix: { now in
            if case .failure = result { return [] }
            return [.submitted(request, at: now)]
        })
        return (result, carryOut)
    }

    /// Whether ``detachAllApps()`` ran (a simulated device that shut down): submissions are
    /// refused, and the simulator plays nothing more.
    public var hasDetachedAllApps: Bool { state.withLock { $0.detachedAll } }

    /// Refuses a submission once every app was detached (a simulated device that shut
    /// down): a context kept past its device's end would otherwise launch a run nobody hosts.
    private static func checkAttached(_ request: PendingRequest, in state: State) throws(SubmitRejection) {
        guard state.detachedAll else { return }
        throw SubmitRejection(.unavailable, "the scheduler cannot schedule '\(request.identifier)': it has let go of its apps (its simulated device shut down)")
    }

    /// Submits several requests with one commit (group commit): each is checked as
    /// ``submit(_:)`` checks it, counting the batch's earlier accepted requests among the
    /// app's pending ones (``SchedulerEngine/checkSubmit(_:at:after:)``), the accepted ones
    /// are written in one transaction, and only then applied, all under one hold of the
    /// lock. Returns each request's result, in order; a request that returned success is
    /// on disk. At most one request per key (a second would replace the first within one
    /// statement; callers keep it for the next batch: bgtaskd's `GroupCommitter`,
    /// ``SubmitGroup``). A continued-processing
    /// request that must start at once (strategy `fail`) is judged against the runs in
    /// progress, which the batch's other requests change as they are applied: it is
    /// submitted on its own, after the batch, so the cap on concurrent continued
    /// processing holds across apps.
    /// - Precondition: no two requests with the same key.
    public func submit(batch requests: [PendingRequest]) -> [Result<Void, SubmitRejection>] {
        if Set(requests.map(\.key)).count != requests.count { fatalError("submit(batch:) takes at most one request per key") }
        guard uplink == nil else { return requests.map { request in Result { () throws(SubmitRejection) in try submit(request) } } }
        let mustStartNow = requests.indices.filter { requests[$0].continuedProcessing?.strategy == .fail }
        guard mustStartNow.isEmpty else {
            let alone = Set(mustStartNow)
            var results = submit(batch: requests.indices.filter { !alone.contains($0) }.map { requests[$0] })[...]
            return requests.indices.map { index in
                alone.contains(index) ? Result { () throws(SubmitRejection) in try submitAlone(requests[index]) } : results.removeFirst()
            }
        }
        let (results, carryOut) = submitDeferringEffects(batch: requests)
        carryOut()
        return results
    }

    /// ``submit(batch:)`` of requests none of which must start at once, without carrying
    /// out what the commit leads to (traces, launches): that is returned, for a group
    /// commit's leader to run once it has answered the batch's other submitters, so that
    /// none of them waits on app code run on the leader's thread.
    private func submitDeferringEffects(batch requests: [PendingRequest]) -> ([Result<Void, SubmitRejection>], () -> Void) {
        var results: [Result<Void, SubmitRejection>] = []
        var accepted: [PendingRequest] = []
        let carryOut = changeState({ state, now in
            for request in requests {
                do throws(SubmitRejection) {
                    try Self.checkAttached(request, in: state)
                    try state.engine.checkSubmit(request, at: now, after: accepted)
                    accepted.append(request)
                    results.append(.success(()))
                } catch {
                    results.append(.failure(error))
                }
            }
            guard !accepted.isEmpty else { return [] }
            // Worded as a submission alone is (``prepareSubmit(_:)``): whether
            // another thread submitted at the same moment does not change the message.
            let problem: String?
            if let store {
                do {
                    try store.upsertRequests(accepted)
                    storeTookAWrite(&state, at: now)
                    problem = nil
                } catch {
                    problem = "\(error)"
                }
            } else {
                problem = unavailableReason ?? "no store"
            }
            if let problem {
                results = zip(requests, results).map { request, result in
                    guard case .success = result else { return result }
                    return .failure(SubmitRejection(.unavailable, "the scheduler cannot schedule '\(request.identifier)': \(problem)"))
                }
                accepted.removeAll()
                return []
            }
            var effects: [EngineEffect] = []
            for request in accepted {
                effects += state.engine.submit(request, at: now)
            }
            return effects
        }, prefix: { now in accepted.map { .submitted($0, at: now) } })
        return (results, carryOut)
    }

    /// Removes a pending request: from disk, then from the engine, in one hold of the lock
    /// (as ``submit(_:)``), so a racing submission lands wholly before or after it. When the
    /// delete fails the request stays pending (in memory too, as on disk, so a restart
    /// agrees) and an error is logged; returned too, for bgtaskd to answer the app with (its
    /// own log is the app's developer's, not the daemon's: an outside full-disk probe).
    @discardableResult
    public func cancel(_ key: RequestKey) -> String? {
        if let uplink {
            cancelLinked(.cancel(identifier: key.identifier), app: key.app, what: "'\(key.identifier)'", uplink: uplink)
            return nil
        }
        var deleted = false
        var problem: String?
        mutate { state, now in
            do {
                try store?.deleteRequest(key)
            } catch {
                let refusal = "could not remove '\(key.identifier)' from the store; it stays pending: \(error)"
                problem = refusal
                note(.error, app: key.app, refusal, in: &state)
                return []
            }
            deleted = true
            state.removedHere.note(key, at: now)
            return state.engine.handle(.requestCancelled(key), at: now)
        } prefix: { now in deleted ? [.cancelled(key, at: now)] : [] }
        return problem
    }

    /// Cancels through bgtaskd; a cancel the daemon did not answer (it is out, or stopped)
    /// is sent again first thing on the next connection (a cancel is idempotent), so the
    /// request does not run later as if the app had not cancelled it. One the daemon
    /// refused is not.
    private func cancelLinked(_ request: AppRequest, app: AppID, what: String, uplink: any SchedulerUplink) {
        do {
            // A failure the daemon answered is its refusal; one thrown is the connection's.
            if case .failed(let refusal) = try uplink.call(request) {
                log(.error, app: app, "could not cancel \(what): \(refusal)")
            }
        } catch {
            if uplink.sendWhenConnected(request) {
                log(.warning, app: app, "could not cancel \(what) now (\(error)); the cancel is sent when bgtaskd is back")
            } else {
                log(.error, app: app, "could not cancel \(what): \(error)")
            }
        }
    }

    /// Removes every pending request of `app`, atomically as ``cancel(_:)``; when the delete
    /// fails every request stays pending and an error is logged, and returned.
    @discardableResult
    public func cancelAll(of app: AppID) -> String? {
        if let uplink {
            cancelLinked(.cancelAll, app: app, what: "the pending requests", uplink: uplink)
            return nil
        }
        var removed: [RequestKey] = []
        var problem: String?
        mutate { state, now in
            do {
                try store?.deleteAllRequests(app: app)
            } catch {
                let refusal = "could not remove the pending requests from the store; they stay pending: \(error)"
                problem = refusal
                note(.error, app: app, refusal, in: &state)
                return []
            }
            removed = state.engine.pendingRequests(of: app).map(\.key)
            state.removedHere.note(app, at: now)
            return state.engine.handle(.allRequestsCancelled(app), at: now)
        } prefix: { now in removed.map { .cancelled($0, at: now) } }
        return problem
    }

    /// A shared store: takes into this replica's memory what other replicas (and the sweep
    /// of expired leases) wrote into the apps' stored policy state since this replica last
    /// read or wrote it, keeping what it learned itself and has not written yet (a
    /// three-way merge; the stored state becomes the baseline). Called at each heartbeat,
    /// so a strike another replica recorded weighs here within one beat, not only after
    /// this replica's next write. Under the driver's lock, so a write of this replica
    /// cannot land between the read and the merge.
    func refreshSharedPolicyStates() {
        guard sharedStore != nil, let store else { return }
        mutate { state, _ in
            let texts: [AppID: String]
            do {
                texts = try store.appSettings(named: AppSettingName.policyState)
            } catch {
                note(.warning, app: nil, "could not read the apps' shared usage histories: \(error)", in: &state)
                return []
            }
            var changed = false
            for (app, text) in texts.sorted(by: { $0.key < $1.key }) {
                guard let registration = state.engine.registration(of: app),
                      let stored = try? JSONDecoder().decode(AppPolicyState.self, from: Data(text.utf8)),
                      stored != state.sharedPolicyBaselines[app] else { continue }
                if let mine = state.engine.policyState(of: app) {
                    state.engine.restorePolicyState(stored.merging(changesIn: mine, since: state.sharedPolicyBaselines[app]), of: app)
                } else {
                    // Nothing learned here yet: the stored state, with this replica's switch.
                    var adopted = stored
                    adopted.backgroundRefreshEnabled = registration.backgroundRefreshEnabled
                    state.engine.restorePolicyState(adopted, of: app)
                }
                state.sharedPolicyBaselines[app] = stored
                changed = true
            }
            return changed ? [.wake(at: state.engine.nextWake)] : []
        }
    }

    /// What the policies know of `app` now (usage history, throttle, energy spent), or
    /// `nil` before they learned anything.
    func policyState(of app: AppID) -> AppPolicyState? {
        state.withLock { $0.engine.policyState(of: app) }
    }

    /// Copies of the pending requests of `app`.
    public func pendingRequests(of app: AppID) -> [PendingRequest] {
        if let uplink {
            do {
                if case .pending(let requests) = try linkedCall(.pending, uplink: uplink) { return requests }
            } catch {
                log(.error, app: app, "could not read the pending requests: \(error)")
            }
            return []
        }
        return state.withLock { $0.engine.pendingRequests(of: app) }
    }

    /// How many requests are pending (without copying them).
    public var pendingCount: Int { state.withLock { $0.engine.pendingCount } }

    /// Every pending request.
    public var allPendingRequests: [PendingRequest] { state.withLock { $0.engine.allPendingRequests } }

    /// Runs in progress.
    public var activeRuns: [RunRecord] { state.withLock { $0.engine.activeRuns } }

    /// Where a pending request sits (waiting, eligible, blocked...).
    public func location(of key: RequestKey) -> EligibilityIndex.Location? {
        state.withLock { $0.engine.location(of: key) }
    }

    /// The instant of the engine's next wake, if any.
    public var nextWake: Date? { state.withLock { $0.engine.nextWake } }

    // MARK: Events from the world

    /// The driver's timer fired.
    public func timerFired() {
        mutate { state, now in
            state.wakeAt = nil
            return state.engine.handle(.timerFired, at: now)
        }
    }

    /// The device conditions changed.
    public func conditionsChanged(_ conditions: Conditions) {
        mutate { state, now in
            let learned = state.engine.networkHistoryRecorded
            let effects = state.engine.handle(.conditionsChanged(conditions), at: now)
            // The network came back after a long loss or a stay worth learning, or a long hold
            // on refreshes ended, which every app's usage model learned.
            if state.engine.networkHistoryRecorded != learned {
                for app in state.engine.appsWithPolicyState { savePolicyState(of: app, in: &state) }
            }
            return effects
        } prefix: { now in [.conditionsChanged(conditions, at: now)] }
    }

    /// Whether the device's slow readings matter now (``SchedulerEngine/dependsOnSlowReadings``):
    /// a run is in progress, or a due request is judged on them. The conditions sampler runs
    /// only then, so an idle process, or one whose requests are all due later, never wakes.
    public var dependsOnConditions: Bool {
        state.withLock { $0.engine.dependsOnSlowReadings }
    }

    /// Keeps `object` (a timer source) alive as long as the driver.
    func retain(_ object: AnyObject) {
        state.withLock { $0.retained.append(object) }
    }

    /// The current conditions as the engine knows them.
    public var conditions: Conditions { state.withLock { $0.engine.conditions } }

    /// The handler of `run` called `setTaskCompleted(success:)`.
    public func taskCompleted(_ run: RunID, success: Bool) {
        if let uplink {
            // A run of a connection that closed was ended with it: the daemon that follows
            // never handed it out.
            if linkedRuns.withLock({ $0[run] != nil }) { uplink.post(.taskCompleted(run: run, success: success)) }
            return
        }
        mutate { state, now in state.engine.handle(.taskCompleted(run, success: success), at: now) }
    }

    /// The expiration of `run` was delivered; `handlerWasSet` says whether the app had one.
    public func expirationDelivered(_ run: RunID, handlerWasSet: Bool) {
        if let uplink {
            if linkedRuns.withLock({ $0[run] != nil }) { uplink.post(.expirationDelivered(run: run, handlerWasSet: handlerWasSet)) }
            return
        }
        mutate { state, now in state.engine.handle(.expirationDelivered(run, handlerWasSet: handlerWasSet), at: now) }
    }

    /// The progress of a continued-processing `run`, as its host read it.
    public func progressSampled(_ run: RunID, completedUnitCount: Int64) {
        mutate { state, now in state.engine.handle(.progressSampled(run, completedUnitCount: completedUnitCount), at: now) }
    }

    /// Calls `body` after every call the engine has made so far to `app`'s remote host, in
    /// the same per-app order, never under the driver's lock: bgtaskd tells an app's
    /// supervisor to quit only after the terminations and launches the engine sent it, so a
    /// launch still on its way cannot start a process after the quit.
    public func afterHostCalls(of app: AppID, _ body: @escaping @Sendable () -> Void) {
        hostCalls.enqueue(app, body)
        hostCalls.drain()
    }

    /// The host could not start `run` (the app never connected, had no handler...).
    public func launchFailed(_ run: RunID, reason: String) {
        mutate { state, now in state.engine.handle(.launchFailed(run, reason: reason), at: now) }
    }

    /// bgtaskd could not start the app's process for `run`, or it did not finish launching
    /// (its executable cannot be run; it timed out, exited or lost its connection first; it
    /// was told to quit; the daemon stopped): the run is recorded as failed, with
    /// a throttle strike, and its request filed again, as the app never got the task (a
    /// fixed install runs it, the throttle spacing the attempts). Not a remote wake's: only
    /// `bgtask push` files those, within its limit.
    public func appNotStarted(_ run: RunID, reason: String) {
        mutate { state, now in
            let key = state.engine.activeRuns.first { $0.id == run }?.request.key
            let restoring = key.map { $0.identifier != RemoteWake.identifier(for: $0.app) } ?? false
            return state.engine.handle(.appNotStarted(run, reason: reason, restoringRequest: restoring), at: now)
        }
    }

    /// The app whose run `run` is, while it is in progress.
    public func app(ofRun run: RunID) -> AppID? {
        state.withLock { $0.engine.activeRuns.first { $0.id == run }?.app }
    }

    /// The process hosting `app` is about to exit (SIGTERM under a supervisor, then the app
    /// suspended with ``BGApplication/handleTerminationSignals(exitWhenDone:)``): its runs
    /// in progress get their expiration now, and nothing more launches for it. Wait for
    /// them with ``whenRunsEnd(of:_:)`` before exiting, so each is recorded as it ended
    /// (expired, or terminated after the grace period), not found unfinished at the next
    /// start and restored as if nothing had happened.
    public func appTerminating(_ app: AppID) {
        // Under bgtaskd the runs are the daemon's: this process expires what it was handed.
        if uplink != nil { expireLinkedRuns(reason: "the app is terminating"); return }
        mutate { state, now in state.engine.handle(.appTerminating(app), at: now) }
    }

    /// Gives every run of `app` in progress its expiration now, `reason` saying why (an
    /// out-of-process host: bgtaskd, when the user starts another process of an app whose
    /// own process runs a task); launches go on.
    public func expireRuns(of app: AppID, reason: String) {
        mutate { state, now in state.engine.handle(.runsExpired(app, reason: reason), at: now) }
    }

    /// This host ends `app`'s process at the user's word (bgtaskd: a force-quit, after
    /// ``appForceQuit(_:)``; a reinstall of another executable): its runs get their expiration
    /// now, `reason` saying why, and however they end it is no throttle strike
    /// (``EngineEvent/appEndedByTheUser(_:reason:)``).
    public func appEndedByTheUser(_ app: AppID, reason: String) {
        mutate { state, now in state.engine.handle(.appEndedByTheUser(app, reason: reason), at: now) }
    }

    /// Calls `body` (not under the lock) once no run of `app` is in progress: now when none is.
    public func whenRunsEnd(of app: AppID, _ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if uplink != nil {
                guard linkedRuns.withLock({ !$0.isEmpty }) else { return true }
                state.runWaiters[app, default: []].append(body)
                return false
            }
            guard state.engine.activeRuns.contains(where: { $0.app == app }) else { return true }
            state.runWaiters[app, default: []].append(body)
            return false
        }
        if now { body() }
    }

    /// The process running `run` died (out-of-process hosts).
    public func runCrashed(_ run: RunID, reason: String) {
        mutate { state, now in state.engine.handle(.runCrashed(run, reason: reason), at: now) }
    }

    // MARK: Testing hooks

    /// Launches the pending request under `key` now (Apple's `_simulateLaunchForTaskWithIdentifier`).
    /// Returns the run it started (`nil` in an app linked to bgtaskd, whose engine numbers
    /// it): its host was called by the time this returns, unless another thread was making
    /// that app's host calls (``afterHostCalls(of:_:)`` waits for them).
    @discardableResult
    public func simulateLaunch(_ key: RequestKey) throws(EngineError) -> RunID? {
        if let uplink {
            do { _ = try linkedCall(.simulateLaunch(identifier: key.identifier), uplink: uplink) } catch { throw Self.engineError(error) }
            return nil
        }
        var launched: RunID?
        try mutate { (state, now) throws(EngineError) in
            let effects = try state.engine.simulateLaunch(key, at: now)
            launched = Self.launchedRun(of: key, in: effects)
            return effects
        }
        return launched
    }

    /// Launches `request` now as a remote wake (``SchedulerEngine/wake(_:at:)``): not queued,
    /// so not written as pending; its run is recorded at launch as every run is. Returns
    /// the run, as ``simulateLaunch(_:)`` does. A wake under an identifier the app files
    /// itself replaces its pending request; if the store refuses the run's start at the
    /// launch, the start written later consumes only the wake's own submission, so the
    /// replaced request stays on disk and runs again after a restart. bgtaskd's wakes use
    /// the system's identifier (``RemoteWake/identifier(for:)``), which nothing else files.
    @discardableResult
    public func wake(_ request: PendingRequest) throws(SubmitRejection) -> RunID? {
        // A wake is no pending row a replica could claim: refused, not run unclaimed
        // (remote wakes are bgtaskd's, whose store is its own; docs/replicas.md).
        if let shared = sharedStore {
            throw SubmitRejection(.unavailable, "a remote wake cannot be run on a store replicas share (\(shared.storeDescription)): no replica could claim it")
        }
        var launched: RunID?
        try mutate { (state, now) throws(SubmitRejection) in
            let effects = try state.engine.wake(request, at: now)
            launched = Self.launchedRun(of: request.key, in: effects)
            return effects
        }
        return launched
    }

    /// The run of `key` that `effects` launch, if any.
    private static func launchedRun(of key: RequestKey, in effects: [EngineEffect]) -> RunID? {
        for effect in effects {
            if case .launch(let record, _, _) = effect, record.request.key == key { return record.id }
        }
        return nil
    }

    /// Expires the run of `key` now (Apple's `_simulateExpirationForTaskWithIdentifier`).
    public func simulateExpiration(_ key: RequestKey) throws(EngineError) {
        if let uplink {
            do { _ = try linkedCall(.simulateExpiration(identifier: key.identifier), uplink: uplink) } catch { throw Self.engineError(error) }
            return
        }
        try mutate { (state, now) throws(EngineError) in try state.engine.simulateExpiration(key, at: now) }
    }

    // MARK: Effects

    /// Runs `change` on the engine under the lock, carries out its effects (store writes
    /// under the lock, app calls after), and reports trace events to observers. `prefix`
    /// runs after `change`, under the lock, and gives the trace events that come first.
    ///
    /// A change that may refuse throws: then nothing it returned is carried out, `prefix`
    /// is not asked, and the error is rethrown after the lock is released (a change that
    /// cannot fail has `Failure` == `Never`).
    private func mutate<Failure: Error>(
        _ change: (inout State, Date) throws(Failure) -> [EngineEffect],
        prefix: (Date) -> [SchedulerTraceEvent] = { _ in [] }
    ) throws(Failure) {
        var failure: Failure?
        let carryOut = changeState({ (state, now) -> [EngineEffect] in
            do throws(Failure) { return try change(&state, now) } catch {
                failure = error
                return []
            }
        }, prefix: { now in failure == nil ? prefix(now) : [] })
        carryOut()
        if let failure { throw failure }
    }

    /// The first half of ``mutate(_:prefix:)``: changes the state under the lock and
    /// returns what must then be carried out outside it (traces to observers, launches,
    /// host calls: app code among them), for the caller to run when it is ready (a group
    /// commit's leader, once it has let its followers go).
    private func changeState(
        _ change: (inout State, Date) -> [EngineEffect],
        prefix: (Date) -> [SchedulerTraceEvent]
    ) -> () -> Void {
        let (actions, observers) = state.withLock { state -> ([Action], [@Sendable (SchedulerTraceEvent) -> Void]) in
            let now = clock.now()
            let effects = change(&state, now)
            var actions = prefix(now).map(Action.trace)
            for effect in effects {
                apply(effect, to: &state, at: now, actions: &actions)
            }
            while !state.followUps.isEmpty {
                let next = state.followUps
                state.followUps = []
                for effect in next { apply(effect, to: &state, at: now, actions: &actions) }
            }
            if !state.notes.isEmpty {
                actions.append(contentsOf: state.notes.map(Action.log))
                state.notes.removeAll()
            }
            if sharedStore != nil {
                // After every event: the engine's run ids, unsorted (renewals take any order).
                let held = state.engine.activeRunIDs + state.unrecordedEnds.map(\.id)
                heldRuns.withLock { $0 = held }
            }
            let depends = state.engine.dependsOnSlowReadings
            if depends != state.dependedOnReadings {
                state.dependedOnReadings = depends
                if !state.workListeners.isEmpty { actions.append(.call(state.workListeners)) }
            }
            return (actions, state.observers)
        }
        return { [self] in
            perform(actions, observers: observers)
            hostCalls.drain()
        }
    }

    /// A read of a shared store failed: what it was for is caught up by the heartbeat's full
    /// read (which also quarantines a bad row), as after a failed claim; nothing launches
    /// here until that read succeeds.
    private func readEverythingLater(_ state: inout State) {
        state.sharedClaimsFailing = true
        sharedCoordinator?.needsHeartbeat()
    }

    /// After a lost claim, the request as the store has it now: the engine's view came
    /// from word of other replicas, which may have been stale (a replacement made elsewhere
    /// is brought in; a request claimed or cancelled elsewhere stays gone). The submission
    /// the claim was for is never brought back: the store no longer has it as such.
    private func catchUpAfterLostClaim(_ record: RunRecord, shared: any SharedSchedulerStorage, state: inout State, at now: Date, actions: inout [Action]) -> [EngineEffect] {
        let key = record.request.key
        do {
            let rows = try shared.pendingRequests(keys: [key]).filter { $0.key == key && $0.submittedAt != record.request.submittedAt }
            return Self.bring(&state.engine, keys: [key], to: rows, at: now)
        } catch {
            actions.append(.log(BGDiagnosticMessage(.error, app: record.app, "could not read '\(record.identifier)' from \(shared.storeDescription) after a lost claim: \(error); reading everything once the store answers")))
            readEverythingLater(&state)
            return []
        }
    }

    /// Writes the end of `record` with what the run taught the policies (throttle, energy
    /// spent): one commit per run, not two.
    private func recordEnd(_ record: RunRecord, in state: inout State) throws(StoreError) {
        if let shared = sharedStore {
            try writeSharedPolicyState(of: record.app, in: &state) { (update) throws(StoreError) in
                try shared.recordRunFinished(record, updatingAppSetting: AppSettingName.policyState, update)
            }
        } else {
            try recordUnrecordedStart(of: record.id, in: &state)
            let learned = policyStateText(of: record.app, in: &state).map { [AppSettingName.policyState: $0] } ?? [:]
            try store?.recordRunFinished(record, appSettings: learned)
        }
    }

    /// Writes the start of `run` if the store did not take it at the launch (it consumes
    /// the submission the run ran, not one made since), unless the store has it already (an
    /// earlier attempt committed, its answer lost).
    private func recordUnrecordedStart(of run: RunID, in state: inout State) throws(StoreError) {
        guard let start = state.unrecordedStarts[run] else { return }
        if try store?.run(run) == nil {
            try store?.recordRunStarted(start, onlyItsOwnSubmission: true)
        }
        state.unrecordedStarts[run] = nil
        state.notes.append(BGDiagnosticMessage(.info, app: start.app, "recorded the start of \(start.id) ('\(start.identifier)') once the store took it"))
    }

    /// Writes the starts the store did not take of runs still going (an ended run's start goes
    /// with its end), oldest first, until one fails again; `false` when the store is still
    /// away (the ends then wait for the next attempt too). A start the store refuses for good
    /// is given up, said.
    private func writeUnrecordedStarts(_ state: inout State) -> Bool {
        let ending = Set(state.unrecordedEnds.map(\.id))
        for run in state.unrecordedStarts.keys.sorted() where !ending.contains(run) {
            do throws(StoreError) {
                try recordUnrecordedStart(of: run, in: &state)
            } catch where error.mayPassIfRetried {
                return false
            } catch {
                let start = state.unrecordedStarts.removeValue(forKey: run)
                state.notes.append(BGDiagnosticMessage(.warning, app: start?.app, "stopped writing the start of \(run) ('\(start?.identifier ?? "")'): \(error)"))
            }
        }
        return true
    }

    /// The most ends kept for another attempt: a store that takes none for long (a disk full
    /// while runs go on launching) would otherwise hold every run's end in memory; past it
    /// the oldest is given up, said.
    static let unrecordedEndsLimit = 1_000

    /// The waits between attempts at the ends the store did not take: 1 s, doubling to 30 s.
    static let endRetryBackoff = RetryPolicy.exponentialBackoff(initial: 1, cap: 30)

    /// Keeps `record`, whose end the store did not take, for another attempt.
    private func keepForRetry(_ record: RunRecord, in state: inout State, at now: Date) {
        state.unrecordedEnds.append(record)
        if state.unrecordedEnds.count > Self.unrecordedEndsLimit {
            let dropped = state.unrecordedEnds.removeFirst()
            let neverStarted = state.unrecordedStarts.removeValue(forKey: dropped.id) != nil
            state.notes.append(BGDiagnosticMessage(.error, app: dropped.app, "gave up recording the end of \(dropped.id) ('\(dropped.identifier)'): more than \(Self.unrecordedEndsLimit) ends wait for the store; "
                + (neverStarted ? "its start was never written either, so its request stays pending on disk and runs again after a restart" : "the next start records it as interrupted")))
        }
        scheduleEndRetry(&state, at: now)
    }

    /// Arms the timer of the next attempt at the unrecorded ends, unless one is armed.
    private func scheduleEndRetry(_ state: inout State, at now: Date) {
        guard state.endRetryTimer == nil, !state.detachedAll else { return }
        state.endRetryFailures += 1
        let delay = Self.endRetryBackoff.delay(afterFailedAttempt: state.endRetryFailures) ?? Self.endRetryBackoff.maximumDelay
        armEndRetry(&state, at: now.addingTimeInterval(delay), broughtForward: false)
    }

    /// Arms the attempt at `instant`, replacing (and cancelling) any armed before.
    private func armEndRetry(_ state: inout State, at instant: Date, broughtForward: Bool) {
        state.endRetryTimer?.cancel()
        state.endRetryGeneration += 1
        let generation = state.endRetryGeneration
        state.endRetryTimer = clock.schedule(at: instant) { [weak self] in
            self?.retryUnrecordedEnds(generation: generation, broughtForward: broughtForward)
        }
    }

    /// Writes again the ends the store did not take, oldest first, until one fails again (the
    /// store still away: the rest wait for the next attempt rather than each waiting out the
    /// store under the driver's lock). An end the store already holds (an earlier attempt
    /// committed though its answer was lost) is not written twice, which would merge what
    /// the run taught the policies twice; one the store ended otherwise (its lease ran out
    /// and it was ended as interrupted) is given up, said.
    private func retryUnrecordedEnds(generation: Int, broughtForward: Bool) {
        mutate { state, now in
            guard generation == state.endRetryGeneration, state.endRetryTimer != nil else { return [] }
            state.endRetryTimer = nil
            // The backoff's own attempt opens a new wait that a write may cut short.
            if !broughtForward { state.endRetryBroughtForward = false }
            let storeTookTheStarts = writeUnrecordedStarts(&state)
            while storeTookTheStarts, let record = state.unrecordedEnds.first {
                do throws(StoreError) {
                    let stored = try store?.run(record.id)
                    if let stored, stored.endedAt != nil {
                        if stored.outcome == .interrupted {
                            state.notes.append(BGDiagnosticMessage(.warning, app: record.app, "stopped writing the end of \(record.id) ('\(record.identifier)'): the store ended it as interrupted meanwhile (its lease ran out while the store was away), \(record.request.cutOffFate)"))
                        } else {
                            state.notes.append(BGDiagnosticMessage(.info, app: record.app, "the end of \(record.id) ('\(record.identifier)') was recorded already (an earlier attempt committed; its answer was lost)"))
                        }
                    } else {
                        try recordEnd(record, in: &state)
                        state.notes.append(BGDiagnosticMessage(.info, app: record.app, "recorded the end of \(record.id) ('\(record.identifier)') once the store took it"))
                    }
                } catch where error.mayPassIfRetried {
                    break
                } catch {
                    state.unrecordedStarts[record.id] = nil
                    state.notes.append(BGDiagnosticMessage(.warning, app: record.app, "stopped writing the end of \(record.id) ('\(record.identifier)'): \(error)"))
                }
                state.unrecordedEnds.removeFirst()
            }
            if state.unrecordedEnds.isEmpty, state.unrecordedStarts.isEmpty {
                state.endRetryFailures = 0
                state.endRetryBroughtForward = false
            } else {
                scheduleEndRetry(&state, at: now)
            }
            // Adopting a merged policy state can move the engine's next wake.
            return [.wake(at: state.engine.nextWake)]
        }
    }

    /// The store just took a write (a submission, another run's end): the next attempt at
    /// the ends it refused before is brought forward to now (on the timer's thread, not in
    /// the writer's call) instead of waiting out the rest of the backoff's wait (up to 30 s,
    /// during which a shared store's leases are renewed for nothing and what the runs taught
    /// the policies is not merged). Once per wait: an attempt that fails again waits the
    /// backoff's next step, so a store that takes other writes but keeps refusing ends (a
    /// row lock held on the app's policy state) is tried at most twice as often as before.
    private func storeTookAWrite(_ state: inout State, at now: Date) {
        guard state.endRetryTimer != nil, !state.endRetryBroughtForward, !state.detachedAll else { return }
        state.endRetryBroughtForward = true
        armEndRetry(&state, at: now, broughtForward: true)
    }

    private func apply(_ effect: EngineEffect, to state: inout State, at now: Date, actions: inout [Action]) {
        switch effect {
        case .launch(let record, let budget, let evaluation):
            if let shared = sharedStore {
                // A store shared by replicas: the run is this replica's only once its claim
                // is committed; otherwise another replica has it, or nobody can have it now.
                var claimed = false
                var lost = false
                if !state.sharedClaimsFailing {
                    do {
                        claimed = try shared.claimRun(record, lease: sharedStoreLease)
                        lost = !claimed
                        if lost { actions.append(.log(BGDiagnosticMessage(.debug, app: record.app, "'\(record.identifier)' was claimed by another replica, or changed there, before \(record.id) started here"))) }
                    } catch {
                        state.sharedClaimsFailing = true
                        actions.append(.log(BGDiagnosticMessage(.error, app: record.app, "could not claim '\(record.identifier)' in \(shared.storeDescription): \(error); nothing is launched here until the store answers again (its requests stay pending there)")))
                        actions.append(.sharedRunStarted)
                    }
                }
                guard claimed else {
                    state.followUps += state.engine.handle(.runNotClaimed(record.id), at: now)
                    if lost { state.followUps += catchUpAfterLostClaim(record, shared: shared, state: &state, at: now, actions: &actions) }
                    return
                }
                state.removedHere.note(record.request.key, at: now)
                actions.append(.sharedRunStarted)
            } else {
                do throws(StoreError) {
                    try store?.recordRunStarted(record)
                } catch where error.mayPassIfRetried {
                    // The run goes on (the app has its time); its start is written once the
                    // store takes it, before its end, so that the log has the run and the
                    // request is consumed (it stays pending on disk until then).
                    actions.append(.log(BGDiagnosticMessage(.error, app: record.app, "could not record the start of \(record.id) ('\(record.identifier)'): \(error); it runs, and its start is written again until the store takes it (a restart before then runs its request again)")))
                    state.unrecordedStarts[record.id] = record
                    scheduleEndRetry(&state, at: now)
                } catch {
                    actions.append(.log(BGDiagnosticMessage(.error, app: record.app, "could not record the start of \(record.id) ('\(record.identifier)'): \(error)")))
                }
            }
            meter?.runStarted(record.id)
            actions.append(.trace(.launched(record, budget: budget, evaluation: evaluation)))
            if let host = state.remoteHosts[record.app] {
                state.remoteRuns[record.id] = record.request.key
                hostCalls.enqueue(record.app) { host.launch(record, budget: budget) }
                return
            }
            guard let context = state.contexts[record.app] else {
                actions.append(.launchFailed(record.id, "\(record.app) is not running and cannot be launched by this driver"))
                return
            }
            guard let task = context.makeTask(for: record) else {
                actions.append(.launchFailed(record.id, "no launch handler registered for task with identifier '\(record.identifier)'"))
                return
            }
            state.tasks[record.id] = task
            actions.append(.invoke(task, context))
        case .expire(let run, let reason, _):
            if let task = state.tasks[run] {
                actions.append(.trace(.expired(run, task.key, reason: reason, at: now)))
                actions.append(.expire(task))
            } else if let (host, key) = remoteRun(run, in: state) {
                actions.append(.trace(.expired(run, key, reason: reason, at: now)))
                hostCalls.enqueue(key.app) { host.expire(run, reason: reason) }
            }
        case .runFinished(let finished):
            let record = measured(finished)
            state.engine.recordEnergy(record.energyJoules ?? 0, for: record.app, at: now)
            do throws(StoreError) {
                try recordEnd(record, in: &state)
                storeTookAWrite(&state, at: now)
            } catch where error.mayPassIfRetried {
                actions.append(.log(BGDiagnosticMessage(.error, app: record.app, "could not record the end of \(record.id) ('\(record.identifier)'): \(error); it is written again until the store takes it\(sharedStore == nil ? "" : ", its lease renewed meanwhile")")))
                keepForRetry(record, in: &state, at: now)
            } catch {
                // Given up: a start never written stays unwritten (alone, it would read as a
                // run in progress, ended as interrupted at the next start).
                state.unrecordedStarts[record.id] = nil
                actions.append(.log(BGDiagnosticMessage(.error, app: record.app, "could not record the end of \(record.id) ('\(record.identifier)'): \(error)")))
            }
            pruneRunLogIfDue(&state, at: now)
            actions.append(.trace(.finished(record)))
            if let task = state.tasks.removeValue(forKey: record.id) {
                actions.append(.finish(task, record))
            } else if let key = state.remoteRuns.removeValue(forKey: record.id), let host = state.remoteHosts[key.app] {
                hostCalls.enqueue(record.app) { host.finished(record) }
            }
            if !state.runWaiters.isEmpty, let waiters = state.runWaiters[record.app],
               !state.engine.activeRuns.contains(where: { $0.app == record.app }) {
                state.runWaiters[record.app] = nil
                actions.append(.call(waiters))
            }
        case .terminate(let run, let reason):
            if let task = state.tasks[run] {
                actions.append(.trace(.terminated(run, task.key, reason: reason, at: now)))
                actions.append(.terminate(task, reason))
            } else if let (host, key) = remoteRun(run, in: state) {
                actions.append(.trace(.terminated(run, key, reason: reason, at: now)))
                hostCalls.enqueue(key.app) { host.terminate(run, reason: reason) }
            }
        case .retryScheduled(let request):
            // The engine filed the retry already; it must be on disk too, or memory and a
            // restart would disagree: when the write fails, the retry is withdrawn.
            do {
                guard let store else { throw SubmitRejection(.unavailable, unavailableReason ?? "no store") }
                // A run of the same request whose start is not on disk yet (its app never
                // started: the request filed again as it was) has it written first: written
                // after, it would consume the request saved here, the same submission.
                // Every such start, oldest first (an earlier run of it may wait too).
                for unwritten in state.unrecordedStarts.values.filter({ $0.request.key == request.key }).sorted(by: { $0.id < $1.id }) {
                    try recordUnrecordedStart(of: unwritten.id, in: &state)
                }
                try store.upsertRequest(request)
                actions.append(.trace(.submitted(request, at: now)))
            } catch {
                actions.append(.log(BGDiagnosticMessage(.error, app: request.app, "retry of '\(request.identifier)' not scheduled: the store could not save it: \(error)")))
                for withdrawn in state.engine.handle(.requestCancelled(request.key), at: now) {
                    apply(withdrawn, to: &state, at: now, actions: &actions)
                }
            }
        case .sampleProgress(let run):
            if let task = state.tasks[run] {
                actions.append(.sampleProgress(task))
            } else if let (host, key) = remoteRun(run, in: state) {
                hostCalls.enqueue(key.app) { host.sampleProgress(run) }
            }
        case .requestsMoved(let transitions):
            for transition in transitions {
                actions.append(.trace(.moved(transition.key, transition.location, at: now, heldBy: transition.heldBy)))
            }
        case .wake:
            // The engine's own next instant: an effect applied inside another's (a run not
            // claimed frees a slot that launches more) may have moved it since.
            let instant = state.engine.nextWake
            guard instant != state.wakeAt else { return }
            state.wakeTimer?.cancel()
            state.wakeAt = instant
            state.wakeTimer = instant.map { clock.schedule(at: $0) { [weak self] in self?.timerFired() } }
        }
    }

    /// The host of a run handed to another process, and the run's request key (known
    /// until the run's end is applied, even when the engine already finished it).
    private func remoteRun(_ run: RunID, in state: State) -> (any RemoteTaskHost, RequestKey)? {
        guard let key = state.remoteRuns[run], let host = state.remoteHosts[key.app] else { return nil }
        return (host, key)
    }

    /// A long-running process prunes the run log at most once a day (opening the store
    /// prunes too): records older than the energy model's retention go.
    private func pruneRunLogIfDue(_ state: inout State, at now: Date) {
        guard let store else { return }
        if let last = state.lastPrune, now.timeIntervalSince(last) < 86_400 { return }
        state.lastPrune = now
        do {
            _ = try store.pruneRuns(olderThan: energyModel.pruneCutoff(now: now))
        } catch {
            note(.warning, app: nil, "could not prune old run records: \(error)", in: &state)
        }
    }

    /// The record with its CPU time, memory and estimated energy.
    private func measured(_ record: RunRecord) -> RunRecord {
        if let meter { return meter.finish(record, model: energyModel) }
        var estimated = record
        estimated.energyJoules = energyModel.estimate(cpuTime: nil, wallTime: record.duration ?? 0)
        return estimated
    }

    private func perform(_ actions: [Action], observers: [@Sendable (SchedulerTraceEvent) -> Void]) {
        for action in actions {
            switch action {
            case .trace(let event):
                for observer in observers { observer(event) }
            case .log(let message):
                log.record(message)
            case .call(let bodies):
                for body in bodies { body() }
            case .sharedRunStarted:
                sharedCoordinator?.needsHeartbeat()
            case .invoke(let task, let context):
                context.deliver(task)
            case .launchFailed(let run, let reason):
                if let app = state.withLock({ $0.engine.activeRuns.first { $0.id == run }?.app }) {
                    log(.error, app: app, reason)
                }
                mutate { state, now in state.engine.handle(.launchFailed(run, reason: reason), at: now) }
            case .expire(let task):
                task.deliverExpiration()
            case .finish(let task, let record):
                task.runDidFinish(record)
            case .terminate(let task, let reason):
                task.terminate(reason: reason)
            case .sampleProgress(let task):
                let completed = task.progressCompletedUnitCount
                mutate { state, now in state.engine.handle(.progressSampled(task.runID, completedUnitCount: completed), at: now) }
            }
        }
    }
}

/// What a replica removed from a shared store in the last ``window`` seconds (see
/// `SchedulerDriver.State.removedHere`): a few entries, pruned as new ones come.
struct RecentRemovals: Sendable {
    /// How long a removal keeps late word in doubt: word normally arrives within
    /// milliseconds, and a doubtful key costs one read.
    static let window: TimeInterval = 10
    private var keys: [RequestKey: Date] = [:]
    private var apps: [AppID: Date] = [:]
    /// The size at which the next note prunes (doubling: amortized O(1) per note).
    private var pruneAt = 64

    mutating func note(_ key: RequestKey, at now: Date) {
        keys[key] = now
        if keys.count + apps.count >= pruneAt { prune(at: now) }
    }

    mutating func note(_ app: AppID, at now: Date) {
        apps[app] = now
        if keys.count + apps.count >= pruneAt { prune(at: now) }
    }

    func contains(_ key: RequestKey, at now: Date) -> Bool {
        if let at = keys[key], now.timeIntervalSince(at) < Self.window { return true }
        if let at = apps[key.app], now.timeIntervalSince(at) < Self.window { return true }
        return false
    }

    private mutating func prune(at now: Date) {
        keys = keys.filter { now.timeIntervalSince($0.value) < Self.window }
        apps = apps.filter { now.timeIntervalSince($0.value) < Self.window }
        pruneAt = max(64, 2 * (keys.count + apps.count))
    }
}
