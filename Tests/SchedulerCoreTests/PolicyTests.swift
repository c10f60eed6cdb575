import Foundation
@testable import SchedulerCore
import Synchronization
import Testing

private let t0 = Date(timeIntervalSinceReferenceDate: 800_000_000)
private let app = AppID("com.example.app")

private func request(_ kind: TaskKind = .appRefresh, power: Bool = false, network: Bool = false) -> PendingRequest {
    PendingRequest(app: app, identifier: "com.example.app.task", kind: kind, earliestBeginDate: t0, requiresNetworkConnectivity: network, requiresExternalPower: power, submittedAt: t0)
}

private func state(createdAt: Date = t0) -> AppPolicyState {
    AppPolicyState(usage: UsageModel(createdAt: createdAt))
}

private func context(
    _ request: PendingRequest,
    conditions: Conditions = .favorable,
    app: AppPolicyState = state(),
    now: Date = t0,
    running: Int = 0,
    trigger: Date? = nil,
    configuration: PolicyConfiguration = .init(),
    readySince: Date? = nil,
    wakeUnderWay: Bool = false,
    nextPlannedWake: Date? = nil
) -> PolicyContext {
    PolicyContext(
        request: request, now: now, eligibleSince: t0, conditions: conditions, app: app, runningCount: running, maximumConcurrentRuns: 4,
        lastSharedTrigger: trigger, configuration: configuration, readySince: readySince, wakeUnderWay: wakeUnderWay, nextPlannedWake: nextPlannedWake)
}

/// The policy's full decision; also checks that its bare verdict (what the launch loop
/// asks) agrees with it.
private func verdict(_ policy: any SchedulingPolicy, _ context: PolicyContext) -> PolicyDecision {
    let decision = policy.evaluate(context)
    let bare = policy.verdict(context)
    #expect(bare.verdict == decision.verdict && bare.wait == decision.wait, "\(policy.name): bare verdict \(bare) disagrees with \(decision)")
    return decision
}

@Suite struct PolicyVerdictTests {
    @Test func backgroundAppRefreshOffBlocksUntilTheAppChanges() {
        var app = state()
        app.backgroundRefreshEnabled = false
        let decision = verdict(BackgroundAppRefreshPolicy(), context(request(), app: app))
        #expect(decision.verdict == .mustNotProceed)
        #expect(decision.wait == .appChange)
        #expect(verdict(BackgroundAppRefreshPolicy(), context(request(.continuedProcessing), app: app)).blocks == false)
    }

    @Test func forceQuitBlocksUntilOpened() {
        var app = state()
        app.forceQuit = true
        #expect(verdict(ForceQuitPolicy(), context(request(), app: app)).wait == .appChange)
        #expect(!verdict(ForceQuitPolicy(), context(request())).blocks)
    }

    @Test func criticalBatteryBlocksAtTwentyPercentUnlessCharging() {
        let low = Conditions(externalPower: false, networkAvailable: true, batteryLevel: 0.2)
        let decision = verdict(CriticalBatteryPolicy(), context(request(.processing), conditions: low))
        #expect(decision.blocks)
        #expect(decision.rationale.contains("20 %"))
        let charging = Conditions(externalPower: true, networkAvailable: true, batteryLevel: 0.1)
        #expect(!verdict(CriticalBatteryPolicy(), context(request(), conditions: charging)).blocks)
        let fine = Conditions(externalPower: false, networkAvailable: true, batteryLevel: 0.21)
        #expect(verdict(CriticalBatteryPolicy(), context(request(), conditions: fine)).verdict == .canProceed(score: 0.21))
    }

    @Test func lowPowerModeBlocksRefresh() {
        let lpm = Conditions(externalPower: false, networkAvailable: true, lowPowerMode: true)
        #expect(verdict(LowPowerModePolicy(), context(request(.appRefresh), conditions: lpm)).blocks)
        let lenient = PolicyConfiguration(lowPowerModeBlocks: [.appRefresh])
        #expect(!verdict(LowPowerModePolicy(), context(request(.processing), conditions: lpm, configuration: lenient)).blocks)
    }

    @Test func thermalDefersProcessingAtFairAndRefreshAtSerious() {
        let fair = Conditions(externalPower: true, networkAvailable: true, thermalState: .fair)
        let serious = Conditions(externalPower: true, networkAvailable: true, thermalState: .serious)
        #expect(verdict(ThermalPolicy(), context(request(.processing), conditions: fair)).blocks)
        #expect(!verdict(ThermalPolicy(), context(request(.appRefresh), conditions: fair)).blocks)
        #expect(verdict(ThermalPolicy(), context(request(.appRefresh), conditions: serious)).blocks)
    }

    @Test func processingWaitsWhileTheDeviceIsInUse() {
        let inUse = Conditions(externalPower: true, networkAvailable: true, deviceIdle: false)
        #expect(verdict(DeviceInUsePolicy(), context(request(.processing), conditions: inUse)).blocks)
        #expect(!verdict(DeviceInUsePolicy(), context(request(.appRefresh), conditions: inUse)).blocks)
    }

    @Test func processingWaitsUnderCPUPressure() {
        let busy = Conditions(externalPower: true, networkAvailable: true, cpuPressure: 0.7)
        let decision = verdict(CPUPressurePolicy(), context(request(.processing), conditions: busy))
        #expect(decision.blocks)
        #expect(decision.rationale.contains("70 %"))
        #expect(verdict(CPUPressurePolicy(), context(request(.appRefresh), conditions: busy)).verdict == .canProceed(score: 1 - 0.7))
    }

    @Test func requiredConditionsBlockOnTheDevice() {
        let offline = Conditions(externalPower: false, networkAvailable: false)
        #expect(verdict(RequiredExternalPowerPolicy(), context(request(.processing, power: true), conditions: offline)).wait == .deviceChange)
        #expect(verdict(RequiredNetworkPolicy(), context(request(.processing, network: true), conditions: offline)).wait == .deviceChange)
        let metered = Conditions(externalPower: true, networkAvailable: true, networkMetered: true)
        #expect(verdict(RequiredNetworkPolicy(), context(request(.processing, network: true), conditions: metered)).verdict == .canProceed(score: 0.3))
    }

    @Test func rateLimitSpacesLaunchesApart() {
        var app = state()
        app.lastLaunch = t0.addingTimeInterval(-20)
        let decision = verdict(RateLimitPolicy(), context(request(), app: app))
        #expect(decision.wait == .until(t0.addingTimeInterval(40)))
        app.lastLaunch = t0.addingTimeInterval(-61)
        #expect(!verdict(RateLimitPolicy(), context(request(), app: app)).blocks)
    }

    @Test func aTaskStartingAtTheInstantOfItsAppsLaunchJoinsIt() {
        // One wake, one launch of the app with two tasks (as iOS hands an app several):
        // not a second launch the limit must space out.
        var app = state()
        app.lastLaunch = t0
        let decision = verdict(RateLimitPolicy(), context(request(.processing), app: app))
        #expect(!decision.blocks)
        #expect(decision.rationale == "joins the app's background launch at this instant")
        #expect(verdict(RateLimitPolicy(), context(request(.processing), app: app, now: t0 + 1)).wait == .until(t0 + 60))
    }

    /// An app opened once, twelve hours before t0: no hour near t0 is likely.
    private func openedOnce() -> AppPolicyState {
        var app = state(createdAt: t0.addingTimeInterval(-86_400))
        app.usage.recordForeground(at: t0.addingTimeInterval(-12 * 3600))
        return app
    }

    @Test func processingWaitsForAPlannedWakeWithinTheWindow() {
        let processing = request(.processing, power: true)
        let app = openedOnce()
        let held = verdict(WakeSharingPolicy(), context(processing, app: app, now: t0 + 600, readySince: t0, nextPlannedWake: t0 + 1800))
        #expect(held.verdict == .mustNotProceed)
        #expect(held.wait == .untilWake(t0 + 1800), "held until that wake, or one before it")
        #expect(held.rationale.hasPrefix("waits 20 min for a wake already planned"), "\(held.rationale)")
        // At most the window from when it became ready: a wake 1 h 1 s after it is not waited for.
        #expect(!verdict(WakeSharingPolicy(), context(processing, app: app, now: t0 + 600, readySince: t0, nextPlannedWake: t0 + 3601)).blocks)
        #expect(verdict(WakeSharingPolicy(), context(processing, app: app, now: t0 + 600, readySince: t0, nextPlannedWake: t0 + 3600)).blocks)
        // Health research is processing too.
        #expect(verdict(WakeSharingPolicy(), context(request(.healthResearch), app: app, readySince: t0, nextPlannedWake: t0 + 60)).blocks)
    }

    @Test func processingDoesNotWaitForAWakeJustBeforeTheUserUsuallyReturnsOrWhenNeverOpened() {
        // Opened at 01:01 past t0's hour every day for a week: that hour is likely.
        var habit = state(createdAt: t0.addingTimeInterval(-8 * 86_400))
        for day in (1...7).reversed() { habit.usage.recordForeground(at: t0.addingTimeInterval(3600 + 60 - Double(day) * 86_400)) }
        let week = LocalWeek(utcOffset: habit.usage.configuration.utcOffset)
        let hourStart = week.start(ofHour: week.absoluteHour(of: t0) + 1)
        #expect(habit.usage.isLikelyHour(containing: hourStart, now: t0))
        // A wake ten minutes (the lead) or less before that hour, or in it: processing there
        // would be cut short when the user comes back.
        let before = verdict(WakeSharingPolicy(), context(request(.processing), app: habit, readySince: t0, nextPlannedWake: hourStart - 300))
        #expect(!before.blocks)
        #expect(before.rationale.contains("shortly before the user usually opens the app"), "\(before.rationale)")
        #expect(!verdict(WakeSharingPolicy(), context(request(.processing), app: habit, readySince: t0, nextPlannedWake: hourStart + 600)).blocks)
        // Earlier than the lead before it: waits.
        #expect(verdict(WakeSharingPolicy(), context(request(.processing), app: habit, readySince: t0, nextPlannedWake: hourStart - 1200)).blocks)
        // Never opened: nothing tells a wake before the user's return from another.
        let never = verdict(WakeSharingPolicy(), context(request(.processing), readySince: t0, nextPlannedWake: t0 + 60))
        #expect(!never.blocks)
        #expect(never.rationale.hasPrefix("the app was never opened"))
    }

    @Test func processingStartsInAWakeUnderWayOrWhenNoneIsPlanned() {
        let processing = request(.processing)
        let joins = verdict(WakeSharingPolicy(), context(processing, app: openedOnce(), readySince: t0, wakeUnderWay: true, nextPlannedWake: t0 + 60))
        #expect(!joins.blocks)
        #expect(joins.rationale == "starts in the wake under way")
        let alone = verdict(WakeSharingPolicy(), context(processing, app: openedOnce(), readySince: t0))
        #expect(!alone.blocks)
        #expect(alone.rationale == "no wake planned within 1 h of when it became ready")
        #expect(!verdict(WakeSharingPolicy(), context(processing, app: openedOnce(), now: t0 + 60, readySince: t0, nextPlannedWake: t0 + 60)).blocks, "a wake at this instant is under way, not planned")
    }

    @Test func processingEligibleForTheMaximumDeferralWaitsForNoWake() {
        // The starvation guard's promise: its must-proceed never overrides a block.
        let late = verdict(WakeSharingPolicy(), context(request(.processing), app: openedOnce(), now: t0 + 2 * 86_400, readySince: t0 + 2 * 86_400 - 60, nextPlannedWake: t0 + 2 * 86_400 + 60))
        #expect(!late.blocks)
        #expect(late.rationale.hasPrefix("eligible for 2 d: past the 2 d the system promises"), "\(late.rationale)")
        // Nor, before it, for a wake that comes after it.
        let promise = t0 + 2 * 86_400
        #expect(!verdict(WakeSharingPolicy(), context(request(.processing), app: openedOnce(), now: promise - 120, readySince: promise - 180, nextPlannedWake: promise + 60)).blocks)
        #expect(verdict(WakeSharingPolicy(), context(request(.processing), app: openedOnce(), now: promise - 120, readySince: promise - 180, nextPlannedWake: promise - 60)).blocks)
    }

    @Test func aHoldUntilAWakeStaysOneOnlyWhenEveryBlockingVerdictSaysSo() {
        func evaluation(_ waits: [PolicyWait]) -> PolicyEvaluation {
            PolicyEvaluation(decisions: waits.enumerated().map { PolicyDecision(policy: "p\($0.offset)", verdict: .mustNotProceed, rationale: "", wait: $0.element) }, score: 1, threshold: 0.4)
        }
        #expect(evaluation([.untilWake(t0 + 60)]).wait == .untilWake(t0 + 60))
        #expect(evaluation([.untilWake(t0 + 60), .untilWake(t0 + 90)]).wait == .untilWake(t0 + 90))
        // Another policy's plain hold is not lifted by a wake: the later instant, plainly.
        #expect(evaluation([.untilWake(t0 + 90), .until(t0 + 60)]).wait == .until(t0 + 90))
    }

    @Test func onlyProcessingWaitsToShareAWakeAndAWindowOfZeroNeverWaits() {
        for kind in [TaskKind.appRefresh, .continuedProcessing] {
            let decision = verdict(WakeSharingPolicy(), context(request(kind), readySince: t0, nextPlannedWake: t0 + 60))
            #expect(!decision.blocks)
            #expect(decision.rationale == "only processing waits to share a wake")
        }
        let off = verdict(WakeSharingPolicy(), context(request(.processing), app: openedOnce(), configuration: PolicyConfiguration(wakeSharingWindow: 0), readySince: t0, nextPlannedWake: t0 + 60))
        #expect(!off.blocks)
        #expect(PolicyProfile.server.defaults.wakeSharingWindow == 0, "a server does not sleep: nothing to share")
    }

    @Test func energyBudgetBlocksUntilLocalMidnight() {
        var app = state()
        app.energyDay = app.usage.localDay(of: t0)
        app.energyUsed = 2_500
        let decision = verdict(EnergyBudgetPolicy(), context(request(), app: app))
        #expect(decision.blocks)
        #expect(decision.wait == .until(app.usage.startOfLocalDay(app.energyDay + 1)))
        app.energyDay -= 1  // yesterday's spending does not count today
        #expect(!verdict(EnergyBudgetPolicy(), context(request(), app: app)).blocks)
    }

    @Test func concurrencyCapWaitsForCapacity() {
        #expect(verdict(ConcurrencyPolicy(), context(request(), running: 4)).wait == .capacity)
        #expect(!verdict(ConcurrencyPolicy(), context(request(), running: 3)).blocks)
    }

    @Test func herdSpreadingGivesEachRequestAStableOffsetAfterTheTrigger() {
        let trigger = t0
        let decision = verdict(HerdSpreadingPolicy(), context(request(), trigger: trigger))
        guard case .until(let start)? = decision.wait else {
            Issue.record("expected a time-bound wait, got \(decision)")
            return
        }
        #expect(start > trigger && start < trigger.addingTimeInterval(600))
        #expect(verdict(HerdSpreadingPolicy(), context(request(), trigger: trigger)) == decision, "the offset is stable")
        #expect(!verdict(HerdSpreadingPolicy(), context(request(), now: trigger.addingTimeInterval(600), trigger: trigger)).blocks)
    }

    @Test func herdSpreadingLetsARequestJoinItsAppsLaunchAtThatInstant() {
        // Its app was launched for another task at this very instant: it joins that launch.
        let trigger = t0
        let now = trigger.addingTimeInterval(5)
        var launched = state()
        launched.lastLaunch = now
        let joins = verdict(HerdSpreadingPolicy(), context(request(), app: launched, now: now, trigger: trigger, wakeUnderWay: true))
        #expect(!joins.blocks && joins.rationale.contains("joins that launch"), "\(joins.rationale)")
        // Another app's run at this instant (the app was not launched now): it waits its turn.
        #expect(verdict(HerdSpreadingPolicy(), context(request(), now: now, trigger: trigger, wakeUnderWay: true)).blocks)
        // The app launched at this instant but no run started at it (the wake is not under
        // way for this judgement): it waits its turn.
        #expect(verdict(HerdSpreadingPolicy(), context(request(), app: launched, now: now, trigger: trigger, wakeUnderWay: false)).blocks)
        // The app's launch a second earlier: it waits its turn.
        launched.lastLaunch = trigger.addingTimeInterval(1)
        #expect(verdict(HerdSpreadingPolicy(), context(request(), app: launched, now: now, trigger: trigger, wakeUnderWay: true)).blocks)
    }

    @Test func herdSpreadingGivesARefreshAboutToBeSeenTheShorterWindow() throws {
        // The user opened the app at t0 + 1 h on each of the last 7 days: at t0 + 55 min the
        // likely hour begins within the lead time.
        var habit = state(createdAt: t0.addingTimeInterval(-8 * 86_400))
        for day in (1...7).reversed() { habit.usage.recordForeground(at: t0.addingTimeInterval(3600 + 60 - Double(day) * 86_400)) }
        let trigger = t0.addingTimeInterval(55 * 60)
        func offset(_ request: PendingRequest, _ app: AppPolicyState) -> TimeInterval? {
            let decision = verdict(HerdSpreadingPolicy(), context(request, app: app, now: trigger, trigger: trigger))
            guard let start = decision.wait?.instant else { return nil }
            return start.timeIntervalSince(trigger)
        }
        let full = try #require(offset(request(), state()), "an app with no habit waits its turn in the whole window")
        let beforeLaunch = try #require(offset(request(), habit))
        // The same share of a 120 s window instead of a 600 s one.
        #expect(abs(beforeLaunch - full * 120 / 600) < 1e-6, "\(beforeLaunch) vs \(full)")
        #expect(offset(request(.processing), habit) == full, "processing is not about content the user sees")
        // Two hours after the habit's hour, the refresh takes its full turn.
        let later = t0.addingTimeInterval(3 * 3600)
        let decision = verdict(HerdSpreadingPolicy(), context(request(), app: habit, now: later, trigger: later))
        #expect(decision.wait == .until(later.addingTimeInterval(full)))
    }

    @Test func herdSpreadingGivesTheShorterWindowWhenTheLaunchesBeginWithinTheTurn() throws {
        // Opened at 07:05 on each of the last 7 days (t0 is 06:13:20). The network comes back
        // at 06:47: a lead time on (06:57) is not yet the likely hour, but its launches begin
        // at 07:05, within the window and a lead time: the shorter window, so content stale
        // since the loss is not held past the user's return.
        var habit = state(createdAt: t0.addingTimeInterval(-8 * 86_400))
        for day in (1...7).reversed() { habit.usage.recordForeground(at: t0.addingTimeInterval(3_100 - Double(day) * 86_400)) }
        func offset(at trigger: Date, _ app: AppPolicyState) -> TimeInterval? {
            verdict(HerdSpreadingPolicy(), context(request(), app: app, now: trigger, trigger: trigger)).wait?.instant?.timeIntervalSince(trigger)
        }
        let back = t0.addingTimeInterval(2_020)  // 06:47
        let full = try #require(offset(at: back, state()))
        let short = try #require(offset(at: back, habit))
        #expect(abs(short - full * 120 / 600) < 1e-6, "\(short) vs \(full)")
        // At 06:40 the launches begin 25 minutes on, past the window and a lead time: the whole window.
        let earlier = t0.addingTimeInterval(1_600)
        #expect(offset(at: earlier, habit) == offset(at: earlier, state()))
    }

    /// The offset comes from FNV-1a over the key's text: documented, and the same on every
    /// machine (Swift's own hashing is seeded per process).
    @Test func herdSpreadingHashIsFNV1aOfTheKeyText() {
        let key = RequestKey(app: AppID("com.example.app"), identifier: "com.example.app.task")
        var expected: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "com.example.app/com.example.app.task".utf8 {
            expected ^= UInt64(byte)
            expected = expected &* 0x0000_0100_0000_01B3
        }
        #expect(HerdSpreadingPolicy.stableHash(of: key) == expected)
        #expect(HerdSpreadingPolicy.stableHash(of: RequestKey(app: AppID("com.example.app"), identifier: "com.example.app.other")) != expected)
    }

    /// Every standard policy's bare verdict agrees with its full decision over a grid of
    /// requests, device conditions, app states and moments (the launch loop files requests
    /// by the bare verdict; `bgtask why` shows the full one).
    @Test func bareVerdictsAgreeWithFullDecisionsForEveryPolicy() {
        let conditionsGrid = [
            Conditions.favorable,
            Conditions(externalPower: false, networkAvailable: false, batteryLevel: 0.1),
            Conditions(externalPower: false, networkAvailable: true, batteryLevel: 0.5, lowPowerMode: true, thermalState: .serious, networkMetered: true, deviceIdle: false, cpuPressure: 0.9),
            Conditions(externalPower: true, networkAvailable: true, thermalState: .fair, cpuPressure: 0.5),
        ]
        var refreshOff = state()
        refreshOff.backgroundRefreshEnabled = false
        var forceQuit = state()
        forceQuit.forceQuit = true
        var launchedRecently = state()
        launchedRecently.lastLaunch = t0.addingTimeInterval(-30)
        var launchedLongAgo = state()
        launchedLongAgo.lastLaunch = t0.addingTimeInterval(-86_400)
        var launchedNow = state()
        launchedNow.lastLaunch = t0
        var openedHoursAgo = state(createdAt: t0.addingTimeInterval(-86_400))
        openedHoursAgo.usage.recordForeground(at: t0.addingTimeInterval(-12 * 3600))
        let apps = [state(), refreshOff, forceQuit, launchedRecently, launchedLongAgo, launchedNow, openedHoursAgo, state(createdAt: t0.addingTimeInterval(-30 * 86_400))]
        let requests = [request(), request(.processing, power: true, network: true), request(.continuedProcessing), request(.healthResearch, network: true)]
        var checked = 0
        for policy in PolicySet.standardPolicies {
            for conditions in conditionsGrid {
                for app in apps {
                    for request in requests {
                        for (now, trigger) in [(t0, nil), (t0, t0), (t0.addingTimeInterval(30), t0), (t0.addingTimeInterval(3 * 86_400), t0)] {
                            for running in [0, 4] {
                                // Wakes: none planned, one planned soon, one under way.
                                let wakes: [(Bool, Date?)] = [(false, nil), (false, now.addingTimeInterval(600)), (true, now.addingTimeInterval(600))]
                                for (underWay, planned) in wakes {
                                    _ = verdict(policy, context(request, conditions: conditions, app: app, now: now, running: running, trigger: trigger, wakeUnderWay: underWay, nextPlannedWake: planned))
                                    checked += 1
                                }
                            }
                        }
                    }
                }
            }
        }
        #expect(checked == 17 * 4 * 8 * 4 * 4 * 2 * 3)
    }

    @Test func starvationForcesARunAfterTwoDays() {
        let decision = verdict(StarvationPolicy(), context(request(.processing), now: t0.addingTimeInterval(2 * 86_400)))
        #expect(decision.verdict == .mustProceed)
    }
}

@Suite struct PolicySetTests {
    @Test func oneBlockingVerdictHoldsAndIsListedFirst() {
        let lpm = Conditions(externalPower: false, networkAvailable: true, lowPowerMode: true)
        let evaluation = PolicySet().evaluate(context(request(), conditions: lpm))
        #expect(!evaluation.proceeds)
        #expect(evaluation.decisions.first?.policy == "low-power-mode")
        #expect(evaluation.wait == .deviceChange)
    }

    @Test func favorableConditionsProceed() {
        let evaluation = PolicySet().evaluate(context(request(.processing)))
        #expect(evaluation.proceeds, "\(evaluation.blocking)")
        #expect(evaluation.score > 0.9)
    }

    @Test func lowScoreBelowTheThresholdWaits() {
        let poor = Conditions(externalPower: false, networkAvailable: true, batteryLevel: 0.25, networkMetered: true, cpuPressure: 0.45)
        let strict = PolicyConfiguration(threshold: 0.95)
        let evaluation = PolicySet(configuration: strict).evaluate(context(request(.processing, network: true), conditions: poor))
        #expect(evaluation.blocking.isEmpty)
        #expect(!evaluation.proceeds)
        #expect(evaluation.wait == .deviceChange)
    }

    @Test func weightsChangeTheScore() {
        let poor = Conditions(externalPower: false, networkAvailable: true, batteryLevel: 0.3)
        let plain = PolicySet().evaluate(context(request(), conditions: poor)).score
        let heavy = PolicySet(configuration: PolicyConfiguration(weights: ["critical-battery": 10])).evaluate(context(request(), conditions: poor)).score
        #expect(heavy < plain)
    }

    @Test func judgeStopsAtTheFirstQuickBlockAndOtherwiseWeighsEveryPolicy() {
        var app = state()
        app.lastLaunch = t0.addingTimeInterval(-30)
        guard case .held(let policy, let wait) = PolicySet().judge(context(request(), app: app)) else {
            Issue.record("a launch 30 s ago holds the request")
            return
        }
        #expect(policy == "rate-limit")
        #expect(wait == .until(t0.addingTimeInterval(PolicyConfiguration().minimumLaunchInterval - 30)))
        let lpm = Conditions(externalPower: false, networkAvailable: true, lowPowerMode: true)
        guard case .evaluated(let evaluation) = PolicySet().judge(context(request(), conditions: lpm)) else {
            Issue.record("low power mode is not among the quick policies: the full evaluation decides")
            return
        }
        #expect(evaluation.decisions.count == PolicySet.standardPolicies.count)
        #expect(evaluation.decisions.first?.policy == "low-power-mode")
        #expect(!evaluation.proceeds)
    }

    @Test func judgeAsksEveryPolicyForItsVerdictOnce() {
        // The quick policies' verdicts are kept for the weighing, not asked for again.
        let asked = AskCounts()
        let policies = PolicySet.standardPolicies.map { CountingPolicy(wrapped: $0, asked: asked) as any SchedulingPolicy }
        let set = PolicySet(policies: policies)
        guard case .evaluated(let evaluation) = set.judge(context(request()), rationales: false) else {
            Issue.record("nothing holds a plain refresh on a good device")
            return
        }
        #expect(evaluation.decisions.count == policies.count)
        let counts = asked.counts.withLock { $0 }
        #expect(counts.count == policies.count)
        #expect(counts.values.allSatisfy { $0 == 1 }, "\(counts.filter { $0.value != 1 })")
    }

    @Test func timeBoundWaitsCombineToTheLatestInstant() {
        var app = state()
        app.lastLaunch = t0.addingTimeInterval(-30)
        let evaluation = PolicySet().evaluate(context(request(), app: app, trigger: t0))
        guard case .until(let date)? = evaluation.wait else {
            Issue.record("expected .until, got \(String(describing: evaluation.wait))")
            return
        }
        #expect(date >= t0.addingTimeInterval(30))
    }
}

@Suite struct PolicyConfigurationTests {
    @Test func defaultsRoundTripThroughJSON() throws {
        let json = PolicyConfiguration().json()
        let parsed = try PolicyConfiguration.parse(Data(json.utf8), source: "defaults")
        #expect(parsed == PolicyConfiguration())
    }

    @Test func keysOverrideDefaults() throws {
        let parsed = try PolicyConfiguration.parse(Data(#"{"version": 1, "threshold": 0.6, "weights": {"thermal": 2}, "thermalDefersProcessingAt": "serious", "lowPowerModeBlocks": ["refresh"]}"#.utf8), source: "policy.json")
        #expect(parsed.threshold == 0.6)
        #expect(parsed.weight(of: "thermal") == 2)
        #expect(parsed.thermalDefersProcessingAt == .serious)
        #expect(parsed.lowPowerModeBlocks == [.appRefresh])
    }

    @Test(arguments: [
        (#"{"threshold": "high"}"#, "threshold"),
        (#"{"threshold": 1.5}"#, "threshold"),
        (#"{"thresold": 0.5}"#, "thresold"),
        (#"{"weights": {"thermals": 1}}"#, "weights.thermals"),
        (#"{"weights": {"thermal": -1}}"#, "weights.thermal"),
        (#"{"version": 2}"#, "version"),
        (#"{"processingRequiresIdleDevice": 1}"#, "processingRequiresIdleDevice"),
        (#"{"lowPowerModeBlocks": ["refresh", "nap"]}"#, "lowPowerModeBlocks[1]"),
        (#"{"lowPowerModeBlocks": ["refresh", 1]}"#, "lowPowerModeBlocks[1]"),
        (#"{"lowPowerModeBlocks": ["refresh", "refresh"]}"#, "lowPowerModeBlocks[1]"),
        (#"{"thermalExpiresAt": "hot"}"#, "thermalExpiresAt"),
    ])
    func malformedConfigurationIsRefusedNamingTheKey(json: String, key: String) {
        #expect {
            try PolicyConfiguration.parse(Data(json.utf8), source: "policy.json")
        } throws: { error in
            guard let error = error as? PolicyConfigurationError else { return false }
            return error.key == key && error.description.contains("policy.json")
        }
    }

    @Test func notJSONIsRefused() {
        #expect(throws: PolicyConfigurationError.self) { try PolicyConfiguration.parse(Data("threshold=1".utf8), source: "x") }
    }

    /// A key, a value or an excerpt of a policy file with a control character is named in
    /// the message escaped (`\u001B`), never carried raw to a terminal or a log.
    @Test(arguments: ["{\"\\u001b[2Jbad\": 1}", "{\"lowPowerModeBlocks\": [\"\\u001b[2J\"]}", "{\"threshold\": 0.5} \u{1B}[2J", "{\"threshold\": 0.5} \u{0}"])
    func controlCharactersFromAPolicyFileAreEscapedInTheMessage(json: String) {
        #expect {
            try PolicyConfiguration.parse(Data(json.utf8), source: "policy.json")
        } throws: { error in
            !"\(error)".unicodeScalars.contains { $0.properties.generalCategory == .control } && "\(error)".contains("\\u00")
        }
    }

    /// A key from the file is shown as a path, quoted and escaped once: a duplicate key's
    /// path as the JSON reader gives it, an unknown key the same way.
    @Test func aDuplicateKeyWithSpacesOrControlCharactersIsEscapedOnce() {
        #expect {
            try PolicyConfiguration.parse(Data(#"{"a b": 1, "a b": 2}"#.utf8), source: "policy.json")
        } throws: { error in
            "\(error)".contains(#"["a b"]"#) && !"\(error)".contains(#"\""#)
        }
        #expect {
            try PolicyConfiguration.parse(Data(#"{"\u001b": 1, "\u001b": 2}"#.utf8), source: "policy.json")
        } throws: { error in
            "\(error)".contains(#"["\u001B"]"#) && !"\(error)".contains(#"\\u001B"#)
                && !"\(error)".unicodeScalars.contains { $0.properties.generalCategory == .control }
        }
        #expect {
            try PolicyConfiguration.parse(Data(#"{"a b": 1}"#.utf8), source: "policy.json")
        } throws: { error in
            "\(error)" == #"policy.json: ["a b"]: unknown key"#
        }
        #expect {
            try PolicyConfiguration.parse(Data(#"{"bogus": 1}"#.utf8), source: "policy.json")
        } throws: { error in
            "\(error)" == #"policy.json: bogus: unknown key"#
        }
        #expect {
            try PolicyConfiguration.parse(Data(#"{"weights": {"no\"pe": 1, "thermal": 1}}"#.utf8), source: "policy.json")
        } throws: { error in
            "\(error)".hasPrefix(#"policy.json: weights["no\"pe"]: no policy has this name"#)
        }
    }

    /// A document that is valid JSON but not an object says what it is, not Foundation's
    /// "The data is not in the correct format".
    @Test(arguments: [("null", "found null"), ("true", "found a boolean"), (#""x""#, "found a string"), ("5", "found a number"), ("[1]", "found an array")])
    func aTopLevelThatIsNoObjectIsNamed(json: String, found: String) {
        #expect {
            try PolicyConfiguration.parse(Data(json.utf8), source: "policy.json")
        } throws: { error in
            "\(error)".contains("expected a JSON object at the top level, \(found)") && !"\(error)".contains("correct format")
        }
    }
}

/// A policy that counts how often its verdict is asked for, and otherwise judges as the
/// policy it wraps.
private struct CountingPolicy: SchedulingPolicy {
    let wrapped: any SchedulingPolicy
    let asked: AskCounts
    var name: String { wrapped.name }
    func evaluate(_ context: PolicyContext) -> PolicyDecision { wrapped.evaluate(context) }
    func verdict(_ context: PolicyContext) -> (verdict: PolicyVerdict, wait: PolicyWait?) {
        asked.counts.withLock { $0[wrapped.name, default: 0] += 1 }
        return wrapped.verdict(context)
    }
}

/// How often each policy's verdict was asked for.
private final class AskCounts: Sendable {
    let counts = Mutex<[String: Int]>([:])
}
