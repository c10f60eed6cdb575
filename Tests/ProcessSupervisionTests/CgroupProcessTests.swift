#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import ProcessSupervision

/// A unique cgroup v2 directory for one test, under this process's own cgroup on the
/// machine's cgroup2 mount, removed (with anything left in it killed) at the end.
struct TestCgroup {
    /// The cgroup2 mount and this process's own cgroup directory, or why there is none.
    static let location: (mount: String, own: String)? = {
        guard let mountinfo = KernelFiles.text("/proc/self/mountinfo"),
              let mount = CgroupDelegation.cgroup2MountPoint(mountinfo: mountinfo),
              let cgroups = KernelFiles.text("/proc/self/cgroup"),
              let own = CgroupDelegation.unifiedCgroup(procCgroup: cgroups)
        else { return nil }
        return (mount, own == "/" ? mount : mount + own)
    }()

    /// True when a child cgroup can be created here (a writable cgroup2 subtree): the
    /// cgroup tests are skipped otherwise (no cgroup2 mount, or not delegated to this user).
    static let isWritable: Bool = {
        guard let location else { return false }
        let probe = location.own + "/bgtask-probe-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        guard mkdir(probe, 0o755) == 0 else { return false }
        rmdir(probe)
        return true
    }()

    /// The cgroup2 mount point.
    let mount: String
    /// The test's subtree (absolute path).
    let root: String

    init() throws {
        let location = try #require(Self.location)
        mount = location.mount
        root = location.own + "/bgtask-test-\(getpid())-\(UUID().uuidString.prefix(8))"
        #expect(mkdir(root, 0o755) == 0, "cannot create \(root): \(String(cString: strerror(errno)))")
    }

    /// The delegation of the test subtree.
    var delegation: CgroupDelegation { CgroupDelegation(mountPoint: mount, subtree: root) }

    /// `path` relative to the mount, as /proc/<pid>/cgroup names it.
    func relative(_ path: String) -> String { String(path.dropFirst(mount.count)) }

    /// Kills whatever is left and removes every directory, deepest first.
    func remove() {
        var directories: [String] = []
        if let enumerator = FileManager.default.enumerator(atPath: root) {
            for case let path as String in enumerator {
                var info = stat()
                let full = root + "/" + path
                if lstat(full, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR { directories.append(full) }
            }
        }
        directories.sort { $0.count > $1.count }
        for directory in directories + [root] {
            try? KernelFiles.write("1", to: directory + "/cgroup.kill")
            _ = ProcessTestSupport.eventually {
                KernelFiles.keyedNumbers(KernelFiles.text(directory + "/cgroup.events") ?? "")["populated"] != 1
            }
            rmdir(directory)
        }
    }

    /// The `0::` line of a process's /proc/<pid>/cgroup.
    static func cgroup(of pid: Int32) -> String? {
        KernelFiles.text("/proc/\(pid)/cgroup").flatMap { CgroupDelegation.unifiedCgroup(procCgroup: $0) }
    }
}

extension ProcessSupervisionProcessTests {
    /// On the machine's real cgroup2 hierarchy (on this project's Debian host,
    /// /sys/fs/cgroup/unified); skipped where no writable cgroup2 subtree exists.
    @Suite(.enabled(if: TestCgroup.isWritable, "no writable cgroup v2 subtree on this machine"))
    struct RealCgroups {
        @Test(arguments: [false, true]) func childStartsInItsAppCgroup(forcePosixSpawn: Bool) throws {
            let cgroup = try TestCgroup()
            defer { cgroup.remove() }
            let app = try cgroup.delegation.makeAppCgroup(for: "com.example.feed")
            #expect(app == cgroup.root + "/apps/app-com.example.feed")
            let process = try ProcessLauncher.launch(LaunchSpec(executable: "/bin/sleep", arguments: ["sleep", "30"], cgroup: app, forcePosixSpawn: forcePosixSpawn))
            #expect(process.cgroupPath == app)
            #expect(TestCgroup.cgroup(of: process.pid) == cgroup.relative(app))
            #expect(KernelFiles.text(app + "/cgroup.procs") == "\(process.pid)\n")
            // A populated cgroup cannot be removed.
            #expect(throws: KernelFileError.self) { try cgroup.delegation.removeAppCgroup(app) }
            process.killNow()
            #expect(process.waitForExit(timeout: ProcessTestSupport.exitTimeout)?.status == .signaled(signal: SIGKILL, coreDumped: false))
            #expect(ProcessTestSupport.eventually { KernelFiles.keyedNumbers(KernelFiles.text(app + "/cgroup.events") ?? "")["populated"] == 0 })
            try cgroup.delegation.removeAppCgroup(app)
            #expect(!FileManager.default.fileExists(atPath: app))
        }

        @Test func launchIntoAMissingCgroupNamesIt() throws {
            let cgroup = try TestCgroup()
            defer { cgroup.remove() }
            let missing = cgroup.root + "/apps/app-nothing"
            #expect {
                _ = try ProcessLauncher.launch(LaunchSpec(executable: "/bin/true", cgroup: missing))
            } throws: { error in
                (error as? LaunchError)?.step == .cgroup && "\(error)".contains(missing)
            }
        }

        @Test func freezerSuspendsAndResumesTheCgroup() throws {
            let cgroup = try TestCgroup()
            defer { cgroup.remove() }
            let app = try cgroup.delegation.makeAppCgroup(for: "com.example.freezer")
            let process = try ProcessLauncher.launch(LaunchSpec(executable: "/bin/sleep", arguments: ["sleep", "30"], cgroup: app))
            defer {
                process.killNow()
                _ = process.waitForExit(timeout: ProcessTestSupport.exitTimeout)
            }
            #expect(try process.suspend() == .cgroupFreezer)
            #expect(KernelFiles.keyedNumbers(KernelFiles.text(app + "/cgroup.events") ?? "")["frozen"] == 1)
            try process.resume()
            #expect(ProcessTestSupport.eventually { KernelFiles.keyedNumbers(KernelFiles.text(app + "/cgroup.events") ?? "")["frozen"] == 0 })
            // Frozen again, then terminated: thawed so that SIGTERM is handled (long grace).
            try process.suspend()
            process.terminate(gracePeriod: .seconds(30))
            #expect(process.waitForExit(timeout: ProcessTestSupport.exitTimeout)?.status == .signaled(signal: SIGTERM, coreDumped: false))
            #expect(KernelFiles.keyedNumbers(KernelFiles.text(app + "/cgroup.events") ?? "")["frozen"] == 0)
        }

        /// A process killed while frozen (a fatal signal passes the freezer) must not leave
        /// its cgroup frozen: the next process started in it would be frozen at once. (The
        /// exit used to clear the suspension without thawing, so a terminate that lost the
        /// race with the exit left `cgroup.freeze` 1; seen in CI.)
        @Test func aProcessKilledWhileFrozenLeavesItsCgroupThawed() throws {
            let cgroup = try TestCgroup()
            defer { cgroup.remove() }
            let app = try cgroup.delegation.makeAppCgroup(for: "com.example.frozen-kill")
            let process = try ProcessLauncher.launch(LaunchSpec(executable: "/bin/sleep", arguments: ["sleep", "30"], cgroup: app))
            #expect(try process.suspend() == .cgroupFreezer)
            process.killNow()
            #expect(process.waitForExit(timeout: ProcessTestSupport.exitTimeout)?.status == .signaled(signal: SIGKILL, coreDumped: false))
            #expect(process.suspension == nil)
            #expect(KernelFiles.text(app + "/cgroup.freeze")?.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
            #expect(KernelFiles.keyedNumbers(KernelFiles.text(app + "/cgroup.events") ?? "")["frozen"] == 0)
        }

        /// After `cgroup.kill`, the kernel kills every process later cloned into that cgroup
        /// (seen on Linux 6.18): the app's next process gets a fresh cgroup, so it lives,
        /// and so do the ones after it; while a cgroup still holds a process, the next one
        /// gets a spare beside it.
        @Test func aKilledCgroupIsMadeFreshForTheNextProcess() throws {
            let cgroup = try TestCgroup()
            defer { cgroup.remove() }
            let name = "com.example.killed"
            let first = try ProcessLauncher.launch(LaunchSpec(executable: "/bin/sleep", arguments: ["sleep", "30"], cgroup: try cgroup.delegation.makeAppCgroup(for: name)))
            first.killNow()
            #expect(first.waitForExit(timeout: ProcessTestSupport.exitTimeout)?.status == .signaled(signal: SIGKILL, coreDumped: false))
            for _ in 0..<2 {
                let next = try ProcessLauncher.launch(LaunchSpec(executable: "/bin/sleep", arguments: ["sleep", "30"], cgroup: try cgroup.delegation.makeAppCgroup(for: name)))
                #expect(next.cgroupPath != nil)
                next.terminate()
                #expect(next.waitForExit(timeout: ProcessTestSupport.exitTimeout)?.status == .signaled(signal: SIGTERM, coreDumped: false))
            }
            let living = try ProcessLauncher.launch(LaunchSpec(executable: "/bin/sleep", arguments: ["sleep", "30"], cgroup: try cgroup.delegation.makeAppCgroup(for: name)))
            defer {
                living.killNow()
                _ = living.waitForExit(timeout: ProcessTestSupport.exitTimeout)
            }
            // Its cgroup is busy: the next process gets a spare beside it, which is removed
            // once empty, at the app's process after.
            let spare = try cgroup.delegation.makeAppCgroup(for: name)
            #expect(spare == (living.cgroupPath ?? "") + "@2", "a busy cgroup is not reused")
            let next = try ProcessLauncher.launch(LaunchSpec(executable: "/bin/true", cgroup: spare))
            #expect(next.waitForExit(timeout: ProcessTestSupport.exitTimeout)?.status == .exited(code: 0))
            let third = try cgroup.delegation.makeAppCgroup(for: name)
            #expect(third == spare, "the empty spare is made again, not a new one")
            #expect(living.isRunning)
        }

        @Test func cgroupKillReachesAGrandchildOutsideTheGroup() throws {
            let cgroup = try TestCgroup()
            defer { cgroup.remove() }
            let directory = try ProcessTestSupport.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let app = try cgroup.delegation.makeAppCgroup(for: "com.example.escape")
            let file = directory + "/grandchild"
            // The grandchild leaves the process group and the session (setsid): only the
            // cgroup still holds it.
            let process = try ProcessLauncher.launch(ProcessTestSupport.shell("setsid sleep 30 & echo $! > \(file); wait", cgroup: app))
            #expect(ProcessTestSupport.eventually { ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").hasSuffix("\n") })
            let grandchild = try #require(Int32(try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(ProcessTestSupport.eventually { getsid(grandchild) == grandchild })
            #expect(getpgid(grandchild) != process.processGroup)
            #expect(TestCgroup.cgroup(of: grandchild) == cgroup.relative(app))
            process.killNow()
            #expect(process.waitForExit(timeout: ProcessTestSupport.exitTimeout)?.status == .signaled(signal: SIGKILL, coreDumped: false))
            #expect(ProcessTestSupport.eventually { ProcessStat.read(pid: grandchild).map { $0.state == "Z" } ?? true })
            #expect(ProcessTestSupport.eventually { KernelFiles.keyedNumbers(KernelFiles.text(app + "/cgroup.events") ?? "")["populated"] == 0 })
        }

        @Test func runInACgroupIsMeasuredFromTheCgroup() throws {
            let cgroup = try TestCgroup()
            defer { cgroup.remove() }
            let app = try cgroup.delegation.makeAppCgroup(for: "com.example.burn")
            let process = try ProcessLauncher.launch(ProcessTestSupport.shell("i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done", cgroup: app))
            let meter = RunMeter.begin(process)
            #expect(meter.cgroupStart != nil)
            let exit = try #require(process.waitForExit(timeout: .seconds(10)))
            let run = try #require(meter.finish(reaped: exit.usage))
            #expect(run.source == .cgroup)
            #expect(run.cpuSeconds > 0.03)
            #expect(run.cpuSeconds < 10)
            // The cgroup counts what the leader's rusage counts (within the start snapshot's lag).
            #expect(abs(run.cpuSeconds - exit.usage.cpuSeconds) < 0.1)
            // No memory controller here: the peak comes from the leader.
            if KernelFiles.text(app + "/memory.peak") == nil {
                #expect(run.peakMemoryBytes == exit.usage.maxResidentBytes)
            }
        }

        @Test func detectionOnTheRealHierarchyCreatesTheLayout() throws {
            let cgroup = try TestCgroup()
            defer { cgroup.remove() }
            // This process's mounts, and a /proc/self/cgroup placing it in the test subtree.
            let fakeProc = try ProcessTestSupport.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: fakeProc) }
            try FileManager.default.createDirectory(atPath: fakeProc + "/self", withIntermediateDirectories: true)
            try Data(try BoundedFileReading.bytes("/proc/self/mountinfo")).write(to: URL(fileURLWithPath: fakeProc + "/self/mountinfo"))
            try "0::\(cgroup.relative(cgroup.root))\n".write(toFile: fakeProc + "/self/cgroup", atomically: true, encoding: .utf8)
            let detection = CgroupDelegation.detect(procRoot: fakeProc)
            let delegation = try #require(detection.delegation, "\(detection)")
            #expect(delegation.subtree == cgroup.root)
            #expect(FileManager.default.fileExists(atPath: cgroup.root + "/apps/cgroup.procs"))
            let enabled = delegation.enableControllers()
            #expect(Set(enabled).isSubset(of: CgroupDelegation.wantedControllers))
            let offered = KernelFiles.text(cgroup.root + "/cgroup.controllers") ?? ""
            for controller in enabled { #expect(offered.contains(controller)) }
            // The daemon's leaf takes a process (a child here, not the test process).
            let process = try ProcessLauncher.launch(LaunchSpec(executable: "/bin/sleep", arguments: ["sleep", "30"]))
            defer {
                process.killNow()
                _ = process.waitForExit(timeout: ProcessTestSupport.exitTimeout)
            }
            try delegation.enterDaemonLeaf(pid: process.pid)
            #expect(TestCgroup.cgroup(of: process.pid) == cgroup.relative(delegation.daemonCgroup))
        }

        @Test func orphanReaperKillsTheRecordedCgroup() throws {
            let cgroup = try TestCgroup()
            defer { cgroup.remove() }
            let app = try cgroup.delegation.makeAppCgroup(for: "com.example.orphan")
            let process = try ProcessLauncher.launch(LaunchSpec(executable: "/bin/sleep", arguments: ["sleep", "30"], cgroup: app))
            let startTime = try #require(process.startTime)
            let outcome = OrphanReaper().end(pid: process.pid, processGroup: process.pid, startTime: startTime, cgroupPath: app)
            #expect(outcome == .killedCgroup(app))
            #expect(process.waitForExit(timeout: ProcessTestSupport.exitTimeout)?.status == .signaled(signal: SIGKILL, coreDumped: false))
        }

        /// An app process no row names (its row refused by a full store at the launch, then the
        /// daemon killed: an outside probe's frozen app stayed for ever): a daemon that has
        /// started nothing yet kills every app cgroup still holding processes, frozen or not,
        /// and leaves empty ones alone.
        @Test func unrecordedAppCgroupsAreKilledFrozenOrNot() throws {
            let cgroup = try TestCgroup()
            defer { cgroup.remove() }
            let frozen = try cgroup.delegation.makeAppCgroup(for: "com.example.unrecorded")
            let empty = try cgroup.delegation.makeAppCgroup(for: "com.example.empty")
            let process = try ProcessLauncher.launch(LaunchSpec(executable: "/bin/sleep", arguments: ["sleep", "30"], cgroup: frozen))
            try KernelFiles.write("1", to: frozen + "/cgroup.freeze")
            let ended = OrphanReaper().endUnrecordedAppCgroups(under: cgroup.delegation.appsCgroup)
            #expect(ended.map(\.cgroup) == [frozen], "\(ended)")
            #expect(ended.allSatisfy { $0.failure == nil }, "\(ended)")
            #expect(process.waitForExit(timeout: ProcessTestSupport.exitTimeout)?.status == .signaled(signal: SIGKILL, coreDumped: false))
            #expect(FileManager.default.fileExists(atPath: empty))
            // Another daemon in the subtree's leaf is seen, so the daemon leaves the sweep out.
            let other = try ProcessLauncher.launch(LaunchSpec(executable: "/bin/sleep", arguments: ["sleep", "30"]))
            defer {
                other.killNow()
                _ = other.waitForExit(timeout: ProcessTestSupport.exitTimeout)
            }
            try cgroup.delegation.enterDaemonLeaf(pid: other.pid)
            #expect(cgroup.delegation.otherProcessesInDaemonLeaf() == [other.pid])
        }
    }
}

/// Reading a whole small file for a fixture.
enum BoundedFileReading {
    static func bytes(_ path: String) throws -> [UInt8] {
        try #require(KernelFiles.text(path).map { Array($0.utf8) })
    }
}
