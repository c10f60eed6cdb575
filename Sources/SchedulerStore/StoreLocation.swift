import Foundation
import SchedulerCore

/// Checks that a store path can be opened for writing before SQLite touches it, so the
/// error names the real problem (SQLite would say only "unable to open database file", or
/// silently open a read-only file read-only).
public enum StoreLocation {
    /// Creates `directory` and its missing parents with `mode` (as `mkdir -p`), one
    /// mkdir(2) per missing component; an existing directory is left as it is. Returns why
    /// it could not, naming the component and the system's reason (Foundation says only
    /// "The file doesn't exist" for `/proc/x`, or "You don't have permission" for `/sys/x`),
    /// or `nil` when `directory` is a directory now.
    public static func createDirectory(_ directory: String, mode: mode_t = 0o700) -> String? {
        if let problem = DirectoryProblem.find(in: directory) { return "\(problem)" }
        let components = directory.split(separator: "/", omittingEmptySubsequences: true)
        var prefix = directory.hasPrefix("/") ? "" : "."
        for component in components {
            prefix += "/" + component
            if mkdir(prefix, mode) == 0 { continue }
            let failure = errno
            var info = stat()
            if failure == EEXIST, stat(prefix, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR { continue }
            if failure == EEXIST { return "\(prefix) appeared as something other than a directory while it was being created" }
            if failure == ENOENT {
                // Its parent is a directory (checked above) and yet mkdir says it does not
                // exist: a file system that makes no directories (procfs).
                return "\(prefix) cannot be created: its file system does not allow it (\(systemErrorText(failure)))"
            }
            return "\(prefix) cannot be created: \(systemErrorText(failure))"
        }
        return nil
    }

    static func checkUsable(_ path: String) throws(StoreError) {
        let directory = (path as NSString).deletingLastPathComponent
        let fileManager = FileManager.default
        var isDirectory: ObjCBool = false
        if let problem = DirectoryProblem.find(in: directory) {
            throw StoreError(code: .cannotOpen, path: path, message: "cannot open the scheduler store at \(path): \(problem)")
        }
        guard fileManager.fileExists(atPath: directory, isDirectory: &isDirectory) else {
            throw StoreError(
                code: .cannotOpen,
                path: path,
                message: "cannot open the scheduler store at \(path): the directory \(directory) does not exist"
            )
        }
        guard isDirectory.boolValue else {
            throw StoreError(
                code: .cannotOpen,
                path: path,
                message: "cannot open the scheduler store at \(path): \(directory) is not a directory"
            )
        }
        // The directory must be writable too: SQLite creates the -wal and -shm files beside the
        // database, and a damaged database is moved aside within it.
        guard access(directory, W_OK | X_OK) == 0 else {
            throw StoreError(
                code: .readOnly,
                path: path,
                message: "cannot open the scheduler store at \(path): the directory \(directory) "
                    + "is not writable (\(String(cString: strerror(errno))))"
            )
        }
        // A link that leads nowhere (or loops): SQLite would create the store at its target,
        // outside the state directory, while readers find nothing here.
        var linkInfo = stat()
        if lstat(path, &linkInfo) == 0, linkInfo.st_mode & S_IFMT == S_IFLNK, let problem = BoundedFile.lookupProblem(at: path) {
            throw StoreError(
                code: .cannotOpen,
                path: path,
                message: "cannot open the scheduler store at \(path): it is \(problem.found); a store is never created through a link "
                    + "(create the link's target first, an empty file will do, or name another state directory)"
            )
        }
        guard fileManager.fileExists(atPath: path, isDirectory: &isDirectory) else { return }
        guard !isDirectory.boolValue else {
            throw StoreError(
                code: .cannotOpen,
                path: path,
                message: "cannot open the scheduler store at \(path): it is a directory"
            )
        }
        guard access(path, R_OK | W_OK) == 0 else {
            throw StoreError(
                code: .readOnly,
                path: path,
                message: "cannot open the scheduler store at \(path): the file is not writable "
                    + "(\(String(cString: strerror(errno)))); it was left as it is"
            )
        }
    }
}
