#if canImport(Glibc)
import Glibc
#endif
import BGTaskDaemon
import DaemonProtocol
import Foundation
import SchedulerCore
import Synchronization
import Testing

/// Defects an outside probe found in bgtaskd (probe 4): signals right after "ready", helpers
/// an app leaves in its process group, a reinstall with another executable, unbounded app
/// output logs, a socket passed by systemd (docs/daemon.md).
extension DaemonProcessTests {
    @Suite struct ProbeFour {
        @Test("SIGTERM, SIGINT or SIGHUP sent the moment bgtaskd says ready is handled: a graceful stop (exit 0) or a reload, never lost or fatal")
        func signalRightAfterReady() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let bgtaskd = harness.bgtaskd
            for round in 0..<12 {
                // SIGTERM and SIGINT alternate; every third round a SIGHUP first, then SIGTERM.
                let number: Int32 = round % 3 == 2 ? SIGHUP : (round % 2 == 0 ? SIGTERM : SIGINT)
                let state = harness.root + "/state-\(round)"
                let process = try harness.spawn(bgtaskd, ["--no-cgroups", "--socket", harness.runtimeDirectory + "/s\(round)", "--state-dir", state], name: "bgtaskd-\(round)")
                // Watched without a pause between reads: the signal must come as close to the
                // ready line (and systemd's READY=1 before it) as a test can send it.
                let deadline = ContinuousClock.now + .seconds(10)
                while !process.standardError.contains(" ready on "), process.result == nil, ContinuousClock.now < deadline {}
                process.signal(number)
                if number == SIGHUP {
                    let reloaded = await harness.poll(timeout: .seconds(5)) { process.standardError.contains("SIGHUP") }
                    #expect(reloaded, "round \(round): SIGHUP not handled: \(process.result.map { "\($0)" } ?? process.standardError)")
                    #expect(process.result == nil, "round \(round): SIGHUP ended bgtaskd: \(String(describing: process.result))")
                    process.signal(SIGTERM)
                }
                let result = await process.waitForExit(timeout: .seconds(5))
                if result == nil { process.signal(SIGKILL) }
                #expect(result?.signalled == false && result?.status == 0, "round \(round), signal \(number): \(result.map { "\($0)" } ?? "still running 5 s later (the signal was lost)")")
                #expect(result?.error.contains("stopping (signal") == true, "round \(round): \(result?.error ?? "")")
            }
        }
    }
}
