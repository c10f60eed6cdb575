import Foundation
import SchedulerCore
import Testing
@testable import SchedulerStore

@Suite("Energy log in the store")
struct EnergyLogStoreTests {
    /// Schema step 1 exactly as released, frozen here: if someone edits the released step in
    /// `SchemaMigrations`, this test still builds the databases that exist in the field.
    private static let releasedVersion1Schema = """
        CREATE TABLE pending_requests (
            app TEXT NOT NULL, identifier TEXT NOT NULL, kind TEXT NOT NULL, earliest_begin REAL,
            submitted_at REAL NOT NULL, requires_network INTEGER NOT NULL, requires_power INTEGER NOT NULL,
            extras TEXT, PRIMARY KEY (app, identifier)
        ) WITHOUT ROWID;
        CREATE TABLE runs (
            id INTEGER PRIMARY KEY, app TEXT NOT NULL, identifier TEXT NOT NULL, kind TEXT NOT NULL,
            earliest_begin REAL, submitted_at REAL NOT NULL, requires_network INTEGER NOT NULL,
            requires_power INTEGER NOT NULL, extras TEXT, started_at REAL NOT NULL, ended_at REAL,
            outcome TEXT, success INTEGER, stop_reason TEXT
        );
        CREATE INDEX runs_by_app_and_start ON runs (app, started_at);
        CREATE INDEX runs_unfinished ON runs (id) WHERE ended_at IS NULL;
        CREATE TABLE checkpoints (
            app TEXT NOT NULL, key TEXT NOT NULL, data BLOB NOT NULL, updated_at REAL NOT NULL,
            PRIMARY KEY (app, key)
        ) WITHOUT ROWID;
        CREATE TABLE app_settings (
            app TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (app, name)
        ) WITHOUT ROWID;
        PRAGMA user_version = 1;
        """

    /// Writes a version-1 database at `url` holding one finished run (number 1, 5 s long)
    /// of `request`, the way the released code wrote it (WAL mode, no energy columns).
    private func writeVersion1Store(at url: URL, request: PendingRequest) throws {
        let connection = try SQLiteConnection.open(path: url.path, mode: .readWrite)
        _ = try connection.query("PRAGMA journal_mode = WAL") { $0.text(0) }
        try connection.executeScript(Self.releasedVersion1Schema)
        try connection.execute(
            """
            INSERT INTO runs (id, app, identifier, kind, earliest_begin, submitted_at, requires_network,
                requires_power, extras, started_at, ended_at, outcome, success, stop_reason)
            VALUES (1, ?, ?, ?, NULL, ?, 0, 0, NULL, ?, ?, 'success', 1, 'completed')
            """,
            [
                .text(request.app.rawValue), .text(request.identifier), .text(request.kind.rawValue),
                .date(request.submittedAt), .date(Sample.now), .date(Sample.now.addingTimeInterval(5)),
            ]
        )
    }

    private func finishedRun(
        _ id: Int64,
        _ identifier: String,
        startedAt: Date,
        endedAt: Date,
        cpuTime: TimeInterval? = nil,
        peakMemoryBytes: Int64? = nil,
        energyJoules: Double? = nil
    ) -> RunRecord {
        RunRecord(
            id: RunID(id), request: Sample.request(identifier), startedAt: startedAt, endedAt: endedAt,
            outcome: .success, success: true, stopReason: "completed",
            cpuTime: cpuTime, peakMemoryBytes: peakMemoryBytes, energyJoules: energyJoules
        )
    }

    @Test("a version-1 store migrates to the latest version and keeps its runs, with no measurements")
    func migratesFromVersion1() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let request = Sample.request("com.example.feedreader.refresh")
        try writeVersion1Store(at: url, request: request)

        let (store, report) = try SchedulerStore.open(at: url, now: Sample.now.addingTimeInterval(60))
        #expect(report.movedAsideCorruptFile == nil)
        #expect(report.interruptedRuns.isEmpty)
        let version = try store.withConnection { (connection) throws(StoreError) in try SchemaMigrations.version(of: connection) }
        #expect(version == SchemaMigrations.latestVersion)
        #expect(version == 5)

        let old = try #require(try store.run(RunID(1)))
        #expect(old.request == request)
        #expect(old.outcome == .success)
        #expect(old.stopReason == "completed")
        #expect(old.duration == 5)
        #expect(old.cpuTime == nil)
        #expect(old.peakMemoryBytes == nil)
        #expect(old.energyJoules == nil)

        // The migrated table takes the new fields.
        let new = finishedRun(2, "t", startedAt: Sample.now.addingTimeInterval(10), endedAt: Sample.now.addingTimeInterval(12),
                              cpuTime: 0.25, peakMemoryBytes: 4_096, energyJoules: 1.5)
        try store.recordRunStarted(RunRecord(id: new.id, request: new.request, startedAt: new.startedAt))
        try store.recordRunFinished(new)
        #expect(try store.runs() == [old, new])
    }

    @Test("a version-1 store is not migrated by a reader: refused, named, left as it is; readable once its owner migrated it")
    func readingRefusesVersion1() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        try writeVersion1Store(at: url, request: Sample.request("r"))
        let before = try Data(contentsOf: url)
        let error = try #require(throws: StoreError.self) { _ = try SchedulerStore.openForReading(at: url) }
        #expect(error.code == .readOnly)
        #expect(error.message.contains(url.path) && error.message.contains("schema version 1"))
        #expect(try Data(contentsOf: url) == before)
        do { _ = try SchedulerStore.open(at: url, now: Sample.now) }
        let runs = try SchedulerStore.openForReading(at: url).runs()
        #expect(runs.map(\.id) == [RunID(1)])
        #expect(runs.first?.energyJoules == nil)
    }

    @Test("CPU time, peak memory and energy round-trip, unknown ones as nil, across a reopen")
    func measurementsRoundTrip() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let measured = finishedRun(1, "a", startedAt: Sample.now, endedAt: Sample.now.addingTimeInterval(3.5),
                                   cpuTime: 1.234_567_891, peakMemoryBytes: 5_000_000_000, energyJoules: 4.219_135_782)
        let partly = finishedRun(2, "b", startedAt: Sample.now, endedAt: Sample.now.addingTimeInterval(1),
                                 cpuTime: nil, peakMemoryBytes: nil, energyJoules: 0.5)
        let unmeasured = finishedRun(3, "c", startedAt: Sample.now, endedAt: Sample.now.addingTimeInterval(2))
        do {
            let store = try openStore(url)
            for run in [measured, partly, unmeasured] {
                let started = RunRecord(id: run.id, request: run.request, startedAt: run.startedAt)
                try store.recordRunStarted(started)
                // A run in progress has no measurements yet.
                let stored = try #require(try store.run(run.id))
                #expect(stored.cpuTime == nil && stored.peakMemoryBytes == nil && stored.energyJoules == nil)
                try store.recordRunFinished(run)
            }
        }
        let store = try openStore(url, now: Sample.now.addingTimeInterval(3_600))
        #expect(try store.runs() == [measured, partly, unmeasured])
    }

    @Test("opening for reading leaves runs in progress alone and refuses to write")
    func openingForReadingRepairsNothing() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let running = RunRecord(id: RunID(1), request: Sample.request("sync"), startedAt: Sample.now)
        let writer = try openStore(url)
        try writer.recordRunStarted(running)

        // The app (writer) is still running: the reader sees the run in progress, unchanged.
        let reader = try SchedulerStore.openForReading(at: url)
        #expect(try reader.runs() == [running])
        #expect(throws: StoreError.self) {
            try reader.upsertRequest(Sample.request("sneaky"))
        }
        #expect(try writer.run(RunID(1)) == running)
        #expect(try writer.pendingRequests().isEmpty)
    }

    @Test("reading a store creates no store, lock or commit")
    func readingLeavesNoCompanionFiles() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        do {
            let store = try openStore(url)
            try store.recordRunStarted(RunRecord(id: RunID(1), request: Sample.request("t"), startedAt: Sample.now))
        }
        #expect(try directory.listing() == ["store.sqlite", "store.sqlite.lock"])
        let before = try Data(contentsOf: url)
        do {
            let reader = try SchedulerStore.openForReading(at: url)
            #expect(try reader.runs().count == 1)
        }
        // A read-only connection may leave the -wal and -shm SQLite needs, with no commit.
        #expect(try directory.listing().filter { !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") } == ["store.sqlite", "store.sqlite.lock"])
        #expect(try Data(contentsOf: url) == before)
        if FileManager.default.fileExists(atPath: url.path + "-wal") {
            #expect(try Data(contentsOf: URL(fileURLWithPath: url.path + "-wal")).isEmpty)
        }
    }

    @Test("opening for reading creates nothing and moves nothing aside")
    func openingForReadingCreatesNothing() throws {
        let directory = try TemporaryDirectory()
        let missing = try #require(throws: StoreError.self) {
            try SchedulerStore.openForReading(at: directory.file("store.sqlite"))
        }
        #expect(missing.code == .cannotOpen)
        #expect(missing.message.contains("store.sqlite"))
        #expect(try directory.listing().isEmpty)

        // A directory where the store should be is named as one, not as missing.
        let holder = directory.file("held.sqlite")
        try FileManager.default.createDirectory(at: holder, withIntermediateDirectories: false)
        let isDirectory = try #require(throws: StoreError.self) { try SchedulerStore.openForReading(at: holder) }
        #expect(isDirectory.code == .cannotOpen && isDirectory.message == "\(holder.path) is a directory, not a scheduler store")
        try FileManager.default.removeItem(at: holder)

        let garbage = Data(String(repeating: "not a database\n", count: 100).utf8)
        try garbage.write(to: directory.file("store.sqlite"))
        let damaged = try #require(throws: StoreError.self) {
            try SchedulerStore.openForReading(at: directory.file("store.sqlite"))
        }
        #expect(damaged.code == .corrupt)
        #expect(try directory.listing() == ["store.sqlite"])
        #expect(try Data(contentsOf: directory.file("store.sqlite")) == garbage)
    }

    @Test("opening a database with no schema for reading says it is not a scheduler store (an empty file reads as an empty store: ForeignFileTests)")
    func openingForReadingAnEmptyDatabase() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let connection = try SQLiteConnection.open(path: url.path, mode: .readWrite)
        try connection.executeScript("CREATE TABLE scratch(x); DROP TABLE scratch;")
        let error = try #require(throws: StoreError.self) {
            try SchedulerStore.openForReading(at: url)
        }
        #expect(error.code == .invalidData)
        #expect(error.message.contains("not a scheduler store"))
    }

    @Test("a write-ahead-log store copied without its -wal says where its commits may be; with its -wal beside it, it does not")
    func aStoreCopiedWithoutItsWAL() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let connection = try SQLiteConnection.open(path: url.path, mode: .readWrite)
        // The main file gets its header; everything after it is in the -wal (as a running
        // scheduler's store before its first checkpoint: an outside probe copied such a one).
        try connection.executeScript("PRAGMA journal_mode=WAL; CREATE TABLE scratch(x); DROP TABLE scratch;")
        let copy = directory.file("copy.sqlite")
        try FileManager.default.copyItem(at: url, to: copy)
        let alone = try #require(throws: StoreError.self) { try SchedulerStore.openForReading(at: copy) }
        #expect(alone.message.contains("its commits may still be in its -wal file, which must be copied beside it (\(copy.path)-wal)"), "\(alone.message)")
        let beside = try #require(throws: StoreError.self) { try SchedulerStore.openForReading(at: url) }
        #expect(beside.message.contains("not a scheduler store") && !beside.message.contains("-wal"), "\(beside.message)")
        withExtendedLifetime(connection) {}

        // Its owner moves such a copy aside before starting afresh, so that the -wal, once
        // found, can be put back beside it.
        let owned = directory.file("owned.sqlite")
        try FileManager.default.copyItem(at: url, to: owned)
        let (store, report) = try SchedulerStore.open(at: owned, now: Sample.now)
        let moved = try #require(report.movedAsideWithoutSchema)
        #expect(moved.lastPathComponent.hasPrefix("owned.sqlite.no-schema-"))
        #expect(FileManager.default.contents(atPath: moved.path) == FileManager.default.contents(atPath: copy.path), "moved as it was")
        #expect(try store.pendingRequests().isEmpty)
        // A store of the scheduler's, closed cleanly (its -wal gone), is opened as it is.
        try store.upsertRequest(Sample.request("com.example.feedreader.refresh"))
        store.close()
        let (again, secondReport) = try SchedulerStore.open(at: owned, now: Sample.now)
        let pendingAgain = try again.pendingRequests()
        #expect(secondReport.movedAsideWithoutSchema == nil && pendingAgain.count == 1)
    }
}
