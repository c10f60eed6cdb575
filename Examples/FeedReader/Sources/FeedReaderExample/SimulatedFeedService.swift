import BackgroundTasks
import BackgroundTasksTesting
import Foundation
import Synchronization

/// The feed server as the simulator sees it: responses take `latency` seconds of
/// virtual time, and fail while the simulated device has no network.
public final class SimulatedFeedService: FeedService {
    private let device: SimulatedDevice
    private let latency: TimeInterval

    /// A server `latency` seconds away from `device`.
    public init(device: SimulatedDevice, latency: TimeInterval = 4) {
        self.device = device
        self.latency = latency
    }

    struct Offline: Error {}
    struct Cancelled: Error {}

    final class Request: Cancellable {
        let cancelled = Mutex(false)
        func cancel() { cancelled.withLock { $0 = true } }
    }

    public func fetchLatest(since: Date?, completion: @escaping @Sendable (Result<[Article], any Error>) -> Void) -> any Cancellable {
        let request = Request()
        let device = self.device
        device.schedule(after: latency) {
            if request.cancelled.withLock({ $0 }) {
                completion(.failure(Cancelled()))
            } else if !device.driver.conditions.networkAvailable {
                completion(.failure(Offline()))
            } else {
                completion(.success([Article(title: "News at \(device.now)", published: device.now)]))
            }
        }
        return request
    }

    public func uploadDraft(_ draft: String, completion: @escaping @Sendable (Bool) -> Void) {
        let device = self.device
        device.schedule(after: latency) {
            completion(device.driver.conditions.networkAvailable)
        }
    }
}
