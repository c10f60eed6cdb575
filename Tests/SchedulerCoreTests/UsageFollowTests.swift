import Foundation
@testable import SchedulerCore
import Testing

private typealias T = UsageModelTests

/// Once the user opened the app, the next hour is refreshed for as likely as the days showed
/// a launch following one in that hour (`UsageModel.followShare`), when that is less than
/// the hour's own likelihood: a habit whose late days spill into the next hour does not keep
/// refreshing that hour on a day it already came (found in delivery-courier's trace: a launch
/// at 09:56, then refreshes at 10:12, 10:27 and 10:42 that no launch saw).
@Suite struct UsageFollowTests {
    /// Two weeks of every day: at 09:50 on even days and 10:03 on odd days (one habit whose
    /// late days fall in the next hour), plus, each day, the launches `also`.
    static func mornings(also: [(Int, Int)] = []) -> UsageModel {
        var model = UsageModel(createdAt: T.monday)
        for day in 0..<14 {
            model.recordForeground(at: T.at(week: 0, day: day, day.isMultiple(of: 2) ? 9 : 10, day.isMultiple(of: 2) ? 50 : 3))
            for (hour, minute) in also { model.recordForeground(at: T.at(week: 0, day: day, hour, minute)) }
        }
        return model
    }

    /// Two weeks of every day at 09:50 and, each day, at `minutes` after it.
    static func habit(thenAfter minutes: Int?) -> UsageModel {
        var model = UsageModel(createdAt: T.monday)
        for day in 0..<14 {
            let first = T.at(week: 0, day: day, 9, 50)
            model.recordForeground(at: first)
            if let minutes { model.recordForeground(at: first.addingTimeInterval(Double(minutes) * 60)) }
        }
        return model
    }

    @Test func followsAreLearnedPerHourOfTheDayOncePerHourAndNotJustAfterTheLaunch() {
        #expect(Self.habit(thenAfter: 40).followShare(hourOfDay: 9) > 0.99, "10:30 every day after 09:50")
        #expect(Self.habit(thenAfter: nil).followShare(hourOfDay: 9) == 0)
        // Twelve minutes after the last launch is not a follow (its content is still fresh).
        #expect(Self.habit(thenAfter: 12).followShare(hourOfDay: 9) == 0)
        // Two hours later is not in the next hour.
        #expect(Self.habit(thenAfter: 130).followShare(hourOfDay: 9) == 0)
        // The hour the follow came in learns nothing of its own; an hour never opened has none.
        #expect(Self.habit(thenAfter: 40).followShare(hourOfDay: 10) == 0)
        #expect(Self.habit(thenAfter: 40).followShare(hourOfDay: 15) == 0)
        // A habit spilling into the next hour on its late days is no follow: one launch a day.
        let spill = Self.mornings()
        #expect(spill.followShare(hourOfDay: 9) == 0)
        #expect(spill.likelihood(hourOfWeek: T.how(day: 0, 10), at: T.at(week: 2, day: 0, 0)) > 0.2, "10:00 is likely on its own")
        // Three launches in the next hour count one follow; every other day gives about half.
        var alternate = UsageModel(createdAt: T.monday)
        for day in 0..<14 {
            alternate.recordForeground(at: T.at(week: 0, day: day, 9, 50))
            if day.isMultiple(of: 2) {
                for minute in [20, 35, 50] { alternate.recordForeground(at: T.at(week: 0, day: day, 10, minute)) }
            }
        }
        let share = alternate.followShare(hourOfDay: 9)
        #expect(share > 0.4 && share < 0.6, "\(share)")
    }

    /// The share is shrunk toward the next hour's own likelihood by half an occurrence: one
    /// day without a follow does not take the next hour's refreshes away; two weeks do.
    @Test func theFollowLikelihoodWeighsTheShareByItsEvidence() {
        var once = UsageModel(createdAt: T.monday)
        once.recordForeground(at: T.at(week: 0, day: 0, 9, 50))
        let early = once.followLikelihood(afterHour: 9, ownLikelihood: 0.3)
        #expect(abs(early - 0.1) < 0.01, "one launch, no follow: a third of the hour's own, \(early)")
        let learned = Self.habit(thenAfter: nil).followLikelihood(afterHour: 9, ownLikelihood: 0.3)
        #expect(learned < 0.03, "two weeks without a follow: \(learned)")
        let followed = Self.habit(thenAfter: 40).followLikelihood(afterHour: 9, ownLikelihood: 0.3)
        #expect(followed > 0.9, "\(followed)")
    }

    @Test func aHabitThatCameThinsTheNextHoursRefreshesUnlessTheUserUsuallyComesBack() throws {
        // Day 14 (even), the user opened the app at 09:52; judged at 09:57, for 10:00-11:00.
        let opened = T.at(week: 2, day: 0, 9, 52)
        let now = opened.addingTimeInterval(5 * 60)
        let tenOClock = T.at(week: 2, day: 0, 10)
        func spacing(_ model: UsageModel, at instant: Date = now) -> TimeInterval? {
            model.refreshSpacings(startingAt: tenOClock, now: instant)[0]
        }
        var spill = Self.mornings()
        let before = try #require(spacing(spill), "without today's launch, 10:00 is refreshed for")
        spill.recordForeground(at: opened)
        // Two weeks without a follow: the hour keeps about a twelfth of its likelihood (the
        // share, 0, shrunk by half an occurrence toward it), so its refreshes are at least
        // twice as far apart as at the app's own cadence, which bounds them before, or none.
        let after = spacing(spill)
        #expect(after.map { $0 >= 2 * before } ?? true, "the habit came: \(String(describing: after)) against \(before)")
        // Judged in the next hour itself, the same.
        let judgedLater = spacing(spill, at: T.at(week: 2, day: 0, 10, 10))
        #expect(judgedLater.map { $0 >= 2 * before } ?? true, "\(String(describing: judgedLater))")
        // A user who also opens the app at 10:30 every day keeps the hour's refreshes.
        var twice = Self.mornings(also: [(10, 30)])
        #expect(twice.followShare(hourOfDay: 9) > 0.4)
        let usual = try #require(spacing(twice))
        twice.recordForeground(at: opened)
        let kept = try #require(spacing(twice), "another habit at 10:30")
        #expect(kept <= usual * 1.1, "\(kept) against \(usual)")
    }

    @Test func followsAreStoredMergedAndDecodedOrRefused() throws {
        let model = Self.habit(thenAfter: nil)
        #expect(model.followShare(hourOfDay: 9) == 0)
        let data = try JSONEncoder().encode(model)
        #expect(try JSONDecoder().decode(UsageModel.self, from: data) == model)
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        // Written before follows were kept: every opened hour counts as followed, so the
        // next hour keeps its own likelihood until the days teach otherwise.
        object["followWeights"] = nil
        object["lastCountedFollow"] = nil
        let old = try JSONDecoder().decode(UsageModel.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(old.followShare(hourOfDay: 9) == 1)
        #expect(old.followShare(hourOfDay: 15) == 0, "an hour never opened has none")
        #expect(old.followLikelihood(afterHour: 9, ownLikelihood: 0.4) >= 0.4)
        try T.expectDamagedTablesRefused(in: object, weights: "followWeights", counted: "lastCountedFollow")
        // A replica's follow joins the stored model's, once.
        let baseline = Self.habit(thenAfter: nil)
        var mine = baseline
        mine.recordForeground(at: T.at(week: 2, day: 0, 9, 50))
        mine.recordForeground(at: T.at(week: 2, day: 0, 10, 30))
        var theirs = baseline
        theirs.recordForeground(at: T.at(week: 2, day: 0, 8, 0))
        let merged = theirs.merging(changesIn: mine, since: baseline)
        #expect(merged.followShare(hourOfDay: 9) > 0)
        #expect(merged.merging(changesIn: mine, since: baseline).followShare(hourOfDay: 9) == merged.followShare(hourOfDay: 9))
    }
}
