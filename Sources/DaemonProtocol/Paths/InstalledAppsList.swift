#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SchedulerCore

/// The apps installed with bgtaskd, kept by it beside its socket (`<socket>.installed`, one
/// app identifier per line) and left there when it stops, so that an app whose hello no
/// daemon answers (none running, one stopped or busy, or at its connection limit) can still
/// tell whether it is the daemon's:
/// an installed app then waits for the daemon instead of running a scheduler of its own whose
/// acknowledged submits the daemon would never see (docs/daemon.md, "The app side").
///
/// The store is the truth; this is its published copy. bgtaskd writes it whole (a temporary
/// file renamed over it) when it starts and after every install and uninstall; a daemon that
/// crashed between a store's commit and the write leaves it a step behind until its next start.
public enum InstalledAppsList {
    /// The list's path for the socket at `socketPath`.
    public static func path(forSocket socketPath: String) -> String { socketPath + ".installed" }

    /// The most a list may hold: 65,536 identifiers of the longest kind.
    static let byteLimit = 65_536 * (TaskIdentifierRules.maximumLength + 1)

    /// Writes `apps` as the list beside `socketPath`, replacing it in one rename (readable
    /// by the user alone, as the socket's directory is).
    public static func write(_ apps: some Sequence<AppID>, socketPath: String) throws {
        let text = apps.map(\.rawValue).sorted().map { $0 + "\n" }.joined()
        let url = URL(fileURLWithPath: path(forSocket: socketPath))
        try Data(text.utf8).write(to: url, options: .atomic)
        _ = chmod(url.path, 0o600)
    }

    /// Whether the list beside `socketPath` names `app`; `nil` when there is no list (no
    /// daemon has run there, or an older one) or it cannot be read (not a regular file, too
    /// large), or another user owns it or the directory it is in, or it is a symbolic link (a
    /// socket's directory under a shared one such as `/tmp` could be made by another user,
    /// who could point a link at a file of this user's naming the app: only the user's own
    /// daemon speaks for the user's apps): then nothing is known.
    public static func lists(_ app: AppID, socketPath: String, uid: uid_t = getuid()) -> Bool? {
        let listPath = path(forSocket: socketPath)
        var link = stat()
        guard lstat(listPath, &link) == 0, link.st_mode & S_IFMT != S_IFLNK else { return nil }
        var directory = stat()
        guard stat((listPath as NSString).deletingLastPathComponent, &directory) == 0, directory.st_uid == uid else { return nil }
        guard let bytes = try? BoundedFile.read(path: listPath, limit: byteLimit, owner: uid) else { return nil }
        let wanted = Array(app.rawValue.utf8)
        return bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).contains { $0.elementsEqual(wanted) }
    }
}
