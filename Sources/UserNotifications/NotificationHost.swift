import BackgroundTasks
import SchedulerCore
import SchedulerStore
import Dispatch
import Foundation
import Synchronization

/// What the notification center needs of the app's runtime: the driver's clock and timers
/// (virtual in the simulator), whether the app is in the foreground, calls into app code,
/// the log, the badge, where a shown notification goes, and the user's answer to the
/// authorization request. ``AppNotificationHost`` is the app's; tests give their own.
protocol NotificationHost: Sendable {
    /// The current instant.
    var now: Date { get }
    /// Calls `action` at `instant` (as soon as possible when it has passed), never under
    /// the caller's lock.
    func schedule(at instant: Date, _ action: @escaping @Sendable () -> Void) -> any DriverTimer
    /// Whether the app is in the foreground.
    var isInForeground: Bool { get }
    /// The app comes to the foreground (the user responded to a notification by opening
    /// it); nothing when it is there already.
    func bringToForeground()
    /// Wakes the app into the background for work named `name`, with background time (a
    /// background assertion, dormant in the foreground), and returns what ends both; they
    /// also end when the time runs out.
    func holdBackgroundTime(_ name: String) -> @Sendable () -> Void
    /// Calls app code (the delegate) on the main actor, as iOS calls it; the call counts as
    /// the app's work until `body` returns.
    func callOnMainActor(_ what: String, _ body: @escaping @MainActor @Sendable () async -> Void)
    /// Calls an app's completion handler, off the caller's lock, on a queue of the app's
    /// (Apple: "may be executed on a background thread").
    func complete(_ body: @escaping @Sendable () -> Void)
    /// Writes a diagnostic about the app.
    func report(_ level: BGDiagnosticMessage.Level, _ text: String)
    /// Shows the delivered notification `identifier`: Linux has no banner, so a line (the
    /// identifier in it, for `bgtask respond`).
    func show(_ line: String, identifier: String)
    /// Sets the badge on the app's icon.
    func setBadge(_ number: Int)
    /// What the user's switch says (`BGTASK_NOTIFICATIONS` of the process's app): `true`
    /// allowed, `false` denied, `nil` not set (a first request is allowed; a kept answer
    /// holds).
    var userSwitch: Bool? { get }
    /// The answer given before, kept between launches as iOS keeps it, or `nil`.
    func savedAuthorization() -> SavedAuthorization?
    /// Keeps the answer for later launches.
    func saveAuthorization(_ saved: SavedAuthorization)
    /// The notification whose tap bgtaskd started this process for
    /// (`BGTASK_LAUNCH_NOTIFICATION`, with `BGTASK_LAUNCH=opened`), or `nil`.
    var launchNotification: String? { get }
    /// The categories an earlier launch set, or `nil` when none were kept.
    func savedCategories() -> [SavedCategory]?
    /// Keeps the categories for later launches.
    func saveCategories(_ categories: [SavedCategory])
    /// Whether pending requests are kept between launches (the process's app, with a state
    /// directory, whose file is not left unreadable this launch).
    var keepsPending: Bool { get }
    /// Reads what is kept (the pending requests, the delivered list, and what bgtaskd
    /// delivered that this process has not taken in), calls `body` with it, and keeps what
    /// `body` returns (the pending requests and the delivered list; nothing is written when it
    /// returns `nil`; what bgtaskd delivered is taken in by then and not kept again), all
    /// holding the file's lock: this process's deliveries
    /// and bgtaskd's are one sequence (docs/daemon.md, "Notifications while the app is not
    /// running"). Where nothing is kept, `body` gets nothing and nothing is written. Returns
    /// `false`, without calling `body`, when the lock could not be taken in time, unless
    /// `orWithoutLock` (the first read of a launch, which must not start from nothing).
    @discardableResult
    func updatePending(orWithoutLock: Bool, _ body: (KeptNotifications) -> KeptNotifications?) -> Bool
}

/// The user's answer and the options it covers, kept between launches.
struct SavedAuthorization: Codable, Equatable {
    var status: Int
    var options: UInt

    /// The answer with the user's switch (`BGTASK_NOTIFICATIONS`: `true` allowed, `false`
    /// denied) applied, as the switch in Settings overrides the prompt's answer on iOS, and
    /// whether it changed it; `nil` for a status this build does not know.
    func applying(userSwitch: Bool?) -> (status: UNAuthorizationStatus, options: UNAuthorizationOptions, overridden: Bool)? {
        guard let known = UNAuthorizationStatus.known(rawValue: status) else { return nil }
        let options = UNAuthorizationOptions(rawValue: self.options)
        guard let allowed = userSwitch, allowed == (known == .denied) else { return (known, options, false) }
        return allowed ? (.authorized, options, true) : (.denied, [], true)
    }
}

/// The file that keeps the user's answer (`notifications.json` in the app's state
/// directory): read bounded and without blocking (a FIFO or a huge file in its place is
/// refused), written atomically; every failure is a warning naming the file, and the app
/// is asked again.
struct AuthorizationFile {
    let url: URL

    /// The most bytes the file may have (an answer is a line).
    static let sizeLimit = 4096

    /// The kept answer, or `nil` with the reason when there is none to use (no file: no
    /// reason).
    func read() -> (saved: SavedAuthorization?, problem: String?) {
        switch KeptJSONFile.read(SavedAuthorization.self, at: url, limit: Self.sizeLimit) {
        case .success(nil):
            return (nil, nil)
        case .success(let saved?):
            guard UNAuthorizationStatus.known(rawValue: saved.status) != nil else {
                return (nil, "\(url.path): status \(saved.status) is not an authorization status; the app is asked again")
            }
            return (saved, nil)
        case .failure(.unreadable(let why)):
            return (nil, "the answer to the notification request could not be read: \(why); the app is asked again")
        case .failure(.undecodable(let why)):
            return (nil, "\(url.path) could not be read (\(why)); the app is asked again")
        }
    }

    /// Keeps `saved`; the reason when it could not.
    func write(_ saved: SavedAuthorization) -> String? {
        KeptJSONFile.write(saved, to: url, limit: Self.sizeLimit).map {
            "the answer to the notification request could not be kept in \(url.path) (\($0)); the next launch asks again"
        }
    }

    /// `BGTASK_NOTIFICATIONS` read: `allowed` or `denied` (any case), `nil` when unset or
    /// empty; another value is not used, with the reason.
    static func userSwitch(_ value: String?) -> (answer: Bool?, problem: String?) {
        guard let value, !value.isEmpty else { return (nil, nil) }
        switch value.lowercased() {
        case "allowed": return (true, nil)
        case "denied": return (false, nil)
        default: return (nil, "BGTASK_NOTIFICATIONS is \"\(StandardStream.terminalSafe(value))\"; expected \"allowed\" or \"denied\": not used")
        }
    }
}

/// The app's runtime as the notification center's host: its `BGAppContext` (the driver's
/// clock, the app's state, its log), standard error for shown notifications, and a file
/// in the app's state directory for the user's answer. A modelled app (the simulator's)
/// reads nothing of the machine: no environment, no file, no standard error.
final class AppNotificationHost: NotificationHost {
    private weak let context: BGAppContext?
    /// The app's identifier, for the lines it shows.
    private let app: String
    /// Whether this is the process's own app.
    private let isProcessApp: Bool
    /// The kept answer's file, or `nil` (a modelled app, or no state directory can be
    /// chosen: the answer lasts as long as the process).
    private let answerFile: AuthorizationFile?
    /// The pending requests' file, or `nil` as `answerFile`.
    private let pendingFile: PendingNotificationsFile?
    /// The categories' file, or `nil` as `answerFile`.
    private let categoriesFile: CategoriesFile?
    let userSwitch: Bool?
    let launchNotification: String?
    /// Whether the pending file may be written: not after it could not be read and was left
    /// in place.
    private let pendingWritable = Mutex(true)
    /// Completion handlers and timers' work run here, in order.
    private let completionQueue: DispatchQueue

    init(context: BGAppContext, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.context = context
        app = context.app.rawValue
        isProcessApp = context.isProcessApp
        completionQueue = DispatchQueue(label: "bgtask.\(context.app.rawValue).notifications")
        let directory = isProcessApp ? context.stateDirectory : nil
        answerFile = directory.map { AuthorizationFile(url: $0.appendingPathComponent("notifications.json")) }
        pendingFile = directory.map { PendingNotificationsFile(url: $0.appendingPathComponent("pending-notifications.json")) }
        categoriesFile = directory.map { CategoriesFile(url: $0.appendingPathComponent("notification-categories.json")) }
        let setting: (answer: Bool?, problem: String?) = isProcessApp ? AuthorizationFile.userSwitch(environment["BGTASK_NOTIFICATIONS"]) : (nil, nil)
        userSwitch = setting.answer
        // Only the process bgtaskd started for a tap: a program it runs inherits the variables.
        launchNotification = isProcessApp && context.launchedByDaemon && !context.launchedInBackground
            ? environment[UNUserNotificationCenter.launchNotificationVariable].flatMap { $0.isEmpty ? nil : $0 } : nil
        if let problem = setting.problem { context.driver.log(.warning, app: context.app, problem) }
        if let directory {
            for removed in LeftoverWrites.removeStale(in: directory, now: Date()) {
                context.driver.log(.info, app: context.app, "removed \(removed), left by a write that was cut off (a process killed while it wrote)")
            }
        }
    }

    var now: Date { context?.driver.clock.now() ?? Date() }

    func schedule(at instant: Date, _ action: @escaping @Sendable () -> Void) -> any DriverTimer {
        guard let context else { return NoTimer() }
        return context.scheduleAppWork(at: instant, on: completionQueue, action)
    }

    /// Whether the app is active, from its lifecycle itself: not `applicationState`, which
    /// while a lifecycle notification is delivered reads what iOS shows during it, so the
    /// decision would depend on where that delivery had got to (the simulator's determinism).
    var isInForeground: Bool { context?.application.lifecycleState == .active }

    func bringToForeground() {
        context?.application.enterForeground()
    }

    func holdBackgroundTime(_ name: String) -> @Sendable () -> Void {
        guard let application = context?.application else { return {} }
        return application.beginSystemWork(named: name)
    }

    func callOnMainActor(_ what: String, _ body: @escaping @MainActor @Sendable () async -> Void) {
        context?.callOnMainActor(what, body)
    }

    func complete(_ body: @escaping @Sendable () -> Void) {
        guard let context else {
            // The app's context is gone (a simulated app uninstalled): the caller still
            // gets its answer rather than waiting for ever.
            completionQueue.async(execute: body)
            return
        }
        context.performAppWork(on: completionQueue, body)
    }

    func report(_ level: BGDiagnosticMessage.Level, _ text: String) {
        guard let context else { return }
        context.driver.log(level, app: context.app, text)
    }

    func show(_ line: String, identifier: String) {
        let named = "\"\(StrictJSON.escaped(identifier))\": \(line)"
        report(.info, named)
        guard isProcessApp else { return }
        // One line whatever the app wrote: no control characters reach the terminal.
        let safe = StandardStream.oneLine(named)
        StandardStream.writeError("bgtask notification [\(app)] \(safe)\n")
    }

    func setBadge(_ number: Int) {
        context?.application.applicationIconBadgeNumber = number
    }

    func savedAuthorization() -> SavedAuthorization? {
        guard let answerFile else { return nil }
        let (saved, problem) = answerFile.read()
        if let problem { report(.warning, problem) }
        return saved
    }

    func saveAuthorization(_ saved: SavedAuthorization) {
        guard let answerFile else { return }
        if let problem = answerFile.write(saved) { report(.warning, problem) }
    }

    func savedCategories() -> [SavedCategory]? {
        guard let categoriesFile else { return nil }
        let (saved, problem) = categoriesFile.read()
        if let problem { report(.warning, problem) }
        return saved
    }

    func saveCategories(_ categories: [SavedCategory]) {
        guard let categoriesFile else { return }
        if let problem = categoriesFile.write(categories) { report(.warning, problem) }
    }

    var keepsPending: Bool { pendingFile != nil && pendingWritable.withLock { $0 } }

    @discardableResult
    func updatePending(orWithoutLock: Bool, _ body: (KeptNotifications) -> KeptNotifications?) -> Bool {
        guard let pendingFile, pendingWritable.withLock({ $0 }) else {
            _ = body(KeptNotifications())
            return true
        }
        let lock: StateDirectoryLock
        do {
            lock = try pendingFile.lock()
        } catch where error.code == .locked {
            guard orWithoutLock else { return false }
            // Merely busy (another process has held it for over a second): the launch's first
            // read goes on without it, said as such (the lock is not unusable, and bgtaskd
            // keeps using it).
            report(.warning, "the pending notifications' lock is busy (\(error)): the kept requests are read and written without it this once")
            return updateUnlocked(pendingFile, body)
        } catch {
            // A lock file that cannot be used at all (a directory in its place): the file is
            // used without it, said once a launch, rather than never again.
            warnUnusableLock(error)
            return updateUnlocked(pendingFile, body)
        }
        return withExtendedLifetime(lock) { updateUnlocked(pendingFile, body) }
    }

    /// ``updatePending(orWithoutLock:_:)``'s work once the lock is held (or cannot be had at all).
    private func updateUnlocked(_ pendingFile: PendingNotificationsFile, _ body: (KeptNotifications) -> KeptNotifications?) -> Bool {
        do {
            var (kept, problem, writable) = pendingFile.read()
            if let problem {
                report(.warning, problem)
                // Emptied for want of a readable file, not emptied by another process: what
                // this process holds stands.
                kept.wasRead = false
            }
            guard writable else {
                // Left in place (unreadable now): not written over for the rest of the launch.
                pendingWritable.withLock { $0 = false }
                var none = KeptNotifications()
                none.wasRead = false
                _ = body(none)
                return true
            }
            guard let keep = body(kept) else { return true }
            // What bgtaskd delivered was taken in: not kept again.
            if let problem = pendingFile.write(KeptNotifications(pending: keep.pending, delivered: keep.delivered)) { report(.warning, problem) }
            return true
        }
    }

    /// Whether a lock file that cannot be used was said this launch.
    private let warnedUnusableLock = Mutex(false)

    private func warnUnusableLock(_ error: StoreError) {
        let first = warnedUnusableLock.withLock { warned in defer { warned = true }; return !warned }
        if first { report(.warning, "the pending notifications' lock cannot be used (\(error)); the file is used without it (bgtaskd cannot use it either, and delivers nothing of this app's)") }
    }
}

/// The timer of a host whose app is gone: nothing to cancel.
struct NoTimer: DriverTimer {
    func cancel() {}
}

/// Files a cut-off atomic write left in the app's state directory. Foundation writes a kept
/// file (`Data.write(to:options: .atomic)`) to a temporary file beside it, `.dat.nosync` and a
/// random part, then renames it over the file: a process killed between leaves the temporary
/// file, up to the size of what it wrote, and nothing else removes it.
enum LeftoverWrites {
    /// How old a temporary file must be to be taken for a leftover: a write in progress (this
    /// app's other process, bgtaskd) finishes within seconds.
    static let staleAge: TimeInterval = 600

    /// Removes the temporary files of `directory` last changed more than ``staleAge`` before
    /// `now`; their names. Never follows a link or removes anything else.
    static func removeStale(in directory: URL, now: Date) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [] }
        var removed: [String] = []
        for name in names where name.hasPrefix(".dat.nosync") {
            let path = directory.appendingPathComponent(name).path
            var status = stat()
            guard lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { continue }
            let changed = Date(timeIntervalSince1970: TimeInterval(status.st_mtim.tv_sec))
            guard now.timeIntervalSince(changed) > staleAge, unlink(path) == 0 else { continue }
            removed.append(name)
        }
        return removed.sorted()
    }
}
