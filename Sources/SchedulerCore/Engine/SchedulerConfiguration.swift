import Foundation

/// The engine's tunables, with Apple's documented behaviour as the defaults.
public struct SchedulerConfiguration: Hashable, Sendable, Codable {
    /// Wall-clock budget of one run per kind; `nil` means no fixed limit (continued
    /// processing, which is expired only when its progress stalls).
    public var budgets: [TaskKind: TimeInterval]
    /// Time an expired run has to call `setTaskCompleted` before it is terminated.
    public var expirationGrace: TimeInterval
    /// Pending requests one app may hold per limit class (1 refresh, 10 processing).
    public var pendingLimits: [PendingLimitClass: Int]
    /// Runs of scheduled tasks (all apps) that may be in progress at once. The policy
    /// issue replaces this single cap with a weighted concurrency policy.
    public var maximumConcurrentRuns: Int
    /// Continued-processing runs that may be in progress at once; more are queued (FIFO)
    /// or refused, per their strategy.
    public var maximumConcurrentContinuedProcessing: Int
    /// A continued-processing run whose progress has not advanced for this long is expired.
    public var progressStallTimeout: TimeInterval
    /// How far in the future `earliestBeginDate` may lie before the request is refused as
    /// a likely bug (a date "centuries away").
    public var maximumEarliestBeginDelay: TimeInterval
    /// Resources continued-processing requests may require (`BGTaskScheduler.supportedResources`).
    public var supportedResources: Set<String>
    /// When set (`BACKGROUND_TASK_SIMULATE_EXPIRATION=YES`), every run expires this many
    /// seconds after launch, so expiration handlers can be tested.
    public var simulatedExpirationAfter: TimeInterval?
    /// Distinguishes this device in herd spreading: devices that see the same shared
    /// trigger (a network outage ending everywhere at once) spread the same request over
    /// different offsets. Real drivers derive it from `/etc/machine-id`; simulations from
    /// each device's seed. 0 gives the plain hash of the request key.
    public var deviceSalt: UInt64
    /// Whether the judgement a launch carries (``EngineEffect/launch(_:budget:evaluation:)``)
    /// has every policy's rationale; off, its decisions have bare verdicts (fleets and long
    /// simulations that keep no trace).
    public var explainsLaunches: Bool
    /// The developer switch (`BGTASK_MANUAL_LAUNCH=1`): scheduled tasks (refresh,
    /// processing, health research) never launch by themselves, only through
    /// `simulateLaunch`, so the iOS debugging flow "submit, then trigger the launch" works
    /// on a machine where a request would otherwise run at once. Runs still expire and
    /// are terminated as usual; continued processing (user-started work) is not held.
    public var launchesOnlyWhenSimulated: Bool

    /// Apple's numbers: refresh 30 s, processing 10 min, grace 2 s, 1 refresh and 10
    /// processing requests pending per app.
    public init(
        budgets: [TaskKind: TimeInterval] = [.appRefresh: 30, .processing: 600, .healthResearch: 600],
        expirationGrace: TimeInterval = 2,
        pendingLimits: [PendingLimitClass: Int] = [.refresh: 1, .processing: 10, .continuedProcessing: 10],
        maximumConcurrentRuns: Int = 4,
        maximumConcurrentContinuedProcessing: Int = 1,
        progressStallTimeout: TimeInterval = 60,
        maximumEarliestBeginDelay: TimeInterval = 366 * 86_400,
        supportedResources: Set<String> = [],
        simulatedExpirationAfter: TimeInterval? = nil,
        deviceSalt: UInt64 = 0,
        explainsLaunches: Bool = true,
        launchesOnlyWhenSimulated: Bool = false
    ) {
        self.budgets = budgets
        self.expirationGrace = expirationGrace
        self.pendingLimits = pendingLimits
        self.maximumConcurrentRuns = maximumConcurrentRuns
        self.maximumConcurrentContinuedProcessing = maximumConcurrentContinuedProcessing
        self.progressStallTimeout = progressStallTimeout
        self.maximumEarliestBeginDelay = maximumEarliestBeginDelay
        self.supportedResources = supportedResources
        self.simulatedExpirationAfter = simulatedExpirationAfter
        self.deviceSalt = deviceSalt
        self.explainsLaunches = explainsLaunches
        self.launchesOnlyWhenSimulated = launchesOnlyWhenSimulated
    }

    /// The budget of a run of `kind`, taking the simulated-expiration switch into account.
    public func budget(for kind: TaskKind) -> TimeInterval? {
        let base = budgets[kind]
        guard let forced = simulatedExpirationAfter else { return base }
        return min(base ?? forced, forced)
    }

    /// The pending limit for `limitClass` (unlimited when not configured).
    public func pendingLimit(for limitClass: PendingLimitClass) -> Int {
        pendingLimits[limitClass] ?? Int.max
    }
}
