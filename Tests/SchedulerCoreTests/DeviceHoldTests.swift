import Foundation
@testable import SchedulerCore
import Testing

private typealias F = EngineFixtures
private typealias T = UsageModelTests
private let t0 = F.t0

/// A daily hold on refreshes with the network there (an evening that runs hot, Low Power Mode
/// every afternoon) is refreshed before, as a daily network loss is (found from outside: a
/// gaming evening hot from 19:30 had content 75 minutes old, median, when the heat began, and
/// launches in it found content hours old; docs/policies.md, "Before the device usually holds
/// refreshes").
@Suite struct DeviceHoldTests {
    /// Three weeks of weekday launches at 07:00 and 12:30, and refreshes held every weekday
    /// from 19:40 when `holds`.
    static func hotEvenings(holds: Bool) -> UsageModel {
        var model = UsageModel(createdAt: T.monday)
        T.record(&model, weeks: 0..<3, times: [(7, 0), (12, 30)])
        if holds {
            for week in 0..<3 {
                for day in 0..<5 { model.recordDeviceHold(at: T.at(week: week, day: day, 19, 40)) }
            }
        }
        return model
    }

    @Test func aRefreshComesBeforeTheDeviceUsuallyHoldsThem() {
        let thursday = T.at(week: 3, day: 3, 13)
        let lunch = T.at(week: 3, day: 3, 12, 25)
        let learned = Self.hotEvenings(holds: true)
        #expect(learned.deviceHoldShare(hourOfWeek: T.how(day: 3, 19), at: thursday) > 0.99)
        #expect(learned.deviceHoldShare(hourOfWeek: T.how(day: 3, 18), at: thursday) == 0)
        #expect(learned.networkLossShare(hourOfWeek: T.how(day: 3, 19), at: thursday) == 0, "a hold is not a loss")
        // After lunch, the next refresh: in the lead before 19:00, where without the holds it
        // waits for the next morning's lead.
        let before = learned.preferredRefreshTime(eligibleAt: thursday, now: thursday, lastRefresh: lunch)
        #expect(before >= T.at(week: 3, day: 3, 18, 40) && before <= T.at(week: 3, day: 3, 19), "\(before)")
        let unaware = Self.hotEvenings(holds: false).preferredRefreshTime(eligibleAt: thursday, now: thursday, lastRefresh: lunch)
        #expect(unaware > T.at(week: 3, day: 3, 19, 40), "\(unaware)")
        // Outside the budget, as the losses: every other hour's spacing is as it was.
        let spacings = learned.refreshSpacings(startingAt: thursday, now: thursday)
        let plain = Self.hotEvenings(holds: false).refreshSpacings(startingAt: thursday, now: thursday)
        #expect(plain[19 - 13] == nil && spacings[19 - 13] != nil)
        for hour in 0..<24 where hour != 19 - 13 { #expect(spacings[hour] == plain[hour], "hour \(hour)") }
        // `bgtask why` says so.
        #expect(learned.deviceHoldHours(at: thursday) == (0..<5).map { T.how(day: $0, 19) })
        let said = learned.explanation(at: thursday)
        #expect(said.contains("the device usually holds refreshes around 19:00 on weekdays (Low Power Mode or heat): refreshes go before it"), "\(said)")
        #expect(!Self.hotEvenings(holds: false).explanation(at: thursday).contains("holds"))
    }

    @Test func holdsAreStoredInOrderMergedAndReadWithoutThem() throws {
        var model = Self.hotEvenings(holds: true)
        let recorded = model
        model.recordDeviceHold(at: T.at(week: 2, day: 4, 19, 50))  // the same hour again
        model.recordDeviceHold(at: Date(timeIntervalSinceReferenceDate: .nan))
        #expect(model == recorded)
        // One dated before the latest (a clock set back) goes through the same
        // UsageModel.adding as a network loss: UsageModelTests covers it once, for both.
        let data = try JSONEncoder().encode(model)
        #expect(try JSONDecoder().decode(UsageModel.self, from: data) == model)
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((object["deviceHolds"] as? [Any])?.count == 15)
        object["deviceHolds"] = nil
        let old = try JSONDecoder().decode(UsageModel.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(old == Self.hotEvenings(holds: false), "written before holds were kept: none")
        // Replicas: the holds either side learned, one per hour.
        let baseline = Self.hotEvenings(holds: false)
        var mine = baseline
        mine.recordForeground(at: T.at(week: 3, day: 0, 7))
        mine.recordDeviceHold(at: T.at(week: 3, day: 0, 19, 40))
        var stored = baseline
        stored.recordDeviceHold(at: T.at(week: 3, day: 1, 19, 35))
        let merged = stored.merging(changesIn: mine, since: baseline)
        let encoded = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(merged)) as? [String: Any])
        #expect((encoded["deviceHolds"] as? [Any])?.count == 2)
    }

    @Test func theEngineLearnsHoldsOfAnHourOrMoreWhenTheyEnd() {
        var engine = F.engine()
        _ = engine.handle(.appForegrounded(F.app), at: t0)
        let hot = Conditions(externalPower: true, networkAvailable: true, thermalState: .serious)
        let lowPower = Conditions(externalPower: false, networkAvailable: true, batteryLevel: 0.6, lowPowerMode: true)
        let critical = Conditions(externalPower: false, networkAvailable: true, batteryLevel: 0.1)
        // Forty minutes hot: too short to learn.
        _ = engine.handle(.conditionsChanged(hot), at: t0 + 600)
        _ = engine.handle(.conditionsChanged(.favorable), at: t0 + 3_000)
        #expect(engine.networkHistoryRecorded == 0)
        // Two hours: hot, then Low Power Mode (one hold), learned when it ends.
        let held = t0 + 7_200
        _ = engine.handle(.conditionsChanged(hot), at: held)
        _ = engine.handle(.conditionsChanged(lowPower), at: held + 3_600)
        #expect(engine.networkHistoryRecorded == 0)
        _ = engine.handle(.conditionsChanged(.favorable), at: held + 7_200)
        #expect(engine.networkHistoryRecorded == 1, "the driver saves every app's state")
        for app in [F.app, F.otherApp] {
            let usage = engine.policyState(of: app)?.usage
            let share = usage.map { $0.deviceHoldShare(hourOfWeek: $0.hourOfWeek(of: held), at: held + 7_200) } ?? 0
            #expect(share > 0.99, "\(app): \(share)")
        }
        // A network blip during a hold does not end it: learned with its start.
        var blip = F.engine()
        _ = blip.handle(.appForegrounded(F.app), at: t0)
        _ = blip.handle(.conditionsChanged(hot), at: t0 + 600)
        _ = blip.handle(.conditionsChanged(Conditions(externalPower: true, networkAvailable: false, thermalState: .serious)), at: t0 + 2_000)
        _ = blip.handle(.conditionsChanged(hot), at: t0 + 2_005)
        _ = blip.handle(.conditionsChanged(.favorable), at: t0 + 600 + 4_000)
        let blipped = blip.policyState(of: F.app)?.usage
        #expect(blipped.map { $0.deviceHoldShare(hourOfWeek: $0.hourOfWeek(of: t0 + 600), at: t0 + 4_600) } ?? 0 > 0.99)
        // Not holds: Low Power Mode while offline (the network's loss), a critical battery (a
        // refresh ahead of it would spend the charge left), a thermal state refreshes run in.
        for (condition, name) in [(Conditions(externalPower: false, networkAvailable: false, batteryLevel: 0.6, lowPowerMode: true), "offline"),
                                  (critical, "critical"),
                                  (Conditions(externalPower: true, networkAvailable: true, thermalState: .fair), "fair")] {
            var other = F.engine()
            _ = other.handle(.appForegrounded(F.app), at: t0)
            _ = other.handle(.conditionsChanged(condition), at: t0 + 600)
            _ = other.handle(.conditionsChanged(.favorable), at: t0 + 9_000)
            let usage = other.policyState(of: F.app)?.usage
            #expect(usage.map { $0.deviceHoldShare(hourOfWeek: $0.hourOfWeek(of: t0 + 600), at: t0 + 9_000) } == 0, "\(name)")
        }
        // Low Power Mode that does not hold refreshes (configured) is no hold.
        var lenient = F.engine(policies: PolicySet(configuration: PolicyConfiguration(lowPowerModeBlocks: [.processing])))
        _ = lenient.handle(.appForegrounded(F.app), at: t0)
        _ = lenient.handle(.conditionsChanged(lowPower), at: t0 + 600)
        _ = lenient.handle(.conditionsChanged(.favorable), at: t0 + 9_000)
        #expect(lenient.networkHistoryRecorded == 0)
    }
}
