#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SchedulerCore
import SchedulerStore

/// Why an app cannot be installed with `bgtaskd`: its manifest cannot be used, or its
/// executable is missing, a symbolic link, not a regular file, not executable, or could be
/// replaced by another user. Every error names the manifest file and the key, and says what
/// was expected and what was found (docs/manifest.md lists them).
public struct BGAppInstallationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The category of an installation error; a struct of constants so that categories can
    /// be added without breaking callers.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The category's stable name, for example `executable-missing`.
        public let rawValue: String
        /// Wraps a category name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The manifest could not be read or parsed (``BGAppInstallationError/manifestError``
        /// says how).
        public static let manifest = Code(rawValue: "manifest")
        /// A key the daemon needs is absent: `CFBundleIdentifier` or `CFBundleExecutable`.
        public static let missingKey = Code(rawValue: "missing-key")
        /// `CFBundleExecutable` names nothing.
        public static let executableMissing = Code(rawValue: "executable-missing")
        /// `CFBundleExecutable` names a symbolic link: the daemon would launch the link's
        /// target, and whoever can change the link could make another program take the
        /// app's identity.
        public static let executableIsSymbolicLink = Code(rawValue: "executable-symbolic-link")
        /// `CFBundleExecutable` names a directory, a FIFO, a device...
        public static let executableNotRegularFile = Code(rawValue: "executable-not-regular-file")
        /// The current user may not execute the file.
        public static let executableNotExecutable = Code(rawValue: "executable-not-executable")
        /// Another user could replace the executable: it is owned by someone other than the
        /// current user or root, writable by its group or others, or in a directory others
        /// may write without the sticky bit.
        public static let executableReplaceable = Code(rawValue: "executable-replaceable")
        /// The file could not be examined (for example a directory on the way cannot be
        /// searched).
        public static let executableUnreadable = Code(rawValue: "executable-unreadable")

        /// The category's name, as in logs.
        public var description: String { rawValue }
    }

    /// The category.
    public var code: Code
    /// The manifest's path.
    public var file: String
    /// The key concerned (`CFBundleExecutable`...), or `nil` for the whole file.
    public var key: String?
    /// What was expected and what was found.
    public var message: String
    /// For ``Code/manifest``: the loader's error, as `AppManifest.load(contentsOf:)` threw it.
    public var manifestError: ManifestError?

    /// Creates an error.
    public init(code: Code, file: String, key: String? = nil, message: String, manifestError: ManifestError? = nil) {
        self.code = code
        self.file = file
        self.key = key
        self.message = message
        self.manifestError = manifestError
    }

    /// An error for a manifest the loader refused, keeping its file, key and message.
    init(_ error: ManifestError) {
        self.init(code: .manifest, file: error.file, key: error.key, message: error.message, manifestError: error)
    }

    /// `<file>: <key>: <message>` (or `<file>: <message>`), the shape of ``ManifestError``.
    public var description: String {
        if let key { return "\(file): \(key): \(message)" }
        return "\(file): \(message)"
    }
}

/// Checking an app's manifest and executable before `bgtaskd` installs it: the file shell
/// around ``AppManifest`` for the daemon (docs/manifest.md).
///
/// The executable is what the daemon launches and what it recognises an app's connection
/// by (`/proc/<pid>/exe` of the peer must be this file), so it must be a file only the
/// user (or root) can change: a symbolic link, a group-writable file or a file in a
/// directory others may write could make another program take the app's identity.
public enum BGAppInstallation {
    /// Loads the manifest at `url` and checks what the daemon needs, returning the app to
    /// install (installed at `now`).
    ///
    /// - The manifest goes through ``AppManifest/load(contentsOf:)`` (a regular file of at
    ///   most 1 MiB, strict JSON or property list, every key's type checked).
    /// - `CFBundleIdentifier` is required (a valid reverse-DNS identifier), and
    ///   `CFBundleExecutable`.
    /// - The executable is resolved against the manifest's directory (an absolute
    ///   `CFBundleExecutable` is used as is) and examined with `lstat`: it must exist, must
    ///   not be a symbolic link, must be a regular file the current user may execute, owned
    ///   by the current user or root and not writable by its group or others, in a directory
    ///   owned by the user or root that others cannot write (unless it has the sticky bit).
    ///
    /// - Returns: the app, with the manifest's absolute standardized path and the real
    ///   absolute path of the executable (symbolic links of the directories resolved).
    /// - Throws: ``BGAppInstallationError`` naming the manifest file and the key.
    public static func validate(manifestAt url: URL, now: Date) throws(BGAppInstallationError) -> InstalledApp {
        try validate(manifestAt: url, now: now, user: getuid())
    }

    /// ``validate(manifestAt:now:)`` for `user` as the installing user (tests check the
    /// ownership rule without a second account).
    static func validate(manifestAt url: URL, now: Date, user: uid_t) throws(BGAppInstallationError) -> InstalledApp {
        guard url.isFileURL else {
            throw BGAppInstallationError(
                code: .manifest, file: url.absoluteString,
                message: "expected a file URL, found a \(url.scheme ?? "schemeless") URL")
        }
        let manifestURL = url.absoluteURL.standardizedFileURL
        let manifestPath = manifestURL.path
        let manifest: AppManifest
        do {
            manifest = try AppManifest.load(contentsOf: manifestURL)
            try manifest.checkBackgroundModeSpelling()
        } catch {
            throw BGAppInstallationError(error)
        }
        guard let app = manifest.appID else {
            throw BGAppInstallationError(
                code: .missingKey, file: manifestPath, key: AppManifest.Key.bundleIdentifier,
                message: "expected the app's reverse-DNS identifier (a string), found no such key; bgtaskd names the app by it")
        }
        guard let name = manifest.executableName else {
            throw BGAppInstallationError(
                code: .missingKey, file: manifestPath, key: AppManifest.Key.executable,
                message: "expected the path of the app's executable (a string, relative to the manifest's directory or absolute), found no such key; bgtaskd launches the app by it")
        }
        let directory = manifestURL.deletingLastPathComponent().path
        let candidate = name.hasPrefix("/") ? name : (directory.hasSuffix("/") ? directory : directory + "/") + name
        let executable = try checkExecutable(candidate, name: name, manifest: manifestPath, user: user)
        return InstalledApp(
            app: app,
            manifestPath: manifestPath,
            executable: executable,
            launchArguments: manifest.launchArguments,
            permittedIdentifiers: manifest.permittedIdentifiers,
            backgroundModes: manifest.backgroundModes,
            installedAt: now
        )
    }

    /// Examines the file at `path` (what `CFBundleExecutable` `name` names) and returns its
    /// real absolute path.
    private static func checkExecutable(_ path: String, name: String, manifest: String, user: uid_t) throws(BGAppInstallationError) -> String {
        func fail(_ code: BGAppInstallationError.Code, _ message: String) -> BGAppInstallationError {
            BGAppInstallationError(code: code, file: manifest, key: AppManifest.Key.executable, message: message)
        }
        let names = "\"\(name)\" names \(path)"
        var info = stat()
        if lstat(path, &info) != 0 {
            let code = errno
            // A regular file where the path needs a directory ("exe/", "file/exe") is there
            // to see: named for what it is, not called missing.
            if code == ENOTDIR, let problem = DirectoryProblem.find(in: path) {
                throw fail(.executableMissing, "\(names), but \(problem)")
            }
            if code == ENOENT || code == ENOTDIR {
                throw fail(.executableMissing, "\(names), which does not exist")
            }
            throw fail(.executableUnreadable, "\(names), which cannot be examined (\(systemErrorText(code)))")
        }
        if info.st_mode & S_IFMT == S_IFLNK {
            let target = linkTarget(path) ?? "a target that cannot be read"
            throw fail(
                .executableIsSymbolicLink,
                "\(names), which is a symbolic link to \(target); expected the real file: whoever can change a link can make another program take the app's identity, so name the file itself")
        }
        if let what = BoundedFile.nonRegularKind(info.st_mode) {
            throw fail(.executableNotRegularFile, "\(names), which is \(what); expected a regular executable file")
        }
        if access(path, X_OK) != 0 {
            throw fail(
                .executableNotExecutable,
                "\(names), which you may not execute (mode \(octal(info.st_mode)), owner uid \(info.st_uid)); expected an executable file (chmod u+x)")
        }
        if info.st_uid != user && info.st_uid != 0 {
            throw fail(
                .executableReplaceable,
                "\(names), which is owned by uid \(info.st_uid); expected a file owned by you (uid \(user)) or root, since its owner could replace it with another program")
        }
        if info.st_mode & (S_IWGRP | S_IWOTH) != 0 {
            let who = info.st_mode & S_IWOTH != 0 ? "every user" : "its group (gid \(info.st_gid))"
            throw fail(
                .executableReplaceable,
                "\(names), which \(who) may write (mode \(octal(info.st_mode)), owner uid \(info.st_uid)); expected a file only its owner may write (chmod go-w), since another user could replace it with another program")
        }
        guard let real = realPath(path) else {
            throw fail(.executableUnreadable, "\(names), whose real path cannot be resolved (\(systemErrorText(errno)))")
        }
        // A file only its owner may write is still replaced by renaming another file over
        // it, which whoever may write its directory can do (unless the sticky bit stops
        // them renaming files they do not own, as in /tmp).
        let parent = (real as NSString).deletingLastPathComponent
        var directory = stat()
        if stat(parent, &directory) == 0 {
            if directory.st_uid != user && directory.st_uid != 0 {
                throw fail(
                    .executableReplaceable,
                    "\(names), in the directory \(parent) owned by uid \(directory.st_uid); expected a directory owned by you (uid \(user)) or root, since its owner could replace the file")
            }
            if directory.st_mode & (S_IWGRP | S_IWOTH) != 0 && directory.st_mode & S_ISVTX == 0 {
                throw fail(
                    .executableReplaceable,
                    "\(names), in the directory \(parent) which others may write (mode \(octal(directory.st_mode))) without the sticky bit; expected a directory only its owner may write, since another user could replace the file")
            }
        }
        return real
    }

    /// The target of the symbolic link at `path`, as stored in the link.
    static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `realpath(3)`: the absolute path with every symbolic link and `.`/`..` resolved.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The permission bits as `ls` and `chmod` write them, for example `0755`.
    static func octal(_ mode: mode_t) -> String {
        let digits = String(UInt32(mode) & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
