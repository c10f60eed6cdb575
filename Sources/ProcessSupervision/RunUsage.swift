#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SchedulerCore

/// What one run of a task cost (docs/process-supervision.md, "Measurement"): the
/// difference between a snapshot at the run's start and one at its end.
public struct RunUsage: Sendable, Hashable {
    /// Where the CPU figure (and whatever else that source offers) came from.
    public enum Source: String, Sendable, Hashable {
        /// The app's cgroup: `cpu.stat` `usage_usec`, `memory.peak`, `io.stat` (every
        /// process of the app, children included).
        case cgroup
        /// The reaped leader's `rusage` from `wait4` (it and the children it waited for).
        case rusage
        /// `/proc/<pid>/stat`, `status` and `io` of a leader still alive at the run's end.
        case procfs
    }

    /// User plus system CPU time, seconds.
    public var cpuSeconds: Double
    /// Peak resident memory in bytes: the cgroup's `memory.peak` when it has a memory
    /// controller, else the leader's high-water mark (`ru_maxrss`, `VmHWM`). A peak since
    /// the process (or cgroup) began, not since the run began: peaks cannot be subtracted.
    public var peakMemoryBytes: UInt64?
    /// Bytes read from storage (`io.stat` rbytes, `/proc/<pid>/io` read_bytes, or blocks × 512).
    public var bytesRead: UInt64?
    /// Bytes written to storage.
    public var bytesWritten: UInt64?
    /// Read operations or 512-byte blocks read (`io.stat` rios, `ru_inblock`).
    public var blocksRead: UInt64?
    /// Write operations or 512-byte blocks written (`io.stat` wios, `ru_oublock`).
    public var blocksWritten: UInt64?
    /// Where the figures came from.
    public var source: Source

    /// Creates a usage record.
    public init(cpuSeconds: Double, peakMemoryBytes: UInt64?, bytesRead: UInt64?, bytesWritten: UInt64?,
                blocksRead: UInt64?, blocksWritten: UInt64?, source: Source) {
        self.cpuSeconds = cpuSeconds
        self.peakMemoryBytes = peakMemoryBytes
        self.bytesRead = bytesRead
        self.bytesWritten = bytesWritten
        self.blocksRead = blocksRead
        self.blocksWritten = blocksWritten
        self.source = source
    }
}

/// Cumulative counters at one instant, from one source; two of them make a ``RunUsage``.
public struct UsageSnapshot: Sendable, Hashable {
    /// The source.
    public var source: RunUsage.Source
    /// CPU microseconds so far.
    public var cpuMicroseconds: UInt64
    /// Peak memory so far, bytes.
    public var peakMemoryBytes: UInt64?
    /// Bytes read so far.
    public var bytesRead: UInt64?
    /// Bytes written so far.
    public var bytesWritten: UInt64?
    /// Read operations or blocks so far.
    public var blocksRead: UInt64?
    /// Write operations or blocks so far.
    public var blocksWritten: UInt64?

    /// Creates a snapshot.
    public init(source: RunUsage.Source, cpuMicroseconds: UInt64, peakMemoryBytes: UInt64? = nil, bytesRead: UInt64? = nil,
                bytesWritten: UInt64? = nil, blocksRead: UInt64? = nil, blocksWritten: UInt64? = nil) {
        self.source = source
        self.cpuMicroseconds = cpuMicroseconds
        self.peakMemoryBytes = peakMemoryBytes
        self.bytesRead = bytesRead
        self.bytesWritten = bytesWritten
        self.blocksRead = blocksRead
        self.blocksWritten = blocksWritten
    }

    /// Nothing used yet (the start of a run that begins with the launch).
    public static func zero(_ source: RunUsage.Source) -> UsageSnapshot {
        UsageSnapshot(source: source, cpuMicroseconds: 0, peakMemoryBytes: 0, bytesRead: 0, bytesWritten: 0, blocksRead: 0, blocksWritten: 0)
    }

    /// The counters of a cgroup: `cpu.stat` (`usage_usec`, required), `memory.peak`, and
    /// `io.stat` summed over devices (`rbytes wbytes rios wios`); `nil` when `cpu.stat`
    /// cannot be read.
    public static func cgroup(_ path: String) -> UsageSnapshot? {
        guard let cpuText = KernelFiles.text(path + "/cpu.stat"),
              let usage = KernelFiles.keyedNumbers(cpuText)["usage_usec"] else { return nil }
        var snapshot = UsageSnapshot(source: .cgroup, cpuMicroseconds: usage)
        if let peak = KernelFiles.text(path + "/memory.peak"), let value = UInt64(peak.trimmingCharacters(in: .whitespacesAndNewlines)) {
            snapshot.peakMemoryBytes = value
        }
        if let io = KernelFiles.text(path + "/io.stat") {
            // `8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0` per device.
            var sums: [String: UInt64] = [:]
            for line in io.split(separator: "\n") {
                for field in line.split(separator: " ").dropFirst() {
                    let pair = field.split(separator: "=", maxSplits: 1)
                    guard pair.count == 2, let value = UInt64(pair[1]) else { continue }
                    let (sum, overflow) = sums[String(pair[0]), default: 0].addingReportingOverflow(value)
                    sums[String(pair[0])] = overflow ? .max : sum
                }
            }
            snapshot.bytesRead = sums["rbytes", default: 0]
            snapshot.bytesWritten = sums["wbytes", default: 0]
            snapshot.blocksRead = sums["rios", default: 0]
            snapshot.blocksWritten = sums["wios", default: 0]
        }
        return snapshot
    }

    /// The counters of a live process from procfs: `stat` utime+stime+cutime+cstime,
    /// `status` VmHWM, and `io` read_bytes/write_bytes when readable (it is not for another
    /// user's process); `nil` when the process is gone.
    public static func procfs(pid: Int32, procRoot: String = "/proc") -> UsageSnapshot? {
        guard let stat = ProcessStat.read(pid: pid, procRoot: procRoot) else { return nil }
        let ticks = stat.userTicks.addingReportingOverflow(stat.systemTicks)
        let total = ticks.partialValue.addingReportingOverflow(stat.childrenTicks)
        guard !ticks.overflow, !total.overflow else { return nil }
        let microseconds = Double(total.partialValue) / ProcessStat.ticksPerSecond * 1_000_000
        guard microseconds.isFinite, microseconds < 1.8e19 else { return nil }
        var snapshot = UsageSnapshot(source: .procfs, cpuMicroseconds: UInt64(microseconds))
        if let status = KernelFiles.text("\(procRoot)/\(pid)/status"), let kib = KernelFiles.keyedNumbers(status)["VmHWM"] {
            let (bytes, overflow) = kib.multipliedReportingOverflow(by: 1024)
            snapshot.peakMemoryBytes = overflow ? .max : bytes
        }
        if let io = KernelFiles.text("\(procRoot)/\(pid)/io") {
            let values = KernelFiles.keyedNumbers(io)
            snapshot.bytesRead = values["read_bytes"]
            snapshot.bytesWritten = values["write_bytes"]
        }
        return snapshot
    }

    /// The cumulative figures of a reaped leader (`wait4`'s rusage): blocks are 512 bytes.
    public static func rusage(_ usage: ResourceUsage) -> UsageSnapshot {
        let cpu = usage.cpuSeconds * 1_000_000
        let microseconds: UInt64 = cpu.isFinite && cpu >= 0 ? (cpu < 1.8e19 ? UInt64(cpu) : .max) : 0
        func bytes(_ blocks: UInt64) -> UInt64 {
            let (value, overflow) = blocks.multipliedReportingOverflow(by: 512)
            return overflow ? .max : value
        }
        return UsageSnapshot(
            source: .rusage, cpuMicroseconds: microseconds, peakMemoryBytes: usage.maxResidentBytes,
            bytesRead: bytes(usage.blocksRead), bytesWritten: bytes(usage.blocksWritten),
            blocksRead: usage.blocksRead, blocksWritten: usage.blocksWritten
        )
    }

    /// The run between `start` and this snapshot. Counters that went backwards (a cgroup
    /// recreated, the start taken from another source) count as 0; the peak is this
    /// snapshot's. Counters missing from either side are `nil`.
    public func since(_ start: UsageSnapshot) -> RunUsage {
        func difference(_ end: UInt64?, _ begin: UInt64?) -> UInt64? {
            guard let end else { return nil }
            guard let begin else { return nil }
            return end >= begin ? end - begin : 0
        }
        let cpu = cpuMicroseconds >= start.cpuMicroseconds ? cpuMicroseconds - start.cpuMicroseconds : 0
        return RunUsage(
            cpuSeconds: Double(cpu) / 1_000_000,
            peakMemoryBytes: peakMemoryBytes,
            bytesRead: difference(bytesRead, start.bytesRead),
            bytesWritten: difference(bytesWritten, start.bytesWritten),
            blocksRead: difference(blocksRead, start.blocksRead),
            blocksWritten: difference(blocksWritten, start.blocksWritten),
            source: source
        )
    }
}

/// Measures one run of a supervised process: ``begin(_:)`` at the run's start, ``finish(reaped:)``
/// at its end, choosing the source as docs/process-supervision.md says: the cgroup when the
/// process has one (figures it lacks, such as memory without a memory controller, are
/// taken from the leader), else the reaped rusage, else procfs for a leader still alive.
public struct RunMeter: Sendable {
    /// The process measured.
    public let pid: Int32
    /// Its cgroup, if any.
    public let cgroupPath: String?
    /// The procfs root (`/proc`).
    public let procRoot: String
    /// The cgroup snapshot at the start, when there is a cgroup.
    public let cgroupStart: UsageSnapshot?
    /// The leader's snapshot at the start (zero for a run that begins with the launch).
    public let leaderStart: UsageSnapshot

    /// Starts measuring a run of `process` now. `atLaunch`: the run began with the process,
    /// so the leader's start is zero (its rusage at the end covers exactly the run).
    public static func begin(_ process: SupervisedProcess, atLaunch: Bool = false, procRoot: String = "/proc") -> RunMeter {
        let leader = atLaunch ? UsageSnapshot.zero(.procfs) : (UsageSnapshot.procfs(pid: process.pid, procRoot: procRoot) ?? .zero(.procfs))
        return RunMeter(
            pid: process.pid, cgroupPath: process.cgroupPath, procRoot: procRoot,
            cgroupStart: process.cgroupPath.flatMap { UsageSnapshot.cgroup($0) }, leaderStart: leader
        )
    }

    /// Creates a meter from explicit start snapshots (a run resumed after a daemon restart).
    public init(pid: Int32, cgroupPath: String?, procRoot: String, cgroupStart: UsageSnapshot?, leaderStart: UsageSnapshot) {
        self.pid = pid
        self.cgroupPath = cgroupPath
        self.procRoot = procRoot
        self.cgroupStart = cgroupStart
        self.leaderStart = leaderStart
    }

    /// The run's usage now. `reaped`: the leader's rusage when the run ended with its exit.
    public func finish(reaped: ResourceUsage? = nil) -> RunUsage? {
        var leaderEnd: UsageSnapshot? = reaped.map { UsageSnapshot.rusage($0) }
        if leaderEnd == nil { leaderEnd = UsageSnapshot.procfs(pid: pid, procRoot: procRoot) }
        var leaderStartAligned = leaderStart
        if let end = leaderEnd {
            // The start was taken from procfs (or zero), the end may be rusage: the counters
            // are the same quantities (rusage includes waited-for children, as does
            // utime+stime+cutime+cstime), so the source of the end is the run's.
            leaderStartAligned.source = end.source
        }
        let leaderRun = leaderEnd?.since(leaderStartAligned)
        if let cgroup = cgroupPath, let start = cgroupStart, let end = UsageSnapshot.cgroup(cgroup) {
            var run = end.since(start)
            run.peakMemoryBytes = run.peakMemoryBytes ?? leaderRun?.peakMemoryBytes
            if end.bytesRead == nil {
                run.bytesRead = leaderRun?.bytesRead
                run.bytesWritten = leaderRun?.bytesWritten
                run.blocksRead = leaderRun?.blocksRead
                run.blocksWritten = leaderRun?.blocksWritten
            }
            return run
        }
        return leaderRun
    }
}
