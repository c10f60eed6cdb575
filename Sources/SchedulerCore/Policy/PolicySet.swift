import Foundation

/// The result of weighing every policy for one request.
public struct PolicyEvaluation: Hashable, Sendable {
    /// Every policy's decision, blocking ones first, then by name.
    public var decisions: [PolicyDecision]
    /// The weighted score of the `canProceed` verdicts (0...1).
    public var score: Double
    /// The threshold the score was compared with.
    public var threshold: Double

    /// The decisions that block.
    public var blocking: [PolicyDecision] { decisions.filter(\.blocks) }

    /// Whether the request runs now: nothing blocks, and a policy says it must or the
    /// score reaches the threshold.
    public var proceeds: Bool {
        guard blocking.isEmpty else { return false }
        return decisions.contains { $0.verdict == .mustProceed } || score >= threshold
    }

    /// What would let a request that does not proceed run: a free slot first (it runs
    /// as soon as one frees), then an app or device change (the engine files it there),
    /// then the latest instant a time-bound verdict names; a low score waits for the device.
    public var wait: PolicyWait? {
        guard !proceeds else { return nil }
        let waits = blocking.compactMap(\.wait)
        if waits.isEmpty { return .deviceChange }
        if waits.contains(.capacity) && waits.count == 1 { return .capacity }
        if waits.contains(.appChange) { return .appChange }
        if waits.contains(.deviceChange) { return .deviceChange }
        let instants = waits.compactMap { wait -> Date? in if case .until(let date) = wait { return date } else { return nil } }
        if let latest = instants.max() { return .until(latest) }
        return .capacity
    }
}

/// The policies the engine consults, in a fixed order, with their configuration.
public struct PolicySet: Sendable {
    /// The tunables.
    public var configuration: PolicyConfiguration
    /// The policies, in evaluation order.
    public let policies: [any SchedulingPolicy]

    /// The names of the standard policies (for weights and documentation).
    public static let names: [String] = standardPolicies.map(\.name)

    /// The standard set, in the order `bgtask why` lists verdicts of equal standing.
    public static let standardPolicies: [any SchedulingPolicy] = [
        BackgroundAppRefreshPolicy(),
        ForceQuitPolicy(),
        RequiredExternalPowerPolicy(),
        RequiredNetworkPolicy(),
        CriticalBatteryPolicy(),
        LowPowerModePolicy(),
        ThermalPolicy(),
        DeviceInUsePolicy(),
        CPUPressurePolicy(),
        AppUsagePolicy(),
        EnergyBudgetPolicy(),
        RateLimitPolicy(),
        ThrottlePolicy(),
        ConcurrencyPolicy(),
        HerdSpreadingPolicy(),
        StarvationPolicy(),
    ]

    /// Only the foundation's rules: the refresh switch, force-quit, required power and
    /// network, and the concurrency cap; no coalescing. For tests that isolate those rules,
    /// and for embedders who want a plain "run when due" scheduler.
    public static var foundation: PolicySet {
        PolicySet(
            configuration: PolicyConfiguration(herdSpreadWindow: 0, coalescingTolerance: 0),
            policies: [BackgroundAppRefreshPolicy(), ForceQuitPolicy(), RequiredExternalPowerPolicy(), RequiredNetworkPolicy(), ConcurrencyPolicy()]
        )
    }

    /// The standard policies with `configuration`.
    public init(configuration: PolicyConfiguration = .init(), policies: [any SchedulingPolicy] = PolicySet.standardPolicies) {
        self.configuration = configuration
        self.policies = policies
    }

    /// Weighs every policy for `context` (whose configuration is replaced by this set's).
    public func evaluate(_ context: PolicyContext) -> PolicyEvaluation {
        var context = context
        context.configuration = configuration
        var decisions = policies.map { $0.evaluate(context) }
        var weighted = 0.0
        var total = 0.0
        for decision in decisions {
            if case .canProceed(let score) = decision.verdict {
                let weight = configuration.weight(of: decision.policy)
                weighted += weight * min(1, max(0, score))
                total += weight
            }
        }
        let order = Dictionary(uniqueKeysWithValues: policies.enumerated().map { ($1.name, $0) })
        decisions.sort { lhs, rhs in
            if lhs.blocks != rhs.blocks { return lhs.blocks }
            return (order[lhs.policy] ?? 0) < (order[rhs.policy] ?? 0)
        }
        return PolicyEvaluation(decisions: decisions, score: total > 0 ? weighted / total : 1, threshold: configuration.threshold)
    }
}
