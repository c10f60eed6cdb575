import Foundation

/// The layout of a frame on the daemon's socket (docs/protocol.md, "Frames and
/// connections"): a 4-byte big-endian unsigned payload length N, one byte of protocol
/// version, then N bytes of payload.
///
/// The length comes first so a reader learns how much to expect (and can refuse an
/// oversized claim) from the first five bytes, before buffering any payload.
public enum FrameFormat {
    /// The protocol version this build speaks and writes: 1.
    public static let currentVersion: UInt8 = 1
    /// The versions this build accepts from a peer.
    public static let supportedVersions: Set<UInt8> = [currentVersion]
    /// The largest payload a frame may carry: 1 MiB (1,048,576 bytes). A peer claiming more
    /// is refused as soon as its header is read.
    public static let maximumPayloadLength = 1_048_576
    /// The length of the header: 4 length bytes and 1 version byte.
    public static let headerLength = 5
}

/// One frame: the protocol version it was written with and its opaque payload (the
/// messages layered above give it meaning).
public struct Frame: Hashable, Sendable {
    /// The protocol version byte of the frame.
    public var version: UInt8
    /// The payload bytes (at most ``FrameFormat/maximumPayloadLength``).
    public var payload: Data

    /// A frame of `payload` written with `version` (the current version unless told).
    public init(payload: Data, version: UInt8 = FrameFormat.currentVersion) {
        self.version = version
        self.payload = payload
    }
}

/// What was wrong with a frame; either one ends the connection it arrived on.
public enum FrameError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The frame's length (read from its header, or of a payload to encode) is over the limit.
    case lengthOverLimit(length: Int, limit: Int)
    /// The frame's version byte is not one this build speaks.
    case unknownVersion(UInt8)

    /// One sentence naming the culprit, such as `frame length 5000000 is over the limit of 1048576 bytes`.
    public var description: String {
        switch self {
        case .lengthOverLimit(let length, let limit):
            return "frame length \(length) is over the limit of \(limit) bytes"
        case .unknownVersion(let version):
            let known = FrameFormat.supportedVersions.sorted().map(String.init).joined(separator: ", ")
            return "frame protocol version \(version) is unknown (this side speaks \(known))"
        }
    }
}

/// Writes frames (pure, no I/O).
public enum FrameEncoder {
    /// The bytes of one frame carrying `payload`: header then payload.
    ///
    /// - Throws: ``FrameError/lengthOverLimit(length:limit:)`` when `payload` is longer than
    ///   `maximumPayloadLength` (at most ``FrameFormat/maximumPayloadLength``).
    public static func encode(
        _ payload: Data,
        version: UInt8 = FrameFormat.currentVersion,
        maximumPayloadLength: Int = FrameFormat.maximumPayloadLength
    ) throws(FrameError) -> Data {
        let limit = min(maximumPayloadLength, FrameFormat.maximumPayloadLength)
        guard payload.count <= limit else { throw .lengthOverLimit(length: payload.count, limit: limit) }
        var bytes = Data(capacity: FrameFormat.headerLength + payload.count)
        appendHeader(length: UInt32(payload.count), version: version, to: &bytes)
        bytes.append(payload)
        return bytes
    }

    /// The 5-byte header of a frame of `length` payload bytes.
    static func appendHeader(length: UInt32, version: UInt8, to bytes: inout Data) {
        bytes.append(UInt8(truncatingIfNeeded: length >> 24))
        bytes.append(UInt8(truncatingIfNeeded: length >> 16))
        bytes.append(UInt8(truncatingIfNeeded: length >> 8))
        bytes.append(UInt8(truncatingIfNeeded: length))
        bytes.append(version)
    }
}

/// Reads frames out of a byte stream that arrives in pieces of any size (pure, no I/O).
///
/// Feed it with ``append(_:)`` and take frames with ``next()`` until it returns `nil` (more
/// bytes are needed). The header is checked as soon as its five bytes are in: an oversized
/// length or an unknown version throws at once, so a peer claiming 4 GiB never makes
/// anyone buffer it. An error is final: the stream cannot be resynchronised (there are no
/// frame markers), so every later ``next()`` throws the same error and the caller closes
/// the connection.
public struct FrameDecoder: Sendable {
    private enum State: Sendable {
        /// Waiting for (the rest of) a header.
        case header
        /// The header at `readIndex` was valid; waiting for its `length` payload bytes.
        case payload(length: Int, version: UInt8)
        /// The stream is unusable.
        case failed(FrameError)
    }

    private var state: State = .header
    /// Bytes received and not yet returned in a frame; those before `readIndex` are spent.
    private var buffer: [UInt8] = []
    private var readIndex = 0

    /// The largest payload accepted (at most ``FrameFormat/maximumPayloadLength``).
    public let maximumPayloadLength: Int
    /// How many bytes the frames returned so far occupied, headers included.
    public private(set) var consumedByteCount = 0
    /// How many frames were returned so far.
    public private(set) var frameCount = 0

    /// A decoder accepting payloads up to `maximumPayloadLength` bytes (clamped to
    /// ``FrameFormat/maximumPayloadLength`` and to at least 0).
    public init(maximumPayloadLength: Int = FrameFormat.maximumPayloadLength) {
        self.maximumPayloadLength = max(0, min(maximumPayloadLength, FrameFormat.maximumPayloadLength))
    }

    /// Bytes received that are not part of a returned frame: a partial frame waiting for
    /// the rest (non-zero at end of stream means the peer cut a frame short).
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// The error that ended the stream, if one did.
    public var failure: FrameError? {
        if case .failed(let error) = state { return error }
        return nil
    }

    /// Adds received bytes. After a failure they are dropped (nothing more is read).
    public mutating func append<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        if case .failed = state { return }
        buffer.append(contentsOf: bytes)
    }

    /// Adds received bytes from raw memory (the socket reader's buffer).
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if case .failed = state { return }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame, or `nil` when more bytes are needed.
    ///
    /// - Throws: ``FrameError`` when the next header claims more than
    ///   ``maximumPayloadLength`` bytes or a version not in ``FrameFormat/supportedVersions``;
    ///   once thrown, always thrown again.
    public mutating func next() throws(FrameError) -> Frame? {
        while true {
            switch state {
            case .failed(let error):
                throw error
            case .header:
                guard bufferedByteCount >= FrameFormat.headerLength else { return nil }
                var length = 0
                for offset in 0..<4 { length = length << 8 | Int(buffer[readIndex + offset]) }
                let version = buffer[readIndex + 4]
                if length > maximumPayloadLength {
                    fail(.lengthOverLimit(length: length, limit: maximumPayloadLength))
                } else if !FrameFormat.supportedVersions.contains(version) {
                    fail(.unknownVersion(version))
                } else {
                    // The header stays in the buffer until the whole frame is in, so
                    // `bufferedByteCount` counts every byte of a partial frame.
                    state = .payload(length: length, version: version)
                }
            case .payload(let length, let version):
                let frameLength = FrameFormat.headerLength + length
                guard bufferedByteCount >= frameLength else { return nil }
                let start = readIndex + FrameFormat.headerLength
                let payload = Data(buffer[start..<(start + length)])
                readIndex += frameLength
                consumedByteCount += frameLength
                frameCount += 1
                state = .header
                compact()
                return Frame(payload: payload, version: version)
            }
        }
    }

    private mutating func fail(_ error: FrameError) {
        state = .failed(error)
        buffer = []
        readIndex = 0
    }

    /// Drops spent bytes once they are most of the buffer, so the buffer stays about the
    /// size of one frame however long the stream, without moving bytes on every frame.
    private mutating func compact() {
        if readIndex == buffer.count {
            // A connection idle after a 1 MiB frame should not keep 1 MiB: small buffers are kept.
            buffer.removeAll(keepingCapacity: buffer.capacity <= 64 * 1024)
            readIndex = 0
        } else if readIndex >= 64 * 1024 && readIndex * 2 >= buffer.count {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
    }
}
