#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// bgtaskd launching apps for their tasks, end to end: real daemon, real apps, real bgtask
/// (docs/daemon.md, "Launching for tasks"; docs/testing.md, "End-to-end daemon tests").
extension DaemonProcessTests {
    @Suite struct Launching {
        static let app = "com.example.testapp"
        static let refresh = "com.example.testapp.refresh"

        /// Runs the test app by hand (not by the daemon) so it submits `identifier` through
        /// the daemon (it is reachable and the app installed), then exits.
        static func submitByHand(_ harness: DaemonHarness, app: String, identifier: String, extra: [String] = []) async throws {
            let result = try await harness.run(harness.testApp, ["--events", harness.eventsPath(app) + ".hand", "--register", identifier, "--submit", identifier, "--exit-after-launch"] + extra, environment: harness.handEnvironment(app))
            #expect(result.status == 0, "\(result)")
            let lines = ((try? String(contentsOfFile: harness.eventsPath(app) + ".hand", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            // On failure, the app's standard error says why it did not use the daemon.
            #expect(lines.contains { $0.hasPrefix("launched ") && $0.hasSuffix(" daemon") }, "\(lines)\n\(result)\nbgtaskd: \(harness.daemon?.standardError ?? "")")
            #expect(lines.contains("submitted \(identifier)"), "\(lines)\n\(result)\nbgtaskd: \(harness.daemon?.standardError ?? "")")
        }

        @Test("bgtask run launches the installed example app (feedreader serve), not running, and its handler completes")
        func feedReaderLaunchedForItsTask() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            let feedreader = try Product.locate("feedreader")
            let manifest = try harness.writeManifest(
                app: "com.example.feedreader", executable: feedreader, arguments: ["serve"],
                identifiers: ["com.example.feedreader.refresh", "com.example.feedreader.cleanup"],
                modes: ["fetch", "processing", "remote-notification"])
            let installed = try await harness.bgtask("install", manifest)
            #expect(installed.status == 0, "\(installed)")

            // The user runs the app once (it submits its refresh through the daemon), then quits it.
            let opened = try harness.spawn(feedreader, ["serve"], name: "feedreader")
            let submitted = try await harness.poll(timeout: .seconds(10)) {
                try await harness.pendingIdentifiers("com.example.feedreader").contains("com.example.feedreader.refresh")
            }
            #expect(submitted, "feedreader: \(opened.standardError)")
            opened.signal(SIGTERM)
            #expect(await opened.waitForExit(timeout: .seconds(10)) != nil)
            #expect(try await harness.poll(timeout: .seconds(5)) { try await harness.appState("com.example.feedreader") == "notRunning" })

            let run = try await harness.bgtask("run", "com.example.feedreader", "com.example.feedreader.refresh")
            #expect(run.status == 0, "\(run)")
            let logged = try await harness.waitForLoggedRun("com.example.feedreader", "com.example.feedreader.refresh")
            #expect(logged?["outcome"] as? String == "success", "\(String(describing: logged)); daemon: \(harness.daemon?.standardError ?? "")")
            // Launched by the daemon (it was not running), then suspended once its task was done.
            #expect(harness.daemon?.standardError.contains("started com.example.feedreader in the background") == true)
            var state: String?
            #expect(try await harness.poll(timeout: .seconds(5)) {
                state = try await harness.appState("com.example.feedreader")
                return state == "suspended"
            }, "state \(state ?? "none"); daemon: \(harness.daemon?.standardError ?? "")")
        }

        @Test("bgtask run launches the test app (not running) for its task; the handler completes; the app is suspended")
        func testAppLaunchedAndCompletes() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            try await harness.installTestApp(Self.app, identifiers: [Self.refresh], arguments: ["--register", Self.refresh, "--behaviour", "complete"])
            // Not running, nothing pending: run fails clearly.
            let nothing = try await harness.bgtask("run", Self.app, Self.refresh)
            #expect(nothing.status == 1)
            #expect(nothing.error.contains(Self.refresh), "\(nothing)")

            try await Self.submitByHand(harness, app: Self.app, identifier: Self.refresh)
            #expect(try await harness.pendingIdentifiers(Self.app) == [Self.refresh])
            let run = try await harness.bgtask("run", Self.app, Self.refresh)
            #expect(run.status == 0, "\(run)")
            #expect(await harness.waitForEvent(Self.app, "completed \(Self.refresh) true") != nil, "\(harness.events(Self.app))")
            let launched = harness.events(Self.app).first { $0.hasPrefix("launched ") }
            #expect(launched?.hasSuffix(" daemon") == true, "started by the daemon, linked to it: \(String(describing: launched))")
            let logged = try await harness.waitForLoggedRun(Self.app, Self.refresh)
            #expect(logged?["outcome"] as? String == "success", "\(String(describing: logged))")
            #expect(try await harness.poll(timeout: .seconds(5)) { try await harness.appState(Self.app) == "suspended" })
            #expect(try await harness.pendingIdentifiers(Self.app).isEmpty)
        }

        @Test("a request the app submitted survives a daemon restart (SIGTERM, start again): pending unchanged")
        func pendingSurvivesRestart() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            let cleanup = Self.app + ".cleanup"
            try await harness.installTestApp(Self.app, identifiers: [Self.refresh, cleanup], arguments: ["--register", Self.refresh])
            let result = try await harness.run(harness.testApp, ["--events", harness.eventsPath(Self.app) + ".hand", "--register", Self.refresh, "--register", cleanup, "--submit", Self.refresh, "--submit-processing", cleanup, "--exit-after-launch"], environment: harness.handEnvironment(Self.app))
            #expect(result.status == 0, "\(result)")
            let before = try await harness.bgtask("pending", "--json")
            #expect(try await harness.pendingIdentifiers(Self.app) == [Self.refresh, cleanup].sorted())

            let stopped = try await harness.stopDaemon()
            #expect(stopped.status == 0 && !stopped.signalled, "\(stopped)")
            #expect(stopped.error.contains("2 request(s) pending stay on disk"), "\(stopped.error)")
            // No daemon: read commands answer from the state directory, read-only.
            let offline = try await harness.bgtask("pending", "--json")
            #expect(offline.status == 0, "\(offline)")
            #expect(offline.error.contains("bgtaskd is not running"), "\(offline)")
            #expect(offline.output == before.output)

            try await harness.startDaemon()
            let after = try await harness.bgtask("pending", "--json")
            #expect(after.output == before.output, "before: \(before.output)\nafter: \(after.output)")
            // bgtask why answers from the live engine (the app has no embedded state to read).
            let why = try await harness.bgtask("why", Self.app, Self.refresh, "--json")
            #expect(why.status == 0, "\(why)")
            #expect((try? JSONSerialization.jsonObject(with: Data(why.output.utf8))) is [String: Any], "\(why.output)")
            #expect(!FileManager.default.fileExists(atPath: harness.stateHome + "/bgtask/" + Self.app))
        }

        @Test("a restarted bgtaskd judges as the one before: a refresh the rate limit held still waits for the minute, a switched-off app's refresh waits, whichever app is installed first")
        func restartKeepsTheRateLimitAndTheSwitch() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            // Nothing launches by itself before the restart: the refreshes stay pending.
            try await harness.startDaemon(environment: harness.environment.merging(["BGTASK_MANUAL_LAUNCH": "1"]) { $1 })
            // Installed before the others at the restart (apps are read in order): installing
            // it judged their requests before their switch and policy state were known.
            let first = "com.example.aaa", switchedOff = "com.example.zzz"
            try await harness.installTestApp(first, identifiers: [first + ".refresh"], arguments: [])
            try await harness.installTestApp(switchedOff, identifiers: [switchedOff + ".refresh"], arguments: ["--register", switchedOff + ".refresh"])
            let manifest = try harness.writeManifest(app: Self.app, executable: harness.testApp, arguments: ["--events", harness.eventsPath(Self.app), "--register", Self.refresh],
                                                     identifiers: [Self.refresh], modes: ["fetch", "remote-notification"])
            #expect(try await harness.bgtask("install", manifest).status == 0)
            // Launched by a push: the rate limit spaces its next launch a minute from it.
            #expect(try await harness.bgtask("push", Self.app).status == 0)
            let pushed = try await harness.waitForLoggedRun(Self.app, Self.app + ".remote-notification")
            #expect(pushed?["outcome"] as? String == "success", "\(String(describing: pushed))")
            // Due at once (the test app's default is an hour from now).
            try await Self.submitByHand(harness, app: Self.app, identifier: Self.refresh, extra: ["--submit-after", "0"])
            try await Self.submitByHand(harness, app: switchedOff, identifier: switchedOff + ".refresh", extra: ["--submit-after", "0"])
            #expect(try await harness.bgtask("settings", switchedOff, "background-refresh", "off").status == 0)
            let stopped = try await harness.stopDaemon()
            #expect(stopped.status == 0, "\(stopped)")

            try await harness.startDaemon()
            let why = try await harness.bgtask("why", Self.app, Self.refresh)
            #expect(why.status == 0, "\(why)")
            #expect(why.output.contains("the app was launched ") && why.output.contains("ago; launches are at least 1 min apart"), "\(why.output)")
            // Neither was launched at the start (an outside probe: both ran before "ready").
            #expect(try harness.runs(of: Self.app).map(\.identifier) == [Self.app + ".remote-notification"])
            #expect(try harness.runs(of: switchedOff).isEmpty)
            #expect(try await harness.pendingIdentifiers(switchedOff) == [switchedOff + ".refresh"])
            #expect(try await harness.pendingIdentifiers(Self.app) == [Self.refresh])
        }

        @Test("a handler that ignores its expiration is terminated within grace + 3 s and logged terminated; SIGTERM ignored, SIGKILL ends it")
        func ignoredExpirationIsTerminated() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            try await harness.installTestApp(Self.app, identifiers: [Self.refresh], arguments: ["--register", Self.refresh, "--behaviour", "ignore-expiration", "--ignore-sigterm"])
            try await Self.submitByHand(harness, app: Self.app, identifier: Self.refresh)
            #expect(try await harness.bgtask("run", Self.app, Self.refresh).status == 0)
            #expect(await harness.waitForEvent(Self.app, "handler \(Self.refresh)") != nil, "\(harness.events(Self.app))")
            let pid = try #require(harness.launchedPID(Self.app))

            let expiredAt = ContinuousClock.now
            let expire = try await harness.bgtask("expire", Self.app, Self.refresh)
            #expect(expire.status == 0, "\(expire)")
            #expect(await harness.waitForEvent(Self.app, "expired \(Self.refresh)") != nil)
            // Grace 2 s (SchedulerConfiguration.expirationGrace), then SIGTERM, SIGKILL 3 s later.
            let logged = try await harness.waitForLoggedRun(Self.app, Self.refresh, timeout: .seconds(8))
            #expect(logged?["outcome"] as? String == "terminated", "\(String(describing: logged))")
            let gone = await harness.poll(timeout: .seconds(8)) { !DaemonHarness.isAlive(pid) }
            let elapsed = ContinuousClock.now - expiredAt
            #expect(gone, "pid \(pid) still alive")
            #expect(elapsed <= .seconds(2 + 3 + 1), "ended \(elapsed) after the expiration")
            #expect(harness.events(Self.app).contains("sigterm"), "it got SIGTERM first: \(harness.events(Self.app))")
        }

        @Test("a handler that overruns its budget is told at the deadline and sent SIGTERM when the grace ends, then logged terminated")
        func overrunBudgetIsTerminatedAtTheGracesEnd() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            // A budget of 5 s (SchedulerConfiguration.simulatedExpirationAfter), grace 2 s.
            try await harness.startDaemon(environment: harness.environment.merging(["BACKGROUND_TASK_SIMULATE_EXPIRATION": "YES"]) { $1 })
            try await harness.installTestApp(Self.app, identifiers: [Self.refresh], arguments: ["--register", Self.refresh, "--behaviour", "ignore-expiration", "--ignore-sigterm"])
            try await Self.submitByHand(harness, app: Self.app, identifier: Self.refresh)
            // The run starts after this instant (it is this call's), so its budget (5 s) and
            // grace (2 s) end at least 7 s after it, however long the app takes to start (a
            // sanitizer build's app takes over a second, which a bound measured from the
            // handler's first event did not allow for).
            let requestedAt = ContinuousClock.now
            #expect(try await harness.bgtask("run", Self.app, Self.refresh).status == 0)
            #expect(await harness.waitForEvent(Self.app, "handler \(Self.refresh)") != nil, "\(harness.events(Self.app))")
            let pid = try #require(harness.launchedPID(Self.app))
            #expect(await harness.waitForEvent(Self.app, "expired \(Self.refresh)", timeout: .seconds(8)) != nil, "\(harness.events(Self.app))")
            #expect(await harness.waitForEvent(Self.app, "sigterm", timeout: .seconds(6)) != nil, "\(harness.events(Self.app))")
            let signalledAfter = ContinuousClock.now - requestedAt
            #expect(signalledAfter >= .milliseconds(6_950), "SIGTERM \(signalledAfter) after the run was asked for: before the budget and its grace")
            let logged = try await harness.waitForLoggedRun(Self.app, Self.refresh, timeout: .seconds(8))
            #expect(logged?["outcome"] as? String == "terminated", "\(String(describing: logged))")
            #expect(await harness.poll(timeout: .seconds(8)) { !DaemonHarness.isAlive(pid) }, "pid \(pid) still alive")
        }

        @Test("a handler that crashes is logged crashed; the app can be launched again")
        func crashingHandlerIsLoggedCrashed() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            try await harness.installTestApp(Self.app, identifiers: [Self.refresh], arguments: ["--register", Self.refresh, "--behaviour", "crash"])
            try await Self.submitByHand(harness, app: Self.app, identifier: Self.refresh)
            #expect(try await harness.bgtask("run", Self.app, Self.refresh).status == 0)
            let logged = try await harness.waitForLoggedRun(Self.app, Self.refresh)
            #expect(logged?["outcome"] as? String == "crashed", "\(String(describing: logged))")
            // How the process ended, whether its connection's close or its exit came first.
            #expect((logged?["stopReason"] as? String)?.contains("SIGABRT") == true, "\(String(describing: logged))")
            #expect(harness.events(Self.app).contains("crashing \(Self.refresh)"))
            #expect(try await harness.poll(timeout: .seconds(5)) { try await harness.appState(Self.app) == "notRunning" })
            #expect(try await harness.bgtask("status").status == 0)
        }

        @Test("an app that exits before registering, or never connects, is recorded as a failed launch and disturbs no other app")
        func failedLaunchesAreRecorded() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            let quitter = "com.example.quitter", staller = "com.example.staller", good = "com.example.good"
            try await harness.installTestApp(quitter, identifiers: [quitter + ".refresh"], arguments: ["--register", quitter + ".refresh", "--behaviour", "exit-before-register"])
            try await harness.installTestApp(staller, identifiers: [staller + ".refresh"], arguments: ["--behaviour", "stall-before-launch"])
            try await harness.installTestApp(good, identifiers: [good + ".refresh"], arguments: ["--register", good + ".refresh", "--work", "0.5"])
            for app in [quitter, staller, good] {
                try await Self.submitByHand(harness, app: app, identifier: app + ".refresh")
            }
            for app in [quitter, staller, good] {
                let run = try await harness.bgtask("run", app, app + ".refresh")
                #expect(run.status == 0, "\(app): \(run)")
            }
            let quit = try await harness.waitForLoggedRun(quitter, quitter + ".refresh")
            #expect(quit?["outcome"] as? String == "failure", "\(String(describing: quit))")
            // Its connection or its exit may reach the daemon first: both end the launch.
            #expect((quit?["stopReason"] as? String)?.isEmpty == false, "\(String(describing: quit))")
            // The launch timeout is 2 s (--launch-timeout).
            let stalled = try await harness.waitForLoggedRun(staller, staller + ".refresh", timeout: .seconds(8))
            #expect(stalled?["outcome"] as? String == "failure", "\(String(describing: stalled))")
            #expect((stalled?["stopReason"] as? String)?.contains("did not connect and finish launching") == true, "\(String(describing: stalled))")
            let stallerPID = try #require(harness.launchedPID(staller))
            #expect(await harness.poll(timeout: .seconds(5)) { !DaemonHarness.isAlive(stallerPID) }, "the app that never connected is ended")

            let ok = try await harness.waitForLoggedRun(good, good + ".refresh")
            #expect(ok?["outcome"] as? String == "success", "\(String(describing: ok))")
        }

        @Test("bgtask run and push fail (exit 1) naming the app, the executable and the cause when the executable cannot be run (ENOEXEC, EACCES); the run is logged failed, the push not counted")
        func aLaunchThatFailsAtOnceIsTheAnswer() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            try await harness.installTestApp(Self.app, identifiers: [Self.refresh], arguments: ["--register", Self.refresh])
            try await Self.submitByHand(harness, app: Self.app, identifier: Self.refresh)
            // The same app reinstalled with a file the kernel cannot run: neither ELF nor "#!".
            let broken = harness.root + "/apps/" + Self.app + "/not-a-program"
            #expect(FileManager.default.createFile(atPath: broken, contents: Data("echo no interpreter line\n".utf8), attributes: [.posixPermissions: 0o755]))
            let manifest = try harness.writeManifest(app: Self.app, executable: broken, arguments: [], identifiers: [Self.refresh], modes: ["fetch", "remote-notification"])
            #expect(try await harness.bgtask("install", manifest).status == 0)

            // An outside probe: this printed nothing and exited 0.
            let run = try await harness.bgtask("run", Self.app, Self.refresh)
            #expect(run.status == 1, "\(run)")
            #expect(run.error.contains("\(Self.app) could not be started: cannot launch ") && run.error.contains("not-a-program: execve: ") && run.error.contains("(ENOEXEC)"), "\(run.error)")
            let logged = try await harness.waitForLoggedRun(Self.app, Self.refresh)
            #expect(logged?["outcome"] as? String == "failure", "\(String(describing: logged))")
            // The app never got the task: its request stays for the next attempt (it was lost,
            // and a fixed install never ran until the app was started by hand).
            #expect(run.error.contains("its request kept for the next attempt"), "\(run.error)")
            #expect(try await harness.pendingIdentifiers(Self.app) == [Self.refresh])

            // Not executable any more (EACCES, even for root). More pushes than the 3 an hour:
            // a wake that never reached the app is not counted.
            #expect(chmod(broken, 0o644) == 0)
            for attempt in 1...4 {
                let push = try await harness.bgtask("push", Self.app)
                #expect(push.status == 1, "push \(attempt): \(push)")
                #expect(push.error.contains("\(Self.app) could not be started: cannot launch ") && push.error.contains("(EACCES)"), "push \(attempt): \(push.error)")
            }
            #expect(try await harness.bgtask("status").status == 0)
            // A remote wake is not filed again (only a push files one): the refresh alone waits.
            #expect(try await harness.pendingIdentifiers(Self.app) == [Self.refresh])
        }

        @Test("an app registering and submitting an identifier its installed manifest does not permit is refused by the daemon")
        func unknownIdentifierIsRefused() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            try await harness.installTestApp(Self.app, identifiers: [Self.refresh], arguments: ["--register", Self.refresh])
            let sneaky = Self.app + ".sneaky"
            try await Self.submitByHand(harness, app: Self.app, identifier: Self.refresh, extra: ["--unknown", sneaky])
            let lines = ((try? String(contentsOfFile: harness.eventsPath(Self.app) + ".hand", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            // The app's own (code) manifest permits it; the daemon judges with the installed one.
            #expect(lines.contains("registered \(sneaky) true"), "\(lines)")
            #expect(lines.contains { $0.hasPrefix("submit-failed \(sneaky)") }, "\(lines)")
            // Its retry policy, posted without waiting, is refused too (the daemon says so).
            #expect(await harness.poll(timeout: .seconds(5)) {
                harness.daemon?.standardError.contains("setRetryPolicy of \(Self.app) refused: \(sneaky) is not in the BGTaskSchedulerPermittedIdentifiers") == true
            }, "\(harness.daemon?.standardError ?? "")")
            #expect(try await harness.pendingIdentifiers(Self.app) == [Self.refresh])
            #expect(try await harness.bgtask("run", Self.app, Self.refresh).status == 0)
            let logged = try await harness.waitForLoggedRun(Self.app, Self.refresh)
            #expect(logged?["outcome"] as? String == "success", "\(String(describing: logged))")
        }
    }
}
