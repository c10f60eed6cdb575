@testable import bgtask
import Foundation
import SchedulerCore
@testable import SchedulerStore
import Testing

/// docs/ARCHITECTURE.md, "One owner per state directory": `bgtask why` reads the store
/// read-only; it recovers nothing, and tells a run in progress from one whose process died.
@Suite struct WhyReadOnlyTests {
    private static let cleanup = "com.example.test.processing"

    /// A state directory whose store has a run of `cleanup` without an end and one
    /// unreadable pending row, written by an owner that is gone (the lock released).
    private func stateLeftByADeadOwner() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-why-ro-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let (store, _) = try SchedulerStore.open(at: directory.appendingPathComponent("scheduler.sqlite"), now: testStart)
        let request = PendingRequest(app: testApp, identifier: Self.cleanup, kind: .processing, submittedAt: testStart)
        try store.recordRunStarted(RunRecord(id: RunID(1), request: request, startedAt: testStart))
        try store.withConnection { (connection) throws(StoreError) in
            try connection.executeScript(
                "INSERT INTO pending_requests (\(RequestColumns.names)) VALUES ('\(testApp)', 'com.example.test.odd', 'teleport', NULL, 0, 0, 0, NULL)"
            )
        }
        return directory
    }

    @Test func whyOnAStoreNobodyOwnsSaysTheRunWasCutOffAndChangesNothing() throws {
        let state = try stateLeftByADeadOwner()
        defer { try? FileManager.default.removeItem(at: state) }
        let database = state.appendingPathComponent("scheduler.sqlite")
        #expect(SchedulerStore.owner(of: database) == nil)
        let options = WhyCommand.Options(app: testApp.rawValue, identifier: Self.cleanup, state: state.path)
        let text = try WhyCommand.run(options, environment: [:], now: testStart.addingTimeInterval(60), conditions: .favorable)
        #expect(!text.contains("a run is in progress"), "\(text)")
        #expect(text.contains("run-1") || text.contains("never ended"), "\(text)")
        #expect(text.contains("no process owns the store"), "\(text)")
        #expect(text.contains("unreadable pending request \(testApp)/com.example.test.odd"), "\(text)")
        #expect(text.contains("teleport"), "\(text)")

        // Read-only: the run is still without an end, the bad row still where it was.
        let reader = try SchedulerStore.openForReading(at: database)
        #expect(try reader.runs().map(\.endedAt) == [nil])
        #expect(try reader.readablePendingRequests().unreadable.map(\.identifier) == ["com.example.test.odd"])
        #expect(try reader.quarantinedRequests().isEmpty)

        let json = try WhyCommand.run(WhyCommand.Options(app: testApp.rawValue, identifier: Self.cleanup, json: true, state: state.path),
                                      environment: [:], now: testStart, conditions: .favorable)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["runningSince"] == nil)
        #expect((object["notes"] as? [String])?.count == 2)
    }

    /// A store whose owner allowed more pending processing requests than the default 10
    /// (an app's own scheduler configuration): `why` explains every one it holds, not the
    /// first 10 ("no request is pending" for the others before).
    @Test func requestsBeyondTheDefaultPendingLimitAreExplained() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-why-limit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (store, _) = try SchedulerStore.open(at: directory.appendingPathComponent("scheduler.sqlite"), now: testStart)
        let requests = (0..<12).map { index in
            PendingRequest(app: testApp, identifier: "com.example.test.p\(index)", kind: .processing, submittedAt: testStart.addingTimeInterval(Double(index)))
        }
        try store.upsertRequests(requests)
        store.close()
        for request in [requests[0], requests[11]] {
            let options = WhyCommand.Options(app: testApp.rawValue, identifier: request.identifier, state: directory.path)
            let text = try WhyCommand.run(options, environment: [:], now: testStart.addingTimeInterval(60), conditions: .favorable)
            #expect(!text.contains("no request is pending"), "\(text)")
            #expect(text.contains(request.identifier), "\(text)")
        }
    }

    /// One damaged row elsewhere in the app's run log (an unknown outcome, a date written
    /// as text) does not stop `why` from answering about the task.
    @Test func aDamagedRunRowElsewhereDoesNotStopTheAnswer() throws {
        let state = try stateLeftByADeadOwner()
        defer { try? FileManager.default.removeItem(at: state) }
        let database = state.appendingPathComponent("scheduler.sqlite")
        let (store, _) = try SchedulerStore.open(at: database, now: testStart)
        let other = PendingRequest(app: testApp, identifier: "com.example.test.other", kind: .appRefresh, submittedAt: testStart)
        try store.recordRunStarted(RunRecord(id: RunID(7), request: other, startedAt: testStart))
        try store.withConnection { (connection) throws(StoreError) in
            try connection.executeScript("UPDATE runs SET outcome = 'weird', ended_at = 'abc' WHERE id = 7")
        }
        store.close()
        let options = WhyCommand.Options(app: testApp.rawValue, identifier: Self.cleanup, state: state.path)
        let text = try WhyCommand.run(options, environment: [:], now: testStart.addingTimeInterval(60), conditions: .favorable)
        #expect(text.contains(Self.cleanup), "\(text)")
    }

    /// `--state` names a state directory or the store file in it, for `why` as for `log`
    /// (one reading, StateOption): the file itself was "no scheduler state" for `why`, and a
    /// path that is neither is refused alike by both, naming it.
    @Test func stateMayNameTheStoreFileAsInLog() throws {
        let state = try stateLeftByADeadOwner()
        defer { try? FileManager.default.removeItem(at: state) }
        let file = state.appendingPathComponent("scheduler.sqlite").path
        let byFile = try WhyCommand.run(.init(app: testApp.rawValue, identifier: Self.cleanup, state: file),
                                        environment: [:], now: testStart.addingTimeInterval(60), conditions: .favorable)
        let byDirectory = try WhyCommand.run(.init(app: testApp.rawValue, identifier: Self.cleanup, state: state.path),
                                             environment: [:], now: testStart.addingTimeInterval(60), conditions: .favorable)
        #expect(byFile == byDirectory)
        #expect(byFile.contains("no process owns the store"), "\(byFile)")

        let missing = state.appendingPathComponent("nope").path
        let whyError = try #require(throws: RunLogError.self) {
            try WhyCommand.run(.init(app: testApp.rawValue, identifier: Self.cleanup, state: missing), environment: [:], now: testStart, conditions: .favorable)
        }
        let logError = try #require(throws: RunLogError.self) {
            try LogCommand.run(try LogCommand.parse(["--state", missing]).get(), environment: [:], now: testStart) { _ in }
        }
        #expect(whyError == logError)
        #expect(whyError.message.contains(missing))
    }

    @Test func whyBesideALiveOwnerReportsTheRunInProgress() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-why-ro-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (owner, _) = try SchedulerStore.open(at: directory.appendingPathComponent("scheduler.sqlite"), now: testStart)
        let request = PendingRequest(app: testApp, identifier: Self.cleanup, kind: .processing, submittedAt: testStart)
        try owner.recordRunStarted(RunRecord(id: RunID(1), request: request, startedAt: testStart))
        let text = try WhyCommand.run(.init(app: testApp.rawValue, identifier: Self.cleanup, state: directory.path),
                                      environment: [:], now: testStart, conditions: .favorable)
        #expect(text.contains("a run is in progress"), "\(text)")
        #expect(text.contains("process \(getpid())"), "\(text)")
        #expect(try owner.run(RunID(1))?.endedAt == nil, "why recovered the owner's running task")
    }
}
