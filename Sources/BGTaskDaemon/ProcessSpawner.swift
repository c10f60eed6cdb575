import Foundation
import ProcessSupervision
import SchedulerCore
import Synchronization

/// Starts app processes with ``ProcessSupervision``: argv arrays, no shell, exactly the
/// environment given, their own process group, and their own cgroup under the daemon's
/// delegated subtree when there is one (docs/process-supervision.md). Their standard
/// output and error are appended to `<state>/logs/<app>.log`.
public struct ProcessSpawner: AppSpawner {
    /// The delegated cgroup subtree, or `nil` (process groups only).
    public let delegation: CgroupDelegation?
    /// Where app output goes.
    public let logDirectory: String
    /// Where diagnostics go.
    public let log: @Sendable (String) -> Void

    /// Creates a spawner.
    public init(delegation: CgroupDelegation?, logDirectory: String, log: @escaping @Sendable (String) -> Void) {
        self.delegation = delegation
        self.logDirectory = logDirectory
        self.log = log
    }

    /// Starts `target`'s executable as an app process of the daemon (its own process group,
    /// or cgroup when delegated; an empty signal mask), ends it with SIGTERM and then SIGKILL
    /// `killGrace` seconds later when terminated, and calls `onExit` once with its pid and
    /// how it ended. Throws when the process could not be started.
    public func spawn(_ target: LaunchTarget, killGrace: TimeInterval, onExit: @escaping @Sendable (_ pid: Int32, _ how: String) -> Void) throws -> any AppProcess {
        var cgroup: String?
        if let delegation {
            do {
                cgroup = try delegation.makeAppCgroup(for: target.app.rawValue)
            } catch {
                log("no cgroup for \(target.app) (\(error)); it runs in its own process group only")
            }
        }
        let output = (logDirectory as NSString).appendingPathComponent(CgroupDelegation.cgroupName(for: target.app.rawValue) + ".log")
        let spec = LaunchSpec(
            executable: target.executable,
            arguments: [(target.executable as NSString).lastPathComponent] + target.arguments,
            environment: target.environment,
            standardOutput: .appendToFile(output),
            standardError: .appendToFile(output),
            cgroup: cgroup)
        let process = try ProcessLauncher.launch(spec)
        let app = SupervisedAppProcess(process: process)
        let pid = process.pid
        let grace = SupervisedAppProcess.duration(ofGrace: killGrace)
        process.onExit { [app] status, usage in
            app.reaped.withLock { $0 = usage }
            // The app is its process: helpers it left in its group (a shell's `cmd &`) end with
            // it, as on iOS, instead of running on for good where no cgroup holds them.
            process.endLeftovers(gracePeriod: grace)
            onExit(pid, app.describe(status))
        }
        return app
    }
}

/// A ``SupervisedProcess`` as the supervisor drives it.
final class SupervisedAppProcess: AppProcess {
    let process: SupervisedProcess
    /// The leader's rusage once it was reaped (the end of a run cut off by its exit).
    let reaped = Mutex<ResourceUsage?>(nil)
    /// Whether ``terminate(gracePeriod:)`` was called: a SIGTERM or SIGKILL then is the
    /// daemon's, and the words of the exit say so.
    private let terminated = Mutex(false)

    init(process: SupervisedProcess) { self.process = process }

    var pid: Int32 { process.pid }
    var startTime: UInt64 { process.startTime ?? 0 }
    var cgroupPath: String? { process.cgroupPath }

    func suspend() -> Bool { (try? process.suspend()) == .cgroupFreezer }
    func resume() { try? process.resume() }
    func terminate(gracePeriod: TimeInterval) {
        terminated.withLock { $0 = true }
        process.terminate(gracePeriod: Self.duration(ofGrace: gracePeriod))
    }

    /// How the process ended, in words (``ProcessExitStatus``): a SIGTERM or SIGKILL after
    /// ``terminate(gracePeriod:)`` is said to be the daemon's, so that the record of a run
    /// it cut off and the daemon's log do not read as someone else's kill.
    func describe(_ status: ProcessExitStatus) -> String {
        if case .signaled(let signal, _) = status, signal == SIGTERM || signal == SIGKILL, terminated.withLock({ $0 }) {
            return "\(status), sent by bgtaskd"
        }
        return "\(status)"
    }

    /// A SIGTERM-to-SIGKILL grace in seconds as a `Duration`, kept within 0 s ... 1 h (a
    /// configured value outside it, or not a number, cannot overflow the milliseconds).
    static func duration(ofGrace seconds: TimeInterval) -> Duration {
        .milliseconds(Int64(min(max(seconds.isNaN ? 0 : seconds, 0), 3600) * 1000))
    }
}
