import BackgroundTasks
import BackgroundTasksTesting
import FeedReaderExample
import Foundation
import SchedulerCore

/// `bgtask simulate <scenario|file> [--app A]... [--days N] [--seed N] [--json] [--report FILE]`:
/// a scenario played through simulated days, with the example app's real handlers or with
/// apps modelled from their manifests; with `--compare-baselines [--seeds A-B]`, the full
/// policy against two timers (``BaselineComparison``).
enum SimulateCommand {
    /// What the command line asks for.
    struct Options: Equatable {
        /// A built-in scenario's name, or a scenario file's path.
        var scenario: String
        /// `feedreader` (the example app, real handlers) or manifest files (modelled apps).
        var apps: [String] = []
        var days = 7
        var seed: UInt64?
        var json = false
        var report: String?
        var help = false
        /// Whether a long run draws a progress bar on standard error when it is a terminal
        /// (`--no-progress`: never).
        var progress = true
        /// `--compare-baselines`: the seeds compared (by default 1-5, or `--seed`'s alone).
        var compareSeeds: ClosedRange<UInt64>?
    }

    /// The usage lines for `bgtask help`.
    static let usage = """
      simulate <scenario|FILE> [--app feedreader|MANIFEST]... [--days N] [--seed N] [--json] [--report FILE.html] [--no-progress]
                        play a scenario (\(Scenario.builtInNames.joined(separator: ", ")),
                        or a scenario file, see docs/scenarios.md) through N simulated days
                        (default 7): the example app's real handlers, or apps modelled from
                        their manifests; prints the timeline and a summary, --json the full
                        trace, --report an HTML energy report; a run longer than a second
                        shows its days on standard error when it is a terminal
      simulate <scenario|FILE> --compare-baselines [--app feedreader|MANIFEST] [--days N] [--seeds A-B] [--json] [--report FILE.html]
                        the full policy against a 15-minute timer and a timer with the
                        policy's number of wakeups, both obeying only what the device
                        forbids: staleness at launch, wakeups and energy, and whether the
                        policy's goals hold (default: 28 days, seeds 1-5, the example app
                        modelled; --app feedreader runs its real handlers; --report writes
                        the comparison as an HTML page)
    """

    /// The most seeds one comparison plays.
    static let maximumSeeds: UInt64 = 100

    /// The most days one simulation may cover.
    static let maximumDays = Simulation.maximumDays
    /// The most app-days one simulation may cover: its whole trace is kept (about 300 KB a
    /// day for the example app), so ten years of one app or a year of ten apps at most. A
    /// comparison plays each seed's simulation up to 16 times (one at a time, keeping only
    /// its figures): its seed-days have the same bound, which bounds its time.
    static let maximumAppDays = 3_660
    /// The most scenario events (``Scenario/eventBound(days:)``, for each app and seed) one
    /// simulation may play: ``Scenario/maximumEventsPerSimulation``, whose documentation
    /// says what the trace costs for each event.
    static let maximumScenarioEvents = Scenario.maximumEventsPerSimulation

    /// Parses the arguments after `simulate`.
    static func parse(_ arguments: [String]) -> Result<Options, UsageError> {
        var options = Options(scenario: "")
        var positional: [String] = []
        var index = 0
        var compares = false
        var daysGiven = false
        var seeds: ClosedRange<UInt64>?
        // Every option but --app (one per app) and the flags takes one value: a second one
        // is refused rather than silently replacing the first.
        var given: Set<String> = []
        func value(_ option: String) -> Result<String, UsageError> {
            OptionValue.take(arguments, at: &index, for: option, what: option == "--app" ? "feedreader or a manifest path" : option == "--report" ? "a file path" : "a number")
        }
        while index < arguments.count {
            let argument = arguments[index]
            if ["--seeds", "--report", "--days", "--seed"].contains(argument), !given.insert(argument).inserted {
                return .failure(UsageError(message: "\(argument) given more than once"))
            }
            switch argument {
            case "--":
                // The end of the options: what follows is the scenario, even `--days`.
                positional += arguments[(index + 1)...]
                index = arguments.count
                continue
            case "--help", "-h":
                options.help = true
            case "--json":
                options.json = true
            case "--compare-baselines":
                compares = true
            case "--no-progress":
                options.progress = false
            case "--seeds":
                switch value(argument) {
                case .success(let text):
                    switch seedRange(text) {
                    case .success(let range): seeds = range
                    case .failure(let error): return .failure(error)
                    }
                case .failure(let error): return .failure(error)
                }
            case "--app":
                switch value(argument) {
                case .success(let app):
                    // The same app twice is a slip (and one app cannot be installed twice):
                    // said as such, not as the combination it would otherwise be refused for.
                    if options.apps.contains(app) { return .failure(UsageError(message: "--app \(app) given more than once")) }
                    options.apps.append(app)
                case .failure(let error): return .failure(error)
                }
            case "--report":
                switch value(argument) {
                case .success(let path): options.report = path
                case .failure(let error): return .failure(error)
                }
            case "--days":
                switch value(argument) {
                case .success(let text):
                    switch OptionValue.integer(text, for: "--days", in: 1...maximumDays) {
                    case .success(let days): options.days = days; daysGiven = true
                    case .failure(let error): return .failure(error)
                    }
                case .failure(let error): return .failure(error)
                }
            case "--seed":
                switch value(argument) {
                case .success(let text):
                    switch OptionValue.seed(text, for: "--seed") {
                    case .success(let seed): options.seed = seed
                    case .failure(let error): return .failure(error)
                    }
                case .failure(let error): return .failure(error)
                }
            default:
                if argument.hasPrefix("-"), argument.count > 1 {
                    return .failure(UsageError(message: "unknown option for simulate: '\(argument)'"))
                }
                positional.append(argument)
            }
            index += 1
        }
        if options.help { return .success(options) }
        guard positional.count == 1 else {
            return .failure(UsageError(message: positional.isEmpty
                ? "simulate needs a scenario: \(Scenario.builtInNames.joined(separator: ", ")), or a scenario file"
                : "simulate takes one scenario, got \(positional.map { "'\($0)'" }.joined(separator: " "))"))
        }
        options.scenario = positional[0]
        // A scenario that is neither built in nor a file is a mistake on the command line
        // (exit 64 with the usage), not a failure of the simulation.
        if options.scenario.isEmpty {
            return .failure(UsageError(message: "simulate needs a scenario (\(Scenario.builtInNames.joined(separator: ", ")), or a scenario file), got an empty string"))
        }
        // "life.json/" names a directory; Foundation would read the file without the slash.
        if options.scenario.hasSuffix("/"), options.scenario.count > 1, Scenario.somethingIsAt(String(options.scenario.dropLast())) {
            return .failure(UsageError(message: "simulate: '\(options.scenario)' ends in /, which names a directory: a scenario is a file (drop the /)"))
        }
        if Scenario.builtIn(named: options.scenario) == nil, !Scenario.somethingIsAt(options.scenario) {
            return .failure(UsageError(message: "simulate: '\(options.scenario)' is neither a built-in scenario (\(Scenario.builtInNames.joined(separator: ", "))) nor a file"))
        }
        if compares {
            if seeds != nil, options.seed != nil {
                return .failure(UsageError(message: "--seeds and --seed cannot be combined: --seeds A-B compares seeds A to B, --seed N one seed"))
            }
            if options.apps.count > 1 {
                return .failure(UsageError(message: "--compare-baselines measures one app: pass one --app (feedreader or a manifest), or none for the example app modelled"))
            }
            let compared = seeds ?? options.seed.map { $0...$0 } ?? 1...5
            options.compareSeeds = compared
            options.seed = nil
            if !daysGiven { options.days = 28 }
            let seedCount = Int(compared.upperBound - compared.lowerBound) + 1
            if options.days * seedCount > maximumAppDays {
                return .failure(UsageError(message: "--days \(options.days) with \(seedCount) seeds is more than the \(maximumAppDays) seed-days one comparison plays (it plays each seed's simulation up to 16 times); compare fewer days or seeds"))
            }
            if let error = scenarioEventsProblem(options, apps: 1, seeds: seedCount) { return .failure(error) }
            return .success(options)
        }
        if seeds != nil {
            return .failure(UsageError(message: "--seeds goes with --compare-baselines; to play one seed, use --seed N"))
        }
        if options.apps.isEmpty { options.apps = ["feedreader"] }
        if options.apps.contains("feedreader"), options.apps.count > 1 {
            return .failure(UsageError(message: "--app feedreader (real handlers) cannot be combined with modelled apps; pass manifests only, or feedreader alone"))
        }
        if options.days * options.apps.count > maximumAppDays {
            return .failure(UsageError(message: "--days \(options.days) with \(options.apps.count) apps is more than the \(maximumAppDays) app-days one simulation keeps a trace of; simulate at most \(maximumAppDays / options.apps.count) days, or use bgtask fleet for load planning"))
        }
        if let error = scenarioEventsProblem(options, apps: options.apps.count, seeds: 1) { return .failure(error) }
        return .success(options)
    }

    /// The usage error of a run that would play more than ``maximumScenarioEvents`` (for
    /// each of `apps` apps and `seeds` seeds), with the most days that fit; nil when it
    /// fits. Decided before anything runs, from the scenario's pattern. A scenario file
    /// that cannot be read is not judged here: running says what is wrong with it.
    static func scenarioEventsProblem(_ options: Options, apps: Int, seeds: Int) -> UsageError? {
        guard let scenario = try? loadScenario(options.scenario) else { return nil }
        func events(_ days: Int) -> Int {
            let (total, overflow) = scenario.eventBound(days: days).multipliedReportingOverflow(by: max(1, apps) * max(1, seeds))
            return overflow ? .max : total
        }
        let total = events(options.days)
        guard total > maximumScenarioEvents else { return nil }
        let fits = scenario.mostDays(upTo: options.days, fitting: maximumScenarioEvents, multiplier: max(1, apps) * max(1, seeds))
        var each = "about \(Int((Double(scenario.eventBound(days: options.days)) / Double(options.days)).rounded())) a day"
        if apps > 1 { each += " for each of \(apps) apps" }
        if seeds > 1 { each += (apps > 1 ? " and" : "") + " for each of \(seeds) seeds" }
        // With many seeds, fewer seeds may fit where no number of days does.
        let (perSeed, perSeedOverflow) = scenario.eventBound(days: options.days).multipliedReportingOverflow(by: max(1, apps))
        let seedsThatFit = perSeedOverflow || perSeed <= 0 ? 0 : maximumScenarioEvents / perSeed
        let advice = if fits > 0 {
            "\(seeds > 1 ? "compare" : "simulate") at most \(CountText.counted(fits, "day"))"
        } else if seeds > 1, seedsThatFit >= 1 {
            "compare at most \(CountText.counted(seedsThatFit, "seed")) over \(CountText.counted(options.days, "day"))"
        } else {
            "even one day is too many: the scenario needs fewer intervals or launches"
        }
        let why = options.compareSeeds == nil
            ? "one simulation may play, since its trace of every event is kept in memory"
            : "one comparison may play, since it plays each seed's simulation up to 16 times"
        return UsageError(message: "--days \(options.days) plays \(total) scenario events (\(each): each interval and launch of \(options.scenario) starts and ends), more than the \(maximumScenarioEvents) \(why); \(advice)")
    }

    /// `A-B` or `N`: at most ``maximumSeeds`` seeds, in order.
    static func seedRange(_ text: String) -> Result<ClosedRange<UInt64>, UsageError> {
        let parts = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        var bounds: [UInt64] = []
        for part in parts {
            switch OptionValue.seed(part, for: "--seeds") {
            case .success(let seed): bounds.append(seed)
            case .failure:
                return .failure(UsageError(message: "--seeds must be a seed or a range A-B of whole numbers from 0 to \(UInt64.max), got '\(text)'"))
            }
        }
        guard bounds[0] <= bounds[bounds.count - 1] else {
            return .failure(UsageError(message: "--seeds \(text): the first seed must not be above the last"))
        }
        let range = bounds[0]...bounds[bounds.count - 1]
        guard range.upperBound - range.lowerBound < maximumSeeds else {
            return .failure(UsageError(message: "--seeds \(text) is more than the \(maximumSeeds) seeds one comparison plays"))
        }
        return .success(range)
    }

    /// `scenario`'s launches must name apps that are simulated (``Scenario/checkLaunchApps(among:)``);
    /// the error names the scenario's file when it came from one.
    static func checkLaunchApps(of scenario: Scenario, named name: String, among apps: [AppID]) throws {
        do {
            try scenario.checkLaunchApps(among: apps.map(\.rawValue))
        } catch {
            var located = error
            // The path as the file's other errors give it (absolute, as the loader read it).
            if Scenario.builtIn(named: name) == nil { located.file = URL(fileURLWithPath: name).path }
            throw located
        }
    }

    /// The scenario named or read from a file.
    static func loadScenario(_ name: String) throws -> Scenario {
        guard let scenario = try Scenario.builtInOrFile(name) else {
            throw UsageError(message: "unknown scenario '\(name)': built-in are \(Scenario.builtInNames.joined(separator: ", ")); or pass a scenario file (docs/scenarios.md)")
        }
        return scenario
    }

    /// The modelled apps of manifest files. Two manifests of one app are refused: the
    /// device would register the app twice, its tasks and launches merged under one
    /// identifier, and the summary would not say which file was played.
    static func loadModelledApps(_ paths: [String]) throws -> [ModelledApp] {
        var loaded: [(path: String, app: ModelledApp)] = []
        for path in paths {
            let manifest = try AppManifest.load(contentsOf: URL(fileURLWithPath: path))
            let app: ModelledApp
            switch ModelledApp.modelling(manifest) {
            case .success(let modelled): app = modelled
            case .failure(let refusal): throw UsageError(message: "--app \(path): cannot model this app: \(refusal)")
            }
            if let first = loaded.first(where: { $0.app.app == app.app }) {
                throw UsageError(message: "--app \(path) and --app \(first.path) both describe the app \(app.app.rawValue) (CFBundleIdentifier): each app may be simulated once; pass one of them")
            }
            loaded.append((path, app))
        }
        return loaded.map(\.app)
    }

    /// Runs the simulation and returns what to print; writes the report when asked.
    /// `environment`: the variables a real device honours (`BACKGROUND_TASK_SIMULATE_EXPIRATION`);
    /// `main` passes the process's, tests pass none.
    /// `progressOnTerminal`: whether standard error is a terminal, where a run that lasts
    /// more than a second draws its days simulated (never on standard output, which may be
    /// JSON).
    static func run(_ options: Options, environment: [String: String] = [:], progressOnTerminal: Bool = isatty(STDERR_FILENO) == 1) async throws -> String {
        if options.help { return "usage: bgtask\n" + usage + "\n" }
        let scenario = try loadScenario(options.scenario)
        // A report that cannot be written is refused before the run, not after it.
        if let path = options.report { try ReportDestination.check(path) }
        if let seeds = options.compareSeeds {
            let subject: BaselineComparison.Subject
            switch options.apps {
            case ["feedreader"]:
                subject = .real(app: FeedReader.manifest.appID!) { device in FeedReader.install(on: device) }
                try checkLaunchApps(of: scenario, named: options.scenario, among: [FeedReader.manifest.appID!])
            case []:
                subject = .modelled([.feedReader()])
                try checkLaunchApps(of: scenario, named: options.scenario, among: [ModelledApp.feedReader().app])
            default:
                let apps = try loadModelledApps(options.apps)
                subject = .modelled(apps)
                try checkLaunchApps(of: scenario, named: options.scenario, among: apps.map(\.app))
            }
            let comparison = try await BaselineComparison.run(scenario: scenario, days: options.days, seeds: Array(seeds), subject: subject)
            var written = ""
            if let path = options.report {
                try ReportDestination.write(HTMLReport.render(comparison), to: path)
                written = "comparison report written to \(path)\n"
            }
            // JSON alone on standard output stays parseable.
            return options.json ? comparison.json() : comparison.text() + written
        }
        let apps = options.apps == ["feedreader"] ? nil : try loadModelledApps(options.apps)
        try checkLaunchApps(of: scenario, named: options.scenario, among: apps?.map(\.app) ?? [FeedReader.manifest.appID!])
        // The command honours BACKGROUND_TASK_SIMULATE_EXPIRATION like a real device.
        let simulation = Simulation(scenario: scenario, days: options.days, seed: options.seed, configuration: .simulation(environment: environment))
        let began = ContinuousClock.now
        // Ten years take about a minute: past a second, the days played so far.
        let bar = options.progress && progressOnTerminal ? ProgressBar(total: options.days, unit: "days", showsAfter: .seconds(1)) : nil
        let progress = bar.map { bar in { (day: Int) in bar.update(day) } }
        let result: SimulationResult
        if let apps {
            result = try simulation.run(modelled: apps, progress: progress)
        } else {
            // The demo's backlog: the first clean-up expires and the next resumes from its checkpoint.
            result = try await simulation.run(installing: { device in FeedReader.install(on: device, backlog: 8_000) }, progress: progress)
        }
        bar?.finish()
        let elapsed = ContinuousClock.now - began
        let appsText = apps.map { "modelled " + $0.map(\.app.rawValue).joined(separator: ", ") } ?? "the example feed reader (real handlers)"
        var output = ""
        if let path = options.report {
            let report = result.deviceReport(
                title: "\(scenario.name.excerpt(scalars: 120)): \(CountText.counted(options.days, "day"))",
                notes: ["apps: \(appsText)", "reproduce: bgtask simulate \(CommandLineValue.shellWord(options.scenario))\(options.apps.map { " --app \(CommandLineValue.shellWord($0))" }.joined()) --days \(options.days) --seed \(result.seed)"]
            )
            try ReportDestination.write(HTMLReport.render(report), to: path)
            output = "energy report written to \(path)\n"
        }
        if options.json {
            return String(decoding: result.traceJSON(), as: UTF8.self) + "\n"
        }
        var text = "bgtask simulate: \(scenario.name.excerpt(scalars: 120)), \(CountText.counted(options.days, "day")), seed \(result.seed), \(appsText)\n\n"
        text += Timeline(trace: result.trace, start: result.start).render() + "\n\n"
        text += result.summary() + "\n"
        text += "\nsimulated \(options.days * 24) h in \(elapsed.formatted(.units(allowed: [.milliseconds], width: .abbreviated)))\n"
        return text + output
    }
}
