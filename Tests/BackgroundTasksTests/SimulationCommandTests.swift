@testable import bgtask
import BackgroundTasks
import BackgroundTasksTesting
import FeedReaderExample
import Foundation
import Synchronization
import SchedulerCore
import Testing

/// `bgtask simulate` and `bgtask fleet`: their options, their errors, and what they print.
@Suite("Simulation commands") struct SimulationCommandTests {
    static let newsApp = "com.example.news"

    /// A fresh directory of its own; the caller removes it.
    static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-simulation-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Writes `text` to `name` in `directory` and returns its path.
    static func write(_ text: String, to name: String, in directory: URL) throws -> String {
        let file = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: file)
        return file.path
    }

    /// A JSON manifest of a news app with a refresh and a clean-up.
    static let newsManifest = """
        {"CFBundleIdentifier": "\(newsApp)",
         "BGTaskSchedulerPermittedIdentifiers": ["\(newsApp).refresh", "\(newsApp).cleanup", "\(newsApp).export.*"],
         "UIBackgroundModes": ["fetch", "processing"]}
        """

    /// The usage error parsing `arguments` gives, or `nil` (recorded) when they parse.
    static func usageError<Options>(_ parse: ([String]) -> Result<Options, UsageError>, _ arguments: [String]) -> UsageError? {
        guard case .failure(let error) = parse(arguments) else {
            Issue.record("\(arguments) should be a usage error")
            return nil
        }
        return error
    }

    /// The arguments of the "reproduce: bgtask ..." note of the HTML report at `path`, split
    /// on spaces as a shell would.
    static func reproduceArguments(inReport path: String) throws -> [String] {
        let html = try String(contentsOfFile: path, encoding: .utf8)
        let start = try #require(html.range(of: "<li>reproduce: bgtask "))
        let end = try #require(html[start.upperBound...].range(of: "</li>"))
        return html[start.upperBound..<end.lowerBound].split(separator: " ").map(String.init)
    }

    // MARK: simulate: options

    @Test func simulateDefaultsToAWeekOfTheExampleApp() {
        #expect(SimulateCommand.parse(["commuter"]) == .success(.init(scenario: "commuter", apps: ["feedreader"], days: 7)))
        #expect(CommandLineParser.parse(["simulate", "office", "--days", "2", "--seed", "18446744073709551615", "--json", "--app", "a.json", "--app", "b.json", "--report", "r.html"])
            == .success(.simulate(.init(scenario: "office", apps: ["a.json", "b.json"], days: 2, seed: .max, json: true, report: "r.html"))))
        #expect(SimulateCommand.parse(["--help"]) == .success(.init(scenario: "", help: true)))
    }

    /// A scenario dense with events keeps a large trace for every simulated day (one that
    /// opened an app every minute grew by 12 MB a day): how much a run plays is bounded
    /// before it starts, naming --days, the limit, why, and the most days that fit.
    @Test func aRunOfTooManyScenarioEventsIsRefusedUpFront() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A launch every minute and the network toggled every other: 4,320 events a day.
        func clock(_ minute: Int) -> String { minute >= 1440 ? "24:00" : String(format: "%02d:%02d", minute / 60, minute % 60) }
        let launches = stride(from: 0, to: 1440, by: 1).map { "{\"at\": \"\(clock($0))\", \"minutes\": 0.5}" }
        let network = stride(from: 0, to: 1440, by: 2).map { "{\"from\": \"\(clock($0))\", \"to\": \"\(clock($0 + 1))\"}" }
        let dense = try Self.write("""
            {"version": 1, "name": "dense", "days": [{"network": [\(network.joined(separator: ","))], "launches": [\(launches.joined(separator: ","))]}]}
            """, to: "dense.json", in: directory)
        let fits = SimulateCommand.maximumScenarioEvents / 4_320
        #expect(fits == 57)
        let error = try #require(Self.usageError(SimulateCommand.parse, [dense, "--days", "3660"]))
        #expect(error.message == "--days 3660 plays 15811200 scenario events (about 4320 a day: each interval and launch of \(dense) starts and ends), more than the 250000 one simulation may play, since its trace of every event is kept in memory; simulate at most 57 days")
        #expect((try? SimulateCommand.parse([dense, "--days", "\(fits)"]).get()) != nil)
        #expect(Self.usageError(SimulateCommand.parse, [dense, "--days", "\(fits + 1)"])?.message.hasSuffix("simulate at most 57 days") == true)
        // Each modelled app plays every event again; each compared seed too.
        let manifest = try Self.write(Self.newsManifest, to: "news.json", in: directory)
        #expect(Self.usageError(SimulateCommand.parse, [dense, "--days", "\(fits)", "--app", manifest, "--app", "other.json"])?.message
            .contains("(about 4320 a day for each of 2 apps:") == true)
        let compared = try #require(Self.usageError(SimulateCommand.parse, [dense, "--compare-baselines", "--days", "20", "--seeds", "1-5"]))
        #expect(compared.message.contains("--days 20 plays 432000 scenario events (about 4320 a day for each of 5 seeds:"), "\(compared.message)")
        #expect(compared.message.contains("one comparison may play, since it plays each seed's simulation up to 16 times") && compared.message.hasSuffix("compare at most 11 days"), "\(compared.message)")
        // When no number of days fits that many seeds, fewer seeds may.
        let seeded = try #require(Self.usageError(SimulateCommand.parse, [dense, "--compare-baselines", "--days", "20", "--seeds", "1-100"]))
        #expect(seeded.message.hasSuffix("compare at most 2 seeds over 20 days"), "\(seeded.message)")
        // A comparison's seed-days are bounded as a simulation's app-days are.
        #expect(Self.usageError(SimulateCommand.parse, ["commuter", "--compare-baselines", "--days", "100", "--seeds", "1-100"])?.message
            == "--days 100 with 100 seeds is more than the 3660 seed-days one comparison plays (it plays each seed's simulation up to 16 times); compare fewer days or seeds")
        // A file that is no scenario is not judged here: running it says what is wrong.
        #expect((try? SimulateCommand.parse([directory.appendingPathComponent("news.json").path, "--days", "3660"]).get()) != nil)
    }

    /// The bound leaves ten years of every built-in scenario and of every life in
    /// docs/lives, as before it (the busiest, heavy-user, holds 67 events a day).
    @Test func tenYearsOfEveryShippedScenarioAndLifeStillFit() throws {
        let lives = BaselineComparisonTests.lifeFiles.map(\.path)
        #expect(lives.count >= 13)
        for scenario in Scenario.builtInNames + lives {
            #expect((try? SimulateCommand.parse([scenario, "--days", "\(SimulateCommand.maximumDays)"]).get()) != nil, "\(scenario)")
        }
    }

    @Test(arguments: [
        (["commuter", "--days", "0"], "--days must be a whole number from 1 to 3660, got '0'"),
        (["commuter", "--days", "4000"], "got '4000'"),
        (["commuter", "--days", "2000", "--app", "a.json", "--app", "b.json"], "--days 2000 with 2 apps is more than the 3660 app-days"),
        (["commuter", "--days", "x"], "got 'x'"),
        (["commuter", "--days"], "--days needs a number"),
        (["commuter", "--seed", "-1"], "--seed must be a whole number from 0 to 18446744073709551615, got '-1'"),
        (["commuter", "--seed", "x"], "got 'x'"),
        (["commuter", "--report", "--json"], "--report needs a file path, got the option '--json'"),
        ([], "simulate needs a scenario: commuter, office, night-charger, always-plugged-server, travel"),
        (["commuter", "office"], "simulate takes one scenario, got 'commuter' 'office'"),
        (["commuter", "--fast"], "unknown option for simulate: '--fast'"),
        (["commuter", "-x"], "'-x'"),
        (["commuter", "--app", "feedreader", "--app", "m.json"], "--app feedreader (real handlers) cannot be combined with modelled apps"),
        (["commuter", "--app", "feedreader", "--app", "feedreader"], "--app feedreader given more than once"),
        (["commuter", "--app", "m.json", "--app", "n.json", "--app", "m.json"], "--app m.json given more than once"),
    ])
    func simulateUsageErrorsNameTheCulprit(arguments: [String], message: String) throws {
        let error = try #require(Self.usageError(SimulateCommand.parse, arguments))
        #expect(error.message.contains(message), "\(error.message)")
    }

    @Test func doubleDashEndsTheOptionsOfSimulate() throws {
        // After `--`, `--days` is the scenario (a file of that name; the probe could reach
        // one only as ./--days): looked up as one, not read as the option.
        let error = try #require(Self.usageError(SimulateCommand.parse, ["--json", "--", "--days"]))
        #expect(error.message.hasPrefix("simulate: '--days' is neither a built-in scenario"), "\(error.message)")
        let parsed = try SimulateCommand.parse(["--json", "--", "commuter"]).get()
        #expect(parsed.scenario == "commuter" && parsed.json)
        #expect(Self.usageError(SimulateCommand.parse, ["--", "commuter", "office"])?.message.contains("simulate takes one scenario") == true)
    }

    // MARK: simulate: scenarios and apps

    @Test func anUnknownScenarioThatIsNoFileListsTheBuiltIns() throws {
        let error = try #require(throws: UsageError.self) { try SimulateCommand.loadScenario("moon") }
        #expect(error.message == "unknown scenario 'moon': built-in are commuter, office, night-charger, always-plugged-server, travel; or pass a scenario file (docs/scenarios.md)")
        #expect(try SimulateCommand.loadScenario("office") == Scenario.builtIn(named: "office"))
    }

    @Test func aScenarioFileIsReadAndItsErrorsNameTheFileAndThePath() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let office = try #require(Scenario.builtInJSON(named: "office"))
        let good = try Self.write(office, to: "office.json", in: directory)
        #expect(try SimulateCommand.loadScenario(good) == Scenario.builtIn(named: "office"))

        let bad = try Self.write(#"{"version": 1, "name": "x", "dayz": [], "days": [{}]}"#, to: "bad.json", in: directory)
        let error = try #require(throws: ScenarioError.self) { try SimulateCommand.loadScenario(bad) }
        #expect(error.file == bad)
        #expect(error.path == "$.dayz")
        #expect(error.message.contains("found unknown key \"dayz\""), "\(error.message)")
        #expect(error.description.hasPrefix("\(bad): $.dayz: "))

        let missing = directory.appendingPathComponent("missing.json").path
        let unreadable = try #require(throws: ScenarioError.self) { try SimulateCommand.loadScenario(missing) }
        #expect(unreadable.file == missing)
        #expect(unreadable.message.contains("expected a readable scenario file, found nothing"), "\(unreadable.message)")
    }

    @Test func manifestsWithoutAnAppOrATaskCannotBeModelled() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let news = try Self.write(Self.newsManifest, to: "news.json", in: directory)
        let apps = try SimulateCommand.loadModelledApps([news])
        #expect(apps.map(\.app) == [AppID(Self.newsApp)])
        #expect(apps.first?.tasks.map(\.identifier) == ["\(Self.newsApp).refresh", "\(Self.newsApp).cleanup"])

        let anonymous = try Self.write(#"{"BGTaskSchedulerPermittedIdentifiers": ["com.example.x.refresh"], "UIBackgroundModes": ["fetch"]}"#, to: "anonymous.json", in: directory)
        let error = try #require(throws: UsageError.self) { try SimulateCommand.loadModelledApps([news, anonymous]) }
        #expect(error.message == "--app \(anonymous): cannot model this app: the manifest names no app: CFBundleIdentifier is missing")
        // Each cause its own message, naming what to add.
        let causes: [(String, String)] = [
            (#"{"CFBundleIdentifier": "com.example.x", "BGTaskSchedulerPermittedIdentifiers": [], "UIBackgroundModes": ["fetch"]}"#,
             "the manifest lists no task identifier: BGTaskSchedulerPermittedIdentifiers is missing or empty"),
            (#"{"CFBundleIdentifier": "com.example.x", "BGTaskSchedulerPermittedIdentifiers": ["com.example.x.export.*"], "UIBackgroundModes": ["processing"]}"#,
             "the manifest lists only wildcard identifiers (com.example.x.export.*), which permit continued-processing tasks; "
                + "the simulator models refresh and processing tasks, each named in full in BGTaskSchedulerPermittedIdentifiers"),
            (#"{"CFBundleIdentifier": "com.example.x", "BGTaskSchedulerPermittedIdentifiers": ["com.example.x.refresh"], "UIBackgroundModes": ["audio", "location"]}"#,
             "UIBackgroundModes has neither fetch (refresh tasks) nor processing (processing tasks); found: audio, location"),
            (#"{"CFBundleIdentifier": "com.example.x", "BGTaskSchedulerPermittedIdentifiers": ["com.example.x.refresh"]}"#,
             "UIBackgroundModes has neither fetch (refresh tasks) nor processing (processing tasks); found: none"),
        ]
        for (index, (text, reason)) in causes.enumerated() {
            let path = try Self.write(text, to: "cause\(index).json", in: directory)
            let refused = try #require(throws: UsageError.self) { try SimulateCommand.loadModelledApps([path]) }
            #expect(refused.message == "--app \(path): cannot model this app: \(reason)")
        }
    }

    @Test func twoManifestsOfOneAppAreRefusedNamingBothFilesAndTheApp() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let news = try Self.write(Self.newsManifest, to: "news.json", in: directory)
        // Another file, other tasks, the same CFBundleIdentifier (as a property list).
        let again = try Self.write("""
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>CFBundleIdentifier</key><string>\(Self.newsApp)</string>
            <key>BGTaskSchedulerPermittedIdentifiers</key><array><string>\(Self.newsApp).sync</string></array>
            <key>UIBackgroundModes</key><array><string>fetch</string></array></dict></plist>
            """, to: "Info.plist", in: directory)
        let other = try Self.write(#"{"CFBundleIdentifier": "com.example.other", "BGTaskSchedulerPermittedIdentifiers": ["com.example.other.refresh"], "UIBackgroundModes": ["fetch"]}"#, to: "other.json", in: directory)
        let error = try #require(throws: UsageError.self) { try SimulateCommand.loadModelledApps([news, other, again]) }
        #expect(error.message == "--app \(again) and --app \(news) both describe the app \(Self.newsApp) (CFBundleIdentifier): each app may be simulated once; pass one of them")
        // The same file twice is the same app twice.
        let twice = try #require(throws: UsageError.self) { try SimulateCommand.loadModelledApps([news, news]) }
        #expect(twice.message.contains("both describe the app \(Self.newsApp)"))
        #expect(try SimulateCommand.loadModelledApps([news, other]).map(\.app.rawValue) == [Self.newsApp, "com.example.other"])
    }

    /// A scenario file whose launches name an app that is not simulated.
    static func scenario(launching app: String) -> String {
        #"{"version": 1, "name": "typo", "days": [{"launches": [{"at": "08:00"}]}, {"launches": [{"at": "08:00", "app": null}, {"at": "09:00", "app": "\#(app)"}]}]}"#
    }

    @Test func aScenarioLaunchingAnAppThatIsNotSimulatedIsRefusedNamingTheKeyAndTheApps() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let typo = try Self.write(Self.scenario(launching: "com.example.feedreadr"), to: "typo.json", in: directory)
        let expected = "expected an app that is simulated (com.example.feedreader) or null for every app, found \"com.example.feedreadr\", which no app simulated is"
        // The example app, real or modelled for the comparison.
        for options in [SimulateCommand.Options(scenario: typo, apps: ["feedreader"], days: 1), .init(scenario: typo, days: 1, compareSeeds: 1...1)] {
            let error = try await #require(throws: ScenarioError.self) { _ = try await SimulateCommand.run(options) }
            #expect(error.description == "\(typo): $.days[1].launches[1].app: \(expected)")
        }
        // Named by a relative path, the file is still given absolute, as its other errors give it.
        let depth = FileManager.default.currentDirectoryPath.split(separator: "/").count
        let relative = String(repeating: "../", count: depth) + typo.dropFirst()
        let fromRelative = try await #require(throws: ScenarioError.self) {
            _ = try await SimulateCommand.run(SimulateCommand.Options(scenario: relative, apps: ["feedreader"], days: 1))
        }
        #expect(fromRelative.description.hasPrefix("\(typo): $.days[1]"), "\(fromRelative)")
        // Modelled apps: every simulated app is listed.
        let news = try Self.write(Self.newsManifest, to: "news.json", in: directory)
        let other = try Self.write(#"{"CFBundleIdentifier": "com.example.other", "BGTaskSchedulerPermittedIdentifiers": ["com.example.other.refresh"], "UIBackgroundModes": ["fetch"]}"#, to: "other.json", in: directory)
        let modelled = try await #require(throws: ScenarioError.self) { _ = try await SimulateCommand.run(.init(scenario: typo, apps: [news, other], days: 1)) }
        #expect(modelled.message.hasPrefix("expected an app that is simulated (\(Self.newsApp), com.example.other) or null"), "\(modelled)")
        // Naming an app that is simulated plays.
        let right = try Self.write(Self.scenario(launching: Self.newsApp), to: "right.json", in: directory)
        let output = try await SimulateCommand.run(.init(scenario: right, apps: [news, other], days: 2))
        #expect(output.hasPrefix("bgtask simulate: typo, 2 days"), "\(output.prefix(200))")
    }

    // MARK: simulate: running

    /// The news app modelled through two commuter days with seed 5, as the library runs it.
    static func expectedResult(manifest: String) throws -> SimulationResult {
        let apps = try SimulateCommand.loadModelledApps([manifest])
        return try Simulation(scenario: try #require(Scenario.builtIn(named: "commuter")), days: 2, seed: 5).run(modelled: apps)
    }

    @Test func simulatePrintsTheTimelineAndTheSummaryOfModelledApps() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let manifest = try Self.write(Self.newsManifest, to: "news.json", in: directory)
        let output = try await SimulateCommand.run(.init(scenario: "commuter", apps: [manifest], days: 2, seed: 5))
        let expected = try Self.expectedResult(manifest: manifest)
        #expect(output.hasPrefix("bgtask simulate: commuter, 2 days, seed 5, modelled \(Self.newsApp)\n\n"))
        let timeline = Timeline(trace: expected.trace, start: expected.start).render()
        #expect(timeline.contains("refresh: ran "))
        #expect(timeline.contains("+1d "), "the timeline covers the second day")
        #expect(output.contains(timeline + "\n\n" + expected.summary() + "\n"))
        #expect(output.contains("\(Self.newsApp)/\(Self.newsApp).refresh: "))
        #expect(output.contains("\(Self.newsApp)/\(Self.newsApp).cleanup: "))
        #expect(output.contains("\nsimulated 48 h in "))
        #expect(!output.contains("report written"))
    }

    // MARK: simulate: progress

    @Test func playingDayByDayForProgressGivesTheSameResult() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let apps = try SimulateCommand.loadModelledApps([try Self.write(Self.newsManifest, to: "news.json", in: directory)])
        let simulation = Simulation(scenario: try #require(Scenario.builtIn(named: "travel")), days: 3, seed: 5)
        var told: [Int] = []
        let modelled = try simulation.run(modelled: apps) { told.append($0) }
        #expect(told == [1, 2, 3])
        #expect(try modelled.traceJSON() == simulation.run(modelled: apps).traceJSON())

        // Real handlers: each day ends with the device's clock, as one run would.
        let days = Mutex<[Int]>([])
        let real = try await simulation.run(installing: { FeedReader.install(on: $0, backlog: 100) }, progress: { day in days.withLock { $0.append(day) } })
        #expect(days.withLock { $0 } == [1, 2, 3])
        let plain = try await simulation.run { FeedReader.install(on: $0, backlog: 100) }
        #expect(real.traceJSON() == plain.traceJSON())
    }

    @Test func theProgressBarWaitsBeforeDrawingAndNeverTouchesStandardOutput() async throws {
        let drawn = Mutex<[String]>([])
        let patient = ProgressBar(total: 10, unit: "days", showsAfter: .seconds(3600)) { text in drawn.withLock { $0.append(text) } }
        for day in 1...10 { patient.update(day) }
        patient.finish()
        #expect(drawn.withLock { $0 }.isEmpty, "a short run leaves the terminal as it was")
        let eager = ProgressBar(total: 4, unit: "days") { text in drawn.withLock { $0.append(text) } }
        for day in 1...4 { eager.update(day) }
        eager.finish()
        #expect(drawn.withLock { $0 } == [
            "\r[#######.......................] 25 % (1/4 days)", "\r[###############...............] 50 % (2/4 days)",
            "\r[######################........] 75 % (3/4 days)", "\r[##############################] 100 % (4/4 days)", "\n",
        ])

        // A percentage that does not move is redrawn with its count once a second, no sooner.
        drawn.withLock { $0 = [] }
        let origin = ContinuousClock.now
        let elapsed = Mutex(Duration.zero)
        let slow = ProgressBar(
            total: 1_000, write: { text in drawn.withLock { $0.append(text) } }, now: { origin + elapsed.withLock { value in value } })
        slow.update(0)
        slow.update(1)
        elapsed.withLock { value in value = .milliseconds(999) }
        slow.update(2)
        elapsed.withLock { value in value = .milliseconds(1_000) }
        slow.update(3)
        slow.update(10)
        #expect(drawn.withLock { $0 } == [
            "\r[..............................] 0 % (0/1000 devices)", "\r[..............................] 0 % (3/1000 devices)",
            "\r[..............................] 1 % (10/1000 devices)",
        ])

        // After 5 s the remaining time is estimated from the rate so far, and keeps its width
        // on the line so that a shorter estimate, or none at the end, leaves nothing behind.
        drawn.withLock { $0 = [] }
        elapsed.withLock { value in value = .zero }
        let long = ProgressBar(
            total: 1_000, write: { text in drawn.withLock { $0.append(text) } }, now: { origin + elapsed.withLock { value in value } })
        long.update(1)
        elapsed.withLock { value in value = .seconds(10) }
        long.update(10)
        elapsed.withLock { value in value = .seconds(20) }
        long.update(500)
        long.finish()
        #expect(drawn.withLock { $0 } == [
            "\r[..............................] 0 % (1/1000 devices)",
            "\r[..............................] 1 % (10/1000 devices), about 17 min left         ",
            "\r[###############...............] 50 % (500/1000 devices), about 20 s left           ",
            "\r[##############################] 100 % (1000/1000 devices)                            ", "\n",
        ])
        #expect(ProgressBar.remainingText(seconds: 0.2) == "about 1 s left")
        #expect(ProgressBar.remainingText(seconds: 7_199) == "about 2 h 0 min left")
        #expect(ProgressBar.remainingText(seconds: 3 * 86_400 + 4 * 3_600) == "about 3 days 4 h left")
        #expect(ProgressBar.remainingText(seconds: .infinity) == "time left unknown")
        #expect(ProgressBar.remainingText(seconds: 1e300) == "about 11574074 days 2 h left")

        // With standard error a terminal, standard output is the same trace.
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let manifest = try Self.write(Self.newsManifest, to: "news.json", in: directory)
        let options = SimulateCommand.Options(scenario: "commuter", apps: [manifest], days: 2, seed: 5, json: true)
        let onTerminal = try await SimulateCommand.run(options, progressOnTerminal: true)
        #expect(onTerminal == (try await SimulateCommand.run(options, progressOnTerminal: false)))
        #expect(SimulateCommand.parse(["commuter", "--no-progress"]) == .success(.init(scenario: "commuter", apps: ["feedreader"], progress: false)))
    }

    @Test func simulateJSONIsTheTrace() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let manifest = try Self.write(Self.newsManifest, to: "news.json", in: directory)
        let output = try await SimulateCommand.run(.init(scenario: "commuter", apps: [manifest], days: 2, seed: 5, json: true))
        let document = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        #expect(document["scenario"] as? String == "commuter")
        #expect((document["seed"] as? NSNumber)?.intValue == 5)
        #expect(document["start"] as? String == "2026-11-30T00:00:00.000Z")
        #expect(document["end"] as? String == "2026-12-02T00:00:00.000Z")
        let events = try #require(document["events"] as? [[String: Any]])
        let expected = try Self.expectedResult(manifest: manifest)
        #expect(events.count == expected.trace.count)
        #expect(events.filter { $0["event"] as? String == "finished" }.count == expected.runs.count)
        #expect(output == String(decoding: expected.traceJSON(), as: UTF8.self) + "\n")
    }

    @Test func simulateWritesTheReportWhenAsked() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let manifest = try Self.write(Self.newsManifest, to: "news.json", in: directory)
        let report = directory.appendingPathComponent("report-\(UUID().uuidString).html").path
        let output = try await SimulateCommand.run(.init(scenario: "commuter", apps: [manifest], days: 2, seed: 5, report: report))
        #expect(output.hasSuffix("report written to \(report)\n"))
        let html = try String(contentsOfFile: report, encoding: .utf8)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("commuter: 2 days"))
        #expect(html.contains("\(Self.newsApp).refresh"))
        #expect(html.contains("reproduce: bgtask simulate commuter --app "))
        #expect(html.contains(" --days 2 --seed 5"))

        let unwritable = directory.appendingPathComponent("no-such-directory/report.html").path
        await #expect(throws: UsageError.self) {
            _ = try await SimulateCommand.run(.init(scenario: "commuter", apps: [manifest], days: 1, seed: 5, report: unwritable))
        }
    }

    @Test func aReportGoesOnlyWhereARegularFileIsOrMayBe() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A link is followed: its target is replaced, the link stays a link.
        let target = directory.appendingPathComponent("target.html").path
        try "<!DOCTYPE html><p>an earlier report".write(toFile: target, atomically: true, encoding: .utf8)
        let link = directory.appendingPathComponent("link.html").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        try ReportDestination.write("<!DOCTYPE html>", to: link)
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "<!DOCTYPE html>")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == target)
        // A FIFO (opening it would block), a directory, a device: refused, left as they are.
        let fifo = directory.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let subdirectory = directory.appendingPathComponent("sub").path
        try FileManager.default.createDirectory(atPath: subdirectory, withIntermediateDirectories: false)
        for (path, kind) in [(fifo, "a FIFO"), (subdirectory, "a directory"), ("/dev/null", "a character device")] {
            #expect {
                try ReportDestination.write("<!DOCTYPE html>", to: path)
            } throws: { error in
                "\(error)".contains(path) && "\(error)".contains(kind)
            }
        }
        // A link in a loop, and one that leads nowhere: each named for what it is.
        let loop = directory.appendingPathComponent("loop.html").path
        try FileManager.default.createSymbolicLink(atPath: loop, withDestinationPath: loop)
        let dangling = directory.appendingPathComponent("dangling.html").path
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: directory.appendingPathComponent("gone/report.html").path)
        for (path, kind) in [(loop, "a symbolic link loop"), (dangling, "a symbolic link that leads nowhere")] {
            #expect {
                try ReportDestination.write("<!DOCTYPE html>", to: path)
            } throws: { error in
                "\(error)" == "cannot write the report to \(path): it is \(kind), not a regular file; nothing was written"
            }
        }
        // A directory that takes no new file: the system's reason, not Foundation's "doesn't exist".
        #expect {
            try ReportDestination.write("<!DOCTYPE html>", to: "/proc/version")
        } throws: { error in
            "\(error)".contains("temporary file in /proc") && "\(error)".contains("(ENOENT)")
        }
        var info = stat()
        #expect(lstat(fifo, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO, "still a FIFO")
        #expect(lstat("/dev/null", &info) == 0 && info.st_mode & S_IFMT == S_IFCHR, "still a device")
    }

    /// Giving a link away takes root (CI runs as root); the rule is skipped, visibly, otherwise.
    @Test(.enabled(if: getuid() == 0, "a link of another user takes root to make"))
    func aReportIsNotLedByAnotherUsersLinkInASharedDirectory() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let victim = directory.appendingPathComponent("victim.html").path
        try "<!DOCTYPE html><p>the user's own page".write(toFile: victim, atomically: true, encoding: .utf8)
        // A shared directory as /tmp is: sticky and writable by all.
        let shared = directory.appendingPathComponent("shared").path
        #expect(mkdir(shared, 0o777) == 0 && chmod(shared, 0o1777) == 0)
        let planted = shared + "/bgtask-demo.html"
        try FileManager.default.createSymbolicLink(atPath: planted, withDestinationPath: victim)
        #expect(lchown(planted, 65_534, 65_534) == 0)
        #expect {
            try ReportDestination.check(planted)
        } throws: { error in
            "\(error)" == "cannot write the report to \(planted): it is a symbolic link of uid 65534 in the shared directory \(shared), "
                + "which another user may point at any of your files; remove it or name another file; nothing was run"
        }
        #expect(throws: UsageError.self) { try ReportDestination.write("<!DOCTYPE html>", to: planted) }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "<!DOCTYPE html><p>the user's own page")
        // The user's own link there is followed as anywhere.
        #expect(lchown(planted, getuid(), getgid()) == 0)
        try ReportDestination.write("<!DOCTYPE html>", to: planted)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "<!DOCTYPE html>")
    }

    @Test func aReportPathEndingInASlashOrLeadingToAPipeIsRefusedForWhatItIs() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A path ending in a slash names a directory: no file is written without it.
        let slashed = directory.appendingPathComponent("new.html").path + "/"
        #expect {
            try ReportDestination.check(slashed)
        } throws: { error in
            "\(error)" == "cannot write the report to \(slashed): it names a directory (it ends in /), not a file; nothing was run"
        }
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("new.html").path))
        // A kernel link to a pipe (as /dev/stdout is when the output is piped) is named a FIFO.
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let piped = "/proc/self/fd/\(ends[1])"
        #expect {
            try ReportDestination.check(piped)
        } throws: { error in
            "\(error)" == "cannot write the report to \(piped): it is a FIFO (named pipe), not a regular file; nothing was run"
        }
    }

    @Test func aReportReplacesOnlyAnEmptyFileOrAnHTMLPage() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // The run's own scenario, a manifest, a program: refused before the run, left as they were.
        let scenario = try Self.write(#"{"version": 1, "name": "s", "days": [{"launches": [{"at": "08:00"}]}]}"#, to: "life.json", in: directory)
        let manifest = try Self.write(Self.newsManifest, to: "news.json", in: directory)
        let program = directory.appendingPathComponent("program").path
        try Data([0x7F, 0x45, 0x4C, 0x46, 2, 1, 1, 0]).write(to: URL(fileURLWithPath: program))
        for path in [scenario, manifest, program] {
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            await #expect {
                try await SimulateCommand.run(.init(scenario: scenario, apps: [manifest], days: 1, seed: 1, report: path))
            } throws: { error in
                "\(error)".hasPrefix("cannot write the report to \(path): it exists and is not an HTML page") && "\(error)".hasSuffix("; nothing was run")
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        }
        // An empty file, white space, and an HTML page (any case, after a byte order mark and
        // white space, or opening with a comment) are replaced.
        let empty = directory.appendingPathComponent("empty.html").path
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        let blank = try Self.write(" \n\t", to: "blank.html", in: directory)
        let earlier = try Self.write("\n  <!doctype HTML><p>old", to: "earlier.html", in: directory)
        let marked = directory.appendingPathComponent("marked.html").path
        try Data([0xEF, 0xBB, 0xBF] + Array("<html><body>old".utf8)).write(to: URL(fileURLWithPath: marked))
        let commented = try Self.write("<!-- saved by a browser -->\n<html>", to: "commented.html", in: directory)
        for path in [empty, blank, earlier, marked, commented] {
            _ = try await SimulateCommand.run(.init(scenario: scenario, apps: [manifest], days: 1, seed: 1, report: path))
            #expect(try String(contentsOfFile: path, encoding: .utf8).hasPrefix("<!DOCTYPE html>"))
        }
    }

    @Test func aReportThatCannotBeWrittenIsRefusedBeforeTheRun() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("gone/report.html").path
        let file = directory.appendingPathComponent("file").path
        try "x".write(toFile: file, atomically: true, encoding: .utf8)
        let underFile = file + "/report.html"
        let cases: [(String, String)] = [
            (missing, "the directory \(directory.path)/gone does not exist"),
            (underFile, "\(file) is not a directory"),
            (directory.path, "it is a directory, not a regular file"),
            ("/proc/report.html", "a new file cannot be created in /proc"),
        ]
        for (path, reason) in cases {
            // "nothing was run" is said only by the check made before the run (the write
            // after it says "nothing was written"); small runs, so a regression fails fast.
            await #expect {
                try await SimulateCommand.run(.init(scenario: "commuter", apps: ["feedreader"], days: 1, seed: 1, report: path))
            } throws: { error in
                "\(error)".hasPrefix("cannot write the report to \(path): ") && "\(error)".contains(reason) && "\(error)".hasSuffix("; nothing was run")
            }
            var fleet = FleetCommand.Options()
            fleet.devices = 1
            fleet.days = 1
            fleet.report = path
            #expect {
                try FleetCommand.run(fleet, progressOnTerminal: false)
            } throws: { error in
                "\(error)".hasPrefix("cannot write the report to \(path): ") && "\(error)".contains(reason) && "\(error)".hasSuffix("; nothing was run")
            }
        }
        // The check leaves nothing behind in a directory that takes the report.
        let good = directory.appendingPathComponent("report.html").path
        try ReportDestination.check(good)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["file"])
    }

    @Test func theReportsReproduceLineRunsTheSameModelledApps() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let manifest = try Self.write(Self.newsManifest, to: "news.json", in: directory)
        let report = directory.appendingPathComponent("report-\(UUID().uuidString).html").path
        let options = SimulateCommand.Options(scenario: "commuter", apps: [manifest], days: 1, seed: 5, report: report)
        _ = try await SimulateCommand.run(options)
        let arguments = try Self.reproduceArguments(inReport: report)
        #expect(Array(arguments.prefix(2)) == ["simulate", "commuter"])
        let reproduced = try #require(try? CommandLineParser.parse(arguments).get())
        #expect(reproduced == .simulate(.init(scenario: "commuter", apps: [manifest], days: 1, seed: 5)), "\(arguments)")
    }

    // MARK: fleet: options

    @Test func fleetOptionsAreRead() {
        var expected = FleetCommand.Options()
        expected.devices = 50
        expected.days = 2
        expected.mix = "commuter=1"
        expected.seed = 3
        expected.sharedOutage = "07:00-08:00"
        expected.herdSpreading = false
        expected.compareBaselines = true
        expected.json = true
        expected.progress = false
        expected.report = "r.html"
        let arguments = [
            "--devices", "50", "--days", "2", "--mix", "commuter=1", "--seed", "3", "--shared-outage", "07:00-08:00",
            "--no-herd-spreading", "--compare-baselines", "--json", "--no-progress", "--report", "r.html",
        ]
        #expect(FleetCommand.parse(arguments) == .success(expected))
        #expect(CommandLineParser.parse(["fleet"] + arguments) == .success(.fleet(expected)))
        #expect(FleetCommand.parse([]) == .success(FleetCommand.Options()))
    }

    @Test(arguments: [
        (["--devices", "0"], "--devices must be a whole number from 1 to 10000000, got '0'"),
        (["--days", "-1"], "--days must be a whole number from 1 to 3660, got '-1'"),
        (["--days", "0"], "--days must be a whole number from 1 to 3660, got '0'"),
        (["--devices", "999999999"], "--devices must be a whole number from 1 to 10000000, got '999999999'"),
        (["--devices", "100000", "--days", "1001"], "device-days"),
        (["--devices", "x"], "--devices must be a whole number from 1 to 10000000, got 'x'"),
        (["--devices"], "--devices needs a number"),
        (["--seed", "-3"], "--seed must be a whole number from 0 to 18446744073709551615, got '-3'"),
        (["--mix", "commuter=0"], "--mix: expected name=weight or FILE=weight with a weight above 0 and at most 1000000, written in plain decimals (at least 0.000000001), found 'commuter=0'"),
        (["--mix", "commuter=0x10"], "found 'commuter=0x10'"),
        (["--mix", "commuter=1e-320"], "found 'commuter=1e-320'"),
        (["--mix", "commuter=inf"], "found 'commuter=inf'"),
        (["--mix", "commuter=1,moon=1"], "--mix: unknown scenario 'moon'"),
        (["--shared-outage", "8-7"], "--shared-outage: expected HH:MM-HH:MM (00:00 to 24:00) with the start before the end, found '8-7'"),
        (["--shared-outage", "08:00-07:00"], "found '08:00-07:00'"),
        (["--fast"], "unknown option for fleet: '--fast'"),
    ])
    func fleetUsageErrorsNameTheOption(arguments: [String], message: String) throws {
        let error = try #require(Self.usageError(FleetCommand.parse, arguments))
        #expect(error.message.contains(message), "\(error.message)")
    }

    /// A problem inside a scenario file of the mix is not the command line's: parsing takes
    /// it, and running says it (exit 1, as simulate for its file), naming the file.
    @Test func aBadScenarioFileInTheMixFailsTheRunNotTheCommandLine() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let broken = try Self.write(#"{"version": 1, "name": "broken", "days": []}"#, to: "broken.json", in: directory)
        let options = try FleetCommand.parse(["--mix", "\(broken)=1", "--devices", "2"]).get()
        let error = try #require(throws: FleetError.self) { _ = try FleetCommand.run(options, progressOnTerminal: false) }
        #expect(error.file == broken && error.message.hasPrefix("--mix: \(broken): $.days: "), "\(error)")
    }

    /// Parsing checks sizes without simulating: the largest fleet allowed parses at once.
    @Test(.timeLimit(.minutes(1))) func fleetParsingDoesNoWork() throws {
        let parsed = try FleetCommand.parse(["--devices", "\(Fleet.maximumDevices)", "--days", "10"]).get()
        #expect(parsed.devices == Fleet.maximumDevices)
    }

    // MARK: fleet: running

    /// 50 devices of the standard mix with a shared outage, without a progress bar.
    static func smallFleet(days: Int = 1, json: Bool = false, report: String? = nil) -> FleetCommand.Options {
        var options = FleetCommand.Options()
        options.devices = 50
        options.days = days
        options.sharedOutage = "07:00-08:00"
        options.json = json
        options.report = report
        return options
    }

    @Test func fleetPrintsItsSummaryRows() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = directory.appendingPathComponent("fleet-\(UUID().uuidString).html").path
        let options = Self.smallFleet(report: report)
        let output = try FleetCommand.run(options, progressOnTerminal: false)
        #expect(output.hasPrefix("bgtask fleet: 50 devices, 1 day, mix commuter=0.4,office=0.3,night-charger=0.2,travel=0.1, seed 1\n"))
        let fleet = try FleetCommand.fleet(options)
        let rows = fleet.run().summaryRows(sharedOutage: fleet.sharedOutage)
        #expect(rows.count >= 10)
        #expect(rows.contains { $0.name.contains("after the network returns at 08:00") })
        let lines = output.split(separator: "\n").map(String.init)
        for row in rows {
            #expect(lines.contains { $0.hasPrefix("  \(row.name)") && $0.hasSuffix("  \(row.value)") }, "no line for \(row.name): \(row.value)")
        }
        #expect(output.contains("\nsimulated 50 device-days in "))
        #expect(output.hasSuffix("report written to \(report)\n"))
        var one = FleetCommand.Options()
        one.devices = 1
        let single = try FleetCommand.run(one, progressOnTerminal: false)
        #expect(single.hasPrefix("bgtask fleet: 1 device, 1 day, "), "\(single)")
        #expect(single.contains("\nsimulated 1 device-day in "), "\(single)")
        let html = try String(contentsOfFile: report, encoding: .utf8)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("50 devices, 1 day"))
        #expect(html.contains("network back everywhere"))
    }

    @Test func fleetJSONHasEveryMinuteOfEveryDay() throws {
        let output = try FleetCommand.run(Self.smallFleet(days: 2, json: true), progressOnTerminal: false)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        let perMinute = try #require(document["runsPerMinute"] as? [Int])
        #expect(perMinute.count == 1440 * 2)
        #expect(document["runs"] as? Int == perMinute.reduce(0, +))
        #expect(perMinute.reduce(0, +) > 50 * 2 * 5)
        #expect(document["devices"] as? Int == 50)
        #expect(document["days"] as? Int == 2)
        #expect(document["sharedOutage"] as? String == "07:00-08:00")
        #expect(document["herdSpreading"] as? Bool == true)
        #expect(document["peakRunsPerMinute"] as? Int == perMinute.max())
        let share = try #require(document["freshLaunchShare"] as? Double)
        #expect((0...1).contains(share))
        // Nobody runs while the network is down everywhere.
        #expect(perMinute[420..<480].allSatisfy { $0 == 0 } && perMinute[1860..<1920].allSatisfy { $0 == 0 })
    }

    @Test func aFleetWithoutLaunchesWritesNullStaleness() throws {
        var options = Self.smallFleet(json: true)
        options.devices = 2
        options.mix = "always-plugged-server=1"  // a server is never opened
        let output = try FleetCommand.run(options, progressOnTerminal: false)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        #expect(document["launches"] as? Int == 0)
        #expect(document["stalenessMedianMinutes"] is NSNull && document["stalenessP90Minutes"] is NSNull, "\(document.keys.sorted())")
    }

    @Test func fleetComparesThePolicyWithTheTimersInTextJSONAndTheReport() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = directory.appendingPathComponent("fleet-\(UUID().uuidString).html").path
        var options = Self.smallFleet(report: report)
        options.devices = 20
        options.compareBaselines = true
        let text = try FleetCommand.run(options, progressOnTerminal: false)
        for line in ["the policy against plain timers across the fleet", "timer, 15 min", "timer, equal budget", "goal 1, wakeups", "goal 3, p90"] {
            #expect(text.contains(line), "\(text)")
        }
        let html = try String(contentsOfFile: report, encoding: .utf8)
        #expect(html.contains("goals (wakeups, median, p90"))
        options.report = nil
        options.json = true
        let document = try #require(try JSONSerialization.jsonObject(with: Data(try FleetCommand.run(options, progressOnTerminal: false).utf8)) as? [String: Any])
        let baselines = try #require(document["baselines"] as? [String: Any])
        for key in ["policy", "timer15", "equalBudgetTimer"] {
            let figures = try #require(baselines[key] as? [String: Any], "\(key)")
            for field in ["stalenessMedianMinutes", "stalenessP90Minutes", "wakeupsPerDay", "joulesPerDay", "launches"] {
                #expect(figures[field] != nil, "\(key).\(field)")
            }
        }
        let goals = try #require(baselines["goals"] as? [String: Bool])
        #expect(Set(goals.keys) == ["wakeups", "median", "p90"])
        #expect(document["stalenessMedianMinutes"] as? Double == (baselines["policy"] as? [String: Any])?["stalenessMedianMinutes"] as? Double)
    }

    @Test func theFleetReportsReproduceLineParses() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = directory.appendingPathComponent("fleet-\(UUID().uuidString).html").path
        let options = Self.smallFleet(report: report)
        _ = try FleetCommand.run(options, progressOnTerminal: false)
        let arguments = try Self.reproduceArguments(inReport: report)
        #expect(arguments.first == "fleet")
        #expect(arguments.contains("--shared-outage"))
        let reproduced = try CommandLineParser.parse(arguments).get()
        guard case .fleet(let parsed) = reproduced else {
            Issue.record("\(arguments) is not a fleet command")
            return
        }
        let original = try FleetCommand.fleet(options)
        let replayed = try FleetCommand.fleet(parsed)
        #expect(replayed.mix == original.mix)
        #expect(replayed.devices == original.devices && replayed.days == original.days && replayed.seed == original.seed)
        #expect(replayed.sharedOutage == original.sharedOutage)
    }
}
