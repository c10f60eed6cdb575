import Foundation
import Testing
@testable import SchedulerCore

/// App usage prediction (issue 3, scope 3): launch probabilities per local hour of the week,
/// refreshes placed shortly before likely launches, no processing for apps unused for a week.
/// Every instant is fixed; nothing reads the clock.
@Suite("Usage model")
struct UsageModelTests {
    /// Monday 2026-05-11 00:00 UTC, the first Monday after `EngineFixtures.t0`
    /// (`Date(timeIntervalSinceReferenceDate: 800_000_000)`, a Saturday).
    static let monday = Date(timeIntervalSinceReferenceDate: 800_150_400)
    static let hour: TimeInterval = 3_600
    static let day: TimeInterval = 86_400
    static let week: TimeInterval = 7 * 86_400

    /// An instant in week `week` (0 = the week of `monday`), on `day` (0 = Monday), at
    /// `hour:minute` UTC.
    static func at(week: Int, day: Int, _ hour: Int, _ minute: Int = 0) -> Date {
        monday.addingTimeInterval(Double(week) * Self.week + Double(day) * Self.day + Double(hour) * Self.hour + Double(minute) * 60)
    }

    /// Hour of the week: 0 = Monday 00:00 ... 167 = Sunday 23:00.
    static func how(day: Int, _ hour: Int) -> Int { day * 24 + hour }

    /// A model created at `monday` that saw the app opened at `times` on weekdays of `weeks`.
    static func weekdayHabit(
        weeks: Range<Int>, times: [(Int, Int)], configuration: UsageModelConfiguration = .init()
    ) -> UsageModel {
        var model = UsageModel(createdAt: monday, configuration: configuration)
        record(&model, weeks: weeks, times: times)
        return model
    }

    /// A stored model's per-hour-of-the-day table `weights` (24 weights) and per-hour-of-the-week
    /// table `counted` (168 dates) are refused when damaged: a wrong length, a negative
    /// weight, an entry missing.
    static func expectDamagedTablesRefused(in object: [String: Any], weights: String, counted: String) throws {
        for (key, value) in [(weights, [1.0] as Any), (weights, Array(repeating: -1.0, count: 24)), (counted, [NSNull()])] {
            var damaged = object
            damaged[key] = value
            let bytes = try JSONSerialization.data(withJSONObject: damaged)
            #expect(throws: DecodingError.self, "\(key)") { try JSONDecoder().decode(UsageModel.self, from: bytes) }
        }
    }

    static func record(_ model: inout UsageModel, weeks: Range<Int>, times: [(Int, Int)], days: Range<Int> = 0..<5) {
        for week in weeks {
            for day in days {
                for (hour, minute) in times { model.recordForeground(at: at(week: week, day: day, hour, minute)) }
            }
        }
    }

    /// Three weeks of 08:00 and 12:30 on weekdays: the user of the brief.
    static let commuter = weekdayHabit(weeks: 0..<3, times: [(8, 0), (12, 30)])

    // MARK: Probabilities

    @Test func habitMakesItsHoursLikelyAndOthersUnlikely() {
        let model = Self.commuter
        let now = Self.at(week: 3, day: 0, 0)
        for day in 0..<5 {
            #expect(model.launchProbability(hourOfWeek: Self.how(day: day, 8), at: now) > 0.999)
            #expect(model.launchProbability(hourOfWeek: Self.how(day: day, 12), at: now) > 0.999)
            #expect(model.launchProbability(hourOfWeek: Self.how(day: day, 3), at: now) == 0)
            #expect(model.launchProbability(hourOfWeek: Self.how(day: day, 10), at: now) == 0)
        }
        #expect(model.launchProbability(hourOfWeek: Self.how(day: 5, 8), at: now) == 0, "no launches on Saturdays")
        #expect(model.likelyHours(at: now) == (0..<5).flatMap { [Self.how(day: $0, 8), Self.how(day: $0, 12)] })
        #expect(model.lastUse == Self.at(week: 2, day: 4, 12, 30))
        #expect(model.foregroundCount == 30)
    }

    @Test func probabilityIsTheDecayedShareOfObservedWeeks() {
        // Opened on Monday 08:xx in weeks 0 and 2, not in week 1.
        var model = UsageModel(createdAt: Self.monday)
        model.recordForeground(at: Self.at(week: 0, day: 0, 8, 15))
        model.recordForeground(at: Self.at(week: 2, day: 0, 8, 45))
        let now = Self.at(week: 3, day: 0, 0)
        let w = { (age: TimeInterval) in pow(2, -age / (14 * Self.day)) }
        // Occurrences start at 08:00 of weeks 0, 1 and 2; ages from `now`.
        let ages = [0, 1, 2].map { now.timeIntervalSince(Self.at(week: $0, day: 0, 8)) }
        let expected = (w(ages[0]) + w(ages[2])) / (w(ages[0]) + w(ages[1]) + w(ages[2]))
        let p = model.launchProbability(hourOfWeek: Self.how(day: 0, 8), at: now)
        #expect(abs(p - expected) < 1e-12)
        #expect(p > 2.0 / 3.0, "the recent week with a launch outweighs the older week without")
    }

    @Test func severalLaunchesInOneHourCountOnce() {
        var model = UsageModel(createdAt: Self.monday)
        for minute in [0, 10, 50] { model.recordForeground(at: Self.at(week: 0, day: 0, 8, minute)) }
        let now = Self.at(week: 2, day: 0, 0)
        // Two Monday 08:00 hours observed (weeks 0 and 1), one with launches: ages 2 and 1 weeks.
        let expected = pow(2, -1.0) / (pow(2, -1.0) + pow(2, -0.5))
        let p = model.launchProbability(hourOfWeek: Self.how(day: 0, 8), at: now)
        #expect(abs(p - expected) < 1e-12)
        #expect(model.foregroundCount == 3)
    }

    @Test func hoursNotYetObservedAreUnlikely() {
        // Created on Wednesday: Monday's hours have not been observed yet, so even a
        // Wednesday habit says nothing about them.
        var model = UsageModel(createdAt: Self.at(week: 0, day: 2, 0))
        model.recordForeground(at: Self.at(week: 0, day: 2, 9))
        let now = Self.at(week: 0, day: 3, 0)
        #expect(model.launchProbability(hourOfWeek: Self.how(day: 2, 9), at: now) == 1)
        #expect(model.launchProbability(hourOfWeek: Self.how(day: 0, 9), at: now) == 0)
        #expect(model.launchProbability(hourOfWeek: Self.how(day: 2, 9) + 168, at: now) == 1, "hours are taken modulo 168")
    }

    // MARK: Placing refreshes

    /// The evening before: the content's last refresh, long before any of the checks below.
    static let lastEvening = at(week: 2, day: 6, 22)

    @Test func refreshIsPlacedShortlyBeforeTheLikelyLaunch() {
        let model = Self.commuter
        let eligible = Self.at(week: 3, day: 0, 5)
        #expect(model.nextLikelyLaunch(after: eligible, now: eligible) == Self.at(week: 3, day: 0, 8))
        #expect(model.preferredRefreshTime(eligibleAt: eligible, now: eligible, lastRefresh: Self.lastEvening) == Self.at(week: 3, day: 0, 7, 50))
        // Asked earlier in the night, the answer is the same.
        #expect(model.preferredRefreshTime(eligibleAt: eligible, now: Self.at(week: 3, day: 0, 1), lastRefresh: Self.lastEvening) == Self.at(week: 3, day: 0, 7, 50))
        // After the morning launch's refreshes, the next one goes shortly before lunch: the
        // lunch launches come at 12:30, so 10 minutes before them, not before 12:00.
        let afterBreakfast = Self.at(week: 3, day: 2, 9, 15)
        #expect(model.preferredRefreshTime(eligibleAt: afterBreakfast, now: afterBreakfast, lastRefresh: Self.at(week: 3, day: 2, 8, 45)) == Self.at(week: 3, day: 2, 12, 20))
        // With no known last refresh, the content's age is unknown: when eligible.
        #expect(model.preferredRefreshTime(eligibleAt: eligible, now: eligible) == eligible)
    }

    @Test func nightsGetNothingAndAnotherKindOfDayLittle() {
        let model = Self.commuter
        // Friday 23:00, three weeks of weekday habits only: the night gets nothing; the
        // weekday habit leaves Saturday 08:00 a small likelihood (fading as weekends without
        // it accumulate), so one refresh goes before it, far sparser than on a weekday.
        let friday = Self.at(week: 3, day: 4, 23)
        #expect(model.nextLikelyLaunch(after: friday, now: friday) == nil)
        #expect(model.preferredRefreshTime(eligibleAt: friday, now: friday, lastRefresh: friday) == Self.at(week: 3, day: 5, 7, 50))
        let saturdays = model.refreshSpacings(startingAt: Self.at(week: 3, day: 5, 0), now: friday)
        #expect(saturdays[0..<7].allSatisfy { $0 == nil })
        #expect(saturdays[8]! > 2 * model.refreshSpacings(startingAt: Self.at(week: 4, day: 0, 0), now: friday)[8]!)
        // Sunday 20:00: Monday 08:00 is within the horizon.
        let sunday = Self.at(week: 3, day: 6, 20)
        #expect(model.preferredRefreshTime(eligibleAt: sunday, now: sunday, lastRefresh: Self.lastEvening) == Self.at(week: 4, day: 0, 7, 50))
    }

    @Test func refreshIsNeverEarlierThanEligible() {
        let model = Self.commuter
        // Eligible five minutes before the usual launch: the lead time cannot pull it earlier.
        let late = Self.at(week: 3, day: 1, 7, 55)
        #expect(model.preferredRefreshTime(eligibleAt: late, now: late, lastRefresh: Self.lastEvening) == late)
        // Every ten minutes of a week, asked at the eligible instant and from the night before.
        for step in 0..<(7 * 24 * 6) {
            let eligible = Self.at(week: 3, day: 0, 0).addingTimeInterval(Double(step) * 600)
            for now in [eligible, eligible.addingTimeInterval(-10 * Self.hour)] {
                let preferred = model.preferredRefreshTime(eligibleAt: eligible, now: now, lastRefresh: eligible.addingTimeInterval(-900))
                #expect(preferred >= eligible)
                #expect(preferred <= eligible.addingTimeInterval(12 * Self.hour))
            }
        }
    }

    // MARK: Habits change

    @Test func decayLetsAMovedHabitTakeOver() {
        // A refresh's cost of 15 minutes at the threshold, so that the hours' spacings are not
        // all at the app's cadence: the test is about decay, not the cost.
        let costly = UsageModelConfiguration(refreshSpacingAtThreshold: 15 * 60)
        var model = Self.weekdayHabit(weeks: 0..<3, times: [(8, 0)], configuration: costly)
        Self.record(&model, weeks: 3..<7, times: [(9, 0)])
        let now = Self.at(week: 7, day: 0, 5)
        let at8 = model.launchProbability(hourOfWeek: Self.how(day: 0, 8), at: now)
        let at9 = model.launchProbability(hourOfWeek: Self.how(day: 0, 9), at: now)
        #expect(at9 > 0.75)
        #expect(at8 < 0.3, "the old habit fell below the threshold")
        // The refreshes move with the habit: 09:00 gets them far closer than 08:00.
        let spacings = model.refreshSpacings(startingAt: Self.at(week: 7, day: 0, 0), now: now)
        let decayedRatio = (spacings[8] ?? .infinity) / spacings[9]!

        // Without decay the three old weeks still count as much as the four new ones
        // (3 of 7 weeks is above the threshold): the refresh stays at the old hour.
        var undecayed = Self.weekdayHabit(weeks: 0..<3, times: [(8, 0)], configuration: .init(halfLife: .infinity, refreshSpacingAtThreshold: 15 * 60))
        Self.record(&undecayed, weeks: 3..<7, times: [(9, 0)])
        #expect(abs(undecayed.launchProbability(hourOfWeek: Self.how(day: 0, 8), at: now) - 3.0 / 7.0) < 1e-12)
        let undecayedSpacings = undecayed.refreshSpacings(startingAt: Self.at(week: 7, day: 0, 0), now: now)
        let undecayedRatio = undecayedSpacings[8]! / undecayedSpacings[9]!
        #expect(spacings[8]! > 900 && decayedRatio > 1.2 * undecayedRatio, "decayed \(decayedRatio), undecayed \(undecayedRatio)")
    }

    // MARK: Local time

    @Test func utcOffsetMakesHoursLocal() {
        // 06:00 UTC is 08:00 in a zone two hours east of UTC.
        let east = UsageModelConfiguration(utcOffset: 2 * Self.hour)
        let local = Self.weekdayHabit(weeks: 0..<3, times: [(6, 0)], configuration: east)
        let utc = Self.weekdayHabit(weeks: 0..<3, times: [(6, 0)])
        let now = Self.at(week: 3, day: 0, 0)

        #expect(local.hourOfWeek(of: Self.at(week: 3, day: 0, 6)) == Self.how(day: 0, 8))
        #expect(local.launchProbability(hourOfWeek: Self.how(day: 0, 8), at: now) > 0.999)
        #expect(local.launchProbability(hourOfWeek: Self.how(day: 0, 6), at: now) == 0)
        #expect(utc.launchProbability(hourOfWeek: Self.how(day: 0, 6), at: now) > 0.999)
        #expect(utc.launchProbability(hourOfWeek: Self.how(day: 0, 8), at: now) == 0)
        // The same instants, so the same absolute refresh time: 05:50 UTC = 07:50 local.
        let eligible = Self.at(week: 3, day: 0, 2)
        #expect(local.preferredRefreshTime(eligibleAt: eligible, now: eligible, lastRefresh: Self.lastEvening) == Self.at(week: 3, day: 0, 5, 50))
        #expect(utc.preferredRefreshTime(eligibleAt: eligible, now: eligible, lastRefresh: Self.lastEvening) == Self.at(week: 3, day: 0, 5, 50))
        #expect(local.explanation(at: eligible).hasPrefix("usually opened around 08:00 on weekdays"))
        #expect(utc.explanation(at: eligible).hasPrefix("usually opened around 06:00 on weekdays"))
    }

    @Test func negativeOffsetCrossesIntoThePreviousDay() {
        // Monday 02:00 UTC is Sunday 18:00 eight hours west of UTC.
        let west = UsageModel(createdAt: Self.monday, configuration: .init(utcOffset: -8 * Self.hour))
        #expect(west.hourOfWeek(of: Self.at(week: 1, day: 0, 2)) == Self.how(day: 6, 18))
        #expect(west.hourOfWeek(of: Self.at(week: 1, day: 0, 8)) == Self.how(day: 0, 0))
    }

    // MARK: Processing and disuse

    @Test func unusedForSevenDaysDeniesProcessing() {
        var model = UsageModel(createdAt: Self.monday)
        let opened = Self.at(week: 1, day: 2, 18, 30)
        model.recordForeground(at: opened)
        #expect(model.allowsProcessing(at: opened.addingTimeInterval(6 * Self.day)))
        #expect(model.allowsProcessing(at: opened.addingTimeInterval(7 * Self.day - 1)))
        #expect(!model.allowsProcessing(at: opened.addingTimeInterval(7 * Self.day)))
        #expect(!model.allowsProcessing(at: opened.addingTimeInterval(30 * Self.day)))
        #expect(model.explanation(at: opened.addingTimeInterval(9 * Self.day)).hasSuffix("not opened for 9 d: no processing runs until the app is opened"))

        model.recordForeground(at: opened.addingTimeInterval(30 * Self.day))
        #expect(model.allowsProcessing(at: opened.addingTimeInterval(30 * Self.day + 1)), "opening the app lifts the denial")
    }

    @Test func neverUsedAppGetsTheConservativeDefault() {
        let created = Self.at(week: 0, day: 5, 6, 13)
        let model = UsageModel(createdAt: created)
        // Processing: allowed for the first 7 days after the model was created, then denied.
        #expect(model.allowsProcessing(at: created.addingTimeInterval(6 * Self.day)))
        #expect(!model.allowsProcessing(at: created.addingTimeInterval(7 * Self.day)))
        #expect(model.processingAllowedUntil == created.addingTimeInterval(7 * Self.day))
        // Refresh: no hour is likely, so it runs when eligible.
        let eligible = Self.at(week: 1, day: 0, 5)
        #expect(model.nextLikelyLaunch(after: eligible, now: eligible) == nil)
        #expect(model.preferredRefreshTime(eligibleAt: eligible, now: eligible) == eligible)
        #expect(model.likelyHours(at: eligible).isEmpty)
        #expect((0..<168).allSatisfy { model.launchProbability(hourOfWeek: $0, at: eligible) == 0 })
        #expect(model.lastUse == nil)
        #expect(model.explanation(at: eligible)
            == "never opened (known since Sat 2026-05-16 06:13): refreshes run when eligible; processing allowed until Sat 2026-05-23 06:13")
        #expect(model.explanation(at: created.addingTimeInterval(8 * Self.day)).hasSuffix("no processing runs until the app is opened (never opened within 7 d)"))
    }

    // MARK: Explanation

    @Test func explanationNamesTheHabitAndTheNextLaunch() {
        let model = Self.commuter
        let now = Self.at(week: 3, day: 1, 5)
        #expect(model.explanation(at: now) == "usually opened around 08:00 and 12:00 on weekdays; next likely launch Tue 08:00 (p=0.92)")
        // Lunch launches come at 12:30: the explanation says where they begin.
        #expect(model.explanation(at: Self.at(week: 3, day: 1, 9)) == "usually opened around 08:00 and 12:00 on weekdays; next likely launch Tue 12:00, usually from 12:30 (p=0.92)")
        let weekend = Self.at(week: 3, day: 5, 9)
        // Last opened Friday 12:30 of the week before: processing is denied too.
        #expect(model.explanation(at: weekend)
            == "usually opened around 08:00 and 12:00 on weekdays; no likely launch within 12 h; not opened for 7 d 21 h: no processing runs until the app is opened")
    }

    @Test func explanationGroupsHoursByTheirDays() {
        var model = Self.weekdayHabit(weeks: 0..<3, times: [(7, 0)])
        Self.record(&model, weeks: 0..<3, times: [(10, 0)], days: 5..<7)
        Self.record(&model, weeks: 0..<3, times: [(21, 0)], days: 0..<7)
        Self.record(&model, weeks: 0..<3, times: [(18, 0)], days: 2..<3)
        let now = Self.at(week: 3, day: 0, 0)
        #expect(model.explanation(at: now).hasPrefix("usually opened around 07:00 on weekdays, 10:00 on weekends, 18:00 on Wednesdays, and other hours;"))
        #expect(UsageModel.describeHabits([Self.how(day: 0, 9), Self.how(day: 2, 9), Self.how(day: 4, 9), Self.how(day: 0, 21)])
            == "09:00 on Mon, Wed and Fri, 21:00 on Mondays")
        #expect(UsageModel.describeHabits((0..<7).map { Self.how(day: $0, 22) }) == "22:00 every day")
        let once = Self.weekdayHabit(weeks: 0..<1, times: [(8, 0)], configuration: .init(likelyThreshold: 1.01))
        #expect(once.explanation(at: Self.at(week: 1, day: 0, 0)) == "opened 5 times, no regular hours yet; no likely launch within 12 h")
        // One launch: the app's overall rate makes every hour likely, which is no habit; the
        // next launch's p is the likelihood the placement uses, never a "likely" 0.00.
        // (A model made just before it, as the daemon makes one at install: the one hour
        // observed had a launch, so the app's rate is 1.)
        var first = UsageModel(createdAt: Self.at(week: 0, day: 0, 9))
        first.recordForeground(at: Self.at(week: 0, day: 0, 9, 5))
        let after = Self.at(week: 0, day: 0, 9, 30)
        #expect(first.likelyHours(at: after).count * 4 >= 168 * 3, "the premise: the priors make most hours likely")
        let text = first.explanation(at: after)
        #expect(text.hasPrefix("opened 1 time, no regular hours yet (every hour looks likely: refreshes are spread); next likely launch Mon 10:00 (p="), "\(text)")
        #expect(!text.contains("p=0.00"), "\(text)")
    }

    // MARK: Robustness and storage

    @Test func invalidInstantsAreIgnored() {
        var model = UsageModel(createdAt: Self.monday)
        model.recordForeground(at: Date(timeIntervalSinceReferenceDate: .nan))
        model.recordForeground(at: Date(timeIntervalSinceReferenceDate: .infinity))
        #expect(model.lastUse == nil)
        #expect(model.foregroundCount == 0)
        model.recordForeground(at: Self.at(week: 0, day: 0, 8))
        #expect(model.launchProbability(hourOfWeek: 8, at: Date(timeIntervalSinceReferenceDate: .nan)) == 0)
        #expect(model.nextLikelyLaunch(after: .distantFuture, now: Date(timeIntervalSinceReferenceDate: 1e300)) == nil)
    }

    @Test func outOfOrderLaunchesAreNotCountedTwice() {
        var model = UsageModel(createdAt: Self.monday)
        model.recordForeground(at: Self.at(week: 1, day: 0, 8))
        model.recordForeground(at: Self.at(week: 0, day: 0, 8, 30))  // a week late, same hour of the week
        model.recordForeground(at: Self.at(week: 1, day: 0, 8, 20))
        let now = Self.at(week: 2, day: 0, 0)
        // Only the week-1 occurrence counts: the late week-0 launch is older than an
        // occurrence already counted for that hour, and is dropped rather than risk
        // counting an hour twice.
        let expected = pow(2, -0.5) / (pow(2, -0.5) + pow(2, -1.0))
        let p = model.launchProbability(hourOfWeek: Self.how(day: 0, 8), at: now)
        #expect(abs(p - expected) < 1e-12)
        #expect(model.lastUse == Self.at(week: 1, day: 0, 8, 20))
        #expect(model.foregroundCount == 3)
    }

    @Test func codableRoundTripKeepsPredictions() throws {
        let model = Self.commuter
        let data = try JSONEncoder().encode(model)
        let decoded = try JSONDecoder().decode(UsageModel.self, from: data)
        #expect(decoded == model)
        let eligible = Self.at(week: 3, day: 0, 5)
        #expect(decoded.preferredRefreshTime(eligibleAt: eligible, now: eligible, lastRefresh: Self.lastEvening) == Self.at(week: 3, day: 0, 7, 50))

        // A damaged record (wrong number of weights) is refused, not trusted.
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        object["launchWeights"] = [1.0, 2.0]
        let damaged = try JSONSerialization.data(withJSONObject: object)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(UsageModel.self, from: damaged) }
    }
}

/// The scheduler's judgement of likely hours: weekdays and weekends pooled, an hour of the
/// week shrunk toward its pool, refreshes at the app's cadence during likely hours and two
/// hours apart when nothing is predicted.
@Suite("Usage model: likely hours")
struct UsageLikelihoodTests {
    typealias T = UsageModelTests

    @Test func oneWeekdayTeachesTheOtherWeekdaysButNotTheWeekend() {
        var model = UsageModel(createdAt: T.monday)
        model.recordForeground(at: T.at(week: 0, day: 0, 8, 10))
        let tuesdayNight = T.at(week: 0, day: 1, 0)
        #expect(model.launchProbability(hourOfWeek: T.how(day: 1, 8), at: tuesdayNight) == 0, "Tuesday 08:00 has no launch of its own")
        #expect(model.likelihood(hourOfWeek: T.how(day: 1, 8), at: tuesdayNight) >= 0.3, "but Monday's says weekdays at 08:00 are likely")
        #expect(model.nextLikelyLaunch(after: tuesdayNight, now: tuesdayNight) == T.at(week: 0, day: 1, 8))
        // With no weekend seen yet, the same hour on any day is the best guess; a weekend
        // day without the launch makes the weekend its own routine.
        #expect(model.likelihood(hourOfWeek: T.how(day: 5, 8), at: tuesdayNight) >= 0.3)
        let sunday = T.at(week: 0, day: 6, 0)
        let weekday = model.likelihood(hourOfWeek: T.how(day: 1, 8), at: sunday)
        let weekend = model.likelihood(hourOfWeek: T.how(day: 6, 8), at: sunday)
        #expect(weekend < 0.3 && weekend < weekday / 2, "weekend \(weekend), weekday \(weekday)")
    }

    @Test func oneWeekendDayTeachesTheOther() {
        var model = UsageModel(createdAt: T.monday)
        model.recordForeground(at: T.at(week: 0, day: 5, 10, 5))
        let sunday = T.at(week: 0, day: 6, 0)
        #expect(model.likelihood(hourOfWeek: T.how(day: 6, 10), at: sunday) >= 0.3)
        // Five weekdays without it: weekdays are their own routine.
        #expect(model.likelihood(hourOfWeek: T.how(day: 0, 10), at: sunday) < 0.1)
    }

    @Test func aWeeklyRhythmOutweighsThePoolAsWeeksAccumulate() {
        // Mondays to Thursdays at 21:00, never on Fridays, for four weeks.
        var model = UsageModel(createdAt: T.monday)
        T.record(&model, weeks: 0..<4, times: [(21, 0)], days: 0..<4)
        let now = T.at(week: 4, day: 4, 12)
        #expect(model.likelihood(hourOfWeek: T.how(day: 3, 21), at: now) > 0.55)
        #expect(model.likelihood(hourOfWeek: T.how(day: 4, 21), at: now) < 0.3, "four Fridays without a launch")
    }

    @Test func theLikelihoodsHoldForTheWholeHourAndFollowEveryChange() {
        var model = T.commuter
        let early = T.at(week: 3, day: 1, 10, 5)
        let late = T.at(week: 3, day: 1, 10, 55)
        let before = (0..<168).map { model.likelihood(hourOfWeek: $0, at: early) }
        #expect(before == (0..<168).map { model.likelihood(hourOfWeek: $0, at: late) }, "taken as of the hour's start")
        #expect(before != (0..<168).map { model.likelihood(hourOfWeek: $0, at: T.at(week: 3, day: 1, 11, 5)) }, "the next hour has aged")
        // A copy made after the table was kept, then changed, answers from its own evidence;
        // the original keeps its answer, and equality ignores what was kept.
        let original = model
        model.recordForeground(at: T.at(week: 3, day: 1, 10, 20))
        let tuesdayTen = T.how(day: 1, 10)
        #expect(model.likelihood(hourOfWeek: tuesdayTen, at: late) > before[tuesdayTen])
        #expect(original.likelihood(hourOfWeek: tuesdayTen, at: late) == before[tuesdayTen])
        #expect(original == T.commuter)
        // A new configuration is a new table: a shorter memory weighs the habit's recent
        // weeks, and the unused hours' evidence, differently.
        var reconfigured = original
        reconfigured.configuration.halfLife = 86_400
        #expect((0..<168).map { reconfigured.likelihood(hourOfWeek: $0, at: late) } != before)
    }

    @Test func theHourInProgressIsNotCountedAsMissedBeforeItEnds() {
        // Opened Mondays at 08:40 for one week; now it is Monday 08:05 of the next week.
        var model = UsageModel(createdAt: T.monday)
        model.recordForeground(at: T.at(week: 0, day: 0, 8, 40))
        let now = T.at(week: 1, day: 0, 8, 5)
        #expect(model.launchProbability(hourOfWeek: T.how(day: 0, 8), at: now) < 0.6, "the plain probability counts the hour in progress as missed")
        #expect(model.isLikelyHour(containing: now, now: now), "the scheduler's judgement waits for the hour to end")
    }

    @Test func refreshRunsAtTheAppsCadenceDuringALikelyHour() {
        let model = T.commuter
        let inTheHour = T.at(week: 3, day: 1, 8, 20)
        #expect(model.preferredRefreshTime(eligibleAt: inTheHour, now: inTheHour, lastRefresh: inTheHour.addingTimeInterval(-900)) == inTheHour)
    }

    @Test func anHourWhoseLaunchHappenedGetsNoMoreRefreshes() {
        var model = T.commuter
        // Tuesday of week 3: opened at 08:10, as predicted; at 08:20 the 08:00 hour's launch
        // has happened, so its refreshes stop until the lead before lunch (whose launches
        // come at 12:30).
        model.recordForeground(at: T.at(week: 3, day: 1, 8, 10))
        let now = T.at(week: 3, day: 1, 8, 20)
        #expect(model.refreshSpacings(startingAt: now, now: now)[0] == nil)
        #expect(model.preferredRefreshTime(eligibleAt: now, now: now, lastRefresh: now.addingTimeInterval(-900)) == T.at(week: 3, day: 1, 12, 20))
        // A day the launch has not come yet, the hour keeps its cadence.
        let wednesday = T.at(week: 3, day: 2, 8, 20)
        #expect(model.preferredRefreshTime(eligibleAt: wednesday, now: wednesday, lastRefresh: wednesday.addingTimeInterval(-900)) == wednesday)
    }

    @Test func spacingFollowsTheSquareRootOfTheLikelihood() {
        // The commuter's habit, plus evenings that are rare: 18:00 on one Tuesday and 20:00
        // on one Wednesday in three weeks, so those hours sit between the cadence and none.
        var model = T.commuter
        T.record(&model, weeks: 0..<1, times: [(18, 10)], days: 1..<2)
        T.record(&model, weeks: 2..<3, times: [(20, 10)], days: 2..<3)
        let monday = T.at(week: 3, day: 0, 0)
        let spacings = model.refreshSpacings(startingAt: monday, now: monday)
        #expect(spacings.count == 24)
        // The habit's hours at the app's cadence, the night without any.
        #expect(spacings[8] == 900 && spacings[12] == 900, "\(spacings)")
        #expect(spacings[3] == nil)
        // Two hours not at the cadence: spacing ∝ 1 / √likelihood.
        let unclamped = (0..<24).filter { (spacings[$0] ?? 0) > 900 }
        #expect(unclamped.count >= 2, "\(spacings)")
        for (first, second) in zip(unclamped, unclamped.dropFirst()) {
            let ratio = spacings[first]! / spacings[second]!
            let expected = (model.likelihood(hourOfWeek: T.how(day: 0, second), at: monday) / model.likelihood(hourOfWeek: T.how(day: 0, first), at: monday)).squareRoot()
            #expect(abs(ratio - expected) < 1e-9)
        }
    }

    /// Refreshes a day for `spacings`, counting each hour at most at `cadence`.
    static func refreshesPerDay(_ spacings: [TimeInterval?], cadence: TimeInterval = 900) -> Double {
        spacings.compactMap { $0 }.reduce(0) { $0 + min(3600 / cadence, 3600 / $1) }
    }

    /// The refreshes `model` places from `start` over 24 hours for an app that asks for
    /// one every 15 minutes and resubmits from its handler: each asked for 15 minutes after
    /// the previous one, placed where ``UsageModel/preferredRefreshTime`` says.
    static func placedInADay(_ model: UsageModel, from start: Date) -> Int {
        var last = start.addingTimeInterval(-86_400)
        var eligible = start
        var placed = 0
        while placed < 200 {
            let at = model.preferredRefreshTime(eligibleAt: eligible, now: eligible, lastRefresh: last, leadSpread: 0.5, requestedInterval: 900)
            guard at < start.addingTimeInterval(86_400) else { break }
            placed += 1
            last = at
            eligible = at.addingTimeInterval(900)
        }
        return placed
    }

    @Test func aDayOfRefreshesStaysWithinTheBudget() {
        // Opened every hour from 07:00 to 22:00 for three weeks: every waking hour likely.
        var heavy = UsageModel(createdAt: T.monday)
        T.record(&heavy, weeks: 0..<3, times: (7...22).map { ($0, 5) }, days: 0..<7)
        let monday = T.at(week: 3, day: 0, 0)
        let budget = UsageModelConfiguration().refreshBudgetShare * 86_400 / 900
        let placed = Self.placedInADay(heavy, from: monday)
        #expect(Double(placed) <= budget + 1 && Double(placed) >= budget - 2, "\(placed) of \(budget)")
        // Habits in separate hours (07:10, 10:10, 13:10, 16:10, 19:10, 22:10): each stretch of
        // refreshed hours begins with a refresh, which the budget counts too.
        var scattered = UsageModel(createdAt: T.monday)
        T.record(&scattered, weeks: 0..<3, times: [(7, 10), (10, 10), (13, 10), (16, 10), (19, 10), (22, 10)], days: 0..<7)
        let spread = Self.placedInADay(scattered, from: monday)
        #expect(Double(spread) <= budget + 1, "\(spread) placed for a budget of \(budget)")
        // An hourly request gets a fifth of 24.
        // An hourly request gets at most the budget's share of 24 (hours whose spacing would pass the
        // maximum get none, so it may get fewer).
        let hourly = Self.refreshesPerDay(heavy.refreshSpacings(startingAt: monday, now: monday, requestedInterval: 3600), cadence: 3600)
        #expect(hourly <= UsageModelConfiguration().refreshBudgetShare * 24 + 0.01 && hourly > 0, "\(hourly)")
        // Opened once a week: far fewer than the budget (a refresh must be worth its cost).
        var weekly = UsageModel(createdAt: T.monday)
        for week in 0..<3 { weekly.recordForeground(at: T.at(week: week, day: 6, 19, 30)) }
        #expect(Self.refreshesPerDay(weekly.refreshSpacings(startingAt: monday, now: monday)) < budget / 2)
    }

    @Test func littleHistoryMeansRefreshesSpreadOut() {
        // One Monday at 08:10: most hours keep some of the overall rate, so they get refreshes.
        var model = UsageModel(createdAt: T.monday)
        model.recordForeground(at: T.at(week: 0, day: 0, 8, 10))
        let tuesday = T.at(week: 0, day: 1, 0)
        let early = model.refreshSpacings(startingAt: tuesday, now: tuesday).compactMap { $0 }.count
        // Three weeks of the same habit: the other hours are known to stay unused.
        let sure = T.weekdayHabit(weeks: 0..<3, times: [(8, 10)])
        let later = T.at(week: 3, day: 1, 0)
        let settled = sure.refreshSpacings(startingAt: later, now: later).compactMap { $0 }.count
        #expect(early > settled, "\(early) hours with refreshes early, \(settled) once sure")
        #expect(settled >= 1)
    }

    @Test func aRefreshThatWaitedRunsInTheNextHourThatGetsRefreshes() {
        let model = T.commuter
        // Offline all morning: eligible since 06:00, the network is back at 08:10, content
        // from the evening before: in a likely hour the refresh is due at once.
        let back = T.at(week: 3, day: 1, 8, 10)
        #expect(model.preferredRefreshTime(eligibleAt: T.at(week: 3, day: 1, 6), now: back, lastRefresh: T.lastEvening) == back)
        // Back at 10:30, an hour that gets no refreshes: shortly before lunch's 12:30.
        let late = T.at(week: 3, day: 1, 10, 30)
        #expect(model.preferredRefreshTime(eligibleAt: T.at(week: 3, day: 1, 6), now: late, lastRefresh: T.lastEvening) == T.at(week: 3, day: 1, 12, 20))
        // An app never opened spreads its budget evenly: its cadence over the budget's share.
        let fresh = UsageModel(createdAt: T.monday)
        let saturday = T.at(week: 3, day: 5, 5)
        let last = saturday.addingTimeInterval(-1800)
        #expect(fresh.preferredRefreshTime(eligibleAt: saturday, now: saturday, lastRefresh: last) == last.addingTimeInterval(900 / UsageModelConfiguration().refreshBudgetShare))
        #expect(fresh.preferredRefreshTime(eligibleAt: saturday, now: saturday) == saturday, "with no known last refresh, when eligible")
    }

    @Test func storedConfigurationsWithoutNewKeysTakeTheDefaults() throws {
        let old = #"{"utcOffset": 3600, "halfLife": 1209600, "leadTime": 600, "likelyThreshold": 0.3, "horizon": 43200, "unusedProcessingCutoff": 604800, "unpredictedRefreshInterval": 7200}"#
        let configuration = try JSONDecoder().decode(UsageModelConfiguration.self, from: Data(old.utf8))
        #expect(configuration.utcOffset == 3600)
        #expect(configuration.refreshBudgetShare == UsageModelConfiguration().refreshBudgetShare)
        #expect(configuration.maximumRefreshSpacing == 2 * 3600)
    }
}

/// Where in its hour an hour's launches begin (its onset), which the placement follows, and
/// a kind of day used more than the other lending its rate to its hours not yet observed.
@Suite("Usage model: onsets and kinds of day")
struct UsageOnsetTests {
    typealias T = UsageModelTests

    @Test func refreshesFollowWhereInTheHourLaunchesBegin() {
        // Weekdays of three weeks, lunch at 12:20, 12:30, 12:40 or 12:50 in turn.
        var model = UsageModel(createdAt: T.monday)
        for week in 0..<3 {
            for day in 0..<5 { model.recordForeground(at: T.at(week: week, day: day, 12, [20, 30, 40, 50][(week * 5 + day) % 4])) }
        }
        let monday = T.at(week: 3, day: 0, 6)
        #expect(model.launchOnset(hourOfWeek: T.how(day: 0, 12), at: monday) == 20 * 60)
        // The weekend has no lunch launches of its own: every day's count.
        #expect(model.launchOnset(hourOfWeek: T.how(day: 5, 12), at: monday) == 20 * 60)
        // An hour never opened begins at its start.
        #expect(model.launchOnset(hourOfWeek: T.how(day: 0, 9), at: monday) == 0)
        // The refresh before lunch comes 10 minutes (the lead) before 12:20, not before 12:00.
        #expect(model.preferredRefreshTime(eligibleAt: monday, now: monday, lastRefresh: T.lastEvening) == T.at(week: 3, day: 0, 12, 10))
        // Asked at 12:05 with old content, between the hour's start and its onset: still the
        // hour before's stretch (which gets none), so 12:10, not at once.
        let early = T.at(week: 3, day: 0, 12, 5)
        #expect(model.preferredRefreshTime(eligibleAt: early, now: early, lastRefresh: T.lastEvening) == T.at(week: 3, day: 0, 12, 10))
        // A day's placement stays within the budget (the stretch runs from onset to onset).
        let placed = UsageLikelihoodTests.placedInADay(model, from: T.at(week: 3, day: 0, 0))
        #expect(Double(placed) <= UsageModelConfiguration().refreshBudgetShare * 86_400 / 900 + 1, "\(placed)")
    }

    @Test func anOnsetNeedsThreeLaunchesOfEvidence() {
        // Monday and Tuesday at 12:40: too little to move the hour's onset.
        var model = UsageModel(createdAt: T.monday)
        for day in 0..<2 { model.recordForeground(at: T.at(week: 0, day: day, 12, 40)) }
        #expect(model.launchOnset(hourOfWeek: T.how(day: 2, 12), at: T.at(week: 0, day: 2, 6)) == 0)
        // The whole week: it moves to 12:40.
        for day in 2..<5 { model.recordForeground(at: T.at(week: 0, day: day, 12, 40)) }
        #expect(model.launchOnset(hourOfWeek: T.how(day: 0, 12), at: T.at(week: 1, day: 0, 6)) == 40 * 60)
        // Evidence decays as the likelihoods do: ten weeks without a launch, back to the start.
        #expect(model.launchOnset(hourOfWeek: T.how(day: 0, 12), at: T.at(week: 10, day: 0, 6)) == 0)
        // Launches that moved within the hour move the onset: 12:05 for two weeks.
        for week in 1..<3 {
            for day in 0..<5 { model.recordForeground(at: T.at(week: week, day: day, 12, 5)) }
        }
        #expect(model.launchOnset(hourOfWeek: T.how(day: 0, 12), at: T.at(week: 3, day: 0, 6)) == 5 * 60)
        // Moved later (12:50), the onset follows only as the earlier launches decay: still
        // 12:05 after a week, 12:50 after eight.
        for week in 3..<11 {
            for day in 0..<5 { model.recordForeground(at: T.at(week: week, day: day, 12, 50)) }
        }
        #expect(model.launchOnset(hourOfWeek: T.how(day: 0, 12), at: T.at(week: 11, day: 0, 6)) == 50 * 60)
    }

    @Test func aKindOfDayUsedMoreLendsItsRateToItsHoursNotYetObserved() {
        // Installed on a Monday, never opened on a weekday, first opened on Saturday at 09:10.
        var model = UsageModel(createdAt: T.monday)
        model.recordForeground(at: T.at(week: 0, day: 5, 9, 10))
        let saturday = T.at(week: 0, day: 5, 10)
        // Five silent weekdays do not make Saturday afternoon look unused: it takes the
        // weekend's rate (a launch-hour in 10 hours, shrunk by 24 hours of the overall rate's
        // 1 in 129), not the weekdays' silence (about 0.002), and gets refreshes.
        let afternoon = model.likelihood(hourOfWeek: T.how(day: 5, 15), at: saturday)
        #expect(afternoon > 0.02, "\(afternoon)")
        #expect(model.refreshSpacings(startingAt: saturday, now: saturday)[5] != nil)
        // Three more weekends opened only at 09:10: Saturday afternoon is known to stay unused.
        for week in 1..<4 { model.recordForeground(at: T.at(week: week, day: 5, 9, 10)) }
        let later = T.at(week: 4, day: 5, 10)
        #expect(model.refreshSpacings(startingAt: later, now: later)[5] == nil)
    }

    @Test func kindsOfDayUsedAlikeLendNothing() {
        // Opened every hour from 07:00 to 22:00, every day of one week: both kinds' rates are
        // about the overall rate, so Saturday 03:00 (observed once, never opened) keeps what
        // every day's 03:00 says, about 0.037. Lending the kind's rate to every unused hour
        // (comparing it with the hour's own estimate, not the overall rate) gives 0.079.
        var model = UsageModel(createdAt: T.monday)
        T.record(&model, weeks: 0..<1, times: (7...22).map { ($0, 10) }, days: 0..<7)
        let saturday = model.likelihood(hourOfWeek: T.how(day: 5, 3), at: T.at(week: 1, day: 0, 6))
        #expect(saturday < 0.05, "\(saturday)")
    }

    @Test func aRecordWithoutSlotsStillDecodesAndDamagedSlotsAreRefused() throws {
        var model = UsageModel(createdAt: T.monday)
        T.record(&model, weeks: 0..<2, times: [(12, 40)])
        let data = try JSONEncoder().encode(model)
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["launchMinuteWeights"] != nil)
        // Written before onsets were kept: decodes, with every hour beginning at its start.
        object["launchMinuteWeights"] = nil
        let old = try JSONDecoder().decode(UsageModel.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(old.launchOnset(hourOfWeek: T.how(day: 0, 12), at: T.at(week: 2, day: 0, 6)) == 0)
        #expect(model.launchOnset(hourOfWeek: T.how(day: 0, 12), at: T.at(week: 2, day: 0, 6)) == 40 * 60)
        object["lastCountedSlot"] = nil
        let older = try JSONDecoder().decode(UsageModel.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(older.launchOnset(hourOfWeek: T.how(day: 0, 12), at: T.at(week: 2, day: 0, 6)) == 0)
        #expect(older.likelihood(hourOfWeek: T.how(day: 0, 12), at: T.at(week: 2, day: 0, 6)) == model.likelihood(hourOfWeek: T.how(day: 0, 12), at: T.at(week: 2, day: 0, 6)))
        for damaged: [Double] in [[1, 2], Array(repeating: -1, count: 576)] {
            object["launchMinuteWeights"] = damaged
            let bytes = try JSONSerialization.data(withJSONObject: object)
            #expect(throws: DecodingError.self) { try JSONDecoder().decode(UsageModel.self, from: bytes) }
        }
        object["launchMinuteWeights"] = nil
        object["lastCountedSlot"] = Array(repeating: 12, count: 168)
        let slotOutOfItsHour = try JSONSerialization.data(withJSONObject: object)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(UsageModel.self, from: slotOutOfItsHour) }
    }

    @Test func aReplicasMergeCountsTheSlotOfTheLaunchItMerges() {
        // Two weeks of 12:40 on weekdays, then each replica records one more Monday: this one
        // at 12:45 in hour 12, the other (the stored model) at 08:15.
        var baseline = UsageModel(createdAt: T.monday)
        T.record(&baseline, weeks: 0..<2, times: [(12, 40)])
        var mine = baseline
        mine.recordForeground(at: T.at(week: 2, day: 0, 12, 45))
        var stored = baseline
        stored.recordForeground(at: T.at(week: 2, day: 0, 8, 15))
        let merged = stored.merging(changesIn: mine, since: baseline)
        // The merge is what recording both launches in order gives, slot included.
        var both = baseline
        both.recordForeground(at: T.at(week: 2, day: 0, 8, 15))
        both.recordForeground(at: T.at(week: 2, day: 0, 12, 45))
        let later = T.at(week: 2, day: 1, 6)
        for hour in [8, 12] {
            #expect(merged.launchOnset(hourOfWeek: T.how(day: 1, hour), at: later) == both.launchOnset(hourOfWeek: T.how(day: 1, hour), at: later))
        }
        #expect(merged.launchOnset(hourOfWeek: T.how(day: 1, 12), at: later) == 40 * 60)
        #expect(merged.foregroundCount == both.foregroundCount)
    }
}

/// The refresh before the network usually goes away (docs/policies.md, "The usage model").
struct UsageNetworkLossTests {
    typealias T = UsageModelTests

    /// Three weeks of weekday launches at 07:00, 12:30 and 21:00, and the network gone every
    /// Friday from 19:55 (the weekend away) when `losses`.
    static func weekender(losses: Bool) -> UsageModel {
        var model = UsageModel(createdAt: T.monday)
        for week in 0..<3 {
            for day in 0..<5 {
                for (hour, minute) in [(7, 0), (12, 30), (21, 0)] where !(day == 4 && hour == 21) {
                    model.recordForeground(at: T.at(week: week, day: day, hour, minute))
                }
            }
            if losses { model.recordNetworkLoss(at: T.at(week: week, day: 4, 19, 55)) }
        }
        return model
    }

    @Test func aRefreshComesBeforeTheNetworkUsuallyGoesAway() {
        let friday = T.at(week: 3, day: 4, 13)
        let lunch = T.at(week: 3, day: 4, 12, 25)
        let learned = Self.weekender(losses: true)
        #expect(learned.networkLossShare(hourOfWeek: T.how(day: 4, 19), at: friday) > 0.99)
        // Thursday 19:00 gets a little of Friday's through the days' pool, below the threshold.
        #expect(learned.networkLossShare(hourOfWeek: T.how(day: 3, 19), at: friday) < 0.1)
        #expect(learned.networkLossShare(hourOfWeek: T.how(day: 4, 18), at: friday) == 0)
        // After lunch, the next refresh: before 19:00 (the lead before the hour whose network
        // usually goes), where without the losses it waits for the next morning's lead.
        let before = learned.preferredRefreshTime(eligibleAt: friday, now: friday, lastRefresh: lunch)
        #expect(before >= T.at(week: 3, day: 4, 18, 40) && before <= T.at(week: 3, day: 4, 19), "\(before)")
        let unaware = Self.weekender(losses: false).preferredRefreshTime(eligibleAt: friday, now: friday, lastRefresh: lunch)
        #expect(unaware > T.at(week: 3, day: 4, 19, 55), "\(unaware)")
        // `bgtask why` says so.
        #expect(learned.networkLossHours(at: friday) == [T.how(day: 4, 19)])
        #expect(learned.explanation(at: friday).contains("the network usually goes away around 19:00 on Fridays: refreshes go before it"), "\(learned.explanation(at: friday))")
        #expect(!Self.weekender(losses: false).explanation(at: friday).contains("network"))
    }

    @Test func aLossInTheHourBeforeItsLaunchesBeginMovesTheLeadBeforeTheLoss() {
        // Weekday launches at 20:45 (so the hour's onset is 20:45) and the network gone at
        // 20:05 every Friday: the refresh comes before 20:00, not in the lead before 20:45.
        var model = UsageModel(createdAt: T.monday)
        T.record(&model, weeks: 0..<3, times: [(20, 45)])
        for week in 0..<3 { model.recordNetworkLoss(at: T.at(week: week, day: 4, 20, 5)) }
        let friday = T.at(week: 3, day: 4, 13)
        let at = model.preferredRefreshTime(eligibleAt: friday, now: friday, lastRefresh: T.at(week: 3, day: 3, 21))
        #expect(at >= T.at(week: 3, day: 4, 19, 40) && at < T.at(week: 3, day: 4, 20), "\(at)")
        // Thursday, whose network stays: the lead before the 20:45 onset.
        let thursday = T.at(week: 3, day: 3, 13)
        let usual = model.preferredRefreshTime(eligibleAt: thursday, now: thursday, lastRefresh: T.at(week: 3, day: 2, 21))
        #expect(usual >= T.at(week: 3, day: 3, 20, 25) && usual < T.at(week: 3, day: 3, 20, 45), "\(usual)")
    }

    @Test func aRareLossChangesNothingAndLossesAreOutsideTheBudget() {
        // One Friday in three weeks lost the network: a share of about a third of the decayed
        // weeks is the threshold; one in five weeks is below it.
        var rare = UsageModelTests.weekdayHabit(weeks: 0..<5, times: [(7, 0), (12, 30)])
        let plain = rare
        rare.recordNetworkLoss(at: T.at(week: 0, day: 4, 19, 55))
        let friday = T.at(week: 5, day: 4, 13)
        #expect(rare.networkLossShare(hourOfWeek: T.how(day: 4, 19), at: friday) < UsageModel.networkLossShareThreshold)
        #expect(rare.refreshSpacings(startingAt: friday, now: friday) == plain.refreshSpacings(startingAt: friday, now: friday))
        // Learned losses add refreshes in their hours and leave every other hour's spacing
        // as it was: the budget is counted on the launches alone.
        let learned = Self.weekender(losses: true).refreshSpacings(startingAt: friday, now: friday)
        let unaware = Self.weekender(losses: false).refreshSpacings(startingAt: friday, now: friday)
        #expect(unaware[19 - 13] == nil && learned[19 - 13] != nil)
        for hour in 0..<24 where hour != 19 - 13 { #expect(learned[hour] == unaware[hour], "hour \(hour)") }
    }

    @Test func lossesAreRecordedOncePerHourInOrderAndDecodeInOrder() throws {
        var model = Self.weekender(losses: true)
        let recorded = model
        model.recordNetworkLoss(at: T.at(week: 2, day: 4, 19, 58))  // the same hour again
        model.recordNetworkLoss(at: T.at(week: 1, day: 4, 19, 30))  // an hour holding one, before the latest
        model.recordNetworkLoss(at: Date(timeIntervalSinceReferenceDate: .nan))
        #expect(model == recorded)
        // Before the latest, in an hour without one (a clock set back): put in its place,
        // and a loss recorded after it is learned too (the future-dated latest does not
        // stop the model learning until the clock passes it).
        var stepped = model
        stepped.recordNetworkLoss(at: T.at(week: 1, day: 2, 9))
        stepped.recordNetworkLoss(at: T.at(week: 1, day: 3, 9))
        let steppedObject = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(stepped)) as? [String: Any])
        let steppedLosses = try #require(steppedObject["networkLosses"] as? [Double])
        #expect(steppedLosses.count == 5 && steppedLosses == steppedLosses.sorted())
        #expect(steppedLosses.contains(T.at(week: 1, day: 3, 9).timeIntervalSinceReferenceDate))
        let data = try JSONEncoder().encode(model)
        #expect(try JSONDecoder().decode(UsageModel.self, from: data) == model)
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((object["networkLosses"] as? [Any])?.count == 3)
        // Written before losses were kept: decodes, with none.
        object["networkLosses"] = nil
        let old = try JSONDecoder().decode(UsageModel.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(old.networkLossShare(hourOfWeek: T.how(day: 4, 19), at: T.at(week: 3, day: 4, 13)) == 0)
        // Out of order, two in one hour (written under another UTC offset), absurd, or more
        // than the model keeps: put in order, never refused (that would lose the history).
        let friday = T.at(week: 0, day: 4, 19, 55).timeIntervalSinceReferenceDate
        let cases: [([Double], [Double])] = [
            ([friday + 604_800, friday], [friday, friday + 604_800]),
            ([friday, friday + 60, 1e300], [friday]),
            ((0..<257).map { friday + Double($0) * 3_600 }, (1..<257).map { friday + Double($0) * 3_600 }),
        ]
        for (stored, kept) in cases {
            object["networkLosses"] = stored
            let decoded = try JSONDecoder().decode(UsageModel.self, from: JSONSerialization.data(withJSONObject: object))
            let again = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(decoded)) as? [String: Any])
            #expect(again["networkLosses"] as? [Double] == kept)
        }
        // The oldest go once the model holds its most.
        var many = UsageModel(createdAt: T.monday)
        for hour in 0..<300 { many.recordNetworkLoss(at: T.monday.addingTimeInterval(Double(hour) * 3_600)) }
        let kept = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(many)) as? [String: Any])
        #expect((kept["networkLosses"] as? [Double])?.first == T.monday.addingTimeInterval(44 * 3_600).timeIntervalSinceReferenceDate)
        // A device losing its network ten times a day, every day for five weeks, fills the
        // memory in under four weeks: the weeks whose losses were dropped do not count as
        // weeks without one (the share of a daily loss hour stays near 1).
        var busy = UsageModel(createdAt: T.monday)
        for day in 0..<35 {
            for hour in stride(from: 3, to: 23, by: 2) { busy.recordNetworkLoss(at: T.at(week: 0, day: day, hour, 10)) }
        }
        let share = busy.networkLossShare(hourOfWeek: T.how(day: 4, 21), at: T.at(week: 5, day: 0, 1))
        #expect(share > 0.95, "\(share)")
    }

    @Test func aDailyLossIsKnownFromTheSecondDayAndAWeeklyOneStaysItsOwn() {
        // The network gone at 06:15 on Monday: on Tuesday morning, 06:00 is a loss hour (the
        // days pooled), where a week's evidence of Tuesdays was needed before.
        var daily = UsageModel(createdAt: T.monday)
        T.record(&daily, weeks: 0..<1, times: [(7, 30)], days: 0..<1)
        daily.recordNetworkLoss(at: T.at(week: 0, day: 0, 6, 15))
        let tuesday = T.at(week: 0, day: 1, 5)
        #expect(daily.networkLossShare(hourOfWeek: T.how(day: 1, 6), at: tuesday) >= UsageModel.networkLossShareThreshold)
        #expect(daily.networkLossHours(at: tuesday).contains(T.how(day: 1, 6)))
        #expect(daily.networkLossShare(hourOfWeek: T.how(day: 1, 9), at: tuesday) == 0, "another hour of the day learns nothing")
        // Every Friday evening for three weeks: Friday keeps its own share; the other
        // evenings get a seventh of it at most, below the threshold.
        let weekender = Self.weekender(losses: true)
        let monday = T.at(week: 3, day: 0, 13)
        #expect(weekender.networkLossShare(hourOfWeek: T.how(day: 4, 19), at: monday) > 0.99)
        for day in 0..<4 {
            #expect(weekender.networkLossShare(hourOfWeek: T.how(day: day, 19), at: monday) < UsageModel.networkLossShareThreshold, "day \(day)")
        }
        // A one-off loss fades from the other days as they are seen without one.
        var once = UsageModel(createdAt: T.monday)
        T.record(&once, weeks: 0..<2, times: [(7, 30)])
        once.recordNetworkLoss(at: T.at(week: 0, day: 0, 14, 10))
        #expect(once.networkLossShare(hourOfWeek: T.how(day: 3, 14), at: T.at(week: 1, day: 3, 9)) < UsageModel.networkLossShareThreshold)
    }

    @Test func aStoredConfigurationThatWouldOverflowAnHourIsRefused() throws {
        var model = Self.weekender(losses: true)
        model.recordForeground(at: T.at(week: 3, day: 0, 7))
        let data = try JSONEncoder().encode(model)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        for (key, value) in [("utcOffset", 1e300), ("utcOffset", -90_000), ("horizon", 1e300), ("horizon", -1)] {
            var damaged = object
            var configuration = try #require(object["configuration"] as? [String: Any])
            configuration[key] = value
            damaged["configuration"] = configuration
            let bytes = try JSONSerialization.data(withJSONObject: damaged)
            #expect(throws: DecodingError.self, "\(key) \(value)") { try JSONDecoder().decode(UsageModel.self, from: bytes) }
        }
        // A real time zone's offset decodes.
        var east = object
        var configuration = try #require(object["configuration"] as? [String: Any])
        configuration["utcOffset"] = 14 * 3_600.0
        east["configuration"] = configuration
        #expect(try JSONDecoder().decode(UsageModel.self, from: JSONSerialization.data(withJSONObject: east)).configuration.utcOffset == 14 * 3_600)
    }

    @Test func aReplicasMergeKeepsTheLossesEitherSideLearned() throws {
        let baseline = UsageModelTests.weekdayHabit(weeks: 0..<2, times: [(7, 0)])
        var mine = baseline
        mine.recordNetworkLoss(at: T.at(week: 1, day: 4, 19, 55))  // the same loss, seen by both
        mine.recordNetworkLoss(at: T.at(week: 1, day: 5, 9, 10))  // only this replica's
        mine.recordForeground(at: T.at(week: 2, day: 0, 7))
        var stored = baseline
        stored.recordNetworkLoss(at: T.at(week: 0, day: 4, 19, 50))
        stored.recordNetworkLoss(at: T.at(week: 1, day: 4, 19, 57))
        stored.recordForeground(at: T.at(week: 2, day: 0, 7, 5))
        let merged = stored.merging(changesIn: mine, since: baseline)
        // Each loss once, in order (the shared one as the earlier replica saw it).
        let encoded = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(merged)) as? [String: Any])
        let expected = [T.at(week: 0, day: 4, 19, 50), T.at(week: 1, day: 4, 19, 55), T.at(week: 1, day: 5, 9, 10)].map(\.timeIntervalSinceReferenceDate)
        #expect(encoded["networkLosses"] as? [Double] == expected)
        let later = T.at(week: 2, day: 4, 13)
        #expect(merged.networkLossShare(hourOfWeek: T.how(day: 5, 9), at: later) > 0.3)
    }
}
