#if canImport(Glibc)
import Glibc
#endif
import DaemonProtocol
import Foundation
import SchedulerCore
import Testing

/// An app's connection to the daemon outlives the daemon's restarts, and a user's process
/// of an app never falls back to a scheduler of its own while the daemon's process of the
/// app works (docs/daemon.md, "Reconnecting" and "One process per app").
extension DaemonProcessTests {
    @Suite struct Reconnecting {
        static let app = "com.example.testapp"
        static let refresh = "com.example.testapp.refresh"

        /// A daemon with the test app installed, and a process of it the user started (it
        /// submits its refresh on SIGUSR1), once it finished launching.
        static func startedByTheUser(_ harness: DaemonHarness) async throws -> TestProcess {
            try await harness.startDaemon()
            try await harness.installTestApp(app, identifiers: [refresh], arguments: ["--register", refresh])
            let user = try harness.spawn(
                harness.testApp, ["--events", harness.eventsPath("user"), "--register", refresh, "--submit-on-signal", refresh],
                environment: harness.handEnvironment(app), name: "user")
            #expect(await harness.waitForEvent("user", "finished-launching") != nil, "\(harness.events("user")); \(user.standardError)")
            return user
        }

        @Test("an app the user started reconnects after the daemon is killed and started again: it submits and runs tasks through the new daemon")
        func aUserProcessReconnectsAfterADaemonRestart() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let user = try await Self.startedByTheUser(harness)
            defer {
                user.signal(SIGKILL)
            }
            #expect(harness.events("user").contains { $0.hasPrefix("launched ") && $0.hasSuffix(" daemon") }, "\(harness.events("user"))")

            // The daemon dies at once (no goodbye) and a new one starts on the same state.
            let first = try #require(harness.daemon)
            first.signal(SIGKILL)
            #expect(await first.waitForExit(timeout: .seconds(10)) != nil)
            try await harness.startDaemon()

            // A submission made now waits for the new connection, then is the new daemon's.
            user.signal(SIGUSR1)
            #expect(await harness.waitForEvent("user", "submitted \(Self.refresh)") != nil, "\(harness.events("user")); \(user.standardError)")
            #expect(!harness.events("user").contains { $0.hasPrefix("submit-failed") }, "\(harness.events("user"))")
            #expect(try await harness.pendingIdentifiers(Self.app) == [Self.refresh])
            #expect(user.standardError.contains("reconnecting"), "the lost connection is logged: \(user.standardError)")

            // The new daemon knows the process finished launching: a run goes to it.
            let run = try await harness.bgtask("run", Self.app, Self.refresh)
            #expect(run.status == 0, "\(run)")
            #expect(await harness.waitForEvent("user", "completed \(Self.refresh) true") != nil, "\(harness.events("user"))")
            #expect(harness.events("user").contains("handler \(Self.refresh) \(user.pid)"), "\(harness.events("user"))")
            let logged = try await harness.waitForLoggedRun(Self.app, Self.refresh)
            #expect(logged?["outcome"] as? String == "success", "\(String(describing: logged))")
            // The app ran it, in a process the daemon has no handle on: said so, not "never ran it".
            #expect((logged?["measuredBy"] as? String)?.hasPrefix("not measured (a process the user started") == true, "\(String(describing: logged))")
            #expect(DaemonHarness.isAlive(user.pid), "a process the user started is never ended by the daemon")
        }

        @Test("an app the user started reconnects after the daemon stops gracefully (SIGTERM, as systemctl restart) and starts again")
        func aUserProcessReconnectsAfterAGracefulStop() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let user = try await Self.startedByTheUser(harness)
            defer {
                user.signal(SIGKILL)
            }

            // The daemon stops as systemd stops it: it must not tell the user's process to
            // leave (the app would stop reconnecting until restarted by hand).
            let first = try #require(harness.daemon)
            first.signal(SIGTERM)
            #expect(await first.waitForExit(timeout: .seconds(15))?.status == 0)
            #expect(DaemonHarness.isAlive(user.pid), "a process the user started is never ended by the daemon")
            try await harness.startDaemon()

            user.signal(SIGUSR1)
            #expect(await harness.waitForEvent("user", "submitted \(Self.refresh)") != nil, "\(harness.events("user")); \(user.standardError)")
            #expect(!harness.events("user").contains { $0.hasPrefix("submit-failed") }, "\(harness.events("user")); \(user.standardError)")
            #expect(try await harness.pendingIdentifiers(Self.app) == [Self.refresh])
            #expect(!user.standardError.contains("asked the app to leave"), "\(user.standardError)")
        }

        @Test("a second process the user starts of an app already connected is refused, naming the first by its pid; its submission fails instead of going to a scheduler of its own that bgtaskd never reads")
        func aSecondUserProcessIsRefusedNamingTheFirst() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let user = try await Self.startedByTheUser(harness)
            defer {
                user.signal(SIGKILL)
            }
            let second = try harness.spawn(
                harness.testApp, ["--events", harness.eventsPath("second"), "--register", Self.refresh, "--submit", Self.refresh],
                environment: harness.handEnvironment(Self.app), name: "second")
            defer {
                second.signal(SIGKILL)
            }
            let named = "another process of \(Self.app) (pid \(user.pid), started by the user) is already connected to bgtaskd"
            #expect(await harness.poll(timeout: .seconds(10)) { second.standardError.contains(named) }, "\(second.standardError)")
            #expect(!second.standardError.contains("using the embedded scheduler"), "\(second.standardError)")
            // Acknowledged before (an outside probe): into an embedded store nobody served.
            #expect(await harness.waitForEvent("second", "submit-failed \(Self.refresh)", timeout: .seconds(15)) != nil, "\(harness.events("second")); \(second.standardError)")
            #expect(!harness.events("second").contains("submitted \(Self.refresh)"), "\(harness.events("second"))")
        }

        @Test("an installed app the user starts while bgtaskd does not answer (stopped) waits for it: its submission is bgtaskd's once it answers, never kept by a scheduler of its own")
        func anInstalledAppWaitsForADaemonThatDoesNotAnswer() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            try await harness.installTestApp(Self.app, identifiers: [Self.refresh], arguments: ["--register", Self.refresh])
            #expect(InstalledAppsList.lists(AppID(Self.app), socketPath: harness.socketPath) == true, "bgtaskd lists what it installed")
            let daemon = try #require(harness.daemon)
            daemon.signal(SIGSTOP)
            var stopped = true
            defer {
                if stopped { daemon.signal(SIGCONT) }
            }
            let user = try harness.spawn(
                harness.testApp, ["--events", harness.eventsPath("user"), "--register", Self.refresh, "--submit-on-signal", Self.refresh],
                environment: harness.handEnvironment(Self.app), name: "user")
            defer {
                user.signal(SIGKILL)
            }
            // An app the daemon does not list is not its to serve: it runs on its own, as before.
            let other = "com.example.notinstalled"
            #expect(InstalledAppsList.lists(AppID(other), socketPath: harness.socketPath) == false)
            let otherManifest = try harness.writeManifest(app: other, executable: harness.testApp, arguments: [], identifiers: ["\(other).refresh"])
            let stranger = try harness.spawn(
                harness.testApp, ["--events", harness.eventsPath("stranger"), "--register", "\(other).refresh"],
                environment: harness.environment.merging(["BGTASK_MANIFEST": otherManifest]) { $1 }, name: "stranger")
            defer {
                stranger.signal(SIGKILL)
            }
            #expect(await harness.poll(timeout: .seconds(20)) { user.standardError.contains("this process waits for it") }, "\(user.standardError)")
            #expect(!user.standardError.contains("using the embedded scheduler"), "\(user.standardError)")
            #expect(await harness.poll(timeout: .seconds(20)) { stranger.standardError.contains("using the embedded scheduler") }, "\(stranger.standardError)")
            daemon.signal(SIGCONT)
            stopped = false
            #expect(await harness.waitForEvent("user", "finished-launching") != nil, "\(harness.events("user")); \(user.standardError)")
            user.signal(SIGUSR1)
            #expect(await harness.waitForEvent("user", "submitted \(Self.refresh)", timeout: .seconds(30)) != nil, "\(harness.events("user")); \(user.standardError)")
            #expect(try await harness.pendingIdentifiers(Self.app) == [Self.refresh], "the submission is the daemon's")
            #expect(harness.events("user").contains { $0.hasPrefix("launched ") && $0.hasSuffix(" daemon") }, "\(harness.events("user"))")

            // Uninstalled, the app leaves the list.
            #expect(try await harness.bgtask("uninstall", Self.app).status == 0)
            #expect(InstalledAppsList.lists(AppID(Self.app), socketPath: harness.socketPath) == false)
        }

        @Test("an installed app the user starts while bgtaskd is not running (stopped with SIGTERM, its list left beside the socket) waits for it instead of running a scheduler of its own; once bgtaskd starts, its submission is bgtaskd's")
        func anInstalledAppWaitsForADaemonThatIsNotRunning() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            try await harness.installTestApp(Self.app, identifiers: [Self.refresh], arguments: ["--register", Self.refresh])
            let daemon = try #require(harness.daemon)
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit(timeout: .seconds(15))?.status == 0)
            #expect(InstalledAppsList.lists(AppID(Self.app), socketPath: harness.socketPath) == true, "the list outlives the daemon")
            // An outside probe: the app opened between a stop and a start acknowledged its
            // submissions into a store of its own, and ran a task bgtaskd then ran again.
            let user = try harness.spawn(
                harness.testApp, ["--events", harness.eventsPath("user"), "--register", Self.refresh, "--submit-on-signal", Self.refresh],
                environment: harness.handEnvironment(Self.app), name: "user")
            defer {
                user.signal(SIGKILL)
            }
            #expect(await harness.poll(timeout: .seconds(20)) { user.standardError.contains("no daemon is running") && user.standardError.contains(InstalledAppsList.path(forSocket: harness.socketPath)) && user.standardError.contains("this process waits for it") }, "\(user.standardError)")
            #expect(!user.standardError.contains("using the embedded scheduler"), "\(user.standardError)")
            try await harness.startDaemon()
            #expect(await harness.waitForEvent("user", "finished-launching", timeout: .seconds(30)) != nil, "\(harness.events("user")); \(user.standardError)")
            user.signal(SIGUSR1)
            #expect(await harness.waitForEvent("user", "submitted \(Self.refresh)", timeout: .seconds(30)) != nil, "\(harness.events("user")); \(user.standardError)")
            #expect(try await harness.pendingIdentifiers(Self.app) == [Self.refresh], "the submission is the daemon's")
            #expect(!FileManager.default.fileExists(atPath: harness.stateHome + "/bgtask/\(Self.app)/scheduler.sqlite"), "no store of its own")
        }

        @Test("a cancel made while the daemon is out is sent to the next daemon: the request it restored does not run")
        func aCancelDuringAnOutageReachesTheNextDaemon() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            try await harness.installTestApp(Self.app, identifiers: [Self.refresh], arguments: ["--register", Self.refresh])
            let user = try harness.spawn(
                harness.testApp, ["--events", harness.eventsPath("user"), "--register", Self.refresh, "--submit", Self.refresh, "--cancel-on-signal", Self.refresh],
                environment: harness.handEnvironment(Self.app), name: "user")
            defer { user.signal(SIGKILL) }
            #expect(await harness.waitForEvent("user", "submitted \(Self.refresh)") != nil, "\(harness.events("user")); \(user.standardError)")
            #expect(try await harness.pendingIdentifiers(Self.app) == [Self.refresh])

            let first = try #require(harness.daemon)
            first.signal(SIGKILL)
            #expect(await first.waitForExit(timeout: .seconds(10)) != nil)
            // The cancel waits for the connection (5 s), then is kept for the next one.
            user.signal(SIGUSR2)
            #expect(await harness.waitForEvent("user", "cancelled \(Self.refresh)", timeout: .seconds(15)) != nil, "\(harness.events("user")); \(user.standardError)")
            #expect(user.standardError.contains("the cancel is sent when bgtaskd is back"), "\(user.standardError)")

            // The next daemon restores the request from its store; the app's cancel follows.
            try await harness.startDaemon()
            let cancelled = await harness.poll(timeout: .seconds(20)) { (try? await harness.pendingIdentifiers(Self.app))?.isEmpty == true }
            #expect(cancelled, "still pending; \(user.standardError)")
        }

        @Test("a process the user starts while the daemon's own process of the app runs a task waits: the task is expired, then the user's process is the app")
        func aUserProcessTakesOverOnceTheDaemonsRunsAreExpired() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            // The daemon's process hangs in its handler until its expiration, which completes it.
            try await harness.installTestApp(Self.app, identifiers: [Self.refresh], arguments: ["--register", Self.refresh, "--behaviour", "hang"])
            try await Launching.submitByHand(harness, app: Self.app, identifier: Self.refresh)
            #expect(try await harness.bgtask("run", Self.app, Self.refresh).status == 0)
            #expect(await harness.waitForEvent(Self.app, "handler \(Self.refresh)") != nil, "\(harness.events(Self.app))")
            let background = try #require(harness.launchedPID(Self.app))

            let user = try harness.spawn(
                harness.testApp, ["--events", harness.eventsPath("user"), "--register", Self.refresh, "--submit-on-signal", Self.refresh],
                environment: harness.handEnvironment(Self.app), name: "user")
            defer {
                user.signal(SIGKILL)
            }
            // Linked to the daemon at once (never the embedded scheduler, whose requests the
            // daemon would not see), while the daemon expires its own process's task.
            #expect(await harness.waitForEvent("user", "launched ") != nil)
            #expect(harness.events("user").contains { $0.hasPrefix("launched ") && $0.hasSuffix(" daemon") }, "\(harness.events("user")); \(user.standardError)")
            #expect(await harness.waitForEvent(Self.app, "expired \(Self.refresh)") != nil, "\(harness.events(Self.app))")
            let logged = try await harness.waitForLoggedRun(Self.app, Self.refresh)
            #expect(logged?["outcome"] as? String == "expired", "\(String(describing: logged))")

            // The user's process becomes the app; the daemon's is ended.
            #expect(await harness.poll(timeout: .seconds(10)) { !DaemonHarness.isAlive(background) }, "pid \(background) still alive")
            user.signal(SIGUSR1)
            #expect(await harness.waitForEvent("user", "submitted \(Self.refresh)") != nil, "\(harness.events("user")); \(user.standardError)")
            #expect(try await harness.pendingIdentifiers(Self.app) == [Self.refresh], "the user's submission is the daemon's")
            #expect(try await harness.bgtask("run", Self.app, Self.refresh).status == 0)
            #expect(await harness.waitForEvent("user", "handler \(Self.refresh) \(user.pid)") != nil, "\(harness.events("user"))")
        }

        @Test("a submission that waits in vain for the daemon's own process of the app to finish says so (an outside probe: it said the app was not connected and reconnecting, though bgtaskd ran)")
        func aSubmissionBehindABusyProcessSaysWhy() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            // The daemon's process ignores its expiration and SIGTERM: it is ended by SIGKILL,
            // 2 s of grace and 3 s after the expiration, about when the submission's 5 s wait
            // ends (the user's hello expired it just before the submission began waiting).
            try await harness.installTestApp(Self.app, identifiers: [Self.refresh], arguments: ["--register", Self.refresh, "--behaviour", "ignore-expiration", "--ignore-sigterm"])
            try await Launching.submitByHand(harness, app: Self.app, identifier: Self.refresh)
            #expect(try await harness.bgtask("run", Self.app, Self.refresh).status == 0)
            #expect(await harness.waitForEvent(Self.app, "handler \(Self.refresh)") != nil, "\(harness.events(Self.app))")
            let user = try harness.spawn(
                harness.testApp, ["--events", harness.eventsPath("user"), "--register", Self.refresh, "--submit", Self.refresh],
                environment: harness.handEnvironment(Self.app), name: "user")
            defer {
                user.signal(SIGKILL)
            }
            let answered = await harness.poll(timeout: .seconds(20)) {
                harness.events("user").contains { $0.hasPrefix("submit-failed \(Self.refresh)") || $0 == "submitted \(Self.refresh)" }
            }
            #expect(answered, "\(harness.events("user")); \(user.standardError)")
            if let failed = harness.events("user").first(where: { $0.hasPrefix("submit-failed \(Self.refresh)") }) {
                #expect(failed.contains("is finishing its tasks") && failed.contains("this process becomes the app once it is done"),
                        "\(failed); \(user.standardError)")
            } else {
                // The hand-over came a moment before the wait ended (a busy retry just after
                // the SIGKILL): the submission is the daemon's.
                #expect(try await harness.pendingIdentifiers(Self.app) == [Self.refresh])
            }
        }
    }
}
