#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// Where an executable product of this package was built: beside the test bundle, in the
/// products directory of this build (SwiftPM builds it because the test target depends on it).
enum ProductBinary {
    struct Missing: Error, CustomStringConvertible {
        var name: String
        var searched: [String]
        var description: String {
            "\(name) was not found; looked in: \(searched.joined(separator: ", ")). "
                + "It is built by `swift build --build-tests` when its executable target is listed in "
                + "the BackgroundTasksTests dependencies."
        }
    }

    static func locate(_ name: String) throws -> URL {
        var directories: [URL] = []
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
        throw Missing(name: name, searched: searched)
    }
}

/// A fresh directory per test.
struct ScratchDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("bgtask-test-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// A child process: its standard output as lines, its stderr (kept in a file, so a chatty
/// child can never block on a full pipe), and its termination.
final class ChildProcess: Sendable {
    struct Termination: Sendable, CustomStringConvertible {
        var reason: Process.TerminationReason
        var status: Int32
        var description: String { reason == .exit ? "exit status \(status)" : "signal \(status)" }
    }

    /// The lines the child wrote to standard output.
    let output: LineCollector
    private let process: Process
    private let terminations: AsyncStream<Termination>
    private let standardErrorURL: URL

    /// The write end of the child's standard input, when it was started with one.
    private let input: FileHandle?

    /// Starts `executable` with `arguments`; its stderr goes to a file in `scratch`. With
    /// `standardInput`, ``send(_:)`` writes to its standard input; else it reads /dev/null.
    /// `environment`: the child's whole environment (`nil`: this process's).
    init(_ executable: URL, arguments: [String], scratch: URL, standardInput: Bool = false, environment: [String: String]? = nil) throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        process.standardOutput = output
        standardErrorURL = scratch.appendingPathComponent("\(executable.lastPathComponent).\(UUID().uuidString).stderr")
        _ = FileManager.default.createFile(atPath: standardErrorURL.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: standardErrorURL)
        let inputPipe = standardInput ? Pipe() : nil
        process.standardInput = inputPipe ?? FileHandle.nullDevice
        input = inputPipe?.fileHandleForWriting

        // The termination handler is set before run(), and feeds a buffered stream, so a
        // child that dies at once is not missed; async code never calls waitUntilExit().
        let (terminations, continuation) = AsyncStream.makeStream(of: Termination.self, bufferingPolicy: .bufferingOldest(1))
        process.terminationHandler = { finished in
            continuation.yield(Termination(reason: finished.terminationReason, status: finished.terminationStatus))
            continuation.finish()
        }
        self.process = process
        self.terminations = terminations
        self.output = LineCollector(reading: output.fileHandleForReading)
        try process.run()
        // Our copy of the write end must be closed, or the reader never sees end of file.
        try? output.fileHandleForWriting.close()
        try? inputPipe?.fileHandleForReading.close()
        self.output.start()
    }

    /// Writes `line` and a newline to the child's standard input.
    func send(_ line: String) {
        try? input?.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Sends `signal` to the child (it is not a process group leader; only it is signalled).
    /// The child's process identifier (the same after an `exec` from a shell).
    var processIdentifier: Int32 { process.processIdentifier }

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
        thread.name = "ChildProcess.LineCollector"
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
