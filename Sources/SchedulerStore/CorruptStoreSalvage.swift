import CSQLite
import Foundation

/// What could be read back from a damaged store set aside (docs/daemon.md, "A damaged
/// store"): the rows copied into the fresh store, per table, and what stopped short.
public struct StoreSalvage: Sendable, Equatable {
    /// Rows copied into the fresh store, by table (`installed_apps`, `pending_requests`,
    /// `runs`...); tables with none are left out.
    public var copiedRows: [String: Int] = [:]
    /// What could not be read, as `table: why` (a damaged page in the middle of a table: the
    /// rows before and after it were copied), or why nothing could be read at all.
    public var problems: [String] = []

    /// Nothing copied, nothing to say.
    public var isEmpty: Bool { copiedRows.isEmpty && problems.isEmpty }
}

/// Copies what can still be read from a damaged store into the fresh store that took its
/// place, so that one damaged page does not cost every installed app, pending request and
/// logged run.
///
/// SQLite reads a table's rows in the order of its b-tree; a damaged page stops the scan with
/// `SQLITE_CORRUPT` when it is reached. Each table is read forward from its first key until
/// that happens, then backward from its last key until it happens again: every row outside
/// the damaged pages comes back. Rows are copied with `INSERT OR IGNORE` by column name (the
/// columns both schemas have, so an older store's rows come back too), in one transaction,
/// before the opening's own checks: the recovery of runs without an end, and the quarantine of
/// pending rows that do not decode, judge them as they judge any row. The damaged file is only
/// read, never written (`immutable`), and stays where it was set aside.
enum CorruptStoreSalvage {
    /// The tables copied, in an order where nothing depends on a later one.
    static let tables = ["installed_apps", "app_settings", "app_processes", "pending_requests", "quarantined_requests", "checkpoints", "runs", "run_measurements"]

    /// Copies what can be read of the store at `damagedPath` into `fresh` (migrated, empty).
    static func salvage(from damagedPath: String, into fresh: SQLiteConnection) -> StoreSalvage {
        let shm = damagedPath + "-shm"
        let shmFound = FileManager.default.fileExists(atPath: shm)
        let salvage = copyReadable(from: damagedPath, into: fresh)
        // A -shm SQLite made to read the -wal is an index of it, no part of the file set aside:
        // removed once the reading connection is gone (it was a local of the call above).
        if !shmFound { try? FileManager.default.removeItem(atPath: shm) }
        return salvage
    }

    /// ``salvage(from:into:)``'s copy, on a connection of its own that is closed when it returns.
    private static func copyReadable(from damagedPath: String, into fresh: SQLiteConnection) -> StoreSalvage {
        var salvage = StoreSalvage()
        // Read only, with the -wal that moved with it; where that cannot be read (a damaged
        // -wal), the file as it is (immutable: the -wal ignored, so commits only it held are
        // not copied). Nothing writes a file set aside.
        // Without a -wal beside it there is nothing but the file to read: immutable at once, so
        // that SQLite makes no -shm and -wal beside a file set aside (an outside probe found
        // both made). With one, reading it takes a -shm, which SQLite makes.
        let hasWAL = FileManager.default.fileExists(atPath: damagedPath + "-wal")
        var opened: (SQLiteConnection, Set<String>)?
        var failure = ""
        for mode in hasWAL ? [SQLiteConnection.AccessMode.readOnly, .readOnlyImmutable] : [.readOnlyImmutable] {
            do {
                let connection = try SQLiteConnection.open(path: damagedPath, mode: mode)
                let tables = Set(try connection.query("SELECT name FROM sqlite_master WHERE type = 'table'") { row in row.text(0) })
                opened = (connection, tables)
                break
            } catch {
                failure = error.sqliteMessage ?? error.message
            }
        }
        guard let (damaged, present) = opened else {
            salvage.problems.append("its list of tables cannot be read (\(failure)): nothing could be copied")
            return salvage
        }
        do {
            try fresh.executeScript("BEGIN IMMEDIATE")
            for table in tables where present.contains(table) {
                let (copied, problem) = copy(table, from: damaged, into: fresh)
                if copied > 0 { salvage.copiedRows[table] = copied }
                if let problem { salvage.problems.append("\(table): \(problem)") }
            }
            try fresh.executeScript("COMMIT")
        } catch {
            try? fresh.executeScript("ROLLBACK")
            salvage.copiedRows = [:]
            salvage.problems.append("the rows read could not be written into the fresh store (\(error.message)): nothing was copied")
        }
        return salvage
    }

    /// The columns of `table` on `connection`, in order, with their place in the primary key
    /// (0 when not in it).
    private static func columns(of table: String, on connection: SQLiteConnection) throws(StoreError) -> [(name: String, keyPosition: Int)] {
        // Table names come from this file's list, never from the file read.
        try connection.query("PRAGMA table_info(\(table))") { row in (row.text(1), Int(row.int64(5))) }
    }

    /// Copies the readable rows of `table`; the count, and why some could not be read.
    private static func copy(_ table: String, from damaged: SQLiteConnection, into fresh: SQLiteConnection) -> (Int, String?) {
        let wanted: [String]
        let order: String
        do {
            let target = try columns(of: table, on: fresh)
            let source = try columns(of: table, on: damaged)
            let sourceNames = Set(source.map(\.name))
            wanted = target.map(\.name).filter { sourceNames.contains($0) }
            let key = source.filter { $0.keyPosition > 0 }.sorted { $0.keyPosition < $1.keyPosition }.map(\.name)
            // A table without a declared key (the quarantine) is in rowid order.
            order = key.isEmpty ? "rowid" : key.joined(separator: ", ")
        } catch {
            return (0, "its columns cannot be read (\(error.sqliteMessage ?? error.message))")
        }
        guard !wanted.isEmpty else { return (0, nil) }
        let list = wanted.joined(separator: ", ")
        let descending = order.split(separator: ",").map { "\($0.trimmingCharacters(in: .whitespaces)) DESC" }.joined(separator: ", ")
        let placeholders = Array(repeating: "?", count: wanted.count).joined(separator: ", ")
        let insert = "INSERT OR IGNORE INTO \(table) (\(list)) VALUES (\(placeholders))"
        // Each row is written as it is read (the two files are two connections): a table of
        // any size is never held in memory.
        var copied = 0
        var refused = 0
        var firstRefusal: String?
        func copy(_ row: [SQLiteValue]) {
            do {
                try fresh.execute(insert, row)
                copied += Int(sqlite3_changes(fresh.handle))
            } catch {
                // A row the fresh schema refuses (a NULL where NOT NULL holds): left out.
                refused += 1
                if firstRefusal == nil { firstRefusal = error.sqliteMessage ?? error.message }
            }
        }
        var problems: [String] = []
        let forward = read("SELECT \(list) FROM \(table) ORDER BY \(order)", columns: wanted.count, on: damaged, each: copy)
        if let stopped = forward.stopped {
            // Backward from the last key, until the damage again.
            let backward = read("SELECT \(list) FROM \(table) ORDER BY \(descending)", columns: wanted.count, on: damaged, each: copy)
            problems.append("rows in damaged pages could not be read (\(stopped)); \(forward.count) before them and \(backward.count) after them were read")
        }
        if let firstRefusal {
            problems.append("\(refused) row(s) were refused by the fresh store (the first: \(firstRefusal))")
        }
        return (copied, problems.isEmpty ? nil : problems.joined(separator: "; "))
    }

    /// Calls `each` with the rows `sql` gives until its end or the first error: how many
    /// it gave, and SQLite's message for the error.
    private static func read(_ sql: String, columns count: Int, on connection: SQLiteConnection, each: ([SQLiteValue]) -> Void) -> (count: Int, stopped: String?) {
        var rows = 0
        do {
            try connection.execute(sql) { row in
                rows += 1
                each((0..<Int32(count)).map { row.value($0) })
            }
            return (rows, nil)
        } catch {
            return (rows, error.sqliteMessage ?? error.message)
        }
    }
}
