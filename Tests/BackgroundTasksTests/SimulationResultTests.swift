@testable import BackgroundTasksTesting
import BackgroundTasks
import Foundation
import SchedulerCore
import Testing

/// What a simulation's result says about runs it is handed, the trace's timestamps, the
/// shared outage laid over a script, the cost model, and how a simulated device plays a
/// script's sessions.
@Suite("Simulation result") struct SimulationResultTests {
    static let otherApp = AppID("com.example.other")

    /// `seconds` after `testStart`.
    static func at(_ seconds: TimeInterval) -> Date { testStart.addingTimeInterval(seconds) }

    /// A finished run of `identifier` from `start` for `duration` seconds (`nil` outcome: in progress).
    static func run(
        _ id: Int64, _ identifier: String = refreshID, app: AppID = testApp, kind: TaskKind = .appRefresh,
        start: TimeInterval, duration: TimeInterval = 10, outcome: RunOutcome? = .success, cpu: Double? = nil, joules: Double? = nil
    ) -> RunRecord {
        RunRecord(
            id: RunID(id),
            request: PendingRequest(app: app, identifier: identifier, kind: kind, submittedAt: at(start - 60)),
            startedAt: at(start),
            endedAt: outcome == nil ? nil : at(start + duration),
            outcome: outcome,
            success: outcome.map { $0 == .success },
            cpuTime: cpu,
            energyJoules: joules
        )
    }

    static func result(runs: [RunRecord], launches: [AppLaunch] = [], wakeups: Int = 0, days: Double = 1) -> SimulationResult {
        SimulationResult(scenario: "synthetic", seed: 9, start: testStart, end: at(days * 86_400), runs: runs, launches: launches, wakeups: wakeups, trace: [], bands: [])
    }

    // MARK: Staleness

    @Test func stalenessIsTheAgeOfTheLastSuccessfulRefreshAtEachLaunch() {
        let runs = [
            Self.run(1, start: 200, duration: 10),  // ends at 210: the only one that counts before 1000
            Self.run(2, start: 300, outcome: .failure),
            Self.run(3, start: 400, outcome: .expired),
            Self.run(4, processingID, kind: .processing, start: 500),
            Self.run(5, app: Self.otherApp, start: 600),  // another app's refresh
            Self.run(6, start: 2_000, duration: 30),  // ends at 2030
        ]
        let launches = [
            AppLaunch(app: testApp, at: Self.at(100)),  // before any refresh
            AppLaunch(app: testApp, at: Self.at(205)),  // while the first refresh runs: not ended yet
            AppLaunch(app: testApp, at: Self.at(210)),  // the instant it ends
            AppLaunch(app: testApp, at: Self.at(1_000)),
            AppLaunch(app: Self.otherApp, at: Self.at(1_000)),
            AppLaunch(app: testApp, at: Self.at(2_015)),  // the second refresh started but has not ended
            AppLaunch(app: testApp, at: Self.at(2_100)),
        ]
        let result = Self.result(runs: runs, launches: launches)
        let mine = result.staleness(of: testApp)
        #expect(mine.map(\.launch) == launches.filter { $0.app == testApp })
        #expect(mine.map(\.age) == [nil, nil, 0, 790, 1_805, 70])
        #expect(result.staleness(of: Self.otherApp).map(\.age) == [390])
        #expect(result.staleness(of: AppID("com.example.never")).isEmpty)
    }

    // MARK: Counting

    @Test func outcomesAreCountedPerTask() {
        let runs = [
            Self.run(1, start: 0), Self.run(2, start: 100), Self.run(3, start: 200, outcome: .failure),
            Self.run(4, start: 300, outcome: .expired), Self.run(5, processingID, kind: .processing, start: 400, outcome: .expired),
            Self.run(6, processingID, kind: .processing, start: 500, outcome: .terminated),
            Self.run(7, processingID, kind: .processing, start: 600, outcome: nil),  // no outcome: counted as a failure
        ]
        let result = Self.result(runs: runs)
        #expect(result.outcomes() == [.success: 2, .failure: 2, .expired: 2, .terminated: 1])
        #expect(result.outcomes(of: refreshID) == [.success: 2, .failure: 1, .expired: 1])
        #expect(result.outcomes(of: processingID) == [.expired: 1, .terminated: 1, .failure: 1])
        #expect(result.expirations() == 2)
        #expect(result.expirations(of: refreshID) == 1)
        #expect(result.terminations() == 1)
        #expect(result.terminations(of: refreshID) == 0)
        #expect(result.runs(of: processingID).map(\.id) == [RunID(5), RunID(6), RunID(7)])
        #expect(result.runs(app: Self.otherApp).isEmpty)
    }

    @Test(arguments: [(30, 3.0, 10.0), (9, 1.5, 6.0), (0, 7.0, 0.0)])
    func wakeupsPerDayDivideByTheSimulatedDays(wakeups: Int, days: Double, perDay: Double) {
        let result = Self.result(runs: [], wakeups: wakeups, days: days)
        #expect(result.days == days)
        #expect(abs(result.wakeupsPerDay - perDay) < 1e-9)
    }

    @Test func cpuAndJoulesAddUpPerTask() {
        let runs = [
            Self.run(1, start: 0, cpu: 1.5, joules: 4), Self.run(2, start: 100, cpu: nil, joules: nil),
            Self.run(3, processingID, kind: .processing, start: 200, cpu: 10, joules: 25.5),
        ]
        let result = Self.result(runs: runs)
        #expect(result.cpuSeconds() == 11.5)
        #expect(result.cpuSeconds(of: refreshID) == 1.5)
        #expect(result.joules() == 29.5)
        #expect(result.joules(of: processingID) == 25.5)
    }

    // MARK: Reports

    /// Runs in the order they ended: the long clean-up started first and ended last.
    static let reportRuns = [
        run(2, start: 1_000, duration: 5, cpu: 1, joules: 3),
        run(3, app: otherApp, start: 1_500, duration: 5, outcome: .failure, cpu: 1, joules: 2),
        run(4, start: 4_000, duration: 30, outcome: .expired, cpu: 2, joules: 5),
        run(1, processingID, kind: .processing, start: 500, duration: 4_000, outcome: .terminated, cpu: 100, joules: 300),
    ]

    @Test func theDeviceReportHasOneTaskPerAppAndIdentifierWithRunsInStartOrder() throws {
        let launches = [AppLaunch(app: Self.otherApp, at: Self.at(100)), AppLaunch(app: testApp, at: Self.at(2_000)), AppLaunch(app: testApp, at: Self.at(50))]
        let result = Self.result(runs: Self.reportRuns, launches: launches.sorted { $0.at < $1.at }, wakeups: 4)
        let report = result.deviceReport(title: "synthetic", notes: ["a note"])
        #expect(report.tasks.map { "\($0.app) \($0.identifier)" } == [
            "com.example.other \(refreshID)", "com.example.test \(processingID)", "com.example.test \(refreshID)",
        ])
        let refresh = try #require(report.tasks.last)
        #expect(refresh.runs.map(\.start) == [Self.at(1_000), Self.at(4_000)])
        #expect(refresh.runs.map(\.end) == [Self.at(1_005), Self.at(4_030)])
        #expect(refresh.runs.map(\.outcome) == ["success", "expired"])
        #expect(refresh.expirations == 1)
        #expect(refresh.terminations == 0)
        #expect(refresh.cpuSeconds == 3)
        #expect(refresh.joules == 8)
        let cleanup = report.tasks[1]
        #expect(cleanup.terminations == 1)
        #expect(cleanup.joules == 300)
        // Launch markers in time order, each with its data's age.
        #expect(report.launches == [
            DeviceReport.Launch(app: testApp.rawValue, at: Self.at(50), staleness: nil),
            DeviceReport.Launch(app: Self.otherApp.rawValue, at: Self.at(100), staleness: nil),
            DeviceReport.Launch(app: testApp.rawValue, at: Self.at(2_000), staleness: 995),
        ])
        #expect(report.wakeups == 4)
        #expect(report.seed == 9)
        #expect(report.scenario == "synthetic")
        #expect(report.notes == ["a note"])
    }

    @Test func theSummaryHasALinePerTaskThenWakeupsThenStaleness() {
        let launches = [AppLaunch(app: testApp, at: Self.at(50)), AppLaunch(app: testApp, at: Self.at(2_000)), AppLaunch(app: Self.otherApp, at: Self.at(3_000))]
        let summary = Self.result(runs: Self.reportRuns, launches: launches, wakeups: 4, days: 2).summary()
        #expect(summary.split(separator: "\n") == [
            "com.example.other/\(refreshID): 1 runs (1 failure), 1.0 CPU s, 2 J",
            "com.example.test/\(processingID): 1 runs (1 terminated), 100.0 CPU s, 300 J",
            "com.example.test/\(refreshID): 2 runs (1 expired, 1 success), 3.0 CPU s, 8 J",
            "wakeups: 4 (2.0 per day)",
            "com.example.other: 1 launches, none with refreshed data",
            "com.example.test: 2 launches; data age at launch median 17 min, p90 no content, max 17 min, 1 before any refresh",
        ])
    }

    // MARK: Trace timestamps

    static let timestamps: [(TimeInterval, String)] = [
        (0.0, "1970-01-01T00:00:00.000Z"),
        (1_795_996_800, "2026-11-30T00:00:00.000Z"),
        (1_709_164_800 + 86_399.25, "2024-02-29T23:59:59.250Z"),  // a leap day's last second
        (951_868_799, "2000-02-29T23:59:59.000Z"),  // 2000 is a leap year (divisible by 400)
        (4_107_542_400, "2100-03-01T00:00:00.000Z"),  // 2100 is not
        (0.0004, "1970-01-01T00:00:00.000Z"),
        (0.0006, "1970-01-01T00:00:00.001Z"),
        (59.9996, "1970-01-01T00:01:00.000Z"),  // rounds up into the next minute
        (1_795_996_800.1234, "2026-11-30T00:00:00.123Z"),
        (-0.5, "1969-12-31T23:59:59.500Z"),
    ]

    @Test(arguments: timestamps)
    func timestampsAreUTCWithMilliseconds(seconds: TimeInterval, expected: String) {
        #expect(TraceJSON.timestamp(Date(timeIntervalSince1970: seconds)) == expected)
    }

    // MARK: A shared outage over a script

    /// Two commuter days with the network down every day from 07:00 to 08:00 (the
    /// commuter's own gap at 07:30 and metered stretch at 07:50 fall inside).
    static func outage() throws -> (original: ScenarioScript, down: ScenarioScript) {
        let original = try #require(Scenario.builtIn(named: "commuter")).script(start: Simulation.defaultStart, days: 2, seed: 3)
        return (original, original.withNetworkDown(daily: 7 * 3600, to: 8 * 3600))
    }

    static func inWindow(_ instant: Date, of script: ScenarioScript) -> Bool {
        let seconds = instant.timeIntervalSince(script.start).truncatingRemainder(dividingBy: 86_400)
        return seconds >= 7 * 3600 && seconds < 8 * 3600
    }

    /// Every minute of the script, and every instant at which either script changes.
    static func samples(_ scripts: ScenarioScript...) -> [Date] {
        let first = scripts[0]
        let minutes = stride(from: 0, to: first.end.timeIntervalSince(first.start), by: 60).map { first.start.addingTimeInterval($0) }
        return (minutes + scripts.flatMap { $0.changes.map(\.at) }).sorted()
    }

    @Test func theNetworkIsDownInsideEachDaysWindowAndUntouchedOutside() throws {
        let (original, down) = try Self.outage()
        #expect(down.start == original.start && down.end == original.end && down.seed == original.seed)
        #expect(down.sessions == original.sessions)
        var offlineMinutes = 0
        for instant in Self.samples(original, down) {
            let before = original.conditions(at: instant)
            let after = down.conditions(at: instant)
            if Self.inWindow(instant, of: original) {
                var expected = before
                expected.networkAvailable = false
                expected.networkMetered = nil
                #expect(after == expected, "\(instant)")
                offlineMinutes += 1
            } else {
                #expect(after == before, "\(instant)")
            }
        }
        #expect(offlineMinutes >= 2 * 60)
        // The network was up at 07:00 on both days: the window changes something.
        #expect(original.conditions(at: original.start.addingTimeInterval(7 * 3600)).networkAvailable)
        #expect(original.conditions(at: original.start.addingTimeInterval(86_400 + 7 * 3600)).networkAvailable)
    }

    @Test func theChangesStayStrictlyIncreasingAndEachChangesSomething() throws {
        let (_, down) = try Self.outage()
        var previous = down.initialConditions
        var last = down.start
        for change in down.changes {
            #expect(change.at > last)
            #expect(change.at < down.end)
            #expect(change.conditions != previous, "a change at \(change.at) changes nothing")
            previous = change.conditions
            last = change.at
        }
        // Both ends of both windows are changes.
        for day in 0..<2 {
            for hour in [7, 8] {
                let instant = down.start.addingTimeInterval(Double(day) * 86_400 + Double(hour) * 3600)
                #expect(down.changes.contains { $0.at == instant }, "no change at \(instant)")
            }
        }
    }

    @Test func networkAndMeteredBandsAreCutOutOfTheWindow() throws {
        let (original, down) = try Self.outage()
        let cut = ["network", "metered"]
        #expect(down.bands.filter { !cut.contains($0.kind) } == original.bands.filter { !cut.contains($0.kind) })
        func covered(_ bands: [DeviceReport.Band], _ kind: String, _ instant: Date) -> Bool {
            bands.contains { $0.kind == kind && $0.from <= instant && instant < $0.to }
        }
        for kind in cut {
            // The commuter has both inside the window: the cut shows.
            #expect(Self.samples(original).contains { covered(original.bands, kind, $0) && Self.inWindow($0, of: original) }, "no \(kind) band in the window")
            for band in down.bands where band.kind == kind { #expect(band.from < band.to) }
            for instant in Self.samples(original) {
                let expected = covered(original.bands, kind, instant) && !Self.inWindow(instant, of: original)
                #expect(covered(down.bands, kind, instant) == expected, "\(kind) at \(instant)")
            }
        }
    }

    @Test func anEmptyWindowChangesNothing() throws {
        let (original, _) = try Self.outage()
        #expect(original.withNetworkDown(daily: 8 * 3600, to: 7 * 3600) == original)
        #expect(original.withNetworkDown(daily: 8 * 3600, to: 8 * 3600) == original)
    }

    @Test func aWindowFromMidnightStartsOffline() throws {
        let (original, _) = try Self.outage()
        let down = original.withNetworkDown(daily: 0, to: 3600)
        #expect(original.initialConditions.networkAvailable)
        #expect(!down.initialConditions.networkAvailable)
        #expect(down.conditions(at: original.start.addingTimeInterval(3600)) == original.conditions(at: original.start.addingTimeInterval(3600)))
        #expect(!down.conditions(at: original.start.addingTimeInterval(86_400)).networkAvailable)
    }

    // MARK: The cost model

    @Test(arguments: [(0.3, 0.3), (1.5, 1.0), (-0.2, 0.0), (0, 0), (1, 1)])
    func theShareOfACoreIsClamped(share: Double, expected: Double) {
        #expect(CostModel(cpuShare: share).share(of: refreshID) == expected)
    }

    @Test func sharesForAnIdentifierWin() {
        let costs = CostModel(cpuShare: 0.1, cpuShareByIdentifier: [processingID: 0.9, "com.example.hot": 4, "com.example.cold": -1])
        #expect(costs.share(of: refreshID) == 0.1)
        #expect(costs.share(of: processingID) == 0.9)
        #expect(costs.share(of: "com.example.hot") == 1)
        #expect(costs.share(of: "com.example.cold") == 0)
        let measured = costs.measured(Self.run(1, processingID, kind: .processing, start: 0, duration: 100), energy: EnergyModel(perCoreWatts: 2, baseWatts: 0.5))
        #expect(measured.cpuTime == 90)
        #expect(measured.energyJoules == 90 * 2 + 100 * 0.5 as Double)
        // A run without an end costs nothing.
        let running = costs.measured(Self.run(2, start: 0, outcome: nil), energy: EnergyModel())
        #expect(running.cpuTime == 0)
        #expect(running.energyJoules == 0)
    }

    // MARK: A simulated device playing a script

    /// One day: the network up until 10:00, the test app opened at 08:00 for 10 minutes,
    /// then every app at 12:00 for 5 minutes.
    static let sessionScript = Scenario(name: "sessions", days: [.init(
        network: [.init(from: 0, to: 600)],
        launches: [.init(at: 480, minutes: 10, app: testApp.rawValue), .init(at: 720, minutes: 5)]
    )]).script(start: testStart, days: 1)

    /// The lifecycle moves of the trace: (app, from, to, seconds after the start).
    static func lifecycle(_ trace: [SchedulerTraceEvent]) -> [String] {
        trace.compactMap { event in
            guard case .lifecycle(let app, let from, let to, let at) = event else { return nil }
            return "\(app) \(from)->\(to) \(Int(at.timeIntervalSince(testStart)))"
        }
    }

    static func playSessions(installsLaunchedByUser: Bool) async throws -> SimulatedDevice {
        let device = try SimulatedDevice(start: testStart, configuration: .simulation(environment: [:]), installsLaunchedByUser: installsLaunchedByUser)
        device.install(app: testApp, manifest: testManifest) {}
        device.install(app: otherApp, manifest: AppManifest(appID: otherApp, permittedIdentifiers: [], backgroundModes: [])) {}
        device.play(sessionScript)
        await device.run(until: sessionScript.end)
        return device
    }

    @Test func playingAScriptBringsItsAppsToTheForeground() async throws {
        let device = try await Self.playSessions(installsLaunchedByUser: false)
        // After the install, leaving out the moves from background to suspended.
        let moves = Self.lifecycle(device.trace).filter { !$0.hasSuffix(" 0") && !$0.contains("->suspended") }
        #expect(moves == [
            "com.example.test suspended->active 28800",
            "com.example.test active->background 29400",
            "com.example.other suspended->active 43200",
            "com.example.test suspended->active 43200",
            "com.example.other active->background 43500",
            "com.example.test active->background 43500",
        ])
        // The script's conditions were played too.
        #expect(device.trace.contains(.conditionsChanged(Self.sessionScript.conditions(at: Self.at(10 * 3600)), at: Self.at(10 * 3600))))
        #expect(!device.driver.conditions.networkAvailable)
    }

    @Test func overlappingSessionsKeepTheAppInTheForegroundUntilTheLastEnds() async throws {
        // The test app from 08:00 for two hours; every app at 08:30 for 5 minutes, inside it;
        // the test app again at 09:50 until 10:10, past the first session's end.
        let script = Scenario(name: "overlapping", days: [.init(
            network: [.init(from: 0, to: 1440)],
            launches: [.init(at: 480, minutes: 120, app: testApp.rawValue), .init(at: 510, minutes: 5), .init(at: 590, minutes: 20, app: testApp.rawValue)]
        )]).script(start: testStart, days: 1)
        let device = try SimulatedDevice(start: testStart, configuration: .simulation(environment: [:]))
        device.install(app: testApp, manifest: testManifest) {}
        device.install(app: Self.otherApp, manifest: AppManifest(appID: Self.otherApp, permittedIdentifiers: [], backgroundModes: [])) {}
        device.play(script)
        await device.run(until: script.end)
        let moves = Self.lifecycle(device.trace).filter { !$0.hasSuffix(" 0") && ($0.contains("->active") || $0.contains("active->background")) }
        #expect(moves == [
            "com.example.test suspended->active 28800",
            "com.example.other suspended->active 30600",
            "com.example.other active->background 30900",
            "com.example.test active->background 36600",
        ])
        let result = SimulationResult(trace: device.trace, scenario: "overlapping", seed: 1, start: testStart, end: script.end)
        #expect(result.launches.map { $0.app } == [testApp, Self.otherApp])
    }

    @Test func anAppInstalledDuringASessionForEveryAppIsNotSentBackAtItsEnd() async throws {
        // Every app from 08:00 to 10:00; the test app, installed at 08:30, opened 09:00-11:00.
        let script = Scenario(name: "late install", days: [.init(
            network: [.init(from: 0, to: 1440)],
            launches: [.init(at: 480, minutes: 120), .init(at: 540, minutes: 120, app: testApp.rawValue)]
        )]).script(start: testStart, days: 1)
        let device = try SimulatedDevice(start: testStart, configuration: .simulation(environment: [:]), installsLaunchedByUser: false)
        device.install(app: Self.otherApp, manifest: AppManifest(appID: Self.otherApp, permittedIdentifiers: [], backgroundModes: [])) {}
        device.play(script)
        await device.run(until: testStart.addingTimeInterval(510 * 60))
        device.install(app: testApp, manifest: testManifest) {}
        await device.run(until: script.end)
        let moves = Self.lifecycle(device.trace).filter { $0.contains("->active ") || $0.contains(" active->background") }
        #expect(moves == [
            "com.example.other suspended->active 28800",
            "com.example.test suspended->active 32400",
            "com.example.other active->background 36000",
            "com.example.test active->background 39600",
        ])
    }

    @Test(arguments: [false, true])
    func onlyTheScriptsSessionsCountAsLaunches(installsLaunchedByUser: Bool) async throws {
        let device = try await Self.playSessions(installsLaunchedByUser: installsLaunchedByUser)
        #expect(device.installsLaunchedByUser == installsLaunchedByUser)
        let foregroundAtInstall = Self.lifecycle(device.trace).filter { $0.hasSuffix("->active 0") }
        #expect(foregroundAtInstall == (installsLaunchedByUser ? ["com.example.test inactive->active 0", "com.example.other inactive->active 0"] : []))
        let result = SimulationResult(trace: device.trace, scenario: "sessions", seed: 1, start: testStart, end: Self.sessionScript.end)
        #expect(result.launches == [
            AppLaunch(app: testApp, at: Self.at(8 * 3600)),
            AppLaunch(app: Self.otherApp, at: Self.at(12 * 3600)),
            AppLaunch(app: testApp, at: Self.at(12 * 3600)),
        ])
    }
}
