#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SchedulerCore
import Testing
@testable import SchedulerStore

/// docs/ARCHITECTURE.md, "One owner per state directory": the store's owner holds a lock
/// the kernel checks; only it recovers; readers open read-only beside it.
@Suite("Ownership: the lock, recovery only by the owner, read-only readers")
struct OwnershipTests {
    @Test("the owner holds the lock file and writes its pid into it; the lock is released with the store")
    func ownerHoldsLock() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        #expect(SchedulerStore.owner(of: url) == nil)
        do {
            let store = try openStore(url)
            #expect(store.ownership?.url.lastPathComponent == "store.sqlite.lock")
            #expect(SchedulerStore.owner(of: url) == StateDirectoryLock.Holder(pid: getpid()))
            let written = try String(contentsOf: directory.file("store.sqlite.lock"), encoding: .utf8)
            #expect(written == "\(getpid())\n")
        }
        #expect(SchedulerStore.owner(of: url) == nil, "the lock outlived its store")
        // Released: the next owner gets it.
        #expect(throws: Never.self) { _ = try openStore(url) }
    }

    @Test("a look at the lock (a shared lock for an instant, as bgtask why takes) does not refuse the owner starting then")
    func aLookAtTheLockDoesNotRefuseTheOwner() throws {
        let directory = try TemporaryDirectory()
        let lockFile = directory.file("store.sqlite.lock").path
        let look = open(lockFile, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        try #require(look >= 0)
        defer { close(look) }
        #expect(flock(look, LOCK_SH | LOCK_NB) == 0)
        // The look ends 10 ms later, while the owner is already trying (it retries for 1 s).
        Thread.detachNewThread {
            usleep(10_000)
            _ = flock(look, LOCK_UN)
        }
        let store = try openStore(directory.file("store.sqlite"))
        #expect(store.ownership != nil)
    }

    @Test("a FIFO or a symbolic link in the lock file's place is refused, never waited on or followed")
    func aLockFileThatIsNotARegularFileIsRefused() throws {
        let directory = try TemporaryDirectory()
        #expect(mkfifo(directory.file("fifo.sqlite.lock").path, 0o600) == 0)
        let fifo = try #require(throws: StoreError.self) { _ = try openStore(directory.file("fifo.sqlite")) }
        #expect(fifo.code == .cannotOpen)
        #expect(fifo.message.contains("fifo.sqlite.lock"))
        #expect(SchedulerStore.owner(of: directory.file("fifo.sqlite")) == nil)
        #expect(symlink(directory.file("elsewhere").path, directory.file("link.sqlite.lock").path) == 0)
        let link = try #require(throws: StoreError.self) { _ = try openStore(directory.file("link.sqlite")) }
        #expect(link.code == .cannotOpen)
        #expect(link.message.contains("it is a symbolic link, and a lock file must be a regular file; remove it"), "\(link.message)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("elsewhere").path), "the link was not followed")
    }

    @Test("close gives up the file and the lock at once; later calls fail with closed, naming the file")
    func closeReleasesOwnership() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let store = try openStore(url)
        try store.upsertRequest(Sample.request("sync"))
        store.close()
        #expect(store.ownership == nil)
        #expect(SchedulerStore.owner(of: url) == nil, "the lock is released while the object lives on")
        let error = try #require(throws: StoreError.self) { _ = try store.pendingRequests() }
        #expect(error.code == .closed)
        #expect(error.message.contains(url.path))
        store.close()  // twice: nothing happens
        let next = try openStore(url)
        #expect(try next.pendingRequests().map(\.identifier) == ["sync"], "what was committed before close is there")
    }

    @Test("a second owner is refused with locked, naming the holder's pid and the store; nothing is recovered")
    func secondOwnerRefused() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let owner = try openStore(url)
        let running = Sample.run(1, of: Sample.request("sync"), startedAt: Sample.now)
        try owner.recordRunStarted(running)

        let error = try #require(throws: StoreError.self) {
            _ = try SchedulerStore.open(at: url, now: Sample.now.addingTimeInterval(60))
        }
        #expect(error.code == .locked)
        #expect(error.holderPID == getpid())
        #expect(error.message.contains("process \(getpid())"))
        #expect(error.message.contains(url.path))
        // The run is really in progress: the refused opener did not mark it interrupted.
        #expect(try owner.run(RunID(1)) == running)
        #expect(try owner.pendingRequests().isEmpty)
    }

    @Test("the lock is exclusive between two lock objects of one process and names a foreign pid it reads")
    func lockTypeReportsHolder() throws {
        let directory = try TemporaryDirectory()
        let first = try StateDirectoryLock.acquire(in: directory.url, name: "owner.lock")
        let refused = try #require(throws: StoreError.self) {
            _ = try StateDirectoryLock.acquire(in: directory.url, name: "owner.lock")
        }
        #expect(refused.code == .locked)
        #expect(refused.holderPID == getpid())
        #expect(StateDirectoryLock.holder(in: directory.url, name: "owner.lock")?.description == "process \(getpid()) (this process)")
        #expect(StateDirectoryLock.holder(in: directory.url, name: "absent.lock") == nil)
        withExtendedLifetime(first) {}
    }

    @Test("a reader opens read-only while the owner writes in WAL mode, sees the run in progress, and changes nothing")
    func readOnlyReaderBesideOwner() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let owner = try openStore(url)
        let running = Sample.run(1, of: Sample.request("sync"), startedAt: Sample.now)
        try owner.recordRunStarted(running)

        let reader = try SchedulerStore.openForReading(at: url)
        #expect(reader.ownership == nil)
        #expect(try reader.runs() == [running])
        #expect(try reader.withConnection { $0.isReadOnly })
        let refusedWrite = try #require(throws: StoreError.self) { try reader.upsertRequest(Sample.request("sneaky")) }
        #expect(refusedWrite.code == .readOnly)
        // The owner keeps writing; the reader sees each commit.
        try owner.upsertRequest(Sample.request("later"))
        #expect(try reader.pendingRequests() == [Sample.request("later")])
        #expect(try owner.run(RunID(1)) == running)
    }

    @Test("a reader of a store nobody owns repairs nothing and writes no commit")
    func readerOfUnownedStoreWritesNothing() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let running = Sample.run(1, of: Sample.request("sync"), startedAt: Sample.now)
        do { try openStore(url).recordRunStarted(running) }
        let before = try Data(contentsOf: url)
        do {
            let reader = try SchedulerStore.openForReading(at: url)
            #expect(try reader.runs() == [running], "a reader must not recover runs")
        }
        #expect(try Data(contentsOf: url) == before)
        // SQLite may leave the -wal a read-only connection needs, but never with a commit in it.
        let wal = directory.file("store.sqlite-wal")
        if FileManager.default.fileExists(atPath: wal.path) {
            #expect(try Data(contentsOf: wal).isEmpty)
        }
        // The owner, once it opens, recovers the run.
        let (_, report) = try SchedulerStore.open(at: url, now: Sample.now.addingTimeInterval(60))
        #expect(report.interruptedRuns.map(\.id) == [RunID(1)])
    }

    @Test("a reader refuses a store too old to read instead of migrating it, and reads one that lacks only the quarantine")
    func readerDoesNotMigrate() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        do {
            let store = try openStore(url)
            try store.recordRunStarted(Sample.run(1, of: Sample.request("sync"), startedAt: Sample.now))
            try store.withConnection { (connection) throws(StoreError) in
                try connection.executeScript("DROP TABLE quarantined_requests; PRAGMA user_version = 2")
            }
        }
        // Version 2: everything a reader selects is there; nothing is migrated.
        #expect(try SchedulerStore.openForReading(at: url).runs().map(\.id) == [RunID(1)])
        #expect(try SchemaMigrations.version(of: SQLiteConnection.open(path: url.path, mode: .readOnly)) == 2)

        do {
            let raw = try SQLiteConnection.open(path: url.path, mode: .readWrite)
            try raw.executeScript("PRAGMA user_version = 1")
        }
        let before = try Data(contentsOf: url)
        let error = try #require(throws: StoreError.self) { _ = try SchedulerStore.openForReading(at: url) }
        #expect(error.code == .readOnly)
        #expect(error.message.contains("schema version 1"))
        #expect(try Data(contentsOf: url) == before)
    }
}
