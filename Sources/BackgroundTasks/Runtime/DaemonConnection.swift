import DaemonProtocol
import Foundation
import Synchronization

/// Whether the process's app talks to bgtaskd (docs/daemon.md, "The app side").
public enum DaemonChoice: Sendable, Equatable {
    /// The daemon when it started this process (`BGTASK_DAEMON_SOCKET`), or when one is
    /// reachable at its default socket and has the app installed (unless a state
    /// directory is configured: that is a choice of the embedded scheduler); else embedded.
    case automatic
    /// Always the embedded scheduler.
    case never
    /// The daemon at this socket; embedded (with an error logged) when it cannot be reached.
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
/// ``ReconnectBackoff``, saying hello again and then what the daemon must know of the app
/// from before: that it finished launching (with its registered identifiers), and its retry
/// policies. A call made meanwhile waits for the connection at most
/// ``reconnectionWait``, then fails (a submit with `unavailable` naming the daemon): it is
/// never acknowledged unless the daemon has it. A daemon that says the app is not (or no
/// longer) installed, or that another process is the app, ends the attempts for good; one
/// that says it is busy with its own process of the app (``FailureCode/busy``) is asked
/// again shortly.
///
/// Ownership: everything mutable is in one `Mutex`; attempts run one at a time on the
/// uplink's serial queue; app code is never called under the lock.
final class DaemonUplink: SchedulerUplink {
    /// How long a call waits for a lost connection to come back.
    static let reconnectionWait: Duration = .seconds(5)
    /// How long one attempt waits to connect, and then for the daemon's greeting.
    static let attemptConnectTimeout: Duration = .milliseconds(500)

    /// What the daemon answered a hello.
    enum Greeting {
        /// Accepted: the link is the app's.
        case welcome(MessageLink, daemonPID: Int32)
        /// The daemon's own process of the app is finishing its runs: ask again soon.
        case busy(String)
        /// Refused for good (not installed, another process is the app...), or no answer.
        case refused(DaemonFailure)
    }

    private struct State {
        var link: MessageLink?
        var daemonPID: Int32 = 0
        /// Consecutive failed attempts since the link was lost.
        var failures = 0
        /// Set when no more attempts are made, with why.
        var givenUp: String?
        /// When the link was lost (for messages).
        var lostAt: Date?
        /// Whether an attempt is scheduled or under way.
        var attempting = false
        /// Callers waiting for a link.
        var waiters: [DispatchSemaphore] = []
        /// What is told again to every new daemon connection.
        var finishedLaunching: [String]?
        var retryPolicies: [String: RetryPolicyTerms?] = [:]
        var onPush: (@Sendable (AppPush) -> Void)?
        var onLost: (@Sendable (String) -> Void)?
    }

    /// The daemon's socket.
    let path: String
    let app: AppID
    let log: DiagnosticLog
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "bgtask.daemon-uplink")

    /// An uplink that starts connected through `link` (accepted by the daemon `daemonPID`),
    /// or, with no link, not yet: its first attempt is scheduled (the daemon said busy).
    init(path: String, app: AppID, log: DiagnosticLog, link: MessageLink?, daemonPID: Int32) {
        self.path = path
        self.app = app
        self.log = log
        state.withLock { state in
            state.link = link
            state.daemonPID = daemonPID
            if link == nil { state.lostAt = Date() }
        }
        if let link { watch(link) } else { scheduleAttempt(cause: .busy) }
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

    /// Routes pushes to `onPush` and reports each lost link to `onLost` (on the
    /// connection's queue), for this link and every later one.
    func start(onPush: @escaping @Sendable (AppPush) -> Void, onLost: @escaping @Sendable (String) -> Void) {
        let link = state.withLock { state -> MessageLink? in
            state.onPush = onPush
            state.onLost = onLost
            return state.link
        }
        link?.onPush(onPush)
    }

    var daemonDescription: String {
        let pid = state.withLock { $0.daemonPID }
        return pid > 0 ? "bgtaskd (pid \(pid), \(path))" : "bgtaskd (\(path))"
    }

    /// Whether the uplink holds a connection now.
    var isConnected: Bool { state.withLock { $0.link != nil } }

    func call(_ request: AppRequest) throws(DaemonFailure) -> Reply {
        try currentLink().call(.app(request))
    }

    func post(_ request: AppRequest) {
        let link = state.withLock { state -> MessageLink? in
            // What a new connection must be told again.
            switch request {
            case .finishedLaunching(let registered): state.finishedLaunching = registered
            case .setRetryPolicy(let identifier, let policy): state.retryPolicies[identifier] = .some(policy)
            default: break
            }
            return state.link
        }
        guard let link else {
            // Runs of a lost connection were ended with it; state messages are told again.
            log(.debug, app: app, "not connected to \(daemonDescription): \(request) is not sent now")
            return
        }
        if let failure = link.post(.app(request)) {
            log(.error, app: app, "could not tell \(daemonDescription): \(failure)")
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
        _ = semaphore.wait(timeout: .now() + .milliseconds(Int(Self.reconnectionWait.components.seconds * 1000)))
        let after = state.withLock { state -> Result<MessageLink, DaemonFailure> in
            state.waiters.removeAll { $0 === semaphore }
            if let link = state.link { return .success(link) }
            let since = state.lostAt.map { " since \(DurationText.spoken(Date().timeIntervalSince($0))) ago" } ?? ""
            return .failure(DaemonFailure(.failed, "not connected to bgtaskd at \(path)\(since): \(state.givenUp ?? "reconnecting")"))
        }
        return try after.get()
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
            return (true, state.onLost)
        }
        guard current else { return }
        onLost?(reason)
        scheduleAttempt(cause: .unreachable)
    }

    private func scheduleAttempt(cause: ReconnectBackoff.Cause) {
        let delay = state.withLock { state -> TimeInterval? in
            guard state.link == nil, state.givenUp == nil, !state.attempting else { return nil }
            state.attempting = true
            state.failures += 1
            return ReconnectBackoff.delay(after: state.failures, cause: cause, unit: Double.random(in: 0..<1))
        }
        guard let delay else { return }
        queue.asyncAfter(deadline: .now() + .milliseconds(Int(delay * 1000))) { [weak self] in self?.attempt() }
    }

    /// One attempt: connect, hello, then tell the new daemon what it must know.
    private func attempt() {
        state.withLock { $0.attempting = false }
        let link: MessageLink
        do {
            link = try MessageLink.connect(path: path, timeout: Self.attemptConnectTimeout)
        } catch {
            scheduleAttempt(cause: .unreachable)
            return
        }
        switch Self.greet(link, app: app, timeout: EmbeddedScheduler.daemonGreetingTimeout) {
        case .welcome(let link, let daemonPID):
            adopt(link, daemonPID: daemonPID)
        case .busy(let message):
            link.close()
            log(.debug, app: app, "\(path): \(message); asking again shortly")
            scheduleAttempt(cause: .busy)
        case .refused(let failure) where failure.code == .notInstalled || failure.code == .notPermitted:
            link.close()
            let waiters = state.withLock { state -> [DispatchSemaphore] in
                state.givenUp = "bgtaskd refused \(app): \(failure.message)"
                defer { state.waiters = [] }
                return state.waiters
            }
            waiters.forEach { $0.signal() }
            log(.error, app: app, "bgtaskd at \(path) refused \(app) when it reconnected: \(failure.message); submissions fail until the app is restarted")
        case .refused:
            link.close()
            scheduleAttempt(cause: .unreachable)
        }
    }

    /// Makes `link` the app's: pushes routed, the app's launch and retry policies told
    /// again, then the callers waiting for it let through.
    private func adopt(_ link: MessageLink, daemonPID: Int32) {
        let (onPush, finished, policies, lostAt) = state.withLock { state in
            (state.onPush, state.finishedLaunching, state.retryPolicies, state.lostAt)
        }
        if let onPush { link.onPush(onPush) }
        // Before anyone else may send on it: the daemon learns the app's state first.
        for (identifier, policy) in policies.sorted(by: { $0.key < $1.key }) {
            link.post(.app(.setRetryPolicy(identifier: identifier, policy: policy)))
        }
        if let finished { link.post(.app(.finishedLaunching(registered: finished))) }
        let waiters = state.withLock { state -> [DispatchSemaphore] in
            state.link = link
            state.daemonPID = daemonPID
            state.failures = 0
            defer { state.waiters = [] }
            return state.waiters
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
        log: DiagnosticLog
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
            guard !stateDirectoryConfigured,
                  let resolved = try? DaemonPaths.resolve(environment: environment, uid: getuid()) else { return nil }
            path = resolved.socketPath
            expected = false
        }
        let link: MessageLink
        do {
            link = try MessageLink.connect(path: path, timeout: expected ? daemonGreetingTimeout : .milliseconds(500))
        } catch {
            if expected { log(.error, app: app, "cannot reach bgtaskd: \(error); using the embedded scheduler") }
            return nil
        }
        switch DaemonUplink.greet(link, app: app, timeout: daemonGreetingTimeout) {
        case .welcome(let link, let daemonPID):
            return DaemonUplink(path: path, app: app, log: log, link: link, daemonPID: daemonPID)
        case .busy(let message):
            // The daemon's own process of the app is finishing a task it was started for (the
            // daemon expires it now): this process is the app as soon as that one is done.
            link.close()
            log(.info, app: app, "bgtaskd at \(path): \(message); this process becomes the app once it is done")
            return DaemonUplink(path: path, app: app, log: log, link: nil, daemonPID: 0)
        case .refused(let failure):
            link.close()
            if expected || failure.code != .notInstalled {
                log(expected ? .error : .warning, app: app, "bgtaskd at \(path) refused \(app): \(failure.message); using the embedded scheduler")
            }
            return nil
        }
    }

    /// A context whose scheduler is bgtaskd's: no store or engine of its own; requests go
    /// up `uplink`, runs come down it.
    static func makeLinkedContext(_ configuration: Configuration, app: AppID, manifest: AppManifest, uplink: DaemonUplink, environment: [String: String], log: DiagnosticLog) -> AppContext {
        let driver = SchedulerDriver(
            configuration: configuration.scheduler,
            clock: DispatchDriverClock(),
            store: nil,
            unavailableReason: "the app's scheduler is bgtaskd's",
            log: log,
            meter: nil,
            uplink: uplink)
        let context = AppContext(
            app: app, manifest: manifest, driver: driver, assertions: configuration.assertions,
            launchedInBackground: environment["BGTASK_LAUNCH"] == "background")
        uplink.start(
            onPush: { [weak driver] push in driver?.handle(push) },
            onLost: { [weak driver] reason in
                log(.warning, app: app, "the connection to \(uplink.daemonDescription) closed (\(reason)): reconnecting; the runs it had handed over are ended")
                driver?.linkClosed(reason: reason)
            })
        log(.info, app: app, "scheduling through \(uplink.daemonDescription)")
        return context
    }
}
