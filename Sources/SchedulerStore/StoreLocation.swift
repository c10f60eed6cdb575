import Foundation

/// Checks that a store path can be opened for writing before SQLite touches it, so the
/// error names the real problem (SQLite would say only "unable to open database file", or
/// silently open a read-only file read-only).
enum StoreLocation {
    static func checkUsable(_ path: String) throws(StoreError) {
        let directory = (path as NSString).deletingLastPathComponent
        let fileManager = FileManager.default
        var isDirectory: ObjCBool = false
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
