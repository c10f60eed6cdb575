import BackgroundTasks
import DaemonProtocol
import Foundation
import ProcessSupervision
import SchedulerCore
import Synchronization
import UserNotifications

/// A process of an app that the daemon started (``ProcessSupervision``'s supervised
/// process in production, a fake in tests).
public protocol AppProcess: AnyObject, Sendable {
    /// The process id (also its process group).
    var pid: Int32 { get }
    /// Field 22 of `/proc/<pid>/stat` (0 when unknown): with the pid, what identifies the
    /// process to a restarted daemon ending orphans (a reused pid has another start time).
    var startTime: UInt64 { get }
    /// The app's cgroup, when it has one.
    var cgroupPath: String? { get }
    /// Freezes the process (cgroup freezer, else SIGSTOP to its group). Returns whether it
    /// is confirmed frozen (the freezer said so): nothing in it runs, so its counters stay
    /// as they are until ``resume()``. A stop signal is not confirmed.
    @discardableResult
    func suspend() -> Bool
    /// Thaws it.
    func resume()
    /// SIGTERM to its group (or cgroup), SIGKILL after `gracePeriod` if it still runs.
    func terminate(gracePeriod: TimeInterval)
}

/// Starts an app's executable for the daemon.
public protocol AppSpawner: Sendable {
    /// Starts `target` in the background; `onExit` is called once when it exits, with its
    /// pid and how it exited in words ("exited with status 3", "was killed by signal 9"),
    /// possibly before `spawn` returns. `killGrace` is the SIGTERM-to-SIGKILL grace of what
    /// the process leaves in its group when it exits: the supervisor's
    /// ``AppSupervision/Timing/killGrace``, the one it terminates the process with.
    func spawn(_ target: LaunchTarget, killGrace: TimeInterval, onExit: @escaping @Sendable (_ pid: Int32, _ how: String) -> Void) throws -> any AppProcess
}

/// What the daemon starts for an app: the installed executable, its arguments and the
/// environment of a background launch.
public struct LaunchTarget: Sendable, Equatable {
    /// The app.
    public var app: AppID
    /// The absolute path of the executable.
    public var executable: String
    /// The arguments after argv[0].
    public var arguments: [String]
    /// The whole environment of the process (a clean one plus `BGTASK_*`).
    public var environment: [String: String]

    /// Creates a target.
    public init(app: AppID, executable: String, arguments: [String], environment: [String: String]) {
        self.app = app
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
    }
}

/// The connection of an app, as its supervisor uses it.
public protocol AppLink: AnyObject, Sendable {
    /// Sends `message` (non-blocking; ordered).
    func push(_ message: AppPush)
    /// Closes the connection.
    func close(reason: String)
}

/// The shell around one app's ``AppSupervision``: it is the driver's ``RemoteTaskHost``
/// for the app, spawns and signals its process, keeps the supervision's one timer on its
/// clock (the daemon's `bgtaskd.supervision` queue) and the runs' budget deadlines on a
/// clock of their own (`bgtaskd.deadlines`), and talks to its connection.
///
/// Locking: the supervision, the process, the link and the timers are guarded by one
/// mutex; spawning, signals, timers and pushes happen under it (none blocks, except a
/// freeze's bounded wait for the cgroup freezer, at most 1 s), so the app sees pushes in
/// the order the engine decided. Calls into the driver
/// (``SchedulerDriver/appNotStarted(_:reason:)``, ``SchedulerDriver/runCrashed(_:reason:)``)
/// happen after it is released: the driver calls back into this host.
public final class AppSupervisor: RemoteTaskHost, Sendable {
    /// The app.
    public let app: AppID

    private struct State: @unchecked Sendable {
        // @unchecked: the process, link and timer are Sendable reference types; the
        // mutex that holds this struct is their one owner.
        var machine: AppSupervision
        var target: LaunchTarget
        var process: (any AppProcess)?
        var link: (any AppLink)?
        /// The pid of the process on ``link`` (its peer credentials), whoever started it.
        var linkPID: Int32?
        /// That process's start time (field 22 of `/proc/<pid>/stat`) when it connected:
        /// with the pid, its identity, checked before it is sent a signal (the pid of a
        /// process that forked, handed its connection to the child and exited may be
        /// another process's by then).
        var linkStartTime: UInt64?
        var timer: (any DriverTimer)?
        /// The budget deadlines of the runs handed over (AppSupervision's `armDeadline`).
        var deadlines: [RunID: any DriverTimer] = [:]
        weak var driver: SchedulerDriver?
        /// Whether a run of the current process has been charged its launch (only the first is).
        var launchCharged = false
        /// The next run's measurement start, taken when the process was confirmed frozen:
        /// its counters are the same when it is thawed for that run, so a warm launch reads
        /// nothing on its way to the app (docs/daemon.md, "Measurement"). Cleared by a thaw.
        var frozenBaseline: RunMeasurement.Baseline?
        /// Called once the daemon's process of the app is gone (``whenProcessEnds(_:)``).
        var processWaiters: [@Sendable () -> Void] = []
        /// The latest spawn that failed: the runs it was for and why (``spawnFailure(of:)``).
        var spawnFailure: (runs: Set<RunID>, reason: String)?
        /// The timer of the app's next local notification that bgtaskd delivers if the app
        /// does not.
        var notificationTimer: (any DriverTimer)?
        /// Set once the app is uninstalled: no more deliveries for it.
        var notificationsStopped = false
        /// The latest problem logged with the app's notifications (logged once while it lasts).
        var notificationProblem: String?
        /// How many deliveries in a row found the app's file locked by another process.
        var notificationBusyInARow = 0
        /// The app's local notifications, delivered by the daemon when the app does not; `nil`
        /// until given (``deliverNotifications(_:)``), or when its state directory cannot be
        /// chosen.
        var notifications: AwayNotifications?
    }

    private let state: Mutex<State>
    private let clock: any DriverClock
    /// The clock of the runs' budget deadlines: a queue of their own, so that no
    /// supervisor's freeze (which waits for the cgroup freezer) delays an expiration.
    private let deadlineClock: any DriverClock
    private let spawner: any AppSpawner
    private let log: BGDiagnosticLog
    private let measurement: RunMeasurement?
    /// Called (not under the lock) when the daemon's process of the app starts or ends,
    /// so the daemon can record it for orphan clean-up after a crash.
    private let processChanged: @Sendable (AppID, (any AppProcess)?) -> Void

    /// Creates the supervisor of `target.app`.
    public init(
        target: LaunchTarget,
        timing: AppSupervision.Timing,
        clock: any DriverClock,
        deadlineClock: (any DriverClock)? = nil,
        spawner: any AppSpawner,
        log: BGDiagnosticLog,
        measurement: RunMeasurement? = nil,
        processChanged: @escaping @Sendable (AppID, (any AppProcess)?) -> Void = { _, _ in }
    ) {
        self.measurement = measurement
        self.app = target.app
        self.clock = clock
        self.deadlineClock = deadlineClock ?? clock
        self.spawner = spawner
        self.log = log
        self.processChanged = processChanged
        state = Mutex(State(machine: AppSupervision(timing: timing), target: target))
    }

    /// Connects the supervisor to the driver whose runs it hosts.
    public func attach(to driver: SchedulerDriver) {
        state.withLock { $0.driver = driver }
    }

    /// Replaces what is launched (a reinstall); a running process is not restarted here.
    /// Returns whether the executable or its arguments changed while the app had a process
    /// or a connection: that process is not the app any more, and the caller ends it.
    public func update(_ target: LaunchTarget) -> Bool {
        state.withLock { state in
            let replaced = state.target.executable != target.executable || state.target.arguments != target.arguments
            state.target = target
            return replaced && (state.process != nil || state.machine.connected)
        }
    }

    /// The supervision's state (for `bgtask apps` and tests).
    public var supervision: AppSupervision { state.withLock { $0.machine } }

    /// Calls `body` (not under the lock) once the daemon's process of the app is gone: now
    /// when there is none. bgtaskd's stop waits on it, so no app outlives its daemon.
    public func whenProcessEnds(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            guard state.process != nil else { return true }
            state.processWaiters.append(body)
            return false
        }
        if now { body() }
    }

    /// The pid of the daemon's process of the app, if it runs.
    public var processID: Int32? { state.withLock { $0.process?.pid } }

    /// The pid of the process connected as the app (the daemon's or one the user started),
    /// if one is.
    public var connectedProcessID: Int32? { state.withLock { $0.link == nil ? nil : $0.linkPID } }

    /// Why the app could not be started for `run`, when the spawn for it failed at once (a
    /// failed `execve`: `cannot launch /path: execve: Exec format error (ENOEXEC)`); `nil`
    /// when it was not spawned for `run` or started. bgtaskd answers `bgtask run` and
    /// `bgtask push` with it, once the run's launch reached this supervisor. A process that
    /// starts and fails later is not known then (it is in the run log).
    public func spawnFailure(of run: RunID) -> String? {
        state.withLock { state in
            guard let failure = state.spawnFailure, failure.runs.contains(run) else { return nil }
            return failure.reason
        }
    }

    // MARK: RemoteTaskHost

    public func launch(_ run: RunRecord, budget: TimeInterval?) { feed(.launch(run, budget: budget)) }
    public func expire(_ run: RunID, reason: String) { feed(.expire(run, reason: reason)) }
    public func terminate(_ run: RunID, reason: String) { feed(.terminate(run, reason: reason)) }
    public func finished(_ run: RunRecord) { feed(.finished(run)) }
    /// The app said it completed `run`: not to be ended by force at its grace's end before
    /// the engine has judged the completion (``AppSupervision/Event/completing(_:)``).
    public func completing(_ run: RunID) { feed(.completing(run)) }
    public func sampleProgress(_ run: RunID) {
        state.withLock { state in
            guard state.machine.active.contains(run) else { return }
            state.link?.push(.sampleProgress(run: run))
        }
    }

    // MARK: The app's connection and lifecycle

    /// What ``connect(_:pid:)`` decided.
    public enum ConnectAnswer: Sendable, Equatable {
        /// The connection is the app's.
        case accepted
        /// The daemon's own process of the app is finishing its runs (their expiration
        /// was asked for): ask again shortly.
        case busy
        /// Another connection is the app's.
        case refused
    }

    /// Offers the connection of process `pid`: accepted when nobody is the app (or `pid`
    /// is the daemon's own process of it, or that process has nothing handed to it and
    /// the user's takes over); busy while the daemon's process runs tasks (they are
    /// expired now); refused when another connection is the app's.
    public func connect(_ link: any AppLink, pid: Int32) -> ConnectAnswer {
        // The decision, the link and the event in one hold: a spawn or an exit in between
        // cannot leave the link set while the supervision thinks nobody is connected, nor
        // turn a wait into a refusal.
        var answer = ConnectAnswer.refused
        feed(deciding: { state -> AppSupervision.Event? in
            if state.machine.accepts(pid: pid) {
                state.link = link
                state.linkPID = pid
                state.linkStartTime = ProcessStat.read(pid: pid)?.startTime
                answer = .accepted
                return .connected(pid: pid)
            }
            // The user started the app while the daemon's own process of it had nothing to
            // do: that one is ended and the user's becomes the app (one process per app,
            // never two schedulers for it).
            if state.machine.canHandOver(to: pid) {
                state.link?.close(reason: "the user started another process of the app")
                state.link = link
                state.linkPID = pid
                state.linkStartTime = ProcessStat.read(pid: pid)?.startTime
                answer = .accepted
                return .handOver(to: pid)
            }
            if state.machine.isBusy(for: pid) {
                answer = .busy
                return .userWaiting
            }
            return nil
        })
        return answer
    }

    /// The app said it finished launching (its registration window closed). The device's
    /// conditions are taken from the driver first when no change has told them yet, so the
    /// app's first push says how the device is.
    public func finishedLaunching() {
        // The driver is read outside this supervisor's lock; only if still unknown then, as
        // a change fed meanwhile is at least as new as this reading.
        if let conditions = state.withLock({ $0.machine.deviceConditions == nil ? $0.driver : nil })?.conditions {
            feed(deciding: { state in state.machine.deviceConditions == nil ? .deviceChanged(conditions) : nil })
        }
        feed(.finishedLaunching)
    }

    /// The engine's view of the device changed: the app hears of it when it can
    /// (``AppSupervision/Event/deviceChanged(_:)``).
    public func deviceChanged(_ conditions: Conditions) { feed(.deviceChanged(conditions)) }

    /// The app's connection `link` closed.
    public func disconnected(_ link: any AppLink, reason: String) {
        let current = state.withLock { state -> Bool in
            guard let held = state.link, held === link else { return false }
            state.link = nil
            state.linkPID = nil
            state.linkStartTime = nil
            return true
        }
        if current { feed(.disconnected(reason)) }
    }

    /// The user opened the app; `tellApp` when the word comes from outside the app
    /// (`bgtask open`), so that it comes to the foreground.
    public func opened(tellApp: Bool = false) { feed(.opened(tellApp: tellApp)) }
    /// What became of a response to a notification.
    public enum ResponseOutcome: Sendable, Equatable {
        /// Pushed to the app's launched process.
        case sent
        /// Waits for the app's process to finish launching: started for it (`true`), or
        /// already starting.
        case waitingForLaunch(started: Bool)
        /// Not taken, for the reason given.
        case refused(String)
    }

    /// The user responded to one of the app's delivered notifications: pushed to its
    /// launched process (thawed for it if frozen), or after the launch of one (started for
    /// it when none runs).
    public func respond(_ response: NotificationResponseRequest) -> ResponseOutcome {
        var outcome = ResponseOutcome.sent
        feed { state in
            if let refusal = AppSupervision.responseRefusal(state.machine) {
                outcome = .refused(refusal)
                return nil
            }
            switch state.machine.phase {
            case .notRunning: outcome = .waitingForLaunch(started: true)
            case .starting: outcome = .waitingForLaunch(started: false)
            case .ready, .suspended, .ending: outcome = .sent
            }
            return .notificationResponse(response)
        }
        // A process started for it that could not be (its executable cannot be run): the
        // response went with that launch, in the same hold; said, as `bgtask run` says it.
        if case .waitingForLaunch(started: true) = outcome {
            let failure = state.withLock { state -> String? in
                guard state.machine.phase == .notRunning, !state.machine.waitingResponses.contains(response) else { return nil }
                return state.spawnFailure?.reason
            }
            if let failure { return .refused("it could not be started: \(failure)") }
        }
        return outcome
    }
    /// The app went to the background; `tellApp` when the word comes from outside the app.
    public func backgrounded(tellApp: Bool = false) { feed(.backgrounded(tellApp: tellApp)) }
    /// The app began its first background assertion (`true`) or ended its last.
    public func assertionsChanged(held: Bool) { feed(.assertions(held: held)) }
    /// The user force-quit the app, or it is being uninstalled.
    public func quit(reason: String) { feed(.quit(reason)) }

    /// bgtaskd stops: ends the daemon's own process of the app (as ``quit(reason:)``) and
    /// leaves a process the user started to reconnect to the next bgtaskd.
    public func daemonStopping(reason: String) { feed(.daemonStopping(reason)) }

    /// bgtaskd begins to stop: runs not yet handed to the app (its process still starting)
    /// are failed and their requests filed again, before the stop expires what runs.
    public func daemonStoppingLaunches(reason: String) { feed(.daemonStoppingLaunches(reason)) }

    // MARK: The shell

    /// Feeds `event` under the lock, first asking `prepare` (under the same hold) whether
    /// it applies; returns that answer.
    @discardableResult
    private func feed(_ event: AppSupervision.Event, prepare: (inout State) -> Bool = { _ in true }) -> Bool {
        feed(deciding: { state in prepare(&state) ? event : nil })
    }

    /// Feeds the event `decide` gives under the lock (nothing when it gives `nil`), with
    /// its consequences in the same hold; returns whether there was one.
    @discardableResult
    private func feed(deciding decide: (inout State) -> AppSupervision.Event?) -> Bool {
        var pending: [AppSupervision.Event] = []
        var afterLock: [@Sendable () -> Void] = []
        let applies = state.withLock { state -> Bool in
            guard let event = decide(&state) else { return false }
            let phaseBefore = state.machine.phase
            defer {
                // The app's process ended or was frozen: what it kept in its pending file may
                // have changed while it ran, so the next moment is read again.
                let phase = state.machine.phase
                if phase != phaseBefore, phase == .notRunning || phase == .suspended {
                    afterLock.append { [weak self] in self?.armNotifications() }
                }
            }
            pending.append(event)
            // A baseline taken while frozen serves only a launch thawed in this same hold:
            // once the process has run, its counters have moved.
            var thawed: RunMeasurement.Baseline?
            while !pending.isEmpty {
                let next = pending.removeFirst()
                for action in state.machine.handle(next) {
                    perform(action, in: &state, thawed: &thawed, feeding: &pending, after: &afterLock)
                }
            }
            return true
        }
        for call in afterLock { call() }
        return applies
    }

    private func perform(
        _ action: AppSupervision.Action,
        in state: inout State,
        thawed: inout RunMeasurement.Baseline?,
        feeding pending: inout [AppSupervision.Event],
        after afterLock: inout [@Sendable () -> Void]
    ) {
        let app = self.app
        let log = self.log
        switch action {
        case .spawn, .spawnOpened:
            let opened = action == .spawnOpened
            var target = state.target
            if opened {
                target.environment["BGTASK_LAUNCH"] = "opened"
                // The tap it is started for, for its scene's connection options.
                target.environment[UNUserNotificationCenter.launchNotificationVariable] = state.machine.waitingResponses
                    .first { $0.action == NotificationResponseRequest.defaultAction }?.notification
            }
            do {
                // The exit may be reported before spawn returns: it names its pid, and its
                // handling takes this lock, so it finds the process recorded here.
                let process = try spawner.spawn(target, killGrace: state.machine.timing.killGrace) { [weak self] pid, how in
                    self?.processExited(how, pid: pid)
                }
                state.process = process
                // A launch for runs is charged to the first; one for the user (a tap) or for
                // responses alone is no run's, nor is what the process does before a run comes.
                state.launchCharged = opened || state.machine.queued.isEmpty
                state.spawnFailure = nil
                pending.append(.spawned(pid: process.pid))
                let changed = processChanged
                afterLock.append {
                    log(.info, app: app, "started \(app) \(opened ? "for the user, in the foreground" : "in the background") (pid \(process.pid))")
                    changed(app, process)
                }
            } catch {
                // The runs waiting for this process are failed by the event below; kept so
                // that whoever asked for one of them (bgtask run) hears why.
                state.spawnFailure = (Set(state.machine.queued.map(\.id)), "\(error)")
                pending.append(.spawnFailed("\(error)"))
                afterLock.append { log(.error, app: app, "could not start \(app): \(error)") }
            }
        case .push(let message):
            if case .launch(let record, _) = message {
                if let process = state.process {
                    // A process started for this run is charged its launch too.
                    measurement?.begin(record.id, in: process, atLaunch: !state.launchCharged && state.machine.spawnedByDaemon, baseline: thawed)
                    thawed = nil
                    state.launchCharged = true
                } else if state.link != nil {
                    measurement?.handedToUsersProcess(record.id)
                }
            }
            state.link?.push(message)
        case .resume:
            thawed = state.frozenBaseline
            state.frozenBaseline = nil
            state.process?.resume()
        case .suspend:
            if let process = state.process, process.suspend() {
                state.frozenBaseline = measurement?.baseline(of: process)
            }
            if let pid = state.process?.pid {
                afterLock.append { log(.debug, app: app, "suspended \(app) (pid \(pid))") }
            }
        case .terminateProcess(let reason):
            if let process = state.process {
                process.terminate(gracePeriod: state.machine.timing.killGrace)
                afterLock.append { log(.info, app: app, "ending \(app) (pid \(process.pid)): \(reason)") }
                // Handed over to a process the user started: the ended one is no longer
                // the app's, and its exit changes nothing.
                if !state.machine.spawnedByDaemon { afterLock += Self.forgetProcess(in: &state) }
            }
        case .terminateUsersProcess(let reason):
            // The pid of the connection's peer (SO_PEERCRED, same user), signalled only
            // while it is still the process that connected: same start time (a fork that
            // kept the connection after its parent exited leaves the pid to be reused).
            guard let pid = state.linkPID, pid > 1, pid != getpid() else {
                let pid = state.linkPID
                afterLock.append { log(.warning, app: app, "\(app), started by the user, was not ended (\(reason)): its pid (\(pid.map(String.init) ?? "none")) is not one bgtaskd can signal, as from another pid namespace") }
                break
            }
            guard let started = state.linkStartTime, ProcessStat.read(pid: pid)?.isLiveProcess(startedAt: started) == true else {
                afterLock.append { log(.warning, app: app, "\(app), started by the user, was not ended (\(reason)): pid \(pid) is no longer the process that connected") }
                break
            }
            if kill(pid, SIGTERM) == 0 {
                afterLock.append { log(.info, app: app, "ending \(app) (pid \(pid), started by the user) with SIGTERM: \(reason)") }
            } else {
                let failure = systemErrorText(errno)
                afterLock.append { log(.warning, app: app, "\(app), started by the user, was not ended (\(reason)): SIGTERM to pid \(pid) failed: \(failure)") }
            }
        case .disconnect(let reason):
            state.link?.close(reason: reason)
            state.link = nil
            state.linkPID = nil
            state.linkStartTime = nil
        case .launchFailed(let run, let reason):
            let driver = state.driver
            afterLock.append {
                log(.error, app: app, "\(run) could not start: \(reason)")
                driver?.appNotStarted(run, reason: reason)
            }
        case .responseDropped(let response, let reason):
            afterLock.append {
                log(.warning, app: app, "the response to notification \"\(response.notification)\" (\(response.action)) was not delivered: \(reason)")
            }
        case .runCrashed(let run, let reason):
            let driver = state.driver
            afterLock.append {
                log(.error, app: app, "\(run) crashed: \(reason)")
                driver?.runCrashed(run, reason: reason)
            }
        case .expireRuns(let reason):
            let driver = state.driver
            afterLock.append {
                // Asked again at every retry of the waiting process: detail, not news.
                log(.debug, app: app, "expiring \(app)'s runs in progress: \(reason)")
                driver?.expireRuns(of: app, reason: reason)
            }
        case .arm(let timer, let delay):
            state.timer?.cancel()
            let event: AppSupervision.Event = switch timer {
            case .launch: .launchTimedOut
            case .suspend: .suspendDue
            case .idle: .idleDue
            }
            state.timer = clock.schedule(at: clock.now().addingTimeInterval(delay)) { [weak self] in
                self?.feed(event)
            }
        case .disarm:
            state.timer?.cancel()
            state.timer = nil
        case .armDeadline(let run, let deadline):
            state.deadlines[run]?.cancel()
            state.deadlines[run] = deadlineClock.schedule(at: deadline) { [weak self] in
                self?.feed(.deadlineDue(run))
            }
        case .armGraceEnd(let run, let grace):
            state.deadlines[run]?.cancel()
            state.deadlines[run] = deadlineClock.schedule(at: deadlineClock.now().addingTimeInterval(grace)) { [weak self] in
                self?.feed(.graceEnded(run))
            }
        case .disarmDeadline(let run):
            state.deadlines.removeValue(forKey: run)?.cancel()
        }
    }

    // MARK: Notifications the app does not deliver

    /// The queue of every app's notification work (reading the app's file, delivering), apart
    /// from the supervision's clock: a large or slow file delays no app's suspension, launch
    /// timeout or idle end.
    private static let notificationQueue = DispatchQueue(label: "bgtaskd.notifications")

    /// How long after a delivery that could not be made (the file or its lock unusable, a
    /// write that failed) it is tried again.
    static let notificationRetryDelay: TimeInterval = 300

    /// Delivers the app's local notifications that no process of it delivers (docs/daemon.md,
    /// "Notifications while the app is not running"), from now on: at each moment of its
    /// pending file, plus ``AwayNotifications/grace``, whatever is still pending is fired
    /// here. The next moment is read now, after each delivery, and whenever the app's process
    /// ends or is frozen.
    /// `armNow` false: the app has no pending file now (bgtaskd's start listed the apps'
    /// state directories), so nothing is read until its process ends or is frozen.
    package func deliverNotifications(_ notifications: AwayNotifications, armNow: Bool = true) {
        state.withLock { $0.notifications = notifications }
        if armNow { armNotifications() }
    }

    /// Arms the next delivery (see ``deliverNotifications(_:)``), from the notifications'
    /// queue.
    public func armNotifications() {
        Self.notificationQueue.async { [weak self] in self?.armNotificationsNow() }
    }

    /// Reads the next moment and arms its timer, not before `notBefore` (a retry after a
    /// failure). On the notifications' queue.
    private func armNotificationsNow(notBefore: Date? = nil) {
        guard let notifications = state.withLock({ $0.notifications }) else { return }
        let (next, problem) = notifications.nextMoment()
        if let problem { reportNotificationProblem(problem) }
        let clock = self.clock
        state.withLock { state in
            state.notificationTimer?.cancel()
            state.notificationTimer = nil
            guard !state.notificationsStopped else { return }
            // A file that cannot be used now is looked at again later (the app may mend it).
            guard let next else {
                if problem != nil {
                    let look = max(notBefore ?? .distantPast, clock.now().addingTimeInterval(Self.notificationRetryDelay))
                    state.notificationTimer = clock.schedule(at: look) { [weak self] in
                        guard let self else { return }
                        Self.notificationQueue.async { self.armNotificationsNow() }
                    }
                }
                return
            }
            let at = max(next.addingTimeInterval(AwayNotifications.grace), notBefore ?? next)
            state.notificationTimer = clock.schedule(at: at) { [weak self] in
                guard let self else { return }
                Self.notificationQueue.async { self.notificationsDue() }
            }
        }
    }

    /// Logs `problem` with the app's notifications once, not again while it stays the same.
    private func reportNotificationProblem(_ problem: String) {
        let new = state.withLock { state -> Bool in
            guard state.notificationProblem != problem else { return false }
            state.notificationProblem = problem
            return true
        }
        if new { log(.warning, app: app, problem) }
    }

    /// No more deliveries for the app (it was uninstalled).
    public func stopNotifications() {
        state.withLock { state in
            state.notificationsStopped = true
            state.notificationTimer?.cancel()
            state.notificationTimer = nil
        }
    }

    /// A moment of the app's came, and its grace passed: what is still pending is fired here.
    /// On the notifications' queue.
    private func notificationsDue() {
        guard let notifications = state.withLock({ $0.notifications }) else { return }
        let now = clock.now()
        let stopped = state.withLock { state -> Bool in
            state.notificationTimer = nil
            return state.notificationsStopped
        }
        guard !stopped else { return }
        let outcome = notifications.deliverDue(now: now)
        for line in outcome.shown { log(.info, app: app, line) }
        for line in outcome.notPresented { log(.info, app: app, line) }
        if let failure = outcome.failure {
            // Not again at once (the moment has passed): after a while, logged once.
            reportNotificationProblem(failure)
            armNotificationsNow(notBefore: now.addingTimeInterval(Self.notificationRetryDelay))
            return
        }
        let busyInARow = state.withLock { state -> Int in
            state.notificationProblem = nil
            state.notificationBusyInARow = outcome.busy ? state.notificationBusyInARow + 1 : 0
            return state.notificationBusyInARow
        }
        if outcome.busy {
            // The app (or a look at the file) holds its lock for an instant: soon again; held
            // for seconds (an app frozen while it held it), every half minute until it is free.
            armNotificationsNow(notBefore: now.addingTimeInterval(busyInARow > 8 ? 30 : 0.25))
            return
        }
        armNotificationsNow()
    }

    /// The app has no process of the daemon's any more: what was kept about it goes, and
    /// the callers waiting for its end are returned, to be called after the lock.
    private static func forgetProcess(in state: inout State) -> [@Sendable () -> Void] {
        state.process = nil
        state.frozenBaseline = nil
        defer { state.processWaiters = [] }
        return state.processWaiters
    }

    private func processExited(_ how: String, pid: Int32) {
        let (current, waiters) = state.withLock { state -> (Bool, [@Sendable () -> Void]) in
            guard state.process?.pid == pid else { return (false, []) }
            return (true, Self.forgetProcess(in: &state))
        }
        for waiter in waiters { waiter() }
        // A process handed over to the user's (or replaced) is no longer the app's.
        if current {
            processChanged(app, nil)
            feed(.processExited(how))
        }
        // Logged once the app's state says so: whoever reads this line and then asks
        // (`bgtask apps`) sees the process gone.
        log(.info, app: app, "\(app)'s process \(how) (pid \(pid))")
    }
}
