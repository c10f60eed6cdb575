#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SchedulerCore
import SchedulerStore
import Testing

/// An iOS `@main` app delegate (Tests/AppDelegateApp, Swift 5 mode), unchanged, embedded and
/// under bgtaskd (docs/porting.md, "An app delegate").
extension DaemonProcessTests {
    @Suite struct AppDelegateApp {
        static let app = "com.example.delegateapp"
        static let refresh = "com.example.delegateapp.refresh"

        /// The `event ...` lines of a file the app printed to.
        static func events(in path: String) -> [String] {
            ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init).filter { $0.hasPrefix("event ") }
        }

        /// Starts the app (`app`, by default this suite's) as the user would, waits until it
        /// printed `activeEvent`, sends SIGTERM (the user leaves it: it enters the background
        /// and schedules its refresh) and waits for it to exit by itself.
        static func openAndLeave(_ harness: DaemonHarness, executable: String, name: String, app: String = app,
                                 activeEvent: String = "event applicationDidBecomeActive", environment: [String: String] = [:]) async throws -> [String] {
            let process = try harness.spawn(executable, [], environment: harness.handEnvironment(app).merging(environment) { $1 }, name: name)
            #expect(await harness.poll(timeout: .seconds(10)) { events(in: process.outputPath).contains(activeEvent) },
                    "\(events(in: process.outputPath)); \(process.standardError)")
            process.signal(SIGTERM)
            let result = await process.waitForExit(timeout: .seconds(15))
            #expect(result?.status == 0 && result?.signalled == false, "\(String(describing: result)); \(process.standardError)")
            return events(in: process.outputPath)
        }

        /// Starts bgtaskd and installs the app delegate's app; returns its executable.
        static func installedUnderTheDaemon(_ harness: DaemonHarness) async throws -> String {
            try await harness.startDaemon()
            let executable = try Product.locate("ios-appdelegate-app")
            let manifest = try harness.writeManifest(app: app, executable: executable, arguments: [], identifiers: [refresh], modes: ["fetch"])
            #expect(try await harness.bgtask("install", manifest).status == 0)
            return executable
        }

        /// Starts the app as the user would with a launch that lasts until this test lets it
        /// end, checks, while the delegate's launch code runs, that SIGTERM's source is
        /// registered (its handler installed; before, a SIGTERM now was lost while the manager
        /// thread was slow, CI), the main thread's mask is as it was (a program the app starts
        /// must not inherit SIGTERM blocked) and no other thread can take it (one would end
        /// the app by the default action), then sends SIGTERM, waits until the app says the
        /// signal put it in the background while its launch still runs, lets the launch end,
        /// and expects an orderly exit; returns the events. (A launch of a fixed length lost
        /// the race on a loaded CI machine: the signal came after the launch had ended.)
        static func sigtermDuringASlowLaunch(_ harness: DaemonHarness, executable: String) async throws -> [String] {
            let gate = harness.root + "/launch-gate"
            let process = try harness.spawn(executable, [], environment: harness.handEnvironment(app).merging(["DELEGATEAPP_LAUNCH_GATE": gate]) { $1 }, name: "slow")
            defer { process.signal(SIGKILL) }
            #expect(await harness.poll(timeout: .seconds(10)) { events(in: process.outputPath).contains { $0.hasPrefix("event launching") } },
                    "\(events(in: process.outputPath)); \(process.standardError)")
            #expect(events(in: process.outputPath).contains("event launching signals caught=true blocked=false others=0"), "\(events(in: process.outputPath))")
            process.signal(SIGTERM)
            #expect(await harness.poll(timeout: .seconds(10)) { events(in: process.outputPath).contains("event launching state=background") },
                    "the signal's handler ran during the launch: \(events(in: process.outputPath)); \(process.standardError)")
            _ = FileManager.default.createFile(atPath: gate, contents: nil)
            let result = await process.waitForExit(timeout: .seconds(15))
            #expect(result?.status == 0 && result?.signalled == false, "\(String(describing: result)); \(process.standardError)")
            return events(in: process.outputPath)
        }

        /// The scene app's manifest: its scene delegate named as Xcode writes it.
        static func writeSceneManifest(_ harness: DaemonHarness, executable: String) throws -> String {
            let directory = harness.root + "/apps/" + sceneApp
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let manifest: [String: Any] = [
                "CFBundleIdentifier": sceneApp, "CFBundleExecutable": executable,
                "BGTaskSchedulerPermittedIdentifiers": [sceneRefresh], "UIBackgroundModes": ["fetch"],
                "UIApplicationSceneManifest": [
                    "UIApplicationSupportsMultipleScenes": false,
                    "UISceneConfigurations": ["UIWindowSceneSessionRoleApplication": [
                        ["UISceneConfigurationName": "Default Configuration", "UISceneDelegateClassName": "$(PRODUCT_MODULE_NAME).SceneDelegate"],
                    ]],
                ],
            ]
            let path = directory + "/app.json"
            try JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys]).write(to: URL(fileURLWithPath: path))
            return path
        }
        static let sceneApp = "com.example.sceneapp"
        static let sceneRefresh = "com.example.sceneapp.refresh"

        @Test("a scene-based app: its scene connects on the user's launch and hears the life the app delegate is no longer told; a background launch connects none")
        func sceneBasedApp() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let executable = try Product.locate("ios-scene-app")
            let manifest = try Self.writeSceneManifest(harness, executable: executable)
            try await harness.startDaemon()
            #expect(try await harness.bgtask("install", manifest).status == 0)
            // Started by the user, then left (SIGTERM): the scene hears it all.
            var environment = harness.environment
            environment["BGTASK_MANIFEST"] = manifest
            let process = try harness.spawn(executable, [], environment: environment, name: "scene")
            #expect(await harness.poll(timeout: .seconds(10)) { Self.events(in: process.outputPath).contains("event sceneDidBecomeActive") },
                    "\(Self.events(in: process.outputPath)); \(process.standardError)")
            process.signal(SIGTERM)
            let result = await process.waitForExit(timeout: .seconds(15))
            #expect(result?.status == 0, "\(String(describing: result))")
            #expect(Self.events(in: process.outputPath) == [
                "event didFinishLaunching", "event configurationForConnecting", "event willConnectTo role=UIWindowSceneSessionRoleApplication",
                "event sceneWillEnterForeground", "event sceneDidBecomeActive", "event sceneWillResignActive",
                "event sceneDidEnterBackground state=background", "event submitted",
            ], "\(process.standardError)")
            // The scene's notifications, with the scene as the object, each right after its
            // delegate heard the change and before the next change (the connection's two
            // after the launch's calls, which are made before anything is posted), and the
            // application's state as its observer read it: what iOS shows then (inactive
            // while the launch connects the scene, though the app may be active by the time
            // those two are delivered).
            let stream = ((try? String(contentsOfFile: process.outputPath, encoding: .utf8)) ?? "").split(separator: "\n")
                .filter { $0.hasPrefix("scene-notification ") || $0.hasPrefix("event scene") }
                .map { $0.replacingOccurrences(of: "scene-notification UIScene", with: "notified ").replacingOccurrences(of: "Notification true", with: "") }
            #expect(stream == [
                "event sceneWillEnterForeground", "notified WillConnect inactive", "notified WillEnterForeground inactive",
                "event sceneDidBecomeActive", "notified DidActivate active", "event sceneWillResignActive", "notified WillDeactivate active",
                "event sceneDidEnterBackground state=background", "notified DidEnterBackground background",
            ], "\(stream)")
            #expect(try await harness.pendingIdentifiers(Self.sceneApp) == [Self.sceneRefresh], "submitted to the daemon")

            // Launched by bgtaskd in the background for the refresh: no scene connects.
            #expect(try await harness.bgtask("run", Self.sceneApp, Self.sceneRefresh).status == 0)
            let logged = try await harness.waitForLoggedRun(Self.sceneApp, Self.sceneRefresh)
            #expect(logged?["outcome"] as? String == "success", "\(String(describing: logged))")
            let log = harness.stateDirectory + "/logs/app-\(Self.sceneApp).log"
            let launched = Self.events(in: log)
            #expect(launched.contains("event handleAppRefresh scenes=0"), "\(launched)")
            #expect(!launched.contains { $0.hasPrefix("event willConnectTo") || $0.hasPrefix("event configurationForConnecting") }, "\(launched)")
        }

        @Test("embedded: didFinishLaunching (inactive, no options), didBecomeActive; SIGTERM: didEnterBackground, the refresh submitted, exit 0")
        func embedded() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let executable = try Product.locate("ios-appdelegate-app")
            _ = try harness.writeManifest(app: Self.app, executable: executable, arguments: [], identifiers: [Self.refresh], modes: ["fetch"])
            let events = try await Self.openAndLeave(harness, executable: executable, name: "embedded")
            #expect(events == [
                "event didFinishLaunching state=inactive options=none", "event applicationDidBecomeActive",
                "event applicationDidEnterBackground", "event submitted",
            ])
            let store = try SchedulerStore.openForReading(at: URL(fileURLWithPath: harness.stateHome + "/bgtask/\(Self.app)/scheduler.sqlite"))
            defer { store.close() }
            #expect(try store.pendingRequests().map(\.identifier) == [Self.refresh])
            // The user's answer to the notification request, kept for later launches.
            let answer = try String(contentsOfFile: harness.stateHome + "/bgtask/\(Self.app)/notifications.json", encoding: .utf8)
            #expect(answer.contains("\"status\":2"), "authorized: \(answer)")
        }

        @Test("a SIGTERM while the delegate's didFinishLaunching still runs ends the app in order, status 0: UIApplicationMain handles the signals from the launch on (they were installed only after the delegate's launch methods)")
        func aSigtermDuringTheDelegatesLaunch() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let executable = try Product.locate("ios-appdelegate-app")
            _ = try harness.writeManifest(app: Self.app, executable: executable, arguments: [], identifiers: [Self.refresh], modes: ["fetch"])
            let events = try await Self.sigtermDuringASlowLaunch(harness, executable: executable)
            // The launch finished in the background, where the signal put it: never active.
            #expect(!events.contains("event applicationDidBecomeActive"), "\(events)")
        }

        @Test("linked to bgtaskd, no thread of the app but its main one can take SIGTERM during its launch (the connection's reader thread blocks it), so a SIGTERM before the signal sources are registered is never fatal")
        func noOtherThreadTakesSigtermUnderTheDaemon() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let executable = try await Self.installedUnderTheDaemon(harness)
            _ = try await Self.sigtermDuringASlowLaunch(harness, executable: executable)
        }

        @Test("under bgtaskd: the user's process submits to the daemon; bgtask run launches the delegate in the background, its handler runs on the main actor and reschedules")
        func underTheDaemon() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let executable = try await Self.installedUnderTheDaemon(harness)
            let events = try await Self.openAndLeave(harness, executable: executable, name: "user")
            #expect(events.suffix(2) == ["event applicationDidEnterBackground", "event submitted"], "\(events)")
            #expect(try await harness.pendingIdentifiers(Self.app) == [Self.refresh])

            let run = try await harness.bgtask("run", Self.app, Self.refresh)
            #expect(run.status == 0, "\(run)")
            let logged = try await harness.waitForLoggedRun(Self.app, Self.refresh)
            #expect(logged?["outcome"] as? String == "success", "\(String(describing: logged))")
            let log = harness.stateDirectory + "/logs/app-\(Self.app).log"
            #expect(await harness.poll(timeout: .seconds(5)) { Self.events(in: log).contains("event refreshed true") }, "\(Self.events(in: log))")
            let launched = Self.events(in: log)
            #expect(launched.first == "event didFinishLaunching state=background options=none", "a background launch, as iOS reports it: \(launched)")
            #expect(launched.contains("event handleAppRefresh state=background main=true"), "\(launched)")
            #expect(!launched.contains("event applicationDidBecomeActive"), "nobody opened it: \(launched)")
            // The handler's notification (the app asks at every launch, as on iOS; the kept answer
            // holds: aRefusalIsKeptForBackgroundLaunches), shown
            // as a line (the app is in the background) before the task completed.
            #expect(launched.contains("event notified ok"), "\(launched)")
            let logText = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            #expect(logText.contains("bgtask notification [\(Self.app)] \"feed-updated\": Feed updated — New stories are waiting (sound, badge 1)"), "\(logText)")
            // The handler rescheduled first thing, through the daemon.
            #expect(await harness.poll(timeout: .seconds(5)) { (try? await harness.pendingIdentifiers(Self.app)) == [Self.refresh] })
        }

        @Test("a user who refused notifications: bgtaskd's background launch finds the answer kept by the user's launch (iOS asks once), and the handler's post is refused")
        func aRefusalIsKeptForBackgroundLaunches() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let executable = try await Self.installedUnderTheDaemon(harness)
            // The user's launch answers "denied"; bgtaskd's environment says nothing.
            _ = try await Self.openAndLeave(harness, executable: executable, name: "user", environment: ["BGTASK_NOTIFICATIONS": "denied"])
            let run = try await harness.bgtask("run", Self.app, Self.refresh)
            #expect(run.status == 0, "\(run)")
            let log = harness.stateDirectory + "/logs/app-\(Self.app).log"
            #expect(await harness.poll(timeout: .seconds(5)) { Self.events(in: log).contains { $0.hasPrefix("event notified") } }, "\(Self.events(in: log))")
            let notified = Self.events(in: log).first { $0.hasPrefix("event notified") } ?? ""
            #expect(notified.contains("notifications are not allowed for this application: the user did not allow them"), "\(notified)")
            let logText = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            #expect(!logText.contains("bgtask notification ["), "\(logText)")
        }
    }
}
