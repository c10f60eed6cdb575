#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SchedulerCore
internal import FoundationCompat

/// Where the daemon's socket and state live (docs/protocol.md, "Socket paths and
/// permissions"), resolved from an environment passed in explicitly (never read here), and
/// the check that makes the socket's directory private.
public enum DaemonPaths {
    /// The resolved locations.
    public struct Resolved: Hashable, Sendable {
        /// The socket's path.
        public var socketPath: String
        /// The directory holding the socket: it must be private (0700, owned by the user).
        public var socketDirectory: String
        /// The daemon's state directory (its store and lock).
        public var stateDirectory: String
        /// Things the user should know, such as a missing `XDG_RUNTIME_DIR`.
        public var warnings: [String]
    }

    /// Why paths could not be resolved or a directory is unsafe.
    public struct PathError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The path concerned (or the variable, when none could be formed).
        public var path: String
        /// The explanation, naming the path.
        public var message: String

        /// An error from its parts.
        public init(path: String, message: String) {
            self.path = path
            self.message = message
        }

        /// ``message``.
        public var description: String { message }
    }

    /// The name of the daemon's directories (`…/bgtaskd/`).
    public static let directoryName = "bgtaskd"
    /// The socket's file name in its directory.
    public static let socketName = "socket"

    /// Resolves the socket and state paths.
    ///
    /// - Socket: `socketOverride` (`--socket`), else `$XDG_RUNTIME_DIR/bgtaskd/socket`, else
    ///   `/tmp/bgtaskd-<uid>/socket` with a warning (that directory is created and verified
    ///   like any other by ``prepareSocketDirectory(_:uid:)``).
    /// - State: `stateOverride` (`--state-dir`), else `$XDG_STATE_HOME/bgtaskd`, else
    ///   `$HOME/.local/state/bgtaskd`.
    ///
    /// Relative values of the XDG variables are ignored with a warning, as the XDG Base
    /// Directory specification requires; relative overrides are made absolute against
    /// `currentDirectory`.
    ///
    /// - Throws: ``PathError`` when no state directory can be formed (neither
    ///   `XDG_STATE_HOME` nor an absolute `HOME`), or the socket path is too long for a
    ///   socket address (108 bytes).
    public static func resolve(
        environment: [String: String],
        socketOverride: String? = nil,
        stateOverride: String? = nil,
        uid: UInt32,
        currentDirectory: String = FileManager.default.currentDirectoryPath
    ) throws(PathError) -> Resolved {
        var warnings: [String] = []
        let socketPath = try socketPath(environment: environment, socketOverride: socketOverride, uid: uid, currentDirectory: currentDirectory, warnings: &warnings)
        let stateDirectory = try stateDirectory(environment: environment, stateOverride: stateOverride, currentDirectory: currentDirectory, warnings: &warnings)
        return Resolved(
            socketPath: socketPath,
            socketDirectory: (socketPath as NSString).deletingLastPathComponent,
            stateDirectory: stateDirectory,
            warnings: warnings
        )
    }

    /// The socket's path alone (see ``resolve(environment:socketOverride:stateOverride:uid:currentDirectory:)``):
    /// what a client needs to reach the daemon, which does not depend on `HOME`.
    /// Appends its warnings to `warnings`.
    public static func socketPath(
        environment: [String: String],
        socketOverride: String?,
        uid: UInt32,
        currentDirectory: String = FileManager.default.currentDirectoryPath,
        warnings: inout [String]
    ) throws(PathError) -> String {
        let socketPath: String
        if let socketOverride, !socketOverride.isEmpty {
            socketPath = standardized(absolute(socketOverride, in: currentDirectory))
        } else if let runtime = try usable("XDG_RUNTIME_DIR", in: environment, warnings: &warnings) {
            socketPath = standardized(runtime + "/" + directoryName + "/" + socketName)
        } else {
            let directory = "/tmp/\(directoryName)-\(uid)"
            warnings.append("XDG_RUNTIME_DIR is not set; the socket is in \(directory), a private directory created and verified by bgtaskd")
            socketPath = directory + "/" + socketName
        }
        guard socketPath.utf8.count < UnixSocket.pathCapacity else {
            throw PathError(path: socketPath, message: "the socket path \(socketPath) is \(socketPath.utf8.count) bytes, over the limit of \(UnixSocket.pathCapacity - 1) for a Unix socket; choose a shorter one with --socket")
        }
        return socketPath
    }

    /// The state directory alone (see ``resolve(environment:socketOverride:stateOverride:uid:currentDirectory:)``).
    /// Appends its warnings to `warnings`.
    public static func stateDirectory(
        environment: [String: String],
        stateOverride: String?,
        currentDirectory: String = FileManager.default.currentDirectoryPath,
        warnings: inout [String]
    ) throws(PathError) -> String {
        if let stateOverride, !stateOverride.isEmpty {
            return standardized(absolute(stateOverride, in: currentDirectory))
        } else if let stateHome = try usable("XDG_STATE_HOME", in: environment, warnings: &warnings) {
            return standardized(stateHome + "/" + directoryName)
        } else if let home = try usable("HOME", in: environment, warnings: &warnings) {
            return standardized(home + "/.local/state/" + directoryName)
        }
        // bgtaskd takes --state-dir; bgtask needs the directory only to read the store of a
        // daemon that is not running.
        throw PathError(path: "HOME", message: "cannot find a state directory: neither XDG_STATE_HOME nor HOME is set to an absolute path; set one (bgtaskd also takes --state-dir)")
    }

    private static func absolute(_ path: String, in currentDirectory: String) -> String {
        path.hasPrefix("/") ? path : (currentDirectory as NSString).appendingPathComponent(path)
    }

    /// The value of `variable` when it is set to an absolute path; a relative one is ignored
    /// with a warning, as the XDG Base Directory specification requires.
    /// - Throws: ``PathError`` when the process's variable is not valid UTF-8
    ///   (``EnvironmentText``): the path read would name another directory.
    private static func usable(_ variable: String, in environment: [String: String], warnings: inout [String]) throws(PathError) -> String? {
        guard let value = environment[variable], !value.isEmpty else { return nil }
        guard value.hasPrefix("/") else {
            warnings.append("\(variable)=\(value) is not an absolute path; ignored")
            return nil
        }
        if let problem = EnvironmentText.problem(variable: variable, value: value) {
            throw PathError(path: variable, message: problem)
        }
        return value
    }

    /// Makes sure `directory` is fit to hold the socket: creates it with mode 0700 if it is
    /// missing (its parent must exist), then checks with `lstat` that it is a directory (not
    /// a symbolic link), owned by `uid`, with mode exactly 0700.
    ///
    /// A directory that fails is refused, not repaired: another user could have created it
    /// in a shared place such as `/tmp` to watch or intercept the socket.
    ///
    /// - Throws: ``PathError`` naming the path and, for a refusal, its kind, owner and mode.
    public static func prepareSocketDirectory(_ directory: String, uid: UInt32 = getuid()) throws(PathError) {
        if mkdir(directory, 0o700) == 0 {
            // The umask may have removed bits; it cannot have added any.
            chmod(directory, 0o700)
        } else if errno != EEXIST {
            let code = errno
            if code == EACCES, let unreachable = unreachable(directory) { throw unreachable }
            throw PathError(path: directory, message: "cannot create the socket directory \(directory): \(systemErrorText(code))")
        }
        var info = stat()
        guard lstat(directory, &info) == 0 else {
            let code = errno
            if code == EACCES, let unreachable = unreachable(directory) { throw unreachable }
            throw PathError(path: directory, message: "cannot check the socket directory \(directory): \(systemErrorText(code))")
        }
        let mode = info.st_mode & 0o7777
        let describe = "owner uid \(info.st_uid), mode \(String(mode, radix: 8, uppercase: false).leftPadded(to: 4))"
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw PathError(path: directory, message: "refusing the socket directory \(directory): it is \(FileKind(mode: info.st_mode)), not a directory (\(describe)); remove it or choose another with --socket")
        }
        guard info.st_uid == uid else {
            throw PathError(path: directory, message: "refusing the socket directory \(directory): it belongs to uid \(info.st_uid), not to uid \(uid) (\(describe)); another user may have created it")
        }
        guard mode == 0o700 else {
            throw PathError(path: directory, message: "refusing the socket directory \(directory): its mode is \(String(mode, radix: 8).leftPadded(to: 4)), not 0700 (\(describe)); run chmod 700 on it if it is yours")
        }
    }

    /// The socket directory cannot be reached: a directory on the way to it may not be
    /// searched by this user (`EACCES` from `mkdir` or `lstat` said only "Permission
    /// denied", as if the directory could not be created, though it may exist), found by
    /// the walk the state directory is checked with (``DirectoryProblem``). `nil` when every
    /// directory on the way can be searched (the parent is then not writable).
    private static func unreachable(_ directory: String) -> PathError? {
        guard let problem = DirectoryProblem.find(in: directory), case .unsearchable(let code) = problem.kind else { return nil }
        return PathError(path: directory, message: "cannot reach the socket directory \(directory): \(problem.component) cannot be searched by uid \(getuid()) (\(systemErrorText(code))); give this user search permission on it, or choose another --socket")
    }

    /// `path` without `.`/`..` components or repeated slashes (lexically: no symbolic link
    /// is followed).
    static func standardized(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == ".." { if !parts.isEmpty { parts.removeLast() }; continue }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }
}

extension String {
    /// Left-padded with zeros to `width` characters (`700` -> `0700`).
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
