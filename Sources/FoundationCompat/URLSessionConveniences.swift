// URLSession's `async` transfers without a delegate, as Apple's SDK has them beside the forms
// that take one (imported from Objective-C's completion-handler methods): an app's protocol
// over URLSession (`protocol URLSessionProtocol { func data(from url: URL) async throws ->
// (Data, URLResponse) }`, then `extension URLSession: URLSessionProtocol {}`, a common test
// seam) is satisfied on iOS. swift-corelibs-foundation has only the forms with
// `delegate: ... = nil`, and a defaulted parameter satisfies no requirement (the tenth outside
// probe: an RSS reader's network service). Each calls the corelibs form with no delegate, and
// a call written `session.data(from: url)` takes this one (fewer defaulted arguments).
import Foundation
import FoundationNetworking

extension URLSession {
    /// The data at `url` and its response (Apple: `data(from:)`, iOS 15).
    public func data(from url: URL) async throws -> (Data, URLResponse) {
        try await data(from: url, delegate: nil)
    }

    /// The data `request` answers with and its response (Apple: `data(for:)`, iOS 15).
    public func data(for request: URLRequest) async throws -> (Data, URLResponse) {
        try await data(for: request, delegate: nil)
    }

    /// Uploads `bodyData` with `request` (Apple: `upload(for:from:)`, iOS 15).
    public func upload(for request: URLRequest, from bodyData: Data) async throws -> (Data, URLResponse) {
        try await upload(for: request, from: bodyData, delegate: nil)
    }

    /// Uploads the file at `fileURL` with `request` (Apple: `upload(for:fromFile:)`, iOS 15).
    public func upload(for request: URLRequest, fromFile fileURL: URL) async throws -> (Data, URLResponse) {
        try await upload(for: request, fromFile: fileURL, delegate: nil)
    }

    /// Downloads `url` to a temporary file (Apple: `download(from:)`, iOS 15).
    public func download(from url: URL) async throws -> (URL, URLResponse) {
        try await download(from: url, delegate: nil)
    }

    /// Downloads what `request` answers with to a temporary file (Apple: `download(for:)`, iOS 15).
    public func download(for request: URLRequest) async throws -> (URL, URLResponse) {
        try await download(for: request, delegate: nil)
    }
}
