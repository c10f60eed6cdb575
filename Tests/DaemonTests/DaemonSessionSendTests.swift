#if canImport(Glibc)
import Glibc
#endif
@testable import BGTaskDaemon
import BackgroundTasks
import DaemonProtocol
import Foundation
import Testing

/// A reply to a peer that is gone makes one log line, the close's (the server's, throttled
/// under a flood: docs/protocol.md, "Limits"), not a second warning from the daemon.
@Suite struct DaemonSessionSendTests {
    @Test func aReplyToAPeerThatWentIsNotASecondWarning() throws {
        var ends: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0)
        let connection = FrameConnection(adopting: ends[0])
        let closed = DispatchSemaphore(value: 0)
        connection.start(onFrame: { _ in }, onClose: { _ in closed.signal() })
        // The peer leaves before its reply: the write finds it gone (EPIPE), or the read
        // found it first; either way the connection is closed when the reply is sent.
        Glibc.close(ends[1])
        let log = BGDiagnosticLog.collecting()
        DaemonSession.send(.reply(id: 1, .done(nil)), on: connection, log: log)
        #expect(closed.wait(timeout: .now() + 10) == .success)
        #expect(connection.isClosed)
        #expect(log.messages.allSatisfy { $0.level < .warning }, "\(log.messages)")
        #expect(log.messages.contains { $0.level == .debug && $0.text.hasPrefix("could not send to \(connection.name): it is closed (") }, "\(log.messages)")
    }
}
