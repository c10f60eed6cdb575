// A network service over a protocol that URLSession adopts, as apps write the test seam (the
// tenth outside probe: an RSS reader): `data(from:)` without a delegate, as Apple's SDK has it.
// Swift 6 mode, warnings as errors.
import Foundation
import Network
import Testing

protocol URLSessionProtocol: Sendable {
    func data(from url: URL) async throws -> (Data, URLResponse)
    func data(for request: URLRequest) async throws -> (Data, URLResponse)
    func upload(for request: URLRequest, from bodyData: Data) async throws -> (Data, URLResponse)
    func download(from url: URL) async throws -> (URL, URLResponse)
}

extension URLSession: URLSessionProtocol {}

@Suite struct URLSessionSeamTests {
    @Test func urlSessionAdoptsAProtocolOfItsDelegateFreeTransfers() async {
        let session: any URLSessionProtocol = URLSession(configuration: .ephemeral)
        // swift-corelibs-foundation serves no file: URL: its own error proves the call went through.
        do {
            _ = try await session.data(from: URL(fileURLWithPath: "/nonexistent/feed.xml"))
            Issue.record("a file: URL was fetched")
        } catch {
            #expect((error as NSError).code == NSURLErrorUnsupportedURL, "\(error)")
        }
        // Written directly, the call is not ambiguous with the form that takes a delegate.
        let direct = URLSession(configuration: .ephemeral)
        do { _ = try await direct.data(from: URL(fileURLWithPath: "/nonexistent/feed.xml")) } catch {}
    }
}
