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
        guard !decisions.contains(where: \.blocks) else { return false }
        return decisions.contains { $0.verdict == .mustProceed } || score >= threshold
    }

    /// What would let a request that does not proceed run: a free slot first (it runs
    /// as soon as one frees), then an app or device change (the engine files it there),
    /// then the latest instant a time-bound verdict names (a wake before it lifts the hold
    /// only when every blocking verdict says so); a low score waits for the device.
    public var wait: PolicyWait? {
        guard !proceeds else { return nil }
        let waits = blocking.compactMap(\.wait)
        if waits.isEmpty { return .deviceChange }
        if waits.contains(.capacity) && waits.count == 1 { return .capacity }
        if waits.contains(.appChange) { return .appChange }
        if waits.contains(.deviceChange) { return .deviceChange }
        if let latest = waits.compactMap(\.instant).max() {
            let anyWakeWillDo = waits.allSatisfy { if case .untilWake = $0 { true } else { false } }
            return anyWakeWillDo ? .untilWake(latest) : .until(latest)
        }
        return .capacity
    }
}

/// The policies the engine consults, in a fixed order, with their configuration.
public struct PolicySet: Sendable {
    /// The tunables; their ``PolicyConfiguration/profile`` chooses which of the set's
    /// policies judge (``policies``).
    public var configuration: PolicyConfiguration {
        didSet { if configuration.profile != oldValue.profile { selectPolicies() } }
    }
    /// The policies that judge, in evaluation order: those the set was made with that the
    /// configuration's profile includes.
    public private(set) var policies: [any SchedulingPolicy]
    /// Every policy the set was made with, whatever the profile.
    private let givenPolicies: [any SchedulingPolicy]

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
        WakeSharingPolicy(),
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

    /// The places in ``policies`` of the ones ``judge(_:rationales:)`` asks first, in that
    /// order.
    private var quickIndices: [Int] = []
    /// Each policy's place in `quickIndices`, or -1: where ``judge(_:rationales:)`` finds
    /// the bare verdict it already has, rather than asking the policy twice.
    private var quickSlots: [Int] = []
    /// ``policies``' names, read once: a name is an existential property read, and every
    /// judgement labels every decision.
    private var policyNames: [String] = []
    /// Each policy's place in `policies`, for listing decisions.
    private var listingRank: [String: Int] = [:]
    /// Whether every policy's name is its own (the usual case): decisions made in the
    /// set's order are then listed by moving the blocking ones first, without a sort.
    private var namesAreDistinct = true

    /// `policies` (the standard ones by default) with `configuration`; its profile
    /// chooses which of them judge.
    public init(configuration: PolicyConfiguration = .init(), policies: [any SchedulingPolicy] = PolicySet.standardPolicies) {
        self.configuration = configuration
        self.givenPolicies = policies
        self.policies = policies
        selectPolicies()
    }

    /// The standard policies under `profile`, with its defaults.
    public init(profile: PolicyProfile) {
        self.init(configuration: profile.defaults)
    }

    /// The server profile (``PolicyProfile/server``): `BGTASK_POLICY=server`.
    public static var server: PolicySet { PolicySet(profile: .server) }

    /// Keeps the given policies the profile includes, and the tables derived from them.
    private mutating func selectPolicies() {
        let profile = configuration.profile
        policies = givenPolicies.filter { profile.includes($0.name) }
        listingRank = Dictionary(policies.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        namesAreDistinct = listingRank.count == policies.count
        policyNames = policies.map(\.name)
        quickIndices = Self.quickOrder.compactMap { name in policyNames.firstIndex(of: name) }
        quickSlots = Array(repeating: -1, count: policies.count)
        for (slot, index) in quickIndices.enumerated() { quickSlots[index] = slot }
    }

    /// Asks the policies that most often hold a request, and cost least, first: the
    /// engine's launch loop stops at the first blocking verdict (a request the herd policy
    /// defers needs no thermal or usage judgement yet), so a shared trigger that frees
    /// thousands of requests costs a few bare verdicts each, not every policy's rationale.
    private static let quickOrder = ["concurrency", "herd-spreading", "rate-limit", "requires-external-power", "requires-network", "background-app-refresh", "force-quit"]

    /// The engine's verdict for one request: held by the first blocking decision met, or
    /// the full evaluation when nothing blocks.
    public enum Judgement: Sendable {
        /// A policy holds the request (the first one met, in the quick order), until `wait`.
        case held(policy: String, wait: PolicyWait?)
        /// Nothing blocks: the weighted evaluation decides.
        case evaluated(PolicyEvaluation)
    }

    /// Judges `context`: the cheap, decisive policies' bare verdicts first, stopping at the
    /// first block; then every policy's bare verdict, weighed. What the engine's launch
    /// loop uses: a held request is judged again when what held it changes, so its verdicts
    /// are enough to file it, and their text is left to `bgtask why`. Only a request that
    /// proceeds gets every policy's rationale (the judgement a launch carries), unless
    /// `rationales` is off (fleets and long simulations that keep no trace).
    public func judge(_ context: PolicyContext, rationales: Bool = true) -> Judgement {
        var context = context
        context.configuration = configuration
        return judge(configured: context, rationales: rationales)
    }

    /// ``judge(_:rationales:)`` of a context whose configuration is already this set's
    /// (the engine's own contexts): one copy of the context fewer per judgement.
    func judge(configured context: PolicyContext, rationales: Bool = true) -> Judgement {
        // Policies judge from their arguments alone, so a quick verdict is also the
        // policy's verdict in the full pass: kept, not asked for twice.
        var quickVerdicts: [(verdict: PolicyVerdict, wait: PolicyWait?)] = []
        quickVerdicts.reserveCapacity(quickIndices.count)
        for index in quickIndices {
            let (verdict, wait) = policies[index].verdict(context)
            if verdict == .mustNotProceed { return .held(policy: policyNames[index], wait: wait) }
            quickVerdicts.append((verdict, wait))
        }
        var decisions: [PolicyDecision] = []
        decisions.reserveCapacity(policies.count)
        for index in policies.indices {
            let slot = quickSlots[index]
            let (verdict, wait) = slot >= 0 ? quickVerdicts[slot] : policies[index].verdict(context)
            decisions.append(PolicyDecision(policy: policyNames[index], verdict: verdict, rationale: "", wait: wait))
        }
        let bare = evaluation(of: decisions)
        guard rationales, bare.proceeds else { return .evaluated(bare) }
        return .evaluated(evaluation(of: policies.map { $0.evaluate(context) }))
    }

    /// Weighs every policy for `context` (whose configuration is replaced by this set's).
    public func evaluate(_ context: PolicyContext) -> PolicyEvaluation {
        var context = context
        context.configuration = configuration
        return evaluation(of: policies.map { $0.evaluate(context) })
    }

    /// Scores `decisions` (made by ``policies``, in their order) and lists them: blocking
    /// first, then in the set's order.
    private func evaluation(of decisions: [PolicyDecision]) -> PolicyEvaluation {
        var decisions = decisions
        var weighted = 0.0
        var total = 0.0
        var blockingCount = 0
        let weighsAlike = configuration.weights.isEmpty  // no name to look up
        for decision in decisions {
            if case .canProceed(let score) = decision.verdict {
                let weight = weighsAlike ? 1 : configuration.weight(of: decision.policy)
                weighted += weight * min(1, max(0, score))
                total += weight
            }
            if decision.blocks { blockingCount += 1 }
        }
        if blockingCount > 0, blockingCount < decisions.count {
            if namesAreDistinct {
                // Already in the set's order: a stable move of the blocking ones to the front.
                decisions = decisions.filter(\.blocks) + decisions.filter { !$0.blocks }
            } else {
                let order = listingRank
                decisions.sort { lhs, rhs in
                    if lhs.blocks != rhs.blocks { return lhs.blocks }
                    return (order[lhs.policy] ?? 0) < (order[rhs.policy] ?? 0)
                }
            }
        }
        return PolicyEvaluation(decisions: decisions, score: total > 0 ? weighted / total : 1, threshold: configuration.threshold)
    }
}
