#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import BackgroundTasks
import SchedulerCore

/// Checking a manifest and its executable before `bgtaskd` installs the app, with real
/// files. Each test works in its own temporary directory (mode 0755), so the suite runs in
/// parallel; nothing changes the process's state.
@Suite("App installation", .timeLimit(.minutes(1)))
struct AppInstallationTests {
    static let now = Date(timeIntervalSinceReferenceDate: 725_000_000)

    /// A private directory for one test: 0755, owned by the user running the tests.
    final class Directory {
        let path: String
        init() throws {
            path = FileManager.default.temporaryDirectory.path + "/app-installation-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }

        /// Writes a file with `mode`, creating the directories on the way (0755).
        @discardableResult
        func write(_ name: String, _ contents: String = "#!/bin/sh\nexit 0\n", mode: mode_t = 0o755) throws -> String {
            let file = path + "/" + name
            try FileManager.default.createDirectory(
                atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            try Data(contents.utf8).write(to: URL(fileURLWithPath: file))
            #expect(chmod(file, mode) == 0)
            return file
        }

        /// Writes a JSON manifest naming `executable` (and whatever `extra` adds).
        @discardableResult
        func manifest(_ name: String = "app.json", executable: String?, extra: [String: Any] = [:]) throws -> URL {
            var object: [String: Any] = [
                "CFBundleIdentifier": "com.example.feedreader",
                "BGTaskSchedulerPermittedIdentifiers": ["com.example.feedreader.refresh"],
                "UIBackgroundModes": ["fetch"],
            ]
            if let executable { object["CFBundleExecutable"] = executable }
            object.merge(extra) { $1 }
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            let url = URL(fileURLWithPath: path + "/" + name)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            try data.write(to: url)
            return url
        }
    }

    func refusal(_ url: URL, user: uid_t = getuid()) -> BGAppInstallationError? {
        do {
            let app = try BGAppInstallation.validate(manifestAt: url, now: Self.now, user: user)
            Issue.record("expected a refusal, installed \(app)")
            return nil
        } catch {
            return error
        }
    }

    @Test func relativeExecutableIsResolvedAgainstTheManifestsDirectory() throws {
        let directory = try Directory()
        let executable = try directory.write("bin/feedreader")
        let manifest = try directory.manifest(
            "config/app.json", executable: "../bin/feedreader", extra: ["BGTaskLaunchArguments": ["--background", "-v"]])
        let app = try BGAppInstallation.validate(manifestAt: manifest, now: Self.now)
        let real = try #require(BGAppInstallation.realPath(executable))
        #expect(app.app == AppID("com.example.feedreader"))
        #expect(app.executable == real)
        #expect(app.launchArguments == ["--background", "-v"])
        #expect(app.permittedIdentifiers == ["com.example.feedreader.refresh"])
        #expect(app.backgroundModes == ["fetch"])
        #expect(app.installedAt == Self.now)
        #expect(app.manifestPath == manifest.path)
        #expect(app.manifest.source == manifest.path)
    }

    @Test func manifestPathIsStandardized() throws {
        let directory = try Directory()
        try directory.write("feedreader")
        try directory.manifest(executable: "feedreader")
        let spelled = URL(fileURLWithPath: directory.path + "/./sub/../app.json")
        try FileManager.default.createDirectory(atPath: directory.path + "/sub", withIntermediateDirectories: false)
        let app = try BGAppInstallation.validate(manifestAt: spelled, now: Self.now)
        #expect(app.manifestPath == directory.path + "/app.json")
    }

    @Test func absoluteExecutableIsUsedAsIs() throws {
        let directory = try Directory()
        let elsewhere = try Directory()
        let executable = try elsewhere.write("tool")
        let manifest = try directory.manifest(executable: executable)
        let app = try BGAppInstallation.validate(manifestAt: manifest, now: Self.now)
        #expect(app.executable == BGAppInstallation.realPath(executable))
        // Not relative to the manifest: the same name there does not exist.
        let missing = try directory.manifest("other.json", executable: "/nonexistent-\(UUID().uuidString)/tool")
        let error = try #require(refusal(missing))
        #expect(error.code == .executableMissing)
    }

    @Test func missingExecutableIsNamed() throws {
        let directory = try Directory()
        let manifest = try directory.manifest(executable: "feedreader")
        let error = try #require(refusal(manifest))
        #expect(error.code == .executableMissing)
        #expect(error.file == manifest.path)
        #expect(error.key == "CFBundleExecutable")
        #expect(error.description == "\(manifest.path): CFBundleExecutable: \"feedreader\" names \(directory.path)/feedreader, which does not exist")
    }

    @Test("a regular file where the path needs a directory ('exe/', 'file/exe') is named for what it is, not called missing")
    func aFileInTheWayIsNamed() throws {
        let directory = try Directory()
        try directory.write("feedreader")
        let slash = try directory.manifest(executable: "feedreader/")
        let trailing = try #require(refusal(slash))
        #expect(trailing.code == .executableMissing)
        #expect(trailing.description == "\(slash.path): CFBundleExecutable: \"feedreader/\" names \(directory.path)/feedreader/, but \(directory.path)/feedreader is a regular file, not a directory")
        let inside = try #require(refusal(try directory.manifest("other.json", executable: "feedreader/tool")))
        #expect(inside.message.hasSuffix("names \(directory.path)/feedreader/tool, but \(directory.path)/feedreader is a regular file, not a directory, so \(directory.path)/feedreader/tool cannot be in it"), "\(inside.message)")
    }

    @Test func notExecutableIsRefused() throws {
        let directory = try Directory()
        try directory.write("feedreader", mode: 0o644)
        let error = try #require(refusal(try directory.manifest(executable: "feedreader")))
        #expect(error.code == .executableNotExecutable)
        #expect(error.message.contains("which you may not execute (mode 0644"))
    }

    @Test func symbolicLinkIsRefusedNamingItsTarget() throws {
        let directory = try Directory()
        let real = try directory.write("real-feedreader")
        #expect(symlink(real, directory.path + "/feedreader") == 0)
        let error = try #require(refusal(try directory.manifest(executable: "feedreader")))
        #expect(error.code == .executableIsSymbolicLink)
        #expect(error.message.contains("is a symbolic link to \(real)"))
        #expect(error.message.contains("another program take the app's identity"))
        // A dangling link is a link too, not "missing".
        #expect(symlink("/nonexistent", directory.path + "/dangling") == 0)
        let dangling = try #require(refusal(try directory.manifest("d.json", executable: "dangling")))
        #expect(dangling.code == .executableIsSymbolicLink)
        #expect(dangling.message.contains("/nonexistent"))
    }

    @Test func directoryIsRefused() throws {
        let directory = try Directory()
        try FileManager.default.createDirectory(atPath: directory.path + "/feedreader", withIntermediateDirectories: false)
        let error = try #require(refusal(try directory.manifest(executable: "feedreader")))
        #expect(error.code == .executableNotRegularFile)
        #expect(error.message.contains("which is a directory; expected a regular executable file"))
    }

    @Test func fifoIsRefusedWithoutBeingOpened() throws {
        let directory = try Directory()
        #expect(mkfifo(directory.path + "/feedreader", 0o755) == 0)
        let error = try #require(refusal(try directory.manifest(executable: "feedreader")))
        #expect(error.code == .executableNotRegularFile)
        #expect(error.message.contains("a FIFO"))
    }

    @Test(arguments: [(mode_t(0o775), "its group"), (mode_t(0o757), "every user"), (mode_t(0o777), "every user")])
    func writableByOthersIsRefused(mode: mode_t, who: String) throws {
        let directory = try Directory()
        try directory.write("feedreader", mode: mode)
        let error = try #require(refusal(try directory.manifest(executable: "feedreader")))
        #expect(error.code == .executableReplaceable)
        #expect(error.message.contains("which \(who)"))
        #expect(error.message.contains("mode \(BGAppInstallation.octal(mode))"))
        #expect(error.message.contains("another user could replace it"))
    }

    @Test func ownedByAnotherUserIsRefused() throws {
        let directory = try Directory()
        let file = try directory.write("feedreader")
        let manifest = try directory.manifest(executable: "feedreader")
        let me = getuid()
        if me == 0 {
            // As root: give the file to another user for real.
            #expect(chown(file, 4_321, 4_321) == 0)
            let error = try #require(refusal(manifest))
            #expect(error.code == .executableReplaceable)
            #expect(error.message.contains("owned by uid 4321"))
        } else {
            // Otherwise: the file is ours; install as if we were another user.
            let error = try #require(refusal(manifest, user: me + 1))
            #expect(error.code == .executableReplaceable)
            #expect(error.message.contains("owned by uid \(me)"))
        }
        // Owned by the installing user: fine.
        #expect(chown(file, me, getgid()) == 0)
        _ = try BGAppInstallation.validate(manifestAt: manifest, now: Self.now, user: me)
    }

    @Test func directoryWritableByOthersIsRefusedUnlessSticky() throws {
        let directory = try Directory()
        try directory.write("shared/feedreader")
        let manifest = try directory.manifest(executable: "shared/feedreader")
        #expect(chmod(directory.path + "/shared", 0o777) == 0)
        let error = try #require(refusal(manifest))
        #expect(error.code == .executableReplaceable)
        #expect(error.message.contains("which others may write (mode 0777) without the sticky bit"))
        #expect(chmod(directory.path + "/shared", 0o1777) == 0)
        _ = try BGAppInstallation.validate(manifestAt: manifest, now: Self.now)
    }

    @Test func missingKeysAreNamed() throws {
        let directory = try Directory()
        try directory.write("feedreader")
        let noExecutable = try #require(refusal(try directory.manifest(executable: nil)))
        #expect(noExecutable.code == .missingKey)
        #expect(noExecutable.key == "CFBundleExecutable")

        let noIdentifier = try directory.manifest("n.json", executable: "feedreader", extra: [:])
        var object = try JSONSerialization.jsonObject(with: Data(contentsOf: noIdentifier)) as! [String: Any]
        object["CFBundleIdentifier"] = nil
        try JSONSerialization.data(withJSONObject: object).write(to: noIdentifier)
        let error = try #require(refusal(noIdentifier))
        #expect(error.code == .missingKey)
        #expect(error.key == "CFBundleIdentifier")
        #expect(error.file == noIdentifier.path)
    }

    @Test func manifestErrorsKeepFileKeyAndMessage() throws {
        let directory = try Directory()
        let manifest = try directory.manifest(executable: "feedreader", extra: ["BGTaskLaunchArguments": ["ok", false]])
        let error = try #require(refusal(manifest))
        #expect(error.code == .manifest)
        #expect(error.manifestError?.code == .wrongType)
        #expect(error.description == "\(manifest.path): BGTaskLaunchArguments[1]: expected a string, found a boolean (false)")

        let absent = try #require(refusal(URL(fileURLWithPath: directory.path + "/absent.json")))
        #expect(absent.code == .manifest)
        #expect(absent.manifestError?.code == .unreadable)
        #expect(absent.file == directory.path + "/absent.json")
    }

    @Test func executableInALinkedDirectoryIsStoredByItsRealPath() throws {
        let directory = try Directory()
        let executable = try directory.write("versions/2/feedreader")
        #expect(symlink(directory.path + "/versions/2", directory.path + "/current") == 0)
        let manifest = try directory.manifest(executable: "current/feedreader")
        let app = try BGAppInstallation.validate(manifestAt: manifest, now: Self.now)
        #expect(app.executable == BGAppInstallation.realPath(executable))
        #expect(!app.executable.contains("/current/"))
    }
}
