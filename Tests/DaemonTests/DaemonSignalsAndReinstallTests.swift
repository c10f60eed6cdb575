#if canImport(Glibc)
import Glibc
#endif
import BGTaskDaemon
import DaemonProtocol
import Foundation
import SchedulerCore
import Synchronization
import Testing

/// bgtaskd's signals right after "ready" and a reinstall with another executable
/// (docs/daemon.md, "Stopping" and "Installing apps"; both found by an outside probe).
extension DaemonProcessTests {
    @Suite struct SignalsAndReinstall {
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

        @Test("bgtaskd catches SIGTERM, SIGINT and SIGHUP by the time it says ready (the kernel's view: SigCgt in /proc/PID/status)")
        func signalHandlersAreInPlaceAtReady() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let daemon = try await harness.startDaemon()
            let status = try String(contentsOfFile: "/proc/\(daemon.pid)/status", encoding: .utf8)
            let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("SigCgt:") })
            let mask = try #require(UInt64(line.dropFirst("SigCgt:".count).trimmingCharacters(in: .whitespaces), radix: 16))
            for number in [SIGHUP, SIGINT, SIGTERM] {
                #expect(mask & (1 << UInt64(number - 1)) != 0, "signal \(number) is not caught: \(line)")
            }
        }

        @Test("a reinstall with a narrower manifest removes the pending requests it no longer allows, and says which and why (an outside probe: they stayed and launched the app)")
        func reinstallWithANarrowerManifestRemovesWhatItNoLongerAllows() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            let app = "com.example.testapp"
            let (refresh, dropped, cleanup) = (app + ".refresh", app + ".dropped", app + ".cleanup")
            let arguments = ["--events", harness.eventsPath(app)]
            let wide = try harness.writeManifest(app: app, executable: harness.testApp, arguments: arguments, identifiers: [refresh, dropped, cleanup])
            #expect(try await harness.bgtask("install", wide).status == 0)
            let hand = try await harness.run(harness.testApp, [
                "--events", harness.eventsPath(app) + ".hand", "--register", refresh, "--register", dropped, "--register", cleanup,
                "--submit", refresh, "--submit-processing", dropped, "--submit-processing", cleanup, "--exit-after-launch",
            ], environment: harness.handEnvironment(app))
            #expect(hand.status == 0, "\(hand)")
            let before = try await harness.bgtask("pending", app)
            #expect([refresh, dropped, cleanup].allSatisfy { before.output.contains($0) }, "\(before)")

            // `dropped` is no longer listed, and `fetch` is no longer a background mode.
            let narrow = try harness.writeManifest(app: app, executable: harness.testApp, arguments: arguments, identifiers: [refresh, cleanup], modes: ["processing"])
            let installed = try await harness.bgtask("install", narrow)
            #expect(installed.status == 0, "\(installed)")
            #expect(installed.output.contains("removed 2 pending request(s) the new manifest does not allow"), "\(installed)")
            #expect(installed.output.contains("'\(dropped)' (not in BGTaskSchedulerPermittedIdentifiers any more)"), "\(installed)")
            #expect(installed.output.contains("'\(refresh)' (a refresh task, and \"fetch\" is not in UIBackgroundModes any more)"), "\(installed)")
            let after = try await harness.bgtask("pending", app)
            #expect(after.output.contains(cleanup), "\(after)")
            #expect(!after.output.contains(dropped) && !after.output.contains(refresh), "\(after)")
            // Installed again as it is: nothing more to remove, nothing said.
            let again = try await harness.bgtask("install", narrow)
            #expect(again.status == 0 && !again.output.contains("removed"), "\(again)")
        }

        @Test("a reinstall with another executable ends the old executable's process; the next run cold-launches the new one")
        func reinstallWithAnotherExecutableEndsTheOldProcess() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            let app = "com.example.testapp"
            let refresh = app + ".refresh"
            let arguments = ["--events", harness.eventsPath(app), "--register", refresh, "--behaviour", "complete"]
            let manifest = try harness.writeManifest(app: app, executable: harness.testApp, arguments: arguments, identifiers: [refresh])
            #expect(try await harness.bgtask("install", manifest).status == 0)
            try await Launching.submitByHand(harness, app: app, identifier: refresh)
            #expect(try await harness.bgtask("run", app, refresh).status == 0)
            #expect(await harness.waitForEvent(app, "completed \(refresh) ") != nil, "\(harness.events(app))")
            let old = try #require(harness.launchedPID(app))
            #expect(try await harness.poll(timeout: .seconds(5)) { try await harness.appState(app) == "suspended" })
            // Installed again as it is: its process is still the app's and is kept (checked
            // below: the only process ended for a reinstall is the one after this).
            #expect(try await harness.bgtask("install", manifest).status == 0)

            // The same app, another executable: a copy of the test app beside the manifest.
            let directory = harness.root + "/apps/" + app
            let copy = directory + "/testapp-2"
            try FileManager.default.copyItem(atPath: harness.testApp, toPath: copy)
            #expect(chmod(copy, 0o755) == 0)
            let replaced = try harness.writeManifest(app: app, executable: copy, arguments: arguments, identifiers: [refresh])
            #expect(try await harness.bgtask("install", replaced).status == 0)
            #expect(await harness.poll(timeout: .seconds(10)) { !DaemonHarness.isAlive(old) }, "the old executable's process \(old) was not ended: \(harness.daemon?.standardError ?? "")")
            // The daemon logs a reinstall's ending before it answers, so the first reinstall's
            // line would be there by now.
            let ended = harness.daemon?.standardError.components(separatedBy: "'s running process ends: the app was reinstalled").count ?? 0
            #expect(ended - 1 == 1, "\(harness.daemon?.standardError ?? "")")

            // Submitted by the new executable run by hand (the old one is not the app any more).
            let hand = try await harness.run(copy, ["--events", harness.eventsPath(app) + ".hand2", "--register", refresh, "--submit", refresh, "--exit-after-launch"], environment: harness.handEnvironment(app))
            #expect(hand.status == 0, "\(hand)")
            let second = try await harness.bgtask("run", app, refresh)
            #expect(second.status == 0, "\(second)\nbgtaskd: \(harness.daemon?.standardError ?? "")")
            #expect(await harness.poll(timeout: .seconds(10)) { harness.launchedPID(app).map { $0 != old } ?? false }, "no cold launch: \(harness.events(app))")
            let new = try #require(harness.launchedPID(app))
            let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(new)/exe")
            #expect(executable == copy)
            #expect(await harness.poll(timeout: .seconds(10)) { harness.events(app).filter { $0.hasPrefix("completed \(refresh) ") }.count == 2 }, "\(harness.events(app))")
        }
    }
}
