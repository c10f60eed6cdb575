#if canImport(Glibc)
import Glibc
#endif
import DaemonProtocol
import Foundation
import SchedulerCore
import Testing

/// An app may not itself schedule the identifiers only the system schedules for it (the
/// remote wake's, `<app>.remote-notification`: only `bgtask push` makes those, within its
/// limit), unless its manifest lists them (docs/daemon.md, "Protocol and privileges").
extension DaemonProcessTests {
    @Suite struct SystemIdentifiers {
        static let app = "com.example.sysid"

        /// Runs `body` with a daemon where this test process is installed as the app (with
        /// `identifiers` listed) and greeted as it, so that it may send what the app's own
        /// code would never send.
        static func asTheApp(listing identifiers: [String], modes: [String] = ["fetch", "processing", "remote-notification"],
                             _ body: (DaemonHarness, MessageLink) async throws -> Void) async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
            let manifest = try harness.writeManifest(app: Self.app, executable: executable, arguments: [], identifiers: identifiers,
                                                     modes: modes)
            let installed = try await harness.bgtask("install", manifest)
            #expect(installed.status == 0, "\(installed)")
            let link = try MessageLink.connect(path: harness.socketPath)
            defer { link.close() }
            guard case .welcome = try link.call(.hello(Hello(role: .app, app: AppID(Self.app)))) else {
                throw HarnessError("the daemon did not welcome this process as \(Self.app)")
            }
            try await body(harness, link)
        }

        static func submit(_ identifier: String, on link: MessageLink) throws -> Reply {
            // Due in an hour: it stays pending (this process never finishes launching).
            try link.call(.app(.submit(PendingRequest(app: AppID(Self.app), identifier: identifier, kind: .appRefresh,
                                                      earliestBeginDate: Date().addingTimeInterval(3_600), submittedAt: Date()))))
        }

        @Test("an app's submission or retry policy of <app>.remote-notification is refused notPermitted, as an unlisted identifier; so is the fetch identifier of an app that lists identifiers of its own")
        func remoteWakeIdentifierIsTheSystems() async throws {
            try await Self.asTheApp(listing: [Self.app + ".refresh"]) { harness, link in
                let wake = Self.app + ".remote-notification"
                let forged = try Self.submit(wake, on: link)
                guard case .failed(let refusal) = forged else {
                    Issue.record("a submission of \(wake) by the app was accepted: \(forged)")
                    return
                }
                #expect(refusal.code == .submitRejected && refusal.rejection == .notPermitted, "\(refusal)")
                #expect(refusal.message.hasPrefix("'\(wake)' is not listed in BGTaskSchedulerPermittedIdentifiers of "), "\(refusal.message)")
                #expect(refusal.message.contains("bgtask push"), "says who schedules it: \(refusal.message)")
                // The same refusal as any identifier the manifest does not list.
                guard case .failed(let unlisted) = try Self.submit(Self.app + ".unlisted", on: link) else {
                    Issue.record("an unlisted identifier was accepted")
                    return
                }
                #expect(unlisted.code == refusal.code && unlisted.rejection == refusal.rejection)
                let queued = try await harness.pendingIdentifiers(Self.app)
                #expect(queued.isEmpty, "nothing was queued: \(queued)")

                // A retry policy would file a failed wake again, outside the push limit.
                let terms = RetryPolicyTerms(RetryPolicy(initialDelay: 1, multiplier: 2, maximumDelay: 60, maximumAttempts: 3))
                let retry = try link.call(.app(.setRetryPolicy(identifier: wake, policy: terms)))
                guard case .failed(let retryRefusal) = retry else {
                    Issue.record("a retry policy for \(wake) was accepted: \(retry)")
                    return
                }
                #expect(retryRefusal.code == .notPermitted && retryRefusal.message.contains(wake), "\(retryRefusal)")

                // A manifest that lists identifiers of its own turns the legacy fetch off, as on
                // iOS 13 and later: its identifier is not the app's to submit either.
                let fetch = Self.app + ".background-fetch"
                let fetchReply = try Self.submit(fetch, on: link)
                guard case .failed(let fetchRefusal) = fetchReply else {
                    Issue.record("the fetch identifier of an app listing its own was accepted: \(fetchReply)")
                    return
                }
                #expect(fetchRefusal.code == .submitRejected && fetchRefusal.rejection == .notPermitted, "\(fetchRefusal)")
            }
        }

        @Test("the legacy fetch's identifier is the app's to submit when its manifest lists no identifiers of its own")
        func fetchIdentifierOfAnAppWithoutIdentifiers() async throws {
            try await Self.asTheApp(listing: [], modes: ["fetch"]) { harness, link in
                // (setMinimumBackgroundFetchInterval submits it.)
                let fetch = Self.app + ".background-fetch"
                let fetchReply = try Self.submit(fetch, on: link)
                #expect(fetchReply == .done(nil))
                let pending = try await harness.pendingIdentifiers(Self.app)
                #expect(pending == [fetch])
            }
        }

        @Test("a manifest that lists <app>.remote-notification itself lets the app submit it")
        func listedRemoteWakeIdentifierIsTheApps() async throws {
            let wake = Self.app + ".remote-notification"
            try await Self.asTheApp(listing: [wake]) { harness, link in
                // (#expect cannot try inside this closure: the values are taken first.)
                let reply = try Self.submit(wake, on: link)
                #expect(reply == .done(nil))
                let pending = try await harness.pendingIdentifiers(Self.app)
                #expect(pending == [wake])
            }
        }
    }
}
