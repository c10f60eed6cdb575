import Foundation
import SchedulerCore

/// Checks that a store path can be opened for writing before SQLite touches it, so the
/// error names the real problem (SQLite would say only "unable to open database file", or
/// silently open a read-only file read-only).
public enum StoreLocation {
    /// What stops `directory` from being (or being created as) a directory, naming the
    /// component at fault (`directory` itself, or one on the way to it): a regular file
    /// where a directory must be, a symbolic link that
    /// loops or points nowhere, a component that cannot be searched. `nil` when every
    /// existing component is a directory (the missing rest can be created).
    ///
    /// Foundation says only "file already exists" or "error 512" for these.
    public static func directoryProblem(_ directory: String) -> String? {
        let components = directory.split(separator: "/", omittingEmptySubsequences: true)
        var prefix = directory.hasPrefix("/") ? "" : "."
        for (index, component) in components.enumerated() {
            prefix += "/" + component
            var info = stat()
            if stat(prefix, &info) == 0 {
                if (info.st_mode & S_IFMT) == S_IFDIR { continue }
                let what = (info.st_mode & S_IFMT) == S_IFREG ? "a regular file, not a directory" : "not a directory"
                // The path itself, or a component on the way to it ("X is a regular file, so
                // X cannot be a directory in it" said the first as if it were the second).
                if index == components.count - 1 { return "\(prefix) is \(what)" }
                return "\(prefix) is \(what), so \(directory) cannot be in it"
            }
            let failure = errno
            switch failure {
            case ELOOP:
                return "\(prefix) is a symbolic link that loops (too many levels of symbolic links)"
            case ENOENT:
                var linkInfo = stat()
                if lstat(prefix, &linkInfo) == 0 {
                    let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: prefix)) ?? "?"
                    return "\(prefix) is a symbolic link to \(target), which does not exist"
                }
                return nil // the rest does not exist yet: it can be created
            case EACCES:
                return "\(prefix) cannot be searched: permission denied"
            default:
                return "\(prefix): \(systemErrorText(failure))"
            }
        }
        return nil
    }

    /// Creates `directory` and its missing parents with `mode` (as `mkdir -p`), one
    /// mkdir(2) per missing component; an existing directory is left as it is. Returns why
    /// it could not, naming the component and the system's reason (Foundation says only
    /// "The file doesn't exist" for `/proc/x`, or "You don't have permission" for `/sys/x`),
    /// or `nil` when `directory` is a directory now.
    public static func createDirectory(_ directory: String, mode: mode_t = 0o700) -> String? {
        if let problem = directoryProblem(directory) { return problem }
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
        if let problem = directoryProblem(directory) {
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
