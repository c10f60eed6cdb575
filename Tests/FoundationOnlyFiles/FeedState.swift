// Files of an app that import Foundation alone, as SwiftUI apps write their models and
// fetchers (the tenth outside probe: an RSS reader's `AppState: ObservableObject`, podcast and
// upload managers' `URLSession` code): on iOS Foundation brings Combine, URLSession and Core
// Foundation's clock. On Linux they compile when the target imports FoundationCompat into
// every file (`-import-module FoundationCompat`, this target's setting in Package.swift; docs/
// porting.md, "Files that import Foundation alone"). Swift 5 mode, warnings as errors.
import Foundation

/// The app's shared state, as the probe's reader declares it.
public final class FeedState: ObservableObject {
    public static let shared = FeedState()

    @Published public var isRefreshing = false
    @Published public var lastRefresh: Date?

    public init() {}

    /// Marks a refresh done at `date`.
    public func finished(at date: Date) {
        isRefreshing = false
        lastRefresh = date
    }
}

/// A fetcher with its own session, as a refresh handler's service keeps one.
public final class FeedFetcher {
    public let session: URLSession
    public private(set) var startedAt: CFAbsoluteTime = 0

    public init(configuration: URLSessionConfiguration = .ephemeral) {
        session = URLSession(configuration: configuration)
    }

    /// Fetches `url`, giving up after `seconds` (as `Task.sleep(nanoseconds:)` counts them).
    public func fetch(_ url: URL, timeout seconds: UInt64) async throws -> Data {
        startedAt = CFAbsoluteTimeGetCurrent()
        return try await withThrowingTaskGroup(of: Data.self) { group in
            group.addTask { try await self.session.data(from: url).0 }
            group.addTask {
                try await Task.sleep(nanoseconds: seconds * NSEC_PER_SEC)
                throw URLError(.timedOut)
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }
}
