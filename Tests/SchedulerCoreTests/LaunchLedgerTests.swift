import Foundation
@testable import SchedulerCore
import Testing

private typealias F = EngineFixtures
private let t0 = F.t0
private let day: TimeInterval = 86_400

/// The ledger of an app's background launches, and the placement spending less while the
/// last week spent more than the budget (found from outside: a reader who checks every few
/// minutes in three hours a day had 25 wakeups a day, the bound being 23.7, because every
/// plan spends its 24 hours afresh; docs/policies.md, "What a day really spends").
@Suite struct LaunchLedgerTests {
    /// A ledger from t0 with `perDay` launches a day, evenly, for `days` days; the device
    /// forbids refreshes for the first `forbiddenHours` of each day.
    static func ledger(perDay: Int, days: Int, forbiddenHours: Double = 0) -> LaunchLedger {
        var ledger = LaunchLedger(since: t0, refreshesAllowed: forbiddenHours == 0)
        for dayIndex in 0..<days {
            let start = t0 + Double(dayIndex) * day
            if forbiddenHours > 0 {
                ledger.refreshesAllowed(false, at: start)
                ledger.refreshesAllowed(true, at: start + forbiddenHours * 3600)
            }
            let from = forbiddenHours * 3600
            for launch in 0..<perDay {
                let at = start + from + (day - from) * Double(launch) / Double(perDay)
                ledger.record(at, now: at)
            }
        }
        return ledger
    }

    @Test func aLaunchCountsOnceAndDecaysWithAWeeksMeanAge() {
        var ledger = LaunchLedger(since: t0)
        ledger.record(t0, now: t0)
        ledger.record(t0, now: t0)  // a task that joined the launch
        #expect(ledger.count(at: t0) == 1)
        #expect(abs(ledger.count(at: t0 + 7 * day) - exp(-1)) < 1e-9, "a week later, 1/e of it")
        ledger.record(t0 + day, now: t0 + day)
        #expect(abs(ledger.count(at: t0 + day) - (1 + exp(-1.0 / 7))) < 1e-9)
        // A launch restored late (from the run log) adds its weight; one not claimed goes, and
        // a launch at its very instant (the app's next request) counts again.
        ledger.record(t0 + 3600, now: t0 + day)
        #expect(abs(ledger.count(at: t0 + day) - (1 + exp(-1.0 / 7) + exp(-23.0 / 24 / 7))) < 1e-9)
        ledger.forget(t0 + 3600)
        #expect(abs(ledger.count(at: t0 + day) - (1 + exp(-1.0 / 7))) < 1e-9)
        ledger.forget(t0 + day)
        #expect(abs(ledger.count(at: t0 + day) - exp(-1.0 / 7)) < 1e-9)
        ledger.record(t0 + day, now: t0 + day)
        #expect(abs(ledger.count(at: t0 + day) - (1 + exp(-1.0 / 7))) < 1e-9, "counted again after the lost claim")
        // Never below nothing; an absurd instant is ignored.
        let before = ledger
        ledger.record(Date(timeIntervalSince1970: .infinity), now: t0 + day)
        ledger.record(t0 + 2 * day, now: Date(timeIntervalSince1970: .nan))
        #expect(ledger == before)
        for _ in 0..<5 { ledger.forget(t0) }
        #expect(ledger.count(at: t0 + day) == 0)
    }

    @Test func aLaunchWhileRefreshesAreForbiddenIsNotCountedAndAClockSteppedBackIsFollowed() {
        // A clean-up while offline earns no budget and spends none.
        var ledger = LaunchLedger(since: t0)
        ledger.refreshesAllowed(false, at: t0 + 60)
        ledger.record(t0 + 120, now: t0 + 120)
        #expect(ledger.count(at: t0 + 120) == 0)
        ledger.refreshesAllowed(true, at: t0 + 3600)
        ledger.record(t0 + 3700, now: t0 + 3700)
        #expect(ledger.count(at: t0 + 3700) == 1)
        // Taking back a launch that was not counted takes back nothing.
        ledger.refreshesAllowed(false, at: t0 + 3800)
        ledger.record(t0 + 3900, now: t0 + 3900)
        ledger.forget(t0 + 3900)
        #expect(abs(ledger.count(at: t0 + 3900) - exp(-200 / LaunchLedger.meanAge)) < 1e-9)
        // The clock stepped back a year: launches weigh 1 from here, not e^-52.
        var ahead = Self.ledger(perDay: 10, days: 3)
        let before = ahead.count(at: ahead.epoch)
        let excessBefore = ahead.excessPerDay(over: 22, at: ahead.epoch)
        let back = t0 - 365 * day
        ahead.record(back, now: back)
        #expect(abs(ahead.count(at: back) - (before + 1)) < 1e-6, "\(ahead.count(at: back))")
        // The ledger keeps its age: ten launches a day are still under a budget of 22 (one
        // launch more), where counting from the step would read them as all over it.
        let excessAfter = ahead.excessPerDay(over: 22, at: back)
        #expect(excessBefore < 0 && abs(excessAfter - excessBefore) < 0.3, "\(excessBefore) -> \(excessAfter)")
    }

    @Test func theExcessIsWhatTheDaysSpentOverTheBudgetInTheTimeRefreshesWereAllowed() {
        // Three weeks at the budget: nothing over it. Above it: about the difference.
        let budget = 22.0
        #expect(abs(Self.ledger(perDay: 22, days: 21).excessPerDay(over: budget, at: t0 + 21 * day)) < 0.6)
        let over = Self.ledger(perDay: 30, days: 21).excessPerDay(over: budget, at: t0 + 21 * day)
        #expect(over > 7 && over < 9, "\(over)")
        let under = Self.ledger(perDay: 12, days: 21).excessPerDay(over: budget, at: t0 + 21 * day)
        #expect(under < -9, "\(under)")
        // The budget was a day's, and the device forbade refreshes for half of each day: the
        // same 22 a day in the other half are twice what the allowed time earns.
        let offline = Self.ledger(perDay: 22, days: 21, forbiddenHours: 12).excessPerDay(over: budget, at: t0 + 21 * day)
        #expect(offline > 9 && offline < 13, "\(offline)")
        // A ledger started yesterday expects a day's budget of it, and takes the week before
        // as spent at the budget: 8 launches over it read as about 8 / 7 a day.
        let young = Self.ledger(perDay: 30, days: 1).excessPerDay(over: budget, at: t0 + day)
        #expect(young > 0.9 && young < 1.3, "\(young)")
    }

    @Test func thePlanSpendsLessWhileTheWeekSpentMoreAndNeverLessThanHalf() {
        let model = UsageModel(createdAt: t0)
        let none = model.refreshBudget(launches: nil, at: t0 + 21 * day)
        #expect(abs(none.day - 0.23 * 96) < 1e-9 && none.planned == none.day && none.excess == 0)
        let under = model.refreshBudget(launches: Self.ledger(perDay: 12, days: 21), at: t0 + 21 * day)
        #expect(under.planned == under.day, "a week that spent less changes nothing: the budget is a ceiling")
        let over = model.refreshBudget(launches: Self.ledger(perDay: 24, days: 21), at: t0 + 21 * day)
        #expect(over.excess > 1 && abs(over.planned - (over.day - UsageModel.spendingCorrection * over.excess)) < 1e-9)
        let far = model.refreshBudget(launches: Self.ledger(perDay: 90, days: 21), at: t0 + 21 * day)
        #expect(far.planned == far.day / 2)
        // The app's own cadence sets the day's budget.
        #expect(abs(model.refreshBudget(requestedInterval: 3600, launches: nil, at: t0).day - 0.23 * 24) < 1e-9)
    }

    @Test func anOverspentWeekSpacesTheRefreshesWider() {
        // Opened every day at 08:00, 12:00 and 19:00 for two weeks; at 12:30 the content is
        // from 12:05. With the week overspent the next refresh comes later, never earlier.
        var model = UsageModel(createdAt: t0)
        for dayIndex in 0..<14 {
            for hour in [8.0, 12.0, 19.0] { model.recordForeground(at: t0 + Double(dayIndex) * day + hour * 3600) }
        }
        let now = t0 + 14 * day + 12.5 * 3600
        let last = now - 25 * 60
        let free = model.preferredRefreshTime(eligibleAt: now, now: now, lastRefresh: last, launches: Self.ledger(perDay: 10, days: 14))
        let overspent = model.preferredRefreshTime(eligibleAt: now, now: now, lastRefresh: last, launches: Self.ledger(perDay: 40, days: 14))
        #expect(free == model.preferredRefreshTime(eligibleAt: now, now: now, lastRefresh: last), "under the budget: as without a ledger")
        let spacingWithout = model.refreshSpacings(startingAt: now, now: now)
        let spacingOverspent = model.refreshPlan(startingAt: now, now: now, launches: Self.ledger(perDay: 40, days: 14))?.spacings ?? []
        let pairs = zip(spacingWithout, spacingOverspent.dropFirst()).compactMap { a, b in a.flatMap { a in b.map { (a, $0) } } }
        #expect(!pairs.isEmpty && pairs.allSatisfy { $0.1 >= $0.0 - 1e-9 } && pairs.contains { $0.1 > $0.0 + 1 }, "every hour's spacing as wide or wider")
        #expect(overspent >= free)
    }

    @Test func whySaysThePlanSpendsLess() {
        // Opened every day at 08:00 for two weeks; at 12:30 the content is 5 minutes old and
        // the refresh waits for the evening's lead: the rationale says the week overspent.
        var model = UsageModel(createdAt: t0)
        for dayIndex in 0..<14 { model.recordForeground(at: t0 + Double(dayIndex) * day + 8 * 3600) }
        let now = t0 + 14 * day + 12.5 * 3600
        func rationale(_ ledger: LaunchLedger) -> PolicyDecision {
            var app = AppPolicyState(usage: model)
            app.lastRefresh = now - 300
            app.launchLedger = ledger
            let request = F.refresh(submittedAt: now - 900, earliest: now)
            return AppUsagePolicy().evaluate(PolicyContext(request: request, now: now, eligibleSince: now, conditions: .favorable, app: app))
        }
        let overspent = rationale(Self.ledger(perDay: 40, days: 14))
        #expect(overspent.blocks)
        #expect(overspent.rationale.contains("the last week's launches ran") && overspent.rationale.contains("over the budget of 22.1: this plan spends 11.0"), "\(overspent.rationale)")
        #expect(!rationale(Self.ledger(perDay: 10, days: 14)).rationale.contains("over the budget"))
    }

    @Test func theLedgerIsStoredMergedAndDecodedOrRefused() throws {
        var state = AppPolicyState(usage: UsageModel(createdAt: t0))
        state.recordLaunch(at: t0 + 60, now: t0 + 60, refreshesAllowed: false)
        state.launchLedger?.refreshesAllowed(true, at: t0 + 3600)
        let data = try JSONEncoder().encode(state)
        #expect(try JSONDecoder().decode(AppPolicyState.self, from: data) == state)
        #expect(state.lastLaunch == t0 + 60)
        // State saved before the ledger was kept decodes without one.
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        object["launchLedger"] = nil
        let old = try JSONDecoder().decode(AppPolicyState.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(old.launchLedger == nil)
        // A damaged ledger is refused, naming the field; the state holding it keeps the rest.
        #expect(AppPolicyState.launchLedgerProblem(in: try JSONEncoder().encode(state)) == nil, "an intact ledger has no problem")
        #expect(AppPolicyState.launchLedgerProblem(in: try JSONEncoder().encode(AppPolicyState(usage: UsageModel(createdAt: t0)))) == nil, "nor none")
        let ledger = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(state.launchLedger)) as? [String: Any])
        for (key, value) in [("decayedCount", -1.0 as Any), ("decayedCount", 1e300 as Any), ("decayedForbiddenTime", -5.0 as Any),
                             ("decayedForbiddenTime", 1e7 as Any), ("epoch", -1e9 as Any)] {
            var damaged = ledger
            damaged[key] = value
            do {
                _ = try JSONDecoder().decode(LaunchLedger.self, from: JSONSerialization.data(withJSONObject: damaged))
                Issue.record("\(key) = \(value) decoded")
            } catch let DecodingError.dataCorrupted(context) {
                #expect(context.codingPath.last?.stringValue == key)
            }
            var holding = object
            holding["launchLedger"] = damaged
            let data = try JSONSerialization.data(withJSONObject: holding)
            let kept = try JSONDecoder().decode(AppPolicyState.self, from: data)
            #expect(kept.launchLedger == nil && kept.lastLaunch == state.lastLaunch && kept.usage == state.usage)
            let problem = AppPolicyState.launchLedgerProblem(in: data)
            #expect(problem?.contains("launchLedger.\(key)") == true, "\(problem ?? "no problem found")")
        }
    }

    @Test func replicasAddTheirLaunchesUp() {
        var baseline = AppPolicyState(usage: UsageModel(createdAt: t0))
        baseline.recordLaunch(at: t0, now: t0, refreshesAllowed: true)
        var mine = baseline
        mine.recordLaunch(at: t0 + 600, now: t0 + 600, refreshesAllowed: true)
        var stored = baseline
        stored.recordLaunch(at: t0 + 300, now: t0 + 300, refreshesAllowed: true)
        let merged = stored.merging(changesIn: mine, since: baseline)
        let count = merged.launchLedger?.count(at: t0 + 600) ?? 0
        let expected = [0.0, 300, 600].reduce(0) { $0 + exp(-(600 - $1) / LaunchLedger.meanAge) }
        #expect(abs(count - expected) < 1e-9, "three launches, each once: \(count)")
        // A replica that found nothing stored brings its own.
        var alone = AppPolicyState(usage: UsageModel(createdAt: t0))
        alone.recordLaunch(at: t0, now: t0, refreshesAllowed: true)
        #expect(AppPolicyState(usage: UsageModel(createdAt: t0)).merging(changesIn: alone, since: nil).launchLedger == alone.launchLedger)
        // A stored state written without a ledger (an older replica) does not drop ours.
        var older = stored
        older.launchLedger = nil
        #expect(older.merging(changesIn: mine, since: baseline).launchLedger == mine.launchLedger)
    }

    @Test func theEngineCountsLaunchesOnceAndTheTimeTheDeviceForbadeRefreshes() throws {
        var engine = F.engine()
        let refresh = try #require(try F.submit(F.refresh(), to: &engine, at: t0).launched.first)
        let cleanup = try #require(try F.submit(F.processing(), to: &engine, at: t0).launched.first)
        #expect(engine.policyState(of: F.app)?.launchLedger?.count(at: t0) == 1, "two tasks at one instant: one launch")
        _ = engine.handle(.taskCompleted(refresh.id, success: true), at: t0 + 10)
        _ = engine.handle(.taskCompleted(cleanup.id, success: true), at: t0 + 10)
        // Offline for an hour: time the budget could not be spent in.
        _ = engine.handle(.conditionsChanged(F.noNetwork), at: t0 + 100)
        _ = engine.handle(.conditionsChanged(.favorable), at: t0 + 3700)
        let ledger = try #require(engine.policyState(of: F.app)?.launchLedger)
        #expect(abs(ledger.forbiddenTime(at: t0 + 3700) - LaunchLedger.meanAge * (1 - exp(-3600 / LaunchLedger.meanAge))) < 1e-6)
        // Low Power Mode forbids refreshes, heat does not (the timers obey no thermal rule).
        _ = engine.handle(.conditionsChanged(Conditions(externalPower: true, networkAvailable: true, thermalState: .serious)), at: t0 + 3800)
        #expect(engine.policyState(of: F.app)?.launchLedger?.forbiddenSince == nil)
        _ = engine.handle(.conditionsChanged(Conditions(externalPower: false, networkAvailable: true, batteryLevel: 0.6, lowPowerMode: true)), at: t0 + 3850)
        #expect(engine.policyState(of: F.app)?.launchLedger?.forbiddenSince == t0 + 3850)
        _ = engine.handle(.conditionsChanged(.favorable), at: t0 + 3900)
        // A launch that turns out not to have happened here is taken back, even after a later one.
        let second = try #require(try F.submit(F.refresh(F.secondRefreshID, submittedAt: t0 + 4000), to: &engine, at: t0 + 4000).launched.first)
        _ = try #require(try F.submit(F.processing(F.processingID(1), submittedAt: t0 + 4100), to: &engine, at: t0 + 4100).launched.first)
        _ = engine.handle(.runNotClaimed(second.id), at: t0 + 4200)
        let after = try #require(engine.policyState(of: F.app)?.launchLedger)
        #expect(abs(after.count(at: t0 + 4100) - (exp(-4100 / LaunchLedger.meanAge) + 1)) < 1e-9)
        // A claim lost, and the app's next request launched in the same instant: counted.
        let third = try #require(try F.submit(F.refresh(F.secondRefreshID, submittedAt: t0 + 8000), to: &engine, at: t0 + 8000).launched.first)
        let counted = try #require(engine.policyState(of: F.app)?.launchLedger).count(at: t0 + 8000)
        _ = engine.handle(.runNotClaimed(third.id), at: t0 + 8000)
        _ = try #require(try F.submit(F.processing(F.processingID(2), submittedAt: t0 + 8000), to: &engine, at: t0 + 8000).launched.first)
        #expect(abs(try #require(engine.policyState(of: F.app)?.launchLedger).count(at: t0 + 8000) - counted) < 1e-9)
    }
}
