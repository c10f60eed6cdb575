// UIImage as the code beside background work uses it (outside compile probes: a podcast
// player's and a music player's notification artwork, a task app's placeholder), in Swift 6
// mode with warnings as errors, and what it does here.
import Foundation
import Glibc
import SchedulerCore
import SwiftUI
import Testing
import UIKit
import UserNotifications

/// A podcast player's shape: the episode's artwork, downloaded, becomes a notification
/// attachment written as JPEG when it can be, else PNG.
enum EpisodeArtwork {
    static func attachment(for artwork: Data, identifier: String, in directory: URL) throws -> UNNotificationAttachment? {
        guard let image = UIImage(data: artwork) else { return nil }
        let encoded = image.jpegData(compressionQuality: 0.8).map { ($0, "jpg") } ?? image.pngData().map { ($0, "png") }
        guard let (bytes, fileExtension) = encoded else { return nil }
        let file = directory.appendingPathComponent("\(identifier).\(fileExtension)")
        try bytes.write(to: file, options: .atomic)
        return try UNNotificationAttachment(identifier: identifier, url: file, options: nil)
    }
}

/// Headers of each format, of the size given, and enough after them to be taken.
enum ImageBytes {
    static func png(width: UInt32, height: UInt32) -> Data {
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
        bytes += bigEndian(width) + bigEndian(height) + [8, 6, 0, 0, 0, 0, 0, 0, 0]
        return Data(bytes)
    }

    static func jpeg(width: UInt16, height: UInt16) -> Data {
        // SOI, an APP0 segment of 16 bytes, then a baseline frame: length, precision, height, width.
        var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0]
        bytes += [0xFF, 0xC0, 0x00, 0x11, 0x08] + bigEndian16(height) + bigEndian16(width) + [3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]
        return Data(bytes)
    }

    static func gif(width: UInt16, height: UInt16) -> Data {
        // The logical screen (no global colour table), then an image descriptor.
        Data(Array("GIF89a".utf8) + [UInt8(width & 0xFF), UInt8(width >> 8), UInt8(height & 0xFF), UInt8(height >> 8), 0, 0, 0, 0x2C])
    }

    static func webpLossy(width: UInt16, height: UInt16) -> Data {
        var bytes = Array("RIFF".utf8) + [30, 0, 0, 0] + Array("WEBP".utf8) + Array("VP8 ".utf8) + [10, 0, 0, 0]
        bytes += [0x50, 0x01, 0x00, 0x9D, 0x01, 0x2A, UInt8(width & 0xFF), UInt8(width >> 8), UInt8(height & 0xFF), UInt8(height >> 8)]
        return Data(bytes)
    }

    static func webpLossless(width: Int, height: Int) -> Data {
        let bits = UInt32(width - 1) | UInt32(height - 1) << 14
        var bytes = Array("RIFF".utf8) + [30, 0, 0, 0] + Array("WEBP".utf8) + Array("VP8L".utf8) + [10, 0, 0, 0, 0x2F]
        bytes += [0, 8, 16, 24].map { UInt8((bits >> $0) & 0xFF) } + [0, 0, 0, 0, 0]
        return Data(bytes)
    }

    static func bmpCore(width: UInt16, height: UInt16) -> Data {
        Data([0x42, 0x4D] + [UInt8](repeating: 0, count: 12) + [12, 0, 0, 0]
             + [UInt8(width & 0xFF), UInt8(width >> 8), UInt8(height & 0xFF), UInt8(height >> 8), 1, 0, 24, 0, 0, 0])
    }

    /// A JPEG whose frame comes after fill bytes, a restart marker and a Huffman table
    /// (C4, in the frames' range but no frame).
    static func jpegAfterTables(width: UInt16, height: UInt16) -> Data {
        var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xFF, 0xD0, 0xFF, 0xC4, 0x00, 0x05, 0, 0, 0]
        bytes += [0xFF, 0xC2, 0x00, 0x11, 0x08] + bigEndian16(height) + bigEndian16(width) + [3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]
        return Data(bytes)
    }

    static func webpExtended(width: Int, height: Int) -> Data {
        var bytes = Array("RIFF".utf8) + [30, 0, 0, 0] + Array("WEBP".utf8) + Array("VP8X".utf8) + [10, 0, 0, 0, 0, 0, 0, 0]
        bytes += [UInt8((width - 1) & 0xFF), UInt8(((width - 1) >> 8) & 0xFF), UInt8((width - 1) >> 16),
                  UInt8((height - 1) & 0xFF), UInt8(((height - 1) >> 8) & 0xFF), UInt8((height - 1) >> 16)]
        return Data(bytes)
    }

    static func bmp(width: Int32, height: Int32) -> Data {
        var bytes: [UInt8] = [0x42, 0x4D] + [UInt8](repeating: 0, count: 12) + [40, 0, 0, 0]
        bytes += littleEndian(UInt32(bitPattern: width)) + littleEndian(UInt32(bitPattern: height)) + [1, 0, 32, 0]
        return Data(bytes)
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8((value >> $0) & 0xFF) } }
    private static func bigEndian16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
    private static func littleEndian(_ value: UInt32) -> [UInt8] { [0, 8, 16, 24].map { UInt8((value >> $0) & 0xFF) } }
}

@Suite struct ImageTests {
    @Test func downloadedArtworkBecomesAnAttachmentOfItsOwnBytes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("artwork-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let jpeg = ImageBytes.jpeg(width: 600, height: 400)
        let attachment = try #require(try EpisodeArtwork.attachment(for: jpeg, identifier: "episode-1", in: directory))
        #expect(try Data(contentsOf: attachment.url) == jpeg)
        let png = ImageBytes.png(width: 64, height: 64)
        let second = try #require(try EpisodeArtwork.attachment(for: png, identifier: "episode-2", in: directory))
        #expect(try Data(contentsOf: second.url) == png, "a PNG is not re-encoded as JPEG: its own bytes")
        #expect(try EpisodeArtwork.attachment(for: Data("<html>not found</html>".utf8), identifier: "e3", in: directory) == nil)
    }

    @Test func eachFormatsHeaderGivesTheSizeInPixels() throws {
        let cases: [(Data, CGFloat, CGFloat)] = [
            (ImageBytes.png(width: 1024, height: 768), 1024, 768),
            (ImageBytes.jpeg(width: 1920, height: 1080), 1920, 1080),
            (ImageBytes.gif(width: 320, height: 200), 320, 200),
            (ImageBytes.webpExtended(width: 5000, height: 70_000), 5000, 70_000),
            (ImageBytes.bmp(width: 16, height: -9), 16, 9),
            (ImageBytes.webpLossy(width: 400, height: 300), 400, 300),
            (ImageBytes.webpLossless(width: 16_384, height: 2), 16_384, 2),
            (ImageBytes.bmpCore(width: 7, height: 5), 7, 5),
            (ImageBytes.jpegAfterTables(width: 33, height: 44), 33, 44),
        ]
        for (bytes, width, height) in cases {
            let image = try #require(UIImage(data: bytes))
            #expect(image.size == CGSize(width: width, height: height))
            #expect(image.scale == 1 && image.imageOrientation == .up)
        }
        let retina = try #require(UIImage(data: ImageBytes.png(width: 300, height: 150), scale: 3))
        #expect(retina.size == CGSize(width: 100, height: 50))
        #expect(UIImage(data: ImageBytes.png(width: 30, height: 15), scale: .nan)?.scale == 1)
        let gif = try #require(UIImage(data: ImageBytes.gif(width: 20, height: 20)))
        #expect(gif.pngData() == nil && gif.jpegData(compressionQuality: 1) == nil, "nothing is re-encoded")
    }

    @Test func bytesCutShortOrMadeUpAreNoImage() {
        // The shortest prefix of each that is taken: its header's last byte read.
        let whole: [(Data, Int)] = [
            (ImageBytes.png(width: 8, height: 8), 24), (ImageBytes.jpeg(width: 8, height: 8), 29),
            (ImageBytes.jpegAfterTables(width: 8, height: 8), 21), (ImageBytes.gif(width: 8, height: 8), 14),
            (ImageBytes.webpExtended(width: 8, height: 8), 30), (ImageBytes.webpLossy(width: 8, height: 8), 30),
            (ImageBytes.webpLossless(width: 8, height: 8), 30), (ImageBytes.bmp(width: 8, height: 8), 28),
            (ImageBytes.bmpCore(width: 8, height: 8), 28),
        ]
        for (bytes, shortest) in whole {
            // Every prefix: no image below the header's length, the image from it on; never a trap.
            for count in 0...bytes.count {
                #expect((UIImage(data: bytes.prefix(count)) != nil) == (count >= shortest), "\(count) of \(bytes.count) bytes: \(Array(bytes))")
            }
        }
        #expect(UIImage(data: ImageBytes.png(width: 0, height: 8)) == nil, "no size above zero")
        #expect(UIImage(data: ImageBytes.png(width: UInt32(Int32.max) + 1, height: 8)) == nil, "PNG's limit is 2^31 - 1")
        #expect(UIImage(data: ImageBytes.png(width: UInt32(Int32.max), height: 8)) != nil)
        // A frame segment too short to hold a size: its "size" would be the next marker's bytes.
        #expect(UIImage(data: Data([0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x02, 0xFF, 0xD9, 0x05, 0x00, 0xD9, 0x00, 0x00])) == nil)
        // Noise from a fixed seed (a failure reproduces), alone and after each signature.
        var generator = SeededRandom(seed: 0x5EED)
        let signatures: [[UInt8]] = [[], [0xFF, 0xD8], [0xFF, 0xD8, 0xFF], Array("GIF89a".utf8), [0x42, 0x4D], Array("RIFF".utf8),
                                     [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]]
        for round in 0..<4_000 {
            var noise = [UInt8](repeating: 0, count: Int.random(in: 0..<96, using: &generator))
            for index in noise.indices { noise[index] = UInt8.random(in: 0...255, using: &generator) }
            _ = UIImage(data: Data(signatures[round % signatures.count] + noise))
        }
        // A JPEG whose segment lengths run past the end; bytes that only start like a BMP or a GIF.
        #expect(UIImage(data: Data([0xFF, 0xD8, 0xFF, 0xE0, 0xFF, 0xFF, 0x00])) == nil)
        #expect(UIImage(data: Data([0x42, 0x4D] + [UInt8](repeating: 0x41, count: 40))) == nil, "no BMP header size")
        #expect(UIImage(data: Data(Array("GIF89a".utf8) + [1, 0, 1, 0, 0, 0, 0, 0x41, 0x41])) == nil, "no block after the screen")
    }

    @Test func aNamedImageIsReadFromTheBundlesFileForTheScreensScale() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bundle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try ImageBytes.png(width: 40, height: 40).write(to: directory.appendingPathComponent("placeholder.png"))
        try ImageBytes.png(width: 80, height: 80).write(to: directory.appendingPathComponent("placeholder@2x.png"))
        try ImageBytes.png(width: 120, height: 120).write(to: directory.appendingPathComponent("icon@3x.png"))
        try ImageBytes.png(width: 80, height: 80).write(to: directory.appendingPathComponent("icon@2x.png"))
        try ImageBytes.jpeg(width: 90, height: 30).write(to: directory.appendingPathComponent("banner.jpg"))
        let bundle = try #require(Bundle(path: directory.path))
        let placeholder = try #require(UIImage(named: "placeholder", in: bundle, compatibleWith: nil))
        #expect(placeholder.scale == 2 && placeholder.size == CGSize(width: 40, height: 40))
        #expect(UIImage(named: "icon", in: bundle, compatibleWith: nil)?.scale == 3, "the screen's scale first")
        #expect(UIImage(named: "banner.jpg", in: bundle, compatibleWith: nil)?.size == CGSize(width: 90, height: 30))
        // An asset with no file (no asset catalog on Linux) and a symbol are kept by name.
        let asset = try #require(UIImage(named: "AppIconSmall", in: bundle, compatibleWith: nil))
        #expect(asset.size == .zero && asset.pngData() == nil && asset.assetName == "AppIconSmall")
        #expect(UIImage(systemName: "bell.badge")?.size == .zero)
        #expect(UIImage(named: "") == nil)
        #expect(UIImage(contentsOfFile: directory.appendingPathComponent("placeholder@2x.png").path)?.scale == 2)
        #expect(UIImage(contentsOfFile: directory.appendingPathComponent("missing.png").path) == nil)
        #expect(SwiftUI.Image(uiImage: asset).name == "AppIconSmall")
    }

    @Test func aFIFOWhereAnImageFileWasExpectedIsNotOpened() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fifo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("artwork.png").path
        #expect(mkfifo(path, 0o600) == 0)
        #expect(UIImage(contentsOfFile: path) == nil, "refused, not waited on for a writer")
    }
}
