#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ProcessSupervision
import Testing

/// The one end-to-end test with cgroups (every other passes --no-cgroups: daemons on this
/// machine share the delegated subtree's names). Its app id is unique, so its cgroup is too.
extension DaemonProcessTests {
    @Suite struct Cgroups {
        /// Whether this machine gives the test process (and so its daemons) a writable
        /// delegated cgroup v2 subtree; without one the test is skipped, not passed (the
        /// process-group fallback is what every other test uses).
        static let delegated = CgroupDelegation.detect().delegation != nil

        @Test("with a delegated cgroup v2 subtree the app runs in its own cgroup and is frozen when suspended",
              .enabled(if: delegated, "no writable delegated cgroup v2 subtree on this machine"))
        func appInItsOwnCgroup() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            harness.daemonFlags.removeAll { $0 == "--no-cgroups" }
            let daemon = try await harness.startDaemon()
            let line = try #require(daemon.standardError.split(separator: "\n").first { $0.contains("app processes go into cgroups under ") },
                                    "the subtree is delegated, yet the daemon did not use it: \(daemon.standardError)")
            let appsCgroup = String(line.split(separator: " ").last ?? "")
            let app = "com.example.cg" + UUID().uuidString.prefix(8).lowercased()
            let refresh = app + ".refresh"
            // Each launch of the app submits the refresh again (the next run's request).
            try await harness.installTestApp(app, identifiers: [refresh], arguments: ["--register", refresh, "--submit", refresh])
            try await Launching.submitByHand(harness, app: app, identifier: refresh)
            #expect(try await harness.bgtask("run", app, refresh).status == 0)
            let logged = try await harness.waitForLoggedRun(app, refresh)
            #expect(logged?["outcome"] as? String == "success", "\(String(describing: logged))")
            let pid = try #require(harness.launchedPID(app))
            // Its cgroup: `app-<id>` under the daemon's apps cgroup (docs/process-supervision.md).
            let cgroup = appsCgroup + "/app-" + app
            let membership = (try? String(contentsOfFile: "/proc/\(pid)/cgroup", encoding: .utf8)) ?? ""
            #expect(membership.split(separator: "\n").contains { $0.hasPrefix("0::") && cgroup.hasSuffix($0.dropFirst(3)) }, "\(membership)")
            // Suspended with the cgroup freezer.
            let events = cgroup + "/cgroup.events"
            #expect(try await harness.poll(timeout: .seconds(5)) {
                try await harness.appState(app) == "suspended"
                    && ((try? String(contentsOfFile: events, encoding: .utf8)) ?? "").contains("frozen 1")
            }, "\((try? String(contentsOfFile: events, encoding: .utf8)) ?? "no \(events)")")
            // A warm launch: the frozen process is thawed for its next run, which is measured
            // from the counters taken while it was frozen (docs/daemon.md, "Measurement").
            #expect(try await harness.bgtask("run", app, refresh).status == 0)
            var runs: [[String: Any]] = []
            #expect(try await harness.poll(timeout: .seconds(10), every: .milliseconds(100)) {
                runs = try await harness.loggedRuns(app)
                return runs.count == 2
            }, "\(runs)")
            #expect(harness.launchedPID(app) == pid, "the same process ran both runs")
            if let warm = runs.last {
                #expect(warm["outcome"] as? String == "success", "\(warm)")
                #expect((warm["measuredBy"] as? String)?.hasPrefix("cgroup") == true, "\(warm)")
                let cpu = (warm["cpuTime"] as? NSNumber)?.doubleValue ?? -1
                #expect(cpu >= 0 && cpu < 5, "the warm run's CPU time counts from its thaw: \(warm)")
            }
            #expect(try await harness.bgtask("uninstall", app).status == 0)
            #expect(await harness.poll(timeout: .seconds(6)) { !DaemonHarness.isAlive(pid) })
            _ = try await harness.stopDaemon()
            // Leave the shared subtree as it was.
            _ = rmdir(cgroup)
        }
    }
}
