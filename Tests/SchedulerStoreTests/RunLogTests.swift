import Foundation
import SchedulerCore
import Testing
@testable import SchedulerStore

@Suite("Run log")
struct RunLogTests {
    @Test("runs round-trip with every field, before and after they end, across a reopen")
    func runRoundTrip() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        var finished: [RunRecord] = []
        do {
            let store = try openStore(url)
            for (offset, request) in Sample.requestsUsingEveryField.enumerated() {
                let started = Sample.run(Int64(offset + 1), of: request, startedAt: Sample.now.addingTimeInterval(Double(offset) + 0.123_456_789))
                try store.recordRunStarted(started)
                #expect(try store.run(started.id) == started)
                var ended = started
                ended.endedAt = started.startedAt.addingTimeInterval(29.999_999_9)
                ended.outcome = RunOutcome.allCases[offset % RunOutcome.allCases.count]
                ended.success = offset.isMultiple(of: 2) ? (offset == 0) : nil
                ended.stopReason = offset == 3 ? nil : "budget of 30 s exhausted (\(offset))"
                try store.recordRunFinished(ended)
                finished.append(ended)
            }
        }
        let reopened = try SchedulerStore.open(at: url, now: Sample.now.addingTimeInterval(3_600))
        #expect(reopened.1.interruptedRuns.isEmpty)
        #expect(try reopened.0.runs() == finished)
        #expect(try reopened.0.run(RunID(99)) == nil)
    }

    @Test("each app's last background launch is its latest run start, continued processing aside (the rate limit's memory across a restart)")
    func lastLaunches() throws {
        let directory = try TemporaryDirectory()
        let store = try openStore(directory.file("store.sqlite"))
        let apps = [Sample.app, Sample.otherApp]
        #expect(try store.lastLaunches(of: apps).isEmpty)
        var continued = try #require(Sample.requestsUsingEveryField.first { $0.kind == .continuedProcessing })
        continued.app = Sample.app
        let runs = [
            Sample.run(1, of: Sample.request("a.refresh"), startedAt: Sample.now),
            Sample.run(2, of: PendingRequest(app: Sample.app, identifier: "a.sync", kind: .processing, submittedAt: Sample.now), startedAt: Sample.now.addingTimeInterval(5)),
            // User-started, never spaced by the rate limit: not a background launch.
            Sample.run(3, of: continued, startedAt: Sample.now.addingTimeInterval(10)),
            Sample.run(4, of: Sample.request("b.refresh", app: Sample.otherApp), startedAt: Sample.now.addingTimeInterval(2)),
        ]
        for run in runs { try store.recordRunStarted(run) }
        #expect(try store.lastLaunches(of: apps) == [Sample.app: Sample.now.addingTimeInterval(5), Sample.otherApp: Sample.now.addingTimeInterval(2)])
        // One app's through its own query; apps not asked for are left out.
        #expect(try store.lastLaunches(of: [Sample.otherApp]) == [Sample.otherApp: Sample.now.addingTimeInterval(2)])
        #expect(try store.lastLaunches(of: [Sample.app, AppID("com.example.none")]) == [Sample.app: Sample.now.addingTimeInterval(5)])
    }
}
