#if canImport(Glibc)
import Glibc
#endif
import BGTaskDaemon
import DaemonProtocol
import Foundation
import ProbeSupport
import SchedulerCore
import Synchronization
import Testing

/// bgtaskd against bad peers and crashes, end to end (docs/daemon.md, "Crash safety" and
/// "Bad input"; docs/protocol.md, "What closes a connection").
extension DaemonProcessTests {
    @Suite struct Robustness {
        static let app = "com.example.testapp"
        static let refresh = "com.example.testapp.refresh"

        /// Installs an app whose process never connects, submits its refresh by hand and
        /// runs it: the daemon's process of it is left starting, its run not handed over.
        static func runStallingApp(_ harness: DaemonHarness) async throws -> (app: String, refresh: String) {
            let stall = "com.example.stallapp"
            let stallRefresh = stall + ".refresh"
            try await harness.installTestApp(stall, identifiers: [stallRefresh], arguments: ["--behaviour", "stall-before-launch"])
            try await Launching.submitByHand(harness, app: stall, identifier: stallRefresh)
            #expect(try await harness.bgtask("run", stall, stallRefresh).status == 0)
            #expect(await harness.waitForEvent(stall, "launched ") != nil, "\(harness.events(stall))")
            return (stall, stallRefresh)
        }

        @Test("the state directory or the socket removed from under the daemon: it stops (status 1) saying why, instead of acknowledging into deleted files or running unreachable")
        func removedFromUnderIt() async throws {
            for removed in ["state", "socket"] {
                let harness = try DaemonHarness()
                defer { harness.cleanUp() }
                let daemon = try await harness.startDaemon()
                if removed == "state" {
                    try FileManager.default.removeItem(atPath: harness.stateDirectory)
                } else {
                    try FileManager.default.removeItem(atPath: harness.socketPath)
                }
                let ended = await daemon.waitForExit(timeout: .seconds(10))
                #expect(ended?.status == 1 && ended?.signalled == false, "\(removed): \(String(describing: ended)); \(daemon.standardError)")
                let said = removed == "state" ? "was removed or moved while it ran: what it acknowledged from now on would be lost" : "its socket \(harness.socketPath) was removed or moved while it ran: no client could reach it"
                #expect(daemon.standardError.contains("bgtaskd stops: ") && daemon.standardError.contains(said), "\(daemon.standardError)")
            }
            // Its own stop removes its socket: exit status 0, no error.
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let daemon = try await harness.startDaemon()
            let stopped = try await harness.stopDaemon()
            #expect(stopped.status == 0 && !daemon.standardError.contains("bgtaskd stops:"), "\(stopped)")
        }

        @Test("a store row's Background App Refresh switch that is neither on nor off is taken as off and said; a 'logs' that is not a directory refuses the start, naming it",
              .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs /usr/bin/python3 to write the row"))
        func oddStateIsSaid() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            try await harness.installTestApp(Self.app, identifiers: [Self.refresh], arguments: [])
            _ = try await harness.stopDaemon()
            let script = "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(\"insert or replace into app_settings values (?, 'background-refresh', 'OFF')\", (sys.argv[2],)); c.commit()"
            #expect(try await harness.run("/usr/bin/python3", ["-c", script, harness.databasePath, Self.app]).status == 0)
            let daemon = try await harness.startDaemon()
            #expect(daemon.standardError.contains(#"the Background App Refresh switch holds "OFF", neither on nor off: taken as off"#), "\(daemon.standardError)")
            let apps = try await harness.bgtask("apps")
            #expect(apps.output.contains("background refresh off"), "\(apps)")
            _ = try await harness.stopDaemon()

            try FileManager.default.removeItem(atPath: harness.stateDirectory + "/logs")
            try Data("x".utf8).write(to: URL(fileURLWithPath: harness.stateDirectory + "/logs"))
            let refused = try harness.spawn(harness.bgtaskd, harness.daemonFlags, name: "bgtaskd")
            let ended = await refused.waitForExit(timeout: .seconds(10))
            #expect(ended?.status == 1, "\(String(describing: ended))")
            #expect(refused.standardError.contains("the apps' log directory \(harness.stateDirectory)/logs is not a directory (a regular file); remove what is there"), "\(refused.standardError)")
        }

        @Test("an install whose path no file system takes is answered with its length and an excerpt, not the whole path echoed back",
              .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs /usr/bin/python3 for a raw client"))
        func aPathTooLongIsNotEchoed() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            let long = try await harness.rawAdminRequest(#"{"install": {"manifestPath": "/" + "a" * 100000}}"#)
            #expect(long.output.contains("the manifest's path is 100001 bytes, more than the 4096 a path may have"), "\(long)")
            #expect((Int(long.output.split(separator: "\n").first ?? "") ?? .max) < 2_000, "answered briefly: \(long.output.prefix(200))")
        }

        @Test("an install of a path that names bgtaskd's own process (/proc/self/environ, /dev/fd/2) is refused, quoting nothing of it",
              .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs /usr/bin/python3 for a raw client"))
        func anInstallOfTheDaemonsOwnFilesIsRefused() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            for path in ["/proc/self/environ", "/proc/thread-self/cmdline", "/dev/fd/2", "/proc//./self/../self/environ"] {
                let answer = try await harness.rawAdminRequest(#"{"install": {"manifestPath": "\#(path)"}}"#)
                #expect(answer.output.contains("names bgtaskd's own process"), "\(path): \(answer)")
                #expect(!answer.output.contains("near"), "nothing of the file is quoted: \(answer)")
            }
            // A thread's id (/proc/<tid>): DaemonOwnProcessPathTests, in process.
            // A link into it, made by the caller, is refused too.
            let link = harness.root + "/manifest-link.json"
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/proc/self/environ")
            let linked = try await harness.rawAdminRequest(#"{"install": {"manifestPath": "\#(link)"}}"#)
            #expect(linked.output.contains("names bgtaskd's own process"), "\(linked)")
        }

        /// Installs the test app with `behaviour`, submits its refresh by hand and runs it; returns
        /// once its handler started.
        static func runTestApp(_ harness: DaemonHarness, behaviour: String) async throws {
            try await harness.installTestApp(app, identifiers: [refresh], arguments: ["--register", refresh, "--behaviour", behaviour])
            try await Launching.submitByHand(harness, app: app, identifier: refresh)
            #expect(try await harness.bgtask("run", app, refresh).status == 0)
            #expect(await harness.waitForEvent(app, "handler \(refresh)") != nil, "\(harness.events(app))")
        }

        @Test("SIGKILL of the daemon mid-run: the app it launched exits by itself, one that never connected is ended by the next daemon; runs are interrupted, requests restored")
        func sigkillMidRun() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            // A long launch timeout: the app that never connects must still be there at the kill.
            let first = try await harness.startDaemon(["--launch-timeout", "60"])
            try await Self.runTestApp(harness, behaviour: "hang")
            let orphan = try #require(harness.launchedPID(Self.app))
            #expect(try await harness.pendingIdentifiers(Self.app).isEmpty, "running, not pending")
            // A second app the daemon starts that never connects (so nothing tells it the
            // daemon died): only the next daemon's orphan clean-up can end it.
            let (stall, stallRefresh) = try await Self.runStallingApp(harness)
            let silent = try #require(harness.launchedPID(stall))

            first.signal(SIGKILL)
            #expect(await first.waitForExit(timeout: .seconds(5))?.signalled == true)
            // The launched app learns it from its connection: its run gets its expiration (the
            // handler completes it), then the process exits, as iOS ends the apps the system
            // started.
            #expect(await harness.waitForEvent(Self.app, "expired \(Self.refresh)") != nil, "\(harness.events(Self.app))")
            #expect(await harness.poll(timeout: .seconds(5)) { !DaemonHarness.isAlive(orphan) }, "the app \(orphan) outlived its daemon")
            #expect(DaemonHarness.isAlive(silent), "the app that never connected outlives the killed daemon (its own process group)")

            try await harness.startDaemon()
            #expect(await harness.poll(timeout: .seconds(5)) { !DaemonHarness.isAlive(silent) }, "orphan \(silent) still alive")
            #expect(harness.daemon?.standardError.contains("process \(silent) left by a previous bgtaskd") == true, "\(harness.daemon?.standardError ?? "")")
            for (app, identifier) in [(Self.app, Self.refresh), (stall, stallRefresh)] {
                #expect(try await harness.pendingIdentifiers(app) == [identifier], "the request of \(app) is restored")
                let logged = try await harness.waitForLoggedRun(app, identifier)
                #expect(logged?["outcome"] as? String == "interrupted", "\(String(describing: logged))")
                #expect(logged?["wallTime"] is NSNull, "its span holds the time no daemon ran: \(String(describing: logged))")
            }
            // The energy log charges the cut-off run nothing it did not measure: it ends at
            // the next daemon's start, so its span holds the time no daemon ran; that span is
            // kept out of the durations, and no energy is made up for it.
            let energy = try await harness.bgtask("energy", "--json", "--app", Self.app)
            #expect(energy.status == 0, "\(energy)")
            let document = try #require(try JSONSerialization.jsonObject(with: Data(energy.output.utf8)) as? [String: Any])
            let row = try #require((document["tasks"] as? [[String: Any]])?.first { $0["identifier"] as? String == Self.refresh }, "\(energy.output)")
            #expect(row["runs"] as? Int == 1, "\(row)")
            #expect((row["outcomes"] as? [String: Int])?["interrupted"] == 1, "\(row)")
            #expect(row["meanDuration"] is NSNull, "\(row)")
            #expect(row["p95Duration"] is NSNull, "\(row)")
            #expect(row["unmeasuredRuns"] as? Int == 1, "\(row)")
            #expect((row["energyJoules"] as? NSNumber)?.doubleValue == 0, "\(row)")
        }

        @Test("SIGTERM of the daemon while an app's process is still starting: its run never reached the app, so it is a failure and its request waits for the next daemon (it was recorded terminated, its request used up)")
        func sigtermWhileAnAppStarts() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let first = try await harness.startDaemon(["--launch-timeout", "60"])
            let (stall, stallRefresh) = try await Self.runStallingApp(harness)
            first.signal(SIGTERM)
            let stopped = await first.waitForExit(timeout: .seconds(10))
            #expect(stopped?.signalled == false && stopped?.status == 0, "\(String(describing: stopped))")
            try await harness.startDaemon()
            #expect(try await harness.pendingIdentifiers(stall) == [stallRefresh], "the request waits again")
            let logged = try await harness.waitForLoggedRun(stall, stallRefresh)
            #expect(logged?["outcome"] as? String == "failure", "\(String(describing: logged))")
            #expect((logged?["stopReason"] as? String)?.contains("bgtaskd is stopping") == true, "\(String(describing: logged))")
        }

        @Test("SIGTERM of the daemon mid-run: the run is expired, and the log's stop reason says bgtaskd stopped (not that the app's process was terminating)")
        func sigtermMidRunSaysWhy() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let first = try await harness.startDaemon()
            try await Self.runTestApp(harness, behaviour: "hang")
            first.signal(SIGTERM)
            let stopped = await first.waitForExit(timeout: .seconds(15))
            #expect(stopped?.status == 0, "\(String(describing: stopped))")
            #expect(harness.events(Self.app).contains("expired \(Self.refresh)"), "\(harness.events(Self.app))")
            try await harness.startDaemon()
            let logged = try await harness.waitForLoggedRun(Self.app, Self.refresh)
            #expect(logged?["outcome"] as? String == "expired", "\(String(describing: logged))")
            #expect((logged?["stopReason"] as? String)?.hasPrefix("bgtaskd is stopping") == true, "\(String(describing: logged))")
        }

        @Test("while bgtaskd stops (a run that ignores its expiration keeps it waiting), an administrator's change is refused saying so; a read is still answered")
        func changesWhileStoppingAreRefused() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let daemon = try await harness.startDaemon()
            try await Self.runTestApp(harness, behaviour: "ignore-expiration")
            daemon.signal(SIGTERM)
            #expect(await harness.waitForEvent(Self.app, "expired \(Self.refresh)") != nil, "stopping: \(harness.events(Self.app))")
            let change = try await harness.bgtask("settings", Self.app, "background-refresh", "off")
            #expect(change.status == 1 && change.error.contains("bgtaskd is stopping: setBackgroundRefresh was not carried out"), "\(change)")
            let read = try await harness.bgtask("status")
            #expect(read.status == 0, "\(read)")
            #expect(await daemon.waitForExit(timeout: .seconds(15)) != nil)
        }

        @Test("SIGKILL of the daemon mid-run, the handler ignoring its expiration: the app it launched still exits after the grace period")
        func sigkillMidRunWithAHandlerThatIgnoresExpiration() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let daemon = try await harness.startDaemon()
            try await Self.runTestApp(harness, behaviour: "ignore-expiration")
            let pid = try #require(harness.launchedPID(Self.app))
            defer { kill(pid, SIGKILL) }
            daemon.signal(SIGKILL)
            #expect(await daemon.waitForExit(timeout: .seconds(5))?.signalled == true)
            #expect(await harness.waitForEvent(Self.app, "expired \(Self.refresh)") != nil, "\(harness.events(Self.app))")
            // The grace period is 2 s; nothing else keeps the process.
            #expect(await harness.poll(timeout: .seconds(8)) { !DaemonHarness.isAlive(pid) }, "the app \(pid) outlived its daemon")
        }

        @Test("SIGKILL of the daemon while the user has the app it launched open: the app stays open")
        func sigkillWhileTheUserHasTheAppOpen() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let daemon = try await harness.startDaemon()
            try await harness.installTestApp(Self.app, identifiers: [Self.refresh], arguments: ["--register", Self.refresh])
            try await Launching.submitByHand(harness, app: Self.app, identifier: Self.refresh)
            #expect(try await harness.bgtask("run", Self.app, Self.refresh).status == 0)
            #expect(await harness.waitForEvent(Self.app, "completed \(Self.refresh)") != nil, "\(harness.events(Self.app))")
            let pid = try #require(harness.launchedPID(Self.app))
            defer { kill(pid, SIGKILL) }
            #expect(try await harness.bgtask("open", Self.app).status == 0)
            #expect(await harness.waitForEvent(Self.app, "state active") != nil, "\(harness.events(Self.app))")
            daemon.signal(SIGKILL)
            #expect(await daemon.waitForExit(timeout: .seconds(5))?.signalled == true)
            // A process the daemon launched exits within milliseconds of losing it (the test
            // above); one the user has in the foreground is the user's to close.
            #expect(await harness.poll(timeout: .seconds(1)) { !DaemonHarness.isAlive(pid) } == false, "the open app \(pid) exited with its daemon")
            #expect(!harness.events(Self.app).contains("exiting"), "\(harness.events(Self.app))")
        }

        @Test("SIGKILL of the daemon while an app submits: every submit acknowledged before the kill is pending (or replaced by a later one) after a restart")
        func sigkillWhileSubmitting() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let first = try await harness.startDaemon()
            // Ten processing requests (Apple's limit per app), resubmitted round after round.
            let identifiers = (0..<10).map { "\(Self.app).task\($0)" }
            try await harness.installTestApp(Self.app, identifiers: identifiers, arguments: [])
            let submitter = try harness.spawn(
                harness.testApp, ["--events", harness.eventsPath("submitter"), "--rounds", "1000"] + identifiers.flatMap { ["--register", $0, "--submit-processing", $0] },
                environment: harness.handEnvironment(Self.app), name: "submitter")
            func acknowledged() -> [String] { harness.events("submitter").filter { $0.hasPrefix("submitted ") } }
            #expect(await harness.poll(timeout: .seconds(20)) { acknowledged().count >= 30 }, "\(harness.events("submitter").suffix(3))")
            first.signal(SIGKILL)
            _ = await first.waitForExit(timeout: .seconds(5))
            submitter.signal(SIGKILL)
            _ = await submitter.waitForExit(timeout: .seconds(5))
            // The last acknowledged earliest begin of each identifier.
            var last: [String: Int] = [:]
            for line in acknowledged() {
                let fields = line.split(separator: " ")
                if fields.count == 3, let seconds = Int(fields[2]) { last[String(fields[1])] = seconds }
            }

            try await harness.startDaemon()
            let result = try await harness.bgtask("pending", Self.app, "--json")
            let rows = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [[String: Any]], "\(result)")
            let formatter = ISO8601DateFormatter()
            var pending: [String: Int] = [:]
            for row in rows {
                if let identifier = row["identifier"] as? String, let text = row["earliestBeginDate"] as? String, let date = formatter.date(from: text) {
                    pending[identifier] = Int(date.timeIntervalSince1970.rounded())
                }
            }
            #expect(!last.isEmpty)
            for (identifier, seconds) in last {
                // The acknowledged submit, or one after it that was in flight at the kill.
                #expect((pending[identifier] ?? 0) >= seconds, "\(identifier): acknowledged \(seconds), pending \(pending[identifier].map(String.init) ?? "none")")
            }
        }

        @Test("SIGTERM of the daemon mid-run: the run gets its expiration and is recorded, the app is ended (even one ignoring SIGTERM) before the daemon exits")
        func sigtermMidRun() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            try await harness.installTestApp(Self.app, identifiers: [Self.refresh], arguments: ["--register", Self.refresh, "--behaviour", "hang", "--ignore-sigterm"])
            try await Launching.submitByHand(harness, app: Self.app, identifier: Self.refresh)
            #expect(try await harness.bgtask("run", Self.app, Self.refresh).status == 0)
            #expect(await harness.waitForEvent(Self.app, "handler \(Self.refresh)") != nil, "\(harness.events(Self.app))")
            let pid = try #require(harness.launchedPID(Self.app))

            let stopped = try await harness.stopDaemon()
            #expect(stopped.status == 0 && !stopped.signalled, "\(stopped)")
            #expect(!DaemonHarness.isAlive(pid), "the app outlived the daemon: \(stopped.error)")
            #expect(harness.events(Self.app).contains("expired \(Self.refresh)"), "\(harness.events(Self.app))")
            let runs = try harness.runs(of: Self.app)
            #expect(runs.map(\.outcome) == [.expired], "\(runs)")
        }

        @Test("a damaged store set aside is named by status, log, energy, and apps and pending without a daemon, until it is removed (an outside probe: the apps just vanished)")
        func aDamagedStoreSetAsideIsNamed() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            // What the open of a damaged store leaves: the file set aside beside a fresh one.
            try FileManager.default.createDirectory(atPath: harness.stateDirectory, withIntermediateDirectories: true)
            let setAside = harness.databasePath + ".corrupt-20261206-053153"
            #expect(FileManager.default.createFile(atPath: setAside, contents: Data("damaged".utf8)))
            #expect(FileManager.default.createFile(atPath: setAside + "-wal", contents: Data()))
            try await harness.startDaemon()
            let status = try await harness.bgtask("status")
            #expect(status.status == 0 && status.output.contains("warning: 1 damaged store set aside in \(harness.stateDirectory), the newest \(setAside)"), "\(status)")
            let json = try await harness.bgtask("status", "--json")
            #expect(json.output.contains("\"setAsideStores\""), "\(json)")
            for command in ["log", "energy"] {
                let read = try await harness.bgtask(command)
                #expect(read.error.contains("a damaged store was set aside at \(setAside)"), "\(command): \(read)")
                #expect(!read.error.contains("-wal"), "its companion files are not counted: \(read.error)")
            }
            _ = try await harness.stopDaemon()
            let apps = try await harness.bgtask("apps")
            #expect(apps.status == 0 && apps.error.contains("a damaged store was set aside at \(setAside)"), "\(apps)")
            try FileManager.default.removeItem(atPath: setAside)
            #expect(try await harness.bgtask("apps").error.contains("set aside") == false)
        }

        @Test("a second daemon on the same state refuses to start, naming the first one's pid (exit 1)")
        func secondDaemonRefused() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let first = try await harness.startDaemon()
            let second = try await harness.run(harness.bgtaskd, harness.daemonFlags)
            #expect(second.status == 1, "\(second)")
            #expect(second.error.contains("another bgtaskd owns \(harness.stateDirectory)"), "\(second.error)")
            #expect(second.error.contains("\(first.pid)"), "names the holder: \(second.error)")
            #expect(try await harness.bgtask("status").status == 0, "the first is undisturbed")
        }

        @Test("a second daemon on a live socket is refused naming the holder's pid and uid; a state directory that is a regular file is said to be one")
        func startRefusalsSayWhatIsWrong() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let first = try await harness.startDaemon()
            // Another state (its lock is free), the same socket: the socket is what refuses.
            let second = try await harness.run(harness.bgtaskd, harness.daemonFlags + ["--state-dir", harness.root + "/second-state"])
            #expect(second.status == 1, "\(second)")
            #expect(second.error.contains("cannot listen on \(harness.socketPath): pid \(first.pid) (uid \(getuid())) is listening on it"), "\(second.error)")
            #expect(second.error.contains("stop it first, or give this one another --socket"), "\(second.error)")
            #expect(try await harness.bgtask("status").status == 0, "the first is undisturbed")

            let file = harness.root + "/afile"
            #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
            let onAFile = try await harness.run(harness.bgtaskd, harness.daemonFlags + ["--state-dir", file, "--socket", harness.root + "/run/other.sock"])
            #expect(onAFile.status == 1, "\(onAFile)")
            #expect(onAFile.error.contains("cannot use the state directory \(file): \(file) is a regular file, not a directory"), "\(onAFile.error)")

            // A start refused for its socket directory leaves the state directory as it was:
            // a damaged store is not moved aside, nor a fresh one made, by a daemon that stops.
            let kept = harness.root + "/kept-state"
            try FileManager.default.createDirectory(atPath: kept, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            let garbage = Data((0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
            #expect(FileManager.default.createFile(atPath: kept + "/scheduler.sqlite", contents: garbage))
            let open = harness.root + "/open-sockets"
            try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
            #expect(chmod(open, 0o755) == 0)
            let refused = try await harness.run(harness.bgtaskd, harness.daemonFlags + ["--state-dir", kept, "--socket", open + "/s"])
            #expect(refused.status == 1, "\(refused)")
            #expect(refused.error.contains("refusing the socket directory \(open): its mode is 0755, not 0700"), "\(refused.error)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: kept) == ["scheduler.sqlite"], "the state directory was touched")
            #expect(FileManager.default.contents(atPath: kept + "/scheduler.sqlite") == garbage)
        }

        @Test("NOTIFY_SOCKET naming no socket: bgtaskd starts and logs one warning that systemd was not told it is ready")
        func aMissingNotifySocketIsLogged() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let missing = harness.root + "/no-such-notify-socket"
            let daemon = try await harness.startDaemon(environment: harness.environment.merging(["NOTIFY_SOCKET": missing]) { $1 })
            let warnings = daemon.standardError.split(separator: "\n").filter { $0.contains("systemd was not told bgtaskd is ready (READY=1): cannot notify \(missing)") }
            #expect(warnings.count == 1, "\(daemon.standardError)")
            #expect(try await harness.bgtask("status").status == 0)
        }

        @Test("as an unprivileged user, a socket directory behind a directory it cannot search is said to be unreachable, naming that directory",
              .enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "switching uid needs root and setpriv"))
        func anUnreachableSocketDirectoryIsNamed() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            #expect(chmod(harness.root, 0o755) == 0)
            // A state directory uid 65534 may use; a socket directory that exists, inside one
            // only root may search (an outside probe: "cannot create ... Permission denied").
            let writable = harness.root + "/nobody"
            try FileManager.default.createDirectory(atPath: writable, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o777])
            let locked = harness.root + "/locked"
            try FileManager.default.createDirectory(atPath: locked + "/inner", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            #expect(chmod(locked, 0o700) == 0)
            func bgtaskdAsNobody(state: String, socket: String) async throws -> CommandResult {
                try await harness.run("/usr/bin/setpriv", [
                    "--reuid=65534", "--regid=65534", "--clear-groups", harness.bgtaskd, "--no-cgroups", "--state-dir", state, "--socket", socket,
                ], environment: ["HOME": writable, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"])
            }
            let result = try await bgtaskdAsNobody(state: writable + "/state", socket: locked + "/inner/socket")
            #expect(result.status == 1, "\(result)")
            #expect(result.error.contains("cannot reach the socket directory \(locked)/inner: \(locked) cannot be searched by uid 65534"), "\(result.error)")
            #expect(!result.error.contains("cannot create the socket directory"), "\(result.error)")
            // A state directory there: the same walk names the directory that cannot be
            // searched, not the one below it that could not be looked up.
            // (The socket's directory, checked first, is one uid 65534 creates for itself.)
            let state = try await bgtaskdAsNobody(state: locked + "/inner/state", socket: writable + "/sockets/socket")
            #expect(state.status == 1, "\(state)")
            #expect(state.error.contains("cannot use the state directory \(locked)/inner/state: \(locked) cannot be searched: permission denied"), "\(state.error)")
        }

        @Test("bgtask without a daemon says how to start it (exit 1); apps and pending answer read-only from the state")
        func noDaemon() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let status = try await harness.bgtask("status")
            #expect(status.status == 1)
            #expect(status.error.contains("bgtaskd &"), "\(status.error)")
            let run = try await harness.bgtask("run", Self.app, Self.refresh)
            #expect(run.status == 1)
            #expect(run.error.contains("bgtaskd &"), "\(run.error)")
            // No daemon ever kept state here: apps and pending answer that nothing is there
            // (they failed as if the daemon had to answer).
            for (command, empty) in [("apps", "no app is installed (bgtask install <manifest>)\n"), ("pending", "no request is pending\n")] {
                let fresh = try await harness.bgtask(command)
                #expect(fresh.status == 0 && fresh.output == empty, "\(command): \(fresh)")
                #expect(fresh.error.contains("bgtaskd is not running and has kept no state here"), "\(command): \(fresh)")
            }
            let json = try await harness.bgtask("apps", "--json")
            #expect((try? JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [Any])?.isEmpty == true, "\(json)")
            // Something at the store's place that is no store is named, never read as a fresh
            // account (an outside probe: "nothing is installed", exit 0, and `log` skipped it).
            let stateDirectory = harness.stateDirectory
            let storePath = harness.databasePath
            try FileManager.default.createDirectory(atPath: storePath, withIntermediateDirectories: true)
            for command in ["apps", "pending"] {
                let inPlace = try await harness.bgtask(command)
                #expect(inPlace.status == 1 && inPlace.error.contains("\(storePath) is a directory"), "\(command): \(inPlace)")
            }
            let log = try await harness.bgtask("log")
            #expect(log.status == 1 && log.error.contains("\(storePath) is a directory"), "\(log)")
            try FileManager.default.removeItem(atPath: storePath)
            try FileManager.default.createSymbolicLink(atPath: storePath, withDestinationPath: harness.root + "/elsewhere.sqlite")
            let dangling = try await harness.bgtask("pending")
            #expect(dangling.status == 1 && dangling.error.contains("which does not exist"), "\(dangling)")
            try FileManager.default.removeItem(atPath: storePath)
            try FileManager.default.removeItem(atPath: stateDirectory)
            #expect(FileManager.default.createFile(atPath: stateDirectory, contents: Data("x".utf8)))
            let underFile = try await harness.bgtask("apps")
            #expect(underFile.status == 1 && underFile.error.contains("\(stateDirectory) is a regular file, not a directory"), "\(underFile)")
            try FileManager.default.removeItem(atPath: stateDirectory)

            try await harness.startDaemon()
            try await harness.installTestApp(Self.app, identifiers: [Self.refresh], arguments: ["--register", Self.refresh])
            try await Launching.submitByHand(harness, app: Self.app, identifier: Self.refresh)
            let live = try await harness.bgtask("apps", "--json")
            _ = try await harness.stopDaemon()
            let apps = try await harness.bgtask("apps")
            #expect(apps.status == 0, "\(apps)")
            #expect(apps.output.contains(Self.app) && apps.output.contains("notRunning") && apps.output.contains("pending 1"), "\(apps)")
            // --json has the daemon's keys when read from the store (it had manifestPath for
            // manifest, and no state, pending or backgroundRefresh).
            let stored = try await harness.bgtask("apps", "--json")
            func keys(_ text: String) -> Set<String> {
                guard let rows = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]], let first = rows.first else { return [] }
                return Set(first.keys)
            }
            #expect(!keys(live.output).isEmpty && keys(stored.output).subtracting(["pid"]) == keys(live.output).subtracting(["pid"]), "\(live.output) against \(stored.output)")
            #expect(apps.error.contains("bgtaskd is not running; read from \(harness.databasePath)"), "\(apps)")
            let pending = try await harness.bgtask("pending", Self.app)
            #expect(pending.status == 0 && pending.output.contains(Self.refresh), "\(pending)")
            // Read-only: nothing was created or changed beside the store.
            #expect(!FileManager.default.fileExists(atPath: harness.socketPath))
        }

        @Test("usage errors exit 64; every daemon command's --help exits 0; bgtaskd's flags are range-checked")
        func usageAndHelp() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            for arguments in [["run", Self.app], ["pending", "--bogus"], ["status", "extra"], ["settings", Self.app, "background-refresh", "maybe"], ["install"], ["apps", "--socket"]] {
                let result = try await harness.run(harness.bgtask, arguments)
                #expect(result.status == 64, "bgtask \(arguments.joined(separator: " ")): \(result)")
                #expect(!result.error.isEmpty)
            }
            for command in ["status", "apps", "install", "uninstall", "pending", "run", "expire", "settings", "open", "background", "force-quit", "push", "log", "energy", "why", "conditions", "policy", "simulate", "fleet"] {
                let result = try await harness.bgtask(command, "--help")
                #expect(result.status == 0, "bgtask \(command) --help: \(result)")
                #expect(result.output.contains(command), "\(command): \(result.output)")
            }
            for flags in [["--launch-timeout", "0"], ["--launch-timeout", "1e99"], ["--first-frame-timeout", "0"], ["--first-frame-timeout", "99999999999999999999"], ["--bogus"], ["--socket"]] {
                let result = try await harness.run(harness.bgtaskd, flags)
                #expect(result.status == 64, "bgtaskd \(flags.joined(separator: " ")): \(result)")
                #expect(result.error.contains(flags[0]), "names the flag: \(result.error)")
            }
            #expect(try await harness.run(harness.bgtaskd, ["--help"]).status == 0)
        }

        @Test("an argument that is not UTF-8 (a path, an app identifier, a flag's value) is refused by its number, exit 64, never altered and looked up")
        func argumentsThatAreNotUTF8() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            // The file exists under its real name (a byte 0xFF in it): an outside probe was told
            // "...Inf\u{FFFD}.json: ... no such file or directory".
            let directory = harness.root + "/apps"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let name = directory + "/Inf\\377.json"
            #expect(try await harness.run("/bin/sh", ["-c", "printf '{}' > \"$(printf '\(name)')\""]).status == 0)
            for (program, arguments, number) in [
                (harness.bgtask, "install \"$(printf '\(name)')\"", 2),
                (harness.bgtask, "uninstall \"$(printf 'com.\\377x')\"", 2),
                (harness.bgtaskd, "--no-cgroups --state-dir \"$(printf '\(harness.root)/st\\377')\"", 3),
            ] {
                let result = try await harness.run("/bin/sh", ["-c", "exec \"$0\" \(arguments)", program])
                #expect(result.status == 64, "\(arguments): \(result)")
                #expect(result.error.contains("argument \(number) is not valid UTF-8 ('") && result.error.contains("\\xFF"), "\(arguments): \(result.error)")
                #expect(!result.error.contains("\u{FFFD}"), "\(result.error)")
            }
            #expect(!FileManager.default.fileExists(atPath: harness.root + "/st\u{FFFD}"), "bgtaskd made a state directory of the altered name")
        }

        @Test("another executable claiming an installed app's identifier is refused; bgtask keeps working")
        func anotherExecutableRefused() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            try await harness.installTestApp(Self.app, identifiers: [Self.refresh], arguments: ["--register", Self.refresh])
            // This test process is not the installed executable.
            let link = try MessageLink.connect(path: harness.socketPath)
            defer { link.close() }
            let reply = try link.call(.hello(Hello(role: .app, app: AppID(Self.app))))
            guard case .failed(let failure) = reply else {
                Issue.record("expected a refusal, got \(reply)")
                return
            }
            #expect(failure.code == .notPermitted, "\(failure)")
            #expect(await harness.poll(timeout: .seconds(5)) { link.isClosed }, "the refused connection is closed")
            // A real app process claiming another installed app: the test app, started as if
            // by the daemon, says it is the installed feedreader.
            let feedreader = try harness.writeManifest(
                app: "com.example.feedreader", executable: try Product.locate("feedreader"), arguments: ["serve"],
                identifiers: ["com.example.feedreader.refresh"])
            #expect(try await harness.bgtask("install", feedreader).status == 0)
            let impostor = try await harness.run(
                harness.testApp, ["--events", harness.eventsPath("impostor"), "--exit-after-launch"],
                environment: harness.environment.merging(["BGTASK_MANIFEST": feedreader, "BGTASK_DAEMON_SOCKET": harness.socketPath]) { $1 })
            #expect(impostor.status == 0, "\(impostor)")
            #expect(impostor.error.contains("refused com.example.feedreader"), "\(impostor.error)")
            #expect(harness.events("impostor").contains { $0.hasSuffix(" embedded") }, "refused, it falls back to the embedded scheduler: \(harness.events("impostor"))")
            #expect(try await harness.bgtask("status").status == 0)
        }

        @Test("after a connection that sent a large frame closes, the idle daemon takes no wakeups (the memory it gives back is released on a serial queue, never a global one)")
        func quietAfterALargeFrame() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let daemon = try await harness.startDaemon()
            let link = try MessageLink.connect(path: harness.socketPath)
            guard case .welcome = try link.call(.hello(Hello(role: .admin))) else { Issue.record("no welcome"); return }
            // 300 KB in one frame (over TransportMemory's 256 KiB): refused, then the link closes.
            guard case .failed = try link.call(.admin(.why(app: AppID("com.example.testapp"), identifier: String(repeating: "x", count: 300_000)))) else {
                Issue.record("a 300 KB identifier was answered")
                return
            }
            link.close()
            // The release runs a second after the close; then every thread of the daemon
            // stays asleep (a block on a global queue starts a once-a-second monitor).
            try await Task.sleep(for: .milliseconds(2_500))
            var window = ThreadWindow(pid: daemon.pid)
            try #require(!window.first.isEmpty, "cannot list the daemon's threads")
            for _ in 0..<30 {
                try await Task.sleep(for: .milliseconds(100))
                window.sample()
            }
            #expect(window.switches == 0, "the idle daemon woke: \(window.woke.joined(separator: "; "))")
        }

        @Test("garbage, truncated, oversized, unknown-version and non-protocol frames close that connection only")
        func badFramesCloseOnlyTheirConnection() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let daemon = try await harness.startDaemon()
            // An administrator connection open throughout.
            let bystander = try MessageLink.connect(path: harness.socketPath)
            defer { bystander.close() }
            guard case .welcome = try bystander.call(.hello(Hello(role: .admin))) else { Issue.record("no welcome"); return }

            // An identifier no request could have, sent past bgtask's own check, is refused by
            // the rule bgtask applies, not echoed back in a report.
            for identifier in [String(repeating: "x", count: 100_000), "", "a\u{1B}b"] {
                for request in [AdminRequest.why(app: AppID("com.example.testapp"), identifier: identifier),
                                .run(app: AppID("com.example.testapp"), identifier: identifier)] {
                    guard case .failed(let failure) = try bystander.call(.admin(request)) else { Issue.record("\(request) answered"); continue }
                    #expect(failure.code == .invalid && failure.message.contains("a task identifier"), "\(failure)")
                    #expect(failure.message.utf8.count < 200)
                }
            }
            // So is an app identifier no app can have: refused by the command line's rule,
            // not looked up and echoed whole as "not installed".
            for app in [String(repeating: "x", count: 1_000_000), "", "../x", "..", "a\u{1B}b"] {
                for request in [AdminRequest.uninstall(app: AppID(app)), .open(app: AppID(app)), .pending(app: AppID(app)),
                                .push(app: AppID(app), payload: nil), .why(app: AppID(app), identifier: "com.example.testapp.refresh"),
                                .respond(app: AppID(app), response: NotificationResponseRequest(notification: "n"))] {
                    guard case .failed(let failure) = try bystander.call(.admin(request)) else { Issue.record("\(request.caseName) answered"); continue }
                    #expect(failure.code == .invalid && failure.message.hasPrefix("\(request.caseName): ") && failure.message.contains("app identifier"), "\(failure)")
                    #expect(failure.message.utf8.count < 300)
                }
            }
            // A response bgtask would refuse, sent past it, is refused by bgtaskd naming why.
            for (response, problem) in [(NotificationResponseRequest(notification: "a\u{1B}b"), "holds a control character"),
                                        (NotificationResponseRequest(notification: "n", text: String(repeating: "x", count: 5_000)), "the text is 5000 bytes"),
                                        (NotificationResponseRequest(notification: ""), "the notification identifier is empty")] {
                guard case .failed(let failure) = try bystander.call(.admin(.respond(app: AppID("com.example.testapp"), response: response))) else {
                    Issue.record("\(response) answered")
                    continue
                }
                #expect(failure.code == .invalid && failure.message.contains(problem), "\(failure)")
            }
            let stranger = try MessageLink.connect(path: harness.socketPath)
            defer { stranger.close() }
            guard case .failed(let refusal) = try stranger.call(.hello(Hello(role: .app, app: AppID("../x")))) else { Issue.record("../x greeted"); return }
            #expect(refusal.code == .invalid && refusal.message.hasPrefix("hello: "), "\(refusal)")
            // An administrator's hello that names an app means something bgtaskd would drop.
            let named = try MessageLink.connect(path: harness.socketPath)
            defer { named.close() }
            guard case .failed(let adminRefusal) = try named.call(.hello(Hello(role: .admin, app: AppID("com.example.testapp")))) else { Issue.record("an admin hello naming an app was greeted"); return }
            #expect(adminRefusal.code == .invalid && adminRefusal.message.contains("an administrator's hello names no app, got 'com.example.testapp'"), "\(adminRefusal)")

            let validPayload = [UInt8](try MessageCoding.encode(ClientEnvelope(id: 1, request: .hello(Hello(role: .admin)))))
            func header(_ length: UInt32, version: UInt8 = 1) -> [UInt8] {
                [UInt8(length >> 24), UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff), version]
            }
            var random = SystemRandomNumberGenerator()
            let statusBeforeHello = try RawClient.frame(.admin(.status))
            let cases: [(String, [UInt8])] = [
                ("garbage", (0..<4096).map { _ in UInt8.random(in: 0...255, using: &random) }),
                ("oversized", header(UInt32(FrameFormat.maximumPayloadLength + 1)) + [1, 2, 3]),
                ("unknown version", header(UInt32(validPayload.count), version: 9) + validPayload),
                ("not JSON", header(5) + Array("hello".utf8)),
                ("JSON but no message", header(2) + Array("{}".utf8)),
                ("a request before hello", statusBeforeHello),
            ]
            for (name, bytes) in cases {
                let client = try RawClient(path: harness.socketPath)
                defer { client.close() }
                try? client.send(bytes)
                let (_, ending) = client.readUntilClosed()
                #expect(ending == .closed, "\(name): the daemon closes the connection")
                let reply = try bystander.call(.admin(.status))
                guard case .report = reply else { Issue.record("\(name): the bystander got \(reply)"); continue }
            }
            // Truncated: the client hangs up mid-frame.
            let truncated = try RawClient(path: harness.socketPath)
            try truncated.send(header(UInt32(validPayload.count)) + validPayload.prefix(10))
            truncated.close()
            #expect(await harness.poll(timeout: .seconds(5)) { daemon.standardError.contains("in the middle of a frame") }, "\(daemon.standardError)")
            #expect(daemon.result == nil, "the daemon is up")
            #expect(try await harness.bgtask("status").status == 0)
        }

        @Test("a malformed request whose number can be read is answered invalid, naming the field, then the connection closes")
        func aMalformedRequestIsAnsweredBeforeTheClose() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let daemon = try await harness.startDaemon()
            let cases: [(payload: String, expected: String)] = [
                (#"{"id":7,"request":{"admin":{"_0":{"nosuch":{}}}}}"#, #"unknown admin request "nosuch""#),
                (#"{"id":7,"request":{"admin":{"_0":{"uninstall":{"app":5}}}}}"#, "at request.admin._0.uninstall.app: expected a string"),
                (#"{"id":7,"request":{"hello":{"_0":{"role":"king"}}}}"#, #"at request.hello.role: unknown value "king""#),
                // Not JSON at all, yet the number at its top level, before the fault, was read
                // by the validating scan (no second parse): a duplicate key deep inside,
                // nesting beyond the limit, a lone surrogate, a raw control character, bytes
                // after the object.
                (#"{"id":7,"request":{"hello":{"_0":{"role":"admin","role":"app"}}}}"#, "duplicate key \"role\""),
                (#"{"id":7,"request":"# + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}", "the message is not valid JSON: "),
                (#"{"id":7,"request":{"hello":{"_0":{"role":"\ud800"}}}}"#, "the message is not valid JSON: "),
                ("{\"id\":7,\"request\":{\"hello\":{\"_0\":{\"role\":\"a\u{1B}\"}}}}", "the message is not valid JSON: "),
                (#"{"request":{"admin":{"_0":{"status":{}}}},"id":7} trailing"#, "the message is not valid JSON: "),
            ]
            for (payload, expected) in cases {
                let client = try RawClient(path: harness.socketPath)
                defer { client.close() }
                let hello = payload.contains("hello") ? [] : try RawClient.frame(.hello(Hello(role: .admin)), id: 1)
                try client.send(hello + [UInt8](try FrameEncoder.encode(Data(payload.utf8))))
                let (bytes, ending) = client.readUntilClosed()
                #expect(ending == .closed, "\(payload): the daemon closes the connection")
                var decoder = FrameDecoder()
                decoder.append(bytes)
                var replies: [DaemonEnvelope] = []
                while let frame = try decoder.next() { replies.append(try MessageCoding.decode(DaemonEnvelope.self, from: frame.payload)) }
                guard case .reply(7, .failed(let failure)) = replies.last else {
                    Issue.record("\(payload): no failure for request 7: \(replies)")
                    continue
                }
                #expect(failure.code == .invalid)
                #expect(failure.message.contains(expected), "\(failure.message)")
                #expect(await harness.poll(timeout: .seconds(5)) { daemon.standardError.contains(expected) }, "logged: \(daemon.standardError)")
            }
            // An id that is not a request number: logged as such, not as "not valid JSON".
            let client = try RawClient(path: harness.socketPath)
            defer { client.close() }
            try client.send([UInt8](try FrameEncoder.encode(Data(#"{"id":-1,"request":{"hello":{"_0":{"role":"admin"}}}}"#.utf8))))
            #expect(client.readUntilClosed().ending == .closed)
            #expect(await harness.poll(timeout: .seconds(5)) { daemon.standardError.contains("'id' must be a whole number from 1 to 18446744073709551615, got -1") }, "\(daemon.standardError)")
            // 0 numbers no request: a reply numbered 0 is the connection's own failure
            // (MessageLink.connectionReplyID). Refused, answered nothing, as -1 is.
            let rule = "'id' must be a whole number from 1 to 18446744073709551615, got "
            for (index, id) in ["0", "-0"].enumerated() {
                let zero = try RawClient(path: harness.socketPath)
                defer { zero.close() }
                try zero.send([UInt8](try FrameEncoder.encode(Data(#"{"id":\#(id),"request":{"hello":{"_0":{"role":"admin"}}}}"#.utf8))))
                let (bytes, ending) = zero.readUntilClosed()
                #expect(ending == .closed && bytes.isEmpty, "id \(id): \(bytes.count) bytes of reply")
                // Logged as -1 was (JSON reads -0 as 0); past ten faults a minute, at debug level.
                #expect(await harness.poll(timeout: .seconds(5)) {
                    daemon.standardError.split(separator: "\n").filter { $0.contains("the peer at fault: malformed message") && $0.contains(rule) }.count == index + 2
                }, "\(daemon.standardError)")
            }
            #expect(try await harness.bgtask("status").status == 0)
        }

        @Test("an app cannot fill bgtaskd's store with checkpoints: its bytes are capped, a bad key refused")
        func checkpointsAreCappedPerApp() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            let app = "com.example.testapp"
            try await harness.installTestApp(app, identifiers: ["com.example.testapp.refresh"], arguments: [])
            let events = harness.eventsPath(app) + ".hand"
            let result = try await harness.run(harness.testApp, ["--events", events, "--fill-checkpoints", "--exit-after-launch"], environment: harness.handEnvironment(app))
            #expect(result.status == 0, "\(result)")
            let lines = ((try? String(contentsOfFile: events, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            #expect(lines.contains { $0.hasPrefix("launched ") && $0.hasSuffix(" daemon") }, "\(lines)")
            // 16 MiB over values of 262,044 + 2 bytes (their JSON form) and keys chunk0...: 64.
            #expect(lines.contains("checkpoints-saved 64"), "\(lines)")
            #expect(lines.contains { $0.hasPrefix("checkpoint-refused") && $0.contains("over the 16777216") }, "\(lines)")
            #expect(lines.contains { $0.hasPrefix("checkpoint-empty-key") && $0.contains("cannot be empty") }, "\(lines)")
            #expect(try await harness.bgtask("status").status == 0)
        }

        @Test("a relative manifest path over the protocol is refused (the daemon's working directory is not the caller's)")
        func installRefusesARelativePath() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            let admin = try MessageLink.connect(path: harness.socketPath)
            defer { admin.close() }
            guard case .welcome = try admin.call(.hello(Hello(role: .admin))) else { Issue.record("no welcome"); return }
            let relative = try admin.call(.admin(.install(manifestPath: "Info.plist")))
            guard case .failed(let failure) = relative else { Issue.record("a relative path was taken: \(relative)"); return }
            #expect(failure.message.contains("absolute path, got 'Info.plist'"), "\(failure)")
        }

        @Test("bgtask shows what a hostile or broken daemon sends, control characters escaped, never obeyed")
        func bgtaskEscapesWhatTheDaemonSays() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try FileManager.default.createDirectory(atPath: harness.runtimeDirectory + "/bgtaskd", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            // Not bgtaskd: a server that welcomes, then answers every request with escapes.
            let server = try FrameServer(endpoint: .path(harness.socketPath), log: { _, _ in }) { connection in
                connection.start(
                    onFrame: { frame in
                        guard let envelope = try? MessageCoding.decode(ClientEnvelope.self, from: frame.payload) else { return }
                        let reply: Reply = if case .hello = envelope.request {
                            .welcome(Welcome(daemonPID: 1))
                        } else if case .admin(.status) = envelope.request {
                            .report(text: "\u{1B}[2J\u{1B}]0;pwned\u{07} status\n", json: "{}")
                        } else {
                            .failed(DaemonFailure(.failed, "\u{1B}[2Jbad"))
                        }
                        try? connection.send(MessageCoding.encode(DaemonEnvelope.reply(id: envelope.id, reply)))
                    },
                    onClose: { _ in })
            }
            defer { server.close() }
            let status = try await harness.bgtask("status")
            #expect(status.status == 0, "\(status)")
            #expect(status.output.contains(#"\u001B[2J\u001B]0;pwned\u0007 status"#), "\(status.output)")
            let failed = try await harness.bgtask("apps")
            #expect(failed.status == 1, "\(failed)")
            #expect(failed.error.contains(#"\u001B[2Jbad"#), "\(failed.error)")
            for text in [status.output, status.error, failed.output, failed.error] {
                #expect(!text.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 }, "a control character reached the terminal: \(text)")
            }
        }

        @Test("a process bgtaskd launched that cannot greet bgtaskd exits instead of running a scheduler of its own")
        func aLaunchedProcessWithoutItsDaemonExits() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let app = "com.example.testapp"
            let refresh = app + ".refresh"
            let manifest = try harness.writeManifest(app: app, executable: harness.testApp, arguments: [], identifiers: [refresh])
            // Nobody listens at the socket: bgtaskd died (or stalled) right after starting it.
            let result = try await harness.run(
                harness.testApp, ["--events", harness.eventsPath(app), "--register", refresh, "--submit", refresh, "--exit-after-launch"],
                environment: harness.environment.merging(["BGTASK_MANIFEST": manifest, "BGTASK_DAEMON_SOCKET": harness.socketPath, "BGTASK_LAUNCH": "background"]) { $1 })
            #expect(result.status == 1, "\(result)")
            #expect(result.error.contains("it exits rather than run a scheduler of its own"), "\(result.error)")
            #expect(!result.error.contains("using the embedded scheduler"), "\(result.error)")
            #expect(harness.events(app).isEmpty, "it neither launched a scheduler nor acknowledged a submit: \(harness.events(app))")
            #expect(!FileManager.default.fileExists(atPath: harness.stateHome + "/bgtask/" + app), "no store of its own")
        }

        @Test("bgtaskd that cannot listen stops before it launches any app")
        func aDaemonThatCannotListenLaunchesNothing() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let app = "com.example.testapp"
            let refresh = app + ".refresh"
            // A refresh due at once, submitted while nothing launched by itself.
            try await harness.startDaemon(environment: harness.environment.merging(["BGTASK_MANUAL_LAUNCH": "1"]) { $1 })
            try await harness.installTestApp(app, identifiers: [refresh], arguments: ["--register", refresh])
            try await DaemonProcessTests.Launching.submitByHand(harness, app: app, identifier: refresh, extra: ["--submit-after", "0"])
            _ = try await harness.stopDaemon()
            #expect(try await harness.pendingIdentifiers(app) == [refresh])
            // The socket directory is now of the wrong mode: the next start fails.
            #expect(chmod(harness.runtimeDirectory + "/bgtaskd", 0o755) == 0)
            let failed = try await harness.run(harness.bgtaskd, harness.daemonFlags)
            #expect(failed.status == 1, "\(failed)")
            #expect(failed.error.contains("0755"), "\(failed.error)")
            #expect(!failed.error.contains("started \(app)"), "it launched the app before failing: \(failed.error)")
            #expect(harness.events(app).isEmpty, "\(harness.events(app))")
            #expect(try await harness.pendingIdentifiers(app) == [refresh], "the request waits for a daemon that can listen")
        }

        @Test("a client that connects and sends nothing is closed after the first-frame timeout")
        func silentClientTimesOut() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon(["--first-frame-timeout", "1"])
            let silent = try RawClient(path: harness.socketPath, receiveTimeout: 6)
            defer { silent.close() }
            let start = ContinuousClock.now
            let (bytes, ending) = silent.readUntilClosed()
            let elapsed = ContinuousClock.now - start
            #expect(ending == .closed && bytes.isEmpty)
            #expect(elapsed >= .milliseconds(900) && elapsed < .seconds(4), "closed after \(elapsed)")
            #expect(try await harness.bgtask("status").status == 0)
        }

        /// 1,000 clients from one process (python3: a separate process keeps the test's own
        /// descriptors few; Foundation's Process watches children with select(2), which
        /// cannot see descriptors past 1024).
        static let thousandClientsScript = """
            import json, socket, struct, sys
            def frame(request_id, request):
                payload = json.dumps({"id": request_id, "request": request}).encode()
                return struct.pack(">IB", len(payload), 1) + payload
            hello = frame(1, {"hello": {"_0": {"role": "admin"}}})
            status = frame(2, {"admin": {"_0": {"status": {}}}})
            clients = []
            for _ in range(int(sys.argv[2])):
                client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                client.connect(sys.argv[1])
                client.settimeout(10)
                client.sendall(hello + status)
                clients.append(client)
            answered = closed = silent = 0
            for client in clients:
                received = b""
                try:
                    while True:
                        chunk = client.recv(65536)
                        if not chunk:
                            closed += 1
                            break
                        received += chunk
                        if b'"report"' in received:
                            answered += 1
                            break
                except socket.timeout:
                    silent += 1
            print(answered, closed, silent)
            """

        @Test("1,000 clients connecting at once all get answers or clean closes; the daemon stays up",
              .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs /usr/bin/python3"))
        func thousandClients() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let daemon = try await harness.startDaemon()
            // The daemon's threads while the clients are served: one serial queue serves every
            // connection, so they stay few (each connection's queue took a worker of its own
            // before: 257 threads for 600 connections).
            let peakThreads = Mutex(0)
            let sampling = Task.detached {
                while !Task.isCancelled {
                    let count = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(daemon.pid)/task").count) ?? 0
                    peakThreads.withLock { $0 = max($0, count) }
                    try? await Task.sleep(for: .milliseconds(5))
                }
            }
            // All 1,000 connect and send before any reply is read.
            let result = try await harness.run("/usr/bin/python3", ["-c", Self.thousandClientsScript, harness.socketPath, "1000"], timeout: .seconds(60))
            sampling.cancel()
            _ = await sampling.value
            #expect(peakThreads.withLock { $0 } <= 64, "bgtaskd ran \(peakThreads.withLock { $0 }) threads at once")
            #expect(result.status == 0, "\(result)")
            let counts = result.output.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
            try #require(counts.count == 3, "\(result)")
            #expect(counts[2] == 0, "answered \(counts[0]), closed \(counts[1]), silent \(counts[2])")
            #expect(counts[0] + counts[1] == 1000)
            #expect(counts[0] >= 990, "answered \(counts[0]), closed \(counts[1])")
            #expect(daemon.result == nil, "the daemon is up")
            #expect(try await harness.bgtask("status").status == 0)
        }

        @Test("at its connection cap bgtaskd tells a client so before it closes; bgtask says it is full (exit 1), not that the connection was reset")
        func atTheConnectionCapBgtaskSaysTheDaemonIsFull() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            // 144 descriptors leave the cap at its floor, 16 (the limit less 128, at least 16).
            try await harness.startDaemon(descriptorLimit: 144)
            var links: [MessageLink] = []
            defer { for link in links { link.close() } }
            for _ in 0..<16 {
                let link = try MessageLink.connect(path: harness.socketPath)
                links.append(link)
                // Welcomed: admitted, so the daemon holds exactly these 16.
                guard case .welcome = try link.call(.hello(Hello(role: .admin))) else { Issue.record("no welcome"); return }
            }
            let message = "bgtaskd at \(harness.socketPath) is at its connection limit (16); try again"
            for command in [["status"], ["apps", "--json"], ["conditions"], ["policy", "--socket", harness.socketPath], ["why", "com.example.a", "com.example.a.refresh"]] {
                let result = try await harness.run(harness.bgtask, command)
                #expect(result.status == 1, "\(command): \(result)")
                #expect(result.error == "bgtask \(command[0]): \(message)\n", "\(command): \(result)")
                #expect(result.output.isEmpty, "\(command): nothing answered from here instead: \(result)")
            }
            #expect(harness.daemon?.standardError.contains("16 connections are open, the most this server keeps") == true)
            // A slot frees: served again.
            links.removeLast().close()
            let served = try await harness.poll(timeout: .seconds(10)) { try await harness.bgtask("status").status == 0 }
            #expect(served)
        }

        @Test("a peer of another uid is refused (socket activation on a socket it can reach); the daemon's uid is served",
              .enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
                  && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"),
                       "switching uid needs root and setpriv; the launcher is python3 (docs/testing.md)"))
        func anotherUIDRefused() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            // A directory and socket uid 65534 can reach (the daemon's own socket directory
            // is 0700 and refused otherwise): systemd-style socket activation passes it.
            let shared = harness.root + "/shared"
            try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            chmod(harness.root, 0o755)
            let socket = shared + "/socket"
            let launcher = """
                import os, socket, sys
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777); s.listen(64)
                if s.fileno() != 3:
                    os.dup2(s.fileno(), 3)
                os.set_inheritable(3, True)
                env = dict(os.environ); env["LISTEN_FDS"] = "1"; env["LISTEN_PID"] = str(os.getpid())
                os.execve(sys.argv[2], [sys.argv[2]] + sys.argv[3:], env)
                """
            let daemon = try harness.spawn("/usr/bin/python3", ["-c", launcher, socket, harness.bgtaskd] + harness.daemonFlags, name: "bgtaskd-activated")
            #expect(await harness.poll(timeout: .seconds(10)) { daemon.standardError.contains(" ready on ") || daemon.result != nil }, "\(daemon.standardError)")
            #expect(daemon.standardError.contains("using the socket systemd passed"), "\(daemon.standardError)")

            let asNobody = try await harness.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", harness.bgtask, "status", "--socket", socket])
            #expect(asNobody.status == 1, "\(asNobody)")
            #expect(await harness.poll(timeout: .seconds(5)) { daemon.standardError.contains("uid 65534") }, "logged: \(daemon.standardError)")
            let asOwner = try await harness.bgtask("status", "--socket", socket)
            #expect(asOwner.status == 0, "\(asOwner)")
            // The adopted socket's own path, not the default one (an outside probe: the ready
            // line, status and the apps' BGTASK_DAEMON_SOCKET named the default path).
            #expect(daemon.standardError.contains("ready on \(socket) with"), "\(daemon.standardError)")
            #expect(asOwner.output.contains(socket), "\(asOwner.output)")
            daemon.signal(SIGTERM)
            _ = await daemon.waitForExit(timeout: .seconds(10))
        }
    }
}
