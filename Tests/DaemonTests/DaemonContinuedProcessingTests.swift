#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// Continued processing through bgtaskd, end to end: the app the user opened submits, the
/// work runs in that process at once and in turn behind the cap, and a force-quit cancels
/// what is queued (docs/daemon.md, "Continued processing"; docs/system.md).
extension DaemonProcessTests {
    @Suite struct ContinuedProcessing {
        static let app = "com.example.testapp"
        static let wildcard = "com.example.testapp.export.*"
        static let first = "com.example.testapp.export.a"
        static let second = "com.example.testapp.export.b"

        /// bgtaskd with the test app installed permitting the exports, and the app opened
        /// by the user submitting two of them, its handlers doing `behaviour`.
        static func opened(_ harness: DaemonHarness, behaviour: String, work: String = "0") async throws -> TestProcess {
            try await harness.startDaemon()
            try await harness.installTestApp(app, identifiers: [wildcard], arguments: ["--register", wildcard])
            let user = try harness.spawn(
                harness.testApp,
                ["--events", harness.eventsPath("user"), "--register", wildcard, "--behaviour", behaviour, "--work", work,
                 "--submit-continued", first, "--submit-continued", second],
                environment: harness.handEnvironment(app), name: "user")
            #expect(await harness.waitForEvent("user", "handler \(first) \(user.pid)") != nil, "\(harness.events("user")); \(user.standardError)")
            let events = harness.events("user")
            #expect(events.contains("launched \(user.pid) daemon"), "\(events)")
            #expect(events.contains("submitted \(first)") && events.contains("submitted \(second)"), "\(events)")
            return user
        }

        @Test("continued processing the open app submits runs in that process, one at a time, each logged a success")
        func runsInTheOpenAppInTurn() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let user = try await Self.opened(harness, behaviour: "complete", work: "0.5")
            defer { user.signal(SIGKILL) }
            // The second waits for the first (the cap), then runs in the same process.
            #expect(await harness.waitForEvent("user", "handler \(Self.second) \(user.pid)") != nil, "\(harness.events("user"))")
            var logged: [[String: Any]] = []
            for identifier in [Self.first, Self.second] {
                let run = try await harness.waitForLoggedRun(Self.app, identifier)
                #expect(run?["outcome"] as? String == "success", "\(identifier): \(String(describing: run))")
                #expect(run?["kind"] as? String == "continued-processing", "\(String(describing: run))")
                if let run { logged.append(run) }
            }
            // In turn, by the run log's own times (the app's lines are written after its calls).
            let firstEnded = logged.first?["endedAt"] as? String, secondStarted = logged.last?["startedAt"] as? String
            #expect(logged.count == 2 && firstEnded != nil && secondStarted != nil && firstEnded! <= secondStarted!, "in turn: \(logged)")
            #expect(try await harness.pendingIdentifiers(Self.app).isEmpty)
        }

        @Test("a force-quit cancels the queued continued processing and ends the running one (Apple: cancelled when closed in the app switcher)")
        func aForceQuitCancelsTheQueuedOne() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let user = try await Self.opened(harness, behaviour: "hang")
            defer { user.signal(SIGKILL) }
            #expect(try await harness.pendingIdentifiers(Self.app) == [Self.second], "queued behind the cap")
            let quit = try await harness.bgtask("force-quit", Self.app)
            #expect(quit.status == 0, "\(quit)")
            #expect(try await harness.poll(timeout: .seconds(5)) { try await harness.pendingIdentifiers(Self.app).isEmpty })
            #expect(harness.daemon?.standardError.contains("cancelled the queued continued processing '\(Self.second)': the app was force-quit") == true, "\(harness.daemon?.standardError ?? "")")
            // The running one heard its expiration, and the user's process was ended.
            let logged = try await harness.waitForLoggedRun(Self.app, Self.first)
            #expect(logged?["outcome"] as? String != "success", "\(String(describing: logged))")
            #expect(harness.events("user").contains("expired \(Self.first)"), "\(harness.events("user"))")
            #expect(await user.waitForExit(timeout: .seconds(15)) != nil, "\(user.standardError)")
            // Never started, in that process or in one bgtaskd would start for it (as it did
            // before the cancellation, for a request the user had closed the app on).
            #expect(!(harness.events("user") + harness.events(Self.app)).contains { $0.hasPrefix("handler \(Self.second)") }, "never started")
            #expect(harness.daemon?.standardError.contains("started \(Self.app) in the background") == false, "\(harness.daemon?.standardError ?? "")")
        }
    }
}
