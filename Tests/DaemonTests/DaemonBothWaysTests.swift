#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SchedulerCore
import SchedulerStore
import Testing

/// The same app code, unchanged, with and without the daemon (issue: "The same app code
/// works both ways"; docs/daemon.md, "The app side").
extension DaemonProcessTests {
    @Suite struct BothWays {
        static let app = "com.example.testapp"
        static let refresh = "com.example.testapp.refresh"

        @Test("the test app runs its task embedded without a daemon, and through the daemon with the same arguments")
        func sameCodeBothWays() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let manifest = try harness.writeManifest(app: Self.app, executable: harness.testApp, arguments: [], identifiers: [Self.refresh])
            var environment = harness.environment
            environment["BGTASK_MANIFEST"] = manifest
            func arguments(_ events: String) -> [String] {
                ["--events", harness.eventsPath(events), "--register", Self.refresh, "--submit", Self.refresh, "--simulate-launch", Self.refresh]
            }

            // No daemon: the embedded scheduler, its state under XDG_STATE_HOME/bgtask/<app>.
            let embedded = try harness.spawn(harness.testApp, arguments("embedded"), environment: environment, name: "embedded")
            #expect(await harness.waitForEvent("embedded", "completed \(Self.refresh) true") != nil, "\(harness.events("embedded")); \(embedded.standardError)")
            #expect(harness.events("embedded").contains { $0.hasPrefix("launched ") && $0.hasSuffix(" embedded") })
            embedded.signal(SIGTERM)
            #expect(await embedded.waitForExit(timeout: .seconds(10)) != nil)
            let store = try SchedulerStore.openForReading(at: URL(fileURLWithPath: harness.stateHome + "/bgtask/\(Self.app)/scheduler.sqlite"))
            let embeddedRuns = try store.runs(app: AppID(Self.app))
            store.close()
            #expect(embeddedRuns.map(\.outcome) == [.success], "\(embeddedRuns)")

            // The daemon runs and has the app installed: the same binary, same arguments, links to it.
            try await harness.startDaemon()
            #expect(try await harness.bgtask("install", manifest).status == 0)
            let linked = try harness.spawn(harness.testApp, arguments("linked"), environment: environment, name: "linked")
            #expect(await harness.waitForEvent("linked", "completed \(Self.refresh) true") != nil, "\(harness.events("linked")); \(linked.standardError)")
            #expect(harness.events("linked").contains { $0.hasPrefix("launched ") && $0.hasSuffix(" daemon") })
            let logged = try await harness.waitForLoggedRun(Self.app, Self.refresh)
            #expect(logged?["outcome"] as? String == "success", "\(String(describing: logged))")
            #expect(try harness.runs(of: Self.app).map(\.outcome) == [.success], "the run is in the daemon's store")
            linked.signal(SIGTERM)
            #expect(await linked.waitForExit(timeout: .seconds(10)) != nil)
        }
    }
}
