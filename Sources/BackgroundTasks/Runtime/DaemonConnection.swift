import DaemonProtocol
import Foundation
import Synchronization
import SchedulerCore

/// Whether the process's app talks to bgtaskd (docs/daemon.md, "The app side").
public enum DaemonChoice: Sendable, Equatable {
    /// The daemon when it started this process (`BGTASK_DAEMON_SOCKET`), or when one is
    /// reachable at its default socket and has the app installed (unless a state
    /// directory is configured: that is a choice of the embedded scheduler); the daemon,
    /// waited for, when none answers but the list it leaves beside its socket names the app
    /// (docs/daemon.md, "A daemon that does not answer"); else embedded.
    case automatic
    /// Always the embedded scheduler.
    case never
    /// The daemon at this socket; when it cannot be reached, waited for if the list beside
    /// the socket names the app, else embedded (with an error logged).
    case socket(String)
}

/// When an app tries to reach bgtaskd again after its connection closed: a delay that
/// doubles from `first` up to `ceiling`, each drawn within ±25 % so that the apps of a
/// restarted daemon do not all knock at the same instant (docs/daemon.md, "Reconnecting").
struct ReconnectBackoff: Sendable, Equatable {
    /// Why the last attempt failed.
    enum Cause: Sendable, Equatable {
        /// No daemon answered (restarting, or gone): 50 ms doubling to 5 s.
        case unreachable
        /// The daemon's own process of the app is finishing its runs (``FailureCode/busy``):
        /// 100 ms doubling to 1 s, since the daemon is already ending them.
        case busy
    }

    /// The delay before attempt `failures + 1` after `failures` failed ones (at least 1),
    /// with `unit` in 0..<1 choosing within the ±25 % spread.
    static func delay(after failures: Int, cause: Cause, unit: Double) -> TimeInterval {
        let (first, ceiling): (TimeInterval, TimeInterval) = switch cause {
        case .unreachable: (0.05, 5)
        case .busy: (0.1, 1)
        }
        let doublings = min(max(failures, 1) - 1, 16)
        let base = min(first * Double(1 << doublings), ceiling)
        return base * (0.75 + 0.5 * min(max(unit, 0), 1))
    }
}

/// The app's ``SchedulerUplink`` to bgtaskd: one ``MessageLink`` at a time, made again when
/// it closes (docs/daemon.md, "Reconnecting").
///
/// When the connection closes (the daemon restarted, or stopped), the runs it had handed
/// over are ended (``SchedulerDriver/linkClosed(reason:)``) and the uplink tries again with
/// ``ReconnectBackoff``, saying hello again and then, before anything else is sent on the
/// new connection, what the daemon must know of the app: that it finished launching (with
/// its registered identifiers), its retry policies, a lifecycle transition it could not
/// send while disconnected, and the cancels the daemon did not answer. A call made
/// meanwhile waits for the connection at most ``reconnectionWait`` (and asks for an
/// attempt at once), then fails (a submit with
/// `unavailable` naming the daemon): it is never acknowledged unless the daemon has it. A
/// daemon that says the app is not (or no longer) installed ends the attempts for good, as
/// do three refusals in a row because another process is the app, and the daemon asking the
/// app to leave (`quit`); one that says it is busy with its own process of the app
/// (``FailureCode/busy``) is asked again shortly. An uplink made with `reconnects` false (a
/// process the daemon launched, which the next daemon ends anyway) never tries again.
///
/// Ownership: everything mutable is in one `Mutex`; messages to the daemon are sent under
/// it (sending never blocks and calls nothing of ours), so a message is either recorded
/// before a new connection's replay or sent on it after; attempts run one at a time on the
/// uplink's serial queue; app code is never called under the lock.
final class DaemonUplink: SchedulerUplink {
    /// How long a call waits for a lost connection to come back.
    static let reconnectionWait: Duration = .seconds(5)
    /// How long one attempt waits to connect (the greeting then has
    /// ``EmbeddedScheduler/daemonGreetingTimeout``).
    static let attemptConnectTimeout: Duration = .milliseconds(500)
    /// Refusals in a row because another process is the app before the attempts end.
    static let refusalsBeforeGivingUp = 3

    /// What the daemon answered a hello.
    enum Greeting {
        /// Accepted: the link is the app's.
        case welcome(MessageLink, daemonPID: Int32)
        /// The daemon's own process of the app is finishing its runs: ask again soon.
        case busy(String)
        /// Refused (not installed, another process is the app...), or no answer.
        case refused(DaemonFailure)
    }

    private struct State {
        var link: MessageLink?
        var daemonPID: Int32 = 0
        /// Consecutive failed attempts since the link was lost.
        var failures = 0
        /// Consecutive refusals because another process is the app.
        var refusals = 0
        /// Set when no more attempts are made, with why.
        var givenUp: String?
        /// When the link was lost (for messages).
        var lostAt: Date?
        /// What the last attempt learned of why there is no link (the daemon's own process
        /// of the app finishing a task, another process being the app, no daemon answering),
        /// said to a call that waited in vain; `nil` once a link is made.
        var lastAnswer: String?
        /// Whether an attempt is scheduled or under way.
        var attempting = false
        /// The number of the attempt scheduled last; an attempt whose number is not it any
        /// more (``attemptNow()`` ran one sooner) does nothing.
        var attemptNumber = 0
        /// Whether the attempt scheduled last still waits for its delay.
        var waitingForDelay = false
        /// Callers waiting for a link.
        var waiters: [DispatchSemaphore] = []
        /// What is told again to every new daemon connection.
        var finishedLaunching: [String]?
        var retryPolicies: [String: RetryPolicyTerms?] = [:]
        /// A lifecycle transition posted while disconnected, sent on the next connection.
        var unsentLifecycle: AppTransition?
        /// Whether the app holds background assertions (told again to a new daemon).
        var assertionsHeld = false
        /// Cancels the daemon did not answer, sent first on the next connection
        /// (``sendWhenConnected(_:)``): every request, or these identifiers.
        var unsentCancelAll = false
        var unsentCancels: [String] = []
        var onPush: (@Sendable (AppPush) -> Void)?
        var onLost: (@Sendable (String) -> Void)?
    }

    /// The daemon's socket.
    let path: String
    let app: AppID
    let log: BGDiagnosticLog
    /// Whether a lost connection is made again.
    let reconnects: Bool
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "bgtask.daemon-uplink")

    /// An uplink that starts connected through `link` (accepted by the daemon `daemonPID`),
    /// or, with no link, not yet: its first attempt is scheduled, and `waitingFor` says why
    /// there is none (the daemon said busy, another process is the app, no daemon answered).
    init(path: String, app: AppID, log: BGDiagnosticLog, link: MessageLink?, daemonPID: Int32, reconnects: Bool = true, waitingFor: String? = nil) {
        self.path = path
        self.app = app
        self.log = log
        self.reconnects = reconnects
        state.withLock { state in
            state.link = link
            state.daemonPID = daemonPID
            if link == nil {
                state.lostAt = Date()
                state.lastAnswer = waitingFor
            }
        }
        if let link {
            routePushes(of: link)
            watch(link)
        } else {
            scheduleAttempt(cause: .busy)
        }
    }

    /// Says hello for `app` on `link` and reads the answer.
    static func greet(_ link: MessageLink, app: AppID, timeout: Duration) -> Greeting {
        do {
            switch try link.call(.hello(Hello(role: .app, app: app)), timeout: timeout) {
            case .welcome(let welcome): return .welcome(link, daemonPID: welcome.daemonPID)
            case .failed(let failure) where failure.code == .busy: return .busy(failure.message)
            case .failed(let failure): return .refused(failure)
            default: return .refused(DaemonFailure(.failed, "bgtaskd at \(link.path) answered hello with something else"))
            }
        } catch {
            return .refused(error)
        }
    }

    /// Sends pushes to `onPush` and reports each lost link to `onLost` (on the connection's
    /// queue), for this link and every later one.
    func start(onPush: @escaping @Sendable (AppPush) -> Void, onLost: @escaping @Sendable (String) -> Void) {
        state.withLock { state in
            state.onPush = onPush
            state.onLost = onLost
        }
    }

    var daemonDescription: String {
        let pid = state.withLock { $0.daemonPID }
        return pid > 0 ? "bgtaskd (pid \(pid), \(path))" : "bgtaskd (\(path))"
    }

    /// Why the uplink stopped reconnecting, once it has (``stopReconnecting(reason:)``).
    var givenUpReason: String? { state.withLock { $0.givenUp } }

    /// Whether the uplink holds a connection now.
    var isConnected: Bool { state.withLock { $0.link != nil } }

    func call(_ request: AppRequest) throws(DaemonFailure) -> Reply {
        try currentLink().call(.app(request))
    }

    func post(_ request: AppRequest) {
        let outcome = state.withLock { state -> DaemonFailure?? in
            // What a new connection must be told again.
            switch request {
            case .finishedLaunching(let registered): state.finishedLaunching = registered
            case .setRetryPolicy(let identifier, let policy): state.retryPolicies[identifier] = .some(policy)
            case .assertionsHeld(let held): state.assertionsHeld = held
            default: break
            }
            guard let link = state.link else {
                if case .lifecycle(let transition) = request { state.unsentLifecycle = transition }
                return .none
            }
            let failure = link.post(.app(request))
            // A link closed but not yet reported lost: the transition goes with the next one.
            if failure != nil, case .lifecycle(let transition) = request { state.unsentLifecycle = transition }
            return .some(failure)
        }
        // Written from the uplink's queue: `post` may be called under the application's
        // lock, and a log sink is the app's code (it may well call the application).
        switch outcome {
        case .none:
            // Runs of a lost connection were ended with it; state messages are told again.
            let message = "not connected to \(daemonDescription): \(request) is not sent now"
            queue.async { [log, app] in log(.debug, app: app, message) }
        case .some(let failure?):
            let message = "could not tell \(daemonDescription): \(failure)"
            queue.async { [log, app] in log(.error, app: app, message) }
        case .some(nil):
            break
        }
    }

    func sendWhenConnected(_ cancel: AppRequest) -> Bool {
        state.withLock { state -> Bool in
            guard reconnects, state.givenUp == nil else { return false }
            // Back already (between the failed call and now): sent at once, in order.
            if let link = state.link, link.post(.app(cancel)) == nil { return true }
            switch cancel {
            case .cancelAll:
                state.unsentCancelAll = true
                state.unsentCancels.removeAll()
            case .cancel(let identifier):
                if !state.unsentCancelAll, !state.unsentCancels.contains(identifier) { state.unsentCancels.append(identifier) }
            default:
                return false
            }
            return true
        }
    }

    /// No more attempts: the daemon asked the app to leave (`quit`), or it refused the app.
    func stopReconnecting(reason: String) {
        let (waiters, dropped) = state.withLock { state -> ([DispatchSemaphore], String?) in
            state.givenUp = state.givenUp ?? reason
            // Kept for a connection that will not come: said, not dropped silently.
            let dropped = state.unsentCancelAll ? "every pending request" : state.unsentCancels.isEmpty ? nil : state.unsentCancels.map { "'\($0)'" }.joined(separator: ", ")
            state.unsentCancelAll = false
            state.unsentCancels.removeAll()
            defer { state.waiters = [] }
            return (state.waiters, dropped)
        }
        waiters.forEach { $0.signal() }
        if let dropped {
            let message = "the cancel of \(dropped), kept for bgtaskd's return, is not sent: \(reason)"
            queue.async { [log, app] in log(.error, app: app, message) }
        }
    }

    /// The link, waiting for a lost one to come back at most ``reconnectionWait``.
    private func currentLink() throws(DaemonFailure) -> MessageLink {
        let semaphore = DispatchSemaphore(value: 0)
        let immediate = state.withLock { state -> Result<MessageLink, DaemonFailure>? in
            if let link = state.link { return .success(link) }
            if let reason = state.givenUp { return .failure(DaemonFailure(.failed, "not connected to bgtaskd at \(path): \(reason)")) }
            state.waiters.append(semaphore)
            return nil
        }
        switch immediate {
        case .success(let link)?: return link
        case .failure(let failure)?: throw failure
        case nil: break
        }
        // Somebody waits: the next attempt is not left to its backoff.
        attemptNow()
        _ = semaphore.wait(timeout: .now() + .milliseconds(Int(Self.reconnectionWait.components.seconds * 1000)))
        let after = state.withLock { state -> Result<MessageLink, DaemonFailure> in
            state.waiters.removeAll { $0 === semaphore }
            if let link = state.link { return .success(link) }
            let since = state.lostAt.map { " since \(DurationText.spoken(Date().timeIntervalSince($0))) ago" } ?? ""
            let why = state.givenUp ?? state.lastAnswer.map { "\($0); reconnecting" } ?? "reconnecting"
            return .failure(DaemonFailure(.failed, "not connected to bgtaskd at \(path)\(since): \(why)"))
        }
        return try after.get()
    }

    /// Every push of `link` goes to the `onPush` in force when it arrives.
    private func routePushes(of link: MessageLink) {
        link.onPush { [weak self] push in
            self?.state.withLock { $0.onPush }?(push)
        }
    }

    /// Watches `link` for its close.
    private func watch(_ link: MessageLink) {
        link.onClose { [weak self] reason in self?.lost(link, reason: reason) }
    }

    private func lost(_ link: MessageLink, reason: String) {
        let (current, onLost) = state.withLock { state -> (Bool, (@Sendable (String) -> Void)?) in
            guard state.link === link else { return (false, nil) }
            state.link = nil
            state.lostAt = Date()
            state.failures = 0
            if !reconnects { state.givenUp = state.givenUp ?? "the connection to the daemon that launched this process closed" }
            return (true, state.onLost)
        }
        guard current else { return }
        onLost?(reason)
        scheduleAttempt(cause: .unreachable)
    }

    private func scheduleAttempt(cause: ReconnectBackoff.Cause) {
        let scheduled = state.withLock { state -> (number: Int, delay: TimeInterval)? in
            guard state.link == nil, state.givenUp == nil, !state.attempting else { return nil }
            state.attempting = true
            state.waitingForDelay = true
            state.failures += 1
            state.attemptNumber += 1
            return (state.attemptNumber, ReconnectBackoff.delay(after: state.failures, cause: cause, unit: Double.random(in: 0..<1)))
        }
        guard let scheduled else { return }
        queue.asyncAfter(deadline: .now() + .milliseconds(Int(scheduled.delay * 1000))) { [weak self] in
            self?.attempt(number: scheduled.number)
        }
    }

    /// Runs the attempt that waits for its delay now (a caller waits for the connection).
    private func attemptNow() {
        let number = state.withLock { state -> Int? in
            guard state.attempting, state.waitingForDelay else { return nil }
            // The delayed one will find its number taken and do nothing.
            state.attemptNumber += 1
            return state.attemptNumber
        }
        guard let number else { return }
        queue.async { [weak self] in self?.attempt(number: number) }
    }

    /// One attempt: connect, hello, then tell the new daemon what it must know.
    private func attempt(number: Int) {
        let proceed = state.withLock { state -> Bool in
            guard state.attemptNumber == number, state.waitingForDelay else { return false }
            state.waitingForDelay = false
            state.attempting = false
            return state.link == nil && state.givenUp == nil
        }
        guard proceed else { return }
        let link: MessageLink
        do {
            link = try MessageLink.connect(path: path, timeout: Self.attemptConnectTimeout)
        } catch {
            // Refusals count only in a row: any other answer starts the count again.
            state.withLock { state in
                state.refusals = 0
                state.lastAnswer = error.code == .noDaemon ? "bgtaskd is not running" : "bgtaskd does not answer (\(error))"
            }
            scheduleAttempt(cause: .unreachable)
            return
        }
        switch Self.greet(link, app: app, timeout: EmbeddedScheduler.daemonGreetingTimeout) {
        case .welcome(let link, let daemonPID):
            adopt(link, daemonPID: daemonPID)
        case .busy(let message):
            link.close()
            state.withLock { state in
                state.refusals = 0
                state.lastAnswer = Self.busyAnswer(message)
            }
            log(.debug, app: app, "\(path): \(message); asking again shortly")
            scheduleAttempt(cause: .busy)
        case .refused(let failure) where [.notInstalled, .notPermitted, .appConnected].contains(failure.code):
            link.close()
            // Another process being the app may be a close the daemon has not seen yet.
            let refusals = state.withLock { state -> Int in
                state.refusals += 1
                state.lastAnswer = "bgtaskd refused \(app): \(failure.message)"
                return state.refusals
            }
            if failure.code == .appConnected, refusals < Self.refusalsBeforeGivingUp {
                scheduleAttempt(cause: .busy)
                return
            }
            stopReconnecting(reason: "bgtaskd refused \(app): \(failure.message)")
            log(.error, app: app, "bgtaskd at \(path) refused \(app) when it reconnected: \(failure.message); submissions fail until the app is restarted")
        case .refused(let failure):
            link.close()
            state.withLock { state in
                state.refusals = 0
                state.lastAnswer = "bgtaskd did not greet \(app): \(failure.message)"
            }
            scheduleAttempt(cause: .unreachable)
        }
    }

    /// What a call that waited in vain is told while the daemon's own process of the app
    /// finishes its task (the daemon's `busy` answer, `message`).
    static func busyAnswer(_ message: String) -> String {
        "\(message); this process becomes the app once it is done"
    }

    /// Makes `link` the app's, in one hold of the lock: the app's launch, retry policies and
    /// a transition it could not send are sent first, then the link is the uplink's and the
    /// callers waiting for it are let through.
    private func adopt(_ link: MessageLink, daemonPID: Int32) {
        routePushes(of: link)
        let (waiters, lostAt) = state.withLock { state -> ([DispatchSemaphore], Date?) in
            for (identifier, policy) in state.retryPolicies.sorted(by: { $0.key < $1.key }) {
                link.post(.app(.setRetryPolicy(identifier: identifier, policy: policy)))
            }
            // Cancels first: a submit that follows on this connection must outlive them.
            if state.unsentCancelAll { link.post(.app(.cancelAll)) }
            for identifier in state.unsentCancels { link.post(.app(.cancel(identifier: identifier))) }
            state.unsentCancelAll = false
            state.unsentCancels.removeAll()
            if let transition = state.unsentLifecycle {
                link.post(.app(.lifecycle(transition)))
                state.unsentLifecycle = nil
            }
            if state.assertionsHeld { link.post(.app(.assertionsHeld(true))) }
            if let finished = state.finishedLaunching { link.post(.app(.finishedLaunching(registered: finished))) }
            state.link = link
            state.daemonPID = daemonPID
            state.failures = 0
            state.refusals = 0
            state.lastAnswer = nil
            defer { state.waiters = [] }
            return (state.waiters, state.lostAt)
        }
        watch(link)
        waiters.forEach { $0.signal() }
        let after = lostAt.map { " after \(DurationText.spoken(Date().timeIntervalSince($0)))" } ?? ""
        log(.info, app: app, "connected to bgtaskd (pid \(daemonPID), \(path))\(after)")
    }
}

extension EmbeddedScheduler {
    /// How long an app waits for the daemon to accept and greet it.
    static let daemonGreetingTimeout: Duration = .seconds(5)

    /// The link to bgtaskd for `app`, or `nil` to use the embedded scheduler (see
    /// ``DaemonChoice``). Failures where a daemon was expected are logged.
    static func connectToDaemon(
        _ choice: DaemonChoice,
        app: AppID,
        stateDirectoryConfigured: Bool,
        environment: [String: String],
        log: BGDiagnosticLog
    ) -> DaemonUplink? {
        let path: String
        let expected: Bool
        if case .never = choice { return nil }
        if let launched = environment["BGTASK_DAEMON_SOCKET"], !launched.isEmpty, choice == .automatic {
            path = launched
            expected = true
        } else if case .socket(let given) = choice {
            path = given
            expected = true
        } else {
            // The socket's path alone: the state directory's variables are not needed to
            // reach the daemon (one that cannot be used must not keep the app from it).
            var ignored: [String] = []
            guard !stateDirectoryConfigured,
                  let socketPath = try? DaemonPaths.socketPath(environment: environment, socketOverride: nil, uid: getuid(), warnings: &ignored) else { return nil }
            path = socketPath
            expected = false
        }
        // A process bgtaskd launched does not fall back: it ends (EmbeddedScheduler.makeContext).
        let startedByTheUser = launchedByDaemon(choice, environment: environment) == nil
        let fallback = startedByTheUser ? "; using the embedded scheduler" : ""
        // A process the daemon launched does not reconnect: the daemon that follows ends it.
        let reconnects = !EmbeddedScheduler.isDaemonLaunch(environment: environment)
        // A daemon does not answer (not running, stopped, busy, at its connection limit):
        // whether this app is its to serve is then read from the list it keeps beside its
        // socket, which outlives it. An installed app waits for it, as a reconnecting app
        // does, rather than keep requests in a scheduler of its own that bgtaskd would never
        // see (acknowledged, then never run, or run twice once bgtaskd is back).
        func waitIfInstalled(_ why: String) -> DaemonUplink? {
            guard startedByTheUser, InstalledAppsList.lists(app, socketPath: path) == true else { return nil }
            let situation = "bgtaskd at \(path) does not answer (\(why)), and \(app) is installed with it"
            log(.error, app: app, "\(situation): this process waits for it, and its submissions fail until bgtaskd answers (start bgtaskd; to run the app on its own, uninstall it with bgtask uninstall while bgtaskd runs, or, bgtaskd gone for good, remove \(InstalledAppsList.path(forSocket: path)))")
            return DaemonUplink(path: path, app: app, log: log, link: nil, daemonPID: 0, reconnects: reconnects, waitingFor: situation)
        }
        let link: MessageLink
        do {
            link = try MessageLink.connect(path: path, timeout: expected ? daemonGreetingTimeout : .milliseconds(500))
        } catch {
            // A socket that accepts nobody in time (a daemon stopped, its backlog full), or no
            // daemon at all (bgtaskd stopped, between a stop and a start: an outside probe
            // found the app acknowledging into a store of its own, then run twice); not a
            // socket that is no daemon's (another user's, not a socket), which cannot answer.
            if [.timedOut, .noDaemon].contains(error.code), let waiting = waitIfInstalled("\(error)") {
                return waiting
            }
            if expected {
                log(.error, app: app, "cannot reach bgtaskd: \(error)\(fallback)")
            } else if error.code != .noDaemon {
                // A socket is there but cannot be used (overloaded, another user's, not a
                // socket): the app runs on its own, and says why.
                log(.warning, app: app, "bgtaskd's socket exists but \(error); using the embedded scheduler")
            }
            return nil
        }
        switch DaemonUplink.greet(link, app: app, timeout: daemonGreetingTimeout) {
        case .welcome(let link, let daemonPID):
            return DaemonUplink(path: path, app: app, log: log, link: link, daemonPID: daemonPID, reconnects: reconnects)
        case .busy(let message):
            // The daemon's own process of the app is finishing a task it was started for (the
            // daemon expires it now): this process is the app as soon as that one is done.
            link.close()
            log(.info, app: app, "bgtaskd at \(path): \(DaemonUplink.busyAnswer(message))")
            return DaemonUplink(path: path, app: app, log: log, link: nil, daemonPID: 0, reconnects: reconnects, waitingFor: DaemonUplink.busyAnswer(message))
        case .refused(let failure) where failure.code == .appConnected && launchedByDaemon(choice, environment: environment) == nil:
            // Another process of the app is the app: this one is not, and must not act as one
            // with an embedded scheduler whose requests bgtaskd would never see (acknowledged,
            // then never run). It asks again as a reconnecting app does, and becomes the app if
            // the other leaves soon; else its calls fail (`unavailable`, naming the other).
            link.close()
            let refusal = "bgtaskd at \(path) refused \(app): \(failure.message)"
            log(.error, app: app, "\(refusal); this process is not the app: its submissions fail until the other process leaves")
            return DaemonUplink(path: path, app: app, log: log, link: nil, daemonPID: 0, reconnects: reconnects, waitingFor: refusal)
        case .refused(let failure):
            link.close()
            // No answer in time, or none for want of room: not a refusal of this app.
            if [.failed, .connectionLimit].contains(failure.code), let waiting = waitIfInstalled(failure.message) { return waiting }
            if expected || failure.code != .notInstalled {
                // A refusal says so; a daemon that did not answer or closed did not refuse.
                let what = failure.code == .failed ? "could not greet bgtaskd at \(path) as \(app)" : "bgtaskd at \(path) refused \(app)"
                log(expected ? .error : .warning, app: app, "\(what): \(failure.message)\(fallback)")
            }
            return nil
        }
    }

    /// A context whose scheduler is bgtaskd's: no store or engine of its own; requests go
    /// up `uplink`, runs come down it.
    static func makeLinkedContext(_ configuration: Configuration, app: AppID, manifest: AppManifest, uplink: DaemonUplink, environment: [String: String], log: BGDiagnosticLog) -> BGAppContext {
        let driver = SchedulerDriver(
            configuration: configuration.scheduler(environment: environment),
            clock: DispatchDriverClock(),
            store: nil,
            unavailableReason: "the app's scheduler is bgtaskd's",
            log: log,
            meter: nil,
            uplink: uplink)
        let context = BGAppContext(
            app: app, manifest: manifest, driver: driver, assertions: configuration.assertions,
            launchedInBackground: EmbeddedScheduler.daemonLaunch(environment: environment) == .background,
            launchedByDaemon: EmbeddedScheduler.isDaemonLaunch(environment: environment))
        uplink.start(
            onPush: { [weak driver] push in driver?.handle(push) },
            onLost: { [weak driver, weak context] reason in
                guard uplink.reconnects else {
                    let inForeground = context.map { [.active, .inactive].contains($0.application.lifecycleState) } ?? false
                    guard inForeground else {
                        // Launched by the daemon, which is gone: its successor would end this
                        // process anyway (orphan clean-up), as iOS ends apps the system started.
                        // Its runs get their expiration and the grace period to complete
                        // first, as a run the daemon expires does (nobody is left to end it).
                        guard let driver else { exit(0) }
                        let grace = driver.configuration.expirationGrace
                        let runs = driver.linkClosed(reason: reason)
                        if runs.isEmpty {
                            log(.warning, app: app, "the connection to \(uplink.daemonDescription), which launched this process, closed (\(reason)): the process exits")
                        } else {
                            log(.warning, app: app, "the connection to \(uplink.daemonDescription), which launched this process, closed (\(reason)): its \(runs.count == 1 ? "run gets its" : "\(runs.count) runs get their") expiration and \(DurationText.spoken(grace)) to complete, then the process exits")
                            if !driver.waitForCompletion(of: runs, timeout: grace) {
                                log(.warning, app: app, "not every run completed within \(DurationText.spoken(grace)) of its expiration; the process exits")
                            }
                        }
                        exit(0)
                    }
                    // The user has it open since: theirs to close, not the daemon's loss to end.
                    log(.warning, app: app, "the connection to \(uplink.daemonDescription), which launched this process, closed (\(reason)): its runs get their expiration and are ended; the app stays open (the user has it in the foreground) without a scheduler until it is started again")
                    driver?.linkClosed(reason: reason)
                    return
                }
                let next = uplink.givenUpReason.map { "not reconnecting (\($0))" } ?? "reconnecting"
                log(.warning, app: app, "the connection to \(uplink.daemonDescription) closed (\(reason)): \(next); the runs it had handed over get their expiration and are ended")
                driver?.linkClosed(reason: reason)
            })
        log(.info, app: app, "scheduling through \(uplink.daemonDescription)")
        return context
    }
}
