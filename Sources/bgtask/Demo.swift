import Foundation
import SchedulerCore

/// `bgtask demo`: the example app's real handlers through a short built-in simulation (the
/// commuter scenario, seed 1): `bgtask simulate commuter` with an introduction, ending with
/// the HTML energy report written to a file.
enum Demo {
    /// Where the report goes when `--report` is not given.
    static var defaultReportPath: String {
        // One per user: in a shared /tmp (sticky), another user's report could not be replaced.
        // An empty or relative TMPDIR is no directory (Foundation would make it "/"): /tmp.
        let temporary = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
        return URL(fileURLWithPath: temporary).appendingPathComponent("bgtask-demo-\(getuid()).html").path
    }

    /// Runs the demo and returns what to print; writes the report to `reportPath`.
    static func run(days: Int, reportPath: String = defaultReportPath) async throws -> String {
        let intro = """
            bgtask demo: the example feed reader's real handlers through \(CountText.counted(days, "simulated day")) of a commuter's phone
            (refresh asked every 15 min; nightly clean-up needs network and power; a draft saved under an assertion when the user leaves the app)
            open the energy report named at the end in a browser


            """
        return try await intro + SimulateCommand.run(.init(scenario: "commuter", apps: ["feedreader"], days: days, seed: 1, report: reportPath))
    }
}
