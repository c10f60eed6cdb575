import Dispatch
import Foundation
import SchedulerCore
import SchedulerStore
import Synchronization

/// The driver's companion on a store shared by replicas (docs/replicas.md): it hears of
/// the changes other replicas make and has the driver read them, renews the leases of the
/// runs this process holds, ends the runs of replicas that died, and reads the whole store
/// on a slow safety poll while word of changes cannot come.
///
/// Nothing here wakes while there is nothing to watch: the heartbeat runs only while this
/// process has runs in progress, another replica has (its lease may run out), or the
/// listening connection is down. A change from elsewhere arrives as a notification.
///
/// Ownership: the timer and the listener belong to `state` (one mutex); the heartbeat's
/// store calls run on `queue` (the renewals) and `sweepQueue` (the rest), never under that
/// mutex nor the driver's lock.
final class SharedStoreCoordinator: Sendable {
    private struct State: @unchecked Sendable {
        // @unchecked: the timer is a DispatchSourceTimer (thread-safe, not marked Sendable)
        // and this struct lives only inside the mutex below, its one owner.
        var listener: (any SharedStoreListener)?
        var timer: DispatchSourceTimer?
        var listeningDown = false
        var stopped = false
        /// Counts the asks for the heartbeat: a beat that saw nothing to watch stops the
        /// timer only if nobody asked since it began (a run claimed meanwhile needs it).
        var asks = 0
        /// Whether a sweep is under way on `sweepQueue` (a beat starts none meanwhile).
        var sweeping = false
    }

    let store: any SharedSchedulerStorage
    /// How long a claim holds without renewal.
    let lease: TimeInterval
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "bgtask.shared-store")
    /// Where the sweep and what follows it run: on the store's main connection, which a
    /// call stuck there (a lock another session holds) may hold for up to its statement
    /// timeout, so not on `queue`, whose beats must go on renewing the leases meanwhile.
    private let sweepQueue = DispatchQueue(label: "bgtask.shared-store.sweep")
    private let driverReference = Mutex<WeakDriver>(WeakDriver())

    private struct WeakDriver: @unchecked Sendable {
        // @unchecked: a weak reference to a Sendable class, read and written only under
        // the mutex that holds it.
        weak var driver: SchedulerDriver?
    }

    /// The heartbeat: a third of the lease, so that two renewals may fail before it runs out.
    var heartbeat: TimeInterval { lease / 3 }

    init(store: any SharedSchedulerStorage, lease: TimeInterval) {
        self.store = store
        self.lease = lease
    }

    private var driver: SchedulerDriver? { driverReference.withLock { $0.driver } }

    /// Starts listening for `driver`, and sweeps once (runs a dead replica left).
    func start(driver: SchedulerDriver) {
        driverReference.withLock { $0.driver = driver }
        let listener = store.listen { [weak self] change in self?.received(change) }
        let stopNow = state.withLock { state -> Bool in
            if state.stopped { return true }
            state.listener = listener
            return false
        }
        if stopNow { listener.stop(); return }
        queue.async { [weak self] in self?.beat() }
    }

    /// Stops the listener and the heartbeat.
    func stop() {
        let (listener, timer) = state.withLock { state -> ((any SharedStoreListener)?, DispatchSourceTimer?) in
            state.stopped = true
            defer { state.listener = nil; state.timer = nil }
            return (state.listener, state.timer)
        }
        timer?.cancel()
        listener?.stop()
    }

    /// One heartbeat now, on the calling thread (tests drive it in virtual time).
    func beatNow() {
        queue.sync { beat() }
        sweepQueue.sync {}
    }

    /// Something needs the heartbeat: a run started here (its lease), or a read or claim
    /// failed (the full read the heartbeat makes).
    func needsHeartbeat() {
        armHeartbeat()
    }

    private func received(_ change: SharedStoreChange) {
        switch change {
        case .listening(let down):
            state.withLock { $0.listeningDown = down }
            if down {
                driver?.log(.warning, app: nil, "lost the notification connection to \(store.storeDescription): reading it every \(Int(heartbeat)) s until it is back")
                armHeartbeat()
            } else {
                driver?.log(.info, app: nil, "notifications from \(store.storeDescription) are back")
                driver?.applySharedChange(.everything)
            }
        case .requests(let changes):
            driver?.applySharedChange(change)
            // A claim elsewhere is a run in progress elsewhere: watch its lease (a submission
            // elsewhere is not).
            if changes.contains(where: { if case .upserted = $0 { false } else { true } }) { armHeartbeat() }
        case .everything:
            driver?.applySharedChange(change)
            armHeartbeat()
        }
    }

    private func armHeartbeat() {
        state.withLock { state in
            state.asks += 1
            guard !state.stopped, state.timer == nil else { return }
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + heartbeat, repeating: heartbeat, leeway: .milliseconds(Int(heartbeat * 100)))
            timer.setEventHandler { [weak self] in self?.beat() }
            state.timer = timer
            timer.resume()
        }
    }

    /// One heartbeat (on `queue`): renew this process's leases, then, unless one is still
    /// under way, the rest on `sweepQueue` (``sweep(asksAtStart:mine:)``).
    private func beat() {
        guard let driver else { return }
        let asksAtStart = state.withLock { $0.asks }
        // Read without the driver's lock, renewed on a connection of the store's own: a
        // submit stuck on the store holds neither back.
        let mine = driver.activeRunIDs
        do {
            if !mine.isEmpty { try store.renewLeases(mine, lease: lease) }
        } catch {
            driver.log(.error, app: nil, "could not renew the leases of \(mine.count) run(s) in \(store.storeDescription): \(error); another replica may run them once they run out")
        }
        let startsSweep = state.withLock { state -> Bool in
            guard !state.sweeping else { return false }
            state.sweeping = true
            return true
        }
        // A sweep still under way (stuck on the main connection): this beat renewed, and the
        // timer stays armed for the next.
        guard startsSweep else { return }
        sweepQueue.async { [weak self] in self?.sweep(asksAtStart: asksAtStart, mine: mine) }
    }

    /// The rest of a beat, on `sweepQueue`: end the runs whose lease ran out, take in what
    /// the others taught the policies, read everything while notifications are down; then
    /// stop beating when nothing needs it.
    private func sweep(asksAtStart: Int, mine: [RunID]) {
        defer { state.withLock { $0.sweeping = false } }
        guard let driver else { return }
        var runsElsewhere = 0
        var sweepFailed = false
        do {
            let sweep = try store.recoverExpiredLeases()
            runsElsewhere = sweep.runsInProgress
            for run in sweep.ended {
                driver.log(.warning, app: run.app, "\(run.id) ('\(run.identifier)') lost its lease (its replica stopped renewing it): recorded as interrupted, \(run.request.cutOffFate)")
            }
            // The store does not pass on word of its own writes: this engine learns of the
            // restores here.
            if !sweep.ended.isEmpty { driver.applySharedChange(.requests(sweep.ended.map { .changed($0.request.key) })) }
        } catch {
            driver.log(.error, app: nil, "could not end the runs whose lease ran out in \(store.storeDescription): \(error)")
            sweepFailed = true
        }
        // What the others (and their sweeps) taught the policies weighs here from now on:
        // after the restores above, on purpose. The run that lost its lease is taken over at
        // once (the guarantee's "another replica runs it after the lease"); its strike weighs
        // on the app's later runs, so a handler that keeps killing its replica slows down
        // from its second interruption (docs/replicas.md, "Per-replica judgement").
        if !sweepFailed { driver.refreshSharedPolicyStates() }
        // Read everything while word of changes cannot come, or while claims fail (a
        // successful read lets claims be tried again and brings back what was forgotten).
        let down = state.withLock { $0.listeningDown } || driver.sharedClaimsFailing
        if down { driver.applySharedChange(.everything) }
        let needed = !mine.isEmpty || runsElsewhere > 0 || sweepFailed || down
        // Stops only if nobody asked for a beat meanwhile (a run claimed during this one).
        let timer = state.withLock { state -> DispatchSourceTimer? in
            guard !needed, state.asks == asksAtStart else { return nil }
            defer { state.timer = nil }
            return state.timer
        }
        if let timer {
            timer.cancel()
        } else if needed {
            armHeartbeat()
        }
    }
}
