import BackgroundTasks
@testable import BackgroundTasksTesting
import Foundation
import SchedulerCore
import Testing

/// A modelled feed reader on a modelled device: the real engine and policies in virtual
/// time, with handlers that resubmit, work for their duration and complete.
@Suite("Modelled device") struct ModelledDeviceTests {
    static let reader = ModelledApp.feedReader()
    static let refresh = "com.example.feedreader.refresh"
    static let cleanup = "com.example.feedreader.cleanup"

    /// `days` of the commuter scenario from the default start, drawn from `seed`.
    static func commuter(days: Int = 3, seed: UInt64 = 1) throws -> ScenarioScript {
        try #require(Scenario.builtIn(named: "commuter")).script(start: Simulation.defaultStart, days: days, seed: seed)
    }

    /// `apps` played through `script` to its end (nothing read from this machine's environment).
    static func play(_ script: ScenarioScript, apps: [ModelledApp] = [reader], recordsTrace: Bool = true) -> ModelledDevice {
        var device = ModelledDevice(apps: apps, script: script, options: .init(configuration: .simulation(environment: [:]), recordsTrace: recordsTrace))
        device.run(until: script.end)
        return device
    }

    /// The modelled task of `identifier` in the feed reader.
    static func task(_ identifier: String) throws -> ModelledTask {
        try #require(reader.tasks.first { $0.identifier == identifier })
    }

    /// The instants at which a handler was launched, in order.
    static func launchInstants(_ trace: [SchedulerTraceEvent]) -> [Date] {
        trace.compactMap { event in
            guard case .launched(let record, _, _) = event else { return nil }
            return record.startedAt
        }
    }

    // MARK: When tasks run

    @Test(arguments: [refresh, cleanup])
    func everyRunStartsAtLeastItsIntervalAfterThePrevious(identifier: String) throws {
        let task = try Self.task(identifier)
        let device = Self.play(try Self.commuter())
        let starts = device.runs.filter { $0.identifier == identifier }.map(\.startedAt).sorted()
        #expect(starts.count >= (identifier == Self.refresh ? 20 : 2), "\(starts.count) runs of \(identifier) in 3 days")
        for (earlier, later) in zip(starts, starts.dropFirst()) {
            #expect(later.timeIntervalSince(earlier) >= task.interval - 0.001, "\(identifier) ran at \(earlier) then at \(later), closer than \(task.interval) s")
        }
    }

    @Test func refreshesNeverStartWhileTheScriptIsOffline() throws {
        let script = try Self.commuter()
        // The commuter is offline on the way to work and back: the test means something.
        #expect(script.changes.contains { !$0.conditions.networkAvailable })
        let device = Self.play(script)
        let refreshes = device.runs.filter { $0.identifier == Self.refresh }
        #expect(refreshes.count >= 20)
        for run in refreshes {
            #expect(script.conditions(at: run.startedAt).networkAvailable, "refresh started offline at \(run.startedAt)")
        }
    }

    @Test func cleanUpRunsOnlyOnExternalPower() throws {
        let script = try Self.commuter()
        #expect(script.changes.contains { !$0.conditions.externalPower })
        let cleanups = Self.play(script).runs.filter { $0.identifier == Self.cleanup }
        #expect(cleanups.count >= 2)
        for run in cleanups {
            #expect(script.conditions(at: run.startedAt).externalPower, "clean-up started on battery at \(run.startedAt)")
            #expect(run.request.requiresExternalPower)
        }
    }

    // MARK: The seeded first request

    /// The earliest begin date of the first request each task submitted, by identifier.
    static func firstRequests(_ trace: [SchedulerTraceEvent]) -> [String: Date] {
        var first: [String: Date] = [:]
        for case .submitted(let request, _) in trace where first[request.identifier] == nil {
            first[request.identifier] = request.earliestBeginDate
        }
        return first
    }

    @Test func theFirstRequestIsASeededPointWithinItsFirstInterval() throws {
        var script = try Self.commuter(days: 1)
        let one = Self.play(script)
        let again = Self.play(script)
        script.seed = 2  // the same conditions and sessions: only the device's own draws change
        let two = Self.play(script)

        let firstOne = Self.firstRequests(one.trace)
        #expect(firstOne.count == 2)
        for task in Self.reader.tasks {
            let first = try #require(firstOne[task.identifier])
            #expect(first >= script.start && first < script.start.addingTimeInterval(task.interval), "\(task.identifier): \(first)")
        }
        #expect(Self.firstRequests(again.trace) == firstOne)
        #expect(Self.firstRequests(two.trace) != firstOne)

        let firstRun = { (device: ModelledDevice) in device.runs.first { $0.identifier == Self.refresh }?.startedAt }
        #expect(firstRun(one) != nil)
        #expect(firstRun(again) == firstRun(one))
        #expect(firstRun(two) != firstRun(one), "seeds 1 and 2 both first ran at \(String(describing: firstRun(one)))")
    }

    // MARK: What the device records

    @Test func wakeupsCountTheDistinctInstantsAtWhichRunsStarted() throws {
        // Three readers: when the network returns, their waiting refreshes start together.
        let readers = [Self.reader, .feedReader(app: AppID("com.example.second")), .feedReader(app: AppID("com.example.third"))]
        let device = Self.play(try Self.commuter(), apps: readers)
        let instants = Self.launchInstants(device.trace)
        #expect(instants.count >= 60)
        #expect(Set(instants).count < instants.count, "no two runs started together: the test shows nothing")
        #expect(device.wakeups == Set(instants).count)
        // Every finished run's start is one of them.
        #expect(Set(device.runs.map(\.startedAt)).isSubset(of: Set(instants)))
    }

    @Test func eachRunCostsItsDurationTimesItsShareOfACore() throws {
        let device = Self.play(try Self.commuter())
        let energy = EnergyModel()
        #expect(device.runs.contains { $0.identifier == Self.cleanup })
        for run in device.runs {
            let share = try Self.task(run.identifier).cpuShare
            let duration = try #require(run.duration)
            #expect(duration > 0)
            let cpu = try #require(run.cpuTime)
            #expect(abs(cpu - duration * share) < 1e-9, "\(run.identifier): \(cpu) CPU s for \(duration) s")
            let joules = try #require(run.energyJoules)
            #expect(abs(joules - energy.estimate(cpuTime: duration * share, wallTime: duration)) < 1e-9)
            var unmeasured = run
            unmeasured.cpuTime = nil
            unmeasured.energyJoules = nil
            #expect(CostModel(cpuShare: share).measured(unmeasured, energy: energy) == run)
        }
        // A clean-up (0.8 of a core for minutes) costs more than a refresh (0.3 for seconds).
        let meanJoules = { (identifier: String) in
            let runs = device.runs.filter { $0.identifier == identifier }
            return runs.reduce(0) { $0 + ($1.energyJoules ?? 0) } / Double(max(1, runs.count))
        }
        #expect(meanJoules(Self.cleanup) > 10 * meanJoules(Self.refresh))
    }

    @Test(arguments: [true, false])
    func overlappingSessionsAreOneLaunch(recordsTrace: Bool) throws {
        // The reader from 08:00 for two hours; every app at 08:30 inside it; the reader
        // again at 09:50 until 10:10, past the first session's end; then alone at 12:00.
        let script = Scenario(name: "overlapping", days: [.init(
            network: [.init(from: 0, to: 1440)],
            launches: [.init(at: 480, minutes: 120, app: Self.reader.app.rawValue), .init(at: 510, minutes: 5),
                       .init(at: 590, minutes: 20, app: Self.reader.app.rawValue), .init(at: 720, minutes: 5)]
        )]).script(start: Simulation.defaultStart, days: 1)
        let device = Self.play(script, recordsTrace: recordsTrace)
        let start = Simulation.defaultStart
        #expect(device.launches.map { $0.at.timeIntervalSince(start) } == [480 * 60, 720 * 60] as [TimeInterval])
        guard recordsTrace else { return }
        let moves = device.trace.compactMap { event -> String? in
            guard case .lifecycle(_, let from, let to, let at) = event else { return nil }
            return "\(from)->\(to) \(Int(at.timeIntervalSince(start)) / 60)"
        }
        #expect(moves == ["background->active 480", "active->background 610", "background->active 720", "active->background 725"])
        #expect(SimulationResult(trace: device.trace, scenario: "overlapping", seed: 1, start: start, end: script.end).launches.count == 2)
    }

    @Test func overlappingSessionsInTheHistoryAreOneForeground() throws {
        let start = Simulation.defaultStart
        let script = Scenario(name: "quiet", days: [.init(network: [.init(from: 0, to: 1440)])]).script(start: start, days: 1)
        func at(_ minutes: Double) -> Date { start.addingTimeInterval((minutes - 1440) * 60) }  // the day before
        let history: [ScenarioScript.ForegroundSession] = [
            .init(app: nil, start: at(480), end: at(600)),                                  // opens
            .init(app: Self.reader.app.rawValue, start: at(500), end: at(620)),              // inside it
            .init(app: Self.reader.app.rawValue, start: at(610), end: at(615)),              // inside the second
            .init(app: Self.reader.app.rawValue, start: at(700), end: at(705)),              // opens again
        ]
        let device = ModelledDevice(apps: [Self.reader], script: script, options: .init(configuration: .simulation(environment: [:])), history: history)
        #expect(device.foregroundsLearned(by: Self.reader.app) == 2)
    }

    @Test func withoutATraceTheRunsAreTheSame() throws {
        let script = try Self.commuter()
        let traced = Self.play(script, recordsTrace: true)
        let untraced = Self.play(script, recordsTrace: false)
        #expect(untraced.trace.isEmpty)
        #expect(traced.trace.count > 100)
        #expect(untraced.runs.count >= 20)
        #expect(untraced.runs == traced.runs)
        #expect(untraced.launches == traced.launches)
        #expect(untraced.wakeups == traced.wakeups)
    }

    @Test func aRunLongerThanItsBudgetIsExpiredAndCompletedUnsuccessfully() throws {
        let app = AppID("com.example.slow")
        let identifier = "com.example.slow.refresh"
        let slow = ModelledTask(identifier: identifier, kind: .appRefresh, interval: 3600, duration: 100, durationJitter: 0)
        let manifest = AppManifest(appID: app, permittedIdentifiers: [identifier], backgroundModes: ["fetch"])
        let device = Self.play(try Self.commuter(days: 1), apps: [ModelledApp(app: app, manifest: manifest, tasks: [slow])])
        let runs = device.runs
        #expect(runs.count >= 2)
        for run in runs {
            #expect(run.outcome == .expired, "\(run.startedAt): \(String(describing: run.outcome))")
            #expect(run.success == false)
            // Stopped at the 30 s budget, not after its 100 s of work.
            let duration = try #require(run.duration)
            #expect(abs(duration - 30) < 0.001, "ran \(duration) s")
        }
        let expirations = device.trace.filter { if case .expired = $0 { true } else { false } }
        #expect(expirations.count == runs.count)
    }

    // MARK: Apps modelled from manifests

    struct ManifestCase: Sendable, CustomTestStringConvertible {
        var name: String
        var appID: AppID?
        var identifiers: [String]
        var modes: Set<String>
        /// Each identifier modelled and its kind; `nil` when no app is modelled.
        var expected: [String: TaskKind]?
        var testDescription: String { name }
    }

    static let manifestCases: [ManifestCase] = [
        .init(name: "fetch only: refreshes", appID: AppID("com.example.a"), identifiers: ["com.example.a.sync", "com.example.a.cleanup"], modes: ["fetch"],
              expected: ["com.example.a.sync": .appRefresh, "com.example.a.cleanup": .appRefresh]),
        .init(name: "processing only: processing", appID: AppID("com.example.a"), identifiers: ["com.example.a.refresh", "com.example.a.index"], modes: ["processing"],
              expected: ["com.example.a.refresh": .processing, "com.example.a.index": .processing]),
        .init(name: "both: by name", appID: AppID("com.example.a"), identifiers: ["com.example.a.Refresh", "com.example.a.fetchNews", "com.example.a.index"], modes: ["fetch", "processing", "audio"],
              expected: ["com.example.a.Refresh": .appRefresh, "com.example.a.fetchNews": .appRefresh, "com.example.a.index": .processing]),
        .init(name: "both: the app's own prefix does not count", appID: AppID("com.fetchly.app"), identifiers: ["com.fetchly.app.sync", "com.fetchly.app.refresh"], modes: ["fetch", "processing"],
              expected: ["com.fetchly.app.sync": .processing, "com.fetchly.app.refresh": .appRefresh]),
        .init(name: "wildcards skipped", appID: AppID("com.example.a"), identifiers: ["com.example.a.export.*", "com.example.a.refresh"], modes: ["fetch", "processing"],
              expected: ["com.example.a.refresh": .appRefresh]),
        .init(name: "only wildcards: nil", appID: AppID("com.example.a"), identifiers: ["com.example.a.export.*"], modes: ["fetch", "processing"], expected: nil),
        .init(name: "no background mode: nil", appID: AppID("com.example.a"), identifiers: ["com.example.a.refresh"], modes: ["audio"], expected: nil),
        .init(name: "no app identifier: nil", appID: nil, identifiers: ["com.example.a.refresh"], modes: ["fetch"], expected: nil),
    ]

    @Test(arguments: manifestCases)
    func appsAreModelledFromTheirManifests(_ example: ManifestCase) throws {
        let manifest = AppManifest(appID: example.appID, permittedIdentifiers: example.identifiers, backgroundModes: example.modes)
        let modelled = ModelledApp(manifest: manifest)
        guard let expected = example.expected else {
            #expect(modelled == nil)
            return
        }
        let app = try #require(modelled)
        #expect(app.app == example.appID)
        #expect(app.manifest == manifest)
        // In manifest order, each with the documented defaults of its kind.
        #expect(app.tasks.map(\.identifier) == example.identifiers.filter { expected[$0] != nil })
        for task in app.tasks {
            #expect(task.kind == expected[task.identifier])
            #expect(task == (task.kind == .appRefresh ? ModelledTask.refresh(task.identifier) : ModelledTask.processing(task.identifier)))
        }
    }
}
