import BackgroundTasks
import BackgroundTasksTesting
import DeviceConditions
import IOSShapedApp
import Synchronization
import Testing
import SchedulerCore

/// The pre-iOS 13 background fetch API, mapped onto app refresh (docs/porting.md).
@Suite struct LegacyFetchTests {
    let fetchApp = AppID("com.example.fetcher")
    var fetchID: String { fetchApp.rawValue + ".background-fetch" }
    /// Old apps list the `fetch` mode and no BGTaskScheduler identifiers.
    var fetchManifest: AppManifest { AppManifest(appID: fetchApp, permittedIdentifiers: [], backgroundModes: ["fetch"]) }

    @Test func anIntervalLeadsToFetchesUntilNever() async throws {
        let device = try compatDevice()
        let fetched = Mutex<[Date]>([])
        let context = device.install(app: fetchApp, manifest: fetchManifest) {
            UIApplication.shared.setBackgroundFetchHandler { completionHandler in
                fetched.withLock { $0.append(BGAppContext.current!.driver.clock.now()) }
                completionHandler(.newData)
            }
            UIApplication.shared.setMinimumBackgroundFetchInterval(3600)
        }
        #expect(context.application.backgroundFetchTaskIdentifier == fetchID)
        #expect(context.application.minimumBackgroundFetchInterval == 3600)
        await device.run(for: 3599)
        #expect(fetched.withLock { $0 }.isEmpty)
        await device.run(for: 2)
        #expect(fetched.withLock { $0 } == [compatStart.addingTimeInterval(3600)])
        // Kept: the next fetch is due an interval after this one began.
        await device.run(for: 3600)
        #expect(fetched.withLock { $0 }.count == 2)
        #expect(device.runs(of: fetchID).map(\.outcome) == [.success, .success])

        context.withCurrent { UIApplication.shared.setMinimumBackgroundFetchInterval(UIApplication.backgroundFetchIntervalNever) }
        #expect(device.driver.pendingRequests(of: fetchApp).isEmpty)
        #expect(context.application.minimumBackgroundFetchInterval == nil)
        await device.run(for: 4 * 3600)
        #expect(fetched.withLock { $0 }.count == 2)
    }

    @Test func listingBGTaskSchedulerIdentifiersTurnsTheFetchOffAndLeavesTheRefreshSlot() async throws {
        // Apple: adding BGTaskSchedulerPermittedIdentifiers to the Info.plist disables
        // performFetchWithCompletionHandler and setMinimumBackgroundFetchInterval in iOS 13
        // and later. An outside probe: an app that kept the call in its launch beside its
        // new refresh had that refresh refused (tooManyPendingTaskRequests).
        let device = try compatDevice()
        let refresh = fetchApp.rawValue + ".refresh"
        let fetches = Mutex(0)
        let refreshes = Mutex(0)
        let manifest = AppManifest(appID: fetchApp, permittedIdentifiers: [refresh], backgroundModes: ["fetch"])
        let context = device.install(app: fetchApp, manifest: manifest) {
            UIApplication.shared.setBackgroundFetchHandler { completionHandler in
                fetches.withLock { $0 += 1 }
                completionHandler(.newData)
            }
            UIApplication.shared.setMinimumBackgroundFetchInterval(UIApplication.backgroundFetchIntervalMinimum)
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refresh, using: nil) { task in
                refreshes.withLock { $0 += 1 }
                task.setTaskCompleted(success: true)
            }
        }
        // The submit is not refused: no fetch request holds the app's one refresh slot.
        try context.withCurrent { try BGTaskScheduler.shared.submit(BGAppRefreshTaskRequest(identifier: refresh)) }
        #expect(context.application.minimumBackgroundFetchInterval == nil)
        #expect(!device.driver.pendingRequests(of: fetchApp).contains { $0.identifier == fetchID })
        await device.run(for: 3600)
        #expect(refreshes.withLock { $0 } == 1)
        #expect(fetches.withLock { $0 } == 0)
        #expect(device.runs(of: fetchID).isEmpty)
        #expect(device.log.messages.contains {
            $0.level == .warning && $0.text.contains("setMinimumBackgroundFetchInterval(0.0) does nothing: the app's manifest lists BGTaskSchedulerPermittedIdentifiers")
        })
    }

    @Test func aFailedFetchIsAFailedRun() async throws {
        let device = try compatDevice()
        let results: [UIBackgroundFetchResult] = [.noData, .failed]
        let index = Mutex(0)
        _ = device.install(app: fetchApp, manifest: fetchManifest) {
            UIApplication.shared.setBackgroundFetchHandler { completionHandler in
                let result = index.withLock { i in defer { i += 1 }; return results[min(i, results.count - 1)] }
                completionHandler(result)
            }
            UIApplication.shared.setMinimumBackgroundFetchInterval(UIApplication.backgroundFetchIntervalMinimum)
        }
        await device.run(for: 1)
        #expect(device.runs(of: fetchID).map(\.outcome) == [.success], "the minimum interval: due at once")
        await device.run(for: UIApplication.backgroundFetchRepeatFloor - 2)
        #expect(device.runs(of: fetchID).count == 1, "never back to back: the next waits the repeat floor")
        await device.run(for: 2)
        #expect(device.runs(of: fetchID).map(\.outcome) == [.success, .failure])
    }

    @Test @MainActor func aMainActorDelegateFetchesOnTheMainActor() async throws {
        let device = try compatDevice()
        var made: LegacyAppDelegate?
        _ = device.install(app: fetchApp, manifest: fetchManifest) {
            made = LegacyAppDelegate(refreshIdentifier: "com.example.fetcher.unused", backgroundTasks: UIApplication.shared)
            made?.enableLegacyFetch(UIApplication.shared, every: 600)
        }
        let delegate = try #require(made)
        await device.run(for: 601)
        #expect(delegate.events.contains("fetch main=true"))
        #expect(device.runs(of: fetchID).map(\.outcome) == [.success])
    }

    @Test @MainActor func aPreConcurrencyDelegateEndsItsUploadFromAPlainFunction() throws {
        // Tests/IOSShapedApp/UploadingAppDelegate.swift compiling (Swift 5 mode, warnings as
        // errors) is most of the test: UIResponder and UIApplicationDelegate are
        // `@preconcurrency @MainActor`, as UIKit's are.
        let device = try compatDevice()
        var outstanding: [UIBackgroundTaskIdentifier] = [.invalid]
        var made: UploadingAppDelegate?
        _ = device.install(app: fetchApp, manifest: fetchManifest) {
            let delegate = UploadingAppDelegate()
            delegate.uploadBackgroundTaskId = UIApplication.shared.beginBackgroundTask(withName: "upload") {}
            finishUpload(of: delegate)
            outstanding = UIApplication.shared.outstandingBackgroundTasks
            made = delegate
        }
        let delegate = try #require(made)
        #expect(delegate.uploads == 1 && delegate.uploadBackgroundTaskId == nil)
        #expect(outstanding.isEmpty, "the upload's background task was ended")
    }

    @Test func withoutTheFetchModeOrWithABadIntervalTheAppIsTold() async throws {
        let device = try compatDevice()
        let context = device.install(app: fetchApp, manifest: AppManifest(appID: fetchApp, permittedIdentifiers: [], backgroundModes: ["processing"])) {
            UIApplication.shared.setMinimumBackgroundFetchInterval(60)
            UIApplication.shared.setMinimumBackgroundFetchInterval(.nan)
            UIApplication.shared.setMinimumBackgroundFetchInterval(-5)
        }
        let errors = device.log.messages.filter { $0.level == .error }.map(\.text)
        #expect(errors.contains { $0.contains("background fetch not scheduled") && $0.contains(fetchID) })
        #expect(errors.contains { $0.contains("setMinimumBackgroundFetchInterval(nan)") })
        #expect(errors.contains { $0.contains("setMinimumBackgroundFetchInterval(-5.0)") })
        #expect(device.driver.pendingRequests(of: fetchApp).isEmpty)
        #expect(context.application.minimumBackgroundFetchInterval == 60, "the setting is kept, as on iOS; the refused request is logged")
    }

    @Test func aFetchWithoutAHandlerFailsWithAnError() async throws {
        let device = try compatDevice()
        _ = device.install(app: fetchApp, manifest: fetchManifest) {
            UIApplication.shared.setMinimumBackgroundFetchInterval(60)
        }
        await device.run(for: 61)
        #expect(device.runs(of: fetchID).map(\.outcome) == [.failure])
        #expect(device.log.messages.contains { $0.text.contains("no fetch handler is set") })
    }
}

/// `BGTASK_MANUAL_LAUNCH=1` through the embedded API: submit, nothing runs, then
/// `simulateLaunch` runs it (the iOS debugging flow).
@Suite struct ManualLaunchEmbeddedTests {
    @Test func submitThenSimulateLaunchWorksUnderTheSwitch() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-manual-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let identifier = "com.example.manual.cleanup"
        let configuration = EmbeddedScheduler.defaultSchedulerConfiguration(environment: ["BGTASK_MANUAL_LAUNCH": "1"], machineIDFile: nil)
        #expect(configuration.launchesOnlyWhenSimulated)
        #expect(!EmbeddedScheduler.defaultSchedulerConfiguration(environment: [:], machineIDFile: nil).launchesOnlyWhenSimulated)
        for (value, on) in [("0", false), ("no", false), ("", false), ("yes", true), ("TRUE", true), ("maybe", false)] {
            // "maybe" is also reported on standard error, naming the value.
            #expect(EmbeddedScheduler.defaultSchedulerConfiguration(environment: ["BGTASK_MANUAL_LAUNCH": value], machineIDFile: nil).launchesOnlyWhenSimulated == on, "\(value)")
        }
        let context = EmbeddedScheduler.makeContext(.init(
            app: AppID("com.example.manual"),
            manifest: AppManifest(appID: AppID("com.example.manual"), permittedIdentifiers: [identifier], backgroundModes: ["processing"]),
            stateDirectory: scratch,
            scheduler: configuration,
            conditions: FixedConditions(.favorable),
            log: .collecting()
        ))
        let (ran, signal) = AsyncStream.makeStream(of: String.self)
        try context.withCurrent {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { task in
                task.setTaskCompleted(success: true)
                signal.yield(task.identifier)
            }
            UIApplication.shared.launch()
            UIApplication.shared.finishLaunching()
            try BGTaskScheduler.shared.submit(BGProcessingTaskRequest(identifier: identifier))
        }
        context.driver.runDueWork()
        let key = RequestKey(app: context.app, identifier: identifier)
        #expect(context.driver.pendingRequests(of: context.app).map(\.identifier) == [identifier], "held by the switch")
        #expect(context.driver.explain(key).summary.contains("manual launch switch"))

        var iterator = ran.makeAsyncIterator()
        // Off: what is ready runs by itself, as without the switch.
        context.driver.setLaunchesOnlyWhenSimulated(false)
        #expect(await iterator.next() == identifier)

        // On again: a new submission waits for simulateLaunch.
        context.driver.setLaunchesOnlyWhenSimulated(true)
        try context.withCurrent { try BGTaskScheduler.shared.submit(BGProcessingTaskRequest(identifier: identifier)) }
        #expect(context.driver.pendingRequests(of: context.app).map(\.identifier) == [identifier])
        try context.withCurrent { try BGTaskScheduler.shared.simulateLaunch(forTaskWithIdentifier: identifier) }
        #expect(await iterator.next() == identifier)
    }
}

/// The embedded scheduler finds the manifest where Bundle.main finds Info.plist on Linux
/// (Contents/, then Resources/, then beside the executable), so the two agree.
@Suite struct ManifestBesideTheExecutableTests {
    @Test func theSchedulerLooksWhereBundleMainLooksInItsOrder() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-bundle-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let executable = directory.appendingPathComponent("myapp")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("Resources"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("Contents"), withIntermediateDirectories: true)
        try Data().write(to: executable)
        func write(_ bundleID: String, to path: String) throws {
            let plist: [String: Any] = ["CFBundleIdentifier": bundleID, "BGTaskSchedulerPermittedIdentifiers": [], "UIBackgroundModes": []]
            try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0).write(to: directory.appendingPathComponent(path))
        }
        func loaded() throws -> String? {
            try EmbeddedScheduler.loadManifest(.init(), environment: [:], executable: executable).appID?.rawValue
        }
        try write("com.example.beside", to: "Info.plist")
        #expect(try loaded() == "com.example.beside")
        try write("com.example.resources", to: "Resources/Info.plist")
        #expect(try loaded() == "com.example.resources")
        try write("com.example.contents", to: "Contents/Info.plist")
        #expect(try loaded() == "com.example.contents")
    }
}
