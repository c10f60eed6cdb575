import BackgroundTasks
import DaemonProtocol
import Foundation
import SchedulerCore
import SchedulerStore

// What the daemon benchmarks (i-n) share: the executables they start, a private sandbox
// (state directory, 0700 runtime directory, manifests), a store seeded before the daemon
// starts, the real `bgtaskd` as a child process, and its administrator connection.

/// A benchmark that cannot run as designed (a missing executable, a daemon that does not
/// answer); the message names what and where.
struct DaemonBenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// CLOCK_REALTIME in nanoseconds since 1970: the clock of the daemon's run log (its
/// `DispatchDriverClock` is `Date()`) and of the bench app's records.
func realtimeNanoseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}

/// `date` in nanoseconds since 1970 (Date keeps sub-microsecond precision at this scale).
func nanoseconds(since1970 date: Date) -> Int64 {
    Int64((date.timeIntervalSince1970 * 1e9).rounded())
}

/// Sleeps on the monotonic clock (the benchmarks' own pacing, never what is measured).
func pause(milliseconds: Double) {
    usleep(useconds_t(max(0, min(milliseconds, 60_000)) * 1000))
}

/// The executables the daemon benchmarks start: `bgtaskd` and `bgtask-bench-app`, built
/// beside bgtask-bench.
struct DaemonExecutables {
    let daemon: String
    let app: String

    /// Both executables' paths; each must exist, except `bgtaskd` when `needsDaemon` is
    /// false (the embedded app's benchmark, s, starts the app alone).
    static func locate(needsDaemon: Bool = true) throws -> DaemonExecutables {
        let directory = URL(fileURLWithPath: ownExecutablePath()).deletingLastPathComponent()
        let daemon = directory.appendingPathComponent("bgtaskd").path
        let app = directory.appendingPathComponent("bgtask-bench-app").path
        for path in (needsDaemon ? [daemon, app] : [app]) where !FileManager.default.isExecutableFile(atPath: path) {
            throw DaemonBenchError("\(path) is missing: build it beside bgtask-bench first (swift build -c release --product bgtaskd; swift build -c release --product bgtask-bench-app)")
        }
        return DaemonExecutables(daemon: daemon, app: app)
    }
}

/// Starts `path` with `posix_spawn` (no shell), standard output and error to `output`
/// (or /dev/null); returns its pid.
func spawnProcess(_ path: String, _ arguments: [String], environment: [String: String], output: String? = nil) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    let target = output ?? "/dev/null"
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, target, O_WRONLY | O_CREAT | O_APPEND, 0o600)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
        for pointer in argv { free(pointer) }
        for pointer in envp { free(pointer) }
    }
    var pid: pid_t = 0
    let status = posix_spawn(&pid, path, &actions, nil, argv, envp)
    guard status == 0 else { throw DaemonBenchError("posix_spawn \(path) failed: \(String(cString: strerror(status)))") }
    return pid
}

/// Waits for `pid` to exit, up to `timeout` seconds; its wait status, or nil on timeout.
@discardableResult
func waitForExit(_ pid: pid_t, timeout: Double) -> Int32? {
    let deadline = monotonicNanoseconds() + UInt64(timeout * 1e9)
    while true {
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == pid { return status }
        if result < 0 && errno != EINTR { return nil }
        if monotonicNanoseconds() >= deadline { return nil }
        pause(milliseconds: 1)
    }
}

/// A private world for one daemon: a scratch directory holding `run/` (0700, the
/// socket's parent), `state/bgtaskd` (the store) and `apps/` (manifests, records).
final class DaemonSandbox {
    let scratch: ScratchDirectory
    let executables: DaemonExecutables

    init(_ label: String, executables: DaemonExecutables) throws {
        scratch = try ScratchDirectory(label)
        self.executables = executables
        let manager = FileManager.default
        try manager.createDirectory(at: scratch.file("run"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try manager.createDirectory(at: stateDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try manager.createDirectory(at: scratch.file("apps"), withIntermediateDirectories: true)
    }

    var stateDirectory: URL { scratch.file("state").appendingPathComponent("bgtaskd") }
    var storeURL: URL { stateDirectory.appendingPathComponent("scheduler.sqlite") }
    var socketPath: String { scratch.file("run").appendingPathComponent("bgtaskd").appendingPathComponent("socket").path }
    var logPath: String { scratch.file("bgtaskd.log").path }

    /// A file under `apps/`.
    func appFile(_ name: String) -> String { scratch.file("apps").appendingPathComponent(name).path }

    /// The environment of the daemon and of the apps bgtask-bench starts itself: nothing
    /// from the developer's environment but a fixed PATH.
    var environment: [String: String] {
        [
            "HOME": scratch.url.path,
            "XDG_RUNTIME_DIR": scratch.file("run").path,
            "XDG_STATE_HOME": scratch.file("state").path,
            "PATH": "/usr/local/bin:/usr/bin:/bin",
        ]
    }

    /// Writes a JSON manifest for `app` whose executable is the bench app, and returns its path.
    func writeManifest(app: String, identifiers: [String], modes: [String], arguments: [String]) throws -> String {
        let manifest: [String: Any] = [
            "CFBundleIdentifier": app,
            "CFBundleExecutable": executables.app,
            "BGTaskLaunchArguments": arguments,
            "BGTaskSchedulerPermittedIdentifiers": identifiers,
            "UIBackgroundModes": modes,
        ]
        let path = appFile("\(app).json")
        try JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys]).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Opens the daemon's store before the daemon starts, runs `body` on it, closes it.
    func seed(synchronous: StoreOptions.Synchronous = .full, _ body: (SchedulerStore) throws -> Void) throws {
        let (store, _) = try SchedulerStore.open(at: storeURL, now: Date(), options: StoreOptions(synchronous: synchronous, app: nil))
        defer { store.close() }
        try body(store)
    }

    /// Installs the app of the manifest at `path` into the store (the checks of
    /// `bgtask install`), with `requests` pending.
    func install(manifest path: String, requests: [PendingRequest], into store: SchedulerStore) throws {
        let installed = try BGAppInstallation.validate(manifestAt: URL(fileURLWithPath: path), now: Date())
        try store.installApp(installed)
        for request in requests { try store.upsertRequest(request) }
    }

    /// Removes the sandbox, unless `BGTASK_BENCH_KEEP_SANDBOX` is set: then it stays for
    /// inspection (its store, the daemon's log) and its path is printed.
    func remove() {
        if ProcessInfo.processInfo.environment["BGTASK_BENCH_KEEP_SANDBOX"] != nil {
            say("  sandbox kept (BGTASK_BENCH_KEEP_SANDBOX): \(scratch.url.path)")
            return
        }
        scratch.remove()
    }
}

/// The real `bgtaskd`, started as a child process on a sandbox.
final class DaemonChild {
    let pid: pid_t
    /// Monotonic instant just before `posix_spawn`.
    let spawnedAt: UInt64
    let sandbox: DaemonSandbox
    private var link: MessageLink?
    /// App processes seen in `apps` reports: ended at the end if the daemon left any.
    private var appPIDs: Set<Int32> = []

    init(sandbox: DaemonSandbox, flags: [String], extraEnvironment: [String: String] = [:]) throws {
        self.sandbox = sandbox
        let arguments = ["--state-dir", sandbox.stateDirectory.path, "--socket", sandbox.socketPath] + flags
        spawnedAt = monotonicNanoseconds()
        pid = try spawnProcess(sandbox.executables.daemon, arguments, environment: sandbox.environment.merging(extraEnvironment) { $1 }, output: sandbox.logPath)
    }

    /// Polls until the daemon answers `status` on its socket; the nanoseconds from spawn
    /// to that answer.
    func waitUntilReady(timeout: Double = 30) throws -> UInt64 {
        let deadline = spawnedAt + UInt64(timeout * 1e9)
        while monotonicNanoseconds() < deadline {
            if waitForExit(pid, timeout: 0) != nil {
                throw DaemonBenchError("bgtaskd exited before it was ready; its log: \(sandbox.logPath)\n\(logTail())")
            }
            if let link = try? MessageLink.connect(path: sandbox.socketPath, timeout: .seconds(5)) {
                if case .welcome = try? link.call(.hello(Hello(role: .admin))),
                   case .report = try? link.call(.admin(.status)) {
                    let elapsed = monotonicNanoseconds() - spawnedAt
                    self.link = link
                    return elapsed
                }
                link.close()
            }
            pause(milliseconds: 0.5)
        }
        throw DaemonBenchError("bgtaskd did not answer status within \(timeout) s; its log: \(sandbox.logPath)\n\(logTail())")
    }

    /// Closes the administrator connection (an idle daemon then has no client).
    func closeLink() {
        link?.close()
        link = nil
    }

    /// The last lines of the daemon's log, for error messages.
    func logTail() -> String {
        let text = (try? String(contentsOfFile: sandbox.logPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(8).joined(separator: "\n")
    }

    /// An administrator request (as `bgtask` makes it).
    func admin(_ request: AdminRequest) throws -> Reply {
        guard let link else { throw DaemonBenchError("bgtaskd is not ready") }
        do {
            return try link.call(.admin(request))
        } catch {
            throw DaemonBenchError("bgtaskd did not answer \(request): \(error)")
        }
    }

    /// The JSON of a report request (`status`, `apps`).
    func report(_ request: AdminRequest) throws -> Any {
        guard case .report(_, let json) = try admin(request) else { throw DaemonBenchError("bgtaskd answered \(request) with no report") }
        return try JSONSerialization.jsonObject(with: Data(json.utf8))
    }

    /// `bgtask run app identifier`: the engine launches the pending request now.
    func run(_ app: String, _ identifier: String) throws {
        let reply = try admin(.run(app: AppID(app), identifier: identifier))
        guard case .done = reply else { throw DaemonBenchError("bgtask run \(app) \(identifier) failed: \(reply)") }
    }

    /// The supervision phase and pid of `app` (`bgtask apps --json`).
    func appState(_ app: String) throws -> (state: String, pid: Int32?) {
        guard let rows = try report(.apps) as? [[String: Any]], let row = rows.first(where: { $0["app"] as? String == app }) else {
            throw DaemonBenchError("bgtask apps does not list \(app)")
        }
        let pid = (row["pid"] as? NSNumber).map { $0.int32Value }
        if let pid { appPIDs.insert(pid) }
        return (row["state"] as? String ?? "?", pid)
    }

    /// Polls `apps` until `app`'s phase is one of `states`.
    func waitForAppState(_ app: String, _ states: Set<String>, timeout: Double = 15) throws {
        let deadline = monotonicNanoseconds() + UInt64(timeout * 1e9)
        var last = ""
        while monotonicNanoseconds() < deadline {
            last = try appState(app).state
            if states.contains(last) { return }
            pause(milliseconds: 1)
        }
        throw DaemonBenchError("\(app) did not become \(states.sorted().joined(separator: " or ")) within \(timeout) s (it is \(last)); the daemon's log: \(sandbox.logPath)")
    }

    /// SIGTERM (the daemon expires runs and ends its apps), SIGKILL after 10 s; then any
    /// app process it was seen running that is still there is killed.
    func stop() {
        link?.close()
        link = nil
        kill(pid, SIGTERM)
        if waitForExit(pid, timeout: 10) == nil {
            kill(pid, SIGKILL)
            waitForExit(pid, timeout: 5)
        }
        for app in appPIDs where kill(app, 0) == 0 {
            kill(app, SIGKILL)
        }
    }
}

/// The lines of a bench app record file: `main ID NANOS`, `start ID NANOS`, `expired ID NANOS`,
/// `sigterm ID NANOS`, `error ...`.
struct AppRecord {
    var mains: [String: [Int64]] = [:]
    var starts: [String: [Int64]] = [:]
    var expirations: [String: [Int64]] = [:]
    /// When the app's SIGTERM arrived (read in its SIGTERM handler), once per process.
    var sigterms: [String: [Int64]] = [:]
    var errors: [String] = []

    init(path: String) {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return }
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.first == "error" { errors.append(String(line)); continue }
            guard fields.count == 3, let instant = Int64(fields[2]) else { continue }
            switch fields[0] {
            case "main": mains[String(fields[1]), default: []].append(instant)
            case "start": starts[String(fields[1]), default: []].append(instant)
            case "expired": expirations[String(fields[1]), default: []].append(instant)
            case "sigterm": sigterms[String(fields[1]), default: []].append(instant)
            default: continue
            }
        }
    }

    /// Polls `path` until `count(record) >= target`.
    static func wait(path: String, timeout: Double, until satisfied: (AppRecord) -> Bool) throws -> AppRecord {
        let deadline = monotonicNanoseconds() + UInt64(timeout * 1e9)
        while true {
            let record = AppRecord(path: path)
            if satisfied(record) { return record }
            if !record.errors.isEmpty { throw DaemonBenchError("the bench app reported: \(record.errors.joined(separator: "; "))") }
            if monotonicNanoseconds() >= deadline { throw DaemonBenchError("the bench app did not record the expected event within \(timeout) s (\(path))") }
            // The figures come from the instants the app writes down, not from when this loop
            // notices them: polling often only takes processor time from the daemon and the
            // apps being measured (every 0.2 ms, it read the file 5,000 times a second).
            pause(milliseconds: 10)
        }
    }
}

/// The runs of `app` in the daemon's run log, oldest first (read-only, as `bgtask log`).
func loggedRuns(of app: String, in sandbox: DaemonSandbox) throws -> [RunRecord] {
    let store = try SchedulerStore.openForReading(at: sandbox.storeURL)
    defer { store.close() }
    return try store.runs(app: AppID(app))
}

/// `/bin/true` spawned with posix_spawn and waited for: the machine's floor for starting a
/// process, in milliseconds per spawn.
func trueSpawnMilliseconds(count: Int) throws -> Distribution {
    try spawnMilliseconds("/bin/true", count: count)
}

/// `path` (with no arguments) spawned with posix_spawn and waited for, in milliseconds.
func spawnMilliseconds(_ path: String, count: Int) throws -> Distribution {
    var samples: [Double] = []
    for _ in 0..<count {
        let start = monotonicNanoseconds()
        let pid = try spawnProcess(path, [], environment: ["PATH": "/usr/bin:/bin"])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw DaemonBenchError("waitpid of \(path) failed: errno \(errno)") }
        }
        samples.append(Double(monotonicNanoseconds() - start) / 1e6)
    }
    return Distribution(samples)
}
