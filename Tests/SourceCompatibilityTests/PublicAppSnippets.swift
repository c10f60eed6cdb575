// Background-task code in the shapes public iOS apps and Apple's sample code write it,
// compiled here in Swift 6 language mode with warnings as errors.
#if canImport(BackgroundTasks)
import BackgroundTasks
#endif
import UIKit

// MARK: 1. Apple's ColorFeed sample ("Refreshing and Maintaining Your App Using Background Tasks")

@available(iOS 13.0, *)
@MainActor
final class ColorFeedAppDelegate: UIResponder, UIApplicationDelegate {
    nonisolated static let refreshID = "com.example.apple-samplecode.ColorFeed.refresh"
    nonisolated static let cleaningID = "com.example.apple-samplecode.ColorFeed.db_cleaning"
    var lastCleaned: Date?

    func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?) -> Bool {
        BGTaskScheduler.shared.register(forTaskWithIdentifier: Self.refreshID, using: nil) { task in
            // Downcast the parameter to an app refresh task as this identifier is used for a refresh request.
            self.handleAppRefresh(task: task as! BGAppRefreshTask)
        }
        BGTaskScheduler.shared.register(forTaskWithIdentifier: Self.cleaningID, using: nil) { task in
            self.handleDatabaseCleaning(task: task as! BGProcessingTask)
        }
        return true
    }

    func applicationDidEnterBackground(_ application: UIApplication) {
        scheduleAppRefresh()
        scheduleDatabaseCleaningIfNeeded()
    }

    func scheduleAppRefresh() {
        let request = BGAppRefreshTaskRequest(identifier: Self.refreshID)
        request.earliestBeginDate = Date(timeIntervalSinceNow: 15 * 60)
        do {
            try BGTaskScheduler.shared.submit(request)
        } catch {
            print("Could not schedule app refresh: \(error)")
        }
    }

    func scheduleDatabaseCleaningIfNeeded() {
        let lastCleanDate = lastCleaned ?? .distantPast
        let now = Date()
        let oneWeek = TimeInterval(7 * 24 * 60 * 60)
        guard now > (lastCleanDate + oneWeek) else { return }
        let request = BGProcessingTaskRequest(identifier: Self.cleaningID)
        request.requiresNetworkConnectivity = false
        request.requiresExternalPower = true
        do {
            try BGTaskScheduler.shared.submit(request)
        } catch {
            print("Could not schedule database cleaning: \(error)")
        }
    }

    func handleAppRefresh(task: BGAppRefreshTask) {
        scheduleAppRefresh()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let operation = BlockOperation { }
        task.expirationHandler = {
            queue.cancelAllOperations()
        }
        operation.completionBlock = {
            task.setTaskCompleted(success: !operation.isCancelled)
        }
        queue.addOperations([operation], waitUntilFinished: false)
    }

    func handleDatabaseCleaning(task: BGProcessingTask) {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let cleanDatabaseOperation = BlockOperation { }
        task.expirationHandler = {
            queue.cancelAllOperations()
        }
        cleanDatabaseOperation.completionBlock = {
            let success = !cleanDatabaseOperation.isCancelled
            if success {
                DispatchQueue.main.async { self.lastCleaned = Date() }
            }
            task.setTaskCompleted(success: success)
        }
        queue.addOperation(cleanDatabaseOperation)
    }
}

// MARK: 2. A background-task manager of the kind apps keep in a singleton (nonisolated)

final class BackgroundTaskManager: @unchecked Sendable {
    static let shared = BackgroundTaskManager()
    let refreshIdentifier = "com.example.app.refresh"
    let processingIdentifier = "com.example.app.processing"

    func registerTasks() {
        let registered = BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshIdentifier, using: DispatchQueue.global(qos: .background)) { task in
            guard let task = task as? BGAppRefreshTask else { return }
            self.handle(refresh: task)
        }
        assert(registered, "refresh not in BGTaskSchedulerPermittedIdentifiers")
        BGTaskScheduler.shared.register(forTaskWithIdentifier: processingIdentifier, using: .main) { task in
            switch task {
            case let processing as BGProcessingTask:
                processing.setTaskCompleted(success: true)
            case let refresh as BGAppRefreshTask:
                refresh.setTaskCompleted(success: false)
            default:
                task.setTaskCompleted(success: false)
            }
        }
    }

    func handle(refresh task: BGAppRefreshTask) {
        scheduleRefresh()
        // Swift concurrency: the work in a Task, cancelled on expiration.
        let work = Task {
            do {
                try await Task.sleep(nanoseconds: 0)
                task.setTaskCompleted(success: true)
            } catch {
                task.setTaskCompleted(success: false)
            }
        }
        task.expirationHandler = {
            work.cancel()
        }
    }

    func scheduleRefresh(after interval: TimeInterval = 3600) {
        let request = BGAppRefreshTaskRequest(identifier: refreshIdentifier)
        request.earliestBeginDate = .now + interval
        do {
            try BGTaskScheduler.shared.submit(request)
        } catch let error as BGTaskScheduler.Error {
            switch error.code {
            case .unavailable:
                print("Background refresh is unavailable (simulator, or turned off)")
            case .tooManyPendingTaskRequests:
                print("Too many pending requests")
            case .notPermitted:
                print("Identifier not in Info.plist")
            case .immediateRunIneligible:
                print("Cannot run now")
            @unknown default:
                print("Unknown BGTaskScheduler error \(error.code.rawValue)")
            }
        } catch {
            print("Unexpected error: \(error.localizedDescription)")
        }
    }

    func scheduleProcessing() {
        let request = BGProcessingTaskRequest(identifier: processingIdentifier)
        request.requiresNetworkConnectivity = true
        request.requiresExternalPower = false
        // Tomorrow at 2 AM.
        let tomorrow = Date().addingTimeInterval(24 * 60 * 60)
        request.earliestBeginDate = Calendar.current.date(bySettingHour: 2, minute: 0, second: 0, of: tomorrow)
        do {
            try BGTaskScheduler.shared.submit(request)
        } catch let error as NSError where error.domain == BGTaskSchedulerErrorDomain {
            if error.code == BGTaskScheduler.Error.Code.notPermitted.rawValue {
                print("not permitted")
            } else if error.code == BGTaskScheduler.Error.unavailable.rawValue {
                print("unavailable")
            }
        } catch {
            print("other \(error)")
        }
    }

    func cancelAll() {
        BGTaskScheduler.shared.cancel(taskRequestWithIdentifier: refreshIdentifier)
        BGTaskScheduler.shared.cancelAllTaskRequests()
    }

    func logPending() {
        BGTaskScheduler.shared.getPendingTaskRequests { requests in
            print("\(requests.count) BGTask pending.")
            for request in requests {
                print("\(request.identifier) at \(String(describing: request.earliestBeginDate))")
            }
        }
    }

    func isRefreshScheduled() async -> Bool {
        let requests = await BGTaskScheduler.shared.pendingTaskRequests()
        return requests.contains { $0.identifier == refreshIdentifier }
    }

    func pendingProcessing() async -> [BGProcessingTaskRequest] {
        await BGTaskScheduler.shared.pendingTaskRequests().compactMap { $0 as? BGProcessingTaskRequest }
    }
}

// MARK: 3. Errors, the ways apps inspect them

func describeSubmitError(_ error: any Error) -> String {
    if let error = error as? BGTaskScheduler.Error, error.code == .notPermitted {
        return "notPermitted"
    }
    let nsError = error as NSError
    guard nsError.domain == BGTaskSchedulerErrorDomain else { return "other" }
    switch BGTaskScheduler.Error.Code(rawValue: nsError.code) {
    case .unavailable?: return "unavailable"
    case .tooManyPendingTaskRequests?: return "tooMany"
    case .some(.immediateRunIneligible): return "ineligible"
    default: return "code \(nsError.code)"
    }
}

func submitCatchingByCode(_ request: BGTaskRequest) -> String {
    do {
        try BGTaskScheduler.shared.submit(request)
        return "ok"
    } catch BGTaskScheduler.Error.unavailable {
        return "unavailable"
    } catch BGTaskScheduler.Error.tooManyPendingTaskRequests {
        return "tooMany"
    } catch let error as BGTaskScheduler.Error where error.code == .notPermitted {
        return "notPermitted"
    } catch {
        return "other"
    }
}

/// A fake scheduler for unit tests, made the way test doubles make Apple's errors.
func makeSchedulerErrors() -> [any Error] {
    [
        BGTaskScheduler.Error(.unavailable),
        BGTaskScheduler.Error(.tooManyPendingTaskRequests),
        BGTaskScheduler.Error(BGTaskScheduler.Error.Code.notPermitted),
        NSError(domain: BGTaskSchedulerErrorDomain, code: BGTaskScheduler.Error.Code.immediateRunIneligible.rawValue),
    ]
}

// MARK: 4. A protocol apps write over BGTaskScheduler, for test doubles

protocol BackgroundTaskScheduling {
    @discardableResult
    func register(forTaskWithIdentifier identifier: String, using queue: DispatchQueue?, launchHandler: @escaping @Sendable (BGTask) -> Void) -> Bool
    func submit(_ taskRequest: BGTaskRequest) throws
    func cancel(taskRequestWithIdentifier identifier: String)
    func cancelAllTaskRequests()
    func getPendingTaskRequests(completionHandler: @escaping @Sendable ([BGTaskRequest]) -> Void)
    func pendingTaskRequests() async -> [BGTaskRequest]
}

extension BGTaskScheduler: BackgroundTaskScheduling {}

// MARK: 5. Continued processing (iOS 26, WWDC25 "Finish tasks in the background")

@available(iOS 26.0, *)
final class ExportController: @unchecked Sendable {
    let taskIdentifier = "com.example.app.export.video"

    func registerExport() {
        BGTaskScheduler.shared.register(forTaskWithIdentifier: taskIdentifier, using: nil) { task in
            guard let task = task as? BGContinuedProcessingTask else { return }
            var shouldContinue = true
            task.expirationHandler = {
                shouldContinue = false
            }
            task.progress.totalUnitCount = 100
            task.progress.completedUnitCount = 0
            while shouldContinue, task.progress.completedUnitCount < task.progress.totalUnitCount {
                task.progress.completedUnitCount += 10
                task.updateTitle(task.title, subtitle: "Exported \(task.progress.completedUnitCount) of \(task.progress.totalUnitCount)")
            }
            task.setTaskCompleted(success: shouldContinue)
        }
    }

    func startExport() throws {
        let request = BGContinuedProcessingTaskRequest(identifier: taskIdentifier, title: "A video export", subtitle: "About to start...")
        request.strategy = .fail
        if BGTaskScheduler.supportedResources.contains(.gpu) {
            request.requiredResources = .gpu
        }
        switch request.strategy {
        case .fail: print("fail")
        case .queue: print("queue")
        @unknown default: print("unknown")
        }
        try BGTaskScheduler.shared.submit(request)
    }

    func submitOrReport(_ request: BGContinuedProcessingTaskRequest) -> String {
        do {
            try BGTaskScheduler.shared.submit(request)
            return "submitted"
        } catch let error as BGTaskScheduler.Error where error.code == .immediateRunIneligible {
            return "ineligible"
        } catch {
            return "other"
        }
    }
}

// MARK: 6. UIApplication background assertions

@MainActor
final class UploadController {
    var backgroundTask: UIBackgroundTaskIdentifier = .invalid

    func registerBackgroundTask() {
        backgroundTask = UIApplication.shared.beginBackgroundTask { [weak self] in
            self?.endBackgroundTask()
        }
        assert(backgroundTask != UIBackgroundTaskIdentifier.invalid)
    }

    func endBackgroundTask() {
        print("Background task ended.")
        UIApplication.shared.endBackgroundTask(backgroundTask)
        backgroundTask = .invalid
    }

    func save() async {
        let identifier = UIApplication.shared.beginBackgroundTask(withName: "Save")
        defer { UIApplication.shared.endBackgroundTask(identifier) }
        await Task.yield()
    }

    func upload(completion: @escaping @Sendable () -> Void) {
        backgroundTask = UIApplication.shared.beginBackgroundTask(withName: "Upload", expirationHandler: { [weak self] in
            self?.endBackgroundTask()
        })
        DispatchQueue.global().async {
            completion()
            DispatchQueue.main.async { [weak self] in
                self?.endBackgroundTask()
            }
        }
    }

    func timeLeftDescription() -> String {
        let remaining = UIApplication.shared.backgroundTimeRemaining
        if remaining == .greatestFiniteMagnitude || remaining == Double.greatestFiniteMagnitude {
            return "foreground"
        }
        return String(format: "%.0f seconds left", remaining)
    }

    func isInBackground() -> Bool {
        UIApplication.shared.applicationState == .background
    }

    func refreshStatusDescription() -> String {
        switch UIApplication.shared.backgroundRefreshStatus {
        case .available: return "available"
        case .denied: return "denied"
        case .restricted: return "restricted"
        @unknown default: return "unknown"
        }
    }

    func stateDescription(_ state: UIApplication.State) -> String {
        switch state {
        case .active: return "active"
        case .inactive: return "inactive"
        case .background: return "background"
        @unknown default: return "unknown"
        }
    }
}

// MARK: 7. The legacy delegate API: fetch and silent push

@MainActor
final class LegacyFetchAppDelegate: UIResponder, UIApplicationDelegate {
    var window: UIWindow?
    var backgroundSessionCompletionHandler: (() -> Void)?

    func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]? = nil) -> Bool {
        application.setMinimumBackgroundFetchInterval(UIApplication.backgroundFetchIntervalMinimum)
        UIApplication.shared.setMinimumBackgroundFetchInterval(3600)
        if launchOptions?[.remoteNotification] != nil { print("launched by a push") }
        return true
    }

    func application(_ application: UIApplication, performFetchWithCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void) {
        DispatchQueue.main.asyncAfter(deadline: .now()) {
            completionHandler(.newData)
        }
    }

    func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any], fetchCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void) {
        guard let aps = userInfo["aps"] as? [String: Any], aps["content-available"] as? Int == 1 else {
            completionHandler(.noData)
            return
        }
        completionHandler(UIBackgroundFetchResult.newData)
    }

    func applicationWillTerminate(_ application: UIApplication) {}
}

@MainActor
final class AsyncPushAppDelegate: NSObject, UIApplicationDelegate {
    func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any]) async -> UIBackgroundFetchResult {
        await Task.yield()
        return userInfo.isEmpty ? .noData : .newData
    }
}

// MARK: 8. Lifecycle notifications

@MainActor
final class LifecycleObserver {
    private var tokens: [any NSObjectProtocol] = []
    private(set) var events: [String] = []

    func start() {
        let center = NotificationCenter.default
        tokens.append(center.addObserver(forName: UIApplication.didEnterBackgroundNotification, object: nil, queue: .main) { [weak self] _ in
            MainActor.assumeIsolated { self?.events.append("background") }
        })
        tokens.append(center.addObserver(forName: UIApplication.willEnterForegroundNotification, object: nil, queue: OperationQueue.main) { [weak self] _ in
            MainActor.assumeIsolated { self?.events.append("foreground") }
        })
        tokens.append(center.addObserver(forName: UIApplication.backgroundRefreshStatusDidChangeNotification, object: nil, queue: nil) { note in
            print("status changed: \(note.name.rawValue)")
        })
        tokens.append(center.addObserver(forName: UIApplication.willTerminateNotification, object: UIApplication.shared, queue: .main) { _ in })
    }

    func stop() {
        tokens.forEach { NotificationCenter.default.removeObserver($0) }
        tokens.removeAll()
    }
}

// MARK: 9. ProcessInfo expiring activity

func saveWithExpiringActivity(_ save: @escaping @Sendable () -> Void) {
    ProcessInfo.processInfo.performExpiringActivity(withReason: "Saving the database") { expired in
        if expired {
            print("expired: cancel the save")
        } else {
            save()
        }
    }
}

// MARK: 10. Availability checks, as apps supporting iOS 12 write them

final class AvailabilityGatedScheduler: Sendable {
    func schedule() {
        if #available(iOS 13.0, *) {
            let request = BGAppRefreshTaskRequest(identifier: "com.example.app.refresh")
            request.earliestBeginDate = Date(timeIntervalSinceNow: 60 * 60)
            try? BGTaskScheduler.shared.submit(request)
        } else {
            UIApplication.shared.setMinimumBackgroundFetchInterval(UIApplication.backgroundFetchIntervalMinimum)
        }
        if #available(iOS 26, *) {
            _ = BGTaskScheduler.supportedResources
        }
    }
}

// MARK: 11. A handler that defers to an async function and a main-actor store

@MainActor
final class FeedStore {
    static let shared = FeedStore()
    var items: [String] = []
    func refresh() async throws { items.append("new") }
}

enum AsyncRefresh {
    static func register() {
        BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.app.feed", using: nil) { task in
            Task { @MainActor in
                do {
                    try await FeedStore.shared.refresh()
                    task.setTaskCompleted(success: true)
                } catch {
                    task.setTaskCompleted(success: false)
                }
            }
        }
    }

    static func handle(_ task: BGTask) async {
        task.expirationHandler = { @Sendable in print("expired") }
        task.setTaskCompleted(success: true)
    }

    static func registerForwarding() {
        BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.app.forward", using: nil) { task in
            Task { await handle(task) }
        }
    }
}

// MARK: 13. Reading the application from nonisolated async code, hopping to the main actor
// (`await UIApplication.shared.applicationState` does not compile here: this UIApplication
// is not main-actor isolated, docs/porting.md)

func currentRefreshStatus() async -> UIBackgroundRefreshStatus {
    await MainActor.run { UIApplication.shared.backgroundRefreshStatus }
}

// MARK: 14. Enums apps switch over with `default:` (imported NS_ENUMs on iOS)

@available(iOS 26.0, *)
func strategyName(_ strategy: BGContinuedProcessingTaskRequest.SubmissionStrategy) -> String {
    switch strategy {
    case .fail: return "fail"
    case .queue: return "queue"
    default: return "unknown"
    }
}

func codeName(_ code: BGTaskScheduler.Error.Code) -> String {
    switch code {
    case .unavailable: return "unavailable"
    case .tooManyPendingTaskRequests: return "tooMany"
    case .notPermitted: return "notPermitted"
    case .immediateRunIneligible: return "ineligible"
    default: return "unknown"
    }
}

@MainActor
func sceneStateName(_ scene: UIScene) -> String {
    switch scene.activationState {
    case .unattached: return "unattached"
    case .foregroundActive: return "active"
    case .foregroundInactive: return "inactive"
    case .background: return "background"
    default: return "unknown"
    }
}

// MARK: 15. A non-Sendable service captured by the launch handler, from nonisolated code

final class SyncService {
    var lastSync: Date?
    func sync(completion: @escaping (Bool) -> Void) {
        lastSync = Date()
        completion(true)
    }
}

final class SyncCoordinator {
    let service = SyncService()

    func registerSync() {
        let service = self.service
        BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.app.sync", using: nil) { task in
            service.sync { ok in task.setTaskCompleted(success: ok) }
        }
    }
}

// MARK: 16. Handlers passed as function references

enum TaskHandlers {
    static func handleRefresh(_ task: BGTask) {
        task.setTaskCompleted(success: true)
    }

    static func register() {
        BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.app.ref", using: nil, launchHandler: handleRefresh)
    }
}

@MainActor
final class MethodReferenceDelegate {
    func handle(_ task: BGTask) { task.setTaskCompleted(success: true) }

    func register() {
        BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.app.method", using: nil, launchHandler: handle)
        let scheduler: BGTaskScheduler = .shared
        scheduler.cancel(taskRequestWithIdentifier: "com.example.app.method")
    }
}

// MARK: 17. Background URL session events on the delegate, beginBackgroundTask with nil arguments

@MainActor
final class URLSessionEventsDelegate: UIResponder, UIApplicationDelegate {
    var backgroundCompletionHandler: (() -> Void)?

    func application(_ application: UIApplication, handleEventsForBackgroundURLSession identifier: String, completionHandler: @escaping () -> Void) {
        backgroundCompletionHandler = completionHandler
    }

    func applicationDidEnterBackground(_ application: UIApplication) {
        let identifier = application.beginBackgroundTask(withName: nil, expirationHandler: nil)
        if identifier != .invalid { application.endBackgroundTask(identifier) }
    }
}

// MARK: 18. A protocol copying Apple's declarations exactly (launch handler not @Sendable)

protocol AppleShapedScheduling: AnyObject {
    func register(forTaskWithIdentifier identifier: String, using queue: DispatchQueue?, launchHandler: @escaping (BGTask) -> Void) -> Bool
    func submit(_ taskRequest: BGTaskRequest) throws
}

extension BGTaskScheduler: AppleShapedScheduling {}

// MARK: 19. URLSession in a refresh handler (import UIKit brings it on Linux)

enum FeedFetcher {
    static func fetch(task: BGAppRefreshTask) {
        let url = URL(string: "https://example.com/feed.json")!
        let dataTask = URLSession.shared.dataTask(with: url) { data, _, error in
            task.setTaskCompleted(success: error == nil && data != nil)
        }
        task.expirationHandler = {
            dataTask.cancel()
        }
        dataTask.resume()
    }

    static func fetchAsync(task: BGAppRefreshTask) async {
        do {
            let (data, _) = try await URLSession.shared.data(from: URL(string: "https://example.com/feed.json")!)
            task.setTaskCompleted(success: !data.isEmpty)
        } catch {
            task.setTaskCompleted(success: false)
        }
    }
}

// MARK: 20. Odds and ends: detached submission, health research, a semaphore in an expiring activity

enum Misc {
    static func submitDetached() {
        Task.detached(priority: .background) {
            let request = BGProcessingTaskRequest(identifier: "com.example.app.processing")
            request.earliestBeginDate = nil
            try? BGTaskScheduler.shared.submit(request)
        }
    }

    static func healthResearch() -> BGTaskRequest {
        let request = BGHealthResearchTaskRequest(identifier: "com.example.app.study")
        // swiftlint:disable:next legacy_objc_type
        request.protectionTypeOfRequiredData = FileProtectionType.completeUnlessOpen.rawValue as NSString
        request.requiresExternalPower = true
        return request
    }

    static func isProcessing(_ request: BGTaskRequest) -> Bool {
        request is BGProcessingTaskRequest && !(request is BGAppRefreshTaskRequest)
    }

    static func blockingSave(_ work: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
        ProcessInfo.processInfo.performExpiringActivity(withReason: "Finishing the save") { expired in
            guard !expired else { return }
            let semaphore = DispatchSemaphore(value: 0)
            work { semaphore.signal() }
            _ = semaphore.wait(timeout: .now() + 20)
        }
    }

    @MainActor
    static func remoteNotificationWhileInactive(_ application: UIApplication) -> Bool {
        application.applicationState != .active && application.backgroundRefreshStatus == .available
    }

    @MainActor
    static func appDelegate() -> LegacyFetchAppDelegate? {
        UIApplication.shared.delegate as? LegacyFetchAppDelegate
    }
}

// MARK: 21. An actor that owns the background work; a continuation over the completion form

actor SyncEngine {
    private var running = false

    nonisolated func register() {
        BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.app.engine", using: nil) { task in
            Task { await self.handle(task as! BGProcessingTask) }
        }
    }

    func handle(_ task: BGProcessingTask) {
        running = true
        task.expirationHandler = { [weak self] in
            Task { await self?.cancel() }
        }
        DispatchQueue.main.async {
            task.setTaskCompleted(success: true)
        }
    }

    func cancel() { running = false }

    func pending() async -> [BGTaskRequest] {
        await withCheckedContinuation { continuation in
            BGTaskScheduler.shared.getPendingTaskRequests { requests in
                continuation.resume(returning: requests)
            }
        }
    }
}

// MARK: 22. A scene delegate that schedules on entering the background

final class SchedulingSceneDelegate: UIResponder, UIWindowSceneDelegate {
    var window: UIWindow?

    func sceneDidEnterBackground(_ scene: UIScene) {
        (UIApplication.shared.delegate as? ColorFeedAppDelegate)?.scheduleAppRefresh()
    }

    func sceneWillEnterForeground(_ scene: UIScene) {
        BGTaskScheduler.shared.getPendingTaskRequests { print("pending: \($0.count)") }
    }
}
