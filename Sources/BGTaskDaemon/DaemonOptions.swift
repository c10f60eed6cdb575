import BackgroundTasks
import Foundation
import SchedulerCore

/// bgtaskd's command line (docs/daemon.md, "Running it"), parsed by a pure function.
public struct DaemonOptions: Sendable, Equatable {
    /// `--state-dir`: where the store lives (default `$XDG_STATE_HOME/bgtaskd`).
    public var stateDirectory: String?
    /// `--socket`: the socket path (default `$XDG_RUNTIME_DIR/bgtaskd/socket`).
    public var socketPath: String?
    /// The waits of app supervision (`--launch-timeout`, `--suspend-delay`, `--idle-timeout`).
    public var timing = AppSupervision.Timing()
    /// `--no-cgroups`: process groups only, even where a cgroup subtree is delegated.
    public var cgroups = true
    /// `--first-frame-timeout`: whole seconds a new connection may take to send its first
    /// frame (hello) before it is closed.
    public var firstFrameTimeout: Int = 10
    /// Remote wakes per app and period.
    public var pushLimit = PushLimiter.Limit()
    /// `--policy`: the policy configuration file (JSON, docs/policies.md); read at start
    /// and again on SIGHUP. Without it, the defaults.
    public var policyFile: String?
    /// `BGTASK_LOG`: the least level logged (default info).
    public var logLevel: BGDiagnosticMessage.Level = .info

    /// The defaults.
    public init() {}

    /// The usage text (`bgtaskd --help`).
    public static let usage = """
        usage: bgtaskd [--state-dir DIR] [--socket PATH] [--launch-timeout S] [--suspend-delay S]
                       [--idle-timeout S] [--first-frame-timeout S] [--policy FILE] [--no-cgroups]

        The per-user background task service: launches installed apps for their tasks,
        enforces their budgets, and answers bgtask. Runs in the foreground, logs to stderr.

          --state-dir DIR      the store (default $XDG_STATE_HOME/bgtaskd, else ~/.local/state/bgtaskd)
          --socket PATH        the socket (default $XDG_RUNTIME_DIR/bgtaskd/socket; without
                               XDG_RUNTIME_DIR, /tmp/bgtaskd-<uid>/socket, verified private)
          --launch-timeout S   seconds an app has to connect and finish launching (default 10)
          --suspend-delay S    seconds after its last run before an app is suspended (default 1)
          --idle-timeout S     seconds a suspended app stays before it is ended (default 300)
          --first-frame-timeout S
                               whole seconds a new connection has to send its first request
                               before it is closed (default 10, from 1 to 3600)
          --policy FILE        the policy configuration (JSON; see bgtask policy --check FILE),
                               read at start and again on SIGHUP (default: the defaults)
          --no-cgroups         process groups only, even where a cgroup subtree is delegated

        environment: BGTASK_LOG=debug|info|warning|error (default info); systemd's
        LISTEN_FDS (socket activation), NOTIFY_SOCKET and WATCHDOG_USEC are honoured.
        signals: SIGTERM/SIGINT stop (runs expired first), SIGHUP reads --policy FILE again.
        exit status: 0 stopped by SIGTERM/SIGINT, 1 could not start, 64 usage error.
        """

    /// What the command line asks for: run with options, or print the usage.
    public enum Parsed: Equatable, Sendable {
        /// Run with these options.
        case run(DaemonOptions)
        /// `--help`.
        case help
    }

    /// A usage error; the message names the flag and the value (the same rules as bgtask's).
    public typealias UsageError = CommandLineUsageError

    /// Parses `arguments` (without the program name) and the `BGTASK_LOG` of `environment`.
    public static func parse(_ arguments: [String], environment: [String: String]) -> Result<Parsed, UsageError> {
        var options = DaemonOptions()
        if let level = environment["BGTASK_LOG"], !level.isEmpty {
            guard let parsed = BGDiagnosticMessage.Level(rawValue: level.lowercased()) else {
                return .failure(UsageError(message: "BGTASK_LOG=\(level) is not debug, info, warning or error"))
            }
            options.logLevel = parsed
        }
        var index = 0
        func value(_ option: String, _ what: String) -> Result<String, UsageError> {
            CommandLineValue.take(arguments, at: &index, for: option, what: what)
        }
        func seconds(_ option: String, in range: ClosedRange<Double>) -> Result<Double, UsageError> {
            value(option, "a number of seconds").flatMap { CommandLineValue.seconds($0, for: option, in: range) }
        }
        // An option given twice is refused, as bgtask does, not the later one silently taken.
        var given: Set<String> = []
        while index < arguments.count {
            let argument = arguments[index]
            if argument.hasPrefix("--"), !given.insert(argument).inserted {
                return .failure(UsageError(message: "\(argument) given more than once"))
            }
            switch argument {
            case "--help", "-h":
                return .success(.help)
            case "--state-dir":
                switch value(argument, "a directory") {
                case .success(let path): options.stateDirectory = path
                case .failure(let error): return .failure(error)
                }
            case "--socket":
                switch value(argument, "a socket path") {
                case .success(let path): options.socketPath = path
                case .failure(let error): return .failure(error)
                }
            case "--launch-timeout":
                switch seconds(argument, in: 0.1...3600) {
                case .success(let number): options.timing.launchTimeout = number
                case .failure(let error): return .failure(error)
                }
            case "--suspend-delay":
                switch seconds(argument, in: 0...86_400) {
                case .success(let number): options.timing.suspendDelay = number
                case .failure(let error): return .failure(error)
                }
            case "--idle-timeout":
                switch seconds(argument, in: 0...604_800) {
                case .success(let number): options.timing.idleTimeout = number
                case .failure(let error): return .failure(error)
                }
            case "--first-frame-timeout":
                switch value(argument, "a whole number of seconds").flatMap({ CommandLineValue.integer($0, for: argument, in: 1...3600) }) {
                case .success(let number): options.firstFrameTimeout = number
                case .failure(let error): return .failure(error)
                }
            case "--policy":
                switch value(argument, "a policy configuration file") {
                // Absolute, so that SIGHUP reads the same file whatever the directory then.
                case .success(let path): options.policyFile = URL(fileURLWithPath: path).standardizedFileURL.path
                case .failure(let error): return .failure(error)
                }
            case "--no-cgroups":
                options.cgroups = false
            default:
                return .failure(UsageError(message: "unknown argument '\(argument)'"))
            }
            index += 1
        }
        return .success(.run(options))
    }
}
