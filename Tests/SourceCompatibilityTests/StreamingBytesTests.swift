#if canImport(Glibc)
import Glibc
#endif
import BackgroundTasks
import Foundation
import SchedulerCore
import Synchronization
import Testing

/// Apple's asynchronous byte sources and their text views (Sources/FoundationCompat/
/// AsyncByteSources.swift, AsyncTextSequences.swift; docs/porting.md, "Foundation beside the
/// API", streaming bytes).
@Suite struct StreamingBytesTests {
    // MARK: Text

    @Test func linesEndAtEveryBreakAppleNamesAndEmptyLinesAreSkipped() async throws {
        let text = "a\nb\r\nc\rd\u{0B}e\u{0C}f\u{85}g\u{2028}h\u{2029}i"
        #expect(try await lines(of: Array(text.utf8)) == ["a", "b", "c", "d", "e", "f", "g", "h", "i"])
        #expect(try await lines(of: Array("\n\nfirst\n\n\nsecond\n".utf8)) == ["first", "second"])
        #expect(try await lines(of: Array("one\r\r\ntwo\r".utf8)) == ["one", "two"], "CR, then CR LF: one break each, the empty line skipped")
        #expect(try await lines(of: []) == [])
        #expect(try await lines(of: Array("no break at the end".utf8)) == ["no break at the end"])
        // Lead bytes of the separators that do not complete one stay in the line.
        #expect(try await lines(of: [0x61, 0xC2, 0xA9, 0x62]) == ["a©b"])
        #expect(try await lines(of: [0x61, 0xE2, 0x80, 0x94, 0x62]) == ["a—b"])
        #expect(try await lines(of: [0x61, 0xE2, 0x80]) == ["a\u{FFFD}"], "cut short at the end")
        #expect(try await lines(of: [0xC2, 0x0A, 0xE2, 0x0D, 0x62]) == ["\u{FFFD}", "\u{FFFD}", "b"], "a broken lead byte, then a break")
    }

    @Test func linesAgreeWithSplittingTheDecodedStringOnAnyBytes() async throws {
        // Bytes drawn from the separators' own bytes, their neighbours and invalid ones, so
        // that separators, broken separators and invalid UTF-8 meet in every order.
        let alphabet: [UInt8] = [0x61, 0x0A, 0x0B, 0x0D, 0xC2, 0x85, 0xE2, 0x80, 0xA8, 0xA9, 0xF0, 0x9F, 0xFF, 0xC3, 0xA9]
        let separators: Set<UInt32> = [0x0A, 0x0B, 0x0C, 0x0D, 0x85, 0x2028, 0x2029]
        var random = SeededRandom(seed: 7)
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0..<24, using: &random)).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &random)] }
            let decoded = String(decoding: bytes, as: UTF8.self).unicodeScalars
            let expected = decoded.split(whereSeparator: { separators.contains($0.value) }).map { String(String.UnicodeScalarView($0)) }
            let read = try await lines(of: bytes)
            #expect(read == expected, "bytes \(bytes.map { String($0, radix: 16) })")
            if read != expected { return }
        }
    }

    @Test func scalarsAndCharactersDecodeAsStringDoes() async throws {
        var random = SeededRandom(seed: 11)
        let samples: [[UInt8]] = [
            Array("héllo 🇫🇷🇩🇪 e\u{301} 👩‍👩‍👧 ok".utf8),
            [0xED, 0xA0, 0x80, 0x61],  // a surrogate's encoding: invalid
            [0xE0, 0x80, 0xAF],        // overlong
            [0xF4, 0x90, 0x80, 0x80],  // past U+10FFFF
            [0xF0, 0x9F, 0x98],        // cut short
            [0x80, 0xBF, 0xFE, 0xFF],
        ] + (0..<3000).map { _ in (0..<Int.random(in: 0..<12, using: &random)).map { _ in UInt8(Int.random(in: 0..<256, using: &random)) } }
        for bytes in samples {
            let source = ByteList(bytes)
            var scalars: [Unicode.Scalar] = []
            for try await scalar in source.unicodeScalars { scalars.append(scalar) }
            var characters: [Character] = []
            for try await character in source.characters { characters.append(character) }
            let string = String(decoding: bytes, as: UTF8.self)
            #expect(scalars == Array(string.unicodeScalars), "bytes \(bytes)")
            #expect(characters == Array(string), "bytes \(bytes)")
            if scalars != Array(string.unicodeScalars) || characters != Array(string) { return }
        }
    }

    // MARK: Files

    /// Characters of many scalars (a letter with thousands of combining marks, runs of flags,
    /// emoji joined by ZWJ) are decoded whole and as String does, past the length up to which
    /// every scalar is checked (an outside probe: one character of 40,000 marks took n² steps).
    @Test func longCharactersDecodeAsStringDoes() async throws {
        var random = SeededRandom(seed: 23)
        let pieces: [String] = ["a", "\u{301}", "\u{20DD}", "🇫", "🇷", "\u{200D}", "👩", "e", " ", "\u{1F3FD}", "\r", "\n", "가", "\u{11A8}"]
        let samples = ["a" + String(repeating: "\u{301}", count: 5_000) + "b",
                       // Short characters past the compaction's 4 KB, then a long one, then more.
                       String(repeating: "xé", count: 3_000) + "o" + String(repeating: "\u{308}", count: 300) + "\n" + String(repeating: "yz", count: 2_500),
                       // An emoji joined after more marks than the window holds.
                       "👩" + String(repeating: "\u{1F3FD}", count: 40) + "\u{200D}👩q",
                       String(repeating: "🇫🇷", count: 150) + "🇫",
                       String(repeating: "👩\u{200D}", count: 120) + "👩 x"]
            + (0..<300).map { _ in (0..<Int.random(in: 0..<400, using: &random)).map { _ in pieces[Int.random(in: 0..<pieces.count, using: &random)] }.joined() }
        for string in samples {
            var characters: [Character] = []
            for try await character in ByteList(Array(string.utf8)).characters { characters.append(character) }
            #expect(characters == Array(string), "\(string.unicodeScalars.count) scalars")
            if characters != Array(string) { return }
        }
    }

    /// A long character is produced as soon as the scalar after it is read, not when more
    /// come (a reviewer's read: checked only as their number doubled, it waited for bytes a
    /// peer waiting for an answer would never send).
    @Test func aLongCharacterComesOutAsSoonAsTheNextScalarIsRead() async throws {
        for marks in [10, 63, 64, 65, 100, 1_000] {
            let long = "o" + String(repeating: "\u{308}", count: marks)
            var iterator = WaitingPeer(bytes: Array((long + "\n").utf8)).characters.makeAsyncIterator()
            let first = try await iterator.next()
            #expect(first == Character(long), "\(marks) marks")
        }
    }

    /// An iterator holds no descriptor until it reads (an outside probe: 400 iterators made
    /// and never read held 800).
    @Test func anIteratorThatNeverReadsHoldsNoDescriptor() throws {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/null"))
        defer { try? handle.close() }
        let before = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
        let iterators = (0..<500).map { _ in handle.bytes.makeAsyncIterator() }
        let after = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
        #expect(iterators.count == 500)
        // Tests running beside it may open some meanwhile; 500 iterators held 1,000.
        #expect(after - before < 250, "\(before) descriptors before, \(after) after")
    }

    @Test func aPipesLinesArriveAsTheyAreWrittenAndEndWhenItCloses() async throws {
        let pipe = Pipe()
        var lines = pipe.fileHandleForReading.bytes.lines.makeAsyncIterator()
        pipe.fileHandleForWriting.write(Data("first\n".utf8))
        // Read before anything more is written: the line comes from what is there.
        #expect(try await lines.next() == "first")
        pipe.fileHandleForWriting.write(Data("second\nthird".utf8))
        #expect(try await lines.next() == "second")
        try pipe.fileHandleForWriting.close()
        #expect(try await lines.next() == "third")
        #expect(try await lines.next() == nil)
        #expect(try await lines.next() == nil, "and stays ended")
    }

    @Test func aNonBlockingDescriptorIsWaitedForNotFailed() async throws {
        let pipe = Pipe()
        let descriptor = pipe.fileHandleForReading.fileDescriptor
        #expect(fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK) == 0)
        var lines = pipe.fileHandleForReading.bytes.lines.makeAsyncIterator()
        // Nothing written yet: the read waits until the pipe is readable, then takes the line
        // (a read made at once would fail with EAGAIN). The writer's delay makes the wait
        // likely; a read that did not wait fails this test only when it comes first.
        let writer = Task.detached {
            try await Task.sleep(for: .milliseconds(50))
            pipe.fileHandleForWriting.write(Data("late\n".utf8))
            try pipe.fileHandleForWriting.close()
        }
        #expect(try await lines.next() == "late")
        #expect(try await lines.next() == nil)
        try await writer.value
    }

    @Test func cancellingAReadThatWaitsEndsIt() async throws {
        let pipe = Pipe()
        let handle = pipe.fileHandleForReading
        let (firstLine, firstLineSink) = AsyncStream.makeStream(of: String.self)
        let reader = Task {
            var lines: [String] = []
            for try await line in handle.bytes.lines {
                lines.append(line)
                firstLineSink.yield(line)
            }
            return lines
        }
        pipe.fileHandleForWriting.write(Data("first\n".utf8))
        var arrived = firstLine.makeAsyncIterator()
        #expect(await arrived.next() == "first")
        // The reader now waits for more, which never comes: cancelling its task must end the
        // wait. Were it not ended, only the end of the pipe would end it, 30 s on, and the
        // loop would then finish without an error.
        reader.cancel()
        let rescue = Task.detached {
            try await Task.sleep(for: .seconds(30))
            try? pipe.fileHandleForWriting.close()
        }
        let outcome = await reader.result
        rescue.cancel()
        #expect(throws: CancellationError.self) { _ = try outcome.get() }
    }

    @Test func aClosedHandleThrowsInsteadOfWaiting() async throws {
        let pipe = Pipe()
        let handle = pipe.fileHandleForReading
        try handle.close()
        var bytes = handle.bytes.makeAsyncIterator()
        await #expect(throws: POSIXError.self) { _ = try await bytes.next() }
    }

    @Test func aFilesURLReadsWholeThroughManyChunks() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("streaming-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("feed.ndjson")
        let records = (0..<20_000).map { "{\"id\":\($0)}" }
        try Data(records.joined(separator: "\n").utf8).write(to: file)
        var read: [String] = []
        for try await line in file.lines { read.append(line) }
        #expect(read == records)
        var count = 0
        for try await _ in file.resourceBytes { count += 1 }
        #expect(count == (try Data(contentsOf: file)).count)
        await #expect(throws: (any Error).self, "a missing file throws when read") {
            for try await _ in directory.appendingPathComponent("missing").lines {}
        }
    }

    // MARK: URLSession

    @Test func theResponseComesBeforeTheBodyAndTheBodyAsItArrives() async throws {
        let server = try StreamingHTTPServer(head: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\nConnection: close\r\n\r\n")
        defer { server.close() }
        let (bytes, response) = try await URLSession.shared.bytes(from: URL(string: "http://127.0.0.1:\(server.port)/events")!)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(bytes.task.state == .running, "the body has not come yet")
        var lines = bytes.lines.makeAsyncIterator()
        server.send("event one\n")
        #expect(try await lines.next() == "event one")
        server.send("ok\n")
        #expect(try await lines.next() == "ok")
        #expect(try await lines.next() == nil)
    }

    @Test func aLargeBodyArrivesWholeWithTheSessionsConfiguration() async throws {
        let body = String(repeating: "0123456789abcdef", count: 20_000)  // 320 KB
        let server = try LoopbackHTTPServer(body: body)
        defer { server.close() }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpAdditionalHeaders = ["X-Probe": "kept"]
        let session = URLSession(configuration: configuration)
        defer { session.invalidateAndCancel() }
        let (bytes, _) = try await session.bytes(for: URLRequest(url: URL(string: "http://127.0.0.1:\(server.port)/model.bin")!))
        var received: [UInt8] = []
        for try await byte in bytes { received.append(byte) }
        #expect(received == Array(body.utf8))
        #expect(bytes.task.state == .completed)

        let echo = try LoopbackHTTPServer(body: nil, echoing: true)
        defer { echo.close() }
        var request = ""
        for try await line in try await session.bytes(from: URL(string: "http://127.0.0.1:\(echo.port)/")!).0.lines {
            request += line + "\n"
        }
        #expect(request.lowercased().contains("x-probe: kept"), "the session's headers went with the request")
    }

    @Test func theTaskDelegateIsAskedAboutRedirectionsOnTheSessionsQueue() async throws {
        let target = try LoopbackHTTPServer(body: "moved here")
        defer { target.close() }
        let redirect = "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:\(target.port)/new\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        let redirecting = try StreamingHTTPServer(head: redirect)
        defer { redirecting.close() }
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let session = URLSession(configuration: .ephemeral, delegate: nil, delegateQueue: queue)
        defer { session.invalidateAndCancel() }
        let delegate = RedirectRecorder(follows: true, expectedQueue: queue)
        let (bytes, response) = try await session.bytes(from: URL(string: "http://127.0.0.1:\(redirecting.port)/old")!, delegate: delegate)
        var text = ""
        for try await character in bytes.characters { text.append(character) }
        #expect(text == "moved here" && response.url?.path == "/new")
        #expect(delegate.redirections.withLock { $0 } == ["/new on the session's queue"])

        // Without a delegate of its own, the session's delegate is asked; one that refuses
        // the redirection gets the redirecting response itself.
        let refusing = RedirectRecorder(follows: false, expectedQueue: nil)
        let refusingSession = URLSession(configuration: .ephemeral, delegate: refusing, delegateQueue: nil)
        defer { refusingSession.invalidateAndCancel() }
        let again = try StreamingHTTPServer(head: redirect)
        defer { again.close() }
        let (empty, refused) = try await refusingSession.bytes(from: URL(string: "http://127.0.0.1:\(again.port)/old")!)
        var count = 0
        for try await _ in empty { count += 1 }
        #expect((refused as? HTTPURLResponse)?.statusCode == 302 && count == 0)
        #expect(refusing.redirections.withLock { $0 }.count == 1)
    }

    @Test func cancellingTheCallerWhileTheResponseIsAwaitedThrows() async throws {
        let silent = try LoopbackHTTPServer(body: nil)  // accepts, never answers
        defer { silent.close() }
        let url = URL(string: "http://127.0.0.1:\(silent.port)/slow")!
        let caller = Task { try await URLSession.shared.bytes(from: url) }
        caller.cancel()
        let outcome = await caller.result
        #expect(throws: URLError.self) { _ = try outcome.get() }
        // Cancelled before it began: the task completes before the caller waits, and the
        // caller is answered all the same.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await URLSession.shared.bytes(from: url)
        }
        let earlyOutcome = await early.result
        #expect(throws: URLError.self) { _ = try earlyOutcome.get() }
    }

    @Test func aBodyCutShortOrCancelledNeverReadsAsWhole() async throws {
        // The server promises 100 bytes, sends 10 and closes.
        let short = try StreamingHTTPServer(head: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\n")
        defer { short.close() }
        let (cut, _) = try await URLSession.shared.bytes(from: URL(string: "http://127.0.0.1:\(short.port)/")!)
        short.send("0123456789")
        short.closeClient()
        await #expect(throws: URLError.self) { for try await _ in cut {} }

        let slow = try StreamingHTTPServer(head: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\n")
        defer { slow.close() }
        let slower = try StreamingHTTPServer(head: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\n")
        defer { slower.close() }
        let slowest = try StreamingHTTPServer(head: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\n")
        defer { slowest.close() }
        let (bytes, _) = try await URLSession.shared.bytes(from: URL(string: "http://127.0.0.1:\(slow.port)/")!)
        var iterator = bytes.makeAsyncIterator()
        slow.send("ab")
        #expect(try await iterator.next() == UInt8(ascii: "a"))
        bytes.task.cancel()
        await #expect { while try await iterator.next() != nil {} } throws: { ($0 as? URLError)?.code == .cancelled }

        // Cancelling the task that reads cancels the transfer.
        let (read, _) = try await URLSession.shared.bytes(from: URL(string: "http://127.0.0.1:\(slower.port)/")!)
        let reader = Task {
            var count = 0
            for try await _ in read { count += 1 }
            return count
        }
        slower.send("abc")
        reader.cancel()
        let outcome = await reader.result
        #expect(throws: URLError.self) { try outcome.get() }
        #expect(read.task.state == .canceling || read.task.state == .completed)

        // So does letting go of the bytes before their end.
        let abandoned = try await startAndLetGo(URL(string: "http://127.0.0.1:\(slowest.port)/")!)
        #expect(abandoned.state == .canceling || abandoned.state == .completed)
    }

    private func startAndLetGo(_ url: URL) async throws -> URLSessionDataTask {
        let (bytes, _) = try await URLSession.shared.bytes(from: url)
        return bytes.task
    }

    @Test func aRefusedConnectionThrowsFromBytes() async throws {
        // A port nothing listens on: bind one, note it, close it.
        let server = try LoopbackHTTPServer(body: nil)
        let port = server.port
        server.close()
        await #expect(throws: URLError.self) { _ = try await URLSession.shared.bytes(from: URL(string: "http://127.0.0.1:\(port)/")!) }
    }

    // MARK: Helpers

    private func lines(of bytes: [UInt8]) async throws -> [String] {
        var result: [String] = []
        for try await line in ByteList(bytes).lines { result.append(line) }
        return result
    }
}

/// A task delegate that notes each redirection (and, given a queue, whether it was called
/// on it) and follows it or not.
private final class RedirectRecorder: NSObject, URLSessionTaskDelegate, Sendable {
    let redirections = Mutex<[String]>([])
    let follows: Bool
    let expectedQueue: OperationQueue?

    init(follows: Bool, expectedQueue: OperationQueue?) {
        self.follows = follows
        self.expectedQueue = expectedQueue
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        let place = expectedQueue.map { OperationQueue.current === $0 ? " on the session's queue" : " elsewhere" } ?? ""
        redirections.withLock { $0.append((request.url?.path ?? "") + place) }
        completionHandler(follows ? request : nil)
    }
}

/// An asynchronous sequence of the given bytes.
/// Bytes that, once given, throw if asked for more: a peer that waits for an answer.
private struct WaitingPeer: AsyncSequence, Sendable {
    typealias Element = UInt8
    struct AskedPastWhatWasSent: Error {}
    let bytes: [UInt8]

    struct AsyncIterator: AsyncIteratorProtocol {
        var rest: ArraySlice<UInt8>
        mutating func next() async throws -> UInt8? {
            guard let byte = rest.popFirst() else { throw AskedPastWhatWasSent() }
            return byte
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(rest: bytes[...]) }
}

private struct ByteList: AsyncSequence, Sendable {
    typealias Element = UInt8
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    struct AsyncIterator: AsyncIteratorProtocol {
        var rest: ArraySlice<UInt8>
        mutating func next() async -> UInt8? { rest.popFirst() }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(rest: bytes[...]) }
}

/// An HTTP server on the loopback for one client: it answers with `head` once the request
/// has come, then sends what the test gives it, when the test gives it, so that a test can
/// read a body while it is still arriving.
private final class StreamingHTTPServer: Sendable {
    let port: UInt16
    private let listener: Int32
    private let client = Mutex<Int32>(-1)
    private let connected = DispatchSemaphore(value: 0)

    init(head: String) throws {
        (listener, port) = try listenOnLoopback(backlog: 4)
        Thread.detachNewThread { [self] in
            let accepted = accept(listener, nil, nil)
            guard accepted >= 0 else {
                connected.signal()
                return
            }
            // Read the request's head before answering.
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while !received.suffix(4).elementsEqual([13, 10, 13, 10]) {
                let count = recv(accepted, &chunk, chunk.count, 0)
                guard count > 0 else { break }
                received += chunk[0..<count]
            }
            Self.write(head, to: accepted)
            client.withLock { $0 = accepted }
            connected.signal()
        }
    }

    /// Sends `text` to the client, once it has connected and been answered.
    func send(_ text: String) {
        let descriptor = waitForClient()
        if descriptor >= 0 { Self.write(text, to: descriptor) }
    }

    /// Closes the connection (a body cut short when less than promised was sent).
    func closeClient() {
        let descriptor = waitForClient()
        if descriptor >= 0 {
            client.withLock { $0 = -1 }
            Glibc.close(descriptor)
        }
    }

    private func waitForClient() -> Int32 {
        if client.withLock({ $0 }) < 0 {
            _ = connected.wait(timeout: .now() + 30)
            connected.signal()  // later callers do not wait again
        }
        return client.withLock { $0 }
    }

    private static func write(_ text: String, to descriptor: Int32) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Stops listening (waking an accept that still waits) and closes the connection.
    func close() {
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
        let descriptor = client.withLock { descriptor in
            defer { descriptor = -1 }
            return descriptor
        }
        if descriptor >= 0 { Glibc.close(descriptor) }
    }
}
