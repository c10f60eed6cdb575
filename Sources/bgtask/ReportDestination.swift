#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SchedulerCore

/// Where `--report FILE.html` goes. The path is checked before the run (`check`), so one
/// that cannot take the report is refused at once instead of after minutes of simulation
/// whose output would be lost; the report is then written atomically (`write`), which
/// checks again because the file system may have changed during the run.
///
/// The write is a temporary file renamed over the report, so it goes only where a regular
/// file is or may be: a symbolic link is followed and its target replaced (not the link),
/// and a device, a FIFO, a socket or a directory is refused (renaming over `/dev/full`
/// would replace the device; opening a FIFO would block). An existing file is replaced only
/// when it is empty or an HTML page (an earlier report): `--report scenario.json`, a
/// manifest or a program given by mistake is refused, not lost.
enum ReportDestination {
    /// The file the report will replace or create, after following a symbolic link.
    /// Throws a `UsageError` naming `path` when the report could not be written there:
    /// the path is not a regular file, its directory is missing or not a directory, or a
    /// new file cannot be created in the directory (tried for real: a temporary file is
    /// created and removed, because permissions alone do not tell, e.g. for root or on a
    /// read-only mount).
    @discardableResult
    static func check(_ path: String) throws -> URL {
        let destination = try resolved(path, before: "nothing was run")
        let directory = destination.deletingLastPathComponent().path
        var info = stat()
        if lstat(directory, &info) != 0 {
            let code = errno
            let why = code == ENOENT ? "the directory \(directory) does not exist" : "the directory \(directory) cannot be reached: \(systemErrorText(code))"
            throw UsageError(message: "cannot write the report to \(path): \(why); nothing was run")
        }
        if stat(directory, &info) != 0 || info.st_mode & S_IFMT != S_IFDIR {
            throw UsageError(message: "cannot write the report to \(path): \(directory) is not a directory; nothing was run")
        }
        // In a sticky directory (/tmp) only a file's owner, the directory's or root may rename
        // over it: the new file could be created, but the rename would fail after the run.
        let uid = getuid()
        var existing = stat()
        if info.st_mode & S_ISVTX != 0, uid != 0, info.st_uid != uid, lstat(destination.path, &existing) == 0, existing.st_uid != uid {
            throw UsageError(
                message: "cannot write the report to \(path): it belongs to uid \(existing.st_uid) in the sticky directory \(directory), "
                    + "where only its owner may replace it; nothing was run"
            )
        }
        var template = Array((directory + "/.bgtask-report-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        if descriptor < 0 {
            throw UsageError(message: "cannot write the report to \(path): a new file cannot be created in \(directory): \(systemErrorText(errno)); nothing was run")
        }
        close(descriptor)
        _ = template.withUnsafeBufferPointer { unlink($0.baseAddress!) }
        return destination
    }

    /// Writes `html` to `path` atomically, naming the path when it cannot.
    static func write(_ html: String, to path: String) throws {
        let destination = try resolved(path, before: "nothing was written")
        do {
            try Data(html.utf8).write(to: destination, options: .atomic)
        } catch {
            // Foundation's own text ("The file doesn't exist" for /proc/version) hides which
            // step failed and why: the system's error is in the underlying error.
            let directory = destination.deletingLastPathComponent().path
            let nsError = error as NSError
            // On Linux the underlying error is a Swift POSIXError, elsewhere an NSError.
            let underlying = (nsError.userInfo[NSUnderlyingErrorKey] as? any Error).map { $0 as NSError }
            if let underlying, underlying.domain == NSPOSIXErrorDomain, let code = Int32(exactly: underlying.code) {
                throw UsageError(
                    message: "cannot write the report to \(path): writing a temporary file in \(directory) and renaming it "
                        + "over the report failed: \(systemErrorText(code)); nothing was written"
                )
            }
            throw UsageError(message: "cannot write the report to \(path): \(error.localizedDescription)")
        }
    }

    /// `path` with a symbolic link followed; refuses what is there and is not a regular file,
    /// or a non-empty file that is not an HTML page, saying `outcome` (what was not done).
    private static func resolved(_ path: String, before outcome: String) throws -> URL {
        // "report.html/" names a directory: the URL below would drop the slash and write a file.
        if path.hasSuffix("/") {
            throw UsageError(message: "cannot write the report to \(path): it names a directory (it ends in /), not a file; \(outcome)")
        }
        var destination = URL(fileURLWithPath: path)
        var info = stat()
        if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK {
            try refuseForeignLink(at: path, ownedBy: info.st_uid, outcome: outcome)
            destination = destination.resolvingSymlinksInPath()
        }
        let exists = lstat(destination.path, &info) == 0
        if exists, let named = BoundedFile.nonRegularKind(info.st_mode) {
            // Still a link after resolving: a kernel link to a pipe or a terminal
            // (/dev/stdout), one in a loop, or one that leads nowhere.
            var kind = named
            if info.st_mode & S_IFMT == S_IFLNK {
                var followed = stat()
                if stat(destination.path, &followed) == 0, let target = BoundedFile.nonRegularKind(followed.st_mode) {
                    kind = target
                } else {
                    let loops = BoundedFile.lookupProblem(at: destination.path) == .symbolicLinkLoop
                    kind = loops ? "a symbolic link loop" : "a symbolic link that leads nowhere"
                }
            }
            throw UsageError(message: "cannot write the report to \(path): it is \(kind), not a regular file; \(outcome)")
        }
        if exists, info.st_size > 0, startsLikeHTML(destination.path) == false {
            throw UsageError(
                message: "cannot write the report to \(path): it exists and is not an HTML page (a scenario, a manifest or a program given by mistake?); "
                    + "remove it or name another file; \(outcome)"
            )
        }
        return destination
    }

    /// Refuses to follow the symbolic link at `path`, owned by `owner`, when it lies in a
    /// sticky world-writable directory (/tmp) and belongs neither to the user nor to the
    /// directory's owner: as the kernel's `protected_symlinks` rule, which this check does
    /// not rely on (it may be off), because another user could have planted it to have the
    /// report replace a file of the user's elsewhere (the demo's report has a fixed name in
    /// /tmp).
    private static func refuseForeignLink(at path: String, ownedBy owner: uid_t, outcome: String) throws {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var info = stat()
        guard stat(directory, &info) == 0, info.st_mode & S_ISVTX != 0, info.st_mode & S_IWOTH != 0,
              owner != getuid(), owner != info.st_uid else { return }
        throw UsageError(
            message: "cannot write the report to \(path): it is a symbolic link of uid \(owner) in the shared directory \(directory), "
                + "which another user may point at any of your files; remove it or name another file; \(outcome)"
        )
    }

    /// Whether the regular file at `path` begins (after a byte order mark and white space)
    /// with `<!DOCTYPE html`, `<html` or an HTML comment, in any case, or holds only white
    /// space: what a report, or another HTML page, begins with. `nil` when it cannot be read
    /// (the rename, which needs only the directory, decides then). Reads at most 256 bytes,
    /// without blocking (the file was found to be a regular file).
    static func startsLikeHTML(_ path: String) -> Bool? {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, 256) }
        guard count >= 0 else { return nil }
        var bytes = buffer[0..<count]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        let text = String(decoding: bytes, as: UTF8.self).drop { $0.isWhitespace }.lowercased()
        return text.isEmpty || text.hasPrefix("<!doctype html") || text.hasPrefix("<html") || text.hasPrefix("<!--")
    }
}
