#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SchedulerCore

/// Ends the app processes a previous daemon left behind (it was killed, so they were never
/// ended), from what the store recorded at launch: pid, process group, start time and
/// cgroup (docs/process-supervision.md, "Orphans"). A pid is only a name the kernel reuses,
/// so nothing is signalled unless `/proc/<pid>/stat` still shows the recorded start time.
public struct OrphanReaper: Sendable {
    /// What ``end(pid:processGroup:startTime:cgroupPath:)`` did.
    public enum Outcome: Sendable, Hashable, CustomStringConvertible {
        /// The recorded cgroup was killed (`cgroup.kill`): every process in it.
        case killedCgroup(String)
        /// `SIGKILL` went to the recorded process group.
        case killedProcessGroup(Int32)
        /// `SIGKILL` went to the pid alone (it had left its recorded group).
        case killedProcess(Int32)
        /// No such process any more, and no populated cgroup: nothing to do.
        case notRunning
        /// The pid now belongs to another process (its start time differs): left alone.
        case pidReused(recordedStartTime: UInt64, currentStartTime: UInt64)
        /// Signalling or killing failed; the text says why.
        case failed(String)

        /// For the daemon's log.
        public var description: String {
            switch self {
            case .killedCgroup(let path): return "killed cgroup \(path)"
            case .killedProcessGroup(let group): return "sent SIGKILL to process group \(group)"
            case .killedProcess(let pid): return "sent SIGKILL to process \(pid)"
            case .notRunning: return "not running"
            case .pidReused(let recorded, let current):
                return "pid reused (recorded start time \(recorded), now \(current)): left alone"
            case .failed(let why): return "failed: \(why)"
            }
        }
    }

    /// The procfs root (`/proc`).
    public let procRoot: String

    /// A reaper reading `procRoot`.
    public init(procRoot: String = "/proc") { self.procRoot = procRoot }

    /// Ends the recorded process if it is still the one launched.
    ///
    /// - The leader still runs with the recorded start time: its cgroup is killed when one
    ///   was recorded and exists, else its process group gets `SIGKILL` (the pid alone if
    ///   it left that group).
    /// - The leader is gone (or the pid is someone else's) but the recorded cgroup still
    ///   holds processes: the cgroup is the daemon's own (`<own>/apps/...`) and only the
    ///   app's processes can be in it, so it is killed.
    /// - Otherwise nothing is signalled.
    public func end(pid: Int32, processGroup: Int32, startTime: UInt64, cgroupPath: String?) -> Outcome {
        let current = pid > 0 ? ProcessStat.read(pid: pid, procRoot: procRoot) : nil
        let same = current.map { $0.startTime == startTime && $0.state != "Z" && $0.state != "X" } ?? false
        if let cgroup = cgroupPath, same || cgroupIsPopulated(cgroup) {
            do throws(KernelFileError) {
                try KernelFiles.write("1", to: cgroup + "/cgroup.kill")
                return .killedCgroup(cgroup)
            } catch {
                // No cgroup.kill (before Linux 5.14) or the cgroup vanished: fall through to signals.
                if !same { return .failed("\(error)") }
            }
        }
        guard let current else { return .notRunning }
        guard same else {
            if current.state == "Z" || current.state == "X" { return .notRunning }
            return .pidReused(recordedStartTime: startTime, currentStartTime: current.startTime)
        }
        if processGroup > 0, current.processGroup == processGroup {
            if kill(-processGroup, SIGKILL) == 0 { return .killedProcessGroup(processGroup) }
            return .failed("kill(-\(processGroup), SIGKILL): \(systemErrorText(errno))")
        }
        if kill(pid, SIGKILL) == 0 { return .killedProcess(pid) }
        return .failed("kill(\(pid), SIGKILL): \(systemErrorText(errno))")
    }

    private func cgroupIsPopulated(_ cgroup: String) -> Bool {
        guard let text = KernelFiles.text(cgroup + "/cgroup.events") else { return false }
        return KernelFiles.keyedNumbers(text)["populated"] == 1
    }
}
