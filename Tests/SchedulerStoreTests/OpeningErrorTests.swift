import CSQLite
import Foundation
import SchedulerCore
import Testing
@testable import SchedulerStore

@Suite("Refusing to open")
struct OpeningErrorTests {
    @Test("a database from a newer version is refused and left untouched")
    func schemaTooNew() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        do {
            let store = try openStore(url)
            try store.upsertRequest(Sample.request("keep-me"))
        }
        do {
            let raw = try SQLiteConnection.open(path: url.path, mode: .readWrite)
            try raw.executeScript("PRAGMA user_version = \(SchemaMigrations.latestVersion + 1)")
        }
        let bytesBefore = try Data(contentsOf: url)
        let listingBefore = try directory.listing()

        let error = try #require(throws: StoreError.self) {
            _ = try SchedulerStore.open(at: url, now: Sample.now)
        }
        #expect(error.code == .schemaTooNew)
        #expect(error.path == url.path)
        #expect(error.message.contains(url.path))
        #expect(error.message.contains("version \(SchemaMigrations.latestVersion + 1)"))
        #expect(try Data(contentsOf: url) == bytesBefore)
        #expect(try directory.listing() == listingBefore)
    }

    @Test("the parent directory is never created")
    func missingDirectory() throws {
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("missing/store.sqlite")
        let error = try #require(throws: StoreError.self) {
            _ = try SchedulerStore.open(at: url, now: Sample.now)
        }
        #expect(error.code == .cannotOpen)
        #expect(error.path == url.path)
        #expect(error.message.contains(url.path))
        #expect(error.message.contains("does not exist"))
        #expect(try directory.listing().isEmpty)
    }

    @Test("a parent that is a regular file cannot hold a store (not even for root)")
    func parentIsARegularFile() throws {
        let directory = try TemporaryDirectory()
        let plainFile = directory.file("plain")
        try Data("not a directory".utf8).write(to: plainFile)
        let url = plainFile.appendingPathComponent("store.sqlite")
        let error = try #require(throws: StoreError.self) {
            _ = try SchedulerStore.open(at: url, now: Sample.now)
        }
        #expect(error.code == .cannotOpen)
        #expect(error.message.contains(url.path))
        #expect(error.message.contains("\(plainFile.path) is a regular file"))
        #expect(try Data(contentsOf: plainFile) == Data("not a directory".utf8))
    }

    @Test("a directory in place of the database file is refused")
    func pathIsADirectory() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        let error = try #require(throws: StoreError.self) {
            _ = try SchedulerStore.open(at: url, now: Sample.now)
        }
        #expect(error.code == .cannotOpen)
        #expect(error.message.contains(url.path))
    }

    /// Root may write any file whatever its permission bits, so this reproduces what SQLite
    /// does with a file it cannot write, on every account: it opens it read-only without
    /// complaint. The store must refuse it, and must not take it for corrupt.
    @Test("a store that SQLite can only open read-only is refused, not moved aside")
    func readOnlyConnectionIsRefused() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        do { try openStore(url).upsertRequest(Sample.request("keep-me")) }
        let bytesBefore = try Data(contentsOf: url)
        let listingBefore = try directory.listing()

        let error = try #require(throws: StoreError.self) {
            _ = try SchedulerStore.open(at: url, now: Sample.now, options: .init(), mode: .readOnly)
        }
        #expect(error.code == .readOnly)
        #expect(error.message.contains(url.path))
        #expect(try Data(contentsOf: url) == bytesBefore)
        #expect(try directory.listing() == listingBefore)
        #expect(try openStore(url).pendingRequests() == [Sample.request("keep-me")])
    }
}

/// Real read-only files and directories. As root, permission bits do not stop writes, so
/// these use the immutable attribute (`chattr +i`), which root cannot write through either;
/// they are skipped where neither is possible (root without CAP_LINUX_IMMUTABLE).
/// Serialized because they change attributes that the tests must reliably undo.
@Suite("Read-only locations", .serialized)
struct ReadOnlyLocationTests {
    /// Makes `url` read-only for this process; returns the action that undoes it.
    private func makeReadOnly(_ url: URL, isDirectory: Bool) throws -> () -> Void {
        if geteuid() == 0 {
            try #require(setImmutable(url, true), "could not make \(url.path) immutable")
            return { _ = setImmutable(url, false) }
        }
        let original = isDirectory ? 0o755 : 0o644
        try FileManager.default.setAttributes([.posixPermissions: isDirectory ? 0o555 : 0o444], ofItemAtPath: url.path)
        return { try? FileManager.default.setAttributes([.posixPermissions: original], ofItemAtPath: url.path) }
    }

    @Test("a read-only database file is refused, named, and left as it is",
          .enabled(if: geteuid() != 0 || canMakeFilesImmutable()))
    func readOnlyFile() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        do { try openStore(url).upsertRequest(Sample.request("keep-me")) }
        let bytesBefore = try Data(contentsOf: url)
        let listingBefore = try directory.listing()
        let undo = try makeReadOnly(url, isDirectory: false)
        defer { undo() }

        let error = try #require(throws: StoreError.self) {
            _ = try SchedulerStore.open(at: url, now: Sample.now)
        }
        #expect(error.code == .readOnly)
        #expect(error.path == url.path)
        #expect(error.message.contains(url.path))
        #expect(try Data(contentsOf: url) == bytesBefore)
        #expect(try directory.listing() == listingBefore)
    }

    @Test("a store in a directory that cannot be written is refused, named, and left as it is",
          .enabled(if: geteuid() != 0 || canMakeFilesImmutable()))
    func unwritableDirectory() throws {
        let directory = try TemporaryDirectory()
        let locked = directory.file("locked")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: false)
        let existing = locked.appendingPathComponent("store.sqlite")
        do { try openStore(existing).upsertRequest(Sample.request("keep-me")) }
        let bytesBefore = try Data(contentsOf: existing)
        let undo = try makeReadOnly(locked, isDirectory: true)
        defer { undo() }

        for url in [existing, locked.appendingPathComponent("new.sqlite")] {
            let error = try #require(throws: StoreError.self) {
                _ = try SchedulerStore.open(at: url, now: Sample.now)
            }
            #expect(error.code == .readOnly)
            #expect(error.message.contains(url.path))
        }
        #expect(try Data(contentsOf: existing) == bytesBefore)
        #expect(try FileManager.default.contentsOfDirectory(atPath: locked.path).sorted() == ["store.sqlite", "store.sqlite.lock"])
    }

    @Test("a FIFO, a device or a socket in place of the database or its -wal file is refused, never opened")
    func specialFilesAreRefused() throws {
        let directory = try TemporaryDirectory()
        let pipe = directory.file("pipe.sqlite")
        #expect(mkfifo(pipe.path, 0o600) == 0)
        let walPipe = directory.file("wal.sqlite")
        do { try openStore(walPipe).upsertRequest(Sample.request("keep-me")) }
        #expect(mkfifo(walPipe.path + "-wal", 0o600) == 0)
        // Through a link, the -wal that counts is beside the link's target.
        let linked = directory.file("linked.sqlite")
        do { try openStore(directory.file("target.sqlite")).upsertRequest(Sample.request("keep-me")) }
        try FileManager.default.createSymbolicLink(atPath: linked.path, withDestinationPath: directory.file("target.sqlite").path)
        #expect(mkfifo(directory.file("target.sqlite").path + "-wal", 0o600) == 0)
        let device = directory.file("device.sqlite")
        try FileManager.default.createSymbolicLink(atPath: device.path, withDestinationPath: "/dev/null")
        // A read-only open of a FIFO would block until a writer came; a device would be
        // read as a database. Each is refused before SQLite sees it, naming the file.
        for (url, culprit, what) in [(pipe, pipe.path, "FIFO"), (walPipe, walPipe.path + "-wal", "FIFO"), (linked, directory.file("target.sqlite").path + "-wal", "FIFO"), (device, device.path, "character device")] {
            let writing = try #require(throws: StoreError.self) { _ = try SchedulerStore.open(at: url, now: Sample.now) }
            #expect(writing.code == .cannotOpen)
            #expect(writing.message.contains(culprit) && writing.message.contains(what), "\(writing.message)")
            let reading = try #require(throws: StoreError.self) { _ = try SchedulerStore.openForReading(at: url) }
            #expect(reading.code == .cannotOpen)
            #expect(reading.message.contains(culprit), "\(reading.message)")
            // The store named is the caller's to correct, never to remove; a file beside it is the store's.
            let advice = culprit == url.path ? "not a regular file: a scheduler store is a SQLite file" : "not a regular file; remove what is there"
            #expect(writing.message.hasSuffix(advice), "\(writing.message)")
        }
        var info = stat()
        #expect(lstat(pipe.path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO, "the FIFO was left as it is")
    }

    @Test("a store SQLite cannot open says the system's reason: permission denied is not just \"unable to open\"")
    func cannotOpenSaysTheSystemsReason() throws {
        // For real, through SQLite: a database behind a regular file (ENOTDIR, for root too).
        let directory = try TemporaryDirectory()
        let file = directory.file("plain")
        #expect(FileManager.default.createFile(atPath: file.path, contents: Data("x".utf8)))
        let behind = file.path + "/scheduler.sqlite"
        let opened = try #require(throws: StoreError.self) { _ = try SQLiteConnection.open(path: behind, mode: .readOnly) }
        #expect(opened.code == .cannotOpen)
        #expect(opened.message.contains("(SQLite result code 14): ") && opened.message.contains("ENOTDIR"), "\(opened.message)")
        // The words for permission denied (root cannot be refused one to show it here).
        let error = SQLiteConnection.makeError(result: SQLITE_CANTOPEN, sqliteMessage: "unable to open database file", path: "/s/scheduler.sqlite", action: "cannot open", systemError: EACCES)
        #expect(error.code == .cannotOpen)
        #expect(error.message.hasPrefix("the scheduler store at /s/scheduler.sqlite: cannot open: unable to open database file (SQLite result code 14): "), "\(error.message)")
        #expect(error.message.contains("EACCES"), "\(error.message)")
        // Another failure keeps SQLite's words alone (its errno may be stale).
        let busy = SQLiteConnection.makeError(result: SQLITE_BUSY, sqliteMessage: "database is locked", path: "/s/scheduler.sqlite", action: "cannot run", systemError: EACCES)
        #expect(busy.message == "the scheduler store at /s/scheduler.sqlite: cannot run: database is locked (SQLite result code 5); another process holds it locked (it was waited for)")
        let garbage = SQLiteConnection.makeError(result: SQLITE_NOTADB, sqliteMessage: "file is not a database", path: "/s/scheduler.sqlite", action: "cannot run `PRAGMA application_id`")
        #expect(garbage.message.hasSuffix("(SQLite result code 26); the file is not an SQLite database"), "\(garbage.message)")
    }
}
