import Foundation
@testable import SchedulerCore
import Testing

private typealias F = EngineFixtures
private let t0 = F.t0

/// What the simulator showed the judgement needed: refresh waits for the network, herd
/// spreading differs per device, launches carry their judgement (bare when asked), and an
/// app can be launched into the background without counting as a use.
@Suite struct SimulationDrivenJudgementTests {
    private func context(_ request: PendingRequest, conditions: Conditions = .favorable, now: Date = t0, trigger: Date? = nil, salt: UInt64 = 0, configuration: PolicyConfiguration = .init()) -> PolicyContext {
        PolicyContext(request: request, now: now, eligibleSince: t0, conditions: conditions, app: AppPolicyState(usage: UsageModel(createdAt: t0)), lastSharedTrigger: trigger, configuration: configuration, deviceSalt: salt)
    }

    @Test func refreshWaitsForTheNetworkUnlessConfiguredNotTo() {
        let offline = Conditions(externalPower: true, networkAvailable: false)
        let decision = RequiredNetworkPolicy().evaluate(context(F.refresh(), conditions: offline))
        #expect(decision.verdict == .mustNotProceed)
        #expect(decision.wait == .deviceChange)
        #expect(decision.rationale.contains("app refresh fetches content"))
        let off = PolicyConfiguration(refreshRequiresNetwork: false)
        #expect(!RequiredNetworkPolicy().evaluate(context(F.refresh(), conditions: offline, configuration: off)).blocks)
        #expect(!RequiredNetworkPolicy().evaluate(context(F.processing(), conditions: offline)).blocks, "processing without the requirement does not wait")
    }

    @Test func anOfflineRefreshWaitsInTheNetworksBucket() throws {
        let offline = Conditions(externalPower: true, networkAvailable: false)
        var engine = F.engine(conditions: offline, policies: PolicySet(configuration: PolicyConfiguration(herdSpreadWindow: 0, coalescingTolerance: 0)))
        #expect(try F.submit(F.refresh(), to: &engine, at: t0).launched.isEmpty)
        #expect(engine.location(of: F.key(F.refreshID)) == .blocked(.network), "filed where only the network's return looks")
        // Another change of the device leaves it where it is.
        _ = engine.handle(.conditionsChanged(Conditions(externalPower: false, networkAvailable: false)), at: t0 + 60)
        #expect(engine.location(of: F.key(F.refreshID)) == .blocked(.network))
        let back = EngineEffectSummary(engine.handle(.conditionsChanged(.favorable), at: t0 + 120))
        #expect(back.launched.map(\.identifier) == [F.refreshID])
    }

    @Test func turningTheRuleOffRefilesWaitingRefreshes() throws {
        let offline = Conditions(externalPower: true, networkAvailable: false)
        var engine = F.engine(conditions: offline, policies: PolicySet(configuration: PolicyConfiguration(herdSpreadWindow: 0, coalescingTolerance: 0)))
        _ = try F.submit(F.refresh(), to: &engine, at: t0)
        let changed = EngineEffectSummary(engine.setPolicyConfiguration(PolicyConfiguration(refreshRequiresNetwork: false, herdSpreadWindow: 0, coalescingTolerance: 0), at: t0 + 60))
        #expect(changed.launched.map(\.identifier) == [F.refreshID], "without the rule a refresh runs offline")
    }

    @Test func refreshRequiresNetworkIsAConfigurationKey() throws {
        let parsed = try PolicyConfiguration.parse(Data(#"{"refreshRequiresNetwork": false}"#.utf8), source: "test")
        #expect(parsed.refreshRequiresNetwork == false)
        #expect(PolicyConfiguration().refreshRequiresNetwork)
        #expect(throws: PolicyConfigurationError.self) {
            try PolicyConfiguration.parse(Data(#"{"refreshRequiresNetwork": 1}"#.utf8), source: "test")
        }
    }

    @Test func herdSpreadingOffsetsDifferPerDevice() {
        let key = F.key(F.refreshID)
        // Salt 0 is the plain hash of the key text; other salts move the offset.
        #expect(HerdSpreadingPolicy.stableHash(of: key, salt: 0) == HerdSpreadingPolicy.stableHash(of: key))
        let waits = (0..<20).map { salt -> PolicyWait? in
            HerdSpreadingPolicy().evaluate(context(F.refresh(), now: t0, trigger: t0, salt: UInt64(salt) &* 0x9E37_79B9_7F4A_7C15)).wait
        }
        #expect(Set(waits.compactMap { $0 }).count >= 18, "twenty devices, (nearly) twenty different turns")
    }

    @Test func bareJudgementDecidesLikeTheExplainedOne() {
        let set = PolicySet()
        let grid = [Conditions.favorable, Conditions(externalPower: false, networkAvailable: true, batteryLevel: 0.5, lowPowerMode: true), Conditions(externalPower: true, networkAvailable: true, thermalState: .fair, cpuPressure: 0.9)]
        for conditions in grid {
            for request in [F.refresh(), F.processing(power: true)] {
                let explained = set.judge(context(request, conditions: conditions))
                let bare = set.judge(context(request, conditions: conditions), rationales: false)
                switch (explained, bare) {
                case (.held(let a, let waitA), .held(let b, let waitB)):
                    #expect(a == b && waitA == waitB)
                case (.evaluated(let a), .evaluated(let b)):
                    #expect(a.proceeds == b.proceeds && a.wait == b.wait && a.score == b.score)
                    #expect(a.decisions.map(\.verdict) == b.decisions.map(\.verdict))
                    #expect(b.decisions.allSatisfy { $0.rationale.isEmpty })
                    #expect(a.decisions.allSatisfy { !$0.rationale.isEmpty } == a.proceeds, "only a launch carries the rationales")
                default:
                    Issue.record("the two judgements differ for \(request.identifier) in \(conditions)")
                }
            }
        }
    }

    @Test func launchesCarryTheirJudgementBareWhenNotExplained() throws {
        for explains in [true, false] {
            var engine = F.engine(SchedulerConfiguration(explainsLaunches: explains), policies: PolicySet(configuration: PolicyConfiguration(herdSpreadWindow: 0, coalescingTolerance: 0)))
            let effects = engine.submit(F.processing(), at: t0)
            let evaluation = try #require(effects.compactMap { effect -> PolicyEvaluation? in
                if case .launch(_, _, let evaluation) = effect { return evaluation } else { return nil }
            }.first)
            #expect(evaluation.proceeds)
            #expect(evaluation.decisions.allSatisfy { $0.rationale.isEmpty } == !explains)
        }
    }

    @Test func theDeviceSaltReachesHerdSpreading() {
        func turn(salt: UInt64) -> EligibilityIndex.Location? {
            var engine = F.engine(SchedulerConfiguration(deviceSalt: salt), conditions: F.noPower, policies: PolicySet(configuration: PolicyConfiguration(coalescingTolerance: 0)))
            _ = engine.submit(F.processing(power: true), at: t0)
            _ = engine.handle(.conditionsChanged(.favorable), at: t0 + 60)
            return engine.location(of: F.key(F.syncID))
        }
        let turns = Set((1...6).map { turn(salt: $0 &* 0xD1B5_4A32_D192_ED03) })
        #expect(turns.count >= 5, "\(turns)")
    }

    @Test func theLeadBeforeALikelyHourVariesPerDevice() {
        var usage = UsageModel(createdAt: t0)
        // Opened at 08:10 every day for a week: 08:00 is likely, its launches begin at 08:10.
        let midnight = Date(timeIntervalSince1970: (t0.timeIntervalSince1970 / 86_400).rounded(.up) * 86_400)
        for day in 0..<7 { usage.recordForeground(at: midnight.addingTimeInterval(Double(day) * 86_400 + 8 * 3600 + 600)) }
        let eligible = midnight.addingTimeInterval(7 * 86_400 + 3600)
        let launches = midnight.addingTimeInterval(7 * 86_400 + 8 * 3600 + 600)
        #expect(usage.preferredRefreshTime(eligibleAt: eligible, now: eligible, lastRefresh: eligible.addingTimeInterval(-3 * 3600), leadSpread: 0) == launches.addingTimeInterval(-300))
        #expect(usage.preferredRefreshTime(eligibleAt: eligible, now: eligible, lastRefresh: eligible.addingTimeInterval(-3 * 3600), leadSpread: 1) == launches.addingTimeInterval(-900))
        #expect(usage.preferredRefreshTime(eligibleAt: eligible, now: eligible, lastRefresh: eligible.addingTimeInterval(-3 * 3600)) == launches.addingTimeInterval(-600), "the middle by default")
        let spreads = Set((1...20).map { AppUsagePolicy.leadSpread(of: F.key(F.refreshID), salt: UInt64($0) &* 0x9E37_79B9_7F4A_7C15) })
        #expect(spreads.count >= 18 && spreads.allSatisfy { (0..<1).contains($0) })
    }

    @Test func anAppLaunchedIntoTheBackgroundNeverBecomesActive() {
        var lifecycle = ApplicationLifecycle()
        #expect(lifecycle.finishLaunching(at: t0, activate: false) == [.stateChanged(from: .notRunning, to: .inactive)])
        #expect(lifecycle.hasFinishedLaunching)
        #expect(lifecycle.enterBackground(at: t0).contains(.stateChanged(from: .inactive, to: .background)))
    }
}
