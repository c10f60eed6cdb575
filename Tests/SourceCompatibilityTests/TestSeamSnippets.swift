import BackgroundTasks
import BackgroundTasksTesting
import Foundation
import IOSShapedApp
import Synchronization
import Testing
import SchedulerCore

// Shapes iOS apps use to make their background-task code testable, which depend on the
// API's declarations being Apple's exactly (an outside probe found them refused while
// `expirationHandler` was `@isolated(any)`).

// MARK: A protocol that copies BGTask's members, satisfied by an empty extension

/// A browser's seam over `BGTask` (DuckDuckGo's shape, and a dozen other apps'): unit tests
/// hand the handler a fake task.
protocol BrowserTaskInterface: AnyObject {
    var identifier: String { get }
    var expirationHandler: (() -> Void)? { get set }
    func setTaskCompleted(success: Bool)
}

extension BGTask: BrowserTaskInterface {}

/// The same seam over one subclass only.
protocol RefreshTaskHandling {
    var expirationHandler: (() -> Void)? { get set }
    func setTaskCompleted(success: Bool)
}

extension BGAppRefreshTask: RefreshTaskHandling {}

/// An iOS 26 app's `@MainActor` seam over continued processing.
@MainActor
protocol ContinuedExportTask: AnyObject {
    var expirationHandler: (() -> Void)? { get set }
    var progress: Progress { get }
    func updateTitle(_ title: String, subtitle: String)
    func setTaskCompleted(success: Bool)
}

@available(iOS 26.0, *)
extension BGContinuedProcessingTask: ContinuedExportTask {}

/// The fake such apps test with.
final class FakeBrowserTask: BrowserTaskInterface {
    let identifier: String
    var expirationHandler: (() -> Void)?
    private(set) var completed: Bool?
    init(identifier: String) { self.identifier = identifier }
    func setTaskCompleted(success: Bool) { completed = success }
}

/// The code under test: written against the seam, so it takes the real task or the fake.
final class DatasetRefresher: Sendable {
    let log = Mutex<[String]>([])

    func handle(_ task: BrowserTaskInterface) {
        // Chaining an earlier handler, called synchronously as on iOS.
        let previous = task.expirationHandler
        task.expirationHandler = {
            previous?()
            self.log.withLock { $0.append("expired") }
            task.setTaskCompleted(success: false)
        }
    }
}

// MARK: An app's request subclass

/// A request type of the app's own, as some apps write for their nightly work. Requests
/// are `@unchecked Sendable` here (docs/porting.md, "Requests and tasks"), so under warnings
/// as errors the subclass restates it, as Apple's compiler also accepts.
final class NightlyBackupRequest: BGProcessingTaskRequest, @unchecked Sendable {
    static let identifier = "com.example.app.nightly-backup"

    init() {
        super.init(identifier: Self.identifier)
        requiresExternalPower = true
        requiresNetworkConnectivity = true
    }
}

@Suite struct TestSeamSnippetTests {
    let app = AppID("com.example.app")
    let identifier = "com.example.app.refresh"

    @Test func theSeamTakesTheFakeAndChainsAnEarlierHandlerSynchronously() {
        let fake = FakeBrowserTask(identifier: identifier)
        let earlier = Mutex(false)
        fake.expirationHandler = { earlier.withLock { $0 = true } }
        let refresher = DatasetRefresher()
        refresher.handle(fake)
        fake.expirationHandler?()
        #expect(earlier.withLock { $0 })
        #expect(refresher.log.withLock { $0 } == ["expired"])
        #expect(fake.completed == false)
    }

    @Test func theSeamTakesTheRealTaskAndItsHandlerRunsAtExpiration() async throws {
        DispatchQueue.main.setSpecific(key: mainQueueMarker, value: true)
        let device = try compatDevice()
        let refresher = DatasetRefresher()
        let seen = Mutex<Bool?>(nil)
        let expiredOnMain = Mutex<Bool?>(nil)
        let context = device.install(app: app, manifest: AppManifest(appID: app, permittedIdentifiers: [identifier], backgroundModes: ["fetch"])) { [identifier] in
            BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { task in
                // Set from the handler's own queue, not the main actor: it runs on the run's queue.
                // A nonisolated handler on its queue: where the expiration handler is set, so
                // it runs off the main queue, on the run's own.
                task.expirationHandler = { expiredOnMain.withLock { $0 = isOnMainQueue() || Thread.isMainThread } }
                refresher.handle(task)
                // The seam's view of the property is the task's own.
                let seam: BrowserTaskInterface = task
                seen.withLock { $0 = seam.expirationHandler != nil }
            }
        }
        try context.withCurrent { try BGTaskScheduler.shared.submit(BGAppRefreshTaskRequest(identifier: identifier)) }
        await device.run(for: 1)
        #expect(seen.withLock { $0 } == true)
        await device.run(for: 31)
        #expect(refresher.log.withLock { $0 } == ["expired"])
        #expect(expiredOnMain.withLock { $0 } == false, "the earlier handler, chained, ran off the main queue")
        #expect(device.runs(of: identifier).map(\.outcome) == [.expired])
    }

    @Test @MainActor func aHandlerSetOnTheMainActorRunsThere() async throws {
        DispatchQueue.main.setSpecific(key: mainQueueMarker, value: true)
        let device = try compatDevice()
        let ranOnMain = Mutex<Bool?>(nil)
        let context = device.install(app: app, manifest: AppManifest(appID: app, permittedIdentifiers: [identifier], backgroundModes: ["fetch"])) { [identifier] in
            // A nonisolated handler that hands its task to main-actor code (an app's
            // coordinator), which sets the expiration handler: the closure is the main actor's.
            BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { task in
                DispatchQueue.main.async {
                    task.expirationHandler = {
                        ranOnMain.withLock { $0 = isOnMainQueue() }
                        task.setTaskCompleted(success: false)
                    }
                }
            }
        }
        try context.withCurrent { try BGTaskScheduler.shared.submit(BGAppRefreshTaskRequest(identifier: identifier)) }
        await device.run(for: 1)
        await device.run(for: 31)
        #expect(ranOnMain.withLock { $0 } == true)
    }

    @Test func theHandlerIsStillSetWhileItRunsAndClearedAfter() async throws {
        let device = try compatDevice()
        let whileRunning = Mutex<Bool?>(nil)
        let taskSeen = Mutex<BGTask?>(nil)
        let context = device.install(app: app, manifest: AppManifest(appID: app, permittedIdentifiers: [identifier], backgroundModes: ["fetch"])) { [identifier] in
            BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { task in
                taskSeen.withLock { $0 = task }
                task.expirationHandler = {
                    // Apple: "sets the value to nil after the handler completes".
                    whileRunning.withLock { $0 = task.expirationHandler != nil }
                }
            }
        }
        try context.withCurrent { try BGTaskScheduler.shared.submit(BGAppRefreshTaskRequest(identifier: identifier)) }
        await device.run(for: 31)
        #expect(whileRunning.withLock { $0 } == true)
        let task = try #require(taskSeen.withLock { $0 })
        // Cleared after it ran, not by a termination: the run is still in its grace period.
        #expect(!task.isTerminated)
        #expect(task.expirationHandler == nil)
    }

    /// An object a handler holds the last reference to, whose deinit asks the task something.
    final class TaskWatcher: Sendable {
        /// What the watchers' deinits found, in order.
        final class Answers: Sendable { let list = Mutex<[Bool]>([]) }
        let task: BGTask
        let answers: Answers
        init(_ task: BGTask, answers: Answers) { self.task = task; self.answers = answers }
        deinit { answers.list.withLock { $0.append(task.isCompleted) } }
    }

    @Test(.timeLimit(.minutes(1))) func aHandlerReleasedWhenReplacedOrAtCompletionMayCallBackIntoTheTask() async throws {
        let device = try compatDevice()
        let answers = TaskWatcher.Answers()
        let context = device.install(app: app, manifest: AppManifest(appID: app, permittedIdentifiers: [identifier], backgroundModes: ["fetch"])) { [identifier] in
            BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { task in
                // Each handler holds the only reference to a watcher: replacing the handler,
                // then completing the task, releases them (formerly under the task's lock,
                // where the watcher's call into the task waited for ever).
                task.expirationHandler = { [watcher = TaskWatcher(task, answers: answers)] in _ = watcher }
                task.expirationHandler = { [watcher = TaskWatcher(task, answers: answers)] in _ = watcher }
                task.setTaskCompleted(success: true)
            }
        }
        try context.withCurrent { try BGTaskScheduler.shared.submit(BGAppRefreshTaskRequest(identifier: identifier)) }
        await device.run(for: 1)
        #expect(answers.list.withLock { $0 } == [false, true])
        #expect(device.runs(of: identifier).map(\.outcome) == [.success])
    }

    @Test func anAppsRequestSubclassIsSubmittedAsItsKind() async throws {
        let device = try compatDevice()
        let context = device.install(app: app, manifest: AppManifest(appID: app, permittedIdentifiers: [NightlyBackupRequest.identifier], backgroundModes: ["processing"])) {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: NightlyBackupRequest.identifier, using: nil) { $0.setTaskCompleted(success: true) }
        }
        let nightly = NightlyBackupRequest()
        nightly.earliestBeginDate = compatStart.addingTimeInterval(86_400)  // pending, not run at once
        try context.withCurrent { try BGTaskScheduler.shared.submit(nightly) }
        let pending = await context.scheduler.pendingTaskRequests()
        let request = try #require(pending.first as? BGProcessingTaskRequest)
        #expect(request.identifier == NightlyBackupRequest.identifier)
        #expect(request.requiresExternalPower && request.requiresNetworkConnectivity)
    }
}
