#if canImport(Glibc)
import Glibc
#endif
import CLinux
@testable import DaemonProtocol
import Dispatch
import Foundation
import SchedulerCore
import Synchronization
import Testing

/// The parent of every suite in this target that uses real sockets or spawns processes:
/// Swift Testing runs tests in parallel, these must not run beside each other (1,000
/// clients, descriptor counts, a child of another uid).
@Suite(.serialized) struct DaemonSocketTests {}

extension DaemonSocketTests {
    /// docs/protocol.md, "Frames and connections": request and reply through a real server.
    @Suite struct RoundTrip {
        @Test(arguments: readingModes) func requestAndReplyWithPeerCredentials(reading: FrameConnection.Options.Reading) throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let echo = try EchoServer(path: path, options: .server.reading(reading))
            var info = stat()
            #expect(lstat(path, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o600, "the socket is private")
            let channel = try RequestChannel(path: path)
            defer { channel.close() }
            let reply = try channel.request(Data("hello".utf8), timeout: .seconds(5))
            #expect(reply.payload == Data("echo:hello".utf8))
            #expect(reply.version == FrameFormat.currentVersion)
            // Several requests in a row on one connection, and a large one.
            for index in 0..<20 {
                #expect(try channel.request(Data("\(index)".utf8)).payload == Data("echo:\(index)".utf8))
            }
            let large = Data((0..<(FrameFormat.maximumPayloadLength - 5)).map { UInt8(truncatingIfNeeded: $0) })
            #expect(try channel.request(large).payload == Data("echo:".utf8) + large)
            let peers = echo.peers.wait(count: 1)
            #expect(peers.first == PeerCredentials(pid: getpid(), uid: getuid(), gid: getgid()))
            #expect(echo.server.acceptedCount == 1)
            #expect(echo.recorder.wait(for: "listening on \(path) for uid \(getuid())") != nil)
        }

        @Test func aReplyThatNeverComesTimesOutAndClosingIsReported() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let silentConnections = Collector<FrameConnection>()
            let recorder = LogRecorder()
            let server = try FrameServer(endpoint: .path(path), log: recorder.log) { connection in
                silentConnections.add(connection)
                connection.start(onFrame: { _ in }, onClose: { _ in })
            }
            let channel = try RequestChannel(path: path)
            #expect(throws: RequestChannel.RequestError.timedOut(.milliseconds(100))) {
                try channel.request(Data("anyone?".utf8), timeout: .milliseconds(100))
            }
            // The server closes it: the waiting side learns at once.
            silentConnections.wait(count: 1).first?.close(reason: "test")
            // Closed by the peer: a clean end of stream, or a reset when the server closed with
            // the client's request still unread in its buffer (both are the peer's close).
            #expect {
                try channel.receive(timeout: .seconds(5))
            } throws: { error in
                guard case .closed(let reason) = error as? RequestChannel.RequestError else { return false }
                if case .peerClosed = reason { return true }
                if case .readFailed = reason { return true }
                return false
            }
            #expect {
                try channel.send(Data())
            } throws: { error in
                if case .closed = error as? FrameConnection.SendError { return true }
                return false
            }
            server.close()
        }

        @Test func synchronousRequestsWorkFromQueuesButNotFromTheConnectionsOwn() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let echo = try EchoServer(path: path)
            let channel = try RequestChannel(path: path)
            let results = Collector<String>()
            // From a serial queue and from the main-thread-like global queue: answered.
            let serial = DispatchQueue(label: "caller")
            for (index, queue) in [serial, DispatchQueue.global()].enumerated() {
                queue.async {
                    let reply = try? channel.request(Data("from a queue".utf8), timeout: .seconds(5))
                    results.add(reply.map { String(decoding: $0.payload, as: UTF8.self) } ?? "none")
                }
                _ = results.wait(count: index + 1)
            }
            #expect(results.all == ["echo:from a queue", "echo:from a queue"])
            // In one of the connection's callbacks (on its own queue) the reply could never
            // be delivered: refused at once instead of hanging.
            let refusal: RequestChannel.RequestError? = channel.connection.queue.sync {
                channel.connection.onQueue {
                    do throws(RequestChannel.RequestError) {
                        _ = try channel.request(Data("deadlock?".utf8), timeout: .seconds(5))
                        return nil
                    } catch {
                        return error
                    }
                }
            }
            // Outside a callback the same thread is not marked: the mark is per call.
            #expect(!channel.connection.isCurrentQueue)
            #expect(refusal == .calledOnConnectionQueue)
            channel.close()
            _ = echo
        }

        /// A daemon stand-in answering every request with a push (`quit`), then `reply`.
        static func pushThenReplyServer(path: String, reply: Reply) throws -> FrameServer {
            try FrameServer(endpoint: .path(path), allowedUID: getuid(), connectionOptions: .server, log: { _, _ in }) { connection in
                connection.start(
                    onFrame: { frame in
                        guard let envelope = try? MessageCoding.decode(ClientEnvelope.self, from: frame.payload) else { return }
                        if let push = try? MessageCoding.encode(DaemonEnvelope.push(.quit(reason: "test"))) { try? connection.send(push) }
                        if let answer = try? MessageCoding.encode(DaemonEnvelope.reply(id: envelope.id, reply)) { try? connection.send(answer) }
                    },
                    onClose: { _ in }
                )
            }
        }

        /// An app's push handler (run on the connection's queue) that calls the daemon back
        /// synchronously is refused at once, not left to time out; a call from elsewhere
        /// while the handler runs is unaffected.
        @Test func aCallFromAPushHandlerIsRefusedAtOnce() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            // Answers every request with a push (the app's run ends), then its reply.
            let server = try Self.pushThenReplyServer(path: path, reply: .failed(DaemonFailure(.failed, "test reply")))
            defer { server.close() }
            let link = try MessageLink.connect(path: path)
            defer { link.close() }
            let fromHandler = Collector<String>()
            let started = ContinuousClock.now
            link.onPush { _ in
                do {
                    _ = try link.call(.app(.pending), timeout: .seconds(5))
                    fromHandler.add("answered")
                } catch {
                    fromHandler.add("\(error)")
                }
            }
            let reply = try link.call(.app(.pending), timeout: .seconds(5))
            #expect(reply == .failed(DaemonFailure(.failed, "test reply")))
            let outcome = fromHandler.wait(count: 1)
            #expect(outcome.first?.contains("connection's own queue") == true, "\(outcome)")
            #expect(ContinuousClock.now - started < .seconds(4), "refused at once, not after the call's timeout")
        }

        /// A server at `path` that calls `answer` with every request it reads.
        static func scriptedServer(path: String, answer: @escaping @Sendable (FrameConnection, ClientEnvelope) -> Void) throws -> FrameServer {
            try FrameServer(endpoint: .path(path), allowedUID: getuid(), connectionOptions: .server, log: { _, _ in }) { connection in
                connection.start(
                    onFrame: { frame in
                        guard let envelope = try? MessageCoding.decode(ClientEnvelope.self, from: frame.payload) else { return }
                        answer(connection, envelope)
                    },
                    onClose: { _ in }
                )
            }
        }

        /// A push this build does not know (a newer daemon's) is passed over: the link stays
        /// open and what follows is read; a malformed push of a known name still ends it.
        @Test func aPushOfANewerDaemonIsPassedOverAndTheLinkStays() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let server = try Self.scriptedServer(path: path) { connection, envelope in
                try? connection.send(Data(#"{"push":{"_0":{"holiday":{"days":3}}}}"#.utf8))
                if let push = try? MessageCoding.encode(DaemonEnvelope.push(.foreground)) { try? connection.send(push) }
                if let answer = try? MessageCoding.encode(DaemonEnvelope.reply(id: envelope.id, .done(nil))) { try? connection.send(answer) }
                // A known push that does not decode ends the link, as before.
                try? connection.send(Data(#"{"push":{"_0":{"expire":{"run":"x"}}}}"#.utf8))
            }
            defer { server.close() }
            let link = try MessageLink.connect(path: path)
            defer { link.close() }
            let pushes = Collector<AppPush>()
            link.onPush { pushes.add($0) }
            #expect(try link.call(.app(.pending), timeout: .seconds(10)) == .done(nil))
            #expect(pushes.wait(count: 1) == [.foreground])
            let closed = Collector<String>()
            link.onClose { closed.add($0) }
            #expect(closed.wait(count: 1).first?.contains("does not understand") == true)
            #expect(PlainMessageReader.unknownPushName(Data(#"{"push":{"_0":{"holiday":{}}}}"#.utf8)) == "holiday")
            #expect(PlainMessageReader.unknownPushName(Data(#"{"push":{"_0":{"expire":{}}}}"#.utf8)) == nil)
            #expect(PlainMessageReader.unknownPushName(Data(#"{"reply":{"id":1,"_1":{"holiday":{}}}}"#.utf8)) == nil)
        }

        /// A reply numbered for a request the client never sent (an outside probe's fake
        /// daemon answered hello as request 77) ends the link at once, saying so, instead of
        /// leaving the call to time out as if nobody had answered; a reply to a post, which
        /// nobody waits for, is dropped and the link stays.
        @Test func aReplyToARequestNeverSentEndsTheLinkAtOnce() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let server = try Self.scriptedServer(path: path) { connection, envelope in
                // The post (`pending`) is answered as itself; the call that follows gets an
                // answer numbered as a request never sent.
                let id = envelope.request == .app(.pending) ? envelope.id : envelope.id + 76
                if let answer = try? MessageCoding.encode(DaemonEnvelope.reply(id: id, .done(nil))) { try? connection.send(answer) }
            }
            defer { server.close() }
            let link = try MessageLink.connect(path: path)
            defer { link.close() }
            link.post(.app(.pending))
            let started = ContinuousClock.now
            #expect {
                _ = try link.call(.app(.cancelAll), timeout: .seconds(10))
            } throws: { error in
                "\(error)".contains("a reply to request 78, which this client never sent")
            }
            #expect(ContinuousClock.now - started < .seconds(5), "said at once, not after the call's timeout")
            #expect(link.isClosed)
        }

        /// A reply that comes after a push waits for the push's handler: the caller never
        /// sees its reply before the daemon's earlier pushes were handled (the reader thread
        /// wakes callers itself only when no push is waiting or running on the queue).
        @Test func aReplyAfterAPushWaitsForThePushHandler() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let server = try Self.pushThenReplyServer(path: path, reply: .done(nil))
            defer { server.close() }
            let link = try MessageLink.connect(path: path)
            defer { link.close() }
            #expect(link.connection.options.reading == .readerThread, "a client's default")
            let events = Collector<String>()
            let release = DispatchSemaphore(value: 0)
            link.onPush { _ in
                events.add("push started")
                _ = release.wait(timeout: .now() + 10)
                events.add("push done")
            }
            DispatchQueue(label: "caller").async {
                let reply = try? link.call(.app(.pending), timeout: .seconds(10))
                events.add(reply == .done(nil) ? "reply" : "no reply: \(String(describing: reply))")
            }
            #expect(events.wait(count: 1) == ["push started"])
            #expect(events.wait(count: 2, timeout: 0.1) == ["push started"], "the reply waits while the push is handled")
            release.signal()
            #expect(events.wait(count: 3) == ["push started", "push done", "reply"])
        }

        /// A connection read by its own thread hands every frame on in order on that thread,
        /// and calls onClose on its queue only after the last of them, even when another
        /// thread closes it while a frame is being handled; a close from elsewhere also
        /// wakes the thread blocked in recv.
        @Test func aReaderThreadHandsOnEveryFrameBeforeTheClose() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let serverSide = Collector<FrameConnection>()
            let server = try FrameServer(endpoint: .path(path), log: { _, _ in }) { connection in
                serverSide.add(connection)
                connection.start(
                    onFrame: { frame in
                        guard frame.payload == Data("go".utf8) else { return }
                        for index in 0..<50 { try? connection.send(Data("frame \(index)".utf8)) }
                        connection.close(reason: "done")
                    },
                    onClose: { _ in }
                )
            }
            defer { server.close() }
            let connection = try FrameClient.connect(path: path, options: .client)
            let events = Collector<String>()
            connection.start(
                onFrame: { frame in
                    let text = String(decoding: frame.payload, as: UTF8.self)
                    // The reader thread counts as the connection's own: a synchronous wait
                    // there is refused.
                    events.add(connection.isCurrentQueue ? text : "\(text) off the reader thread")
                },
                onClose: { reason in events.add("closed: \(reason)") }
            )
            try connection.send(Data("go".utf8))
            #expect(events.wait(count: 51) == (0..<50).map { "frame \($0)" } + ["closed: \(FrameConnection.CloseReason.peerClosed)"])

            // Closed by another thread while a frame is handled: onClose waits for it.
            let second = try FrameClient.connect(path: path, options: .client)
            let order = Collector<String>()
            let release = DispatchSemaphore(value: 0)
            second.start(
                onFrame: { _ in
                    order.add("frame started")
                    _ = release.wait(timeout: .now() + 10)
                    order.add("frame done")
                },
                onClose: { reason in order.add("closed: \(reason)") }
            )
            try second.send(Data("hello".utf8))
            let accepted = serverSide.wait(count: 2)
            try #require(accepted.count == 2)
            try accepted[1].send(Data("one frame".utf8))
            #expect(order.wait(count: 1) == ["frame started"])
            second.close(reason: "from elsewhere")
            #expect(order.wait(count: 2, timeout: 0.1) == ["frame started"], "no onClose while the frame is handled")
            release.signal()
            #expect(order.wait(count: 3) == ["frame started", "frame done", "closed: \(FrameConnection.CloseReason.closedLocally("from elsewhere"))"])

            // Closing from another thread wakes a reader blocked in recv.
            let third = try FrameClient.connect(path: path, options: .client)
            let closes = Collector<FrameConnection.CloseReason>()
            third.start(onFrame: { _ in }, onClose: { closes.add($0) })
            try third.send(Data("hello".utf8))
            _ = serverSide.wait(count: 3)
            DispatchQueue.global().async { third.close(reason: "from elsewhere") }
            #expect(closes.wait(count: 1) == [.closedLocally("from elsewhere")])
        }

        /// A client connection over a socket pair, unstarted, whose reader thread reads
        /// only once `gate` is signalled; `peer` is the other end, the test's to close.
        private static func connectionWithGatedReader() throws -> (connection: FrameConnection, peer: Int32, gate: DispatchSemaphore) {
            var ends: [Int32] = [-1, -1]
            try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0)
            let gate = DispatchSemaphore(value: 0)
            let connection = FrameConnection(adopting: ends[0], peer: nil, options: .client, targetQueue: nil, log: nil, startReader: { body in
                Thread.detachNewThread {
                    gate.wait()
                    body()
                }
                return 0
            })
            return (connection, ends[1], gate)
        }

        /// A send that finds the peer gone (EPIPE) before the reader thread has read what the
        /// peer sent first (a server's answer, then its close) does not drop that answer: the
        /// thread hands it on, then the connection closes with the write's failure.
        @Test func aWriteToAGonePeerLeavesWhatItSentToTheReader() throws {
            let (connection, peer, gate) = try Self.connectionWithGatedReader()
            let events = Collector<String>()
            connection.start(
                onFrame: { events.add("frame: " + String(decoding: $0.payload, as: UTF8.self)) },
                onClose: { events.add("closed: \($0)") })
            let last = Array(try FrameEncoder.encode(Data("last word".utf8)))
            #expect(send(peer, last, last.count, Int32(MSG_NOSIGNAL)) == last.count)
            // Shut down, not only closed: a child another test forks at this moment may hold a
            // copy of the descriptor, and the socket must be gone for the send all the same.
            shutdown(peer, Int32(SHUT_RDWR))
            close(peer)
            #expect(throws: FrameConnection.SendError.closed(.writeFailed(errno: EPIPE))) { try connection.send(Data("request".utf8)) }
            #expect(!connection.isClosed, "still open for the reader to read")
            gate.signal()
            #expect(events.wait(count: 2) == ["frame: last word", "closed: \(FrameConnection.CloseReason.writeFailed(errno: EPIPE))"])
        }

        /// The same, when the reader never gets to read: the connection closes after
        /// ``FrameConnection/peerGoneGrace`` all the same, never held open.
        @Test func aWriteToAGonePeerClosesAfterTheGraceIfTheReaderNeverReads() throws {
            let (connection, peer, gate) = try Self.connectionWithGatedReader()
            let closes = Collector<FrameConnection.CloseReason>()
            connection.start(onFrame: { _ in }, onClose: { closes.add($0) })
            // Shut down, not only closed: a child another test forks at this moment may hold a
            // copy of the descriptor, and the socket must be gone for the send all the same.
            shutdown(peer, Int32(SHUT_RDWR))
            close(peer)
            #expect(throws: FrameConnection.SendError.closed(.writeFailed(errno: EPIPE))) { try connection.send(Data("request".utf8)) }
            // onClose waits for the reader thread to leave: it is let go once closed.
            let deadline = Date().addingTimeInterval(10)
            while !connection.isClosed, Date() < deadline { usleep(1_000) }
            #expect(connection.isClosed)
            gate.signal()
            #expect(closes.wait(count: 1) == [.writeFailed(errno: EPIPE)])
        }

        /// A reader thread that cannot be started (the process out of threads) closes the
        /// connection with a reason naming it: onClose comes, the descriptor is closed.
        @Test func aReaderThreadThatCannotStartClosesTheConnection() throws {
            var ends: [Int32] = [-1, -1]
            try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0)
            defer { close(ends[1]) }
            let recorder = LogRecorder()
            let connection = FrameConnection(adopting: ends[0], peer: nil, options: .client, targetQueue: nil, log: recorder.log, startReader: { _ in EAGAIN })
            let closes = Collector<FrameConnection.CloseReason>()
            connection.start(onFrame: { _ in }, onClose: { closes.add($0) })
            #expect(closes.wait(count: 1) == [.readerUnavailable(errno: EAGAIN)])
            #expect(recorder.wait(for: "no thread could be started to read the connection")?.hasPrefix("error:") == true)
            // The other end sees the end of the stream: the descriptor was closed.
            var byte: UInt8 = 0
            #expect(recv(ends[1], &byte, 1, 0) == 0)
        }

        @Test func stoppingTheServerRemovesItsSocketAndClientsSeeNoDaemon() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let echo = try EchoServer(path: path)
            let channel = try RequestChannel(path: path)
            // Accepted first: a connection still in the backlog when the listener closes is
            // reset by the kernel instead (and never reaches the handler).
            #expect(try channel.request(Data("hi".utf8)).payload == Data("echo:hi".utf8))
            echo.server.close()
            #expect(throws: RequestChannel.RequestError.closed(.peerClosed)) { try channel.receive(timeout: .seconds(5)) }
            #expect(!FileManager.default.fileExists(atPath: path))
            #expect(echo.closes.wait(count: 1) == [.closedLocally("the server is shutting down")])
            #expect {
                try FrameClient.connect(path: path)
            } throws: { error in
                guard let error = error as? ConnectError else { return false }
                return error.isNoDaemon && error.path == path && error.message.contains("no daemon is running: there is no socket at \(path)")
            }
        }

        /// Linux refuses a connect to a regular file, a FIFO or a directory with
        /// ECONNREFUSED, as to a socket nobody listens on: what is there is named, and it is
        /// not "no daemon is running" (whose advice, start bgtaskd, would fail on that path).
        @Test func aPathThatIsNoSocketIsNamedNotTakenForAStoppedDaemon() throws {
            let scratch = try TemporaryDirectory()
            let file = scratch.path + "/file"
            #expect(FileManager.default.createFile(atPath: file, contents: Data()))
            let fifo = scratch.path + "/fifo"
            #expect(mkfifo(fifo, 0o600) == 0)
            for (path, kind) in [(file, "a regular file"), (fifo, "a FIFO"), (scratch.path, "a directory")] {
                let error = try #require(Self.connectError(at: path))
                #expect(!error.isNoDaemon && error.message.contains("\(path): it is \(kind)") && error.message.contains("not a socket"), "\(error)")
            }
        }

        /// `connect` follows a symbolic link, so the check of what is there follows it too:
        /// a link to a socket nobody listens on is a stopped daemon, a link to a file is
        /// named as the file.
        @Test func aLinkIsJudgedByWhatItPointsTo() throws {
            let scratch = try TemporaryDirectory()
            let socketPath = scratch.path + "/dead.sock"
            try makeStaleSocket(at: socketPath)  // a socket file nobody listens on
            let toSocket = scratch.path + "/to-socket"
            #expect(symlink(socketPath, toSocket) == 0)
            let stopped = try #require(Self.connectError(at: toSocket))
            #expect(stopped.isNoDaemon && stopped.message.contains("nobody listens on \(toSocket)"), "\(stopped)")
            let file = scratch.path + "/file"
            #expect(FileManager.default.createFile(atPath: file, contents: Data()))
            let toFile = scratch.path + "/to-file"
            #expect(symlink(file, toFile) == 0)
            let named = try #require(Self.connectError(at: toFile))
            #expect(!named.isNoDaemon && named.message.contains("\(toFile): it is a regular file, not a socket"), "\(named)")
        }

        /// Why connecting to `path` failed; nil (an issue recorded) when it did not.
        static func connectError(at path: String) -> ConnectError? {
            do {
                let connection = try FrameClient.connect(path: path)
                connection.close()
                Issue.record("connected to \(path)")
                return nil
            } catch {
                return error
            }
        }

        @Test(arguments: readingModes) func replyingToAPeerThatLeftIsAWriteErrorNotASignal(reading: FrameConnection.Options.Reading) throws {
            // Without MSG_NOSIGNAL this write would raise SIGPIPE and end the test process.
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let clientGone = DispatchSemaphore(value: 0)
            let sendResults = Collector<String>()
            let closes = Collector<FrameConnection.CloseReason>()
            let server = try FrameServer(endpoint: .path(path), connectionOptions: .server.reading(reading), log: { _, _ in }) { connection in
                connection.start(
                    onFrame: { _ in
                        clientGone.wait()
                        do throws(FrameConnection.SendError) {
                            try connection.send(Data(count: 300_000))
                            sendResults.add("sent")
                        } catch {
                            sendResults.add("\(error)")
                        }
                    },
                    onClose: { closes.add($0) }
                )
            }
            do {
                let client = try RawClient(path: path)
                client.write(Array(try FrameEncoder.encode(Data("bye".utf8))))
            }
            clientGone.signal()
            #expect(sendResults.wait(count: 1) == ["cannot send: the connection is closed (write failed: \(systemErrorText(EPIPE)))"])
            #expect(closes.wait(count: 1) == [.writeFailed(errno: EPIPE)])
            server.close()
        }

        @Test func anOversizedPayloadIsRefusedAndTheConnectionStaysOpen() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let echo = try EchoServer(path: path)
            let channel = try RequestChannel(path: path)
            #expect(throws: FrameConnection.SendError.frame(.lengthOverLimit(length: FrameFormat.maximumPayloadLength + 1, limit: FrameFormat.maximumPayloadLength))) {
                try channel.send(Data(count: FrameFormat.maximumPayloadLength + 1))
            }
            #expect(try channel.request(Data("fine".utf8)).payload == Data("echo:fine".utf8))
            _ = echo
        }

        @Test(arguments: readingModes) func onCloseIsCalledExactlyOnceWhateverRaces(reading: FrameConnection.Options.Reading) throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let serverSide = Collector<FrameConnection>()
            let server = try FrameServer(endpoint: .path(path), connectionOptions: .server.reading(reading), log: { _, _ in }) { connection in
                serverSide.add(connection)
                connection.start(onFrame: { _ in }, onClose: { _ in })
            }
            for round in 0..<20 {
                let connection = try FrameClient.connect(path: path, options: .client.reading(reading))
                let closes = Collector<FrameConnection.CloseReason>()
                connection.start(onFrame: { _ in }, onClose: { closes.add($0) })
                try connection.send(Data("x".utf8))
                let accepted = serverSide.wait(count: round + 1)
                let peer = accepted.count > round ? accepted[round] : nil
                #expect(peer != nil)
                // Both ends and many threads close at once.
                DispatchQueue.concurrentPerform(iterations: 16) { index in
                    if index == 0 { peer?.close() } else { connection.close(reason: "race \(index)") }
                }
                let first = closes.wait(count: 1)
                #expect(first.count == 1)
                #expect(closes.wait(count: 2, timeout: 0.05).count == 1, "a second onClose")
                #expect(connection.closeReason == first.first)
                // Starting again after the close reports the same reason, once.
                let late = Collector<FrameConnection.CloseReason>()
                connection.start(onFrame: { _ in }, onClose: { late.add($0) })
                #expect(late.wait(count: 1) == [first[0]])
            }
            server.close()
        }

        @Test func aConnectionClosedBeforeItStartedReportsItOnStart() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let echo = try EchoServer(path: path)
            let connection = try FrameClient.connect(path: path)
            connection.close(reason: "changed my mind")
            #expect(throws: FrameConnection.SendError.closed(.closedLocally("changed my mind"))) { try connection.send(Data()) }
            let closes = Collector<FrameConnection.CloseReason>()
            connection.start(onFrame: { _ in }, onClose: { closes.add($0) })
            #expect(closes.wait(count: 1) == [.closedLocally("changed my mind")])
            _ = echo
        }

        @Test func aServerOfAnotherUIDIsNotTrustedByTheClient() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let echo = try EchoServer(path: path)
            let expected = getuid() &+ 4242
            #expect {
                try FrameClient.connect(path: path, serverUID: expected)
            } throws: { error in
                guard let error = error as? ConnectError else { return false }
                return error.code == .foreignServer
                    && error.message == "refusing the socket \(path): the process listening on it (pid \(getpid())) runs as uid \(getuid()), not uid \(expected); nothing was sent"
            }
            // By default the server must be this user, and its credentials are kept.
            let connection = try FrameClient.connect(path: path)
            #expect(connection.peer == PeerCredentials(pid: getpid(), uid: getuid(), gid: getgid()))
            connection.close()
            _ = echo
        }

        @Test func connectErrorsAreClassified() {
            #expect(FrameClient.connectError(for: ECONNREFUSED, path: "/p", timeout: .seconds(1)).code == .noDaemon)
            #expect(FrameClient.connectError(for: ECONNREFUSED, path: "/p", timeout: .seconds(1)).message.contains("nobody listens on /p"))
            #expect(FrameClient.connectError(for: EACCES, path: "/p", timeout: .seconds(1)).code == .permissionDenied)
            #expect(FrameClient.connectError(for: EAGAIN, path: "/p", timeout: .seconds(1)).code == .timedOut)
            #expect(FrameClient.connectError(for: EIO, path: "/p", timeout: .seconds(1)).code == .other)
            #expect(FrameClient.connectError(for: EACCES, path: "/p", timeout: .seconds(1)).message.contains("/p"))
        }

        @Test func aSocketNobodyListensOnIsNoDaemon() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            try makeStaleSocket(at: path)
            #expect {
                try FrameClient.connect(path: path)
            } throws: { error in
                (error as? ConnectError)?.code == .noDaemon && "\(error)".contains("nobody listens on \(path)")
            }
        }
    }
}

/// Binds a socket at `path` and closes it without removing the file: what a daemon killed
/// with SIGKILL leaves behind.
func makeStaleSocket(at path: String) throws {
    let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    defer { close(descriptor) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
    }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard bound == 0 else { throw TestFailure("bind \(path): \(String(cString: strerror(errno)))") }
}

extension DaemonSocketTests {
    /// docs/protocol.md, "Frames and connections" and issue 9's bad input: 1,000 clients at
    /// once, all answered.
    @Suite struct ManyClients {
        /// Waits (at most 30 s) for `connection` to pause its reading; returns whether it did.
        static func waitUntilReadingPaused(_ connection: FrameConnection) -> Bool {
            let deadline = Date().addingTimeInterval(30)
            while !connection.isReadingPaused, Date() < deadline { usleep(1_000) }
            return connection.isReadingPaused
        }

        /// A client that has sent two requests, "one" and "two", and reads nothing.
        static func clientSendingTwoRequests(to path: String) throws -> RawClient {
            let client = try RawClient(path: path)
            client.write(Array(try FrameEncoder.encode(Data("one".utf8))) + Array(try FrameEncoder.encode(Data("two".utf8))))
            return client
        }

        @Test(arguments: readingModes) func aThousandConcurrentClientsAreAllAnswered(reading: FrameConnection.Options.Reading) throws {
            var limit = rlimit()
            getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            if limit.rlim_cur < 4_096 && limit.rlim_max >= 4_096 {
                limit.rlim_cur = 4_096
                setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            }
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let echo = try EchoServer(path: path, options: .server.reading(reading))
            let count = 1_000
            // All connect first (they wait in the backlog while the server accepts), then all
            // send, then the replies are counted.
            let replies = Collector<String>()
            var connections: [FrameConnection] = []
            for _ in 0..<count {
                let connection = try FrameClient.connect(path: path, timeout: .seconds(10))
                connection.start(onFrame: { replies.add(String(decoding: $0.payload, as: UTF8.self)) }, onClose: { _ in })
                connections.append(connection)
            }
            let all = connections
            DispatchQueue.concurrentPerform(iterations: count) { index in
                try? all[index].send(Data("client \(index)".utf8))
            }
            let answered = replies.wait(count: count, timeout: 60)
            #expect(answered.count == count)
            #expect(Set(answered) == Set((0..<count).map { "echo:client \($0)" }))
            #expect(echo.server.acceptedCount == count)
            for connection in connections { connection.close() }
            #expect(echo.closes.wait(count: count, timeout: 30).count == count)
            #expect(echo.closes.all.allSatisfy { $0 == .peerClosed })
        }

        @Test func atTheConnectionCapANewClientIsClosedAtOnceAndLoggedOnceAMinute() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let echo = try EchoServer(path: path, maximumConnections: 2)
            let first = try RequestChannel(path: path)
            let second = try RequestChannel(path: path)
            #expect(try first.request(Data("a".utf8)).payload == Data("echo:a".utf8))
            #expect(try second.request(Data("b".utf8)).payload == Data("echo:b".utf8))
            // Full: the next two see their connection end at once, never wait.
            for _ in 0..<2 {
                let refused = try RawClient(path: path)
                refused.write(Array(try FrameEncoder.encode(Data("c".utf8))))
                let (closed, bytes) = refused.readUntilClosed()
                #expect(closed && bytes.isEmpty)
            }
            #expect(echo.server.refusedForCapacityCount == 2)
            #expect(echo.recorder.count(containing: "2 connections are open, the most this server keeps; new ones are closed") == 1)
            // A slot frees: the next client is served.
            first.close()
            let deadline = Date().addingTimeInterval(10)
            while echo.server.connectionCount > 1, Date() < deadline { usleep(1_000) }
            let third = try RequestChannel(path: path)
            #expect(try third.request(Data("d".utf8)).payload == Data("echo:d".utf8))
            #expect(echo.server.acceptedCount == 3)
            // Full again after a slot freed (churn at the cap): refused, not logged again
            // within the minute.
            let refusedAgain = try RawClient(path: path)
            #expect(refusedAgain.readUntilClosed().0)
            #expect(echo.server.refusedForCapacityCount == 3)
            #expect(echo.recorder.count(containing: "the most this server keeps; new ones are closed") == 1)
            second.close()
            third.close()
            echo.server.close()
        }

        /// Found from outside: a client that connects and closes in a loop filled the cap
        /// with connections whose ends the connections' queue had not handled yet, and real
        /// clients were refused. At the cap the server now lets that queue handle what it
        /// has before refusing anyone: here the queue is held while four peers come and go,
        /// and a fifth, arriving at the cap, is served once it is released.
        @Test func atTheCapTheClosesAlreadyDueAreHandledBeforeAnyoneIsRefused() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let connectionQueue = DispatchQueue(label: "test.connections")
            let recorder = LogRecorder()
            let server = try FrameServer(
                endpoint: .path(path), maximumConnections: 4, connectionQueue: connectionQueue, log: recorder.log
            ) { connection in
                connection.start(onFrame: { frame in try? connection.send(Data("echo:".utf8) + frame.payload) }, onClose: { _ in })
            }
            defer { server.close() }
            let gate = DispatchSemaphore(value: 0)
            connectionQueue.async { gate.wait() }
            for _ in 0..<4 {
                let client = try RawClient(path: path)
                let deadline = Date().addingTimeInterval(10)
                let before = server.acceptedCount
                while server.acceptedCount == before, Date() < deadline { usleep(1_000) }
                shutdown(client.descriptor, Int32(SHUT_RDWR))
            }
            #expect(server.connectionCount == 4, "their ends wait behind the held queue")
            // The fifth peer waits in the backlog while the queue is held.
            let fifth = try RawClient(path: path)
            gate.signal()
            fifth.write(Array(try FrameEncoder.encode(Data("e".utf8))))
            let deadline = Date().addingTimeInterval(10)
            while server.acceptedCount < 5, Date() < deadline { usleep(1_000) }
            #expect(server.acceptedCount == 5)
            #expect(server.refusedForCapacityCount == 0)
            #expect(!fifth.read(count: 5, timeout: 10).isEmpty, "the fifth is answered")
            shutdown(fifth.descriptor, Int32(SHUT_RDWR))
            let closedBy = Date().addingTimeInterval(10)
            while server.connectionCount > 0, Date() < closedBy { usleep(1_000) }
        }

        /// docs/protocol.md, "Limits": connections closed on a fault (here a peer leaving
        /// mid-frame, as a client churning thousands a second does) are logged at their level
        /// at most `faultyCloseLogBurst` times a minute, the rest at debug, and the next line
        /// says how many there were. The throttle's clock is the test's.
        @Test func closesOnAFaultAreLoggedAtMostABurstAMinuteThenCounted() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let clock = Mutex(ContinuousClock.now)
            let recorder = LogRecorder()
            let closes = Collector<FrameConnection.CloseReason>()
            let server = try FrameServer(
                endpoint: .path(path), allowedUID: getuid(), connectionOptions: .server, connectionQueue: nil,
                log: recorder.log, retryDelay: .milliseconds(100), accept: { clinux_accept_nonblocking($0) },
                now: { clock.withLock { $0 } }
            ) { connection in
                connection.start(onFrame: { _ in }, onClose: { closes.add($0) })
            }
            defer { server.close() }
            let burst = FrameServer.faultyCloseLogBurst
            func churn(_ count: Int) throws {
                for _ in 0..<count {
                    // A header announcing 9 bytes, and 1 of them; then gone.
                    let client = try RawClient(path: path)
                    client.write([0, 0, 0, 9, 1, 0x7B])
                }
            }
            let midFrame = "closed: the peer closed the connection in the middle of a frame"
            func lines(_ level: TransportLogLevel) -> [String] { recorder.all.filter { $0.hasPrefix("\(level): ") && $0.contains(midFrame) } }

            try churn(burst + 5)
            // A close is logged before its onClose runs.
            #expect(closes.wait(count: burst + 5).count == burst + 5)
            #expect(lines(.warning).count == burst, "\(recorder.all)")
            #expect(lines(.debug).count == 5, "held back, kept at debug: \(recorder.all)")
            #expect(!lines(.warning).contains { $0.contains("more connections closed") })

            // A minute on: the next close is logged, saying how many were held back.
            clock.withLock { $0 += FrameServer.capacityLogInterval + .seconds(1) }
            try churn(1)
            #expect(closes.wait(count: burst + 6).count == burst + 6)
            #expect(lines(.warning).count == burst + 1)
            #expect(lines(.warning).last?.hasSuffix("(5 more connections closed on a fault since the last such line, logged at debug level)") == true, "\(recorder.all)")
            // A peer that leaves between frames is no fault: debug, and not counted.
            let polite = try RequestChannel(path: path)
            polite.close()
            #expect(closes.wait(count: burst + 7).count == burst + 7)
            #expect(recorder.all.filter { $0.hasPrefix("warning: ") }.count == burst + 1, "\(recorder.all)")
        }

        /// A connection this side closes for the peer's fault (`close(refusingPeer:)`: a
        /// malformed message, no hello) is logged at warning level through the same
        /// throttle, so a client looping on malformed messages cannot flood the log either.
        @Test func closesRefusingThePeerAreThrottledWithTheOtherFaults() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let recorder = LogRecorder()
            let closes = Collector<FrameConnection.CloseReason>()
            let server = try FrameServer(
                endpoint: .path(path), allowedUID: getuid(), connectionOptions: .server, connectionQueue: nil,
                log: recorder.log, retryDelay: .milliseconds(100), accept: { clinux_accept_nonblocking($0) },
                now: { ContinuousClock.now }
            ) { connection in
                connection.start(onFrame: { _ in connection.close(refusingPeer: "malformed message: test") }, onClose: { closes.add($0) })
            }
            defer { server.close() }
            let burst = FrameServer.faultyCloseLogBurst
            for _ in 0..<(burst + 3) {
                let client = try RawClient(path: path)
                client.write([0, 0, 0, 1, 1, 0x7B])
            }
            #expect(closes.wait(count: burst + 3).count == burst + 3)
            let refused = "the peer at fault: malformed message: test"
            #expect(recorder.all.filter { $0.hasPrefix("warning: ") && $0.contains(refused) }.count == burst, "\(recorder.all)")
            #expect(recorder.all.filter { $0.hasPrefix("debug: ") && $0.contains(refused) }.count == 3, "\(recorder.all)")
        }

        /// docs/protocol.md, "Limits": a peer refused at the cap is sent the server's refusal
        /// before the close, and a message link reports that instead of the reset, whether
        /// the refusal arrives before its first request goes out or after.
        @Test func aClientRefusedAtTheCapIsToldWhy() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let refusal = DaemonFailure(.connectionLimit, "bgtaskd at \(path) is at its connection limit (1); try again")
            let payload = try MessageCoding.encode(DaemonEnvelope.reply(id: MessageLink.connectionReplyID, .failed(refusal)))
            let echo = try EchoServer(path: path, maximumConnections: 1, refusalAtCapacity: payload)
            let first = try RequestChannel(path: path)
            #expect(try first.request(Data("a".utf8)).payload == Data("echo:a".utf8))

            // The bytes: one frame with the refusal, then the end of the stream.
            let raw = try RawClient(path: path)
            raw.write(Array(try FrameEncoder.encode(Data("c".utf8))))
            let (closed, bytes) = raw.readUntilClosed()
            #expect(closed)
            #expect(bytes == Array(try FrameEncoder.encode(payload)))

            // The link closed before its first call: the call fails with the refusal.
            let early = try MessageLink.connect(path: path)
            let closedLink = DispatchSemaphore(value: 0)
            early.onClose { _ in closedLink.signal() }
            #expect(closedLink.wait(timeout: .now() + 10) == .success)
            #expect(throws: refusal) { try early.call(.hello(Hello(role: .admin))) }
            // A call made at once, as bgtask makes it: whichever comes first, the same.
            for _ in 0..<20 {
                let link = try MessageLink.connect(path: path)
                #expect(throws: refusal) { try link.call(.hello(Hello(role: .admin)), timeout: .seconds(10)) }
            }
            #expect(echo.server.refusedForCapacityCount == 22)
            first.close()
            echo.server.close()
        }

        @Test(arguments: readingModes) func aClientThatSendsRequestsWithoutReadingRepliesIsNotReadEither(reading: FrameConnection.Options.Reading) throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let handled = Atomic<Int>(0)
            let connections = Collector<FrameConnection>()
            let replySize = 16 * 1_024
            let server = try FrameServer(endpoint: .path(path), connectionOptions: .server.reading(reading), log: LogRecorder().log) { connection in
                connections.add(connection)
                connection.start(
                    onFrame: { frame in
                        handled.add(1, ordering: .relaxed)
                        // The reply starts with the request's text, so order can be checked.
                        var reply = Data(count: replySize)
                        reply.replaceSubrange(0..<frame.payload.count, with: frame.payload)
                        try? connection.send(reply)
                    },
                    onClose: { _ in }
                )
            }
            let requests = 2_000
            let client = try RawClient(path: path)
            var bytes: [UInt8] = []
            for index in 0..<requests { bytes += Array(try FrameEncoder.encode(Data(String(format: "request %05d", index).utf8))) }
            client.write(bytes)
            let connection = try #require(connections.wait(count: 1).first)
            #expect(Self.waitUntilReadingPaused(connection))
            // Paused: this process holds at most the pause mark and one reply, and handles
            // nothing more while the peer reads nothing (whatever the kernel's buffer sizes).
            let frameLength = FrameFormat.headerLength + replySize
            #expect(connection.bufferedOutputCount <= 64 * 1_024 + frameLength)
            let handledWhilePaused = handled.load(ordering: .relaxed)
            usleep(200_000)
            #expect(handled.load(ordering: .relaxed) == handledWhilePaused, "nothing handled while paused")
            #expect(handledWhilePaused < requests)
            #expect(!connection.isClosed)
            // Reading the replies lets the rest through: every request is answered, in order.
            let received = client.read(count: requests * frameLength)
            #expect(received.count == requests * frameLength)
            let order = stride(from: 0, to: received.count, by: frameLength).map { start in
                String(decoding: received[(start + FrameFormat.headerLength)..<(start + FrameFormat.headerLength + 13)], as: UTF8.self)
            }
            #expect(order == (0..<requests).map { String(format: "request %05d", $0) })
            #expect(handled.load(ordering: .relaxed) == requests)
            #expect(!connection.isReadingPaused)
            server.close()
        }

        @Test(arguments: readingModes) func aPausedConnectionClosesCleanlyAndItsIdleTimerWaits(reading: FrameConnection.Options.Reading) throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let connections = Collector<FrameConnection>()
            let closes = Collector<FrameConnection.CloseReason>()
            // Half a second: the replies below go out from another thread, which a loaded
            // machine may start late; with 100 ms the idle timer closed the connection before
            // they were queued and reading paused (seen with two builds beside the suite).
            let options = FrameConnection.Options(idleTimeout: .milliseconds(500), reading: reading)
            let server = try FrameServer(endpoint: .path(path), connectionOptions: options, log: LogRecorder().log) { connection in
                connections.add(connection)
                connection.start(
                    onFrame: { _ in
                        // Replied from another thread, as the daemon's engine replies.
                        DispatchQueue.global().async { try? connection.send(Data(count: 512 * 1_024)) }
                    },
                    onClose: { closes.add($0) }
                )
            }
            let client = try Self.clientSendingTwoRequests(to: path)
            let connection = try #require(connections.wait(count: 1).first)
            #expect(Self.waitUntilReadingPaused(connection))
            // Three idle timeouts pass while paused: not idle, the peer's frame waits unread.
            #expect(closes.wait(count: 1, timeout: 1.6).isEmpty)
            connection.close(reason: "test")
            #expect(closes.wait(count: 1) == [.closedLocally("test")])
            #expect(client.readUntilClosed(timeout: 10).closed, "the descriptor was closed (the paused source was cancelled)")
            server.close()
        }

        /// A reader thread paused because its peer reads nothing (the reply to its first
        /// request is over the pause mark) waits, hands on nothing more, and leaves when the
        /// connection is closed: onClose comes only once it has.
        @Test func aPausedReaderThreadLeavesWhenTheConnectionCloses() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let connections = Collector<FrameConnection>()
            let closes = Collector<FrameConnection.CloseReason>()
            let handled = Atomic<Int>(0)
            let server = try FrameServer(endpoint: .path(path), connectionOptions: .server.reading(.readerThread), log: LogRecorder().log) { connection in
                connections.add(connection)
                connection.start(
                    onFrame: { _ in
                        handled.add(1, ordering: .relaxed)
                        try? connection.send(Data(count: 512 * 1_024))
                    },
                    onClose: { closes.add($0) }
                )
            }
            defer { server.close() }
            let client = try Self.clientSendingTwoRequests(to: path)
            // Open until the end: the server's connection is the one under test.
            defer { withExtendedLifetime(client) {} }
            let connection = try #require(connections.wait(count: 1).first)
            #expect(Self.waitUntilReadingPaused(connection))
            #expect(handled.load(ordering: .relaxed) == 1, "the second request waits")
            connection.close(reason: "test")
            #expect(closes.wait(count: 1) == [.closedLocally("test")])
            #expect(handled.load(ordering: .relaxed) == 1)
        }

        @Test func runningOutOfDescriptorsPausesAcceptingWithoutSpinning() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let recorder = LogRecorder()
            let calls = Atomic<Int>(0)
            let exhaustedUntil = DispatchTime.now() + .milliseconds(400)
            let server = try FrameServer(
                endpoint: .path(path), allowedUID: getuid(), connectionOptions: .server, connectionQueue: nil,
                log: recorder.log, retryDelay: .milliseconds(50),
                accept: { listener in
                    calls.add(1, ordering: .relaxed)
                    if DispatchTime.now() < exhaustedUntil {
                        errno = EMFILE
                        return -1
                    }
                    return clinux_accept_nonblocking(listener)
                },
                onConnection: { connection in
                    connection.start(onFrame: { try? connection.send($0.payload) }, onClose: { _ in })
                }
            )
            let channel = try RequestChannel(path: path)
            #expect(try channel.request(Data("patience".utf8), timeout: .seconds(10)).payload == Data("patience".utf8))
            let line = recorder.wait(for: "cannot accept connections")
            #expect(line?.contains("Too many open files") == true)
            #expect(line?.hasPrefix("error:") == true)
            // About one attempt per 50 ms pause over 400 ms, not a spinning loop.
            #expect(calls.load(ordering: .relaxed) < 40)
            channel.close()
            server.close()
        }
    }
}

extension DaemonSocketTests {
    /// Issue 9, "Bad input": garbage, oversized, unknown-version and truncated frames close
    /// only their own connection, with a logged error; another client keeps working.
    @Suite struct BadClients {
        static func expectOnlyThatConnectionCloses(
            sending bytes: [UInt8], thenShutdown: Bool = false, reason expected: FrameConnection.CloseReason, logged text: String,
            reading: FrameConnection.Options.Reading
        ) throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let echo = try EchoServer(path: path, options: .server.reading(reading))
            let good = try RequestChannel(path: path)
            #expect(try good.request(Data("before".utf8)).payload == Data("echo:before".utf8))

            let bad = try RawClient(path: path)
            bad.write(bytes)
            if thenShutdown { bad.shutdownWriting() }
            let (closed, _) = bad.readUntilClosed()
            #expect(closed, "the server closed the bad connection")
            let closes = echo.closes.wait(count: 1)
            #expect(closes == [expected])
            let line = echo.recorder.wait(for: text)
            #expect(line?.hasPrefix("\(expected.logLevel):") == true, "logged: \(echo.recorder.all)")
            if case .malformedFrame = expected { #expect(expected.logLevel == .error) } else { #expect(expected.logLevel == .warning) }

            #expect(try good.request(Data("after".utf8)).payload == Data("echo:after".utf8))
            #expect(echo.server.connectionCount == 1)
            good.close()
        }

        @Test(arguments: readingModes) func randomGarbage(reading: FrameConnection.Options.Reading) throws {
            // Seeded garbage whose first header claims far more than 1 MiB.
            var bytes: [UInt8] = [0x9C, 0x41, 0x07, 0xEE]
            var state: UInt64 = 42
            for _ in 0..<4_000 {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                bytes.append(UInt8(truncatingIfNeeded: state >> 33))
            }
            try Self.expectOnlyThatConnectionCloses(
                sending: bytes,
                reason: .malformedFrame(.lengthOverLimit(length: 0x9C41_07EE, limit: FrameFormat.maximumPayloadLength)),
                logged: "malformed frame: frame length \(0x9C41_07EE) is over the limit",
                reading: reading
            )
        }

        @Test(arguments: readingModes) func oversizedHeader(reading: FrameConnection.Options.Reading) throws {
            try Self.expectOnlyThatConnectionCloses(
                sending: [0xFF, 0xFF, 0xFF, 0xFF, 1],
                reason: .malformedFrame(.lengthOverLimit(length: 4_294_967_295, limit: FrameFormat.maximumPayloadLength)),
                logged: "frame length 4294967295 is over the limit of 1048576 bytes",
                reading: reading
            )
        }

        @Test(arguments: readingModes) func unknownVersion(reading: FrameConnection.Options.Reading) throws {
            try Self.expectOnlyThatConnectionCloses(
                sending: [0, 0, 0, 2, 7, 0x7B, 0x7D],
                reason: .malformedFrame(.unknownVersion(7)),
                logged: "frame protocol version 7 is unknown",
                reading: reading
            )
        }

        @Test(arguments: readingModes) func truncatedFrameThenClose(reading: FrameConnection.Options.Reading) throws {
            try Self.expectOnlyThatConnectionCloses(
                sending: [0, 0, 0, 100, 1] + Array(repeating: 0x41, count: 40), thenShutdown: true,
                reason: .truncatedFrame(received: 45),
                logged: "in the middle of a frame (45 bytes of it received)",
                reading: reading
            )
        }
    }
}

extension DaemonSocketTests {
    /// Issue 9, "Bad input": a client that connects and sends nothing is closed after the
    /// first-frame timeout, and nobody waits for it meanwhile.
    @Suite struct Timeouts {
        @Test(arguments: readingModes) func silentAndHalfFrameClientsAreClosedAfterTheFirstFrameTimeout(reading: FrameConnection.Options.Reading) throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let echo = try EchoServer(path: path, options: FrameConnection.Options(firstFrameTimeout: .milliseconds(200), reading: reading))
            let started = DispatchTime.now()
            // 50 silent clients and one that sent half a header.
            let silent = try (0..<50).map { _ in try RawClient(path: path) }
            let half = try RawClient(path: path)
            half.write([0, 0])
            // Meanwhile a working client is served at once: no thread waits on the silent ones.
            let good = try RequestChannel(path: path)
            #expect(try good.request(Data("now".utf8), timeout: .seconds(5)).payload == Data("echo:now".utf8))
            let servedAfter = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
            #expect(servedAfter < 0.2, "served before any timeout fired")

            for client in silent + [half] { #expect(client.readUntilClosed().closed) }
            let closes = echo.closes.wait(count: 51)
            #expect(closes.count == 51)
            #expect(closes.allSatisfy { $0 == .firstFrameTimeout(.milliseconds(200)) })
            #expect(echo.recorder.count(containing: "no complete frame within 0.2 s of connecting") == 51)
            // The client that did speak is still there.
            #expect(try good.request(Data("still".utf8)).payload == Data("echo:still".utf8))
            #expect(echo.server.connectionCount == 1)
            good.close()
        }

        /// An outside probe: 2,000 connections that each sent hello and then most of a
        /// 1 MiB frame held 2 GB of the daemon for ever (no timeout applied after the first
        /// frame). A frame begun must now be whole within the partial-frame timeout.
        @Test(arguments: readingModes) func aFrameBegunAndNeverFinishedIsClosedAfterThePartialFrameTimeout(reading: FrameConnection.Options.Reading) throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let echo = try EchoServer(path: path, options: FrameConnection.Options(firstFrameTimeout: .seconds(10), partialFrameTimeout: .milliseconds(300), reading: reading))
            func frame(_ payload: [UInt8]) -> [UInt8] {
                let length = UInt32(payload.count)
                return [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), FrameFormat.currentVersion] + payload
            }
            let stalled = try RawClient(path: path)
            stalled.write(frame(Array("hi".utf8)))
            #expect(stalled.read(count: 12, timeout: 5).count >= 12, "the first frame is answered")
            // Then a header announcing 100,000 bytes and 10 of them, and nothing more.
            stalled.write(Array(frame([UInt8](repeating: 7, count: 100_000)).prefix(15)))
            #expect(stalled.readUntilClosed().closed)
            #expect(echo.closes.wait(count: 1) == [.partialFrameTimeout(.milliseconds(300))])
            #expect(echo.recorder.wait(for: "a frame begun was not finished within 0.3 s") != nil)
            // A frame that takes its time, within the timeout, is read whole and answered.
            let slow = try RawClient(path: path)
            let whole = frame(Array("slow".utf8))
            slow.write(Array(whole.prefix(6)))
            usleep(100_000)
            slow.write(Array(whole.dropFirst(6)))
            #expect(slow.read(count: 13, timeout: 5).count >= 13, "answered: echo:slow")
            #expect(echo.server.connectionCount == 1, "the slow one is still open")
        }

        @Test(arguments: readingModes) func anIdleTimeoutClosesAConnectionThatStopsSpeaking(reading: FrameConnection.Options.Reading) throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let echo = try EchoServer(path: path, options: FrameConnection.Options(firstFrameTimeout: .seconds(10), idleTimeout: .milliseconds(200), reading: reading))
            let channel = try RequestChannel(path: path)
            #expect(try channel.request(Data("x".utf8)).payload == Data("echo:x".utf8))
            #expect(throws: RequestChannel.RequestError.closed(.peerClosed)) { try channel.receive(timeout: .seconds(5)) }
            #expect(echo.closes.wait(count: 1) == [.idleTimeout(.milliseconds(200))])
            #expect(echo.recorder.wait(for: "no frame for 0.2 s") != nil)
        }

        @Test(arguments: readingModes) func anIdleTimeoutAloneAlsoCoversTheFirstFrame(reading: FrameConnection.Options.Reading) throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let echo = try EchoServer(path: path, options: FrameConnection.Options(firstFrameTimeout: nil, idleTimeout: .milliseconds(150), reading: reading))
            let silent = try RawClient(path: path)
            #expect(silent.readUntilClosed().closed)
            #expect(echo.closes.wait(count: 1) == [.idleTimeout(.milliseconds(150))])
        }

        @Test(arguments: readingModes) func aClientThatNeverReadsIsClosedAtTheOutputCap(reading: FrameConnection.Options.Reading) throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let recorder = LogRecorder()
            let sendErrors = Collector<FrameConnection.SendError>()
            let closes = Collector<FrameConnection.CloseReason>()
            let server = try FrameServer(endpoint: .path(path), connectionOptions: .server.reading(reading), log: recorder.log) { connection in
                connection.start(
                    onFrame: { _ in
                        // Answer one request with 8 MiB in 512 KiB frames.
                        for _ in 0..<16 {
                            do throws(FrameConnection.SendError) { try connection.send(Data(count: 512 * 1024)) } catch {
                                sendErrors.add(error)
                                return
                            }
                        }
                    },
                    onClose: { closes.add($0) }
                )
            }
            let client = try RawClient(path: path)
            client.write(Array(try FrameEncoder.encode(Data("flood me".utf8))))
            // The client reads nothing.
            let reasons = closes.wait(count: 1)
            guard case .outputLimitExceeded(let buffered, let limit)? = reasons.first else {
                Issue.record("closed for \(reasons)")
                return
            }
            #expect(limit == 4 * 1_048_576)
            #expect(buffered > limit)
            #expect(sendErrors.all.count == 1)
            #expect(recorder.wait(for: "the peer does not read") != nil)
            server.close()
        }
    }
}

extension DaemonSocketTests {
    /// docs/protocol.md, "Peer checks": a peer of another uid is refused by SO_PEERCRED.
    @Suite struct OtherUID {
        @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")))
        func aClientOfAnotherUIDIsRefusedAndLogged() throws {
            // Reachable by uid 65534 for this test only: a 0711 directory and a 0666 socket.
            // What refuses it is the server's own check of the peer's credentials.
            let scratch = try TemporaryDirectory(mode: 0o711)
            let path = scratch.path + "/socket"
            let echo = try EchoServer(path: path)
            #expect(chmod(path, 0o666) == 0)
            let script = """
            import socket, struct, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(10)
            s.connect(sys.argv[1])
            try:
                s.sendall(struct.pack('>IB', 5, 1) + b'hello')
                data = s.recv(100)
                print('closed' if data == b'' else 'answered')
            except (ConnectionResetError, BrokenPipeError):
                print('closed')
            """
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", script, path]
            process.environment = ["PATH": "/usr/bin:/bin"]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let pid = process.processIdentifier
            process.waitUntilExit()
            let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(printed.trimmingCharacters(in: .whitespacesAndNewlines) == "closed")
            #expect(process.terminationStatus == 0)
            let line = echo.recorder.wait(for: "refused a connection from pid")
            #expect(line == "warning: refused a connection from pid \(pid), uid 65534: only uid \(getuid()) may connect")
            #expect(echo.server.refusedCount == 1)
            #expect(echo.server.acceptedCount == 0)
            // Our own uid still gets in.
            let channel = try RequestChannel(path: path)
            #expect(try channel.request(Data("me".utf8)).payload == Data("echo:me".utf8))
            channel.close()
        }

        @Test func aServerAllowingOnlyAnotherUIDRefusesUs() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let echo = try EchoServer(path: path, allowedUID: getuid() &+ 4242)
            let client = try RawClient(path: path)
            client.write(Array(try FrameEncoder.encode(Data("hi".utf8))))
            #expect(client.readUntilClosed().closed)
            #expect(echo.recorder.wait(for: "refused a connection from pid \(getpid()), uid \(getuid()): only uid \(getuid() &+ 4242) may connect") != nil)
        }
    }
}

extension DaemonSocketTests {
    /// docs/protocol.md, "Socket paths and permissions": a stale socket is replaced, a live
    /// one or another kind of file is not.
    @Suite struct SocketFile {
        @Test func aStaleSocketIsReplaced() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            try makeStaleSocket(at: path)
            let echo = try EchoServer(path: path)
            #expect(echo.recorder.wait(for: "replaced the stale socket \(path)")?.hasPrefix("info:") == true)
            let channel = try RequestChannel(path: path)
            #expect(try channel.request(Data("ok".utf8)).payload == Data("echo:ok".utf8))
            channel.close()
        }

        @Test func aLiveSocketIsRefusedNamingItsHolder() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let first = try EchoServer(path: path)
            #expect {
                _ = try EchoServer(path: path)
            } throws: { error in
                guard let error = error as? FrameServer.ListenError else { return false }
                return error.code == .inUse && error.path == path
                    && error.message == "cannot listen on \(path): pid \(getpid()) (uid \(getuid())) is listening on it (is a daemon already running?)"
            }
            // The first server is untouched.
            let channel = try RequestChannel(path: path)
            #expect(try channel.request(Data("still".utf8)).payload == Data("echo:still".utf8))
            channel.close()
            _ = first
        }

        /// Two servers starting on one path at once: exactly one listens, the other is refused
        /// as in use, and the one listening keeps its socket (without the binding lock, one
        /// could take the other's socket between its bind and listen for stale and replace it).
        @Test func twoServersStartingAtOnceLeaveOneListening() throws {
            let scratch = try TemporaryDirectory()
            for round in 0..<100 {
                let path = scratch.path + "/socket-\(round)"
                if round.isMultiple(of: 2) { try makeStaleSocket(at: path) }
                let outcomes = Mutex<[Result<EchoServer, FrameServer.ListenError>]>([])
                DispatchQueue.concurrentPerform(iterations: 2) { _ in
                    let outcome: Result<EchoServer, FrameServer.ListenError>
                    do { outcome = .success(try EchoServer(path: path)) } catch let error as FrameServer.ListenError { outcome = .failure(error) } catch {
                        outcome = .failure(FrameServer.ListenError(code: .systemCall, path: path, message: "\(error)"))
                    }
                    outcomes.withLock { $0.append(outcome) }
                }
                let results = outcomes.withLock { $0 }
                let servers = results.compactMap { try? $0.get() }
                let refusals = results.compactMap { result -> FrameServer.ListenError? in
                    if case .failure(let error) = result { return error } else { return nil }
                }
                #expect(servers.count == 1, "round \(round): \(refusals.map(\.message))")
                #expect(refusals.allSatisfy { $0.code == .inUse }, "round \(round): \(refusals.map(\.message))")
                let channel = try RequestChannel(path: path)
                #expect(try channel.request(Data("mine".utf8)).payload == Data("echo:mine".utf8))
                channel.close()
            }
        }

        @Test func aLockHeldByAnotherProcessIsWaitedForThenNamed() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let holder = open(path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            #expect(holder >= 0)
            defer { close(holder) }
            // An open file description of its own: flock locks conflict between descriptions,
            // as between processes.
            #expect(flock(holder, LOCK_EX) == 0)
            #expect {
                _ = try EchoServer(path: path)
            } throws: { error in
                guard let error = error as? FrameServer.ListenError else { return false }
                return error.code == .inUse && error.message.contains("held its lock file \(path).lock")
            }
            flock(holder, LOCK_UN)
            _ = try EchoServer(path: path)
        }

        @Test func aLockFileThatIsNotARegularFileIsLeftAlone() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            #expect(mkfifo(path + ".lock", 0o600) == 0)
            #expect {
                _ = try EchoServer(path: path)
            } throws: { error in
                "\(error)".contains("its lock file \(path).lock is a FIFO, not a regular file")
            }
        }

        @Test func aFileThatIsNotASocketIsLeftAlone() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            #expect(FileManager.default.createFile(atPath: path, contents: Data("precious".utf8)))
            #expect {
                _ = try EchoServer(path: path)
            } throws: { error in
                (error as? FrameServer.ListenError)?.code == .notASocket && "\(error)".contains("\(path): it exists and is a regular file, not a socket")
            }
            #expect(FileManager.default.contents(atPath: path) == Data("precious".utf8))
        }

        @Test func resolvedPathsPreparedDirectoryServerAndClientTogether() throws {
            let scratch = try TemporaryDirectory()
            let resolved = try DaemonPaths.resolve(environment: ["XDG_RUNTIME_DIR": scratch.path, "HOME": scratch.path], uid: getuid())
            #expect(resolved.socketPath == scratch.path + "/bgtaskd/socket")
            try DaemonPaths.prepareSocketDirectory(resolved.socketDirectory)
            let echo = try EchoServer(path: resolved.socketPath)
            let channel = try RequestChannel(path: resolved.socketPath)
            #expect(try channel.request(Data("together".utf8)).payload == Data("echo:together".utf8))
            channel.close()
            _ = echo
        }

        @Test func aPathTooLongIsRefused() throws {
            let path = "/tmp/" + String(repeating: "s", count: 120)
            #expect {
                _ = try EchoServer(path: path)
            } throws: { error in
                (error as? FrameServer.ListenError)?.code == .invalidPath && "\(error)".contains("over the limit of 107")
            }
        }
    }
}

extension DaemonSocketTests {
    /// docs/protocol.md, "Socket activation and notify": descriptors passed by systemd.
    @Suite struct Activation {
        /// A descriptor number far above those the test process uses, so `dup2` onto it
        /// clobbers nothing.
        static func freeHighDescriptor(count: Int) throws -> Int32 {
            var limit = rlimit()
            getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            var candidate = Int32(min(UInt64(limit.rlim_cur), 20_000)) - 64
            while candidate > 100 {
                if (0..<Int32(count)).allSatisfy({ fcntl(candidate + $0, F_GETFD) == -1 }) { return candidate }
                candidate -= Int32(count)
            }
            throw TestFailure("no free descriptor numbers")
        }

        static func socket(_ domain: Int32, _ type: Int32, listeningAt path: String?) throws -> Int32 {
            let descriptor = Glibc.socket(domain, type | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard let path else { return descriptor }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard bound == 0, listen(descriptor, 16) == 0 else { throw TestFailure("bind/listen \(path)") }
            return descriptor
        }

        @Test func aPassedListeningSocketIsVerifiedAndServes() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/socket"
            let original = try Self.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), listeningAt: path)
            let base = try Self.freeHighDescriptor(count: 1)
            #expect(dup2(original, base) == base)
            close(original)
            #expect(fcntl(base, F_GETFD) & FD_CLOEXEC == 0)
            let sockets = try SystemdActivation.listeningSockets(
                environment: ["LISTEN_PID": "\(getpid())", "LISTEN_FDS": "1", "LISTEN_FDNAMES": "bgtaskd"], pid: getpid(), base: base
            )
            #expect(sockets == [SystemdActivation.ListeningSocket(descriptor: base, name: "bgtaskd")])
            #expect(fcntl(base, F_GETFD) & FD_CLOEXEC != 0, "made close-on-exec")
            let echo = try EchoServer(adopting: base)
            let channel = try RequestChannel(path: path)
            #expect(try channel.request(Data("activated".utf8)).payload == Data("echo:activated".utf8))
            channel.close()
            echo.server.close()
            #expect(fcntl(base, F_GETFD) == -1, "the server closed the adopted descriptor")
        }

        @Test func descriptorsThatAreNotListeningUnixStreamSocketsAreNamed() throws {
            let scratch = try TemporaryDirectory()
            let base = try Self.freeHighDescriptor(count: 1)
            let environment = ["LISTEN_PID": "\(getpid())", "LISTEN_FDS": "1"]
            func expectRefused(_ descriptor: Int32, _ text: String) {
                if descriptor >= 0 {
                    #expect(dup2(descriptor, base) == base)
                    close(descriptor)
                }
                #expect {
                    try SystemdActivation.listeningSockets(environment: environment, pid: getpid(), base: base)
                } throws: { error in
                    "\(error)".contains("fd \(base) from LISTEN_FDS \(text)")
                }
                close(base)
            }
            expectRefused(-1, "is not open")
            expectRefused(open(scratch.path, O_RDONLY), "is a directory, not a socket")
            expectRefused(try Self.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), listeningAt: nil), "is not listening")
            expectRefused(try Self.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), listeningAt: nil), "is not a stream socket")
            expectRefused(try Self.socket(AF_INET, Int32(SOCK_STREAM.rawValue), listeningAt: nil), "is not a Unix socket")
        }
    }
}

extension DaemonSocketTests {
    /// docs/protocol.md, "Socket activation and notify": notification datagrams as systemd
    /// receives them.
    @Suite struct Notify {
        /// A datagram socket bound to `address` (`@name` for the abstract namespace).
        final class Receiver {
            let descriptor: Int32

            init(address: String) throws {
                descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
                var storage = sockaddr_un()
                storage.sun_family = sa_family_t(AF_UNIX)
                let abstract = address.hasPrefix("@")
                let bytes = Array((abstract ? String(address.dropFirst()) : address).utf8)
                withUnsafeMutableBytes(of: &storage.sun_path) { raw in
                    for (index, byte) in bytes.enumerated() { raw[index + (abstract ? 1 : 0)] = byte }
                }
                let length = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)! + bytes.count + 1
                let bound = withUnsafePointer(to: &storage) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(length)) }
                }
                guard bound == 0 else { throw TestFailure("bind \(address): \(String(cString: strerror(errno)))") }
                var timeout = timeval(tv_sec: 5, tv_usec: 0)
                setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            }

            deinit { close(descriptor) }

            func receive(waiting: Bool = true) -> String? {
                var buffer = [UInt8](repeating: 0, count: 4096)
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, waiting ? 0 : Int32(MSG_DONTWAIT)) }
                return count < 0 ? nil : String(decoding: buffer[0..<count], as: UTF8.self)
            }
        }

        @Test func datagramsReachAPathSocket() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/notify"
            let receiver = try Receiver(address: path)
            let notifier = try SystemdNotifier(environment: ["NOTIFY_SOCKET": path], pid: getpid())
            #expect(notifier.isEnabled)
            try notifier.ready(status: "serving 3 apps\nand more")
            #expect(receiver.receive() == "READY=1\nSTATUS=serving 3 apps and more")
            try notifier.status("idle")
            #expect(receiver.receive() == "STATUS=idle")
            try notifier.mainPID(1234)
            #expect(receiver.receive() == "MAINPID=1234")
            try notifier.stopping()
            #expect(receiver.receive() == "STOPPING=1")
            try notifier.watchdog()
            #expect(receiver.receive() == "WATCHDOG=1")
        }

        @Test func datagramsReachAnAbstractSocket() throws {
            let name = "@bgtaskd-notify-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            let receiver = try Receiver(address: name)
            let notifier = try SystemdNotifier(environment: ["NOTIFY_SOCKET": name], pid: getpid())
            try notifier.ready()
            #expect(receiver.receive() == "READY=1")
        }

        @Test func theWatchdogPingsAtHalfTheInterval() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/notify"
            let receiver = try Receiver(address: path)
            let notifier = try SystemdNotifier(environment: ["NOTIFY_SOCKET": path, "WATCHDOG_USEC": "100000", "WATCHDOG_PID": "\(getpid())"], pid: getpid())
            #expect(notifier.watchdogInterval == .milliseconds(100))
            let pinger = try #require(notifier.startWatchdog())
            #expect(pinger.period == .milliseconds(50))
            #expect(receiver.receive() == "WATCHDOG=1")
            #expect(receiver.receive() == "WATCHDOG=1")
            pinger.cancel()
        }

        /// A service stuck on a lock its probe takes sends no ping (systemd then restarts
        /// it); once the probe returns, pinging goes on.
        @Test(.timeLimit(.minutes(1)))
        func noPingWhileTheProbeIsStuck() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/notify"
            let receiver = try Receiver(address: path)
            let notifier = try SystemdNotifier(environment: ["NOTIFY_SOCKET": path, "WATCHDOG_USEC": "100000", "WATCHDOG_PID": "\(getpid())"], pid: getpid())
            let probing = DispatchSemaphore(value: 0)
            let unstuck = DispatchSemaphore(value: 0)
            let stuck = Mutex(true)
            let probe: @Sendable () -> Void = {
                guard stuck.withLock({ $0 }) else { return }
                probing.signal()
                unstuck.wait()
            }
            let pinger = try #require(notifier.startWatchdog(probe: probe))
            probing.wait()
            // Three periods with the probe stuck: a pinger that did not wait for it would
            // have pinged by now. (A wait on the wall clock: what is checked is an absence.)
            usleep(150_000)
            #expect(receiver.receive(waiting: false) == nil, "no ping while the probe is stuck")
            stuck.withLock { $0 = false }
            unstuck.signal()
            #expect(receiver.receive() == "WATCHDOG=1")
            pinger.cancel()
        }

        @Test func aMissingNotifySocketIsAnErrorNamingIt() throws {
            let scratch = try TemporaryDirectory()
            let path = scratch.path + "/nobody"
            let notifier = try SystemdNotifier(environment: ["NOTIFY_SOCKET": path], pid: getpid())
            #expect {
                try notifier.ready()
            } throws: { error in
                "\(error)".contains("cannot notify \(path): sendto")
            }
        }
    }
}
