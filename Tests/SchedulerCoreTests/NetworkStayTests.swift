import Foundation
@testable import SchedulerCore
import Testing

private typealias T = UsageModelTests
private typealias F = EngineFixtures

/// How long the network usually stays once it is back, learned from the device's own
/// stays, and what herd spreading and the usage policy make of it (docs/policies.md,
/// "Short network stays").
@Suite struct NetworkStayTests {
    /// A model that saw the app opened at 03:40 on the weekdays of weeks 0..<`weeks`, and the
    /// network up from 03:17 for `minutes` on each of `days` days from Monday of week 0.
    static func shortWindows(minutes: Double, days: Int, weeks: Int = 1) -> UsageModel {
        var model = UsageModel(createdAt: T.monday)
        T.record(&model, weeks: 0..<weeks, times: [(3, 40)])
        for day in 0..<days {
            let back = T.at(week: 0, day: day, 3, 17)
            model.recordNetworkStay(from: back, to: back.addingTimeInterval(minutes * 60))
        }
        return model
    }

    // MARK: The usage model

    @Test func aStayIsKnownForTheSameTimeOfDayOnAnyDayAfterOneDay() {
        let model = Self.shortWindows(minutes: 15, days: 1)
        let tuesday = T.at(week: 0, day: 1, 3, 17)
        #expect(model.usualNetworkStay(afterReturnAt: tuesday, now: tuesday) == 900)
        // Within an hour of the time of day, on any day (Saturday too), counts; further does not.
        #expect(model.usualNetworkStay(afterReturnAt: T.at(week: 0, day: 5, 4, 10), now: T.at(week: 0, day: 5, 4, 10)) == 900)
        #expect(model.usualNetworkStay(afterReturnAt: T.at(week: 0, day: 1, 4, 30), now: T.at(week: 0, day: 1, 4, 30)) == nil)
        // Across midnight: 23:30 is within an hour of 00:20.
        var night = UsageModel(createdAt: T.monday)
        night.recordNetworkStay(from: T.at(week: 0, day: 0, 23, 30), to: T.at(week: 0, day: 1, 0, 10))
        #expect(night.usualNetworkStay(afterReturnAt: T.at(week: 0, day: 2, 0, 20), now: T.at(week: 0, day: 2, 0, 20)) == 2_400)
        // A stay not begun by `now` is not known yet; nothing recorded, nothing known.
        #expect(model.usualNetworkStay(afterReturnAt: tuesday, now: T.at(week: 0, day: 0, 3)) == nil)
        #expect(UsageModel(createdAt: T.monday).usualNetworkStay(afterReturnAt: tuesday, now: tuesday) == nil)
    }

    @Test func theUsualStayIsTheDecayedMedianSoANewRoutineTakesOver() {
        // Two weeks of hour-long stays at 03:17, then five-minute ones: three days of the new
        // routine weigh less than the fourteen before them (decayed, half-life 14 days), two
        // weeks of it more.
        var model = UsageModel(createdAt: T.monday)
        func stay(_ day: Int, _ minutes: Double) {
            let back = T.at(week: 0, day: day, 3, 17)
            model.recordNetworkStay(from: back, to: back.addingTimeInterval(minutes * 60))
        }
        for day in 0..<14 { stay(day, 60) }
        for day in 14..<17 { stay(day, 5) }
        let early = T.at(week: 0, day: 17, 3, 17)
        #expect(model.usualNetworkStay(afterReturnAt: early, now: early) == 3_600)
        for day in 17..<28 { stay(day, 5) }
        let later = T.at(week: 0, day: 28, 3, 17)
        #expect(model.usualNetworkStay(afterReturnAt: later, now: later) == 300)
    }

    @Test func staysAreRecordedInOrderBoundedAndDecodedOrRefused() throws {
        var model = Self.shortWindows(minutes: 10, days: 3)
        let recorded = model
        model.recordNetworkStay(from: T.at(week: 0, day: 1, 3, 17), to: T.at(week: 0, day: 1, 4))  // a start already kept
        model.recordNetworkStay(from: T.at(week: 0, day: 5, 3), to: T.at(week: 0, day: 5, 2))  // ends before it began
        model.recordNetworkStay(from: Date(timeIntervalSinceReferenceDate: .nan), to: T.at(week: 0, day: 5, 2))
        model.recordNetworkStay(from: T.at(week: 0, day: 5, 3), to: Date(timeIntervalSinceReferenceDate: .infinity))
        #expect(model == recorded)
        // One that began before the latest (a replica's memory holds another's later stay):
        // kept in its place.
        model.recordNetworkStay(from: T.at(week: 0, day: 1, 12), to: T.at(week: 0, day: 1, 13))
        #expect(model.networkStays.map(\.start) == [T.at(week: 0, day: 0, 3, 17), T.at(week: 0, day: 1, 3, 17), T.at(week: 0, day: 1, 12), T.at(week: 0, day: 2, 3, 17)])
        var many = UsageModel(createdAt: T.monday)
        for hour in 0..<100 { many.recordNetworkStay(from: T.monday.addingTimeInterval(Double(hour) * 3_600), to: T.monday.addingTimeInterval(Double(hour) * 3_600 + 600)) }
        #expect(many.networkStays.count == UsageModel.networkStayMemory)
        #expect(many.networkStays.first?.start == T.monday.addingTimeInterval(36 * 3_600), "the oldest go first")

        let data = try JSONEncoder().encode(recorded)
        #expect(try JSONDecoder().decode(UsageModel.self, from: data) == recorded)
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((object["networkStays"] as? [Any])?.count == 3)
        // Written before stays were kept: decodes, with none.
        object["networkStays"] = nil
        let old = try JSONDecoder().decode(UsageModel.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(old.networkStays.isEmpty)
        // Out of order: put in order. No duration, or no instant: refused, naming the key.
        let monday = T.at(week: 0, day: 0, 3, 17).timeIntervalSinceReferenceDate
        object["networkStays"] = [["start": monday + 86_400, "duration": 600], ["start": monday, "duration": 900]]
        let sorted = try JSONDecoder().decode(UsageModel.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(sorted.networkStays.map(\.duration) == [900, 600])
        for damaged: [String: Any] in [["start": monday, "duration": -1], ["start": 1e300, "duration": 60], ["start": monday, "duration": 1e300]] {
            object["networkStays"] = [damaged]
            let bytes = try JSONSerialization.data(withJSONObject: object)
            do {
                _ = try JSONDecoder().decode(UsageModel.self, from: bytes)
                Issue.record("\(damaged) was accepted")
            } catch let DecodingError.dataCorrupted(context) {
                #expect(context.codingPath.map(\.stringValue) == ["networkStays"], "\(damaged): \(context)")
            }
        }
    }

    @Test func replicasJoinTheStaysEitherLearned() {
        let baseline = Self.shortWindows(minutes: 10, days: 1)
        var mine = baseline
        mine.recordNetworkStay(from: T.at(week: 0, day: 1, 3, 17), to: T.at(week: 0, day: 1, 3, 27))
        var theirs = baseline
        theirs.recordNetworkStay(from: T.at(week: 0, day: 1, 12), to: T.at(week: 0, day: 1, 13))
        let merged = theirs.merging(changesIn: mine, since: baseline)
        #expect(merged.networkStays.map(\.start) == [T.at(week: 0, day: 0, 3, 17), T.at(week: 0, day: 1, 3, 17), T.at(week: 0, day: 1, 12)])
    }

    // MARK: The engine

    @Test func theEngineTeachesEveryAppTheStaysEndedByAGapOfAMinuteOrMore() {
        var engine = F.engine()
        _ = engine.handle(.appForegrounded(F.app), at: t0)
        // Up since before the engine began: that stay's start is unknown, not learned.
        _ = engine.handle(.conditionsChanged(F.noNetwork), at: t0 + 600)
        _ = engine.handle(.conditionsChanged(.favorable), at: t0 + 700)
        #expect(engine.networkHistoryRecorded == 0)
        // Back at +700; a 30-second blip at +1,600 does not end the stay; a gap at +2,000 does.
        _ = engine.handle(.conditionsChanged(F.noNetwork), at: t0 + 1_600)
        _ = engine.handle(.conditionsChanged(.favorable), at: t0 + 1_630)
        #expect(engine.networkHistoryRecorded == 0)
        _ = engine.handle(.conditionsChanged(F.noNetwork), at: t0 + 2_000)
        _ = engine.handle(.conditionsChanged(F.nothing), at: t0 + 2_030)  // the power went too: still away
        #expect(engine.networkHistoryRecorded == 0, "learned when the network is back")
        _ = engine.handle(.conditionsChanged(.favorable), at: t0 + 2_100)
        #expect(engine.networkHistoryRecorded == 1)
        for app in [F.app, F.otherApp] {
            #expect(engine.policyState(of: app)?.usage.networkStays == [NetworkStay(start: t0 + 700, duration: 1_300)], "\(app)")
        }
    }

    // MARK: The policies

    /// A refresh of `F.app`, due at `due`.
    static func refresh(dueAt due: Date) -> PendingRequest {
        PendingRequest(app: F.app, identifier: F.refreshID, kind: .appRefresh, earliestBeginDate: due, submittedAt: due.addingTimeInterval(-900))
    }

    static func context(_ request: PendingRequest, usage: UsageModel, now: Date, eligibleSince: Date, back: Date?, trigger: Date? = nil, lastRefresh: Date? = nil) -> PolicyContext {
        var app = AppPolicyState(usage: usage)
        app.lastRefresh = lastRefresh
        return PolicyContext(request: request, now: now, eligibleSince: eligibleSince, conditions: .favorable, app: app,
                             lastSharedTrigger: trigger ?? back, networkBackSince: back)
    }

    @Test func aRefreshThatWaitedForTheNetworkWithContentLeftOldRunsOnTheReturn() {
        // Launches at 03:40 on weekdays; the network is back at 03:17 after a weekend away.
        let usage = Self.shortWindows(minutes: 60, days: 0, weeks: 1)
        let back = T.at(week: 1, day: 1, 3, 17)
        let due = T.at(week: 1, day: 0, 3, 45)
        let request = Self.refresh(dueAt: due)
        let old = T.at(week: 1, day: 0, 3, 30)  // a day old at the return
        let decision = AppUsagePolicy().evaluate(Self.context(request, usage: usage, now: back, eligibleSince: due, back: back, lastRefresh: old))
        #expect(!decision.blocks, "\(decision.rationale)")
        #expect(decision.rationale.hasPrefix("due since before the network came back 0 s ago, the content 23 h 47 min old (6 h or more): runs while the network is here"), "\(decision.rationale)")
        // Content younger than the age: placed before the launch, as before.
        let recent = back.addingTimeInterval(-AppUsagePolicy.staleContentAge + 60)
        #expect(AppUsagePolicy().evaluate(Self.context(request, usage: usage, now: back, eligibleSince: due, back: back, lastRefresh: recent)).blocks)
        // Due after the return (it did not wait for the network): placed.
        let fresh = Self.refresh(dueAt: back.addingTimeInterval(60))
        #expect(AppUsagePolicy().evaluate(Self.context(fresh, usage: usage, now: back.addingTimeInterval(60), eligibleSince: back.addingTimeInterval(60), back: back, lastRefresh: old)).blocks)
        // Never refreshed: the placement's own rule (it runs when eligible), not this one.
        #expect(!AppUsagePolicy().evaluate(Self.context(request, usage: usage, now: back, eligibleSince: due, back: back, lastRefresh: nil)).rationale.contains("the content"))
        // A return not seen (nil): placed.
        #expect(AppUsagePolicy().evaluate(Self.context(request, usage: usage, now: back, eligibleSince: due, back: nil, lastRefresh: old)).blocks)
    }

    @Test func herdSpreadingKeepsATurnWithinAQuarterOfTheUsualStay() throws {
        let usage = Self.shortWindows(minutes: 4, days: 3, weeks: 0)  // never opened: no shorter window before a launch
        let back = T.at(week: 0, day: 3, 3, 17)
        let request = Self.refresh(dueAt: T.at(week: 0, day: 2, 12))
        func offset(_ context: PolicyContext) -> TimeInterval? {
            guard let turn = HerdSpreadingPolicy().evaluate(context).wait?.instant else { return nil }
            return turn.timeIntervalSince(back)
        }
        let plain = try #require(offset(Self.context(request, usage: UsageModel(createdAt: T.monday), now: back, eligibleSince: request.earliestBeginDate!, back: back)))
        let short = try #require(offset(Self.context(request, usage: usage, now: back, eligibleSince: request.earliestBeginDate!, back: back)))
        // The same share of a minute (a quarter of four) instead of ten.
        #expect(abs(short - plain * 60 / 600) < 1e-6, "\(short) vs \(plain)")
        let decision = HerdSpreadingPolicy().evaluate(Self.context(request, usage: usage, now: back, eligibleSince: request.earliestBeginDate!, back: back))
        #expect(decision.rationale.contains("the network usually stays 4 min at this time of day"), "\(decision.rationale)")
        // Power back (not the network's return): the whole window.
        let power = Self.context(request, usage: usage, now: back.addingTimeInterval(60), eligibleSince: request.earliestBeginDate!, back: back, trigger: back.addingTimeInterval(60))
        #expect(HerdSpreadingPolicy().evaluate(power).wait == .until(back.addingTimeInterval(60 + plain)))
        // Work that does not need the network: the whole window.
        var processing = request
        processing.kind = .processing
        #expect(offset(Self.context(processing, usage: usage, now: back, eligibleSince: request.earliestBeginDate!, back: back)) == plain)
    }

    @Test func aRefreshThatWaitedForTheNetworkRunsBeforeTheNetworkUsuallyGoes() {
        // Launches at 03:40 on weekdays: the refresh is placed in the lead before 03:40 (5 to
        // 15 minutes). The network is back at 03:17 for five minutes each day.
        let usage = Self.shortWindows(minutes: 5, days: 7, weeks: 1)
        let back = T.at(week: 1, day: 1, 3, 17)
        let due = T.at(week: 1, day: 0, 23, 45)  // due since before midnight, offline since
        let request = Self.refresh(dueAt: due)
        // Refreshed at 23:30: content under the age that runs a refresh on the return at once.
        let lastRefresh = T.at(week: 1, day: 0, 23, 30)
        let waited = Self.context(request, usage: usage, now: back, eligibleSince: due, back: back, lastRefresh: lastRefresh)
        let decision = AppUsagePolicy().evaluate(waited)
        #expect(!decision.blocks, "\(decision.rationale)")
        #expect(decision.rationale.contains("it usually stays 5 min at this time of day"), "\(decision.rationale)")
        // Without the stays learned: held for the lead before 03:40 (after 03:22).
        let unaware = AppUsagePolicy().evaluate(Self.context(request, usage: Self.shortWindows(minutes: 5, days: 0, weeks: 1), now: back, eligibleSince: due, back: back, lastRefresh: lastRefresh))
        guard case .until(let placed)? = unaware.wait else {
            Issue.record("expected the refresh held, got \(unaware)")
            return
        }
        #expect(placed > T.at(week: 1, day: 1, 3, 25) && placed < T.at(week: 1, day: 1, 3, 40), "\(placed)")
        // A network that usually stays an hour: the placement comes while it is here.
        let long = Self.shortWindows(minutes: 60, days: 7, weeks: 1)
        #expect(AppUsagePolicy().evaluate(Self.context(request, usage: long, now: back, eligibleSince: due, back: back, lastRefresh: lastRefresh)).wait == unaware.wait)
        // A refresh that became due after the network came back did not wait for it: placed.
        let fresh = Self.refresh(dueAt: back.addingTimeInterval(60))
        #expect(AppUsagePolicy().evaluate(Self.context(fresh, usage: usage, now: back.addingTimeInterval(60), eligibleSince: back.addingTimeInterval(60), back: back, lastRefresh: lastRefresh)).blocks)
        // Offline, or a return not seen: placed as before.
        var offline = waited
        offline.conditions = F.noNetwork
        #expect(AppUsagePolicy().evaluate(offline).blocks)
        #expect(AppUsagePolicy().evaluate(Self.context(request, usage: usage, now: back, eligibleSince: due, back: nil, trigger: back, lastRefresh: lastRefresh)).blocks)
    }
}

private let t0 = F.t0
