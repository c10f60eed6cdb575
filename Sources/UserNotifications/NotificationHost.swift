import BackgroundTasks
import SchedulerCore
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
    /// Calls app code (the delegate) on the main actor, as iOS calls it.
    func callOnMainActor(_ what: String, _ body: @escaping @MainActor @Sendable () async -> Void)
    /// Calls an app's completion handler, off the caller's lock, on a queue of the app's
    /// (Apple: "may be executed on a background thread").
    func complete(_ body: @escaping @Sendable () -> Void)
    /// Writes a diagnostic about the app.
    func report(_ level: DiagnosticMessage.Level, _ text: String)
    /// Shows a delivered notification: Linux has no banner, so a line.
    func show(_ line: String)
    /// Sets the badge on the app's icon.
    func setBadge(_ number: Int)
    /// The user's answer to a first authorization request (Linux has no one to ask).
    func authorizationAnswer() -> Bool
    /// The answer given before, kept between launches as iOS keeps it, or `nil`.
    func savedAuthorization() -> SavedAuthorization?
    /// Keeps the answer for later launches.
    func saveAuthorization(_ saved: SavedAuthorization)
}

/// The user's answer and the options it covers, kept between launches.
struct SavedAuthorization: Codable, Equatable {
    var status: Int
    var options: UInt
}

/// The app's runtime as the notification center's host: its `AppContext` (the driver's
/// clock, the app's state, its log), standard error for shown notifications, and a file
/// in the app's state directory for the user's answer.
final class AppNotificationHost: NotificationHost {
    private weak let context: AppContext?
    /// The app's identifier, for the lines it shows.
    private let app: String
    /// Whether shown notifications are written to standard error: the process's own app
    /// (not an app the simulator models, which many share one process).
    private let writesToStandardError: Bool
    /// `notifications.json` in the app's state directory, or `nil` (a simulated app, or no
    /// state directory can be chosen: the answer lasts as long as the process).
    private let answerFile: URL?
    /// The process environment's `BGTASK_NOTIFICATIONS`.
    private let answerSetting: String?
    /// Completion handlers run here, in order.
    private let completionQueue: DispatchQueue

    init(context: AppContext, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.context = context
        app = context.app.rawValue
        writesToStandardError = context.isProcessApp
        answerSetting = environment["BGTASK_NOTIFICATIONS"]
        completionQueue = DispatchQueue(label: "bgtask.\(context.app.rawValue).notifications")
        answerFile = context.isProcessApp ? context.stateDirectory?.appendingPathComponent("notifications.json") : nil
    }

    var now: Date { context?.now ?? Date() }

    func schedule(at instant: Date, _ action: @escaping @Sendable () -> Void) -> any DriverTimer {
        guard let context else { return NoTimer() }
        return context.scheduleAppWork(at: instant, on: completionQueue, action)
    }

    var isInForeground: Bool { context?.isInForeground ?? false }

    func callOnMainActor(_ what: String, _ body: @escaping @MainActor @Sendable () async -> Void) {
        // The call starts on the main actor (where a stalled main queue is reported); an
        // `async` delegate method may suspend, so the rest runs in a task of the main actor.
        context?.callOnMainActor(what) { Task { @MainActor in await body() } }
    }

    func complete(_ body: @escaping @Sendable () -> Void) {
        guard let context else { return }
        context.performAppWork(on: completionQueue, body)
    }

    func report(_ level: DiagnosticMessage.Level, _ text: String) {
        context?.report(level, text)
    }

    func show(_ line: String) {
        context?.report(.info, line)
        guard writesToStandardError else { return }
        FileHandle.standardError.write(Data("bgtask notification [\(app)]: \(line)\n".utf8))
    }

    func setBadge(_ number: Int) {
        context?.setIconBadgeNumber(number)
    }

    func authorizationAnswer() -> Bool {
        switch answerSetting {
        case nil, "", "allowed": return true
        case "denied": return false
        case let other?:
            report(.warning, "BGTASK_NOTIFICATIONS is \"\(other)\"; expected \"allowed\" or \"denied\": the request is allowed")
            return true
        }
    }

    func savedAuthorization() -> SavedAuthorization? {
        guard let answerFile else { return nil }
        let bytes: [UInt8]
        do {
            // Bounded and never blocking: a FIFO or a huge file in its place is refused.
            bytes = try BoundedFile.read(path: answerFile.path, limit: 4096)
        } catch {
            if error.problem != .missing {
                report(.warning, "the answer to the notification request could not be read: \(error); the app asks again")
            }
            return nil
        }
        do {
            let saved = try JSONDecoder().decode(SavedAuthorization.self, from: Data(bytes))
            guard UNAuthorizationStatus.known(rawValue: saved.status) != nil else {
                report(.warning, "\(answerFile.path): status \(saved.status) is not an authorization status; the app asks again")
                return nil
            }
            return saved
        } catch {
            report(.warning, "\(answerFile.path) could not be read (\(DecodingErrorText.describe(error))); the app asks again")
            return nil
        }
    }

    func saveAuthorization(_ saved: SavedAuthorization) {
        guard let answerFile, let data = try? JSONEncoder().encode(saved) else { return }
        do {
            try data.write(to: answerFile, options: .atomic)
        } catch {
            report(.warning, "the answer to the notification request could not be kept in \(answerFile.path) (\(error)); the next launch asks again")
        }
    }
}

/// The timer of a host whose app is gone: nothing to cancel.
struct NoTimer: DriverTimer {
    func cancel() {}
}
