import Foundation
@testable import SchedulerCore
import Testing

private typealias T = UsageModelTests

/// An hour the user opens the app in again, three five-minute slots or more after its first
/// launch, keeps refreshes after that launch (found from outside: a reader who checks every
/// few minutes for an hour found content 14, 28 and 46 minutes old, because the hour's first
/// launch ended its refreshes).
@Suite struct UsageRelaunchTests {
    /// Two weeks of every day at 21:00, and again at `again` minutes past 21 (none: nil).
    static func evenings(again: [Int]) -> UsageModel {
        var model = UsageModel(createdAt: T.monday)
        T.record(&model, weeks: 0..<2, times: [(21, 0)] + again.map { (21, $0) }, days: 0..<7)
        return model
    }

    @Test func relaunchesAreLearnedPerHourOfTheDayOncePerHourAndNotJustAfterTheFirst() {
        #expect(Self.evenings(again: [20, 40]).relaunchShare(hourOfDay: 21) > 0.99)
        #expect(Self.evenings(again: []).relaunchShare(hourOfDay: 21) == 0)
        // Ten minutes after the first launch is not a relaunch (its content is still fresh).
        #expect(Self.evenings(again: [10]).relaunchShare(hourOfDay: 21) == 0)
        // Other hours learn nothing; an hour never opened has none.
        #expect(Self.evenings(again: [20, 40]).relaunchShare(hourOfDay: 20) == 0)
        // Every other day, twice more (the third launch counts nothing): about half.
        var alternate = UsageModel(createdAt: T.monday)
        for day in 0..<14 {
            alternate.recordForeground(at: T.at(week: 0, day: day, 21, 0))
            if day.isMultiple(of: 2) {
                alternate.recordForeground(at: T.at(week: 0, day: day, 21, 30))
                alternate.recordForeground(at: T.at(week: 0, day: day, 21, 50))
            }
        }
        let share = alternate.relaunchShare(hourOfDay: 21)
        #expect(share > 0.4 && share < 0.6, "\(share)")
    }

    @Test func anHourOpenedAgainKeepsRefreshesAfterItsFirstLaunch() {
        // Day 14, the user opened the app at 21:00; the content is from 20:50.
        for (again, keeps) in [([20, 40], true), ([], false)] {
            var model = Self.evenings(again: again)
            let opened = T.at(week: 2, day: 0, 21, 0)
            model.recordForeground(at: opened)
            let now = opened.addingTimeInterval(300)
            let placed = model.preferredRefreshTime(eligibleAt: now, now: now, lastRefresh: T.at(week: 2, day: 0, 20, 50))
            if keeps {
                #expect(placed < T.at(week: 2, day: 0, 21, 40), "a reader who comes back: within the hour, \(placed)")
            } else {
                #expect(placed > T.at(week: 2, day: 0, 22), "opened once an evening: nothing more this evening, \(placed)")
            }
        }
    }

    @Test func relaunchesAreStoredMergedAndDecodedOrRefused() throws {
        let model = Self.evenings(again: [20])
        let data = try JSONEncoder().encode(model)
        #expect(try JSONDecoder().decode(UsageModel.self, from: data) == model)
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        // Written before relaunches were kept: decodes, with none.
        object["relaunchWeights"] = nil
        object["lastCountedRelaunch"] = nil
        let old = try JSONDecoder().decode(UsageModel.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(old.relaunchShare(hourOfDay: 21) == 0)
        try T.expectDamagedTablesRefused(in: object, weights: "relaunchWeights", counted: "lastCountedRelaunch")
        // A replica's relaunch joins the stored model's, once.
        let baseline = Self.evenings(again: [])
        var mine = baseline
        mine.recordForeground(at: T.at(week: 2, day: 0, 21, 0))
        mine.recordForeground(at: T.at(week: 2, day: 0, 21, 30))
        var theirs = baseline
        theirs.recordForeground(at: T.at(week: 2, day: 0, 8, 0))
        let merged = theirs.merging(changesIn: mine, since: baseline)
        #expect(merged.relaunchShare(hourOfDay: 21) > 0)
        #expect(merged.merging(changesIn: mine, since: baseline).relaunchShare(hourOfDay: 21) == merged.relaunchShare(hourOfDay: 21))
    }
}
