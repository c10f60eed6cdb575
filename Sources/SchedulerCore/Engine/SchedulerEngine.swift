import Foundation

/// The scheduling engine: a pure state machine that turns events into effects.
///
/// It owns no clock, performs no I/O and never blocks: every call takes `now` from the
/// driver, and everything that must happen in the world (persist, launch a handler,
/// expire, terminate, wake me at) comes back as an ``EngineEffect``. Two drivers host it:
/// the real-time driver (Dispatch timer, SQLite, real handlers) and the virtual-time
/// driver of the simulator, so a simulated day previews real behaviour.
///
/// Submissions are two-phase, because they must be durable before they are acknowledged:
/// the driver calls ``checkSubmit(_:at:)``, persists the request, then applies it with
/// ``submit(_:at:)``. Every other input (cancellations, the refresh switch, timers,
/// conditions, completions) is an ``EngineEvent`` fed to ``handle(_:at:)``, which judges
/// again, launches what is ready and asks for the next wake; the driver persists a
/// cancellation or a switch before feeding it.
///
/// Rules implemented here (docs/system.md, "Scheduled background tasks"):
/// - a request is eligible when `now >= earliestBeginDate` and every required condition
///   (external power, network) holds; continued processing ignores the date and runs FIFO;
/// - 1 pending refresh and 10 pending processing requests per app; resubmitting an
///   identifier replaces its pending request; a request is consumed when it launches;
/// - each run gets its kind's budget, then its expiration handler, then a grace period,
///   then termination; a run without an expiration handler is recorded as failed;
/// - at most `maximumConcurrentRuns` runs at once, never two runs of one identifier.
///
/// Then the dasd-style ``PolicySet`` judges each ready request (battery, low power mode,
/// thermal, idleness, usage prediction, energy budget, rate limit, throttling, herd
/// spreading...): one `mustNotProceed` holds it where the change that lifts it will find
/// it (an instant, the app's state, the device's conditions); otherwise the weighted score
/// is compared with the threshold. Runs due within the coalescing tolerance of each other
/// start in one wake.
public struct SchedulerEngine: Sendable {
    /// The engine's tunables.
    public private(set) var configuration: SchedulerConfiguration
    /// The device conditions last reported.
    public private(set) var conditions: Conditions

    private var apps: [AppID: AppRegistration] = [:]
    private var index: EligibilityIndex
    private var runs: [RunID: ActiveRun] = [:]
    private var runsByKey: [RequestKey: RunID] = [:]
    /// How many of `runs` are continued processing (kept, not counted: the launch loop
    /// asks for it once per judged request).
    private var runningContinuedProcessingCount = 0
    private var deadlines = IndexedHeap<RunID, Date>()
    private var nextRunNumber: Int64
    private var nextSequence: UInt64 = 0
    /// The policies and their configuration.
    public private(set) var policies: PolicySet
    private let usageConfiguration: UsageModelConfiguration
    private var appStates: [AppID: AppPolicyState] = [:]
    /// When each request key last started a run, for the throttle's over-scheduling check
    /// (a submission asking to begin sooner than the kind's cadence after it). Pruned of
    /// starts older than every cadence the app's throttle has (they can no longer make a
    /// strike) whenever it doubles past ``lastRunStartPruneAt``, so a long-running process
    /// that launches ever new identifiers keeps what matters, not one entry per identifier
    /// it ever ran.
    private var lastRunStart: [RequestKey: Date] = [:]
    /// The size at which the next launch prunes ``lastRunStart`` (doubling: amortized O(1)).
    private var lastRunStartPruneAt = SchedulerEngine.lastRunStartPruneFloor
    /// ``lastRunStart``'s pruning threshold never goes below this.
    static let lastRunStartPruneFloor = 1_024
    /// The last shared trigger (power or network back), or `nil` when none was seen.
    private(set) var lastSharedTrigger: Date?
    private var coalesceAnchor: Date?
    /// The instant the latest run started (any app): the device is awake at it, so work
    /// that waits to share a wake may start then too. Not persisted (a restart forgets
    /// it; at worst one processing run waits for the next wake).
    private var lastWake: Date?
    /// The apps launched into the background at ``lastWake``: their other requests held until
    /// an instant are judged again at it, to join the launch (herd spreading lets them).
    private var appsLaunchedAtLastWake: Set<AppID> = []
    private var retryPolicies: [RequestKey: RetryPolicy] = [:]
    /// Apps whose process is exiting (``EngineEvent/appTerminating(_:)``): nothing launches for them.
    private var terminatingApps: Set<AppID> = []
    /// When the network went away, while it is away (nil while it is up, and when it was
    /// already away as this engine began: a loss whose start is unknown is not learned).
    private var networkLostAt: Date?
    /// Since when the network has been up, while it is up: when it came back after a gap of
    /// ``minimumNetworkGap`` or more (a shorter blip does not end a stay). `nil` while it is
    /// away, and while it has been up since before this engine began (a stay whose start is
    /// unknown is not learned).
    private var networkBackSince: Date?
    /// Since when the device has held refreshes with the network there (Low Power Mode
    /// or heat), while it does: a hold of ``minimumDeviceHold`` or more is
    /// learned when it ends.
    private var deviceHoldSince: Date?
    /// The start of the stay a gap interrupted, while the network is away: it goes on if the
    /// network comes back within ``minimumNetworkGap``.
    private var stayBeforeGap: Date?
    /// How many times the engine taught the apps' usage models the device's history (a network
    /// loss, ``UsageModel/recordNetworkLoss(at:)``, a stay, ``UsageModel/recordNetworkStay(from:to:)``,
    /// or a hold on refreshes, ``UsageModel/recordDeviceHold(at:)``): a driver that sees it
    /// change saves every app's policy state.
    public private(set) var networkHistoryRecorded = 0
    /// The shortest network loss the usage models learn: an hour. Shorter gaps (a lift, a
    /// tunnel) are not worth a refresh before them.
    public static let minimumNetworkLoss: TimeInterval = 3600
    /// How long the device must hold refreshes, with the network there, for the hold to be
    /// learned as one that may come again at that hour (``UsageModel/recordDeviceHold(at:)``):
    /// an hour, as a network loss.
    public static let minimumDeviceHold: TimeInterval = 3600
    /// The shortest gap that ends a network stay: a minute. A blip (an interface that
    /// renegotiates, a handover between access points) does not.
    public static let minimumNetworkGap: TimeInterval = 60

    private struct ActiveRun: Sendable {
        enum Phase: Sendable, Equatable {
            /// Running within its budget (deadline: end of budget, or next progress check).
            case running
            /// Expired; waiting for completion until the grace deadline.
            case expiring(reason: String)
        }
        var record: RunRecord
        var phase: Phase
        var budgetDeadline: Date?
        /// Progress starts at zero: a run still at zero one stall period after launch has
        /// not advanced, and is expired.
        var lastProgress: Int64 = 0
        var lastProgressAt: Date
        /// What the launch replaced, given back if the run is not claimed in a shared
        /// store (``EngineEvent/runNotClaimed(_:)``): the identifier's previous run start
        /// and the app's previous launch.
        var previousRunStart: Date?
        var previousLaunch: Date?
        /// Expired because the device changed (user became active, heat), not the app's fault.
        var expiredForConditions = false
        /// The host ended the app's process during the run at the user's word (a force-quit:
        /// ``EngineEvent/appEndedByTheUser(_:reason:)``): however it ends, not the app's doing.
        var endedByTheUser = false
        var isContinuedProcessing: Bool { record.request.kind == .continuedProcessing }
    }

    /// Creates an engine. `lastRunID` continues the numbering of a reopened store.
    public init(
        configuration: SchedulerConfiguration = .init(),
        conditions: Conditions = .favorable,
        lastRunID: RunID? = nil,
        policies: PolicySet = PolicySet(),
        usage: UsageModelConfiguration = .init()
    ) {
        self.policies = policies
        self.usageConfiguration = usage
        self.configuration = configuration
        self.conditions = conditions
        self.nextRunNumber = (lastRunID?.rawValue ?? 0) + 1
        index = EligibilityIndex(refreshRequiresNetwork: policies.configuration.refreshRequiresNetwork)
    }

    // MARK: Apps

    /// Tells the engine about an app (its manifest and refresh switch). Calling it again
    /// replaces what the engine knew, as an app does on every launch.
    public mutating func register(_ registration: AppRegistration) {
        apps[registration.app] = registration
        terminatingApps.remove(registration.app)
    }

    /// Sets (or with `nil` removes) the retry policy of one task identifier. Setting a
    /// policy keeps the count of consecutive failures (an app sets its policies on every
    /// launch, and the count must survive a restart); removing it forgets the count.
    public mutating func setRetryPolicy(_ policy: RetryPolicy?, for key: RequestKey) {
        retryPolicies[key] = policy
        if policy == nil, appStates[key.app]?.retryAttempts?[key.identifier] != nil {
            appStates[key.app]?.retryAttempts?[key.identifier] = nil
        }
    }

    /// Replaces the policy configuration; everything a policy held is judged again.
    public mutating func setPolicyConfiguration(_ configuration: PolicyConfiguration, at now: Date) -> [EngineEffect] {
        policies.configuration = configuration
        updateLedgers(at: now)  // the rules of what forbids refreshes may have changed
        var effects: [EngineEffect] = []
        report(index.setRefreshRequiresNetwork(configuration.refreshRequiresNetwork, conditions: conditions), into: &effects)
        releaseAllHeld(at: now, into: &effects)
        launchWhatIsReady(at: now, into: &effects)
        effects.append(.wake(at: nextWake))
        return effects
    }

    /// Turns the manual launch switch (``SchedulerConfiguration/launchesOnlyWhenSimulated``)
    /// on or off; turned off, whatever is ready launches now.
    public mutating func setLaunchesOnlyWhenSimulated(_ manual: Bool, at now: Date) -> [EngineEffect] {
        configuration.launchesOnlyWhenSimulated = manual
        var effects: [EngineEffect] = []
        launchWhatIsReady(at: now, into: &effects)
        effects.append(.wake(at: nextWake))
        return effects
    }

    /// What the policies know of `app` (created on first use at `now`).
    public func policyState(of app: AppID) -> AppPolicyState? { appStates[app] }

    /// The apps the policies know something of (``policyState(of:)``), in order.
    public var appsWithPolicyState: [AppID] { appStates.keys.sorted() }

    /// A new app's policy state, as judged at `now`: nothing learned yet.
    private func newAppState(_ app: AppID, at now: Date) -> AppPolicyState {
        AppPolicyState(
            backgroundRefreshEnabled: apps[app]?.backgroundRefreshEnabled ?? true,
            usage: UsageModel(createdAt: now, configuration: usageConfiguration)
        )
    }

    /// Changes the policy state of `app` (made first, at `now`, when it has none) where the
    /// engine keeps it. In place, not taken out and written back: a copy shares its tables
    /// (the usage model's, the throttle's, the ledger's) with the one kept, so every table a
    /// change touched would be copied whole first, at every launch, foreground and
    /// submission.
    @discardableResult
    private mutating func changeAppState<Result>(_ app: AppID, at now: Date, _ change: (inout AppPolicyState) -> Result) -> Result {
        // Through the values' index: the dictionary's optional subscript would move the
        // state out and back in, two copies of its bytes.
        if let index = appStates.index(forKey: app) { return change(&appStates.values[index]) }
        var state = newAppState(app, at: now)
        let result = change(&state)
        appStates[app] = state
        return result
    }

    /// Counts what a finished run of `app` cost against its daily energy budget. Not an
    /// event: it changes no pending request now, only the next judgement of the app's.
    public mutating func recordEnergy(_ joules: Double, for app: AppID, at now: Date) {
        changeAppState(app, at: now) { state in
            let day = state.usage.localDay(of: now)
            if state.energyDay != day {
                state.energyDay = day
                state.energyUsed = 0
            }
            state.energyUsed += joules
        }
    }

    /// Restores what the policies learned of an app (usage history, throttle) from storage.
    public mutating func restorePolicyState(_ state: AppPolicyState, of app: AppID) {
        appStates[app] = state
    }

    /// Restores when `app` was last launched in the background from the run log (a launch
    /// whose run never ended in a saved policy state: its process was killed), for the rate
    /// limit: the later of `instant` and what the engine knows is kept. An instant after
    /// `now` (the clock was set back) counts as `now`, so the limit holds no longer than
    /// one interval from here.
    public mutating func restoreLastLaunch(_ instant: Date, of app: AppID, at now: Date) {
        let instant = min(instant, now)
        let allowed = refreshesAllowed(conditions)
        changeAppState(app, at: now) { state in
            guard state.lastLaunch.map({ $0 < instant }) ?? true else { return }
            state.recordLaunch(at: instant, now: now, refreshesAllowed: allowed)
        }
    }

    /// What the engine knows of `app`.
    public func registration(of app: AppID) -> AppRegistration? { apps[app] }

    // MARK: Requests

    /// Checks a submission without changing anything. The checks run in this order, and
    /// the first that fails is reported:
    /// 1. `notPermitted`: the identifier is malformed (empty, over 255 bytes, not reverse-DNS);
    /// 2. `unavailable`: the app is unknown, or its Background App Refresh switch is off
    ///    (continued processing is user-started and ignores the switch);
    /// 3. `notPermitted`: the identifier is not in `BGTaskSchedulerPermittedIdentifiers`
    ///    (wildcards count for continued processing only), the kind's background mode is
    ///    missing from `UIBackgroundModes`, or a required resource is unsupported;
    /// 4. `invalidRequest`: `earliestBeginDate` is NaN, infinite, before 0001-01-01
    ///    (`Date.distantPast`) or further ahead than `maximumEarliestBeginDelay`, or a
    ///    continued-processing title is empty;
    /// 5. `tooManyPendingTaskRequests`: the kind's per-app limit is reached (a request
    ///    that replaces a pending one with the same identifier does not count);
    /// 6. `immediateRunIneligible`: continued processing with strategy `.fail` that
    ///    cannot start at once.
    public func checkSubmit(_ request: PendingRequest, at now: Date) throws(SubmitRejection) {
        try checkSubmit(request, at: now, after: [])
    }

    /// ``checkSubmit(_:at:)`` for a request that follows `earlier` in one group commit:
    /// those were checked and accepted but are not applied yet, so the app's pending
    /// counts include them (a request moves between limit classes when it replaces one of
    /// another kind).
    /// - Precondition: no request of `earlier` has `request`'s key (a batch holds one
    ///   request per key).
    public func checkSubmit(_ request: PendingRequest, at now: Date, after earlier: [PendingRequest]) throws(SubmitRejection) {
        try checkPermitted(request, at: now)
        let id = request.identifier
        let limitClass = request.kind.limitClass
        let replacing = index.kind(of: request.key)?.limitClass == limitClass
        var batched = 0
        for other in earlier where other.app == request.app {
            let before = index.kind(of: other.key)?.limitClass
            let after = other.kind.limitClass
            if after == limitClass, before != limitClass { batched += 1 }
            if after != limitClass, before == limitClass { batched -= 1 }
        }
        let pending = index.pendingCount(of: request.app, in: limitClass) + batched - (replacing ? 1 : 0)
        let limit = configuration.pendingLimit(for: limitClass)
        if pending >= limit {
            throw SubmitRejection(.tooManyPendingTaskRequests, "\(request.app) already has \(pending) pending \(limitClass.rawValue) request(s), the limit is \(limit); '\(id)' was not submitted")
        }
        if let options = request.continuedProcessing, options.strategy == .fail, !canStartContinuedProcessingNow(replacing: request.key) {
            throw SubmitRejection(.immediateRunIneligible, "'\(id)' cannot start now: \(runningContinuedProcessingCount) continued-processing run(s) in progress, the cap is \(configuration.maximumConcurrentContinuedProcessing)")
        }
    }

    /// Checks 1 to 4 of ``checkSubmit(_:at:)``: whether the app may ask for `request` at
    /// all, whatever is pending or running (what a remote wake, never queued, is held to).
    public func checkPermitted(_ request: PendingRequest, at now: Date) throws(SubmitRejection) {
        let id = request.identifier
        if let problem = TaskIdentifierRules.problem(with: id) {
            throw SubmitRejection(.notPermitted, "identifier rejected: \(problem)")
        }
        guard let registration = apps[request.app] else {
            throw SubmitRejection(.unavailable, "app \(request.app) is not known to the scheduler; it cannot schedule '\(id)'")
        }
        if request.kind != .continuedProcessing, !registration.backgroundRefreshEnabled {
            throw SubmitRejection(.unavailable, "Background App Refresh is off for \(request.app); '\(id)' cannot be scheduled")
        }
        let manifest = registration.manifest
        if let refusal = manifest.refusal(of: request) {
            guard refusal.isListed else { throw SubmitRejection.notListed(id, in: manifest) }
            if let mode = refusal.missingMode {
                throw SubmitRejection(.notPermitted, "'\(id)' is a \(request.kind) task, which needs \"\(mode)\" in UIBackgroundModes of \(manifest.source ?? "the manifest")")
            }
        }
        if let options = request.continuedProcessing {
            for resource in options.requiredResources where !configuration.supportedResources.contains(resource) {
                throw SubmitRejection(.notPermitted, "'\(id)' requires the resource '\(resource)', which this system does not support")
            }
        }
        if request.kind != .continuedProcessing, let date = request.earliestBeginDate {
            // Any past date means "as soon as possible", but one before year 1 has no calendar
            // date that the tools could show: a slip, refused, as one not finite. (One past
            // 4001 is refused below as too far ahead, with its distance in days.)
            if !date.timeIntervalSinceReferenceDate.isFinite || date < .distantPast, let problem = DateText.rangeProblem(date) {
                throw SubmitRejection(.invalidRequest, "'\(id)': earliestBeginDate is \(problem)")
            }
            let ahead = date.timeIntervalSince(now)
            if ahead > configuration.maximumEarliestBeginDelay {
                // In days, not as a date: Foundation cannot print a date 1e308 s away.
                let days = ahead / 86_400
                // Days and hours: 366.99 days is not shown as the limit it exceeds.
                let shown = days < 1e9 ? DurationText.spoken(ahead) : "over a billion days"
                throw SubmitRejection(.invalidRequest, "'\(id)': earliestBeginDate is \(shown) away, more than \(Int(configuration.maximumEarliestBeginDelay / 86_400)) days")
            }
        }
        if let options = request.continuedProcessing {
            if options.title.isEmpty {
                throw SubmitRejection(.invalidRequest, "'\(id)': a continued-processing request needs a non-empty title")
            }
            for (name, text) in [("title", options.title), ("subtitle", options.subtitle)] {
                if let problem = Self.textProblem(text, maximumBytes: 1024, allowsLineBreaks: true) {
                    throw SubmitRejection(.invalidRequest, "'\(id)': the continued-processing \(name) \(problem)")
                }
            }
        }
        if let protection = request.protectionTypeOfRequiredData, let problem = Self.textProblem(protection, maximumBytes: 255, allowsLineBreaks: false) {
            throw SubmitRejection(.invalidRequest, "'\(id)': protectionTypeOfRequiredData \(problem)")
        }
    }

    /// Why a text an app gave cannot be stored and shown, or `nil`: it is at most
    /// `maximumBytes` bytes of UTF-8 and holds no NUL (PostgreSQL cannot store one, SQLite
    /// cuts C strings at it) nor another control character (line breaks where a title may
    /// hold them).
    static func textProblem(_ text: String, maximumBytes: Int, allowsLineBreaks: Bool) -> String? {
        let bytes = text.utf8.count
        if bytes > maximumBytes { return "is \(bytes) bytes of UTF-8, more than \(maximumBytes)" }
        let control = allowsLineBreaks
            ? text.unicodeScalars.first { $0.properties.generalCategory == .control && $0 != "\n" && $0 != "\t" }
            : StrictJSON.firstControlCharacter(in: text)
        return control.map { "holds the control character \(StrictJSON.codePoint($0))" }
    }

    /// Applies a submission that ``checkSubmit(_:at:)`` accepted and the driver persisted.
    /// Replaces a pending request with the same key.
    public mutating func submit(_ request: PendingRequest, at now: Date) -> [EngineEffect] {
        var effects: [EngineEffect] = []
        file(request, at: now, into: &effects)
        launchWhatIsReady(at: now, into: &effects)
        effects.append(.wake(at: nextWake))
        return effects
    }

    /// Brings the pending requests to what a store shared by replicas holds, after other
    /// replicas changed it: each of `removed` goes (claimed, replaced or cancelled there),
    /// each of `upserted` is filed as they submitted it (not counted by this replica's
    /// throttle: the submission was not this app process's), and only then is what is
    /// ready launched, once. Removing first matters: a replica that was away has many
    /// requests the others already took, and launching after each removal would try to
    /// claim those one after the other.
    public mutating func applySharedChanges(removed: [RequestKey], upserted: [PendingRequest], at now: Date) -> [EngineEffect] {
        var effects: [EngineEffect] = []
        for key in removed { _ = index.remove(key) }
        for request in upserted {
            nextSequence += 1
            index.insert(request, sequence: nextSequence, now: now, conditions: conditions, filedEarlier: true)
            if let location = index.location(of: request.key) {
                effects.append(.requestsMoved([.init(key: request.key, location: location)]))
            }
        }
        launchWhatIsReady(at: now, into: &effects)
        effects.append(.wake(at: nextWake))
        return effects
    }

    /// Takes the pending request `key` out without judging anything (what
    /// `.requestCancelled` does before its launch pass): for a caller that removes requests
    /// before the apps they belong to are registered, so that the pass that follows
    /// registration judges everything once, each app as itself.
    public mutating func withdraw(_ key: RequestKey) {
        _ = index.remove(key)
    }

    /// An identifier asked for from outside, for a message: quoted as it is when it could be
    /// one (at most 255 bytes of reverse-DNS), else escaped and cut short (a megabyte or a
    /// NUL from a testing hook is named, not echoed whole).
    static func shown(_ identifier: String) -> String {
        TaskIdentifierRules.problem(with: identifier) == nil ? "'\(identifier)'" : String(reflecting: identifier.excerpt(scalars: 80))
    }

    /// Restores requests read from the store at start-up (no effects; call
    /// ``handle(_:at:)`` with `.timerFired` afterwards to run what is due).
    ///
    /// The pending limits hold here as they do at submission: requests are taken in
    /// submission order, and one that would exceed its app's limit for its kind (a store
    /// written by two processes, or by hand) is not restored but returned, for the caller to
    /// report and set aside.
    /// - Returns: The requests refused because of the pending limits, in submission order.
    @discardableResult
    public mutating func restore(_ requests: [PendingRequest], at now: Date) -> [PendingRequest] {
        var refused: [PendingRequest] = []
        index.reserveCapacity(index.count + requests.count)
        // Sorted by position (a request is large to move); a store's rows usually come in
        // submission order already, which the check finds in one pass.
        let inOrder: (Int, Int) -> Bool = { a, b in
            let (first, second) = (requests[a].submittedAt, requests[b].submittedAt)
            return first != second ? first < second : requests[a].key < requests[b].key
        }
        var order = Array(requests.indices)
        if zip(order, order.dropFirst()).contains(where: { !inOrder($0, $1) }) { order.sort(by: inOrder) }
        for position in order {
            let request = requests[position]
            let limitClass = request.kind.limitClass
            let pending = index.kind(of: request.key)
            if pending?.limitClass != limitClass, index.pendingCount(of: request.app, in: limitClass) >= configuration.pendingLimit(for: limitClass) {
                refused.append(request)
                continue
            }
            nextSequence += 1
            if pending == nil {
                index.insertNew(request, sequence: nextSequence, now: now, conditions: conditions)
            } else {
                index.insert(request, sequence: nextSequence, now: now, conditions: conditions, filedEarlier: true)
            }
        }
        return refused
    }

    /// Copies of the pending requests of `app`, in submission order.
    public func pendingRequests(of app: AppID) -> [PendingRequest] { index.requests(of: app) }
    /// The pending request `key`, or `nil`.
    public func pendingRequest(for key: RequestKey) -> PendingRequest? { index.request(for: key) }

    /// How many requests are pending.
    public var pendingCount: Int { index.count }

    /// Whether any request is pending or any run in progress.
    public var hasWork: Bool { index.count > 0 || !runs.isEmpty }

    /// Whether the device's slow readings (battery level, thermal, idleness, CPU pressure)
    /// matter now: a run is in progress (it may be expired when they change), or a pending
    /// request is due and judged on them (``EligibilityIndex/dependsOnDeviceReadings``).
    /// A request due tomorrow does not: the engine's wake at its date comes first.
    public var dependsOnSlowReadings: Bool { !runs.isEmpty || index.dependsOnDeviceReadings }

    /// Every pending request, in submission order.
    public var allPendingRequests: [PendingRequest] { index.allRequests }

    /// Where the pending request under `key` sits (waiting, eligible, blocked...).
    public func location(of key: RequestKey) -> EligibilityIndex.Location? { index.location(of: key) }

    /// Since when the request under `key` has been due, when it is due (what the policies
    /// see as its wait).
    public func eligibleSince(of key: RequestKey) -> Date? { index.eligibleSince(of: key) }

    /// The runs in progress.
    public var activeRuns: [RunRecord] { runs.values.map(\.record).sorted { $0.id < $1.id } }

    /// The ids of the runs in progress, in no order: cheaper than ``activeRuns`` for a
    /// caller that asks after every event (the shared store's lease renewals).
    public var activeRunIDs: [RunID] { Array(runs.keys) }

    /// The run in progress for `key`, if any.
    public func activeRun(for key: RequestKey) -> RunRecord? { runsByKey[key].flatMap { runs[$0]?.record } }

    /// The next instant the engine needs a `.timerFired`, if any.
    public var nextWake: Date? {
        switch (index.nextDueDate, deadlines.min?.priority) {
        case let (due?, deadline?): return min(due, deadline)
        case let (due?, nil): return due
        case let (nil, deadline?): return deadline
        case (nil, nil): return nil
        }
    }

    // MARK: Testing hooks

    /// Launches the pending request under `key` now, whatever its date and conditions
    /// (the public twin of Apple's `_simulateLaunchForTaskWithIdentifier`).
    public mutating func simulateLaunch(_ key: RequestKey, at now: Date) throws(EngineError) -> [EngineEffect] {
        if let running = runsByKey[key] {
            throw EngineError(.alreadyRunning, "'\(key.identifier)' of \(key.app) is already running (\(running)); never two runs of one identifier")
        }
        guard let request = index.remove(key) else {
            throw EngineError(.noPendingRequest, "no pending request with identifier \(Self.shown(key.identifier)) for \(key.app); submit one first")
        }
        var effects: [EngineEffect] = []
        launch(request, at: now, into: &effects)
        effects.append(.wake(at: nextWake))
        return effects
    }

    /// A remote wake (bgtaskd's silent push, docs/daemon.md "Remote wake"): `request`
    /// launches now. It is checked as a submission is (the app's manifest, its switch),
    /// except against the app's pending limits: a push is not a request the app queued, and
    /// never waits in the queue. A pending request under the same key is replaced.
    public mutating func wake(_ request: PendingRequest, at now: Date) throws(SubmitRejection) -> [EngineEffect] {
        // Not queued, so neither the pending limits nor the queue's cap apply.
        try checkPermitted(request, at: now)
        if let running = runsByKey[request.key] {
            throw SubmitRejection(.unavailable, "'\(request.identifier)' of \(request.app) is already running (\(running)); the wake was not delivered")
        }
        if appStates[request.app]?.forceQuit == true {
            throw SubmitRejection(.unavailable, "\(request.app) was force-quit: no background launches until the user opens it again")
        }
        if terminatingApps.contains(request.app) {
            throw SubmitRejection(.unavailable, "\(request.app)'s process is terminating; the wake was not delivered")
        }
        _ = index.remove(request.key)
        var effects: [EngineEffect] = []
        launch(request, at: now, into: &effects)
        // The device is awake for the push: what waits for a wake may start in it, and the
        // app's other held requests may join its launch.
        if index.hasHeldUntilWake || index.hasDeferred(of: request.app) { launchWhatIsReady(at: now, into: &effects) }
        effects.append(.wake(at: nextWake))
        return effects
    }

    /// Expires the run in progress for `key` now (the public twin of Apple's
    /// `_simulateExpirationForTaskWithIdentifier`).
    public mutating func simulateExpiration(_ key: RequestKey, at now: Date) throws(EngineError) -> [EngineEffect] {
        guard let runID = runsByKey[key], let run = runs[runID], run.phase == .running else {
            // A run already told to expire is in its grace period: say so, not that nothing runs.
            if let runID = runsByKey[key], let run = runs[runID], case .expiring(let reason) = run.phase {
                throw EngineError(.noRunningTask, "the task with identifier '\(key.identifier)' for \(key.app) was already told to expire (\(reason)); it has its grace period to complete")
            }
            throw EngineError(.noRunningTask, "no running task with identifier \(Self.shown(key.identifier)) for \(key.app)")
        }
        var effects: [EngineEffect] = []
        expire(runID, reason: "expiration simulated", at: now, into: &effects)
        effects.append(.wake(at: nextWake))
        return effects
    }

    // MARK: Events

    /// Feeds one event to the engine and returns what the driver must do, in order.
    /// The last effect is always `.wake(at:)`, the next instant the engine needs.
    public mutating func handle(_ event: EngineEvent, at now: Date) -> [EngineEffect] {
        var effects: [EngineEffect] = []
        // A run's own report that comes after its budget's deadline, before the engine's
        // timer got to it (an out-of-process host pushes the expiration at the deadline
        // itself): the deadline applies first, so the run ends as expired, as it would have.
        switch event {
        case .taskCompleted(let runID, _), .expirationDelivered(let runID, _), .progressSampled(let runID, _):
            // One lookup: a run is a few hundred bytes, copied out on each.
            if let run = runs[runID], let deadline = run.budgetDeadline, deadline < now, case .running = run.phase {
                processDeadlines(at: now, into: &effects)
            }
        default:
            break
        }
        switch event {
        case .timerFired:
            processDeadlines(at: now, into: &effects)
        case .conditionsChanged(let newConditions):
            let old = conditions
            conditions = newConditions
            // A shared trigger: every device (and app) sees it at once, so spread what it frees.
            if (!old.externalPower && newConditions.externalPower) || (!old.networkAvailable && newConditions.networkAvailable) {
                lastSharedTrigger = now
            }
            if old.networkAvailable, !newConditions.networkAvailable {
                networkLostAt = now
                stayBeforeGap = networkBackSince
                networkBackSince = nil
            } else if !old.networkAvailable, newConditions.networkAvailable {
                learnNetworkHistory(backAt: now)
            }
            learnDeviceHolds(under: newConditions, at: now)
            if refreshesAllowed(newConditions) != refreshesAllowed(old) { updateLedgers(at: now) }
            report(index.conditionsChanged(to: newConditions, at: now), into: &effects)
            report(index.releaseHeldForDevice(conditions: newConditions), into: &effects)
            expireRunsWhoseConditionsFailed(at: now, into: &effects)
        case .appForegrounded(let app):
            changeAppState(app, at: now) { state in
                state.usage.recordForeground(at: now)
                state.forceQuit = false
            }
            report(index.releaseHeld(for: app, conditions: conditions), into: &effects)
        case .appForceQuit(let app):
            changeAppState(app, at: now) { $0.forceQuit = true }
            // Its requests a policy held until an instant are judged again now (below), so
            // they wait for the app to be opened from here: `bgtask why` said "held until"
            // an instant that no longer meant anything beside the force-quit's verdict.
            report(index.releaseDeferred(of: app, conditions: conditions), into: &effects)
        case .requestCancelled(let key):
            _ = index.remove(key)
        case .allRequestsCancelled(let app):
            _ = index.removeAll(of: app)
        case .backgroundRefreshChanged(let app, let enabled):
            apps[app]?.backgroundRefreshEnabled = enabled
            appStates[app]?.backgroundRefreshEnabled = enabled
            if enabled { report(index.releaseHeld(for: app, conditions: conditions), into: &effects) }
        case .appTerminating(let app):
            terminatingApps.insert(app)
            expireRunning(of: app, reason: "the app's process is terminating", at: now, into: &effects)
        case .appEndedByTheUser(let app, let reason):
            for (id, run) in runs where run.record.app == app { runs[id]?.endedByTheUser = true }
            expireRunning(of: app, reason: reason, noFaultOfTheApp: true, at: now, into: &effects)
        case .runsExpired(let app, let reason):
            // The host's decision, not the app's behaviour: no throttle strike (as for runs
            // expired because conditions changed).
            expireRunning(of: app, reason: reason, noFaultOfTheApp: true, at: now, into: &effects)
        case .appInstalled(let registration):
            apps[registration.app] = registration
            terminatingApps.remove(registration.app)
            appStates[registration.app]?.backgroundRefreshEnabled = registration.backgroundRefreshEnabled
            report(index.releaseHeld(for: registration.app, conditions: conditions), into: &effects)
        case .appUninstalled(let app):
            // No retry may be filed for a run ended by the uninstall.
            retryPolicies = retryPolicies.filter { $0.key.app != app }
            _ = index.removeAll(of: app)
            let running = runs.values.filter { $0.record.app == app }.map(\.record.id).sorted()
            for runID in running {
                effects.append(.terminate(runID, reason: "the app was uninstalled"))
                finish(runID, outcome: .terminated, success: nil, reason: "the app was uninstalled", at: now, into: &effects)
            }
            apps[app] = nil
            appStates[app] = nil
            lastRunStart = lastRunStart.filter { $0.key.app != app }
            terminatingApps.remove(app)

        case .expirationDelivered(let runID, let handlerWasSet):
            if !handlerWasSet, let run = runs[runID], case .expiring(let reason) = run.phase {
                finish(runID, outcome: .failure, success: nil, reason: "\(reason); no expiration handler was set", at: now, into: &effects)
            }
        case .taskCompleted(let runID, let success):
            if let run = runs[runID] {
                switch run.phase {
                case .running:
                    finish(runID, outcome: success ? .success : .failure, success: success, reason: "completed", at: now, into: &effects)
                case .expiring(let reason):
                    finish(runID, outcome: .expired, success: success, reason: "\(reason); completed within the grace period", at: now, into: &effects)
                }
            }
        case .launchFailed(let runID, let reason):
            finish(runID, outcome: .failure, success: nil, reason: reason, at: now, into: &effects)
        case .appNotStarted(let runID, let reason, let restoringRequest):
            // The request as the app filed it (its submission date keeps the interval it
            // asked for, which the placement reads).
            let request = runs[runID]?.record.request
            // The app was never launched: the rate limit and the launch ledger forget the
            // attempt (`bgtask why` said "launched 0 s ago"); the strike below holds the app.
            if let run = runs[runID] { forgetLaunch(of: run, at: now) }
            let finishedAt = effects.count
            // Ended first, so that the request filed again meets the run's throttle strike (the
            // throttle holds it from the strike: a broken executable is not spawned again at
            // once); its effects go before the run's end, as a retry's, so the request is on
            // disk before the failure is. It has waited since its due date, as a restart
            // reading it back would say: filed as one filed earlier.
            finish(runID, outcome: .failure, success: nil, reason: reason, appNeverStarted: true, at: now, into: &effects)
            if restoringRequest, let request, request.kind != .continuedProcessing,
               index.location(of: request.key) == nil, (try? checkSubmit(request, at: now)) != nil {
                var filed: [EngineEffect] = [.retryScheduled(request)]
                // Not a submission of the app's: no over-scheduling strike on top of the
                // failure's (the run it follows started seconds ago).
                file(request, at: now, countingSubmission: false, filedEarlier: true, into: &filed)
                effects.insert(contentsOf: filed, at: finishedAt)
            }
        case .runCrashed(let runID, let reason):
            finish(runID, outcome: .crashed, success: nil, reason: reason, at: now, into: &effects)
        case .runNotClaimed(let runID):
            guard let run = runs.removeValue(forKey: runID) else { break }
            if run.isContinuedProcessing { runningContinuedProcessingCount -= 1 }
            deadlines.remove(runID)
            let key = run.record.request.key
            if runsByKey[key] == runID { runsByKey[key] = nil }
            // The run never happened here: the policies' memory is as before it.
            forgetLaunch(of: run, at: now)
            report(index.markFinished(key, conditions: conditions, at: now), into: &effects)
        case .progressSampled(let runID, let completed):
            if var run = runs[runID], run.phase == .running {
                if completed > run.lastProgress {
                    run.lastProgress = completed
                    run.lastProgressAt = now
                    runs[runID] = run
                    deadlines.update(runID, priority: nextProgressCheck(after: now, budgetDeadline: run.budgetDeadline))
                } else {
                    let stalled = Int(now.timeIntervalSince(run.lastProgressAt))
                    expire(runID, reason: "progress stalled for \(stalled) s", at: now, into: &effects)
                }
            }
        }
        launchWhatIsReady(at: now, into: &effects)
        effects.append(.wake(at: nextWake))
        return effects
    }

    // MARK: Internals

    /// Files an accepted submission (the app's, or a retry): counted by the throttle unless
    /// `countingSubmission` is false (a request filed again for an app that never got it),
    /// replaces a pending request with the same key.
    /// `filedEarlier`: the request is not new (one the app never got, filed again), so its
    /// wait counts from its due date (``EligibilityIndex/insert(_:sequence:now:conditions:filedEarlier:)``).
    private mutating func file(_ request: PendingRequest, at now: Date, countingSubmission: Bool = true, filedEarlier: Bool = false, into effects: inout [EngineEffect]) {
        if countingSubmission {
            let previousRun = lastRunStart[request.key]
            changeAppState(request.app, at: now) { state in
                state.throttle.recordSubmission(kind: request.kind, earliestBeginDate: request.earliestBeginDate, previousRunOfSameIdentifier: previousRun, at: now)
            }
        }
        nextSequence += 1
        index.insert(request, sequence: nextSequence, now: now, conditions: conditions, filedEarlier: filedEarlier)
        if let location = index.location(of: request.key) {
            effects.append(.requestsMoved([.init(key: request.key, location: location)]))
        }
    }

    /// Applies the retry policy of a run that just ended: a success forgets the failures;
    /// a failure counts one more and, unless the app already submitted a new request for
    /// the identifier (it stands) or the policy gives up, files a copy of the request
    /// moved by the policy's delay. A retry the submission checks refuse (the switch was
    /// turned off, the app filled its pending limit) is not made.
    private mutating func retry(after finished: RunRecord, at now: Date) -> PendingRequest? {
        let key = finished.request.key
        guard let policy = retryPolicies[key] else { return nil }
        if finished.outcome == .success {
            changeAppState(key.app, at: now) { state in
                if state.retryAttempts?[key.identifier] != nil { state.retryAttempts?[key.identifier] = nil }
            }
            return nil
        }
        let attempt = changeAppState(key.app, at: now) { state in
            let attempt = (state.retryAttempts?[key.identifier] ?? 0) + 1
            state.retryAttempts = state.retryAttempts ?? [:]
            state.retryAttempts?[key.identifier] = attempt
            return attempt
        }
        guard index.location(of: key) == nil, let delay = policy.delay(afterFailedAttempt: attempt) else { return nil }
        var request = finished.request
        request.earliestBeginDate = now.addingTimeInterval(delay)
        request.submittedAt = now
        do throws(SubmitRejection) {
            try checkSubmit(request, at: now)
        } catch {
            return nil
        }
        return request
    }

    private var runningScheduledCount: Int { runs.count - runningContinuedProcessingCount }

    private func canStartContinuedProcessingNow(replacing key: RequestKey) -> Bool {
        let queuedAhead = index.hasQueuedContinuedProcessing && index.location(of: key) != .continuedQueue
        return !queuedAhead && !index.isRunning(key)
            && runningContinuedProcessingCount < configuration.maximumConcurrentContinuedProcessing
    }

    private mutating func processDeadlines(at now: Date, into effects: inout [EngineEffect]) {
        while let next = deadlines.min, next.priority <= now {
            deadlines.remove(next.key)
            guard let run = runs[next.key] else { continue }
            switch run.phase {
            case .running:
                if run.isContinuedProcessing, run.budgetDeadline.map({ $0 > now }) ?? true {
                    effects.append(.sampleProgress(next.key))
                    // Re-armed when the sample arrives; until then, check again after a stall period.
                    deadlines.update(next.key, priority: nextProgressCheck(after: now, budgetDeadline: run.budgetDeadline))
                } else {
                    let budget = Int((run.budgetDeadline ?? now).timeIntervalSince(run.record.startedAt))
                    expire(next.key, reason: "budget of \(budget) s exhausted", at: now, into: &effects)
                }
            case .expiring(let reason):
                effects.append(.terminate(next.key, reason: reason))
                finish(next.key, outcome: .terminated, success: nil, reason: "\(reason); not completed within the \(DurationText.spoken(configuration.expirationGrace)) grace period", at: now, into: &effects)
            }
        }
        report(index.advance(to: now, conditions: conditions), into: &effects)
    }

    /// Reports moves for timelines.
    private func report(_ transitions: [EligibilityIndex.Transition], into effects: inout [EngineEffect]) {
        guard !transitions.isEmpty else { return }
        effects.append(.requestsMoved(transitions))
    }

    private mutating func releaseAllHeld(at now: Date, into effects: inout [EngineEffect]) {
        report(index.releaseHeldForDevice(conditions: conditions), into: &effects)
        for app in appStates.keys.sorted() {
            report(index.releaseHeld(for: app, conditions: conditions), into: &effects)
        }
    }

    private mutating func expireRunsWhoseConditionsFailed(at now: Date, into effects: inout [EngineEffect]) {
        let policy = policies.configuration
        let failing = runs.values
            .filter { $0.phase == .running }
            .compactMap { run -> (RunID, String)? in
                let request = run.record.request
                if let condition = conditions.firstUnmet(for: request) {
                    return (run.record.id, "required condition \(condition) no longer holds")
                }
                guard request.kind != .continuedProcessing else { return nil }
                if conditions.thermalState >= policy.thermalExpiresAt {
                    return (run.record.id, "thermal state became \(conditions.thermalState)")
                }
                let processing = request.kind == .processing || request.kind == .healthResearch
                if processing, policy.processingRequiresIdleDevice, !conditions.deviceIdle {
                    return (run.record.id, "the user started using the device")
                }
                return nil
            }
            .sorted { $0.0 < $1.0 }
        for (runID, reason) in failing {
            runs[runID]?.expiredForConditions = true
            expire(runID, reason: reason, at: now, into: &effects)
        }
    }

    /// Judges ready requests in order: those the policies let through launch; the others
    /// are held where what lifts their verdict will find them; a full house stops the loop.
    private mutating func launchWhatIsReady(at now: Date, into effects: inout [EngineEffect]) {
        if holdForCoalescing(at: now) { return }
        // Held requests are reported in one batch per launch, not one effect each: a shared
        // trigger holds thousands at once.
        var held: [EligibilityIndex.Transition] = []
        judgeReady(at: now, held: &held, into: &effects)
        // What was held until a wake (wake sharing), in this pass before a run started or
        // earlier, is judged once more now that the device is awake, and starts in it; so
        // are the held requests of each app launched at this instant, which may join its
        // launch (herd spreading). An app a later pass launches has its own pass: at most
        // one per app.
        var released: Set<AppID> = []
        var wakeReleased = false
        while lastWake == now {
            // A loop, not a filter: a closure would capture (copy) the whole index.
            var apps: [AppID] = []
            for app in appsLaunchedAtLastWake where !released.contains(app) && index.hasDeferred(of: app) { apps.append(app) }
            let wakeHeld = !wakeReleased && index.hasHeldUntilWake
            guard wakeHeld || !apps.isEmpty else { break }
            report(held, into: &effects)
            held.removeAll()
            if wakeHeld { report(index.releaseHeldUntilWake(conditions: conditions), into: &effects) }
            for app in apps.sorted() { report(index.releaseDeferred(of: app, conditions: conditions), into: &effects) }
            wakeReleased = wakeReleased || wakeHeld
            released.formUnion(appsLaunchedAtLastWake)
            judgeReady(at: now, held: &held, into: &effects)
        }
        report(held, into: &effects)
        while runningContinuedProcessingCount < configuration.maximumConcurrentContinuedProcessing,
              let request = index.popContinuedProcessing() {
            launch(request, at: now, into: &effects)
        }
    }

    /// One pass over the ready requests (``launchWhatIsReady(at:into:)``).
    private mutating func judgeReady(at now: Date, held: inout [EligibilityIndex.Transition], into effects: inout [EngineEffect]) {
        // A full house: whatever is ready stays ready (judged when a slot frees), so a
        // condition change that frees many requests costs moving them, not judging them.
        // The manual switch: nothing scheduled launches by itself (only simulateLaunch).
        while !configuration.launchesOnlyWhenSimulated,
              runningScheduledCount < configuration.maximumConcurrentRuns,
              let candidate = index.peekReady(conditions: conditions) {
            let request = candidate.request
            if !terminatingApps.isEmpty, terminatingApps.contains(request.app) {
                held.append(.init(key: request.key, location: index.holdFirstReady(until: .appChange)))
                continue
            }
            let context = policyContext(
                for: request, eligibleSince: candidate.eligibleSince, readySince: candidate.readySince,
                nextPlannedWake: index.nextDeferralEnd, at: now)
            var wait: PolicyWait?
            var heldBy: String?
            switch policies.judge(configured: context, rationales: configuration.explainsLaunches) {
            case .held(let policy, let blockingWait):
                wait = blockingWait ?? .deviceChange
                heldBy = policy
            case .proceeds(let evaluation):
                index.remove(request.key)
                report(held, into: &effects)
                held.removeAll()
                launch(request, evaluation: evaluation, at: now, into: &effects)
                continue
            case .weighedHeld(let weighedWait, let blocking):
                wait = weighedWait
                // Named only where something reads it (a trace): a string per held request
                // is no cost a fleet or a year without a trace should pay.
                if configuration.explainsLaunches {
                    heldBy = blocking.isEmpty ? "a low score" : blocking.joined(separator: " and ")
                }
            }
            guard let wait, wait != .capacity else { break }
            held.append(.init(key: request.key, location: index.holdFirstReady(until: wait), heldBy: heldBy))
        }
    }

    /// Coalescing: when something is ready and another request comes due within the
    /// tolerance of the first one's wake, wait for it so both start in one wake. A request
    /// is never held more than the tolerance past the wake it was ready at.
    private mutating func holdForCoalescing(at now: Date) -> Bool {
        let tolerance = policies.configuration.coalescingTolerance
        guard tolerance > 0, index.hasReady, let next = index.nextWaitingDueDate, next > now else {
            coalesceAnchor = nil
            return false
        }
        let anchor = coalesceAnchor ?? now
        if next <= anchor.addingTimeInterval(tolerance) {
            coalesceAnchor = anchor
            return true
        }
        coalesceAnchor = nil
        return false
    }

    /// The policies' judgement of `request` now.
    public func evaluate(_ request: PendingRequest, at now: Date) -> PolicyEvaluation {
        policies.evaluate(policyContext(for: request, at: now))
    }

    private func policyContext(for request: PendingRequest, at now: Date) -> PolicyContext {
        // The request may be held itself: its own hold is no wake it could share.
        policyContext(
            for: request, eligibleSince: index.eligibleSince(of: request.key) ?? max(request.dueDate, now),
            readySince: index.readySince(of: request.key), nextPlannedWake: index.nextDeferralEnd(excluding: request.key), at: now)
    }

    /// Whether the device holds refreshes under `conditions` for a reason of its own: Low
    /// Power Mode when it holds them, or a thermal state at which they wait (the policies'
    /// own rules: ``LowPowerModePolicy/holds(_:_:configuration:)``,
    /// ``ThermalPolicy/defers(_:_:configuration:)``). What ``learnDeviceHolds(under:at:)``
    /// watches. Not a critical battery: a refresh ahead of it would spend the little charge
    /// left (measured, it bought no staleness either).
    private func holdsRefreshes(_ conditions: Conditions) -> Bool {
        let rules = policies.configuration
        return LowPowerModePolicy.holds(.appRefresh, conditions, configuration: rules)
            || ThermalPolicy.defers(.appRefresh, conditions, configuration: rules)
    }

    /// The conditions changed to `new`: a hold on refreshes (``holdsRefreshes(_:)``) begins or ends; one that ends
    /// after ``minimumDeviceHold`` or more is recorded, with its start, in every app's usage
    /// model, so that a daily hold (an evening that runs hot, Low Power Mode every afternoon)
    /// is refreshed before, as a daily network loss is. A hold begins only with the network
    /// there (when refreshes need it): one that began offline is the network's loss, learned
    /// as one, and a refresh placed before it could not run; it begins when the network comes
    /// back during it. Once begun, the network going (a blip, a tunnel) does not end it.
    private mutating func learnDeviceHolds(under new: Conditions, at now: Date) {
        if holdsRefreshes(new) {
            if deviceHoldSince == nil, networkLetsRefreshesRun(new) { deviceHoldSince = now }
        } else if let start = deviceHoldSince {
            if now.timeIntervalSince(start) >= Self.minimumDeviceHold {
                teachEveryApp(at: now) { $0.recordDeviceHold(at: start) }
            }
            deviceHoldSince = nil
        }
    }

    /// Teaches every app the engine knows something of the device's history (`lesson` on
    /// its usage model) and counts it in ``networkHistoryRecorded``, so the driver saves them.
    private mutating func teachEveryApp(at now: Date, _ lesson: (inout UsageModel) -> Void) {
        var taught: UsageModel?
        for app in Set(apps.keys).union(appStates.keys).sorted() {
            changeAppState(app, at: now) { state in
                lesson(&state.usage)
                // Apps with the same device history share its shares' memo (per hour).
                if let taught { state.usage.shareLossMemo(with: taught) }
                taught = state.usage
            }
        }
        networkHistoryRecorded += 1
    }

    /// Whether the device allows app refreshes under `conditions`, as a timer that obeys only
    /// what the device forbids would see it: the network is there (when refreshes need it),
    /// Low Power Mode does not hold them and the battery is not critical (heat is not among
    /// them: the timers obey no thermal rule, and the wakeups goal is a share of theirs).
    /// What the launch ledgers count as time the budget could be spent in (``LaunchLedger``).
    private func refreshesAllowed(_ conditions: Conditions) -> Bool {
        guard networkLetsRefreshesRun(conditions) else { return false }
        let rules = policies.configuration
        return !LowPowerModePolicy.holds(.appRefresh, conditions, configuration: rules)
            && !CriticalBatteryPolicy.isCritical(conditions, configuration: rules)
    }

    /// Whether the network lets refreshes run under `conditions`: it is there, or refreshes
    /// do not need it.
    private func networkLetsRefreshesRun(_ conditions: Conditions) -> Bool {
        conditions.networkAvailable
            || !PendingRequest.needsNetwork(kind: .appRefresh, requiresNetworkConnectivity: false, refreshRequiresNetwork: policies.configuration.refreshRequiresNetwork)
    }

    /// Tells every app's launch ledger whether the device allows refreshes now (after the
    /// conditions or the rules changed).
    private mutating func updateLedgers(at now: Date) {
        let allowed = refreshesAllowed(conditions)
        // Index by index, not over `indices`: that view would hold the dictionary while it
        // is changed, and the first change would copy every app's state.
        var index = appStates.startIndex
        while index != appStates.endIndex {
            if appStates.values[index].launchLedger != nil { appStates.values[index].launchLedger?.refreshesAllowed(allowed, at: now) }
            appStates.formIndex(after: &index)
        }
    }

    /// The network came back at `now`: every app the engine knows learns the loss, once it
    /// proved long (``minimumNetworkLoss``: the network usually goes away then), and the
    /// stay before it, once the gap proved more than a blip (``minimumNetworkGap``: how long
    /// the network stays when it comes back at that time of day). A blip continues the stay.
    /// (A clock stepped back past the loss makes no loss; one stepped forward while offline
    /// can make one: accepted, it is one week's evidence among many.)
    private mutating func learnNetworkHistory(backAt now: Date) {
        let gap = networkLostAt.map { now.timeIntervalSince($0) }
        let loss = gap.map { $0 >= Self.minimumNetworkLoss } == true ? networkLostAt : nil
        var stay: (start: Date, end: Date)?
        if let gap, gap >= Self.minimumNetworkGap, let start = stayBeforeGap, let end = networkLostAt { stay = (start, end) }
        if loss != nil || stay != nil {
            teachEveryApp(at: now) { usage in
                if let loss { usage.recordNetworkLoss(at: loss) }
                if let stay { usage.recordNetworkStay(from: stay.start, to: stay.end) }
            }
        }
        // After a blip the stay goes on from where it began; after a gap, or a loss whose
        // start was not seen (the engine began offline), a new one begins now.
        networkBackSince = gap.map { $0 < Self.minimumNetworkGap } == true ? stayBeforeGap : now
        networkLostAt = nil
        stayBeforeGap = nil
    }

    /// `readySince` nil: not stamped, taken as `eligibleSince` (``PolicyContext``).
    private func policyContext(
        for request: PendingRequest, eligibleSince: Date, readySince: Date?, nextPlannedWake: Date?, at now: Date
    ) -> PolicyContext {
        let state = appStates[request.app] ?? newAppState(request.app, at: now)
        return PolicyContext(
            request: request,
            now: now,
            eligibleSince: eligibleSince,
            conditions: conditions,
            app: state,
            runningCount: runningScheduledCount,
            maximumConcurrentRuns: configuration.maximumConcurrentRuns,
            lastSharedTrigger: lastSharedTrigger,
            networkBackSince: networkBackSince,
            configuration: policies.configuration,
            deviceSalt: configuration.deviceSalt,
            readySince: readySince,
            wakeUnderWay: lastWake == now,
            nextPlannedWake: nextPlannedWake
        )
    }

    /// Drops the run starts that can no longer earn an over-scheduling strike: those at
    /// least the longest cadence of their app's throttle before `now` (a submission's
    /// begin is never before `now`, so its interval from them is at least that cadence).
    /// Behaviour is unchanged; only memory is returned.
    private mutating func pruneLastRunStarts(at now: Date) {
        var cadences: [AppID: TimeInterval] = [:]
        for app in Set(lastRunStart.keys.map(\.app)) {
            let configuration = appStates[app]?.throttle.configuration ?? ThrottleConfiguration()
            cadences[app] = TaskKind.allCases.compactMap(configuration.minimumCadence(for:)).max() ?? 0
        }
        lastRunStart = lastRunStart.filter { key, start in now.timeIntervalSince(start) < cadences[key.app, default: 0] }
        lastRunStartPruneAt = max(Self.lastRunStartPruneFloor, 2 * lastRunStart.count)
    }

    /// How many run starts the engine keeps for the over-scheduling check (for tests).
    var lastRunStartCount: Int { lastRunStart.count }

    private mutating func launch(_ request: PendingRequest, evaluation: PolicyEvaluation? = nil, at now: Date, into effects: inout [EngineEffect]) {
        let runID = RunID(nextRunNumber)
        nextRunNumber += 1
        let record = RunRecord(id: runID, request: request, startedAt: now)
        if lastWake != now { appsLaunchedAtLastWake.removeAll() }
        lastWake = now
        let budget = configuration.budget(for: request.kind)
        let budgetDeadline = budget.map { now.addingTimeInterval($0) }
        runs[runID] = ActiveRun(
            record: record, phase: .running, budgetDeadline: budgetDeadline, lastProgressAt: now,
            previousRunStart: lastRunStart[request.key], previousLaunch: appStates[request.app]?.lastLaunch)
        if request.kind == .continuedProcessing { runningContinuedProcessingCount += 1 }
        runsByKey[request.key] = runID
        index.markRunning(request.key)
        lastRunStart[request.key] = now
        if lastRunStart.count >= lastRunStartPruneAt { pruneLastRunStarts(at: now) }
        if request.kind != .continuedProcessing {
            appsLaunchedAtLastWake.insert(request.app)
            let allowed = refreshesAllowed(conditions)
            changeAppState(request.app, at: now) { $0.recordLaunch(at: now, now: now, refreshesAllowed: allowed) }
        }
        if request.kind == .continuedProcessing {
            deadlines.update(runID, priority: nextProgressCheck(after: now, budgetDeadline: budgetDeadline))
        } else if let budgetDeadline {
            deadlines.update(runID, priority: budgetDeadline)
        }
        effects.append(.launch(record, budget: budget, evaluation: evaluation))
    }

    /// Continued processing has no fixed budget; its progress is checked every stall period.
    private func nextProgressCheck(after now: Date, budgetDeadline: Date?) -> Date {
        let check = now.addingTimeInterval(configuration.progressStallTimeout)
        return budgetDeadline.map { min($0, check) } ?? check
    }

    /// Expires every run of `app` still running (not those already expiring), in run order;
    /// `noFaultOfTheApp` keeps the expiration from counting as a throttle strike.
    private mutating func expireRunning(of app: AppID, reason: String, noFaultOfTheApp: Bool = false, at now: Date, into effects: inout [EngineEffect]) {
        let running = runs.values.filter { $0.record.app == app && $0.phase == .running }.map(\.record.id).sorted()
        for runID in running {
            if noFaultOfTheApp { runs[runID]?.expiredForConditions = true }
            expire(runID, reason: reason, at: now, into: &effects)
        }
    }

    private mutating func expire(_ runID: RunID, reason: String, at now: Date, into effects: inout [EngineEffect]) {
        guard var run = runs[runID], run.phase == .running else { return }
        run.phase = .expiring(reason: reason)
        runs[runID] = run
        deadlines.update(runID, priority: now.addingTimeInterval(configuration.expirationGrace))
        effects.append(.expire(runID, reason: reason, grace: configuration.expirationGrace))
    }

    /// Gives the policies back their memory from before `run`'s launch, which did not
    /// happen (a run another replica claimed, one whose app's process never started): the
    /// identifier's previous run start and, unless another task of the app started at the
    /// same instant (it joined this launch, running or finished: that launch did happen),
    /// the app's previous launch, the launch taken out of its ledger. The joined runs still
    /// in progress take this run's memory of the launch before, in case they do not
    /// happen either.
    private mutating func forgetLaunch(of run: ActiveRun, at now: Date) {
        let key = run.record.request.key
        if lastRunStart[key] == run.record.startedAt { lastRunStart[key] = run.previousRunStart }
        guard run.record.request.kind != .continuedProcessing else { return }
        let startedAt = run.record.startedAt
        let launchStands = lastRunStart.contains { $0.key.app == key.app && $0.key != key && $0.value == startedAt }
        if launchStands {
            for (otherID, other) in runs where other.record.request.app == key.app && other.record.startedAt == startedAt {
                runs[otherID]?.previousLaunch = run.previousLaunch
            }
        } else if appStates[key.app] != nil {
            changeAppState(key.app, at: now) { state in
                if state.lastLaunch == startedAt { state.lastLaunch = run.previousLaunch }
                state.launchLedger?.forget(startedAt)
            }
        }
    }

    /// Ends a run: its record, the throttle's verdict on it (`appNeverStarted`: the app's
    /// process never got it, a strike of its own rather than the handler's), the index, a retry.
    private mutating func finish(
        _ runID: RunID, outcome: RunOutcome, success: Bool?, reason: String, appNeverStarted: Bool = false,
        at now: Date, into effects: inout [EngineEffect]
    ) {
        guard let run = runs.removeValue(forKey: runID) else { return }
        if run.isContinuedProcessing { runningContinuedProcessingCount -= 1 }
        deadlines.remove(runID)
        let key = run.record.request.key
        if runsByKey[key] == runID { runsByKey[key] = nil }
        var finished = run.record
        // The wall clock may have been set back during the run: the record ends no earlier
        // than it started (a duration of 0), as the stores require of every run row.
        finished.endedAt = max(now, finished.startedAt)
        finished.outcome = outcome
        finished.success = success
        finished.stopReason = reason
        let finishedAt = effects.count
        effects.append(.runFinished(finished))
        if finished.request.kind != .continuedProcessing {
            changeAppState(key.app, at: now) { state in
                if appNeverStarted {
                    if !run.endedByTheUser { state.throttle.recordAppNotStarted(at: now) }
                } else {
                    state.throttle.recordRunEnded(outcome: outcome, calledSetTaskCompleted: success != nil, expiredForConditions: run.expiredForConditions, endedByTheUser: run.endedByTheUser, at: now)
                }
                if finished.request.kind == .appRefresh, outcome == .success { state.lastRefresh = finished.startedAt }
            }
        }
        report(index.markFinished(key, conditions: conditions, at: now), into: &effects)
        if !retryPolicies.isEmpty, let retry = retry(after: finished, at: now) {
            var filed: [EngineEffect] = [.retryScheduled(retry)]
            file(retry, at: now, into: &filed)
            effects.insert(contentsOf: filed, at: finishedAt)
        }
    }
}
