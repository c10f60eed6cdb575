import BackgroundTasks
import BackgroundTasksTesting
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

    @Test func readingsThatOnlyMoveTheBatteryAreLeftOut() {
        let trace: [SchedulerTraceEvent] = [
            .conditionsChanged(Conditions(externalPower: false, networkAvailable: true, batteryLevel: 0.9), at: start),
            .conditionsChanged(Conditions(externalPower: false, networkAvailable: true, batteryLevel: 0.88), at: start.addingTimeInterval(1800)),
            .conditionsChanged(Conditions(externalPower: false, networkAvailable: false, batteryLevel: 0.86), at: start.addingTimeInterval(3600)),
        ]
        let lines = Timeline(trace: trace, start: start).lines.map(\.text)
        #expect(lines == ["device: power=battery network=up battery=90%", "device: power=battery network=down battery=86%"])
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
