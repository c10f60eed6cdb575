import CSQLite
import Foundation
import SchedulerCore
import Testing
@testable import SchedulerStore

/// A file that is another program's database is refused, named, and never written.
@Suite("Foreign databases and unusable locations")
struct ForeignFileTests {
    /// Creates an SQLite database at `url` with `script` (another program's).
    private func makeDatabase(_ url: URL, _ script: String) throws {
        let connection = try SQLiteConnection.open(path: url.path, mode: .readWrite)
        try connection.executeScript(script)
    }

    private func files(in directory: TemporaryDirectory) throws -> [String] {
        try directory.listing().filter { !$0.hasSuffix(".lock") }
    }

    @Test(
        "another program's database is refused with foreignDatabase naming the file, and left byte for byte",
        arguments: [
            ("user_version 0 with tables", "CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO photos (name) VALUES ('a')", "photos"),
            ("another application_id", "PRAGMA application_id = 1234; CREATE TABLE t (x)", "application_id"),
            ("a user_version but not our tables", "CREATE TABLE runs (x); PRAGMA user_version = 1", "pending_requests"),
        ]
    )
    func foreignRefused(_ label: String, _ script: String, _ mentioned: String) throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("scheduler.sqlite")
        try makeDatabase(url, script)
        let before = try Data(contentsOf: url)

        let error = try #require(throws: StoreError.self) { _ = try SchedulerStore.open(at: url, now: Sample.now) }
        #expect(error.code == .foreignDatabase, "\(label)")
        #expect(error.message.contains(url.path))
        #expect(error.message.contains("not a scheduler store"))
        #expect(error.message.contains(mentioned), "\(label): \(error.message)")
        #expect(try Data(contentsOf: url) == before, "\(label): the foreign file was written")
        #expect(try files(in: directory) == ["scheduler.sqlite"], "\(label): nothing moved aside or created")

        let readError = try #require(throws: StoreError.self) { _ = try SchedulerStore.openForReading(at: url) }
        #expect(readError.code == .foreignDatabase)
    }

    @Test("an empty file and an empty database are initialised as new stores")
    func emptyFilesAreNew() throws {
        let directory = try TemporaryDirectory()
        try Data().write(to: directory.file("empty.sqlite"))
        try makeDatabase(directory.file("blank.sqlite"), "PRAGMA user_version = 0")
        for name in ["empty.sqlite", "blank.sqlite"] {
            let store = try openStore(directory.file(name))
            try store.upsertRequest(Sample.request("com.example.feedreader.refresh"))
            #expect(try store.pendingRequests().count == 1)
        }
    }

    @Test("an empty file is read as a store with nothing in it, as its owner adopts it (the reader said 'no schema')")
    func anEmptyFileReadsAsAnEmptyStore() throws {
        let directory = try TemporaryDirectory()
        try Data().write(to: directory.file("scheduler.sqlite"))
        let store = try SchedulerStore.openForReading(at: directory.file("scheduler.sqlite"))
        #expect(try store.pendingRequests().isEmpty)
        #expect(try store.runs().isEmpty)
        #expect(try files(in: directory) == ["scheduler.sqlite"], "nothing written beside it")
        #expect((try FileManager.default.attributesOfItem(atPath: directory.file("scheduler.sqlite").path)[.size] as? NSNumber)?.intValue == 0)
    }

    @Test("a link leading nowhere at the store's path is named and never followed to create a store; a state directory that is a file is named to a reader")
    func aLinkLeadingNowhereIsNeverFollowed() throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("state/scheduler.sqlite")
        try FileManager.default.createDirectory(atPath: directory.file("state").path, withIntermediateDirectories: true)
        let target = directory.file("elsewhere.sqlite")
        try FileManager.default.createSymbolicLink(atPath: store.path, withDestinationPath: target.path)
        let writing = try #require(throws: StoreError.self) { _ = try SchedulerStore.open(at: store, now: Sample.now) }
        #expect(writing.code == .cannotOpen)
        #expect(writing.message.contains("\(store.path): it is a symbolic link to \"\(target.path)\", which does not exist"), "\(writing.message)")
        #expect(!FileManager.default.fileExists(atPath: target.path), "no store created at the link's target")
        let reading = try #require(throws: StoreError.self) { _ = try SchedulerStore.openForReading(at: store) }
        #expect(reading.message.contains("which does not exist") && !reading.message.contains("there is no scheduler store"), "\(reading.message)")

        try Data("x".utf8).write(to: directory.file("plain"))
        let underFile = try #require(throws: StoreError.self) { _ = try SchedulerStore.openForReading(at: directory.file("plain/scheduler.sqlite")) }
        #expect(underFile.message.contains("\(directory.file("plain").path) is a regular file, not a directory"), "\(underFile.message)")
    }

    @Test("a store from before the application_id stamp is adopted and stamped")
    func legacyStoreStamped() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("scheduler.sqlite")
        do {
            let store = try openStore(url)
            try store.upsertRequest(Sample.request("com.example.feedreader.refresh"))
            try store.withConnection { (connection) throws(StoreError) in try connection.executeScript("PRAGMA application_id = 0") }
        }
        let store = try openStore(url)
        #expect(try store.pendingRequests().count == 1)
        let stamped = try store.withConnection { (connection) throws(StoreError) in
            try connection.query("PRAGMA application_id") { row in row.int64(0) }.first
        }
        #expect(stamped == Int64(SchemaMigrations.applicationID))
    }

    @Test("a store directory under a regular file or in a symlink loop is named in the error")
    func unusableDirectories() throws {
        let directory = try TemporaryDirectory()
        try Data("x".utf8).write(to: directory.file("plain"))
        let underFile = try #require(throws: StoreError.self) {
            _ = try SchedulerStore.open(at: directory.file("plain/state/scheduler.sqlite"), now: Sample.now)
        }
        #expect(underFile.code == .cannotOpen)
        #expect(underFile.message.contains("\(directory.file("plain").path) is a regular file, not a directory, so \(directory.file("plain/state").path) cannot be in it"), "\(underFile.message)")
        // The directory itself a regular file: said plainly (it read "X is a regular file, so
        // X cannot be a directory in it").
        #expect(DirectoryProblem.find(in: directory.file("plain").path)?.description == "\(directory.file("plain").path) is a regular file, not a directory")

        try FileManager.default.createSymbolicLink(atPath: directory.file("a").path, withDestinationPath: directory.file("b").path)
        try FileManager.default.createSymbolicLink(atPath: directory.file("b").path, withDestinationPath: directory.file("a").path)
        let loop = try #require(throws: StoreError.self) {
            _ = try SchedulerStore.open(at: directory.file("a/scheduler.sqlite"), now: Sample.now)
        }
        #expect(loop.message.contains("\(directory.file("a").path) is a symbolic link that loops"), "\(loop.message)")

        #expect(DirectoryProblem.find(in: directory.file("fresh/deeper").path) == nil)
        try FileManager.default.createSymbolicLink(atPath: directory.file("dangling").path, withDestinationPath: directory.file("nowhere").path)
        #expect(DirectoryProblem.find(in: directory.file("dangling/x").path)?.description.contains("which does not exist") == true)
    }

    @Test("a state directory is created with its parents, mode 0700, or the component and the system's reason are named")
    func creatingDirectories() throws {
        let directory = try TemporaryDirectory()
        let deep = directory.file("one/two/three").path
        #expect(StoreLocation.createDirectory(deep) == nil)
        var info = stat()
        #expect(stat(deep, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR && (info.st_mode & 0o777) == 0o700)
        #expect(StoreLocation.createDirectory(deep) == nil, "an existing directory is fine")
        // procfs makes no directories: Foundation said only "The file doesn't exist".
        let proc = StoreLocation.createDirectory("/proc/bgtask-test-\(getpid())")
        #expect(proc?.contains("/proc/bgtask-test-\(getpid()) cannot be created: its file system does not allow it") == true, "\(proc ?? "nil")")
        try Data("x".utf8).write(to: directory.file("plain"))
        #expect(StoreLocation.createDirectory(directory.file("plain/x").path)?.contains("is a regular file") == true)
    }
}
