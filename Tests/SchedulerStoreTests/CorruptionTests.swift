import Foundation
import SchedulerCore
import Testing
@testable import SchedulerStore

@Suite("Corrupt and foreign files")
struct CorruptionTests {
    /// Where `Sample.now` moves a damaged `store.sqlite`.
    private static let movedName = "store.sqlite.corrupt-20240102-030405"

    /// Deterministic pseudo-random bytes.
    private static func garbage(count: Int, seed: UInt64) -> Data {
        var state = seed
        return Data((0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        })
    }

    /// Opens the damaged `store.sqlite` in `directory` and checks the common outcome: the file
    /// was moved aside with its bytes intact, the report says so, and a fresh, working store
    /// took its place.
    private func expectMovedAside(
        in directory: TemporaryDirectory,
        damagedBytes: Data,
        movedName: String = movedName,
        salvaged: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> StoreOpenReport {
        let url = directory.file("store.sqlite")
        let (store, report) = try SchedulerStore.open(at: url, now: Sample.now)
        let moved = directory.file(movedName)
        #expect(report.movedAsideCorruptFile?.path == moved.path, sourceLocation: sourceLocation)
        #expect(report.corruptionDetail?.isEmpty == false, sourceLocation: sourceLocation)
        #expect(try Data(contentsOf: moved) == damagedBytes, "only read by the salvage", sourceLocation: sourceLocation)
        let before = try store.pendingRequests()
        #expect(before.isEmpty != salvaged, "\(before.count) pending requests salvaged", sourceLocation: sourceLocation)
        try store.upsertRequest(Sample.request("fresh"))
        #expect(try store.pendingRequests().filter { $0.identifier == "fresh" } == [Sample.request("fresh")], sourceLocation: sourceLocation)
        return report
    }

    /// A database of many pages, closed cleanly (everything checkpointed into the main file).
    private func writeMultiPageStore(at url: URL) throws {
        let store = try openStore(url)
        let padding = String(repeating: "x", count: 200)
        for index in 0..<600 {
            try store.upsertRequest(Sample.request("com.example.task.\(index).\(padding)"))
            if index.isMultiple(of: 3) {
                #expect(try store.saveCheckpoint(Data(repeating: UInt8(index % 256), count: 300), app: Sample.app, key: "k\(index)", at: Sample.now) == nil)
            }
        }
    }

    @Test("a file of random bytes is moved aside and replaced")
    func randomBytes() throws {
        let directory = try TemporaryDirectory()
        let bytes = Self.garbage(count: 8_192, seed: 42)
        try bytes.write(to: directory.file("store.sqlite"))
        let report = try expectMovedAside(in: directory, damagedBytes: bytes)
        #expect(report.corruptionDetail == "file is not a database")
    }

    @Test("a text file is moved aside and replaced")
    func textFile() throws {
        let directory = try TemporaryDirectory()
        let bytes = Data(String(repeating: "milk, eggs, bread\n", count: 50).utf8)
        try bytes.write(to: directory.file("store.sqlite"))
        let report = try expectMovedAside(in: directory, damagedBytes: bytes)
        #expect(report.corruptionDetail == "file is not a database")
    }

    @Test("a database with a damaged page in the middle is moved aside and replaced")
    func damagedPages() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        try writeMultiPageStore(at: url)
        #expect(try directory.listing() == ["store.sqlite", "store.sqlite.lock"]) // no WAL left behind
        var bytes = try Data(contentsOf: url)
        let pageSize = 4_096
        let pages = bytes.count / pageSize
        try #require(pages >= 20, "the test database should span many pages, has \(pages)")
        let middle = (pages / 2) * pageSize
        bytes.replaceSubrange(middle..<(middle + pageSize), with: Data(repeating: 0xA5, count: pageSize))
        try bytes.write(to: url)

        let report = try expectMovedAside(in: directory, damagedBytes: bytes, salvaged: true)
        #expect(report.interruptedRuns.isEmpty)
        // The page is an interior one of the pending requests: the rows below it are out of
        // reach, those after it come back (402 of 600), and the checkpoints all.
        #expect(report.salvage.copiedRows["pending_requests"].map { $0 > 0 } == true, "\(report.salvage)")
        #expect(report.salvage.copiedRows["checkpoints"] == 200, "\(report.salvage)")
        #expect(report.salvage.problems.contains { $0.hasPrefix("pending_requests: rows in damaged pages could not be read") }, "\(report.salvage)")
    }

    @Test("from a store with a damaged page, every row outside that page comes back: apps, settings, pending requests before and after it, runs")
    func salvageAroundADamagedPage() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let padding = String(repeating: "x", count: 200)
        let requests = (0..<600).map { Sample.request("com.example.task.\(String(format: "%03d", $0)).\(padding)") }
        do {
            let store = try openStore(url)
            try store.installApp(InstalledAppStoreTests.feedReader())
            try store.setAppSetting("off", app: Sample.app, name: "backgroundRefresh")
            for request in requests { try store.upsertRequest(request) }
            for index in 0..<50 {
                var run = Sample.run(Int64(index + 1), of: requests[index], startedAt: Sample.now.addingTimeInterval(Double(index)))
                try store.recordRunStarted(run)
                run.endedAt = run.startedAt.addingTimeInterval(1)
                run.outcome = .success
                try store.recordRunFinished(run)
            }
        }
        // A leaf page of the pending requests in the middle of their b-tree, by SQLite's own map.
        let leaves: [(page: Int64, cells: Int64)]
        do {
            let reader = try SQLiteConnection.open(path: url.path, mode: .readOnly)
            leaves = try reader.query("SELECT pageno, ncell FROM dbstat WHERE name = 'pending_requests' AND pagetype = 'leaf' ORDER BY path") { ($0.int64(0), $0.int64(1)) }
        }
        try #require(leaves.count >= 10, "\(leaves.count) leaves")
        // The read-only reader leaves an empty -wal and a -shm it could not remove: gone, as
        // beside the store of a daemon that stopped.
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        let damaged = leaves[leaves.count / 2]
        var bytes = try Data(contentsOf: url)
        let start = Int(damaged.page - 1) * 4_096
        bytes.replaceSubrange(start..<(start + 4_096), with: Self.garbage(count: 4_096, seed: 11))
        try bytes.write(to: url)

        let (store, report) = try SchedulerStore.open(at: url, now: Sample.now)
        let moved = try #require(report.movedAsideCorruptFile)
        // Only read: nothing made beside it (read as a WAL database, SQLite made a -shm and -wal).
        #expect(!FileManager.default.fileExists(atPath: moved.path + "-shm") && !FileManager.default.fileExists(atPath: moved.path + "-wal"))
        let pending = try store.pendingRequests()
        // The first 50 ran (a run takes its request off the pending list).
        #expect(pending.count == 550 - Int(damaged.cells), "every request but the \(damaged.cells) of the damaged page; \(report.salvage)")
        #expect(Set(pending).isSubset(of: Set(requests)), "copied exactly")
        #expect(pending.contains(requests[50]) && pending.contains(requests[599]), "before and after the damage")
        #expect(report.salvage.copiedRows["pending_requests"] == pending.count)
        #expect(report.salvage.problems.count == 1 && report.salvage.problems[0].hasPrefix("pending_requests: rows in damaged pages could not be read"), "\(report.salvage.problems)")
        #expect(try store.installedApps().apps == [InstalledAppStoreTests.feedReader()])
        #expect(try store.appSetting(app: Sample.app, name: "backgroundRefresh") == "off")
        let runs = try store.runs()
        #expect(runs.count == 50 && runs.allSatisfy { $0.outcome == .success })
        #expect(report.salvage.copiedRows["runs"] == 50 && report.salvage.copiedRows["installed_apps"] == 1)
    }

    @Test("a database whose first page is damaged past the header is moved aside")
    func damagedSchemaPage() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        try writeMultiPageStore(at: url)
        var bytes = try Data(contentsOf: url)
        // Keep the 100-byte file header (so the first read succeeds), damage the schema table.
        bytes.replaceSubrange(100..<4_096, with: Self.garbage(count: 3_996, seed: 7))
        try bytes.write(to: url)
        let report = try expectMovedAside(in: directory, damagedBytes: bytes)
        #expect(report.salvage.copiedRows.isEmpty)
        #expect(report.salvage.problems.first?.contains("nothing could be copied") == true, "\(report.salvage.problems)")
    }

    @Test("an empty file is a valid new database and is kept")
    func emptyFile() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        #expect(FileManager.default.createFile(atPath: url.path, contents: Data()))
        let (store, report) = try SchedulerStore.open(at: url, now: Sample.now)
        #expect(report.movedAsideCorruptFile == nil)
        #expect(report.corruptionDetail == nil)
        try store.upsertRequest(Sample.request("fresh"))
        #expect(try store.pendingRequests() == [Sample.request("fresh")])
        #expect(try directory.listing().allSatisfy { !$0.contains("corrupt") })
    }

    @Test("a taken moved-aside name gets -1, and the older file is kept")
    func movedAsideNameCollision() throws {
        let directory = try TemporaryDirectory()
        let earlier = Data("an earlier corrupt store".utf8)
        try earlier.write(to: directory.file(Self.movedName))
        let bytes = Self.garbage(count: 4_096, seed: 1)
        try bytes.write(to: directory.file("store.sqlite"))
        _ = try expectMovedAside(in: directory, damagedBytes: bytes, movedName: Self.movedName + "-1")
        #expect(try Data(contentsOf: directory.file(Self.movedName)) == earlier)
    }

    /// Companions SQLite made when the opening examined the file: removed when they hold
    /// nothing of it (a -shm index, an empty -wal or -journal), moved with it when they hold
    /// bytes; those that were there before always move.
    @Test("companions the examination made are removed when empty, moved when they hold bytes")
    func companionsMadeByTheExaminationAreRemovedOnlyWhenEmpty() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.sqlite").path
        let written = Self.garbage(count: 700, seed: 5)
        try Self.garbage(count: 4_096, seed: 6).write(to: URL(fileURLWithPath: path))
        try written.write(to: URL(fileURLWithPath: path + "-wal"))
        try Data().write(to: URL(fileURLWithPath: path + "-journal"))
        try Self.garbage(count: 300, seed: 7).write(to: URL(fileURLWithPath: path + "-shm"))
        let moved = try CorruptStoreQuarantine.moveAside(path: path, now: Sample.now, companionsFound: [])
        #expect(try Data(contentsOf: URL(fileURLWithPath: moved + "-wal")) == written, "a -wal holding bytes moves")
        for suffix in ["-journal", "-shm"] {
            #expect(!FileManager.default.fileExists(atPath: moved + suffix) && !FileManager.default.fileExists(atPath: path + suffix), "\(suffix) removed")
        }
        // Found before the opening: moved, empty or not.
        try Self.garbage(count: 4_096, seed: 8).write(to: URL(fileURLWithPath: path))
        try Data().write(to: URL(fileURLWithPath: path + "-journal"))
        let again = try CorruptStoreQuarantine.moveAside(path: path, now: Sample.now, companionsFound: ["-journal"])
        #expect(FileManager.default.fileExists(atPath: again + "-journal"))
    }

    @Test("the -wal and -shm files move with the damaged database")
    func companionFilesMoveToo() throws {
        let directory = try TemporaryDirectory()
        let bytes = Self.garbage(count: 4_096, seed: 2)
        let wal = Self.garbage(count: 1_000, seed: 3)
        let shm = Self.garbage(count: 500, seed: 4)
        try bytes.write(to: directory.file("store.sqlite"))
        try wal.write(to: directory.file("store.sqlite-wal"))
        try shm.write(to: directory.file("store.sqlite-shm"))
        _ = try expectMovedAside(in: directory, damagedBytes: bytes)
        #expect(try Data(contentsOf: directory.file(Self.movedName + "-wal")) == wal)
        // SQLite rebuilds the -shm index when it opens a WAL, so only its presence is checked.
        #expect(FileManager.default.fileExists(atPath: directory.file(Self.movedName + "-shm").path))
        // The fresh store's own WAL is not the old one.
        let freshWAL = try? Data(contentsOf: directory.file("store.sqlite-wal"))
        #expect(freshWAL != wal)
    }
}
