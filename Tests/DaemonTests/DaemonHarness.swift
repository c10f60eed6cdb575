#if canImport(Glibc)
import Glibc
#endif
import DaemonProtocol
import Foundation
import SchedulerCore
import SchedulerStore
import Synchronization
import Testing

/// The parent of every suite that starts bgtaskd, apps or bgtask as processes, or sends
/// signals: they must not run in parallel with each other, so they live in extensions of
/// this serialized suite (docs/testing.md, "End-to-end daemon tests").
@Suite(.serialized) struct DaemonProcessTests {}

/// Where an executable product of this package was built: beside the test bundle (SwiftPM
/// builds it because DaemonTests depends on its target).
enum Product {
    struct Missing: Error, CustomStringConvertible {
        var name: String
        var searched: [String]
        var description: String { "\(name) was not found; looked in: \(searched.joined(separator: ", ")); it is built by `swift build --build-tests`" }
    }

    static func locate(_ name: String) throws -> String {
        var directories: [String] = []
        // On Linux the test bundle is the running executable, in the products directory.
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            directories.append((executable as NSString).deletingLastPathComponent)
        }
        for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
            directories.append(bundle.bundleURL.deletingLastPathComponent().path)
        }
        if let first = CommandLine.arguments.first { directories.append((first as NSString).deletingLastPathComponent) }
        for directory in directories {
            let candidate = (directory as NSString).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw Missing(name: name, searched: directories)
    }
}

/// What a finished command printed, and how it ended.
struct CommandResult: CustomStringConvertible {
    var status: Int32
    /// Whether it was ended by a signal (`status` is the signal then).
    var signalled: Bool
    var output: String
    var error: String
    var description: String { "\(signalled ? "signal" : "status") \(status)\nstdout: \(output)\nstderr: \(error)" }
}

/// A process started by a test, with its whole environment given (never the test's own),
/// its output in files (a chatty child never blocks on a pipe), and its end awaitable.
final class TestProcess: Sendable {
    let pid: Int32
    let outputPath: String
    let errorPath: String
    private let process: Process
    private let box = Box()

    /// How it ended; shared with the termination handler.
    private final class Box: Sendable {
        let ended = Mutex<CommandResult?>(nil)

        func finish(_ result: CommandResult) {
            ended.withLock { $0 = result }
        }
    }

    init(_ executable: String, _ arguments: [String], environment: [String: String], directory: String, name: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let stamp = UUID().uuidString.prefix(8)
        let outputPath = "\(directory)/\(name).\(stamp).out"
        let errorPath = "\(directory)/\(name).\(stamp).err"
        self.outputPath = outputPath
        self.errorPath = errorPath
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        let error = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        let box = self.box
        process.terminationHandler = { finished in
            box.finish(CommandResult(
                status: finished.terminationStatus, signalled: finished.terminationReason == .uncaughtSignal,
                output: (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "",
                error: (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""))
        }
        self.process = process
        // The child has its copies: ours are closed now, so a test that starts hundreds of
        // processes does not pile up descriptors (Foundation closes only pipes it made).
        defer {
            try? output.close()
            try? error.close()
        }
        // Foundation's Process gives the child the signal mask of the thread that starts it,
        // and the test's threads (libdispatch's) block nearly every signal: a program started
        // so would not meet SIGTERM as one started from a shell or by bgtaskd does (both give
        // an empty mask), and a signal lost before the app's handling is set up went unseen
        // here (it stayed pending). Started from this thread with an empty mask, put back at
        // once; a signal this thread catches meanwhile goes to libdispatch's handler.
        var empty = sigset_t()
        sigemptyset(&empty)
        var previous = sigset_t()
        pthread_sigmask(SIG_SETMASK, &empty, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        try process.run()
        pid = process.processIdentifier
    }

    /// How it ended, or `nil` while it runs.
    var result: CommandResult? { box.ended.withLock { $0 } }

    /// What it wrote to standard error so far.
    var standardError: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }

    /// Waits for it to end, at most `timeout`; `nil` when it still runs then. Polls every
    /// 10 ms (a continuation left waiting after a timeout would hold its task group).
    func waitForExit(timeout: Duration) async -> CommandResult? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let result { return result }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return result
    }

    func signal(_ number: Int32) {
        if result == nil { _ = Glibc.kill(pid, number) }
    }
}

/// One test's world: a temporary home with a private runtime directory (the socket) and a
/// state directory, the environment every child gets, the daemon it started, the apps it
/// installed, and clean-up of every process it started.
final class DaemonHarness: @unchecked Sendable {
    // @unchecked: a harness belongs to one test, used from that test's task only; the
    // processes list is behind a mutex because termination handlers run elsewhere.
    let root: String
    let runtimeDirectory: String
    let stateHome: String
    let bgtaskd: String
    let bgtask: String
    let testApp: String
    private let started = Mutex<[TestProcess]>([])
    private(set) var daemon: TestProcess?
    /// Flags every daemon of this harness gets (short waits, no cgroups).
    var daemonFlags = ["--no-cgroups", "--launch-timeout", "2", "--suspend-delay", "0.2", "--idle-timeout", "30"]

    init() throws {
        // Short: a socket path is at most 107 bytes.
        root = "/tmp/bgd-\(UUID().uuidString.prefix(8))"
        runtimeDirectory = root + "/run"
        stateHome = root + "/state"
        try FileManager.default.createDirectory(atPath: runtimeDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.createDirectory(atPath: stateHome, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.createDirectory(atPath: root + "/logs", withIntermediateDirectories: true)
        bgtaskd = try Product.locate("bgtaskd")
        bgtask = try Product.locate("bgtask")
        testApp = try Product.locate("bgtask-daemon-testapp")
    }

    /// The environment of every child: explicit, nothing from the test process.
    var environment: [String: String] {
        ["HOME": root, "XDG_RUNTIME_DIR": runtimeDirectory, "XDG_STATE_HOME": stateHome,
         "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "BGTASK_LOG": "debug"]
    }

    var socketPath: String { runtimeDirectory + "/bgtaskd/socket" }
    var stateDirectory: String { stateHome + "/bgtaskd" }
    var databasePath: String { stateDirectory + "/scheduler.sqlite" }

    /// Starts a process and remembers it for clean-up.
    func spawn(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, name: String) throws -> TestProcess {
        let process = try TestProcess(executable, arguments, environment: environment ?? self.environment, directory: root + "/logs", name: name)
        // Finished ones need no clean-up: only the running are kept.
        started.withLock { list in
            list.removeAll { $0.result != nil }
            list.append(process)
        }
        return process
    }

    /// Starts bgtaskd and waits until it answers `bgtask status`. With `descriptorLimit`,
    /// it runs with that `RLIMIT_NOFILE` (soft and hard, set by `sh -c 'ulimit -n'`), so
    /// its connection cap is small (docs/protocol.md, "Limits").
    @discardableResult
    func startDaemon(_ extra: [String] = [], environment: [String: String]? = nil, descriptorLimit: Int? = nil) async throws -> TestProcess {
        // An option in `extra` replaces the default one (bgtaskd refuses an option twice).
        var flags: [String] = []
        var index = 0
        while index < daemonFlags.count {
            let flag = daemonFlags[index]
            let takesValue = index + 1 < daemonFlags.count && !daemonFlags[index + 1].hasPrefix("--")
            if !extra.contains(flag) { flags += takesValue ? [flag, daemonFlags[index + 1]] : [flag] }
            index += takesValue ? 2 : 1
        }
        let process = if let descriptorLimit {
            try spawn("/bin/sh", ["-c", "ulimit -n \(descriptorLimit) && exec \"$0\" \"$@\"", bgtaskd] + flags + extra, environment: environment, name: "bgtaskd")
        } else {
            try spawn(bgtaskd, flags + extra, environment: environment, name: "bgtaskd")
        }
        daemon = process
        let ready = await poll(timeout: .seconds(10)) {
            if process.result != nil { return true }
            return process.standardError.contains(" ready on ")
        }
        if let result = process.result { throw HarnessError("bgtaskd exited at start: \(result)") }
        guard ready else { throw HarnessError("bgtaskd did not say ready within 10 s; stderr: \(process.standardError)") }
        return process
    }

    /// SIGTERM to the daemon; waits for it to exit.
    func stopDaemon() async throws -> CommandResult {
        guard let daemon else { throw HarnessError("no daemon") }
        daemon.signal(SIGTERM)
        guard let result = await daemon.waitForExit(timeout: .seconds(15)) else {
            throw HarnessError("bgtaskd did not exit within 15 s of SIGTERM; stderr: \(daemon.standardError)")
        }
        self.daemon = nil
        return result
    }

    /// Runs `bgtask` to its end (at most 20 s).
    func bgtask(_ arguments: String..., environment: [String: String]? = nil) async throws -> CommandResult {
        try await run(bgtask, arguments, environment: environment)
    }

    /// Runs `executable` to its end (at most `timeout`).
    func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, timeout: Duration = .seconds(20)) async throws -> CommandResult {
        let process = try spawn(executable, arguments, environment: environment, name: (executable as NSString).lastPathComponent)
        guard let result = await process.waitForExit(timeout: timeout) else {
            process.signal(SIGKILL)
            throw HarnessError("\(executable) \(arguments.joined(separator: " ")) did not end within \(timeout)")
        }
        return result
    }

    /// Sends one administrator's request as raw protocol frames from a separate client
    /// (python3), as a client other than `bgtask` may: hello, then `request` (a Python
    /// expression for the request's JSON object, `sys.argv[2]` being `argument`). Its output:
    /// the number of bytes received, then the last 400 characters of them.
    func rawAdminRequest(_ request: String, argument: String = "") async throws -> CommandResult {
        let client = """
            import json, socket, struct, sys
            def frame(request_id, request):
                payload = json.dumps({"id": request_id, "request": request}).encode()
                return struct.pack(">IB", len(payload), 1) + payload
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.connect(sys.argv[1])
            client.settimeout(10)
            client.sendall(frame(1, {"hello": {"_0": {"role": "admin"}}}) + frame(2, {"admin": {"_0": \(request)}}))
            received = b""
            while received.count(b'"id"') < 2:
                chunk = client.recv(65536)
                if not chunk: break
                received += chunk
            print(len(received))
            print(received.decode("utf-8", "replace")[-400:])
            """
        return try await run("/usr/bin/python3", ["-c", client, socketPath, argument])
    }

    // MARK: Apps

    /// Writes a JSON manifest for `app` and returns its path.
    func writeManifest(app: String, executable: String, arguments: [String], identifiers: [String], modes: [String] = ["fetch", "processing"], name: String? = nil) throws -> String {
        let directory = root + "/apps/" + (name ?? app)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let manifest: [String: Any] = [
            "CFBundleIdentifier": app, "CFBundleExecutable": executable, "BGTaskLaunchArguments": arguments,
            "BGTaskSchedulerPermittedIdentifiers": identifiers, "UIBackgroundModes": modes,
        ]
        let path = directory + "/app.json"
        try JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys]).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Where ``installTestApp(_:identifiers:arguments:)`` writes the manifest of `app`.
    func manifestPath(_ app: String) -> String { root + "/apps/" + app + "/app.json" }

    /// The environment of the test app run by hand as `app` (its manifest named, as the
    /// daemon names it for the processes it starts).
    func handEnvironment(_ app: String) -> [String: String] {
        environment.merging(["BGTASK_MANIFEST": manifestPath(app)]) { $1 }
    }

    /// The events file of a test app named `app`.
    func eventsPath(_ app: String) -> String { root + "/events-\(app)" }

    /// Installs the test app as `app` with `arguments` after its events file.
    @discardableResult
    func installTestApp(_ app: String, identifiers: [String], arguments: [String]) async throws -> String {
        let path = try writeManifest(app: app, executable: testApp, arguments: ["--events", eventsPath(app)] + arguments, identifiers: identifiers)
        let result = try await bgtask("install", path)
        guard result.status == 0 else { throw HarnessError("bgtask install \(path) failed: \(result)") }
        return path
    }

    /// The state `bgtask apps --json` reports for `app` ("notRunning", "ready", "suspended"...).
    func appState(_ app: String) async throws -> String? {
        let result = try await bgtask("apps", "--json")
        guard result.status == 0,
              let rows = try? JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [[String: Any]] else { return nil }
        return rows.first { $0["app"] as? String == app }?["state"] as? String
    }

    /// The identifiers `bgtask pending --json` lists for `app`.
    func pendingIdentifiers(_ app: String) async throws -> [String] {
        let result = try await bgtask("pending", app, "--json")
        guard result.status == 0,
              let rows = try? JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [[String: Any]] else {
            throw HarnessError("bgtask pending \(app) --json: \(result)")
        }
        return rows.compactMap { $0["identifier"] as? String }.sorted()
    }

    /// The lines the test app `app` recorded so far.
    func events(_ app: String) -> [String] {
        ((try? String(contentsOfFile: eventsPath(app), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Waits until `app` recorded a line starting with `prefix`; returns it.
    func waitForEvent(_ app: String, _ prefix: String, timeout: Duration = .seconds(10)) async -> String? {
        var found: String?
        _ = await poll(timeout: timeout) {
            found = self.events(app).first { $0.hasPrefix(prefix) }
            return found != nil
        }
        return found
    }

    /// The pid `app` recorded in its `launched` line (the latest launch).
    func launchedPID(_ app: String) -> Int32? {
        events(app).last { $0.hasPrefix("launched ") }.flatMap { Int32($0.split(separator: " ")[1]) }
    }

    // MARK: The store (read-only, as `bgtask log` reads it)

    /// The runs of `app` in the daemon's store.
    func runs(of app: String) throws -> [RunRecord] {
        let store = try SchedulerStore.openForReading(at: URL(fileURLWithPath: databasePath))
        defer { store.close() }
        return try store.runs(app: AppID(app))
    }

    /// The finished runs of `app` in `bgtask log --json` (those with an outcome), oldest first.
    func loggedRuns(_ app: String) async throws -> [[String: Any]] {
        let result = try await bgtask("log", "--json", "--app", app)
        guard result.status == 0,
              let document = try? JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any] else { return [] }
        return ((document["runs"] as? [[String: Any]]) ?? []).filter { $0["outcome"] is String }
    }

    /// Waits until a finished run of `app`/`identifier` is in `bgtask log --json`; returns its entry.
    func waitForLoggedRun(_ app: String, _ identifier: String, timeout: Duration = .seconds(10)) async throws -> [String: Any]? {
        var entry: [String: Any]?
        _ = try await poll(timeout: timeout, every: .milliseconds(100)) {
            entry = try await loggedRuns(app).last { ($0["identifier"] as? String) == identifier }
            return entry != nil
        }
        return entry
    }

    // MARK: Waiting

    /// Calls `condition` every `interval` (20 ms) until it holds (`true`) or `timeout`
    /// passes (`false`).
    func poll(timeout: Duration, every interval: Duration = .milliseconds(20), _ condition: () async throws -> Bool) async rethrows -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            if try await condition() { return true }
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: interval)
        }
    }

    /// Whether `pid` is a live process (a zombie counts as gone).
    static func isAlive(_ pid: Int32) -> Bool {
        guard pid > 0, Glibc.kill(pid, 0) == 0 else { return false }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(close, offsetBy: 2)]
        return state != "Z" && state != "X"
    }

    // MARK: Clean-up

    /// Kills every process this harness started and the apps they launched, and removes
    /// the directory. Call it in a `defer`.
    func cleanUp() {
        var appPIDs: [Int32] = []
        if let names = try? FileManager.default.contentsOfDirectory(atPath: root) {
            for name in names where name.hasPrefix("events-") {
                for line in events(String(name.dropFirst("events-".count))) where line.hasPrefix("launched ") {
                    if let pid = Int32(line.split(separator: " ")[1]) { appPIDs.append(pid) }
                }
            }
        }
        for process in started.withLock({ $0 }) { process.signal(SIGKILL) }
        for pid in appPIDs where Self.isAlive(pid) {
            // Only our test app: its command line names this harness's events file.
            if let command = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8), command.contains(root) {
                _ = Glibc.kill(pid, SIGKILL)
            }
        }
        try? FileManager.default.removeItem(atPath: root)
    }
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
