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
        return Self.wait(ofBlocking: blocking.compactMap(\.wait))
    }

    /// ``wait`` of a judgement that does not proceed, from the waits its blocking decisions
    /// name (in any order).
    static func wait(ofBlocking waits: [PolicyWait]) -> PolicyWait {
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
        switch judge(configured: context, rationales: rationales) {
        case .held(let policy, let wait): return .held(policy: policy, wait: wait)
        case .proceeds(let evaluation): return .evaluated(evaluation)
        case .weighedHeld:
            // The bare evaluation, as the launch loop weighed it.
            return .evaluated(bareEvaluation(policies.map { $0.verdict(context) }))
        }
    }

    /// What the engine's launch loop makes of a judgement (``judge(configured:rationales:)``).
    enum LoopJudgement {
        /// A policy holds the request (the first one met, in the quick order), until `wait`.
        case held(policy: String, wait: PolicyWait?)
        /// Weighed and held until `wait` (``PolicyEvaluation/wait``): by the policies named
        /// in `blocking` (in the evaluation's order; none for a low score), named only when
        /// rationales are asked for.
        case weighedHeld(wait: PolicyWait, blocking: [String])
        /// Weighed and let through: the evaluation the launch carries.
        case proceeds(PolicyEvaluation)
    }

    /// ``judge(_:rationales:)`` of a context whose configuration is already this set's (the
    /// engine's own contexts): one copy of the context fewer per judgement, and no
    /// evaluation built for a request that stays held. The bare verdicts are weighed where
    /// they are gathered (on the stack): most judgements hold a request, and building,
    /// ordering and dropping every policy's decision for each was a tenth of a long
    /// simulation.
    func judge(configured context: PolicyContext, rationales: Bool = true) -> LoopJudgement {
        let count = policies.count
        // The buffer is never deinitialized (and a quick hold leaves it partly filled): sound
        // only while a verdict and a wait are plain values, holding no reference.
        assert(_isPOD((verdict: PolicyVerdict, wait: PolicyWait?).self), "verdicts must stay plain values")
        return withUnsafeTemporaryAllocation(of: (verdict: PolicyVerdict, wait: PolicyWait?).self, capacity: count) { verdicts in
            // Policies judge from their arguments alone, so a quick verdict is also the
            // policy's verdict in the full pass: kept, not asked for twice.
            var asked = 0
            for index in quickIndices {
                let (verdict, wait) = policies[index].verdict(context)
                if verdict == .mustNotProceed { return .held(policy: policyNames[index], wait: wait) }
                (verdicts.baseAddress! + index).initialize(to: (verdict, wait))
                asked += 1
            }
            for index in 0..<count where quickSlots[index] < 0 {
                (verdicts.baseAddress! + index).initialize(to: policies[index].verdict(context))
                asked += 1
            }
            assert(asked == count)
            // As ``evaluation(of:)`` weighs them, in the set's order.
            var weighted = 0.0
            var total = 0.0
            var blocks = false
            var mustProceed = false
            let weighsAlike = configuration.weights.isEmpty
            for index in 0..<count {
                switch verdicts[index].verdict {
                case .canProceed(let score):
                    let weight = weighsAlike ? 1 : configuration.weight(of: policyNames[index])
                    weighted += weight * min(1, max(0, score))
                    total += weight
                case .mustNotProceed: blocks = true
                case .mustProceed: mustProceed = true
                }
            }
            let score = total > 0 ? weighted / total : 1
            guard !blocks, mustProceed || score >= configuration.threshold else {
                var waits: [PolicyWait] = []
                var blocking: [String] = []
                for index in 0..<count where verdicts[index].verdict == .mustNotProceed {
                    if let wait = verdicts[index].wait { waits.append(wait) }
                    if rationales { blocking.append(policyNames[index]) }
                }
                if rationales, !namesAreDistinct {
                    // Names shared by several policies: in the evaluation's own order.
                    blocking = bareEvaluation(verdicts).blocking.map(\.policy)
                }
                return .weighedHeld(wait: PolicyEvaluation.wait(ofBlocking: waits), blocking: blocking)
            }
            guard rationales else {
                return .proceeds(bareEvaluation(verdicts))
            }
            return .proceeds(evaluation(of: policies.map { $0.evaluate(context) }))
        }
    }

    /// The evaluation of the policies' bare `verdicts` (in the set's order): no rationales.
    private func bareEvaluation(_ verdicts: some Collection<(verdict: PolicyVerdict, wait: PolicyWait?)>) -> PolicyEvaluation {
        evaluation(of: zip(policyNames, verdicts).map { PolicyDecision(policy: $0, verdict: $1.verdict, rationale: "", wait: $1.wait) })
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
