#if canImport(Glibc)
import Glibc
#endif
import DaemonProtocol
import Foundation

/// A client that speaks bytes, not the protocol: for sending what no well-behaved client
/// would (garbage, truncated, oversized and unknown-version frames) and for connecting by
/// the thousand. Blocking calls with a receive timeout; used from one test task.
struct RawClient {
    let descriptor: Int32

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Connects to `path` (blocking; a Unix socket's connect returns at once while the
    /// listener's backlog has room).
    init(path: String, receiveTimeout: TimeInterval = 5) throws {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw Failure(description: "path too long") }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            let error = errno
            _ = Glibc.close(descriptor)
            throw Failure(description: "connect \(path): errno \(error)")
        }
        var timeout = timeval(tv_sec: Int(receiveTimeout), tv_usec: Int((receiveTimeout - receiveTimeout.rounded(.down)) * 1_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        self.descriptor = descriptor
    }

    /// Sends `bytes` (all of them, or throws).
    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "send: errno \(errno)")
            }
            offset += written
        }
    }

    /// A well-formed frame carrying `request` as request number `id`.
    static func frame(_ request: ClientRequest, id: UInt64 = 1) throws -> [UInt8] {
        [UInt8](try FrameEncoder.encode(try MessageCoding.encode(ClientEnvelope(id: id, request: request))))
    }

    /// How reading ended.
    enum Ending: Equatable {
        /// The peer closed (end of file or a reset).
        case closed
        /// Nothing within the receive timeout.
        case timedOut
    }

    /// Reads everything until the peer closes or the timeout passes; returns the bytes and how it ended.
    func readUntilClosed() -> (bytes: [UInt8], ending: Ending) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 { received += buffer[0..<count]; continue }
            if count == 0 { return (received, .closed) }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { return (received, .timedOut) }
            return (received, .closed)
        }
    }

    func close() { _ = Glibc.close(descriptor) }
}
