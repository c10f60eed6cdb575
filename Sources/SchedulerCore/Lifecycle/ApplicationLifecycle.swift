import Foundation

/// The states of an app process (docs/system.md, "Assertions" and "On Linux"): iOS's `UIApplication.State` plus the two
/// states the system sees from outside.
public enum ApplicationLifecycleState: String, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The process is not running (never launched, exited, or terminated).
    case notRunning = "not-running"
    /// In the foreground, receiving events.
    case active
    /// In the foreground, not receiving events (launching, or interrupted).
    case inactive
    /// In the background, still executing code.
    case background
    /// In the background, not executing (SIGSTOP on Linux).
    case suspended

    public var description: String { rawValue }
}

/// How the background time of several assertions adds up (docs/system.md, "Assertions").
public enum AssertionBudgetPolicy: String, Hashable, Sendable, Codable {
    /// Apple's behaviour (default): one window for the whole app, however many assertions
    /// it holds; two assertions do not give twice the time.
    case sharedWindow = "shared-window"
    /// The source documents' description: each assertion taken adds one window to the
    /// app's background time (three assertions, up to 90 s).
    case cumulative
}

/// Tunables of background assertions, with Apple's numbers as defaults.
public struct AssertionConfiguration: Hashable, Sendable, Codable {
    /// Background time an assertion buys (about 30 s).
    public var window: TimeInterval
    /// Time to suspension after entering the background when no assertion is held (3-5 s).
    public var suspendDelay: TimeInterval
    /// Time the expiration handlers have, all together, to end their assertions before
    /// the app is terminated.
    public var expirationAllowance: TimeInterval
    /// Assertions outstanding at once beyond which `begin` returns `.invalid` (~1000 on iOS,
    /// where going over ends the app with `0xbada5e47`).
    public var maximumAssertions: Int
    /// Shared window (Apple) or cumulative.
    public var budgetPolicy: AssertionBudgetPolicy

    /// Apple's numbers: 30 s window, suspension 5 s after backgrounding, 5 s for
    /// expiration handlers, 1000 assertions, one shared window.
    public init(
        window: TimeInterval = 30,
        suspendDelay: TimeInterval = 5,
        expirationAllowance: TimeInterval = 5,
        maximumAssertions: Int = 1000,
        budgetPolicy: AssertionBudgetPolicy = .sharedWindow
    ) {
        self.window = window
        self.suspendDelay = suspendDelay
        self.expirationAllowance = expirationAllowance
        self.maximumAssertions = maximumAssertions
        self.budgetPolicy = budgetPolicy
    }
}

/// Why the system ended an app, with Apple's watchdog code where one applies.
public struct TerminationReason: Hashable, Sendable, CustomStringConvertible {
    /// Apple's exception code (`0x8badf00d`, `0x2182bad2`), for searching crash reports.
    public var code: UInt32
    /// What happened, naming the assertions involved.
    public var message: String

    /// An assertion without an expiration handler outlived the background window.
    public static let leakedAssertionCode: UInt32 = 0x8BAD_F00D
    /// Expiration handlers did not end their assertions in time.
    public static let backgroundTaskNotFinishedCode: UInt32 = 0x2182_BAD2

    public var description: String { "0x\(String(code, radix: 16)): \(message)" }
}

/// Something the shell around ``ApplicationLifecycle`` must do.
public enum LifecycleEffect: Hashable, Sendable {
    /// The state changed (for logs and observers).
    case stateChanged(from: ApplicationLifecycleState, to: ApplicationLifecycleState)
    /// Call the expiration handlers of these assertions, in this order.
    case expireAssertions([Int])
    /// End the process (SIGTERM to its group, then SIGKILL, out of process).
    case terminate(TerminationReason)
}

/// Errors of `endBackgroundTask`: each names the identifier.
public struct AssertionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong with the identifier.
    public enum Code: Hashable, Sendable {
        /// `.invalid` was passed.
        case invalidIdentifier
        /// No assertion ever had this identifier.
        case unknownIdentifier
        /// The assertion was already ended (set the identifier to `.invalid` after ending).
        case alreadyEnded
    }

    /// The code.
    public var code: Code
    /// The identifier passed.
    public var identifier: Int

    /// Creates an error.
    public init(_ code: Code, identifier: Int) {
        self.code = code
        self.identifier = identifier
    }

    public var description: String {
        switch code {
        case .invalidIdentifier:
            return "endBackgroundTask called with UIBackgroundTaskIdentifier.invalid"
        case .unknownIdentifier:
            return "endBackgroundTask called with \(identifier), which no beginBackgroundTask returned"
        case .alreadyEnded:
            return "endBackgroundTask called twice for \(identifier); set the identifier to .invalid after ending it"
        }
    }
}

/// The app's lifecycle and its background assertions as a pure state machine
/// (docs/system.md, "Assertions"): no clock, no signals; the shell feeds it instants and carries out effects.
///
/// - Finishing launch closes the registration window (see ``hasFinishedLaunching``).
/// - Assertions begun in the foreground are dormant: the clock starts on entering the
///   background.
/// - In the background without assertions the app is suspended after `suspendDelay`;
///   with assertions it runs until the window ends, then expiration handlers are called,
///   then, if assertions are still held after `expirationAllowance`, it is terminated.
public struct ApplicationLifecycle: Sendable {
    /// The tunables.
    public let configuration: AssertionConfiguration
    /// The current state.
    public private(set) var state: ApplicationLifecycleState = .notRunning
    /// Whether the app finished launching (no more registrations of scheduled tasks).
    public private(set) var hasFinishedLaunching = false

    private struct Assertion: Sendable {
        var name: String?
        var hasExpirationHandler: Bool
    }

    /// Whether the system launched the process into the background for its tasks
    /// (``finishLaunchingIntoBackground(at:)``) and it has not been in the foreground
    /// since: the system that launched it (bgtaskd) suspends it, so the lifecycle does not
    /// suspend itself, and the assertion clock starts with the first assertion.
    public private(set) var launchedIntoBackground = false

    private var outstanding: [Int: Assertion] = [:]
    /// Scheduled tasks (BGTask runs) of the app running now: the system does not suspend
    /// a process while one runs, and resumes a suspended one to run it.
    public var runningTasks: Int { max(0, taskBalance) }
    /// Starts minus ends. Each run reports one of each, but from different threads, so an
    /// end may come first: the balance is then -1 for a moment, which counts as none.
    private var taskBalance = 0
    private var nextIdentifier = 1
    private var backgroundEnteredAt: Date?
    private var assertionsThisBackground = 0
    private var lastEndedAt: Date?
    private var expiredAt: Date?

    /// Creates the lifecycle of a process that has not launched yet.
    public init(configuration: AssertionConfiguration = .init()) {
        self.configuration = configuration
    }

    /// The identifiers of the assertions held, in the order they were begun.
    public var outstandingAssertions: [Int] { outstanding.keys.sorted() }

    /// The name an assertion was begun with.
    public func name(of identifier: Int) -> String? { outstanding[identifier]?.name }

    /// The process started: not running -> inactive; with `intoBackground`, the system
    /// launched it for its tasks: not running -> background, as iOS reports a background
    /// launch while the app delegate's launch methods run (``launchedIntoBackground``).
    public mutating func launch(at now: Date, intoBackground: Bool = false) -> [LifecycleEffect] {
        guard state == .notRunning else { return [] }
        guard intoBackground else { return move(to: .inactive) }
        launchedIntoBackground = true
        return move(to: .background)
    }

    /// `application(_:didFinishLaunchingWithOptions:)` returned: the registration window
    /// closes and the app becomes active, unless the system launched it into the
    /// background (`activate` false), where it stays inactive until it enters the background.
    public mutating func finishLaunching(at now: Date, activate: Bool = true) -> [LifecycleEffect] {
        var effects = launch(at: now)
        hasFinishedLaunching = true
        if activate, state == .inactive { effects += move(to: .active) }
        return effects
    }

    /// The system launched the app into the background for its tasks (bgtaskd, iOS's
    /// background launch): the registration window closes and the app is in the background
    /// (`applicationState` `.background`, as on iOS), never active and never suspended by
    /// its own delay (the system that launched it suspends it). Background time starts
    /// with the first assertion; `backgroundTimeRemaining` is unbounded without one (the
    /// task's budget is the system's). Only from launching (not running or inactive).
    public mutating func finishLaunchingIntoBackground(at now: Date) -> [LifecycleEffect] {
        var effects = launch(at: now, intoBackground: true)
        hasFinishedLaunching = true
        guard state == .inactive else { return effects }
        launchedIntoBackground = true
        backgroundEnteredAt = nil
        assertionsThisBackground = 0
        lastEndedAt = nil
        expiredAt = nil
        effects += move(to: .background)
        return effects
    }

    /// The app moved to the background (on Linux also: SIGTERM to an embedded server).
    public mutating func enterBackground(at now: Date) -> [LifecycleEffect] {
        guard state == .active || state == .inactive else { return [] }
        backgroundEnteredAt = now
        assertionsThisBackground = outstanding.count
        lastEndedAt = nil
        expiredAt = nil
        return move(to: .background) + tick(at: now)
    }

    /// Whether the process outlived a termination: the watchdog ended the app
    /// (``LifecycleEffect/terminate(_:)``) but nothing ended the process (an embedded app
    /// without `handleTerminationSignals`), so its code runs on in the not-running state.
    /// The next sign of life launches it again, as iOS launches a terminated app anew: the
    /// user opening it (``enterForeground(at:)``) or a task of it starting
    /// (``taskStarted(at:)``). Its registrations stand (the process kept them).
    public var outlivedTermination: Bool { state == .notRunning && hasFinishedLaunching }

    /// The user brought the app back: dormant again, the clock stops. A process that
    /// outlived its termination is launched again (not running -> inactive -> active).
    public mutating func enterForeground(at now: Date) -> [LifecycleEffect] {
        if outlivedTermination {
            launchedIntoBackground = false
            return move(to: .inactive) + move(to: .active)
        }
        guard state == .background || state == .suspended else { return [] }
        backgroundEnteredAt = nil
        expiredAt = nil
        launchedIntoBackground = false
        return move(to: .active)
    }

    /// A scheduled task of the app starts: a suspended app is resumed into the background
    /// to run it, as iOS does (a process that outlived its termination is launched into it),
    /// and no app is suspended while one of its tasks runs. While
    /// it runs, the background time is the task's (the scheduler keeps its budget): an app
    /// holding no assertion starts a window with its first one, as a background launch
    /// does.
    public mutating func taskStarted(at now: Date) -> [LifecycleEffect] {
        taskBalance += 1
        // A process that outlived its termination is launched into the background for the
        // task, as iOS launches a terminated app for one, and then goes as a resumed one.
        guard taskBalance > 0, state == .suspended || state == .background || outlivedTermination else { return [] }
        if outstanding.isEmpty {
            backgroundEnteredAt = nil
            assertionsThisBackground = 0
            lastEndedAt = nil
            expiredAt = nil
        }
        return move(to: .background)
    }

    /// A scheduled task of the app ended (completed, expired and over, or terminated): with
    /// none left and no assertion, the app is suspended after the suspend delay, counted
    /// from the end (or from its last assertion's end, whichever is later).
    public mutating func taskEnded(at now: Date) -> [LifecycleEffect] {
        taskBalance -= 1
        guard taskBalance == 0, state == .background else { return [] }
        if backgroundEnteredAt == nil {
            if !launchedIntoBackground { backgroundEnteredAt = now }
        } else {
            lastEndedAt = now
        }
        return tick(at: now)
    }

    /// Why `beginBackgroundTask` at `now` would get no time (`.invalid`), for the app's log;
    /// `nil` when it would. One rule for the refusal and its reason.
    public func assertionRefusal(at now: Date) -> String? {
        if state == .suspended || state == .notRunning { return "the app is \(state)" }
        if expiredAt != nil { return "this background time already expired" }
        if outstanding.count >= configuration.maximumAssertions {
            return "\(outstanding.count) background tasks are outstanding, the most at once; end some with endBackgroundTask(_:)"
        }
        if let windowEnd, now >= windowEnd { return "the background time ran out at \(GregorianDate.iso8601(windowEnd))" }
        return nil
    }

    /// `beginBackgroundTask`: returns the new identifier, or `nil` (`.invalid`) when no
    /// time can be granted (``assertionRefusal(at:)`` says why).
    public mutating func beginAssertion(name: String?, hasExpirationHandler: Bool, at now: Date) -> Int? {
        guard assertionRefusal(at: now) == nil else { return nil }
        let identifier = nextIdentifier
        nextIdentifier += 1
        outstanding[identifier] = Assertion(name: name, hasExpirationHandler: hasExpirationHandler)
        // Launched into the background, the app's background time starts with its first
        // assertion (there was no foreground to leave).
        // So does a task's run: the task's own time is the scheduler's.
        if launchedIntoBackground || taskBalance > 0, state == .background, backgroundEnteredAt == nil { backgroundEnteredAt = now }
        if backgroundEnteredAt != nil { assertionsThisBackground += 1 }
        return identifier
    }

    /// `endBackgroundTask`.
    public mutating func endAssertion(_ identifier: Int, at now: Date) throws(AssertionError) -> [LifecycleEffect] {
        guard identifier != 0 else { throw AssertionError(.invalidIdentifier, identifier: identifier) }
        guard outstanding.removeValue(forKey: identifier) != nil else {
            let code: AssertionError.Code = identifier > 0 && identifier < nextIdentifier ? .alreadyEnded : .unknownIdentifier
            throw AssertionError(code, identifier: identifier)
        }
        lastEndedAt = now
        return tick(at: now)
    }

    /// Applies every deadline that has passed at `now`.
    public mutating func tick(at now: Date) -> [LifecycleEffect] {
        guard state == .background, let entered = backgroundEnteredAt else { return [] }
        if outstanding.isEmpty {
            // Not suspended while a task runs.
            if runningTasks > 0 { return [] }
            // The system that launched the app into the background suspends it, not this
            // delay; the next assertion starts a window of its own (the process may have
            // been suspended and thawed for another task in between, as iOS does).
            if launchedIntoBackground {
                backgroundEnteredAt = nil
                expiredAt = nil
                assertionsThisBackground = 0
                return []
            }
            let suspendAt = max(entered.addingTimeInterval(configuration.suspendDelay), lastEndedAt ?? entered)
            return now >= suspendAt ? move(to: .suspended) : []
        }
        if let expiredAt {
            guard now >= expiredAt.addingTimeInterval(configuration.expirationAllowance) else { return [] }
            return terminate()
        }
        if let windowEnd, now >= windowEnd {
            expiredAt = now
            return [.expireAssertions(outstandingAssertions)]
        }
        return []
    }

    /// The next instant at which ``tick(at:)`` has something to do.
    public var nextDeadline: Date? {
        guard state == .background, let entered = backgroundEnteredAt else { return nil }
        if outstanding.isEmpty {
            if launchedIntoBackground || runningTasks > 0 { return nil }
            return max(entered.addingTimeInterval(configuration.suspendDelay), lastEndedAt ?? entered)
        }
        if let expiredAt { return expiredAt.addingTimeInterval(configuration.expirationAllowance) }
        return windowEnd
    }

    /// `backgroundTimeRemaining`: unbounded in the foreground, falling in real time in the
    /// background, zero once suspended.
    public func backgroundTimeRemaining(at now: Date) -> TimeInterval {
        switch state {
        case .active, .inactive: return .greatestFiniteMagnitude
        case .suspended, .notRunning: return 0
        case .background:
            // Launched into the background and holding no assertion: the time left is the
            // task's budget, which the system (not this process) keeps.
            if launchedIntoBackground || runningTasks > 0, outstanding.isEmpty { return .greatestFiniteMagnitude }
            guard let deadline = outstanding.isEmpty ? nextDeadline : windowEnd else { return 0 }
            return max(0, deadline.timeIntervalSince(now))
        }
    }

    /// The end of the background window, while in the background.
    private var windowEnd: Date? {
        guard let entered = backgroundEnteredAt else { return nil }
        switch configuration.budgetPolicy {
        case .sharedWindow:
            return entered.addingTimeInterval(configuration.window)
        case .cumulative:
            return entered.addingTimeInterval(configuration.window * Double(max(1, assertionsThisBackground)))
        }
    }

    private mutating func terminate() -> [LifecycleEffect] {
        let held = outstandingAssertions.map { id in outstanding[id]?.name.map { "'\($0)' (\(id))" } ?? "\(id)" }
        let leaked = outstanding.values.contains { !$0.hasExpirationHandler }
        let reason = leaked
            ? TerminationReason(code: TerminationReason.leakedAssertionCode, message: "leaked background assertion(s) \(held.joined(separator: ", ")): no expiration handler ended them before the window closed")
            : TerminationReason(code: TerminationReason.backgroundTaskNotFinishedCode, message: "background task(s) \(held.joined(separator: ", ")) not ended within \(DurationText.spoken(configuration.expirationAllowance)) of expiration")
        outstanding.removeAll()
        backgroundEnteredAt = nil
        expiredAt = nil
        return move(to: .notRunning) + [.terminate(reason)]
    }

    private mutating func move(to newState: ApplicationLifecycleState) -> [LifecycleEffect] {
        guard newState != state else { return [] }
        let old = state
        state = newState
        return [.stateChanged(from: old, to: newState)]
    }
}
