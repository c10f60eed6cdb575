#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SchedulerCore

/// Reading and writing the small procfs and cgroupfs files supervision uses. Every read
/// goes through `BoundedFile` (docs/ARCHITECTURE.md, "Bad input"); every number is parsed
/// with a range check (`UInt64(_:)` refuses out-of-range text instead of trapping).
enum KernelFiles {
    /// The cap for one procfs or cgroupfs file (as for sysfs values).
    static let limit = 64 * 1024

    /// The text of a kernel file, or `nil` when it cannot be read.
    static func text(_ path: String) -> String? {
        guard let bytes = try? BoundedFile.read(path: path, limit: limit) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `key value` lines (cpu.stat, cgroup.events, /proc/<pid>/io with `key: value`) as a
    /// dictionary of range-checked numbers; malformed lines are skipped.
    static func keyedNumbers(_ text: String) -> [String: UInt64] {
        var values: [String: UInt64] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard parts.count >= 2 else { continue }
            var key = parts[0]
            if key.hasSuffix(":") { key = key.dropLast() }
            if let value = UInt64(parts[1]) { values[String(key)] = value }
        }
        return values
    }

    /// Whether the cgroup at `cgroup` holds any process now (`populated 1` in its
    /// `cgroup.events`, which counts its descendants too); false when it cannot be read.
    /// The inode of the directory at `path` (a cgroup's identity: one removed and made again
    /// at the same path is another directory), or `nil` when there is none.
    static func directoryIdentity(_ path: String) -> UInt64? {
        var status = stat()
        guard stat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR else { return nil }
        return UInt64(status.st_ino)
    }

    /// The processes in `cgroup` (its `cgroup.procs`); none when it cannot be read.
    static func cgroupProcesses(_ cgroup: String) -> [Int32] {
        (text(cgroup + "/cgroup.procs") ?? "").split(whereSeparator: \.isNewline).compactMap { Int32($0) }.filter { $0 > 0 }
    }

    static func cgroupIsPopulated(_ cgroup: String) -> Bool {
        guard let text = text(cgroup + "/cgroup.events") else { return false }
        return keyedNumbers(text)["populated"] == 1
    }

    /// Writes `value` to the kernel file at `path` (`O_WRONLY | O_CLOEXEC`, one write, as
    /// cgroupfs expects). Throws the system's reason naming the file.
    static func write(_ value: String, to path: String) throws(KernelFileError) {
        let descriptor = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else { throw KernelFileError(path: path, code: errno) }
        defer { close(descriptor) }
        let bytes = Array(value.utf8)
        while true {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            if written < 0 { throw KernelFileError(path: path, code: errno) }
            if written != bytes.count { throw KernelFileError(path: path, code: EIO) }
            return
        }
    }
}

/// A kernel file that could not be written (or opened).
public struct KernelFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file.
    public var path: String
    /// `errno`.
    public var code: Int32
    /// Creates an error.
    public init(path: String, code: Int32) {
        self.path = path
        self.code = code
    }
    /// `<path>: Permission denied (EACCES)`.
    public var description: String { "\(path): \(systemErrorText(code))" }
}

/// The fields of `/proc/<pid>/stat` supervision needs. The command name (field 2) is in
/// parentheses and may contain spaces and parentheses, so fields are counted after the
/// last `)`.
public struct ProcessStat: Sendable, Hashable {
    /// Field 3: `R`, `S`, `D`, `T` (stopped), `t`, `Z` (zombie), `X`...
    public var state: Character
    /// Field 5: the process group.
    public var processGroup: Int32
    /// Field 6: the session.
    public var session: Int32
    /// Fields 14 and 15: user and system CPU time in clock ticks.
    public var userTicks: UInt64
    /// System CPU ticks.
    public var systemTicks: UInt64
    /// Fields 16 and 17: CPU ticks of the children it waited for.
    public var childrenTicks: UInt64
    /// Field 22: start time in clock ticks after boot (with the pid, the identity of a process).
    public var startTime: UInt64

    /// Parses a stat line; `nil` when it is malformed or a number is out of range.
    public init?(parsing text: String) {
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        // fields[0] is field 3; field n is fields[n - 3].
        guard fields.count >= 20, fields[0].count == 1, let state = fields[0].first,
              let group = Int32(fields[2]), let session = Int32(fields[3]),
              let user = UInt64(fields[11]), let system = UInt64(fields[12]),
              let childUser = UInt64(fields[13]), let childSystem = UInt64(fields[14]),
              let start = UInt64(fields[19].trimmingCharacters(in: .whitespacesAndNewlines))
        else { return nil }
        let (children, overflow) = childUser.addingReportingOverflow(childSystem)
        guard !overflow else { return nil }
        self.state = state
        self.processGroup = group
        self.session = session
        self.userTicks = user
        self.systemTicks = system
        self.childrenTicks = children
        self.startTime = start
    }

    /// Whether this is the live process that started at `startTime` (field 22, recorded when
    /// it was launched or connected): the same start time, not a zombie nor dead. With the
    /// pid, what says a process may still be signalled: a pid of a process that is gone may
    /// be another's by now.
    public func isLiveProcess(startedAt startTime: UInt64) -> Bool {
        self.startTime == startTime && state != "Z" && state != "X"
    }

    /// Reads `<procRoot>/<pid>/stat`; `nil` when the process is gone or the file is malformed.
    public static func read(pid: Int32, procRoot: String = "/proc") -> ProcessStat? {
        guard pid > 0, let text = KernelFiles.text("\(procRoot)/\(pid)/stat") else { return nil }
        return ProcessStat(parsing: text)
    }

    /// Clock ticks per second (`sysconf(_SC_CLK_TCK)`, 100 on Linux).
    static let ticksPerSecond: Double = {
        let value = sysconf(Int32(_SC_CLK_TCK))
        return value > 0 ? Double(value) : 100
    }()
}
