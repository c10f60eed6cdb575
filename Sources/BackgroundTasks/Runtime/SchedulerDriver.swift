import Foundation
import SchedulerStore
import Synchronization

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
/// expiration handlers and observers are called after the lock is released.
public final class SchedulerDriver: Sendable {
    /// Where time comes from.
    public let clock: any DriverClock
    /// The durable store, or `nil` when it could not be opened (see ``unavailableReason``).
    public let store: SchedulerStore?
    /// Why the store is missing: every submission then fails with `unavailable` and this text.
    public let unavailableReason: String?
    /// App work in flight (the virtual-time driver waits for it to settle).
    public let activity: ActivityTracker
    /// Where warnings go.
    public let log: DiagnosticLog
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

    private struct State: @unchecked Sendable {
        // @unchecked: BGTask and AppContext are reference types guarded by this mutex.
        var engine: SchedulerEngine
        var contexts: [AppID: AppContext] = [:]
        var tasks: [RunID: BGTask] = [:]
        var wakeTimer: (any DriverTimer)?
        var wakeAt: Date?
        var observers: [@Sendable (SchedulerTraceEvent) -> Void] = []
        var retained: [AnyObject] = []
        var lastPrune: Date?
    }

    private let state: Mutex<State>

    /// Things to do once the lock is released.
    private enum Action {
        case invoke(BGTask, AppContext)
        case launchFailed(RunID, String)
        case expire(BGTask)
        case finish(BGTask, RunRecord)
        case terminate(BGTask, String)
        case sampleProgress(BGTask)
        case trace(SchedulerTraceEvent)
    }

    /// Creates a driver over `store` (pending requests are restored from it).
    /// - Parameters:
    ///   - store: the durable store, or `nil` when it could not be opened.
    ///   - unavailableReason: why there is no store (shown in `unavailable` errors).
    public init(
        configuration: SchedulerConfiguration = .init(),
        conditions: Conditions = .favorable,
        clock: any DriverClock,
        store: SchedulerStore?,
        unavailableReason: String? = nil,
        activity: ActivityTracker = ActivityTracker(),
        log: DiagnosticLog = .standardError(),
        serializesAppWork: Bool = false,
        policies: PolicySet = PolicySet(),
        meter: (any RunMeter)? = RunResourceMeter(),
        energyModel: EnergyModel = .init()
    ) {
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
                engine.restore(try store.pendingRequests(), at: clock.now())
            } catch {
                log(.error, app: nil, "could not read pending requests from the store: \(error)")
            }
        }
        state = Mutex(State(engine: engine))
    }

    /// The engine's configuration.
    public var configuration: SchedulerConfiguration { state.withLock { $0.engine.configuration } }

    /// Calls `observer` with every trace event, after the event happened (not under a lock).
    public func observe(_ observer: @escaping @Sendable (SchedulerTraceEvent) -> Void) {
        state.withLock { $0.observers.append(observer) }
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

    /// Attaches an app: the engine learns its manifest, and runs of its tasks are
    /// delivered to it. Runs that are due now launch.
    func attach(_ context: AppContext, backgroundRefreshEnabled: Bool) {
        let saved = loadPolicyState(of: context.app)
        mutate { state, _ in
            state.contexts[context.app] = context
            state.engine.register(AppRegistration(app: context.app, manifest: context.manifest, backgroundRefreshEnabled: backgroundRefreshEnabled))
            if var saved {
                saved.backgroundRefreshEnabled = backgroundRefreshEnabled
                state.engine.restorePolicyState(saved, of: context.app)
            }
            return []
        }
    }

    // MARK: What the policies learn

    private func loadPolicyState(of app: AppID) -> AppPolicyState? {
        guard let text = try? store?.appSetting(app: app, name: AppSettingName.policyState) else { return nil }
        do {
            return try JSONDecoder().decode(AppPolicyState.self, from: Data(text.utf8))
        } catch {
            log(.warning, app: app, "the saved usage history could not be read (\(error)); starting afresh")
            return nil
        }
    }

    /// What the policies learned of `app` (usage history, throttle, energy used), as the
    /// store keeps it, or `nil` when there is nothing to keep.
    private func policyStateText(of app: AppID, in state: State) -> String? {
        guard store != nil, let policyState = state.engine.policyState(of: app),
              let data = try? JSONEncoder().encode(policyState) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// Persists what the policies learned of `app`, under the driver's lock so that saves
    /// land in the order the engine learned (a restart and `bgtask why` see the latest).
    private func savePolicyState(of app: AppID, in state: State) {
        guard let store, let text = policyStateText(of: app, in: state) else { return }
        do {
            try store.setAppSetting(text, app: app, name: AppSettingName.policyState)
        } catch {
            log(.error, app: app, "could not save the usage history: \(error)")
        }
    }

    /// The user brought `app` to the foreground: learned by the usage model; lifts a force-quit.
    public func appForegrounded(_ app: AppID) {
        mutate { state, now in
            let effects = state.engine.handle(.appForegrounded(app), at: now)
            savePolicyState(of: app, in: state)
            return effects
        }
    }

    /// The user force-quit `app`: no background launches until it is opened again.
    public func appForceQuit(_ app: AppID) {
        mutate { state, now in
            let effects = state.engine.handle(.appForceQuit(app), at: now)
            savePolicyState(of: app, in: state)
            return effects
        }
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

    /// Detaches an app: its pending requests stay, its runs are no longer delivered.
    func detach(_ app: AppID) {
        _ = state.withLock { $0.contexts.removeValue(forKey: app) }
    }

    /// Delivers what is due now (after an app finished launching, or at start-up).
    public func runDueWork() {
        mutate { state, now in state.engine.handle(.timerFired, at: now) }
    }

    /// Turns an app's Background App Refresh switch on or off (persisted).
    func setBackgroundRefresh(_ enabled: Bool, for app: AppID) {
        try? store?.setAppSetting(enabled ? "on" : "off", app: app, name: AppSettingName.backgroundRefresh)
        mutate { state, _ in
            state.engine.setBackgroundRefresh(enabled, for: app)
            return []
        }
    }

    /// Whether the app's Background App Refresh switch is on.
    func backgroundRefreshEnabled(for app: AppID) -> Bool {
        state.withLock { $0.engine.registration(of: app)?.backgroundRefreshEnabled ?? false }
    }

    /// Reports an event that happened outside the engine (app lifecycle, assertions).
    func trace(_ event: SchedulerTraceEvent) {
        let observers = state.withLock { $0.observers }
        for observer in observers { observer(event) }
    }

    // MARK: Requests

    /// Checks, persists, then applies a submission: when it returns, the request is on disk.
    public func submit(_ request: PendingRequest) throws(SubmitRejection) {
        var rejection: SubmitRejection?
        mutate { state, now in
            do throws(SubmitRejection) {
                try state.engine.checkSubmit(request, at: now)
                guard let store else {
                    throw SubmitRejection(.unavailable, "the scheduler cannot schedule '\(request.identifier)': \(unavailableReason ?? "no store")")
                }
                do {
                    try store.upsertRequest(request)
                } catch {
                    throw SubmitRejection(.unavailable, "the scheduler cannot schedule '\(request.identifier)': \(error)")
                }
            } catch {
                rejection = error
                return []
            }
            return state.engine.submit(request, at: now)
        } prefix: { now in
            rejection == nil ? [.submitted(request, at: now)] : []
        }
        if let rejection { throw rejection }
    }

    /// Removes a pending request (from disk first).
    public func cancel(_ key: RequestKey) {
        do {
            try store?.deleteRequest(key)
        } catch {
            log(.error, app: key.app, "could not remove '\(key.identifier)' from the store: \(error)")
        }
        mutate { state, now in
            _ = state.engine.cancel(key)
            return []
        } prefix: { now in [.cancelled(key, at: now)] }
    }

    /// Removes every pending request of `app`.
    public func cancelAll(of app: AppID) {
        do {
            try store?.deleteAllRequests(app: app)
        } catch {
            log(.error, app: app, "could not remove the pending requests from the store: \(error)")
        }
        var removed: [RequestKey] = []
        mutate { state, _ in
            removed = state.engine.cancelAll(of: app).map(\.key)
            return []
        } prefix: { now in removed.map { .cancelled($0, at: now) } }
    }

    /// Copies of the pending requests of `app`.
    public func pendingRequests(of app: AppID) -> [PendingRequest] {
        state.withLock { $0.engine.pendingRequests(of: app) }
    }

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
            state.engine.handle(.conditionsChanged(conditions), at: now)
        } prefix: { now in [.conditionsChanged(conditions, at: now)] }
    }

    /// Whether anything is pending or running: the policies weigh every reading (battery,
    /// thermal, idleness...) for every request, so the device is sampled only then.
    public var dependsOnConditions: Bool {
        state.withLock { $0.engine.hasWork }
    }

    /// Keeps `object` (a timer source) alive as long as the driver.
    func retain(_ object: AnyObject) {
        state.withLock { $0.retained.append(object) }
    }

    /// The current conditions as the engine knows them.
    public var conditions: Conditions { state.withLock { $0.engine.conditions } }

    func taskCompleted(_ run: RunID, success: Bool) {
        mutate { state, now in state.engine.handle(.taskCompleted(run, success: success), at: now) }
    }

    func expirationDelivered(_ run: RunID, handlerWasSet: Bool) {
        mutate { state, now in state.engine.handle(.expirationDelivered(run, handlerWasSet: handlerWasSet), at: now) }
    }

    /// The process running `run` died (out-of-process hosts).
    public func runCrashed(_ run: RunID, reason: String) {
        mutate { state, now in state.engine.handle(.runCrashed(run, reason: reason), at: now) }
    }

    // MARK: Testing hooks

    /// Launches the pending request under `key` now (Apple's `_simulateLaunchForTaskWithIdentifier`).
    public func simulateLaunch(_ key: RequestKey) throws(EngineError) {
        var failure: EngineError?
        mutate { state, now in
            do throws(EngineError) {
                return try state.engine.simulateLaunch(key, at: now)
            } catch {
                failure = error
                return []
            }
        }
        if let failure { throw failure }
    }

    /// Expires the run of `key` now (Apple's `_simulateExpirationForTaskWithIdentifier`).
    public func simulateExpiration(_ key: RequestKey) throws(EngineError) {
        var failure: EngineError?
        mutate { state, now in
            do throws(EngineError) {
                return try state.engine.simulateExpiration(key, at: now)
            } catch {
                failure = error
                return []
            }
        }
        if let failure { throw failure }
    }

    // MARK: Effects

    /// Runs `change` on the engine under the lock, carries out its effects (store writes
    /// under the lock, app calls after), and reports trace events to observers. `prefix`
    /// runs after `change`, under the lock, and gives the trace events that come first.
    private func mutate(
        _ change: (inout State, Date) -> [EngineEffect],
        prefix: (Date) -> [SchedulerTraceEvent] = { _ in [] }
    ) {
        let (actions, observers) = state.withLock { state -> ([Action], [@Sendable (SchedulerTraceEvent) -> Void]) in
            let now = clock.now()
            let effects = change(&state, now)
            var actions = prefix(now).map(Action.trace)
            for effect in effects {
                apply(effect, to: &state, at: now, actions: &actions)
            }
            return (actions, state.observers)
        }
        perform(actions, observers: observers)
    }

    private func apply(_ effect: EngineEffect, to state: inout State, at now: Date, actions: inout [Action]) {
        switch effect {
        case .launch(let record, let budget, let evaluation):
            do {
                try store?.recordRunStarted(record)
            } catch {
                log(.error, app: record.app, "could not record the start of \(record.id) ('\(record.identifier)'): \(error)")
            }
            meter?.runStarted(record.id)
            actions.append(.trace(.launched(record, budget: budget, evaluation: evaluation)))
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
            }
        case .runFinished(let finished):
            let record = measured(finished)
            state.engine.recordEnergy(record.energyJoules ?? 0, for: record.app, at: now)
            // What the run taught the policies (throttle, energy spent) is saved with its
            // record: one commit per run, not two.
            let learned = policyStateText(of: record.app, in: state).map { [AppSettingName.policyState: $0] } ?? [:]
            do {
                try store?.recordRunFinished(record, appSettings: learned)
            } catch {
                log(.error, app: record.app, "could not record the end of \(record.id) ('\(record.identifier)'): \(error)")
            }
            pruneRunLogIfDue(&state, at: now)
            actions.append(.trace(.finished(record)))
            if let task = state.tasks.removeValue(forKey: record.id) {
                actions.append(.finish(task, record))
            }
        case .terminate(let run, let reason):
            if let task = state.tasks[run] {
                actions.append(.trace(.terminated(run, task.key, reason: reason, at: now)))
                actions.append(.terminate(task, reason))
            }
        case .sampleProgress(let run):
            if let task = state.tasks[run] { actions.append(.sampleProgress(task)) }
        case .requestsMoved(let transitions):
            for transition in transitions {
                actions.append(.trace(.moved(transition.key, transition.location, at: now)))
            }
        case .wake(let instant):
            guard instant != state.wakeAt else { return }
            state.wakeTimer?.cancel()
            state.wakeAt = instant
            state.wakeTimer = instant.map { clock.schedule(at: $0) { [weak self] in self?.timerFired() } }
        }
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
            log(.warning, app: nil, "could not prune old run records: \(error)")
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
