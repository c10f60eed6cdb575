import Foundation
import SchedulerCore
import Testing
@testable import SchedulerStore

/// Schema step 5: how bgtaskd measured a run out of process (source, I/O), in its own table.
@Suite("Run measurements in the store")
struct RunMeasurementStoreTests {
    func measuredRun(_ id: Int64, startedAt: Date) -> RunRecord {
        var run = Sample.run(id, of: Sample.request("com.example.app.refresh"), startedAt: startedAt)
        run.endedAt = startedAt.addingTimeInterval(2)
        run.outcome = .success
        run.success = true
        run.stopReason = "completed"
        run.cpuTime = 0.25
        run.peakMemoryBytes = 30_000_000
        run.energyJoules = 1.5
        run.measuredBy = "cgroup; energy: RAPL (package, whole machine)"
        run.bytesRead = 4096
        run.bytesWritten = 8192
        return run
    }

    @Test func pruningARunRemovesItsMeasurement() throws {
        let directory = try TemporaryDirectory()
        let store = try openStore(directory.file("store.sqlite"))
        for id in Int64(1)...2 {
            var run = measuredRun(id, startedAt: Sample.now.addingTimeInterval(Double(id) * 100))
            let finished = run
            run.endedAt = nil
            run.outcome = nil
            try store.recordRunStarted(run)
            try store.recordRunFinished(finished)
        }
        #expect(try store.pruneRuns(olderThan: Sample.now.addingTimeInterval(150)) == 1)
        let left = try store.withConnection { (connection) throws(StoreError) in
            try connection.query("SELECT run_id FROM run_measurements") { $0.int64(0) }
        }
        #expect(left == [2])
    }

    @Test func aReaderOfAStoreBeforeStepFiveReadsRunsWithoutMeasurements() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let store = try openStore(url)
        var run = Sample.run(1, of: Sample.request("com.example.app.refresh"), startedAt: Sample.now)
        try store.recordRunStarted(run)
        run.endedAt = Sample.now.addingTimeInterval(1)
        run.outcome = .success
        try store.recordRunFinished(run)
        // Back to version 4, as an older build left it.
        try store.withConnection { (connection) throws(StoreError) in
            try connection.executeScript("DROP TABLE run_measurements; PRAGMA user_version = 4;")
        }
        store.close()
        let reader = try SchedulerStore.openForReading(at: url)
        #expect(try reader.runs().map(\.id) == [RunID(1)])
        #expect(try reader.runs().first?.measuredBy == nil)
    }
}
