import CSQLite
import Foundation
import SchedulerCore
@testable import SchedulerStore
import Testing

/// A small file system of its own (tmpfs), mounted for one test and detached after it; `nil`
/// when this process may not mount (not root, no CAP_SYS_ADMIN).
final class SmallFileSystem {
    let directory: TemporaryDirectory
    var url: URL { directory.url }

    init?(megabytes: Int) {
        guard let directory = try? TemporaryDirectory() else { return nil }
        guard mount("tmpfs", directory.url.path, "tmpfs", 0, "size=\(megabytes)m,mode=0700") == 0 else { return nil }
        self.directory = directory
    }

    deinit {
        umount2(directory.url.path, Int32(MNT_DETACH))
    }

    /// Fills the file system but for about `kilobytes` KiB with a file of its own.
    func fill(leaving kilobytes: Int) throws {
        var info = statvfs()
        guard statvfs(url.path, &info) == 0 else { throw POSIXError(.EIO) }
        let free = Int(info.f_bavail) * Int(info.f_frsize) - kilobytes * 1024
        let filler = url.appendingPathComponent("filler")
        guard FileManager.default.createFile(atPath: filler.path, contents: nil) else { throw POSIXError(.ENOSPC) }
        let handle = try FileHandle(forWritingTo: filler)
        defer { try? handle.close() }
        try handle.write(contentsOf: Data(count: max(0, free)))
    }
}

/// Whether this process can mount a tmpfs (root, as here and in CI).
private let canMount: Bool = SmallFileSystem(megabytes: 1) != nil

/// A store on a full or small disk (an outside probe on real tmpfs file systems).
@Suite(.enabled(if: canMount, "mounting a tmpfs needs root")) struct FullDiskTests {
    /// The store's own -wal filled a disk it had to itself: SQLite checkpoints at 1,000
    /// pages (about 4 MB), so on a 1 MiB disk 223 submissions of 500 were taken and every
    /// write after was refused, for good (the database file 4 KB, its -wal 1 MB). A write
    /// refused for a full disk now checkpoints the -wal away and is tried once more.
    @Test func theStoresOwnLogDoesNotFillASmallDisk() throws {
        let disk = try #require(SmallFileSystem(megabytes: 1))
        defer { withExtendedLifetime(disk) {} }  // mounted until the store's last write
        let url = disk.url.appendingPathComponent("scheduler.sqlite")
        let store = try openStore(url)
        for index in 0..<500 {
            // One statement of its own, and a transaction of several: both paths.
            try store.upsertRequest(Sample.request("p\(index % 10)", submittedAt: Sample.now.addingTimeInterval(Double(index))))
            if index % 50 == 0 {
                try store.upsertRequests((0..<3).map { Sample.request("batch\($0)", submittedAt: Sample.now.addingTimeInterval(Double(index))) })
            }
        }
        #expect(try store.pendingRequests().count == 13)
    }

    /// A disk full of something else refuses the write, saying that the file system is
    /// full, with the system's error where SQLite's words hide it; nothing written is lost.
    @Test func aFullDiskIsNamedAsSuch() throws {
        let disk = try #require(SmallFileSystem(megabytes: 1))
        defer { withExtendedLifetime(disk) {} }
        let url = disk.url.appendingPathComponent("scheduler.sqlite")
        let store = try openStore(url)
        try store.upsertRequest(Sample.request("kept"))
        try disk.fill(leaving: 0)
        var refused: StoreError?
        for index in 0..<2_000 where refused == nil {
            do throws(StoreError) {
                try store.upsertRequest(Sample.request("more\(index)", submittedAt: Sample.now.addingTimeInterval(Double(index))))
            } catch {
                refused = error
            }
        }
        let error = try #require(refused, "a full disk took every write")
        #expect(error.message.contains("the file system holding it is full"), "\(error)")
        #expect(error.mayPassIfRetried)
        #expect(try store.pendingRequests().contains { $0.identifier == "kept" })
    }

    /// A store whose making failed for a full disk is not left half made: it read next time
    /// as a store copied without its -wal, was set aside and the user told to put back a
    /// -wal that never existed (an outside probe, 44 and 60 KiB free).
    @Test func aStoreWhoseMakingFailedIsMadeAfreshOnceThereIsRoom() throws {
        var failures = 0
        for kilobytes in [8, 16, 24, 32, 44, 60, 80] {
            let disk = try #require(SmallFileSystem(megabytes: 1))
            defer { withExtendedLifetime(disk) {} }
            let url = disk.url.appendingPathComponent("scheduler.sqlite")
            try disk.fill(leaving: kilobytes)
            do {
                _ = try SchedulerStore.open(at: url, now: Sample.now)
                continue
            } catch {
                failures += 1
                #expect(error.message.contains("full"), "\(kilobytes) KiB: \(error)")
            }
            // Nothing committed: nothing left; its first steps committed: kept, to be finished.
            #expect(!SchedulerStore.looksCopiedWithoutItsWAL(path: url.path), "\(kilobytes) KiB free: nothing half made is left to read as a copy")
            if kilobytes <= 60 { #expect(!FileManager.default.fileExists(atPath: url.path), "\(kilobytes) KiB free: nothing was committed, nothing is left") }
            try FileManager.default.removeItem(at: disk.url.appendingPathComponent("filler"))
            let (store, report) = try SchedulerStore.open(at: url, now: Sample.now)
            #expect(report.movedAsideWithoutSchema == nil, "\(kilobytes) KiB free")
            try store.upsertRequest(Sample.request("made"))
        }
        #expect(failures > 0, "no size left the making short of room")
    }

}

/// What a store error says of the statement and the system's error (an outside full-disk
/// probe: a long INSERT buried the cause; "disk I/O error (4874)" was ENOSPC).
@Suite struct StoreErrorTextTests {
    /// SQLite sets the system error only for a failed open or I/O, and never clears it: an
    /// earlier ENOSPC must not be said with a later, unrelated failure.
    @Test func onlyAFreshSystemErrorIsSaid() {
        let busy = SQLiteConnection.makeError(result: SQLITE_BUSY, sqliteMessage: "database is locked", path: "/s", action: "cannot run `COMMIT`", systemError: ENOSPC)
        #expect(!busy.message.contains("full") && !busy.message.contains("ENOSPC"), "\(busy)")
        let shm = SQLiteConnection.makeError(result: 4874, sqliteMessage: "disk I/O error", path: "/s", action: "cannot run `PRAGMA user_version`", systemError: ENOSPC)
        #expect(shm.message.contains("No space left on device (ENOSPC)") && shm.message.contains("the file system holding it is full"), "\(shm)")
        let quota = SQLiteConnection.makeError(result: 4874, sqliteMessage: "disk I/O error", path: "/s", action: "x", systemError: EDQUOT)
        #expect(quota.message.contains("its disk quota is used up") && !quota.message.contains("is full"), "\(quota)")
    }

    /// A statement in an error is one line, its verb and table kept, its lists elided.
    @Test func errorsNameAStatementByItsVerbAndTable() {
        #expect(SQLiteConnection.shown("INSERT OR REPLACE INTO pending_requests (app, identifier, kind) VALUES (?, ?, ?)") == "INSERT OR REPLACE INTO pending_requests (...) VALUES (...)")
        #expect(SQLiteConnection.shown("SELECT id, app,\n identifier FROM runs WHERE id = ?") == "SELECT ... FROM runs WHERE id = ?")
        #expect(SQLiteConnection.shown("COMMIT") == "COMMIT")
    }
}
