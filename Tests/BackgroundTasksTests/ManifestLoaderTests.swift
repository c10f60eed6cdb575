#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import BackgroundTasks
import SchedulerCore

/// The file-reading shell around `AppManifest.parse`. Each test works in its own temporary
/// directory, so the suite runs in parallel.
@Suite("Manifest loader", .timeLimit(.minutes(1)))
struct ManifestLoaderTests {
    /// A fresh directory for one test, removed by the caller.
    func makeDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("manifest-loader-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func loadsAFileAndNamesItAsTheSource() throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("Info.plist")
        let plist: [String: Any] = [
            "BGTaskSchedulerPermittedIdentifiers": ["com.example.app.refresh"],
            "UIBackgroundModes": ["fetch"],
        ]
        try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0).write(to: file)

        let manifest = try AppManifest.load(contentsOf: file)
        #expect(manifest.permittedIdentifiers == ["com.example.app.refresh"])
        #expect(manifest.hasBackgroundMode("fetch"))
        #expect(manifest.source == file.path)
    }

    @Test func missingFileIsUnreadableNamingThePath() throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("absent.plist")
        let error = try #require(throws: ManifestError.self) { try AppManifest.load(contentsOf: file) }
        #expect(error.code == .unreadable)
        #expect(error.file == file.path)
        #expect(error.key == nil)
        #expect(error.message.contains("no such file"))
        #expect(error.description.hasPrefix(file.path + ": "))
    }

    @Test func directoryIsUnreadableNamingThePath() throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let error = try #require(throws: ManifestError.self) { try AppManifest.load(contentsOf: directory) }
        #expect(error.code == .unreadable)
        #expect(error.file == directory.path)
        #expect(error.message.contains("directory"))
    }

    @Test func parseErrorsNameTheFile() throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("app.json")
        try Data(#"{"UIBackgroundModes": "fetch"}"#.utf8).write(to: file)
        let error = try #require(throws: ManifestError.self) { try AppManifest.load(contentsOf: file) }
        #expect(error.code == .wrongType)
        #expect(error.file == file.path)
        #expect(error.key == "UIBackgroundModes")
    }

    @Test func nonFileURLIsUnreadable() throws {
        let url = try #require(URL(string: "https://example.com/Info.plist"))
        let error = try #require(throws: ManifestError.self) { try AppManifest.load(contentsOf: url) }
        #expect(error.code == .unreadable)
        #expect(error.file == "https://example.com/Info.plist")
    }

    /// What `load` says when the path is not a manifest file: what it is, never a wait.
    private func loadError(_ path: String) throws -> ManifestError {
        try #require(throws: ManifestError.self) { try AppManifest.load(contentsOf: URL(fileURLWithPath: path)) }
    }

    @Test func aFIFOIsNamedAndNeverWaitedOn() throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("Info.plist").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let error = try loadError(fifo)
        #expect(error.code == .unreadable)
        #expect(error.message == "expected a manifest file, found a FIFO (named pipe)")
    }

    @Test func aDeviceIsNamedNotCalledAPermissionProblem() throws {
        let error = try loadError("/dev/null")
        #expect(error.message == "expected a manifest file, found a character device")
    }

    @Test func aSymbolicLinkLoopIsNamed() throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let loop = directory.appendingPathComponent("Info.plist")
        try FileManager.default.createSymbolicLink(atPath: loop.path, withDestinationPath: loop.path)
        let error = try loadError(loop.path)
        #expect(error.message.contains("symbolic link loop"), "\(error)")
    }

    @Test func anOversizedFileIsRefusedWithTheLimit() throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("Info.json")
        try Data(repeating: 0x20, count: AppManifest.maximumSize + 1).write(to: file)
        let error = try loadError(file.path)
        #expect(error.message.contains("at most 1 MiB, found a file of \(AppManifest.maximumSize + 1) bytes"), "\(error)")
    }

    @Test func aDuplicateKeyInAFileIsRefusedNamingTheFileAndKey() throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("app.bgtask.json")
        try Data(#"{"CFBundleIdentifier": "com.a", "CFBundleIdentifier": "com.b"}"#.utf8).write(to: file)
        let error = try loadError(file.path)
        #expect(error.description.hasPrefix("\(file.path): CFBundleIdentifier: duplicate key"), "\(error)")
    }
}
