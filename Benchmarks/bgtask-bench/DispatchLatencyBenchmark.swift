import BackgroundTasks
import Dispatch
import Foundation
import SchedulerStore
import SchedulerCore
import Synchronization

/// Benchmark (c): in-process dispatch latency, from a request's due instant to the start
/// of its handler, on the real-time embedded setup.
///
/// Setup: a `SchedulerDriver` on a `DispatchDriverClock`, one app (`BGAppContext`) with a
/// refresh handler registered through its `BGTaskScheduler` (on the app's default handler
/// queue) and launching finished. Each round submits a `BGAppRefreshTaskRequest` through
/// `BGTaskScheduler.submit` with `earliestBeginDate = now + 20...50 ms`, waits for the
/// handler, which reads `Date()` first thing and then calls `setTaskCompleted`. One run
/// at a time.
///
/// Measured: `handler's Date() - earliestBeginDate`, all wall clock (`Date()`), in one
/// process. It includes the Dispatch wall-clock timer's lateness (the driver asks for a
/// 1 ms leeway), the engine's decision, the store's launch record (for a file store: a
/// commit to the WAL done before the handler is called, which does not wait for the disk:
/// docs/ARCHITECTURE.md, "Durability"; the submit and the run's end do) and the hop to the
/// handler's queue. It does not include process start-up (handlers are in-process) nor the
/// submit itself. The split uses the run's `startedAt` (the driver's `now` when the timer
/// fired): "timer" = startedAt - due, "launch" = handler start - startedAt.
enum DispatchLatencyBenchmark {
    enum StoreKind: String {
        case memory = "in-memory store"
        case file = "file store (WAL; the launch's commit NORMAL, the rest FULL)"
    }

    static let app = AppID("com.example.bench.latency")
    static let identifier = "com.example.bench.latency.refresh"

    static func run(store kind: StoreKind, runs: Int, warmup: Int) throws -> BenchmarkResult {
        var scratch: ScratchDirectory?
        let store: SchedulerStore
        switch kind {
        case .memory:
            store = try SchedulerStore.inMemory()
        case .file:
            let directory = try ScratchDirectory("latency")
            scratch = directory
            store = try SchedulerStore.open(at: directory.file("scheduler.sqlite"), now: Date()).0
        }
        defer { scratch?.remove() }

        // The foundation's rules only: the standard set would (rightly) rate-limit and
        // throttle a refresh resubmitted every 50 ms, which is a deferral, not latency.
        let driver = SchedulerDriver(configuration: SchedulerConfiguration(), conditions: .favorable, clock: DispatchDriverClock(), store: store, policies: .foundation)
        let manifest = AppManifest(appID: app, permittedIdentifiers: [identifier], backgroundModes: ["fetch"], source: "bgtask-bench")
        let context = BGAppContext(app: app, manifest: manifest, driver: driver)

        let handlerStart = Mutex<Date?>(nil)
        let launchedAt = Mutex<Date?>(nil)
        let finished = DispatchSemaphore(value: 0)
        driver.observe { event in
            if case .launched(let record, _, _) = event { launchedAt.withLock { $0 = record.startedAt } }
        }
        context.scheduler.register(forTaskWithIdentifier: identifier, using: nil) { task in
            let now = Date()
            handlerStart.withLock { $0 = now }
            task.setTaskCompleted(success: true)
            finished.signal()
        }
        context.application.finishLaunching()

        var generator = SeededRandom(seed: 0x1A7E_2C7)
        var total: [Double] = []
        var timer: [Double] = []
        var launch: [Double] = []
        for round in 0..<(warmup + runs) {
            handlerStart.withLock { $0 = nil }
            launchedAt.withLock { $0 = nil }
            let request = BGAppRefreshTaskRequest(identifier: identifier)
            let due = Date().addingTimeInterval(Double(Int.random(in: 20...50, using: &generator)) / 1_000)
            request.earliestBeginDate = due
            try context.scheduler.submit(request)
            guard finished.wait(timeout: .now() + 5) == .success, let started = handlerStart.withLock({ $0 }) else {
                throw BenchmarkError("round \(round): the handler did not run within 5 s of submitting a request due in 50 ms or less")
            }
            guard round >= warmup else { continue }
            total.append(started.timeIntervalSince(due) * 1_000)
            if let startedAt = launchedAt.withLock({ $0 }) {
                timer.append(startedAt.timeIntervalSince(due) * 1_000)
                launch.append(started.timeIntervalSince(startedAt) * 1_000)
            }
        }
        // The run log must hold every run as a success.
        let logged = try store.runs(app: app).filter { $0.outcome == .success }.count
        guard logged == warmup + runs else {
            throw BenchmarkError("expected \(warmup + runs) successful runs in the log, found \(logged)")
        }
        withExtendedLifetime(context) {}

        let latency = Distribution(total)
        let timerPart = Distribution(timer)
        let launchPart = Distribution(launch)
        let early = total.filter { $0 < 0 }.count
        say("  \(kind.rawValue): \(runs) runs after \(warmup) warm-up, due 20-50 ms after submit, one at a time")
        say("    due -> handler start: p50 \(format(latency.median, 3)) ms   p99 \(format(latency.percentile(99), 3)) ms   max \(format(latency.max, 3)) ms   min \(format(latency.min, 3)) ms\(early > 0 ? "   (\(early) before the due instant!)" : "")")
        say("    of which due -> timer fired (run.startedAt): p50 \(format(timerPart.median, 3)) ms  p99 \(format(timerPart.percentile(99), 3)) ms;  timer fired -> handler start (engine, launch record, queue hop): p50 \(format(launchPart.median, 3)) ms  p99 \(format(launchPart.percentile(99), 3)) ms")

        let suffix = kind == .memory ? "memory" : "file"
        var notes = [
            "real-time driver (DispatchDriverClock, 1 ms timer leeway), \(kind.rawValue), in-process closure handler on the app's handler queue; wall-clock Date() at handler entry minus earliestBeginDate",
            "excludes process launch (in-process handler); includes timer lateness, engine decision, launch record write, queue hop",
        ]
        if kind == .file, let scratch { notes.append("file system: \(fileSystemDescription(of: scratch.url.path))") }
        return BenchmarkResult(
            name: "dispatch-latency-\(suffix)",
            title: "In-process dispatch latency, due instant -> handler start (\(kind.rawValue))",
            target: "p99 <= 2 ms",
            value: latency.percentile(99),
            unit: "ms",
            pass: latency.percentile(99) <= 2,
            metrics: [
                "p50_ms": latency.median,
                "p99_ms": latency.percentile(99),
                "max_ms": latency.max,
                "min_ms": latency.min,
                "mean_ms": latency.mean,
                "timer_p50_ms": timerPart.median,
                "timer_p99_ms": timerPart.percentile(99),
                "launch_p50_ms": launchPart.median,
                "launch_p99_ms": launchPart.percentile(99),
                "runs": Double(runs),
                "early_runs": Double(early),
            ],
            notes: notes
        )
    }
}
