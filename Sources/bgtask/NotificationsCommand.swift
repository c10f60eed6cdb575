import BackgroundTasks
import Foundation
import SchedulerCore
import UserNotifications

/// `bgtask notifications [app] [--json]`: the apps' local notifications as their state
/// directories keep them (docs/daemon.md, "Notifications while the app is not running"):
/// what is pending, when each fires next, the app's delivered list (what `bgtask respond` can
/// answer), and what bgtaskd fired that the app has not taken in yet. Read-only: no file is moved or written, no daemon is asked.
enum NotificationsCommand {
    /// The options.
    struct Options: Equatable {
        /// Only this app's.
        var app: AppID?
        /// Print JSON instead of text.
        var json = false
        /// `--help`.
        var help = false
    }

    /// The usage lines for `bgtask help`.
    static let usage = """
      notifications [app] [--json]
                        the apps' local notifications, read from their state directories:
                        those pending (when each fires next, whether it repeats), those
                        delivered (what bgtask respond can answer) and those bgtaskd fired
                        that the app has not taken in yet
    """

    /// Parses the arguments after `notifications`.
    static func parse(_ arguments: [String]) -> Result<Options, UsageError> {
        var options = Options()
        for argument in arguments {
            switch argument {
            case "--json":
                if options.json { return .failure(UsageError(message: "--json given more than once")) }
                options.json = true
            case "--help", "-h":
                options.help = true
            default:
                if argument.hasPrefix("-") { return .failure(UsageError(message: "notifications: unknown option '\(StandardStream.oneLine(argument.excerpt(scalars: 80)))'")) }
                guard options.app == nil else { return .failure(UsageError(message: "notifications takes at most one app, got a second: '\(StandardStream.oneLine(argument.excerpt(scalars: 80)))'")) }
                if let problem = AppID.problem(with: argument) { return .failure(UsageError(message: "notifications: \(problem)")) }
                options.app = AppID(argument)
            }
        }
        return .success(options)
    }

    /// One app's notifications in `--json`; every key always present.
    struct Entry: Encodable {
        struct Pending: Encodable {
            var identifier: String
            var nextMoment: String
            var repeats: Bool
            var title: String
        }
        struct Fired: Encodable {
            var identifier: String
            var firedAt: String
            var listed: Bool
        }
        struct Delivered: Encodable {
            var identifier: String
            var deliveredAt: String
            var title: String
        }
        var app: String
        var file: String
        var problem: String?
        var pending: [Pending]
        var delivered: [Delivered]
        var firedByBgtaskd: [Fired]

        private enum CodingKeys: String, CodingKey { case app, file, problem, pending, delivered, firedByBgtaskd }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(app, forKey: .app)
            try container.encode(file, forKey: .file)
            // Optionals through the generic `encode` become `null` instead of vanishing.
            try container.encode(problem, forKey: .problem)
            try container.encode(pending, forKey: .pending)
            try container.encode(delivered, forKey: .delivered)
            try container.encode(firedByBgtaskd, forKey: .firedByBgtaskd)
        }
    }

    /// What to print: the notifications of every app with a pending file under the state
    /// root (`$XDG_STATE_HOME/bgtask`, else `~/.local/state/bgtask`), or of `options.app`.
    /// - Throws: ``RunLogError`` when no state root can be chosen.
    static func run(_ options: Options, environment: [String: String]) throws -> String {
        if options.help { return "usage: bgtask\n" + usage + "\n" }
        // The state root's own error says why there is none (neither variable set, or one
        // that is not valid UTF-8).
        let locations: AwayNotifications.DefaultLocations
        do {
            locations = try AwayNotifications.DefaultLocations(environment: environment)
        } catch {
            throw RunLogError(message: "\(error.message): no state directory to read")
        }
        let apps = options.app.map { [$0] } ?? (locations.appsWithPendingFiles() ?? []).sorted().map(AppID.init)
        let summaries = apps.compactMap { app in locations.of(app)?.summary().map { (app, $0) } }
        if options.json {
            let entries = summaries.map { app, summary in
                Entry(app: app.rawValue, file: summary.path, problem: summary.problem,
                      pending: summary.pending.map { .init(identifier: $0.identifier, nextMoment: RunLogFormat.preciseTime($0.nextMoment), repeats: $0.repeats, title: $0.title) },
                      delivered: summary.delivered.map { .init(identifier: $0.identifier, deliveredAt: RunLogFormat.preciseTime($0.date), title: $0.title) },
                      firedByBgtaskd: summary.fired.map { .init(identifier: $0.identifier, firedAt: RunLogFormat.preciseTime($0.date), listed: $0.listed) })
            }
            return try RunLogFormat.json(entries)
        }
        guard !summaries.isEmpty else {
            return "no local notifications kept\(options.app.map { " by \($0)" } ?? "") in \(locations.root)\n"
        }
        var text = ""
        for (app, summary) in summaries {
            text += "\(app) (\(summary.path))\n"
            if let problem = summary.problem { text += "  cannot be read: \(problem)\n" }
            if summary.pending.isEmpty, summary.problem == nil { text += "  nothing pending\n" }
            for pending in summary.pending {
                text += "  pending \(pending.identifier): next \(RunLogFormat.time(pending.nextMoment))\(pending.repeats ? ", repeats" : "")"
                    + (pending.title.isEmpty ? "" : ", \"\(pending.title.excerpt(scalars: 80))\"") + "\n"
            }
            for delivered in summary.delivered {
                text += "  delivered \(delivered.identifier) at \(RunLogFormat.time(delivered.date))"
                    + (delivered.title.isEmpty ? "" : ", \"\(delivered.title.excerpt(scalars: 80))\"") + "\n"
            }
            for fired in summary.fired {
                text += "  fired by bgtaskd, not yet taken in by the app: \(fired.identifier) at \(RunLogFormat.time(fired.date))\(fired.listed ? "" : " (not presented)")\n"
            }
        }
        return text
    }
}
