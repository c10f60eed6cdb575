// bgtask-bench: the project's performance targets, measured on this machine.
//
//   swift run -c release bgtask-bench [--quick] [--json FILE]
//
// Prints each benchmark with its target and PASS or MISS, and exits 0 either way (a MISS is
// a finding, not a failure); it exits 1 only when a benchmark cannot run as designed, and
// 64 on a usage error.
import Foundation

/// What the command line asks for.
struct BenchOptions: Equatable {
    var quick = false
    var jsonPath: String?
    /// The benchmarks to run, by letter (`a`, `b`, `c`, `c'`, `d`); empty means all.
    var only: Set<String> = []
}

/// The outcome of parsing the arguments: run, show help, or a usage error.
enum BenchCommand: Equatable {
    case run(BenchOptions)
    case help
    case usageError(String)
}

let usage = """
    usage: bgtask-bench [--quick] [--json FILE] [--only LETTERS]
      --quick         a reduced run (fewer iterations; numbers are noisier)
      --json FILE     also write the results as JSON to FILE
      --only LETTERS  run only these benchmarks, comma-separated (a, b, c, c', d, e, f, g, h,
                      i, j, k, l, m, n, o, p, q, r, s, t: the bgtaskd benchmarks i-n need bgtaskd and bgtask-bench-app
                      built beside bgtask-bench; the replica benchmarks o-q need PostgreSQL installed)
                      s (an idle embedded app) needs bgtask-bench-app; t (termination) bgtaskd too
    environment:
      BGTASK_BENCH_POSTGRES_SOCKET=DIR
                      the replica benchmarks o-q use the PostgreSQL server listening in DIR (a
                      directory holding .s.PGSQL.5432; port 5432, user postgres, trust
                      authentication) instead of starting a throwaway one: each creates a
                      database of its own with a unique name there and drops it at the end;
                      that server is never stopped, and its fsync setting is its own (our
                      store and the raw baseline both commit with synchronous_commit on)
    """

/// The benchmarks' letters, in the order they run.
let benchmarkLetters = ["a", "b", "d", "c", "c'", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r", "s", "t"]

/// Parses the arguments (without the program name).
func parseBenchArguments(_ arguments: [String]) -> BenchCommand {
    var options = BenchOptions()
    var remaining = arguments[...]
    while let argument = remaining.popFirst() {
        switch argument {
        case "--quick":
            options.quick = true
        case "--json":
            guard let path = remaining.popFirst(), !path.hasPrefix("--") else { return .usageError("--json needs a file path") }
            options.jsonPath = path
        case "--only":
            guard let list = remaining.popFirst(), !list.hasPrefix("--") else { return .usageError("--only needs a list of benchmark letters, such as a,d") }
            let letters = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            if let unknown = letters.first(where: { !benchmarkLetters.contains($0) }) {
                return .usageError("--only: unknown benchmark '\(unknown)' (known: \(benchmarkLetters.joined(separator: ", ")))")
            }
            options.only = Set(letters)
        case "-h", "--help":
            return .help
        default:
            if argument.hasPrefix("--json=") {
                options.jsonPath = String(argument.dropFirst("--json=".count))
            } else {
                return .usageError("unknown argument '\(argument)'")
            }
        }
    }
    return .run(options)
}

#if DEBUG
let buildConfiguration = "debug"
#else
let buildConfiguration = "release"
#endif

func swiftCompilerVersion() -> String {
    #if compiler(>=6.3)
    return "6.3+"
    #elseif compiler(>=6.2)
    return "6.2"
    #elseif compiler(>=6.1)
    return "6.1"
    #else
    return "6.0"
    #endif
}

/// The CPU model from `/proc/cpuinfo`.
func cpuModel() -> String {
    guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return "unknown CPU" }
    for line in info.split(separator: "\n") where line.hasPrefix("model name") {
        return line.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown CPU"
    }
    return "unknown CPU"
}

/// `/proc/loadavg`'s first three fields: other work on the machine skews latencies.
func loadAverage() -> String {
    guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
    return text.split(separator: " ").prefix(3).joined(separator: " ")
}

func runAll(_ options: BenchOptions) async -> Int32 {
    let date = ISO8601DateFormatter().string(from: Date())
    let processors = ProcessInfo.processInfo.activeProcessorCount
    let loadAtStart = loadAverage()
    let machine = "\(processors) processors (nproc), \(cpuModel()), \(ProcessInfo.processInfo.operatingSystemVersionString)"
    say("bgtask-bench \(date)")
    say("build: \(buildConfiguration)\(buildConfiguration == "debug" ? "  (numbers are meaningless: use swift run -c release bgtask-bench)" : "")   swift: \(swiftCompilerVersion())   machine: \(machine)")
    say("mode: \(options.quick ? "quick (reduced iterations)" : "full")   load average at start: \(loadAtStart)")
    say()

    let quick = options.quick
    var results: [BenchmarkResult] = []
    let benchmarks: [(letter: String, title: String, body: () async throws -> BenchmarkResult)] = [
        ("a", "a. Durable submit throughput", {
            try DurableSubmitBenchmark.run(count: quick ? 400 : 2_000, warmup: quick ? 50 : 200, blocks: quick ? 4 : 10)
        }),
        ("b", "b. Choosing the next run: 100,000 pending requests across 10,000 apps", {
            try EngineDecisionBenchmark.run(apps: 10_000, identifiersPerApp: 10, decisions: quick ? 1_000 : 5_000, warmupDecisions: quick ? 50 : 200)
        }),
        ("d", "d. Re-evaluating 100,000 pending requests after a condition change", {
            try ConditionChangeBenchmark.run(apps: 10_000, identifiersPerApp: 10, repetitions: quick ? 2 : 5)
        }),
        ("c", "c. In-process dispatch latency, due instant -> handler start (in-memory store)", {
            try DispatchLatencyBenchmark.run(store: .memory, runs: quick ? 60 : 250, warmup: 5)
        }),
        ("c'", "c'. In-process dispatch latency, due instant -> handler start (file store, as embedded)", {
            try DispatchLatencyBenchmark.run(store: .file, runs: quick ? 60 : 250, warmup: 5)
        }),
        ("e", "e. Simulation: one device, 20 apps, 365 days", {
            try SimulationBenchmarks.longDevice(appCount: 20, days: 365)
        }),
        ("f", "f. Simulation: a fleet of 100,000 devices for one day", {
            try SimulationBenchmarks.fleet(devices: quick ? 10_000 : 100_000, days: 1)
        }),
        ("g", "g. Simulation: the trace is deterministic", {
            try await SimulationBenchmarks.determinism(days: 7)
        }),
        ("h", "h. Scheduling quality: the policy against timers on every life", {
            try await SimulationBenchmarks.quality(days: 28)
        }),
        ("i", "i. bgtaskd: cold launch of a not-running app for its task, run launched -> handler start", {
            try DaemonBenchmarks.launches(warm: false, runs: quick ? 15 : 30, warmup: 2)
        }),
        ("j", "j. bgtaskd: warm launch of a suspended app for its task, run launched -> handler start", {
            try DaemonBenchmarks.launches(warm: true, runs: quick ? 15 : 30, warmup: 2)
        }),
        ("k", "k. bgtaskd: expiration punctuality, deadline -> expiration handler", {
            try DaemonBenchmarks.expiration(apps: quick ? 2 : 6, rounds: quick ? 3 : 20)
        }),
        ("l", "l. bgtaskd: idle cost with 1,000 pending requests none due within the hour", {
            try DaemonBenchmarks.idleCost(seconds: quick ? 10 : 60)
        }),
        ("m", "m. bgtaskd: concurrent submits from 16 apps vs one app alone", {
            try DaemonBenchmarks.concurrentSubmits(appCount: 16, seconds: quick ? 2 : 5)
        }),
        ("n", "n. bgtaskd: start-up with 10,000 installed apps and 100,000 pending requests", {
            try DaemonBenchmarks.startUpAtScale(apps: 10_000, requestsPerApp: 10)
        }),
        ("o", "o. Replicas: durable submit to PostgreSQL vs raw libpq single-row inserts", {
            try ReplicaBenchmarks.durableSubmit(count: quick ? 320 : 1_600, blocks: quick ? 4 : 8)
        }),
        ("p", "p. Replicas: submit on replica A -> handler start on replica B", {
            try ReplicaBenchmarks.crossReplicaLatency(runs: quick ? 50 : 200, warmup: 10)
        }),
        ("q", "q. Replicas: three replicas competing over due requests", {
            try ReplicaBenchmarks.competingClaims(count: quick ? 10_000 : 100_000)
        }),
        ("r", "r. Scale: choosing the next run with 1,000 to 1,000,000 pending requests, and the engine's memory", {
            try ScaleBenchmark.run(sizes: quick ? Array(ScaleBenchmark.fullSizes.prefix(3)) : ScaleBenchmark.fullSizes, decisions: quick ? 1_000 : 5_000, warmup: quick ? 50 : 200)
        }),
        ("s", "s. Embedded app (no daemon): idle cost with 1,000 pending requests none due within the hour", {
            try EmbeddedIdleBenchmark.run(seconds: quick ? 10 : 60, pending: 1000)
        }),
        ("t", "t. bgtaskd: termination punctuality, deadline + grace -> SIGTERM in the app", {
            try DaemonBenchmarks.termination(apps: quick ? 2 : 4, rounds: quick ? 2 : 5)
        }),
    ]
    var failed = false
    for (letter, title, body) in benchmarks where options.only.isEmpty || options.only.contains(letter) {
        say("== \(title)")
        let start = monotonicNanoseconds()
        do {
            let result = try await body()
            results.append(result)
            say("  target \(result.target): \(format(result.value, result.unit == "ratio" ? 3 : 2)) \(result.unit)  ->  \(result.verdict)   [\(format(Double(monotonicNanoseconds() - start) / 1e9)) s]")
        } catch {
            failed = true
            say("  ERROR: the benchmark could not run: \(error)")
        }
        say()
    }

    say("== Summary")
    for result in results {
        let marker = result.pass ? "PASS" : "MISS <<<"
        say("  \(result.name.padding(toLength: 24, withPad: " ", startingAt: 0)) \(result.target.padding(toLength: 18, withPad: " ", startingAt: 0)) measured \(format(result.value, result.unit == "ratio" ? 3 : 2)) \(result.unit)   \(marker)")
    }

    let loadAtEnd = loadAverage()
    say("load average at end: \(loadAtEnd)")
    if let path = options.jsonPath {
        let report = BenchmarkReport(date: date, configuration: buildConfiguration, processors: processors, quick: quick, swiftVersion: swiftCompilerVersion(), machine: machine, loadAverageAtStart: loadAtStart, loadAverageAtEnd: loadAtEnd, results: results)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        // A figure that could not be measured is NaN (a life with no launch has no median
        // staleness); JSON has no NaN, so it is written as the string "nan" rather than
        // failing the whole report.
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        do {
            try encoder.encode(report).write(to: URL(fileURLWithPath: path))
            say("results written to \(path)")
        } catch {
            FileHandle.standardError.write(Data("bgtask-bench: cannot write \(path): \(error)\n".utf8))
            return 1
        }
    }
    return failed ? 1 : 0
}

// Benchmark r runs each size in a child: bgtask-bench itself with the hidden
// `--scale-child PENDING DECISIONS WARMUP` first, which prints one JSON line and exits.
if CommandLine.arguments.count > 1, CommandLine.arguments[1] == ScaleBenchmark.childFlag {
    exit(ScaleBenchmark.childMain(Array(CommandLine.arguments.dropFirst(2))))
}

switch parseBenchArguments(Array(CommandLine.arguments.dropFirst())) {
case .help:
    print(usage)
    exit(0)
case .usageError(let message):
    FileHandle.standardError.write(Data("bgtask-bench: \(message)\n\(usage)\n".utf8))
    exit(64)
case .run(let options):
    exit(await runAll(options))
}
