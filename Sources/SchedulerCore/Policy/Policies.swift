import Foundation

/// One of the system's judgements about a request (dasd calls them policies).
public protocol SchedulingPolicy: Sendable {
    /// A stable name, for weights, logs and `bgtask why`.
    var name: String { get }
    /// The verdict for `context`, with its rationale.
    func evaluate(_ context: PolicyContext) -> PolicyDecision
    /// The verdict for `context` and what would lift a block, without the rationale: what
    /// the engine's launch loop asks first, for thousands of requests when a shared trigger
    /// frees them. Must agree with ``evaluate(_:)``; the default asks it. A function of
    /// `context` alone: a judgement asks each policy once and weighs that answer
    /// (``PolicySet/judge(_:rationales:)``).
    func verdict(_ context: PolicyContext) -> (verdict: PolicyVerdict, wait: PolicyWait?)
}

extension SchedulingPolicy {
    /// The verdict of ``evaluate(_:)`` (policies whose rationale costs little need nothing else).
    public func verdict(_ context: PolicyContext) -> (verdict: PolicyVerdict, wait: PolicyWait?) {
        let decision = evaluate(context)
        return (decision.verdict, decision.wait)
    }
}

private func formatPercent(_ value: Double) -> String { "\(Int(saturating: (value * 100).rounded())) %" }

/// The app's Background App Refresh switch (continued processing is user-started and exempt).
public struct BackgroundAppRefreshPolicy: SchedulingPolicy {
    public let name = "background-app-refresh"
    public init() {}
    public func verdict(_ context: PolicyContext) -> (verdict: PolicyVerdict, wait: PolicyWait?) {
        guard context.request.kind != .continuedProcessing, !context.app.backgroundRefreshEnabled else { return (.canProceed(score: 1), nil) }
        return (.mustNotProceed, .appChange)
    }
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        let (verdict, wait) = self.verdict(context)
        let state = verdict == .mustNotProceed ? "off" : "on"
        return PolicyDecision(policy: name, verdict: verdict, rationale: "Background App Refresh is \(state) for \(context.request.app)", wait: wait)
    }
}

/// The app switcher: a force-quit app gets no background launches until the user opens it.
public struct ForceQuitPolicy: SchedulingPolicy {
    public let name = "force-quit"
    public init() {}
    public func verdict(_ context: PolicyContext) -> (verdict: PolicyVerdict, wait: PolicyWait?) {
        context.app.forceQuit && context.request.kind != .continuedProcessing ? (.mustNotProceed, .appChange) : (.canProceed(score: 1), nil)
    }
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        let (verdict, wait) = self.verdict(context)
        let rationale = verdict == .mustNotProceed
            ? "the user force-quit \(context.request.app); no background launches until it is opened again"
            : "the app was not force-quit"
        return PolicyDecision(policy: name, verdict: verdict, rationale: rationale, wait: wait)
    }
}

/// `requiresExternalPower`.
public struct RequiredExternalPowerPolicy: SchedulingPolicy {
    public let name = "requires-external-power"
    public init() {}
    public func verdict(_ context: PolicyContext) -> (verdict: PolicyVerdict, wait: PolicyWait?) {
        context.request.requiresExternalPower && !context.conditions.externalPower ? (.mustNotProceed, .deviceChange) : (.canProceed(score: 1), nil)
    }
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        let (verdict, wait) = self.verdict(context)
        let rationale: String
        if !context.request.requiresExternalPower {
            rationale = "the request does not require external power"
        } else {
            rationale = verdict == .mustNotProceed ? "requires external power: the device is on battery" : "requires external power: the device is on external power"
        }
        return PolicyDecision(policy: name, verdict: verdict, rationale: rationale, wait: wait)
    }
}

/// `requiresNetworkConnectivity`, and app refresh (``PolicyConfiguration/refreshRequiresNetwork``);
/// metered networks lower the score of network work.
public struct RequiredNetworkPolicy: SchedulingPolicy {
    public let name = "requires-network"
    public init() {}
    public func verdict(_ context: PolicyContext) -> (verdict: PolicyVerdict, wait: PolicyWait?) {
        guard context.needsNetwork else { return (.canProceed(score: 1), nil) }
        guard context.conditions.networkAvailable else { return (.mustNotProceed, .deviceChange) }
        return (.canProceed(score: context.conditions.networkMetered == true ? 0.3 : 1), nil)
    }
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        let (verdict, wait) = self.verdict(context)
        let rationale: String
        if !context.needsNetwork {
            rationale = "the request does not require the network"
        } else if verdict == .mustNotProceed {
            let what = context.request.requiresNetworkConnectivity ? "requires the network" : "app refresh fetches content: it waits for the network"
            rationale = "\(what): no interface with a default route is up"
        } else {
            rationale = context.conditions.networkMetered == true ? "requires the network: available, but metered" : "requires the network: available"
        }
        return PolicyDecision(policy: name, verdict: verdict, rationale: rationale, wait: wait)
    }
}

/// Critically low battery (<= 20 % and not charging): nothing runs.
public struct CriticalBatteryPolicy: SchedulingPolicy {
    public let name = "critical-battery"
    public init() {}
    /// Whether the battery is critical under `conditions`: at or below the configured level
    /// and not charging. The rule itself, for the engine too (a critical battery is time the
    /// device forbids refreshes in, and a hold it learns).
    public static func isCritical(_ conditions: Conditions, configuration: PolicyConfiguration) -> Bool {
        guard let level = conditions.batteryLevel, !conditions.externalPower else { return false }
        return level <= configuration.criticalBatteryLevel
    }
    public func verdict(_ context: PolicyContext) -> (verdict: PolicyVerdict, wait: PolicyWait?) {
        guard let level = context.conditions.batteryLevel, !context.conditions.externalPower else { return (.canProceed(score: 1), nil) }
        return Self.isCritical(context.conditions, configuration: context.configuration) ? (.mustNotProceed, .deviceChange) : (.canProceed(score: level), nil)
    }
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        let (verdict, wait) = self.verdict(context)
        let conditions = context.conditions
        let rationale: String
        if let level = conditions.batteryLevel, !conditions.externalPower {
            rationale = verdict == .mustNotProceed
                ? "battery at \(formatPercent(level)), at or below the critical \(formatPercent(context.configuration.criticalBatteryLevel)), and not charging"
                : "battery at \(formatPercent(level)), on battery"
        } else {
            rationale = conditions.externalPower ? "on external power" : "battery level unknown"
        }
        return PolicyDecision(policy: name, verdict: verdict, rationale: rationale, wait: wait)
    }
}

/// Low Power Mode holds back the configured kinds (refresh, by Apple's rule).
public struct LowPowerModePolicy: SchedulingPolicy {
    public let name = "low-power-mode"
    public init() {}
    /// Whether Low Power Mode holds tasks of `kind` under `conditions`: it is on and the
    /// configuration names the kind. The rule itself, for the engine too.
    public static func holds(_ kind: TaskKind, _ conditions: Conditions, configuration: PolicyConfiguration) -> Bool {
        conditions.lowPowerMode && configuration.lowPowerModeBlocks.contains(kind)
    }
    public func verdict(_ context: PolicyContext) -> (verdict: PolicyVerdict, wait: PolicyWait?) {
        guard context.conditions.lowPowerMode else { return (.canProceed(score: 1), nil) }
        return Self.holds(context.request.kind, context.conditions, configuration: context.configuration) ? (.mustNotProceed, .deviceChange) : (.canProceed(score: 0.5), nil)
    }
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        let (verdict, wait) = self.verdict(context)
        let rationale: String
        if !context.conditions.lowPowerMode {
            rationale = "Low Power Mode is off"
        } else if verdict == .mustNotProceed {
            rationale = "Low Power Mode is on: \(context.request.kind) tasks wait until it is off"
        } else {
            rationale = "Low Power Mode is on; \(context.request.kind) tasks may still run"
        }
        return PolicyDecision(policy: name, verdict: verdict, rationale: rationale, wait: wait)
    }
}

/// Thermal state: processing waits from fair, refresh from serious.
public struct ThermalPolicy: SchedulingPolicy {
    public let name = "thermal"
    public init() {}
    private func limit(_ context: PolicyContext) -> ThermalState { Self.limit(for: context.request.kind, configuration: context.configuration) }
    /// The thermal state from which tasks of `kind` wait (processing-like kinds: the
    /// processing limit; others, the refresh limit).
    static func limit(for kind: TaskKind, configuration: PolicyConfiguration) -> ThermalState {
        PolicyContext.isProcessing(kind) ? configuration.thermalDefersProcessingAt : configuration.thermalDefersRefreshAt
    }
    /// Whether the thermal state under `conditions` defers tasks of `kind` (continued
    /// processing never waits for it). The rule itself, for the engine too.
    public static func defers(_ kind: TaskKind, _ conditions: Conditions, configuration: PolicyConfiguration) -> Bool {
        kind != .continuedProcessing && conditions.thermalState >= limit(for: kind, configuration: configuration)
    }
    public func verdict(_ context: PolicyContext) -> (verdict: PolicyVerdict, wait: PolicyWait?) {
        let state = context.conditions.thermalState
        if Self.defers(context.request.kind, context.conditions, configuration: context.configuration) { return (.mustNotProceed, .deviceChange) }
        return (.canProceed(score: 1 - Double(state.rawValue) / 3), nil)
    }
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        let (verdict, wait) = self.verdict(context)
        let state = context.conditions.thermalState
        let rationale = verdict == .mustNotProceed
            ? "thermal state is \(state); \(context.request.kind) tasks wait below \(limit(context))"
            : "thermal state is \(state)"
        return PolicyDecision(policy: name, verdict: verdict, rationale: rationale, wait: wait)
    }
}

/// Processing runs only while the user is not using the device.
public struct DeviceInUsePolicy: SchedulingPolicy {
    public let name = "device-in-use"
    public init() {}
    public func verdict(_ context: PolicyContext) -> (verdict: PolicyVerdict, wait: PolicyWait?) {
        let holds = context.isProcessing && context.configuration.processingRequiresIdleDevice && !context.conditions.deviceIdle
        return holds ? (.mustNotProceed, .deviceChange) : (.canProceed(score: 1), nil)
    }
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        let (verdict, wait) = self.verdict(context)
        let rationale: String
        if verdict == .mustNotProceed {
            rationale = "the user is using the device; processing waits until it is idle"
        } else {
            rationale = context.conditions.deviceIdle ? "the device is idle" : "the device is in use; \(context.request.kind) tasks may run meanwhile"
        }
        return PolicyDecision(policy: name, verdict: verdict, rationale: rationale, wait: wait)
    }
}

/// Processing needs CPU pressure below a limit.
public struct CPUPressurePolicy: SchedulingPolicy {
    public let name = "cpu-pressure"
    public init() {}
    public func verdict(_ context: PolicyContext) -> (verdict: PolicyVerdict, wait: PolicyWait?) {
        guard let pressure = context.conditions.cpuPressure else { return (.canProceed(score: 1), nil) }
        if context.isProcessing, pressure > context.configuration.processingCPUPressureLimit { return (.mustNotProceed, .deviceChange) }
        return (.canProceed(score: max(0, 1 - pressure)), nil)
    }
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        let (verdict, wait) = self.verdict(context)
        guard let pressure = context.conditions.cpuPressure else {
            return PolicyDecision(policy: name, verdict: verdict, rationale: "CPU pressure unknown")
        }
        let rationale = verdict == .mustNotProceed
            ? "CPU pressure \(formatPercent(pressure)) is above the \(formatPercent(context.configuration.processingCPUPressureLimit)) processing allows"
            : "CPU pressure \(formatPercent(pressure))"
        return PolicyDecision(policy: name, verdict: verdict, rationale: rationale, wait: wait)
    }
}

/// App usage: refreshes land shortly before the user usually opens the app; an app unused
/// for a week gets no processing.
///
/// The lead before a likely hour varies per device and request (a stable draw from the
/// request key and the device salt, as herd spreading's): a fleet of users who all open
/// their app around 21:00 would otherwise all refresh at 20:50 to the minute.
public struct AppUsagePolicy: SchedulingPolicy {
    public let name = "app-usage"
    public init() {}

    /// The share (0..<1) of the lead-time spread of request `key` on the device salted `salt`.
    static func leadSpread(of key: RequestKey, salt: UInt64) -> Double {
        Double(HerdSpreadingPolicy.stableHash(of: key, salt: ~salt) % 10_000) / 10_000
    }

    /// How old the content must be, when the network comes back to a refresh that waited
    /// for it, for the refresh to run at once rather than at its placement: 6 hours. Longer
    /// than any spacing the placement leaves in an hour it refreshes
    /// (``UsageModelConfiguration/maximumRefreshSpacing``, 2 hours), so only a loss longer
    /// than the placement's own gaps triggers it. Measured on the six sets of lives of
    /// docs/scenarios.md (2026-12-06): 3, 6 and 12 hours gave 236 goals (235 without),
    /// long-offline's p90 651 to 546 minutes (its Monday mornings), 2 hours 236 with a life
    /// lost on the probe's set.
    public static let staleContentAge: TimeInterval = 6 * 3600

    /// The interval between refreshes a request asks for: its earliest begin date after
    /// its submission (nil when it has none, or none later than the submission).
    static func requestedInterval(of request: PendingRequest) -> TimeInterval? {
        guard let earliest = request.earliestBeginDate else { return nil }
        let interval = earliest.timeIntervalSince(request.submittedAt)
        return interval.isFinite && interval > 0 ? interval : nil
    }

    /// What the policy makes of a request.
    private enum Judgement {
        /// Runs now (processing of a used app, continued processing, a refresh not held).
        case proceeds
        /// A refresh placed later (the usage model's preferred instant).
        case refreshAt(Date)
        /// A refresh that waited for the network, placed after the network usually goes
        /// again: it runs now (the network came back at `back` and usually stays `stay`).
        case beforeTheNetworkGoes(back: Date, stay: TimeInterval, placed: Date)
        /// A refresh that waited for the network while the content grew ``staleContentAge``
        /// old or more: it runs now (the network came back at `back`; the last refresh was
        /// `age` ago), not at its placement.
        case staleOnReturn(back: Date, age: TimeInterval, placed: Date)
        /// Processing of an app unused for a week.
        case unused
    }

    private func judge(_ context: PolicyContext) -> Judgement {
        let usage = context.app.usage
        switch context.request.kind {
        case .appRefresh:
            let preferred = usage.preferredRefreshTime(eligibleAt: context.eligibleSince, now: context.now, lastRefresh: context.app.lastRefresh,
                                                       leadSpread: Self.leadSpread(of: context.request.key, salt: context.deviceSalt),
                                                       requestedInterval: Self.requestedInterval(of: context.request),
                                                       launches: context.app.launchLedger)
            // Only when the usage model moved the run later than it became eligible.
            guard preferred > context.eligibleSince, preferred > context.now else { return .proceeds }
            // A refresh that was due before the network came back, with content left old by the
            // time away: the next launch may come before the placement (a Monday morning after
            // a weekend offline), and a launch then finds content hours old, where one refresh
            // on the return makes it minutes old.
            if context.needsNetwork, let back = context.networkBackSince, context.eligibleSince < back, let last = context.app.lastRefresh,
               context.now.timeIntervalSince(last) >= Self.staleContentAge {
                return .staleOnReturn(back: back, age: context.now.timeIntervalSince(last), placed: preferred)
            }
            // A refresh that was due before the network came back (it waited for it, or for its
            // placement across a gap), placed later than the network usually stays at this
            // time of day (with a minute to run): the placement would find it gone and the
            // content would wait for its next return.
            if let back = context.networkBackSince, context.eligibleSince < back, let stay = context.usualNetworkStay,
               preferred.addingTimeInterval(UsageModel.placementGrain) > back.addingTimeInterval(stay) {
                return .beforeTheNetworkGoes(back: back, stay: stay, placed: preferred)
            }
            return .refreshAt(preferred)
        case .processing, .healthResearch:
            return usage.allowsProcessing(at: context.now) ? .proceeds : .unused
        case .continuedProcessing:
            return .proceeds
        }
    }

    private static func verdict(of judgement: Judgement) -> (verdict: PolicyVerdict, wait: PolicyWait?) {
        switch judgement {
        case .proceeds, .beforeTheNetworkGoes, .staleOnReturn: return (.canProceed(score: 1), nil)
        case .refreshAt(let preferred): return (.mustNotProceed, .until(preferred))
        case .unused: return (.mustNotProceed, .appChange)
        }
    }
    public func verdict(_ context: PolicyContext) -> (verdict: PolicyVerdict, wait: PolicyWait?) {
        Self.verdict(of: judge(context))
    }
    /// "; the last week's launches ran 1.4 a day over the budget of 22.1: this plan spends
    /// 16.5", when the launch ledger made the placement spend less; else nothing.
    private static func spendingNote(_ context: PolicyContext) -> String {
        let budget = context.app.usage.refreshBudget(requestedInterval: requestedInterval(of: context.request),
                                                     launches: context.app.launchLedger, at: context.now)
        guard budget.excess > 0 else { return "" }
        return String(format: "; the last week's launches ran %.1f a day over the budget of %.1f: this plan spends %.1f", budget.excess, budget.day, budget.planned)
    }
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        let judgement = judge(context)
        let (verdict, wait) = Self.verdict(of: judgement)
        guard context.request.kind != .continuedProcessing else {
            return PolicyDecision(policy: name, verdict: verdict, rationale: "continued processing is user-started")
        }
        let explanation = context.app.usage.explanation(at: context.now)
        let rationale: String
        switch judgement {
        case .refreshAt:
            rationale = "waits to run shortly before the next likely launch: \(explanation)\(Self.spendingNote(context))"
        case .unused: rationale = "the app has not been used for a week: no processing until it is opened (\(explanation))"
        case .beforeTheNetworkGoes(let back, let stay, let placed):
            rationale = "due since before the network came back \(DurationText.spoken(context.now.timeIntervalSince(back))) ago; it usually stays \(DurationText.spoken(stay)) at this time of day, gone before the placement \(DurationText.spoken(placed.timeIntervalSince(context.now))) from now: runs while it is here (\(explanation))"
        case .staleOnReturn(let back, let age, let placed):
            rationale = "due since before the network came back \(DurationText.spoken(context.now.timeIntervalSince(back))) ago, the content \(DurationText.spoken(age)) old (\(DurationText.spoken(Self.staleContentAge)) or more): runs while the network is here rather than at its placement \(DurationText.spoken(placed.timeIntervalSince(context.now))) from now (\(explanation))"
        case .proceeds: rationale = explanation
        }
        return PolicyDecision(policy: name, verdict: verdict, rationale: rationale, wait: wait)
    }
}

/// A daily energy budget per app.
public struct EnergyBudgetPolicy: SchedulingPolicy {
    public let name = "energy-budget"
    public init() {}
    private func used(_ context: PolicyContext) -> (day: Int, joules: Double) {
        let day = context.app.usage.localDay(of: context.now)
        return (day, context.app.energyDay == day ? context.app.energyUsed : 0)
    }
    public func verdict(_ context: PolicyContext) -> (verdict: PolicyVerdict, wait: PolicyWait?) {
        guard context.request.kind != .continuedProcessing else { return (.canProceed(score: 1), nil) }
        let budget = context.configuration.energyBudgetPerAppPerDay
        let (day, used) = used(context)
        if used >= budget { return (.mustNotProceed, .until(context.app.usage.startOfLocalDay(day + 1))) }
        return (.canProceed(score: budget > 0 ? 1 - used / budget : 1), nil)
    }
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        let (verdict, wait) = self.verdict(context)
        guard context.request.kind != .continuedProcessing else {
            return PolicyDecision(policy: name, verdict: verdict, rationale: "continued processing is user-started")
        }
        let budget = context.configuration.energyBudgetPerAppPerDay
        let used = used(context).joules
        let rationale = verdict == .mustNotProceed
            ? String(format: "used %.0f J of the %.0f J daily background energy budget; resets at local midnight", used, budget)
            : String(format: "used %.0f J of %.0f J today", used, budget)
        return PolicyDecision(policy: name, verdict: verdict, rationale: rationale, wait: wait)
    }
}

/// Spaces an app's background launches apart.
public struct RateLimitPolicy: SchedulingPolicy {
    public let name = "rate-limit"
    public init() {}
    private enum Limit {
        /// No launch of the app to space from (or a continued-processing task, exempt).
        case none
        /// The app was launched at this very instant: a second task joins that launch (one
        /// wake, one launch of the app, as iOS hands an app several tasks at once).
        case joinsTheLaunch
        /// The app was last launched at `last`, so it may be launched again from `next`.
        case spaced(last: Date, next: Date)
    }
    private func limit(_ context: PolicyContext) -> Limit {
        guard let last = context.app.lastLaunch, context.request.kind != .continuedProcessing else { return .none }
        if last == context.now { return .joinsTheLaunch }
        return .spaced(last: last, next: last.addingTimeInterval(context.configuration.minimumLaunchInterval))
    }
    public func verdict(_ context: PolicyContext) -> (verdict: PolicyVerdict, wait: PolicyWait?) {
        guard case .spaced(_, let next) = limit(context), next > context.now else { return (.canProceed(score: 1), nil) }
        return (.mustNotProceed, .until(next))
    }
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        switch limit(context) {
        case .none:
            return PolicyDecision(policy: name, verdict: .canProceed(score: 1), rationale: "no recent background launch of the app")
        case .joinsTheLaunch:
            return PolicyDecision(policy: name, verdict: .canProceed(score: 1), rationale: "joins the app's background launch at this instant")
        case .spaced(let last, let next):
            let (verdict, wait) = self.verdict(context)
            let ago = DurationText.spoken(context.now.timeIntervalSince(last))
            if next > context.now {
                return PolicyDecision(policy: name, verdict: verdict, rationale: "the app was launched \(ago) ago; launches are at least \(DurationText.spoken(context.configuration.minimumLaunchInterval)) apart", wait: wait)
            }
            return PolicyDecision(policy: name, verdict: verdict, rationale: "last background launch \(ago) ago")
        }
    }
}

/// Over-scheduling and runs that keep expiring earn a delay that decays with good behaviour.
public struct ThrottlePolicy: SchedulingPolicy {
    public let name = "throttle"
    public init() {}
    public func verdict(_ context: PolicyContext) -> (verdict: PolicyVerdict, wait: PolicyWait?) {
        let delay = context.app.throttle.delay(at: context.now)
        guard delay > 0, context.request.kind != .continuedProcessing else { return (.canProceed(score: 1), nil) }
        // Counted from when the request became due, or from the app's last strike if that
        // came later: a request filed before the misbehaviour still waits the delay after it,
        // and one read back after a restart (due since its due date) waits no longer than
        // it would have without the restart.
        // A strike stamped later than now (the clock set back since, a replica's clock
        // ahead) is not waited for: it would hold every task of the app until then.
        let strike = context.app.throttle.lastStrikeAt.flatMap { $0 <= context.now ? $0 : nil }
        let anchor = strike.map { max($0, context.eligibleSince) } ?? context.eligibleSince
        let until = context.app.throttle.holdEnd(waitingSince: anchor)
        return until > context.now ? (.mustNotProceed, .until(until)) : (.canProceed(score: 0.5), nil)
    }
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        let (verdict, wait) = self.verdict(context)
        let delay = context.app.throttle.delay(at: context.now)
        guard delay > 0, context.request.kind != .continuedProcessing else {
            return PolicyDecision(policy: name, verdict: verdict, rationale: "the app is not throttled")
        }
        let reason = context.app.throttle.reason(at: context.now) ?? "throttled \(DurationText.spoken(delay))"
        guard verdict == .mustNotProceed else {
            return PolicyDecision(policy: name, verdict: verdict, rationale: "\(reason); the delay has passed", wait: wait)
        }
        // The delay above is today's; the hold ends sooner, where the delay (shrinking as
        // the strikes age) meets the time waited: said, or the line reads as a hold of the
        // whole delay beside a verdict that runs the request hours earlier (an outside probe).
        guard case .until(let end)? = wait else { return PolicyDecision(policy: name, verdict: verdict, rationale: reason, wait: wait) }
        return PolicyDecision(policy: name, verdict: verdict, rationale: "\(reason); held \(DurationText.spoken(end.timeIntervalSince(context.now))) more (the delay shrinks as the strikes age)", wait: wait)
    }
}

/// A system-wide cap on runs in progress.
public struct ConcurrencyPolicy: SchedulingPolicy {
    public let name = "concurrency"
    public init() {}
    public func verdict(_ context: PolicyContext) -> (verdict: PolicyVerdict, wait: PolicyWait?) {
        guard context.request.kind != .continuedProcessing, context.runningCount >= context.maximumConcurrentRuns else { return (.canProceed(score: 1), nil) }
        return (.mustNotProceed, .capacity)
    }
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        let (verdict, wait) = self.verdict(context)
        let rationale: String
        if context.request.kind == .continuedProcessing {
            rationale = "continued processing has its own queue"
        } else if verdict == .mustNotProceed {
            rationale = "\(context.runningCount) runs in progress, the cap is \(context.maximumConcurrentRuns)"
        } else {
            rationale = "\(context.runningCount) of \(context.maximumConcurrentRuns) run slots in use"
        }
        return PolicyDecision(policy: name, verdict: verdict, rationale: rationale, wait: wait)
    }
}

/// Thundering-herd protection: after a shared trigger (power plugged in, network back),
/// each request waits a deterministic offset within the spread window, so a fleet of
/// devices (or many apps on one) does not stampede.
public struct HerdSpreadingPolicy: SchedulingPolicy {
    public let name = "herd-spreading"
    public init() {}
    /// The last shared trigger, this request's offset after it, and whether its app is
    /// about to be opened; `nil` when no recent trigger concerns the request.
    ///
    /// The offset is the same fraction of the window for a request every time; an app
    /// refresh whose app is likely to be opened within the lead time
    /// (``UsageModel/isLikelyHour(containing:now:)`` at `now + leadTime`) takes that
    /// fraction of ``PolicyConfiguration/herdSpreadWindowBeforeLaunch`` instead, so the
    /// content is there when the user is, and a fleet's stampede is still spread.
    ///
    /// A request that needs the network, after the network came back (the trigger), takes
    /// its share of at most a quarter of how long the network usually stays at this time of day
    /// (``UsageModel/usualNetworkStay(afterReturnAt:now:)``): on a device online a few
    /// minutes a day, a turn later than that would come after the network went, every day.
    private func turn(_ context: PolicyContext) -> Turn? {
        let window = context.configuration.herdSpreadWindow
        guard let trigger = context.lastSharedTrigger, window > 0, context.request.kind != .continuedProcessing,
              context.eligibleSince <= trigger, context.now < trigger.addingTimeInterval(window) else { return nil }
        let usage = context.app.usage
        let beforeLaunch = context.request.kind == .appRefresh
            && (usage.isLikelyHour(aLeadTimeAfter: context.now, now: context.now)
                || usage.likelyLaunchesBegin(within: window + usage.configuration.leadTime, after: context.now, now: context.now))
        var spread = beforeLaunch ? min(window, context.configuration.herdSpreadWindowBeforeLaunch) : window
        var shortStay: TimeInterval?
        if context.networkBackSince == trigger, let stay = context.usualNetworkStay, stay / 4 < spread {
            spread = stay / 4
            shortStay = stay
        }
        let share = Double(Self.stableHash(of: context.request.key, salt: context.deviceSalt) % 10_000) / 10_000
        return Turn(trigger: trigger, offset: share * spread, beforeLaunch: beforeLaunch, shortStay: shortStay)
    }

    /// A request's turn after a shared trigger.
    private struct Turn {
        /// The trigger: when power or the network came back.
        var trigger: Date
        /// The request's turn, after the trigger.
        var offset: TimeInterval
        /// Whether its app is about to be opened (the shorter window).
        var beforeLaunch: Bool
        /// How long the network usually stays, when that shortened the window.
        var shortStay: TimeInterval?
    }
    public func verdict(_ context: PolicyContext) -> (verdict: PolicyVerdict, wait: PolicyWait?) {
        guard let turn = turn(context) else { return (.canProceed(score: 1), nil) }
        return verdict(of: turn, context)
    }

    /// The verdict on a request whose turn is `turn`: held until it, unless it has come or
    /// the request joins its app's launch.
    private func verdict(of turn: Turn, _ context: PolicyContext) -> (verdict: PolicyVerdict, wait: PolicyWait?) {
        let at = turn.trigger.addingTimeInterval(turn.offset)
        guard at > context.now, !joinsItsAppsLaunch(context) else { return (.canProceed(score: 1), nil) }
        return (.mustNotProceed, .until(at))
    }

    /// Whether the request's app was launched into the background at this very instant (one
    /// of its tasks took its turn): the request joins that launch rather than waking the
    /// device, and the app, again at its own turn. The fleet stays spread (the launch came at
    /// the first of the app's turns, a stable draw per device), and so do other apps on the
    /// device. The engine judges an app's held requests again when it launches the app
    /// (``EligibilityIndex/releaseDeferred(of:conditions:)``), so a launch before the turn
    /// finds them.
    private func joinsItsAppsLaunch(_ context: PolicyContext) -> Bool {
        context.wakeUnderWay && context.app.lastLaunch == context.now
    }
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        guard let turn = turn(context) else {
            return PolicyDecision(policy: name, verdict: .canProceed(score: 1), rationale: "no recent shared trigger")
        }
        if turn.trigger.addingTimeInterval(turn.offset) > context.now, joinsItsAppsLaunch(context) {
            return PolicyDecision(policy: name, verdict: .canProceed(score: 1), rationale: "its turn comes \(DurationText.spoken(turn.offset)) after the shared trigger, but its app was launched for another task just now: it joins that launch")
        }
        let (verdict, wait) = self.verdict(of: turn, context)
        if verdict == .mustNotProceed {
            let window = if let stay = turn.shortStay {
                " (the network usually stays \(DurationText.spoken(stay)) at this time of day: within a quarter of it)"
            } else if turn.beforeLaunch {
                " (the app is likely to be opened soon: the shorter window)"
            } else { "" }
            return PolicyDecision(policy: name, verdict: verdict, rationale: "spread after a shared trigger (power or network back) \(DurationText.spoken(context.now.timeIntervalSince(turn.trigger))) ago: this request's turn comes \(DurationText.spoken(turn.offset)) after it\(window)", wait: wait)
        }
        return PolicyDecision(policy: name, verdict: verdict, rationale: "its turn after the shared trigger has come")
    }

    /// FNV-1a over the key's text `app/identifier`, without building it, from an offset
    /// basis mixed with the device's salt: the same key gets the same offset on every run
    /// of one device, and different devices (different salts) different offsets.
    static func stableHash(of key: RequestKey, salt: UInt64 = 0) -> UInt64 {
        let app = StableHash.fnv1a(key.app.rawValue.utf8, from: StableHash.offsetBasis ^ salt)
        return StableHash.fnv1a(key.identifier.utf8, from: StableHash.fnv1a("/".utf8, from: app))
    }
}

/// A request eligible for `maximumDeferral` runs even with a low score ("within the next two days").
public struct StarvationPolicy: SchedulingPolicy {
    public let name = "starvation"
    public init() {}
    public func verdict(_ context: PolicyContext) -> (verdict: PolicyVerdict, wait: PolicyWait?) {
        (context.now.timeIntervalSince(context.eligibleSince) >= context.configuration.maximumDeferral ? .mustProceed : .canProceed(score: 1), nil)
    }
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        let (verdict, _) = self.verdict(context)
        let wait = context.now.timeIntervalSince(context.eligibleSince)
        let waited = DurationText.spoken(wait)
        let rationale = if verdict == .mustProceed {
            "eligible for \(waited), past the \(DurationText.spoken(context.configuration.maximumDeferral)) the system promises"
        } else if wait < 0 {
            // Judged ahead of its earliest begin date (`bgtask why`): its wait has not begun.
            "not eligible yet (in \(DurationText.spoken(-wait))): its wait has not begun"
        } else {
            "eligible for \(waited)"
        }
        return PolicyDecision(policy: name, verdict: verdict, rationale: rationale)
    }
}

/// Processing that would wake the device alone waits, for at most `wakeSharingWindow` from
/// when it became ready, for a wake the engine already plans, and starts in it: one wake
/// instead of two (the clean-up an app asks for every few hours joins a refresh rather than
/// waking the phone by itself). The engine knows its next wake
/// (``PolicyContext/nextPlannedWake``: the end of a policy's hold, mostly a refresh the
/// usage model placed); it holds ``PolicyWait/untilWake(_:)`` that wake, so a run that
/// starts sooner releases it too, and a request judged at the instant a run started
/// proceeds; so does one eligible for `maximumDeferral` (the starvation guard's promise).
/// Never holds past the window.
///
/// It does not wait for a wake shortly before, or in, an hour the user likely opens the
/// app (the wake's instant plus the lead time falls in a likely hour), nor for any wake
/// while the app was never opened (nothing tells such a wake apart): processing started
/// there is cut short when the user comes back and unplugs or picks up the device, which
/// costs more than the wake it saves.
public struct WakeSharingPolicy: SchedulingPolicy {
    public let name = "wake-sharing"
    public init() {}

    private enum Judgement {
        case notProcessing, off, underWay, starving, nonePlanned, beforeTheUserReturns(Date), neverOpened, waits(Date)
    }

    private func judge(_ context: PolicyContext) -> Judgement {
        let window = context.configuration.wakeSharingWindow
        guard context.isProcessing else { return .notProcessing }
        guard window > 0 else { return .off }
        if context.wakeUnderWay { return .underWay }
        if context.now.timeIntervalSince(context.eligibleSince) >= context.configuration.maximumDeferral { return .starving }
        // Never past the starvation guard's promise either (its must-proceed cannot
        // override this policy's block).
        guard let next = context.nextPlannedWake, next > context.now,
              next <= context.readySince.addingTimeInterval(window),
              next < context.eligibleSince.addingTimeInterval(context.configuration.maximumDeferral) else { return .nonePlanned }
        let usage = context.app.usage
        guard usage.lastUse != nil else { return .neverOpened }
        if usage.isLikelyHour(aLeadTimeAfter: next, now: context.now) { return .beforeTheUserReturns(next) }
        return .waits(next)
    }

    public func verdict(_ context: PolicyContext) -> (verdict: PolicyVerdict, wait: PolicyWait?) {
        guard case .waits(let wake) = judge(context) else { return (.canProceed(score: 1), nil) }
        return (.mustNotProceed, .untilWake(wake))
    }

    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        let window = DurationText.spoken(context.configuration.wakeSharingWindow)
        let rationale: String
        switch judge(context) {
        case .waits(let wake):
            return PolicyDecision(
                policy: name, verdict: .mustNotProceed,
                rationale: "waits \(DurationText.spoken(wake.timeIntervalSince(context.now))) for a wake already planned, to start with it rather than wake the device alone (ready \(DurationText.spoken(context.now.timeIntervalSince(context.readySince))) ago, waits at most \(window))",
                wait: .untilWake(wake))
        case .notProcessing: rationale = "only processing waits to share a wake"
        case .off: rationale = "processing does not wait to share a wake (window 0)"
        case .underWay: rationale = "starts in the wake under way"
        case .starving: rationale = "eligible for \(DurationText.spoken(context.now.timeIntervalSince(context.eligibleSince))): past the \(DurationText.spoken(context.configuration.maximumDeferral)) the system promises, it waits for no wake"
        case .nonePlanned: rationale = "no wake planned within \(window) of when it became ready"
        case .neverOpened: rationale = "the app was never opened: a planned wake may come as the user returns, so it does not wait"
        case .beforeTheUserReturns(let wake):
            rationale = "the wake planned in \(DurationText.spoken(wake.timeIntervalSince(context.now))) comes shortly before the user usually opens the app: it does not wait for it"
        }
        return PolicyDecision(policy: name, verdict: .canProceed(score: 1), rationale: rationale)
    }
}
