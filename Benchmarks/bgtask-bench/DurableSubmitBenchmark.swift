import BackgroundTasks
import CSQLite
import Foundation
import SchedulerStore
import SchedulerCore

/// Benchmark (a): submits per second through the real durable path, next to the best
/// SQLite itself can do with the same durability.
///
/// Durable path: `SchedulerDriver.submit` on a driver over a file-backed `SchedulerStore`
/// (WAL, `synchronous = FULL`, the defaults), with an app attached through `BGAppContext`.
/// Each submit runs the engine's checks, commits one row (one fsync of the WAL), applies
/// the request to the engine and re-arms the wake timer.
///
/// Baseline: single-row `INSERT`s into a table with the same schema as `pending_requests`,
/// one implicit transaction per statement, one prepared statement reused, the same pragmas,
/// in the same directory.
///
/// The two run in alternating blocks, so a change in the disk's speed during the run
/// affects both alike.
enum DurableSubmitBenchmark {
    static let app = AppID("com.example.bench.submit")

    /// Per-operation timings of one series, accumulated over its blocks.
    private struct Series {
        var samples: [Double] = []
        var nanoseconds: UInt64 = 0

        mutating func measure(_ range: Range<Int>, _ operation: (Int) throws -> Void) rethrows {
            let blockStart = monotonicNanoseconds()
            for index in range {
                let start = monotonicNanoseconds()
                try operation(index)
                samples.append(Double(monotonicNanoseconds() - start) / 1_000)
            }
            nanoseconds += monotonicNanoseconds() - blockStart
        }

        var rate: Double { Double(samples.count) / (Double(nanoseconds) / 1e9) }
        var distribution: Distribution { Distribution(samples) }
    }

    static func run(count: Int, warmup: Int, blocks: Int) throws -> BenchmarkResult {
        let scratch = try ScratchDirectory("submit")
        defer { scratch.remove() }

        // The durable path.
        let total = warmup + count
        let identifiers = (0..<total).map { "com.example.bench.submit.task\($0)" }
        let (store, _) = try SchedulerStore.open(at: scratch.file("scheduler.sqlite"), now: Date())
        var configuration = SchedulerConfiguration()
        configuration.pendingLimits = [.refresh: 1, .processing: 1_000_000, .continuedProcessing: 10]
        let driver = SchedulerDriver(configuration: configuration, conditions: .favorable, clock: DispatchDriverClock(), store: store)
        let manifest = AppManifest(appID: app, permittedIdentifiers: identifiers, backgroundModes: ["processing"], source: "bgtask-bench")
        let context = BGAppContext(app: app, manifest: manifest, driver: driver)
        // Far enough ahead that nothing launches during the benchmark (a launch would add
        // writes of its own).
        let notBefore = Date().addingTimeInterval(86_400)
        func request(_ index: Int, at now: Date) -> PendingRequest {
            PendingRequest(app: app, identifier: identifiers[index], kind: .processing, earliestBeginDate: notBefore, submittedAt: now)
        }

        // The baseline, and the store alone (for the breakdown), in the same directory.
        let raw = try RawRequestTable(path: scratch.file("raw.sqlite").path)
        let (storeAlone, _) = try SchedulerStore.open(at: scratch.file("store-alone.sqlite"), now: Date())

        // The same durable path with manifests of the size real apps have: the identifiers
        // spread over apps of 10 each (a separate driver and store file, same directory).
        let (smallStore, _) = try SchedulerStore.open(at: scratch.file("small-manifests.sqlite"), now: Date())
        let smallDriver = SchedulerDriver(configuration: SchedulerConfiguration(), conditions: .favorable, clock: DispatchDriverClock(), store: smallStore)
        let smallApps = (0..<((total + 9) / 10)).map { AppID("com.example.bench.submit.app\($0)") }
        let smallContexts = smallApps.map { app in
            BGAppContext(app: app, manifest: AppManifest(appID: app, permittedIdentifiers: (0..<10).map { "\(app.rawValue).task\($0)" }, backgroundModes: ["processing"], source: "bgtask-bench"), driver: smallDriver)
        }
        func smallManifestSubmit(_ index: Int) throws {
            let app = smallApps[index / 10]
            try smallDriver.submit(PendingRequest(app: app, identifier: "\(app.rawValue).task\(index % 10)", kind: .processing, earliestBeginDate: notBefore, submittedAt: smallDriver.clock.now()))
        }

        func durableSubmit(_ index: Int) throws {
            try driver.submit(request(index, at: driver.clock.now()))
        }
        func rawInsert(_ index: Int) throws {
            try raw.insert(app: app.rawValue, identifier: identifiers[index], kind: "processing", earliestBegin: notBefore.timeIntervalSinceReferenceDate, submittedAt: Date().timeIntervalSinceReferenceDate)
        }
        func storeUpsert(_ index: Int) throws {
            try storeAlone.upsertRequest(request(index, at: Date()))
        }

        for index in 0..<warmup {
            try durableSubmit(index)
            try rawInsert(index)
            try storeUpsert(index)
            try smallManifestSubmit(index)
        }

        // Alternating blocks: durable, raw, store alone, durable with small manifests.
        var durable = Series()
        var baseline = Series()
        var storeOnly = Series()
        var smallManifests = Series()
        let blockSize = max(1, (count + blocks - 1) / blocks)
        var next = warmup
        while next < total {
            let block = next..<min(total, next + blockSize)
            try durable.measure(block, durableSubmit)
            try baseline.measure(block, rawInsert)
            try storeOnly.measure(block, storeUpsert)
            try smallManifests.measure(block, smallManifestSubmit)
            next = block.upperBound
        }

        // Every acknowledged submit must be in the store and in the engine.
        let stored = try store.pendingRequests(app: app).count
        let inEngine = driver.pendingRequests(of: app).count
        guard stored == total, inEngine == total, raw.rowCount() == total else {
            throw BenchmarkError("durable submit: expected \(total) rows, found \(stored) in the store, \(inEngine) in the engine, \(raw.rowCount()) in the baseline table")
        }
        guard try smallStore.pendingRequests().count == total else {
            throw BenchmarkError("durable submit (small manifests): expected \(total) rows in the store")
        }
        withExtendedLifetime(context) {}
        withExtendedLifetime(smallContexts) {}

        // The engine's share (pure, no I/O): check + apply, with this benchmark's manifest of
        // `total` permitted identifiers (AppManifest.permits compares them one by one) and,
        // for comparison, with a 10-identifier manifest as real apps have.
        let engineLarge = engineCost(manifestSize: total, firstPosition: warmup, submissions: count, notBefore: notBefore)
        let engineSmall = engineCost(manifestSize: 10, firstPosition: 0, submissions: count, notBefore: notBefore)

        let ratio = durable.rate / baseline.rate
        let durableStats = durable.distribution
        let rawStats = baseline.distribution
        let storeStats = storeOnly.distribution
        let smallStats = smallManifests.distribution
        let smallRatio = smallManifests.rate / baseline.rate
        let fileSystem = fileSystemDescription(of: scratch.url.path)

        say("  durable submit (SchedulerDriver.submit):  \(format(durable.rate, 0)) submits/s   p50 \(format(durableStats.median)) us  p99 \(format(durableStats.percentile(99))) us")
        say("  raw SQLite INSERT (same pragmas):         \(format(baseline.rate, 0)) inserts/s   p50 \(format(rawStats.median)) us  p99 \(format(rawStats.percentile(99))) us")
        say("  ratio durable/raw: \(format(ratio, 3))   (\(count) of each after \(warmup) warm-up, \(blocks) alternating blocks; \(fileSystem))")
        func label(_ text: String) -> String { text.padding(toLength: 52, withPad: " ", startingAt: 0) }
        say("  breakdown (informational, no target):")
        say("    \(label("SchedulerStore.upsertRequest alone:"))\(format(storeOnly.rate, 0))/s   p50 \(format(storeStats.median)) us   (\(format(storeOnly.rate / baseline.rate, 3)) of raw)")
        say("    \(label("durable submit, \(smallApps.count) apps x 10-identifier manifests:"))\(format(smallManifests.rate, 0))/s   p50 \(format(smallStats.median)) us   (\(format(smallRatio, 3)) of raw)")
        say("    \(label("engine checkSubmit+submit alone (pure, no I/O):"))p50 \(format(engineLarge.median, 2)) us with the one app's \(total)-identifier manifest, \(format(engineSmall.median, 2)) us with a 10-identifier one")
        if engineLarge.median > 10 * engineSmall.median {
            say("    note: the one-app series pays AppManifest.permits, a linear scan of the \(total) permitted identifiers, on every submit")
        }

        return BenchmarkResult(
            name: "durable-submit",
            title: "Durable submit throughput vs raw SQLite INSERT (WAL, synchronous=FULL)",
            target: "ratio >= 0.5",
            value: ratio,
            unit: "ratio",
            pass: ratio >= 0.5,
            metrics: [
                "durable_submits_per_s": durable.rate,
                "raw_inserts_per_s": baseline.rate,
                "ratio": ratio,
                "durable_p50_us": durableStats.median,
                "durable_p99_us": durableStats.percentile(99),
                "raw_p50_us": rawStats.median,
                "raw_p99_us": rawStats.percentile(99),
                "store_upsert_per_s": storeOnly.rate,
                "store_upsert_p50_us": storeStats.median,
                "engine_check_submit_p50_us_large_manifest": engineLarge.median,
                "engine_check_submit_p50_us_10_identifier_manifest": engineSmall.median,
                "small_manifests_submits_per_s": smallManifests.rate,
                "small_manifests_p50_us": smallStats.median,
                "small_manifests_ratio": smallRatio,
                "manifest_identifiers": Double(total),
                "count": Double(count),
                "warmup": Double(warmup),
            ],
            notes: [
                "durable: SchedulerDriver.submit (engine checkSubmit + SchedulerStore.upsertRequest commit + engine submit + wake timer) on a file store, WAL, synchronous=FULL, one app whose manifest lists all \(total) identifiers",
                "raw: one INSERT per implicit transaction, prepared once, same schema and pragmas (journal_mode=WAL, synchronous=FULL, busy_timeout=5000, foreign_keys=ON), same directory",
                "breakdown series: SchedulerStore.upsertRequest alone on a third file in the same directory; engine alone without I/O; the durable path again with the identifiers spread over apps of 10 (realistic manifests) on a fourth file",
                "file system: \(fileSystem)",
            ]
        )
    }

    /// The pure engine's cost of `checkSubmit` + `submit` per request, for an app whose
    /// manifest lists `manifestSize` identifiers, submitting them from `firstPosition` on
    /// (cycling; a resubmission replaces the pending request, as it does on iOS).
    private static func engineCost(manifestSize: Int, firstPosition: Int, submissions: Int, notBefore: Date) -> Distribution {
        var configuration = SchedulerConfiguration()
        configuration.pendingLimits = [.refresh: 1, .processing: 1_000_000, .continuedProcessing: 10]
        var engine = SchedulerEngine(configuration: configuration, conditions: .favorable)
        let identifiers = (0..<manifestSize).map { "com.example.bench.submit.task\($0)" }
        engine.register(AppRegistration(app: app, manifest: AppManifest(appID: app, permittedIdentifiers: identifiers, backgroundModes: ["processing"], source: "bgtask-bench")))
        let now = Date()
        var samples: [Double] = []
        samples.reserveCapacity(submissions)
        for index in 0..<submissions {
            // The same manifest positions as the durable series (for the large manifest).
            let identifier = identifiers[(firstPosition + index) % manifestSize]
            let request = PendingRequest(app: app, identifier: identifier, kind: .processing, earliestBeginDate: notBefore, submittedAt: now)
            let start = monotonicNanoseconds()
            do {
                try engine.checkSubmit(request, at: now)
                _ = engine.submit(request, at: now)
            } catch {
                return Distribution([.nan])
            }
            samples.append(Double(monotonicNanoseconds() - start) / 1_000)
        }
        return Distribution(samples)
    }
}

/// The baseline: a table shaped like `pending_requests`, written with bare SQLite calls.
final class RawRequestTable {
    private let db: OpaquePointer
    private let insertStatement: OpaquePointer

    init(path: String) throws {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK, let handle else {
            sqlite3_close_v2(handle)
            throw BenchmarkError("cannot open \(path)")
        }
        db = handle
        sqlite3_busy_timeout(db, 5_000)
        let mode = try Self.single(db, "PRAGMA journal_mode = WAL")
        guard mode.lowercased() == "wal" else { throw BenchmarkError("\(path): journal mode is \(mode), not wal") }
        try Self.exec(db, "PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL")
        guard try Self.single(db, "PRAGMA synchronous") == "2" else { throw BenchmarkError("\(path): synchronous is not FULL") }
        try Self.exec(db, """
            CREATE TABLE pending_requests (
                app TEXT NOT NULL,
                identifier TEXT NOT NULL,
                kind TEXT NOT NULL,
                earliest_begin REAL,
                submitted_at REAL NOT NULL,
                requires_network INTEGER NOT NULL,
                requires_power INTEGER NOT NULL,
                extras TEXT,
                PRIMARY KEY (app, identifier)
            ) WITHOUT ROWID
            """)
        var statement: OpaquePointer?
        let sql = "INSERT INTO pending_requests (app, identifier, kind, earliest_begin, submitted_at, requires_network, requires_power, extras) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        guard sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK, let statement else {
            throw BenchmarkError("cannot prepare the insert: \(String(cString: sqlite3_errmsg(db)))")
        }
        insertStatement = statement
    }

    deinit {
        sqlite3_finalize(insertStatement)
        sqlite3_close_v2(db)
    }

    func insert(app: String, identifier: String, kind: String, earliestBegin: Double, submittedAt: Double) throws {
        let statement = insertStatement
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        sqlite3_bind_text(statement, 1, app, Int32(app.utf8.count), csqlite_transient())
        sqlite3_bind_text(statement, 2, identifier, Int32(identifier.utf8.count), csqlite_transient())
        sqlite3_bind_text(statement, 3, kind, Int32(kind.utf8.count), csqlite_transient())
        sqlite3_bind_double(statement, 4, earliestBegin)
        sqlite3_bind_double(statement, 5, submittedAt)
        sqlite3_bind_int64(statement, 6, 0)
        sqlite3_bind_int64(statement, 7, 0)
        sqlite3_bind_null(statement, 8)
        let result = sqlite3_step(statement)
        guard result == SQLITE_DONE else {
            throw BenchmarkError("raw insert failed: \(String(cString: sqlite3_errmsg(db))) (\(result))")
        }
    }

    func rowCount() -> Int {
        (try? Self.single(db, "SELECT count(*) FROM pending_requests")).flatMap { Int($0) } ?? -1
    }

    private static func exec(_ db: OpaquePointer, _ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw BenchmarkError("`\(sql)` failed: \(String(cString: sqlite3_errmsg(db)))")
        }
    }

    /// The first column of the first row, as text.
    private static func single(_ db: OpaquePointer, _ sql: String) throws -> String {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw BenchmarkError("cannot prepare `\(sql)`: \(String(cString: sqlite3_errmsg(db)))")
        }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) else {
            throw BenchmarkError("`\(sql)` returned no row: \(String(cString: sqlite3_errmsg(db)))")
        }
        return String(cString: text)
    }
}

/// A benchmark that could not run as designed (a setup failure, not a MISS).
struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
