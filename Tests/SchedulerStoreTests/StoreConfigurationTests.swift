import Foundation
import SchedulerCore
import Testing
@testable import SchedulerStore

@Suite("Connection settings and schema")
struct StoreConfigurationTests {
    private func pragma(_ name: String, of store: SchedulerStore) throws -> String {
        try store.withConnection { (connection) throws(StoreError) in
            try connection.query("PRAGMA \(name)") { row in row.text(0) }.first ?? ""
        }
    }

    @Test("a file store uses WAL, a busy timeout, foreign keys, and the chosen synchronous level")
    func connectionSettings() throws {
        let directory = try TemporaryDirectory()
        let full = try openStore(directory.file("full.sqlite"))
        #expect(try pragma("journal_mode", of: full) == "wal")
        #expect(try pragma("busy_timeout", of: full) == "5000")
        #expect(try pragma("foreign_keys", of: full) == "1")
        #expect(try pragma("synchronous", of: full) == "2") // FULL
        #expect(try pragma("user_version", of: full) == String(SchemaMigrations.latestVersion))
        #expect(full.url == directory.file("full.sqlite"))

        let (normal, _) = try SchedulerStore.open(
            at: directory.file("normal.sqlite"), now: Sample.now, options: StoreOptions(synchronous: .normal)
        )
        #expect(try pragma("synchronous", of: normal) == "1") // NORMAL
    }

    @Test("a launch's commit alone does not wait for the disk: FULL again after it, even when it fails; a NORMAL store stays NORMAL")
    func aLaunchCommitsWithoutWaiting() throws {
        let directory = try TemporaryDirectory()
        let full = try openStore(directory.file("full.sqlite"))
        let inside = try full.withConnection { (connection) throws(StoreError) in
            try connection.transaction(waitingForDisk: false) { () throws(StoreError) in
                try connection.query("PRAGMA synchronous") { row in row.text(0) }.first
            }
        }
        #expect(inside == "1", "NORMAL for the commit")
        #expect(try pragma("synchronous", of: full) == "2", "FULL again after it")
        // Every time, not only the first (SQLite applies the pragma when it prepares it).
        let again = try full.withConnection { (connection) throws(StoreError) in
            try connection.transaction(waitingForDisk: false) { () throws(StoreError) in
                try connection.query("PRAGMA synchronous") { row in row.text(0) }.first
            }
        }
        #expect(again == "1")
        #expect(try pragma("synchronous", of: full) == "2")
        let waiting = try full.withConnection { (connection) throws(StoreError) in
            try connection.transaction { () throws(StoreError) in try connection.query("PRAGMA synchronous") { row in row.text(0) }.first }
        }
        #expect(waiting == "2")
        // A failed transaction sets it back too.
        #expect(throws: StoreError.self) {
            try full.withConnection { (connection) throws(StoreError) in
                try connection.transaction(waitingForDisk: false) { () throws(StoreError) in
                    try connection.execute("INSERT INTO no_such_table VALUES (1)")
                }
            }
        }
        #expect(try pragma("synchronous", of: full) == "2")
        // The launch record is such a commit, and is there after it.
        let request = Sample.request("launched")
        try full.upsertRequest(request)
        let run = Sample.run(1, of: request, startedAt: Sample.now)
        try full.recordRunStarted(run)
        #expect(try pragma("synchronous", of: full) == "2")
        #expect(try full.pendingRequests().isEmpty)
        #expect(try full.runs().map(\.id) == [run.id])

        let (normal, _) = try SchedulerStore.open(
            at: directory.file("normal.sqlite"), now: Sample.now, options: StoreOptions(synchronous: .normal)
        )
        let normalInside = try normal.withConnection { (connection) throws(StoreError) in
            try connection.transaction(waitingForDisk: false) { () throws(StoreError) in try connection.query("PRAGMA synchronous") { row in row.text(0) }.first }
        }
        #expect(normalInside == "1")
        #expect(try pragma("synchronous", of: normal) == "1")
    }

    @Test("an in-memory store has no URL and starts empty")
    func inMemoryStore() throws {
        let store = try SchedulerStore.inMemory()
        #expect(store.url == nil)
        #expect(try store.pendingRequests().isEmpty)
        #expect(try store.runs().isEmpty)
        #expect(try pragma("user_version", of: store) == String(SchemaMigrations.latestVersion))
    }

    @Test("a reader beside the owner sees its commits")
    func readerSeesOwnersCommits() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let writer = try openStore(url)
        let reader = try SchedulerStore.openForReading(at: url)
        try writer.upsertRequest(Sample.request("shared"))
        #expect(try reader.pendingRequests() == [Sample.request("shared")])
    }

    @Test("a store is stamped with the scheduler's application_id")
    func applicationIDStamp() throws {
        let directory = try TemporaryDirectory()
        let store = try openStore(directory.file("store.sqlite"))
        #expect(try pragma("application_id", of: store) == String(SchemaMigrations.applicationID))
        #expect(try pragma("application_id", of: SchedulerStore.inMemory()) == String(SchemaMigrations.applicationID))
    }

    @Test("the moved-aside suffix is the UTC date and time of now")
    func quarantineTimestamp() {
        #expect(CorruptStoreQuarantine.timestamp(Sample.now) == "20240102-030405")
        #expect(CorruptStoreQuarantine.timestamp(Date(timeIntervalSince1970: 0)) == "19700101-000000")
    }
}
