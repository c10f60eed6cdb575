#if canImport(Glibc)
import Glibc
#endif
import BackgroundTasks
import Foundation
import IOSShapedApp
import Synchronization
import Testing

/// An HTTP server on the loopback that answers every request with `body`, from a thread of
/// its own, until closed; or, given no body, one that never answers (connections wait in its
/// backlog), for transfers that stay in progress; or, echoing, one that answers with the
/// request it read (its head and a body of `Content-Length` bytes).
final class LoopbackHTTPServer: Sendable {
    let port: UInt16
    private let descriptor: Int32

    init(body: String?, echoing: Bool = false) throws {
        (descriptor, port) = try listenOnLoopback()
        let listener = descriptor
        guard body != nil || echoing else { return }
        Thread.detachNewThread {
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }  // closed
                let request = Self.readRequest(client)
                let text = echoing ? request : body ?? ""
                let response = Array("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: \(text.utf8.count)\r\nConnection: close\r\n\r\n\(text)".utf8)
                _ = response.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                Glibc.close(client)
            }
        }
    }

    /// The request on `client`: its head, and as many bytes of body as its `Content-Length`
    /// says (a client may send them in several writes).
    private static func readRequest(_ client: Int32) -> String {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while received.count < 1 << 20 {
            let count = recv(client, &chunk, chunk.count, 0)
            guard count > 0 else { break }
            received += chunk[0..<count]
            let text = String(decoding: received, as: UTF8.self)
            guard let headEnd = text.range(of: "\r\n\r\n") else { continue }
            let head = text[..<headEnd.lowerBound].lowercased()
            let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            if text.utf8.distance(from: headEnd.upperBound, to: text.endIndex) >= length { break }
        }
        return String(decoding: received, as: UTF8.self)
    }

    func close() {
        shutdown(descriptor, Int32(SHUT_RDWR))
        Glibc.close(descriptor)
    }
}

/// A TCP socket listening on the loopback at a port the kernel chose, and that port.
func listenOnLoopback(backlog: Int32 = 8) throws -> (descriptor: Int32, port: UInt16) {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard listener >= 0 else { throw TestFailure("socket: errno \(errno)") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
    address.sin_port = 0
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0, listen(listener, backlog) == 0 else {
        Glibc.close(listener)
        throw TestFailure("bind/listen: errno \(errno)")
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
    }
    return (listener, UInt16(bigEndian: address.sin_port))
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// `URLSessionConfiguration.background(withIdentifier:)` and its switches: the Swift 5
/// download manager (Tests/IOSShapedApp/BackgroundDownloads.swift) compiles and downloads
/// while the process runs (docs/porting.md, "Background URL sessions").
@Suite struct BackgroundSessionTests {
    @Test func aBackgroundConfigurationCarriesItsIdentifierAndSwitches() {
        let configuration = URLSessionConfiguration.background(withIdentifier: "com.example.sync")
        #expect(configuration.identifier == "com.example.sync")
        #expect(configuration.sessionSendsLaunchEvents && configuration.waitsForConnectivity, "Apple's defaults for a background configuration")
        #expect(configuration.allowsExpensiveNetworkAccess && configuration.allowsConstrainedNetworkAccess)
        #expect(configuration.sharedContainerIdentifier == nil)
        configuration.sessionSendsLaunchEvents = false
        configuration.allowsExpensiveNetworkAccess = false
        configuration.sharedContainerIdentifier = "group.com.example"
        #expect(!configuration.sessionSendsLaunchEvents && !configuration.allowsExpensiveNetworkAccess)
        // Set, it is kept; read where FoundationNetworking is visible (UIKit brings it), it is
        // swift-corelibs-foundation's own read-only property that answers, which overload
        // resolution takes over any extension's: nil (docs/porting.md, "Background URL
        // sessions"). A file that sees only FoundationCompat reads the kept value
        // (NetworkOnlyImportSnippet).
        #expect(configuration.sharedContainerIdentifier == nil)
        // Another configuration keeps its own (a default one has Apple's defaults).
        let plain = URLSessionConfiguration.default
        #expect(!plain.sessionSendsLaunchEvents && !plain.waitsForConnectivity && plain.allowsExpensiveNetworkAccess)
        #expect(plain.identifier == nil && plain.sharedContainerIdentifier == nil)
    }

    @Test func theTLSBoundsAreKeptAndReadBack() {
        // As networking clients set them beside waitsForConnectivity (common in public apps).
        let configuration = URLSessionConfiguration.default
        #expect(configuration.tlsMinimumSupportedProtocolVersion == .TLSv12)
        #expect(configuration.tlsMaximumSupportedProtocolVersion == .TLSv13)
        configuration.tlsMinimumSupportedProtocolVersion = .TLSv13
        configuration.waitsForConnectivity = true
        #expect(configuration.tlsMinimumSupportedProtocolVersion == .TLSv13 && configuration.waitsForConnectivity)
        #expect(URLSessionConfiguration.default.tlsMinimumSupportedProtocolVersion == .TLSv12, "another configuration keeps its own")
        #expect(tls_protocol_version_t.TLSv12.rawValue == 0x0303 && tls_protocol_version_t(rawValue: 0xFEFD) == .DTLSv12)
    }

    @Test func multipathDNSSECLoadingModeAndIncrementalDeliveryAreKeptAndReadBack() {
        // A marketplace app's network manager (the tenth outside probe) and their neighbours.
        let configuration = URLSessionConfiguration.background(withIdentifier: "com.example.uploads")
        #expect(configuration.multipathServiceType == .none && !configuration.requiresDNSSECValidation && configuration.usesClassicLoadingMode)
        configuration.multipathServiceType = .handover
        configuration.requiresDNSSECValidation = true
        configuration.usesClassicLoadingMode = false
        #expect(configuration.multipathServiceType == .handover && configuration.requiresDNSSECValidation && !configuration.usesClassicLoadingMode)
        #expect(URLSessionConfiguration.default.multipathServiceType == .none, "another configuration keeps its own")
        #expect(NSURLSessionMultipathServiceType.aggregate.rawValue == 3)
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: URL(string: "https://example.invalid/feed")!)
        let other = session.dataTask(with: URL(string: "https://example.invalid/other")!)
        #expect(task.prefersIncrementalDelivery)
        task.prefersIncrementalDelivery = false
        #expect(!task.prefersIncrementalDelivery && other.prefersIncrementalDelivery)
    }

    @Test func aFailedDownloadsErrorSaysWhatIOSErrorsSay() {
        let resume = Data("resume here".utf8)
        let failed = URLError(.networkConnectionLost, userInfo: [NSURLSessionDownloadTaskResumeData: resume])
        #expect(failed.downloadTaskResumeData == resume)
        #expect(URLError(.timedOut).downloadTaskResumeData == nil)
        let refused = URLError(.notConnectedToInternet, userInfo: [NSURLErrorNetworkUnavailableReasonKey: 1])
        #expect(refused.networkUnavailableReason == .expensive)
        #expect(URLError(.notConnectedToInternet).networkUnavailableReason == nil)
        let cancelled = URLError(.cancelled, userInfo: [NSURLErrorBackgroundTaskCancelledReasonKey: 0])
        #expect(cancelled.backgroundTaskCancelledReason == .userForceQuitApplication)
        #expect(URLError.BackgroundTaskCancelledReason(rawValue: 2) == .insufficientSystemResources)
        #expect(URLError(.cancelled, userInfo: [NSURLErrorBackgroundTaskCancelledReasonKey: 9]).backgroundTaskCancelledReason == nil)
    }

    @Test func theSessionsTasksAndResumptionInAsyncForm() async throws {
        let silent = try LoopbackHTTPServer(body: nil)
        defer { silent.close() }
        let session = URLSession(configuration: .background(withIdentifier: "com.example.resume"))
        defer { session.invalidateAndCancel() }
        let waiting = session.dataTask(with: URL(string: "http://127.0.0.1:\(silent.port)/feed")!)
        let download = session.downloadTask(with: URL(string: "http://127.0.0.1:\(silent.port)/episode")!)
        waiting.resume()
        download.resume()
        let (data, upload, downloads) = await session.tasks
        #expect(data.map(\.taskIdentifier) == [waiting.taskIdentifier] && upload.isEmpty)
        #expect(downloads.map(\.taskIdentifier) == [download.taskIdentifier])
        // swift-corelibs-foundation cannot resume a download: no data, and resuming throws,
        // so the app downloads again from the start.
        #expect(await download.cancelByProducingResumeData() == nil)
        await #expect(throws: (any Error).self) { _ = try await session.download(resumeFrom: Data("stale".utf8)) }
        waiting.cancel()
    }

    @Test func theDownloadManagerOfASwift5AppDownloadsWhileTheProcessRuns() throws {
        let server = try LoopbackHTTPServer(body: "episode 42")
        defer { server.close() }
        let downloads = BackgroundDownloads()
        let finished = DispatchSemaphore(value: 0)
        let outcome = Mutex<String?>(nil)
        downloads.onFinish = { text in
            outcome.withLock { $0 = text }
            finished.signal()
        }
        downloads.download(URL(string: "http://127.0.0.1:\(server.port)/episodes/42.mp3")!)
        #expect(finished.wait(timeout: .now() + 60) == .success, "the download finished")
        #expect(outcome.withLock { $0 } == "episode 42")
        #expect(downloads.session.configuration.identifier == BackgroundDownloads.identifier)
        // swift-corelibs-foundation keeps the file after the delegate returned (iOS removes
        // it): removed here, so that the test leaves nothing in the temporary directory.
        if let location = downloads.lastLocation { try? FileManager.default.removeItem(at: location) }
        downloads.session.invalidateAndCancel()
    }
}
