#if canImport(Glibc)
import Glibc
#endif
import CLinux
import Foundation
import SchedulerCore

/// Starts app executables for background tasks (docs/process-supervision.md):
///
/// - `clone3` with `CLONE_PIDFD`, and `CLONE_INTO_CGROUP` when the specification names a
///   cgroup, so the process is in its cgroup before it runs a single instruction; in the
///   child only async-signal-safe calls (setpgid, signal reset, dup2, close_range, chdir,
///   execve), every array prepared before the clone;
/// - `posix_spawn` (`POSIX_SPAWN_SETPGROUP`, `addclosefrom_np`) plus `pidfd_open` when
///   `clone3` is unavailable (ENOSYS or EPERM, as under some seccomp filters), then the
///   pid is written into the cgroup's `cgroup.procs`;
/// - the child leads its own process group, has only descriptors 0-2, exactly the
///   given environment, and no shell ever sees its arguments;
/// - a failed `execve` is reported as a ``LaunchError`` (the child writes `errno` into a
///   close-on-exec pipe), never as an exit status 127.
public enum ProcessLauncher {
    /// Starts `spec` and begins watching its exit (``SupervisedProcess/onExit(_:)``).
    public static func launch(_ spec: LaunchSpec) throws(LaunchError) -> SupervisedProcess {
        let executable = spec.executable
        func fail(_ step: LaunchError.Step, _ code: Int32, _ reason: String) -> LaunchError {
            LaunchError(executable: executable, step: step, code: code, reason: reason)
        }
        try validate(spec)

        // Descriptors for the child's standard streams, opened close-on-exec here and
        // installed as 0-2 in the child; all closed in the parent afterwards.
        var opened: [Int32] = []
        defer { for descriptor in opened { close(descriptor) } }
        func openOutput(_ output: LaunchSpec.Output, name: String) throws(LaunchError) -> Int32 {
            switch output {
            case .inherit: return -1
            case .nullDevice:
                let descriptor = open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY)
                guard descriptor >= 0 else { throw fail(.output, errno, "\(name): /dev/null: \(systemErrorText(errno))") }
                opened.append(descriptor)
                return descriptor
            case .appendToFile(let path):
                // Set aside a log that has grown to the rotation size (an app that writes a
                // lot, launched again and again, would fill the state directory's disk).
                var info = stat()
                if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, Int64(info.st_size) >= LaunchSpec.logRotationSize {
                    _ = rename(path, path + ".1")
                }
                // Something else in its place (a FIFO, a device) is named for what it is.
                if lstat(path, &info) == 0, info.st_mode & S_IFMT != S_IFLNK, let kind = BoundedFile.nonRegularKind(info.st_mode) {
                    throw fail(.output, EINVAL, "\(name): log file \(path): \(kind), and an app's log must be a regular file; remove it")
                }
                // O_NOFOLLOW: a symbolic link planted at the log's name is refused, never
                // followed to append the app's output to another file; O_NONBLOCK: a FIFO
                // there is refused below, never waited on (this runs under the app's
                // supervisor's lock).
                let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK, 0o600)
                guard descriptor >= 0 else {
                    let reason = errno == ELOOP ? "it is a symbolic link, and an app's log must be a regular file; remove it" : systemErrorText(errno)
                    throw fail(.output, errno, "\(name): log file \(path): \(reason)")
                }
                opened.append(descriptor)
                var logInfo = stat()
                guard fstat(descriptor, &logInfo) == 0, logInfo.st_mode & S_IFMT == S_IFREG else {
                    throw fail(.output, EINVAL, "\(name): log file \(path): \(BoundedFile.nonRegularKind(logInfo.st_mode) ?? "not a regular file"), and an app's log must be a regular file; remove it")
                }
                // The app writes it as any file: blocking.
                _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
                return descriptor
            }
        }
        let input = try openOutput(spec.standardInput == .nullDevice ? .nullDevice : .inherit, name: "standard input")
        let output = try openOutput(spec.standardOutput, name: "standard output")
        let error = try openOutput(spec.standardError, name: "standard error")

        var cgroupDescriptor: Int32 = -1
        if let cgroup = spec.cgroup {
            cgroupDescriptor = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard cgroupDescriptor >= 0 else { throw fail(.cgroup, errno, "cgroup \(cgroup): \(systemErrorText(errno))") }
            opened.append(cgroupDescriptor)
        }

        let arguments = spec.arguments.isEmpty ? [(executable as NSString).lastPathComponent] : spec.arguments
        // Sorted so that the child's environment block does not depend on hashing.
        let environment = spec.environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let argv = CStringArray(arguments)
        let envp = CStringArray(environment)
        defer {
            argv.free()
            envp.free()
        }

        var result = clinux_spawn_result()
        let status: Int32 = executable.withCString { path in
            func call(_ directory: UnsafePointer<CChar>?) -> Int32 {
                var request = clinux_spawn_request(
                    path: path, argv: argv.pointer, envp: envp.pointer, directory: directory,
                    stdin_fd: input, stdout_fd: output, stderr_fd: error,
                    cgroup_fd: cgroupDescriptor, force_posix_spawn: spec.forcePosixSpawn ? 1 : 0
                )
                return clinux_spawn(&request, &result)
            }
            if let directory = spec.workingDirectory {
                return directory.withCString { call($0) }
            }
            return call(nil)
        }
        guard status == 0 else {
            let code = result.error
            let text = systemErrorText(code)
            switch Int(result.stage) {
            case Int(CLINUX_SPAWN_STAGE_PROCESS_GROUP): throw fail(.processGroup, code, "setpgid: \(text)")
            case Int(CLINUX_SPAWN_STAGE_STANDARD_STREAMS): throw fail(.standardStreams, code, "dup2 of a standard stream: \(text)")
            case Int(CLINUX_SPAWN_STAGE_WORKING_DIRECTORY):
                throw fail(.workingDirectory, code, "chdir to \(spec.workingDirectory ?? ""): \(text)")
            case Int(CLINUX_SPAWN_STAGE_EXEC):
                // posix_spawn reports a failed chdir action as its own error: say which.
                if spec.forcePosixSpawn || result.used_clone3 == 0, let directory = spec.workingDirectory,
                   !isDirectory(directory) {
                    throw fail(.workingDirectory, code, "chdir to \(directory): \(text)")
                }
                throw fail(.exec, code, "execve: \(text)")
            case Int(CLINUX_SPAWN_STAGE_PIDFD): throw fail(.create, code, "pidfd_open: \(text)")
            default:
                if let cgroup = spec.cgroup {
                    // CLONE_INTO_CGROUP refuses a cgroup that is not a leaf (EBUSY) or not writable (EACCES).
                    throw fail(.create, code, "clone3 into cgroup \(cgroup): \(text)")
                }
                throw fail(.create, code, "clone3/posix_spawn: \(text)")
            }
        }

        let pid = result.pid
        var startedInCgroup = result.started_in_cgroup != 0
        if let cgroup = spec.cgroup, !startedInCgroup {
            // The posix_spawn fallback cannot start a process in a cgroup: move it now.
            do throws(KernelFileError) {
                try KernelFiles.write("\(pid)\n", to: "\(cgroup)/cgroup.procs")
                startedInCgroup = true
            } catch let problem {
                kill(-pid, SIGKILL)
                kill(pid, SIGKILL)
                var waitStatus: Int32 = 0
                var usage = rusage()
                while clinux_wait4(pid, &waitStatus, 0, &usage) < 0 && errno == EINTR {}
                close(result.pidfd)
                throw fail(.cgroup, problem.code, "moving pid \(pid) into the cgroup: \(problem)")
            }
        }
        // The child cannot have been reaped yet (only its pidfd's watcher reaps it), so its
        // stat exists, as a zombie at worst.
        let startTime = ProcessStat.read(pid: pid)?.startTime
        return SupervisedProcess(
            pid: pid, pidfd: result.pidfd, executable: executable,
            cgroupPath: startedInCgroup ? spec.cgroup : nil, startTime: startTime,
            usedClone3: result.used_clone3 != 0
        )
    }

    /// Refuses what execve or the kernel would refuse in a confusing way, naming the culprit.
    private static func validate(_ spec: LaunchSpec) throws(LaunchError) {
        func fail(_ reason: String) -> LaunchError {
            LaunchError(executable: spec.executable, step: .specification, code: 0, reason: reason)
        }
        guard spec.executable.hasPrefix("/") else { throw fail("the executable path must be absolute") }
        if spec.executable.utf8.contains(0) { throw fail("the executable path contains a NUL byte") }
        for (index, argument) in spec.arguments.enumerated() where argument.utf8.contains(0) {
            throw fail("argument \(index) contains a NUL byte")
        }
        for (key, value) in spec.environment {
            if key.isEmpty || key.utf8.contains(UInt8(ascii: "=")) || key.utf8.contains(0) {
                throw fail("environment variable name \(String(reflecting: key)) is empty or contains '=' or NUL")
            }
            if value.utf8.contains(0) { throw fail("environment variable \(key) contains a NUL byte") }
        }
        if let directory = spec.workingDirectory, !directory.hasPrefix("/") || directory.utf8.contains(0) {
            throw fail("working directory \(String(reflecting: directory)) must be an absolute path")
        }
        if let cgroup = spec.cgroup, !cgroup.hasPrefix("/") || cgroup.utf8.contains(0) {
            throw fail("cgroup \(String(reflecting: cgroup)) must be an absolute path")
        }
        for output in [spec.standardOutput, spec.standardError] {
            if case .appendToFile(let path) = output, !path.hasPrefix("/") || path.utf8.contains(0) {
                throw fail("log file \(String(reflecting: path)) must be an absolute path")
            }
        }
    }

    private static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }
}

/// A NULL-terminated array of C strings built before the spawn (the child of clone3 must
/// not allocate), freed by the parent afterwards.
private struct CStringArray {
    let pointer: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
    let count: Int

    init(_ strings: [String]) {
        count = strings.count
        pointer = .allocate(capacity: strings.count + 1)
        for (index, string) in strings.enumerated() { pointer[index] = strdup(string) }
        pointer[strings.count] = nil
    }

    func free() {
        for index in 0..<count { Glibc.free(pointer[index]) }
        pointer.deallocate()
    }
}
