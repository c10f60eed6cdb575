import BackgroundTasks
import Foundation
import SchedulerCore

/// What a simulation produced, and the questions tests ask of it: how often each task ran
/// and how its runs ended, how stale each app's data was when the user opened it, how
/// often the device woke, what the runs cost, and which verdicts let each run start.
///
/// ```swift
/// let week = Simulation(scenario: Scenario.builtIn(named: "commuter")!, days: 7, seed: 1)
/// let result = try await week.run { device in FeedReader.install(on: device) }
/// #expect(result.runs(of: FeedReader.refreshIdentifier).count <= 7 * 40)
/// #expect(result.expirations(of: FeedReader.refreshIdentifier) == 0)
/// let ages = result.staleness(of: AppID("com.example.feedreader")).compactMap(\.age)
/// ```
public struct SimulationResult: Sendable {
    /// The scenario's name.
    public var scenario: String
    /// The seed of every random choice.
    public var seed: UInt64
    /// The simulated span.
    public var start: Date
    /// The end of the simulated span.
    public var end: Date
    /// The finished runs, in the order they ended.
    public var runs: [RunRecord]
    /// The user's foreground sessions, in order.
    public var launches: [AppLaunch]
    /// Instants at which at least one run started.
    public var wakeups: Int
    /// Everything that happened, in order (empty when the simulation did not record it).
    public var trace: [SchedulerTraceEvent]
    /// The condition bands of the scenario, for reports.
    public var bands: [DeviceReport.Band]

    /// Creates a result.
    public init(scenario: String, seed: UInt64, start: Date, end: Date, runs: [RunRecord], launches: [AppLaunch], wakeups: Int, trace: [SchedulerTraceEvent], bands: [DeviceReport.Band]) {
        self.scenario = scenario
        self.seed = seed
        self.start = start
        self.end = end
        self.runs = runs
        self.launches = launches
        self.wakeups = wakeups
        self.trace = trace
        self.bands = bands
    }

    /// The result of a trace a ``SimulatedDevice`` recorded: runs, launches (the apps'
    /// returns from the background to the foreground) and wakeups are read from it.
    public init(trace: [SchedulerTraceEvent], scenario: String, seed: UInt64, start: Date, end: Date, bands: [DeviceReport.Band] = []) {
        var runs: [RunRecord] = []
        var launches: [AppLaunch] = []
        var wakeInstants: Set<Date> = []
        for event in trace {
            switch event {
            case .finished(let record): runs.append(record)
            case .launched(let record, _, _): wakeInstants.insert(record.startedAt)
            // Coming back from the background; the first launch at install is not the user's.
            case .lifecycle(let app, let from, let to, let at) where to == .active && (from == .background || from == .suspended):
                launches.append(AppLaunch(app: app, at: at))
            default: continue
            }
        }
        self.init(scenario: scenario, seed: seed, start: start, end: end, runs: runs, launches: launches, wakeups: wakeInstants.count, trace: trace, bands: bands)
    }

    // MARK: Runs

    /// The finished runs of `identifier` (every task when `nil`), of `app` (every app when `nil`).
    public func runs(of identifier: String? = nil, app: AppID? = nil) -> [RunRecord] {
        runs.filter { (identifier == nil || $0.identifier == identifier) && (app == nil || $0.app == app) }
    }

    /// How the runs of `identifier` (every task when `nil`) ended, counted by outcome.
    public func outcomes(of identifier: String? = nil) -> [RunOutcome: Int] {
        Dictionary(grouping: runs(of: identifier), by: { $0.outcome ?? .failure }).mapValues(\.count)
    }

    /// Runs of `identifier` (every task when `nil`) that ended in expiration.
    public func expirations(of identifier: String? = nil) -> Int { outcomes(of: identifier)[.expired] ?? 0 }

    /// Runs of `identifier` (every task when `nil`) that were terminated.
    public func terminations(of identifier: String? = nil) -> Int { outcomes(of: identifier)[.terminated] ?? 0 }

    /// Days simulated (fractional).
    public var days: Double { max(end.timeIntervalSince(start), 1) / 86_400 }

    /// Wakeups per simulated day.
    public var wakeupsPerDay: Double { Double(wakeups) / days }

    /// CPU seconds of the runs of `identifier` (every task when `nil`).
    public func cpuSeconds(of identifier: String? = nil) -> Double { runs(of: identifier).reduce(0) { $0 + ($1.cpuTime ?? 0) } }

    /// Estimated joules of the runs of `identifier` (every task when `nil`).
    public func joules(of identifier: String? = nil) -> Double { runs(of: identifier).reduce(0) { $0 + ($1.energyJoules ?? 0) } }

    /// The policies' judgement that let run `run` start (`nil` when it was not judged:
    /// simulated launches, continued processing, or no trace recorded).
    public func verdicts(of run: RunID) -> PolicyEvaluation? {
        for case .launched(let record, _, let evaluation) in trace where record.id == run { return evaluation }
        return nil
    }

    // MARK: Staleness

    /// How old an app's data was when the user opened it.
    public struct Staleness: Hashable, Sendable {
        /// The launch.
        public var launch: AppLaunch
        /// Seconds since the app's last successful refresh ended, `nil` when it never had one.
        public var age: TimeInterval?

        /// The `fraction` percentile (nearest rank, as ``EnergySummary/percentile(_:of:)``) of
        /// the launches' `ages` and `withoutContent` launches that found no content, which rank
        /// as older than any content: `nil` when the launch at the rank found none, or there
        /// was no launch (the summary, the comparison with timers).
        public static func percentile(_ fraction: Double, ages: [Double], withoutContent: Int) -> Double? {
            let ranked = ages + Array(repeating: Double.infinity, count: withoutContent)
            return EnergySummary.percentile(fraction, of: ranked).flatMap { $0.isFinite ? $0 : nil }
        }
    }

    /// The staleness of `app`'s data at each of its launches: the time since its last
    /// successful app-refresh run ended before the launch.
    public func staleness(of app: AppID) -> [Staleness] {
        let refreshes = runs.filter { $0.app == app && $0.request.kind == .appRefresh && $0.outcome == .success }
            .compactMap(\.endedAt).sorted()
        var index = 0
        var last: Date?
        return launches.filter { $0.app == app }.map { launch in
            while index < refreshes.count, refreshes[index] <= launch.at {
                last = refreshes[index]
                index += 1
            }
            return Staleness(launch: launch, age: last.map { launch.at.timeIntervalSince($0) })
        }
    }

    // MARK: Output

    /// The trace as deterministic JSON (see ``TraceJSON``).
    public func traceJSON() -> Data {
        TraceJSON.encode(trace, scenario: scenario, seed: seed, start: start, end: end)
    }

    /// The energy report of this simulation (see ``HTMLReport``).
    public func deviceReport(title: String, notes: [String] = []) -> DeviceReport {
        let keys = Set(runs.map(\.request.key)).sorted()
        let tasks = keys.map { key -> DeviceReport.Task in
            let mine = runs.filter { $0.request.key == key }.sorted { $0.startedAt < $1.startedAt }
            return DeviceReport.Task(
                app: key.app.rawValue,
                identifier: key.identifier,
                runs: mine.map { DeviceReport.Run(start: $0.startedAt, end: $0.endedAt ?? $0.startedAt, outcome: ($0.outcome ?? .failure).rawValue, stopReason: $0.stopReason) },
                expirations: mine.filter { $0.outcome == .expired }.count,
                terminations: mine.filter { $0.outcome == .terminated }.count,
                cpuSeconds: mine.reduce(0) { $0 + ($1.cpuTime ?? 0) },
                joules: mine.reduce(0) { $0 + ($1.energyJoules ?? 0) }
            )
        }
        let apps = Set(launches.map(\.app)).sorted()
        let launchMarkers = apps.flatMap { app in
            staleness(of: app).map { DeviceReport.Launch(app: app.rawValue, at: $0.launch.at, staleness: $0.age) }
        }.sorted { ($0.at, $0.app) < ($1.at, $1.app) }
        return DeviceReport(title: title, scenario: scenario, seed: seed, start: start, end: end, bands: bands, launches: launchMarkers, tasks: tasks, wakeups: wakeups, notes: notes)
    }

    /// A few lines per task: runs by outcome, expirations, CPU and energy; then wakeups and
    /// staleness at launch per app.
    public func summary() -> String {
        var lines: [String] = []
        for key in Set(runs.map(\.request.key)).sorted() {
            let mine = runs.filter { $0.request.key == key }
            let outcomes = Dictionary(grouping: mine, by: { $0.outcome ?? .failure }).map { "\($0.value.count) \($0.key)" }.sorted()
            let cpu = mine.reduce(0) { $0 + ($1.cpuTime ?? 0) }
            let joules = mine.reduce(0) { $0 + ($1.energyJoules ?? 0) }
            lines.append("\(key): \(mine.count) runs (\(outcomes.joined(separator: ", "))), " + String(format: "%.1f CPU s, %.0f J", cpu, joules))
        }
        lines.append(String(format: "wakeups: %d (%.1f per day)", wakeups, wakeupsPerDay))
        for app in Set(launches.map(\.app)).sorted() {
            let staleness = staleness(of: app)
            let ages = staleness.compactMap(\.age).sorted()
            let never = staleness.count - ages.count
            if ages.isEmpty {
                lines.append("\(app): \(never) launches, none with refreshed data")
            } else {
                let before = never > 0 ? ", \(never) before any refresh" : ""
                // A launch before any refresh ranks as the oldest, as in the comparison with
                // timers (docs/scenarios.md): a median that falls on one says so.
                func age(_ fraction: Double) -> String {
                    Staleness.percentile(fraction, ages: ages, withoutContent: never).map(DurationText.spoken) ?? "no content"
                }
                lines.append("\(app): \(ages.count + never) launches; data age at launch median \(age(0.5)), p90 \(age(0.9)), max \(DurationText.spoken(ages.last ?? 0))\(before)")
            }
        }
        return lines.joined(separator: "\n")
    }
}
