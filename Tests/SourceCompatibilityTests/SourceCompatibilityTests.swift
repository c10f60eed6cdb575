import BackgroundTasks
import BackgroundTasksTesting
import DeviceConditions
import IOSShapedApp
import UIKit
import Synchronization
import Testing
import SchedulerCore

let compatStart = Date(timeIntervalSince1970: 1_800_000_000)
let compatApp = AppID("com.example.compat")
let compatManifest = AppManifest(
    appID: compatApp,
    permittedIdentifiers: [ModernAppDelegate.refreshIdentifier, ModernAppDelegate.cleanupIdentifier],
    backgroundModes: ["fetch", "processing"]
)

/// A simulated device with the foundation's rules (no usage prediction holding refreshes).
func compatDevice(configuration: SchedulerConfiguration = .simulation()) throws -> SimulatedDevice {
    try SimulatedDevice(start: compatStart, configuration: configuration, policies: .foundation)
}

/// iOS-shaped code (Swift 5 mode: IOSShapedApp; Swift 6 mode: ModernAppDelegate) run for real.
@Suite struct SourceCompatibilityTests {
    // MARK: The main actor

    @Test func theMainQueueIsDrainedUnderSwiftTest() async {
        // The premise of the main-actor tests: the test runner's main thread drains the main queue.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.main.async { continuation.resume() }
        }
    }

    @Test @MainActor func swift6MainActorHandlersRunOnTheMainActor() async throws {
        let device = try compatDevice()
        // Made inside the app's launch, so UIApplication.shared is this app's (as in
        // didFinishLaunching), not the process's own.
        var made: ModernAppDelegate?
        let context = device.install(app: compatApp, manifest: compatManifest) {
            made = ModernAppDelegate(provider: UIApplication.shared)
            _ = made?.application(UIApplication.shared)
        }
        let delegate = try #require(made)
        context.withCurrent { delegate.scheduleAppRefresh() }
        await device.run(for: 15 * 60 + 1)
        #expect(delegate.events.contains("refresh main=true"))
        #expect(!delegate.events.contains("refresh main=false"))
        // The handler never completes: its 30 s run expires, and the expiration handler
        // (set in the main-actor method) runs on the main actor.
        await device.run(for: 30)
        #expect(delegate.events == ["didEnterBackground", "refresh main=true", "expired main=true"])
        #expect(device.runs(of: ModernAppDelegate.refreshIdentifier).map(\.outcome) == [.expired])
    }

    @Test @MainActor func swift5MainActorHandlersRunOnTheMainActor() async throws {
        let device = try compatDevice()
        var made: LegacyAppDelegate?
        let context = device.install(app: compatApp, manifest: compatManifest) {
            made = LegacyAppDelegate(refreshIdentifier: ModernAppDelegate.refreshIdentifier, backgroundTasks: UIApplication.shared)
            _ = made?.application(UIApplication.shared)
        }
        let delegate = try #require(made)
        context.withCurrent { delegate.scheduleAppRefresh(after: 60) }
        await device.run(for: 61)
        // The didEnterBackground observer (queue: .main) ran on the main actor too.
        #expect(delegate.events == ["didEnterBackground", "refresh main=true"])
        try context.withCurrent { try BGTaskScheduler.shared.simulateExpiration(forTaskWithIdentifier: ModernAppDelegate.refreshIdentifier) }
        await device.run(for: 1)
        #expect(delegate.events == ["didEnterBackground", "refresh main=true", "expired main=true"])
        #expect(device.runs(of: ModernAppDelegate.refreshIdentifier).map(\.outcome) == [.expired])
    }

    @Test @MainActor func assertionExpirationHandlersRunOnTheMainActor() async throws {
        let device = try compatDevice()
        var made: (ModernAppDelegate, LegacyAppDelegate)?
        let context = device.install(app: compatApp, manifest: compatManifest) {
            made = (ModernAppDelegate(provider: UIApplication.shared), LegacyAppDelegate(refreshIdentifier: ModernAppDelegate.refreshIdentifier, backgroundTasks: UIApplication.shared))
            _ = made?.0.application(UIApplication.shared)
        }
        let (delegate, legacy) = try #require(made)
        context.withCurrent {
            context.application.enterForeground()
            context.application.enterBackground()
            delegate.applicationDidEnterBackground(UIApplication.shared)
            legacy.beginSavingDraft()
        }
        #expect(context.application.outstandingBackgroundTasks.count == 3)
        await device.run(for: 60)
        #expect(delegate.events.contains("assertion expired main=true"))
        #expect(delegate.events.contains("other expired main=true"))
        #expect(legacy.events == ["assertion expired main=true"])
        #expect(context.application.outstandingBackgroundTasks.isEmpty, "every handler ended its assertion on the main actor")
    }

    @Test func nonisolatedHandlersStillRunOnTheirQueue() async throws {
        let device = try compatDevice()
        let queue = DispatchQueue(label: "compat.handlers")
        let marker = DispatchSpecificKey<Int>()
        queue.setSpecific(key: marker, value: 7)
        let seen = Mutex<[Int?]>([])
        let context = device.install(app: compatApp, manifest: compatManifest) {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: ModernAppDelegate.refreshIdentifier, using: queue) { task in
                seen.withLock { $0.append(DispatchQueue.getSpecific(key: marker)) }
                task.expirationHandler = {
                    // Not the handler's queue: expiration runs even while that queue is busy.
                    seen.withLock { $0.append(DispatchQueue.getSpecific(key: marker) ?? -1) }
                    task.setTaskCompleted(success: false)
                }
            }
        }
        let request = BGAppRefreshTaskRequest(identifier: ModernAppDelegate.refreshIdentifier)
        try context.withCurrent { try BGTaskScheduler.shared.submit(request) }
        await device.run(for: 1)
        try context.withCurrent { try BGTaskScheduler.shared.simulateExpiration(forTaskWithIdentifier: ModernAppDelegate.refreshIdentifier) }
        await device.run(for: 1)
        #expect(seen.withLock { $0 } == [7, -1])
    }

    // MARK: Errors

    @Test func schedulerErrorsBridgeToNSErrorAsOnIOS() {
        let error = BGTaskScheduler.Error(.notPermitted, message: "'x' is not in BGTaskSchedulerPermittedIdentifiers")
        let nsError = error as NSError
        #expect(nsError.domain == "BGTaskSchedulerErrorDomain")
        #expect(nsError.domain == BGTaskScheduler.errorDomain)
        #expect(nsError.domain == BGTaskScheduler.Error.errorDomain)
        #expect(nsError.code == 3)
        #expect(error.errorCode == BGTaskScheduler.Error.Code.notPermitted.rawValue)
        #expect(nsError.userInfo[NSLocalizedDescriptionKey] as? String == error.message)
        #expect(nsError.localizedDescription == error.message)
        #expect(LegacyAppDelegate.describe(error) == "not permitted (BGTaskSchedulerErrorDomain 3)")

        let made = BGTaskScheduler.Error(.tooManyPendingTaskRequests, userInfo: [NSLocalizedDescriptionKey: "full", "extra": 1])
        #expect(made.code == .tooManyPendingTaskRequests)
        #expect(made.message == "full")
        #expect(made.userInfo["extra"] as? Int == 1)
        #expect((made as NSError).code == 2)
        #expect(BGTaskScheduler.Error(.unavailable).userInfo.isEmpty)

        func matches(_ error: any Error) -> String {
            do { throw error } catch BGTaskScheduler.Error.notPermitted { return "notPermitted" } catch { return "other" }
        }
        #expect(matches(error) == "notPermitted")
        #expect(matches(made) == "other")
    }

    @Test @MainActor func aRefusedSubmissionReachesTheAppAsNSError() throws {
        let device = try compatDevice()
        let context = device.install(app: compatApp, manifest: compatManifest) {}
        let delegate = LegacyAppDelegate(refreshIdentifier: "com.example.compat.unlisted", backgroundTasks: context.application)
        context.withCurrent { delegate.scheduleAppRefresh(after: 60) }
        #expect(delegate.events == ["submit failed: not permitted (BGTaskSchedulerErrorDomain 3)"])
    }

    // MARK: Notifications

    @Test func lifecycleNotificationsArePostedWithTheApplication() async throws {
        let device = try compatDevice()
        let context = device.install(app: compatApp, manifest: compatManifest, launchedByUser: false) {}
        await device.settle()  // the launch's own notifications are delivered before observing
        let application = context.application
        let names = Mutex<[String]>([])
        let tokens = [
            UIApplication.didFinishLaunchingNotification, UIApplication.didBecomeActiveNotification,
            UIApplication.willResignActiveNotification, UIApplication.didEnterBackgroundNotification,
            UIApplication.willEnterForegroundNotification, UIApplication.willTerminateNotification,
            UIApplication.backgroundRefreshStatusDidChangeNotification,
        ].map { name in
            NotificationCenter.default.addObserver(forName: name, object: application, queue: nil) { note in
                // With the state the observer reads: what iOS shows while it is delivered,
                // not the state reached since (the changes below are all made before the
                // first is delivered).
                names.withLock { $0.append("\(note.name.rawValue) \(stateName(application.applicationState))") }
            }
        }
        defer { tokens.forEach(NotificationCenter.default.removeObserver) }
        context.withCurrent {
            application.enterForeground()
            application.enterBackground()
            application.setBackgroundRefreshEnabled(false)
            application.setBackgroundRefreshEnabled(false)
        }
        await device.settle()
        #expect(names.withLock { $0 } == [
            "UIApplicationWillEnterForegroundNotification background", "UIApplicationDidBecomeActiveNotification active",
            "UIApplicationWillResignActiveNotification active", "UIApplicationDidEnterBackgroundNotification background",
            "UIApplicationBackgroundRefreshStatusDidChangeNotification background",
        ])
        #expect(application.applicationState == .background, "the state reached, once nothing is being delivered")
        // An assertion not ended: the app is terminated while running, and told so.
        names.withLock { $0.removeAll() }
        _ = context.withCurrent { application.beginBackgroundTask(withName: "leak") }
        await device.run(for: 120)
        #expect(names.withLock { $0 } == ["UIApplicationWillTerminateNotification background"])
    }

    @Test func threadsTurningTheSwitchAtOnceGetOneNotificationPerChange() async throws {
        // Found from outside: 400 toggles from many threads posted 208 notifications, as each
        // read the status before and after on its own.
        let device = try compatDevice()
        let context = device.install(app: compatApp, manifest: compatManifest, launchedByUser: false) {}
        await device.settle()
        let application = context.application
        let count = Mutex(0)
        let token = NotificationCenter.default.addObserver(forName: UIApplication.backgroundRefreshStatusDidChangeNotification, object: application, queue: nil) { _ in
            count.withLock { $0 += 1 }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        for round in 0..<200 {
            let enabled = round % 2 == 1  // on at first: off, on, off...
            DispatchQueue.concurrentPerform(iterations: 16) { _ in
                context.withCurrent { application.setBackgroundRefreshEnabled(enabled) }
            }
        }
        await device.settle()
        #expect(count.withLock { $0 } == 200, "one per change: 16 calls at once, 200 rounds")
        #expect(context.withCurrent { application.backgroundRefreshStatus } == .available)
    }

    @Test func launchNotificationsComeInIOSOrder() async throws {
        let device = try compatDevice()
        let names = Mutex<[String]>([])
        let application = Mutex<ObjectIdentifier?>(nil)
        let observer = NotificationCenter.default.addObserver(forName: nil, object: nil, queue: nil) { note in
            // Every app of every test posts on the default center: keep this app's.
            guard note.name.rawValue.hasPrefix("UIApplication"), let object = note.object as? BGApplication,
                  application.withLock({ $0 }) == ObjectIdentifier(object) else { return }
            names.withLock { $0.append("\(note.name.rawValue) \(stateName(object.applicationState))") }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        device.install(app: compatApp, manifest: compatManifest) {
            application.withLock { $0 = ObjectIdentifier(UIApplication.shared) }
        }
        await device.settle()
        // The user's launch: inactive while it finishes launching, as iOS shows it.
        #expect(names.withLock { $0 } == [
            "UIApplicationDidFinishLaunchingNotification inactive", "UIApplicationDidBecomeActiveNotification active",
            "UIApplicationWillResignActiveNotification active", "UIApplicationDidEnterBackgroundNotification background",
        ])
    }

    // MARK: An app delegate

    @Test func aResponderAppDelegateHearsTheLifecycleAndTheFetchesAsOnIOS() async throws {
        let device = try compatDevice()
        // Launched as UIApplicationMain launches (it runs the main run loop for ever, so a
        // test sets the delegate and calls its launch method itself), on the main actor.
        let (delegate, context) = await MainActor.run {
            let delegate = ResponderAppDelegate()
            let context = device.install(app: compatApp, manifest: compatManifest, launchedByUser: true) {
                MainActor.assumeIsolated {
                    let application = UIApplication.shared
                    application.delegate = delegate
                    _ = delegate.application(application, didFinishLaunchingWithOptions: nil)
                }
            }
            return (delegate, context)
        }
        await device.settle()
        #expect(await MainActor.run { UIApplication.LaunchOptionsKey.remoteNotification.rawValue } == "UIApplicationLaunchOptionsRemoteNotificationKey")
        #expect(await MainActor.run { context.application.delegate === delegate })
        // Installed by the user: launched, active, then sent to the background.
        #expect(await MainActor.run { delegate.events } == ["didFinishLaunching plain", "didBecomeActive", "willResignActive", "didEnterBackground"])
        context.withCurrent { context.application.enterForeground() }
        await device.settle()
        #expect(await MainActor.run { delegate.events.suffix(2) } == ["willEnterForeground", "didBecomeActive"])
        // Its handler and its fetch method are the system's to call.
        try context.withCurrent {
            let request = BGAppRefreshTaskRequest(identifier: ResponderAppDelegate.refreshIdentifier)
            request.earliestBeginDate = Date(timeIntervalSinceNow: 60)
            try BGTaskScheduler.shared.submit(request)
        }
        await device.run(for: 120)
        // The legacy fetch is off: the manifest lists BGTaskSchedulerPermittedIdentifiers,
        // which turns it off on iOS 13 and later (an app that kept the call beside its
        // refresh must not lose the refresh's slot to it).
        context.withCurrent { UIApplication.shared.setMinimumBackgroundFetchInterval(UIApplication.backgroundFetchIntervalMinimum) }
        try context.withCurrent {
            try BGTaskScheduler.shared.submit(BGAppRefreshTaskRequest(identifier: ResponderAppDelegate.refreshIdentifier))
        }
        await device.run(for: 3600)
        let events = await MainActor.run { delegate.events }
        #expect(events.filter { $0 == "refresh" }.count == 2, "\(events)")
        #expect(!events.contains("performFetch"), "\(events)")
        #expect(device.log.messages.contains { $0.text.contains("setMinimumBackgroundFetchInterval(0.0) does nothing: the app's manifest lists BGTaskSchedulerPermittedIdentifiers") })
    }

    @Test @MainActor func theAsyncRemoteNotificationDefaultTakesTheFirstOfTwoCompletions() async throws {
        let device = try compatDevice()
        let context = device.install(app: compatApp, manifest: compatManifest, launchedByUser: true) {}
        let delegate = TwiceCompletingDelegate()
        let payload: [AnyHashable: Any] = ["aps": ["content-available": 1]]
        let result = await delegate.application(context.application, didReceiveRemoteNotification: payload)
        #expect(result == .newData, "the first completion counts; the second neither traps nor changes it")
        #expect(payload.count == 1, "the caller keeps its dictionary (Swift 6 checks it is not sent away)")
    }

    @Test @MainActor func aDelegateIsMadeFromItsClassNameAsUIApplicationMainDoes() throws {
        let made = try makeApplicationDelegate(named: NSStringFromClass(ResponderAppDelegate.self)).get()
        #expect(made is ResponderAppDelegate)
        #expect(throws: ApplicationDelegateError.self) { try makeApplicationDelegate(named: nil).get() }
        let missing = makeApplicationDelegate(named: "SourceCompatibilityTests.NoSuchDelegate")
        #expect(throws: ApplicationDelegateError(message: "no class named 'SourceCompatibilityTests.NoSuchDelegate' was found (NSStringFromClass(AppDelegate.self) gives the name with its module)")) { try missing.get() }
        let notAResponder = makeApplicationDelegate(named: NSStringFromClass(NSObject.self))
        #expect((try? notAResponder.get()) == nil)
        let plain = makeApplicationDelegate(named: NSStringFromClass(UIWindow.self))
        #expect((try? plain.get()) == nil, "a responder that is no delegate")
    }

    @Test func theCEntryOfUIApplicationMainNamesTheDelegatesClassAsNSStringFromClass() {
        // What `@UIApplicationMain`'s generated main passes: the class's metadata pointer.
        let metadata = unsafeBitCast(ResponderAppDelegate.self as AnyClass, to: UnsafeRawPointer.self)
        let name = _uiApplicationMainClassName(metadata).map { Unmanaged<NSString>.fromOpaque($0).takeRetainedValue() }
        #expect(name.map(String.init) == NSStringFromClass(ResponderAppDelegate.self))
        #expect(name.map(String.init) == "SourceCompatibilityTests.ResponderAppDelegate")
    }

    @Test @MainActor func sceneTypesHaveApplesShapes() {
        let configuration = UISceneConfiguration(name: "Default Configuration", sessionRole: .windowApplication)
        configuration.delegateClass = ResponderSceneDelegate.self
        #expect(configuration.name == "Default Configuration" && configuration.role.rawValue == "UIWindowSceneSessionRoleApplication")
        let session = UISceneSession(role: .windowApplication, configuration: configuration)
        let scene = UIWindowScene(session: session, connectionOptions: UIScene.ConnectionOptions())
        let delegate = ResponderSceneDelegate()
        scene.delegate = delegate
        delegate.scene(scene, willConnectTo: session, options: UIScene.ConnectionOptions())
        #expect(delegate.events == ["willConnectTo 0 true"])
        #expect(scene.activationState == .unattached && UIScene.ActivationState.background.rawValue == 2)
    }

    // MARK: Value types

    @Test func statesSwitchWithDefaultAsImportedEnumsDo() async throws {
        let device = try compatDevice()
        let context = device.install(app: compatApp, manifest: compatManifest) {}
        let (name, status) = await MainActor.run {
            let delegate = LegacyAppDelegate(refreshIdentifier: "com.example.compat.refresh", backgroundTasks: context.application)
            return (delegate.describeState(context.application), delegate.describeRefreshStatus(context.application))
        }
        #expect(name == "background")
        #expect(status == "available")
        #expect(await MainActor.run { ModernAppDelegate(provider: context.application).fetchResultName(.noData) } == "noData")
        #expect(UIApplication.State(rawValue: 2) == .background)
        #expect(await MainActor.run {
            LegacyAppDelegate(refreshIdentifier: "com.example.compat.refresh", backgroundTasks: context.application).describeFetchResult(.failed)
        } == "failed")
        // A value iOS may add later reaches `default:` instead of trapping, as with an imported enum.
        let future = try #require(UIApplication.State(rawValue: 7))
        #expect(context.application.applicationState != future)
    }

    @Test func requestsCopyAsTheirOwnClass() {
        let refresh = BGAppRefreshTaskRequest(identifier: "com.example.compat.refresh")
        refresh.earliestBeginDate = compatStart
        let refreshCopy = refresh.copy() as! BGAppRefreshTaskRequest
        refresh.earliestBeginDate = nil
        #expect(refreshCopy.earliestBeginDate == compatStart)
        #expect(refreshCopy !== refresh)

        let processing = BGProcessingTaskRequest(identifier: "com.example.compat.cleanup")
        processing.requiresExternalPower = true
        processing.requiresNetworkConnectivity = true
        let processingCopy = processing.copy(with: nil) as! BGProcessingTaskRequest
        #expect(type(of: processingCopy) == BGProcessingTaskRequest.self)
        #expect(processingCopy.requiresExternalPower && processingCopy.requiresNetworkConnectivity)

        let health = BGHealthResearchTaskRequest(identifier: "com.example.compat.health")
        health.protectionTypeOfRequiredData = FileProtectionType.complete.rawValue as NSString
        #expect((health.copy() as! BGHealthResearchTaskRequest).protectionTypeOfRequiredData == FileProtectionType.complete.rawValue as NSString)
        // Apple's SDK types it NSString: a string literal too (a study app's spelling).
        health.protectionTypeOfRequiredData = "NSFileProtectionCompleteUnlessOpen"
        #expect(String(describing: health.protectionTypeOfRequiredData) == FileProtectionType.completeUnlessOpen.rawValue)

        let continued = BGContinuedProcessingTaskRequest(identifier: "com.example.compat.export", title: "Export", subtitle: "Album")
        continued.strategy = .fail
        continued.requiredResources = .gpu
        let continuedCopy = continued.copy() as! BGContinuedProcessingTaskRequest
        #expect(continuedCopy.title == "Export" && continuedCopy.subtitle == "Album")
        #expect(continuedCopy.strategy == .fail && continuedCopy.requiredResources == .gpu)
    }

    @Test func continuedProcessingTasksReportProgress() async throws {
        let device = try compatDevice()
        let identifier = "com.example.compat.export"
        let reported = Mutex<Int64?>(nil)
        let manifest = AppManifest(appID: compatApp, permittedIdentifiers: [identifier], backgroundModes: [])
        let context = device.install(app: compatApp, manifest: manifest) {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { task in
                let reporting = task as! any ProgressReporting
                reporting.progress.completedUnitCount = 100
                reported.withLock { $0 = reporting.progress.totalUnitCount }
                task.setTaskCompleted(success: true)
            }
        }
        try context.withCurrent {
            try BGTaskScheduler.shared.submit(BGContinuedProcessingTaskRequest(identifier: identifier, title: "Export", subtitle: "Album"))
        }
        await device.run(for: 1)
        #expect(reported.withLock { $0 } == 100)
    }
}

/// An app delegate that calls its remote-notification completion handler twice, as a
/// careless app may: the `async` default must not resume its continuation twice.
final class TwiceCompletingDelegate: UIResponder, UIApplicationDelegate {
    func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any], fetchCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void) {
        completionHandler(.newData)
        completionHandler(.failed)
    }
}

/// `UIApplication.State` as a word, for expectations that read as iOS's documentation does.
private func stateName(_ state: UIApplication.State) -> String {
    switch state {
    case .active: "active"
    case .inactive: "inactive"
    case .background: "background"
    @unknown default: "unknown"
    }
}

/// An app delegate that notes `applicationState` in each lifecycle method.
@MainActor private final class StateRecordingDelegate: NSObject, UIApplicationDelegate {
    var seen: [String] = []
    func applicationWillResignActive(_ application: UIApplication) { seen.append("willResignActive \(stateName(application.applicationState))") }
    func applicationDidEnterBackground(_ application: UIApplication) { seen.append("didEnterBackground \(stateName(application.applicationState))") }
    func applicationWillEnterForeground(_ application: UIApplication) { seen.append("willEnterForeground \(stateName(application.applicationState))") }
    func applicationDidBecomeActive(_ application: UIApplication) { seen.append("didBecomeActive \(stateName(application.applicationState))") }
}

@Suite struct LifecycleStateTests {
    @Test func anAppDelegateReadsTheStateIOSShowsInEachMethod() async throws {
        // An outside probe: a delegate's applicationWillResignActive read .background, its
        // applicationWillEnterForeground .active (the state reached, not the one iOS shows).
        let device = try compatDevice()
        let (delegate, context) = await MainActor.run {
            let delegate = StateRecordingDelegate()
            let context = device.install(app: compatApp, manifest: compatManifest, launchedByUser: true) {
                MainActor.assumeIsolated { UIApplication.shared.delegate = delegate }
            }
            return (delegate, context)
        }
        await device.settle()
        context.withCurrent {
            context.application.enterForeground()
            context.application.enterBackground()
        }
        await device.settle()
        #expect(await MainActor.run { delegate.seen } == [
            "didBecomeActive active", "willResignActive active", "didEnterBackground background",
            "willEnterForeground background", "didBecomeActive active", "willResignActive active", "didEnterBackground background",
        ])
    }
}
