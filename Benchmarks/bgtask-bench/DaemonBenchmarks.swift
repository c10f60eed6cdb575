import BackgroundTasks
import DaemonProtocol
import Foundation
import ProbeSupport
import SchedulerCore
import SchedulerStore
import Synchronization

/// bgtaskd's figures (issue 9, "Tests and figures"), each against the real `bgtaskd`
/// started as a child process on a private sandbox, with `bgtask-bench-app` as the
/// installed app (docs/testing.md, "Benchmarks", i-n).
enum DaemonBenchmarks {
    static let refreshIdentifier = "com.example.benchapp.refresh"

    /// A request none of the benchmarks' daemons launches by itself: due in two hours.
    static func notDueRequest(app: String, identifier: String, kind: TaskKind) -> PendingRequest {
        PendingRequest(app: AppID(app), identifier: identifier, kind: kind, earliestBeginDate: Date(timeIntervalSinceNow: 7200), submittedAt: Date())
    }

    /// What a serving bench app's refresh handler does with its run.
    enum ServeBehaviour {
        /// Completes at once (launch benchmarks).
        case complete
        /// Completes from its expiration handler (k).
        case expire
        /// Never completes, so the daemon terminates the run; the app records SIGTERM and exits (t).
        case ignoreExpiration

        var arguments: [String] {
            switch self {
            case .complete: return []
            case .expire: return ["--expire"]
            case .ignoreExpiration: return ["--ignore-expiration"]
            }
        }
    }

    /// Installs one serving bench app per name, each with its refresh request pending.
    static func installServingApps(_ names: [String], behaviour: ServeBehaviour, in sandbox: DaemonSandbox) throws {
        try sandbox.seed { store in
            for name in names {
                let manifest = try sandbox.writeManifest(
                    app: name, identifiers: [refreshIdentifier], modes: ["fetch"],
                    arguments: ["serve", "--record", sandbox.appFile("\(name).record"), "--identifier", refreshIdentifier] + behaviour.arguments)
                try sandbox.install(manifest: manifest, requests: [notDueRequest(app: name, identifier: refreshIdentifier, kind: .appRefresh)], into: store)
            }
        }
    }

    static func containment(of daemon: DaemonChild) -> String {
        ((try? daemon.report(.status)) as? [String: Any])?["containment"] as? String ?? "unknown"
    }

    // MARK: i, j: launches

    /// Launches of the bench app for its refresh task through `bgtask run`: from the
    /// instant the engine launched the run (its `startedAt` in the daemon's run log) to the
    /// instant the app's handler started (written by the app), both on CLOCK_REALTIME.
    /// `warm`: the app stays and is suspended between runs (the daemon's SIGSTOP or
    /// freezer) and thawed for the next; else it is ended after each run (cold).
    static func launches(warm: Bool, runs: Int, warmup: Int) throws -> BenchmarkResult {
        let executables = try DaemonExecutables.locate()
        let sandbox = try DaemonSandbox(warm ? "warm" : "cold", executables: executables)
        defer { sandbox.remove() }
        let app = "com.example.benchapp"
        try installServingApps([app], behaviour: .complete, in: sandbox)
        let flags = warm ? ["--suspend-delay", "0.05", "--idle-timeout", "3600"] : ["--suspend-delay", "0", "--idle-timeout", "0"]
        let daemon = try DaemonChild(sandbox: sandbox, flags: flags)
        defer { daemon.stop() }
        _ = try daemon.waitUntilReady()
        let where_ = containment(of: daemon)
        let recordPath = sandbox.appFile("\(app).record")
        let between: Set<String> = warm ? ["suspended"] : ["notRunning"]
        for index in 0..<(warmup + runs) {
            // The first warm run is a cold one (nothing to thaw yet): it is a warm-up.
            if index > 0 || !warm { try daemon.waitForAppState(app, between) }
            try daemon.run(app, refreshIdentifier)
            _ = try AppRecord.wait(path: recordPath, timeout: 20) { ($0.starts[refreshIdentifier]?.count ?? 0) > index }
        }
        let recorded = AppRecord(path: recordPath)
        let starts = recorded.starts[refreshIdentifier] ?? []
        let logged = try loggedRuns(of: app, in: sandbox)
        guard logged.count == starts.count else {
            throw DaemonBenchError("the run log holds \(logged.count) runs of \(app) but the app recorded \(starts.count) handler starts")
        }
        let latencies = zip(logged, starts).dropFirst(warmup).map { run, start in Double(start - nanoseconds(since1970: run.startedAt)) / 1e6 }
        let spawn = try trueSpawnMilliseconds(count: 200)
        let sample = Distribution(latencies)
        let p50 = sample.median, p99 = sample.percentile(99)
        say("  \(warm ? "warm" : "cold") launches: \(sample.count) (after \(warmup) warm-up), bgtaskd child, app processes in \(where_)")
        say("  engine launches the run -> app's handler starts: p50 \(format(p50, 2)) ms  p99 \(format(p99, 2)) ms  min \(format(sample.min, 2))  max \(format(sample.max, 2)) ms")
        // Cold: where the time goes. Each process's first line ("main") belongs to the run
        // it was spawned for: the first run after the process started.
        var breakdown: [String: Double] = [:]
        if !warm, let mains = recorded.mains[refreshIdentifier], mains.count == starts.count {
            let runs = Array(logged.dropFirst(warmup)), entered = Array(mains.dropFirst(warmup)), handled = Array(starts.dropFirst(warmup))
            let toMain = Distribution(zip(runs, entered).map { Double($1 - nanoseconds(since1970: $0.startedAt)) / 1e6 })
            let toHandler = Distribution(zip(entered, handled).map { Double($1 - $0) / 1e6 })
            breakdown = ["to_main_p50_ms": toMain.median, "main_to_handler_p50_ms": toHandler.median]
            say("  of which: run launched -> the app's main code begins (spawn, exec, loading): p50 \(format(toMain.median, 2)) ms; main -> handler (API set-up, connect, hello, registration, hand-over): p50 \(format(toHandler.median, 2)) ms")
            // The app's executable alone (no arguments: it stops at once with a usage
            // error), started and waited for here: what loading a Swift program costs.
            let bare = try spawnMilliseconds(executables.app, count: 30)
            breakdown["app_bare_spawn_p50_ms"] = bare.median
            say("  machine: posix_spawn + wait of bgtask-bench-app doing nothing (loading Swift and Foundation, then exit): p50 \(format(bare.median, 2)) ms (30 spawns)")
        }
        say("  machine: posix_spawn + wait of /bin/true: p50 \(format(spawn.median, 2)) ms  p99 \(format(spawn.percentile(99), 2)) ms (200 spawns)")
        let targetP50 = warm ? 2.0 : 30.0
        let targetP99: Double? = warm ? nil : 100
        let pass = p50 <= targetP50 && (targetP99.map { p99 <= $0 } ?? true)
        if let targetP99 {
            say("  p50 \(format(p50, 2)) ms (target <= \(format(targetP50, 0))) \(p50 <= targetP50 ? "PASS" : "MISS");  p99 \(format(p99, 2)) ms (target <= \(format(targetP99, 0))) \(p99 <= targetP99 ? "PASS" : "MISS")")
        }
        return BenchmarkResult(
            name: warm ? "daemon-warm-launch" : "daemon-cold-launch",
            title: "\(warm ? "Warm launch of a suspended app" : "Cold launch of a not-running app") by bgtaskd, run launched -> handler start",
            target: warm ? "p50 <= 2 ms" : "p50 <= 30, p99 <= 100 ms",
            value: p50, unit: "ms", pass: pass,
            metrics: ["p50_ms": p50, "p99_ms": p99, "min_ms": sample.min, "max_ms": sample.max, "mean_ms": sample.mean, "runs": Double(sample.count),
                      "true_spawn_p50_ms": spawn.median, "true_spawn_p99_ms": spawn.percentile(99)].merging(breakdown) { $1 },
            notes: ["bgtaskd is a child process; runs are launched with the administrator's run request (bgtask run); app processes in \(where_)",
                    "from the run's startedAt in the daemon's run log to CLOCK_REALTIME in the app's handler"])
    }

    // MARK: k: expiration

    /// Runs whose budget is forced to the simulated-expiration budget
    /// (`BACKGROUND_TASK_SIMULATE_EXPIRATION=YES` in the daemon's environment): the
    /// lateness of each app's expiration handler against the run's deadline (startedAt +
    /// budget), next to the machine's own timer lateness measured in the same run.
    static func expiration(apps appCount: Int, rounds: Int) throws -> BenchmarkResult {
        let executables = try DaemonExecutables.locate()
        let sandbox = try DaemonSandbox("expire", executables: executables)
        defer { sandbox.remove() }
        let apps = (0..<appCount).map { String(format: "com.example.benchapp.expire%02d", $0) }
        try installServingApps(apps, behaviour: .expire, in: sandbox)
        let environment = ["BACKGROUND_TASK_SIMULATE_EXPIRATION": "YES"]
        // The daemon's own configuration function, so the deadline is the one it computes.
        guard let budget = EmbeddedScheduler.defaultSchedulerConfiguration(environment: environment, machineIDFile: nil).budget(for: .appRefresh) else {
            throw DaemonBenchError("no budget for refresh runs")
        }
        let daemon = try DaemonChild(sandbox: sandbox, flags: ["--suspend-delay", "0.05", "--idle-timeout", "3600"], extraEnvironment: environment)
        defer { daemon.stop() }
        _ = try daemon.waitUntilReady()
        let stealBefore = ProcessorTimes.read()
        // The machine's own timer lateness under the same load, in the same window: a thread
        // of this process sleeping to absolute deadlines 5 ms apart all through the rounds.
        let sleeper = AbsoluteSleeper(intervalMilliseconds: 5)
        let daemonTicksBefore = try cpuTicks(pid: daemon.pid)
        for round in 0..<rounds {
            for app in apps {
                if round > 0 { try daemon.waitForAppState(app, ["suspended", "notRunning"]) }
                try daemon.run(app, refreshIdentifier)
            }
            for app in apps {
                _ = try AppRecord.wait(path: sandbox.appFile("\(app).record"), timeout: budget + 15) { ($0.expirations[refreshIdentifier]?.count ?? 0) > round }
            }
        }
        let sleptMeanwhile = sleeper.stop()
        let daemonTicks = try cpuTicks(pid: daemon.pid) - daemonTicksBefore
        let stealAfter = ProcessorTimes.read()
        var lateness: [Double] = []
        var byPosition: [[Double]] = []
        var deadlines: [Int64] = []
        for app in apps {
            let expirations = AppRecord(path: sandbox.appFile("\(app).record")).expirations[refreshIdentifier] ?? []
            let logged = try loggedRuns(of: app, in: sandbox)
            guard logged.count == expirations.count else {
                throw DaemonBenchError("the run log holds \(logged.count) runs of \(app) but the app recorded \(expirations.count) expirations")
            }
            var own: [Double] = []
            for (run, expired) in zip(logged, expirations) {
                let deadline = nanoseconds(since1970: run.startedAt.addingTimeInterval(budget))
                own.append(Double(expired - deadline) / 1e6)
                deadlines.append(deadline)
            }
            lateness += own
            byPosition.append(own)
        }
        let sample = Distribution(lateness)
        let machine = MachineTimerLateness(sleptMeanwhile: sleptMeanwhile, deadlines: deadlines)
        let daemonCPUPerRun = Double(daemonTicks) / Double(sysconf(Int32(_SC_CLK_TCK))) / Double(max(sample.count, 1)) * 1000
        let p99 = sample.percentile(99)
        say("  \(sample.count) runs (\(appCount) apps x \(rounds) rounds), budget \(format(budget, 0)) s, bgtaskd child")
        say("  expiration handler called after the deadline: p50 \(format(sample.median, 2)) ms  p99 \(format(p99, 2)) ms  min \(format(sample.min, 2))  max \(format(sample.max, 2)) ms; later than 5 ms: \(format(sample.share(where: { $0 > 5 }) * 100, 1)) % of runs")
        machine.reportMeanwhile(deadline: "a run's deadline")
        say("  bgtaskd's CPU (utime + stime) per run: \(format(daemonCPUPerRun, 2)) ms (launch request, thaw, hand-over, expiration, end, commit, freeze)")
        // Deadlines of one round are as far apart as the launches were: a late expiration
        // that grows with the app's place in the round is waiting behind the ones before.
        say("  p50 by the app's place in each round (its deadline follows the previous one by one launch): \(byPosition.map { format(Distribution($0).median, 2) }.joined(separator: ", ")) ms")
        // The first round is each process's first expiration (code paths it has not run yet).
        let byRound = (0..<rounds).map { round in byPosition.compactMap { round < $0.count ? $0[round] : nil }.max() ?? .nan }
        say("  worst by round: \(byRound.map { format($0, 2) }.joined(separator: ", ")) ms")
        if let before = stealBefore, let after = stealAfter {
            // A virtual machine's host may take its processors away (steal): a run stalled
            // for tens of milliseconds is then no fault of the daemon's.
            say("  machine: processor time taken by the host (steal, /proc/stat) during the runs: \(format(after.stealShare(since: before) * 100, 1)) %")
        }
        machine.reportQuiet()
        return BenchmarkResult(
            name: "daemon-expiration",
            title: "Expiration handler lateness against the run's deadline, p99",
            target: "p99 <= 5 ms", value: p99, unit: "ms", pass: p99 <= 5,
            metrics: ["p50_ms": sample.median, "p99_ms": p99, "min_ms": sample.min, "max_ms": sample.max, "runs": Double(sample.count),
                      "late_over_5ms_share": sample.share(where: { $0 > 5 }),
                      "daemon_cpu_per_run_ms": daemonCPUPerRun].merging(machine.metrics) { $1 },
            notes: ["deadline = the run's startedAt in the daemon's run log + the simulated-expiration budget; lateness = CLOCK_REALTIME in the app's expiration handler - deadline"])
    }

    /// The machine's own timer lateness beside a punctuality benchmark (k, t): the sleeps of
    /// an ``AbsoluteSleeper`` that ran through the rounds, all of them and those due in the
    /// 20 ms after one of the measured deadlines; then, with the daemon idle, 200 absolute
    /// sleeps 5 ms apart and 100 one-shot DispatchSource wall timers (what the daemon's clock
    /// arms), measured when this is made.
    struct MachineTimerLateness {
        let underLoad: Distribution
        let atDeadlines: Distribution
        let quietSleeps: Distribution
        let dispatch: Distribution

        init(sleptMeanwhile: [AbsoluteSleeper.Sleep], deadlines: [Int64]) {
            underLoad = Distribution(sleptMeanwhile.map(\.latenessMilliseconds))
            // The moments that matter: the 20 ms after each run's deadline, when what is
            // measured, the daemon's work for it and its neighbours' all want a processor.
            atDeadlines = AbsoluteSleeper.lateness(of: sleptMeanwhile, within: 20_000_000, after: deadlines)
            quietSleeps = DaemonBenchmarks.absoluteSleepLateness(count: 200, intervalMilliseconds: 5)
            dispatch = DaemonBenchmarks.dispatchTimerLateness(count: 100, intervalMilliseconds: 10)
        }

        /// The lines on the sleeps during the rounds; `deadline` names the measured instant.
        func reportMeanwhile(deadline: String) {
            say("  machine meanwhile, one thread of bgtask-bench in clock_nanosleep(TIMER_ABSTIME) every 5 ms, \(underLoad.count) sleeps: lateness p50 \(format(underLoad.median, 2)) ms  p99 \(format(underLoad.percentile(99), 2)) ms  max \(format(underLoad.max, 2)) ms; later than 5 ms: \(format(underLoad.share(where: { $0 > 5 }) * 100, 1)) %")
            say("    of which the \(atDeadlines.count) sleeps due in the 20 ms after \(deadline): p50 \(format(atDeadlines.median, 2)) ms  p99 \(format(atDeadlines.percentile(99), 2)) ms  max \(format(atDeadlines.max, 2)) ms; later than 5 ms: \(format(atDeadlines.share(where: { $0 > 5 }) * 100, 1)) %")
        }

        /// The lines on the timers measured after the rounds.
        func reportQuiet() {
            say("  machine: clock_nanosleep(TIMER_ABSTIME) lateness p50 \(format(quietSleeps.median * 1000, 1)) us  p99 \(format(quietSleeps.percentile(99) * 1000, 1)) us (200 x 5 ms)")
            say("  machine: DispatchSource wall timer (1 ms leeway, as the daemon's clock) lateness p50 \(format(dispatch.median, 3)) ms  p99 \(format(dispatch.percentile(99), 3)) ms (100 x 10 ms)")
        }

        /// k's keys for the machine's figures (t uses the same).
        var metrics: [String: Double] {
            ["nanosleep_p50_ms": quietSleeps.median, "nanosleep_p99_ms": quietSleeps.percentile(99),
             "nanosleep_under_load_p50_ms": underLoad.median, "nanosleep_under_load_p99_ms": underLoad.percentile(99),
             "nanosleep_under_load_over_5ms_share": underLoad.share(where: { $0 > 5 }),
             "nanosleep_at_deadlines_p50_ms": atDeadlines.median, "nanosleep_at_deadlines_p99_ms": atDeadlines.percentile(99),
             "nanosleep_at_deadlines_over_5ms_share": atDeadlines.share(where: { $0 > 5 }),
             "dispatch_timer_p50_ms": dispatch.median, "dispatch_timer_p99_ms": dispatch.percentile(99)]
        }
    }

    // MARK: t: termination

    /// Runs whose handler never completes, not even from its expiration handler
    /// (`BACKGROUND_TASK_SIMULATE_EXPIRATION=YES`, as k): the engine expires each at its
    /// deadline and, the grace period later, records it terminated and bgtaskd sends the app
    /// SIGTERM (SIGKILL 3 s later if it is still there; the app exits on SIGTERM). The
    /// lateness of the SIGTERM the app receives against startedAt + budget + grace, next to
    /// the machine's own timer lateness in the same run.
    static func termination(apps appCount: Int, rounds: Int) throws -> BenchmarkResult {
        let executables = try DaemonExecutables.locate()
        let sandbox = try DaemonSandbox("terminate", executables: executables)
        defer { sandbox.remove() }
        let apps = (0..<appCount).map { String(format: "com.example.benchapp.term%02d", $0) }
        try installServingApps(apps, behaviour: .ignoreExpiration, in: sandbox)
        let environment = ["BACKGROUND_TASK_SIMULATE_EXPIRATION": "YES"]
        // The daemon's own configuration function: its budget and its grace period.
        let configuration = EmbeddedScheduler.defaultSchedulerConfiguration(environment: environment, machineIDFile: nil)
        guard let budget = configuration.budget(for: .appRefresh) else { throw DaemonBenchError("no budget for refresh runs") }
        let grace = configuration.expirationGrace
        let daemon = try DaemonChild(sandbox: sandbox, flags: ["--suspend-delay", "0.05", "--idle-timeout", "3600"], extraEnvironment: environment)
        defer { daemon.stop() }
        _ = try daemon.waitUntilReady()
        let sleeper = AbsoluteSleeper(intervalMilliseconds: 5)
        for round in 0..<rounds {
            for app in apps {
                // Each run's process exits on its SIGTERM: the next run launches it cold.
                if round > 0 { try daemon.waitForAppState(app, ["notRunning"]) }
                try daemon.run(app, refreshIdentifier)
            }
            for app in apps {
                _ = try AppRecord.wait(path: sandbox.appFile("\(app).record"), timeout: budget + grace + 15) { ($0.sigterms[refreshIdentifier]?.count ?? 0) > round }
            }
        }
        let sleptMeanwhile = sleeper.stop()
        var lateness: [Double] = []
        var recordedLate: [Double] = []
        var signalAfterRecord: [Double] = []
        var expiredLate: [Double] = []
        var deadlines: [Int64] = []
        var outcomes: [String: Int] = [:]
        for app in apps {
            let record = AppRecord(path: sandbox.appFile("\(app).record"))
            let sigterms = record.sigterms[refreshIdentifier] ?? []
            let expirations = record.expirations[refreshIdentifier] ?? []
            // The app gets its SIGTERM before the engine's record of the termination is on
            // disk (the supervisor signals at the grace's end without waiting for it), so the
            // last round's record may be a few milliseconds behind the app's: wait for it.
            var logged = try loggedRuns(of: app, in: sandbox)
            let patience = Date().addingTimeInterval(10)
            while logged.contains(where: { $0.outcome == nil }), Date() < patience {
                Thread.sleep(forTimeInterval: 0.01)
                logged = try loggedRuns(of: app, in: sandbox)
            }
            // Runs, SIGTERMs and expirations are paired by position: one missing would shift
            // every later pair, so all three counts must agree.
            guard logged.count == sigterms.count, logged.count == expirations.count else {
                throw DaemonBenchError("the run log holds \(logged.count) runs of \(app) but the app recorded \(sigterms.count) SIGTERMs and \(expirations.count) expirations")
            }
            for (run, (signalled, expired)) in zip(logged, zip(sigterms, expirations)) {
                outcomes[run.outcome.map { "\($0)" } ?? "none", default: 0] += 1
                let deadline = nanoseconds(since1970: run.startedAt.addingTimeInterval(budget + grace))
                lateness.append(Double(signalled - deadline) / 1e6)
                deadlines.append(deadline)
                // Where the lateness comes from: the engine's record of the termination (its
                // endedAt, when its timer for the grace's end fired) and the signal after it.
                if let ended = run.endedAt {
                    recordedLate.append(Double(nanoseconds(since1970: ended) - deadline) / 1e6)
                    signalAfterRecord.append(Double(signalled - nanoseconds(since1970: ended)) / 1e6)
                }
                expiredLate.append(Double(expired - nanoseconds(since1970: run.startedAt.addingTimeInterval(budget))) / 1e6)
            }
        }
        let terminated = outcomes["\(RunOutcome.terminated)"] ?? 0
        guard terminated == lateness.count else {
            throw DaemonBenchError("of \(lateness.count) runs the run log records \(terminated) as terminated (outcomes: \(outcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")))")
        }
        let sample = Distribution(lateness)
        let recorded = Distribution(recordedLate)
        let afterRecord = Distribution(signalAfterRecord)
        let expired = Distribution(expiredLate)
        let machine = MachineTimerLateness(sleptMeanwhile: sleptMeanwhile, deadlines: deadlines)
        let p99 = sample.percentile(99)
        say("  \(sample.count) runs (\(appCount) apps x \(rounds) rounds), budget \(format(budget, 0)) s + grace \(format(grace, 0)) s, bgtaskd child; all \(terminated) recorded as terminated in the run log")
        say("  SIGTERM received by the app after startedAt + budget + grace: p50 \(format(sample.median, 2)) ms  p99 \(format(p99, 2)) ms  min \(format(sample.min, 2))  max \(format(sample.max, 2)) ms; later than 5 ms: \(format(sample.share(where: { $0 > 5 }) * 100, 1)) % of runs")
        say("    of which the run log's end (the engine recording the termination) after that instant: p50 \(format(recorded.median, 2)) ms  p99 \(format(recorded.percentile(99), 2)) ms; the signal after the record: p50 \(format(afterRecord.median, 2)) ms  p99 \(format(afterRecord.percentile(99), 2)) ms")
        say("  expiration handler (not completing) after the deadline: p50 \(format(expired.median, 2)) ms  p99 \(format(expired.percentile(99), 2)) ms (\(expired.count) runs)")
        machine.reportMeanwhile(deadline: "a run's deadline + grace")
        machine.reportQuiet()
        return BenchmarkResult(
            name: "daemon-termination",
            title: "SIGTERM lateness against the run's deadline + grace period, p99",
            target: "p99 <= 5 ms", value: p99, unit: "ms", pass: p99 <= 5,
            metrics: ["p50_ms": sample.median, "p99_ms": p99, "min_ms": sample.min, "max_ms": sample.max, "runs": Double(sample.count),
                      "late_over_5ms_share": sample.share(where: { $0 > 5 }), "terminated_runs": Double(terminated),
                      "recorded_p50_ms": recorded.median, "recorded_p99_ms": recorded.percentile(99),
                      "signal_after_record_p50_ms": afterRecord.median, "signal_after_record_p99_ms": afterRecord.percentile(99),
                      "expiration_p50_ms": expired.median, "expiration_p99_ms": expired.percentile(99)].merging(machine.metrics) { $1 },
            notes: ["instant = the run's startedAt in the daemon's run log + the simulated-expiration budget + the engine's expiration grace; lateness = CLOCK_REALTIME read in the app's SIGTERM handler - instant",
                    "the engine arms the grace from when it expired the run, so a late expiration timer makes the termination late by as much (recorded_*)"])
    }

    /// Lateness (ms) of `clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME)` to deadlines
    /// `intervalMilliseconds` apart.
    static func absoluteSleepLateness(count: Int, intervalMilliseconds: Double) -> Distribution {
        var samples: [Double] = []
        var deadline = realtimeNanoseconds() + Int64(intervalMilliseconds * 1e6)
        for _ in 0..<count {
            var target = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
            while clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &target, nil) == EINTR {}
            samples.append(Double(realtimeNanoseconds() - deadline) / 1e6)
            deadline += Int64(intervalMilliseconds * 1e6)
        }
        return Distribution(samples)
    }

    /// A thread that sleeps to absolute deadlines `intervalMilliseconds` apart until
    /// ``stop()``, recording how late each sleep returned: the machine's timer lateness while
    /// something else runs.
    final class AbsoluteSleeper: Sendable {
        /// One sleep: its deadline (CLOCK_REALTIME nanoseconds) and how late it returned (ms).
        struct Sleep: Sendable {
            var deadline: Int64
            var latenessMilliseconds: Double
        }

        private let stopping = Atomic(false)
        private let sleeps = Mutex<[Sleep]>([])
        private let finished = DispatchSemaphore(value: 0)

        init(intervalMilliseconds: Double) {
            let thread = Thread { [self] in
                let interval = Int64(intervalMilliseconds * 1e6)
                var deadline = realtimeNanoseconds() + interval
                var taken: [Sleep] = []
                while !stopping.load(ordering: .relaxed) {
                    var target = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
                    while clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &target, nil) == EINTR {}
                    let now = realtimeNanoseconds()
                    taken.append(Sleep(deadline: deadline, latenessMilliseconds: Double(now - deadline) / 1e6))
                    // A sleep that overran the next deadline starts the next from now, so one
                    // stall counts once.
                    deadline = max(deadline + interval, now + interval / 2)
                }
                sleeps.withLock { $0 = taken }
                finished.signal()
            }
            thread.name = "bench.sleeper"
            thread.start()
        }

        /// Stops the thread and returns its sleeps, in order.
        func stop() -> [Sleep] {
            stopping.store(true, ordering: .relaxed)
            finished.wait()
            return sleeps.withLock { $0 }
        }

        /// The lateness (ms) of the sleeps due within `window` nanoseconds after one of
        /// `instants` (the moments the measured code waited for a processor too).
        static func lateness(of sleeps: [Sleep], within window: Int64, after instants: [Int64]) -> Distribution {
            let starts = instants.sorted()
            var picked: [Double] = []
            var next = 0
            for sleep in sleeps {
                while next < starts.count, starts[next] + window < sleep.deadline { next += 1 }
                if next < starts.count, starts[next] <= sleep.deadline { picked.append(sleep.latenessMilliseconds) }
            }
            return Distribution(picked)
        }
    }

    /// Lateness (ms) of one-shot DispatchSource timers on wall deadlines with 1 ms leeway,
    /// as the daemon's clock arms them (`DispatchDriverClock`).
    static func dispatchTimerLateness(count: Int, intervalMilliseconds: Double) -> Distribution {
        let queue = DispatchQueue(label: "bgtask-bench.timer")
        var samples: [Double] = []
        for _ in 0..<count {
            let fired = DispatchSemaphore(value: 0)
            let deadline = realtimeNanoseconds() + Int64(intervalMilliseconds * 1e6)
            let lateness = LatenessBox()
            let source = DispatchSource.makeTimerSource(queue: queue)
            source.schedule(wallDeadline: .now() + .nanoseconds(Int(intervalMilliseconds * 1e6)), leeway: .milliseconds(1))
            source.setEventHandler {
                lateness.value = Double(realtimeNanoseconds() - deadline) / 1e6
                fired.signal()
            }
            source.activate()
            fired.wait()
            source.cancel()
            samples.append(lateness.value)
        }
        return Distribution(samples)
    }

    /// One value handed from a timer's queue to the waiting thread (the semaphore orders it).
    final class LatenessBox: @unchecked Sendable {
        // @unchecked: written once on the timer's queue before the semaphore is signalled,
        // read after the wait returns.
        var value: Double = 0
    }

    // MARK: l: idle cost

    /// utime + stime of the whole process (exited threads included), in clock ticks.
    static func cpuTicks(pid: pid_t) throws -> Int64 {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { throw DaemonBenchError("cannot read /proc/\(pid)/stat") }
        // Fields after "(comm)": state is field 3; utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let utime = Int64(fields[11]), let stime = Int64(fields[12]) else { throw DaemonBenchError("unexpected /proc/\(pid)/stat: \(stat)") }
        return utime + stime
    }

    /// What the kernel counted for one process over an idle window (``measureIdle(pid:seconds:)``).
    struct IdleMeasurement {
        /// The window's length, in seconds.
        var elapsed: Double
        /// utime + stime over the window, in seconds (whole clock ticks).
        var cpuFromStat: Double
        /// The threads' nanoseconds on CPU over the window (schedstat), in seconds.
        var cpuFromSchedstat: Double
        /// Context switches (voluntary + nonvoluntary) of every thread over the window.
        var switches: Int64
        /// Threads seen in the window.
        var threadsSeen: Int
        /// The threads that exited in the window, by name and id. Each woke once more to
        /// exit, after its last sample: that wakeup is not in ``switches``.
        var exited: [String]
        /// Each thread that switched, with its name, id and count.
        var woke: [String]
        var ticksPerSecond: Double

        var threadsExited: Int { exited.count }
        var perMinute: Double { Double(switches) / elapsed * 60 }
        /// schedstat counts nanoseconds on CPU exactly; utime+stime is charged in whole
        /// 1/CLK_TCK ticks to whoever runs when the tick lands, too coarse for 0.01 % of a
        /// core over a minute (6 ms): the verdict uses schedstat when the kernel has it.
        var cpuPercentOfCore: Double { (cpuFromSchedstat > 0 ? cpuFromSchedstat : cpuFromStat) / elapsed * 100 }
        /// The targets of l and s: no wakeup at all, and under 0.01 % of a core.
        var pass: Bool { switches == 0 && cpuPercentOfCore < 0.01 }

        /// The figures under the same keys for every idle benchmark, so reports put them side by side.
        var metrics: [String: Double] {
            ["window_s": elapsed, "cpu_stat_ms": cpuFromStat * 1000, "cpu_schedstat_ms": cpuFromSchedstat * 1000, "cpu_percent_of_core": cpuPercentOfCore,
             "context_switches": Double(switches), "context_switches_per_minute": perMinute, "threads": Double(threadsSeen),
             "threads_exited": Double(threadsExited)]
        }

        /// The CPU and wakeup lines, and the threads that woke.
        func report() {
            say("  CPU: \(format(cpuFromStat * 1000, 1)) ms by utime+stime (\(Int(ticksPerSecond)) Hz ticks), \(format(cpuFromSchedstat * 1000, 3)) ms by schedstat = \(format(cpuPercentOfCore, 4)) % of a core (target < 0.01 %)")
            say("  context switches (voluntary + nonvoluntary, all threads): \(switches) in the window = \(format(perMinute, 1)) per minute (target: 0 wakeups)")
            if !woke.isEmpty { say("  threads that woke: \(woke.joined(separator: "; "))") }
            if !exited.isEmpty {
                // Not hidden: a pool thread that retires (libdispatch ends a worker idle for
                // 5 s) wakes to do so, after the last sample that saw it.
                say("  threads that exited in the window (each woke to exit, after its last sample: not in the count): \(exited.joined(separator: "; "))")
            }
        }
    }

    /// Watches process `pid` for `seconds` without waking it: `/proc/<pid>/stat` (utime +
    /// stime) at both ends, and every thread's schedstat and context switches every 100 ms.
    static func measureIdle(pid: pid_t, seconds: Double) throws -> IdleMeasurement {
        // Every thread's counters are sampled every 100 ms (ThreadWindow, shared with the
        // idle test): reading /proc does not wake the process.
        let ticksBefore = try cpuTicks(pid: pid)
        var window = ThreadWindow(pid: pid)
        let start = monotonicNanoseconds()
        let end = start + UInt64(seconds * 1e9)
        while monotonicNanoseconds() < end {
            pause(milliseconds: min(100, Double(end - min(end, monotonicNanoseconds())) / 1e6))
            window.sample()
        }
        let ticksAfter = try cpuTicks(pid: pid)
        let elapsed = Double(monotonicNanoseconds() - start) / 1e9
        guard !window.first.isEmpty else { throw DaemonBenchError("cannot list the threads of process \(pid) (/proc/\(pid)/task)") }
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        return IdleMeasurement(
            elapsed: elapsed, cpuFromStat: Double(ticksAfter - ticksBefore) / ticksPerSecond, cpuFromSchedstat: Double(window.runtimeNanoseconds) / 1e9,
            switches: window.switches, threadsSeen: window.threadsSeen, exited: window.exited(), woke: window.woke, ticksPerSecond: ticksPerSecond)
    }

    /// A `bgtaskd` holding 1,000 pending processing requests (100 apps x 10), none due
    /// within the hour, left alone for `seconds`: its CPU time and context switches.
    static func idleCost(seconds: Double) throws -> BenchmarkResult {
        let executables = try DaemonExecutables.locate()
        let sandbox = try DaemonSandbox("idle", executables: executables)
        defer { sandbox.remove() }
        try seedApps(count: 100, requestsPerApp: 10, in: sandbox, manifests: true)
        let daemon = try DaemonChild(sandbox: sandbox, flags: [])
        defer { daemon.stop() }
        _ = try daemon.waitUntilReady()
        let status = try daemon.report(.status) as? [String: Any]
        let pending = (status?["pending"] as? NSNumber)?.intValue ?? -1
        guard pending == 1000 else { throw DaemonBenchError("bgtaskd holds \(pending) pending requests, expected 1000") }
        daemon.closeLink()
        pause(milliseconds: 2000)  // start-up work settles
        let idle = try measureIdle(pid: daemon.pid, seconds: seconds)
        say("  bgtaskd child (pid \(daemon.pid)), 1,000 pending requests of 100 apps, none due within the hour; window \(format(idle.elapsed, 1)) s; threads seen \(idle.threadsSeen), \(idle.threadsExited) exited in the window")
        idle.report()
        return BenchmarkResult(
            name: "daemon-idle",
            title: "Idle bgtaskd with 1,000 pending requests: CPU and wakeups",
            target: "0 wakeups/min, CPU < 0.01 %", value: idle.perMinute, unit: "wakeups/min",
            pass: idle.pass,
            metrics: idle.metrics,
            notes: ["wakeups counted as context switches of every thread (/proc/<pid>/task/*/status), so any wakeup, timer or other, counts"])
    }

    /// Installs `count` apps with `requestsPerApp` processing requests each, none due for
    /// two hours. With `manifests`, each app gets its own manifest file (checked as
    /// `bgtask install` does); without, the rows are made from one checked app (fast for
    /// 10,000 apps; nothing launches them).
    static func seedApps(count: Int, requestsPerApp: Int, in sandbox: DaemonSandbox, manifests: Bool, synchronous: StoreOptions.Synchronous = .full) throws {
        func name(_ index: Int) -> String { String(format: "com.example.benchapp.idle%05d", index) }
        func identifiers(_ app: String) -> [String] { (0..<requestsPerApp).map { "\(app).p\($0)" } }
        func requests(_ app: String) -> [PendingRequest] { identifiers(app).map { notDueRequest(app: app, identifier: $0, kind: .processing) } }
        try sandbox.seed(synchronous: synchronous) { store in
            if manifests {
                for index in 0..<count {
                    let app = name(index)
                    let manifest = try sandbox.writeManifest(app: app, identifiers: identifiers(app), modes: ["processing"], arguments: ["submit"])
                    try sandbox.install(manifest: manifest, requests: requests(app), into: store)
                }
                return
            }
            let templateApp = name(0)
            let manifest = try sandbox.writeManifest(app: templateApp, identifiers: identifiers(templateApp), modes: ["processing"], arguments: ["submit"])
            let template = try BGAppInstallation.validate(manifestAt: URL(fileURLWithPath: manifest), now: Date())
            for index in 0..<count {
                let app = name(index)
                var installed = template
                installed.app = AppID(app)
                installed.permittedIdentifiers = identifiers(app)
                try store.installApp(installed)
                for request in requests(app) { try store.upsertRequest(request) }
            }
        }
    }

    // MARK: m: concurrent submits

    /// One bench app process submitting for `seconds`: its pipes and what it reported.
    final class Submitter {
        let process = Process()
        let input = Pipe()
        let output = Pipe()
        var buffer = Data()

        init(executable: String, seconds: Double, environment: [String: String]) throws {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = ["submit", "--seconds", format(seconds, 3)]
            process.environment = environment
            process.standardInput = input
            process.standardOutput = output
            try process.run()
        }

        /// The next line of its standard output (blocking).
        func line() throws -> String {
            while true {
                if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer = Data(buffer[buffer.index(after: newline)...])
                    return line
                }
                let chunk = output.fileHandleForReading.availableData
                guard !chunk.isEmpty else { throw DaemonBenchError("the bench app (pid \(process.processIdentifier)) ended without reporting") }
                buffer.append(chunk)
            }
        }
    }

    /// Submits through the socket from `appCount` app processes at once for `seconds`;
    /// the aggregate rate in submits per second, the number of errors, and each app's
    /// round trip of one acknowledged submit (p50, p99 in milliseconds, measured in the app
    /// around each `submit` call).
    static func submitRate(apps: [String], seconds: Double, sandbox: DaemonSandbox) throws -> (rate: Double, count: Int, errors: Int, roundTrips: [(p50: Double, p99: Double)]) {
        var environment = sandbox.environment
        environment["BGTASK_DAEMON_SOCKET"] = sandbox.socketPath
        let submitters = try apps.map { app -> Submitter in
            var own = environment
            own["BGTASK_MANIFEST"] = sandbox.appFile("\(app).json")
            return try Submitter(executable: sandbox.executables.app, seconds: seconds, environment: own)
        }
        defer {
            for submitter in submitters where submitter.process.isRunning { submitter.process.terminate() }
        }
        for submitter in submitters {
            let line = try submitter.line()
            guard line == "ready" else { throw DaemonBenchError("the bench app said '\(line)' instead of ready") }
        }
        for submitter in submitters { submitter.input.fileHandleForWriting.write(Data("go\n".utf8)) }
        var total = 0, errors = 0
        var first = Int64.max, last = Int64.min
        var roundTrips: [(p50: Double, p99: Double)] = []
        for submitter in submitters {
            let fields = try submitter.line().split(separator: " ")
            guard fields.count == 7, fields[0] == "done", let count = Int(fields[1]), let start = Int64(fields[2]), let end = Int64(fields[3]), let failed = Int(fields[4]),
                  let p50 = Int64(fields[5]), let p99 = Int64(fields[6]) else {
                throw DaemonBenchError("the bench app reported something unexpected: \(fields.joined(separator: " "))")
            }
            total += count
            errors += failed
            first = min(first, start)
            last = max(last, end)
            roundTrips.append((Double(p50) / 1e6, Double(p99) / 1e6))
            submitter.process.waitUntilExit()
        }
        return (Double(total) / (Double(last - first) / 1e9), total, errors, roundTrips)
    }

    /// 16 installed apps submitting at once through bgtaskd's socket, against one alone.
    static func concurrentSubmits(appCount: Int, seconds: Double) throws -> BenchmarkResult {
        let executables = try DaemonExecutables.locate()
        let sandbox = try DaemonSandbox("submits", executables: executables)
        defer { sandbox.remove() }
        let apps = (0..<appCount).map { String(format: "com.example.benchapp.idle%05d", $0) }
        try seedApps(count: appCount, requestsPerApp: 10, in: sandbox, manifests: true)
        let daemon = try DaemonChild(sandbox: sandbox, flags: [])
        defer { daemon.stop() }
        _ = try daemon.waitUntilReady()
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        let singleCPU = try cpuSeconds(daemon: daemon.pid)
        let singleDaemonTicks = try cpuTicks(pid: daemon.pid)
        let single = try submitRate(apps: [apps[0]], seconds: seconds, sandbox: sandbox)
        let manyCPU = try cpuSeconds(daemon: daemon.pid)
        let manyDaemonTicks = try cpuTicks(pid: daemon.pid)
        let many = try submitRate(apps: apps, seconds: seconds, sandbox: sandbox)
        let endCPU = try cpuSeconds(daemon: daemon.pid)
        let endDaemonTicks = try cpuTicks(pid: daemon.pid)
        guard single.errors == 0, many.errors == 0 else {
            throw DaemonBenchError("submits failed: \(single.errors) alone, \(many.errors) concurrently (see the bench app's standard error)")
        }
        let ratio = many.rate / single.rate
        say("  bgtaskd child, store on \(fileSystemDescription(of: sandbox.stateDirectory.path)), synchronous=FULL; every submit acknowledged only once durable")
        say("  one app alone:    \(single.count) submits in \(format(seconds, 1)) s = \(format(single.rate, 0)) submits/s (\(format(1e6 / single.rate, 0)) us each)")
        // The app's own clock around each call: what one app waits for a durable submit.
        let singleRoundTrip = single.roundTrips[0]
        say("    round trip of one submit, measured in the app around BGTaskScheduler.submit (returns once bgtaskd's commit is durable): p50 \(format(singleRoundTrip.p50, 3)) ms  p99 \(format(singleRoundTrip.p99, 3)) ms")
        say("  \(appCount) apps at once:  \(many.count) submits = \(format(many.rate, 0)) submits/s")
        say("  ratio \(format(ratio, 2))x (target >= 4x)")
        // Where the bound comes from: with one app a submit waits for its round trip (CPU of
        // both processes, wake-ups, one fsync); with 16 the two processors are the limit,
        // so the ratio is at most 2 x round trip / CPU per submit.
        let cpuPerSingle = (manyCPU - singleCPU) / Double(max(single.count, 1)) * 1e6
        let cpuPerMany = (endCPU - manyCPU) / Double(max(many.count, 1)) * 1e6
        let daemonPerSingle = Double(manyDaemonTicks - singleDaemonTicks) / ticksPerSecond / Double(max(single.count, 1)) * 1e6
        let daemonPerMany = Double(endDaemonTicks - manyDaemonTicks) / ticksPerSecond / Double(max(many.count, 1)) * 1e6
        let sync = fdatasyncMicroseconds(in: sandbox.stateDirectory.path)
        let coding = messageCodingMicroseconds()
        say("  CPU per submit (bgtaskd + the apps, utime + stime): \(format(cpuPerSingle, 0)) us alone, \(format(cpuPerMany, 0)) us with \(appCount) apps (\(ProcessInfo.processInfo.activeProcessorCount) processors); bgtaskd's share \(format(daemonPerSingle, 0)) us and \(format(daemonPerMany, 0)) us")
        say("  machine: fdatasync of a 4 KiB write on the store's file system p50 \(format(sync, 0)) us; JSON coding of one submit and its reply (both ends) \(format(coding, 0)) us")
        return BenchmarkResult(
            name: "daemon-concurrent-submits",
            title: "Submits from \(appCount) apps at once through bgtaskd vs one app alone",
            target: "ratio >= 4", value: ratio, unit: "ratio", pass: ratio >= 4,
            metrics: ["single_per_s": single.rate, "concurrent_per_s": many.rate, "apps": Double(appCount), "seconds": seconds,
                      "cpu_us_per_submit_single": cpuPerSingle, "cpu_us_per_submit_concurrent": cpuPerMany,
                      "daemon_cpu_us_per_submit_single": daemonPerSingle, "daemon_cpu_us_per_submit_concurrent": daemonPerMany,
                      "fdatasync_p50_us": sync, "message_coding_us": coding,
                      "single_p50_ms": singleRoundTrip.p50, "single_p99_ms": singleRoundTrip.p99],
            notes: ["each app is a bgtask-bench-app process, identified by /proc/<pid>/exe, submitting with BGTaskScheduler.submit as fast as acknowledged",
                    "single_p50_ms, single_p99_ms: the app alone, CLOCK_MONOTONIC in the app around each acknowledged submit call (it returns once bgtaskd's commit is durable)"])
    }

    /// CPU seconds (user + system) of the daemon and of this process's reaped children.
    static func cpuSeconds(daemon pid: pid_t) throws -> Double {
        var children = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &children)
        let childSeconds = Double(children.ru_utime.tv_sec + children.ru_stime.tv_sec) + Double(children.ru_utime.tv_usec + children.ru_stime.tv_usec) / 1e6
        return Double(try cpuTicks(pid: pid)) / Double(sysconf(Int32(_SC_CLK_TCK))) + childSeconds
    }

    /// The median time of `fdatasync` after a 4 KiB write, in a file under `directory`.
    static func fdatasyncMicroseconds(in directory: String) -> Double {
        let path = directory + "/fdatasync-probe"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return .nan }
        defer { close(descriptor); unlink(path) }
        let block = [UInt8](repeating: 0x78, count: 4096)
        var samples: [Double] = []
        for round in 0..<200 {
            _ = block.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, 4096, off_t(round % 16 * 4096)) }
            let start = monotonicNanoseconds()
            fdatasync(descriptor)
            samples.append(Double(monotonicNanoseconds() - start) / 1e3)
        }
        return Distribution(samples).median
    }

    /// Encoding and decoding, in this process, of what one submit puts on the wire: the
    /// app's request and the daemon's reply, each encoded once and decoded once.
    static func messageCodingMicroseconds() -> Double {
        let request = ClientEnvelope(id: 7, request: .app(.submit(PendingRequest(
            app: AppID("com.example.benchapp.idle00001"), identifier: "com.example.benchapp.idle00001.task3", kind: .processing,
            earliestBeginDate: Date().addingTimeInterval(7200), submittedAt: Date()))))
        let reply = DaemonEnvelope.reply(id: 7, .done(nil))
        let rounds = 2000
        let start = monotonicNanoseconds()
        for _ in 0..<rounds {
            guard let sent = try? MessageCoding.encode(request), (try? MessageCoding.decode(ClientEnvelope.self, from: sent)) != nil,
                  let answer = try? MessageCoding.encode(reply), (try? MessageCoding.decode(DaemonEnvelope.self, from: answer)) != nil else { return .nan }
        }
        return Double(monotonicNanoseconds() - start) / 1e3 / Double(rounds)
    }

    // MARK: n: start-up at scale

    /// bgtaskd started on a store of 10,000 installed apps and 100,000 pending requests:
    /// time from spawn to answering `status`, and its resident memory then.
    static func startUpAtScale(apps appCount: Int, requestsPerApp: Int) throws -> BenchmarkResult {
        let executables = try DaemonExecutables.locate()
        let sandbox = try DaemonSandbox("scale", executables: executables)
        defer { sandbox.remove() }
        let seedStart = monotonicNanoseconds()
        try seedApps(count: appCount, requestsPerApp: requestsPerApp, in: sandbox, manifests: false, synchronous: .normal)
        let seedSeconds = Double(monotonicNanoseconds() - seedStart) / 1e9
        // For the diagnosis: how much of a start-up reading the rows alone takes (the same
        // store calls, read-only, in this process, before the daemon starts).
        let readStart = monotonicNanoseconds()
        let reader = try SchedulerStore.openForReading(at: sandbox.storeURL)
        let appsRead = try reader.installedApps().apps.count
        let pendingRead = try reader.pendingRequests().count
        reader.close()
        let readSeconds = Double(monotonicNanoseconds() - readStart) / 1e9
        let daemon = try DaemonChild(sandbox: sandbox, flags: [])
        defer { daemon.stop() }
        let ready = Double(try daemon.waitUntilReady()) / 1e9
        let status = try daemon.report(.status) as? [String: Any]
        let apps = (status?["apps"] as? NSNumber)?.intValue ?? -1
        let pending = (status?["pending"] as? NSNumber)?.intValue ?? -1
        guard apps == appCount, pending == appCount * requestsPerApp else {
            throw DaemonBenchError("bgtaskd reports \(apps) apps and \(pending) pending requests, expected \(appCount) and \(appCount * requestsPerApp)")
        }
        // Resident memory at readiness still holds start-up's temporary buffers, or not,
        // depending on when the allocator returned them: read again 1 s later (the daemon
        // is idle then) for the verdict, and the peak.
        let rssAtReady = Double(try ProcessMemory.read(pid: daemon.pid).residentKiB) / 1024
        pause(milliseconds: 1000)
        let memory = try ProcessMemory.read(pid: daemon.pid)
        let peak = memory.peakKiB
        let rssMiB = Double(memory.residentKiB) / 1024
        say("  store seeded in \(format(seedSeconds, 1)) s (\(appCount) apps, \(pending) pending requests); bgtaskd child")
        say("  reading the \(appsRead) apps and \(pendingRead) requests alone (SchedulerStore, read-only, in bgtask-bench): \(format(readSeconds * 1000, 0)) ms")
        say("  spawn -> status answered: \(format(ready * 1000, 0)) ms (target <= 1000 ms) \(ready <= 1 ? "PASS" : "MISS")")
        say("  resident memory: VmRSS \(format(rssAtReady, 1)) MiB when ready, \(format(rssMiB, 1)) MiB 1 s later (target <= 200 MiB) \(rssMiB <= 200 ? "PASS" : "MISS"); peak VmHWM \(format(Double(peak) / 1024, 1)) MiB")
        return BenchmarkResult(
            name: "daemon-start-at-scale",
            title: "bgtaskd start-up with \(appCount) apps and \(pending) pending requests",
            target: "<= 1 s, RSS <= 200 MiB", value: ready, unit: "s", pass: ready <= 1 && rssMiB <= 200,
            metrics: ["startup_s": ready, "rss_mib": rssMiB, "rss_at_ready_mib": rssAtReady, "peak_rss_mib": Double(peak) / 1024, "seed_s": seedSeconds, "store_read_s": readSeconds],
            notes: ["start-up: posix_spawn of bgtaskd to its first answer to status over the socket (polled every 0.5 ms)"])
    }
}
