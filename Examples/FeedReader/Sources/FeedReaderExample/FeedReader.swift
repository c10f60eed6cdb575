import BackgroundTasks
import Foundation
import Synchronization
import SchedulerCore

/// The example app: a feed reader written as an iOS developer writes one.
///
/// - `com.example.feedreader.refresh` (app refresh): every 15 minutes, fetch new articles
///   so the feed is fresh when the user opens the app; resubmitted first thing in the handler.
/// - `com.example.feedreader.cleanup` (processing, needs network and power): nightly,
///   prune old articles and re-index, in chunks, saving a checkpoint so an expired run
///   resumes where it stopped.
/// - On entering the background, an assertion buys time to save the draft being written.
///
/// The network and the passage of work time are injected (``FeedService``, a `Clock`),
/// so the same code runs for real and in the simulator.
public final class FeedReader: Sendable {
    /// The refresh task's identifier.
    public static let refreshIdentifier = "com.example.feedreader.refresh"
    /// The clean-up task's identifier.
    public static let cleanupIdentifier = "com.example.feedreader.cleanup"
    /// What the app declares in its Info.plist.
    public static let manifest = AppManifest(
        appID: AppID("com.example.feedreader"),
        permittedIdentifiers: [refreshIdentifier, cleanupIdentifier],
        backgroundModes: ["fetch", "processing"],
        source: "FeedReader Info.plist"
    )
    /// How often the feed is refreshed.
    public static let refreshInterval: TimeInterval = 15 * 60
    /// Articles the clean-up processes per chunk (each chunk saves a checkpoint).
    public static let cleanupChunk = 500

    private let service: any FeedService
    private let draftUploaded = Mutex<(@Sendable () -> Void)?>(nil)

    /// Called when a draft upload finished (the executable prints it).
    public var onDraftUploaded: (@Sendable () -> Void)? {
        get { draftUploaded.withLock { $0 } }
        set { draftUploaded.withLock { $0 = newValue } }
    }
    private let workClock: any Clock<Duration>
    /// The articles and drafts the app keeps.
    public let database: FeedDatabase

    /// Creates the app over a feed service, the clock its work takes time on, and its data.
    public init(service: any FeedService, workClock: any Clock<Duration>, database: FeedDatabase = FeedDatabase()) {
        self.service = service
        self.workClock = workClock
        self.database = database
    }

    // MARK: App delegate

    /// `application(_:didFinishLaunchingWithOptions:)`: register every handler, then
    /// schedule.
    public func didFinishLaunching() {
        BGTaskScheduler.shared.register(forTaskWithIdentifier: Self.refreshIdentifier, using: nil) { task in
            self.handleAppRefresh(task as! BGAppRefreshTask)
        }
        BGTaskScheduler.shared.register(forTaskWithIdentifier: Self.cleanupIdentifier) { task in
            await self.handleCleanup(task as! BGProcessingTask)
        }
        // A silent push (`bgtask push com.example.feedreader` under bgtaskd): fetch now.
        UIApplication.shared.setRemoteNotificationHandler { _, completionHandler in
            _ = self.service.fetchLatest(since: self.database.newestArticleDate) { result in
                switch result {
                case .success(let articles):
                    self.database.insert(articles)
                    completionHandler(articles.isEmpty ? .noData : .newData)
                case .failure:
                    completionHandler(.failed)
                }
            }
        }
        scheduleAppRefresh()
        scheduleCleanup()
    }

    /// `applicationDidEnterBackground(_:)`: finish saving the draft under an assertion.
    public func didEnterBackground() {
        let application = UIApplication.shared
        let saveTask = Mutex(UIBackgroundTaskIdentifier.invalid)
        let identifier = application.beginBackgroundTask(withName: "Save draft") {
            // Expiration: keep it tiny. Give up the upload, end the assertion.
            application.endBackgroundTask(saveTask.withLock { id in defer { id = .invalid }; return id })
        }
        saveTask.withLock { $0 = identifier }
        database.saveDraftLocally()
        service.uploadDraft(database.draft) { uploaded in
            if uploaded { self.onDraftUploaded?() }
            let id = saveTask.withLock { id in defer { id = .invalid }; return id }
            if id != .invalid { application.endBackgroundTask(id) }
        }
    }

    // MARK: Scheduling

    /// Asks for the next refresh in 15 minutes.
    public func scheduleAppRefresh() {
        let request = BGAppRefreshTaskRequest(identifier: Self.refreshIdentifier)
        request.earliestBeginDate = Date(timeIntervalSinceNow: Self.refreshInterval)
        do {
            try BGTaskScheduler.shared.submit(request)
        } catch {
            print("Could not schedule app refresh: \(error)")
        }
    }

    /// Asks for the nightly clean-up: needs network and external power.
    public func scheduleCleanup() {
        let request = BGProcessingTaskRequest(identifier: Self.cleanupIdentifier)
        request.requiresNetworkConnectivity = true
        request.requiresExternalPower = true
        request.earliestBeginDate = Date(timeIntervalSinceNow: 6 * 3600)
        do {
            try BGTaskScheduler.shared.submit(request)
        } catch {
            print("Could not schedule clean-up: \(error)")
        }
    }

    // MARK: Handlers

    /// Refresh: reschedule first, fetch, complete; cancel the fetch on expiration.
    func handleAppRefresh(_ task: BGAppRefreshTask) {
        scheduleAppRefresh()
        let fetch = service.fetchLatest(since: database.newestArticleDate) { result in
            switch result {
            case .success(let articles):
                self.database.insert(articles)
                task.setTaskCompleted(success: true)
            case .failure:
                task.setTaskCompleted(success: false)
            }
        }
        task.expirationHandler = {
            fetch.cancel()
        }
    }

    /// Clean-up: resumes from the checkpoint, processes chunks of articles, saves the
    /// offset after each, and stops at expiration (the async handler's task is cancelled).
    func handleCleanup(_ task: BGProcessingTask) async -> Bool {
        scheduleCleanup()
        let checkpoints = BGTaskScheduler.shared.checkpoints
        var offset = (try? checkpoints.load(Int.self, forKey: "cleanup.offset")) ?? 0
        let total = database.articleCount
        do {
            while offset < total {
                try await workClock.sleep(for: .seconds(45))  // re-indexing one chunk takes time
                offset = min(total, offset + Self.cleanupChunk)
                try checkpoints.save(offset, forKey: "cleanup.offset")
            }
        } catch {
            return false  // expired: the checkpoint says where to resume
        }
        database.pruneOlderThan(days: 30, now: Date())
        try? checkpoints.remove(forKey: "cleanup.offset")
        return true
    }
}

/// A cancellable piece of work (a network request).
public protocol Cancellable: Sendable {
    /// Stops the work; its completion reports a failure.
    func cancel()
}

/// Where articles come from: a real server, or the simulator's network.
public protocol FeedService: Sendable {
    /// Fetches articles newer than `since`; calls `completion` once.
    func fetchLatest(since: Date?, completion: @escaping @Sendable (Result<[Article], any Error>) -> Void) -> any Cancellable
    /// Uploads the user's draft; calls `completion` once.
    func uploadDraft(_ draft: String, completion: @escaping @Sendable (Bool) -> Void)
}

/// One article of the feed.
public struct Article: Hashable, Sendable, Codable {
    /// The title.
    public var title: String
    /// When it was published.
    public var published: Date

    /// Creates an article.
    public init(title: String, published: Date) {
        self.title = title
        self.published = published
    }
}

/// The app's data: articles and a draft.
public final class FeedDatabase: Sendable {
    private struct State {
        var articles: [Article] = []
        var draft = "Dear editor,"
        var savedDrafts = 0
    }

    private let state = Mutex(State())

    /// Creates an empty database (pre-filled with a backlog for the clean-up to process).
    public init(backlog: Int = 2_000) {
        state.withLock { state in
            state.articles = (0..<backlog).map { Article(title: "Backlog \($0)", published: Date(timeIntervalSinceReferenceDate: Double($0))) }
        }
    }

    /// Number of articles kept.
    public var articleCount: Int { state.withLock { $0.articles.count } }
    /// The newest article's date.
    public var newestArticleDate: Date? { state.withLock { $0.articles.map(\.published).max() } }
    /// The draft being written.
    public var draft: String { state.withLock { $0.draft } }
    /// How many times the draft was saved.
    public var savedDrafts: Int { state.withLock { $0.savedDrafts } }

    /// Adds fetched articles.
    public func insert(_ articles: [Article]) { state.withLock { $0.articles += articles } }

    /// Writes the draft to local storage.
    public func saveDraftLocally() { state.withLock { $0.savedDrafts += 1 } }

    /// Drops articles older than `days`.
    public func pruneOlderThan(days: Int, now: Date) {
        let limit = now.addingTimeInterval(-Double(days) * 86_400)
        state.withLock { $0.articles.removeAll { $0.published < limit && $0.title.hasPrefix("Backlog") } }
    }
}
