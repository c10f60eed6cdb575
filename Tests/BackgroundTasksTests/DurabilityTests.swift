#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SchedulerCore
import SchedulerStore
import Synchronization
import Testing

extension ProcessTests {
    /// DESIGN "Durability": a `submit` that returned has been committed to SQLite, so killing
    /// the process at any instant loses no acknowledged request.
    ///
    /// The child, `bgtask-durability-probe`, submits requests through the real driver and
    /// store and writes each identifier to stdout after its submit returned. The test reads
    /// the acknowledgements, kills the child with SIGKILL in the middle of its loop, reopens
    /// the store and checks that every acknowledged request is pending.
    @Suite struct Durability {
        /// The app the probe submits for.
        static let app = AppID("com.example.durable")

        @Test func everyAcknowledgedSubmitSurvivesSIGKILL() async throws {
            let probe = try ProbeBinary.locate()
            let directory = try DurabilityScratch()
            defer { directory.remove() }

            // Far more than it can submit before the kill, so the kill lands mid-loop.
            let child = try ProbeProcess(probe: probe, stateDirectory: directory.url, count: 1_000_000)
            let killAfter = Int.random(in: 200...400)
            let reached = await child.acknowledgements.waitFor(atLeast: killAfter, timeout: .seconds(120))
            #expect(reached, "the probe acknowledged only \(child.acknowledgements.lines.count) submits before it stopped or the 120 s timeout; stderr: \(child.standardError())")
            child.kill(SIGKILL)
            let termination = await child.termination()
            await child.acknowledgements.waitForEndOfFile()

            // Killed by our signal, not finished or crashed on its own.
            #expect(termination.reason == .uncaughtSignal && termination.status == SIGKILL,
                    "expected the probe to die of SIGKILL, got \(termination); stderr: \(child.standardError())")

            // Everything written to the pipe before the kill was acknowledged, including lines
            // the test had not read yet when it sent the signal.
            let acknowledged = child.acknowledgements.lines
            #expect(acknowledged.count >= killAfter)
            #expect(acknowledged == (0..<acknowledged.count).map { "com.example.durable.\($0)" },
                    "acknowledgements are not the identifiers in order: \(acknowledged.prefix(5))...")

            let (store, report) = try SchedulerStore.open(at: directory.url.appendingPathComponent("scheduler.sqlite"), now: Date())
            #expect(report.movedAsideCorruptFile == nil, "the store was found corrupt after the kill: \(report.corruptionDetail ?? "")")
            let pending = try store.pendingRequests(app: Self.app)
            let pendingIdentifiers = Set(pending.map(\.identifier))
            let lost = acknowledged.filter { !pendingIdentifiers.contains($0) }
            #expect(lost.isEmpty, "\(lost.count) of \(acknowledged.count) acknowledged submits are missing after SIGKILL: \(lost.prefix(10))")
            // At most the one submit in flight at the kill may be on disk unacknowledged.
            let inFlight = "com.example.durable.\(acknowledged.count)"
            let unexpected = pendingIdentifiers.subtracting(acknowledged).subtracting([inFlight])
            #expect(unexpected.isEmpty, "requests on disk that were never submitted: \(unexpected.sorted().prefix(10))")
            #expect(pending.allSatisfy { $0.kind == .processing && $0.app == Self.app })
        }

        /// The probe itself works: left alone it submits everything and exits 0, and the store
        /// then holds exactly what it acknowledged (so the kill test's findings are about the
        /// kill, not about a broken probe).
        @Test func probeRunToCompletionPersistsEverySubmit() async throws {
            let probe = try ProbeBinary.locate()
            let directory = try DurabilityScratch()
            defer { directory.remove() }

            let child = try ProbeProcess(probe: probe, stateDirectory: directory.url, count: 25)
            let termination = await child.termination()
            await child.acknowledgements.waitForEndOfFile()
            #expect(termination.reason == .exit && termination.status == 0, "probe ended with \(termination); stderr: \(child.standardError())")

            let expected = (0..<25).map { "com.example.durable.\($0)" }
            #expect(child.acknowledgements.lines == expected)
            let (store, _) = try SchedulerStore.open(at: directory.url.appendingPathComponent("scheduler.sqlite"), now: Date())
            #expect(Set(try store.pendingRequests(app: Self.app).map(\.identifier)) == Set(expected))
        }
    }
}

// MARK: - Support

/// Where `bgtask-durability-probe` was built: beside the test bundle, in the products
/// directory of this build (SwiftPM builds it because the test target depends on it).
enum ProbeBinary {
    static let name = "bgtask-durability-probe"

    struct Missing: Error, CustomStringConvertible {
        var searched: [String]
        var description: String {
            "\(ProbeBinary.name) was not found; looked in: \(searched.joined(separator: ", ")). "
                + "It is built by `swift build --build-tests` when the executable target \(ProbeBinary.name) "
                + "(Tests/DurabilityProbe) is declared and listed in the BackgroundTasksTests dependencies; "
                + "set BGTASK_DURABILITY_PROBE to its path to override."
        }
    }

    static func locate() throws -> URL {
        var directories: [URL] = []
        if let override = ProcessInfo.processInfo.environment["BGTASK_DURABILITY_PROBE"], !override.isEmpty {
            let url = URL(fileURLWithPath: override)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
            throw Missing(searched: [override])
        }
        // On Linux the test bundle `<products>/<package>PackageTests.xctest` is the running
        // executable itself; on macOS it is a bundle inside the products directory.
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            directories.append(URL(fileURLWithPath: executable).deletingLastPathComponent())
        }
        for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
            directories.append(bundle.bundleURL.deletingLastPathComponent())
        }
        let mainBundle = Bundle.main.bundleURL
        directories.append(mainBundle.pathExtension == "xctest" ? mainBundle.deletingLastPathComponent() : mainBundle)
        if let first = CommandLine.arguments.first {
            directories.append(URL(fileURLWithPath: first).deletingLastPathComponent())
        }
        var searched: [String] = []
        for directory in directories {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            if !searched.contains(directory.path) { searched.append(directory.path) }
        }
        throw Missing(searched: searched)
    }
}

/// A fresh state directory per test.
struct DurabilityScratch {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("DurabilityTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// The probe as a child process: its acknowledgements (stdout lines), its stderr (kept in a
/// file, so a chatty child can never block on a full pipe), and its termination.
final class ProbeProcess: Sendable {
    struct Termination: Sendable, CustomStringConvertible {
        var reason: Process.TerminationReason
        var status: Int32
        var description: String { reason == .exit ? "exit status \(status)" : "signal \(status)" }
    }

    let acknowledgements: LineCollector
    private let process: Process
    private let terminations: AsyncStream<Termination>
    private let standardErrorURL: URL

    init(probe: URL, stateDirectory: URL, count: Int) throws {
        let process = Process()
        process.executableURL = probe
        process.arguments = [stateDirectory.path, String(count)]
        let output = Pipe()
        process.standardOutput = output
        standardErrorURL = stateDirectory.appendingPathComponent("probe.stderr")
        _ = FileManager.default.createFile(atPath: standardErrorURL.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: standardErrorURL)
        process.standardInput = FileHandle.nullDevice

        // The termination handler is set before run(), and feeds a buffered stream, so a
        // child that dies at once is not missed; async code never calls waitUntilExit().
        let (terminations, continuation) = AsyncStream.makeStream(of: Termination.self, bufferingPolicy: .bufferingOldest(1))
        process.terminationHandler = { finished in
            continuation.yield(Termination(reason: finished.terminationReason, status: finished.terminationStatus))
            continuation.finish()
        }
        self.process = process
        self.terminations = terminations
        self.acknowledgements = LineCollector(reading: output.fileHandleForReading)
        try process.run()
        // Our copy of the write end must be closed, or the reader never sees end of file.
        try? output.fileHandleForWriting.close()
        acknowledgements.start()
    }

    /// Sends `signal` to the child (it is not a process group leader; only it is signalled).
    func kill(_ signal: Int32) {
        let pid = process.processIdentifier
        if pid > 0 { _ = Glibc.kill(pid, signal) }
    }

    /// Waits for the child to end (through its termination handler).
    func termination() async -> Termination {
        for await termination in terminations { return termination }
        // The stream ends only after yielding; reached only if it was consumed twice.
        return Termination(reason: process.terminationReason, status: process.terminationStatus)
    }

    /// What the child wrote to standard error so far.
    func standardError() -> String {
        (try? String(contentsOf: standardErrorURL, encoding: .utf8)) ?? ""
    }

    deinit {
        if process.isRunning { _ = Glibc.kill(process.processIdentifier, SIGKILL) }
    }
}

/// Reads newline-terminated lines from a file handle on its own thread (blocking reads stay
/// off Swift's cooperative pool) and lets async code wait for a number of lines or for the
/// end of the file.
final class LineCollector: Sendable {
    private struct State {
        var lines: [String] = []
        var partial: [UInt8] = []
        var finished = false
        var stoppedWaiting = false
        var waiters: [(minimum: Int, continuation: CheckedContinuation<Bool, Never>)] = []
        var endWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let handle: FileHandle
    private let state = Mutex(State())

    init(reading handle: FileHandle) {
        self.handle = handle
    }

    /// The complete lines read so far (a trailing fragment without newline is not a line).
    var lines: [String] { state.withLock { $0.lines } }

    func start() {
        let thread = Thread { [self] in readUntilEndOfFile() }
        thread.name = "DurabilityTests.LineCollector"
        thread.start()
    }

    private func readUntilEndOfFile() {
        let descriptor = handle.fileDescriptor
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
                for byte in buffer[0..<count] {
                    if byte == UInt8(ascii: "\n") {
                        state.lines.append(String(decoding: state.partial, as: UTF8.self))
                        state.partial.removeAll(keepingCapacity: true)
                    } else {
                        state.partial.append(byte)
                    }
                }
                let lineCount = state.lines.count
                let (done, waiting) = state.waiters.reduce(into: ([CheckedContinuation<Bool, Never>](), [(minimum: Int, continuation: CheckedContinuation<Bool, Never>)]())) { result, waiter in
                    if lineCount >= waiter.minimum { result.0.append(waiter.continuation) } else { result.1.append(waiter) }
                }
                state.waiters = waiting
                return done
            }
            for continuation in ready { continuation.resume(returning: true) }
        }
        let (waiters, endWaiters) = state.withLock { state in
            state.finished = true
            defer { state.waiters = []; state.endWaiters = [] }
            return (state.waiters.map(\.continuation), state.endWaiters)
        }
        for waiter in waiters { waiter.resume(returning: false) }
        for waiter in endWaiters { waiter.resume() }
    }

    /// Waits until at least `minimum` lines arrived (`true`), or the file ended or
    /// `timeout` passed first (`false`).
    func waitFor(atLeast minimum: Int, timeout: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.waitFor(atLeast: minimum) }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            if !first { self.releaseWaiters() }
            return first
        }
    }

    private func waitFor(atLeast minimum: Int) async -> Bool {
        await withCheckedContinuation { continuation in
            let immediate = state.withLock { state -> Bool? in
                if state.lines.count >= minimum { return true }
                if state.finished || state.stoppedWaiting { return false }
                state.waiters.append((minimum, continuation))
                return nil
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
    }

    /// Resumes pending line waiters with `false`, and makes later ones return at once
    /// (after a timeout).
    private func releaseWaiters() {
        let waiters = state.withLock { state in
            state.stoppedWaiting = true
            defer { state.waiters = [] }
            return state.waiters.map(\.continuation)
        }
        for waiter in waiters { waiter.resume(returning: false) }
    }

    /// Waits until the writer closed its end (the child exited or was killed).
    func waitForEndOfFile() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let finished = state.withLock { state -> Bool in
                if state.finished { return true }
                state.endWaiters.append(continuation)
                return false
            }
            if finished { continuation.resume() }
        }
    }
}
