// Background-task code in the shapes public iOS apps and Apple's sample code write it,
// compiled here in Swift 6 language mode with warnings as errors: more shapes, beside
// PublicAppSnippets.swift (feed readers, browsers, messengers, backup apps; `import os`).
#if canImport(BackgroundTasks)
import BackgroundTasks
#endif
import UIKit
import os

// MARK: 1. A feed reader's app delegate (NetNewsWire's shape): a refresh task, and a
// background assertion held while the last sync finishes after entering the background

@MainActor
final class FeedReaderAppDelegate: UIResponder, UIApplicationDelegate {
    nonisolated static let feedRefreshIdentifier = "com.example.feedreader.FeedRefresh"
    private let log = OSLog(subsystem: "com.example.feedreader", category: "Application")
    private var waitBackgroundUpdateTask = UIBackgroundTaskIdentifier.invalid
    private var syncBackgroundTask = UIBackgroundTaskIdentifier.invalid
    var isSyncing = false

    func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?) -> Bool {
        registerBackgroundTasks()
        return true
    }

    func applicationDidEnterBackground(_ application: UIApplication) {
        prepareAccountsForBackground()
    }

    func registerBackgroundTasks() {
        BGTaskScheduler.shared.register(forTaskWithIdentifier: Self.feedRefreshIdentifier, using: nil) { (task) in
            self.performBackgroundFeedRefresh(with: task as! BGAppRefreshTask)
        }
    }

    func scheduleBackgroundFeedRefresh() {
        let request = BGAppRefreshTaskRequest(identifier: Self.feedRefreshIdentifier)
        request.earliestBeginDate = Date(timeIntervalSinceNow: 15 * 60)
        // We send this to a dedicated serial queue because as of 11/05/19 on iOS 13.2 the call to the
        // task scheduler can hang indefinitely.
        DispatchQueue.global(qos: .background).async { [log] in
            do {
                try BGTaskScheduler.shared.submit(request)
            } catch {
                os_log(.error, log: log, "Could not schedule app refresh: %@", error.localizedDescription)
            }
        }
    }

    func performBackgroundFeedRefresh(with task: BGAppRefreshTask) {
        scheduleBackgroundFeedRefresh() // schedule next refresh
        os_log("Woken to perform account refresh.", log: self.log, type: .info)
        DispatchQueue.main.async {
            self.refreshAll { [unowned self] in
                os_log("Account refresh operation completed.", log: self.log, type: .info)
                task.setTaskCompleted(success: true)
            }
        }
        // set expiration handler
        task.expirationHandler = { [weak task] in
            os_log("Accounts refresh processing terminated for running too long.", log: self.log, type: .info)
            task?.setTaskCompleted(success: false)
        }
    }

    func refreshAll(completion: @escaping @MainActor () -> Void) {
        isSyncing = true
        DispatchQueue.main.async {
            self.isSyncing = false
            completion()
        }
    }

    func prepareAccountsForBackground() {
        scheduleBackgroundFeedRefresh()
        waitForSyncTasksToFinish()
    }

    private func waitForSyncTasksToFinish() {
        // If we are already waiting for sync, don't do it again
        guard waitBackgroundUpdateTask == .invalid else { return }
        waitBackgroundUpdateTask = UIApplication.shared.beginBackgroundTask { [weak self] in
            guard let self = self else { return }
            self.completeProcessing(true)
            os_log("Accounts wait for progress terminated for running too long.", log: self.log, type: .info)
        }
        DispatchQueue.main.async { [weak self] in
            self?.waitToComplete { [weak self] suspend in
                self?.completeProcessing(suspend)
            }
        }
    }

    private func waitToComplete(completion: @escaping @MainActor (Bool) -> Void) {
        guard UIApplication.shared.applicationState == .background else {
            os_log("App came back to foreground, no longer waiting.", log: self.log, type: .info)
            completion(false)
            return
        }
        if isSyncing {
            os_log("Waiting for sync to finish...", log: self.log, type: .info)
            DispatchQueue.main.asyncAfter(deadline: .now() + 1.0) { [weak self] in
                self?.waitToComplete(completion: completion)
            }
        } else {
            os_log("Refresh progress complete.", log: self.log, type: .info)
            completion(true)
        }
    }

    private func completeProcessing(_ suspend: Bool) {
        UIApplication.shared.endBackgroundTask(self.waitBackgroundUpdateTask)
        self.waitBackgroundUpdateTask = UIBackgroundTaskIdentifier.invalid
    }

    func syncArticleStatus() {
        syncBackgroundTask = UIApplication.shared.beginBackgroundTask(withName: "SyncArticleStatus") { [weak self] in
            guard let self else { return }
            UIApplication.shared.endBackgroundTask(self.syncBackgroundTask)
            self.syncBackgroundTask = .invalid
        }
        DispatchQueue.main.async { [weak self] in
            guard let self else { return }
            UIApplication.shared.endBackgroundTask(self.syncBackgroundTask)
            self.syncBackgroundTask = .invalid
        }
    }
}

// MARK: 2. Apple's ColorFeed refresh as it really is: a chain of operations, the last one
// completing the task

// Swift 6 (Xcode 16 too) asks an Operation subclass to restate its @unchecked Sendable.
class FetchMostRecentEntriesOperation: Operation, @unchecked Sendable {
    private(set) var entries: [String] = []
    override func main() {
        guard !isCancelled else { return }
        entries = ["red", "green"]
    }
}

class AddEntriesToStoreOperation: Operation, @unchecked Sendable {
    override func main() {}
}

enum ColorFeedOperations {
    static func getOperationsToFetchLatestEntries() -> [Operation] {
        let fetchMostRecentEntry = FetchMostRecentEntriesOperation()
        let addEntriesToStore = AddEntriesToStoreOperation()
        addEntriesToStore.addDependency(fetchMostRecentEntry)
        return [fetchMostRecentEntry, addEntriesToStore]
    }

    static func handleAppRefresh(task: BGAppRefreshTask) {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1

        let operations = getOperationsToFetchLatestEntries()
        let lastOperation = operations.last!

        task.expirationHandler = {
            // After all operations are cancelled, the completion block below is called to set the task to complete.
            queue.cancelAllOperations()
        }

        lastOperation.completionBlock = {
            task.setTaskCompleted(success: !lastOperation.isCancelled)
        }

        queue.addOperations(operations, waitUntilFinished: false)
    }

    static func handleProcessing(task: BGProcessingTask) {
        let queue = OperationQueue()
        let operations = getOperationsToFetchLatestEntries()
        operations.last?.completionBlock = {
            task.setTaskCompleted(success: !(operations.last?.isCancelled ?? true))
        }
        task.expirationHandler = { queue.cancelAllOperations() }
        queue.addOperations(operations, waitUntilFinished: false)
    }
}

// MARK: 3. A browser's configuration refresh (DuckDuckGo's shape): a processing task that
// needs the network, scheduled only when none is pending

enum ConfigurationRefresh {
    enum Constants {
        static let backgroundProcessingTaskIdentifier = "com.example.browser.configurationRefresh"
        static let minimumConfigurationRefreshInterval: TimeInterval = 60 * 30
    }

    static var shouldRefresh: Bool {
        let last = UserDefaults.standard.double(forKey: "lastConfigurationRefresh")
        return Date().timeIntervalSince1970 - last > Constants.minimumConfigurationRefreshInterval
    }

    static func registerBackgroundRefreshTaskHandler() {
        BGTaskScheduler.shared.register(forTaskWithIdentifier: Constants.backgroundProcessingTaskIdentifier, using: nil) { (task) in
            guard shouldRefresh else {
                task.setTaskCompleted(success: true)
                scheduleBackgroundRefreshTask()
                return
            }
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            backgroundRefreshTaskHandler(queue: queue, task: task)
        }
    }

    static func backgroundRefreshTaskHandler(queue: OperationQueue, task: BGTask) {
        let refreshOperation = BlockOperation {
            UserDefaults.standard.set(Date().timeIntervalSince1970, forKey: "lastConfigurationRefresh")
        }
        task.expirationHandler = {
            queue.cancelAllOperations()
            scheduleBackgroundRefreshTask()
        }
        refreshOperation.completionBlock = {
            task.setTaskCompleted(success: !refreshOperation.isCancelled)
            scheduleBackgroundRefreshTask()
        }
        queue.addOperation(refreshOperation)
    }

    static func scheduleBackgroundRefreshTask() {
        let task = BGProcessingTaskRequest(identifier: Constants.backgroundProcessingTaskIdentifier)
        task.requiresNetworkConnectivity = true
        task.earliestBeginDate = Date(timeIntervalSinceNow: Constants.minimumConfigurationRefreshInterval)

        // Background tasks can be debugged by breaking on the `submit` call, stepping over, then running the following LLDB command, before resuming:
        //
        // e -l objc -- (void)[[BGTaskScheduler sharedScheduler] _simulateLaunchForTaskWithIdentifier:@"com.example.browser.configurationRefresh"]
        do {
            try BGTaskScheduler.shared.submit(task)
        } catch {
            print("Failed to schedule background task: \(error)")
        }
    }

    static func scheduleIfNeeded() {
        BGTaskScheduler.shared.getPendingTaskRequests { tasks in
            let hasConfigurationTask = tasks.contains { $0.identifier == Constants.backgroundProcessingTaskIdentifier }
            if !hasConfigurationTask {
                scheduleBackgroundRefreshTask()
            }
        }
    }
}

// MARK: 4. A messenger's message fetch (Signal's shape): errors told apart by NSError code,
// the request cancelled when the account goes away

final class MessageFetchBGRefreshTask: Sendable {
    static let taskIdentifier = "MessageFetchBGRefreshTask"
    private static let logger = Logger(subsystem: "com.example.messenger", category: "BGRefresh")
    static let shared = MessageFetchBGRefreshTask()

    static func register() {
        BGTaskScheduler.shared.register(forTaskWithIdentifier: Self.taskIdentifier, using: nil, launchHandler: { task in
            shared.performTask(task)
        })
    }

    func scheduleTask() {
        let request = BGAppRefreshTaskRequest(identifier: Self.taskIdentifier)
        request.earliestBeginDate = Date(timeIntervalSinceNow: 5 * 60)
        do {
            try BGTaskScheduler.shared.submit(request)
        } catch let error {
            let errorCode = (error as NSError).code
            switch errorCode {
            case BGTaskScheduler.Error.Code.notPermitted.rawValue:
                Self.logger.warning("Could not schedule: notPermitted")
            case BGTaskScheduler.Error.Code.tooManyPendingTaskRequests.rawValue:
                Self.logger.error("Could not schedule: tooManyPendingTaskRequests")
            case BGTaskScheduler.Error.Code.unavailable.rawValue:
                Self.logger.warning("Could not schedule: unavailable")
            default:
                Self.logger.error("Could not schedule, unknown error: \(errorCode)")
            }
        }
    }

    func cancelTask() {
        BGTaskScheduler.shared.cancel(taskRequestWithIdentifier: Self.taskIdentifier)
    }

    private func performTask(_ task: BGTask) {
        Self.logger.info("performing background fetch")
        scheduleTask()
        let fetch = Task {
            try await Task.sleep(nanoseconds: 1_000)
        }
        task.expirationHandler = {
            Self.logger.warning("background fetch timed out")
            fetch.cancel()
            task.setTaskCompleted(success: false)
        }
        Task {
            do {
                try await fetch.value
                Self.logger.info("success")
                task.setTaskCompleted(success: true)
            } catch {
                Self.logger.error("failing task: \(error.localizedDescription, privacy: .public)")
                task.setTaskCompleted(success: false)
            }
        }
    }
}

// MARK: 5. A photo backup's processing request built from the user's settings, replaced
// when the settings change

struct BackupSettings {
    var onlyOnWiFi: Bool
    var onlyWhileCharging: Bool

    static var current: BackupSettings {
        BackupSettings(onlyOnWiFi: UserDefaults.standard.bool(forKey: "backup.wifiOnly"),
                       onlyWhileCharging: UserDefaults.standard.bool(forKey: "backup.chargingOnly"))
    }
}

enum PhotoBackupScheduler {
    static let identifier = "com.example.photos.backup"

    static func makeRequest(settings: BackupSettings = .current) -> BGProcessingTaskRequest {
        let request = BGProcessingTaskRequest(identifier: identifier)
        request.requiresNetworkConnectivity = true
        request.requiresExternalPower = settings.onlyWhileCharging
        request.earliestBeginDate = settings.onlyOnWiFi ? Date(timeIntervalSinceNow: 60 * 60) : nil
        return request
    }

    static func settingsDidChange(_ settings: BackupSettings) {
        BGTaskScheduler.shared.cancel(taskRequestWithIdentifier: identifier)
        do {
            try BGTaskScheduler.shared.submit(makeRequest(settings: settings))
        } catch {
            print("Unable to submit backup task: \(error.localizedDescription)")
        }
    }

    static func logOut() {
        BGTaskScheduler.shared.cancelAllTaskRequests()
    }
}

// MARK: 6. A debug screen's model listing pending requests, both forms

@MainActor
final class PendingTasksViewModel {
    private(set) var rows: [String] = []
    private(set) var backupNeedsPower: Bool?

    func reload() {
        BGTaskScheduler.shared.getPendingTaskRequests { [weak self] requests in
            let rows = requests.map { request -> String in
                let kind = request is BGProcessingTaskRequest ? "processing" : "refresh"
                let date = request.earliestBeginDate.map { DateFormatter.localizedString(from: $0, dateStyle: .short, timeStyle: .medium) } ?? "asap"
                return "\(request.identifier) (\(kind)) \(date)"
            }
            DispatchQueue.main.async {
                self?.rows = rows
            }
        }
    }

    func reloadAsync() async {
        let requests = await BGTaskScheduler.shared.pendingTaskRequests()
        rows = requests.map(\.identifier).sorted()
        let backup = requests.first(where: { $0.identifier == PhotoBackupScheduler.identifier }) as? BGProcessingTaskRequest
        backupNeedsPower = backup?.requiresExternalPower
    }

    func reset() {
        BGTaskScheduler.shared.cancelAllTaskRequests()
        Task { await reloadAsync() }
    }
}

// MARK: 7. A settings screen's Background App Refresh row, kept current by the status
// notification

@MainActor
final class BackgroundRefreshSettingsModel {
    enum Row: Equatable { case on, offInSettings, restrictedByDevice, unknown }
    private(set) var row: Row = .unknown
    private var observer: (any NSObjectProtocol)?

    func start() {
        update()
        observer = NotificationCenter.default.addObserver(forName: UIApplication.backgroundRefreshStatusDidChangeNotification, object: nil, queue: .main) { [weak self] _ in
            MainActor.assumeIsolated {
                self?.update()
            }
        }
    }

    func stop() {
        if let observer { NotificationCenter.default.removeObserver(observer) }
        observer = nil
    }

    func update() {
        switch UIApplication.shared.backgroundRefreshStatus {
        case .available:
            row = .on
        case .denied:
            row = .offInSettings
        case .restricted:
            row = .restrictedByDevice
        @unknown default:
            row = .unknown
        }
    }

    var canScheduleRefresh: Bool {
        UIApplication.shared.backgroundRefreshStatus == .available
    }

    func scheduleIfAllowed(_ request: BGAppRefreshTaskRequest) {
        guard UIApplication.shared.backgroundRefreshStatus != .denied else {
            print("Background App Refresh is off: not scheduling \(request.identifier)")
            return
        }
        try? BGTaskScheduler.shared.submit(request)
    }
}

// MARK: 8. Draining an upload queue while background time lasts

@MainActor
final class OutboxUploader {
    private let logger = Logger(subsystem: "com.example.mail", category: "Outbox")
    private var pending: [String] = []
    private var backgroundTask: UIBackgroundTaskIdentifier = .invalid

    func enqueue(_ message: String) { pending.append(message) }

    func applicationDidEnterBackground() {
        guard !pending.isEmpty else { return }
        backgroundTask = UIApplication.shared.beginBackgroundTask(withName: "Outbox") { [weak self] in
            self?.logger.notice("Outbox flush expired with \(self?.pending.count ?? 0) left")
            self?.finish()
        }
        flush()
    }

    private func flush() {
        while !pending.isEmpty, UIApplication.shared.backgroundTimeRemaining > 5 {
            let message = pending.removeFirst()
            logger.debug("sent \(message, privacy: .private), \(UIApplication.shared.backgroundTimeRemaining, format: .fixed(precision: 1)) s left")
        }
        finish()
    }

    private func finish() {
        guard backgroundTask != .invalid else { return }
        UIApplication.shared.endBackgroundTask(backgroundTask)
        backgroundTask = .invalid
    }

    var isRunningOutOfTime: Bool {
        let remaining = UIApplication.shared.backgroundTimeRemaining
        return remaining != .greatestFiniteMagnitude && remaining < 10
    }
}

// MARK: 9. An expiration flag shared with the handler's work under an unfair lock (iOS 16's
// OSAllocatedUnfairLock, from `import os`)

enum IndexRebuild {
    static let identifier = "com.example.notes.reindex"

    static func register() {
        BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { task in
            handle(task as! BGProcessingTask)
        }
    }

    static func handle(_ task: BGProcessingTask) {
        let expired = OSAllocatedUnfairLock(initialState: false)
        let processed = OSAllocatedUnfairLock<Int>(initialState: 0)
        task.expirationHandler = {
            expired.withLock { $0 = true }
        }
        DispatchQueue.global(qos: .utility).async {
            for _ in 0..<100 {
                if expired.withLock({ $0 }) { break }
                processed.withLock { $0 += 1 }
            }
            let done = processed.withLock { $0 } == 100
            task.setTaskCompleted(success: done)
        }
    }
}

final class ThrottledScheduler: Sendable {
    private let lastSubmission = OSAllocatedUnfairLock<Date?>(initialState: nil)
    private let lock = OSAllocatedUnfairLock()

    func submitIfDue(_ request: BGTaskRequest) {
        let due = lastSubmission.withLock { last -> Bool in
            if let last, Date().timeIntervalSince(last) < 60 { return false }
            last = Date()
            return true
        }
        guard due else { return }
        lock.lock()
        defer { lock.unlock() }
        try? BGTaskScheduler.shared.submit(request)
    }
}

// MARK: 10. Logging in handlers: Logger with privacy and formats, os_log with interpolation,
// an OSLog per category in an extension

extension OSLog {
    private static let subsystem = "com.example.podcasts"
    static let background = OSLog(subsystem: subsystem, category: "background")
}

enum EpisodeRefresh {
    static let logger = Logger(subsystem: "com.example.podcasts", category: String(describing: EpisodeRefresh.self))

    static func handle(_ task: BGAppRefreshTask, started: Date) {
        logger.log("Started \(task.identifier, privacy: .public) at \(started, privacy: .public)")
        logger.info("Task object \(task), type \(type(of: task))")
        os_log("Refresh %{public}@ started", log: .background, type: .debug, task.identifier)
        os_log(.info, log: .background, "Refresh \(task.identifier, privacy: .public) took \(Date().timeIntervalSince(started), format: .fixed(precision: 2)) s")
        task.setTaskCompleted(success: true)
    }

    static func failed(_ error: any Error, request: BGTaskRequest) {
        logger.error("Submit of \(request, privacy: .public) failed: \(error as NSError, privacy: .public)")
        logger.fault("code \((error as NSError).code, privacy: .public) in \((error as NSError).domain, privacy: .public)")
        os_log("Submit failed: \(error.localizedDescription)")
    }
}

// MARK: 11. A sync handler that waits for protected data (apps with Data Protection)

@MainActor
final class ProtectedSyncDelegate: UIResponder, UIApplicationDelegate {
    private var pendingSync: BGAppRefreshTask?

    func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?) -> Bool {
        BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.vault.sync", using: nil) { task in
            self.handleSync(task as! BGAppRefreshTask)
        }
        return true
    }

    func handleSync(_ task: BGAppRefreshTask) {
        guard UIApplication.shared.isProtectedDataAvailable else {
            // The database is protected with .complete: wait until the device is unlocked.
            pendingSync = task
            task.expirationHandler = { [weak self] in
                self?.pendingSync = nil
                task.setTaskCompleted(success: false)
            }
            return
        }
        task.setTaskCompleted(success: true)
    }

    func applicationProtectedDataDidBecomeAvailable(_ application: UIApplication) {
        guard let task = pendingSync else { return }
        pendingSync = nil
        handleSync(task)
    }

    func applicationProtectedDataWillBecomeUnavailable(_ application: UIApplication) {
        pendingSync?.setTaskCompleted(success: false)
        pendingSync = nil
    }

    func observeProtectedData() -> [any NSObjectProtocol] {
        [
            NotificationCenter.default.addObserver(forName: UIApplication.protectedDataWillBecomeUnavailableNotification, object: nil, queue: .main) { _ in
                print("closing the database")
            },
            NotificationCenter.default.addObserver(forName: UIApplication.protectedDataDidBecomeAvailableNotification, object: nil, queue: .main) { _ in
                print("reopening the database")
            },
        ]
    }
}

// MARK: 12. A background assertion around async work, as Swift concurrency code wraps it

@MainActor
final class BackgroundTaskHandle {
    private var identifier: UIBackgroundTaskIdentifier = .invalid

    init(name: String) {
        identifier = UIApplication.shared.beginBackgroundTask(withName: name) { [weak self] in
            self?.end()
        }
    }

    func end() {
        guard identifier != .invalid else { return }
        UIApplication.shared.endBackgroundTask(identifier)
        identifier = .invalid
    }
}

extension UIApplication {
    @MainActor
    func performWithBackgroundTime<T>(_ name: String = #function, operation: () async throws -> T) async rethrows -> T {
        let handle = BackgroundTaskHandle(name: name)
        defer { handle.end() }
        return try await operation()
    }
}

@MainActor
func saveDraftOnBackground(_ save: () async throws -> Void) async {
    do {
        try await UIApplication.shared.performWithBackgroundTime("SaveDraft") {
            try await save()
        }
    } catch {
        Logger().error("Saving the draft failed: \(error.localizedDescription)")
    }
}

// MARK: 13. An app-refresh scheduler that keeps one request, from its own serial queue
// (Mastodon clients' notification refresh shape)

final class NotificationsRefreshScheduler: @unchecked Sendable {
    // @unchecked: `queue` serializes every mutable access.
    static let shared = NotificationsRefreshScheduler()
    let identifier = "com.example.mastodon.notifications-refresh"
    private let queue = DispatchQueue(label: "com.example.mastodon.bgtasks")
    private var isRegistered = false

    func registerOnce() {
        queue.sync {
            guard !isRegistered else { return }
            isRegistered = BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: queue) { [unowned self] task in
                self.schedule(after: 20 * 60)
                let refresh = Task.detached(priority: .background) {
                    try Task.checkCancellation()
                    return 3
                }
                task.expirationHandler = { refresh.cancel() }
                Task {
                    let count = try? await refresh.value
                    task.setTaskCompleted(success: count != nil)
                }
            }
        }
    }

    func schedule(after interval: TimeInterval) {
        BGTaskScheduler.shared.getPendingTaskRequests { [identifier] pending in
            guard !pending.contains(where: { $0.identifier == identifier }) else { return }
            let request = BGAppRefreshTaskRequest(identifier: identifier)
            request.earliestBeginDate = .init(timeIntervalSinceNow: interval)
            do {
                try BGTaskScheduler.shared.submit(request)
            } catch let error as BGTaskScheduler.Error where error.code == .tooManyPendingTaskRequests {
                BGTaskScheduler.shared.cancel(taskRequestWithIdentifier: identifier)
            } catch {
                print(error)
            }
        }
    }
}
