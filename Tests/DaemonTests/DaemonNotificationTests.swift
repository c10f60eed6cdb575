#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// Local notifications the app does not deliver, end to end (docs/daemon.md, "Notifications
/// while the app is not running"): bgtaskd shows those due while no process of the app
/// runs, and those of an app it froze, which takes them in when it runs again.
extension DaemonProcessTests {
    @Suite struct Notifications {
        static let app = "com.example.notifier"
        static let refresh = "com.example.notifier.refresh"
        static let shownByDaemon = "notification \"reminder\" shown: Reminder — Time to read (sound, badge 7, delivered by bgtaskd: the app did not)"

        /// The app's pending notifications, as the file in its state directory keeps them.
        static func keptFile(_ harness: DaemonHarness) throws -> [String: Any] {
            let path = harness.stateHome + "/bgtask/\(app)/pending-notifications.json"
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        }

        @Test("a notification due after the app exited is shown by bgtaskd at its moment; the app's next launch finds it delivered, with its badge")
        func shownWhileTheAppIsNotRunning() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            try await harness.installTestApp(Self.app, identifiers: [Self.refresh], arguments: [])
            let events = harness.eventsPath(Self.app)
            let started = ContinuousClock.now
            let added = try await harness.run(harness.testApp, ["--events", events, "--notify-after", "3", "--exit-after-launch"], environment: harness.handEnvironment(Self.app))
            #expect(added.status == 0, "\(added)")
            #expect(harness.events(Self.app).contains("notification-added reminder"), "\(harness.events(Self.app))\n\(added)")
            let daemonLog = { harness.daemon?.standardError ?? "" }
            if ContinuousClock.now - started < .seconds(2.5) {
                #expect(!daemonLog().contains("\" shown: "), "not before its moment: \(daemonLog())")
            }
            #expect(await harness.poll(timeout: .seconds(15)) { daemonLog().contains(Self.shownByDaemon) }, "\(daemonLog())")
            let kept = try Self.keptFile(harness)
            #expect((kept["pending"] as? [Any])?.isEmpty == true, "\(kept)")
            #expect((kept["deliveredWhileAway"] as? [[String: Any]])?.count == 1, "\(kept)")
            #expect(kept["badge"] as? Int == 7)
            #expect(daemonLog().components(separatedBy: "notification \"reminder\" shown").count == 2, "shown once: \(daemonLog())")

            // The next launch: in its delivered list, the badge on its icon; the file without them.
            let next = try await harness.run(harness.testApp, ["--events", events, "--notifications", "--exit-after-launch"], environment: harness.handEnvironment(Self.app))
            #expect(next.status == 0, "\(next)")
            #expect(harness.events(Self.app).contains("delivered reminder badge 7"), "\(harness.events(Self.app))\n\(next)")
            #expect(!next.error.contains("bgtask notification"), "not shown again: \(next.error)")
            let taken = try Self.keptFile(harness)
            #expect((taken["deliveredWhileAway"] as? [Any])?.isEmpty == true, "\(taken)")
            #expect(taken["badge"] == nil, "\(taken)")
        }

        @Test("bgtask respond: a tap on what bgtaskd showed while the app was not running starts it, brings it to the foreground and reaches its delegate")
        func aTapStartsTheAppAndReachesTheDelegate() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            try await harness.installTestApp(Self.app, identifiers: [Self.refresh], arguments: ["--register", Self.refresh, "--notify-after", "3", "--notify-in-handler", "--respond-delegate"])
            try await Launching.submitByHand(harness, app: Self.app, identifier: Self.refresh)
            #expect(try await harness.bgtask("run", Self.app, Self.refresh).status == 0)
            #expect(await harness.waitForEvent(Self.app, "completed \(Self.refresh) true") != nil, "\(harness.events(Self.app))")
            // The user swipes it away before the notification's moment: bgtaskd shows it.
            #expect(try await harness.bgtask("force-quit", Self.app).status == 0)
            #expect(try await harness.poll(timeout: .seconds(10)) { try await harness.appState(Self.app) == "notRunning" })
            let daemonLog = { harness.daemon?.standardError ?? "" }
            #expect(await harness.poll(timeout: .seconds(15)) { daemonLog().contains(Self.shownByDaemon) }, "\(daemonLog())")

            let tap = try await harness.bgtask("respond", Self.app, "reminder")
            #expect(tap.status == 0 && tap.output.contains("was not running: started for it"), "\(tap)")
            let heard = await harness.waitForEvent(Self.app, "responded reminder", timeout: .seconds(20))
            #expect(heard == "responded reminder com.apple.UNNotificationDefaultActionIdentifier state=active", "\(harness.events(Self.app))")
            // Started for the user, as iOS launches an app for a tap: into the foreground (its
            // lifecycle never in the background), not a background launch brought forward.
            let started = harness.events(Self.app).split { $0.hasPrefix("launched ") }.last ?? []
            #expect(started.contains("launch-state active"), "active as its launch finished: \(started)")
            #expect(started.contains("launch-response reminder com.apple.UNNotificationDefaultActionIdentifier"), "its connection options carry the tap: \(started)")
            #expect(harness.events(Self.app).contains("launch-response none"), "a launch for a run carries none")
            // Open now (the app said so): not frozen once idle.
            let suspended = try await harness.poll(timeout: .seconds(3)) { try await harness.appState(Self.app) == "suspended" }
            #expect(!suspended, "the app the user opened stays running")
            #expect(try await harness.appState(Self.app) == "ready")
            // Responded to once: the app's log says a second has nothing to answer.
            #expect(try await harness.bgtask("respond", Self.app, "reminder").status == 0)
            let logs = harness.stateDirectory + "/logs"
            let appLog = { ((try? FileManager.default.contentsOfDirectory(atPath: logs)) ?? []).filter { $0.contains(Self.app) }
                .map { (try? String(contentsOfFile: logs + "/" + $0, encoding: .utf8)) ?? "" }.joined() }
            #expect(await harness.poll(timeout: .seconds(10)) { appLog().contains("not among the delivered notifications") }, "\(appLog())")
            #expect(harness.events(Self.app).filter { $0.hasPrefix("responded") }.count == 1)
            // Ended by bgtaskd (a force-quit: told to quit, then SIGTERM), the process it started
            // for the user exits in order, before the kill grace.
            #expect(try await harness.bgtask("force-quit", Self.app).status == 0)
            #expect(await harness.poll(timeout: .seconds(10)) { daemonLog().contains("\(Self.app)'s process exited with code 0") }, "\(daemonLog())")
            #expect(!daemonLog().contains("\(Self.app)'s process killed by signal 9"))
        }

        @Test("a frozen app's notification is delivered by bgtaskd at its moment; thawed later, the app takes it in and does not deliver it again")
        func aFrozenAppsNotificationIsDeliveredOnce() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            // Due 5 s after the handler: the app is frozen (1 s after its task) well before.
            try await harness.installTestApp(Self.app, identifiers: [Self.refresh], arguments: ["--register", Self.refresh, "--notify-after", "5", "--notify-in-handler"])
            try await Launching.submitByHand(harness, app: Self.app, identifier: Self.refresh)
            #expect(try await harness.bgtask("run", Self.app, Self.refresh).status == 0)
            #expect(await harness.waitForEvent(Self.app, "completed \(Self.refresh) true") != nil, "\(harness.events(Self.app))")
            #expect(harness.events(Self.app).contains("notification-added reminder"), "\(harness.events(Self.app))")
            #expect(try await harness.poll(timeout: .seconds(5)) { try await harness.appState(Self.app) == "suspended" })
            let daemonLog = { harness.daemon?.standardError ?? "" }
            #expect(await harness.poll(timeout: .seconds(15)) { daemonLog().contains(Self.shownByDaemon) }, "\(daemonLog())")
            #expect(try await harness.appState(Self.app) == "suspended", "delivered without thawing the app")
            #expect((try Self.keptFile(harness)["deliveredWhileAway"] as? [Any])?.count == 1)

            // Thawed (the user opens it): its timer for that moment fires late, and it takes in
            // bgtaskd's delivery instead of delivering again.
            #expect(try await harness.bgtask("open", Self.app).status == 0)
            #expect(try await harness.poll(timeout: .seconds(10)) { (try Self.keptFile(harness)["deliveredWhileAway"] as? [Any])?.isEmpty == true },
                    "the app took the delivery in: \(String(describing: try? Self.keptFile(harness)))")
            let logs = harness.stateDirectory + "/logs"
            let appLog = { ((try? FileManager.default.contentsOfDirectory(atPath: logs)) ?? []).filter { $0.contains(Self.app) }
                .map { (try? String(contentsOfFile: logs + "/" + $0, encoding: .utf8)) ?? "" }.joined() }
            // The app took the delivery in when its overdue timer fired, in the same hold of the
            // file's lock as its decision not to fire; a line of its own would come right after:
            // none comes in the next 3 seconds.
            let again = await harness.poll(timeout: .seconds(3)) { appLog().contains("bgtask notification [\(Self.app)] ") }
            #expect(!again, "delivered once, by bgtaskd: \(appLog())")
            #expect(daemonLog().components(separatedBy: "notification \"reminder\" shown").count == 2, "\(daemonLog())")
        }
    }
}
