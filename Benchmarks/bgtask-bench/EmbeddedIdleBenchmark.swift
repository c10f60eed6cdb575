import BackgroundTasks
import Foundation
import ProcessSupervision
import SchedulerCore
import SchedulerStore

/// s: the embedded scheduler's idle cost, measured as l measures bgtaskd's: an app with no
/// daemon (`bgtask-bench-app idle-embedded`) holding 1,000 pending processing requests,
/// none due within the hour, idling in `dispatchMain()`.
enum EmbeddedIdleBenchmark {
    static let app = "com.example.benchapp.embedded"

    /// Starts the bench app on a private sandbox (its state under the sandbox's
    /// `XDG_STATE_HOME`), waits until it has submitted `pending` processing requests and
    /// says it is ready, lets 2 s settle, then watches it for `seconds` with
    /// ``DaemonBenchmarks/measureIdle(pid:seconds:)``; ends it with SIGTERM and checks that
    /// its store holds the requests.
    static func run(seconds: Double, pending: Int) throws -> BenchmarkResult {
        let executables = try DaemonExecutables.locate(needsDaemon: false)
        let sandbox = try DaemonSandbox("embedded-idle", executables: executables)
        defer { sandbox.remove() }
        let identifiers = (0..<pending).map { String(format: "\(app).p%04d", $0) }
        let manifest = try sandbox.writeManifest(app: app, identifiers: identifiers, modes: ["processing"], arguments: [])
        // Where the embedded scheduler puts an app's state by default
        // ($XDG_STATE_HOME/bgtask/<app>), given explicitly as a server's configuration would.
        let stateDirectory = sandbox.scratch.file("state").appendingPathComponent("bgtask").appendingPathComponent(app)
        let logPath = sandbox.appFile("\(app).log")
        var environment = sandbox.environment
        environment["BGTASK_MANIFEST"] = manifest
        let start = monotonicNanoseconds()
        let pid = try spawnProcess(executables.app, ["idle-embedded", "--state-dir", stateDirectory.path, "--pending", "\(pending)"], environment: environment, output: logPath)
        var exitStatus: Int32?
        defer {
            if exitStatus == nil {
                kill(pid, SIGKILL)
                waitForExit(pid, timeout: 5)
            }
        }
        let reported = try waitForReady(pid: pid, logPath: logPath, timeout: 120)
        let readySeconds = Double(monotonicNanoseconds() - start) / 1e9
        guard reported == pending else { throw DaemonBenchError("the embedded app reports \(reported) pending requests, expected \(pending); its output: \(logPath)") }
        pause(milliseconds: 2000)  // start-up work settles, as in l
        let idle = try DaemonBenchmarks.measureIdle(pid: pid, seconds: seconds)
        // A server's end (handleTerminationSignals): SIGTERM takes it to the background, and
        // it exits once suspended.
        kill(pid, SIGTERM)
        exitStatus = waitForExit(pid, timeout: 15)
        let store = try SchedulerStore.openForReading(at: stateDirectory.appendingPathComponent("scheduler.sqlite"))
        let stored = try store.pendingRequests().count
        store.close()
        say("  embedded app (pid \(pid)), no daemon, \(pending) pending processing requests none due within the hour (submitted in \(format(readySeconds, 1)) s from spawn), active, idle in dispatchMain(); window \(format(idle.elapsed, 1)) s; threads seen \(idle.threadsSeen), \(idle.threadsExited) exited in the window")
        idle.report()
        let ended = exitStatus.map { ProcessExitStatus(waitStatus: $0).description } ?? "still running 15 s after SIGTERM (killed)"
        say("  after SIGTERM: \(ended); its store holds \(stored) pending requests")
        guard stored == pending else { throw DaemonBenchError("the embedded app's store holds \(stored) pending requests, expected \(pending)") }
        return BenchmarkResult(
            name: "embedded-idle",
            title: "Idle embedded app with \(pending) pending requests: CPU and wakeups",
            target: "0 wakeups/min, CPU < 0.01 %", value: idle.perMinute, unit: "wakeups/min",
            pass: idle.pass,
            metrics: idle.metrics.merging(["pending_requests": Double(pending)]) { $1 },
            notes: ["bgtask-bench-app idle-embedded: EmbeddedScheduler with its own state directory and no daemon, pendingLimits[.processing] = \(pending), handleTerminationSignals(), finishLaunching() (active), then dispatchMain()",
                    "measured as l: wakeups counted as context switches of every thread (/proc/<pid>/task/*/status), so any wakeup, timer or other, counts"])
    }

    /// Polls the app's output every 10 ms until it says `ready COUNT`; returns COUNT.
    static func waitForReady(pid: pid_t, logPath: String, timeout: Double) throws -> Int {
        let deadline = monotonicNanoseconds() + UInt64(timeout * 1e9)
        while monotonicNanoseconds() < deadline {
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("ready ") }), let count = Int(line.dropFirst("ready ".count)) {
                return count
            }
            if let status = waitForExit(pid, timeout: 0) {
                throw DaemonBenchError("the embedded app \(ProcessExitStatus(waitStatus: status)) before it was ready; its output:\n\(text.split(separator: "\n").suffix(8).joined(separator: "\n"))")
            }
            pause(milliseconds: 10)
        }
        throw DaemonBenchError("the embedded app did not say ready within \(timeout) s; its output: \(logPath)")
    }
}
