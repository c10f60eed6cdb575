/// The commands of `bgtask`, parsed from the arguments by a pure function (no
/// swift-argument-parser on this toolchain), so tests can call it directly.
enum Command: Equatable {
    /// `bgtask demo [--days N] [--report FILE]`: the example app through a short simulation.
    case demo(days: Int, report: String?)
    /// `bgtask why <app> <identifier>`: why hasn't the task run?
    case why(WhyCommand.Options)
    /// `bgtask conditions [--json]`: the device as the scheduler reads it.
    case conditions(json: Bool)
    /// `bgtask policy`: the policy configuration.
    case policy(json: Bool, check: String?)
    /// `bgtask log`: the run log.
    case log(LogCommand.Options)
    /// `bgtask energy`: runs, durations, CPU and energy per app and task.
    case energy(EnergyCommand.Options)
    /// `bgtask simulate`: a scenario through simulated days.
    case simulate(SimulateCommand.Options)
    /// `bgtask fleet`: many simulated devices and the load they make.
    case fleet(FleetCommand.Options)
    /// `bgtask help` / `--help`.
    case help
    /// `bgtask version` / `--version`.
    case version
}

/// A usage error: printed with the usage on standard error, exit status 64.
struct UsageError: Error, Equatable, CustomStringConvertible {
    var message: String
    var description: String { message }
}

enum CommandLineParser {
    static let usage = """
    usage: bgtask <command> [options]

    commands:
      demo [--days N] [--report FILE.html]
                        run the example feed reader's real handler code through N simulated
                        days (default 1) of a commuter's phone, print the timeline and a
                        summary, and write the HTML energy report (default: in the temporary
                        directory)
      why <app> <identifier> [--json] [--state DIR] [--policy FILE]
                        why hasn't the task run: every policy's verdict, blocking ones first,
                        the earliest instant it could run, and the predicted next run
      conditions [--json]
                        the device as the scheduler reads it (power, battery, low power mode,
                        thermal, network, idleness, CPU pressure) and where each value came from
      policy [--json] [--check FILE]
                        the policy configuration with its defaults (or FILE, validated)
    \(LogCommand.usage)
    \(EnergyCommand.usage)
    \(SimulateCommand.usage)
    \(FleetCommand.usage)
      help              show this help
      version           show the version

    The scheduler runs embedded in each app when no daemon is installed; see README.md.
    """

    static func parse(_ arguments: [String]) -> Result<Command, UsageError> {
        guard let first = arguments.first else { return .success(.help) }
        let rest = Array(arguments.dropFirst())
        switch first {
        case "help", "--help", "-h":
            return .success(.help)
        case "version", "--version":
            return .success(.version)
        case "why":
            return WhyCommand.parse(rest).map(Command.why)
        case "conditions":
            return ConditionsCommand.parse(rest).map { Command.conditions(json: $0) }
        case "policy":
            return PolicyCommand.parse(rest).map { Command.policy(json: $0.json, check: $0.check) }
        case "log":
            return LogCommand.parse(rest).map(Command.log)
        case "energy":
            return EnergyCommand.parse(rest).map(Command.energy)
        case "simulate":
            return SimulateCommand.parse(rest).map(Command.simulate)
        case "fleet":
            return FleetCommand.parse(rest).map(Command.fleet)
        case "demo":
            var days = 1
            var report: String?
            var index = 0
            while index < rest.count {
                switch rest[index] {
                case "--days":
                    guard index + 1 < rest.count else { return .failure(UsageError(message: "--days needs a value")) }
                    guard let value = Int(rest[index + 1]), (1...30).contains(value) else {
                        return .failure(UsageError(message: "--days must be a whole number from 1 to 30, got '\(rest[index + 1])'"))
                    }
                    days = value
                    index += 2
                case "--report":
                    guard index + 1 < rest.count, !rest[index + 1].hasPrefix("--") else { return .failure(UsageError(message: "--report needs a file path")) }
                    report = rest[index + 1]
                    index += 2
                case "--help", "-h":
                    return .success(.help)
                default:
                    return .failure(UsageError(message: "unknown option for demo: '\(rest[index])'"))
                }
            }
            return .success(.demo(days: days, report: report))
        default:
            return .failure(UsageError(message: "unknown command '\(first)'"))
        }
    }
}
