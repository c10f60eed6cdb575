import Dispatch
import Foundation
import SchedulerCore

// The pre-iOS 13 background fetch API, mapped onto app refresh (docs/porting.md):
//
// - `setMinimumBackgroundFetchInterval(i)` keeps one app-refresh request pending for the
//   identifier `<app>.background-fetch`, due `i` seconds after it is set and, after every
//   fetch, `max(i, 15 min)` after that fetch began (the system never fetches back to back;
//   15 minutes is the least iOS is seen to allow, and what Apple advises for refresh);
//   `backgroundFetchIntervalNever` cancels it.
// - When the request runs, the handler given to `setBackgroundFetchHandler` (the app
//   delegate's `application(_:performFetchWithCompletionHandler:)`) is called; the
//   `UIBackgroundFetchResult` it reports completes the task: `.failed` as a failure,
//   `.newData` and `.noData` as a success.
// - A manifest whose `UIBackgroundModes` has `fetch` permits the fetch identifier without
//   listing it, as iOS needs no identifier for the old API. The request takes the app's one
//   pending app-refresh slot. A manifest that lists `BGTaskSchedulerPermittedIdentifiers`
//   of its own turns the old API off, as on iOS 13 and later: the call does nothing, a
//   request kept from before is cancelled, and the identifier is not permitted.

/// The legacy fetch settings of one app.
struct BackgroundFetchState {
    /// The interval set, `nil` for never (the default, as on iOS).
    var interval: TimeInterval?
    /// The app delegate's `performFetchWithCompletionHandler`.
    var handler: (@isolated(any) @Sendable (@escaping @Sendable (UIBackgroundFetchResult) -> Void) -> Void)?
}

/// A fetch handler and its completion handler.
struct FetchHandlerCall: AppCall, @unchecked Sendable {
    // @unchecked: both members are Sendable closures (see LaunchHandlerCall).
    let body: @isolated(any) @Sendable (@escaping @Sendable (UIBackgroundFetchResult) -> Void) -> Void
    let completion: @Sendable (UIBackgroundFetchResult) -> Void
    var isolation: (any Actor)? { body.isolation }
    nonisolated(nonsending) func call() async { await body(completion) }
}

extension BGApplication {
    /// The smallest fetch interval: fetch as often as the system allows (Apple:
    /// `UIApplication.backgroundFetchIntervalMinimum`).
    public static let backgroundFetchIntervalMinimum: TimeInterval = 0
    /// An interval that stops fetches (Apple: `UIApplication.backgroundFetchIntervalNever`,
    /// the default).
    public static let backgroundFetchIntervalNever: TimeInterval = .greatestFiniteMagnitude

    /// The least time between two fetches, whatever the interval (``backgroundFetchIntervalMinimum``
    /// included): 15 minutes.
    public static let backgroundFetchRepeatFloor: TimeInterval = 15 * 60

    /// The identifier of the app-refresh request the legacy fetch API keeps pending:
    /// `<app id>.background-fetch` (ask `bgtask why` about it).
    public var backgroundFetchTaskIdentifier: String { Self.backgroundFetchTaskIdentifier(for: requiredContext.app) }

    static func backgroundFetchTaskIdentifier(for app: AppID) -> String { app.rawValue + ".background-fetch" }

    /// Asks for background fetches at most every `minimumBackgroundFetchInterval` seconds
    /// (Apple: `setMinimumBackgroundFetchInterval(_:)`): keeps an app-refresh request
    /// pending, due that long from now, and after each fetch due that long (at least
    /// ``backgroundFetchRepeatFloor``) after it began; ``backgroundFetchIntervalNever`` cancels it. The
    /// manifest needs `fetch` in `UIBackgroundModes`. A refused request (not permitted,
    /// the app's refresh slot taken, Background App Refresh off) is logged as an error
    /// naming the cause. NaN or a negative interval is refused with an error naming the value.
    /// An app whose manifest lists `BGTaskSchedulerPermittedIdentifiers` gets no fetches,
    /// as on iOS 13 and later: the call does nothing but log a warning.
    public func setMinimumBackgroundFetchInterval(_ minimumBackgroundFetchInterval: TimeInterval) {
        let context = requiredContext
        let interval = minimumBackgroundFetchInterval
        guard !interval.isNaN, interval >= 0 else {
            context.driver.log(.error, app: context.app, "setMinimumBackgroundFetchInterval(\(interval)): the interval must be a number of seconds >= 0 (or backgroundFetchIntervalNever); ignored")
            return
        }
        // Apple: "Adding a BGTaskSchedulerPermittedIdentifiers key to the Info.plist disables
        // the application(_:performFetchWithCompletionHandler:) and
        // setMinimumBackgroundFetchInterval(_:) calls in iOS 13 and later." An app that moved
        // to BGTaskScheduler and kept this call must not lose its one refresh slot to it (an
        // outside probe: its BGAppRefreshTaskRequest was then refused as one too many).
        guard !context.manifest.listsTaskIdentifiersOfItsOwn(app: context.app) else {
            context.driver.log(.warning, app: context.app, "setMinimumBackgroundFetchInterval(\(interval)) does nothing: the app's manifest lists BGTaskSchedulerPermittedIdentifiers, which turns background fetch off as on iOS 13 and later (application(_:performFetchWithCompletionHandler:) is not called); submit a BGAppRefreshTaskRequest instead")
            // A fetch request kept from a launch before the list was added would hold the
            // app's one refresh slot for a handler that is never called.
            let key = RequestKey(app: context.app, identifier: backgroundFetchTaskIdentifier)
            if context.driver.pendingRequests(of: context.app).contains(where: { $0.key == key }) { context.driver.cancel(key) }
            return
        }
        let identifier = backgroundFetchTaskIdentifier
        guard interval < Self.backgroundFetchIntervalNever, interval.isFinite else {
            fetch.withLock { $0.interval = nil }
            context.driver.cancel(RequestKey(app: context.app, identifier: identifier))
            return
        }
        fetch.withLock { $0.interval = interval }
        let application = self
        context.scheduler.registerInternally(forTaskWithIdentifier: identifier) { task in
            application.performBackgroundFetch(task)
        }
        submitBackgroundFetch(after: interval)
    }

    /// Sets the app delegate's `application(_:performFetchWithCompletionHandler:)`: called
    /// when a background fetch runs; call its completion handler once with what the fetch
    /// found. Like a launch handler, it runs on the actor it was written in (the main
    /// actor, in a `@MainActor` app delegate), else on the app's handler queue.
    @preconcurrency
    public func setBackgroundFetchHandler(
        @_inheritActorContext _ handler: @escaping @isolated(any) @Sendable (_ completionHandler: @escaping @Sendable (UIBackgroundFetchResult) -> Void) -> Void
    ) {
        fetch.withLock { $0.handler = handler }
    }

    /// Removes the fetch handler (fetches then complete as failed, with an error logged).
    public func removeBackgroundFetchHandler() {
        fetch.withLock { $0.handler = nil }
    }

    /// The interval set by ``setMinimumBackgroundFetchInterval(_:)``; `nil` for never.
    public var minimumBackgroundFetchInterval: TimeInterval? { fetch.withLock { $0.interval } }

    /// Submits the fetch request due `interval` seconds from the driver's now (relative, so
    /// it needs no wall-clock translation in the simulator).
    private func submitBackgroundFetch(after interval: TimeInterval) {
        let context = requiredContext
        let now = context.driver.clock.now()
        let request = PendingRequest(
            app: context.app, identifier: backgroundFetchTaskIdentifier, kind: .appRefresh,
            earliestBeginDate: interval > 0 ? now.addingTimeInterval(interval) : nil, submittedAt: now)
        do {
            try context.driver.submit(request)
        } catch {
            context.driver.log(.error, app: context.app, "background fetch not scheduled: \(error)")
        }
    }

    /// A fetch request ran: schedule the next one first (as iOS keeps fetching), then call
    /// the app's handler and complete the task with its result.
    private func performBackgroundFetch(_ task: BGTask) {
        let context = requiredContext
        let (interval, handler) = fetch.withLock { ($0.interval, $0.handler) }
        if let interval { submitBackgroundFetch(after: max(interval, Self.backgroundFetchRepeatFloor)) }
        guard let handler else {
            context.driver.log(.error, app: context.app, "a background fetch ran but no fetch handler is set: call UIApplication.shared.setBackgroundFetchHandler { completion in ... } before finishLaunching(); the run is recorded as failed")
            task.setTaskCompleted(success: false)
            return
        }
        let completion: @Sendable (UIBackgroundFetchResult) -> Void = { result in
            task.setTaskCompleted(success: result != .failed)
        }
        context.invoke(
            FetchHandlerCall(body: handler, completion: completion),
            otherwiseOn: context.defaultHandlerQueue,
            what: "the background fetch handler")
    }
}
