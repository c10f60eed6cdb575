#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SchedulerCore
import SchedulerStore
import Testing

/// A SwiftUI app (Tests/SwiftUIApp, Swift 5 mode): `@main struct ...: App` with
/// `.onChange(of: scenePhase)` and `.backgroundTask(.appRefresh(...))`, embedded and under
/// bgtaskd (docs/porting.md, "A SwiftUI app").
extension DaemonProcessTests {
    @Suite struct SwiftUIApp {
        static let app = "com.example.swiftuiapp"
        static let refresh = "com.example.swiftuiapp.refresh"

        static func events(in path: String) -> [String] { AppDelegateApp.events(in: path) }

        /// Starts the app as the user would, waits until its scene is active, sends SIGTERM
        /// (the user leaves it) and waits for it to exit by itself.
        static func openAndLeave(_ harness: DaemonHarness, executable: String) async throws -> [String] {
            try await AppDelegateApp.openAndLeave(harness, executable: executable, name: "swiftui", app: app, activeEvent: "event phase active")
        }

        /// With bgtaskd started and the app installed with `arguments`: the user opens the app
        /// and leaves it (the refresh submitted to the daemon), then `bgtask run` launches it in
        /// the background for the refresh; returns the user's process's events.
        @discardableResult
        static func installOpenLeaveAndRun(_ harness: DaemonHarness, arguments: [String]) async throws -> [String] {
            try await harness.startDaemon()
            let executable = try Product.locate("ios-swiftui-app")
            let manifest = try harness.writeManifest(app: app, executable: executable, arguments: arguments, identifiers: [refresh], modes: ["fetch"])
            #expect(try await harness.bgtask("install", manifest).status == 0)
            let events = try await openAndLeave(harness, executable: executable)
            #expect(try await harness.pendingIdentifiers(app) == [refresh], "submitted through the daemon")
            let run = try await harness.bgtask("run", app, refresh)
            #expect(run.status == 0, "\(run)")
            return events
        }

        @Test("embedded: the delegate adaptor's didFinishLaunching, the window shown (onAppear with its environment objects, the model and the delegate adaptor's ObservableObject delegate, its task), the scene phase active in the scene and the view; SIGTERM: inactive, background, where the scene's onChange submits the refresh; exit 0")
        func embedded() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let executable = try Product.locate("ios-swiftui-app")
            _ = try harness.writeManifest(app: Self.app, executable: executable, arguments: [], identifiers: [Self.refresh], modes: ["fetch"])
            let events = try await Self.openAndLeave(harness, executable: executable)
            // The task runs concurrently with the rest: it is somewhere after the appearance.
            #expect(events.filter { $0 != "event view task" } == [
                "event didFinishLaunching state=foreground", "event view appeared title=Latest stories launched=true",
                "event phase active", "event view phase active", "event phase inactive", "event view phase inactive",
                "event phase background", "event submitted", "event view phase background",
            ])
            #expect(events.filter { $0 == "event view task" }.count == 1, "\(events)")
            let store = try SchedulerStore.openForReading(at: URL(fileURLWithPath: harness.stateHome + "/bgtask/\(Self.app)/scheduler.sqlite"))
            defer { store.close() }
            #expect(try store.pendingRequests().map(\.identifier) == [Self.refresh])
        }

        @Test("under bgtaskd: bgtask run launches the app in the background; its .backgroundTask action runs off the main actor, reschedules, and the run is logged a success once the action returned")
        func underTheDaemon() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let events = try await Self.installOpenLeaveAndRun(harness, arguments: [])
            #expect(events.suffix(3) == ["event phase background", "event submitted", "event view phase background"], "\(events)")
            let logged = try await harness.waitForLoggedRun(Self.app, Self.refresh)
            #expect(logged?["outcome"] as? String == "success", "\(String(describing: logged))")
            let log = harness.stateDirectory + "/logs/app-\(Self.app).log"
            #expect(await harness.poll(timeout: .seconds(5)) { Self.events(in: log).contains("event refreshed cancelled=false") }, "\(Self.events(in: log))")
            let launched = Self.events(in: log)
            #expect(launched.first == "event didFinishLaunching state=background", "a background launch: \(launched)")
            #expect(launched.contains("event backgroundTask main=false"), "\(launched)")
            #expect(!launched.contains("event phase active"), "nobody opened it: \(launched)")
            #expect(!launched.contains { $0.hasPrefix("event view") }, "no window is shown in a background launch: \(launched)")
            // The action rescheduled first thing, through the daemon.
            #expect(await harness.poll(timeout: .seconds(5)) { (try? await harness.pendingIdentifiers(Self.app)) == [Self.refresh] })
        }

        @Test("an expiration cancels the .backgroundTask action (Task.isCancelled), which returns at once: the run is logged expired")
        func anExpirationCancelsTheAction() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await Self.installOpenLeaveAndRun(harness, arguments: ["--slow-refresh"])
            let log = harness.stateDirectory + "/logs/app-\(Self.app).log"
            #expect(await harness.poll(timeout: .seconds(10)) { Self.events(in: log).contains("event backgroundTask main=false") }, "\(Self.events(in: log))")
            #expect(try await harness.bgtask("expire", Self.app, Self.refresh).status == 0)
            #expect(await harness.poll(timeout: .seconds(5)) { Self.events(in: log).contains("event refreshed cancelled=true") }, "\(Self.events(in: log))")
            let logged = try await harness.waitForLoggedRun(Self.app, Self.refresh, timeout: .seconds(5))
            #expect(logged?["outcome"] as? String == "expired", "\(String(describing: logged))")
        }

        @Test("an identifier the app registered itself in init() and gave a .backgroundTask too: the app's handler runs it, the modifier is said unused, nothing stops")
        func anIdentifierRegisteredByTheAppKeepsItsHandler() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await Self.installOpenLeaveAndRun(harness, arguments: ["--register-in-init"])
            let logged = try await harness.waitForLoggedRun(Self.app, Self.refresh)
            #expect(logged?["outcome"] as? String == "success", "\(String(describing: logged))")
            let log = harness.stateDirectory + "/logs/app-\(Self.app).log"
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            #expect(Self.events(in: log).contains("event init handler"), "\(text)")
            #expect(!Self.events(in: log).contains("event backgroundTask main=false"), "\(text)")
            #expect(text.contains("is not used: the app registered a launch handler for '\(Self.refresh)' itself"), "\(text)")
        }
    }
}
