import Foundation
import DaemonProtocol
import SchedulerCore

/// What bgtaskd does with one installed app's process, as a pure state machine
/// (docs/daemon.md, "Launching for tasks"): events in, actions out, no I/O and no clock.
/// ``AppSupervisor`` is the shell that carries the actions out.
///
/// The life of an app under the daemon: not running; **starting** (spawned for a run,
/// waiting for it to connect and finish launching, the registration window, within
/// ``Timing/launchTimeout``); **ready** (connected and launched: runs are handed to it as
/// they come); when its last run ends and nobody opened it, **suspended** after
/// ``Timing/suspendDelay`` (cgroup freezer or SIGSTOP), thawed for its next run, and
/// **ended** after ``Timing/idleTimeout`` suspended. A process the user started itself
/// connects the same way and is never suspended or ended by the daemon.
public struct AppSupervision: Sendable, Equatable {
    /// The durations the supervision waits.
    public struct Timing: Sendable, Equatable {
        /// How long a spawned app has to connect and finish launching.
        public var launchTimeout: TimeInterval = 10
        /// How long after its last run an app the daemon launched is suspended.
        public var suspendDelay: TimeInterval = 1
        /// How long a suspended app stays before it is ended.
        public var idleTimeout: TimeInterval = 300
        /// SIGTERM to SIGKILL.
        public var killGrace: TimeInterval = 3
        /// How long a process holding background assertions is left running after its last
        /// run before it is suspended anyway: the assertion window (30 s) and the time the
        /// expiration handlers have (5 s), with a margin. The app's own lifecycle ends its
        /// assertions within that; this bounds an app that does not say so.
        public var assertionWindow: TimeInterval = 40
        /// The engine's expiration grace (``SchedulerConfiguration/expirationGrace``), when
        /// the supervision is to end a run itself that this long after its budget's deadline
        /// is still not over: at that instant, not when the engine gets to it (the engine
        /// records the run's end durably before it tells the host, and the signal would wait
        /// for that commit). `nil`: the run is ended when the engine says so.
        public var terminationGrace: TimeInterval? = nil

        /// The defaults.
        public init() {}
    }

    /// Something that happened to the app.
    public enum Event: Sendable, Equatable {
        /// The engine launched `run`.
        case launch(RunRecord, budget: TimeInterval?)
        /// The engine expired `run`.
        case expire(RunID, reason: String)
        /// The engine ended `run` by force after its grace period.
        case terminate(RunID, reason: String)
        /// The engine recorded the end of `run`.
        case finished(RunRecord)
        /// The process the daemon spawned is running (its pid).
        case spawned(pid: Int32)
        /// Spawning failed.
        case spawnFailed(String)
        /// The daemon's process exited (how, in words).
        case processExited(String)
        /// The app connected (the peer's pid).
        case connected(pid: Int32)
        /// The app said it finished launching.
        case finishedLaunching
        /// The app's connection closed.
        case disconnected(String)
        /// The user started a process of the app while the daemon's own lived with nothing
        /// handed to it: the daemon's is ended and the user's (the peer's pid) is the app
        /// from now on; runs waiting for the daemon's process to finish launching wait for
        /// the user's instead.
        case handOver(to: Int32)
        /// The user started a process of the app while the daemon's own runs tasks
        /// (``isBusy(for:)``): those runs get their expiration now, so that the user's
        /// process, asking again, can take the app over once they end.
        case userWaiting
        /// The budget deadline of a run handed to the app passed (``Action/armDeadline(_:at:)``).
        case deadlineDue(RunID)
        /// The grace after a run's budget deadline passed (``Action/armGraceEnd(_:after:)``).
        case graceEnded(RunID)
        /// The app said it completed `run` (before the engine, which records the end durably
        /// first, says the run is over): the run is not ended by force at its grace's end.
        case completing(RunID)
        /// The launch timer fired.
        case launchTimedOut
        /// The suspend timer fired.
        case suspendDue
        /// The idle timer fired.
        case idleDue
        /// The user opened the app: `bgtask open` (`tellApp`: the app is told to come to
        /// the foreground), or the app's own report.
        case opened(tellApp: Bool = false)
        /// The app went to the background: `bgtask background` (`tellApp`: the app is
        /// told), or the app's own report.
        case backgrounded(tellApp: Bool = false)
        /// The app began its first background assertion (`true`) or ended its last.
        case assertions(held: Bool)
        /// The user force-quit the app, or it was uninstalled: the app is told to leave and
        /// its process ended, the daemon's own (SIGTERM to its group, SIGKILL after the grace)
        /// or one the user started (SIGTERM to that process).
        case quit(String)
        /// bgtaskd is stopping: its own process of the app is told to quit and ended, as on
        /// a force-quit; a process the user started is left to reconnect to the next bgtaskd
        /// (the daemon's close drops its connection: docs/daemon.md, "Reconnecting").
        case daemonStopping(String)
        /// bgtaskd begins to stop: the runs waiting for the process to launch are failed now
        /// (their requests filed again), before the runs in progress are expired, which
        /// would otherwise cut them off as if the app had been handed them.
        case daemonStoppingLaunches(String)
        /// The engine's view of the device changed (or was first taken): a launched app
        /// that runs is told at once, a frozen one when it is thawed, the latest only
        /// (``AppPush/deviceConditions(_:)``), so it posts iOS's change notifications.
        case deviceChanged(Conditions)
        /// The user responded to one of the app's delivered notifications (`bgtask respond`):
        /// pushed to the launched process, which is thawed for it if frozen and suspended
        /// again once idle (a background action's delegate holds background time, a tap
        /// brings the app to the foreground, which it reports); after the launch of a process
        /// still starting, or of one started for it when none runs. Fed only when
        /// ``responseRefusal(_:)`` found none.
        case notificationResponse(NotificationResponseRequest)
    }

    /// Why a response to a notification cannot be taken now: a process of the app is being
    /// ended. A launched process (running or frozen) gets it at once; one still launching,
    /// once it has finished (its delegate is set by then); with none, the daemon starts the
    /// app for it, as iOS launches an app whose notification the user tapped.
    public static func responseRefusal(_ supervision: AppSupervision) -> String? {
        switch supervision.phase {
        case .ready, .suspended, .notRunning:
            return nil
        case .starting:
            guard supervision.waitingResponses.count < maximumWaitingResponses else {
                return "\(maximumWaitingResponses) responses already wait for its launch"
            }
            return nil
        case .ending:
            return "it is being ended; respond again once it has gone"
        }
    }

    /// The most responses that wait for one launch.
    public static let maximumWaitingResponses = 16

    /// Whether a tap (the default action) waits for the launch: the process is then started
    /// in the foreground.
    private var waitsForATap: Bool {
        waitingResponses.contains { $0.action == NotificationResponseRequest.defaultAction }
    }

    /// What the shell must do, in order.
    public enum Action: Sendable, Equatable {
        /// Start the app's executable in the background.
        case spawn
        /// Start the app's executable as the user opening it (a tap on one of its
        /// notifications): it launches into the foreground, and reports it.
        case spawnOpened
        /// Send a message to the connected app.
        case push(AppPush)
        /// Thaw the suspended process.
        case resume
        /// Freeze the process (cgroup freezer, else SIGSTOP).
        case suspend
        /// SIGTERM to the process group, SIGKILL after the grace period.
        case terminateProcess(reason: String)
        /// SIGTERM to the process the user started (the pid its connection came from, while
        /// it is still the process that connected; not its process group, which may be the
        /// user's shell's): a force-quit, an uninstall or an install of another executable
        /// ends the app whoever started it, as on iOS. It comes before the connection is
        /// closed.
        case terminateUsersProcess(reason: String)
        /// Close the app's connection.
        case disconnect(reason: String)
        /// Tell the engine the run could not start.
        case launchFailed(RunID, reason: String)
        /// Log that the user's response to a notification, which waited for the app's
        /// launch, was not delivered: the launch failed.
        case responseDropped(NotificationResponseRequest, reason: String)
        /// Tell the engine the run's process died.
        case runCrashed(RunID, reason: String)
        /// Ask the engine to expire the app's runs in progress now.
        case expireRuns(reason: String)
        /// Arm (or re-arm) the one timer for `after` seconds, firing `event`.
        case arm(Timer, after: TimeInterval)
        /// Arm the budget deadline of a run handed over, firing ``Event/deadlineDue(_:)``.
        case armDeadline(RunID, at: Date)
        /// Arm the end of the grace after a run's budget deadline, `after` seconds from now
        /// (when the deadline was handled: after a system sleep, the app gets its whole grace
        /// from the resume), firing ``Event/graceEnded(_:)``, in place of the run's deadline
        /// (``disarmDeadline(_:)`` cancels either).
        case armGraceEnd(RunID, after: TimeInterval)
        /// Cancel the budget deadline (or the grace's end) of a run that is over.
        case disarmDeadline(RunID)
        /// Cancel the timer.
        case disarm
    }

    /// The one timer the supervision keeps.
    public enum Timer: Sendable, Equatable {
        /// The launch deadline.
        case launch
        /// The suspend delay.
        case suspend
        /// The idle timeout.
        case idle
    }

    /// Where the process is.
    public enum Phase: Sendable, Equatable {
        /// No process the daemon knows of.
        case notRunning
        /// Spawned (or being spawned) for runs, not yet launched.
        case starting
        /// Connected and launched.
        case ready
        /// Frozen by the daemon.
        case suspended
        /// Being ended (SIGTERM sent).
        case ending
    }

    /// The durations.
    public var timing: Timing
    /// Where the process is.
    public private(set) var phase: Phase = .notRunning
    /// Whether the daemon spawned the process (only those are suspended and ended).
    public private(set) var spawnedByDaemon = false
    /// The pid of the daemon's process, when known.
    public private(set) var pid: Int32?
    /// Whether the app's connection is open.
    public private(set) var connected = false
    /// Whether the user has the app open (never suspended then).
    public private(set) var foreground = false
    /// The user's responses to notifications that wait for the process to finish launching
    /// (pushed then, after its runs); dropped, with the runs, when it does not.
    public private(set) var waitingResponses: [NotificationResponseRequest] = []
    /// Whether the app holds background assertions (suspended only after
    /// ``Timing/assertionWindow`` then).
    public private(set) var assertionsHeld = false
    /// Whether the assertion window was granted in this idle period: it is granted once
    /// (a new run handed over, the app opened or a new process start a new period), so an
    /// app that begins and ends assertions over and over is not left running for ever.
    public private(set) var assertionWindowGranted = false
    /// Runs waiting for the app to finish launching.
    public private(set) var queued: [RunRecord] = []
    private var budgets: [RunID: TimeInterval?] = [:]
    /// Runs handed to the app and not yet over.
    public private(set) var active: Set<RunID> = []
    /// Runs that were in progress when the connection of the daemon's own process closed:
    /// recorded as crashed when that process's exit is reported, so their record says how
    /// it ended (a signal, an exit code) and not only that the connection closed, which
    /// the exit of a crashing process closes first. The exit comes: the process is being
    /// ended (SIGTERM, SIGKILL after the kill grace).
    public private(set) var runsAwaitingExit: Set<RunID> = []
    /// Why the connection of the runs awaiting the exit closed.
    private var connectionClose = ""
    /// The budgets of the runs handed over that have one.
    private var activeBudgets: [RunID: TimeInterval] = [:]
    /// Runs the app said it completed, not yet over for the engine.
    private var completing: Set<RunID> = []
    /// Runs whose expiration was pushed to the app (by their deadline or by the engine):
    /// it is pushed once.
    public private(set) var expirationPushed: Set<RunID> = []
    /// Expirations of runs still waiting for the launch, pushed right after them.
    private var expirationsWaiting: [RunID: String] = [:]
    /// The device's conditions as the engine last reported them; `nil` until known.
    public private(set) var deviceConditions: Conditions?
    /// What the app on the current connection last heard of the device (``heard(_:)``);
    /// `nil` while it was told nothing (a new connection is told again).
    private var deviceConditionsSent: Conditions?

    /// A supervision with `timing`.
    public init(timing: Timing = .init()) {
        self.timing = timing
    }

    /// Whether a connection from `peer` may become the app's: one connection per app, and
    /// while the daemon's own process of the app lives, only from that process.
    public func accepts(pid peer: Int32) -> Bool {
        !connected && (pid == nil || pid == peer)
    }

    /// Whether a connection from `peer` may take the app over from the daemon's own
    /// process (``Event/handOver(to:)``): that process has nothing handed to it (runs
    /// waiting for it to finish launching go to the user's process instead) and is not
    /// already being ended.
    public func canHandOver(to peer: Int32) -> Bool {
        spawnedByDaemon && pid != nil && pid != peer && active.isEmpty && phase != .ending
    }

    /// Whether a connection from `peer` must wait for the daemon's own process of the app
    /// (``FailureCode/busy``): that process is running tasks, or being ended. It is neither
    /// accepted nor handed over now, but will be once those runs end (``Event/userWaiting``
    /// expires them).
    public func isBusy(for peer: Int32) -> Bool {
        spawnedByDaemon && pid != nil && pid != peer && (!active.isEmpty || phase == .ending)
    }

    /// Feeds `event`; returns the actions, in order.
    public mutating func handle(_ event: Event) -> [Action] {
        var actions: [Action] = []
        apply(event, into: &actions)
        tellDevice(into: &actions)
        return actions
    }

    /// Tells the app of the device's conditions when it can hear (connected, launched, not
    /// frozen or being ended) and was not told them on this connection yet: after whatever
    /// `handle` just did, so a change made while the app was frozen reaches it right after
    /// the thaw, and a launch's first push follows the runs it was started for.
    private mutating func tellDevice(into actions: inout [Action]) {
        guard connected else {
            deviceConditionsSent = nil
            return
        }
        guard phase == .ready, let conditions = deviceConditions else { return }
        let heard = Self.heard(conditions)
        guard heard != deviceConditionsSent else { return }
        deviceConditionsSent = heard
        // A number JSON cannot carry (no reader gives one) would lose the whole push; a level
        // no battery has is no level (the app takes it so too).
        var sent = conditions
        if sent.batteryPercent == nil { sent.batteryLevel = nil }
        if let pressure = sent.cpuPressure, !pressure.isFinite { sent.cpuPressure = nil }
        actions.append(.push(.deviceConditions(sent)))
    }

    /// What an app makes of the device's conditions (iOS's change notifications: Low Power
    /// Mode, the thermal state, the battery's state and whole percent, external power); the
    /// rest (network, idleness, CPU pressure: they change at nearly every look) is left
    /// out of the comparison, so the app is not woken for what it never posts.
    static func heard(_ conditions: Conditions) -> Conditions {
        var heard = conditions
        heard.networkAvailable = true
        heard.networkMetered = nil
        heard.deviceIdle = true
        heard.cpuPressure = nil
        heard.batteryLevel = conditions.batteryPercent.map(Double.init)
        return heard
    }

    private mutating func apply(_ event: Event, into actions: inout [Action]) {
        switch event {
        case .deviceChanged(let conditions):
            deviceConditions = conditions
        case .launch(let run, let budget):
            queued.append(run)
            budgets[run.id] = budget
            switch phase {
            case .notRunning:
                startProcess(into: &actions)
            case .suspended:
                phase = .ready
                actions.append(.resume)
                actions.append(.disarm)
            case .starting:
                // A process the user started that is still launching: the run waits at most
                // the launch timeout for it (its earlier deadline may have passed).
                if !spawnedByDaemon, connected { actions.append(.arm(.launch, after: timing.launchTimeout)) }
            case .ready:
                actions.append(.disarm)
            case .ending:
                break
            }
            flush(into: &actions)
        case .expire(let run, let reason):
            if active.contains(run), expirationPushed.insert(run).inserted {
                actions.append(.push(.expire(run: run, reason: reason)))
            } else if queued.contains(where: { $0.id == run }) {
                // Expired before the app finished launching: the expiration follows the
                // launch when it is handed over, so the handler still hears of it in time.
                expirationsWaiting[run] = reason
            }
        case .deadlineDue(let run):
            // The app hears of its budget's end at the deadline itself, not when the engine,
            // which may be busy writing the store, gets to it; the engine then expires the
            // run as well (grace, termination), and that expiration is not pushed again.
            guard active.contains(run), let budget = activeBudgets[run] else { break }
            if expirationPushed.insert(run).inserted {
                actions.append(.push(.expire(run: run, reason: Self.budgetExhausted(budget))))
            }
            // The app has had its expiration by now (pushed here, or earlier by the engine),
            // so its grace ends a grace after this deadline: the run is ended then, even
            // when the engine, slowed by its store, has not said so yet.
            if let grace = timing.terminationGrace, grace.isFinite, grace >= 0, !completing.contains(run) {
                actions.append(.armGraceEnd(run, after: grace))
            }
        case .graceEnded(let run):
            // The run overran the grace since its expiration reached the app: it is ended
            // now. The engine records it as terminated at its own grace's end, and its word
            // then finds the run over. A completion the app sent is the engine's to judge (it
            // may still come within the engine's grace, which began when it expired the run).
            guard active.contains(run), !completing.contains(run), let budget = activeBudgets[run] else { break }
            terminate(run, reason: Self.budgetExhausted(budget), into: &actions)
        case .completing(let run):
            if active.contains(run) { completing.insert(run) }
        case .terminate(let run, let reason):
            // A run still waiting for the launch is over for the engine: never hand it over.
            dropQueued(run)
            terminate(run, reason: reason, into: &actions)
        case .finished(let record):
            dropQueued(record.id)
            runsAwaitingExit.remove(record.id)
            if active.remove(record.id) != nil {
                forget(record.id, into: &actions)
                if connected { actions.append(.push(.finished(record))) }
            }
            armWhenIdle(into: &actions)
        case .spawned(let pid):
            self.pid = pid
        case .spawnFailed(let reason):
            phase = .notRunning
            spawnedByDaemon = false
            actions.append(.disarm)
            failQueued("the app could not be started: \(reason)", into: &actions)
        case .processExited(let how):
            for run in runsAwaitingExit.sorted() {
                actions.append(.runCrashed(run, reason: "the app's connection closed during the run (\(connectionClose)) and its process \(how)"))
            }
            runsAwaitingExit.removeAll()
            let wasEnding = phase == .ending
            let linkWasOurs = connected && spawnedByDaemon
            pid = nil
            phase = .notRunning
            spawnedByDaemon = false
            // Foreground and assertions are the state of a process: the next one starts
            // in the background, holding none.
            foreground = false
            assertionsHeld = false
            assertionWindowGranted = false
            actions.append(.disarm)
            crashActive("the app's process \(how) during the run", into: &actions)
            if linkWasOurs {
                connected = false
                actions.append(.disconnect(reason: "its process \(how)"))
            }
            if wasEnding, !queued.isEmpty || !waitingResponses.isEmpty {
                // Runs came while the daemon was ending the app: the daemon's decision is
                // no fault of the app's, so a new process is started for them.
                startProcess(opened: waitsForATap, into: &actions)
            } else {
                failQueued("the app's process \(how) before it finished launching", into: &actions)
            }
        case .connected(let peer):
            // The shell accepts a connection only when ``accepts(pid:)`` says so.
            connected = true
            if pid == nil {
                // A process the user started: it is the app from now on, but the daemon
                // never suspends or ends what it did not start.
                spawnedByDaemon = false
                phase = .starting
                // Runs wait for its registration window as for a process of the daemon's.
                actions.append(.arm(.launch, after: timing.launchTimeout))
            } else if pid != peer {
                connected = false
            }
        case .finishedLaunching:
            guard connected else { break }
            if phase == .starting || phase == .notRunning {
                phase = .ready
                actions.append(.disarm)
            }
            flush(into: &actions)
            for response in waitingResponses { actions.append(.push(.notificationResponse(response))) }
            waitingResponses.removeAll()
            armWhenIdle(into: &actions)
        case .disconnected(let reason):
            connected = false
            assertionsHeld = false
            assertionWindowGranted = false
            if spawnedByDaemon, pid != nil {
                // Its runs end with its exit, which says how (below: the process is ended).
                runsAwaitingExit.formUnion(takeActive(into: &actions))
                connectionClose = reason
                // Gone before it finished launching: the runs it was started for failed to
                // launch (the app's doing, a throttle strike), not runs for a fresh process
                // when it exits, which would start one after another without end.
                if phase == .starting {
                    failQueued("the app closed its connection before it finished launching (\(reason))", into: &actions)
                }
                // A process of ours without its connection cannot run tasks: end it.
                if phase != .ending { end(reason: "it closed its connection", into: &actions) }
            } else {
                // The user's process is gone (its exit is not the daemon's to see): the app
                // is no longer open, and a process the daemon starts for the next run is
                // suspended when its work is done.
                crashActive("the app closed its connection during the run (\(reason))", into: &actions)
                phase = .notRunning
                spawnedByDaemon = false
                foreground = false
                actions.append(.disarm)
                if !queued.isEmpty || !waitingResponses.isEmpty {
                    // Runs (or the user's responses) were waiting for this process: start one
                    // of our own for them.
                    startProcess(opened: waitsForATap, into: &actions)
                }
            }
        case .handOver:
            // The shell closed the old connection and holds the new one.
            if phase == .suspended { actions.append(.resume) }
            actions.append(.disarm)
            actions.append(.terminateProcess(reason: "the user started another process of the app"))
            pid = nil
            spawnedByDaemon = false
            connected = true
            deviceConditionsSent = nil
            foreground = false
            assertionsHeld = false
            assertionWindowGranted = false
            phase = .starting
            actions.append(.arm(.launch, after: timing.launchTimeout))
        case .userWaiting:
            // The user's process is the app's future: the runs of the daemon's end early, as
            // processing does when the user starts using the device.
            if !active.isEmpty, phase != .ending {
                actions.append(.expireRuns(reason: "the user started another process of the app"))
            }
        case .launchTimedOut:
            guard phase == .starting else { break }
            failQueued("the app did not connect and finish launching within \(DurationText.spoken(timing.launchTimeout))", into: &actions)
            // A process of ours that does not launch is ended; one the user started is not
            // the daemon's to end: it keeps its connection and gets runs once it launches.
            if spawnedByDaemon { end(reason: "it did not finish launching in time", into: &actions) }
        case .suspendDue:
            guard phase == .ready, spawnedByDaemon, !foreground, active.isEmpty, queued.isEmpty else { break }
            phase = .suspended
            actions.append(.suspend)
            actions.append(.arm(.idle, after: timing.idleTimeout))
        case .idleDue:
            guard phase == .suspended else { break }
            end(reason: "idle for \(DurationText.spoken(timing.idleTimeout))", into: &actions)
        case .notificationResponse(let response):
            guard Self.responseRefusal(self) == nil else { break }
            switch phase {
            case .notRunning:
                waitingResponses.append(response)
                // A tap opens the app: started in the foreground, as iOS launches it (another
                // action's options are the app's to know: it comes forward itself for one).
                startProcess(opened: response.action == NotificationResponseRequest.defaultAction, into: &actions)
            case .starting:
                waitingResponses.append(response)
                // A process the user started that is still launching: the response waits at
                // most the launch timeout for it, as a run does (armed once: more responses
                // do not put the deadline off).
                if !spawnedByDaemon, connected, waitingResponses.count == 1 { actions.append(.arm(.launch, after: timing.launchTimeout)) }
            case .suspended, .ready:
                if phase == .suspended {
                    phase = .ready
                    actions.append(.resume)
                    // A new reason to run, as a launch: an assertion the app takes for it (a
                    // background action's delegate) gets its window.
                    assertionWindowGranted = false
                }
                actions.append(.push(.notificationResponse(response)))
                armWhenIdle(into: &actions)
            case .ending:
                break  // refused above (responseRefusal)
            }
        case .opened(let tellApp):
            // Foreground is the state of a process: with none connected there is nothing
            // open (the next process the daemon starts is in the background).
            guard connected else { break }
            foreground = true
            assertionWindowGranted = false
            if phase == .suspended {
                phase = .ready
                actions.append(.resume)
            }
            actions.append(.disarm)
            // The app's own report needs no echo; the user's word from outside is news to it.
            if tellApp { actions.append(.push(.foreground)) }
        case .backgrounded(let tellApp):
            foreground = false
            if tellApp, connected { actions.append(.push(.background)) }
            armWhenIdle(into: &actions)
        case .assertions(let held):
            assertionsHeld = held
            if held, phase == .suspended, spawnedByDaemon, !foreground, !assertionWindowGranted {
                // Sent before the freeze, read after it: the app began an assertion while it
                // still ran, so it gets its window, as it would have.
                phase = .ready
                actions.append(.resume)
                actions.append(.disarm)
            }
            // The suspension waits out the assertion window, or comes soon now none is held.
            armWhenIdle(into: &actions)
        case .quit(let reason):
            foreground = false
            failQueued(Self.stoppedBeforeStart(reason), into: &actions)
            if connected { actions.append(.push(.quit(reason: reason))) }
            if spawnedByDaemon, pid != nil {
                end(reason: reason, into: &actions)
            } else if connected {
                // Disconnected alone, it would run on without its scheduler while `bgtask
                // apps` says it is not running (an outside crash probe).
                actions.append(.terminateUsersProcess(reason: reason))
                disconnect(reason: reason, into: &actions)
            }
        case .daemonStoppingLaunches(let reason):
            failQueued(Self.stoppedBeforeStart(reason), into: &actions)
        case .daemonStopping(let reason):
            // Nothing is queued after the stop's first step (nothing launches then); a run
            // queued all the same is failed as that step fails them.
            failQueued(Self.stoppedBeforeStart(reason), into: &actions)
            // Only the daemon's own process is the daemon's to end. Telling a process the user
            // started to quit would end its attempts to reconnect for good: `systemctl --user
            // restart bgtaskd` would cut every open app off its scheduler until restarted.
            if spawnedByDaemon, pid != nil {
                foreground = false
                if connected { actions.append(.push(.quit(reason: reason))) }
                end(reason: reason, into: &actions)
            }
        }
    }

    /// Starts a process of the daemon's for the queued runs; it has the launch timeout to
    /// connect and finish launching.
    private mutating func startProcess(opened: Bool = false, into actions: inout [Action]) {
        phase = .starting
        spawnedByDaemon = true
        actions.append(opened ? .spawnOpened : .spawn)
        actions.append(.arm(.launch, after: timing.launchTimeout))
    }

    /// Hands the queued runs to a launched, connected app, each with its budget's deadline
    /// armed (from the run's start, as the engine counts it).
    private mutating func flush(into actions: inout [Action]) {
        guard phase == .ready, connected else { return }
        // Runs handed over start a new idle period after them, with its own window.
        if !queued.isEmpty { assertionWindowGranted = false }
        for run in queued {
            active.insert(run.id)
            let budget = budgets.removeValue(forKey: run.id) ?? nil
            actions.append(.push(.launch(run, budget: budget)))
            if let reason = expirationsWaiting.removeValue(forKey: run.id) {
                expirationPushed.insert(run.id)
                actions.append(.push(.expire(run: run.id, reason: reason)))
            } else if let budget {
                activeBudgets[run.id] = budget
                actions.append(.armDeadline(run.id, at: run.startedAt.addingTimeInterval(budget)))
            }
        }
        queued.removeAll()
    }

    /// A run handed over is over: its deadline goes.
    private mutating func forget(_ run: RunID, into actions: inout [Action]) {
        expirationPushed.remove(run)
        completing.remove(run)
        if activeBudgets.removeValue(forKey: run) != nil { actions.append(.disarmDeadline(run)) }
    }

    /// The reason a run whose `budget` ran out is expired and, after its grace, ended.
    private static func budgetExhausted(_ budget: TimeInterval) -> String {
        "budget of \(Int(saturating: budget)) s exhausted"
    }

    /// Ends `run`, handed over and overrunning its grace period, by force: the app hears of
    /// it, and the rest of the app's work dies with it (iOS kills the app whose task overran
    /// its grace). Nothing when the run is not (or no longer) the app's.
    private mutating func terminate(_ run: RunID, reason: String, into actions: inout [Action]) {
        guard active.remove(run) != nil else { return }
        forget(run, into: &actions)
        actions.append(.push(.terminate(run: run, reason: reason)))
        end(reason: "\(run) overran its grace period: \(reason)", into: &actions)
    }

    /// With nothing to run, an app the daemon launched is suspended after the delay (after
    /// the assertion window while it holds background assertions, as iOS gives an app
    /// holding one its time). The window is granted once per idle period: asked again
    /// within it, the timer already running is left alone.
    private mutating func armWhenIdle(into actions: inout [Action]) {
        guard phase == .ready, spawnedByDaemon, !foreground, active.isEmpty, queued.isEmpty else { return }
        if assertionsHeld {
            guard !assertionWindowGranted else { return }
            assertionWindowGranted = true
            actions.append(.arm(.suspend, after: timing.assertionWindow))
        } else {
            actions.append(.arm(.suspend, after: timing.suspendDelay))
        }
    }

    /// Closes the connection of a process the daemon did not start: the app is not
    /// running as far as the daemon knows, and its next process may connect.
    private mutating func disconnect(reason: String, into actions: inout [Action]) {
        connected = false
        foreground = false
        phase = .notRunning
        crashActive("the app's connection was closed during the run (\(reason))", into: &actions)
        actions.append(.disarm)
        actions.append(.disconnect(reason: reason))
    }

    private mutating func dropQueued(_ run: RunID) {
        guard let index = queued.firstIndex(where: { $0.id == run }) else { return }
        queued.remove(at: index)
        budgets[run] = nil
        expirationsWaiting[run] = nil
    }

    /// Why a run queued for a process that was stopped (a force-quit, an uninstall, bgtaskd's
    /// stop) never started.
    private static func stoppedBeforeStart(_ reason: String) -> String {
        "the app was stopped before the task could start: \(reason)"
    }

    private mutating func failQueued(_ reason: String, into actions: inout [Action]) {
        for run in queued { actions.append(.launchFailed(run.id, reason: reason)) }
        // The responses that waited for the launch go with it (the daemon's log says so).
        for response in waitingResponses { actions.append(.responseDropped(response, reason: reason)) }
        waitingResponses.removeAll()
        queued.removeAll()
        budgets.removeAll()
        expirationsWaiting.removeAll()
    }

    private mutating func crashActive(_ reason: String, into actions: inout [Action]) {
        for run in takeActive(into: &actions) { actions.append(.runCrashed(run, reason: reason)) }
    }

    /// The runs handed over, in order, each forgotten (its deadline disarmed): none is the
    /// app's any more.
    private mutating func takeActive(into actions: inout [Action]) -> [RunID] {
        let runs = active.sorted()
        for run in runs { forget(run, into: &actions) }
        active.removeAll()
        return runs
    }

    private mutating func end(reason: String, into actions: inout [Action]) {
        // Only a process of the daemon's is ended; one the user started loses its
        // connection (the daemon cannot end what it did not start).
        guard spawnedByDaemon, pid != nil || phase == .starting else {
            if connected { disconnect(reason: reason, into: &actions) }
            return
        }
        if phase == .suspended { actions.append(.resume) }
        phase = .ending
        actions.append(.disarm)
        actions.append(.terminateProcess(reason: reason))
    }
}
