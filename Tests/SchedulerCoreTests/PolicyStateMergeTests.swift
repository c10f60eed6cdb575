import Foundation
import Testing
@testable import SchedulerCore

/// Replicas sharing one app's memory (issue 11, scope 5): each writes its changes into the
/// state stored now with a three-way merge, so that two replicas' runs, strikes, energy and
/// foregrounds add up instead of the last writer's memory replacing the other's.
@Suite("Merging replicas' policy state")
struct PolicyStateMergeTests {
    let t0 = Date(timeIntervalSinceReferenceDate: 800_000_000)
    static let hour: TimeInterval = 3_600

    private func fresh() -> AppPolicyState {
        AppPolicyState(usage: UsageModel(createdAt: t0))
    }

    @Test func aSideThatChangedNothingTakesTheOther() {
        let baseline = fresh()
        var theirs = baseline
        theirs.throttle.recordRunEnded(outcome: .crashed, calledSetTaskCompleted: false, at: t0)
        theirs.energyUsed = 3
        #expect(theirs.merging(changesIn: baseline, since: baseline) == theirs)
        #expect(baseline.merging(changesIn: theirs, since: baseline) == theirs)
    }

    @Test func twoReplicasStrikesAndEnergyAddUp() {
        var baseline = fresh()
        baseline.energyDay = baseline.usage.localDay(of: t0)
        baseline.energyUsed = 10
        var mine = baseline
        var theirs = baseline
        mine.throttle.recordRunEnded(outcome: .expired, calledSetTaskCompleted: true, at: t0)
        mine.energyUsed += 4
        theirs.throttle.recordRunEnded(outcome: .crashed, calledSetTaskCompleted: false, at: t0 + 60)
        theirs.energyUsed += 6

        let merged = theirs.merging(changesIn: mine, since: baseline)
        #expect(merged.energyUsed == 20)
        #expect(merged.throttle.strikes == 2)
        #expect(merged.throttle.recentStrikes.map(\.cause) == [.expired, .crashed])
        #expect(merged.throttle.lastStrikeAt == t0 + 60)
        // Each side alone was one strike (15 min); the merge keeps the stricter delay, never less.
        #expect(merged.throttle.delay(at: t0 + 120) >= theirs.throttle.delay(at: t0 + 120))
        // Merging the same changes again lists no strike twice (the count is a count: a
        // replica merges each change once, from its baseline, which moves on with each write).
        let again = merged.merging(changesIn: mine, since: baseline)
        #expect(again.throttle.recentStrikes.count == 2)
    }

    @Test func aStrikeStoredMeanwhileSurvivesASuccessHere() {
        var baseline = fresh()
        baseline.throttle.recordRunEnded(outcome: .expired, calledSetTaskCompleted: true, at: t0)
        var mine = baseline
        var stored = baseline
        // Another replica's sweep struck the app (a run lost its lease) ...
        stored.throttle.recordRunEnded(outcome: .interrupted, calledSetTaskCompleted: false, at: t0 + 600)
        // ... while this replica's run succeeded (which halves the delay).
        mine.throttle.recordRunEnded(outcome: .success, calledSetTaskCompleted: true, at: t0 + 900)
        let merged = stored.merging(changesIn: mine, since: baseline)
        #expect(merged.throttle.strikes == 2)
        #expect(merged.throttle.delay(at: t0 + 900) == stored.throttle.delay(at: t0 + 900))
        #expect(merged.throttle.delay(at: t0 + 900) > mine.throttle.delay(at: t0 + 900))
    }

    @Test func energyOfADayTheStoredStateHasNotSeenIsMine() {
        var baseline = fresh()
        let day = baseline.usage.localDay(of: t0)
        baseline.energyDay = day
        baseline.energyUsed = 50
        var stored = baseline
        stored.energyUsed = 70  // another replica spent 20 J that day
        var mine = baseline
        mine.energyDay = day + 1
        mine.energyUsed = 5  // this replica's first run of the next day
        #expect(stored.merging(changesIn: mine, since: baseline).energyUsed == 5)
        #expect(stored.merging(changesIn: mine, since: baseline).energyDay == day + 1)
        // The other way round: the stored state is of a later day than this replica's spending.
        var later = baseline
        later.energyDay = day + 1
        later.energyUsed = 8
        // The stored state went back a day (written over): this replica's count of its day stays.
        var overwritten = baseline
        overwritten.energyDay = day - 1
        var spentMore = baseline
        spentMore.energyUsed = 55
        #expect(overwritten.merging(changesIn: spentMore, since: baseline).energyUsed == 55)
        var sameDayMine = baseline
        sameDayMine.energyUsed = 60
        #expect(later.merging(changesIn: sameDayMine, since: baseline).energyUsed == 8)
        // Both moved on to the next day: this replica's joules of it join the stored ones.
        #expect(later.merging(changesIn: mine, since: baseline).energyUsed == 13)
    }

    @Test func foregroundsOnTwoReplicasBothCount() {
        let baseline = fresh()
        var mine = baseline
        var stored = baseline
        mine.usage.recordForeground(at: t0 + 8 * Self.hour)
        stored.usage.recordForeground(at: t0 + 20 * Self.hour)
        let merged = stored.merging(changesIn: mine, since: baseline)
        #expect(merged.usage.foregroundCount == 2)
        #expect(merged.usage.lastUse == t0 + 20 * Self.hour)
        // Both hours are learned as if one model had seen both foregrounds.
        var oneModel = baseline.usage
        oneModel.recordForeground(at: t0 + 8 * Self.hour)
        oneModel.recordForeground(at: t0 + 20 * Self.hour)
        let now = t0 + 30 * Self.hour
        for hour in 0..<168 {
            #expect(merged.usage.launchProbability(hourOfWeek: hour, at: now) == oneModel.launchProbability(hourOfWeek: hour, at: now))
        }
    }

    @Test func aReplicaThatFoundNothingStoredAddsAllItLearned() {
        var mine = fresh()
        mine.throttle.recordRunEnded(outcome: .expired, calledSetTaskCompleted: true, at: t0)
        mine.energyDay = mine.usage.localDay(of: t0)
        mine.energyUsed = 2
        mine.lastLaunch = t0
        var stored = fresh()
        stored.energyDay = mine.energyDay
        stored.energyUsed = 3
        stored.lastLaunch = t0 + 5
        stored.throttle.recordRunEnded(outcome: .crashed, calledSetTaskCompleted: false, at: t0 + 5)
        let merged = stored.merging(changesIn: mine, since: nil)
        #expect(merged.energyUsed == 5)
        #expect(merged.throttle.strikes == 2)
        #expect(merged.lastLaunch == t0 + 5)
    }

    @Test func switchesAndRetriesTakeTheSideThatChangedThem() {
        var baseline = fresh()
        baseline.retryAttempts = ["a": 1, "b": 2]
        var mine = baseline
        var stored = baseline
        mine.forceQuit = true
        mine.retryAttempts = ["b": 3, "c": 1]  // a succeeded here; b and c failed here
        stored.backgroundRefreshEnabled = false
        stored.retryAttempts = ["a": 1, "b": 3]  // b failed there too
        stored.lastRefresh = t0
        let merged = stored.merging(changesIn: mine, since: baseline)
        #expect(merged.forceQuit)
        #expect(!merged.backgroundRefreshEnabled)
        #expect(merged.retryAttempts == ["b": 4, "c": 1], "both failures of b count")
        #expect(merged.lastRefresh == t0)
    }
}
