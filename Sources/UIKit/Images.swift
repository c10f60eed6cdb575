// `UIImage` for the code beside background work that handles images as bytes: a refresh that
// downloads artwork and attaches it to a notification (`UIImage(data:)`, then `jpegData` or
// `pngData` written to a file), a widget's snapshot, a placeholder from the app's resources
// (outside compile probes met it in a podcast player, a music player and a task app).
// Linux draws nothing and this package links no image codec: an image is the encoded bytes
// it was made from, with the size its header gives (docs/porting.md, "Images").
import Foundation
import SchedulerCore

/// An image (Apple: `UIImage`), kept as the encoded bytes it was made from: PNG, JPEG, GIF,
/// WebP or BMP, whose header gives its size in pixels. Nothing is decoded or drawn: an image
/// is never re-encoded, so ``pngData()`` gives the bytes of an image made from PNG bytes and
/// ``jpegData(compressionQuality:)`` those of one made from JPEG bytes, and `nil` otherwise
/// (as Apple's does for an image it cannot encode). An image named in the app's assets that
/// has no file here (Linux has no asset catalog) or a system symbol is kept by name, of size
/// zero, without bytes, as `UIColor(named:)` is kept by name.
/// @unchecked Sendable: immutable (as Apple's, which is Sendable).
open class UIImage: NSObject, @unchecked Sendable {
    /// The bytes and their format, or `nil` for an image kept by name only.
    private let encoded: (bytes: Data, header: ImageHeader)?
    /// The asset's or symbol's name for an image kept by name (for SwiftUI's `Image(uiImage:)`).
    package let assetName: String?

    /// The scale it was made with.
    private let madeAtScale: CGFloat

    /// Points to pixels: 1, or what `init(data:scale:)` or a file's `@2x`/`@3x` suffix said.
    open var scale: CGFloat { madeAtScale }

    /// The image's size in points: its pixels divided by ``scale``; zero for an image kept by
    /// name only.
    open var size: CGSize {
        guard let header = encoded?.header else { return .zero }
        return CGSize(width: CGFloat(header.width) / madeAtScale, height: CGFloat(header.height) / madeAtScale)
    }

    /// How the image is turned: `.up` (nothing here reads an orientation from the bytes).
    open var imageOrientation: Orientation { .up }

    /// The orientations of an image (Apple: `UIImage.Orientation`, Apple's raw values).
    public enum Orientation: Int, Sendable {
        case up, down, left, right, upMirrored, downMirrored, leftMirrored, rightMirrored
    }

    private init(encoded: (bytes: Data, header: ImageHeader)?, assetName: String?, scale: CGFloat) {
        self.encoded = encoded
        self.assetName = assetName
        madeAtScale = scale
        super.init()
    }

    /// An empty image: no bytes, size zero (Apple: `init()`).
    public override init() {
        encoded = nil
        assetName = nil
        madeAtScale = 1
        super.init()
    }

    /// The image the bytes `data` encode, at scale 1; `nil` for bytes that are not a PNG,
    /// JPEG, GIF, WebP or BMP image whose header gives a size (Apple's also decodes HEIF and
    /// TIFF, which are refused here).
    public convenience init?(data: Data) {
        self.init(data: data, scale: 1)
    }

    /// The image the bytes `data` encode, at `scale` (points to pixels; a scale that is not
    /// a finite number above zero reads as 1). Designated, as Apple's `init?(data:scale:)`
    /// is, so an app's subclass can call it.
    public init?(data: Data, scale: CGFloat) {
        guard let header = ImageHeader(data) else { return nil }
        encoded = (data, header)
        assetName = nil
        madeAtScale = scale.isFinite && scale > 0 ? scale : 1
        super.init()
    }

    /// The image in the file at `path`, its scale from an `@2x` or `@3x` before the
    /// extension; `nil` for a file that is missing, not a regular file (a FIFO is not opened),
    /// larger than 256 MiB or not an image ``init(data:)`` takes.
    public convenience init?(contentsOfFile path: String) {
        guard let bytes = try? BoundedFile.read(path: path, limit: Self.largestFile) else { return nil }
        self.init(data: Data(bytes), scale: Self.scale(ofFileNamed: (path as NSString).lastPathComponent))
    }

    /// The image named `name` in the app's main bundle (``init(named:in:compatibleWith:)``).
    public convenience init?(named name: String) {
        self.init(named: name, in: nil, compatibleWith: nil)
    }

    /// The image named `name` among `bundle`'s resources (the main bundle's for `nil`): the
    /// file `name` when it has an extension, else `name@3x`, `name@2x` or `name` with the
    /// extension `png`, `jpg`, `jpeg` or `gif` (the screen's scale first, as Apple's picks
    /// the variant for the screen). Without such a file, an image kept by name (Linux has no
    /// asset catalog to look in: code that unwraps `UIImage(named:)!` for an asset goes on);
    /// `nil` for an empty name, and for a file found that is not an image.
    public convenience init?(named name: String, in bundle: Bundle?, compatibleWith traitCollection: UITraitCollection?) {
        guard !name.isEmpty else { return nil }
        let bundle = bundle ?? .main
        if let path = Self.resourcePath(named: name, in: bundle) {
            self.init(contentsOfFile: path)
        } else {
            self.init(encoded: nil, assetName: name, scale: 1)
        }
    }

    /// The system symbol named `systemName` (Apple: `init(systemName:)`), kept by name, of
    /// size zero: Linux has no symbol set to draw it from. `nil` for an empty name.
    public convenience init?(systemName name: String) {
        guard !name.isEmpty else { return nil }
        self.init(encoded: nil, assetName: name, scale: 1)
    }

    /// The image's bytes as PNG: the bytes it was made from when they are PNG, else `nil`
    /// (nothing is re-encoded here).
    public func pngData() -> Data? {
        encoded?.header.format == .png ? encoded?.bytes : nil
    }

    /// The image's bytes as JPEG: the bytes it was made from when they are JPEG, whatever
    /// `compressionQuality`, else `nil` (nothing is re-encoded here).
    public func jpegData(compressionQuality: CGFloat) -> Data? {
        encoded?.header.format == .jpeg ? encoded?.bytes : nil
    }

    /// The largest image file read (bytes).
    static let largestFile = 256 << 20

    /// 3 for a file name ending `@3x` before its extension, 2 for `@2x`, else 1.
    static func scale(ofFileNamed name: String) -> CGFloat {
        let stem = (name as NSString).deletingPathExtension
        if stem.hasSuffix("@3x") { return 3 }
        if stem.hasSuffix("@2x") { return 2 }
        return 1
    }

    /// The path of the resource file an image named `name` is read from, if there is one.
    private static func resourcePath(named name: String, in bundle: Bundle) -> String? {
        if !(name as NSString).pathExtension.isEmpty {
            return bundle.path(forResource: name, ofType: nil)
        }
        for suffix in ["@3x", "@2x", ""] {
            for fileExtension in ["png", "jpg", "jpeg", "gif"] {
                if let path = bundle.path(forResource: name + suffix, ofType: fileExtension) { return path }
            }
        }
        return nil
    }
}

/// What an image's first bytes say: its format and size in pixels. Each reading checks every
/// offset against the bytes it has, so bytes cut short or made up give `nil`, never a trap.
package struct ImageHeader: Hashable, Sendable {
    /// The encodings recognised.
    package enum Format: Hashable, Sendable { case png, jpeg, gif, webp, bmp }

    /// The encoding.
    package let format: Format
    /// The width in pixels (above zero).
    package let width: Int
    /// The height in pixels (above zero).
    package let height: Int

    /// The header of `data`, or `nil` when it is no image of a format recognised, or gives no
    /// size above zero.
    package init?(_ data: Data) {
        // The first 64 KiB hold every header but a JPEG's whose metadata segments (EXIF with
        // a thumbnail among them) come before its frame: only then is more read.
        var bytes = [UInt8](data.prefix(Self.firstScan))
        var found = Self.pngSize(bytes) ?? Self.jpegSize(bytes) ?? Self.gifSize(bytes) ?? Self.webpSize(bytes) ?? Self.bmpSize(bytes)
        if found == nil, data.count > Self.firstScan, bytes.starts(with: [0xFF, 0xD8]) {
            bytes = [UInt8](data.prefix(Self.longestScan))
            found = Self.jpegSize(bytes)
        }
        guard let (format, width, height) = found, width > 0, height > 0 else { return nil }
        self.format = format
        self.width = width
        self.height = height
    }

    /// How far into the bytes a header is looked for first.
    static let firstScan = 64 << 10
    /// How far into the bytes a JPEG's frame header is looked for at most.
    static let longestScan = 4 << 20

    private static func pngSize(_ b: [UInt8]) -> (Format, Int, Int)? {
        guard b.count >= 24, b.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
              Array(b[12..<16]) == Array("IHDR".utf8) else { return nil }
        // The format allows at most 2^31 - 1 in each dimension.
        let width = bigEndian(b, 16, 4), height = bigEndian(b, 20, 4)
        guard width <= Int(Int32.max), height <= Int(Int32.max) else { return nil }
        return (.png, width, height)
    }

    private static func jpegSize(_ b: [UInt8]) -> (Format, Int, Int)? {
        guard b.count >= 4, b[0] == 0xFF, b[1] == 0xD8 else { return nil }
        var i = 2
        while i + 1 < b.count {
            guard b[i] == 0xFF else { return nil }
            let marker = b[i + 1]
            if marker == 0xFF { i += 1; continue }  // fill bytes before a marker
            if (0xD0...0xD7).contains(marker) || marker == 0x01 { i += 2; continue }  // no length
            if marker == 0xD9 || marker == 0xDA { return nil }  // the end, or the scan, before a frame
            guard i + 3 < b.count else { return nil }
            let length = bigEndian(b, i + 2, 2)
            guard length >= 2 else { return nil }
            // A start of frame (baseline, progressive...), not DHT, JPG or DAC, which share the range.
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                // Its length covers the precision, the two dimensions, the component count
                // and at least one component (3 bytes each): a shorter one has no size of its
                // own (the bytes after it would be read as one).
                guard length >= 11, i + 8 < b.count else { return nil }
                return (.jpeg, bigEndian(b, i + 7, 2), bigEndian(b, i + 5, 2))
            }
            i += 2 + length
        }
        return nil
    }

    private static func gifSize(_ b: [UInt8]) -> (Format, Int, Int)? {
        // The signature and the whole logical screen descriptor (size, flags, background,
        // aspect); then, after the global colour table when the flags say there is one, a
        // block: an image descriptor, an extension or the trailer.
        guard b.count >= 14, b.starts(with: Array("GIF87a".utf8)) || b.starts(with: Array("GIF89a".utf8)) else { return nil }
        let table = b[10] & 0x80 != 0 ? 3 << (Int(b[10] & 0x07) + 1) : 0
        if 13 + table < b.count, ![0x2C, 0x21, 0x3B].contains(b[13 + table]) { return nil }
        return (.gif, littleEndian(b, 6, 2), littleEndian(b, 8, 2))
    }

    private static func webpSize(_ b: [UInt8]) -> (Format, Int, Int)? {
        guard b.count >= 30, b.starts(with: Array("RIFF".utf8)), Array(b[8..<12]) == Array("WEBP".utf8) else { return nil }
        switch String(decoding: b[12..<16], as: UTF8.self) {
        case "VP8 ":  // lossy: a key frame's start code, then 14-bit dimensions
            guard b[23] == 0x9D, b[24] == 0x01, b[25] == 0x2A else { return nil }
            return (.webp, littleEndian(b, 26, 2) & 0x3FFF, littleEndian(b, 28, 2) & 0x3FFF)
        case "VP8L":  // lossless: a signature byte, then 14 bits each of width and height, less one
            guard b[20] == 0x2F else { return nil }
            let bits = littleEndian(b, 21, 4)
            return (.webp, (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
        case "VP8X":  // extended: the canvas's 24-bit width and height, less one
            return (.webp, littleEndian(b, 24, 3) + 1, littleEndian(b, 27, 3) + 1)
        default:
            return nil
        }
    }

    private static func bmpSize(_ b: [UInt8]) -> (Format, Int, Int)? {
        guard b.count >= 28, b[0] == 0x42, b[1] == 0x4D else { return nil }
        let headerSize = littleEndian(b, 14, 4)
        if headerSize == 12 {  // the old core header: 16-bit dimensions, then one plane
            guard littleEndian(b, 22, 2) == 1 else { return nil }
            return (.bmp, littleEndian(b, 18, 2), littleEndian(b, 20, 2))
        }
        // The later headers' sizes (Windows 3 to 5, OS/2 2), then one plane.
        guard [40, 52, 56, 64, 108, 124].contains(headerSize), littleEndian(b, 26, 2) == 1 else { return nil }
        // Signed 32-bit: a negative height is a bitmap stored top-down.
        let width = Int(Int32(bitPattern: UInt32(littleEndian(b, 18, 4))))
        let height = Int(Int32(bitPattern: UInt32(littleEndian(b, 22, 4))))
        guard height != Int(Int32.min) else { return nil }
        return (.bmp, width, abs(height))
    }

    /// The unsigned number of `count` bytes at `offset`, most significant first (the caller
    /// has checked the bytes are there).
    private static func bigEndian(_ b: [UInt8], _ offset: Int, _ count: Int) -> Int {
        b[offset..<offset + count].reduce(0) { $0 << 8 | Int($1) }
    }

    /// The unsigned number of `count` bytes at `offset`, least significant first.
    private static func littleEndian(_ b: [UInt8], _ offset: Int, _ count: Int) -> Int {
        b[offset..<offset + count].reversed().reduce(0) { $0 << 8 | Int($1) }
    }
}
