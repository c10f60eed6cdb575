import Foundation

/// What the system knows about one app that the policies weigh.
public struct AppPolicyState: Hashable, Sendable, Codable {
    /// The per-app Background App Refresh switch.
    public var backgroundRefreshEnabled: Bool
    /// The user swiped the app away in the app switcher; no launches until it is opened again.
    public var forceQuit: Bool
    /// When the user opens the app, learned from its foreground sessions.
    public var usage: UsageModel
    /// Penalty for over-scheduling and runs that keep expiring.
    public var throttle: ThrottleState
    /// Estimated joules spent by background runs on `energyDay`.
    public var energyUsed: Double
    /// The local day (days since 1970 in the usage model's time zone) `energyUsed` counts.
    public var energyDay: Int
    /// When the app was last launched in the background (any task: the rate limit's input).
    public var lastLaunch: Date?
    /// When the latest app-refresh run that succeeded started: how old the app's content
    /// is, which is what refresh placement measures (`nil` until one succeeds; state saved
    /// before it was kept decodes without it). Not ``lastLaunch``: a clean-up launched
    /// while the device charges fetched nothing, and a refresh that failed left the
    /// content as old as it was.
    public var lastRefresh: Date?
    /// Consecutive failed runs per task identifier that has a ``RetryPolicy`` (`nil` when
    /// none: state saved before retries were counted decodes without it).
    public var retryAttempts: [String: Int]?
    /// The app's background launches of about the last week, decayed (`nil` until its first:
    /// state saved before they were counted decodes without it, and a damaged ledger is
    /// dropped, not the state): what the refresh placement has really spent.
    public var launchLedger: LaunchLedger?

    /// Records a background launch of the app at `instant` (now, or a launch restored from
    /// the run log): the rate limit's last launch and the ledger's count. The ledger learns
    /// first whether the device allows refreshes now (`refreshesAllowed`): a state restored
    /// from the store, or written by another replica, may say otherwise.
    public mutating func recordLaunch(at instant: Date, now: Date, refreshesAllowed: Bool) {
        lastLaunch = instant
        var ledger = launchLedger ?? LaunchLedger(since: instant, refreshesAllowed: refreshesAllowed)
        ledger.refreshesAllowed(refreshesAllowed, at: now)
        ledger.record(instant, now: now)
        launchLedger = ledger
    }

    private enum CodingKeys: String, CodingKey {
        case backgroundRefreshEnabled, forceQuit, usage, throttle, energyUsed, energyDay
        case lastLaunch, lastRefresh, retryAttempts, launchLedger
    }

    /// Encodes the state with every field, or without ``usage`` when the encoder's user info
    /// holds ``PolicyStateTextEncoder/usageOmitted`` (`true`): the text encoder adds a usage
    /// model it encoded before (the model is most of the text, and a run's end does not
    /// change it).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(backgroundRefreshEnabled, forKey: .backgroundRefreshEnabled)
        try container.encode(forceQuit, forKey: .forceQuit)
        if encoder.userInfo[PolicyStateTextEncoder.usageOmitted] as? Bool != true {
            try container.encode(usage, forKey: .usage)
        }
        try container.encode(throttle, forKey: .throttle)
        try container.encode(energyUsed, forKey: .energyUsed)
        try container.encode(energyDay, forKey: .energyDay)
        try container.encodeIfPresent(lastLaunch, forKey: .lastLaunch)
        try container.encodeIfPresent(lastRefresh, forKey: .lastRefresh)
        try container.encodeIfPresent(retryAttempts, forKey: .retryAttempts)
        try container.encodeIfPresent(launchLedger, forKey: .launchLedger)
    }

    /// The key of ``usage`` in the encoded state.
    static let usageKey = CodingKeys.usage.stringValue

    /// Decodes a stored state. A damaged launch ledger is dropped (a new one starts at the
    /// next launch: it is a week's estimate that rebuilds itself), not the state: refusing
    /// it would lose the app's usage history and throttle.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        backgroundRefreshEnabled = try container.decode(Bool.self, forKey: .backgroundRefreshEnabled)
        forceQuit = try container.decode(Bool.self, forKey: .forceQuit)
        usage = try container.decode(UsageModel.self, forKey: .usage)
        throttle = try container.decode(ThrottleState.self, forKey: .throttle)
        energyUsed = try container.decode(Double.self, forKey: .energyUsed)
        energyDay = try container.decode(Int.self, forKey: .energyDay)
        lastLaunch = try container.decodeIfPresent(Date.self, forKey: .lastLaunch)
        lastRefresh = try container.decodeIfPresent(Date.self, forKey: .lastRefresh)
        retryAttempts = try container.decodeIfPresent([String: Int].self, forKey: .retryAttempts)
        launchLedger = try? container.decodeIfPresent(LaunchLedger.self, forKey: .launchLedger)
    }

    /// Why the launch ledger in `data` (a state as encoded) cannot be read, or `nil` when it
    /// reads or there is none: decoding drops a damaged ledger and keeps the rest
    /// (``init(from:)``), and whoever loads a saved state says so in its log with this.
    public static func launchLedgerProblem(in data: Data) -> String? {
        /// The ledger alone, read as the state's decoder reads it.
        struct LedgerOnly: Decodable {
            init(from decoder: any Decoder) throws {
                _ = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(LaunchLedger.self, forKey: .launchLedger)
            }
        }
        do {
            _ = try JSONDecoder().decode(LedgerOnly.self, from: data)
            return nil
        } catch {
            return DecodingErrorText.describe(error)
        }
    }

    /// A new app: switch on, not force-quit, nothing learned yet.
    public init(backgroundRefreshEnabled: Bool = true, usage: UsageModel, throttle: ThrottleState = ThrottleState()) {
        self.backgroundRefreshEnabled = backgroundRefreshEnabled
        self.forceQuit = false
        self.usage = usage
        self.throttle = throttle
        self.energyUsed = 0
        self.energyDay = 0
        self.lastLaunch = nil
    }
}

/// Everything a policy may look at to judge one request at one instant. Built by the
/// engine; policies are pure functions of it.
public struct PolicyContext: Sendable {
    /// The request judged.
    public var request: PendingRequest
    /// Now.
    public var now: Date
    /// Since when the request has been due (its earliest begin date, or later when it
    /// waited for a required condition).
    public var eligibleSince: Date
    /// The device.
    public var conditions: Conditions
    /// The app.
    public var app: AppPolicyState
    /// Runs in progress, system-wide.
    public var runningCount: Int
    /// The system-wide cap on runs in progress.
    public var maximumConcurrentRuns: Int
    /// The last shared trigger (power plugged in, network back), for herd spreading.
    public var lastSharedTrigger: Date?
    /// Since when the network has been up after a gap of a minute or more
    /// (``SchedulerEngine/minimumNetworkGap``), while it is up; `nil` while it is away or
    /// its return was not seen. With the usage model's ``UsageModel/usualNetworkStay(afterReturnAt:now:)``
    /// it tells how long the network will likely stay.
    public var networkBackSince: Date?
    /// The tunables.
    public var configuration: PolicyConfiguration
    /// This device's herd-spreading salt (``SchedulerConfiguration/deviceSalt``).
    public var deviceSalt: UInt64
    /// Since when the request has been ready to run without a break: due, its required
    /// conditions holding, no run of its identifier in progress (time a policy held it
    /// counts as ready). At least ``eligibleSince``.
    public var readySince: Date
    /// Whether the device is awake for other work at this instant: a run started at it.
    public var wakeUnderWay: Bool
    /// The next instant at which the engine judges a request a policy holds (an app
    /// refresh placed shortly before a likely launch, for example): the next wake it
    /// plans, when that request then runs. `nil`: none planned.
    public var nextPlannedWake: Date?

    /// Creates a context.
    public init(
        request: PendingRequest,
        now: Date,
        eligibleSince: Date,
        conditions: Conditions,
        app: AppPolicyState,
        runningCount: Int = 0,
        maximumConcurrentRuns: Int = 4,
        lastSharedTrigger: Date? = nil,
        networkBackSince: Date? = nil,
        configuration: PolicyConfiguration = .init(),
        deviceSalt: UInt64 = 0,
        readySince: Date? = nil,
        wakeUnderWay: Bool = false,
        nextPlannedWake: Date? = nil
    ) {
        self.request = request
        self.now = now
        self.eligibleSince = eligibleSince
        self.conditions = conditions
        self.app = app
        self.runningCount = runningCount
        self.maximumConcurrentRuns = maximumConcurrentRuns
        self.lastSharedTrigger = lastSharedTrigger
        self.networkBackSince = networkBackSince
        self.configuration = configuration
        self.deviceSalt = deviceSalt
        self.readySince = max(readySince ?? eligibleSince, eligibleSince)
        self.wakeUnderWay = wakeUnderWay
        self.nextPlannedWake = nextPlannedWake
    }

    /// Whether the request is processing-like (processing or health research).
    var isProcessing: Bool { Self.isProcessing(request.kind) }
    /// Whether `kind` is processing-like (processing or health research).
    static func isProcessing(_ kind: TaskKind) -> Bool { kind == .processing || kind == .healthResearch }

    /// Whether the request needs the network (``PendingRequest/needsNetwork(refreshRequiresNetwork:)``).
    var needsNetwork: Bool { request.needsNetwork(refreshRequiresNetwork: configuration.refreshRequiresNetwork) }

    /// How long the network is likely to stay from its return (``networkBackSince``), for a
    /// request that needs it (``UsageModel/usualNetworkStay(afterReturnAt:now:)``): nil when
    /// the network is away, its return was not seen, the request does not need it, or the
    /// device's history says nothing of a return at this time of day.
    var usualNetworkStay: TimeInterval? {
        guard needsNetwork, conditions.networkAvailable, let back = networkBackSince else { return nil }
        return app.usage.usualNetworkStay(afterReturnAt: back, now: now)
    }
}
