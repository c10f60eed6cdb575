import BackgroundTasks
import Foundation
import SchedulerCore

/// One simulation: a scenario, a number of days, a seed, and the apps, with real handler
/// code (``run(installing:)``) or modelled (``run(modelled:)``).
///
/// ```swift
/// let simulation = Simulation(scenario: Scenario.builtIn(named: "commuter")!, days: 7)
/// let result = try await simulation.run { device in
///     device.install(app: FeedReader.manifest.appID!, manifest: FeedReader.manifest) { reader.didFinishLaunching() }
/// }
/// #expect((40...60).contains(result.runs(of: FeedReader.refreshIdentifier).count))
/// ```
public struct Simulation: Sendable {
    /// The scenario played.
    public var scenario: Scenario
    /// Days simulated.
    public var days: Int
    /// The seed of every random choice (the scenario's own when `nil`).
    public var seed: UInt64?
    /// The first simulated instant: a midnight (UTC). Fixed by default so that traces do not
    /// depend on the day they are made.
    public var start: Date
    /// The engine's tunables.
    public var configuration: SchedulerConfiguration
    /// The policies.
    public var policies: PolicySet
    /// What runs cost (real apps; modelled tasks carry their own CPU share).
    public var costs: CostModel

    /// 2026-11-30 00:00 UTC, a Monday: the default start, so that a scenario whose
    /// pattern is five weekdays then a weekend lines up with the calendar the usage model
    /// learns by.
    public static let defaultStart = Date(timeIntervalSince1970: 1_795_996_800)

    /// Creates a simulation.
    public init(
        scenario: Scenario,
        days: Int,
        seed: UInt64? = nil,
        start: Date = Simulation.defaultStart,
        configuration: SchedulerConfiguration = .simulation(),
        policies: PolicySet = PolicySet(),
        costs: CostModel = .init()
    ) {
        self.scenario = scenario
        self.days = days
        self.seed = seed
        self.start = start
        self.configuration = configuration
        self.policies = policies
        self.costs = costs
    }

    /// The most days one simulation plays (ten years): its script and trace are kept in
    /// memory (docs/scenarios.md, "How long a simulation may be").
    public static let maximumDays = 3_660

    /// Why ``days`` cannot be played, or `nil`.
    var daysProblem: SimulationError? {
        (1...Self.maximumDays).contains(days) ? nil
            : SimulationError("Simulation(days: \(days)): a simulation plays 1 to \(Self.maximumDays) days (its script and trace are kept in memory)")
    }

    /// The concrete script: the scenario's days from ``start`` with the seed applied.
    public var script: ScenarioScript { scenario.script(start: start, days: days, seed: seed) }

    /// Runs real apps: `install` installs them on a fresh ``SimulatedDevice`` (launched
    /// into the background: the scenario alone says when the user opens them); then the
    /// script plays for ``days`` days. `progress`, when given, is told the number of days
    /// played after each one (for a progress bar on a long run; the result is the same).
    /// - Throws: ``SimulationError`` when ``days`` is not 1 to ``maximumDays``; what
    ///   `install` throws.
    public func run(installing install: (SimulatedDevice) throws -> Void, progress: ((Int) -> Void)? = nil) async throws -> SimulationResult {
        if let daysProblem { throw daysProblem }
        let script = self.script
        let configuration = self.configuration.salted(by: script.seed)
        let device = try SimulatedDevice(start: start, configuration: configuration, conditions: script.initialConditions, policies: policies, costs: costs, installsLaunchedByUser: false)
        do {
            try install(device)
        } catch {
            await device.shutDown()  // apps installed before the failure must not keep it alive
            throw error
        }
        device.play(script)
        if let progress {
            for day in 1...max(1, days) {
                await device.run(until: min(script.end, script.start.addingTimeInterval(TimeInterval(day) * 86_400)))
                progress(day)
            }
        }
        await device.run(until: script.end)
        let result = SimulationResult(trace: device.trace, scenario: scenario.name, seed: script.seed, start: script.start, end: script.end, bands: script.bands)
        await device.shutDown()  // app code holding the device must not keep it alive
        return result
    }

    /// Runs modelled apps on a ``ModelledDevice``. `progress`, when given, is told the
    /// number of days played after each one (for a progress bar on a long run; the result
    /// is the same).
    /// - Throws: ``SimulationError`` when ``days`` is not 1 to ``maximumDays``.
    public func run(modelled apps: [ModelledApp], recordsTrace: Bool = true, progress: ((Int) -> Void)? = nil) throws(SimulationError) -> SimulationResult {
        if let daysProblem { throw daysProblem }
        let script = self.script
        var device = ModelledDevice(apps: apps, script: script, options: .init(configuration: configuration, policies: policies, recordsTrace: recordsTrace))
        if let progress {
            for day in 1...max(1, days) {
                device.run(until: min(script.end, script.start.addingTimeInterval(TimeInterval(day) * 86_400)))
                progress(day)
            }
        }
        device.run(until: script.end)
        return SimulationResult(
            scenario: scenario.name, seed: script.seed, start: script.start, end: script.end,
            runs: device.runs, launches: device.launches, wakeups: device.wakeups, trace: device.trace, bands: script.bands
        )
    }
}

/// Why a simulation cannot be played, in words.
public struct SimulationError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What is wrong, naming the value.
    public var message: String
    /// An error saying `message`.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
