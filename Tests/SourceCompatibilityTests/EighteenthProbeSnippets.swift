// Shapes an eighteenth outside compile probe found in public apps (written here in their shape,
// not copied), in Swift 6 mode with warnings as errors, and what they do here.
import Foundation
import Testing
import UserNotifications

/// A music app's notification with an attachment: the artwork written to a file in the
/// temporary directory, whose URL it makes with `NSURL.fileURL(withPath:isDirectory:)`.
enum ArtworkAttachment {
    static func make(identifier: String, artwork: Data) throws -> UNNotificationAttachment {
        let temporaryDirectory = NSURL.fileURL(withPath: NSTemporaryDirectory(), isDirectory: true)
        let file = temporaryDirectory.appendingPathComponent("\(identifier).png")
        try artwork.write(to: file)
        return try UNNotificationAttachment(identifier: identifier, url: file, options: nil)
    }
}

@Suite struct EighteenthProbeFileURLTests {
    @Test func anAttachmentsFileIsWrittenWhereTheURLMadeFromItsPathSays() throws {
        let identifier = "artwork-\(UUID().uuidString)"
        let attachment = try ArtworkAttachment.make(identifier: identifier, artwork: Data([0x89, 0x50, 0x4E, 0x47]))
        defer { try? FileManager.default.removeItem(at: attachment.url) }
        #expect(attachment.url.path == URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("\(identifier).png").path)
        #expect(try Data(contentsOf: attachment.url) == Data([0x89, 0x50, 0x4E, 0x47]))
    }

    @Test func theFourFormsAreURLsInitializers() throws {
        let directory = NSURL.fileURL(withPath: "/var/tmp", isDirectory: true)
        #expect(directory.isFileURL && directory.hasDirectoryPath && directory.path == "/var/tmp")
        #expect(!NSURL.fileURL(withPath: "/var/tmp/a.png", isDirectory: false).hasDirectoryPath)
        // A relative path is resolved against the current directory, as URL(fileURLWithPath:).
        let relative = NSURL.fileURL(withPath: "cache.db")
        #expect(relative.path == FileManager.default.currentDirectoryPath + "/cache.db")
        let base = URL(fileURLWithPath: "/srv/app/", isDirectory: true)
        #expect(NSURL.fileURL(withPath: "data/feed.json", relativeTo: base).path == "/srv/app/data/feed.json")
        let nested = NSURL.fileURL(withPath: "data", isDirectory: true, relativeTo: base)
        #expect(nested.hasDirectoryPath && nested.path == "/srv/app/data")
    }
}
