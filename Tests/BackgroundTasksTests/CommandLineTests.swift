@testable import bgtask
import BackgroundTasks
import BackgroundTasksTesting
import Testing

@Suite struct CommandLineTests {
    @Test func parsesTheCommands() {
        #expect(CommandLineParser.parse([]) == .success(.help))
        #expect(CommandLineParser.parse(["--help"]) == .success(.help))
        #expect(CommandLineParser.parse(["version"]) == .success(.version))
        #expect(CommandLineParser.parse(["demo"]) == .success(.demo(days: 1)))
        #expect(CommandLineParser.parse(["demo", "--days", "3"]) == .success(.demo(days: 3)))
    }

    @Test(arguments: [["demo", "--days"], ["demo", "--days", "0"], ["demo", "--days", "x"], ["demo", "--fast"], ["launch"]])
    func usageErrorsNameTheCulprit(arguments: [String]) throws {
        guard case .failure(let error) = CommandLineParser.parse(arguments) else {
            Issue.record("\(arguments) should be a usage error")
            return
        }
        #expect(error.message.contains(arguments.last!) || error.message.contains("--days"))
    }

    @Test func demoPrintsTheTimelineOfTheDay() async throws {
        let output = try await Demo.run(days: 1)
        for expected in [
            "cleanup: ran 600 s, expired",
            "cleanup: due, blocked on external-power",
            "began background assertion 1 \"Save draft\"",
            "ended background assertion 1",
            "device: power=battery network=down",
            "refresh: ran 4 s, failure",
            "com.example.feedreader.cleanup: 2 runs (1 expired, 1 success)",
        ] {
            #expect(output.contains(expected), "missing \(expected)")
        }
    }

    @Test func demoIsTheSameEveryRunApartFromItsTiming() async throws {
        let first = try await Demo.run(days: 2).split(separator: "\n").filter { !$0.hasPrefix("simulated ") }
        let second = try await Demo.run(days: 2).split(separator: "\n").filter { !$0.hasPrefix("simulated ") }
        #expect(first == second)
    }
}
