@testable import bgtask
import BackgroundTasks
import BackgroundTasksTesting
import DaemonProtocol
import Foundation
import SchedulerStore
import Testing
import SchedulerCore

@Suite struct CommandLineTests {
    @Test func parsesTheCommands() {
        #expect(CommandLineParser.parse([]) == .success(.help))
        #expect(CommandLineParser.parse(["--help"]) == .success(.help))
        // Every command takes --help, and prints its own usage, not the whole list.
        for command in ["why", "conditions", "policy", "demo"] {
            for arguments in [[command, "--help"], [command, "x", "-h"]] where !(command == "demo" && arguments.count == 3) {
                guard case .success(.commandHelp(let text)) = CommandLineParser.parse(arguments) else {
                    Issue.record("\(arguments) should print the command's help")
                    continue
                }
                #expect(text.contains("  \(command) "), "\(text)")
                #expect(!text.contains("fleet"), "\(arguments): the whole list instead of the command's help")
            }
        }
        #expect(CommandLineParser.parse(["version"]) == .success(.version))
        // help and version take --help too (a newcomer tries it on every command).
        #expect(CommandLineParser.parse(["help", "--help"]) == .success(.help))
        guard case .success(.commandHelp(let versionHelp)) = CommandLineParser.parse(["version", "--help"]) else {
            Issue.record("version --help should print version's usage")
            return
        }
        #expect(versionHelp.contains("  version "), "\(versionHelp)")
        #expect(CommandLineParser.parse(["version", "x"]) == .failure(UsageError(message: "version takes no arguments, got 'x'")))
        #expect(CommandLineParser.parse(["demo"]) == .success(.demo(days: 1, report: nil)))
        #expect(CommandLineParser.parse(["demo", "--days", "3", "--report", "x.html"]) == .success(.demo(days: 3, report: "x.html")))
    }

    @Test(arguments: [
        (["demo", "--days"], "--days needs a number"),
        (["demo", "--days", "0"], "'0'"),
        (["demo", "--days", "x"], "'x'"),
        (["demo", "--fast"], "'--fast'"),
        (["launch"], "'launch'"),
    ])
    func usageErrorsNameTheCulprit(arguments: [String], culprit: String) throws {
        guard case .failure(let error) = CommandLineParser.parse(arguments) else {
            Issue.record("\(arguments) should be a usage error")
            return
        }
        #expect(error.message.contains(culprit), "\(error.message)")
    }

    /// An app identifier becomes a directory name under the state root: one that could
    /// name another directory or hold control characters is a usage error in every command
    /// that takes one, never a path that is opened.
    @Test(arguments: ["../x", "..", ".", "a/b", "/tmp", "com.example\u{1B}x", "com.example\u{0}x", String(repeating: "a", count: 256)])
    func appIdentifiersThatAreNotOneNameAreRefused(app: String) {
        let commands: [[String]] = [
            ["why", app, "com.example.task"],
            ["log", "--app", app],
            ["energy", "--app", app],
            ["pending", app],
            ["run", app, "com.example.task"],
            ["uninstall", app],
            ["open", app],
            ["push", app],
        ]
        for arguments in commands {
            guard case .failure(let error) = CommandLineParser.parse(arguments) else {
                Issue.record("\(arguments) should be a usage error")
                continue
            }
            #expect(error.message.contains("app identifier"), "\(arguments): \(error.message)")
            #expect(!error.message.unicodeScalars.contains { $0.value < 0x20 }, "the message repeats a control character: \(error.message)")
        }
        // What an app without CFBundleIdentifier is called (local.<process name>) passes.
        #expect((try? CommandLineParser.parse(["why", "local.my tool", "com.example.task"]).get()) != nil)
    }

    /// A task identifier no request could have is a usage error in the commands that take
    /// one, never echoed back by bgtaskd.
    @Test func taskIdentifiersThatNoRequestCanHaveAreRefused() {
        for identifier in ["com.example.app.\u{1B}[31mRED", "", "com.example.\u{0}", String(repeating: "a", count: 256)] {
            for arguments in [["run", "com.example.app", identifier], ["expire", "com.example.app", identifier], ["why", "com.example.app", identifier]] {
                guard case .failure(let error) = CommandLineParser.parse(arguments) else {
                    Issue.record("\(arguments) should be a usage error")
                    continue
                }
                #expect(!error.message.unicodeScalars.contains { $0.value == 0x1B }, "\(error.message)")
            }
        }
        #expect((try? CommandLineParser.parse(["run", "com.example.app", "com.example.app.refresh"]).get()) != nil)
    }

    /// bgtaskd reads an installed manifest in its own process: what the path means to the
    /// caller is sent, and what is no file to the caller is refused before.
    @Test func installSendsTheCallersManifestPath() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-install-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let manifest = directory.appendingPathComponent("Info.plist").path
        #expect(FileManager.default.createFile(atPath: manifest, contents: Data("<plist/>".utf8)))
        #expect(try DaemonCommand.manifestPathForTheDaemon(manifest).get() == manifest)
        // (TMPDIR may run through a link: what the caller's descriptor leads to is its real path.)
        let real = try #require(realpath(manifest, nil).map { pointer in defer { free(pointer) }; return String(cString: pointer) })
        // Through the caller's own process: resolved here.
        let descriptor = open(manifest, O_RDONLY)
        defer { close(descriptor) }
        #expect(try DaemonCommand.manifestPathForTheDaemon("/proc/self/fd/\(descriptor)").get() == real)
        #expect(try DaemonCommand.manifestPathForTheDaemon("/proc//self/fd/\(descriptor)").get() == real)
        // A deleted file is still open, but has no path the daemon could read.
        let deleted = directory.appendingPathComponent("Gone.plist").path
        #expect(FileManager.default.createFile(atPath: deleted, contents: Data("<plist/>".utf8)))
        let held = open(deleted, O_RDONLY)
        defer { close(held) }
        #expect(unlink(deleted) == 0)
        #expect(throws: UsageError.self) { try DaemonCommand.manifestPathForTheDaemon("/proc/self/fd/\(held)").get() }
        // A pipe (bgtask install /dev/stdin with a pipe in front): refused, named.
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let piped = "/proc/self/fd/\(ends[0])"
        #expect(throws: UsageError(message: "install: \(piped) is a FIFO (named pipe), not a manifest file")) { try DaemonCommand.manifestPathForTheDaemon(piped).get() }
        // A missing file is the daemon's to report, as an absolute path.
        #expect(try DaemonCommand.manifestPathForTheDaemon("missing.plist").get() == FileManager.default.currentDirectoryPath + "/missing.plist")
    }

    /// --json prints JSON or fails: a report whose JSON does not parse (a broken or foreign
    /// daemon) is exit 1, never printed after exit 0.
    @Test func aReportThatIsNotJSONFailsUnderJSON() {
        let broken = DaemonCommand.render(.report(text: "text\n", json: #"{"a":"#), json: true, command: "status")
        #expect(broken.status == 1 && broken.output.isEmpty && broken.error.contains("not valid JSON"))
        #expect(DaemonCommand.render(.report(text: "text\n", json: #"{"a":"#), json: false, command: "status").status == 0)
        #expect(DaemonCommand.render(.report(text: "text\n", json: #"{"a": 1}"#), json: true, command: "status").output == #"{"a": 1}"#)
    }

    /// A pending request whose date no calendar shows (a foreign daemon's answer: an outside
    /// probe's fake daemon gave 1e308 s) is refused, named, in text and JSON alike, instead of
    /// printed as a made-up date (and a different one in each).
    @Test func pendingDatesOutOfRangeAreRefusedNotMadeUp() {
        let app = AppID("com.example.app")
        let far = PendingRequest(app: app, identifier: "com.example.app.refresh", kind: .appRefresh,
                                 earliestBeginDate: Date(timeIntervalSince1970: 1e308), submittedAt: Date(timeIntervalSince1970: 0))
        for json in [false, true] {
            let shown = DaemonCommand.render(.pending([far]), json: json, command: "pending")
            #expect(shown.status == 1 && shown.output.isEmpty, "\(shown)")
            #expect(shown.error.contains("bgtaskd's answer holds a date out of range (earliestBeginDate of com.example.app/com.example.app.refresh:"), "\(shown.error)")
        }
        let old = PendingRequest(app: app, identifier: "com.example.app.refresh", kind: .appRefresh, submittedAt: Date(timeIntervalSince1970: -1e308))
        #expect(DaemonCommand.render(.pending([old]), json: false, command: "pending").error.contains("(submittedAt of"))
        let fine = PendingRequest(app: app, identifier: "com.example.app.refresh", kind: .appRefresh, submittedAt: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(DaemonCommand.render(.pending([fine]), json: false, command: "pending").status == 0)
        // Continued processing ignores its earliest date: neither judged nor shown, in either form.
        let export = PendingRequest(app: app, identifier: "com.example.app.export.a", kind: .continuedProcessing,
                                    earliestBeginDate: Date(timeIntervalSince1970: 1e308), submittedAt: Date(timeIntervalSince1970: 1_800_000_000))
        let text = DaemonCommand.render(.pending([export]), json: false, command: "pending")
        #expect(text.status == 0 && text.output.contains("earliest now"), "\(text)")
        let json = DaemonCommand.render(.pending([export]), json: true, command: "pending")
        #expect(json.status == 0 && !json.output.contains("506713") && !json.output.contains("+3169"), "\(json)")
    }

    private func temporaryReport() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-demo-test-\(UUID().uuidString).html").path
    }

    @Test func demoPrintsTheTimelineOfTheDayAndWritesTheReport() async throws {
        let report = temporaryReport()
        defer { try? FileManager.default.removeItem(atPath: report) }
        let output = try await Demo.run(days: 1, reportPath: report)
        for expected in [
            "cleanup: ran 600 s, expired",
            "began background assertion 1 \"Save draft\"",
            "ended background assertion 1",
            "device: power=battery network=down",
            "refresh: ran 4 s, success",
            "com.example.feedreader/com.example.feedreader.cleanup: 2 runs (1 expired, 1 success)",
            "energy report written to \(report)",
        ] {
            #expect(output.contains(expected), "missing \(expected)")
        }
        let html = try String(contentsOfFile: report, encoding: .utf8)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("com.example.feedreader.cleanup"))
    }

    @Test func demoIsTheSameEveryRunApartFromItsTiming() async throws {
        let report = temporaryReport()
        defer { try? FileManager.default.removeItem(atPath: report) }
        let first = try await Demo.run(days: 2, reportPath: report).split(separator: "\n").filter { !$0.hasPrefix("simulated ") }
        let firstHTML = try Data(contentsOf: URL(fileURLWithPath: report))
        let second = try await Demo.run(days: 2, reportPath: report).split(separator: "\n").filter { !$0.hasPrefix("simulated ") }
        #expect(first == second)
        #expect(try Data(contentsOf: URL(fileURLWithPath: report)) == firstHTML, "the report is byte-identical too")
    }
}

@Suite struct JudgementCommandTests {
    private func stateWithPendingCleanup() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-why-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let (store, _) = try SchedulerStore.open(at: directory.appendingPathComponent("scheduler.sqlite"), now: testStart)
        try store.upsertRequest(PendingRequest(app: testApp, identifier: processingID, kind: .processing, earliestBeginDate: testStart.addingTimeInterval(3600), requiresExternalPower: true, submittedAt: testStart))
        return directory
    }

    @Test func whyParsesItsArguments() {
        #expect(WhyCommand.parse(["com.example.app", "com.example.app.refresh", "--json"]) == .success(.init(app: "com.example.app", identifier: "com.example.app.refresh", json: true)))
        guard case .failure(let error) = WhyCommand.parse(["com.example.app"]) else { Issue.record("one argument should fail"); return }
        #expect(error.message.contains("app and a task identifier"))
        guard case .failure(let unknown) = WhyCommand.parse(["a.b", "a.b.c", "--verbose"]) else { Issue.record("unknown option should fail"); return }
        #expect(unknown.message.contains("--verbose"))
    }

    @Test func whyNamesTheBlockingConditionsAndTheEarliestInstant() throws {
        let state = try stateWithPendingCleanup()
        defer { try? FileManager.default.removeItem(at: state) }
        let onBattery = Conditions(externalPower: false, networkAvailable: true, batteryLevel: 0.5)
        let options = WhyCommand.Options(app: testApp.rawValue, identifier: processingID, state: state.path)
        let text = try WhyCommand.run(options, environment: [:], now: testStart, conditions: onBattery)
        #expect(text.contains("blocking:"))
        #expect(text.contains("earliest-begin-date"))
        #expect(text.contains("requires-external-power"))
        let json = try WhyCommand.run(WhyCommand.Options(app: testApp.rawValue, identifier: processingID, json: true, state: state.path), environment: [:], now: testStart, conditions: onBattery)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let decisions = try #require(object["decisions"] as? [[String: Any]])
        #expect(decisions.prefix(2).allSatisfy { $0["blocks"] as? Bool == true })
        #expect(object["pending"] as? Bool == true)
    }

    @Test func whyWithoutStateSaysWhereItLooked() {
        #expect {
            try WhyCommand.run(WhyCommand.Options(app: "com.example.none", identifier: "com.example.none.x"), environment: ["XDG_STATE_HOME": "/nonexistent-bgtask"], now: testStart, conditions: .favorable)
        } throws: { "\($0)".contains("/nonexistent-bgtask/bgtask/com.example.none") }
    }

    @Test func whyWithAStateThatIsALinkLoopNamesTheLoop() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-why-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let loop = directory.appendingPathComponent("loop").path
        try FileManager.default.createSymbolicLink(atPath: loop, withDestinationPath: loop)
        #expect {
            try WhyCommand.run(WhyCommand.Options(app: "com.example.a", identifier: "com.example.a.x", state: loop), environment: [:], now: testStart, conditions: .favorable)
        } throws: {
            // The words of `log --state` (one reading of --state, StateOption).
            "\($0)" == "--state \(loop) cannot be read: it is a symbolic link loop (too many levels of symbolic links)"
        }
    }

    /// An address from BGTASK_STORE_URL that cannot be used: every reader's error says it
    /// came from the variable (the user typed none), never shows its password, and one
    /// given with --store is not blamed on the variable. No server is needed: a port out of
    /// range is refused by the parser, and a socket directory that does not exist by libpq.
    @Test(arguments: ["postgresql://app:Hunter2-S3cret@db.example.com:99999/scheduler",
                      "postgresql://app:Hunter2-S3cret@/scheduler?host=/nonexistent-bgtask-socket"])
    func aBadStoreAddressFromTheEnvironmentIsNamedAsSuch(address: String) throws {
        let environment = ["BGTASK_STORE_URL": address]
        func expectNamed(_ message: String, fromEnvironment: Bool = true, _ what: String) {
            #expect(message.contains("BGTASK_STORE_URL") == fromEnvironment, "\(what): \(message)")
            #expect(!message.contains("Hunter2-S3cret"), "\(what): \(message)")
        }
        let log = try #require(throws: RunLogError.self) { try LogCommand.run(RunLogOptions(), environment: environment, now: testStart) { _ in } }
        expectNamed(log.message, "log")
        let energy = try #require(throws: RunLogError.self) { try EnergyCommand.run(RunLogOptions(), environment: environment, now: testStart) { _ in } }
        expectNamed(energy.message, "energy")
        let why = try #require(throws: (any Error).self) {
            try WhyCommand.run(WhyCommand.Options(app: testApp.rawValue, identifier: processingID), environment: environment, now: testStart, conditions: .favorable)
        }
        expectNamed("\(why)", "why")
        let pending = DaemonCommand.run(DaemonCommand(name: "pending", request: .pending(app: nil)), environment: environment)
        #expect(pending.status == 1)
        expectNamed(pending.error, "pending")
        #expect(pending.error.contains("--socket PATH"), "\(pending.error)")

        var given = RunLogOptions()
        given.storeAddress = address
        let typed = try #require(throws: RunLogError.self) { try LogCommand.run(given, environment: [:], now: testStart) { _ in } }
        expectNamed(typed.message, fromEnvironment: false, "log --store")
    }

    /// A daemon named with --socket is asked without HOME: the state directory is needed only
    /// to read the store when no daemon answers (an outside probe found every daemon command
    /// failing for want of HOME, advising a --state-dir that bgtask does not take).
    @Test func daemonCommandsWithASocketNeedNoHome() {
        let socket = "/nonexistent-bgtask-\(UUID().uuidString)/socket"
        let status = DaemonCommand.run(DaemonCommand(name: "status", request: .status, socket: socket), environment: [:])
        #expect(status.status == 1)
        #expect(status.error.contains(socket), "\(status.error)")
        #expect(!status.error.contains("state directory") && !status.error.contains("--state-dir"), "\(status.error)")
    }

    @Test func policyPrintsDefaultsAndRefusesABadFileNamingTheKey() throws {
        #expect(try PolicyCommand.run(json: false, check: nil).contains("threshold 0.4"))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("policy-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"threshold": 2}"#.utf8).write(to: file)
        #expect {
            try PolicyCommand.run(json: false, check: file.path)
        } throws: { "\($0)".contains("threshold") && "\($0)".contains(file.path) }
    }

    @Test func policyShowsWhatBGTASK_POLICYGivesAnEmbeddedAppAndRefusesWhatItCouldNotUse() throws {
        let server = try PolicyCommand.run(json: false, check: nil, environment: ["BGTASK_POLICY": "server"])
        #expect(server.contains("profile server (from BGTASK_POLICY=server)"))
        #expect(try PolicyCommand.run(json: false, check: nil, environment: [:]).contains("profile phone (defaults)"))
        #expect {
            try PolicyCommand.run(json: false, check: nil, environment: ["BGTASK_POLICY": "serverr"])
        } throws: { "\($0)".contains("BGTASK_POLICY=serverr") && "\($0)".contains("phone, server") && "\($0)".components(separatedBy: "BGTASK_POLICY").count == 2 }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("policy-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"profile": "server", "threshold": 0.5}"#.utf8).write(to: file)
        let fromFile = try PolicyCommand.run(json: false, check: nil, environment: ["BGTASK_POLICY": file.path])
        #expect(fromFile.contains("profile server") && fromFile.contains("threshold 0.5"))
        #expect(try PolicyCommand.run(json: false, check: nil, environment: ["BGTASK_POLICY": "server"]) != PolicyCommand.run(json: false, check: nil, environment: [:]))
    }

    @Test func conditionsCommandParsesJSONFlagAndRefusesOthers() {
        #expect(CommandLineParser.parse(["conditions", "--json"]) == .success(.conditions(json: true, socket: nil)))
        #expect(CommandLineParser.parse(["conditions"]) == .success(.conditions(json: false, socket: nil)))
        guard case .failure(let error) = ConditionsCommand.parse(["--yaml"]) else { Issue.record("--yaml should fail"); return }
        #expect(error.message.contains("--yaml"))
    }

    /// `why`, `conditions` and `policy` ask bgtaskd too, so they take `--socket PATH` as
    /// the daemon commands do: the same value checks, once, and shown in their usage.
    @Test func judgementCommandsTakeSocketAsTheDaemonCommandsDo() {
        #expect(CommandLineParser.parse(["conditions", "--socket", "/tmp/s", "--json"]) == .success(.conditions(json: true, socket: "/tmp/s")))
        #expect(CommandLineParser.parse(["policy", "--socket", "/tmp/s"]) == .success(.policy(json: false, check: nil, socket: "/tmp/s")))
        #expect(CommandLineParser.parse(["why", "com.example.a", "com.example.a.x", "--socket", "/tmp/s"])
            == .success(.why(.init(app: "com.example.a", identifier: "com.example.a.x", socket: "/tmp/s"))))
        for command in [["conditions"], ["policy"], ["why", "com.example.a", "com.example.a.x"], ["status"]] {
            for (extra, message) in [(["--socket"], "--socket needs a socket path"), (["--socket", ""], "--socket needs a socket path, got an empty string"),
                                     (["--socket", "--json"], "--socket needs a socket path, got the option '--json'"),
                                     (["--socket", "/a", "--socket", "/b"], "--socket given more than once")] {
                guard case .failure(let error) = CommandLineParser.parse(command + extra) else {
                    Issue.record("\(command + extra) parsed")
                    continue
                }
                #expect(error.message == message, "\(command + extra)")
            }
            let lines = CommandLineParser.usageLines(of: command[0]) ?? ""
            #expect(lines.split(separator: "\n").first?.hasSuffix("[--socket PATH]") == true, "\(lines)")
        }
        // Where --socket would be silently ignored, the two are refused together.
        for (arguments, culprit) in [(["policy", "--check", "p.json", "--socket", "/s"], "--check FILE validates the file here"),
                                     (["why", "a.b", "a.b.c", "--socket", "/s", "--state", "/d"], "--state answers from here"),
                                     (["why", "a.b", "a.b.c", "--store", "postgresql://x", "--socket", "/s"], "--store answers from here"),
                                     (["why", "a.b", "a.b.c", "--socket", "/s", "--policy", "p.json"], "--policy answers from here")] {
            guard case .failure(let error) = CommandLineParser.parse(arguments) else {
                Issue.record("\(arguments) parsed")
                continue
            }
            #expect(error.message.contains(culprit), "\(arguments): \(error.message)")
        }
    }

    /// Every value flag refuses a missing value, an empty string and another option in its
    /// place; every number is range-checked; extra words after help or version are refused.
    @Test(arguments: [
        (["version", "--bogus"], "'--bogus'"),
        (["help", "--bogus"], "'--bogus'"),
        (["--version", "x"], "'x'"),
        (["simulate", "nope"], "'nope' is neither a built-in scenario"),
        (["simulate", "Package.swift/"], "'Package.swift/' ends in /, which names a directory: a scenario is a file (drop the /)"),
        (["simulate", ""], "empty string"),
        (["why", "", ""], "empty string"),
        (["why", "com.a", ""], "empty string"),
        (["policy", "--check", "--json"], "--check needs a file path, got the option '--json'"),
        (["policy", "--check", ""], "--check needs a file path, got an empty string"),
        (["policy", "--check"], "--check needs a file path"),
        (["why", "a.b", "a.b.c", "--policy", "--json"], "got the option '--json'"),
        (["why", "a.b", "a.b.c", "--state", ""], "empty string"),
        (["fleet", "--shared-outage", "-1:00-02:00"], "'-1:00-02:00'"),
        (["fleet", "--shared-outage", "1:00-02:00"], "'1:00-02:00'"),
        (["fleet", "--shared-outage", "+1:00-02:00"], "'+1:00-02:00'"),
        (["fleet", "--shared-outage", "02:00-01:00"], "start before the end"),
        (["fleet", "--shared-outage", "02:00-24:01"], "'02:00-24:01'"),
        (["fleet", "--mix", "commuter=1e300"], "at most 1000000"),
        (["fleet", "--mix", "commuter=nan"], "'commuter=nan'"),
        (["fleet", "--mix", "commuter=inf"], "'commuter=inf'"),
        (["fleet", "--mix", ""], "empty string"),
        (["fleet", "--devices", "99999999999999999999"], "--devices must be a whole number from 1 to 10000000"),
        (["fleet", "--devices", "+5"], "'+5'"),
        (["fleet", "--days", "0"], "--days must be a whole number from 1 to 3660"),
        (["fleet", "--seed", "-1"], "--seed must be a whole number"),
        (["fleet", "--seed", "+1"], "--seed must be a whole number"),
        (["fleet", "--report", ""], "empty string"),
        (["demo", "--report", ""], "--report needs a file path, got an empty string"),
        (["demo", "--report", "--days"], "got the option '--days'"),
        (["demo", "--days", "99999999999999999999"], "from 1 to 30"),
        (["simulate", "commuter", "--days", "1e3"], "from 1 to 3660"),
        (["simulate", "commuter", "--seed", "18446744073709551616"], "--seed must be a whole number"),
        (["simulate", "commuter", "--app", ""], "empty string"),
        (["simulate", "commuter", "--report", "--json"], "got the option '--json'"),
        (["log", "--since", "99999999999999999999d"], "at most 100 years"),
        (["log", "--since", "0d"], "(above 0, at most 100 years), got '0d'"),
        (["log", "--since", ""], "empty string"),
        (["log", "--state", "--json"], "got the option '--json'"),
        (["energy", "--app", ""], "empty string"),
    ])
    func badValuesAreUsageErrorsNamingTheCulprit(arguments: [String], culprit: String) {
        guard case .failure(let error) = CommandLineParser.parse(arguments) else {
            Issue.record("\(arguments) should be a usage error")
            return
        }
        #expect(error.message.contains(culprit), "\(arguments): \(error.message)")
    }

    /// An option of one value given twice is refused, whatever the values: keeping the last
    /// one silently hid a mistake (`--days 7 ... --days 1` ran one day).
    @Test(arguments: [
        ["simulate", "commuter", "--days", "7", "--days", "1"],
        ["simulate", "commuter", "--seed", "1", "--seed", "1"],
        ["simulate", "commuter", "--report", "a.html", "--json", "--report", "b.html"],
        ["simulate", "commuter", "--compare-baselines", "--seeds", "1-2", "--seeds", "3-4"],
        ["fleet", "--days", "2", "--days", "3"],
        ["fleet", "--devices", "10", "--devices", "20"],
        ["fleet", "--seed", "1", "--seed", "2"],
        ["fleet", "--mix", "commuter=1", "--mix", "office=1"],
        ["fleet", "--shared-outage", "07:00-08:00", "--shared-outage", "09:00-10:00"],
        ["fleet", "--report", "a.html", "--report", "a.html"],
        ["demo", "--days", "1", "--days", "2"],
        ["demo", "--report", "a.html", "--report", "b.html"],
        ["why", "a.b", "a.b.c", "--state", "/a", "--state", "/b"],
        ["why", "a.b", "a.b.c", "--policy", "p.json", "--policy", "p.json"],
        ["policy", "--check", "a.json", "--check", "b.json"],
    ])
    func anOptionOfOneValueGivenTwiceIsAUsageError(arguments: [String]) throws {
        guard case .failure(let error) = CommandLineParser.parse(arguments) else {
            Issue.record("\(arguments) should be a usage error")
            return
        }
        let option = try #require(arguments.first { option in option.hasPrefix("--") && arguments.filter { $0 == option }.count == 2 })
        #expect(error.message == "\(option) given more than once", "\(arguments): \(error.message)")
    }

    @Test func repeatableOptionsAndFlagsMayRepeat() {
        // --app names one app each time; a flag given twice says the same thing twice.
        guard case .success(.simulate(let options)) = CommandLineParser.parse(["simulate", "commuter", "--app", "a.json", "--app", "b.json", "--json", "--json"]) else {
            Issue.record("refused")
            return
        }
        #expect(options.apps == ["a.json", "b.json"] && options.json)
        guard case .success(.fleet) = CommandLineParser.parse(["fleet", "--no-progress", "--no-progress", "--json", "--json"]) else {
            Issue.record("refused")
            return
        }
    }

    @Test func strictValuesStillAcceptWhatIsRight() {
        guard case .success(.fleet(let options)) = CommandLineParser.parse(["fleet", "--devices", "10", "--shared-outage", "01:00-02:00", "--mix", "commuter=1000000", "--no-progress"]) else {
            Issue.record("a valid fleet command was refused")
            return
        }
        #expect(options.devices == 10)
        #expect(options.sharedOutage == "01:00-02:00")
        #expect(CommandLineParser.parse(["version"]) == .success(.version))
        #expect(CommandLineParser.parse(["help"]) == .success(.help))
        #expect(CommandLineParser.parse(["demo", "--report", "-report.html"]) == .success(.demo(days: 1, report: "-report.html")))
    }

    @Test func aPolicyFileWithAnOutOfRangeNumberIsRefusedNamingTheKey() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("policy-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data("{\"energyBudgetPerAppPerDay\": 1e19}".utf8).write(to: file)
        #expect {
            try PolicyCommand.run(json: false, check: file.path)
        } throws: { "\($0)".contains("energyBudgetPerAppPerDay") && "\($0)".contains("from 0 to 1000000000") }
    }

    @Test func aPolicyFileGivenTwiceTheSameKeyIsRefused() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("policy-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data("{\"minimumLaunchInterval\": 60,\n \"minimumLaunchInterval\": 0}".utf8).write(to: file)
        #expect {
            try PolicyCommand.run(json: false, check: file.path)
        } throws: { "\($0)".contains("minimumLaunchInterval") && "\($0)".contains("line 2") }
    }
}

/// The daemon commands: parsed from one table that also makes `--help` and docs/cli.md.
@Suite struct DaemonCommandLineTests {
    @Test func theCLIReferenceIsGeneratedFromTheTable() throws {
        let page = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/cli.md")
        let text = try String(contentsOf: page, encoding: .utf8)
        #expect(text.contains(DaemonCommand.reference), "docs/cli.md's daemon section differs from the table; replace it with:\n\(DaemonCommand.reference)")
        for spec in DaemonCommand.table {
            #expect(CommandLineParser.usage.contains(spec.synopsis), "bgtask --help lacks \(spec.name)")
        }
        // The commands that also ask bgtaskd but have a table of their own on the page:
        // each row's synopsis is the usage's.
        for command in ["why", "conditions", "policy"] {
            let synopsis = try #require(CommandLineParser.usageLines(of: command)?.split(separator: "\n").first).trimmingCharacters(in: .whitespaces)
            #expect(text.contains("| `bgtask \(synopsis.replacingOccurrences(of: "|", with: "\\|"))` |"), "docs/cli.md lacks `bgtask \(synopsis)`")
        }
    }

    /// A usage error in one command's arguments is answered with that command's usage
    /// lines, not the whole list; an unknown command gets the whole list.
    @Test func aUsageErrorShowsTheCommandsOwnUsage() {
        for (arguments, expected) in [(["why", "--bogus"], CommandLineParser.whyUsage), (["log", "--bogus"], LogCommand.usage),
                                      (["simulate", "--days"], SimulateCommand.usage), (["demo", "--x"], CommandLineParser.demoUsage),
                                      (["push"], DaemonCommand.usage(of: DaemonCommand.spec(named: "push")!))] {
            guard case .failure = CommandLineParser.parse(arguments) else {
                Issue.record("\(arguments) parsed")
                continue
            }
            let shown = CommandLineParser.usage(afterErrorIn: arguments)
            #expect(shown == "usage: bgtask\n" + expected + "\n\nbgtask --help lists every command.", "\(arguments)")
            #expect(!shown.contains("commands:"), "not the whole list for \(arguments)")
        }
        #expect(CommandLineParser.usage(afterErrorIn: ["bogus"]) == CommandLineParser.usage)
        #expect(CommandLineParser.usage(afterErrorIn: []) == CommandLineParser.usage)
    }

    /// A daemon command's option given twice is refused, and a stray argument to a command
    /// that takes none is named.
    @Test func daemonCommandsRefuseRepeatedOptionsAndStrayArguments() {
        for arguments in [["open", "com.example.a", "--socket", "/x", "--socket", "/y"], ["status", "--json", "--json"],
                          ["push", "com.example.a", "--payload", "{}", "--payload", "{}"]] {
            guard case .failure(let error) = CommandLineParser.parse(arguments) else {
                Issue.record("\(arguments) parsed")
                continue
            }
            #expect(error.message.hasSuffix("given more than once"), "\(error.message)")
        }
        guard case .failure(let stray) = CommandLineParser.parse(["status", "extra"]) else {
            Issue.record("a stray argument parsed")
            return
        }
        #expect(stray.message == "status takes no arguments, got 'extra'")
    }

    @Test func parsesEveryDaemonCommand() {
        #expect(CommandLineParser.parse(["status", "--json"]) == .success(.daemon(DaemonCommand(name: "status", request: .status, json: true))))
        #expect(CommandLineParser.parse(["run", "com.example.a", "com.example.a.refresh"]) == .success(.daemon(DaemonCommand(name: "run", request: .run(app: AppID("com.example.a"), identifier: "com.example.a.refresh")))))
        #expect(CommandLineParser.parse(["settings", "com.example.a", "background-refresh", "off", "--socket", "/tmp/s"]) == .success(.daemon(DaemonCommand(name: "settings", request: .setBackgroundRefresh(app: AppID("com.example.a"), enabled: false), socket: "/tmp/s"))))
        #expect(CommandLineParser.parse(["push", "com.example.a", "--payload", "{\"k\":1}"]) == .success(.daemon(DaemonCommand(name: "push", request: .push(app: AppID("com.example.a"), payload: "{\"k\":1}")))))
        #expect(CommandLineParser.parse(["pending"]) == .success(.daemon(DaemonCommand(name: "pending", request: .pending(app: nil)))))
        #expect(CommandLineParser.parse(["respond", "com.example.a", "reminder"]) == .success(.daemon(DaemonCommand(name: "respond", request: .respond(app: AppID("com.example.a"), response: NotificationResponseRequest(notification: "reminder"))))))
        #expect(CommandLineParser.parse(["respond", "com.example.a", "reminder", "--action", "dismiss"]) == .success(.daemon(DaemonCommand(name: "respond", request: .respond(app: AppID("com.example.a"), response: NotificationResponseRequest(notification: "reminder", action: NotificationResponseRequest.dismissAction))))))
        #expect(CommandLineParser.parse(["respond", "com.example.a", "reminder", "--text", "on my way", "--action", "reply"]) == .success(.daemon(DaemonCommand(name: "respond", request: .respond(app: AppID("com.example.a"), response: NotificationResponseRequest(notification: "reminder", action: "reply", text: "on my way"))))))
        for (arguments, message) in [(["respond", "com.example.a", "reminder", "--action"], "--action needs an action identifier"),
                                     (["respond", "com.example.a", "reminder", "--text", "a\u{1B}b"], "respond: the text holds a control character other than a line feed or a tab"),
                                     (["respond", "com.example.a", String(repeating: "n", count: 1_025)], "respond: the notification identifier is 1025 bytes; at most 1024"),
                                     (["push", "com.example.a", "--action", "x"], "unknown option for push: '--action'")] {
            guard case .failure(let error) = CommandLineParser.parse(arguments) else {
                Issue.record("\(arguments) parsed")
                continue
            }
            #expect(error.message == message)
        }
        #expect(CommandLineParser.parse(["force-quit", "--help"]) == .success(.daemon(DaemonCommand(name: "force-quit", request: .status, help: true))))
        // `--` ends the options: a manifest named like one is an argument (the probe could
        // reach such a file only as ./--json).
        if case .success(.daemon(let install)) = CommandLineParser.parse(["install", "--", "--json"]) {
            #expect(install.json == false && "\(install.request)".contains("--json"), "\(install)")
        } else {
            Issue.record("install -- --json was refused: \(CommandLineParser.parse(["install", "--", "--json"]))")
        }
        #expect(CommandLineParser.parse(["uninstall", "--", ""]) == .failure(UsageError(message: "uninstall needs an argument, got an empty string")))
    }

    @Test(arguments: [
        (["run", "com.example.a"], "run takes <app> <identifier>, got 1 argument(s)"),
        (["settings", "a", "background-refresh", "maybe"], "background-refresh must be on or off, got 'maybe'"),
        (["settings", "a", "wifi", "on"], "settings knows only background-refresh, got 'wifi'"),
        (["conditions", "--json", "--json"], "--json given more than once"),
        (["policy", "--json", "--json"], "--json given more than once"),
        // A literal word counts as an argument: two of three reached the third (a crash).
        (["settings", "a", "background-refresh"], "settings takes <app> background-refresh <on|off>, got 2 argument(s)"),
        (["install", "m.json", "--json"], "install prints no report; --json is for read commands"),
        (["apps", "--socket"], "--socket needs a socket path"),
        (["open", "--frobnicate"], "unknown option for open: '--frobnicate'"),
        (["uninstall", ""], "uninstall needs an argument, got an empty string"),
        (["push", "a", "--payload", "5"], "--payload: the push payload must be a JSON object ({\"key\": value}), found a number (5)"),
        (["push", "a", "--payload", "[1]"], "--payload: the push payload must be a JSON object ({\"key\": value}), found an array (1 element)"),
        (["push", "a", "--payload", "{\"a\":1"], "--payload: the push payload is not valid JSON: expected valid JSON, found an error at line 1, column 7: expected ',' or '}', found the end of the document"),
        (["push", "a", "--payload", "{\"badge\": 1e400}"], "--payload: the push payload cannot be read: at $.badge: expected a number within the range of a Double (about ±1.8e308), found 1e400 (line 1, column 11)"),
        (["push", "a", "--payload", "{\"a\":\"" + String(repeating: "x", count: 4_100) + "\"}"], "--payload: the push payload is 4108 bytes; at most 4096 (as APNs allows for a push)"),
    ])
    func refusesBadDaemonCommands(arguments: [String], message: String) {
        guard case .failure(let error) = CommandLineParser.parse(arguments) else {
            Issue.record("\(arguments) parsed")
            return
        }
        #expect(error.message == message)
    }
}
