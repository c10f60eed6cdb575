import Foundation

/// Pending requests indexed by when they become due and by the condition that blocks
/// them, so that choosing the next run, cancelling a request, or reacting to a condition
/// change never scans everything pending.
///
/// Every pending request is in exactly one place:
/// - `waiting`: not due yet, ordered by due date;
/// - `ready`: due, every required condition holds, ordered by (due date, submission order);
/// - `blocked[condition]`: due, but `condition` does not hold;
/// - `busy`: due, but a run of the same identifier is still in progress;
/// - `continuedQueue`: continued-processing requests, first in first out.
public struct EligibilityIndex: Sendable {
    /// Orders requests by due date, then by submission order (stable and deterministic).
    public struct Order: Comparable, Hashable, Sendable {
        /// When the request becomes due.
        public var due: Date
        /// The submission sequence number, unique per engine.
        public var sequence: UInt64

        public static func < (lhs: Order, rhs: Order) -> Bool {
            (lhs.due, lhs.sequence) < (rhs.due, rhs.sequence)
        }
    }

    /// Where a pending request currently sits.
    public enum Location: Hashable, Sendable, CustomStringConvertible {
        case waiting
        case ready
        case blocked(RequiredCondition)
        case busy
        case continuedQueue

        public var description: String {
            switch self {
            case .waiting: return "waiting for its earliest begin date"
            case .ready: return "eligible"
            case .blocked(let condition): return "blocked on \(condition)"
            case .busy: return "waiting for its previous run to end"
            case .continuedQueue: return "queued behind running continued-processing work"
            }
        }
    }

    /// A request that moved to a new place, for the timeline ("became eligible").
    public struct Transition: Hashable, Sendable {
        /// The request that moved.
        public var key: RequestKey
        /// Where it is now.
        public var location: Location
    }

    private struct Entry: Sendable {
        var request: PendingRequest
        var order: Order
        var location: Location
    }

    private var entries: [RequestKey: Entry] = [:]
    private var waiting = IndexedHeap<RequestKey, Order>()
    private var ready = IndexedHeap<RequestKey, Order>()
    private var blocked: [RequiredCondition: IndexedHeap<RequestKey, Order>] = [:]
    private var busy: Set<RequestKey> = []
    private var continuedQueue = IndexedHeap<RequestKey, Order>()
    private var running: Set<RequestKey> = []
    private var keysByApp: [AppID: Set<String>] = [:]
    private var countsByApp: [AppID: [PendingLimitClass: Int]] = [:]

    /// Creates an empty index.
    public init() {}

    /// Number of pending requests.
    public var count: Int { entries.count }

    /// The pending request under `key`.
    public func request(for key: RequestKey) -> PendingRequest? { entries[key]?.request }

    /// Where the request under `key` sits.
    public func location(of key: RequestKey) -> Location? { entries[key]?.location }

    /// The pending requests of `app`, in submission order.
    public func requests(of app: AppID) -> [PendingRequest] {
        (keysByApp[app] ?? [])
            .compactMap { entries[RequestKey(app: app, identifier: $0)] }
            .sorted { $0.order.sequence < $1.order.sequence }
            .map(\.request)
    }

    /// Every pending request, in submission order.
    public var allRequests: [PendingRequest] {
        entries.values.sorted { $0.order.sequence < $1.order.sequence }.map(\.request)
    }

    /// How many requests of `limitClass` `app` has pending.
    public func pendingCount(of app: AppID, in limitClass: PendingLimitClass) -> Int {
        countsByApp[app]?[limitClass] ?? 0
    }

    /// The earliest due date among requests not yet due, for the engine's next wake.
    public var nextDueDate: Date? { waiting.min?.priority.due }

    /// Whether some request is ready to launch (conditions are re-checked at pop).
    public var hasReady: Bool { !ready.isEmpty }

    /// Whether some continued-processing request is queued.
    public var hasQueuedContinuedProcessing: Bool { !continuedQueue.isEmpty }

    /// Adds `request` (replacing any pending request with the same key) and files it
    /// according to `now` and `conditions`. Returns the request it replaced, if any.
    @discardableResult
    public mutating func insert(_ request: PendingRequest, sequence: UInt64, now: Date, conditions: Conditions) -> PendingRequest? {
        let replaced = remove(request.key)
        let order = Order(due: request.dueDate, sequence: sequence)
        entries[request.key] = Entry(request: request, order: order, location: .waiting)
        keysByApp[request.app, default: []].insert(request.identifier)
        countsByApp[request.app, default: [:]][request.kind.limitClass, default: 0] += 1
        if request.kind != .continuedProcessing, order.due > now {
            place(request.key, at: .waiting)
        } else {
            place(request.key, at: classify(request, conditions: conditions))
        }
        return replaced
    }

    /// Removes the request under `key` and returns it.
    @discardableResult
    public mutating func remove(_ key: RequestKey) -> PendingRequest? {
        guard let entry = entries.removeValue(forKey: key) else { return nil }
        unplace(key, from: entry.location)
        keysByApp[key.app]?.remove(key.identifier)
        if keysByApp[key.app]?.isEmpty == true { keysByApp[key.app] = nil }
        countsByApp[key.app]?[entry.request.kind.limitClass, default: 1] -= 1
        return entry.request
    }

    /// Removes every request of `app` and returns them.
    public mutating func removeAll(of app: AppID) -> [PendingRequest] {
        let identifiers = (keysByApp[app] ?? []).sorted()
        return identifiers.compactMap { remove(RequestKey(app: app, identifier: $0)) }
    }

    /// Moves every request whose due date has come into ready, blocked or busy.
    public mutating func advance(to now: Date, conditions: Conditions) -> [Transition] {
        var transitions: [Transition] = []
        while let next = waiting.min, next.priority.due <= now {
            waiting.remove(next.key)
            guard let request = entries[next.key]?.request else { continue }
            let location = classify(request, conditions: conditions)
            place(next.key, at: location)
            transitions.append(Transition(key: next.key, location: location))
        }
        return transitions
    }

    /// Re-files the requests blocked on a condition that now holds. Requests made
    /// ineligible by a condition that no longer holds are found lazily, at pop.
    public mutating func conditionsChanged(to conditions: Conditions) -> [Transition] {
        var transitions: [Transition] = []
        for condition in RequiredCondition.allCases where conditions.satisfies(condition) {
            guard var bucket = blocked[condition], !bucket.isEmpty else { continue }
            blocked[condition] = nil
            while let next = bucket.popMin() {
                guard let request = entries[next.key]?.request else { continue }
                let location = classify(request, conditions: conditions)
                place(next.key, at: location)
                transitions.append(Transition(key: next.key, location: location))
            }
        }
        return transitions
    }

    /// Removes and returns the first ready request whose conditions hold and whose
    /// identifier is not running. Stale entries met on the way are re-filed.
    public mutating func popReady(conditions: Conditions) -> PendingRequest? {
        while let next = ready.min {
            guard let request = entries[next.key]?.request else { ready.remove(next.key); continue }
            let location = classify(request, conditions: conditions)
            if location != .ready {
                unplace(next.key, from: .ready)
                place(next.key, at: location)
                continue
            }
            remove(next.key)
            return request
        }
        return nil
    }

    /// Removes and returns the first queued continued-processing request.
    public mutating func popContinuedProcessing() -> PendingRequest? {
        guard let next = continuedQueue.min else { return nil }
        return remove(next.key)
    }

    /// Removes and returns the request under `key` wherever it sits (simulated launch).
    public mutating func take(_ key: RequestKey) -> PendingRequest? { remove(key) }

    /// Records that a run of `key` started, so a new request under the same key waits.
    public mutating func markRunning(_ key: RequestKey) { running.insert(key) }

    /// Records that the run of `key` ended; a request waiting for it becomes eligible.
    public mutating func markFinished(_ key: RequestKey, conditions: Conditions) -> [Transition] {
        running.remove(key)
        guard busy.contains(key), let request = entries[key]?.request else { return [] }
        busy.remove(key)
        let location = classify(request, conditions: conditions)
        place(key, at: location)
        return [Transition(key: key, location: location)]
    }

    /// Whether a run of `key` is in progress.
    public func isRunning(_ key: RequestKey) -> Bool { running.contains(key) }

    private func classify(_ request: PendingRequest, conditions: Conditions) -> Location {
        if running.contains(request.key) { return .busy }
        if request.kind == .continuedProcessing { return .continuedQueue }
        if let unmet = conditions.firstUnmet(of: request.requiredConditions) { return .blocked(unmet) }
        return .ready
    }

    private mutating func place(_ key: RequestKey, at location: Location) {
        guard let order = entries[key]?.order else { return }
        entries[key]?.location = location
        switch location {
        case .waiting: waiting.update(key, priority: order)
        case .ready: ready.update(key, priority: order)
        case .blocked(let condition): blocked[condition, default: IndexedHeap()].update(key, priority: order)
        case .busy: busy.insert(key)
        case .continuedQueue: continuedQueue.update(key, priority: order)
        }
    }

    private mutating func unplace(_ key: RequestKey, from location: Location) {
        switch location {
        case .waiting: waiting.remove(key)
        case .ready: ready.remove(key)
        case .blocked(let condition): blocked[condition]?.remove(key)
        case .busy: busy.remove(key)
        case .continuedQueue: continuedQueue.remove(key)
        }
    }
}
