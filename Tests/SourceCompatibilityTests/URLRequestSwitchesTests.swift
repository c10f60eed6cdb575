import BackgroundTasks
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

/// `URLRequest`'s per-request switches that swift-corelibs-foundation has no property for
/// (Sources/FoundationCompat/URLRequestSwitches.swift): kept with the request through
/// copies, changes and tasks, with value semantics, every other field kept.
@Suite struct URLRequestSwitchesTests {
    private let url = URL(string: "https://example.com/feed")!

    @Test func aNewRequestHasApplesDefaults() {
        let request = URLRequest(url: url)
        #expect(request.allowsExpensiveNetworkAccess && request.allowsConstrainedNetworkAccess)
        #expect(!request.assumesHTTP3Capable && !request.requiresDNSSECValidation && !request.allowsPersistentDNS)
        #expect(request.attribution == .developer && request.cookiePartitionIdentifier == nil)
    }

    @Test func eachSwitchIsKeptAndReadBack() {
        var request = URLRequest(url: url)
        request.allowsExpensiveNetworkAccess = false
        request.allowsConstrainedNetworkAccess = false
        request.assumesHTTP3Capable = true
        request.attribution = .user
        request.requiresDNSSECValidation = true
        request.allowsPersistentDNS = true
        request.cookiePartitionIdentifier = "partition"
        #expect(!request.allowsExpensiveNetworkAccess && !request.allowsConstrainedNetworkAccess)
        #expect(request.assumesHTTP3Capable && request.requiresDNSSECValidation && request.allowsPersistentDNS)
        #expect(request.attribution == .user && request.cookiePartitionIdentifier == "partition")
        request.allowsExpensiveNetworkAccess = true
        #expect(request.allowsExpensiveNetworkAccess && !request.allowsConstrainedNetworkAccess, "one switch changed, the others kept")
    }

    @Test func theOtherFieldsSurviveASwitch() {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 12)
        request.httpMethod = "PUT"
        request.setValue("Bearer t", forHTTPHeaderField: "Authorization")
        request.httpBody = Data("body".utf8)
        request.mainDocumentURL = URL(string: "https://example.com/")
        request.networkServiceType = .background
        request.allowsCellularAccess = false
        request.httpShouldHandleCookies = false
        let before = request
        request.allowsConstrainedNetworkAccess = false
        #expect(request == before, "corelibs' equality: the switches are not part of it")
        #expect(request.url == url && request.httpMethod == "PUT" && request.timeoutInterval == 12)
        #expect(request.cachePolicy == .reloadIgnoringLocalCacheData && request.value(forHTTPHeaderField: "authorization") == "Bearer t")
        #expect(request.httpBody == Data("body".utf8) && request.mainDocumentURL == URL(string: "https://example.com/"))
        #expect(request.networkServiceType == .background && !request.allowsCellularAccess)
        #expect(!request.httpShouldHandleCookies)
        // A body stream stays a stream.
        var streamed = URLRequest(url: url)
        streamed.httpBodyStream = InputStream(data: Data("s".utf8))
        streamed.allowsExpensiveNetworkAccess = false
        #expect(streamed.httpBodyStream != nil && streamed.httpBody == nil)
        // A URL set to nil stays nil, and setting a switch does not stop the program (corelibs'
        // own copy of such a request would); it reads the defaults while it has no URL.
        var unaddressed = URLRequest(url: url)
        unaddressed.url = nil
        unaddressed.allowsExpensiveNetworkAccess = false
        #expect(unaddressed.url == nil && unaddressed.allowsExpensiveNetworkAccess)
        unaddressed.url = url
        #expect(!unaddressed.allowsExpensiveNetworkAccess, "kept meanwhile")
    }

    @Test func copiesHaveValueSemantics() {
        var original = URLRequest(url: url)
        original.allowsExpensiveNetworkAccess = false
        var copy = original
        copy.allowsExpensiveNetworkAccess = true
        #expect(!original.allowsExpensiveNetworkAccess && copy.allowsExpensiveNetworkAccess)
        // A change to another field of a shared box copies it: both keep their switches.
        let shared = original
        original.setValue("1", forHTTPHeaderField: "X-Changed")
        original.timeoutInterval = 5
        #expect(!original.allowsExpensiveNetworkAccess && !shared.allowsExpensiveNetworkAccess)
        #expect(shared.value(forHTTPHeaderField: "X-Changed") == nil && original.value(forHTTPHeaderField: "X-Changed") == "1")
        // And a change to a switch of one leaves the other's.
        var second = shared
        second.attribution = .user
        #expect(shared.attribution == .developer && !second.allowsExpensiveNetworkAccess)
    }

    @Test func aTimeoutSetBeforeASwitchStillBoundsTheTransfer() throws {
        // corelibs honours a request's own timeout only when it was set (a flag beside the
        // box): a switch set after it must not make the session's 60 s apply instead.
        let silent = try LoopbackHTTPServer(body: nil)
        defer { silent.close() }
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(silent.port)/slow")!)
        request.timeoutInterval = 1
        request.allowsExpensiveNetworkAccess = false
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let done = DispatchSemaphore(value: 0)
        let failure = Mutex<URLError.Code?>(nil)
        session.dataTask(with: request) { _, _, error in
            failure.withLock { $0 = (error as? URLError)?.code }
            done.signal()
        }.resume()
        #expect(done.wait(timeout: .now() + 30) == .success, "timed out by the request's 1 s, not the session's 60 s")
        #expect(failure.withLock { $0 } == .timedOut)
    }

    @Test func aSwitchedRequestIsSentAsAnyOtherAndItsTaskKeepsTheSwitches() throws {
        let server = try LoopbackHTTPServer(body: nil, echoing: true)
        defer { server.close() }
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(server.port)/upload")!)
        request.httpMethod = "POST"
        request.setValue("yes", forHTTPHeaderField: "X-Probe")
        request.allowsConstrainedNetworkAccess = false
        request.httpBody = Data("payload after the switch".utf8)
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let done = DispatchSemaphore(value: 0)
        let echoed = Mutex<String?>(nil)
        let task = session.dataTask(with: request) { data, _, _ in
            echoed.withLock { $0 = data.map { String(decoding: $0, as: UTF8.self) } }
            done.signal()
        }
        #expect(task.originalRequest?.allowsConstrainedNetworkAccess == false, "the task's request keeps the switch")
        task.resume()
        #expect(done.wait(timeout: .now() + 60) == .success, "the request was answered")
        let text = echoed.withLock { $0 } ?? ""
        #expect(text.hasPrefix("POST /upload HTTP/1.1"), "\(text)")
        #expect(text.lowercased().contains("x-probe: yes"))
        #expect(text.hasSuffix("payload after the switch"))
    }
}
