import Foundation
@testable import SchedulerCore
import Testing

private typealias F = EngineFixtures
private let t0 = F.t0

/// The launch loop's shortcuts decide exactly as the slow paths they replace
/// (docs/ARCHITECTURE.md, "What a judgement costs"): the loop's judgement against the full
/// evaluation, keys that keep their hash against their text, the plan's remembered
/// bisections against the bisection, and a shares memo shared between apps against one
/// worked out alone.
@Suite struct HotPathEquivalenceTests {
    private static let conditionsGrid: [Conditions] = [
        .favorable,
        Conditions(externalPower: false, networkAvailable: true, batteryLevel: 0.5, lowPowerMode: true),
        Conditions(externalPower: true, networkAvailable: true, thermalState: .fair, cpuPressure: 0.9),
        Conditions(externalPower: false, networkAvailable: false, batteryLevel: 0.15),
        Conditions(externalPower: false, networkAvailable: true, batteryLevel: 0.35, deviceIdle: false, cpuPressure: 0.3),
    ]

    private static let configurations: [PolicyConfiguration] = [
        PolicyConfiguration(),
        // Weighed unequally, and a threshold a middling score does not reach.
        PolicyConfiguration(threshold: 0.97, weights: ["battery-level": 3, "cpu-pressure": 0.5]),
        PolicyConfiguration(threshold: 0.2, weights: ["energy-budget": 2]),
    ]

    private static func apps() -> [AppPolicyState] {
        var used = AppPolicyState(usage: UsageModel(createdAt: t0 - 20 * 86_400))
        for day in 0..<14 { used.usage.recordForeground(at: t0 - Double(20 - day) * 86_400 + 8 * 3600) }
        used.lastRefresh = t0 - 3600
        var spent = AppPolicyState(usage: UsageModel(createdAt: t0))
        spent.energyUsed = 1_900
        spent.energyDay = spent.usage.localDay(of: t0)
        var quit = AppPolicyState(usage: UsageModel(createdAt: t0))
        quit.forceQuit = true
        return [AppPolicyState(usage: UsageModel(createdAt: t0)), used, spent, quit]
    }

    /// For every context of a grid: a request the loop lets through carries the evaluation's
    /// verdicts and score; one it holds waits for what the evaluation says, named by the
    /// same blocking policies (or a low score), or by the first quick policy that blocks.
    @Test func theLoopsJudgementDecidesAsTheFullEvaluation() throws {
        var compared = (proceeds: 0, quick: 0, weighed: 0, weighedUntil: 0, lowScore: 0)
        for configuration in Self.configurations {
            let set = PolicySet(configuration: configuration)
            for conditions in Self.conditionsGrid {
                for app in Self.apps() {
                    for request in [F.refresh(), F.processing(power: true), F.processing(network: true), F.continued()] {
                      for trigger in [nil, t0 - 60] {
                        let context = PolicyContext(
                            request: request, now: t0, eligibleSince: t0 - 600, conditions: conditions, app: app,
                            lastSharedTrigger: trigger, configuration: configuration, deviceSalt: 7)
                        let full = set.evaluate(context)
                        for rationales in [true, false] {
                            switch set.judge(configured: context, rationales: rationales) {
                            case .proceeds(let evaluation):
                                compared.proceeds += 1
                                #expect(full.proceeds, "\(request.identifier) in \(conditions)")
                                #expect(evaluation.score == full.score && evaluation.decisions.map(\.verdict) == full.decisions.map(\.verdict))
                                #expect(evaluation.decisions.allSatisfy { $0.rationale.isEmpty } == !rationales)
                            case .held(let policy, let wait):
                                compared.quick += 1
                                #expect(!full.proceeds)
                                let blocking = try #require(full.blocking.first { $0.policy == policy })
                                #expect(blocking.wait == wait)
                            case .weighedHeld(let wait, let blocking):
                                compared.weighed += 1
                                if case .until = wait { compared.weighedUntil += 1 }
                                if rationales, blocking.isEmpty { compared.lowScore += 1 }
                                #expect(!full.proceeds, "\(request.identifier) in \(conditions)")
                                #expect(wait == full.wait)
                                #expect(blocking == (rationales ? full.blocking.map(\.policy) : []))
                            }
                        }
                      }
                    }
                }
            }
        }
        // The grid reaches all three answers (and a weighed hold until an instant, the
        // usage model's placement, and one by a low score), so none of the comparisons above
        // is empty.
        #expect(compared.proceeds > 0 && compared.quick > 0 && compared.weighed > 0 && compared.weighedUntil > 0 && compared.lowScore > 0, "\(compared)")
    }

    /// A policy of the tests that blocks until `until` under the name it is given.
    private struct Blocking: SchedulingPolicy {
        let name: String
        let until: Date
        func evaluate(_ context: PolicyContext) -> PolicyDecision {
            PolicyDecision(policy: name, verdict: .mustNotProceed, rationale: "held by the test", wait: .until(until))
        }
    }

    /// Policies that share a name: a weighed hold names its blocking policies in the
    /// evaluation's own order (by each name's first place), and waits as it does.
    @Test func aHoldByPoliciesSharingANameNamesThemAsTheEvaluation() {
        let policies: [any SchedulingPolicy] = [
            Blocking(name: "twin", until: t0 + 600), AppUsagePolicy(), Blocking(name: "other", until: t0 + 60),
            Blocking(name: "twin", until: t0 + 900), StarvationPolicy(),
        ]
        let set = PolicySet(configuration: PolicyConfiguration(), policies: policies)
        let context = PolicyContext(
            request: F.processing(), now: t0, eligibleSince: t0, conditions: .favorable,
            app: AppPolicyState(usage: UsageModel(createdAt: t0)), configuration: PolicyConfiguration())
        let full = set.evaluate(context)
        guard case .weighedHeld(let wait, let blocking) = set.judge(configured: context, rationales: true) else {
            Issue.record("expected a weighed hold")
            return
        }
        #expect(blocking == full.blocking.map(\.policy))
        #expect(blocking.count == 3 && Set(blocking) == ["twin", "other"])
        #expect(wait == full.wait && wait == .until(t0 + 900), "the latest instant a blocking verdict names")
    }

    /// The public judgement still hands back the bare evaluation of a request the weighing
    /// holds, as before the loop stopped building one.
    @Test func thePublicJudgementOfAWeighedHoldIsTheBareEvaluation() throws {
        let configuration = PolicyConfiguration(threshold: 0.99)
        let set = PolicySet(configuration: configuration)
        let context = PolicyContext(
            request: F.processing(), now: t0, eligibleSince: t0, conditions: Conditions(externalPower: false, networkAvailable: true, batteryLevel: 0.5),
            app: AppPolicyState(usage: UsageModel(createdAt: t0)), configuration: configuration)
        guard case .evaluated(let evaluation) = set.judge(context, rationales: true) else {
            Issue.record("expected a weighed judgement")
            return
        }
        let full = set.evaluate(context)
        #expect(!evaluation.proceeds && evaluation.score == full.score && evaluation.wait == full.wait)
        #expect(evaluation.decisions.map(\.verdict) == full.decisions.map(\.verdict))
        #expect(evaluation.decisions.allSatisfy { $0.rationale.isEmpty })
    }

    /// Keys compare and hash by their text as Swift strings do (canonically equivalent
    /// spellings are one key), and a request's key follows its app and identifier.
    @Test func keysKeepTheirHashAndFollowTheirText() throws {
        let composed = AppID("com.example.caf\u{E9}")
        let decomposed = AppID("com.example.cafe\u{301}")
        #expect(composed == decomposed && composed.hashValue == decomposed.hashValue)
        #expect(Set([composed, decomposed]).count == 1)
        #expect(AppID("com.example.a") != AppID("com.example.b"))
        #expect(RequestKey(app: composed, identifier: "r\u{E9}") == RequestKey(app: decomposed, identifier: "re\u{301}"))
        #expect(RequestKey(app: composed, identifier: "a") != RequestKey(app: composed, identifier: "b"))
        #expect(RequestKey(app: AppID("a"), identifier: "b/c") != RequestKey(app: AppID("a/b"), identifier: "c"))

        var request = F.refresh()
        request.app = F.otherApp
        #expect(request.key == RequestKey(app: F.otherApp, identifier: F.refreshID))
        request.identifier = F.otherRefreshID
        #expect(request.key == RequestKey(app: F.otherApp, identifier: F.otherRefreshID))
        let spelledOneWay = F.refresh("com.example.app.caf\u{E9}", app: composed)
        let spelledTheOther = F.refresh("com.example.app.cafe\u{301}", app: decomposed)
        #expect(spelledOneWay == spelledTheOther && Set([spelledOneWay, spelledTheOther]).count == 1)
    }

    /// Sets and dictionaries hash a key by its kept hash value mixed with their seed: equal
    /// keys alike under every seed, the seed moving every key, and tables of many keys
    /// finding each one (and nothing else).
    @Test func tablesHashKeysByTheirKeptValue() {
        let composed = AppID("com.example.caf\u{E9}")
        let decomposed = AppID("com.example.cafe\u{301}")
        for seed in [0, 1, -1, 0x5EED, Int.max] {
            #expect(composed._rawHashValue(seed: seed) == decomposed._rawHashValue(seed: seed))
            #expect(RequestKey(app: composed, identifier: "x")._rawHashValue(seed: seed) == RequestKey(app: decomposed, identifier: "x")._rawHashValue(seed: seed))
        }
        #expect(Set([0, 1, 2, 3].map { composed._rawHashValue(seed: $0) }).count == 4, "the seed moves the value")
        let apps = (0..<10_000).map { AppID("com.example.app\($0)") }
        let byApp = Dictionary(uniqueKeysWithValues: apps.enumerated().map { ($1, $0) })
        let keys = Set(apps.prefix(2_000).flatMap { app in ["refresh", "cleanup"].map { RequestKey(app: app, identifier: "\(app.rawValue).\($0)") } })
        #expect(byApp.count == 10_000 && keys.count == 4_000)
        #expect(apps.enumerated().allSatisfy { byApp[$1] == $0 })
        #expect(byApp[AppID("com.example.app10000")] == nil && !keys.contains(RequestKey(app: apps[0], identifier: "other")))
        // The low bits (a table's bucket) of neighbouring keys spread over the buckets.
        let buckets = Set(apps.prefix(1_024).map { $0._rawHashValue(seed: 42) & 1_023 })
        #expect(buckets.count > 500, "\(buckets.count) of 1,024 buckets (about 650 expected of random values)")
    }

    /// The wire and the stores still see a request's app and identifier as two fields, and
    /// a key as its two fields; decoding gives back an equal value.
    @Test func requestsAndKeysCodeAsBefore() throws {
        var request = F.processing(earliest: t0 + 60, network: true)
        request.remoteNotificationPayload = "{}"
        let data = try JSONEncoder().encode(request)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["app"] as? String == F.app.rawValue && object["identifier"] as? String == F.syncID)
        #expect(object["key"] == nil)
        #expect(Set(object.keys) == ["app", "identifier", "kind", "earliestBeginDate", "requiresNetworkConnectivity", "requiresExternalPower", "submittedAt", "remoteNotificationPayload"])
        #expect(try JSONDecoder().decode(PendingRequest.self, from: data) == request)

        let key = F.key(F.refreshID)
        let keyObject = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(key)) as? [String: String])
        #expect(keyObject == ["app": F.app.rawValue, "identifier": F.refreshID])
        #expect(try JSONDecoder().decode(RequestKey.self, from: JSONEncoder().encode(key)) == key)
    }

    private static func question(budget: Double, roots: [Double]? = nil) -> UsageModel.BudgetScaleQuestion {
        // A reader opened mornings and evenings, a few hours likely, the rest not.
        let shape = (-1..<25).map { hour -> Double in
            switch (hour + 24) % 24 {
            case 7, 8: 0.9
            case 12: 0.5
            case 18...21: 0.7
            default: hour % 5 == 0 ? 0.1 : 0
            }
        }
        return UsageModel.BudgetScaleQuestion(
            roots: roots ?? shape.map { $0.squareRoot() }, onsets: (-1..<25).map { Double(($0 + 1) % 4) * 300 },
            cadence: 900, lead: 1_200, maximumSpacing: 7_200, budget: budget)
    }

    /// The count the bisection compares is a whole number, so a budget and its whole part
    /// give one answer; the memo answers a question as the bisection does, and a new
    /// question is asked of the bisection.
    @Test func rememberedBisectionsAnswerAsTheBisection() {
        for budget in [3.0, 11.0, 16.0, 22.0] {
            let answer = UsageModel.budgetScale(Self.question(budget: budget))
            #expect(answer > 0, "budget \(budget) binds")
            for fraction in [0.2, 0.7, 0.99] {
                #expect(UsageModel.budgetScale(Self.question(budget: budget + fraction)) == answer, "budget \(budget + fraction)")
            }
        }
        #expect(UsageModel.budgetScale(Self.question(budget: 11)) > UsageModel.budgetScale(Self.question(budget: 16)), "a smaller budget spaces wider")
        let memo = BudgetScaleMemo()
        var asked = 0
        let tight = Self.question(budget: 10)
        let answer = memo.scale(for: tight) { asked += 1; return UsageModel.budgetScale(tight) }
        #expect(answer == UsageModel.budgetScale(tight) && answer > 0, "a tight budget binds")
        #expect(memo.scale(for: tight) { asked += 1; return -1 } == answer)
        #expect(asked == 1, "the second asking is remembered")
        let loose = Self.question(budget: 400)
        #expect(memo.scale(for: loose) { asked += 1; return UsageModel.budgetScale(loose) } == 0, "a budget that does not bind answers 0")
        #expect(asked == 2, "a new question is worked out")
        // More questions than the memo keeps: the oldest is worked out again.
        for budget in 11..<(11 + BudgetScaleMemo.capacity) { _ = memo.scale(for: Self.question(budget: Double(budget))) { UsageModel.budgetScale(Self.question(budget: Double(budget))) } }
        #expect(memo.scale(for: tight) { asked += 1; return UsageModel.budgetScale(tight) } == answer)
        #expect(asked == 3)
    }

    /// Apps taught the same losses share one memo of their shares; one that then learns a
    /// loss of its own answers as a model that never shared, and so does one that shared
    /// nothing because its history differs.
    @Test func aSharedSharesMemoNeverAnswersForADifferentHistory() throws {
        let created = t0 - 30 * 86_400
        var first = UsageModel(createdAt: created)
        var second = UsageModel(createdAt: created)
        var alone = UsageModel(createdAt: created)
        var opened = UsageModel(createdAt: created)
        opened.recordForeground(at: created - 7 * 86_400)  // watched from a week earlier
        for day in 0..<21 {
            let loss = created + Double(day) * 86_400 + 7 * 3600 + 600
            first.recordNetworkLoss(at: loss)
            second.recordNetworkLoss(at: loss)
            alone.recordNetworkLoss(at: loss)
            opened.recordNetworkLoss(at: loss)
        }
        second.shareLossMemo(with: first)
        opened.shareLossMemo(with: first)
        let now = t0 - 8 * 86_400 + 3 * 3600
        let hours = 0..<LocalWeek.hoursPerWeek
        let firstShares = hours.map { first.networkLossShare(hourOfWeek: $0, at: now) }
        #expect(firstShares.contains { $0 >= UsageModel.networkLossShareThreshold }, "the daily loss is learned")
        #expect(hours.map { second.networkLossShare(hourOfWeek: $0, at: now) } == firstShares)
        let openedAlone = try Self.fresh(like: opened)
        #expect(hours.map { opened.networkLossShare(hourOfWeek: $0, at: now) } == hours.map { openedAlone.networkLossShare(hourOfWeek: $0, at: now) })
        // The second learns one more loss, in an hour the first never lost: its memo is its own.
        let extra = now - 2 * 3600
        second.recordNetworkLoss(at: extra)
        alone.recordNetworkLoss(at: extra)
        #expect(hours.map { second.networkLossShare(hourOfWeek: $0, at: now) } == hours.map { alone.networkLossShare(hourOfWeek: $0, at: now) })
        #expect(hours.map { first.networkLossShare(hourOfWeek: $0, at: now) } == firstShares, "the first is as it was")
    }

    /// A model with the same evidence and a memo of its own (by coding it and reading it back).
    private static func fresh(like model: UsageModel) throws -> UsageModel {
        try JSONDecoder().decode(UsageModel.self, from: JSONEncoder().encode(model))
    }
}
