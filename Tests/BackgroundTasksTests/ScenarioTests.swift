#if canImport(Glibc)
import Glibc
#endif
@testable import BackgroundTasksTesting
import Foundation
import SchedulerCore
import Testing

/// A scenario document around `day`, with a small battery unless `battery` says otherwise.
private func document(
    days: [String] = ["{}"],
    battery: String? = #"{"level": 0.5, "drainPerHour": 0.1, "chargePerHour": 0.2}"#,
    extra: String = ""
) -> String {
    let batteryEntry = battery.map { #""battery": \#($0),"# } ?? ""
    return #"{"version": 1, "name": "test", \#(extra) \#(batteryEntry) "days": [\#(days.joined(separator: ", "))]}"#
}

/// The scenario in `json`, read as the file `scenarios/trip.json`.
private func parse(_ json: String) throws(ScenarioError) -> Scenario {
    try Scenario.parse(Data(json.utf8), file: "scenarios/trip.json")
}

/// The error reading `json`, or `nil` when it reads.
private func parseError(_ json: String) -> ScenarioError? {
    do {
        _ = try parse(json)
        return nil
    } catch {
        return error
    }
}

/// `offset` hours after `testStart` (a midnight), as a date.
private func at(day: Int = 0, hours: Double) -> Date {
    testStart.addingTimeInterval(TimeInterval(day) * 86_400 + hours * 3600)
}

/// One refused document: the path the error must name and what its message must say.
struct ScenarioErrorCase: Sendable, CustomTestStringConvertible {
    var name: String
    var json: String
    var path: String
    var expectations: [String]

    var testDescription: String { name }
}

/// A hang (a blocking open, a parser loop) fails the suite instead of stopping the run.
@Suite(.timeLimit(.minutes(1))) struct ScenarioParsingTests {
    static let cases: [ScenarioErrorCase] = [
        .init(name: "invalid JSON", json: "{\"version\": 1,\n \"name\": x}", path: "$", expectations: ["expected valid JSON, found an error at line 2, column 10", "near \"x}\""]),
        .init(name: "not an object", json: "[1]", path: "$", expectations: ["expected an object, found an array"]),
        .init(name: "unknown top-level key", json: document(extra: #""nmae": "x","#), path: "$.nmae", expectations: [
            "found unknown key \"nmae\"", "expected one of the keys version, name, description, seed, jitterMinutes, battery, days",
        ]),
        .init(name: "unknown day key", json: document(days: [#"{"powr": []}"#]), path: "$.days[0].powr", expectations: ["found unknown key \"powr\"", "name, power, network"]),
        .init(name: "string for a number", json: document(extra: #""seed": "one","#), path: "$.seed", expectations: ["expected a number, found a string (\"one\")"]),
        .init(name: "number for a boolean", json: document(days: [#"{"network": [{"from": "00:00", "to": "01:00", "metered": 1}]}"#]), path: "$.days[0].network[0].metered", expectations: ["expected a boolean, found a number (1)"]),
        .init(name: "boolean for a number", json: document(battery: #"{"level": true, "drainPerHour": 0.1, "chargePerHour": 0.2}"#), path: "$.battery.level", expectations: ["expected a number, found a boolean (true)"]),
        .init(name: "object for an array", json: #"{"version": 1, "name": "x", "days": {}}"#, path: "$.days", expectations: ["expected an array, found an object"]),
        .init(name: "null for a string", json: document(extra: #""description": null,"#), path: "$.description", expectations: ["expected a string, found null"]),
        .init(name: "missing name", json: #"{"version": 1, "days": [{}]}"#, path: "$", expectations: ["missing required key \"name\": expected a non-empty string"]),
        .init(name: "missing interval end", json: document(days: [#"{"inUse": [{"from": "08:00"}]}"#]), path: "$.days[0].inUse[0]", expectations: ["missing required key \"to\""]),
        .init(name: "missing battery rate", json: document(battery: #"{"level": 0.5, "drainPerHour": 0.1}"#), path: "$.battery", expectations: ["missing required key \"chargePerHour\""]),
        .init(name: "version 2", json: #"{"version": 2, "name": "x", "days": [{}]}"#, path: "$.version", expectations: ["expected version 1, found 2"]),
        .init(name: "empty name", json: #"{"version": 1, "name": "", "days": [{}]}"#, path: "$.name", expectations: ["expected a non-empty string, found \"\""]),
        .init(name: "no days", json: #"{"version": 1, "name": "x", "days": []}"#, path: "$.days", expectations: ["expected a non-empty array of days, found an empty array"]),
        .init(name: "negative seed", json: document(extra: #""seed": -1,"#), path: "$.seed", expectations: ["expected a whole number between 0 and", "found -1"]),
        .init(name: "battery level above 1", json: document(battery: #"{"level": 1.5, "drainPerHour": 0.1, "chargePerHour": 0.2}"#), path: "$.battery.level", expectations: ["expected a number between 0 and 1, found 1.5"]),
        .init(name: "negative drain", json: document(battery: #"{"level": 0.5, "drainPerHour": -0.1, "chargePerHour": 0.2}"#), path: "$.battery.drainPerHour", expectations: ["expected a number from 0 to 100 (levels per hour), found -0.1"]),
        .init(name: "negative in-use drain", json: document(battery: #"{"level": 0.5, "drainPerHour": 0.1, "inUseDrainPerHour": -1, "chargePerHour": 0.2}"#), path: "$.battery.inUseDrainPerHour", expectations: ["expected a number from 0 to 100 (levels per hour), found -1"]),
        .init(name: "time out of range", json: document(days: ["{}", #"{"network": [{"from": "08:00", "to": "25:00"}]}"#]), path: "$.days[1].network[0].to", expectations: ["expected a time HH:MM between 00:00 and 24:00, found \"25:00\""]),
        .init(name: "time without two digits", json: document(days: [#"{"inUse": [{"from": "7:30", "to": "08:00"}]}"#]), path: "$.days[0].inUse[0].from", expectations: ["expected a time HH:MM between 00:00 and 23:59, found \"7:30\""]),
        .init(name: "24:00 as a start", json: document(days: [#"{"inUse": [{"from": "24:00", "to": "24:00"}]}"#]), path: "$.days[0].inUse[0].from", expectations: ["between 00:00 and 23:59, found \"24:00\""]),
        .init(name: "number for a time", json: document(days: [#"{"launches": [{"at": 8}]}"#]), path: "$.days[0].launches[0].at", expectations: ["expected a time HH:MM between 00:00 and 23:59, found a number (8)"]),
        .init(name: "end before start", json: document(days: [#"{"power": [{"from": "08:00", "to": "07:00"}]}"#]), path: "$.days[0].power[0].to", expectations: ["expected a time after the start \"08:00\", found \"07:00\" (negative or empty duration)"]),
        .init(name: "empty interval", json: document(days: [#"{"lowPowerMode": [{"from": "08:00", "to": "08:00"}]}"#]), path: "$.days[0].lowPowerMode[0].to", expectations: ["negative or empty duration"]),
        .init(name: "overlapping intervals", json: document(days: [#"{"network": [{"from": "08:00", "to": "10:00"}, {"from": "09:00", "to": "11:00"}]}"#]), path: "$.days[0].network[1].from", expectations: [
            "expected a start at or after \"10:00\"", "found \"09:00\"", "(intervals overlap or are out of order)",
        ]),
        .init(name: "intervals out of order", json: document(days: [#"{"thermal": [{"from": "10:00", "to": "11:00", "state": "fair"}, {"from": "08:00", "to": "09:00", "state": "fair"}]}"#]), path: "$.days[0].thermal[1].from", expectations: ["\"11:00\"", "found \"08:00\""]),
        .init(name: "launches out of order", json: document(days: [#"{"launches": [{"at": "12:00"}, {"at": "08:00"}]}"#]), path: "$.days[0].launches[1].at", expectations: ["expected a launch at or after \"12:00\"", "found \"08:00\" (launches out of order)"]),
        .init(name: "launch of no minutes", json: document(days: [#"{"launches": [{"at": "12:00", "minutes": 0}]}"#]), path: "$.days[0].launches[0].minutes", expectations: ["expected a number of minutes above 0 and at most 1440, found 0"]),
        .init(name: "launch of negative minutes", json: document(days: [#"{"launches": [{"at": "12:00", "minutes": -5}]}"#]), path: "$.days[0].launches[0].minutes", expectations: ["found -5"]),
        .init(name: "probability above 1", json: document(days: [#"{"launches": [{"at": "12:00", "probability": 1.2}]}"#]), path: "$.days[0].launches[0].probability", expectations: ["expected a probability between 0 and 1, found 1.2"]),
        .init(name: "empty app", json: document(days: [#"{"launches": [{"at": "12:00", "app": ""}]}"#]), path: "$.days[0].launches[0].app", expectations: ["expected a non-empty string (an app identifier) or null"]),
        .init(name: "app of one label", json: document(days: [#"{"launches": [{"at": "12:00", "app": "feedreader"}]}"#]), path: "$.days[0].launches[0].app", expectations: [
            "expected an app identifier (as a manifest's CFBundleIdentifier) or null, found \"feedreader\"", "only one label",
        ]),
        .init(name: "app with a space", json: document(days: [#"{"launches": [{"at": "12:00", "app": "com.example.feedreader "}]}"#]), path: "$.days[0].launches[0].app", expectations: ["a space"]),
        .init(name: "jitter above 120", json: document(extra: #""jitterMinutes": 121,"#), path: "$.jitterMinutes", expectations: ["expected a whole number of minutes between 0 and 120, found 121"]),
        .init(name: "fractional jitter", json: document(extra: #""jitterMinutes": 2.5,"#), path: "$.jitterMinutes", expectations: ["found 2.5"]),
        // A Double would round these to 120 and to 1: read as written.
        .init(name: "jitter a hair above 120", json: document(extra: #""jitterMinutes": 120.00000000000000001,"#), path: "$.jitterMinutes", expectations: ["found 120.00000000000000001"]),
        .init(name: "jitter a hair below 120", json: document(extra: #""jitterMinutes": 119.99999999999999999,"#), path: "$.jitterMinutes", expectations: ["found 119.99999999999999999"]),
        .init(name: "version a hair above 1", json: #"{"version": 1.0000000000000000001, "name": "x", "days": [{}]}"#, path: "$.version", expectations: ["expected version 1, found 1.0000000000000000001"]),
        .init(name: "unknown thermal state", json: document(days: [#"{"thermal": [{"from": "12:00", "to": "13:00", "state": "hot"}]}"#]), path: "$.days[0].thermal[0].state", expectations: ["expected one of fair, serious, critical, found \"hot\""]),
        .init(name: "nominal thermal interval", json: document(days: [#"{"thermal": [{"from": "12:00", "to": "13:00", "state": "nominal"}]}"#]), path: "$.days[0].thermal[0].state", expectations: ["found \"nominal\""]),
        .init(name: "duplicate top-level key", json: #"{"version": 1, "name": "a", "name": "b", "days": [{}]}"#, path: "$.name", expectations: ["duplicate key \"name\"", "line 1, column 29"]),
        .init(name: "duplicate nested key", json: document(days: [#"{"launches": [{"at": "12:00", "at": "13:00"}]}"#]), path: "$.days[0].launches[0].at", expectations: ["duplicate key \"at\""]),
        .init(name: "huge seed", json: document(extra: #""seed": 1e300,"#), path: "$.seed", expectations: ["expected a whole number between 0 and", "found 1e300"]),
        .init(name: "seed of 2^64, shown as written", json: document(extra: #""seed": 18446744073709551616,"#), path: "$.seed", expectations: ["found 18446744073709551616"]),
        .init(name: "huge jitter", json: document(extra: #""jitterMinutes": 1e19,"#), path: "$.jitterMinutes", expectations: ["between 0 and 120"]),
        .init(name: "huge drain", json: document(battery: #"{"level": 0.5, "drainPerHour": 1e300, "chargePerHour": 0.2}"#), path: "$.battery.drainPerHour", expectations: ["from 0 to 100"]),
        .init(name: "huge launch", json: document(days: [#"{"launches": [{"at": "12:00", "minutes": 1e19}]}"#]), path: "$.days[0].launches[0].minutes", expectations: ["at most 1440"]),
        // A Double would round these to 2^53, the largest seed: they are read as written.
        .init(name: "seed one above 2^53", json: document(extra: #""seed": 9007199254740993,"#), path: "$.seed", expectations: ["expected a whole number between 0 and 9007199254740992, found 9007199254740993"]),
        .init(name: "seed above 2^53 with an exponent", json: document(extra: #""seed": 90071992547409930e-1,"#), path: "$.seed", expectations: ["found 9007199254740993"]),
        .init(name: "fractional seed next to 2^53", json: document(extra: #""seed": 9007199254740992.5,"#), path: "$.seed", expectations: ["found 9007199254740992.5"]),
        .init(name: "fractional seed a Double makes 1", json: document(extra: #""seed": 0.99999999999999999999,"#), path: "$.seed", expectations: ["found 0.99999999999999999999"]),
        .init(name: "seed of UInt64.max", json: document(extra: #""seed": 18446744073709551615,"#), path: "$.seed", expectations: ["found 18446744073709551615"]),
        // Control characters in printed strings, escaped in JSON or raw where JSON allows it.
        .init(name: "ESC in the name", json: #"{"version": 1, "name": "a\u001b[2Jb", "days": [{}]}"#, path: "$.name", expectations: [
            "expected a string without control characters (U+0000-U+001F, U+007F-U+009F), found U+001B in \"a\\u001B[2Jb\"",
        ]),
        .init(name: "NUL in the description", json: document(extra: #""description": "x\u0000y","#), path: "$.description", expectations: ["found U+0000"]),
        .init(name: "raw DEL in a day's name", json: document(days: ["{\"name\": \"d\u{7F}\"}"]), path: "$.days[0].name", expectations: ["found U+007F in \"d\\u007F\""]),
        .init(name: "C1 control in a launch's app", json: document(days: ["{\"launches\": [{\"at\": \"08:00\", \"app\": \"com.\u{9B}x\"}]}"]), path: "$.days[0].launches[0].app", expectations: ["found U+009B"]),
        .init(name: "tab in a thermal state", json: document(days: [#"{"thermal": [{"from": "12:00", "to": "13:00", "state": "fair\t"}]}"#]), path: "$.days[0].thermal[0].state", expectations: ["found U+0009"]),
        .init(name: "number too large for a double", json: document(extra: #""seed": 1e400,"#), path: "$.seed", expectations: ["expected a number within the range of a Double", "found 1e400 (line"]),
        .init(name: "a battery level too large for a double", json: document(days: ["{}"], battery: #"{"level": 1e400, "drainPerHour": 0.05, "inUseDrainPerHour": 0.15, "chargePerHour": 0.4}"#), path: "$.battery.level", expectations: ["found 1e400 (line"]),
        .init(name: "nesting too deep", json: "[" + String(repeating: "[", count: 600), path: "$", expectations: ["nested at most 512 deep"]),
        .init(name: "power without a battery", json: document(days: [#"{"power": [{"from": "00:00", "to": "07:00"}]}"#], battery: nil), path: "$.days[0].power", expectations: ["expected no \"power\" key", "without \"battery\""]),
    ]

    @Test(arguments: cases) func refusesWithFilePathAndExpectation(_ errorCase: ScenarioErrorCase) throws {
        let error = try #require(parseError(errorCase.json), "\(errorCase.name) was accepted")
        #expect(error.file == "scenarios/trip.json")
        #expect(error.path == errorCase.path, "\(error)")
        for expectation in errorCase.expectations {
            #expect(error.message.contains(expectation), "\(error)")
        }
    }

    /// Whole numbers however JSON writes them: read from their text, not through a Double.
    @Test(arguments: [("1", "0", 0), ("1.0", "1.5e1", 15), ("1e0", "120.000", 120), ("10e-1", "12E+1", 120)])
    func wholeNumbersAreReadAsWritten(version: String, jitter: String, minutes: Int) throws {
        let scenario = try parse(#"{"version": \#(version), "name": "x", "jitterMinutes": \#(jitter), "days": [{}]}"#)
        #expect(scenario.jitterMinutes == minutes)
    }

    /// Keys and values are shown escaped in every message: a raw ESC would reach the terminal.
    @Test(arguments: [
        #"{"version": 1, "name": "x", "days": [{}], "\u001b[31m": 1}"#,
        #"{"version": 1, "name": "x", "days": [{"\u001b]0;t\u0007": []}]}"#,
        #"{"version": 1, "name": "x", "days": [{}], "k\u009b": 1, "k\u009b": 2}"#,
        #"{"version": 1, "name": "x", "days": [{"network": [{"from": "00:00", "to": "01:00", "metered": "\u001b"}]}]}"#,
        #"{"version": 1, "name": "x", "days": [{"inUse": [{"from": "\u001b", "to": "01:00"}]}]}"#,
    ])
    func errorsNeverEchoAControlCharacter(json: String) throws {
        let error = try #require(parseError(json))
        #expect(!error.description.unicodeScalars.contains { $0.properties.generalCategory == .control }, "\(error.description.debugDescription)")
        #expect(error.description.contains("\\u001B") || error.description.contains("\\u009B"), "\(error.description)")
    }

    @Test func describesAnErrorAsFilePathMessage() throws {
        let error = try #require(parseError(document(days: ["{}", #"{"network": [{"from": "00:00", "to": "25:00"}]}"#])))
        #expect(error.description == #"scenarios/trip.json: $.days[1].network[0].to: expected a time HH:MM between 00:00 and 24:00, found "25:00""#)
        #expect(ScenarioError(path: "$", message: "m").description == "$: m")
    }

    @Test func loadNamesTheFileAndTheSystemsReason() throws {
        let missing = URL(fileURLWithPath: "/nonexistent/scenarios/trip.json")
        #expect(throws: ScenarioError(file: missing.path, path: "$", message: "expected a readable scenario file, found nothing: no such file or directory")) {
            try Scenario.load(from: missing)
        }
    }

    @Test func loadRefusesAFIFOWithoutWaiting() throws {
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("scenario-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: fifo) }
        #expect(mkfifo(fifo.path, 0o600) == 0)
        #expect(throws: ScenarioError(file: fifo.path, path: "$", message: "expected a readable scenario file, found a FIFO (named pipe)")) {
            try Scenario.load(from: fifo)
        }
    }

    @Test func aHugeKeyOrValueIsCutInTheMessage() throws {
        let key = String(repeating: "k", count: 200_000)
        let error = try #require(throws: ScenarioError.self) { try parse(document(extra: "\"\(key)\": 1,")) }
        let text = error.description
        #expect(text.count < 1_000, "\(text.prefix(300))")
        #expect(text.hasSuffix("..."), "\(text.suffix(300))")
    }

    @Test func aLaunchTooShortToMeasureStillOpensTheApp() throws {
        // "above 0" allows a length that vanishes next to the instant's magnitude: the
        // session lasts a second instead, and the launch is not lost.
        let scenario = try parse(document(days: [#"{"launches": [{"at": "10:00", "minutes": 1e-300}, {"at": "12:00", "minutes": 0.001}]}"#]))
        let result = try Simulation(scenario: scenario, days: 1, seed: 1).run(modelled: [.feedReader()], recordsTrace: false)
        #expect(result.launches.count == 2, "\(result.launches)")
    }

    @Test func loadReadsAFile() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("scenario-\(UUID().uuidString).json")
        try Data(document(days: [#"{"name": "only"}"#]).utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(try Scenario.load(from: url).days.map(\.name) == ["only"])
    }

    @Test(arguments: [
        ("9007199254740992", 9_007_199_254_740_992), ("9.007199254740992e15", 9_007_199_254_740_992), ("90071992547409920e-1", 9_007_199_254_740_992),
        ("9007199254740991", 9_007_199_254_740_991), ("1e3", 1000), ("1000.000", 1000), ("-0", 0), ("0e99", 0), ("42", 42),
    ] as [(String, UInt64)])
    func aSeedIsReadExactlyAsWritten(text: String, seed: UInt64) throws {
        #expect(try parse(document(extra: #""seed": \#(text),"#)).seed == seed, "\(text)")
    }

    @Test func launchesMustNameSimulatedApps() throws {
        let day = Scenario.Day(launches: [.init(at: 60), .init(at: 120, app: "com.example.a")])
        let scenario = Scenario(name: "s", days: [Scenario.Day(), day])
        #expect(throws: ScenarioError(path: "$.days[1].launches[1].app", message: "expected an app that is simulated (com.example.b, com.example.c) or null for every app, found \"com.example.a\", which no app simulated is")) {
            try scenario.checkLaunchApps(among: ["com.example.b", "com.example.c"])
        }
        #expect(throws: Never.self) { try scenario.checkLaunchApps(among: ["com.example.b", "com.example.a"]) }
        // Launches for every app fit any set of apps.
        #expect(throws: Never.self) { try Scenario(name: "s", days: [Scenario.Day(launches: [.init(at: 60)])]).checkLaunchApps(among: []) }
    }

    @Test func documentedExampleParses() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/scenarios.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        let example = try #require(text.components(separatedBy: "```json\n").dropFirst().first?.components(separatedBy: "```").first)
        let scenario = try Scenario.parse(Data(example.utf8), file: "docs/scenarios.md")
        #expect(scenario.name == "commuter" && scenario.days.first?.launches.first?.app == "com.example.feedreader")
    }

    /// Whole numbers are read from their text as written, however long (a document may hold
    /// a megabyte of digits): the reader goes over them once, where stepping back over a
    /// String's characters took a minute for a seed with 100,000 zeros.
    @Test func longNumbersAreReadAsWritten() throws {
        let zeros = String(repeating: "0", count: 200_000)
        for (seed, expected) in [("5.\(zeros)", UInt64(5)), ("5\(zeros)e-200000", 5), ("0.\(zeros)", 0), ("7\(zeros)e-200000", 7)] {
            let scenario = try Scenario.parse(Data(document(extra: #""seed": \#(seed),"#).utf8), file: "long.json")
            #expect(scenario.seed == expected)
        }
        #expect(JSONNode.wholeNumber(ofLiteral: "1\(zeros)") == nil, "far beyond UInt64")
        #expect(JSONNode.wholeNumber(ofLiteral: "12.5e1") == 125 && JSONNode.wholeNumber(ofLiteral: "125E-1") == nil)
        #expect(JSONNode.wholeNumber(ofLiteral: "-0.0") == 0 && JSONNode.wholeNumber(ofLiteral: "-1") == nil)
        #expect(JSONNode.wholeNumber(ofLiteral: "18446744073709551615") == .max && JSONNode.wholeNumber(ofLiteral: "18446744073709551616") == nil)
        #expect(JSONNode.wholeNumber(ofLiteral: "1e19") == 10_000_000_000_000_000_000 && JSONNode.wholeNumber(ofLiteral: "1e+2") == 100)
        do {
            _ = try Scenario.parse(Data(document(extra: #""jitterMinutes": 1\#(zeros),"#).utf8), file: "long.json")
            Issue.record("a jitter of 10^200000 minutes was read")
        } catch {
            #expect("\(error)".contains("(200001 characters)"))
        }
    }

    @Test func readsEveryFieldAndItsDefaults() throws {
        let day = #"""
            {"name": "d", "power": [{"from": "00:00", "to": "07:00"}],
             "network": [{"from": "00:00", "to": "08:00"}, {"from": "08:00", "to": "24:00", "metered": true}],
             "lowPowerMode": [{"from": "14:00", "to": "18:00"}], "thermal": [{"from": "12:00", "to": "13:00", "state": "serious"}],
             "inUse": [{"from": "07:30", "to": "08:00"}],
             "launches": [{"at": "08:05"}, {"at": "09:00", "minutes": 2.5, "probability": 0.25, "app": "com.example.a"}, {"at": "10:00", "app": null}]}
            """#
        let scenario = try parse(document(days: [day], battery: #"{"level": 1, "drainPerHour": 0.1, "chargePerHour": 0.4}"#, extra: #""description": "one line", "seed": 42, "jitterMinutes": 0,"#))
        #expect(scenario.name == "test")
        #expect(scenario.description == "one line")
        #expect(scenario.seed == 42)
        #expect(scenario.battery == Scenario.Battery(level: 1, drainPerHour: 0.1, inUseDrainPerHour: 0.1, chargePerHour: 0.4))
        let parsed = try #require(scenario.days.first)
        #expect(parsed.power == [.init(from: 0, to: 420)])
        #expect(parsed.network == [.init(from: 0, to: 480, metered: false), .init(from: 480, to: 1440, metered: true)])
        #expect(parsed.thermal == [.init(from: 720, to: 780, state: .serious)])
        #expect(parsed.launches == [
            .init(at: 485, minutes: 5, probability: 1, app: nil),
            .init(at: 540, minutes: 2.5, probability: 0.25, app: "com.example.a"),
            .init(at: 600),
        ])
        let defaults = try parse(document())
        #expect(defaults.seed == 1 && defaults.jitterMinutes == 0 && defaults.description.isEmpty)
    }
}

@Suite struct ScenarioScriptTests {
    /// A scenario of one day with the given lists, no jitter unless asked.
    private func scenario(day: Scenario.Day, battery: Scenario.Battery? = .init(level: 0.5, drainPerHour: 0.1, chargePerHour: 0.1), jitter: Int = 0) -> Scenario {
        Scenario(name: "test", jitterMinutes: jitter, battery: battery, days: [day])
    }

    @Test(arguments: Scenario.builtInNames) func builtInParsesAndScriptsAWeek(_ name: String) throws {
        let json = try #require(Scenario.builtInJSON(named: name))
        let parsed = try Scenario.parse(Data(json.utf8), file: "built-in \(name)")
        #expect(parsed.name == name)
        #expect(Scenario.builtIn(named: name) == parsed)
        let script = parsed.script(start: testStart, days: 7)
        #expect(script.end == at(day: 7, hours: 0))
        var previous = (at: script.start, conditions: script.initialConditions)
        for change in script.changes {
            #expect(change.at > previous.at && change.at < script.end)
            #expect(change.conditions != previous.conditions)
            previous = (change.at, change.conditions)
        }
        #expect(script.sessions.map(\.start) == script.sessions.map(\.start).sorted())
        #expect(script.bands.allSatisfy { script.start <= $0.from && $0.from < $0.to && $0.to <= script.end })
        #expect(script.bands == script.bands.sorted { ($0.kind, $0.from) < ($1.kind, $1.from) })
    }

    /// docs/scenarios.md, "How long a simulation may be": the bound counts each interval's
    /// start and end (power only with a battery) and each launch's, over the days played
    /// as the pattern cycles, and no script holds more condition changes than it.
    @Test func eventBoundCountsTheBoundariesOfTheDaysPlayed() throws {
        let busy = Scenario.Day(power: [.init(from: 0, to: 60)], network: [.init(from: 0, to: 600), .init(from: 700, to: 1440)],
                                inUse: [.init(from: 100, to: 200)], launches: [.init(at: 300), .init(at: 900, probability: 0.5)])
        let quiet = Scenario.Day(network: [.init(from: 0, to: 1440)])
        let withBattery = Scenario(name: "t", battery: .init(level: 0.5, drainPerHour: 0.1, chargePerHour: 0.1), days: [busy, quiet])
        #expect(withBattery.eventBound(days: 0) == 0)
        #expect(withBattery.eventBound(days: 1) == 2 * (1 + 2 + 1 + 2))
        #expect(withBattery.eventBound(days: 2) == 12 + 2)
        #expect(withBattery.eventBound(days: 5) == 3 * 12 + 2 * 2)
        // Without a battery the device is always on power: the power list plays no part.
        let plugged = Scenario(name: "t", days: [busy, quiet])
        #expect(plugged.eventBound(days: 5) == 3 * 10 + 2 * 2)
        #expect(Scenario(name: "empty", days: []).eventBound(days: 3) == 0)
        // Jitter and probability only take away: without a battery's reports, the changes of
        // a script are at most the bound.
        let jittered = Scenario(name: "t", jitterMinutes: 30, days: [busy, quiet])
        for seed in 1...20 as ClosedRange<UInt64> {
            #expect(jittered.script(start: testStart, days: 9, seed: seed).changes.count <= jittered.eventBound(days: 9))
        }
        let server = try #require(Scenario.builtIn(named: "always-plugged-server"))
        #expect(server.script(start: testStart, days: 30).changes.count <= server.eventBound(days: 30))
    }

    @Test func unknownBuiltInIsNil() {
        #expect(Scenario.builtIn(named: "submarine") == nil)
        #expect(Scenario.builtInJSON(named: "submarine") == nil)
    }

    @Test func sameSeedSameScriptOtherSeedOtherScript() throws {
        let commuter = try #require(Scenario.builtIn(named: "commuter"))
        #expect(commuter.script(start: testStart, days: 7) == commuter.script(start: testStart, days: 7))
        #expect(commuter.script(start: testStart, days: 7, seed: 1) == commuter.script(start: testStart, days: 7))
        #expect(commuter.script(start: testStart, days: 7, seed: 2) != commuter.script(start: testStart, days: 7, seed: 1))
        #expect(commuter.script(start: testStart, days: 7, seed: 2).seed == 2)
        // Each day has its own stream: the first week does not depend on how many days follow.
        let week = commuter.script(start: testStart, days: 7)
        let month = commuter.script(start: testStart, days: 30)
        #expect(month.sessions.prefix(week.sessions.count).elementsEqual(week.sessions))
    }

    @Test func serverNeverLeavesPowerAndIsNeverUsed() throws {
        let server = try #require(Scenario.builtIn(named: "always-plugged-server"))
        let script = server.script(start: testStart, days: 7)
        let initial = script.initialConditions
        #expect(initial.externalPower && initial.networkAvailable && initial.deviceIdle)
        #expect(initial.batteryLevel == nil && initial.batteryState == .noBattery && initial.networkMetered == false)
        #expect(script.changes.allSatisfy { $0.conditions.externalPower })
        #expect(script.changes.isEmpty)
        #expect(script.sessions.isEmpty)
        #expect(script.bands == [
            .init(kind: "charging", from: script.start, to: script.end),
            .init(kind: "network", from: script.start, to: script.end),
        ])
    }

    @Test(arguments: Scenario.builtInNames) func batteryStaysInRangeAndRisesWhileCharging(_ name: String) throws {
        let script = try #require(Scenario.builtIn(named: name)).script(start: testStart, days: 7)
        let all = [script.initialConditions] + script.changes.map(\.conditions)
        for (earlier, later) in zip(all, all.dropFirst()) {
            guard let before = earlier.batteryLevel, let after = later.batteryLevel else { continue }
            #expect((0...1).contains(after))
            if earlier.externalPower { #expect(after >= before, "\(earlier) -> \(later)") }
            if !earlier.externalPower { #expect(after <= before, "\(earlier) -> \(later)") }
        }
    }

    @Test func chargingReportsEveryHalfHourUntilFull() {
        let script = scenario(day: .init(power: [.init(from: 0, to: 1440)])).script(start: testStart, days: 1)
        #expect(script.initialConditions.batteryLevel == 0.5 && script.initialConditions.batteryState == .charging)
        // 0.1 per hour from 0.5: full at 05:00, reported every half hour until then, flat after.
        let halfHours: [Date] = (1...10).map { at(hours: Double($0) / 2) }
        let levels: [Double?] = [0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1]
        #expect(script.changes.map(\.at) == halfHours)
        #expect(script.changes.map(\.conditions.batteryLevel) == levels)
        #expect(script.changes.last?.conditions.batteryState == .full)
        #expect(script.changes.dropLast().allSatisfy { $0.conditions.batteryState == .charging })
    }

    @Test func drainingStopsAtEmptyAndUsesTheInUseRate() {
        let battery = Scenario.Battery(level: 0.2, drainPerHour: 0.1, inUseDrainPerHour: 0.4, chargePerHour: 0)
        let day = Scenario.Day(inUse: [.init(from: 0, to: 15)])
        let script = scenario(day: day, battery: battery).script(start: testStart, days: 1)
        // 0.4/h for 15 minutes (0.1), then 0.1/h: empty at 01:15.
        #expect(script.conditions(at: at(hours: 0.25)).batteryLevel == 0.1)
        #expect(script.conditions(at: at(hours: 0.25)).batteryState == .discharging)
        #expect(script.changes.last?.at == at(hours: 1.25))
        #expect(script.changes.last?.conditions.batteryLevel == 0)
        #expect(script.conditions(at: at(hours: 20)).batteryLevel == 0)
    }

    @Test func commuterConditionsAtKnownInstants() throws {
        let script = try #require(Scenario.builtIn(named: "commuter")).script(start: testStart, days: 7)
        let night = script.conditions(at: at(hours: 3))
        #expect(night.externalPower && night.networkAvailable && night.networkMetered == false && night.deviceIdle)
        #expect(night.batteryState == .charging || night.batteryState == .full)
        let commute = script.conditions(at: at(hours: 7.75))
        #expect(!commute.externalPower && commute.batteryState == .discharging)
        #expect(!commute.networkAvailable || commute.networkMetered == true)
        #expect(!commute.deviceIdle)
        #expect(script.conditions(at: at(hours: 22.5)).lowPowerMode, "Low Power Mode at bedtime")
        // Saturday (day 5) is a weekend day: still on the charger at 08:00.
        #expect(script.conditions(at: at(day: 5, hours: 8)).externalPower)
        #expect(!script.conditions(at: at(day: 0, hours: 8.5)).externalPower)
    }

    @Test func conditionsAtFollowsTheChanges() throws {
        let script = try #require(Scenario.builtIn(named: "travel")).script(start: testStart, days: 3)
        #expect(script.conditions(at: script.start) == script.initialConditions)
        #expect(script.conditions(at: script.start.addingTimeInterval(-1)) == script.initialConditions)
        for (index, change) in script.changes.enumerated() {
            #expect(script.conditions(at: change.at) == change.conditions)
            let next = index + 1 < script.changes.count ? script.changes[index + 1].at : script.end
            #expect(script.conditions(at: next.addingTimeInterval(-0.5)) == change.conditions)
        }
        // The flight is offline from 07:00 (give or take the 30 minutes of jitter) to 17:00.
        #expect(!script.conditions(at: at(hours: 12)).networkAvailable)
        #expect(script.conditions(at: at(hours: 12)).lowPowerMode)
        #expect(script.conditions(at: at(day: 1, hours: 15)).thermalState == .fair)
    }

    @Test func sessionsHaveTheirAppsAndLengthsAndCountAsInUse() {
        let day = Scenario.Day(launches: [.init(at: 480, minutes: 7, app: "com.example.a"), .init(at: 1200, minutes: 2.5)])
        let script = scenario(day: day).script(start: testStart, days: 3)
        let expected = (0..<3).flatMap { index in
            [
                ScenarioScript.ForegroundSession(app: "com.example.a", start: at(day: index, hours: 8), end: at(day: index, hours: 8).addingTimeInterval(420)),
                ScenarioScript.ForegroundSession(app: nil, start: at(day: index, hours: 20), end: at(day: index, hours: 20).addingTimeInterval(150)),
            ]
        }
        #expect(script.sessions == expected)
        #expect(!script.conditions(at: at(day: 1, hours: 8.05)).deviceIdle)
        #expect(script.conditions(at: at(day: 1, hours: 8.2)).deviceIdle)
        #expect(script.bands.filter { $0.kind == "in-use" }.count == 6)
    }

    @Test func sessionAtTheEndIsCut() {
        let day = Scenario.Day(launches: [.init(at: 1435, minutes: 30)])
        let script = scenario(day: day).script(start: testStart, days: 1)
        #expect(script.sessions.map(\.end) == [script.end])
    }

    @Test(arguments: [(0.0, 0), (1.0, 30)]) func probabilityDecidesEveryDay(_ probability: Double, sessions: Int) {
        let day = Scenario.Day(launches: [.init(at: 600, probability: probability)])
        #expect(scenario(day: day, jitter: 30).script(start: testStart, days: 30).sessions.count == sessions)
    }

    @Test func halfProbabilityHappensOnSomeDays() {
        let day = Scenario.Day(launches: [.init(at: 600, probability: 0.5)])
        let count = scenario(day: day).script(start: testStart, days: 200).sessions.count
        #expect((60...140).contains(count), "\(count) of 200")
    }

    @Test func bandsMergeAcrossMidnight() throws {
        let script = try #require(Scenario.builtIn(named: "night-charger")).script(start: testStart, days: 7)
        let charging = script.bands.filter { $0.kind == "charging" }
        // 00:00-06:30 on the first day, then one band per night, then the last evening.
        #expect(charging.count == 8)
        #expect(charging.first?.from == script.start && charging.last?.to == script.end)
        #expect(script.bands.filter { $0.kind == "network" }.count == 1)
    }

    @Test func thermalBandsAreLabelled() throws {
        let day = Scenario.Day(thermal: [.init(from: 600, to: 660, state: .fair), .init(from: 660, to: 720, state: .critical)])
        let bands = scenario(day: day).script(start: testStart, days: 1).bands.filter { $0.kind == "thermal" }
        #expect(bands == [
            .init(kind: "thermal", from: at(hours: 10), to: at(hours: 11), label: "fair"),
            .init(kind: "thermal", from: at(hours: 11), to: at(hours: 12), label: "critical"),
        ])
    }

    @Test func jitterKeepsEveryListOrderedAndInTheDay() throws {
        // Dense lists that touch, so 120 minutes of jitter pushes boundaries past each other.
        let hours = (0..<12).map { Scenario.Interval(from: $0 * 120, to: $0 * 120 + 120) }
        let day = Scenario.Day(
            power: hours,
            network: hours.map { .init(from: $0.from, to: $0.to, metered: $0.from % 240 == 0) },
            thermal: hours.map { .init(from: $0.from + 30, to: $0.to - 30, state: .serious) },
            inUse: hours.map { .init(from: $0.from + 50, to: $0.from + 60) },
            launches: (0..<24).map { .init(at: $0 * 60 + 30, probability: 0.5) }
        )
        let jittery = scenario(day: day, jitter: 120)
        let nightOnPower = scenario(day: .init(power: [.init(from: 0, to: 600), .init(from: 900, to: 1440)]), jitter: 120)
        for seed in UInt64(0)..<300 {
            let drawn = try #require(jittery.drawnDay(Int(seed % 7), seed: seed))
            for list in [drawn.power, drawn.inUse] { expectOrdered(list.map { ($0.from, $0.to) }, seed: seed) }
            expectOrdered(drawn.network.map { ($0.from, $0.to) }, seed: seed)
            expectOrdered(drawn.thermal.map { ($0.from, $0.to) }, seed: seed)
            let launchTimes = drawn.launches.map(\.at)
            #expect(launchTimes == launchTimes.sorted() && launchTimes.allSatisfy { (0..<1440).contains($0) }, "seed \(seed)")
            let night = try #require(nightOnPower.drawnDay(0, seed: seed)).power
            #expect(night.first?.from == 0 && night.last?.to == 1440, "midnight does not move (seed \(seed))")
        }
        #expect(jittery.drawnDay(0, seed: 1) != jittery.drawnDay(0, seed: 2))
        #expect(scenario(day: day).drawnDay(3)?.network == day.network)
    }

    private func expectOrdered(_ intervals: [(from: Int, to: Int)], seed: UInt64) {
        for interval in intervals {
            #expect(0 <= interval.from && interval.from < interval.to && interval.to <= 1440, "seed \(seed)")
        }
        for (earlier, later) in zip(intervals, intervals.dropFirst()) {
            #expect(earlier.to <= later.from, "seed \(seed)")
        }
    }

    @Test func toleratesUncheckedScenarios() {
        let odd = Scenario(name: "odd", jitterMinutes: -5, battery: .init(level: 3, drainPerHour: 0.1, chargePerHour: 0.1), days: [
            .init(power: [.init(from: 900, to: 100), .init(from: -10, to: 5000)], launches: [.init(at: 2000, minutes: -1)]),
        ])
        let script = odd.script(start: testStart, days: 2)
        #expect(script.sessions.isEmpty)
        #expect(Scenario(name: "none", days: []).script(start: testStart, days: 3).changes.isEmpty)
        #expect(odd.script(start: testStart, days: -1).end == testStart)
    }
}

@Suite struct ScenarioSeededRandomTests {
    @Test func isTheReferenceSplitMix64() {
        // The first outputs of SplitMix64 seeded with 0, as in the reference implementation.
        var random = SeededRandom(seed: 0)
        #expect([random.next(), random.next(), random.next()] == [0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F])
    }

    @Test func drawsStayInRangeAndCoverIt() {
        var random = SeededRandom(seed: 7, stream: 3)
        var seen = Set<Int>()
        for _ in 0..<2_000 {
            let value = random.int(in: -3...3)
            seen.insert(value)
            let unit = random.unit()
            #expect((0..<1).contains(unit))
        }
        #expect(seen == Set(-3...3))
        #expect(random.int(in: 5...5) == 5)
        #expect(random.int(in: Int.min...Int.max) != random.int(in: Int.min...Int.max))
    }
}
