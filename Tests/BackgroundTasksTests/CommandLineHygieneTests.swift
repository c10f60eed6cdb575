@testable import bgtask
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SchedulerCore
import Testing

extension ProcessTests {
    /// What `bgtask` does with a start that is not quite right: a closed standard output, a
    /// value with a line feed echoed in an error, a relative `XDG_RUNTIME_DIR` (from an
    /// outside robustness probe).
    @Suite struct CommandLineHygiene {
        @Test("with standard output closed, bgtask does nothing and says why (a socket it opened would have taken its place)")
        func closedStandardOutput() async throws {
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let bgtask = try ProductBinary.locate("bgtask")
            let environment = ["HOME": scratch.url.path, "XDG_RUNTIME_DIR": scratch.url.path, "PATH": "/usr/bin:/bin"]
            let child = try ChildProcess(URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", "exec \"$0\" status >&-", bgtask.path], scratch: scratch.url, environment: environment)
            let termination = await child.termination()
            #expect(termination.status == 1, "\(termination)")
            #expect(child.standardError() == "bgtask: standard output is closed: nothing could be printed, so nothing was done\n")
        }

        @Test("a state or runtime directory whose variable is not UTF-8 is refused, naming the variable and its bytes, not read as another directory")
        func nonUTF8PathVariables() async throws {
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let bgtask = try ProductBinary.locate("bgtask")
            // The real directory, /<scratch>/st\xff, holds an app's state; decoded lossily it
            // would be /<scratch>/st\u{FFFD}, empty (created by the first writer).
            let environment = ["HOME": scratch.url.path, "SCRATCH": scratch.url.path, "PATH": "/usr/bin:/bin"]
            for (variable, command) in [("XDG_STATE_HOME", "log"), ("XDG_STATE_HOME", "energy"), ("XDG_RUNTIME_DIR", "status")] {
                let script = "\(variable)=\"$(printf '%s/st\\377' \"$SCRATCH\")\" exec \"$0\" \(command)"
                let child = try ChildProcess(URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", script, bgtask.path], scratch: scratch.url, environment: environment)
                let termination = await child.termination()
                await child.output.waitForEndOfFile()
                let error = child.standardError()
                #expect(termination.status != 0, "\(variable) \(command): \(termination) \(error)")
                #expect(error.contains("\(variable) is not valid UTF-8 (\"\(scratch.url.path)/st\\xff\")"), "\(variable) \(command): \(error)")
            }
            let made = try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).filter { $0.hasPrefix("st") }
            #expect(made.isEmpty, "no directory was made under a mangled name: \(made)")
        }

        @Test("a line feed in a value bgtask echoes cannot forge a line of its own; a relative XDG_RUNTIME_DIR is said to be ignored")
        func echoedValuesAndIgnoredVariables() async throws {
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let forged = try await ProcessTests.bgtask(["simulate", "nosuch\nbgtask simulate: all 7 days passed"], scratch: scratch.url)
            #expect(!forged.error.components(separatedBy: "\n").contains { $0.hasPrefix("bgtask simulate: all 7 days passed") }, "\(forged.error)")
            #expect(forged.error.contains(#"'nosuch\nbgtask simulate: all 7 days passed'"#), "\(forged.error)")

            let relative = try await ProcessTests.bgtask(["status"], scratch: scratch.url, environment: ["HOME": scratch.url.path, "XDG_RUNTIME_DIR": "run", "PATH": "/usr/bin:/bin"])
            #expect(relative.error.hasPrefix("bgtask: warning: XDG_RUNTIME_DIR=run is not an absolute path; ignored\n"), "\(relative.error)")
            // The everyday case says nothing.
            let unset = try await ProcessTests.bgtask(["status"], scratch: scratch.url, environment: ["HOME": scratch.url.path, "PATH": "/usr/bin:/bin"])
            #expect(!unset.error.contains("warning"), "\(unset.error)")
        }
    }
}

@Suite struct OneLineMessages {
    @Test func aLineFeedInAMessageIsWrittenAsAnEscape() {
        #expect(StandardStream.oneLine("bgtask: 'a\nb'\tc") == #"bgtask: 'a\nb'"# + "\tc")
        #expect(StandardStream.oneLine("x\u{1B}[2J") == #"x\u001B[2J"#)
    }
}

/// `bgtask notifications`: the apps' local notifications from their state directories.
@Suite struct NotificationsCommandTests {
    @Test("parses at most one app and --json; refuses an identifier no app can have, or an unknown option, naming it")
    func parsing() {
        #expect(NotificationsCommand.parse([]) == .success(.init()))
        #expect(NotificationsCommand.parse(["com.example.reader", "--json"]) == .success(.init(app: AppID("com.example.reader"), json: true)))
        for (arguments, message) in [(["a/b"], "an app identifier cannot contain '/'"), (["--bogus"], "unknown option '--bogus'"),
                                     (["a.b", "c.d"], "at most one app"), (["--json", "--json"], "--json given more than once")] {
            guard case .failure(let error) = NotificationsCommand.parse(arguments) else {
                Issue.record("\(arguments) parsed")
                continue
            }
            #expect(error.message.contains(message), "\(arguments): \(error.message)")
        }
    }

    @Test("lists what is pending (soonest first, repeating or not), the delivered list and what bgtaskd fired, per app, in text and JSON; a file it cannot read is named, never moved")
    func listing() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let root = scratch.url.appendingPathComponent("bgtask")
        let reader = root.appendingPathComponent("com.example.reader")
        let broken = root.appendingPathComponent("com.example.broken")
        try FileManager.default.createDirectory(at: reader, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: broken, withIntermediateDirectories: true)
        func request(_ identifier: String, fireDate: Double, repeats: Bool) -> String {
            #"{"identifier":"\#(identifier)","title":"Reminder \#(identifier)","subtitle":"","body":"","launchImageName":"","attachments":[],"categoryIdentifier":"","threadIdentifier":"","summaryArgument":"","summaryArgumentCount":0,"interruptionLevel":1,"relevanceScore":0,"trigger":{"timeInterval":{"seconds":3600,"repeats":\#(repeats)}},"added":800000000,"fireDate":\#(fireDate)}"#
        }
        let file = #"{"version":2,"pending":[\#(request("later", fireDate: 800007200, repeats: false)),\#(request("hourly", fireDate: 800003600, repeats: true))],"delivered":[{"request":\#(request("morning", fireDate: 800000050, repeats: false)),"date":800000050,"listed":true}],"deliveredWhileAway":[{"request":\#(request("daily", fireDate: 800000100, repeats: true)),"date":800000102,"listed":true}]}"#
        try Data(file.utf8).write(to: reader.appendingPathComponent("pending-notifications.json"))
        let unreadable = Data("{not json".utf8)
        try unreadable.write(to: broken.appendingPathComponent("pending-notifications.json"))
        let environment = ["XDG_STATE_HOME": scratch.url.path]

        let text = try NotificationsCommand.run(.init(), environment: environment)
        #expect(text.contains("com.example.broken (") && text.contains("  cannot be read: "), "\(text)")
        #expect(text.contains("  pending hourly: next 2026-05-09T07:13:20Z, repeats, \"Reminder hourly\"\n  pending later: next 2026-05-09T08:13:20Z, \"Reminder later\"\n"), "\(text)")
        #expect(text.contains("  fired by bgtaskd, not yet taken in by the app: daily at 2026-05-09T06:15:02Z\n"), "\(text)")
        #expect(text.contains("  delivered morning at 2026-05-09T06:14:10Z, \"Reminder morning\"\n"), "\(text)")
        #expect(try Data(contentsOf: broken.appendingPathComponent("pending-notifications.json")) == unreadable, "only read")

        let json = try NotificationsCommand.run(.init(app: AppID("com.example.reader"), json: true), environment: environment)
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        #expect(entries.count == 1 && entries[0]["app"] as? String == "com.example.reader" && entries[0]["problem"] is NSNull, "\(json)")
        #expect((entries[0]["pending"] as? [[String: Any]])?.map { $0["identifier"] as? String } == ["hourly", "later"], "\(json)")
        #expect((entries[0]["firedByBgtaskd"] as? [[String: Any]])?.first?["listed"] as? Bool == true, "\(json)")
        #expect((entries[0]["delivered"] as? [[String: Any]])?.first?["identifier"] as? String == "morning", "\(json)")
        #expect(try NotificationsCommand.run(.init(app: AppID("com.example.none")), environment: environment).hasPrefix("no local notifications kept by com.example.none in "))
        #expect(throws: RunLogError.self) { _ = try NotificationsCommand.run(.init(), environment: [:]) }
    }

    @Test("a file that is not JSON is named with the line and column where it stops being JSON; a link leading nowhere is said, not taken for no notifications (an outside probe)")
    func badFilesAreNamed() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let root = scratch.url.appendingPathComponent("bgtask")
        let broken = root.appendingPathComponent("com.example.broken")
        let linked = root.appendingPathComponent("com.example.linked")
        try FileManager.default.createDirectory(at: broken, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: linked, withIntermediateDirectories: true)
        try Data("{\"version\": 2,\n  \"pending\": [}\n".utf8).write(to: broken.appendingPathComponent("pending-notifications.json"))
        try FileManager.default.createSymbolicLink(atPath: linked.appendingPathComponent("pending-notifications.json").path, withDestinationPath: "/nonexistent/kept.json")
        let environment = ["XDG_STATE_HOME": scratch.url.path]

        let text = try NotificationsCommand.run(.init(), environment: environment)
        #expect(text.contains("could not be read (expected valid JSON, found an error at line 2, column 15"), "\(text)")
        #expect(text.contains("com.example.linked ("), "\(text)")
        #expect(text.contains("/nonexistent/kept.json"), "\(text)")
        let one = try NotificationsCommand.run(.init(app: AppID("com.example.linked")), environment: environment)
        #expect(!one.hasPrefix("no local notifications"), "\(one)")
        #expect(one.contains("cannot be read"), "\(one)")
    }
}
