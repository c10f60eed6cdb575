import Foundation
import SchedulerCore
import Testing
@testable import SchedulerStore

@Suite("Run log")
struct RunLogTests {
    @Test("a started run consumes its request in the same transaction")
    func startingARunConsumesTheRequest() throws {
        let store = try SchedulerStore.inMemory()
        let request = Sample.requestsUsingEveryField[1]
        let other = Sample.request("other")
        try store.upsertRequest(request)
        try store.upsertRequest(other)
        let run = Sample.run(1, of: request, startedAt: Sample.now)
        try store.recordRunStarted(run)
        #expect(try store.pendingRequests() == [other])
        #expect(try store.run(RunID(1)) == run)
    }

    @Test("a run that cannot be recorded leaves its request pending")
    func failedStartKeepsTheRequest() throws {
        let store = try SchedulerStore.inMemory()
        let request = Sample.request("refresh")
        try store.upsertRequest(request)
        try store.recordRunStarted(Sample.run(7, of: Sample.request("earlier"), startedAt: Sample.now))
        // Run number 7 exists: the insert fails, so the delete must be rolled back with it.
        #expect(throws: StoreError.self) {
            try store.recordRunStarted(Sample.run(7, of: request, startedAt: Sample.now))
        }
        #expect(try store.pendingRequests() == [request])
    }

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

    @Test("finishing a run that never started is an error")
    func finishingAnUnknownRun() throws {
        let store = try SchedulerStore.inMemory()
        var run = Sample.run(3, of: Sample.request("x"), startedAt: Sample.now)
        run.endedAt = Sample.now
        run.outcome = .success
        let error = try #require(throws: StoreError.self) {
            try store.recordRunFinished(run)
        }
        #expect(error.code == .invalidData)
        #expect(error.message.contains("run#3"))
    }

    @Test("app settings given with a run's end are written with it, and not at all when the end is refused")
    func settingsTravelWithTheRunsEnd() throws {
        let store = try SchedulerStore.inMemory()
        let request = Sample.request("refresh")
        let started = Sample.run(1, of: request, startedAt: Sample.now)
        try store.recordRunStarted(started)
        try store.setAppSetting("stale", app: request.app, name: "to-delete")
        var ended = started
        ended.endedAt = Sample.now.addingTimeInterval(5)
        ended.outcome = .success
        try store.recordRunFinished(ended, appSettings: [AppSettingName.policyState: "{\"learned\":1}", "to-delete": nil])
        #expect(try store.run(started.id) == ended)
        #expect(try store.appSetting(app: request.app, name: AppSettingName.policyState) == "{\"learned\":1}")
        #expect(try store.appSetting(app: request.app, name: "to-delete") == nil)

        var unknown = Sample.run(9, of: request, startedAt: Sample.now)
        unknown.endedAt = Sample.now
        #expect(throws: StoreError.self) {
            try store.recordRunFinished(unknown, appSettings: [AppSettingName.policyState: "{\"learned\":2}"])
        }
        #expect(try store.appSetting(app: request.app, name: AppSettingName.policyState) == "{\"learned\":1}", "rolled back with the refused end")
    }

    @Test("maxRunID is nil for an empty log and the highest number otherwise")
    func maxRunID() throws {
        let store = try SchedulerStore.inMemory()
        #expect(try store.maxRunID() == nil)
        for id in [4, 12, 9] as [Int64] {
            try store.recordRunStarted(Sample.run(id, of: Sample.request("t\(id)"), startedAt: Sample.now))
        }
        #expect(try store.maxRunID() == RunID(12))
    }

    @Test("runs can be filtered by app and start, and limited to the newest, newest last")
    func filteringRuns() throws {
        let store = try SchedulerStore.inMemory()
        var all: [RunRecord] = []
        for index in 0..<10 {
            let app = index.isMultiple(of: 3) ? Sample.otherApp : Sample.app
            let run = Sample.run(Int64(index + 1), of: Sample.request("t", app: app), startedAt: Sample.now.addingTimeInterval(Double(index) * 60))
            try store.recordRunStarted(run)
            all.append(run)
        }
        let mine = all.filter { $0.app == Sample.app }
        let since = Sample.now.addingTimeInterval(4 * 60)

        #expect(try store.runs() == all)
        #expect(try store.runs(app: Sample.app) == mine)
        #expect(try store.runs(since: since) == all.filter { $0.startedAt >= since })
        #expect(try store.runs(limit: 3) == Array(all.suffix(3)))
        #expect(try store.runs(app: Sample.app, since: since, limit: 2)
            == Array(mine.filter { $0.startedAt >= since }.suffix(2)))
        #expect(try store.runs(limit: 0).isEmpty)
        #expect(try store.runs(app: AppID("com.example.unknown")).isEmpty)
    }

    @Test("runs that start at the same instant keep the order of their numbers")
    func tiesAreOrderedByRunNumber() throws {
        let store = try SchedulerStore.inMemory()
        let runs = (1...4).map { Sample.run(Int64($0), of: Sample.request("t\($0)"), startedAt: Sample.now) }
        for run in runs.reversed() { try store.recordRunStarted(run) }
        #expect(try store.runs() == runs)
        #expect(try store.runs(limit: 2) == Array(runs.suffix(2)))
    }
}
