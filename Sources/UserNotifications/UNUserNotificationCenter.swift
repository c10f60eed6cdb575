import BackgroundTasks
import Dispatch
import Foundation
import Synchronization

/// What an app's notification delegate is told (Apple: `UNUserNotificationCenterDelegate`).
/// Every method has a default, as Apple's are optional; implement the ones you need with
/// Apple's signatures (with or without `@Sendable` on the completion handler). The center
/// calls them on the main actor, as iOS does; the protocol itself is not isolated (a
/// main-actor delegate in Swift 6 mode writes `nonisolated` or the `async` forms, as on iOS).
public protocol UNUserNotificationCenterDelegate: AnyObject {
    /// A notification arrived while the app is in the foreground: how to present it (an
    /// empty set: not at all). Called for every notification delivered in the foreground.
    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification, withCompletionHandler completionHandler: @escaping @Sendable (UNNotificationPresentationOptions) -> Void)
    /// The same, in its `async` form (the center calls this one; by default it calls the
    /// completion-handler form).
    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification) async -> UNNotificationPresentationOptions
    /// The user acted on a notification. Linux shows notifications as lines that no one
    /// taps: called when `bgtask respond` or
    /// ``UNUserNotificationCenter/simulateResponse(toNotificationWithIdentifier:actionIdentifier:userText:)``
    /// stands for the user.
    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse, withCompletionHandler completionHandler: @escaping @Sendable () -> Void)
    /// The same, in its `async` form.
    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async
    /// The user asked for the app's notification settings. Never called on Linux.
    func userNotificationCenter(_ center: UNUserNotificationCenter, openSettingsFor notification: UNNotification?)
}

/// The defaults: a notification in the foreground is not presented (as on iOS without a
/// delegate), a response is acknowledged, and the `async` forms call the completion-handler
/// forms, on the main actor.
extension UNUserNotificationCenterDelegate {
    /// Not presented: completes with no options.
    public func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification, withCompletionHandler completionHandler: @escaping @Sendable (UNNotificationPresentationOptions) -> Void) {
        completionHandler([])
    }

    /// Calls the completion-handler form and returns the first answer it gives (an app
    /// that calls its handler twice does not trap: the first call counts, as on iOS).
    @MainActor
    public func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification) async -> UNNotificationPresentationOptions {
        await withCheckedContinuation { continuation in
            let pending = Mutex<CheckedContinuation<UNNotificationPresentationOptions, Never>?>(continuation)
            userNotificationCenter(center, willPresent: notification) { options in
                pending.withLock { waiting in
                    defer { waiting = nil }
                    return waiting
                }?.resume(returning: options)
            }
        }
    }

    /// Acknowledged: completes at once.
    public func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse, withCompletionHandler completionHandler: @escaping @Sendable () -> Void) {
        completionHandler()
    }

    /// Calls the completion-handler form and returns when it is called.
    @MainActor
    public func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {
        await withCheckedContinuation { continuation in
            let pending = Mutex<CheckedContinuation<Void, Never>?>(continuation)
            userNotificationCenter(center, didReceive: response) {
                pending.withLock { waiting in
                    defer { waiting = nil }
                    return waiting
                }?.resume()
            }
        }
    }

    /// Nothing.
    public func userNotificationCenter(_ center: UNUserNotificationCenter, openSettingsFor notification: UNNotification?) {}
}

/// The app's notification center (Apple: `UNUserNotificationCenter`): local notifications
/// scheduled by time interval or calendar date, delivered on the scheduler's clock.
///
/// Linux has no banners and no one to tap them: a notification delivered while the app is
/// in the background (or presented by the delegate in the foreground) is shown as one line
/// on standard error (`bgtask notification [app] "identifier": title — body`) and kept in
/// ``getDeliveredNotifications(completionHandler:)``; its badge is applied. The user's tap
/// or action is ``simulateResponse(toNotificationWithIdentifier:actionIdentifier:userText:)``
/// (or `bgtask respond`). In the
/// foreground the delegate's `willPresent` decides, as on iOS. The user's answer to
/// ``requestAuthorization(options:completionHandler:)`` is "allowed" (`BGTASK_NOTIFICATIONS=denied`
/// in the app's environment answers as a user who refused) and is kept between launches
/// in the app's state directory, as the pending requests are: one whose moment came while
/// the app was not running is delivered, late, when a later launch first uses the center
/// (docs/porting.md, "Local notifications").
open class UNUserNotificationCenter: NSObject, @unchecked Sendable {
    // @unchecked: every mutable member is in `state`, behind its mutex; the host is Sendable.
    // App code (the delegate, completion handlers) is never called under the lock.

    private struct State {
        var schedule = NotificationSchedule()
        var timers: [String: any DriverTimer] = [:]
        var authorization: UNAuthorizationStatus = .notDetermined
        var authorizedOptions: UNAuthorizationOptions = []
        var categories: Set<UNNotificationCategory> = []
        /// Whether this process set the categories (then those kept by an earlier launch are
        /// not taken).
        var categoriesSet = false
        /// The response the launch was for, once made (``launchResponse()``).
        var launchResponse: UNNotificationResponse?
        /// This process's changes to the delivered list since it last met the file's: applied
        /// again to the file's list at the next update, so that the list the app's processes
        /// share loses none of them (only while the file is kept).
        var deliveredChanges: [DeliveredChange] = []
        /// The requests whose `userInfo` could not be kept, already warned about.
        var warnedUnkeptUserInfo: Set<String> = []
        /// The next try at keeping the pending requests, armed while another process holds
        /// the file's lock (kept here: a timer nobody holds is cancelled, and the change would
        /// never be written), and the number of the latest one armed.
        var keepRetry: (armed: Int, timer: (any DriverTimer)?)?
        var keepRetriesArmed = 0
        /// The tries that found the lock held since the last write (the next waits 2^n seconds,
        /// at most a minute: each try waits up to a second for the lock on the completion queue).
        var keepTriesRefused = 0
    }

    /// A change to the delivered list.
    private enum DeliveredChange {
        case added(UNNotification)
        case removed(Set<String>)
        case removedAll
    }

    private let host: any NotificationHost
    private let state = Mutex(State())
    /// Whether what earlier launches kept (the answer, the pending requests) was loaded; held
    /// for the whole load (taken before `state`, never under it), so that no thread sees the
    /// center before it: the file I/O happens here, never under `state`.
    private let loadedKeptState = Mutex(false)
    private let delegateBox = Mutex(WeakDelegate())
    /// Held while the answer's or the categories' file is written (taken before `state`,
    /// never under it): each write takes the latest state under it, so that of two threads
    /// changing them at once the later change is the one kept, not whichever write came last.
    private let keepingFiles = Mutex(())

    init(host: any NotificationHost) {
        self.host = host
        super.init()
    }

    /// The notification center of the app whose code is running (the process's app, or
    /// the app the simulator is running).
    open class func current() -> UNUserNotificationCenter {
        let center = BGAppContext.resolve().service(UNUserNotificationCenter.self) { context in
            UNUserNotificationCenter(host: AppNotificationHost(context: context))
        }
        center.loadKeptState()
        return center
    }

    /// Loads, once, what earlier launches of the app kept: the user's answer (which the
    /// user's switch, `BGTASK_NOTIFICATIONS`, overrides as the switch in Settings overrides
    /// the prompt's answer on iOS), then the pending requests: those whose moment passed
    /// while the app was not running are delivered now (late, and said so), the others are
    /// armed again. Every public entry point calls it first; after the first, it costs a lock.
    func loadKeptState() {
        loadedKeptState.withLock { done in
            guard !done else { return }
            loadKeptAuthorization()
            loadKeptCategories()
            restoreKeptRequests()
            done = true
        }
    }

    /// The categories an earlier launch set, unless this process has set its own: a response
    /// that launched the app finds its actions before the app registers them again, as on iOS.
    private func loadKeptCategories() {
        guard let saved = host.savedCategories() else { return }
        let categories = Set(saved.map(\.category))
        state.withLock { state in
            guard !state.categoriesSet else { return }
            state.categories = categories
        }
    }

    /// The answer an earlier launch kept, with the user's switch applied.
    private func loadKeptAuthorization() {
        guard let saved = host.savedAuthorization(), let kept = saved.applying(userSwitch: host.userSwitch) else { return }
        let overridden = kept.overridden
        state.withLock { state in
            guard state.authorization == .notDetermined else { return }
            state.authorization = kept.status
            state.authorizedOptions = kept.options
        }
        guard overridden else { return }
        host.report(.info, "BGTASK_NOTIFICATIONS=\(kept.status == .denied ? "denied" : "allowed") overrides the answer kept from an earlier launch (as the switch in Settings does)")
        keepAuthorization()
    }

    /// Writes the answer as it stands now (``keepingFiles``).
    private func keepAuthorization() {
        keepingFiles.withLock { _ in
            let saved = state.withLock { SavedAuthorization(status: $0.authorization.rawValue, options: $0.authorizedOptions.rawValue) }
            host.saveAuthorization(saved)
        }
    }

    /// Puts back the pending requests an earlier launch kept, and takes in what bgtaskd
    /// delivered while no process of the app delivered them (into the delivered list, and the
    /// badge).
    private func restoreKeptRequests() {
        guard host.keepsPending else { return }
        let now = host.now
        var problems: [String] = []
        var due: [(identifier: String, serial: Int, fireDate: Date)] = []
        host.updatePending(orWithoutLock: true) { kept in
            let listChanged = syncDelivered(with: kept, problems: &problems)
            guard !kept.pending.isEmpty || !kept.deliveredWhileAway.isEmpty || kept.badge != nil || listChanged else { return nil }
            let requests = kept.pending.map { ($0, $0.request(problems: &problems)) }
            state.withLock { state in
                for (stored, request) in requests {
                    guard let entry = state.schedule.restore(request, added: stored.added, fireDate: stored.fireDate) else { continue }
                    if entry.fireDate <= now {
                        due.append((request.identifier, entry.serial, entry.fireDate))
                    } else {
                        state.timers[request.identifier] = arm(entry)
                    }
                }
            }
            takeIn(kept, problems: &problems)
            return keptSnapshot()
        }
        for problem in problems { host.report(.warning, problem) }
        for late in due { fire(identifier: late.identifier, serial: late.serial, armedFor: late.fireDate, dueWhileNotRunning: late.fireDate) }
    }

    /// Makes this process's delivered list the file's, with this process's changes since it
    /// last met it applied again (the list the app's processes share, as iOS's Notification
    /// Center is one list). Called under the pending file's lock; returns whether there were
    /// changes to keep.
    private func syncDelivered(with kept: KeptNotifications, problems: inout [String]) -> Bool {
        guard kept.wasRead else {
            // No file to go by: this process's list stands (its changes are in it), and is
            // what gets written.
            return state.withLock { state in
                defer { state.deliveredChanges = [] }
                return !state.deliveredChanges.isEmpty
            }
        }
        // The file's list and what bgtaskd delivered to it (listed) while this process did
        // not: the base this process's changes apply to, so a removal removes those too.
        let stored = kept.delivered + kept.deliveredWhileAway.filter(\.listed)
        // The objects this process holds already are kept as they are (their userInfo and
        // attachments as the app made them); only the others are made from the file.
        let held = state.withLock { $0.schedule.delivered }
        var byKey: [String: UNNotification] = [:]
        for notification in held { byKey[Self.key(notification.request.identifier, notification.date)] = notification }
        let base = stored.map { entry in
            byKey[Self.key(entry.request.identifier, entry.date)] ?? UNNotification(date: entry.date, request: entry.request.request(problems: &problems))
        }
        return state.withLock { state in
            state.schedule.replaceDelivered(with: base)
            for change in state.deliveredChanges { Self.apply(change, to: &state.schedule) }
            defer { state.deliveredChanges = [] }
            return !state.deliveredChanges.isEmpty
        }
    }

    private static func key(_ identifier: String, _ date: Date) -> String {
        "\(date.timeIntervalSinceReferenceDate) \(identifier)"
    }

    private static func apply(_ change: DeliveredChange, to schedule: inout NotificationSchedule) {
        switch change {
        case .added(let notification): schedule.recordDelivery(notification)
        case .removed(let identifiers): schedule.removeDelivered(Array(identifiers))
        case .removedAll: schedule.removeAllDelivered()
        }
    }

    /// Changes the delivered list now, and keeps the change for the file (written by the
    /// caller's ``keepPending()``).
    private func changeDelivered(_ change: DeliveredChange) {
        let keeps = host.keepsPending
        state.withLock { state in
            Self.apply(change, to: &state.schedule)
            if keeps { state.deliveredChanges.append(change) }
        }
    }

    /// Takes in what bgtaskd delivered while this process did not (frozen, or not using the
    /// center yet): a pending request it fired moves on as if fired here, without being
    /// presented again; the badge the latest set is applied, as iOS's icon shows it (those the
    /// user allowed in the list joined the delivered list in ``syncDelivered(with:problems:)``,
    /// which comes first). Called under the pending file's lock, before anything is fired or kept.
    private func takeIn(_ kept: KeptNotifications, problems: inout [String]) {
        guard !kept.deliveredWhileAway.isEmpty || kept.badge != nil else { return }
        let inFile = Dictionary(kept.pending.map { ($0.identifier, $0) }, uniquingKeysWith: { first, _ in first })
        for away in kept.deliveredWhileAway {
            let identifier = away.request.identifier
            host.report(.info, "notification \"\(identifier)\" was \(away.listed ? "delivered" : "fired") by bgtaskd at \(away.date): the app did not deliver it")
            state.withLock { state in
                // The same addition still pending here: bgtaskd fired it (once or more), so it
                // takes the moment bgtaskd's firing left in the file, or goes when none is left.
                if let entry = state.schedule.entries[identifier], entry.added == away.request.added {
                    state.timers.removeValue(forKey: identifier)?.cancel()
                    if let left = inFile[identifier], left.added == entry.added {
                        if let moved = state.schedule.move(identifier: identifier, to: left.fireDate) { state.timers[identifier] = arm(moved) }
                    } else {
                        state.schedule.removePending([identifier])
                    }
                }
            }
        }
        if let badge = kept.badge, badge >= 0 { host.setBadge(badge) }
    }

    /// The pending requests and the delivered list as the file keeps them, now; a `userInfo`
    /// a property list cannot hold is said once per request.
    private func keptSnapshot() -> KeptNotifications {
        let (entries, delivered) = state.withLock { ($0.schedule.sortedEntries, $0.schedule.delivered) }
        var problems: [(identifier: String, text: String)] = []
        let stored = entries.map { entry in
            var problem: String?
            defer { if let problem { problems.append((entry.request.identifier, problem)) } }
            return StoredNotificationRequest(entry, problem: &problem)
        }
        let list = delivered.map { notification in
            var problem: String?
            defer { if let problem { problems.append((notification.request.identifier, problem)) } }
            let request = StoredNotificationRequest(notification.request, added: notification.date, fireDate: notification.date, problem: &problem)
            return AwayDelivery(request: request, date: notification.date, listed: true)
        }
        let news = state.withLock { state in problems.filter { state.warnedUnkeptUserInfo.insert($0.identifier).inserted } }
        for problem in news { host.report(.warning, problem.text) }
        return KeptNotifications(pending: stored, delivered: list)
    }

    /// Keeps the pending requests for the next launch (and for bgtaskd), after taking in
    /// what bgtaskd delivered meanwhile: the snapshot is taken under the file's lock, so the
    /// latest change is written last.
    private func keepPending() {
        guard host.keepsPending else { return }
        var problems: [String] = []
        let held = host.updatePending(orWithoutLock: false) { kept in
            _ = syncDelivered(with: kept, problems: &problems)
            takeIn(kept, problems: &problems)
            return keptSnapshot()
        }
        for problem in problems { host.report(.warning, problem) }
        // Not written without the file's lock (it could write over bgtaskd's record of a
        // firing): again after a second, then two, four... up to a minute, until the lock is
        // had; the latest state is what gets written, so one try stands for every change made
        // meanwhile, and a write that went through cancels the try armed before it.
        guard !held else {
            let unneeded = state.withLock { state -> (any DriverTimer)? in
                defer { state.keepRetry = nil; state.keepTriesRefused = 0 }
                return state.keepRetry?.timer
            }
            unneeded?.cancel()
            return
        }
        // Armed outside the center's lock (the clock has its own); the timer is kept unless it
        // already fired, and only while it is the latest.
        guard let (number, delay) = state.withLock({ state -> (Int, TimeInterval)? in
            state.keepTriesRefused += 1
            guard state.keepRetry == nil else { return nil }
            state.keepRetriesArmed += 1
            state.keepRetry = (state.keepRetriesArmed, nil)
            return (state.keepRetriesArmed, min(60, pow(2, Double(min(state.keepTriesRefused, 7) - 1))))
        }) else { return }
        let timer = host.schedule(at: host.now.addingTimeInterval(delay)) { [weak self] in
            guard let self else { return }
            state.withLock { if $0.keepRetry?.armed == number { $0.keepRetry = nil } }
            keepPending()
        }
        state.withLock { if $0.keepRetry?.armed == number { $0.keepRetry?.timer = timer } }
    }

    /// The delegate (held weakly, as on iOS: keep it alive yourself).
    open var delegate: (any UNUserNotificationCenterDelegate)? {
        get { delegateBox.withLock { $0 }.delegate }
        set {
            let reference = WeakDelegate(delegate: newValue)
            delegateBox.withLock { $0 = reference }
        }
    }

    /// Whether notification content extensions run (none on Linux).
    open var supportsContentExtensions: Bool { false }

    // MARK: Authorization

    /// Asks the user to allow notifications with `options`; `completionHandler` gets
    /// whether they are allowed. The first request is answered "allowed" (`provisional`
    /// when asked for) unless `BGTASK_NOTIFICATIONS=denied`; later requests get the same
    /// answer, as iOS asks only once; the answer lasts between launches.
    @preconcurrency
    open func requestAuthorization(options: UNAuthorizationOptions = [], completionHandler: @escaping @Sendable (Bool, (any Error)?) -> Void) {
        let granted = authorize(options)
        host.complete { completionHandler(granted, nil) }
    }

    /// ``requestAuthorization(options:completionHandler:)`` in its `async` form.
    open func requestAuthorization(options: UNAuthorizationOptions = []) async throws -> Bool {
        authorize(options)
    }

    /// The answer to a request for `options`, asked once and kept.
    private func authorize(_ options: UNAuthorizationOptions) -> Bool {
        loadKeptState()
        let (granted, changed) = state.withLock { state -> (Bool, Bool) in
            var changed = true
            if state.authorization == .notDetermined || (state.authorization == .provisional && !options.contains(.provisional)) {
                let allowed = host.userSwitch ?? true
                state.authorization = !allowed ? .denied : options.contains(.provisional) ? .provisional : .authorized
                state.authorizedOptions = allowed ? options : []
            } else if state.authorization != .denied, !state.authorizedOptions.isSuperset(of: options) {
                // Asking again for more: the same user allows the new options too.
                state.authorizedOptions.formUnion(options)
            } else {
                changed = false
            }
            return (state.authorization != .denied, changed)
        }
        if changed { keepAuthorization() }
        return granted
    }

    /// What the app may do.
    @preconcurrency
    open func getNotificationSettings(completionHandler: @escaping @Sendable (UNNotificationSettings) -> Void) {
        let settings = currentSettings()
        host.complete { completionHandler(settings) }
    }

    /// ``getNotificationSettings(completionHandler:)`` in its `async` form.
    open func notificationSettings() async -> UNNotificationSettings {
        currentSettings()
    }

    /// What the app may do, now (UIKit's `currentUserNotificationSettings` reads it).
    package func currentSettings() -> UNNotificationSettings {
        loadKeptState()
        return state.withLock { UNNotificationSettings(status: $0.authorization, options: $0.authorizedOptions) }
    }

    // MARK: Categories

    /// The app's categories (their actions), replacing those set before.
    open func setNotificationCategories(_ categories: Set<UNNotificationCategory>) {
        state.withLock { state in
            state.categories = categories
            state.categoriesSet = true
        }
        // Kept for later launches (sorted: the same set writes the same file), as they stand
        // when written (``keepingFiles``).
        keepingFiles.withLock { _ in
            let latest = state.withLock { $0.categories }
            host.saveCategories(latest.sorted { $0.identifier < $1.identifier }.map(SavedCategory.init))
        }
    }

    /// The app's categories.
    @preconcurrency
    open func getNotificationCategories(completionHandler: @escaping @Sendable (Set<UNNotificationCategory>) -> Void) {
        loadKeptState()
        let categories = state.withLock { $0.categories }
        host.complete { completionHandler(categories) }
    }

    /// ``getNotificationCategories(completionHandler:)`` in its `async` form.
    open func notificationCategories() async -> Set<UNNotificationCategory> {
        loadKeptState()
        return state.withLock { $0.categories }
    }

    // MARK: Scheduling

    /// Schedules `request` (replacing a pending request with its identifier). Fails, as on
    /// iOS, with ``UNError/Code/notificationsNotAllowed`` when the app is not allowed
    /// (it never asked, or was refused), and with ``UNError/Code/notificationInvalidNoDate``
    /// for a trigger that never fires (a time interval of 0 or less, one under 60 s that
    /// repeats, a calendar date that does not come again: iOS raises an exception at the
    /// trigger's creation for the first two). `completionHandler` is called once the request
    /// is kept, on a queue of the center's.
    @preconcurrency
    open func add(_ request: UNNotificationRequest, withCompletionHandler completionHandler: (@Sendable ((any Error)?) -> Void)? = nil) {
        let error = schedule(request)
        if let completionHandler { host.complete { completionHandler(error) } }
    }

    /// ``add(_:withCompletionHandler:)`` in its `async` form.
    open func add(_ request: UNNotificationRequest) async throws {
        if let error = schedule(request) { throw error }
    }

    /// Whether `badge` is a count an icon can show: a whole number from 0 to `Int.max` (read as
    /// the integer it holds when it holds one, so `Int.max` is one; as a double otherwise).
    static func isBadgeCount(_ badge: NSNumber) -> Bool {
        switch String(cString: badge.objCType) {
        case "Q", "L", "I", "S", "C": return Int(exactly: badge.uint64Value) != nil
        case "q", "l", "i", "s", "c": return badge.int64Value >= 0
        default: return (Int(exactly: badge.doubleValue) ?? -1) >= 0
        }
    }

    /// Adds `request` to the schedule and arms its timer; the error refusing it, if any.
    private func schedule(_ request: UNNotificationRequest) -> UNError? {
        loadKeptState()
        let now = host.now
        // A badge is a count the icon shows: a whole number from 0 (none) up, as setBadgeCount
        // takes it. NaN, a fraction, a negative or one past Int.max would set another number.
        if let badge = request.content.badge {
            if !Self.isBadgeCount(badge) {
                let error = UNError(.badgeInputInvalid, message: "notification request \"\(request.identifier)\" refused: its badge \(badge.stringValue) is not a count (a whole number from 0, below 2^63)")
                host.report(.warning, error.message)
                return error
            }
        }
        // Measured as kept, before anything changes: content past the limit would make the
        // pending file too large for the next launch to read back.
        var unkept: String?
        if let size = try? JSONEncoder().encode(StoredNotificationRequest(request, added: now, fireDate: now, problem: &unkept)).count,
           size > PendingNotificationsFile.requestSizeLimit {
            let error = UNError(.notificationInvalidNoContent, message: "notification request \"\(request.identifier)\" refused: its content takes \(size) bytes as kept, more than the \(PendingNotificationsFile.requestSizeLimit) a request may")
            host.report(.warning, error.message)
            return error
        }
        let outcome = state.withLock { state -> Result<(entry: NotificationSchedule.Entry, dropped: [String]), UNError> in
            guard state.authorization == .authorized || state.authorization == .provisional || state.authorization == .ephemeral else {
                let why = state.authorization == .denied ? "the user did not allow them" : "the app has not asked (call requestAuthorization(options:completionHandler:) first)"
                return .failure(UNError(.notificationsNotAllowed, message: "notification request \"\(request.identifier)\" refused: notifications are not allowed for this application: \(why)"))
            }
            switch state.schedule.add(request, at: now) {
            case .refused(let error):
                return .failure(error)
            case .scheduled(let entry, _, let dropped):
                state.timers.removeValue(forKey: request.identifier)?.cancel()
                for identifier in dropped { state.timers.removeValue(forKey: identifier)?.cancel() }
                // Due now (no trigger): delivered below, from this call, as iOS delivers it
                // at once; a timer would let a background process be suspended first.
                if state.schedule.entries[request.identifier] != nil, entry.fireDate > now {
                    state.timers[request.identifier] = arm(entry)
                }
                return .success((entry, dropped))
            }
        }
        switch outcome {
        case .failure(let error):
            host.report(.warning, error.message)
            return error
        case .success(let scheduled):
            if !scheduled.dropped.isEmpty {
                host.report(.warning, "more than \(NotificationSchedule.pendingLimit) notifications pending: \(scheduled.dropped.map { "\"\($0)\"" }.joined(separator: ", ")) (the latest to fire) no longer kept, as on iOS")
            }
            if scheduled.entry.fireDate <= now {
                fire(identifier: request.identifier, serial: scheduled.entry.serial, armedFor: scheduled.entry.fireDate)
            }
            keepPending()
            return nil
        }
    }

    /// A timer for `entry`'s fire date. Called under the lock: the timer's action takes it
    /// again later, on the host's queue, never from inside `schedule`.
    private func arm(_ entry: NotificationSchedule.Entry) -> any DriverTimer {
        let identifier = entry.request.identifier
        let serial = entry.serial
        let moment = entry.fireDate
        return host.schedule(at: entry.fireDate) { [weak self] in
            self?.fire(identifier: identifier, serial: serial, armedFor: moment)
        }
    }

    /// A pending request's moment came: deliver it, and arm its next moment when it repeats.
    /// Under the pending file's lock, what bgtaskd delivered meanwhile is taken in first (a
    /// moment it delivered is not delivered again), and the change is kept before the
    /// delivery: a process that ends right after it does not deliver it again at its next
    /// launch. `dueWhileNotRunning`: a kept request whose moment passed before this launch.
    private func fire(identifier: String, serial: Int, armedFor: Date?, dueWhileNotRunning: Date? = nil) {
        let now = host.now
        var fired: UNNotification?
        var problems: [String] = []
        let fireHere = { [self] in
            fired = state.withLock { state -> UNNotification? in
                guard let (notification, next) = state.schedule.fire(identifier: identifier, serial: serial, armedFor: armedFor, at: now) else { return nil }
                if let next {
                    state.timers[identifier] = arm(next)
                } else {
                    state.timers[identifier] = nil
                }
                return notification
            }
        }
        if host.keepsPending {
            let held = host.updatePending(orWithoutLock: false) { kept in
                let listChanged = syncDelivered(with: kept, problems: &problems)
                takeIn(kept, problems: &problems)
                fireHere()
                return fired == nil && kept.deliveredWhileAway.isEmpty && kept.badge == nil && !listChanged ? nil : keptSnapshot()
            }
            guard held else {
                // The file's lock is held by another (bgtaskd writing a large file, another
                // process of the app): not fired without it, which could fire a moment bgtaskd
                // fired; again in half a second.
                let retry = host.schedule(at: now.addingTimeInterval(0.5)) { [weak self] in
                    self?.fire(identifier: identifier, serial: serial, armedFor: armedFor, dueWhileNotRunning: dueWhileNotRunning)
                }
                state.withLock { $0.timers[identifier] = retry }
                return
            }
        } else {
            fireHere()
        }
        for problem in problems { host.report(.warning, problem) }
        guard let fired else { return }
        deliver(fired, dueWhileNotRunning: dueWhileNotRunning)
    }

    /// Delivers `notification`: in the background it is presented as the user allowed; in
    /// the foreground the delegate decides (no delegate: not presented), on the main actor,
    /// within what the user allowed.
    private func deliver(_ notification: UNNotification, dueWhileNotRunning: Date? = nil) {
        let allowed = state.withLock { Self.allowedPresentation($0) }
        // A notification due while the app was not running was iOS's to show then, not the
        // delegate's now.
        guard host.isInForeground, dueWhileNotRunning == nil else {
            present(notification, options: allowed, inForeground: false, dueWhileNotRunning: dueWhileNotRunning)
            return
        }
        let delegate = self.delegate.map(DelegateReference.init)
        guard let delegate else {
            host.report(.info, "notification \"\(notification.request.identifier)\" arrived in the foreground and was not presented: the center has no delegate (set UNUserNotificationCenter.current().delegate and answer willPresent, as on iOS)")
            return
        }
        host.callOnMainActor("the notification center delegate's userNotificationCenter(_:willPresent:withCompletionHandler:)") { [self] in
            let options = await delegate.object.userNotificationCenter(self, willPresent: notification)
            self.present(notification, options: options.intersection(allowed), inForeground: true)
        }
    }

    /// What the user allowed a notification to do: a banner (`.alert`), a sound, the badge,
    /// each as asked for and granted; a place in the list whenever notifications are
    /// allowed; provisional authorization delivers quietly, to the list only.
    private static func allowedPresentation(_ state: State) -> UNNotificationPresentationOptions {
        NotificationPresentation.allowed(status: state.authorization, options: state.authorizedOptions)
    }

    /// Presents `notification` as `options` say: a banner or the list shows the line, the
    /// list (or an alert, its older name) keeps it as delivered, `.badge` applies its badge.
    private func present(_ notification: UNNotification, options: UNNotificationPresentationOptions, inForeground: Bool, dueWhileNotRunning: Date? = nil) {
        let content = notification.request.content
        if options.contains(.badge), let badge = content.badge {
            host.setBadge(badge.intValue)
        }
        guard NotificationPresentation.isShown(options) else {
            host.report(.info, "notification \"\(notification.request.identifier)\" was delivered and not presented (\(inForeground ? "the delegate did not present it" : "the user allowed no presentation"))")
            return
        }
        if NotificationPresentation.isListed(options) {
            changeDelivered(.added(notification))
            // Kept off the caller's thread (the main actor, for the delegate's answer).
            host.complete { [self] in keepPending() }
        }
        var notes: [String] = []
        if inForeground { notes.append("in the foreground") }
        if let due = dueWhileNotRunning { notes.append("late: due \(due) while the app was not running") }
        host.show(NotificationPresentation.line(
            title: content.title, subtitle: content.subtitle, body: content.body, hasSound: content.sound != nil,
            badge: content.badge?.intValue, options: options, more: notes), identifier: notification.request.identifier)
    }

    /// The requests waiting for their moment, soonest first.
    @preconcurrency
    open func getPendingNotificationRequests(completionHandler: @escaping @Sendable ([UNNotificationRequest]) -> Void) {
        let pending = pendingRequestsNow()
        host.complete { completionHandler(pending) }
    }

    /// ``getPendingNotificationRequests(completionHandler:)`` in its `async` form.
    open func pendingNotificationRequests() async -> [UNNotificationRequest] {
        pendingRequestsNow()
    }

    /// The pending requests, now (UIKit's `scheduledLocalNotifications` reads them).
    package func pendingRequestsNow() -> [UNNotificationRequest] {
        loadKeptState()
        return state.withLock { $0.schedule.pendingRequests }
    }

    /// Cancels the pending requests of `identifiers`.
    open func removePendingNotificationRequests(withIdentifiers identifiers: [String]) {
        loadKeptState()
        state.withLock { state in
            state.schedule.removePending(identifiers)
            for identifier in identifiers { state.timers.removeValue(forKey: identifier)?.cancel() }
        }
        keepPending()
    }

    /// Cancels every pending request.
    open func removeAllPendingNotificationRequests() {
        loadKeptState()
        state.withLock { state in
            state.schedule.removeAllPending()
            for timer in state.timers.values { timer.cancel() }
            state.timers = [:]
        }
        keepPending()
    }

    // MARK: Delivered

    /// The notifications shown and not removed, in the order they came.
    @preconcurrency
    open func getDeliveredNotifications(completionHandler: @escaping @Sendable ([UNNotification]) -> Void) {
        loadKeptState()
        let delivered = state.withLock { $0.schedule.delivered }
        host.complete { completionHandler(delivered) }
    }

    /// ``getDeliveredNotifications(completionHandler:)`` in its `async` form.
    open func deliveredNotifications() async -> [UNNotification] {
        loadKeptState()
        return state.withLock { $0.schedule.delivered }
    }

    /// Removes the delivered notifications of `identifiers`.
    open func removeDeliveredNotifications(withIdentifiers identifiers: [String]) {
        loadKeptState()
        changeDelivered(.removed(Set(identifiers)))
        keepPending()
    }

    /// Removes every delivered notification.
    open func removeAllDeliveredNotifications() {
        loadKeptState()
        changeDelivered(.removedAll)
        keepPending()
    }

    // MARK: Responses

    /// The user responds to the delivered notification `identifier`, as iOS's user taps it
    /// or one of its buttons: the testing hook for the delegate's `didReceive` (Apple has
    /// none: iOS's user does it; as ``BackgroundTasks/BGTaskScheduler/simulateLaunch(forTaskWithIdentifier:)``
    /// stands for the debugger's call), and what `bgtask respond` makes a running app do.
    /// The notification leaves the delivered list. With the default action (a tap) or an
    /// action with ``UNNotificationActionOptions/foreground`` the app comes to the
    /// foreground first; then the delegate's
    /// `userNotificationCenter(_:didReceive:withCompletionHandler:)` (or its `async` form)
    /// is called on the main actor, and counts as the app's work until it calls its
    /// completion handler. A dismissal (``UNNotificationDismissActionIdentifier``) is told
    /// only when the notification's category has ``UNNotificationCategoryOptions/customDismissAction``.
    /// - Parameters:
    ///   - actionIdentifier: ``UNNotificationDefaultActionIdentifier`` (the default),
    ///     ``UNNotificationDismissActionIdentifier``, or the identifier of an action of the
    ///     notification's category (``setNotificationCategories(_:)``).
    ///   - userText: what the user typed, for a ``UNTextInputNotificationAction`` only (the
    ///     response is then a ``UNTextInputNotificationResponse``; `nil` is an empty text).
    /// - Throws: ``NotificationResponseError`` naming what is wrong: no such notification in
    ///   the delivered list, an action its category does not have, text for an action that
    ///   takes none. Nothing changes then.
    public func simulateResponse(toNotificationWithIdentifier identifier: String, actionIdentifier: String = UNNotificationDefaultActionIdentifier, userText: String? = nil) throws(NotificationResponseError) {
        if let error = makeResponse(toNotificationWithIdentifier: identifier, actionIdentifier: actionIdentifier, userText: userText) { throw error }
    }

    /// ``simulateResponse(toNotificationWithIdentifier:actionIdentifier:userText:)``'s work;
    /// the error, also written to the app's log, when no response could be made.
    private func makeResponse(toNotificationWithIdentifier identifier: String, actionIdentifier: String, userText: String?) -> NotificationResponseError? {
        loadKeptState()
        // What bgtaskd delivered while this process was frozen, and what other processes of
        // the app changed in the list, join it first: the user responds to what they saw.
        keepPending()
        let outcome = state.withLock { state -> Result<NotificationResponseDecision, NotificationResponseError> in
            guard let notification = state.schedule.delivered.last(where: { $0.request.identifier == identifier }) else {
                let listed = state.schedule.delivered.suffix(5).map { "\"\($0.request.identifier)\"" }
                let known = listed.isEmpty ? "none is" : "the latest: \(listed.joined(separator: ", "))"
                return .failure(NotificationResponseError(message: "no response to notification \"\(identifier)\": it is not among the delivered notifications (\(known)); only a notification in the list (getDeliveredNotifications) can be responded to"))
            }
            return NotificationResponseDecision.decide(notification, actionIdentifier: actionIdentifier, userText: userText, categories: state.categories)
        }
        let decision: NotificationResponseDecision
        switch outcome {
        case .failure(let error):
            host.report(.warning, error.message)
            return error
        case .success(let made):
            decision = made
        }
        // The user acted on it: it leaves the list (every process's).
        changeDelivered(.removed([identifier]))
        keepPending()
        if decision.bringsToForeground { host.bringToForeground() }
        guard let response = decision.response else {
            let category = decision.notification.request.content.categoryIdentifier
            let known = state.withLock { $0.categories.contains { $0.identifier == category } }
            let why = known || category.isEmpty
                ? "its category does not ask to be told of dismissals (customDismissAction), so the delegate is not, as on iOS"
                : "its category \"\(category)\" is not one the app set (setNotificationCategories(_:)), so the delegate is not told"
            host.report(.info, "notification \"\(identifier)\" dismissed; \(why)")
            return nil
        }
        guard let delegate = self.delegate.map(DelegateReference.init) else {
            host.report(.info, "the response to notification \"\(identifier)\" (\(actionIdentifier)) reached no delegate: set UNUserNotificationCenter.current().delegate before the launch finishes, as on iOS")
            return nil
        }
        // A background action (the app stays where it is) runs in background time, as iOS
        // gives it, until the delegate calls its completion handler.
        let backgroundTime = decision.bringsToForeground ? nil : host.holdBackgroundTime("notification response \(identifier)")
        host.callOnMainActor("the notification center delegate's userNotificationCenter(_:didReceive:withCompletionHandler:)") { [self] in
            await delegate.object.userNotificationCenter(self, didReceive: response)
            backgroundTime?()
        }
        return nil
    }

    /// The variable in which bgtaskd names the notification whose tap it started the app for.
    package static let launchNotificationVariable = "BGTASK_LAUNCH_NOTIFICATION"

    /// The tap bgtaskd started this process for, as the scene's connection options carry it
    /// on iOS (`UIScene.ConnectionOptions.notificationResponse`): the default action on the
    /// delivered notification it names, found once, when first asked; `nil` for any other
    /// launch, or when the notification is not in the delivered list.
    package func launchResponse() -> UNNotificationResponse? {
        guard let identifier = host.launchNotification else { return nil }
        loadKeptState()
        return state.withLock { state in
            if let made = state.launchResponse { return made }
            guard let notification = state.schedule.delivered.last(where: { $0.request.identifier == identifier }) else { return nil }
            let made = UNNotificationResponse(notification: notification, actionIdentifier: UNNotificationDefaultActionIdentifier)
            state.launchResponse = made
            return made
        }
    }

    // MARK: Badge

    /// Sets the number on the app's icon (iOS 16; `applicationIconBadgeNumber` before):
    /// kept and shown nowhere (Linux has no Home Screen). A negative count fails with
    /// ``UNError/Code/badgeInputInvalid``.
    @preconcurrency
    open func setBadgeCount(_ newBadgeCount: Int, withCompletionHandler completionHandler: (@Sendable ((any Error)?) -> Void)? = nil) {
        let error = applyBadgeCount(newBadgeCount)
        if let completionHandler { host.complete { completionHandler(error) } }
    }

    /// ``setBadgeCount(_:withCompletionHandler:)`` in its `async` form.
    open func setBadgeCount(_ newBadgeCount: Int) async throws {
        if let error = applyBadgeCount(newBadgeCount) { throw error }
    }

    private func applyBadgeCount(_ count: Int) -> UNError? {
        guard count >= 0 else {
            let error = UNError(.badgeInputInvalid, message: "setBadgeCount(\(count)) refused: a badge count cannot be negative")
            host.report(.warning, error.message)
            return error
        }
        host.setBadge(count)
        return nil
    }
}

extension UNUserNotificationCenter: NotificationResponding {
    package func respond(toNotificationWithIdentifier identifier: String, actionIdentifier: String, userText: String?) -> String? {
        makeResponse(toNotificationWithIdentifier: identifier, actionIdentifier: actionIdentifier, userText: userText)?.message
    }
}

/// The delegate, held weakly.
private struct WeakDelegate: @unchecked Sendable {
    // @unchecked: the reference is only stored and loaded under the center's mutex; the
    // delegate is called on the main actor (``DelegateReference``), as iOS calls it.
    weak var delegate: (any UNUserNotificationCenterDelegate)?
}

/// The delegate taken for one call on the main actor.
private struct DelegateReference: @unchecked Sendable {
    // @unchecked: the delegate is used only inside the main-actor call it was taken for,
    // where iOS calls it too; nothing else touches it from here.
    let object: any UNUserNotificationCenterDelegate
}
