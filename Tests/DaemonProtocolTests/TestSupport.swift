#if canImport(Glibc)
import Glibc
#endif
import DaemonProtocol
import Dispatch
import Foundation
import Synchronization

/// A fresh directory under /tmp (short: socket paths must fit in 108 bytes), removed when
/// the value is released.
final class TemporaryDirectory: Sendable {
    let path: String

    init(mode: mode_t = 0o700) throws {
        var template = Array("/tmp/bgw-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp: \(String(cString: strerror(errno)))") }
        path = String(cString: made)
        chmod(path, mode)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Collects log lines and lets a test wait for one (no sleeping: each line signals).
final class LogRecorder: Sendable {
    private let lines = Mutex<[String]>([])
    private let arrivals = DispatchSemaphore(value: 0)

    var log: TransportLog {
        { [self] level, text in
            lines.withLock { $0.append("\(level): \(text)") }
            arrivals.signal()
        }
    }

    var all: [String] { lines.withLock { $0 } }

    func count(containing text: String) -> Int { all.filter { $0.contains(text) }.count }

    /// Waits until a line containing `text` is logged, up to `timeout`.
    @discardableResult
    func wait(for text: String, timeout: Double = 5) -> String? {
        let deadline = DispatchTime.now() + timeout
        while true {
            if let line = all.first(where: { $0.contains(text) }) { return line }
            if arrivals.wait(timeout: deadline) == .timedOut { return all.first { $0.contains(text) } }
        }
    }
}

/// Both ways a connection can read: server tests run with each.
let readingModes: [FrameConnection.Options.Reading] = [.dispatchSource, .readerThread]

extension FrameConnection.Options {
    /// These options, read the given way.
    func reading(_ reading: Reading) -> Self {
        var options = self
        options.reading = reading
        return options
    }
}

/// Collects values from callbacks and lets a test wait for a number of them.
final class Collector<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])
    private let arrivals = DispatchSemaphore(value: 0)

    func add(_ value: Value) {
        values.withLock { $0.append(value) }
        arrivals.signal()
    }

    var all: [Value] { values.withLock { $0 } }

    /// Waits until at least `count` values arrived, up to `timeout`; the values so far.
    func wait(count: Int, timeout: Double = 10) -> [Value] {
        let deadline = DispatchTime.now() + timeout
        while true {
            let now = all
            if now.count >= count { return now }
            if arrivals.wait(timeout: deadline) == .timedOut { return all }
        }
    }
}

/// A server answering each frame with `echo:` and its payload, recording every close reason.
final class EchoServer: Sendable {
    let server: FrameServer
    let recorder: LogRecorder
    let closes = Collector<FrameConnection.CloseReason>()
    let peers = Collector<PeerCredentials>()

    init(
        path: String, options: FrameConnection.Options = .server, allowedUID: UInt32 = getuid(),
        maximumConnections: Int = FrameServer.defaultMaximumConnections, refusalAtCapacity: Data? = nil,
        recorder: LogRecorder = LogRecorder()
    ) throws {
        self.recorder = recorder
        let closes = self.closes
        let peers = self.peers
        server = try FrameServer(
            endpoint: .path(path), allowedUID: allowedUID, connectionOptions: options,
            maximumConnections: maximumConnections, refusalAtCapacity: refusalAtCapacity, log: recorder.log
        ) { connection in
            if let peer = connection.peer { peers.add(peer) }
            connection.start(
                onFrame: { frame in try? connection.send(Data("echo:".utf8) + frame.payload) },
                onClose: { closes.add($0) }
            )
        }
    }

    init(adopting descriptor: Int32, recorder: LogRecorder = LogRecorder()) throws {
        self.recorder = recorder
        let closes = self.closes
        server = try FrameServer(endpoint: .adopted(descriptor: descriptor), log: recorder.log) { connection in
            connection.start(
                onFrame: { frame in try? connection.send(Data("echo:".utf8) + frame.payload) },
                onClose: { closes.add($0) }
            )
        }
    }
}

/// A client that writes raw bytes (not necessarily frames) on a blocking socket.
final class RawClient {
    let descriptor: Int32

    init(path: String) throws {
        // Close-on-exec: a process another test starts meanwhile must not hold this end open
        // (a peer that "left" would still be there, and a write to it would succeed).
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            close(descriptor)
            throw TestFailure("connect \(path): \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(descriptor) }

    func write(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    func shutdownWriting() { shutdown(descriptor, Int32(SHUT_WR)) }

    /// Reads until `count` bytes arrived or `timeout` passed; the bytes read.
    func read(count: Int, timeout: Double = 30) -> [UInt8] {
        read(timeout: timeout) { $0.count >= count }.bytes
    }

    /// Reads until end of stream (the server closed), up to `timeout`: whether it closed,
    /// and the bytes read before.
    func readUntilClosed(timeout: Double = 5) -> (closed: Bool, bytes: [UInt8]) {
        read(timeout: timeout) { _ in false }
    }

    /// Reads until `enough` says so of what arrived, the peer closes (or resets), or
    /// `timeout` passes: whether it closed, and the bytes read.
    private func read(timeout: Double, until enough: ([UInt8]) -> Bool) -> (closed: Bool, bytes: [UInt8]) {
        var received: [UInt8] = []
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !enough(received) {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { return (false, received) }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(remaining * 1000) + 1)
            if ready <= 0 { continue }
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count == 0 { return (true, received) }
            if count < 0 { return (errno == ECONNRESET, received) }
            received.append(contentsOf: buffer[0..<count])
        }
        return (false, received)
    }
}
