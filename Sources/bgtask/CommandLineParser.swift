import SchedulerCore

/// The commands of `bgtask`, parsed from the arguments by a pure function (no
/// swift-argument-parser on this toolchain), so tests can call it directly.
enum Command: Equatable {
    /// `bgtask demo [--days N] [--report FILE]`: the example app through a short simulation.
    case demo(days: Int, report: String?)
    /// `bgtask why <app> <identifier>`: why hasn't the task run?
    case why(WhyCommand.Options)
    /// `bgtask conditions [--json] [--socket PATH]`: the device as the scheduler reads it.
    case conditions(json: Bool, socket: String?)
    /// `bgtask policy [--json] [--check FILE] [--socket PATH]`: the policy configuration.
    case policy(json: Bool, check: String?, socket: String?)
    /// `bgtask log`: the run log.
    case log(LogCommand.Options)
    /// `bgtask energy`: runs, durations, CPU and energy per app and task.
    case energy(EnergyCommand.Options)
    /// `bgtask simulate`: a scenario through simulated days.
    case simulate(SimulateCommand.Options)
    /// `bgtask fleet`: many simulated devices and the load they make.
    case fleet(FleetCommand.Options)
    /// `bgtask notifications`: the apps' local notifications, from their state directories.
    case notifications(NotificationsCommand.Options)
    /// A command answered by bgtaskd (DaemonCommands.swift).
    case daemon(DaemonCommand)
    /// `bgtask help` / `--help`.
    case help
    /// `bgtask <command> --help` of a command without options of its own to carry it: the
    /// text to print.
    case commandHelp(String)
    /// `bgtask version` / `--version`.
    case version
}

/// A usage error: printed with the usage on standard error, exit status 64 (shared with
/// bgtaskd's flags: SchedulerCore's `CommandLineUsageError`).
typealias UsageError = CommandLineUsageError

/// Reading option values the same way in every command and in bgtaskd (SchedulerCore's
/// `CommandLineValue`).
typealias OptionValue = CommandLineValue

enum CommandLineParser {
    /// The usage lines of `demo`.
    static let demoUsage = """
      demo [--days N] [--report FILE.html]
                        run the example feed reader's real handler code through N simulated
                        days (default 1) of a commuter's phone, print the timeline and a
                        summary, and write the HTML energy report (default: in the temporary
                        directory)
    """
    /// The usage lines of `why`.
    static let whyUsage = """
      why <app> <identifier> [--json] [--state DIR | --store URL] [--policy FILE] [--socket PATH]
                        why hasn't the task run: every policy's verdict, blocking ones first,
                        the earliest instant it could run, and the predicted next run; from
                        bgtaskd's live engine when the app is installed with it, else from the
                        app's own state (read-only); with --socket, the bgtaskd there must run
    """
    /// The usage lines of `conditions`.
    static let conditionsUsage = """
      conditions [--json] [--socket PATH]
                        the device as the scheduler reads it (power, battery, low power mode,
                        thermal, network, idleness, CPU pressure) and where each value came
                        from: bgtaskd's reading when it runs, else read here; with --socket,
                        the bgtaskd there must run
    """
    /// The usage lines of `policy`.
    static let policyUsage = """
      policy [--json] [--check FILE] [--socket PATH]
                        the policy configuration in use: bgtaskd's, else BGTASK_POLICY's, else
                        the defaults (or FILE, validated); with --socket, the bgtaskd there
                        must run
    """

    static let usage = """
    usage: bgtask <command> [options]

    commands:
    \(demoUsage)
    \(whyUsage)
    \(conditionsUsage)
    \(policyUsage)
    \(DaemonCommand.usage)
    \(LogCommand.usage)
    \(EnergyCommand.usage)
    \(NotificationsCommand.usage)
    \(SimulateCommand.usage)
    \(FleetCommand.usage)
      help              show this help
    \(versionUsage)

    The scheduler runs embedded in each app when no daemon runs; with bgtaskd, installed apps
    are launched for their tasks (docs/daemon.md). Every command takes --help; those that ask
    bgtaskd take --socket PATH (default $XDG_RUNTIME_DIR/bgtaskd/socket). Exit status:
    0 success, 1 failure, 64 usage error.
    """

    /// The help `bgtask <command> --help` prints for the commands this file parses: the
    /// command's own usage lines, not the whole list.
    static func commandHelp(_ lines: String) -> String {
        "usage: bgtask\n" + lines + "\n\nExit status: 0 success, 1 failure, 64 usage error. bgtask --help lists every command."
    }

    /// What to print after a usage error in `arguments`: the usage lines of the command
    /// they name (a mistake in one command's options is answered with that command's
    /// usage, not all 30), or the whole usage when they name none.
    static func usage(afterErrorIn arguments: [String]) -> String {
        guard let own = arguments.first.flatMap(usageLines(of:)) else { return usage }
        return "usage: bgtask\n" + own + "\n\nbgtask --help lists every command."
    }

    /// `version`'s usage line (in ``usage``, and its own --help).
    static let versionUsage = "  version           show the version"

    /// The usage lines of one command (part of ``usage``), nil for a name that is none.
    static func usageLines(of command: String) -> String? {
        switch command {
        case "why": return whyUsage
        case "conditions": return conditionsUsage
        case "policy": return policyUsage
        case "demo": return demoUsage
        case "log": return LogCommand.usage
        case "energy": return EnergyCommand.usage
        case "notifications": return NotificationsCommand.usage
        case "simulate": return SimulateCommand.usage
        case "fleet": return FleetCommand.usage
        case "version": return versionUsage
        default: return DaemonCommand.spec(named: command).map(DaemonCommand.usage(of:))
        }
    }

    static func parse(_ arguments: [String]) -> Result<Command, UsageError> {
        guard let first = arguments.first else { return .success(.help) }
        let rest = Array(arguments.dropFirst())
        // Every command takes --help (exit 0), wherever it stands: these three print their
        // own usage lines.
        if ["why", "conditions", "policy"].contains(first), let lines = usageLines(of: first), rest.contains("--help") || rest.contains("-h") {
            return .success(.commandHelp(commandHelp(lines)))
        }
        switch first {
        case "help", "--help", "-h":
            // `help --help` is help too: every command takes --help.
            if let extra = rest.first(where: { $0 != "--help" && $0 != "-h" }) { return .failure(UsageError(message: "help takes no arguments, got '\(extra)'")) }
            return .success(.help)
        case "version", "--version":
            if rest == ["--help"] || rest == ["-h"], let lines = usageLines(of: "version") {
                return .success(.commandHelp(commandHelp(lines)))
            }
            guard rest.isEmpty else { return .failure(UsageError(message: "version takes no arguments, got '\(rest[0])'")) }
            return .success(.version)
        case "why":
            return WhyCommand.parse(rest).map(Command.why)
        case "conditions":
            return ConditionsCommand.parse(rest).map { Command.conditions(json: $0.json, socket: $0.socket) }
        case "policy":
            return PolicyCommand.parse(rest).map { Command.policy(json: $0.json, check: $0.check, socket: $0.socket) }
        case "log":
            return LogCommand.parse(rest).map(Command.log)
        case "energy":
            return EnergyCommand.parse(rest).map(Command.energy)
        case "notifications":
            return NotificationsCommand.parse(rest).map(Command.notifications)
        case "simulate":
            return SimulateCommand.parse(rest).map(Command.simulate)
        case "fleet":
            return FleetCommand.parse(rest).map(Command.fleet)
        case "demo":
            var days = 1
            var report: String?
            var index = 0
            // A second value of an option is refused rather than silently replacing the first.
            var given: Set<String> = []
            while index < rest.count {
                if ["--days", "--report"].contains(rest[index]), !given.insert(rest[index]).inserted {
                    return .failure(UsageError(message: "\(rest[index]) given more than once"))
                }
                switch rest[index] {
                case "--days":
                    switch OptionValue.take(rest, at: &index, for: "--days", what: "a number").flatMap({ OptionValue.integer($0, for: "--days", in: 1...30) }) {
                    case .success(let value): days = value
                    case .failure(let error): return .failure(error)
                    }
                    index += 1
                case "--report":
                    switch OptionValue.take(rest, at: &index, for: "--report", what: "a file path") {
                    case .success(let path): report = path
                    case .failure(let error): return .failure(error)
                    }
                    index += 1
                case "--help", "-h":
                    return .success(.commandHelp(commandHelp(demoUsage)))
                default:
                    return .failure(UsageError(message: "unknown option for demo: '\(rest[index])'"))
                }
            }
            return .success(.demo(days: days, report: report))
        default:
            if let spec = DaemonCommand.spec(named: first) {
                return DaemonCommand.parse(spec, rest).map(Command.daemon)
            }
            return .failure(UsageError(message: "unknown command '\(first)'"))
        }
    }
}
