import BackgroundTasks
import BackgroundTasksTesting
import FeedReaderExample
import Foundation

/// `bgtask demo`: the example app's real handlers through a short built-in simulation (the
/// commuter scenario), ending with the HTML energy report written to a file.
enum Demo {
    /// Where the report goes when `--report` is not given.
    static var defaultReportPath: String {
        FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-demo.html").path
    }

    /// Runs the demo and returns what to print; writes the report to `reportPath`.
    static func run(days: Int, reportPath: String = defaultReportPath) async throws -> String {
        guard let scenario = Scenario.builtIn(named: "commuter") else { throw UsageError(message: "the built-in commuter scenario is missing") }
        let simulation = Simulation(scenario: scenario, days: days, seed: 1)
        let began = ContinuousClock.now
        // A large backlog: the first clean-up cannot finish in its 10 minutes, expires,
        // and the next one resumes from its checkpoint.
        let result = try await simulation.run { device in FeedReader.install(on: device, backlog: 8_000) }
        let elapsed = ContinuousClock.now - began

        var output = "bgtask demo: the example feed reader's real handlers through \(days) simulated day\(days == 1 ? "" : "s") of a commuter's phone\n"
        output += "(refresh asked every 15 min; nightly clean-up needs network and power; a draft saved under an assertion when the user leaves the app)\n\n"
        output += Timeline(trace: result.trace, start: result.start).render() + "\n\n"
        output += result.summary() + "\n"
        let report = result.deviceReport(
            title: "bgtask demo: commuter, \(days) day\(days == 1 ? "" : "s")",
            notes: ["the example feed reader, real handler code in virtual time", "reproduce: bgtask simulate commuter --days \(days) --seed 1"]
        )
        try SimulateCommand.writeReport(HTMLReport.render(report), to: reportPath)
        output += "\nsimulated \(days * 24) h in \(elapsed.formatted(.units(allowed: [.milliseconds], width: .abbreviated)))\n"
        output += "energy report written to \(reportPath) (open it in a browser)\n"
        return output
    }
}
