import BackgroundTasks
import CLibPQ
import Foundation
import PostgreSQLStore
import SchedulerStore
import Synchronization
import SchedulerCore

/// The PostgreSQL server of the replica benchmarks: a throwaway one, `initdb` and
/// `pg_ctl` from Debian's postgresql package in a scratch directory, on a Unix socket only,
/// as the `postgres` user when the benchmark runs as root (`fsync` stays on, the default:
/// the figures are of durable commits); or, when ``socketVariable`` names a directory, the
/// server already listening there, so that other queues can be measured on the same one.
final class BenchPostgreSQLServer {
    /// The environment variable naming an existing server's socket directory.
    static let socketVariable = "BGTASK_BENCH_POSTGRES_SOCKET"

    /// The throwaway server's directory (data, logs, socket); `nil` for an existing server.
    let directory: String?
    let socketDirectory: String
    /// What the benchmarks were measured on, for their notes: which server, and the
    /// settings that decide what a commit costs.
    private(set) var summary = ""

    /// The databases created on an existing server, dropped by ``stop()``.
    private var createdDatabases: [String] = []
    /// The command that stops the throwaway server; `nil` for an existing one, which is
    /// never stopped.
    private let stopCommand: String?

    /// Starts a throwaway server, or checks the one ``socketVariable`` names.
    init(environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        if let given = environment[Self.socketVariable] {
            try Self.checkSocketDirectory(given)
            directory = nil
            socketDirectory = given
            stopCommand = nil
            summary = "the existing server at \(given) (\(Self.socketVariable))"
        } else {
            let binaries = "/usr/lib/postgresql/15/bin"
            guard FileManager.default.isExecutableFile(atPath: "\(binaries)/initdb") else {
                throw BenchError("PostgreSQL 15 is not installed (apt-get install postgresql), and \(Self.socketVariable) names no running server")
            }
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-bench-pg-\(UUID().uuidString)").path
            self.directory = directory
            socketDirectory = directory
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
            let asServer = getuid() == 0 ? "/usr/bin/setpriv --reuid=postgres --regid=postgres --init-groups " : ""
            if getuid() == 0 { try Self.shell("chown postgres:postgres '\(directory)'") }
            try Self.shell("\(asServer)\(binaries)/initdb -D '\(directory)/data' -A trust -U postgres > '\(directory)/initdb.log' 2>&1 < /dev/null")
            try Self.shell("\(asServer)\(binaries)/pg_ctl -D '\(directory)/data' -l '\(directory)/server.log' -w -s -o \"-c listen_addresses='' -c unix_socket_directories='\(directory)' -c max_connections=100\" start > '\(directory)/pg_ctl.log' 2>&1 < /dev/null")
            stopCommand = "\(asServer)\(binaries)/pg_ctl -D '\(directory)/data' -m immediate -w -s stop > /dev/null 2>&1 < /dev/null"
            summary = "a throwaway server (initdb in \(directory))"
        }
        do {
            let connection = try RawConnection(address: address())
            let settings = try ["server_version", "fsync", "synchronous_commit"].map { "\($0)=\(try connection.single("SHOW \($0)"))" }
            summary += ", " + settings.joined(separator: ", ")
        } catch {
            stop()
            throw error
        }
        say("  PostgreSQL: \(summary)")
    }

    /// Checks that `path`, the value of ``socketVariable``, is a directory holding the
    /// socket of a server on port 5432.
    static func checkSocketDirectory(_ path: String) throws {
        let named = "\(socketVariable)=\(path)"
        guard path.hasPrefix("/") else {
            throw BenchError("\(named): not an absolute path (libpq reads a relative one as a host name)")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw BenchError("\(named): no such directory")
        }
        guard isDirectory.boolValue else { throw BenchError("\(named): not a directory") }
        let socket = "\(path)/.s.PGSQL.5432"
        var status = stat()
        guard lstat(socket, &status) == 0 else {
            throw BenchError("\(named): the directory holds no \(socket) (\(String(cString: strerror(errno)))); is a server listening there on port 5432?")
        }
        guard status.st_mode & S_IFMT == S_IFSOCK else {
            throw BenchError("\(named): \(socket) is not a socket")
        }
    }

    /// The key/value address of `database`.
    func address(_ database: String = "postgres") -> String { "host=\(socketDirectory) port=5432 dbname=\(database) user=postgres" }

    /// Creates a database and returns its address. On an existing server its name gets
    /// this process's id and a random suffix, so runs side by side (and databases a killed
    /// run left) never collide.
    func createDatabase(_ name: String) throws -> String {
        let database = directory == nil ? "\(name)_\(getpid())_\(UInt32.random(in: 0...UInt32.max))" : name
        let connection = try RawConnection(address: address())
        try connection.exec("CREATE DATABASE \(database)")
        if directory == nil {
            createdDatabases.append(database)
            say("  database \(database) created there (dropped at the end)")
        }
        return address(database)
    }

    /// Stops a throwaway server and removes its directory; on an existing server, drops the
    /// databases this benchmark created (forcing off connections a replica still holds).
    func stop() {
        if let stopCommand {
            try? Self.shell(stopCommand)
        }
        if let directory {
            try? FileManager.default.removeItem(atPath: directory)
        }
        guard !createdDatabases.isEmpty else { return }
        do {
            let connection = try RawConnection(address: address())
            for database in createdDatabases {
                try connection.exec("DROP DATABASE IF EXISTS \(database) WITH (FORCE)")
            }
            createdDatabases.removeAll()
        } catch {
            FileHandle.standardError.write(Data("bgtask-bench: could not drop the databases \(createdDatabases.joined(separator: ", ")) on \(socketDirectory): \(error)\n".utf8))
        }
    }

    /// Runs `command` with /bin/sh and waits for it (`system`: a plain waitpid, unlike
    /// Foundation's Process, which waits for descriptors the server keeps open).
    static func shell(_ command: String) throws {
        let status = system(command)
        guard status == 0 else { throw BenchError("`\(command)` failed with status \(status)") }
    }
}

/// An error that stops one benchmark.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A bare libpq connection: the baseline of raw single-row inserts.
final class RawConnection: @unchecked Sendable {
    // @unchecked: used by one thread at a time (each benchmark thread owns its own).
    let handle: OpaquePointer

    init(address: String) throws {
        guard let handle = PQconnectdb(address) else { throw BenchError("cannot connect to \(address): libpq is out of memory") }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines)
            PQfinish(handle)
            throw BenchError("cannot connect to \(address): \(message)")
        }
        self.handle = handle
        // The store sets this on each of its sessions; the baseline commits as durably
        // whatever the server's default (an existing server may have it off).
        try exec("SET synchronous_commit = on")
    }

    deinit { PQfinish(handle) }

    func exec(_ sql: String) throws {
        guard let result = PQexec(handle, sql) else { throw BenchError("\(sql): no result") }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw BenchError("\(sql): \(String(cString: PQresultErrorMessage(result)))")
        }
    }

    /// The first column of the first row `sql` returns, as text.
    func single(_ sql: String) throws -> String {
        guard let result = PQexec(handle, sql) else { throw BenchError("\(sql): no result") }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_TUPLES_OK, PQntuples(result) >= 1, PQnfields(result) >= 1, let value = PQgetvalue(result, 0, 0) else {
            throw BenchError("\(sql): \(String(cString: PQresultErrorMessage(result)))")
        }
        return String(cString: value)
    }

    /// Whether the insert is prepared on this connection.
    private var insertPrepared = false

    /// One single-row insert, its own transaction (autocommit), with parameters; prepared
    /// once per connection (`PQprepare`), as the store prepares its upsert, so the
    /// baseline pays no parsing or planning that ours does not.
    func insert(_ id: Int, payload: String) throws {
        if !insertPrepared {
            guard let prepared = PQprepare(handle, "raw_insert", "INSERT INTO raw_requests (id, payload, submitted_at) VALUES ($1, $2, 1.5)", 2, nil) else {
                throw BenchError("prepare: no result")
            }
            defer { PQclear(prepared) }
            guard PQresultStatus(prepared) == PGRES_COMMAND_OK else { throw BenchError("prepare: \(String(cString: PQresultErrorMessage(prepared)))") }
            insertPrepared = true
        }
        let values = [String(id), payload]
        let pointers = values.map { strdup($0) }
        defer { pointers.forEach { free($0) } }
        let result = pointers.map { UnsafePointer($0) }.withUnsafeBufferPointer { buffer in
            PQexecPrepared(handle, "raw_insert", 2, buffer.baseAddress, nil, nil, 0)
        }
        guard let result else { throw BenchError("insert: no result") }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else { throw BenchError("insert: \(String(cString: PQresultErrorMessage(result)))") }
    }
}

/// Benchmarks of replicas sharing a PostgreSQL store (docs/replicas.md).
enum ReplicaBenchmarks {
    static let app = AppID("com.example.bench.replicas")

    /// A driver of one replica over `address`, with the app attached (its handler counts
    /// runs into `ran` and completes at once), under the server profile.
    static func replica(_ name: String, address: String, identifiers: [String], manual: Bool = false, concurrency: Int = 16,
                        onRun: @escaping @Sendable (String) -> Void) throws -> (SchedulerDriver, BGAppContext) {
        let store = try PostgreSQLStore.open(address: address, replica: name, now: Date())
        var configuration = SchedulerConfiguration()
        configuration.pendingLimits = [.refresh: 1, .processing: 10_000_000, .continuedProcessing: 10]
        configuration.maximumConcurrentRuns = concurrency
        configuration.launchesOnlyWhenSimulated = manual
        let driver = SchedulerDriver(configuration: configuration, conditions: .favorable, clock: DispatchDriverClock(), store: store,
                                     log: .collecting(), policies: PolicySet(profile: .server), loadedRequests: try store.pendingRequests(app: app))
        let manifest = AppManifest(appID: app, permittedIdentifiers: identifiers, backgroundModes: ["processing"], source: "bgtask-bench")
        let context = BGAppContext(app: app, manifest: manifest, driver: driver)
        context.withCurrent {
            let application = BGApplication.shared
            application.launch()
            for identifier in identifiers {
                BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: DispatchQueue.global()) { task in
                    onRun(task.identifier)
                    task.setTaskCompleted(success: true)
                }
            }
            application.finishLaunching()
        }
        return (driver, context)
    }

    /// (o) Durable submits into the shared store against raw libpq single-row inserts on
    /// the same server, one submitter and 16 (16 replicas, each its own connection,
    /// against 16 raw connections), in alternating blocks.
    static func durableSubmit(count: Int, blocks: Int) throws -> BenchmarkResult {
        let server = try BenchPostgreSQLServer()
        defer { server.stop() }
        let address = try server.createDatabase("bench_submit")
        let identifiers = (0..<(count * 34)).map { "com.example.bench.replicas.t\($0)" }
        let warm = (0..<200).map { "com.example.bench.replicas.warm\($0)" }
        let notBefore = Date().addingTimeInterval(86_400)
        let (driver, context) = try replica("solo", address: address, identifiers: identifiers + warm) { _ in }
        let raw = try RawConnection(address: address)
        try raw.exec("CREATE TABLE raw_requests (id bigint PRIMARY KEY, payload text NOT NULL, submitted_at double precision NOT NULL)")
        // Warm-up, not counted: a fresh server's first commits (new WAL, cold caches,
        // first plans) are slower than any later ones.
        for (index, identifier) in warm.enumerated() {
            try driver.submit(PendingRequest(app: app, identifier: identifier, kind: .processing, earliestBeginDate: notBefore, submittedAt: Date()))
            try raw.insert(2_000_000 + index, payload: identifier)
        }
        var ours: [Double] = []
        var theirs: [Double] = []
        var oursTime: UInt64 = 0
        var theirsTime: UInt64 = 0
        let perBlock = count / blocks
        for block in 0..<blocks {
            let start = monotonicNanoseconds()
            for index in (block * perBlock)..<((block + 1) * perBlock) {
                let t = monotonicNanoseconds()
                try driver.submit(PendingRequest(app: app, identifier: identifiers[index], kind: .processing, earliestBeginDate: notBefore, submittedAt: Date()))
                ours.append(Double(monotonicNanoseconds() - t) / 1_000)
            }
            oursTime += monotonicNanoseconds() - start
            let rawStart = monotonicNanoseconds()
            for index in (block * perBlock)..<((block + 1) * perBlock) {
                let t = monotonicNanoseconds()
                try raw.insert(index, payload: identifiers[index])
                theirs.append(Double(monotonicNanoseconds() - t) / 1_000)
            }
            theirsTime += monotonicNanoseconds() - rawStart
        }
        withExtendedLifetime(context) {}
        let oursRate = Double(ours.count) / (Double(oursTime) / 1e9)
        let theirsRate = Double(theirs.count) / (Double(theirsTime) / 1e9)

        // 16 threads of this one replica at once (a server's request handlers), against 16
        // raw connections, in alternating blocks: the replica's submits share commits
        // (SubmitGroup), each still durable when it returns.
        let submitters = 16
        let threadEach = max(1, count / submitters / blocks) * blocks
        let threadPerBlock = threadEach / blocks
        let threadRaws = try (0..<submitters).map { _ in try RawConnection(address: address) }
        let threadFailures = Mutex(0)
        var threadsOurs = 0.0
        var threadsTheirs = 0.0
        for block in 0..<blocks {
            threadsOurs += measureConcurrently(submitters) { worker in
                for index in (block * threadPerBlock)..<((block + 1) * threadPerBlock) {
                    let position = count + worker * threadEach + index
                    do {
                        try driver.submit(PendingRequest(app: app, identifier: identifiers[position], kind: .processing, earliestBeginDate: notBefore, submittedAt: Date()))
                    } catch {
                        threadFailures.withLock { $0 += 1 }
                    }
                }
            }
            threadsTheirs += measureConcurrently(submitters) { worker in
                for index in (block * threadPerBlock)..<((block + 1) * threadPerBlock) {
                    do { try threadRaws[worker].insert(3_000_000 + worker * threadEach + index, payload: "x") } catch { threadFailures.withLock { $0 += 1 } }
                }
            }
        }
        let threadsCount = submitters * blocks * threadPerBlock
        let threadsOursRate = Double(threadsCount) / threadsOurs
        let threadsTheirsRate = Double(threadsCount) / threadsTheirs
        let threadsRatio = threadsOursRate / threadsTheirsRate
        // Their requests are not used again: the replicas below submit other identifiers.
        let checker = try PostgreSQLStore.open(address: address, replica: "check", now: Date())
        let threadsDurable = try checker.pendingRequests(app: app).count >= warm.count + count + threadsCount
        checker.close()

        // The lone replica stops listening: 16 at once means 16 listeners.
        driver.stopSharing()

        // 16 at once: 16 replicas (each its own connection) against 16 raw connections.
        // A whole number of requests per submitter and block.
        let each = max(1, count / submitters / blocks) * blocks
        var replicas: [(SchedulerDriver, BGAppContext)] = []
        for number in 0..<submitters {
            replicas.append(try replica("r\(number)", address: address, identifiers: identifiers + warm) { _ in })
        }
        let raws = try (0..<submitters).map { _ in try RawConnection(address: address) }
        let failures = Mutex(0)
        let drivers = replicas.map(\.0)
        // Before the server stops (the deferred stop above runs after this one): listeners
        // that lose it would only log.
        defer { for replicaDriver in drivers { replicaDriver.stopSharing() } }
        // In alternating blocks, as above. Every replica hears of every submission of a
        // block before the raw inserts start, so that hearing is not measured against them;
        // how long it took is shown.
        let perBlockEach = each / blocks
        var concurrentOurs = 0.0
        var concurrentTheirs = 0.0
        var heardAfter = 0.0
        var everyoneHeard = true
        for block in 0..<blocks {
            concurrentOurs += measureConcurrently(submitters) { worker in
                let replicaDriver = drivers[worker]
                for index in (block * perBlockEach)..<((block + 1) * perBlockEach) {
                    let position = count * 18 + worker * each + index
                    do {
                        try replicaDriver.submit(PendingRequest(app: app, identifier: identifiers[position], kind: .processing, earliestBeginDate: notBefore, submittedAt: Date()))
                    } catch {
                        failures.withLock { $0 += 1 }
                    }
                }
            }
            let expected = warm.count + count + threadsCount + submitters * (block + 1) * perBlockEach
            let heardStart = monotonicNanoseconds()
            while drivers.contains(where: { $0.pendingRequests(of: app).count < expected }), monotonicNanoseconds() - heardStart < 60_000_000_000 {
                usleep(1_000)
            }
            heardAfter = max(heardAfter, Double(monotonicNanoseconds() - heardStart) / 1e9)
            everyoneHeard = everyoneHeard && !drivers.contains { $0.pendingRequests(of: app).count < expected }
            concurrentTheirs += measureConcurrently(submitters) { worker in
                for index in (block * perBlockEach)..<((block + 1) * perBlockEach) {
                    do { try raws[worker].insert(1_000_000 + worker * each + index, payload: "x") } catch { failures.withLock { $0 += 1 } }
                }
            }
        }
        let concurrentCount = submitters * blocks * perBlockEach
        let concurrentOursRate = Double(concurrentCount) / concurrentOurs
        let concurrentTheirsRate = Double(concurrentCount) / concurrentTheirs
        let ratio = oursRate / theirsRate
        let concurrentRatio = concurrentOursRate / concurrentTheirsRate
        let oursDistribution = Distribution(ours)
        let theirsDistribution = Distribution(theirs)
        say("  ours (SchedulerDriver.submit, PostgreSQLStore, synchronous_commit on): \(format(oursRate)) /s, p50 \(format(oursDistribution.median)) us, p99 \(format(oursDistribution.percentile(99))) us")
        say("  raw libpq single-row INSERTs, same server:                          \(format(theirsRate)) /s, p50 \(format(theirsDistribution.median)) us, p99 \(format(theirsDistribution.percentile(99))) us")
        say("  16 submitters at once: ours (16 threads of one replica) \(format(threadsOursRate)) /s, raw (16 connections) \(format(threadsTheirsRate)) /s, ratio \(format(threadsRatio, 3)); failures \(threadFailures.withLock { $0 })\(threadsDurable ? "" : "; NOT ALL ON THE SERVER")")
        say("  16 replicas at once (each its own connection and listener, one process): ours \(format(concurrentOursRate)) /s, raw (16 connections) \(format(concurrentTheirsRate)) /s, ratio \(format(concurrentRatio, 3)); failures \(failures.withLock { $0 })")
        say("  every replica knew every request of a block at most \(format(heardAfter, 3)) s after its last submit returned\(everyoneHeard ? "" : " (NOT within 60 s)")")
        for (replicaDriver, replicaContext) in replicas { withExtendedLifetime((replicaDriver, replicaContext)) {} }
        return BenchmarkResult(
            name: "replica-durable-submit", title: "durable submit to PostgreSQL vs raw libpq inserts",
            // The headline is the worse of the two ratios, so that it and the verdict agree.
            target: "both ratios >= 0.5 (one submitter; 16 submitters)", value: min(ratio, threadsRatio), unit: "ratio",
            pass: ratio >= 0.5 && threadsRatio >= 0.5 && failures.withLock { $0 } == 0 && threadFailures.withLock { $0 } == 0 && everyoneHeard && threadsDurable,
            metrics: [
                "ratio": ratio, "ours_per_s": oursRate, "raw_per_s": theirsRate, "ours_p50_us": oursDistribution.median, "ours_p99_us": oursDistribution.percentile(99),
                "raw_p50_us": theirsDistribution.median, "raw_p99_us": theirsDistribution.percentile(99),
                "threads16_ours_per_s": threadsOursRate, "threads16_raw_per_s": threadsTheirsRate, "threads16_ratio": threadsRatio,
                "concurrent16_ours_per_s": concurrentOursRate, "concurrent16_raw_per_s": concurrentTheirsRate, "concurrent16_ratio": concurrentRatio,
                "concurrent16_all_heard_s": heardAfter,
            ],
            notes: ["the same server, alternating blocks; 16 submitters: 16 threads of one replica (its submits share commits) against 16 raw connections; 16 replicas at once (shown, not in the verdict): 16 replicas in one process, each its own connection and listener, against 16 raw connections, each block of ours heard by every replica before the raw one starts (docs/replicas.md, \"Figures\"); the pass needs the one-submitter and 16-submitter ratios >= 0.5", "server: \(server.summary)"])
    }

    /// Runs `body(worker)` on `count` threads at once; the seconds from the start to the
    /// last one's end.
    static func measureConcurrently(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) -> Double {
        let group = DispatchGroup()
        let start = monotonicNanoseconds()
        for worker in 0..<count {
            group.enter()
            Thread.detachNewThread {
                body(worker)
                group.leave()
            }
        }
        group.wait()
        return Double(monotonicNanoseconds() - start) / 1e9
    }

    /// (p) A submit on replica A to its handler's start on replica B: A never launches by
    /// itself (its manual launch switch is on), so B hears of the request (NOTIFY) and runs it.
    static func crossReplicaLatency(runs: Int, warmup: Int) throws -> BenchmarkResult {
        let server = try BenchPostgreSQLServer()
        defer { server.stop() }
        let address = try server.createDatabase("bench_latency")
        let identifiers = (0..<(runs + warmup)).map { "com.example.bench.replicas.l\($0)" }
        let started = Mutex<[String: UInt64]>([:])
        let (a, contextA) = try replica("a", address: address, identifiers: identifiers, manual: true) { _ in }
        let (b, contextB) = try replica("b", address: address, identifiers: identifiers) { identifier in
            let now = monotonicNanoseconds()
            started.withLock { $0[identifier] = now }
        }
        // The first `warmup` runs are not counted (B's LISTEN and connections settling).
        var samples: [Double] = []
        for (index, identifier) in identifiers.enumerated() {
            let submittedAt = monotonicNanoseconds()
            try a.submit(PendingRequest(app: app, identifier: identifier, kind: .processing, submittedAt: Date()))
            let deadline = submittedAt + 10_000_000_000
            var ranAt: UInt64?
            while monotonicNanoseconds() < deadline {
                if let at = started.withLock({ $0[identifier] }) { ranAt = at; break }
                usleep(100)
            }
            guard let ranAt else { throw BenchError("\(identifier) did not start on replica b within 10 s") }
            if index >= warmup { samples.append(Double(ranAt - submittedAt) / 1e6) }
            // The run's end is written before the next submit.
            usleep(2_000)
        }
        withExtendedLifetime((contextA, contextB, b)) {}
        let distribution = Distribution(samples)
        say("  submit on A -> handler start on B: p50 \(format(distribution.median, 2)) ms, p99 \(format(distribution.percentile(99), 2)) ms, max \(format(distribution.max, 2)) ms (\(samples.count) runs)")
        let pass = distribution.median <= 5 && distribution.percentile(99) <= 20
        return BenchmarkResult(
            name: "replica-latency", title: "submit on replica A -> handler start on replica B",
            target: "p50 <= 5, p99 <= 20 ms", value: distribution.median, unit: "ms", pass: pass,
            metrics: ["p50_ms": distribution.median, "p99_ms": distribution.percentile(99), "max_ms": distribution.max],
            notes: ["A's manual launch switch is on, so only B launches; B learns of the request through LISTEN/NOTIFY, reads it, claims it (one commit) and starts the handler", "server: \(server.summary)"])
    }

    /// (q) Three replicas competing over `count` due requests: claims per second, and how
    /// many requests were launched twice (the target is none).
    static func competingClaims(count: Int) throws -> BenchmarkResult {
        let server = try BenchPostgreSQLServer()
        defer { server.stop() }
        let address = try server.createDatabase("bench_claims")
        let identifiers = (0..<count).map { "com.example.bench.replicas.c\($0)" }
        // The queue, written before the replicas start (in batches of 1,000).
        let loader = try PostgreSQLStore.open(address: address, replica: "loader", now: Date())
        let submittedAt = Date()
        for start in stride(from: 0, to: count, by: 1_000) {
            try loader.upsertRequests(identifiers[start..<min(count, start + 1_000)].map {
                PendingRequest(app: app, identifier: $0, kind: .processing, submittedAt: submittedAt)
            })
        }
        loader.close()
        let launches = Mutex<[String: Int]>([:])
        let begin = monotonicNanoseconds()
        var replicas: [(SchedulerDriver, BGAppContext)] = []
        for name in ["a", "b", "c"] {
            replicas.append(try replica(name, address: address, identifiers: identifiers) { identifier in
                launches.withLock { $0[identifier, default: 0] += 1 }
            })
            say("    replica \(name) started after \(format(Double(monotonicNanoseconds() - begin) / 1e9, 1)) s")
        }
        let deadline = begin + 600_000_000_000
        var nextReport = monotonicNanoseconds() + 10_000_000_000
        while launches.withLock({ $0.count }) < count, monotonicNanoseconds() < deadline {
            usleep(20_000)
            if monotonicNanoseconds() >= nextReport {
                nextReport += 10_000_000_000
                let states = replicas.map { "\($0.0.pendingRequests(of: app).count) pending, \($0.0.activeRuns.count) running" }
                say("    after \(format(Double(monotonicNanoseconds() - begin) / 1e9, 0)) s: \(launches.withLock { $0.count }) launched; replicas: \(states.joined(separator: "; "))")
            }
        }
        let elapsed = Double(monotonicNanoseconds() - begin) / 1e9
        let counts = launches.withLock { $0 }
        let doubles = counts.values.filter { $0 > 1 }.count
        let rate = Double(counts.count) / elapsed
        for (driver, context) in replicas { withExtendedLifetime((driver, context)) {} }
        say("  3 replicas, \(count) due requests: \(counts.count) launched in \(format(elapsed, 1)) s = \(format(rate)) claims/s; launched twice: \(doubles)")
        return BenchmarkResult(
            name: "replica-claims", title: "claims per second, three replicas competing over \(count) due requests",
            target: "0 double launches", value: Double(doubles), unit: "double launches", pass: doubles == 0 && counts.count == count,
            metrics: ["claims_per_s": rate, "seconds": elapsed, "launched": Double(counts.count), "double_launches": Double(doubles)],
            notes: ["each claim is one transaction (delete the pending row if it is still the submission, insert the run with a lease), each end another; the start-up of the three replicas (loading the queue) is in the time", "server: \(server.summary)"])
    }
}
