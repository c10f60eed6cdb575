#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// How a supervised process ended, decoded from its wait status.
public enum ProcessExitStatus: Sendable, Hashable, CustomStringConvertible {
    /// It called `exit` (or returned from `main`) with this code (0-255).
    case exited(code: Int32)
    /// A signal ended it; `coreDumped` when the kernel wrote a core.
    case signaled(signal: Int32, coreDumped: Bool)
    /// The wait status could not be obtained (someone else reaped the child); the text says why.
    case unknown(String)

    /// Decodes a `wait4` status word as glibc's `WIFEXITED`, `WEXITSTATUS`, `WIFSIGNALED`,
    /// `WTERMSIG` and `WCOREDUMP` macros do (Swift cannot import them): the low 7 bits are
    /// the terminating signal (0 for a normal exit, 0x7f for a stopped child), bit 7 the
    /// core flag, bits 8-15 the exit code.
    public init(waitStatus status: Int32) {
        let low = status & 0x7f
        if low == 0 {
            self = .exited(code: (status >> 8) & 0xff)
        } else if low != 0x7f {
            self = .signaled(signal: low, coreDumped: status & 0x80 != 0)
        } else {
            // Stopped or continued: wait4 without WUNTRACED never reports these.
            self = .unknown("stopped by signal \((status >> 8) & 0xff), not ended")
        }
    }

    /// True for `exited(code: 0)`.
    public var isSuccess: Bool { self == .exited(code: 0) }

    /// `exited with code 3`, `killed by signal 9 (SIGKILL)`, `killed by signal 11 (SIGSEGV), core dumped`.
    public var description: String {
        switch self {
        case .exited(let code): return "exited with code \(code)"
        case .signaled(let signal, let core):
            return "killed by signal \(signal) (\(signalName(signal)))" + (core ? ", core dumped" : "")
        case .unknown(let why): return "ended, status unknown (\(why))"
        }
    }
}

/// `SIGTERM` for 15; `signal N` for the rest.
func signalName(_ signal: Int32) -> String {
    let names: [Int32: String] = [
        SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGILL: "SIGILL", SIGTRAP: "SIGTRAP",
        SIGABRT: "SIGABRT", SIGBUS: "SIGBUS", SIGFPE: "SIGFPE", SIGKILL: "SIGKILL", SIGUSR1: "SIGUSR1",
        SIGSEGV: "SIGSEGV", SIGUSR2: "SIGUSR2", SIGPIPE: "SIGPIPE", SIGALRM: "SIGALRM", SIGTERM: "SIGTERM",
        SIGCHLD: "SIGCHLD", SIGCONT: "SIGCONT", SIGSTOP: "SIGSTOP", SIGTSTP: "SIGTSTP", SIGXCPU: "SIGXCPU",
    ]
    return names[signal] ?? "signal \(signal)"
}

/// What the kernel accounted to a reaped process and the children it waited for
/// (`struct rusage` from `wait4`).
public struct ResourceUsage: Sendable, Hashable {
    /// CPU time in user mode, seconds.
    public var userCPUSeconds: Double
    /// CPU time in the kernel on its behalf, seconds.
    public var systemCPUSeconds: Double
    /// Peak resident set size in bytes (`ru_maxrss` is in KiB on Linux).
    public var maxResidentBytes: UInt64
    /// Blocks read from storage (`ru_inblock`, 512-byte units).
    public var blocksRead: UInt64
    /// Blocks written to storage (`ru_oublock`, 512-byte units).
    public var blocksWritten: UInt64

    /// Creates a usage record.
    public init(userCPUSeconds: Double, systemCPUSeconds: Double, maxResidentBytes: UInt64, blocksRead: UInt64, blocksWritten: UInt64) {
        self.userCPUSeconds = userCPUSeconds
        self.systemCPUSeconds = systemCPUSeconds
        self.maxResidentBytes = maxResidentBytes
        self.blocksRead = blocksRead
        self.blocksWritten = blocksWritten
    }

    /// Nothing used (a child whose status could not be collected).
    public static let zero = ResourceUsage(userCPUSeconds: 0, systemCPUSeconds: 0, maxResidentBytes: 0, blocksRead: 0, blocksWritten: 0)

    /// User plus system CPU time, seconds.
    public var cpuSeconds: Double { userCPUSeconds + systemCPUSeconds }

    /// Converts the kernel's record; negative fields (never produced by Linux) count as 0
    /// and the KiB-to-bytes conversion saturates.
    init(_ usage: rusage) {
        func seconds(_ time: timeval) -> Double { Double(max(0, time.tv_sec)) + Double(max(0, time.tv_usec)) / 1_000_000 }
        func count(_ value: Int) -> UInt64 { value > 0 ? UInt64(value) : 0 }
        let (bytes, overflow) = count(usage.ru_maxrss).multipliedReportingOverflow(by: 1024)
        self.init(
            userCPUSeconds: seconds(usage.ru_utime),
            systemCPUSeconds: seconds(usage.ru_stime),
            maxResidentBytes: overflow ? .max : bytes,
            blocksRead: count(usage.ru_inblock),
            blocksWritten: count(usage.ru_oublock)
        )
    }
}
