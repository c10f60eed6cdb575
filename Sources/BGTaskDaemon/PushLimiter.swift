import Foundation
import SchedulerCore
import Synchronization

/// The per-app rate limit of remote wakes (`bgtask push`), as iOS throttles silent pushes
/// ("no more than two or three per hour"): a sliding window of the last ``Limit/count``
/// admitted pushes per app.
public final class PushLimiter: Sendable {
    /// How many pushes an app may get per period.
    public struct Limit: Sendable, Equatable {
        /// Pushes per period.
        public var count: Int = 3
        /// The period.
        public var period: TimeInterval = 3600

        /// The default: 3 per hour.
        public init(count: Int = 3, period: TimeInterval = 3600) {
            self.count = max(1, count)
            self.period = max(0, period)
        }
    }

    /// The limit.
    public let limit: Limit
    private let admitted = Mutex<[AppID: [Date]]>([:])

    /// A limiter with `limit`.
    public init(limit: Limit) { self.limit = limit }

    /// Gives back the push admitted to `app` at `now` (it could not be delivered: a push
    /// that never woke the app does not count).
    public func forget(_ app: AppID, at now: Date) {
        admitted.withLock { admitted in
            if let index = admitted[app]?.lastIndex(of: now) { admitted[app]?.remove(at: index) }
        }
    }

    /// Forgets every push admitted to `app` (it was uninstalled: a reinstalled app starts
    /// afresh, as a new install on iOS).
    public func reset(_ app: AppID) {
        _ = admitted.withLock { $0.removeValue(forKey: app) }
    }

    /// Admits a push to `app` at `now` (`nil`), or says how long until the next is allowed.
    public func admit(_ app: AppID, at now: Date) -> TimeInterval? {
        admitted.withLock { admitted in
            var recent = (admitted[app] ?? []).filter { now.timeIntervalSince($0) < limit.period }
            if recent.count >= limit.count, let oldest = recent.first {
                admitted[app] = recent
                return max(0, oldest.addingTimeInterval(limit.period).timeIntervalSince(now))
            }
            recent.append(now)
            admitted[app] = recent
            return nil
        }
    }
}
