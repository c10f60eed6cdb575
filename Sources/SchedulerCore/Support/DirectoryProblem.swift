import Foundation

/// What stops a path from being (or being created as) a directory, naming the component at
/// fault (the path itself, or one on the way to it): a file where a directory must be, a
/// symbolic link that loops or points nowhere, a directory this user cannot search.
///
/// Foundation says only "file already exists" or "error 512" for these, and `mkdir` or
/// `lstat` only "Permission denied" for a directory on the way that cannot be searched, as
/// if the path itself could not be created. The state directory (`StoreLocation`) and the
/// socket directory (`DaemonPaths`) are both checked with it, each saying the fault in its
/// own words through ``kind``; ``description`` is the state directory's.
public struct DirectoryProblem: Hashable, Sendable, CustomStringConvertible {
    /// What is wrong with ``component``.
    public enum Kind: Hashable, Sendable {
        /// It exists and is not a directory (`regularFile`: it is a plain file).
        case notDirectory(regularFile: Bool)
        /// A symbolic link that loops (`ELOOP`).
        case symbolicLinkLoop
        /// A symbolic link to `target`, which does not exist.
        case danglingSymbolicLink(target: String)
        /// A directory on the way that this user may not search (`errno` of `access(X_OK)`),
        /// so nothing below it can be looked up or created.
        case unsearchable(code: Int32)
        /// It could not be looked up for another reason (`errno` of `stat`).
        case lookupFailed(code: Int32)
    }

    /// The path that was checked.
    public var path: String
    /// The component at fault: `path` itself or a directory on the way to it.
    public var component: String
    /// Whether ``component`` is `path` itself (its last component), not one on the way.
    public var isPathItself: Bool
    /// What is wrong with it.
    public var kind: Kind

    /// Checks `path` component by component: `nil` when every component that exists is a
    /// directory, and every one with a component after it can be searched (the missing rest
    /// can then be created; the last component's own permissions are not judged).
    public static func find(in path: String) -> DirectoryProblem? {
        let components = path.split(separator: "/", omittingEmptySubsequences: true)
        var prefix = path.hasPrefix("/") ? "" : "."
        var isLast = false
        func problem(_ kind: Kind) -> DirectoryProblem { DirectoryProblem(path: path, component: prefix, isPathItself: isLast, kind: kind) }
        for (index, component) in components.enumerated() {
            prefix += "/" + component
            isLast = index == components.count - 1
            var info = stat()
            if stat(prefix, &info) == 0 {
                guard (info.st_mode & S_IFMT) == S_IFDIR else { return problem(.notDirectory(regularFile: (info.st_mode & S_IFMT) == S_IFREG)) }
                // Asked of the directory itself: a failed stat of the next component would
                // only say that something on the way to it cannot be searched.
                if !isLast, access(prefix, X_OK) != 0 { return problem(.unsearchable(code: errno)) }
                continue
            }
            let failure = errno
            switch failure {
            case ELOOP:
                return problem(.symbolicLinkLoop)
            case ENOENT:
                var linkInfo = stat()
                if lstat(prefix, &linkInfo) == 0 {
                    return problem(.danglingSymbolicLink(target: (try? FileManager.default.destinationOfSymbolicLink(atPath: prefix)) ?? "?"))
                }
                return nil // the rest does not exist yet: it can be created
            case EACCES:
                // Every directory before it can be searched: a symbolic link on the way leads
                // through one that cannot.
                return problem(.unsearchable(code: failure))
            default:
                return problem(.lookupFailed(code: failure))
            }
        }
        return nil
    }

    /// The fault in the state directory's words: `/x/file is a regular file, not a
    /// directory, so /x/file/state cannot be in it`, `/x cannot be searched: permission denied`.
    public var description: String {
        switch kind {
        case .notDirectory(let regularFile):
            let what = regularFile ? "a regular file, not a directory" : "not a directory"
            // The path itself, or a component on the way to it ("X is a regular file, so
            // X cannot be a directory in it" said the first as if it were the second).
            return isPathItself ? "\(component) is \(what)" : "\(component) is \(what), so \(path) cannot be in it"
        case .symbolicLinkLoop:
            return "\(component) is a symbolic link that loops (too many levels of symbolic links)"
        case .danglingSymbolicLink(let target):
            return "\(component) is a symbolic link to \(target), which does not exist"
        case .unsearchable(let code):
            return "\(component) cannot be searched: \(code == EACCES ? "permission denied" : systemErrorText(code))"
        case .lookupFailed(let code):
            return "\(component): \(systemErrorText(code))"
        }
    }
}
