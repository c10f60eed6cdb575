import BackgroundTasks
import BackgroundTasksTesting
import Foundation
import SchedulerCore
import Synchronization

/// `bgtask fleet --devices N --days D [--mix ...] [--seed S] [--shared-outage HH:MM-HH:MM]
/// [--no-herd-spreading] [--compare-herd-spreading] [--compare-baselines] [--json]
/// [--report FILE]`: many simulated devices running the example app (modelled), the load
/// they put on its backend, and what the policy buys against plain timers.
enum FleetCommand {
    /// What the command line asks for.
    struct Options: Equatable {
        var devices = 1_000
        var days = 1
        var mix: String?
        var seed: UInt64 = 1
        var sharedOutage: String?
        var herdSpreading = true
        var compareHerd = false
        var compareBaselines = false
        var json = false
        var report: String?
        var progress = true
        var help = false
    }

    /// The usage lines for `bgtask help`.
    static let usage = """
      fleet [--devices N] [--days D] [--mix commuter=0.5,office=0.3,FILE=0.2,...]
            [--seed S] [--shared-outage HH:MM-HH:MM] [--no-herd-spreading]
            [--compare-herd-spreading] [--compare-baselines] [--json] [--report FILE.html]
            [--no-progress]
                        simulate N devices (default 1000) for D days (default 1), each its own
                        seeded variation of a scenario from the mix (built-in names or
                        scenario files), running the example app (modelled); prints task
                        runs per minute (backend load), the peak and
                        the worst minute, the share of launches that found fresh content and
                        the energy per device per day; --shared-outage takes every device
                        offline daily in that window so they all regain the network at once;
                        --compare-herd-spreading runs the fleet again with herd spreading
                        switched the other way and shows both (twice the time);
                        --compare-baselines runs it again under a 15-minute timer and a timer
                        that wakes as often as the policy, and shows staleness at launch
                        (median, p90), wakeups and energy of each and whether the goals hold
                        (about four times the time); a run shows its devices on
                        standard error when it is a terminal
    """

    /// Parses the arguments after `fleet`.
    static func parse(_ arguments: [String]) -> Result<Options, UsageError> {
        var options = Options()
        var index = 0
        // A second value of an option is refused rather than silently replacing the first.
        var given: Set<String> = []
        while index < arguments.count {
            let argument = arguments[index]
            if ["--devices", "--days", "--seed", "--mix", "--shared-outage", "--report"].contains(argument), !given.insert(argument).inserted {
                return .failure(UsageError(message: "\(argument) given more than once"))
            }
            func value(_ what: String) -> Result<String, UsageError> {
                OptionValue.take(arguments, at: &index, for: argument, what: what)
            }
            switch argument {
            case "--help", "-h": options.help = true
            case "--json": options.json = true
            case "--no-herd-spreading": options.herdSpreading = false
            case "--compare-herd-spreading": options.compareHerd = true
            case "--compare-baselines": options.compareBaselines = true
            case "--no-progress": options.progress = false
            case "--devices", "--days":
                let range = argument == "--devices" ? 1...Fleet.maximumDevices : 1...Fleet.maximumDays
                switch value("a number").flatMap({ OptionValue.integer($0, for: argument, in: range) }) {
                case .success(let number): if argument == "--devices" { options.devices = number } else { options.days = number }
                case .failure(let error): return .failure(error)
                }
            case "--seed":
                switch value("a number").flatMap({ OptionValue.seed($0, for: "--seed") }) {
                case .success(let seed): options.seed = seed
                case .failure(let error): return .failure(error)
                }
            case "--mix", "--shared-outage", "--report":
                let what = argument == "--mix" ? "name=weight or FILE=weight pairs" : argument == "--shared-outage" ? "HH:MM-HH:MM" : "a file path"
                let text: String
                switch value(what) {
                case .success(let value): text = value
                case .failure(let error): return .failure(error)
                }
                switch argument {
                case "--mix": options.mix = text
                case "--shared-outage": options.sharedOutage = text
                default: options.report = text
                }
            default:
                return .failure(UsageError(message: "unknown option for fleet: '\(argument)'"))
            }
            index += 1
        }
        if options.help { return .success(options) }
        // Sizes, the mix and the outage are checked here, before any work. What is wrong in
        // a scenario file of the mix is not the command line's fault: running says it, and
        // exits 1, as `bgtask simulate` does for its file.
        do {
            _ = try fleet(options)
        } catch let error as FleetError where error.file != nil {
            return .success(options)
        } catch {
            return .failure(UsageError(message: "\(error)"))
        }
        return .success(options)
    }

    /// The fleet the options describe: every size and value checked before any work.
    static func fleet(_ options: Options, environment: [String: String] = [:]) throws -> Fleet {
        var mix = Fleet.Mix.standard
        if let text = options.mix { mix = try Fleet.Mix.parse(text) }
        var outage: Fleet.SharedOutage?
        if let text = options.sharedOutage { outage = try Fleet.SharedOutage.parse(text) }
        var policies = PolicySet()
        if !options.herdSpreading { policies.configuration.herdSpreadWindow = 0 }
        return try Fleet(devices: options.devices, days: options.days, mix: mix, seed: options.seed, sharedOutage: outage, configuration: .simulation(environment: environment), policies: policies)
    }

    /// Runs the fleet and returns what to print; writes the report when asked. Progress
    /// goes to standard error when it is a terminal.
    /// `environment`: the variables a real device honours (`BACKGROUND_TASK_SIMULATE_EXPIRATION`);
    /// `main` passes the process's, tests pass none.
    static func run(_ options: Options, environment: [String: String] = [:], progressOnTerminal: Bool = isatty(STDERR_FILENO) == 1) throws -> String {
        if options.help { return "usage: bgtask\n" + usage + "\n" }
        let fleet = try fleet(options, environment: environment)
        // A report that cannot be written is refused before the run, not after it.
        if let path = options.report { try ReportDestination.check(path) }
        let began = ContinuousClock.now
        let bar = options.progress && progressOnTerminal ? ProgressBar(total: fleet.devices) : nil
        var progress: (@Sendable (Int) -> Void)?
        if let bar {
            progress = { done in bar.update(done) }
            // Drawn at once: the first device of a long fleet may take a while.
            bar.update(0)
        }
        let result: FleetResult
        var baselines: FleetComparison?
        if options.compareBaselines {
            // The policy's run is the comparison's first; the bar follows the three whole runs
            // (the interval search on the sample between them is not counted).
            let runs = ProgressBar(total: fleet.devices * 3, unit: "device runs")
            let told = bar.map { _ in { @Sendable (run: Int, done: Int) in runs.update((run - 1) * fleet.devices + done) } }
            let compared = fleet.compareWithTimers(progress: told)
            if bar != nil { runs.finish() }
            baselines = compared
            result = compared.policyRun
        } else {
            result = fleet.run(progress: progress)
            bar?.finish()
        }
        let elapsed = ContinuousClock.now - began
        var rows = result.summaryRows(sharedOutage: fleet.sharedOutage)
        // The report shows the comparison as rows; the text prints it as its own table.
        let reportRows = baselines.map { Self.baselineRows($0) } ?? []
        var comparison: FleetReport.Comparison?
        var compared: FleetResult?
        if options.compareHerd {
            var other = fleet
            other.policies.configuration.herdSpreadWindow = options.herdSpreading ? 0 : PolicyConfiguration().herdSpreadWindow
            let otherResult = other.run()
            compared = otherResult
            let name = options.herdSpreading ? "without herd spreading" : "with herd spreading"
            rows.append(FleetReport.Row(name: "runs per minute, peak, \(name)", value: "\(otherResult.peak.runs)"))
            if let outage = fleet.sharedOutage, !outage.coversTheDay {
                rows.append(FleetReport.Row(name: "peak minute in the 15 min after the network returns, \(name)", value: "\(otherResult.peakAfter(minuteOfDay: outage.to, window: 15))"))
            }
            comparison = FleetReport.Comparison(
                label: options.herdSpreading ? "with herd spreading" : "without herd spreading",
                comparisonLabel: name, runsPerMinute: otherResult.runsPerMinute)
        }
        var markers: [FleetReport.Marker] = []
        if let outage = fleet.sharedOutage, !outage.coversTheDay {
            for day in 0..<fleet.days {
                markers.append(FleetReport.Marker(minute: day * 1440 + outage.from, label: "network lost everywhere"))
                markers.append(FleetReport.Marker(minute: day * 1440 + outage.to, label: "network back everywhere"))
            }
        }
        let herd = options.herdSpreading ? "herd spreading \(Int(saturating: fleet.policies.configuration.herdSpreadWindow)) s" : "herd spreading off"
        let notes = [
            "apps: \(fleet.apps.map(\.app.rawValue).joined(separator: ", ")) (modelled); \(herd)",
            "reproduce: bgtask fleet --devices \(fleet.devices) --days \(fleet.days) --mix \(CommandLineValue.shellWord(fleet.mix.description)) --seed \(fleet.seed)"
                + (options.sharedOutage.map { " --shared-outage \($0)" } ?? "") + (options.herdSpreading ? "" : " --no-herd-spreading"),
        ]
        var saved = ""
        if let path = options.report {
            let report = FleetReport(
                title: "\(CountText.counted(fleet.devices, "device")), \(CountText.counted(fleet.days, "day"))",
                devices: fleet.devices, days: fleet.days, mix: fleet.mix.description, seed: fleet.seed,
                runsPerMinute: result.runsPerMinute, markers: markers, summary: rows + reportRows, notes: notes, comparison: comparison
            )
            try ReportDestination.write(HTMLReport.render(report), to: path)
            saved = "report written to \(path)\n"
        }
        if options.json {
            let document = Document(
                devices: fleet.devices, days: fleet.days, mix: fleet.mix.description, seed: fleet.seed,
                herdSpreading: options.herdSpreading, sharedOutage: options.sharedOutage,
                runs: result.runs, meanRunsPerMinute: result.meanPerMinute, peakRunsPerMinute: result.peak.runs,
                peakToMean: result.peakToMean, worstMinute: result.peak.minute, launches: result.launches,
                freshLaunchShare: result.freshShare, joulesPerDevicePerDay: result.joulesPerDevicePerDay,
                wakeupsPerDevicePerDay: result.wakeupsPerDevicePerDay, runsPerMinute: result.runsPerMinute,
                comparison: compared.map { Document.Comparison(herdSpreading: !options.herdSpreading, runs: $0.runs, peakRunsPerMinute: $0.peak.runs, runsPerMinute: $0.runsPerMinute) },
                stalenessMedianMinutes: result.stalenessMinutes(quantile: 0.5), stalenessP90Minutes: result.stalenessMinutes(quantile: 0.9),
                baselines: baselines.map { Document.Baselines(
                    policy: $0.policy, timer15: $0.timer15, equalBudgetTimer: $0.equalBudgetTimer,
                    equalBudgetIntervalMinutes: $0.equalBudgetInterval / 60,
                    equalBudgetMatched: BaselineComparison.equalBudgetMatches(policy: $0.policy, equalBudgetTimer: $0.equalBudgetTimer),
                    goals: $0.goals) }
            )
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return String(decoding: try encoder.encode(document), as: UTF8.self) + "\n"
        }
        var text = "bgtask fleet: \(CountText.counted(fleet.devices, "device")), \(CountText.counted(fleet.days, "day")), mix \(fleet.mix), seed \(fleet.seed)\n"
        text += notes[0] + "\n\n"
        let width = rows.map { $0.name.count }.max() ?? 0
        for row in rows { text += "  \(row.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(row.value)\n" }
        if let baselines {
            text += "\n" + BaselineComparison.text(
                heading: "the policy against plain timers across the fleet (staleness pooled over every launch, to 10 s; rates per device)",
                policy: baselines.policy, timer15: baselines.timer15, equalBudgetTimer: baselines.equalBudgetTimer,
                equalBudgetInterval: baselines.equalBudgetInterval)
        }
        text += "\nsimulated \(CountText.counted(fleet.devices * fleet.days, "device-day"))\(options.compareBaselines ? " under each scheduler" : "") in \(elapsed.formatted(.units(allowed: [.seconds, .milliseconds], width: .abbreviated)))\n"
        return text + saved
    }

    /// The summary rows of the comparison with the timers.
    static func baselineRows(_ comparison: FleetComparison) -> [FleetReport.Row] {
        func row(_ name: String, _ figures: BaselineComparison.Figures) -> FleetReport.Row {
            FleetReport.Row(
                name: "staleness at launch (median / p90), wakeups and energy a day: \(name)",
                value: "\(figures.stalenessText(\.stalenessMedianMinutes)) / \(figures.stalenessText(\.stalenessP90Minutes)), \(String(format: "%.1f", figures.wakeupsPerDay)), \(String(format: "%.0f J", figures.joulesPerDay))")
        }
        let goals = comparison.goals
        let verdict = BaselineComparison.verdict
        var rows = [
            row("policy", comparison.policy),
            row("timer, 15 min", comparison.timer15),
            row("timer, equal budget (\(DurationText.spoken(comparison.equalBudgetInterval)))", comparison.equalBudgetTimer),
            FleetReport.Row(name: "goals (wakeups, median, p90; docs/scenarios.md)", value: "\(verdict(goals.wakeups)), \(verdict(goals.median, comparison.policy, comparison.timer15)), \(verdict(goals.p90, comparison.policy, comparison.equalBudgetTimer))"),
        ]
        // The report says what the text says under its table when the timer is not one.
        if let note = BaselineComparison.equalBudgetNote(policy: comparison.policy, equalBudgetTimer: comparison.equalBudgetTimer, interval: comparison.equalBudgetInterval) {
            rows.append(FleetReport.Row(name: "note on the equal-budget timer", value: note))
        }
        return rows
    }

    /// The `--json` document.
    struct Document: Encodable, Equatable {
        var devices: Int
        var days: Int
        var mix: String
        var seed: UInt64
        var herdSpreading: Bool
        var sharedOutage: String?
        var runs: Int
        var meanRunsPerMinute: Double
        var peakRunsPerMinute: Int
        var peakToMean: Double
        var worstMinute: Int
        var launches: Int
        var freshLaunchShare: Double
        var joulesPerDevicePerDay: Double
        var wakeupsPerDevicePerDay: Double
        var runsPerMinute: [Int]
        /// With `--compare-herd-spreading`: the same fleet with herd spreading the other way.
        var comparison: Comparison?
        /// The content's age at launches (pooled over the fleet, to 10 s), median and p90.
        @NullWhenAbsent var stalenessMedianMinutes: Double?
        @NullWhenAbsent var stalenessP90Minutes: Double?
        /// With `--compare-baselines`: the policy against the two timers.
        var baselines: Baselines?

        /// The keys of `bgtask simulate --compare-baselines --json`, per device per day.
        struct Baselines: Encodable, Equatable {
            var policy: BaselineComparison.Figures
            var timer15: BaselineComparison.Figures
            var equalBudgetTimer: BaselineComparison.Figures
            var equalBudgetIntervalMinutes: Double
            var equalBudgetMatched: Bool
            var goals: BaselineComparison.Goals
        }

        /// The compared run.
        struct Comparison: Codable, Equatable {
            var herdSpreading: Bool
            var runs: Int
            var peakRunsPerMinute: Int
            var runsPerMinute: [Int]
        }
    }
}

/// A one-line progress bar on standard error, redrawn in place.
final class ProgressBar: Sendable {
    private let total: Int
    private let unit: String
    /// The bar is drawn only once this much wall time has passed: a run that ends sooner
    /// leaves the terminal as it was.
    private let showsAfter: Duration
    private let began: ContinuousClock.Instant
    private let write: @Sendable (String) -> Void
    /// The time now: the continuous clock, or a test's.
    private let now: @Sendable () -> ContinuousClock.Instant
    /// The percentage last drawn (-1 before the first), when it was drawn, and whether a
    /// time estimate has been drawn (later lines then keep its width, so a shorter one leaves
    /// nothing of it behind).
    private let last = Mutex<(percent: Int, at: ContinuousClock.Instant?, estimated: Bool)>((-1, nil, false))
    /// How long a run must have gone before its remaining time is estimated (sooner, the
    /// first units' set-up weighs too much in the rate).
    static let estimateAfter: Duration = .seconds(5)
    /// The width the estimate takes on the line.
    private static let estimateWidth = 28
    /// A bar whose percentage has not moved is redrawn this often with its count, so a
    /// long run (a percent of ten million devices is a minute) still shows it is alive.
    private static let redrawEvery: Duration = .seconds(1)

    init(
        total: Int, unit: String = "devices", showsAfter: Duration = .zero,
        write: @escaping @Sendable (String) -> Void = { StandardStream.writeError($0) },
        now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    ) {
        self.now = now
        began = now()
        self.total = total
        self.unit = unit
        self.showsAfter = showsAfter
        self.write = write
    }

    /// Draws `done` of the total, when the percentage changed or a second has passed since
    /// the last draw; cheap otherwise, so it may be called for every unit of work.
    func update(_ done: Int) {
        let now = now()
        guard now - began >= showsAfter else { return }
        let percent = min(100, done * 100 / max(1, total))
        let elapsed = now - began
        let estimate = done > 0 && done < total && elapsed >= Self.estimateAfter
            ? Self.remainingText(seconds: Self.seconds(elapsed) * Double(total - done) / Double(done)) : nil
        let draw = last.withLock { last -> (draws: Bool, pad: Bool) in
            if last.percent == percent, let at = last.at, now - at < Self.redrawEvery { return (false, false) }
            let pad = last.estimated || estimate != nil
            last = (percent, now, pad)
            return (true, pad)
        }
        guard draw.draws else { return }
        let filled = percent * 30 / 100
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled)
        var line = "\r[\(bar)] \(percent) % (\(done)/\(total) \(unit))"
        if draw.pad {
            line += (estimate.map { ", \($0)" } ?? "").padding(toLength: Self.estimateWidth, withPad: " ", startingAt: 0)
        }
        write(line)
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// The remaining time as a person reads it: "about 40 s left", "about 17 min left",
    /// "about 2 h 5 min left", "about 3 days 4 h left" (rounded up; a run of ten million
    /// devices at the cap can take days, and says so).
    static func remainingText(seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "time left unknown" }
        let total = seconds >= 1e12 ? 1e12 : seconds.rounded(.up)
        let whole = Int(total)
        switch whole {
        case ..<60: return "about \(max(1, whole)) s left"
        case ..<3_600: return "about \((whole + 59) / 60) min left"
        case ..<172_800:
            let minutes = (whole + 59) / 60
            return "about \(minutes / 60) h \(minutes % 60) min left"
        default:
            let hours = (whole + 3_599) / 3_600
            return "about \(hours / 24) days \(hours % 24) h left"
        }
    }

    /// Draws the bar full and ends its line, if it was drawn at all.
    func finish() {
        guard last.withLock({ $0.percent }) >= 0 else { return }
        update(total)
        write("\n")
    }
}
