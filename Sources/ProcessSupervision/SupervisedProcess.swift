#if canImport(Glibc)
import Glibc
#endif
import CLinux
import Dispatch
import Foundation
import SchedulerCore
import Synchronization

/// A process started by ``ProcessLauncher``: its identity, its exit, and the controls the
/// daemon applies to it (docs/process-supervision.md).
///
/// The exit is watched through a pidfd with a Dispatch read source, and exactly this child
/// is reaped (`wait4(pid)`): no `SIGCHLD` handler, no `waitpid(-1)`, so other children of
/// the process (Foundation's `Process`) are not disturbed.
public final class SupervisedProcess: Sendable {
    /// Called once when the process has ended and been reaped.
    public typealias ExitHandler = @Sendable (ProcessExitStatus, ResourceUsage) -> Void

    /// How ``suspend(timeout:)`` stopped the process.
    public enum SuspensionMethod: Sendable, Hashable {
        /// `cgroup.freeze` of its cgroup (every process in it, whatever its group).
        case cgroupFreezer
        /// `SIGSTOP` to its process group.
        case stopSignal
    }

    /// The process id.
    public let pid: Int32
    /// Its process group: it leads its own, so this equals ``pid``.
    public var processGroup: Int32 { pid }
    /// The absolute path of the cgroup it was started in, or `nil`.
    public let cgroupPath: String?
    /// Field 22 of `/proc/<pid>/stat` at launch (clock ticks after boot): with the pid, the
    /// identity recorded for ``OrphanReaper``; `nil` if it could not be read.
    public let startTime: UInt64?
    /// The executable's path.
    public let executable: String
    /// True when it was started with `clone3` (false: the `posix_spawn` fallback).
    public let usedClone3: Bool

    private let pidfd: Int32
    /// Serial queue of the exit watcher, the grace timer and the exit handlers.
    private let queue: DispatchQueue
    private let state = Mutex(State())

    private struct State {
        var exit: (status: ProcessExitStatus, usage: ResourceUsage)?
        var handlers: [ExitHandler] = []
        var source: DispatchSourceBox?
        var graceTimer: DispatchSourceBox?
        var suspension: SuspensionMethod?
        var terminationRequested = false
    }

    init(pid: Int32, pidfd: Int32, executable: String, cgroupPath: String?, startTime: UInt64?, usedClone3: Bool) {
        self.pid = pid
        self.pidfd = pidfd
        self.executable = executable
        self.cgroupPath = cgroupPath
        self.startTime = startTime
        self.usedClone3 = usedClone3
        self.queue = DispatchQueue(label: "bgtask.process.\(pid)")
        let source = DispatchSource.makeReadSource(fileDescriptor: pidfd, queue: queue)
        // The source holds the process object until the child is reaped; then it is
        // cancelled and the cycle is broken.
        source.setEventHandler { [self] in reap() }
        source.setCancelHandler { close(pidfd) }
        state.withLock { $0.source = DispatchSourceBox(source) }
        source.activate()
    }

    /// True until the process has been reaped.
    public var isRunning: Bool { state.withLock { $0.exit == nil } }

    /// How it ended, once reaped.
    public var exitStatus: ProcessExitStatus? { state.withLock { $0.exit?.status } }

    /// How it is suspended now, or `nil` when running normally.
    public var suspension: SuspensionMethod? { state.withLock { $0.suspension } }

    /// Calls `handler` once with the exit status and the reaped resource usage, on this
    /// process's own serial queue, never under a lock of ours. Registering after the exit
    /// still calls it (asynchronously).
    public func onExit(_ handler: @escaping ExitHandler) {
        let exit: (status: ProcessExitStatus, usage: ResourceUsage)? = state.withLock { state in
            if state.exit == nil { state.handlers.append(handler) }
            return state.exit
        }
        if let exit { queue.async { handler(exit.status, exit.usage) } }
    }

    /// Blocks until the process has been reaped or `timeout` has passed; the exit, or
    /// `nil` on timeout. Never call it from an exit handler (it would wait for itself).
    public func waitForExit(timeout: Duration) -> (status: ProcessExitStatus, usage: ResourceUsage)? {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<(status: ProcessExitStatus, usage: ResourceUsage)?>(nil)
        onExit { status, usage in
            result.withLock { $0 = (status, usage) }
            done.signal()
        }
        guard done.wait(timeout: .now() + dispatchInterval(timeout)) == .success else { return nil }
        return result.withLock { $0 }
    }

    /// On the pidfd's readiness: reap exactly this child, then call the handlers.
    private func reap() {
        var status: Int32 = 0
        var usage = rusage()
        var reaped: Int32
        repeat { reaped = clinux_wait4(pid, &status, clinux_wnohang(), &usage) } while reaped < 0 && errno == EINTR
        if reaped == 0 { return } // not ended yet (a spurious wake-up)
        let exit: (status: ProcessExitStatus, usage: ResourceUsage)
        if reaped == pid {
            exit = (ProcessExitStatus(waitStatus: status), ResourceUsage(usage))
        } else {
            // ECHILD: someone reaped it behind our back (SIGCHLD set to SIG_IGN, waitpid(-1)).
            exit = (.unknown("wait4(\(pid)): \(systemErrorText(errno))"), .zero)
        }
        let (handlers, source, timer, frozen) = state.withLock { state in
            state.exit = exit
            let frozen = state.suspension == .cgroupFreezer
            state.suspension = nil
            let handlers = state.handlers
            state.handlers = []
            defer {
                state.source = nil
                state.graceTimer = nil
            }
            return (handlers, state.source, state.graceTimer, frozen)
        }
        // A process that dies frozen (SIGKILL, or a fatal signal such as an unhandled SIGTERM,
        // passes the freezer) leaves its cgroup with `cgroup.freeze` 1, and a later resume
        // sees no suspension to undo: thaw the cgroup here, before the handlers learn of the
        // exit, so that no cgroup outlives its process frozen (the next process started in it
        // would be frozen at once).
        if frozen, let cgroup = cgroupPath { try? KernelFiles.write("0", to: "\(cgroup)/cgroup.freeze") }
        timer?.source.cancel()
        source?.source.cancel()
        for handler in handlers { handler(exit.status, exit.usage) }
    }

    // MARK: Signals

    /// Sends `signal` to the whole process group (`kill(-pgid, signal)`). False when the
    /// group no longer exists (ESRCH).
    @discardableResult
    public func signalGroup(_ signal: Int32) throws(SupervisionError) -> Bool {
        if kill(-pid, signal) == 0 { return true }
        let code = errno
        if code == ESRCH { return false }
        throw SupervisionError(pid: pid, operation: "kill(-\(pid), \(signalName(signal)))", code: code)
    }

    /// Stops the process: with a cgroup, writes 1 to `cgroup.freeze` and waits (at most
    /// `timeout`) until `cgroup.events` says `frozen 1`; without one, `SIGSTOP` to the
    /// group. Already suspended: nothing more is done.
    @discardableResult
    public func suspend(timeout: Duration = .seconds(1)) throws(SupervisionError) -> SuspensionMethod {
        if let current = suspension { return current }
        guard isRunning else { throw SupervisionError(pid: pid, operation: "suspend", code: ESRCH) }
        if let cgroup = cgroupPath, access("\(cgroup)/cgroup.freeze", W_OK) == 0 {
            do throws(KernelFileError) {
                try KernelFiles.write("1", to: "\(cgroup)/cgroup.freeze")
            } catch {
                throw SupervisionError(pid: pid, operation: "freeze", code: error.code, detail: error.description)
            }
            // Marked before waiting: a freeze still in progress is undone by resume/terminate.
            state.withLock { $0.suspension = .cgroupFreezer }
            if !waitForFrozen(cgroup, frozen: true, timeout: timeout) {
                throw SupervisionError(pid: pid, operation: "freeze", code: ETIMEDOUT,
                                       detail: "\(cgroup)/cgroup.events did not say frozen 1 within \(timeout)")
            }
            return .cgroupFreezer
        }
        try signalGroup(SIGSTOP)
        state.withLock { $0.suspension = .stopSignal }
        return .stopSignal
    }

    /// Undoes ``suspend(timeout:)`` (`cgroup.freeze` 0, or `SIGCONT` to the group); does
    /// nothing when the process is not suspended.
    public func resume() throws(SupervisionError) {
        let method = state.withLock { state in
            defer { state.suspension = nil }
            return state.suspension
        }
        switch method {
        case nil: return
        case .cgroupFreezer:
            guard let cgroup = cgroupPath else { return }
            do throws(KernelFileError) {
                try KernelFiles.write("0", to: "\(cgroup)/cgroup.freeze")
            } catch {
                throw SupervisionError(pid: pid, operation: "thaw", code: error.code, detail: error.description)
            }
        case .stopSignal:
            try signalGroup(SIGCONT)
        }
    }

    /// Polls `cgroup.events` until its `frozen` line has the wanted value (the freezer
    /// completes asynchronously), at most `timeout`.
    private func waitForFrozen(_ cgroup: String, frozen: Bool, timeout: Duration) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        let wanted: UInt64 = frozen ? 1 : 0
        while true {
            if let text = KernelFiles.text("\(cgroup)/cgroup.events"), KernelFiles.keyedNumbers(text)["frozen"] == wanted {
                return true
            }
            if clock.now >= deadline { return false }
            usleep(500)
        }
    }

    /// Ends the process: `SIGTERM` to its group (with a cgroup, to every process in the
    /// cgroup), after thawing or continuing it if it was suspended (a stopped process never
    /// handles `SIGTERM`); then, if it has not exited when `gracePeriod` ends, `SIGKILL`
    /// (with a cgroup, `cgroup.kill`). The timer is cancelled by the exit. Calling it again
    /// while a termination is under way does nothing.
    public func terminate(gracePeriod: Duration = .seconds(3)) {
        let proceed = state.withLock { state in
            guard state.exit == nil, !state.terminationRequested else { return false }
            state.terminationRequested = true
            return true
        }
        guard proceed else { return }
        sendToAll(SIGTERM)
        // SIGTERM first, then thaw: the signal is pending when the process runs again.
        try? resume()
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + dispatchInterval(gracePeriod))
        timer.setEventHandler { [self] in
            if isRunning { killNow() }
        }
        let exited = state.withLock { state in
            if state.exit == nil { state.graceTimer = DispatchSourceBox(timer) }
            return state.exit != nil
        }
        // Always activated (libdispatch forbids releasing an inactive source); one that
        // lost the race with the exit is cancelled at once, and its handler checks anyway.
        timer.activate()
        if exited { timer.cancel() }
    }

    /// Once the process has exited (call it from an exit handler): ends what it left behind
    /// in its process group (and cgroup), helpers that would otherwise run on for good
    /// (without a cgroup nothing else reaches them). `SIGTERM` (and `SIGCONT`, for helpers
    /// stopped with the group) to every one, then, after `gracePeriod`, `SIGKILL` to those left
    /// (`cgroup.kill` with a cgroup). Does nothing while the process runs or when nothing is left.
    ///
    /// The group's id cannot be given to another process while the group has members, so
    /// the `SIGTERM` reaches the app's helpers only. At the grace's end the group may have
    /// emptied and its id been reused, so what is left is ended as ``OrphanReaper`` ends a
    /// gone leader's leftovers: the cgroup killed while it holds anything (only the app's
    /// processes can be in it), else the group, only when each member started no earlier
    /// than the leader and is not in a session the group's id leads.
    public func endLeftovers(gracePeriod: Duration = .seconds(3)) {
        guard !isRunning else { return }
        let cgroupPopulated = cgroupPath.map { KernelFiles.cgroupIsPopulated($0) } ?? false
        guard cgroupPopulated || kill(-pid, 0) == 0 else { return }
        sendToAll(SIGTERM)
        sendToAll(SIGCONT)
        // Without a start time (it could not be read at launch) 0 lets every member pass
        // the start-time check; the session check still applies.
        let startTime = startTime ?? 0
        // The cgroup is the app's while it is this directory: when its leftovers end within the
        // grace, a launch of the app may remove the empty cgroup and make it again at the same
        // path for its new process, which cgroup.kill must not reach.
        let identity = cgroupPath.flatMap(KernelFiles.directoryIdentity)
        queue.asyncAfter(deadline: .now() + dispatchInterval(gracePeriod)) { [pid, cgroupPath] in
            let reaper = OrphanReaper()
            let cgroupPath = Self.sameCgroup(cgroupPath, identity: identity)
            let outcome = reaper.end(pid: pid, processGroup: pid, startTime: startTime, cgroupPath: cgroupPath)
            // No cgroup.kill (before Linux 5.14): end gives up on the cgroup of a leader that
            // is gone, but the group's checked members still get SIGKILL, as without a cgroup.
            if case .failed = outcome, cgroupPath != nil { _ = reaper.endLeftoverGroup(pid, leader: pid, startTime: startTime) }
        }
    }

    /// `path` when the directory there is still the one whose identity was `identity`
    /// (``KernelFiles/directoryIdentity(_:)``), else `nil`: a cgroup made again at the path
    /// belongs to a newer process of the app.
    static func sameCgroup(_ path: String?, identity: UInt64?) -> String? {
        guard let path, let identity, KernelFiles.directoryIdentity(path) == identity else { return nil }
        return path
    }

    /// `SIGKILL` now: `cgroup.kill` when there is a cgroup (every process in it, however
    /// it escaped the group), else to the process group. Fatal signals pass the freezer
    /// and `SIGSTOP`.
    public func killNow() {
        if let cgroup = cgroupPath, (try? KernelFiles.write("1", to: "\(cgroup)/cgroup.kill")) != nil { return }
        sendToAll(SIGKILL)
    }

    /// `signal` to every process of the cgroup (when listed), and to the process group.
    private func sendToAll(_ signal: Int32) {
        if let cgroup = cgroupPath {
            for member in KernelFiles.cgroupProcesses(cgroup) { kill(member, signal) }
        }
        kill(-pid, signal)
    }
}

/// A Dispatch source kept in locked state. Sources are thread-safe objects (`cancel` and
/// `activate` may be called from any thread; libdispatch synchronizes them internally), but
/// the Linux overlay does not mark them `Sendable`: hence `@unchecked`.
private struct DispatchSourceBox: @unchecked Sendable {
    let source: any DispatchSourceProtocol
    init(_ source: any DispatchSourceProtocol) { self.source = source }
}

/// A signal, freezer or cgroup operation on a supervised process that failed.
public struct SupervisionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The process concerned.
    public var pid: Int32
    /// What was attempted (`kill(-123, SIGSTOP)`, `freeze`).
    public var operation: String
    /// `errno`.
    public var code: Int32
    /// More detail (the file concerned), or empty.
    public var detail: String

    /// Creates an error.
    public init(pid: Int32, operation: String, code: Int32, detail: String = "") {
        self.pid = pid
        self.operation = operation
        self.code = code
        self.detail = detail
    }

    /// `process 123: freeze: <detail or the system's reason>`.
    public var description: String {
        "process \(pid): \(operation): " + (detail.isEmpty ? systemErrorText(code) : detail)
    }
}

/// A `Duration` as a Dispatch interval, clamped to [0, 1 day] (a huge or negative value
/// from a configuration must not trap or wrap).
func dispatchInterval(_ duration: Duration) -> DispatchTimeInterval {
    let (seconds, attoseconds) = duration.components
    if seconds < 0 { return .nanoseconds(0) }
    if seconds >= 86_400 { return .seconds(86_400) }
    return .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
}
