import BackgroundTasks
import Foundation
import SchedulerCore

/// `bgtask energy [--app A] [--since T] [--state DIR | --store URL] [--json]`: the energy log summed per
/// app and task (Xcode Organizer's energy report): runs, expirations, mean and p95 wall
/// time, CPU seconds and estimated joules.
enum EnergyCommand {
    /// The options of `energy` (the same as `log`'s).
    typealias Options = RunLogOptions

    /// The usage lines for `bgtask help`.
    static let usage = """
      energy [--app A] [--since T] [--state DIR | --store URL] [--json]
                        sum the run log per app and task: runs, expirations, mean and p95
                        duration, CPU seconds, estimated energy
    """

    /// Parses the arguments after `energy`.
    static func parse(_ arguments: [String]) -> Result<Options, UsageError> {
        RunLogOptions.parse(arguments, command: "energy")
    }

    /// Reads the stores the options name and returns the text to print (a table, or JSON
    /// with `--json`).
    /// - Parameters:
    ///   - environment: Where `XDG_STATE_HOME` and `HOME` come from when `--state` is absent.
    ///   - now: The instant relative `--since` values count back from.
    ///   - warn: Where the lines naming stores and run rows that could not be read go
    ///     (standard error), apart from the output, which may be JSON.
    /// - Throws: ``RunLogError`` when no store can be read.
    static func run(_ options: Options, environment: [String: String], now: Date, warn: (String) -> Void) throws -> String {
        if options.help { return "usage: bgtask\n" + usage + "\n" + RunLogOptions.optionsHelp + "\n" }
        let reading = try RunLogReading.read(options, environment: environment, now: now)
        if let warnings = reading.warnings { warn(warnings) }
        let runs = reading.runs.map(\.run)
        let tasks = EnergySummary.make(from: runs)
        let apps = EnergySummary.byApp(from: runs)
        if options.json {
            return try RunLogFormat.json(Document(
                envelope: RunLogEnvelope(reading, options: options),
                tasks: tasks,
                apps: apps
            ))
        }
        return text(reading, tasks: tasks, apps: apps, options: options)
    }

    /// The `--json` document: the shared envelope, then the rows. Every key is always present.
    struct Document: Codable, Equatable {
        /// Which stores were read, and the filters.
        var envelope: RunLogEnvelope
        /// One row per app and task identifier.
        var tasks: [EnergySummary.Row]
        /// One row per app, all its tasks together (`identifier` is `null`).
        var apps: [EnergySummary.Row]

        private enum CodingKeys: String, CodingKey { case tasks, apps }

        init(envelope: RunLogEnvelope, tasks: [EnergySummary.Row], apps: [EnergySummary.Row]) {
            self.envelope = envelope
            self.tasks = tasks
            self.apps = apps
        }

        init(from decoder: any Decoder) throws {
            envelope = try RunLogEnvelope(from: decoder)
            let container = try decoder.container(keyedBy: CodingKeys.self)
            tasks = try container.decode([EnergySummary.Row].self, forKey: .tasks)
            apps = try container.decode([EnergySummary.Row].self, forKey: .apps)
        }

        func encode(to encoder: any Encoder) throws {
            try envelope.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(tasks, forKey: .tasks)
            try container.encode(apps, forKey: .apps)
        }
    }

    private static func text(
        _ reading: RunLogReading,
        tasks: [EnergySummary.Row],
        apps: [EnergySummary.Row],
        options: Options
    ) -> String {
        guard !tasks.isEmpty else {
            return "no runs recorded in \(reading.whereDescription)\(reading.filterDescription(options))\n"
        }
        var output = "energy per app and task, from the runs recorded in "
            + "\(reading.whereDescription)\(reading.filterDescription(options))\n\n"
        let header = ["APP", "TASK", "RUNS", "EXPIRED", "MEAN", "P95", "CPU", "ENERGY"]
        func cells(_ row: EnergySummary.Row, task: String) -> [String] {
            [
                row.app.rawValue,
                task,
                String(row.runs),
                String(row.expirations),
                row.meanDuration.map(DurationText.measured) ?? "-",
                row.p95Duration.map(DurationText.measured) ?? "-",
                DurationText.measured(row.cpuSeconds),
                RunLogFormat.joules(row.energyJoules) + (row.unmeasuredRuns > 0 ? " *" : ""),
            ]
        }
        var rows: [[String]] = []
        for app in apps {
            let mine = tasks.filter { $0.app == app.app }
            rows += mine.map { cells($0, task: $0.identifier ?? "-") }
            // A total only adds information when the app has more than one task.
            if mine.count > 1 { rows.append(cells(app, task: "(all tasks)")) }
        }
        output += RunLogFormat.table(header: header, rows: rows)
        let unmeasured = apps.reduce(0) { $0 + $1.unmeasuredRuns }
        let inProgress = apps.reduce(0) { $0 + $1.inProgress }
        var notes: [String] = []
        if unmeasured > 0 {
            notes.append("* \(unmeasured) run\(unmeasured == 1 ? " has" : "s have") no energy estimate "
                + "(recorded before the energy log, or not measured) and count as 0 J")
        }
        if inProgress > 0 {
            notes.append("\(inProgress) run\(inProgress == 1 ? " is" : "s are") still in progress and not counted")
        }
        notes.append("energy is an estimate: CPU seconds × watts per core + wall time × base watts")
        output += "\n" + notes.map { $0 + "\n" }.joined()
        return output
    }
}
