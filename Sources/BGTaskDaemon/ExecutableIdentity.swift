#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SchedulerCore

/// A process that is not the installed executable it claims to be, or whose executable
/// cannot be read.
public struct ExecutableIdentityError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The category; a struct of constants so that categories can be added.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The category's stable name.
        public let rawValue: String
        /// Wraps a category name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// `/proc/<pid>/exe` cannot be read: the process is gone, or belongs to another
        /// user (the kernel refuses to show it).
        public static let unreadable = Code(rawValue: "unreadable")
        /// The process runs a file that was deleted or replaced since it started: whatever
        /// it runs is no longer the installed executable.
        public static let deleted = Code(rawValue: "deleted")
        /// The process runs another file than the installed executable.
        public static let mismatch = Code(rawValue: "mismatch")
        /// The installed executable itself cannot be examined (removed since installation).
        public static let installedExecutableMissing = Code(rawValue: "installed-executable-missing")

        /// The category's name.
        public var description: String { rawValue }
    }

    /// The category.
    public var code: Code
    /// The process examined.
    public var pid: Int32
    /// What it says: which process, what it runs, and what was expected.
    public var message: String

    /// Creates an error.
    public init(code: Code, pid: Int32, message: String) {
        self.code = code
        self.pid = pid
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

/// Recognising an app's process by the file it executes (issue 9, item 8: an app
/// connection's identity is its installed executable, docs/manifest.md).
///
/// The peer's process id comes from `SO_PEERCRED`; `/proc/<pid>/exe` is the kernel's link
/// to the file the process executes. Two comparisons:
///
/// - its text (`readlink`): the kernel appends ` (deleted)` when the file was unlinked or
///   replaced (an upgrade renames a new file over it) after the process started; such a
///   process is refused, since what it runs is no longer what was installed;
/// - the file itself: `stat("/proc/<pid>/exe")` follows the link to the inode the process
///   executes, and its `(st_dev, st_ino)` must be the installed executable's, whatever the
///   path's spelling (bind mounts, links of directories, `.` and `..`).
///
/// A process id can be reused once its process exits, so the caller checks while it holds
/// the connection the credentials came from (a connected peer that exits closes it).
public enum ExecutableIdentity {
    /// What the kernel appends to `/proc/<pid>/exe`'s target when the file is gone.
    static let deletedSuffix = " (deleted)"

    /// Checks that process `pid` executes `installed.executable`.
    ///
    /// - Parameters:
    ///   - procRoot: where procfs is mounted (tests pass a fake tree).
    /// - Returns: the path the kernel reports for the process's executable.
    /// - Throws: ``ExecutableIdentityError`` saying which pid, what it runs and which
    ///   executable of which app was expected.
    @discardableResult
    public static func check(pid: Int32, installed: InstalledApp, procRoot: String = "/proc") throws(ExecutableIdentityError) -> String {
        let peer = try examine(pid: pid, procRoot: procRoot)
        let expected = "the executable of \(installed.app), \(installed.executable)"
        if let deleted = peer.deletedPath {
            throw ExecutableIdentityError(
                code: .deleted, pid: pid,
                message: "process \(pid) runs \(deleted), which was deleted or replaced since it started; expected \(expected) as installed")
        }
        guard let wanted = fileIdentity(installed.executable) else {
            throw ExecutableIdentityError(
                code: .installedExecutableMissing, pid: pid,
                message: "process \(pid) runs \(peer.path), but \(expected) cannot be examined (\(systemErrorText(errno))); reinstall the app")
        }
        guard let identity = peer.identity, identity == wanted else {
            throw ExecutableIdentityError(
                code: .mismatch, pid: pid,
                message: "process \(pid) runs \(peer.path), which is not \(expected)")
        }
        return peer.path
    }

    /// The installed app whose executable process `pid` runs, or `nil` when it runs none of
    /// them (or its file was deleted or replaced, or it cannot be examined): how the daemon
    /// tells which app a connection is.
    ///
    /// Cost: one `readlink` and one `stat` of the process, then `stat` of the app whose
    /// executable path is the kernel's (the usual case, since installed paths are real
    /// paths); only when no path matches is every executable examined.
    public static func appOwning(pid: Int32, among apps: [InstalledApp], procRoot: String = "/proc") -> InstalledApp? {
        guard let peer = try? examine(pid: pid, procRoot: procRoot), peer.deletedPath == nil, let identity = peer.identity else {
            return nil
        }
        if let byPath = apps.first(where: { $0.executable == peer.path }), fileIdentity(byPath.executable) == identity {
            return byPath
        }
        return apps.first { fileIdentity($0.executable) == identity }
    }

    /// A file's identity: the device and inode numbers.
    struct FileIdentity: Equatable {
        var device: UInt64
        var inode: UInt64
    }

    /// What `/proc/<pid>/exe` says.
    private struct Peer {
        /// The kernel's path, ` (deleted)` included when present.
        var path: String
        /// The path without ` (deleted)` when the kernel marked the file gone.
        var deletedPath: String?
        /// The executed file's identity, when `stat` can follow the link.
        var identity: FileIdentity?
    }

    private static func examine(pid: Int32, procRoot: String) throws(ExecutableIdentityError) -> Peer {
        let link = "\(procRoot)/\(pid)/exe"
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(link, &buffer, buffer.count - 1)
        guard count >= 0 else {
            let code = errno
            let why: String
            switch code {
            case ENOENT: why = "there is no such process (it exited)"
            case EACCES, EPERM: why = "the kernel does not show it (another user's process)"
            default: why = systemErrorText(code)
            }
            throw ExecutableIdentityError(code: .unreadable, pid: pid, message: "process \(pid): cannot read \(link): \(why)")
        }
        let path = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var deleted: String?
        if path.hasSuffix(deletedSuffix) {
            deleted = String(path.dropLast(deletedSuffix.count))
        }
        return Peer(path: path, deletedPath: deleted, identity: fileIdentity(link))
    }

    /// `stat(path)`'s device and inode (following links: for `/proc/<pid>/exe`, the file the
    /// process executes, even when it was deleted), or `nil` when it fails (`errno` set).
    static func fileIdentity(_ path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }
}
