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
        /// The leader is gone, but processes it left in its group were still there:
        /// `SIGKILL` went to the group (`count` members were found).
        case killedLeftoverGroup(Int32, count: Int)
        /// The leader is gone and a group with its id exists, but its members cannot be the
        /// app's (one started before the app, or leads the session the id names): left alone.
        case groupNotTheApps(Int32, String)
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
            case .killedLeftoverGroup(let group, let count):
                return "its leader is gone; sent SIGKILL to the \(count) process(es) left in its group \(group)"
            case .groupNotTheApps(let group, let why): return "process group \(group) is not the app's (\(why)): left alone"
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
    /// - The leader is gone but its group still has members (helpers it started, without a
    ///   cgroup to hold them): they get `SIGKILL` if each is the app's by what was recorded
    ///   (``endLeftoverGroup(_:leader:startTime:)``).
    /// - Otherwise nothing is signalled.
    public func end(pid: Int32, processGroup: Int32, startTime: UInt64, cgroupPath: String?) -> Outcome {
        let current = pid > 0 ? ProcessStat.read(pid: pid, procRoot: procRoot) : nil
        let same = current?.isLiveProcess(startedAt: startTime) ?? false
        if let cgroup = cgroupPath, same || KernelFiles.cgroupIsPopulated(cgroup) {
            do throws(KernelFileError) {
                try KernelFiles.write("1", to: cgroup + "/cgroup.kill")
                return .killedCgroup(cgroup)
            } catch {
                // No cgroup.kill (before Linux 5.14) or the cgroup vanished: fall through to signals.
                if !same { return .failed("\(error)") }
            }
        }
        guard let current, current.state != "Z", current.state != "X" else {
            // The leader is gone (or a zombie), but helpers it left in its group may live on:
            // without a cgroup nothing else would ever end them.
            return endLeftoverGroup(processGroup, leader: pid, startTime: startTime)
        }
        guard same else {
            // The leader's pid now names another process: the number was free, so no group of
            // the app can hold it any more (a group's id is not reused while it has members).
            return .pidReused(recordedStartTime: startTime, currentStartTime: current.startTime)
        }
        if processGroup > 0, current.processGroup == processGroup {
            if kill(-processGroup, SIGKILL) == 0 { return .killedProcessGroup(processGroup) }
            return .failed("kill(-\(processGroup), SIGKILL): \(systemErrorText(errno))")
        }
        if kill(pid, SIGKILL) == 0 { return .killedProcess(pid) }
        return .failed("kill(\(pid), SIGKILL): \(systemErrorText(errno))")
    }

    /// Kills every app cgroup under `appsCgroup` (the daemon's own `<own>/apps`) that still
    /// holds processes, for a daemon that has started nothing yet: each is a previous
    /// daemon's (when no other daemon shares the subtree:
    /// ``CgroupDelegation/otherProcessesInDaemonLeaf()`` tells), and one it had not recorded (its store full at the launch: an outside
    /// probe's frozen app stayed for ever) is found by no record. Call it after
    /// ``end(pid:processGroup:startTime:cgroupPath:)`` has ended the recorded ones. Returns
    /// each cgroup killed, or the reason it could not be (no `cgroup.kill` before Linux 5.14).
    /// `excluding`: the cgroups those calls killed already (a kill takes a moment to empty
    /// one, which would read as populated still).
    public func endUnrecordedAppCgroups(under appsCgroup: String, excluding killed: Set<String> = []) -> [(cgroup: String, failure: String?)] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: appsCgroup) else { return [] }
        var ended: [(cgroup: String, failure: String?)] = []
        for name in names.sorted() {
            let path = appsCgroup + "/" + name
            guard !killed.contains(path) else { continue }
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, KernelFiles.cgroupIsPopulated(path) else { continue }
            do throws(KernelFileError) {
                try KernelFiles.write("1", to: path + "/cgroup.kill")
                ended.append((path, nil))
            } catch {
                ended.append((path, "\(error)"))
            }
        }
        return ended
    }

    /// Ends the processes the app's leader left in its group `group` after the leader died.
    ///
    /// A group's id stays taken while the group has members, so while the app's helpers live,
    /// `group` is theirs. It could only name someone else's group if the app's group emptied,
    /// the number was given to a new process that made a group of it, and that process then
    /// died leaving members: so every member is checked against what the store recorded. The
    /// app's helpers were started no earlier than the leader (recorded start time), and they
    /// are in the session the daemon ran in, which the leader (a group leader, never a session
    /// leader) did not lead: a member started earlier, or in a session whose id is the group's
    /// (a `setsid` program's), is not the app's, and nothing is signalled.
    func endLeftoverGroup(_ group: Int32, leader: Int32, startTime: UInt64) -> Outcome {
        // A group at or below 1 is never signalled (kill(-1) reaches every process); only a
        // group the leader led is the app's.
        guard group > 1, group == leader else { return .notRunning }
        if kill(-group, 0) != 0 { return .notRunning } // ESRCH: no member left (EPERM: not ours)
        let members = processes(inGroup: group)
        guard !members.isEmpty else { return .notRunning }
        if let early = members.first(where: { $0.stat.startTime < startTime }) {
            return .groupNotTheApps(group, "process \(early.pid) started before the app (start time \(early.stat.startTime) < \(startTime))")
        }
        if let leading = members.first(where: { $0.stat.session == group }) {
            return .groupNotTheApps(group, "process \(leading.pid) is in session \(group), which the app's leader never led")
        }
        if kill(-group, SIGKILL) == 0 { return .killedLeftoverGroup(group, count: members.count) }
        if errno == ESRCH { return .notRunning }
        return .failed("kill(-\(group), SIGKILL): \(systemErrorText(errno))")
    }

    /// The live processes whose group is `group`, read from `procRoot`.
    private func processes(inGroup group: Int32) -> [(pid: Int32, stat: ProcessStat)] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: procRoot) else { return [] }
        var members: [(pid: Int32, stat: ProcessStat)] = []
        for name in names {
            guard let pid = Int32(name), pid > 0, let stat = ProcessStat.read(pid: pid, procRoot: procRoot),
                  stat.processGroup == group, stat.state != "Z", stat.state != "X" else { continue }
            members.append((pid, stat))
        }
        return members
    }
}
