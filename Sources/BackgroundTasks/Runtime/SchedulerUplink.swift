import DaemonProtocol
import Foundation
import Synchronization
import SchedulerCore

/// The app's end of its connection to bgtaskd (docs/daemon.md, "The app side"). When an
/// app runs under the daemon, its ``SchedulerDriver`` holds no engine of its own: every
/// request goes up this link, and the daemon pushes runs down it
/// (``SchedulerDriver/handle(_:)``).
public protocol SchedulerUplink: AnyObject, Sendable {
    /// Sends `request` and waits for its reply (a bounded wait: a daemon that does not
    /// answer is a failure, never a hang).
    func call(_ request: AppRequest) throws(DaemonFailure) -> Reply
    /// Sends `request` without waiting for its reply (ordered after every earlier send).
    func post(_ request: AppRequest)
    /// Where the daemon is, for messages ("bgtaskd (pid 12, /run/user/1000/bgtaskd/socket)").
    var daemonDescription: String { get }
    /// The daemon asked the app to leave (``AppPush/quit(reason:)``): a connection lost from
    /// now on is not made again.
    func stopReconnecting(reason: String)
    /// A cancel (`cancel` or `cancelAll`) that could not reach the daemon: sent on the
    /// next connection before anything else, so the app's intent is not lost to an
    /// outage. Returns false when there will be no next connection.
    func sendWhenConnected(_ cancel: AppRequest) -> Bool
}

extension SchedulerUplink {
    /// An uplink that never reconnects (a test's, a fixed link) has nothing to stop.
    public func stopReconnecting(reason: String) {}
    /// An uplink that never reconnects has no next connection.
    public func sendWhenConnected(_ cancel: AppRequest) -> Bool { false }
}

extension SchedulerDriver {
    /// Whether this driver's app runs under bgtaskd (its engine is the daemon's).
    public var isLinkedToDaemon: Bool { uplink != nil }

    /// A message the daemon pushed: runs to start, expirations, ends.
    public func handle(_ push: AppPush) {
        guard let uplink else { return }
        switch push {
        case .launch(let record, let budget):
            guard let context = linkedContext(of: record.app) else {
                uplink.post(.launchFailed(run: record.id, reason: "\(record.app) is not the app of this process"))
                return
            }
            guard let task = context.makeTask(for: record) else {
                let reason = "no launch handler registered for task with identifier '\(record.identifier)'"
                log(.error, app: record.app, reason)
                uplink.post(.launchFailed(run: record.id, reason: reason))
                return
            }
            // A budget no real daemon gives (not finite, negative, over a year): the run is
            // refused, not armed (a deadline far beyond any date is no deadline at all).
            if let budget, !(budget.isFinite && (0...Self.longestLinkedBudget).contains(budget)) {
                let reason = "bgtaskd handed over \(record.id) with a budget of \(budget) s, outside 0 to \(Int(Self.longestLinkedBudget)) s; not started"
                log(.error, app: record.app, reason)
                uplink.post(.launchFailed(run: record.id, reason: reason))
                return
            }
            linkedRuns.withLock { $0[record.id] = task }
            trace(.launched(record, budget: nil, evaluation: nil))
            if let budget { armDeadline(of: task, at: record.startedAt.addingTimeInterval(budget), budget: budget) }
            context.deliver(task)
        case .expire(let run, let reason):
            guard let task = linkedRuns.withLock({ $0[run] }) else { return }
            expireLinked(task, reason: reason)
        case .terminate(let run, let reason):
            // The daemon recorded the run as terminated: no end follows, so it is over here.
            guard let task = linkedRuns.withLock({ $0.removeValue(forKey: run) }) else { return }
            trace(.terminated(run, task.key, reason: reason, at: clock.now()))
            task.terminate(reason: reason)
            if linkedRuns.withLock({ $0.isEmpty }) { linkedRunsEnded() }
        case .finished(let record):
            guard let task = linkedRuns.withLock({ $0.removeValue(forKey: record.id) }) else { return }
            trace(.finished(record))
            task.runDidFinish(record)
            if linkedRuns.withLock({ $0.isEmpty }) { linkedRunsEnded() }
        case .sampleProgress(let run):
            guard let task = linkedRuns.withLock({ $0[run] }) else { return }
            uplink.post(.progressSampled(run: run, completedUnitCount: task.progressCompletedUnitCount))
        case .foreground, .background:
            // The user's word from outside (`bgtask open`, `bgtask background`): the app's
            // lifecycle moves as it does on iOS (its delegate and observers hear it), and the
            // daemon, which said it, is not told again.
            let toForeground = push == .foreground
            for context in linkedContexts {
                movingAtTheDaemonsWord.withLock { $0 = true }
                defer { movingAtTheDaemonsWord.withLock { $0 = false } }
                if toForeground { context.application.enterForeground() } else { context.application.enterBackground() }
            }
        case .deviceConditions(let conditions):
            // The daemon's scheduler saw the device change (or says how it is, after the
            // launch): the app's change notifications follow from it (DeviceChangeNotifier),
            // as from an embedded scheduler's own watcher. A level no battery has is not one.
            var reported = conditions
            if reported.batteryPercent == nil { reported.batteryLevel = nil }
            trace(.conditionsChanged(reported, at: clock.now()))
        case .notificationResponse(let response):
            // The user's response from outside (`bgtask respond`): the app's notification
            // center tells its delegate, and brings the app to the foreground for a tap, which
            // the app then reports to the daemon as any move of its own.
            for context in linkedContexts {
                guard let responder = context.notificationResponder else {
                    log(.warning, app: context.app, "bgtaskd sent the user's response to notification \"\(response.notification)\", but this process has not used its notification center (UNUserNotificationCenter.current()): there is no delegate to tell")
                    continue
                }
                _ = responder.respond(toNotificationWithIdentifier: response.notification, actionIdentifier: response.action, userText: response.text)
            }
        case .quit(let reason):
            log(.info, app: linkedContexts.first?.app, "bgtaskd asked the app to leave: \(reason); it will not reconnect")
            uplink.stopReconnecting(reason: "bgtaskd asked the app to leave: \(reason)")
        }
    }

    /// The longest budget a run handed over by bgtaskd may carry: a year (no kind of task
    /// has one near it; continued processing has none).
    static let longestLinkedBudget: TimeInterval = 366 * 86_400

    /// Arms the app's own timer for a linked run's budget deadline. The daemon's engine
    /// expires the run at the same instant (`startedAt + budget` on the same wall clock) and
    /// pushes `expire`, but the push crosses the daemon's deadline queue, its connection and
    /// this process's reader before the handler runs, and any of those threads may be late;
    /// the app's own timer is one hop from the handler. Whichever comes first delivers the
    /// expiration, the other finds it delivered. The daemon stays the authority: a report
    /// of this run that reaches it after the deadline is judged after the deadline's
    /// expiration (SchedulerEngine.handle), and its grace period and termination are its
    /// own (docs/daemon.md, "Launching for tasks").
    private func armDeadline(of task: BGTask, at deadline: Date, budget: TimeInterval) {
        let reason = "budget of \(Int(saturating: budget)) s exhausted"
        let timer = clock.schedule(at: deadline, on: task.expirationQueue) { [weak self, weak task] in
            guard let self, let task, self.linkedRuns.withLock({ $0[task.runID] === task }) else { return }
            self.expireLinked(task, reason: reason)
        }
        task.armDeadline(timer)
    }

    /// Delivers a linked run's expiration, once (the daemon's push or the app's own timer).
    private func expireLinked(_ task: BGTask, reason: String) {
        let now = clock.now()
        guard task.deliverExpiration() else { return }
        trace(.expired(task.runID, task.key, reason: reason, at: now))
    }

    /// The connection to the daemon closed: the runs it handed over can no longer report
    /// their end (the daemon recorded them as crashed when the connection went, or the next
    /// daemon restores them as interrupted), so each gets its expiration, the app's cue to
    /// stop the work and save what it can (the daemon hands the request out again), and is
    /// ended here; whoever waits for the runs to end (a SIGTERM exit) is called. Returns the
    /// runs, for a caller that waits for the app to complete them
    /// (``waitForCompletion(of:timeout:)``) before the process exits.
    @discardableResult
    func linkClosed(reason: String) -> [BGTask] {
        let tasks = linkedRuns.withLock { runs -> [BGTask] in
            defer { runs.removeAll() }
            return Array(runs.values)
        }
        let why = "the connection to bgtaskd closed: \(reason)"
        for task in tasks {
            // Taken out of the linked runs first: what the handlers report now has no daemon.
            if task.deliverExpiration() { trace(.expired(task.runID, task.key, reason: why, at: clock.now())) }
            trace(.terminated(task.runID, task.key, reason: why, at: clock.now()))
            task.terminate(reason: why, advise: false)
        }
        linkedRunsEnded()
        return tasks
    }

    /// Waits at most `timeout` seconds for the app to call `setTaskCompleted` on each of
    /// `tasks` (after their expiration); returns whether all were completed. Never call it
    /// on a queue an expiration handler needs (the main queue, an app queue).
    func waitForCompletion(of tasks: [BGTask], timeout: TimeInterval) -> Bool {
        let group = DispatchGroup()
        for task in tasks {
            group.enter()
            task.whenCompleted { group.leave() }
        }
        return group.wait(timeout: .now() + .milliseconds(Int(max(0, min(timeout, 3600)) * 1000))) == .success
    }

    /// The process is about to exit (SIGTERM from bgtaskd, which ends its processes so):
    /// every run it was handed gets its expiration now, as iOS gives a task before the app
    /// is killed; the daemon records how each ends when the app reports it.
    func expireLinkedRuns(reason: String) {
        let tasks = linkedRuns.withLock { Array($0.values) }
        for task in tasks { expireLinked(task, reason: reason) }
    }

    /// The linked app's runs in progress (handed down by the daemon, not yet finished).
    var linkedRunCount: Int { linkedRuns.withLock { $0.count } }

    /// Calls a request on the daemon, turning a failure into the error the API throws.
    func linkedCall(_ request: AppRequest, uplink: any SchedulerUplink) throws(DaemonFailure) -> Reply {
        let reply = try uplink.call(request)
        if case .failed(let failure) = reply { throw failure }
        return reply
    }

    /// An engine error from a failure the daemon reported for a testing hook.
    static func engineError(_ failure: DaemonFailure) -> EngineError {
        switch failure.code {
        case .noRunningTask: EngineError(.noRunningTask, failure.message)
        case .alreadyRunning: EngineError(.alreadyRunning, failure.message)
        default: EngineError(.noPendingRequest, failure.message)
        }
    }

    /// A submit rejection from a failure the daemon reported (or a lost connection).
    static func submitRejection(_ failure: DaemonFailure) -> SubmitRejection {
        SubmitRejection(failure.rejection ?? .unavailable, failure.message)
    }
}
