/// The commands of `bgtask`, parsed from the arguments by a pure function (no
/// swift-argument-parser on this toolchain), so tests can call it directly.
enum Command: Equatable {
    /// `bgtask demo [--days N]`: simulate the example app through scripted days.
    case demo(days: Int)
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
      demo [--days N]   run the example feed reader's real handler code through N simulated
                        days (default 1) of scripted conditions, and print the timeline
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
        case "demo":
            var days = 1
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
                case "--help", "-h":
                    return .success(.help)
                default:
                    return .failure(UsageError(message: "unknown option for demo: '\(rest[index])'"))
                }
            }
            return .success(.demo(days: days))
        default:
            return .failure(UsageError(message: "unknown command '\(first)'"))
        }
    }
}
