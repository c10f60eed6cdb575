import Foundation

/// One of the system's judgements about a request (dasd calls them policies).
public protocol SchedulingPolicy: Sendable {
    /// A stable name, for weights, logs and `bgtask why`.
    var name: String { get }
    /// The verdict for `context`, with its rationale.
    func evaluate(_ context: PolicyContext) -> PolicyDecision
    /// The verdict for `context` and what would lift a block, without the rationale: what
    /// the engine's launch loop asks first, for thousands of requests when a shared trigger
    /// frees them. Must agree with ``evaluate(_:)``; the default asks it.
    func verdict(_ context: PolicyContext) -> (verdict: PolicyVerdict, wait: PolicyWait?)
}

extension SchedulingPolicy {
    /// The verdict of ``evaluate(_:)`` (policies whose rationale costs little need nothing else).
    public func verdict(_ context: PolicyContext) -> (verdict: PolicyVerdict, wait: PolicyWait?) {
        let decision = evaluate(context)
        return (decision.verdict, decision.wait)
    }
}

private func formatPercent(_ value: Double) -> String { "\(Int((value * 100).rounded())) %" }
private func formatDuration(_ seconds: TimeInterval) -> String {
    let seconds = max(0, Int(seconds.rounded(.up)))
    if seconds >= 3600 { return "\(seconds / 3600) h \(seconds / 60 % 60) min" }
    if seconds >= 60 { return "\(seconds / 60) min \(seconds % 60) s" }
    return "\(seconds) s"
}

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
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        guard context.app.forceQuit, context.request.kind != .continuedProcessing else {
            return PolicyDecision(policy: name, verdict: .canProceed(score: 1), rationale: "the app was not force-quit")
        }
        return PolicyDecision(policy: name, verdict: .mustNotProceed, rationale: "the user force-quit \(context.request.app); no background launches until it is opened again", wait: .appChange)
    }
}

/// `requiresExternalPower`.
public struct RequiredExternalPowerPolicy: SchedulingPolicy {
    public let name = "requires-external-power"
    public init() {}
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        guard context.request.requiresExternalPower else {
            return PolicyDecision(policy: name, verdict: .canProceed(score: 1), rationale: "the request does not require external power")
        }
        return context.conditions.externalPower
            ? PolicyDecision(policy: name, verdict: .canProceed(score: 1), rationale: "requires external power: the device is on external power")
            : PolicyDecision(policy: name, verdict: .mustNotProceed, rationale: "requires external power: the device is on battery", wait: .deviceChange)
    }
}

/// `requiresNetworkConnectivity`; metered networks lower the score of network work.
public struct RequiredNetworkPolicy: SchedulingPolicy {
    public let name = "requires-network"
    public init() {}
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        guard context.request.requiresNetworkConnectivity else {
            return PolicyDecision(policy: name, verdict: .canProceed(score: 1), rationale: "the request does not require the network")
        }
        guard context.conditions.networkAvailable else {
            return PolicyDecision(policy: name, verdict: .mustNotProceed, rationale: "requires the network: no interface with a default route is up", wait: .deviceChange)
        }
        if context.conditions.networkMetered == true {
            return PolicyDecision(policy: name, verdict: .canProceed(score: 0.3), rationale: "requires the network: available, but metered")
        }
        return PolicyDecision(policy: name, verdict: .canProceed(score: 1), rationale: "requires the network: available")
    }
}

/// Critically low battery (<= 20 % and not charging): nothing runs.
public struct CriticalBatteryPolicy: SchedulingPolicy {
    public let name = "critical-battery"
    public init() {}
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        let conditions = context.conditions
        guard let level = conditions.batteryLevel, !conditions.externalPower else {
            return PolicyDecision(policy: name, verdict: .canProceed(score: 1), rationale: conditions.externalPower ? "on external power" : "battery level unknown")
        }
        let critical = context.configuration.criticalBatteryLevel
        if level <= critical {
            return PolicyDecision(policy: name, verdict: .mustNotProceed, rationale: "battery at \(formatPercent(level)), at or below the critical \(formatPercent(critical)), and not charging", wait: .deviceChange)
        }
        return PolicyDecision(policy: name, verdict: .canProceed(score: level), rationale: "battery at \(formatPercent(level)), on battery")
    }
}

/// Low Power Mode holds back the configured kinds (refresh, by Apple's rule).
public struct LowPowerModePolicy: SchedulingPolicy {
    public let name = "low-power-mode"
    public init() {}
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        guard context.conditions.lowPowerMode else {
            return PolicyDecision(policy: name, verdict: .canProceed(score: 1), rationale: "Low Power Mode is off")
        }
        guard context.configuration.lowPowerModeBlocks.contains(context.request.kind) else {
            return PolicyDecision(policy: name, verdict: .canProceed(score: 0.5), rationale: "Low Power Mode is on; \(context.request.kind) tasks may still run")
        }
        return PolicyDecision(policy: name, verdict: .mustNotProceed, rationale: "Low Power Mode is on: \(context.request.kind) tasks wait until it is off", wait: .deviceChange)
    }
}

/// Thermal state: processing waits from fair, refresh from serious.
public struct ThermalPolicy: SchedulingPolicy {
    public let name = "thermal"
    public init() {}
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        let state = context.conditions.thermalState
        let limit = context.isProcessing ? context.configuration.thermalDefersProcessingAt : context.configuration.thermalDefersRefreshAt
        if context.request.kind != .continuedProcessing, state >= limit {
            return PolicyDecision(policy: name, verdict: .mustNotProceed, rationale: "thermal state is \(state); \(context.request.kind) tasks wait below \(limit)", wait: .deviceChange)
        }
        return PolicyDecision(policy: name, verdict: .canProceed(score: 1 - Double(state.rawValue) / 3), rationale: "thermal state is \(state)")
    }
}

/// Processing runs only while the user is not using the device.
public struct DeviceInUsePolicy: SchedulingPolicy {
    public let name = "device-in-use"
    public init() {}
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        guard context.isProcessing, context.configuration.processingRequiresIdleDevice else {
            return PolicyDecision(policy: name, verdict: .canProceed(score: 1), rationale: context.conditions.deviceIdle ? "the device is idle" : "the device is in use; \(context.request.kind) tasks may run meanwhile")
        }
        return context.conditions.deviceIdle
            ? PolicyDecision(policy: name, verdict: .canProceed(score: 1), rationale: "the device is idle")
            : PolicyDecision(policy: name, verdict: .mustNotProceed, rationale: "the user is using the device; processing waits until it is idle", wait: .deviceChange)
    }
}

/// Processing needs CPU pressure below a limit.
public struct CPUPressurePolicy: SchedulingPolicy {
    public let name = "cpu-pressure"
    public init() {}
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        guard let pressure = context.conditions.cpuPressure else {
            return PolicyDecision(policy: name, verdict: .canProceed(score: 1), rationale: "CPU pressure unknown")
        }
        let limit = context.configuration.processingCPUPressureLimit
        if context.isProcessing, pressure > limit {
            return PolicyDecision(policy: name, verdict: .mustNotProceed, rationale: "CPU pressure \(formatPercent(pressure)) is above the \(formatPercent(limit)) processing allows", wait: .deviceChange)
        }
        return PolicyDecision(policy: name, verdict: .canProceed(score: max(0, 1 - pressure)), rationale: "CPU pressure \(formatPercent(pressure))")
    }
}

/// App usage: refreshes land shortly before the user usually opens the app; an app unused
/// for a week gets no processing.
public struct AppUsagePolicy: SchedulingPolicy {
    public let name = "app-usage"
    public init() {}
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        let usage = context.app.usage
        switch context.request.kind {
        case .appRefresh:
            let preferred = usage.preferredRefreshTime(eligibleAt: context.eligibleSince, now: context.now)
            // Only when the usage model moved the run later than it became eligible.
            if preferred > context.eligibleSince, preferred > context.now {
                return PolicyDecision(policy: name, verdict: .mustNotProceed, rationale: "waits to run shortly before the next likely launch: \(usage.explanation(at: context.now))", wait: .until(preferred))
            }
            return PolicyDecision(policy: name, verdict: .canProceed(score: 1), rationale: usage.explanation(at: context.now))
        case .processing, .healthResearch:
            guard usage.allowsProcessing(at: context.now) else {
                return PolicyDecision(policy: name, verdict: .mustNotProceed, rationale: "the app has not been used for a week: no processing until it is opened (\(usage.explanation(at: context.now)))", wait: .appChange)
            }
            return PolicyDecision(policy: name, verdict: .canProceed(score: 1), rationale: usage.explanation(at: context.now))
        case .continuedProcessing:
            return PolicyDecision(policy: name, verdict: .canProceed(score: 1), rationale: "continued processing is user-started")
        }
    }
}

/// A daily energy budget per app.
public struct EnergyBudgetPolicy: SchedulingPolicy {
    public let name = "energy-budget"
    public init() {}
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        let budget = context.configuration.energyBudgetPerAppPerDay
        let day = context.app.usage.localDay(of: context.now)
        let used = context.app.energyDay == day ? context.app.energyUsed : 0
        guard context.request.kind != .continuedProcessing else {
            return PolicyDecision(policy: name, verdict: .canProceed(score: 1), rationale: "continued processing is user-started")
        }
        if used >= budget {
            let tomorrow = context.app.usage.startOfLocalDay(day + 1)
            return PolicyDecision(policy: name, verdict: .mustNotProceed, rationale: String(format: "used %.0f J of the %.0f J daily background energy budget; resets at local midnight", used, budget), wait: .until(tomorrow))
        }
        return PolicyDecision(policy: name, verdict: .canProceed(score: budget > 0 ? 1 - used / budget : 1), rationale: String(format: "used %.0f J of %.0f J today", used, budget))
    }
}

/// Spaces an app's background launches apart.
public struct RateLimitPolicy: SchedulingPolicy {
    public let name = "rate-limit"
    public init() {}
    /// When the app may be launched again, or `nil` when the limit does not apply.
    private func nextLaunch(_ context: PolicyContext) -> (last: Date, next: Date)? {
        guard let last = context.app.lastLaunch, context.request.kind != .continuedProcessing else { return nil }
        return (last, last.addingTimeInterval(context.configuration.minimumLaunchInterval))
    }
    public func verdict(_ context: PolicyContext) -> (verdict: PolicyVerdict, wait: PolicyWait?) {
        guard let (_, next) = nextLaunch(context), next > context.now else { return (.canProceed(score: 1), nil) }
        return (.mustNotProceed, .until(next))
    }
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        guard let (last, next) = nextLaunch(context) else {
            return PolicyDecision(policy: name, verdict: .canProceed(score: 1), rationale: "no recent background launch of the app")
        }
        let (verdict, wait) = self.verdict(context)
        let ago = formatDuration(context.now.timeIntervalSince(last))
        if next > context.now {
            return PolicyDecision(policy: name, verdict: verdict, rationale: "the app was launched \(ago) ago; launches are at least \(formatDuration(context.configuration.minimumLaunchInterval)) apart", wait: wait)
        }
        return PolicyDecision(policy: name, verdict: verdict, rationale: "last background launch \(ago) ago")
    }
}

/// Over-scheduling and runs that keep expiring earn a delay that decays with good behaviour.
public struct ThrottlePolicy: SchedulingPolicy {
    public let name = "throttle"
    public init() {}
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        let delay = context.app.throttle.delay(at: context.now)
        guard delay > 0, context.request.kind != .continuedProcessing else {
            return PolicyDecision(policy: name, verdict: .canProceed(score: 1), rationale: "the app is not throttled")
        }
        let until = context.eligibleSince.addingTimeInterval(delay)
        let reason = context.app.throttle.reason(at: context.now) ?? "throttled \(formatDuration(delay))"
        if until > context.now {
            return PolicyDecision(policy: name, verdict: .mustNotProceed, rationale: reason, wait: .until(until))
        }
        return PolicyDecision(policy: name, verdict: .canProceed(score: 0.5), rationale: "\(reason); the delay has passed")
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
    /// The last shared trigger and this request's offset after it, or `nil` when no recent
    /// trigger concerns the request.
    private func turn(_ context: PolicyContext) -> (trigger: Date, offset: TimeInterval)? {
        let window = context.configuration.herdSpreadWindow
        guard let trigger = context.lastSharedTrigger, window > 0, context.request.kind != .continuedProcessing,
              context.eligibleSince <= trigger, context.now < trigger.addingTimeInterval(window) else { return nil }
        let hash = Self.stableHash(of: context.request.key)
        return (trigger, Double(hash % 10_000) / 10_000 * window)
    }
    public func verdict(_ context: PolicyContext) -> (verdict: PolicyVerdict, wait: PolicyWait?) {
        guard let (trigger, offset) = turn(context), trigger.addingTimeInterval(offset) > context.now else { return (.canProceed(score: 1), nil) }
        return (.mustNotProceed, .until(trigger.addingTimeInterval(offset)))
    }
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        guard let (trigger, offset) = turn(context) else {
            return PolicyDecision(policy: name, verdict: .canProceed(score: 1), rationale: "no recent shared trigger")
        }
        let (verdict, wait) = self.verdict(context)
        if verdict == .mustNotProceed {
            return PolicyDecision(policy: name, verdict: verdict, rationale: "spread after a shared trigger (power or network back) \(formatDuration(context.now.timeIntervalSince(trigger))) ago: this request's turn comes \(formatDuration(offset)) after it", wait: wait)
        }
        return PolicyDecision(policy: name, verdict: verdict, rationale: "its turn after the shared trigger has come")
    }

    /// FNV-1a over the key's text `app/identifier`, without building it: the same key gets
    /// the same offset on every run and machine.
    static func stableHash(of key: RequestKey) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ bytes: String.UTF8View) {
            for byte in bytes {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01B3
            }
        }
        mix(key.app.rawValue.utf8)
        mix("/".utf8)
        mix(key.identifier.utf8)
        return hash
    }
}

/// A request eligible for `maximumDeferral` runs even with a low score ("within the next two days").
public struct StarvationPolicy: SchedulingPolicy {
    public let name = "starvation"
    public init() {}
    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        let waited = context.now.timeIntervalSince(context.eligibleSince)
        if waited >= context.configuration.maximumDeferral {
            return PolicyDecision(policy: name, verdict: .mustProceed, rationale: "eligible for \(formatDuration(waited)), past the \(formatDuration(context.configuration.maximumDeferral)) the system promises")
        }
        return PolicyDecision(policy: name, verdict: .canProceed(score: 1), rationale: "eligible for \(formatDuration(waited))")
    }
}
