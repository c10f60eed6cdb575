#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// Apps from outside, end to end: install errors, uninstall, force-quit and open, remote
/// wakes (docs/daemon.md, "Apps and manifests", "Lifecycle from outside", "Remote wake").
extension DaemonProcessTests {
    @Suite struct Lifecycle {
        static let app = "com.example.testapp"
        static let refresh = "com.example.testapp.refresh"

        @Test("install refuses a manifest whose executable is missing, not executable, or a symbolic link, naming the file and key")
        func installRefusesBadExecutables() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            let missing = try harness.writeManifest(app: "com.example.missing", executable: harness.root + "/nowhere", arguments: [], identifiers: [], name: "missing")
            let plain = harness.root + "/plain"
            _ = FileManager.default.createFile(atPath: plain, contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o644])
            let notExecutable = try harness.writeManifest(app: "com.example.plain", executable: plain, arguments: [], identifiers: [], name: "plain")
            let link = harness.root + "/link"
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: harness.testApp)
            let symlink = try harness.writeManifest(app: "com.example.link", executable: link, arguments: [], identifiers: [], name: "link")
            for manifest in [missing, notExecutable, symlink] {
                let result = try await harness.bgtask("install", manifest)
                #expect(result.status == 1, "\(manifest): \(result)")
                #expect(result.error.contains(manifest) && result.error.contains("CFBundleExecutable"), "\(result.error)")
            }
            let apps = try await harness.bgtask("apps")
            #expect(apps.output.contains("no app is installed"), "\(apps)")
        }

        @Test("bgtask push wakes the (not running) app: its remote-notification handler runs with the payload")
        func pushWakesTheApp() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            let path = try harness.writeManifest(app: Self.app, executable: harness.testApp, arguments: ["--events", harness.eventsPath(Self.app)],
                                                 identifiers: [Self.refresh], modes: ["fetch", "remote-notification"])
            #expect(try await harness.bgtask("install", path).status == 0)
            let push = try await harness.bgtask("push", Self.app, "--payload", #"{"feed":"news","count":3}"#)
            #expect(push.status == 0, "\(push)")
            #expect(await harness.waitForEvent(Self.app, "remote-notification count,feed") != nil, "\(harness.events(Self.app))")
            let logged = try await harness.waitForLoggedRun(Self.app, Self.app + ".remote-notification")
            #expect(logged?["outcome"] as? String == "success", "\(String(describing: logged))")
            // An app without the background mode is told so, not that an identifier is missing.
            let quiet = "com.example.nopush"
            let quietPath = try harness.writeManifest(app: quiet, executable: harness.testApp, arguments: [], identifiers: [quiet + ".refresh"], modes: ["fetch"])
            #expect(try await harness.bgtask("install", quietPath).status == 0)
            let refused = try await harness.bgtask("push", quiet)
            #expect(refused.status != 0 && refused.error.contains("does not list remote-notification in UIBackgroundModes"), "\(refused)")
            #expect(!refused.error.contains("BGTaskSchedulerPermittedIdentifiers"), "\(refused)")
            let bad = try await harness.bgtask("push", Self.app, "--payload", "[1]")
            // Refused by the CLI before it is sent...
            #expect(bad.status == 64 && bad.error.contains("JSON object"), "\(bad)")
            // ...and by the daemon, for a client that sends it anyway.
            let direct = try await harness.rawAdminRequest(#"{"push": {"app": sys.argv[2], "payload": "[1]"}}"#, argument: Self.app)
            #expect(direct.output.contains("must be a JSON object") && direct.output.contains("an array"), "\(direct)")

            // Two more pushes make the hour's three; the fourth is refused with the instant the
            // next is allowed, to the second ("in 1 h" may be 59 minutes or one).
            for _ in 0..<2 { #expect(try await harness.bgtask("push", Self.app).status == 0) }
            let fourth = try await harness.bgtask("push", Self.app)
            #expect(fourth.status == 1, "\(fourth)")
            #expect(fourth.error.range(of: #"the next is allowed at \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z \(in "#, options: .regularExpression) != nil, "\(fourth.error)")
            // An uninstalled app's pushes are forgotten: reinstalled, it starts afresh.
            #expect(try await harness.bgtask("uninstall", Self.app).status == 0)
            #expect(try await harness.bgtask("install", path).status == 0)
            let afresh = try await harness.bgtask("push", Self.app)
            #expect(afresh.status == 0, "\(afresh)")
        }

        @Test("force-quit ends the running app (its task expired, it exits on SIGTERM); uninstall removes its requests")
        func forceQuitAndUninstall() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            try await harness.installTestApp(Self.app, identifiers: [Self.refresh], arguments: ["--register", Self.refresh, "--behaviour", "hang"])
            try await Launching.submitByHand(harness, app: Self.app, identifier: Self.refresh)
            #expect(try await harness.bgtask("run", Self.app, Self.refresh).status == 0)
            #expect(await harness.waitForEvent(Self.app, "handler \(Self.refresh)") != nil, "\(harness.events(Self.app))")
            let pid = try #require(harness.launchedPID(Self.app))
            let quitAt = ContinuousClock.now
            let quit = try await harness.bgtask("force-quit", Self.app)
            #expect(quit.status == 0, "\(quit)")
            #expect(await harness.poll(timeout: .seconds(6)) { !DaemonHarness.isAlive(pid) }, "pid \(pid) still alive")
            // SIGTERM: the handler got its expiration and the app exited by itself, before
            // the SIGKILL due 3 s later.
            #expect(ContinuousClock.now - quitAt < .milliseconds(2500))
            #expect(harness.events(Self.app).contains("expired \(Self.refresh)"), "\(harness.events(Self.app))")
            #expect(await harness.poll(timeout: .seconds(2)) { harness.daemon?.standardError.contains("\(Self.app)'s process exited with code 0") == true },
                    "\(harness.daemon?.standardError ?? "")")
            #expect(try await harness.appState(Self.app) == "notRunning")
            let logged = try await harness.waitForLoggedRun(Self.app, Self.refresh)
            #expect(logged?["outcome"] as? String == "expired", "the handler completed on the expiration the force-quit gave it: \(String(describing: logged))")
            #expect((logged?["stopReason"] as? String)?.hasPrefix("the user force-quit the app") == true, "\(String(describing: logged))")

            #expect(try await harness.bgtask("open", Self.app).status == 0)
            try await Launching.submitByHand(harness, app: Self.app, identifier: Self.refresh)
            let uninstall = try await harness.bgtask("uninstall", Self.app)
            #expect(uninstall.status == 0, "\(uninstall)")
            #expect(uninstall.output.contains("1 pending request(s) removed"), "\(uninstall)")
            let pending = try await harness.bgtask("pending")
            #expect(pending.output.contains("no request is pending"), "\(pending)")
            let again = try await harness.bgtask("run", Self.app, Self.refresh)
            #expect(again.status == 1 && again.error.contains("not installed"), "\(again)")
        }

        @Test("an app the user started, sent to the background, is suspended and stays (as on iOS); SIGTERM then ends it, status 0")
        func aBackgroundedUserProcessStaysUntilSIGTERM() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let user = try await Reconnecting.startedByTheUser(harness)
            defer { user.signal(SIGKILL) }
            #expect(try await harness.bgtask("open", Self.app).status == 0)
            #expect(await harness.waitForEvent("user", "state active") != nil, "\(harness.events("user"))")
            #expect(try await harness.bgtask("background", Self.app).status == 0)
            // The app calls handleTerminationSignals(): before, any suspension ended it.
            #expect(await harness.waitForEvent("user", "state suspended") != nil, "\(harness.events("user"))")
            #expect(await harness.poll(timeout: .seconds(1)) { !DaemonHarness.isAlive(user.pid) } == false, "suspended, not ended")
            user.signal(SIGTERM)
            let ended = await user.waitForExit(timeout: .seconds(5))
            #expect(ended?.signalled == false && ended?.status == 0, "\(String(describing: ended)); \(user.standardError)")
        }

        @Test("force-quit ends an app the user started too (SIGTERM to its process; it disconnected it and left it running, while apps said notRunning)")
        func forceQuitEndsAUserProcess() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let user = try await Reconnecting.startedByTheUser(harness)
            defer { user.signal(SIGKILL) }
            let quit = try await harness.bgtask("force-quit", Self.app)
            #expect(quit.status == 0, "\(quit)")
            // It exits once suspended, the suspend delay (5 s) after the SIGTERM put it in the
            // background: a 5 s wait from the command's return raced with that (a failure in a
            // loaded full run).
            let ended = await user.waitForExit(timeout: .seconds(15))
            #expect(ended?.signalled == false && ended?.status == 0, "it exits by itself on SIGTERM: \(String(describing: ended)); \(user.standardError)")
            #expect(harness.daemon?.standardError.contains("bgtaskd info [\(Self.app)]: ending \(Self.app) (pid \(user.pid), started by the user) with SIGTERM: the user force-quit the app") == true, "\(harness.daemon?.standardError ?? "")")
            #expect(try await harness.appState(Self.app) == "notRunning")
        }

        @Test("force-quit of an app the user started during a refresh: the run hears its expiration first, and its end with the process is no throttle strike")
        func forceQuitDuringARunOfAUserProcessIsNoStrike() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            try await harness.installTestApp(Self.app, identifiers: [Self.refresh], arguments: ["--register", Self.refresh])
            let user = try harness.spawn(
                harness.testApp, ["--events", harness.eventsPath("user"), "--register", Self.refresh, "--submit", Self.refresh, "--behaviour", "hang"],
                environment: harness.handEnvironment(Self.app), name: "user")
            defer { user.signal(SIGKILL) }
            #expect(await harness.waitForEvent("user", "submitted \(Self.refresh)") != nil, "\(harness.events("user")); \(user.standardError)")
            #expect(try await harness.bgtask("run", Self.app, Self.refresh).status == 0)
            #expect(await harness.waitForEvent("user", "handler \(Self.refresh) \(user.pid)") != nil, "\(harness.events("user"))")
            #expect(try await harness.bgtask("force-quit", Self.app).status == 0)
            #expect(await user.waitForExit(timeout: .seconds(15)) != nil, "\(user.standardError)")
            #expect(harness.events("user").contains("expired \(Self.refresh)"), "\(harness.events("user"))")
            let logged = try await harness.waitForLoggedRun(Self.app, Self.refresh)
            #expect(logged?["stopReason"] as? String != nil, "\(String(describing: logged))")
            // The user's doing, not the app's: its next request is not held by a throttle
            // (a crash strike held it before).
            #expect(try await harness.bgtask("open", Self.app).status == 0)
            try await Launching.submitByHand(harness, app: Self.app, identifier: Self.refresh)
            let why = try await harness.bgtask("why", Self.app, Self.refresh)
            #expect(why.status == 0 && why.output.contains("the app is not throttled"), "\(why)\n\(String(describing: logged))")
        }

        @Test("a SIGTERM during a slow launch, with the signals handled from launch(), ends the app in order: background, suspended, status 0 (not 143)")
        func aSigtermDuringTheLaunchEndsTheAppInOrder() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            try await harness.installTestApp(Self.app, identifiers: [Self.refresh], arguments: ["--register", Self.refresh])
            let user = try harness.spawn(
                harness.testApp, ["--events", harness.eventsPath("user"), "--register", Self.refresh, "--launch-seconds", "2"],
                environment: harness.handEnvironment(Self.app), name: "user")
            defer { user.signal(SIGKILL) }
            #expect(await harness.waitForEvent("user", "launching") != nil, "\(harness.events("user")); \(user.standardError)")
            user.signal(SIGTERM)
            let ended = await user.waitForExit(timeout: .seconds(10))
            #expect(ended?.signalled == false && ended?.status == 0, "\(String(describing: ended)); \(user.standardError)")
            let events = harness.events("user")
            // It finished its launch in the background, where the signal put it, and was never active.
            #expect(events.contains("finished-launching") && events.contains("state background") && events.contains("state suspended"), "\(events)")
            #expect(!events.contains("state active"), "\(events)")
        }

        @Test("a suspended app is ended after the idle timeout, and exits by itself on SIGTERM")
        func idleAppIsEnded() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon(["--idle-timeout", "0.5"])
            try await harness.installTestApp(Self.app, identifiers: [Self.refresh], arguments: ["--register", Self.refresh])
            try await Launching.submitByHand(harness, app: Self.app, identifier: Self.refresh)
            #expect(try await harness.bgtask("run", Self.app, Self.refresh).status == 0)
            #expect(await harness.waitForEvent(Self.app, "completed \(Self.refresh) true") != nil, "\(harness.events(Self.app))")
            let pid = try #require(harness.launchedPID(Self.app))
            // Suspend delay 0.2 s, idle 0.5 s, then SIGTERM (thawed first): well before a SIGKILL.
            #expect(await harness.poll(timeout: .seconds(3)) { !DaemonHarness.isAlive(pid) }, "pid \(pid) still alive")
            #expect(await harness.poll(timeout: .seconds(2)) { harness.daemon?.standardError.contains("\(Self.app)'s process exited with code 0") == true },
                    "\(harness.daemon?.standardError ?? "")")
            #expect(harness.daemon?.standardError.contains("idle for") == true)
            #expect(try await harness.appState(Self.app) == "notRunning")
        }
    }
}
