import Foundation
import Testing
@testable import SchedulerCore

/// The share of launches the history did not foresee, and the floor it gives every hour
/// (``UsageModel/unforeseenShare(at:)``, ``UsageModel/unforeseenFloor(overall:at:)``): a
/// device that cannot be predicted by the hour spreads its refreshes as a timer would.
@Suite("Unforeseen launches")
struct UnforeseenLaunchTests {
    typealias Fixture = UsageModelTests

    /// One launch a day, each day at an hour no earlier day used (7 hours later than the
    /// day before, so 24 days pass before an hour comes back), for `days` days.
    static func newHourEveryDay(days: Int) -> UsageModel {
        var model = UsageModel(createdAt: Fixture.monday)
        for day in 0..<days {
            model.recordForeground(at: Fixture.monday.addingTimeInterval(Double(day) * Fixture.day + Double((7 * day) % 24) * Fixture.hour + 600))
        }
        return model
    }

    /// The app opened at 08:00 every day for `days` days.
    static func dailyHabit(days: Int) -> UsageModel {
        var model = UsageModel(createdAt: Fixture.monday)
        for day in 0..<days {
            model.recordForeground(at: Fixture.monday.addingTimeInterval(Double(day) * Fixture.day + 8 * Fixture.hour))
        }
        return model
    }

    @Test func anAppNeverOpenedHasThePriorsShare() {
        let model = UsageModel(createdAt: Fixture.monday)
        #expect(model.unforeseenShare(at: Fixture.monday) == UsageModel.unforeseenPrior)
    }

    @Test func launchesInNewHoursRaiseTheShareAndEveryHourKeepsItsFloor() {
        let model = Self.newHourEveryDay(days: 14)
        let now = Fixture.monday.addingTimeInterval(14 * Fixture.day)
        let share = model.unforeseenShare(at: now)
        #expect(share > 0.8, "every launch came in an hour the history had not seen used: \(share)")
        // Every hour's likelihood is the history's, raised to u² times the overall rate; an
        // hour never used (a Wednesday's 03:00) is raised, far above what the history gives it.
        let history = model.historyTable(asOfHour: model.week.absoluteHour(of: now))
        let overall = history[168]
        let floor = share * share * overall
        #expect(overall > 0.5 / 24 && overall < 2.0 / 24, "about one launch a day: \(overall)")
        for hour in 0..<168 {
            #expect(abs(model.likelihood(hourOfWeek: hour, at: now) - max(history[hour], floor)) < 1e-12, "hour \(hour)")
        }
        let wednesdayNight = Fixture.how(day: 2, 3)
        #expect(history[wednesdayNight] < 0.2 * overall && model.likelihood(hourOfWeek: wednesdayNight, at: now) == floor)
    }

    @Test func theFloorBringsARefreshWithinHoursWhereTheHistoryWaitedForItsHours() {
        // Four days, four launches at 00:10, 07:10, 14:10 and 21:10: at 01:00 on the fifth,
        // the history alone sees nothing likely before 07:00 (hours used once, the others
        // silent for four days) and holds the refresh until its lead; with the floor (four
        // unforeseen launches) every hour gets refreshes, as a timer with the same budget would.
        let model = Self.newHourEveryDay(days: 4)
        let eligible = Fixture.monday.addingTimeInterval(4 * Fixture.day + Fixture.hour)
        let placed = model.preferredRefreshTime(eligibleAt: eligible, now: eligible, lastRefresh: eligible.addingTimeInterval(-Fixture.hour))
        #expect(placed.timeIntervalSince(eligible) <= 2 * Fixture.hour, "placed \(placed.timeIntervalSince(eligible) / Fixture.hour) h after eligible")
    }

    @Test func aHabitKeepsTheShareLowAndItsSilentHoursWrittenOff() {
        let model = Self.dailyHabit(days: 21)
        let now = Fixture.monday.addingTimeInterval(21 * Fixture.day)
        let share = model.unforeseenShare(at: now)
        #expect(share < 0.15, "\(share)")
        // A day's one launch: an overall rate of 1/24; the floor is a fiftieth of it or less.
        #expect(model.unforeseenFloor(overall: 1.0 / 24, at: now) < 0.02 / 24)
        #expect(model.likelihood(hourOfWeek: Fixture.how(day: 2, 3), at: now) < 0.01)
    }

    @Test func aLaunchCountedLateIsNotJudged() {
        // A launch earlier than one already counted (a replica's, merged late; a clock stepped
        // back) would be judged against later launches: it is counted, not judged.
        var model = Self.dailyHabit(days: 7)
        let now = Fixture.monday.addingTimeInterval(7 * Fixture.day + 10 * Fixture.hour)
        let before = model.unforeseenShare(at: now)
        model.recordForeground(at: Fixture.monday.addingTimeInterval(3 * Fixture.day + 15 * Fixture.hour))
        #expect(model.unforeseenShare(at: now) == before)
        #expect(model.launchProbability(hourOfWeek: Fixture.how(day: 3, 15), at: now) > 0, "counted")
    }

    @Test func aSecondLaunchInAnHourIsNotJudgedAgain() {
        var model = Self.dailyHabit(days: 7)
        let now = Fixture.monday.addingTimeInterval(7 * Fixture.day + 10 * Fixture.hour)
        let before = model.unforeseenShare(at: now)
        // Day 6's 08:00 hour was counted already: another launch in it adds nothing.
        model.recordForeground(at: Fixture.monday.addingTimeInterval(6 * Fixture.day + 8 * Fixture.hour + 1_200))
        #expect(model.unforeseenShare(at: now) == before)
    }

    @Test func theJudgedLaunchesAreKeptAndOldRecordsTakeThePrior() throws {
        let model = Self.newHourEveryDay(days: 10)
        let now = Fixture.monday.addingTimeInterval(10 * Fixture.day)
        let data = try JSONEncoder().encode(model)
        let decoded = try JSONDecoder().decode(UsageModel.self, from: data)
        #expect(decoded.unforeseenShare(at: now) == model.unforeseenShare(at: now))

        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        object["unforeseenWeight"] = nil
        object["judgedLaunchWeight"] = nil
        let old = try JSONDecoder().decode(UsageModel.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(old.unforeseenShare(at: now) == UsageModel.unforeseenPrior)

        for key in ["unforeseenWeight", "judgedLaunchWeight"] {
            var damaged = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            damaged[key] = -1.0
            #expect(throws: DecodingError.self, "\(key)") {
                try JSONDecoder().decode(UsageModel.self, from: JSONSerialization.data(withJSONObject: damaged))
            }
        }
    }

    @Test func aReplicasLaunchIsJudgedInTheMergedModel() {
        // Two replicas share one memory: each records a launch in a new hour; the merge
        // judges the other's as recording it here would have.
        let baseline = Self.newHourEveryDay(days: 5)
        var stored = baseline
        stored.recordForeground(at: Fixture.monday.addingTimeInterval(5 * Fixture.day + 4 * Fixture.hour))
        var mine = baseline
        let theirs = Fixture.monday.addingTimeInterval(5 * Fixture.day + 15 * Fixture.hour)
        mine.recordForeground(at: theirs)
        let merged = stored.merging(changesIn: mine, since: baseline)
        var expected = stored
        expected.recordForeground(at: theirs)
        let now = Fixture.monday.addingTimeInterval(6 * Fixture.day)
        #expect(abs(merged.unforeseenShare(at: now) - expected.unforeseenShare(at: now)) < 1e-12)
        #expect(merged.unforeseenShare(at: now) != stored.unforeseenShare(at: now), "the replica's launch was judged")
    }

    @Test func whyTellsAUserWhoseLaunchesAreNotForeseen() {
        let now = Fixture.monday.addingTimeInterval(14 * Fixture.day)
        #expect(Self.newHourEveryDay(days: 14).explanation(at: now).contains("of launches came in hours the history did not foresee"))
        #expect(!Self.dailyHabit(days: 14).explanation(at: now).contains("did not foresee"))
    }

    @Test func whySaysNothingOfARecordKeptBeforeLaunchesWereJudged() throws {
        // Its share is the prior's half until launches are judged: nothing to tell yet.
        let now = Fixture.monday.addingTimeInterval(14 * Fixture.day)
        var object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(Self.newHourEveryDay(days: 14))) as? [String: Any])
        object["unforeseenWeight"] = nil
        object["judgedLaunchWeight"] = nil
        let old = try JSONDecoder().decode(UsageModel.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(!old.explanation(at: now).contains("did not foresee"))
    }
}
