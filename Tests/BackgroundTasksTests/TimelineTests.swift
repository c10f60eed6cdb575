import BackgroundTasks
@testable import BackgroundTasksTesting
import Foundation
import SchedulerCore
import Testing

/// The readable timeline: folded runs, and battery-only readings left out.
@Suite struct TimelineTests {
    private let start = Date(timeIntervalSince1970: 1_795_996_800)

    private func finished(_ id: Int64, at offset: TimeInterval, outcome: RunOutcome) -> SchedulerTraceEvent {
        let request = PendingRequest(app: AppID("com.example.app"), identifier: "com.example.app.refresh", kind: .appRefresh, submittedAt: start)
        return .finished(RunRecord(id: RunID(id), request: request, startedAt: start.addingTimeInterval(offset), endedAt: start.addingTimeInterval(offset + 4), outcome: outcome, success: outcome == .success, stopReason: "completed"))
    }

    @Test func twoAppsTasksEndingAlikeAreNamedWhole() {
        // An outside probe: with two apps simulated, "refresh: ran 5 s" did not say whose.
        func run(_ id: Int64, _ app: String, at offset: TimeInterval) -> SchedulerTraceEvent {
            let request = PendingRequest(app: AppID(app), identifier: "\(app).refresh", kind: .appRefresh, submittedAt: start)
            return .finished(RunRecord(id: RunID(id), request: request, startedAt: start.addingTimeInterval(offset), endedAt: start.addingTimeInterval(offset + 5), outcome: .success, success: true, stopReason: "completed"))
        }
        let lines = Timeline(trace: [run(1, "com.x.a", at: 0), run(2, "com.y.b", at: 60)], start: start).lines.map(\.text)
        #expect(lines == ["com.x.a.refresh: ran 5 s, success", "com.y.b.refresh: ran 5 s, success"], "\(lines)")
        #expect(Timeline(trace: [run(1, "com.x.a", at: 0)], start: start).lines.map(\.text) == ["refresh: ran 5 s, success"], "one app: the short name")
    }

    @Test func readingsThatOnlyMoveTheBatteryAreLeftOut() {
        let trace: [SchedulerTraceEvent] = [
            .conditionsChanged(Conditions(externalPower: false, networkAvailable: true, batteryLevel: 0.9), at: start),
            .conditionsChanged(Conditions(externalPower: false, networkAvailable: true, batteryLevel: 0.88), at: start.addingTimeInterval(1800)),
            .conditionsChanged(Conditions(externalPower: false, networkAvailable: false, batteryLevel: 0.86), at: start.addingTimeInterval(3600)),
        ]
        let lines = Timeline(trace: trace, start: start).lines.map(\.text)
        #expect(lines == ["device: power=battery network=up battery=90%", "device: power=battery network=down battery=86%"])
    }

    @Test func batteryReadingsThatCrossALineThatMattersAreShown() {
        func reading(_ level: Double, _ minutes: Double) -> SchedulerTraceEvent {
            .conditionsChanged(Conditions(externalPower: false, networkAvailable: true, batteryLevel: level), at: start.addingTimeInterval(minutes * 60))
        }
        // 30 % to 25 % is left out; 25 % to 20 % reaches the critical level; to 0 % empties it.
        let trace = [reading(0.3, 0), reading(0.25, 30), reading(0.2, 60), reading(0.1, 90), reading(0, 120)]
        let lines = Timeline(trace: trace, start: start).lines.map(\.text)
        #expect(lines == [
            "device: power=battery network=up battery=30%", "device: power=battery network=up battery=20%",
            "device: power=battery network=up battery=0%",
        ])
        #expect(Timeline.batteryMilestone(from: 0.99, to: 1) && !Timeline.batteryMilestone(from: nil, to: 0))
    }

    @Test func aHoldIsSaidOncePerHoldWithWhatItWaitsFor() {
        let key = RequestKey(app: AppID("com.example.app"), identifier: "com.example.app.refresh")
        let trace: [SchedulerTraceEvent] = [
            .moved(key, .ready, at: start, heldBy: nil),
            .moved(key, .parkedForDevice, at: start, heldBy: nil),
            .moved(key, .ready, at: start.addingTimeInterval(1800), heldBy: nil),
            .moved(key, .parkedForDevice, at: start.addingTimeInterval(1800), heldBy: nil),
            .moved(key, .deferred(until: start.addingTimeInterval(7200)), at: start.addingTimeInterval(3600), heldBy: "app-usage"),
            finished(1, at: 7200, outcome: .success),
            .moved(key, .parkedForDevice, at: start.addingTimeInterval(9000), heldBy: "thermal and low-power-mode"),
        ]
        let lines = Timeline(trace: trace, start: start).lines.map(\.text)
        // The policies that held it are named when the trace knows them.
        #expect(lines == [
            "refresh: due, held by a policy until the device's conditions change",
            "refresh: due, held by app-usage until 02:00:00",
            "refresh: ran 4 s, success, eligible since 00:00:00",
            "refresh: due, held by thermal and low-power-mode until the device's conditions change",
        ])
    }

    @Test func runsThatEndAlikeAreFolded() {
        let trace = (0..<5).map { finished(Int64($0 + 1), at: Double($0) * 900, outcome: .success) } + [finished(6, at: 4500, outcome: .failure)]
        let rendered = Timeline(trace: trace, start: start).render()
        #expect(rendered == """
            00:00:00  refresh: ran 4 s, success
            00:15:00  refresh: 4 more runs until 01:00:00, all success
            01:15:00  refresh: ran 4 s, failure
            """)
    }
}
