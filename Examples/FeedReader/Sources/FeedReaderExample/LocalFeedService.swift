import Dispatch
import Foundation
import Synchronization

/// A feed service for the real `feedreader` executable: no network on this machine, so
/// "the server" is local, with real (wall-clock) latencies.
public final class LocalFeedService: FeedService {
    private let fetchLatency: TimeInterval
    private let uploadLatency: TimeInterval
    private let queue = DispatchQueue(label: "feedreader.network")

    /// A local server answering fetches after `fetchLatency` and uploads after `uploadLatency` seconds.
    public init(fetchLatency: TimeInterval = 0.2, uploadLatency: TimeInterval = 0.5) {
        self.fetchLatency = fetchLatency
        self.uploadLatency = uploadLatency
    }

    final class Request: Cancellable {
        let cancelled = Mutex(false)
        func cancel() { cancelled.withLock { $0 = true } }
    }

    struct Cancelled: Error {}

    public func fetchLatest(since: Date?, completion: @escaping @Sendable (Result<[Article], any Error>) -> Void) -> any Cancellable {
        let request = Request()
        queue.asyncAfter(deadline: .now() + fetchLatency) {
            if request.cancelled.withLock({ $0 }) {
                completion(.failure(Cancelled()))
            } else {
                completion(.success([Article(title: "Local news", published: Date())]))
            }
        }
        return request
    }

    public func uploadDraft(_ draft: String, completion: @escaping @Sendable (Bool) -> Void) {
        queue.asyncAfter(deadline: .now() + uploadLatency) { completion(true) }
    }
}
