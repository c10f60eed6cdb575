import DaemonProtocol
import Foundation

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

/// The app's ``SchedulerUplink`` over a ``MessageLink`` to bgtaskd.
final class DaemonUplink: SchedulerUplink {
    let link: MessageLink
    let daemonPID: Int32
    let log: DiagnosticLog
    let app: AppID

    init(link: MessageLink, daemonPID: Int32, app: AppID, log: DiagnosticLog) {
        self.link = link
        self.daemonPID = daemonPID
        self.app = app
        self.log = log
    }

    var daemonDescription: String { "bgtaskd (pid \(daemonPID), \(link.path))" }

    func call(_ request: AppRequest) throws(DaemonFailure) -> Reply {
        try link.call(.app(request))
    }

    func post(_ request: AppRequest) {
        if let failure = link.post(.app(request)) {
            log(.error, app: app, "could not tell \(daemonDescription): \(failure)")
        }
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
        let hello = Hello(role: .app, app: app)
        do {
            switch try link.call(.hello(hello), timeout: daemonGreetingTimeout) {
            case .welcome(let welcome):
                return DaemonUplink(link: link, daemonPID: welcome.daemonPID, app: app, log: log)
            case .failed(let failure):
                link.close()
                if expected || failure.code != .notInstalled {
                    log(expected ? .error : .warning, app: app, "bgtaskd at \(path) refused \(app): \(failure.message); using the embedded scheduler")
                }
                return nil
            default:
                link.close()
                log(.error, app: app, "bgtaskd at \(path) answered hello with something else; using the embedded scheduler")
                return nil
            }
        } catch {
            link.close()
            log(.error, app: app, "bgtaskd at \(path) did not greet \(app): \(error); using the embedded scheduler")
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
        uplink.link.onPush { [weak driver] push in driver?.handle(push) }
        uplink.link.onClose { [weak driver] reason in
            log(.error, app: app, "the connection to \(uplink.daemonDescription) closed (\(reason)): submissions now fail (restart the app to reconnect); the runs it had handed over are ended")
            driver?.linkClosed(reason: reason)
        }
        log(.info, app: app, "scheduling through \(uplink.daemonDescription)")
        return context
    }
}
