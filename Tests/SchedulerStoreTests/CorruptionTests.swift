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
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> StoreOpenReport {
        let url = directory.file("store.sqlite")
        let (store, report) = try SchedulerStore.open(at: url, now: Sample.now)
        let moved = directory.file(movedName)
        #expect(report.movedAsideCorruptFile?.path == moved.path, sourceLocation: sourceLocation)
        #expect(report.corruptionDetail?.isEmpty == false, sourceLocation: sourceLocation)
        #expect(try Data(contentsOf: moved) == damagedBytes, sourceLocation: sourceLocation)
        #expect(try store.pendingRequests().isEmpty, sourceLocation: sourceLocation)
        try store.upsertRequest(Sample.request("fresh"))
        #expect(try store.pendingRequests() == [Sample.request("fresh")], sourceLocation: sourceLocation)
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

        let report = try expectMovedAside(in: directory, damagedBytes: bytes)
        #expect(report.interruptedRuns.isEmpty)
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
        _ = try expectMovedAside(in: directory, damagedBytes: bytes)
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
