#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing
@testable import ProcessSupervision

/// Every test that spawns, signals, freezes or kills a real process lives in an extension
/// of this suite, so none of them runs in parallel with another.
@Suite(.serialized) struct ProcessSupervisionProcessTests {}

/// Helpers shared by the process tests.
enum ProcessTestSupport {
    /// The bound on every wait for a real child.
    static let exitTimeout: Duration = .seconds(5)

    /// A minimal environment given explicitly (nothing read from the test's own).
    static let environment = ["PATH": "/usr/bin:/bin"]

    /// `/bin/sh -c script` with the explicit environment.
    static func shell(_ script: String, environment: [String: String] = environment, output: LaunchSpec.Output = .inherit, cgroup: String? = nil, forcePosixSpawn: Bool = false) -> LaunchSpec {
        LaunchSpec(executable: "/bin/sh", arguments: ["sh", "-c", script], environment: environment,
                   standardOutput: output, cgroup: cgroup, forcePosixSpawn: forcePosixSpawn)
    }

    /// A fresh temporary directory.
    static func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ps-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Runs `spec` to its end (bounded) and returns what it wrote to its stdout file.
    static func runCapturing(_ spec: LaunchSpec) throws -> (status: ProcessExitStatus?, output: String) {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/out.txt"
        var spec = spec
        spec.standardOutput = .appendToFile(file)
        let process = try ProcessLauncher.launch(spec)
        let exit = process.waitForExit(timeout: exitTimeout)
        let output = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        return (exit?.status, output)
    }

    /// Polls `condition` every millisecond for at most `timeout`.
    static func eventually(timeout: Duration = .seconds(3), _ condition: () -> Bool) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while clock.now < deadline {
            if condition() { return true }
            usleep(1000)
        }
        return condition()
    }
}

extension ProcessSupervisionProcessTests {
    @Suite struct Launching {
        /// A log that has grown to the rotation size is set aside as `.1` at the next launch,
        /// so an app launched again and again does not fill the disk (an outside probe saw
        /// 60 MB from one chatty app, appended to at every launch).
        @Test func aFullLogIsSetAsideAtTheNextLaunch() throws {
            let directory = try ProcessTestSupport.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let log = directory + "/app.log"
            try Data(repeating: UInt8(ascii: "x"), count: Int(LaunchSpec.logRotationSize)).write(to: URL(fileURLWithPath: log))
            var spec = ProcessTestSupport.shell("echo fresh", output: .appendToFile(log))
            spec.standardError = .appendToFile(log)
            let process = try ProcessLauncher.launch(spec)
            #expect(process.waitForExit(timeout: ProcessTestSupport.exitTimeout) != nil)
            #expect(try String(contentsOfFile: log, encoding: .utf8) == "fresh\n")
            let setAside = try FileManager.default.attributesOfItem(atPath: log + ".1")[.size] as? NSNumber
            #expect(setAside?.int64Value == LaunchSpec.logRotationSize)
            // A log under the size is appended to.
            let again = try ProcessLauncher.launch(spec)
            #expect(again.waitForExit(timeout: ProcessTestSupport.exitTimeout) != nil)
            #expect(try String(contentsOfFile: log, encoding: .utf8) == "fresh\nfresh\n")
        }

        /// A symbolic link planted at the log's name is refused, never followed to append the
        /// app's output to another file.
        @Test func aLogThatIsASymbolicLinkIsNotFollowed() throws {
            let directory = try ProcessTestSupport.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let victim = directory + "/victim.txt"
            try Data("VICTIM\n".utf8).write(to: URL(fileURLWithPath: victim))
            let log = directory + "/app.log"
            #expect(symlink(victim, log) == 0)
            let refused = #expect(throws: (any Error).self) { _ = try ProcessLauncher.launch(ProcessTestSupport.shell("echo planted", output: .appendToFile(log))) }
            #expect("\(refused.map { "\($0)" } ?? "")".contains("log file \(log)"), "\(String(describing: refused))")
            #expect(try String(contentsOfFile: victim, encoding: .utf8) == "VICTIM\n")
            // A FIFO there is refused at once, never waited on for a reader.
            try FileManager.default.removeItem(atPath: log)
            #expect(mkfifo(log, 0o600) == 0)
            let fifo = #expect(throws: (any Error).self) { _ = try ProcessLauncher.launch(ProcessTestSupport.shell("echo planted", output: .appendToFile(log))) }
            #expect("\(fifo.map { "\($0)" } ?? "")".contains("FIFO"), "\(String(describing: fifo))")
        }

        @Test(arguments: [false, true]) func exitCodeIsReported(forcePosixSpawn: Bool) throws {
            let process = try ProcessLauncher.launch(ProcessTestSupport.shell("exit 7", forcePosixSpawn: forcePosixSpawn))
            #expect(process.usedClone3 == !forcePosixSpawn)
            let exit = process.waitForExit(timeout: ProcessTestSupport.exitTimeout)
            #expect(exit?.status == .exited(code: 7))
            #expect(!process.isRunning)
            #expect(process.exitStatus == .exited(code: 7))
        }

        @Test func deathBySignalIsReported() throws {
            let process = try ProcessLauncher.launch(ProcessTestSupport.shell("kill -KILL $$"))
            let exit = process.waitForExit(timeout: ProcessTestSupport.exitTimeout)
            #expect(exit?.status == .signaled(signal: SIGKILL, coreDumped: false))
            #expect(exit?.status.description == "killed by signal 9 (SIGKILL)")
        }

        @Test(arguments: [false, true]) func missingExecutableIsALaunchError(forcePosixSpawn: Bool) throws {
            let directory = try ProcessTestSupport.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let path = directory + "/no-such-app"
            #expect {
                _ = try ProcessLauncher.launch(LaunchSpec(executable: path, forcePosixSpawn: forcePosixSpawn))
            } throws: { error in
                guard let error = error as? LaunchError else { return false }
                return error.step == .exec && error.code == ENOENT && error.executable == path
                    && error.description.contains(path) && error.description.contains("No such file or directory (ENOENT)")
            }
        }

        @Test(arguments: [false, true]) func fileWithoutExecutePermissionIsALaunchError(forcePosixSpawn: Bool) throws {
            let directory = try ProcessTestSupport.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let path = directory + "/app"
            try "#!/bin/sh\nexit 0\n".write(toFile: path, atomically: true, encoding: .utf8)
            chmod(path, 0o644)
            #expect {
                _ = try ProcessLauncher.launch(LaunchSpec(executable: path, forcePosixSpawn: forcePosixSpawn))
            } throws: { error in
                guard let error = error as? LaunchError else { return false }
                return error.step == .exec && error.code == EACCES && error.description.contains("Permission denied (EACCES)")
            }
        }

        @Test func executableInAnUnknownFormatIsALaunchError() throws {
            let directory = try ProcessTestSupport.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let path = directory + "/app"
            // Neither ELF nor "#!": execve refuses it with ENOEXEC (a shell would run it as a script).
            try Data([0x7f, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06]).write(to: URL(fileURLWithPath: path))
            chmod(path, 0o755)
            #expect {
                _ = try ProcessLauncher.launch(LaunchSpec(executable: path))
            } throws: { error in
                (error as? LaunchError)?.code == ENOEXEC && (error as? LaunchError)?.step == .exec
            }
        }

        @Test(arguments: [false, true]) func missingWorkingDirectoryIsNamed(forcePosixSpawn: Bool) throws {
            let spec = LaunchSpec(executable: "/bin/true", workingDirectory: "/nonexistent-bgtask-dir", forcePosixSpawn: forcePosixSpawn)
            #expect {
                _ = try ProcessLauncher.launch(spec)
            } throws: { error in
                guard let error = error as? LaunchError else { return false }
                return error.step == .workingDirectory && error.description.contains("/nonexistent-bgtask-dir")
            }
        }

        @Test func workingDirectoryIsUsed() throws {
            let directory = try ProcessTestSupport.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            var spec = ProcessTestSupport.shell("pwd -P")
            spec.workingDirectory = directory
            let (status, output) = try ProcessTestSupport.runCapturing(spec)
            #expect(status == .exited(code: 0))
            let resolved = URL(fileURLWithPath: directory).resolvingSymlinksInPath().path
            #expect(output == resolved + "\n")
        }

        @Test func badSpecificationsAreRefusedNamingTheCulprit() {
            let cases: [(LaunchSpec, String)] = [
                (LaunchSpec(executable: "bin/true"), "must be absolute"),
                (LaunchSpec(executable: "/bin/true", environment: ["A=B": "1"]), "\"A=B\""),
                (LaunchSpec(executable: "/bin/true", arguments: ["true", "a\u{0}b"]), "argument 1"),
                (LaunchSpec(executable: "/bin/true", standardOutput: .appendToFile("log.txt")), "log file \"log.txt\""),
                (LaunchSpec(executable: "/bin/true", workingDirectory: "tmp"), "working directory \"tmp\""),
            ]
            for (spec, fragment) in cases {
                #expect {
                    _ = try ProcessLauncher.launch(spec)
                } throws: { error in
                    guard let error = error as? LaunchError else { return false }
                    return error.step == .specification && error.description.contains(fragment)
                }
            }
        }

        @Test(arguments: [false, true]) func environmentIsExactlyTheGivenOne(forcePosixSpawn: Bool) throws {
            let environment = ["ALPHA": "1", "BGTASK_APP": "com.example.feed", "WITH_SPACE": "two words"]
            let spec = LaunchSpec(executable: "/usr/bin/env", arguments: ["env"], environment: environment, forcePosixSpawn: forcePosixSpawn)
            let (status, output) = try ProcessTestSupport.runCapturing(spec)
            #expect(status == .exited(code: 0))
            #expect(output.split(separator: "\n").map(String.init).sorted() == ["ALPHA=1", "BGTASK_APP=com.example.feed", "WITH_SPACE=two words"])
        }

        @Test func argumentsReachTheChildUnchangedWithoutAShell() throws {
            let spec = LaunchSpec(executable: "/usr/bin/printf", arguments: ["printf", "%s|", "$HOME", "a b", "*", ";exit 3"], environment: [:])
            let (status, output) = try ProcessTestSupport.runCapturing(spec)
            #expect(status == .exited(code: 0))
            #expect(output == "$HOME|a b|*|;exit 3|")
        }

        @Test func logFileIsAppendedAndPrivate() throws {
            let directory = try ProcessTestSupport.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let log = directory + "/app.log"
            for word in ["one", "two"] {
                var spec = ProcessTestSupport.shell("echo \(word); echo err-\(word) >&2")
                spec.standardOutput = .appendToFile(log)
                spec.standardError = .appendToFile(log)
                let process = try ProcessLauncher.launch(spec)
                #expect(process.waitForExit(timeout: ProcessTestSupport.exitTimeout)?.status == .exited(code: 0))
            }
            #expect(try String(contentsOfFile: log, encoding: .utf8) == "one\nerr-one\ntwo\nerr-two\n")
            var info = stat()
            #expect(stat(log, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o600)
        }

        @Test(arguments: [false, true]) func childLeadsItsOwnGroupWithOnlyStandardDescriptors(forcePosixSpawn: Bool) throws {
            // A descriptor without close-on-exec in this process: it would leak without the
            // launcher's close_range/closefrom.
            let leaky = open("/dev/null", O_RDONLY)
            #expect(leaky > 2)
            defer { close(leaky) }
            let process = try ProcessLauncher.launch(LaunchSpec(executable: "/bin/sleep", arguments: ["sleep", "30"], forcePosixSpawn: forcePosixSpawn))
            defer {
                process.killNow()
                _ = process.waitForExit(timeout: ProcessTestSupport.exitTimeout)
            }
            #expect(process.processGroup == process.pid)
            #expect(getpgid(process.pid) == process.pid)
            #expect(getpgid(process.pid) != getpgrp())
            #expect(ProcessStat.read(pid: process.pid)?.processGroup == process.pid)
            #expect(process.startTime != nil)
            #expect(process.startTime == ProcessStat.read(pid: process.pid)?.startTime)
            // The child has exec'd once its launch returned; list its descriptors from outside.
            // Right after exec the dynamic loader briefly holds a library open (fd 3 on a
            // loaded machine), so look until the program runs: a leaked descriptor stays.
            var descriptors: [Int] = []
            let deadline = Date().addingTimeInterval(5)
            repeat {
                descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.pid)/fd").compactMap(Int.init).sorted()
                if descriptors == [0, 1, 2] { break }
                usleep(10_000)
            } while Date() < deadline
            #expect(descriptors == [0, 1, 2])
        }
    }

    @Suite struct Exits {
        @Test func exitHandlersAreCalledOnceEvenWhenRegisteredLate() throws {
            let calls = Mutex<[String]>([])
            let process = try ProcessLauncher.launch(ProcessTestSupport.shell("exit 3"))
            process.onExit { status, _ in calls.withLock { $0.append("early \(status)") } }
            #expect(process.waitForExit(timeout: ProcessTestSupport.exitTimeout) != nil)
            let late = DispatchSemaphore(value: 0)
            process.onExit { status, _ in
                calls.withLock { $0.append("late \(status)") }
                late.signal()
            }
            #expect(late.wait(timeout: .now() + 5) == .success)
            // Give a duplicate call the chance to show up.
            usleep(50_000)
            #expect(calls.withLock { $0 } == ["early exited with code 3", "late exited with code 3"])
        }

        @Test func reapedUsageCountsTheChildsCPU() throws {
            // About 0.1-0.3 s of CPU in the shell itself.
            let process = try ProcessLauncher.launch(ProcessTestSupport.shell("i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done"))
            let meter = RunMeter.begin(process, atLaunch: true)
            let exit = try #require(process.waitForExit(timeout: .seconds(10)))
            #expect(exit.status == .exited(code: 0))
            #expect(exit.usage.cpuSeconds > 0.03)
            #expect(exit.usage.cpuSeconds < 10)
            #expect(exit.usage.maxResidentBytes > 100_000)
            let run = try #require(meter.finish(reaped: exit.usage))
            #expect(run.source == .rusage)
            #expect(abs(run.cpuSeconds - exit.usage.cpuSeconds) < 0.001)
            #expect(run.peakMemoryBytes == exit.usage.maxResidentBytes)
        }

        @Test func runOfALiveProcessIsMeasuredFromProcfs() throws {
            let process = try ProcessLauncher.launch(ProcessTestSupport.shell("i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done; sleep 30"))
            defer {
                process.killNow()
                _ = process.waitForExit(timeout: ProcessTestSupport.exitTimeout)
            }
            let meter = RunMeter.begin(process)
            // Wait (bounded) until the loop has burnt some CPU.
            #expect(ProcessTestSupport.eventually(timeout: .seconds(10)) { (meter.finish()?.cpuSeconds ?? 0) >= 0.03 })
            let run = try #require(meter.finish())
            #expect(run.source == .procfs)
            #expect(run.peakMemoryBytes ?? 0 > 0)
        }
    }

    @Suite struct Signals {
        @Test func terminateEndsAPoliteProcessWithSIGTERM() throws {
            let process = try ProcessLauncher.launch(LaunchSpec(executable: "/bin/sleep", arguments: ["sleep", "30"]))
            process.terminate(gracePeriod: .seconds(5))
            let exit = process.waitForExit(timeout: ProcessTestSupport.exitTimeout)
            #expect(exit?.status == .signaled(signal: SIGTERM, coreDumped: false))
        }

        @Test func terminateKillsAProcessIgnoringSIGTERMAfterTheGrace() throws {
            let directory = try ProcessTestSupport.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let ready = directory + "/ready"
            let process = try ProcessLauncher.launch(ProcessTestSupport.shell("trap '' TERM; : > \(ready); sleep 30"))
            #expect(ProcessTestSupport.eventually { FileManager.default.fileExists(atPath: ready) })
            let clock = ContinuousClock()
            let start = clock.now
            process.terminate(gracePeriod: .milliseconds(300))
            process.terminate(gracePeriod: .seconds(60)) // a second call changes nothing
            let exit = process.waitForExit(timeout: ProcessTestSupport.exitTimeout)
            let elapsed = clock.now - start
            #expect(exit?.status == .signaled(signal: SIGKILL, coreDumped: false))
            #expect(elapsed >= .milliseconds(300))
            #expect(elapsed < .seconds(3))
        }

        @Test func suspendAndResumeWithStopSignals() throws {
            let process = try ProcessLauncher.launch(LaunchSpec(executable: "/bin/sleep", arguments: ["sleep", "30"]))
            defer {
                process.killNow()
                _ = process.waitForExit(timeout: ProcessTestSupport.exitTimeout)
            }
            #expect(try process.suspend() == .stopSignal)
            #expect(process.suspension == .stopSignal)
            #expect(ProcessTestSupport.eventually { ProcessStat.read(pid: process.pid)?.state == "T" })
            try process.resume()
            #expect(process.suspension == nil)
            #expect(ProcessTestSupport.eventually { ProcessStat.read(pid: process.pid)?.state == "S" })
        }

        @Test func terminatingAStoppedProcessContinuesItSoItHandlesSIGTERM() throws {
            let process = try ProcessLauncher.launch(LaunchSpec(executable: "/bin/sleep", arguments: ["sleep", "30"]))
            try process.suspend()
            #expect(ProcessTestSupport.eventually { ProcessStat.read(pid: process.pid)?.state == "T" })
            // A long grace: only SIGTERM can end it in time, and only if it was continued.
            process.terminate(gracePeriod: .seconds(30))
            let exit = process.waitForExit(timeout: ProcessTestSupport.exitTimeout)
            #expect(exit?.status == .signaled(signal: SIGTERM, coreDumped: false))
            if exit == nil { process.killNow() }
        }

        @Test func signalGroupReachesEveryMember() throws {
            let directory = try ProcessTestSupport.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let childFile = directory + "/child"
            let process = try ProcessLauncher.launch(ProcessTestSupport.shell("sleep 30 & echo $! > \(childFile); wait"))
            #expect(ProcessTestSupport.eventually { ((try? String(contentsOfFile: childFile, encoding: .utf8)) ?? "").hasSuffix("\n") })
            let child = try #require(Int32(try String(contentsOfFile: childFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(getpgid(child) == process.pid)
            #expect(try process.signalGroup(SIGKILL))
            #expect(process.waitForExit(timeout: ProcessTestSupport.exitTimeout)?.status == .signaled(signal: SIGKILL, coreDumped: false))
            #expect(ProcessTestSupport.eventually { ProcessStat.read(pid: child).map { $0.state == "Z" } ?? true })
        }

        @Test func orphanReaperRefusesAReusedPidAndKillsTheRecordedOne() throws {
            let process = try ProcessLauncher.launch(LaunchSpec(executable: "/bin/sleep", arguments: ["sleep", "30"]))
            defer {
                process.killNow()
                _ = process.waitForExit(timeout: ProcessTestSupport.exitTimeout)
            }
            let startTime = try #require(process.startTime)
            let reaper = OrphanReaper()
            // Another start time: the pid would belong to another process now.
            let refused = reaper.end(pid: process.pid, processGroup: process.pid, startTime: startTime + 1, cgroupPath: nil)
            #expect(refused == .pidReused(recordedStartTime: startTime + 1, currentStartTime: startTime))
            usleep(50_000)
            #expect(process.isRunning)
            #expect(reaper.end(pid: process.pid, processGroup: process.pid, startTime: startTime, cgroupPath: nil) == .killedProcessGroup(process.pid))
            #expect(process.waitForExit(timeout: ProcessTestSupport.exitTimeout)?.status == .signaled(signal: SIGKILL, coreDumped: false))
            #expect(reaper.end(pid: process.pid, processGroup: process.pid, startTime: startTime, cgroupPath: nil) == .notRunning)
        }
    }
}
