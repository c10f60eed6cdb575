@testable import BackgroundTasks
@testable import FoundationCompat
import Foundation
import Testing

/// App-group containers and the directory URLs iOS 16 code takes from Foundation.
@Suite struct FoundationAdditionsTests {
    func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-groups-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func anAppGroupsContainerIsMadeUnderTheDataHomeAndShared() throws {
        let base = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: base) }
        let environment = ["XDG_DATA_HOME": base.path, "HOME": "/nonexistent"]
        let url = try #require(AppGroupContainer.url(for: "group.com.example.feed", environment: environment, fileManager: .default))
        #expect(url.path == base.appendingPathComponent("bgtask/app-groups/group.com.example.feed").path)
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue)
        let permissions = try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int
        #expect(permissions == 0o700)
        // A second process of the group finds the same directory and what the first wrote.
        try Data("cache".utf8).write(to: url.appendingPathComponent("feed.json"))
        let again = try #require(AppGroupContainer.url(for: "group.com.example.feed", environment: environment, fileManager: .default))
        #expect(try Data(contentsOf: again.appendingPathComponent("feed.json")) == Data("cache".utf8))
    }

    @Test func withoutADataHomeTheHomeDirectorySays() throws {
        let base = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: base) }
        let url = AppGroupContainer.url(for: "group.a", environment: ["HOME": base.path, "XDG_DATA_HOME": "relative/ignored"], fileManager: .default)
        #expect(url?.path == base.appendingPathComponent(".local/share/bgtask/app-groups/group.a").path)
        #expect(AppGroupContainer.url(for: "group.a", environment: [:], fileManager: .default) == nil)
    }

    @Test(arguments: ["", ".", "..", "group/../../etc", "group.a/b", "group a", "grüppe", "group\u{0}", String(repeating: "g", count: 256)])
    func anIdentifierThatCannotNameADirectoryHasNoContainer(identifier: String) throws {
        let base = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: base) }
        #expect(AppGroupContainer.url(for: identifier, environment: ["XDG_DATA_HOME": base.path], fileManager: .default) == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: base.path).isEmpty, "nothing was made")
    }

    @Test func aDataHomeThatCannotHoldDirectoriesGivesNil() throws {
        let base = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: base) }
        let file = base.appendingPathComponent("plain-file")
        try Data().write(to: file)
        #expect(AppGroupContainer.url(for: "group.a", environment: ["XDG_DATA_HOME": file.path], fileManager: .default) == nil)
    }

    @Test func theDirectoryURLsAreFoundationsOwnPlaces() {
        // Linux's Foundation: ~/Documents, ~/Downloads... under the home directory, directories.
        let home = FileManager.default.homeDirectoryForCurrentUser.standardizedFileURL.path
        for (url, name) in [(URL.documentsDirectory, "Documents"), (URL.downloadsDirectory, "Downloads"),
                            (URL.musicDirectory, "Music"), (URL.picturesDirectory, "Pictures")] {
            #expect(url.standardizedFileURL.path == home + "/" + name, "\(url)")
            #expect(url.hasDirectoryPath)
        }
        #expect(URL.cachesDirectory.isFileURL && URL.applicationSupportDirectory.isFileURL)
        #expect(!ProcessInfo.processInfo.isiOSAppOnMac && !ProcessInfo.processInfo.isMacCatalystApp)
    }
}
