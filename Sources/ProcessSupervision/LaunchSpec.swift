#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// What to start for a background task: an executable, its argument vector, exactly the
/// environment it gets, and where its output goes. Never a shell command line
/// (docs/process-supervision.md).
public struct LaunchSpec: Sendable, Hashable {
    /// Where a standard output stream goes.
    public enum Output: Sendable, Hashable {
        /// The daemon's own descriptor (its stdout or stderr).
        case inherit
        /// `/dev/null`.
        case nullDevice
        /// Appended to the file at this absolute path, created 0600 when missing
        /// (`O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC`). A file that has reached
        /// ``LaunchSpec/logRotationSize`` at a launch is first renamed to `<path>.1`
        /// (replacing the one before), so launches after launches keep at most two files of
        /// about that size; one launch's own output is not cut.
        case appendToFile(String)
    }

    /// The size at which a log file is set aside at the next launch: 1 MiB.
    public static let logRotationSize: Int64 = 1 << 20

    /// Where standard input comes from.
    public enum Input: Sendable, Hashable {
        /// The daemon's own standard input.
        case inherit
        /// `/dev/null` (the default: a background app reads nothing from the daemon).
        case nullDevice
    }

    /// Absolute path of the executable.
    public var executable: String
    /// The argument vector, `arguments[0]` included (by convention the executable's name).
    /// When empty, the executable's last path component is used as `argv[0]`.
    public var arguments: [String]
    /// Exactly the child's environment: nothing of the daemon's is inherited.
    public var environment: [String: String]
    /// The child's working directory (absolute), or `nil` to keep the daemon's.
    public var workingDirectory: String?
    /// Standard input.
    public var standardInput: Input
    /// Standard output.
    public var standardOutput: Output
    /// Standard error.
    public var standardError: Output
    /// An absolute path of a cgroup v2 directory the child starts in (from
    /// ``CgroupDelegation/makeAppCgroup(for:)``), or `nil`.
    public var cgroup: String?
    /// Skip `clone3` and use the `posix_spawn` fallback (for tests of the fallback).
    public var forcePosixSpawn: Bool

    /// Creates a launch specification.
    public init(
        executable: String,
        arguments: [String] = [],
        environment: [String: String] = [:],
        workingDirectory: String? = nil,
        standardInput: Input = .nullDevice,
        standardOutput: Output = .inherit,
        standardError: Output = .inherit,
        cgroup: String? = nil,
        forcePosixSpawn: Bool = false
    ) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.workingDirectory = workingDirectory
        self.standardInput = standardInput
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.cgroup = cgroup
        self.forcePosixSpawn = forcePosixSpawn
    }
}

/// Why a launch failed, naming the executable (or the file or directory concerned) and
/// the system's reason.
public struct LaunchError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What failed.
    public enum Step: String, Sendable, Hashable {
        /// The specification itself is unusable (relative path, NUL byte, bad variable name).
        case specification
        /// Opening `/dev/null` or a log file for the output.
        case output
        /// Opening the cgroup directory or moving the child into it.
        case cgroup
        /// Creating the process (clone3, posix_spawn) or its pidfd.
        case create
        /// Putting the child in its own process group.
        case processGroup
        /// Installing standard streams in the child.
        case standardStreams
        /// Changing to the working directory.
        case workingDirectory
        /// `execve` of the executable.
        case exec
    }

    /// The executable that was to be started.
    public var executable: String
    /// The step that failed.
    public var step: Step
    /// `errno` of the failure, 0 for a specification error.
    public var code: Int32
    /// What went wrong, in words.
    public var reason: String

    /// Creates an error.
    public init(executable: String, step: Step, code: Int32, reason: String) {
        self.executable = executable
        self.step = step
        self.code = code
        self.reason = reason
    }

    /// `cannot launch /path/app: execve: No such file or directory (ENOENT)`.
    public var description: String { "cannot launch \(executable): \(reason)" }
}
