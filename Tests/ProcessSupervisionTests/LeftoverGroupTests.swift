#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import ProcessSupervision

/// Helpers an app leaves in its process group when its leader exits (no cgroup to hold
/// them): ended with the leader, and by the orphan clean-up of a restarted daemon
/// (docs/process-supervision.md, "Termination" and "Orphans").
extension ProcessSupervisionProcessTests {
    @Suite struct LeftoverGroups {
        /// Starts a shell that leaves a polite `sleep` and one ignoring SIGTERM in its group,
        /// writes their pids, and exits 0; returns the reaped leader and the helpers' pids.
        static func leaderLeavingHelpers(_ directory: String) throws -> (SupervisedProcess, [Int32]) {
            let file = directory + "/helpers"
            let script = "sleep 600 & a=$!; (trap '' TERM; exec sleep 601) & echo \"$a $!\" > \(file); exit 0"
            let process = try ProcessLauncher.launch(ProcessTestSupport.shell(script))
            #expect(process.waitForExit(timeout: ProcessTestSupport.exitTimeout)?.status == .exited(code: 0))
            let text = try String(contentsOfFile: file, encoding: .utf8)
            let helpers = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Int32($0) }
            try #require(helpers.count == 2, "helpers: \(text)")
            return (process, helpers)
        }

        static func gone(_ pid: Int32) -> Bool {
            ProcessStat.read(pid: pid).map { $0.state == "Z" || $0.state == "X" } ?? true
        }

        @Test func endLeftoversEndsWhatTheLeaderLeftInItsGroupThenKillsAfterTheGrace() throws {
            let directory = try ProcessTestSupport.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let (process, helpers) = try Self.leaderLeavingHelpers(directory)
            defer { for helper in helpers { kill(helper, SIGKILL) } }
            for helper in helpers {
                #expect(getpgid(helper) == process.pid, "helper \(helper) is in the leader's group")
            }
            process.endLeftovers(gracePeriod: .milliseconds(300))
            // The polite one ends on SIGTERM; the one ignoring it by SIGKILL after the grace.
            #expect(ProcessTestSupport.eventually { Self.gone(helpers[0]) }, "SIGTERM did not end helper \(helpers[0])")
            #expect(ProcessTestSupport.eventually { Self.gone(helpers[1]) }, "helper \(helpers[1]) outlived the grace")
        }

        @Test func endLeftoversDoesNothingWhileTheLeaderRuns() throws {
            let process = try ProcessLauncher.launch(ProcessTestSupport.shell("sleep 30"))
            defer { process.killNow() }
            process.endLeftovers(gracePeriod: .milliseconds(10))
            usleep(50_000)
            #expect(process.isRunning)
        }

        @Test func orphanReaperKillsTheGroupOfAGoneLeaderOnlyWhenItsMembersAreTheApps() throws {
            let directory = try ProcessTestSupport.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let (process, helpers) = try Self.leaderLeavingHelpers(directory)
            defer { for helper in helpers { kill(helper, SIGKILL) } }
            let startTime = try #require(process.startTime)
            let reaper = OrphanReaper()
            // Recorded as started after its members: they cannot be the app's helpers.
            let spared = reaper.end(pid: process.pid, processGroup: process.pid, startTime: UInt64.max, cgroupPath: nil)
            guard case .groupNotTheApps(process.pid, _) = spared else {
                Issue.record("expected the group to be left alone, got \(spared)")
                return
            }
            #expect(!Self.gone(helpers[0]) && !Self.gone(helpers[1]))
            // A group other than the one the leader led is never signalled.
            #expect(reaper.endLeftoverGroup(process.pid, leader: process.pid + 1, startTime: startTime) == .notRunning)
            #expect(reaper.end(pid: process.pid, processGroup: process.pid, startTime: startTime, cgroupPath: nil) == .killedLeftoverGroup(process.pid, count: 2))
            #expect(ProcessTestSupport.eventually { helpers.allSatisfy(Self.gone) })
            #expect(reaper.end(pid: process.pid, processGroup: process.pid, startTime: startTime, cgroupPath: nil) == .notRunning)
        }
    }
}
