#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import ProcessSupervision

/// Writes `files` (relative path -> contents) under `root`, creating directories.
private func writeTree(_ root: String, _ files: [String: String]) throws {
    for (path, contents) in files {
        let full = root + "/" + path
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try contents.write(toFile: full, atomically: true, encoding: .utf8)
    }
}

@Suite struct WaitStatusDecoding {
    @Test func statusWordsDecodeAsTheGlibcMacrosDo() {
        #expect(ProcessExitStatus(waitStatus: 0) == .exited(code: 0))
        #expect(ProcessExitStatus(waitStatus: 0x0700) == .exited(code: 7))
        #expect(ProcessExitStatus(waitStatus: 0xff00) == .exited(code: 255))
        #expect(ProcessExitStatus(waitStatus: 9) == .signaled(signal: 9, coreDumped: false))
        #expect(ProcessExitStatus(waitStatus: 0x8b) == .signaled(signal: 11, coreDumped: true))
        #expect(ProcessExitStatus(waitStatus: 0x137f) == .unknown("stopped by signal 19, not ended"))
        #expect(ProcessExitStatus(waitStatus: 0x8b).description == "killed by signal 11 (SIGSEGV), core dumped")
        #expect(ProcessExitStatus.exited(code: 0).isSuccess)
    }
}

@Suite struct ProcessStatParsing {
    @Test func fieldsAreCountedAfterTheLastParenthesis() throws {
        let line = "4242 (we ird) (name) S 1 4240 4240 0 -1 4194560 100 0 0 0 17 5 3 4 20 0 1 0 987654 1000 100 18446744073709551615\n"
        let stat = try #require(ProcessStat(parsing: line))
        #expect(stat.state == "S")
        #expect(stat.processGroup == 4240)
        #expect(stat.userTicks == 17)
        #expect(stat.systemTicks == 5)
        #expect(stat.childrenTicks == 7)
        #expect(stat.startTime == 987654)
    }

    @Test func malformedOrOutOfRangeLinesAreRefused() {
        #expect(ProcessStat(parsing: "") == nil)
        #expect(ProcessStat(parsing: "1 (x) S 1 2") == nil)
        #expect(ProcessStat(parsing: "1 (x) S 1 2 2 0 -1 0 0 0 0 0 99999999999999999999999 5 3 4 20 0 1 0 98 1 1") == nil)
        #expect(ProcessStat(parsing: "1 (x) S 1 99999999999 2 0 -1 0 0 0 0 0 1 5 3 4 20 0 1 0 98 1 1") == nil)
    }

    @Test func ownProcessIsReadable() throws {
        let stat = try #require(ProcessStat.read(pid: getpid()))
        #expect(["R", "S"].contains(stat.state)) // the main thread's state
        #expect(stat.processGroup == getpgrp())
    }
}

@Suite struct CgroupDetection {
    static let v1Lines = """
    31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
    32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
    35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
    """

    /// A fake /proc whose mountinfo mounts cgroup2 at `mount` (inside `root`), and whose
    /// self/cgroup puts the process in `own`.
    func fakeProc(_ root: String, mountinfo: String, own: String) throws -> String {
        let proc = root + "/proc"
        try writeTree(proc, ["self/mountinfo": mountinfo, "self/cgroup": "1:name=systemd:/\n0::\(own)\n"])
        return proc
    }

    @Test func unifiedLayoutUsesTheOwnCgroupUnderTheMount() throws {
        let root = try ProcessTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let mount = root + "/sys/fs/cgroup"
        let own = "/user.slice/user-1000.slice/user@1000.service/app.slice/bgtaskd.service"
        try FileManager.default.createDirectory(atPath: mount + own, withIntermediateDirectories: true)
        let proc = try fakeProc(root, mountinfo: "25 20 0:24 / \(mount) rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n", own: own)
        let delegation = try #require(CgroupDelegation.detect(procRoot: proc).delegation)
        #expect(delegation.mountPoint == mount)
        #expect(delegation.subtree == mount + own)
        #expect(delegation.daemonCgroup == mount + own + "/daemon")
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: mount + own + "/apps", isDirectory: &isDirectory) && isDirectory.boolValue)
        let app = try delegation.makeAppCgroup(for: "com.example.feed")
        #expect(app == mount + own + "/apps/app-com.example.feed")
        #expect(try delegation.makeAppCgroup(for: "com.example.feed") == app) // reused
        try delegation.removeAppCgroup(app)
        #expect(!FileManager.default.fileExists(atPath: app))
        #expect(throws: KernelFileError.self) { try delegation.removeAppCgroup(root) } // not under apps
    }

    @Test func hybridLayoutFindsTheUnifiedMount() throws {
        let root = try ProcessTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let mount = root + "/sys/fs/cgroup/unified"
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        let mountinfo = Self.v1Lines + "\n41 31 0:38 / \(mount) rw,relatime - cgroup2 cgroup2 rw\n"
        let proc = try fakeProc(root, mountinfo: mountinfo, own: "/")
        let delegation = try #require(CgroupDelegation.detect(procRoot: proc).delegation)
        #expect(delegation.mountPoint == mount)
        #expect(delegation.subtree == mount)
        #expect(delegation.appsCgroup == mount + "/apps")
    }

    @Test func mountPointsWithEscapedSpacesAreDecoded() {
        let line = "41 31 0:38 / /tmp/with\\040space rw,relatime - cgroup2 none rw\n"
        #expect(CgroupDelegation.cgroup2MountPoint(mountinfo: line) == "/tmp/with space")
    }

    @Test func unusableHostsSayWhy() throws {
        let root = try ProcessTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        // cgroup v1 only.
        let v1 = try fakeProc(root + "/v1", mountinfo: Self.v1Lines, own: "/")
        #expect(CgroupDelegation.detect(procRoot: v1).reason?.contains("cgroup v1 only") == true)
        // The own cgroup is not under the mount (another cgroup namespace).
        let mount = root + "/cg"
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        let elsewhere = try fakeProc(root + "/ns", mountinfo: "1 1 0:1 / \(mount) rw - cgroup2 cgroup2 rw\n", own: "/missing")
        #expect(CgroupDelegation.detect(procRoot: elsewhere).reason?.contains("is not a directory") == true)
        // No 0:: line.
        let noLine = root + "/noline"
        try writeTree(noLine, ["self/mountinfo": "1 1 0:1 / \(mount) rw - cgroup2 cgroup2 rw\n", "self/cgroup": "1:cpu:/\n"])
        #expect(CgroupDelegation.detect(procRoot: noLine).reason?.contains("no cgroup v2 line") == true)
        // `apps` exists and is not a directory: no child cgroup can be made there.
        try "".write(toFile: mount + "/apps", atomically: true, encoding: .utf8)
        let blocked = try fakeProc(root + "/blocked", mountinfo: "1 1 0:1 / \(mount) rw - cgroup2 cgroup2 rw\n", own: "/")
        #expect(CgroupDelegation.detect(procRoot: blocked).reason?.contains("is not a directory") == true)
        // Not writable: procfs refuses directories whatever the user (root included).
        let readOnly = try fakeProc(root + "/ro", mountinfo: "1 1 0:1 / /proc rw - cgroup2 cgroup2 rw\n", own: "/self")
        let reason = try #require(CgroupDelegation.detect(procRoot: readOnly).reason)
        #expect(reason.contains("/proc/self") && (reason.contains("cannot create") || reason.contains("not writable")))
        // A plain directory without write permission, for a non-root user.
        if getuid() != 0 {
            let locked = root + "/locked"
            try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: true)
            chmod(locked, 0o555)
            defer { chmod(locked, 0o755) }
            let proc = try fakeProc(root + "/lockedproc", mountinfo: "1 1 0:1 / \(locked) rw - cgroup2 cgroup2 rw\n", own: "/")
            #expect(CgroupDelegation.detect(procRoot: proc).reason?.contains("not writable") == true)
        }
        // Nothing readable at all.
        #expect(CgroupDelegation.detect(procRoot: root + "/none").reason?.contains("cannot be read") == true)
    }

    @Test func ownCgroupLinesAreValidated() {
        #expect(CgroupDelegation.unifiedCgroup(procCgroup: "0::/a/b\n") == "/a/b")
        #expect(CgroupDelegation.unifiedCgroup(procCgroup: "0::/\n") == "/")
        #expect(CgroupDelegation.unifiedCgroup(procCgroup: "0::/a/../b\n") == nil)
        #expect(CgroupDelegation.unifiedCgroup(procCgroup: "0::/gone (deleted)\n") == nil)
        #expect(CgroupDelegation.unifiedCgroup(procCgroup: "0::relative\n") == nil)
    }

    @Test func appCgroupNamesAreSanitizedAndDistinct() {
        #expect(CgroupDelegation.cgroupName(for: "com.example.feed") == "app-com.example.feed")
        let slash = CgroupDelegation.cgroupName(for: "a/b")
        let underscore = CgroupDelegation.cgroupName(for: "a_b")
        #expect(underscore == "app-a_b")
        #expect(slash.hasPrefix("app-a_b-") && slash != underscore)
        #expect(!CgroupDelegation.cgroupName(for: "..").contains("/"))
        #expect(CgroupDelegation.cgroupName(for: "..") != "..")
        #expect(CgroupDelegation.cgroupName(for: "cgroup.procs") == "app-cgroup.procs")
        #expect(CgroupDelegation.cgroupName(for: "").hasPrefix("app--"))
        let long = CgroupDelegation.cgroupName(for: String(repeating: "x", count: 1000))
        #expect(long.utf8.count < 255)
        #expect(long != CgroupDelegation.cgroupName(for: String(repeating: "x", count: 999)))
    }

    @Test func aSpareCgroupIsNeverAnotherAppsCgroup() {
        let spare = CgroupDelegation.spareCgroupPath("/apps/" + CgroupDelegation.cgroupName(for: "x"), 2)
        #expect(spare != "/apps/" + CgroupDelegation.cgroupName(for: "x-2"))
        #expect(spare != "/apps/" + CgroupDelegation.cgroupName(for: "x@2"))
        #expect(!CgroupDelegation.cgroupName(for: "x@2").contains("@"), "no app's own name holds the spare's separator")
    }
}

@Suite struct RAPLReading {
    func zone(_ energy: UInt64, range: UInt64 = 262_143_328_850) -> [String: String] {
        ["energy_uj": "\(energy)\n", "max_energy_range_uj": "\(range)\n", "name": "package-0\n"]
    }

    func write(_ root: String, _ zones: [String: [String: String]]) throws {
        var files: [String: String] = [:]
        for (name, contents) in zones {
            for (file, text) in contents { files[name + "/" + file] = text }
        }
        try writeTree(root, files)
    }

    @Test func packageZonesAreSummedAndWrapAroundIsHandled() throws {
        let root = try ProcessTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let range: UInt64 = 1_000_000_000
        try write(root, [
            "intel-rapl:0": zone(999_000_000, range: range),
            "intel-rapl:1": zone(5_000_000, range: range),
            "intel-rapl:0:0": zone(7, range: range), // a sub-zone (core): counted in the package
            "dtpm": ["name": "dtpm\n"],
        ])
        let reader = RAPLEnergyReader(root: root)
        let start = try #require(reader.sample())
        #expect(Set(start.zones.keys) == ["intel-rapl:0", "intel-rapl:1"])
        // Package 0 wraps: 999 J -> 1000 J (the range) -> 2 J; package 1 adds 3 J.
        try write(root, ["intel-rapl:0": zone(2_000_000, range: range), "intel-rapl:1": zone(8_000_000, range: range)])
        let end = try #require(reader.sample())
        let joules = try #require(RAPLEnergyReader.joules(from: start, to: end))
        #expect(abs(joules - 6.0) < 1e-9)
        #expect(RAPLEnergyReader.joules(from: start, to: start) == 0)
    }

    @Test func unreadableOrMissingCountersGiveNil() throws {
        let root = try ProcessTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(RAPLEnergyReader(root: root + "/absent").sample() == nil)
        #expect(RAPLEnergyReader(root: root).sample() == nil) // no zones
        try write(root, ["intel-rapl:0": ["max_energy_range_uj": "100\n"]])
        #expect(RAPLEnergyReader(root: root).sample() == nil) // energy_uj missing
        try write(root, ["intel-rapl:0": ["energy_uj": "99999999999999999999999\n", "max_energy_range_uj": "100\n"]])
        #expect(RAPLEnergyReader(root: root).sample() == nil) // out of range
        try write(root, ["intel-rapl:0": ["energy_uj": "200\n", "max_energy_range_uj": "100\n"]])
        #expect(RAPLEnergyReader(root: root).sample() == nil) // above its own range
        // A zone that appeared between samples.
        let one = RAPLEnergyReader.Sample(zones: ["intel-rapl:0": .init(energy: 1, range: 10)])
        let two = RAPLEnergyReader.Sample(zones: ["intel-rapl:0": .init(energy: 2, range: 10), "intel-rapl:1": .init(energy: 2, range: 10)])
        #expect(RAPLEnergyReader.joules(from: one, to: two) == nil)
    }
}

@Suite struct UsageSnapshots {
    @Test func cgroupFilesAreReadAndSubtracted() throws {
        let root = try ProcessTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try writeTree(root, [
            "cpu.stat": "usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n",
            "memory.peak": "52428800\n",
            "io.stat": "8:0 rbytes=4096 wbytes=8192 rios=1 wios=2 dbytes=0 dios=0\n8:16 rbytes=4096 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n",
        ])
        let start = try #require(UsageSnapshot.cgroup(root))
        #expect(start.cpuMicroseconds == 1_500_000)
        #expect(start.peakMemoryBytes == 52_428_800)
        #expect(start.bytesRead == 8192)
        #expect(start.blocksWritten == 2)
        try writeTree(root, [
            "cpu.stat": "usage_usec 1750000\n",
            "memory.peak": "62914560\n",
            "io.stat": "8:0 rbytes=8192 wbytes=8192 rios=2 wios=2 dbytes=0 dios=0\n8:16 rbytes=4096 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n",
        ])
        let run = try #require(UsageSnapshot.cgroup(root)).since(start)
        #expect(run == RunUsage(cpuSeconds: 0.25, peakMemoryBytes: 62_914_560, bytesRead: 4096, bytesWritten: 0, blocksRead: 1, blocksWritten: 0, source: .cgroup))
        // A counter that went backwards (the cgroup was recreated) counts as nothing.
        try writeTree(root, ["cpu.stat": "usage_usec 10\n"])
        #expect(try #require(UsageSnapshot.cgroup(root)).since(start).cpuSeconds == 0)
        // cpu.stat out of range or missing: no snapshot.
        try writeTree(root, ["cpu.stat": "usage_usec 99999999999999999999999\n"])
        #expect(UsageSnapshot.cgroup(root) == nil)
        #expect(UsageSnapshot.cgroup(root + "/absent") == nil)
    }

    @Test func procfsFilesOfAFakeProcessAreRead() throws {
        let root = try ProcessTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let ticks = ProcessStat.ticksPerSecond
        try writeTree(root, [
            "77/stat": "77 (app) S 1 77 77 0 -1 0 0 0 0 0 \(Int(ticks)) \(Int(ticks / 2)) 0 0 20 0 1 0 5555 1 1\n",
            "77/status": "Name:\tapp\nVmHWM:\t   2048 kB\nVmRSS:\t 1024 kB\n",
            "77/io": "rchar: 10\nwchar: 20\nread_bytes: 4096\nwrite_bytes: 512\n",
        ])
        let snapshot = try #require(UsageSnapshot.procfs(pid: 77, procRoot: root))
        #expect(snapshot.source == .procfs)
        #expect(snapshot.cpuMicroseconds == 1_500_000)
        #expect(snapshot.peakMemoryBytes == 2 * 1024 * 1024)
        #expect(snapshot.bytesRead == 4096)
        #expect(snapshot.bytesWritten == 512)
        #expect(UsageSnapshot.procfs(pid: 78, procRoot: root) == nil)
    }

    @Test func rusageBlocksBecomeBytes() {
        let usage = ResourceUsage(userCPUSeconds: 0.5, systemCPUSeconds: 0.25, maxResidentBytes: 4096, blocksRead: 3, blocksWritten: UInt64.max)
        let snapshot = UsageSnapshot.rusage(usage)
        #expect(snapshot.cpuMicroseconds == 750_000)
        #expect(snapshot.bytesRead == 1536)
        #expect(snapshot.bytesWritten == .max) // saturated, not trapped
        let run = snapshot.since(.zero(.rusage))
        #expect(run.cpuSeconds == 0.75)
        #expect(run.source == .rusage)
    }
}

@Suite struct OrphanReaperOnFakeProc {
    @Test func startTimeMismatchOrAbsenceSignalsNothing() throws {
        let root = try ProcessTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        // A pid that cannot exist (above pid_max's ceiling), so nothing real could be hit.
        let pid: Int32 = 2_000_000_000
        try writeTree(root, ["\(pid)/stat": "\(pid) (other) S 1 \(pid) \(pid) 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 900 1 1\n"])
        let reaper = OrphanReaper(procRoot: root)
        #expect(reaper.end(pid: pid, processGroup: pid, startTime: 100, cgroupPath: nil) == .pidReused(recordedStartTime: 100, currentStartTime: 900))
        #expect(reaper.end(pid: pid + 1, processGroup: pid + 1, startTime: 100, cgroupPath: nil) == .notRunning)
        // A recorded cgroup that is empty is left alone too.
        try writeTree(root, ["cg/cgroup.events": "populated 0\nfrozen 0\n"])
        #expect(reaper.end(pid: pid + 1, processGroup: pid + 1, startTime: 100, cgroupPath: root + "/cg") == .notRunning)
        // A zombie with the right start time has already ended.
        try writeTree(root, ["\(pid)/stat": "\(pid) (app) Z 1 \(pid) \(pid) 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 100 1 1\n"])
        #expect(reaper.end(pid: pid, processGroup: pid, startTime: 100, cgroupPath: nil) == .notRunning)
    }
}

/// The leftovers' cgroup.kill reaches the cgroup it was aimed at, not one made again at its
/// path for the app's next process (docs/process-supervision.md, "Termination").
@Suite struct CgroupIdentity {
    @Test func aCgroupMadeAgainAtItsPathIsAnotherOne() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("cgroup-identity-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let cgroup = root + "/com.example.app"
        try FileManager.default.createDirectory(atPath: cgroup, withIntermediateDirectories: true)
        let identity = try #require(KernelFiles.directoryIdentity(cgroup))
        #expect(SupervisedProcess.sameCgroup(cgroup, identity: identity) == cgroup)
        // The old directory moved aside (still in use, so its inode cannot be given again) and
        // a new one made at the path, as makeAppCgroup does for the next launch.
        #expect(rename(cgroup, root + "/old") == 0)
        try FileManager.default.createDirectory(atPath: cgroup, withIntermediateDirectories: false)
        #expect(SupervisedProcess.sameCgroup(cgroup, identity: identity) == nil)
        #expect(SupervisedProcess.sameCgroup(root + "/missing", identity: identity) == nil)
        #expect(SupervisedProcess.sameCgroup(nil, identity: identity) == nil && KernelFiles.directoryIdentity(root + "/missing") == nil)
    }
}
