#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Reading a small file that someone else controls (a manifest, a policy or scenario file,
/// a sysfs or procfs attribute, the idle override) without hanging and without trusting
/// its size: the one reader every such file goes through (docs/ARCHITECTURE.md).
///
/// - The path is checked with `stat` before it is opened, and the descriptor with `fstat`
///   after: anything that is not a regular file (a FIFO, whose `open` blocks until a
///   writer comes; a character or block device; a socket; a directory) is refused with
///   what it is. sysfs attributes and `/proc` files are regular files.
/// - It is opened with `O_NONBLOCK` (a FIFO swapped in between the two checks cannot
///   block the `open`), `O_CLOEXEC` and `O_NOCTTY`.
/// - At most `limit` bytes are read; a longer file is refused, never silently cut.
public enum BoundedFile {
    /// Why a file could not be read.
    public enum Problem: Hashable, Sendable {
        /// No such file (or a directory on the way is missing or not a directory).
        case missing
        /// Too many levels of symbolic links: a link loop.
        case symbolicLinkLoop
        /// A symbolic link whose target (as the link gives it) does not exist.
        case danglingSymbolicLink(target: String)
        /// The path cannot even be looked up (a directory on the way cannot be searched);
        /// the text is the system's reason and which step failed.
        case unreachable(String)
        /// The path exists but is not a regular file; the text says what it is
        /// ("a FIFO (named pipe)", "a character device", "a directory"...).
        case notRegularFile(String)
        /// The file is larger than the limit (bytes); `size`, the size its `fstat` gave
        /// when that is over the limit (a regular file's; sysfs and procfs report none).
        case tooLarge(limit: Int, size: Int?)
        /// Opening or reading failed; the text is the system's reason ("Permission denied").
        case failed(String)

        /// What was found, for "expected a file, found ..." messages.
        public var found: String {
            switch self {
            case .missing: return "nothing: no such file or directory"
            case .symbolicLinkLoop: return "a symbolic link loop (too many levels of symbolic links)"
            case .danglingSymbolicLink(let target): return "a symbolic link to \"\(StrictJSON.escaped(target))\", which does not exist"
            case .unreachable(let why): return "a path that cannot be reached (\(why))"
            case .notRegularFile(let what): return what
            case .tooLarge(let limit, let size):
                // The size, so a file a few bytes over is told from one that is huge.
                guard let size else { return "a file larger than \(BoundedFile.describe(bytes: limit))" }
                return "a file of \(size) bytes, larger than \(BoundedFile.describe(bytes: limit))"
            case .failed(let why): return "a file that cannot be read (\(why))"
            }
        }
    }

    /// A file that could not be read, with its path.
    public struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        /// The path as given.
        public var path: String
        /// What went wrong.
        public var problem: Problem

        /// Creates a failure.
        public init(path: String, problem: Problem) {
            self.path = path
            self.problem = problem
        }

        /// `<path>: expected a regular file, found <what>`.
        public var description: String { "\(path): expected a regular file, found \(problem.found)" }
    }

    /// The contents of the regular file at `path`, at most `limit` bytes; with `owner`, only
    /// a file that user owns (checked on the file opened, not on the path before it).
    public static func read(path: String, limit: Int, owner: uid_t? = nil) throws(Failure) -> [UInt8] {
        try read(path: path, limit: limit, refusingLonger: true, owner: owner)
    }

    /// The first `count` bytes of the regular file at `path` (all of it when it is shorter),
    /// with the checks of ``read(path:limit:)``: a file's header, without reading the rest.
    public static func head(path: String, count: Int) throws(Failure) -> [UInt8] {
        try read(path: path, limit: count, refusingLonger: false)
    }

    private static func read(path: String, limit: Int, refusingLonger: Bool, owner: uid_t? = nil) throws(Failure) -> [UInt8] {
        func fail(_ problem: Problem) -> Failure { Failure(path: path, problem: problem) }
        var info = stat()
        if stat(path, &info) != 0 { throw fail(lookupProblem(errno: errno, path: path)) }
        if let what = nonRegularKind(info.st_mode) { throw fail(.notRegularFile(what)) }
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else { throw fail(problem(errno: errno)) }
        defer { close(descriptor) }
        // The path may have been replaced between stat and open: judge what was opened.
        if fstat(descriptor, &info) != 0 { throw fail(problem(errno: errno)) }
        if let what = nonRegularKind(info.st_mode) { throw fail(.notRegularFile(what)) }
        if let owner, info.st_uid != owner { throw fail(.failed("owned by uid \(info.st_uid), not uid \(owner)")) }

        var data: [UInt8] = []
        // sysfs reports 4096 and procfs 0 for every file, so the size is only a hint.
        let hint = Int(clamping: max(0, Int64(info.st_size)))
        data.reserveCapacity(min(limit, max(hint, 64)) + 1)
        var chunk = [UInt8](repeating: 0, count: min(16_384, limit + 1))
        while true {
            let count = chunk.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { break }
            if count < 0 {
                let code = errno
                if code == EINTR { continue }
                throw fail(.failed(String(cString: strerror(code))))
            }
            data.append(contentsOf: chunk[0..<count])
            if data.count > limit {
                guard refusingLonger else { return Array(data.prefix(limit)) }
                throw fail(.tooLarge(limit: limit, size: hint > limit ? hint : nil))
            }
        }
        return data
    }

    /// Why `path` cannot be looked at (`stat`, which follows links, fails), in the words
    /// ``read(path:limit:)`` uses: ``Problem/missing`` only when nothing is there, never for
    /// a link loop, a link that leads nowhere or a directory on the way that cannot be
    /// searched, each named for what it is; nil when something is there (of any kind: its
    /// reader judges it). For the paths a command is given that are not read as files (a
    /// state directory), whose "does not exist" would hide a link loop in `ls`'s sight.
    public static func lookupProblem(at path: String) -> Problem? {
        var info = stat()
        return stat(path, &info) == 0 ? nil : lookupProblem(errno: errno, path: path)
    }

    private static func lookupProblem(errno code: Int32, path: String) -> Problem {
        // "No such file" for a link that is there but leads nowhere would send the user
        // looking for a file they can see in `ls`.
        if code == ENOENT, let target = danglingLinkTarget(path) { return .danglingSymbolicLink(target: target) }
        // stat needs no permission on the file itself, only to search the directories
        // on the way: say so rather than blame the file.
        if code == EACCES { return .unreachable("\(String(cString: strerror(code))): a directory on the way to it cannot be searched") }
        return problem(errno: code)
    }

    private static func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.read(descriptor, buffer, count)
        #else
        Darwin.read(descriptor, buffer, count)
        #endif
    }

    /// What a non-regular file is, with an article; `nil` for a regular file. Shared with
    /// the other checks of files from outside (an app's executable).
    public static func nonRegularKind(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFIFO: return "a FIFO (named pipe)"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFDIR: return "a directory"
        case S_IFSOCK: return "a socket"
        case S_IFLNK: return "a symbolic link"
        default: return "not a regular file"
        }
    }

    /// The target of the symbolic link at `path`, when `path` is one (its own target may be
    /// missing); `nil` otherwise.
    private static func danglingLinkTarget(_ path: String) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func problem(errno code: Int32) -> Problem {
        switch code {
        case ENOENT, ENOTDIR: return .missing
        case ELOOP: return .symbolicLinkLoop
        case ENXIO: return .notRegularFile("a socket or a device without a driver")
        default: return .failed(String(cString: strerror(code)))
        }
    }

    /// `1 MiB`, `64 KiB`, `512 bytes`.
    public static func describe(bytes: Int) -> String {
        if bytes >= 1 << 20, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10, bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }
}

extension Int {
    /// `value` rounded toward zero and clamped to `Int`'s range, NaN as 0: for turning a
    /// number that came from outside (a file, a flag) or from arithmetic on one into an
    /// integer for a message or an index without trapping, as `Int(_: Double)` does on
    /// values out of range.
    public init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= 9.223372036854775e18 {
            self = .max
        } else if value <= -9.223372036854775e18 {
            self = .min
        } else {
            self = Int(value)
        }
    }
}
