@testable import bgtask
import CSQLite
import BackgroundTasks
import Foundation
import SchedulerStore
import Testing
import SchedulerCore

@Suite struct EnergyLogCommandTests {
    /// A state home per test (`$XDG_STATE_HOME`), removed when the test lets go of it.
    private final class StateHome {
        let url: URL

        init() throws {
            url = FileManager.default.temporaryDirectory
                .appendingPathComponent("EnergyLogCommandTests-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        }

        deinit { try? FileManager.default.removeItem(at: url) }

        var environment: [String: String] { ["XDG_STATE_HOME": url.path, "HOME": "/nonexistent"] }

        /// `<home>/bgtask/<app>/`, created.
        func appDirectory(_ app: AppID) throws -> URL {
            let directory = url.appendingPathComponent("bgtask").appendingPathComponent(app.rawValue)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return directory
        }

        /// Opens (creating) the app's store, as the embedded scheduler does.
        func store(_ app: AppID) throws -> SchedulerStore {
            try SchedulerStore.open(at: appDirectory(app).appendingPathComponent("scheduler.sqlite"), now: EnergyLogCommandTests.now).0
        }
    }

    private static let feedReader = AppID("com.example.feedreader")
    private static let photos = AppID("com.example.photos")
    /// 2026-11-30 12:00:00 UTC.
    private static let now = Date(timeIntervalSince1970: 1_796_040_000)

    /// Records a finished (or, with `duration` nil, running) run in `store`.
    private func record(
        _ store: SchedulerStore,
        _ id: Int64,
        app: AppID,
        identifier: String,
        kind: TaskKind = .appRefresh,
        hoursAgo: Double,
        duration: TimeInterval?,
        outcome: RunOutcome = .success,
        cpuTime: TimeInterval? = nil,
        peakMemoryBytes: Int64? = nil,
        energyJoules: Double? = nil,
        stopReason: String? = "completed"
    ) throws {
        let startedAt = Self.now.addingTimeInterval(-hoursAgo * 3_600)
        let request = PendingRequest(app: app, identifier: identifier, kind: kind, submittedAt: startedAt.addingTimeInterval(-60))
        let started = RunRecord(id: RunID(id), request: request, startedAt: startedAt)
        try store.recordRunStarted(started)
        guard let duration else { return }
        var ended = started
        ended.endedAt = startedAt.addingTimeInterval(duration)
        ended.outcome = outcome
        ended.stopReason = stopReason
        ended.cpuTime = cpuTime
        ended.peakMemoryBytes = peakMemoryBytes
        ended.energyJoules = energyJoules
        try store.recordRunFinished(ended)
    }

    /// Two apps with a few runs each; the feed reader also has one run in progress.
    private func fill(_ home: StateHome) throws {
        let reader = try home.store(Self.feedReader)
        try record(reader, 1, app: Self.feedReader, identifier: "com.example.feedreader.refresh", hoursAgo: 30,
                   duration: 4, cpuTime: 0.5, peakMemoryBytes: 52_428_800, energyJoules: 3)
        try record(reader, 2, app: Self.feedReader, identifier: "com.example.feedreader.refresh", hoursAgo: 2,
                   duration: 6, cpuTime: 1, peakMemoryBytes: 60_000_000, energyJoules: 5)
        try record(reader, 3, app: Self.feedReader, identifier: "com.example.feedreader.cleanup", kind: .processing,
                   hoursAgo: 1, duration: 600, outcome: .expired, cpuTime: 40, energyJoules: 380,
                   stopReason: "budget of 600 s exhausted")
        try record(reader, 4, app: Self.feedReader, identifier: "com.example.feedreader.cleanup", kind: .processing,
                   hoursAgo: 0.1, duration: nil)
        let photos = try home.store(Self.photos)
        try record(photos, 1, app: Self.photos, identifier: "com.example.photos.sync", hoursAgo: 3, duration: 2,
                   cpuTime: nil, energyJoules: nil, stopReason: nil)
    }

    /// The warnings of a test that expects none: each one fails it.
    private static func noWarning(_ text: String) {
        Issue.record("unexpected warning: \(text)")
    }

    private func parseLog(_ arguments: [String]) throws -> LogCommand.Options {
        try LogCommand.parse(arguments).get()
    }

    // MARK: Parsing

    @Test func parsesEveryOption() throws {
        #expect(try parseLog([]) == RunLogOptions())
        let options = try parseLog(["--app", "com.example.a", "--since", "24h", "--state", "/tmp/x", "--json"])
        #expect(options.app == AppID("com.example.a"))
        #expect(options.since == .ago(86_400))
        #expect(options.stateDirectory == "/tmp/x")
        #expect(options.json)
        #expect(try EnergyCommand.parse(["--since", "2026-11-30T08:00:00Z"]).get().since
            == .instant(Date(timeIntervalSince1970: 1_796_025_600)))
        #expect(try parseLog(["--since", "2026-11-30T09:00:00.5+01:00"]).since
            == .instant(Date(timeIntervalSince1970: 1_796_025_600.5)))
        #expect(try parseLog(["--since", "2026-11-30"]).since == .instant(Date(timeIntervalSince1970: 1_795_996_800)))
        #expect(try parseLog(["--since", "2028-02-29T23:59:59Z"]).since == .instant(Date(timeIntervalSince1970: 1_835_481_599)))
        // A fraction of many nines stays in its second (read to the nanosecond; an outside
        // probe's 23 nines were rounded to the next year), and is shown cut to the millisecond.
        let lastMoment = try parseLog(["--since", "2026-12-31T23:59:59.99999999999999999999999Z"]).since
        guard case .instant(let instant)? = lastMoment else { Issue.record("\(String(describing: lastMoment))"); return }
        #expect(instant < Date(timeIntervalSince1970: 1_798_761_600) && instant > Date(timeIntervalSince1970: 1_798_761_599.99))
        let reading = RunLogReading(stores: [], skipped: [], runs: [], since: instant, whereDescription: "here")
        #expect(reading.filterDescription(RunLogOptions()) == " since 2026-12-31T23:59:59.999Z")
        // With a zone, the offset moves the whole seconds first: 2^31 s since 1970 (03:14:08Z) is where a
        // Double's step doubles, and the fraction added before it rounded into the next second.
        guard case .instant(let offsetInstant)? = try parseLog(["--since", "2038-01-18T22:14:08.9999999-05:00"]).since else { Issue.record("no instant"); return }
        #expect(offsetInstant < Date(timeIntervalSince1970: 2_147_483_649) && offsetInstant > Date(timeIntervalSince1970: 2_147_483_648.99), "03:14:08.9999999Z: \(offsetInstant.timeIntervalSince1970)")
        #expect(try parseLog(["--since", "30m"]).since == .ago(1_800))
        #expect(try parseLog(["--since", "7d"]).since == .ago(7 * 86_400))
        #expect(try parseLog(["--since", "1.5h"]).since == .ago(5_400))
        // The bound is 100 years of 365.25 days, to the day.
        #expect(try parseLog(["--since", "36525d"]).since == .ago(36_525 * 86_400))
        #expect(try parseLog(["--since", "5217w"]).since == .ago(5_217 * 604_800))
        #expect(try parseLog(["--help"]).help)
        #expect(RunLogOptions.Since.ago(3_600).resolve(now: Self.now) == Self.now.addingTimeInterval(-3_600))
        // An instant before the Gregorian reform is echoed as it was read (Foundation's
        // formatter wrote 1500-01-01 as 1499-12-22, in the Julian calendar).
        for text in ["1500-01-01T00:00:00Z", "0001-03-01T12:30:00Z", "1582-10-10T00:00:00Z", "9999-12-31T23:59:59Z"] {
            guard case .instant(let date) = try parseLog(["--since", text]).since else { Issue.record("\(text) not an instant"); continue }
            #expect(RunLogFormat.time(date) == text)
        }
    }

    @Test(arguments: [
        (["--since", "yesterday"], "yesterday"),
        (["--since", "24"], "'24'"),
        (["--since", "-5h"], "-5h"),
        (["--since", "0h"], "0h"),
        (["--since", "1e3h"], "1e3h"),
        (["--since", "36526d"], "36526d"),
        (["--since", "5218w"], "5218w"),
        (["--since", "2026-13-40T00:00:00Z"], "2026-13-40"),
        (["--since", "2026-12-02T25:00:00Z"], "T25:00:00Z"),
        (["--since", "2026-12-02T23:99:99Z"], "T23:99:99Z"),
        (["--since", "2026-02-30"], "2026-02-30"),
        (["--since", "2025-02-29T00:00:00Z"], "2025-02-29"),
        (["--since", "2026-04-31"], "2026-04-31"),
        (["--since", "2026-11-30T09:00:00+25:00"], "+25:00"),
        (["--since", "2026-11-30T09:00:00+01:99"], "+01:99"),
        (["--since", "2026-11-30T09:00:00-00:60"], "-00:60"),
        (["--since"], "--since"),
        (["--app"], "--app"),
        (["--app", "--json"], "--app"),
        (["--state", ""], "--state"),
        (["--verbose"], "--verbose"),
        (["--app", "a", "--app", "b"], "--app"),
        (["extra"], "extra"),
    ])
    func usageErrorsNameTheCulprit(arguments: [String], culprit: String) {
        for parse in [LogCommand.parse, EnergyCommand.parse] {
            guard case .failure(let error) = parse(arguments) else {
                Issue.record("\(arguments) should be a usage error")
                continue
            }
            #expect(error.message.contains(culprit), "\(error.message)")
        }
    }

    @Test func unknownOptionsNameTheCommand() {
        guard case .failure(let error) = EnergyCommand.parse(["--verbose"]) else {
            Issue.record("--verbose should be a usage error")
            return
        }
        #expect(error.message.contains("energy"))
    }

    // MARK: log

    @Test func logListsEveryAppsRunsOldestFirst() throws {
        let home = try StateHome()
        try fill(home)
        let output = try LogCommand.run(RunLogOptions(), environment: home.environment, now: Self.now, warn: Self.noWarning)
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("5 runs recorded in \(home.url.path)/bgtask") == true, "\(output)")
        let header = try #require(lines.first { $0.hasPrefix("START") })
        for column in ["END", "APP", "TASK", "KIND", "OUTCOME", "WALL", "CPU", "PEAK MEM", "ENERGY", "STOP REASON"] {
            #expect(header.contains(column), "missing column \(column)")
        }
        let rows = lines.filter { $0.hasPrefix("2026-") }
        #expect(rows.count == 5)
        #expect(rows[0].hasPrefix("2026-11-29T06:00:00Z  2026-11-29T06:00:04Z  com.example.feedreader"))
        #expect(rows[0].contains("refresh") && rows[0].contains("success") && rows[0].contains("4.00 s")
            && rows[0].contains("0.50 s") && rows[0].contains("50.0 MiB") && rows[0].contains("3.00 J")
            && rows[0].hasSuffix("completed"))
        #expect(rows[1].contains("com.example.photos.sync") && rows[1].hasSuffix("-"))
        #expect(rows[3].contains("expired") && rows[3].contains("10.0 min") && rows[3].contains("380.0 J")
            && rows[3].hasSuffix("budget of 600 s exhausted"))
        #expect(rows[4].contains("running"))
    }

    @Test("with the embedded apps' stores and bgtaskd's, the header names both places, not the apps' directory alone")
    func theHeaderNamesTheDaemonsStoreToo() throws {
        let home = try StateHome()
        try fill(home)
        let daemonDirectory = home.url.appendingPathComponent("bgtaskd")
        try FileManager.default.createDirectory(at: daemonDirectory, withIntermediateDirectories: true)
        let daemon = try SchedulerStore.open(at: daemonDirectory.appendingPathComponent("scheduler.sqlite"), now: Self.now).0
        try record(daemon, 1, app: AppID("com.example.daemonapp"), identifier: "com.example.daemonapp.refresh", hoursAgo: 1, duration: 1)
        let output = try LogCommand.run(RunLogOptions(), environment: home.environment, now: Self.now, warn: Self.noWarning)
        let first = try #require(output.split(separator: "\n").first)
        #expect(first.hasPrefix("6 runs recorded in 3 stores: \(home.url.path)/bgtask and \(daemonDirectory.path)/scheduler.sqlite"), "\(first)")
    }

    @Test func logFiltersByAppAndSince() throws {
        let home = try StateHome()
        try fill(home)
        let options = try parseLog(["--app", "com.example.feedreader", "--since", "24h"])
        let output = try LogCommand.run(options, environment: home.environment, now: Self.now, warn: Self.noWarning)
        #expect(output.hasPrefix("3 runs recorded in"))
        #expect(output.contains("for com.example.feedreader since 2026-11-29T12:00:00Z"))
        #expect(!output.contains("com.example.photos"))
        #expect(!output.contains("2026-11-29T06:00:00Z"))
        // A time with a fraction is named with it, not as another instant (an outside probe).
        let precise = try parseLog(["--app", "com.example.feedreader", "--since", "2026-11-29T12:00:00.5Z"])
        let named = try LogCommand.run(precise, environment: home.environment, now: Self.now, warn: Self.noWarning)
        #expect(named.contains("since 2026-11-29T12:00:00.500Z"), "\(named)")
    }

    @Test func aStateHomeThatIsAFileIsSaidNotReadAsNoRuns() throws {
        let home = try StateHome()
        let file = home.url.appendingPathComponent("not-a-directory")
        try Data("x".utf8).write(to: file)
        let environment = ["XDG_STATE_HOME": file.path, "XDG_RUNTIME_DIR": home.url.path]
        for run in [{ try LogCommand.run(RunLogOptions(), environment: environment, now: Self.now, warn: Self.noWarning) },
                    { try EnergyCommand.run(RunLogOptions(), environment: environment, now: Self.now, warn: Self.noWarning) }] {
            #expect {
                _ = try run()
            } throws: { error in
                "\(error)".contains(file.path) && "\(error)".contains("is a regular file")
            }
        }
    }

    /// A run row damaged by hand (an unknown outcome, a date that is text, a date no run can
    /// have) is named in `skipped`; the other runs are shown, in log and energy alike.
    @Test func damagedRunRowsAreNamedAndTheOthersShown() throws {
        let home = try StateHome()
        try fill(home)
        let database = home.url.appendingPathComponent("bgtask/com.example.feedreader/scheduler.sqlite").path
        var handle: OpaquePointer?
        try #require(sqlite3_open(database, &handle) == SQLITE_OK)
        let sql = "UPDATE runs SET outcome = 'weird' WHERE id = 1; UPDATE runs SET ended_at = 'abc' WHERE id = 2; UPDATE runs SET ended_at = 1e300 WHERE id = 3;"
        #expect(sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK)
        sqlite3_close(handle)
        let options = try parseLog(["--json", "--state", home.url.appendingPathComponent("bgtask/com.example.feedreader").path])
        var warnings = ""
        let document = try JSONDecoder().decode(LogCommand.Document.self, from: Data(try LogCommand.run(options, environment: [:], now: Self.now) { warnings += $0 }.utf8))
        #expect(document.runs.map(\.id).contains(4), "the undamaged runs are shown")
        #expect(document.runs.allSatisfy { $0.replica == nil }, "a file's runs have no replica")
        #expect(!document.runs.contains { [1, 2, 3].contains($0.id) })
        let skipped = document.envelope.skipped.map(\.error).joined(separator: "\n")
        #expect(skipped.contains("unknown outcome \"weird\" for run#1 (com.example.feedreader/com.example.feedreader.refresh)"), "\(skipped)")
        #expect(skipped.contains("ended_at of run#2 (com.example.feedreader/com.example.feedreader.refresh) is text"), "\(skipped)")
        #expect(skipped.contains("ended_at of run#3 (com.example.feedreader/com.example.feedreader.cleanup) is 1e+300 seconds"), "\(skipped)")
        #expect(warnings.components(separatedBy: "warning: skipped ").count == 4, "one warning per row: \(warnings)")
        #expect(throws: Never.self) { _ = try EnergyCommand.run(options, environment: [:], now: Self.now) { _ in } }
    }

    /// Values no run can have (an infinite or negative energy, a negative CPU time, two CPU
    /// times of 1e308 s whose sum is infinite, an end before the start, a negative peak
    /// memory, a CPU time that is text) are refused row by row with the run, its app and
    /// identifier and the column named: `--json` of log and energy never fails in the
    /// encoder (it did, on the infinities), and no sum takes them in.
    @Test func impossibleRunValuesAreRefusedByNameAndNeverBreakTheJSON() throws {
        let home = try StateHome()
        try fill(home)
        let reader = try home.store(Self.feedReader)
        for id in Int64(5) ... 11 {
            try record(reader, id, app: Self.feedReader, identifier: "com.example.feedreader.refresh", hoursAgo: 0.5, duration: 1, cpuTime: 0.1, energyJoules: 1)
        }
        let database = home.url.appendingPathComponent("bgtask/com.example.feedreader/scheduler.sqlite").path
        var handle: OpaquePointer?
        try #require(sqlite3_open(database, &handle) == SQLITE_OK)
        let sql = """
            UPDATE runs SET energy_joules = 9e999 WHERE id = 5; UPDATE runs SET energy_joules = -1 WHERE id = 6;
            UPDATE runs SET cpu_time = -3 WHERE id = 7; UPDATE runs SET cpu_time = 1e308 WHERE id IN (8, 9);
            UPDATE runs SET ended_at = started_at - 100 WHERE id = 10; UPDATE runs SET peak_memory = -1, cpu_time = 'lots' WHERE id = 11;
            """
        #expect(sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK)
        sqlite3_close(handle)
        let options = try parseLog(["--json", "--state", home.url.appendingPathComponent("bgtask/com.example.feedreader").path])

        var warnings = ""
        let log = try JSONDecoder().decode(LogCommand.Document.self, from: Data(try LogCommand.run(options, environment: [:], now: Self.now) { warnings += $0 }.utf8))
        #expect(log.runs.map(\.id) == [1, 2, 3, 4], "only the runs that could have happened")
        let skipped = log.envelope.skipped.map(\.error)
        let refresh = "(com.example.feedreader/com.example.feedreader.refresh)"
        for expected in [
            "energy_joules of run#5 \(refresh) is inf, not a number of joules from 0 to",
            "energy_joules of run#6 \(refresh) is -1.0, not a number of joules from 0 to",
            "cpu_time of run#7 \(refresh) is -3.0, not a number of seconds from 0 to",
            "cpu_time of run#8 \(refresh) is 1e+308",
            "cpu_time of run#9 \(refresh) is 1e+308",
            "ended_at of run#10 \(refresh) is 100.0 seconds before its started_at",
            "cpu_time of run#11 \(refresh) is text, not a number",
        ] {
            #expect(skipped.contains { $0.contains(expected) }, "\(expected) in \(skipped)")
        }
        #expect(skipped.count == 7)
        #expect(warnings.components(separatedBy: "\n").filter { $0.hasPrefix("warning: skipped ") }.count == 7, "\(warnings)")

        let energy = try JSONDecoder().decode(EnergyCommand.Document.self, from: Data(try EnergyCommand.run(options, environment: [:], now: Self.now) { _ in }.utf8))
        let totals = try #require(energy.apps.first)
        #expect(totals.cpuSeconds == 41.5)
        #expect(totals.energyJoules == 388)
        #expect(energy.envelope.skipped.count == 7)

        // In text, the table goes to the output and the warnings apart (standard error).
        var text = try parseLog(["--state", home.url.appendingPathComponent("bgtask/com.example.feedreader").path])
        text.json = false
        warnings = ""
        let table = try LogCommand.run(text, environment: [:], now: Self.now) { warnings += $0 }
        #expect(!table.contains("warning"))
        #expect(warnings.contains("run#5 \(refresh)"))
    }

    @Test func logJSONDecodesWithEveryField() throws {
        let home = try StateHome()
        try fill(home)
        let options = try parseLog(["--json", "--state", home.url.appendingPathComponent("bgtask/com.example.feedreader").path])
        let output = try LogCommand.run(options, environment: [:], now: Self.now, warn: Self.noWarning)
        let document = try JSONDecoder().decode(LogCommand.Document.self, from: Data(output.utf8))
        #expect(document.envelope.stores.count == 1)
        #expect(document.envelope.stores[0].hasSuffix("com.example.feedreader/scheduler.sqlite"))
        #expect(document.envelope.skipped.isEmpty)
        #expect(document.runs.map(\.id) == [1, 2, 3, 4])
        let first = document.runs[0]
        #expect(first.app == "com.example.feedreader")
        #expect(first.identifier == "com.example.feedreader.refresh")
        #expect(first.kind == "refresh")
        #expect(first.startedAt == "2026-11-29T06:00:00.000Z")
        #expect(first.endedAt == "2026-11-29T06:00:04.000Z")
        #expect(first.outcome == "success")
        #expect(first.wallTime == 4)
        #expect(first.cpuTime == 0.5)
        #expect(first.peakMemoryBytes == 52_428_800)
        #expect(first.energyJoules == 3)
        #expect(first.stopReason == "completed")

        // Unknown values are present as null, not missing.
        let object = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        let runs = try #require(object["runs"] as? [[String: Any]])
        let running = runs[3]
        for key in ["endedAt", "outcome", "wallTime", "cpuTime", "peakMemoryBytes", "energyJoules", "stopReason", "success"] {
            #expect(running[key] is NSNull, "\(key) should be null")
        }
        #expect(object["since"] is NSNull)
    }

    @Test("a run interrupted by a stop of its scheduler shows its end but no wall time: the span holds time nothing watched")
    func anInterruptedRunHasNoWallTime() throws {
        let home = try StateHome()
        let reader = try home.store(Self.feedReader)
        // Ended as recovery ends it: at the next start, here 7 hours after its launch.
        try record(reader, 1, app: Self.feedReader, identifier: "com.example.feedreader.refresh", hoursAgo: 8,
                   duration: 7 * 3_600, outcome: .interrupted, cpuTime: 2, peakMemoryBytes: 52_428_800, energyJoules: 7,
                   stopReason: "the scheduler stopped while the run was in progress")
        try record(reader, 2, app: Self.feedReader, identifier: "com.example.feedreader.refresh", hoursAgo: 1, duration: 4)
        let state = home.url.appendingPathComponent("bgtask/com.example.feedreader").path
        let output = try LogCommand.run(try parseLog(["--json", "--state", state]), environment: [:], now: Self.now, warn: Self.noWarning)
        let document = try JSONDecoder().decode(LogCommand.Document.self, from: Data(output.utf8))
        #expect(document.runs.map(\.outcome) == ["interrupted", "success"])
        #expect(document.runs[0].endedAt == "2026-11-30T11:00:00.000Z")
        #expect(document.runs[0].wallTime == nil)
        #expect(document.runs[1].wallTime == 4)
        let text = try LogCommand.run(try parseLog(["--state", state]), environment: [:], now: Self.now, warn: Self.noWarning)
        let line = try #require(text.split(separator: "\n").first { $0.contains("interrupted") })
        #expect(!line.contains(DurationText.measured(7 * 3_600)), "\(line)")
        #expect(line.contains(" - "), "the wall time, the one figure not known: \(line)")
    }

    @Test func anEmptyLogSaysSoAndWhere() throws {
        let home = try StateHome()
        let nothing = try LogCommand.run(RunLogOptions(), environment: home.environment, now: Self.now, warn: Self.noWarning)
        #expect(nothing == "no runs recorded in \(home.url.path)/bgtask\n")

        _ = try home.store(Self.feedReader)
        let empty = try LogCommand.run(RunLogOptions(), environment: home.environment, now: Self.now, warn: Self.noWarning)
        #expect(empty.hasPrefix("no runs recorded in \(home.url.path)/bgtask/com.example.feedreader/scheduler.sqlite"))
        let energy = try EnergyCommand.run(RunLogOptions(), environment: home.environment, now: Self.now, warn: Self.noWarning)
        #expect(energy.hasPrefix("no runs recorded in"))

        var json = RunLogOptions()
        json.json = true
        let document = try JSONDecoder().decode(LogCommand.Document.self, from: Data(try LogCommand.run(json, environment: home.environment, now: Self.now, warn: Self.noWarning).utf8))
        #expect(document.runs.isEmpty)
        #expect(document.envelope.stores.count == 1)
    }

    @Test func theDefaultStateHomeIsUnderHOME() throws {
        let home = try StateHome()
        let base = home.url.appendingPathComponent(".local/state/bgtask/com.example.a")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        let store = try SchedulerStore.open(at: base.appendingPathComponent("scheduler.sqlite"), now: Self.now).0
        try record(store, 1, app: AppID("com.example.a"), identifier: "t", hoursAgo: 1, duration: 1)
        let output = try LogCommand.run(RunLogOptions(), environment: ["HOME": home.url.path, "XDG_STATE_HOME": "relative/ignored"], now: Self.now, warn: Self.noWarning)
        #expect(output.hasPrefix("1 run recorded in \(base.path)/scheduler.sqlite"))
    }

    @Test func missingStateDirectoriesAndUnsetHomeAreErrors() throws {
        let home = try StateHome()
        let missing = home.url.appendingPathComponent("nope").path
        let noDirectory = try #require(throws: RunLogError.self) {
            try LogCommand.run(try parseLog(["--state", missing]), environment: [:], now: Self.now, warn: Self.noWarning)
        }
        #expect(noDirectory.message.contains(missing))
        let noStore = try #require(throws: RunLogError.self) {
            try LogCommand.run(try parseLog(["--state", home.url.path]), environment: [:], now: Self.now, warn: Self.noWarning)
        }
        #expect(noStore.message.contains("scheduler.sqlite"))
        let noHome = try #require(throws: RunLogError.self) {
            try EnergyCommand.run(RunLogOptions(), environment: [:], now: Self.now, warn: Self.noWarning)
        }
        #expect(noHome.message.contains("--state"))
    }

    /// A --state that is a symbolic link loop (or whose store is one) is there, in `ls`:
    /// named for what it is, never "does not exist".
    @Test func aStateDirectoryOrStoreThatIsALinkLoopIsNamedNotMissing() throws {
        let home = try StateHome()
        let loop = home.url.appendingPathComponent("loop").path
        try FileManager.default.createSymbolicLink(atPath: loop, withDestinationPath: loop)
        for run in [{ try LogCommand.run(try parseLog(["--state", loop]), environment: [:], now: Self.now, warn: Self.noWarning) },
                    { try EnergyCommand.run(try parseLog(["--state", loop]), environment: [:], now: Self.now, warn: Self.noWarning) }] {
            let error = try #require(throws: RunLogError.self) { _ = try run() }
            #expect(error.message == "--state \(loop) cannot be read: it is a symbolic link loop (too many levels of symbolic links)")
        }
        let directory = home.url.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = directory.appendingPathComponent("scheduler.sqlite").path
        try FileManager.default.createSymbolicLink(atPath: store, withDestinationPath: store)
        let storeLoop = try #require(throws: RunLogError.self) {
            try LogCommand.run(try parseLog(["--state", directory.path]), environment: [:], now: Self.now, warn: Self.noWarning)
        }
        #expect(storeLoop.message == "the scheduler store \(store) cannot be read: it is a symbolic link loop (too many levels of symbolic links)")
    }

    @Test func aDamagedStoreIsSkippedNamedAndLeftInPlace() throws {
        let home = try StateHome()
        try fill(home)
        let broken = try home.appDirectory(AppID("com.example.broken")).appendingPathComponent("scheduler.sqlite")
        let garbage = Data(String(repeating: "garbage\n", count: 600).utf8)
        try garbage.write(to: broken)

        var warnings = ""
        let output = try LogCommand.run(RunLogOptions(), environment: home.environment, now: Self.now) { warnings += $0 }
        #expect(output.hasPrefix("5 runs recorded"))
        // The warning goes apart from the output (standard error), which may be JSON.
        #expect(!output.contains("warning"))
        #expect(warnings.hasPrefix("warning: skipped \(broken.path)"))
        #expect(try Data(contentsOf: broken) == garbage)
        #expect(try FileManager.default.contentsOfDirectory(atPath: broken.deletingLastPathComponent().path) == ["scheduler.sqlite"])

        // The only store named, and unreadable: an error naming it.
        let error = try #require(throws: RunLogError.self) {
            try LogCommand.run(try parseLog(["--state", broken.deletingLastPathComponent().path]), environment: [:], now: Self.now, warn: Self.noWarning)
        }
        #expect(error.message.contains(broken.path))
    }

    @Test func readingTheLogLeavesARunInProgressInProgress() throws {
        let home = try StateHome()
        try fill(home)
        _ = try LogCommand.run(RunLogOptions(), environment: home.environment, now: Self.now, warn: Self.noWarning)
        let store = try SchedulerStore.openForReading(at: home.appDirectory(Self.feedReader).appendingPathComponent("scheduler.sqlite"))
        #expect(try store.run(RunID(4))?.endedAt == nil)
    }

    // MARK: energy

    @Test func energySumsPerAppAndTask() throws {
        let home = try StateHome()
        try fill(home)
        let output = try EnergyCommand.run(RunLogOptions(), environment: home.environment, now: Self.now, warn: Self.noWarning)
        let lines = output.split(separator: "\n").map(String.init)
        let header = try #require(lines.first { $0.hasPrefix("APP") })
        for column in ["TASK", "RUNS", "EXPIRED", "MEAN", "P95", "CPU", "ENERGY"] {
            #expect(header.contains(column), "missing column \(column)")
        }
        let refresh = try #require(lines.first { $0.contains("com.example.feedreader.refresh") })
        #expect(refresh.contains("  2  ") && refresh.contains("5.00 s") && refresh.contains("6.00 s")
            && refresh.contains("1.50 s") && refresh.hasSuffix("8.00 J"), "\(refresh)")
        let cleanup = try #require(lines.first { $0.contains("com.example.feedreader.cleanup") })
        #expect(cleanup.contains("  1  ") && cleanup.contains("380.0 J"), "\(cleanup)")
        let total = try #require(lines.first { $0.contains("(all tasks)") })
        #expect(total.hasPrefix("com.example.feedreader") && total.contains("  3  ") && total.hasSuffix("388.0 J"), "\(total)")
        let photos = try #require(lines.first { $0.contains("com.example.photos.sync") })
        #expect(photos.hasSuffix("0.00 J *"))
        #expect(output.contains("1 run has no energy estimate"))
        #expect(output.contains("1 run is still in progress"))
    }

    @Test func energyJSONDecodesWithTasksAndApps() throws {
        let home = try StateHome()
        try fill(home)
        let options = try EnergyCommand.parse(["--json", "--app", "com.example.feedreader", "--since", "2026-11-29T12:00:00Z"]).get()
        let output = try EnergyCommand.run(options, environment: home.environment, now: Self.now, warn: Self.noWarning)
        let document = try JSONDecoder().decode(EnergyCommand.Document.self, from: Data(output.utf8))
        #expect(document.envelope.app == "com.example.feedreader")
        #expect(document.envelope.since == "2026-11-29T12:00:00.000Z")
        #expect(document.envelope.stores.count == 2)
        #expect(document.tasks.map(\.identifier) == ["com.example.feedreader.cleanup", "com.example.feedreader.refresh"])
        let refresh = document.tasks[1]
        #expect(refresh.runs == 1)
        #expect(refresh.meanDuration == 6)
        #expect(refresh.p95Duration == 6)
        #expect(refresh.cpuSeconds == 1)
        #expect(refresh.energyJoules == 5)
        let cleanup = document.tasks[0]
        #expect(cleanup.expirations == 1)
        #expect(cleanup.inProgress == 1)
        #expect(document.apps.count == 1)
        #expect(document.apps[0].identifier == nil)
        #expect(document.apps[0].energyJoules == 385)

        let object = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        for key in ["stores", "skipped", "app", "since", "tasks", "apps"] {
            #expect(object.keys.contains(key), "missing \(key)")
        }
    }
}
