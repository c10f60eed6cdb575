import Foundation
import SchedulerCore
import Testing
@testable import SchedulerStore

@Suite("Crash recovery on open")
struct CrashRecoveryTests {
    @Test("an unfinished run is recorded interrupted and its request is restored")
    func interruptedRunRestoresItsRequest() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let request = Sample.requestsUsingEveryField[2]
        var finishedRun = Sample.run(1, of: Sample.request("done"), startedAt: Sample.now)
        do {
            let store = try openStore(url)
            try store.upsertRequest(request)
            try store.recordRunStarted(finishedRun)
            finishedRun.endedAt = Sample.now.addingTimeInterval(5)
            finishedRun.outcome = .success
            finishedRun.success = true
            try store.recordRunFinished(finishedRun)
            try store.recordRunStarted(Sample.run(2, of: request, startedAt: Sample.now.addingTimeInterval(10)))
            #expect(try store.pendingRequests().isEmpty)
            // The store goes away here without the run ending: as if the scheduler was killed.
        }
        let restart = Sample.now.addingTimeInterval(3_600)
        let (store, report) = try SchedulerStore.open(at: url, now: restart)

        var expectedRun = Sample.run(2, of: request, startedAt: Sample.now.addingTimeInterval(10))
        expectedRun.endedAt = restart
        expectedRun.outcome = .interrupted
        expectedRun.stopReason = "the scheduler stopped while the run was in progress"
        #expect(report.interruptedRuns == [expectedRun])
        #expect(report.restoredRequests == [request])
        #expect(report.movedAsideCorruptFile == nil)
        #expect(try store.pendingRequests() == [request])
        #expect(try store.runs() == [finishedRun, expectedRun])
    }

    /// Continued processing is the user's foreground work (a Live Activity they watch): when
    /// its process dies it ends, as on iOS, and is not run again unasked at the next start,
    /// nor struck (the engine counts no continued-processing run in the throttle). An
    /// outside probe's export ran again in the next process of the app.
    @Test("an interrupted continued-processing run ends without its request coming back or a strike")
    func interruptedContinuedProcessingIsNotRestored() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let export = Sample.requestsUsingEveryField[3]
        let refresh = Sample.request("com.example.photos.refresh", app: Sample.otherApp)
        do {
            let store = try openStore(url)
            try store.upsertRequests([export, refresh])
            try store.recordRunStarted(Sample.run(1, of: export, startedAt: Sample.now))
        }
        let restart = Sample.now.addingTimeInterval(60)
        do {
            let (store, report) = try SchedulerStore.open(at: url, now: restart)
            #expect(report.interruptedRuns.map(\.id) == [RunID(1)])
            #expect(report.interruptedRuns.first?.stopReason == InterruptedRunRecovery.continuedProcessingStopReason)
            #expect(report.restoredRequests.isEmpty)
            #expect(try store.pendingRequests() == [refresh])
            #expect(try store.run(RunID(1))?.outcome == .interrupted)
            #expect(try store.appSetting(app: Sample.otherApp, name: AppSettingName.policyState) == nil, "no strike")

            // Beside another run of the same app, that one is restored and struck.
            try store.upsertRequest(export)
            try store.recordRunStarted(Sample.run(2, of: export, startedAt: restart))
            try store.recordRunStarted(Sample.run(3, of: refresh, startedAt: restart))
        }
        let (again, second) = try SchedulerStore.open(at: url, now: restart.addingTimeInterval(60))
        #expect(second.interruptedRuns.map(\.id) == [RunID(2), RunID(3)])
        #expect(second.restoredRequests == [refresh])
        #expect(try again.pendingRequests() == [refresh])
        let saved = try #require(try again.appSetting(app: Sample.otherApp, name: AppSettingName.policyState), "the refresh's stop is a strike")
        #expect(try JSONDecoder().decode(AppPolicyState.self, from: Data(saved.utf8)).throttle.strikes == 1, "one strike for the stop, none for the export")
    }

    /// The clock was set back between the start and the restart: the run ends at its start
    /// (a row ending before it starts is one no reader accepts), and it stays readable.
    @Test("a run interrupted before its start by the clock ends at its start")
    func clockSetBackEndsAtTheStart() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let started = Sample.now.addingTimeInterval(3_600)
        do {
            let store = try openStore(url)
            try store.recordRunStarted(Sample.run(1, of: Sample.request("refresh"), startedAt: started))
        }
        let (store, report) = try SchedulerStore.open(at: url, now: Sample.now)
        #expect(report.interruptedRuns.map(\.endedAt) == [started])
        #expect(try store.run(RunID(1))?.endedAt == started)
    }

    @Test("a request resubmitted during the interrupted run wins over the old one")
    func newerPendingRequestWins() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let old = Sample.request("refresh", submittedAt: Sample.now)
        let newer = PendingRequest(
            app: Sample.app, identifier: "refresh", kind: .appRefresh,
            earliestBeginDate: Sample.now.addingTimeInterval(900), submittedAt: Sample.now.addingTimeInterval(20)
        )
        let elsewhere = Sample.request("sync", app: Sample.otherApp)
        do {
            let store = try openStore(url)
            try store.upsertRequest(old)
            try store.upsertRequest(elsewhere)
            try store.recordRunStarted(Sample.run(1, of: old, startedAt: Sample.now.addingTimeInterval(10)))
            try store.recordRunStarted(Sample.run(2, of: elsewhere, startedAt: Sample.now.addingTimeInterval(11)))
            try store.upsertRequest(newer) // the handler rescheduled itself first thing
        }
        let (store, report) = try SchedulerStore.open(at: url, now: Sample.now.addingTimeInterval(60))
        #expect(report.interruptedRuns.map(\.id) == [RunID(1), RunID(2)])
        #expect(report.interruptedRuns.allSatisfy { $0.outcome == .interrupted })
        #expect(report.restoredRequests == [elsewhere])
        #expect(try store.pendingRequests() == [newer, elsewhere])
        #expect(try store.run(RunID(1))?.outcome == .interrupted)
    }

    @Test("recovery happens once: the next open finds nothing to repair")
    func recoveryIsDurable() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        do {
            let store = try openStore(url)
            try store.recordRunStarted(Sample.run(1, of: Sample.request("t"), startedAt: Sample.now))
        }
        let first = try SchedulerStore.open(at: url, now: Sample.now.addingTimeInterval(1)).1
        #expect(first.interruptedRuns.count == 1)
        let (store, second) = try SchedulerStore.open(at: url, now: Sample.now.addingTimeInterval(2))
        #expect(second.interruptedRuns.isEmpty)
        #expect(second.restoredRequests.isEmpty)
        #expect(try store.run(RunID(1))?.endedAt == Sample.now.addingTimeInterval(1))
        #expect(try store.maxRunID() == RunID(1))
    }
}
