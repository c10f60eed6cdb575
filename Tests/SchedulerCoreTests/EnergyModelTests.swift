import Foundation
import Testing
@testable import SchedulerCore

@Suite("Energy model and summary")
struct EnergyModelTests {
    private static let app = AppID("com.example.feedreader")
    private static let otherApp = AppID("com.example.photos")
    /// 2026-11-30 08:00:00 UTC.
    private static let start = Date(timeIntervalSince1970: 1_796_025_600)

    private func run(
        _ id: Int64,
        _ identifier: String,
        app: AppID = app,
        duration: TimeInterval?,
        outcome: RunOutcome? = .success,
        cpuTime: TimeInterval? = nil,
        energyJoules: Double? = nil
    ) -> RunRecord {
        let startedAt = Self.start.addingTimeInterval(Double(id) * 1_000)
        return RunRecord(
            id: RunID(id),
            request: PendingRequest(app: app, identifier: identifier, kind: .appRefresh, submittedAt: Self.start),
            startedAt: startedAt,
            endedAt: duration.map { startedAt.addingTimeInterval($0) },
            outcome: duration == nil ? nil : outcome,
            cpuTime: cpuTime,
            energyJoules: energyJoules
        )
    }

    // MARK: Model

    @Test("the defaults are 2 W per CPU-second, 0.5 W base and 30 days of retention")
    func defaults() {
        let model = EnergyModel()
        #expect(model.perCoreWatts == 2.0)
        #expect(model.baseWatts == 0.5)
        #expect(model.retention == 30 * 86_400)
        #expect(model.pruneCutoff(now: Self.start) == Self.start.addingTimeInterval(-30 * 86_400))
    }

    @Test("the estimate is CPU seconds times per-core watts plus wall time times base watts")
    func estimate() {
        let model = EnergyModel(perCoreWatts: 3, baseWatts: 0.25)
        #expect(model.estimate(cpuTime: 2, wallTime: 10) == 2 * 3 + 10 * 0.25 as Double)
        #expect(EnergyModel().estimate(cpuTime: 1.5, wallTime: 4) == 5)
        // Unmeasured CPU: the base cost alone, a lower bound.
        #expect(model.estimate(cpuTime: nil, wallTime: 8) == 2)
        // Nonsense inputs count as nothing, never as negative energy.
        #expect(model.estimate(cpuTime: -1, wallTime: -5) == 0)
        #expect(model.estimate(cpuTime: .nan, wallTime: .infinity) == 0)
    }

    @Test("an estimate stops at what a store accepts of a run, whatever the wattages set in code")
    func estimateIsBounded() {
        let absurd = EnergyModel(perCoreWatts: 1e300, baseWatts: 1e300)
        #expect(absurd.estimate(cpuTime: 1e10, wallTime: 1e10) == EnergyModel.maximumEstimate)
        #expect(absurd.estimate(cpuTime: 1e-300, wallTime: 0) == 1)
        // Wattages that are no number of watts count as none, never as NaN or negative energy.
        #expect(EnergyModel(perCoreWatts: .nan, baseWatts: -1).estimate(cpuTime: 5, wallTime: 5) == 0)
        #expect(EnergyModel(perCoreWatts: .infinity, baseWatts: 0.5).estimate(cpuTime: 5, wallTime: 4) == 2)
    }

    @Test("the model round-trips through JSON, and missing keys take their defaults")
    func codable() throws {
        let model = EnergyModel(perCoreWatts: 4.5, baseWatts: 0.1, retention: 86_400)
        let decoded = try JSONDecoder().decode(EnergyModel.self, from: JSONEncoder().encode(model))
        #expect(decoded == model)
        let partial = try JSONDecoder().decode(EnergyModel.self, from: Data(#"{"baseWatts": 1}"#.utf8))
        #expect(partial == EnergyModel(baseWatts: 1))
        #expect(try JSONDecoder().decode(EnergyModel.self, from: Data("{}".utf8)) == EnergyModel())
    }

    @Test(arguments: [#"{"perCoreWatts": -2}"#, #"{"baseWatts": "lots"}"#, #"{"retention": -1}"#])
    func invalidValuesAreRefusedWithTheKeyNamed(json: String) throws {
        let key = try #require(json.split(separator: "\"").dropFirst().first.map(String.init))
        let error = try #require(throws: DecodingError.self) {
            try JSONDecoder().decode(EnergyModel.self, from: Data(json.utf8))
        }
        let path: [any CodingKey]
        switch error {
        case .dataCorrupted(let context), .typeMismatch(_, let context): path = context.codingPath
        default: path = []
        }
        #expect(path.map(\.stringValue) == [key], "\(error)")
    }

    // MARK: Summary

    @Test("nearest-rank percentiles of known sets")
    func percentiles() {
        #expect(EnergySummary.percentile(0.95, of: (1...20).map(Double.init)) == 19)
        #expect(EnergySummary.percentile(0.95, of: (1...10).map(Double.init)) == 10)
        #expect(EnergySummary.percentile(0.95, of: (1...100).reversed().map(Double.init)) == 95)
        #expect(EnergySummary.percentile(0.5, of: [3, 1, 2, 4]) == 2)
        #expect(EnergySummary.percentile(0.95, of: [7]) == 7)
        #expect(EnergySummary.percentile(0.95, of: []) == nil)
    }

    @Test("per task: runs, outcomes, expirations, mean and p95 duration, CPU and joules")
    func summaryMath() throws {
        var runs: [RunRecord] = []
        // Twenty successful refreshes of 1...20 s: mean 10.5 s, p95 19 s.
        for seconds in 1...20 {
            runs.append(run(Int64(seconds), "refresh", duration: Double(seconds), cpuTime: 0.1, energyJoules: 1))
        }
        // Clean-ups: one expired, one terminated, one failure, one interrupted (its
        // 9 000 s "duration" is when recovery noticed, so it is left out), one unmeasured, one
        // in progress.
        runs += [
            run(30, "cleanup", duration: 600, outcome: .expired, cpuTime: 30, energyJoules: 360),
            run(31, "cleanup", duration: 630, outcome: .terminated, cpuTime: 20, energyJoules: 355),
            run(32, "cleanup", duration: 30, outcome: .failure, cpuTime: 1, energyJoules: 17),
            run(33, "cleanup", duration: 9_000, outcome: .interrupted),
            run(34, "cleanup", duration: 60, outcome: .success, cpuTime: nil, energyJoules: nil),
            run(35, "cleanup", duration: nil),
            run(40, "sync", app: Self.otherApp, duration: 2, cpuTime: 0.5, energyJoules: 2),
        ]
        let rows = EnergySummary.make(from: runs.shuffled())
        #expect(rows.map { "\($0.app)/\($0.identifier ?? "-")" } == [
            "com.example.feedreader/cleanup", "com.example.feedreader/refresh", "com.example.photos/sync",
        ])

        let refresh = rows[1]
        #expect(refresh.runs == 20)
        #expect(refresh.inProgress == 0)
        #expect(refresh.outcomes == ["success": 20])
        #expect(refresh.expirations == 0)
        #expect(refresh.meanDuration == 10.5)
        #expect(refresh.p95Duration == 19)
        #expect(abs(refresh.cpuSeconds - 2.0) < 1e-9)
        #expect(refresh.energyJoules == 20)
        #expect(refresh.unmeasuredRuns == 0)

        let cleanup = rows[0]
        #expect(cleanup.runs == 5)
        #expect(cleanup.inProgress == 1)
        #expect(cleanup.outcomes == ["expired": 1, "terminated": 1, "failure": 1, "interrupted": 1, "success": 1])
        #expect(cleanup.expirations == 2)
        #expect(cleanup.meanDuration == TimeInterval(600 + 630 + 30 + 60) / 4)
        #expect(cleanup.p95Duration == 630)
        #expect(cleanup.cpuSeconds == 51)
        #expect(cleanup.energyJoules == 732)
        #expect(cleanup.unmeasuredRuns == 2)

        let apps = EnergySummary.byApp(from: runs)
        #expect(apps.map(\.app) == [Self.app, Self.otherApp])
        #expect(apps.allSatisfy { $0.identifier == nil })
        #expect(apps[0].runs == 25)
        #expect(apps[0].expirations == 2)
        #expect(apps[0].energyJoules == 752)
        // The app's p95 comes from all 24 durations, not from the per-task rows.
        #expect(apps[0].p95Duration == 600)
        #expect(apps[1].runs == 1)
        #expect(apps[1].meanDuration == 2)
    }

    @Test("a task with only runs in progress or interrupted has no duration figures")
    func noDurations() {
        let rows = EnergySummary.make(from: [
            run(1, "t", duration: nil),
            run(2, "t", duration: 100, outcome: .interrupted),
        ])
        #expect(rows.count == 1)
        #expect(rows[0].runs == 1)
        #expect(rows[0].inProgress == 1)
        #expect(rows[0].meanDuration == nil)
        #expect(rows[0].p95Duration == nil)
        #expect(EnergySummary.make(from: []).isEmpty)
    }

    /// Records built in code are not checked as a store checks its rows: a figure no run can
    /// have is left out (an energy counts as unmeasured), and totals of huge ones stop at the
    /// largest finite Double, so a summary is always JSON (an infinite total failed to encode).
    @Test("sums never become infinite, and impossible figures are left out")
    func sumsStayFinite() throws {
        let huge = Double.greatestFiniteMagnitude / 2 * 1.5
        let rows = EnergySummary.byApp(from: [
            run(1, "t", duration: 1, cpuTime: huge, energyJoules: huge),
            run(2, "t", duration: 1, cpuTime: huge, energyJoules: huge),
            run(3, "t", duration: 1, cpuTime: .infinity, energyJoules: .infinity),
            run(4, "t", duration: 1, cpuTime: -5, energyJoules: -5),
            run(5, "t", duration: 1, cpuTime: .nan, energyJoules: .nan),
            RunRecord(
                id: RunID(6), request: PendingRequest(app: Self.app, identifier: "t", kind: .appRefresh, submittedAt: Self.start),
                startedAt: Date(timeIntervalSinceReferenceDate: -huge), endedAt: Date(timeIntervalSinceReferenceDate: huge), outcome: .success
            ),
        ])
        let row = try #require(rows.first)
        #expect(row.cpuSeconds == .greatestFiniteMagnitude)
        #expect(row.energyJoules == .greatestFiniteMagnitude)
        #expect(row.unmeasuredRuns == 4)
        #expect(row.meanDuration == 1, "the infinite duration of run 6 is left out")
        #expect(throws: Never.self) { _ = try JSONEncoder().encode(rows) }
    }

    @Test("summary rows encode every key, nil ones as null, and decode back")
    func rowJSON() throws {
        let row = EnergySummary.Row(app: Self.app, identifier: nil, runs: 1, outcomes: ["success": 1])
        let data = try JSONEncoder().encode(row)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        for key in ["app", "identifier", "runs", "inProgress", "outcomes", "expirations", "meanDuration",
                    "p95Duration", "cpuSeconds", "energyJoules", "unmeasuredRuns"] {
            #expect(object.keys.contains(key), "missing \(key)")
        }
        #expect(object["identifier"] is NSNull)
        #expect(try JSONDecoder().decode(EnergySummary.Row.self, from: data) == row)
    }
}
