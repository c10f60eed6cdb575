import BackgroundTasks
import BackgroundTasksTesting
import Synchronization
import Testing
import SchedulerCore

/// What PublicAppSnippets.swift compiles, run where its behaviour is the library's.
@Suite struct PublicAppSnippetTests {
    let app = AppID("com.example.app")

    func manifest(_ identifiers: [String], modes: Set<String> = ["fetch", "processing"]) -> AppManifest {
        AppManifest(appID: app, permittedIdentifiers: identifiers, backgroundModes: modes)
    }

    // MARK: Enums that are imported C enums on iOS

    @Test func errorCodesSwitchAsApplesImportedEnumDoes() {
        // Apple's four codes are the enum's cases; this project's invalidRequest reaches
        // `default:`/`@unknown default:`, as a code a later iOS adds would.
        #expect(codeName(.notPermitted) == "notPermitted")
        #expect(codeName(.immediateRunIneligible) == "ineligible")
        #expect(codeName(.invalidRequest) == "unknown")
        #expect(BGTaskScheduler.Error.Code.invalidRequest.rawValue == 100)
        #expect(BGTaskScheduler.Error.invalidRequest == .invalidRequest)
        #expect(BGTaskScheduler.Error.Code(rawValue: 3) == .notPermitted)
        #expect(BGTaskScheduler.Error.Code(rawValue: 42)?.rawValue == 42, "an unknown code is representable, as with an NS_ERROR_ENUM")
        let invalid = BGTaskScheduler.Error(.invalidRequest, message: "earliestBeginDate is NaN")
        #expect((invalid as NSError).code == 100)
        #expect(invalid.code == .invalidRequest)
        #expect(describeSubmitError(invalid) == "code 100")
        #expect(describeSubmitError(BGTaskScheduler.Error(.notPermitted)) == "notPermitted")
        #expect(describeSubmitError(NSError(domain: BGTaskSchedulerErrorDomain, code: 4)) == "ineligible")
        #expect(describeSubmitError(NSError(domain: NSCocoaErrorDomain, code: 4)) == "other")
        // Printed by the app's own description (PlatformSnippets.swift): the package adds
        // none, as Apple adds none, so an app's conformance is not "redundant".
        #expect("\(BGTaskScheduler.Error.Code.unavailable)" == "unavailable")
        #expect("\(invalid)" == "BGTaskScheduler.Error(invalidRequest): earliestBeginDate is NaN")
        #expect(makeSchedulerErrors().map(describeSubmitError) == ["unavailable", "tooMany", "notPermitted", "ineligible"])
    }

    @Test @MainActor func strategiesAndSceneStatesTakeDefaultAsOnIOS() {
        #expect(strategyName(.fail) == "fail")
        #expect(strategyName(.queue) == "queue")
        #expect(BGContinuedProcessingTaskRequest.SubmissionStrategy(rawValue: 1) == .queue)
        #expect(BGContinuedProcessingTaskRequest(identifier: "com.example.app.export.x", title: "t", subtitle: "s").strategy == .queue, "Apple's default")
        #expect("\(BGContinuedProcessingTaskRequest.SubmissionStrategy.fail)" == "fail")
        let session = UISceneSession(role: .windowApplication, configuration: UISceneConfiguration(name: nil, sessionRole: .windowApplication))
        let scene = UIWindowScene(session: session, connectionOptions: UIScene.ConnectionOptions())
        #expect(sceneStateName(scene) == "unattached")
        #expect(UIScene.ActivationState.unattached.rawValue == -1 && UIScene.ActivationState.background.rawValue == 2)
        #expect("\(scene.activationState)" == "unattached")
    }

    // MARK: Launch handlers as apps write them

    @Test func aLaunchHandlerMayCaptureANonSendableService() async throws {
        let device = try compatDevice()
        let identifier = "com.example.app.sync"
        let context = device.install(app: app, manifest: manifest([identifier])) {
            // Apple's launch handler is not @Sendable: a nonisolated registration captures
            // the app's non-Sendable service (PublicAppSnippets.swift, SyncCoordinator).
            SyncCoordinator().registerSync()
        }
        try context.withCurrent {
            try BGTaskScheduler.shared.submit(BGAppRefreshTaskRequest(identifier: identifier))
        }
        await device.run(for: 1)
        #expect(device.runs(of: identifier).map(\.outcome) == [.success], "the service's completion completed the task")
    }

    @Test func aProtocolOverTheSchedulerDrivesTheRealOne() async throws {
        let device = try compatDevice()
        let identifier = "com.example.app.processing"
        let ran = Mutex(0)
        let context = device.install(app: app, manifest: manifest([identifier])) {
            let scheduler: any BackgroundTaskScheduling = BGTaskScheduler.shared
            #expect(scheduler.register(forTaskWithIdentifier: identifier, using: nil) { task in
                ran.withLock { $0 += 1 }
                task.setTaskCompleted(success: true)
            })
        }
        let pending = try await context.withCurrent {
            let scheduler: any BackgroundTaskScheduling = BGTaskScheduler.shared
            let request = BGProcessingTaskRequest(identifier: identifier)
            request.earliestBeginDate = Date(timeIntervalSinceNow: 3600)
            try scheduler.submit(request)
            return { await scheduler.pendingTaskRequests() }
        }()
        #expect(pending.map(\.identifier) == [identifier])
        #expect(pending.first is BGProcessingTaskRequest)
        let afterCancel = Mutex<[String]?>(nil)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            context.withCurrent {
                let scheduler: any BackgroundTaskScheduling = BGTaskScheduler.shared
                scheduler.cancel(taskRequestWithIdentifier: identifier)
                scheduler.getPendingTaskRequests { requests in
                    afterCancel.withLock { $0 = requests.map(\.identifier) }
                    done.resume()
                }
            }
        }
        #expect(afterCancel.withLock { $0 } == [])
        await device.run(for: 2 * 3600)
        #expect(ran.withLock { $0 } == 0, "cancelled before it was due")
    }

    @Test func theWWDCContinuedProcessingExportRunsToTheEnd() async throws {
        let device = try compatDevice()
        let controller = ExportController()
        let context = device.install(app: app, manifest: manifest([controller.taskIdentifier], modes: [])) {
            controller.registerExport()
        }
        try context.withCurrent { try controller.startExport() }
        await device.run(for: 1)
        #expect(device.runs(of: controller.taskIdentifier).map(\.outcome) == [.success])
    }

    @Test func refusedSubmissionsAreCaughtByCodeAsOnIOS() throws {
        let device = try compatDevice()
        let context = device.install(app: app, manifest: manifest(["com.example.app.refresh"])) {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.app.refresh", using: nil) { $0.setTaskCompleted(success: true) }
        }
        let outcomes = context.withCurrent {
            let request = BGAppRefreshTaskRequest(identifier: "com.example.app.refresh")
            let first = submitCatchingByCode(request)
            let unlisted = submitCatchingByCode(BGAppRefreshTaskRequest(identifier: "com.example.app.unlisted"))
            let late = BGAppRefreshTaskRequest(identifier: "com.example.app.refresh")
            late.earliestBeginDate = Date(timeIntervalSinceNow: .nan)
            let malformed = submitCatchingByCode(late)
            return [first, unlisted, malformed]
        }
        // invalidRequest is no code an iOS app knows: its catch-all takes it.
        #expect(outcomes == ["ok", "notPermitted", "other"])
    }

    @Test @MainActor func theAssertionControllerSeesTheApplicationAsOnIOS() async throws {
        let device = try compatDevice()
        let context = device.install(app: app, manifest: manifest([]), launchedByUser: true) {}
        await device.settle()
        let controller = UploadController()
        let (foreground, background, held, ended, status) = context.withCurrent {
            context.application.enterForeground()
            let foreground = (controller.timeLeftDescription(), controller.isInBackground(), controller.stateDescription(UIApplication.shared.applicationState))
            context.application.enterBackground()
            let background = (controller.timeLeftDescription(), controller.isInBackground(), controller.stateDescription(UIApplication.shared.applicationState))
            controller.registerBackgroundTask()
            let held = context.application.outstandingBackgroundTasks
            controller.endBackgroundTask()
            return (foreground, background, held, context.application.outstandingBackgroundTasks, controller.refreshStatusDescription())
        }
        #expect(foreground == ("foreground", false, "active"))
        #expect(background.0.hasSuffix(" seconds left") && background.1 && background.2 == "background")
        #expect(held.count == 1 && ended.isEmpty)
        #expect(controller.backgroundTask == .invalid)
        #expect(status == "available")
    }
}
