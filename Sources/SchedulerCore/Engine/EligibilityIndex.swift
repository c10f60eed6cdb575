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
/// - `continuedQueue`: continued-processing requests, first in first out;
/// - `deferred`: a policy holds it until an instant (heap by that instant);
/// - `parkedForApp[app]` / `parkedForDevice`: a policy holds it until the app's state or
///   the device's conditions change; only those changes look at these sets.
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
        /// A policy holds it until this instant.
        case deferred(until: Date)
        /// A policy holds it until the app's state changes (opened, switch turned on).
        case parkedForApp
        /// A policy holds it until the device's conditions change.
        case parkedForDevice

        public var description: String {
            switch self {
            case .waiting: return "waiting for its earliest begin date"
            case .ready: return "eligible"
            case .blocked(let condition): return "blocked on \(condition)"
            case .busy: return "waiting for its previous run to end"
            case .continuedQueue: return "queued behind running continued-processing work"
            case .deferred(let until): return "held by a policy until \(until)"
            case .parkedForApp: return "held by a policy until the app's state changes"
            case .parkedForDevice: return "held by a policy until the device's conditions change"
            }
        }
    }

    /// A request that moved to a new place, for the timeline ("became eligible").
    public struct Transition: Hashable, Sendable {
        /// The request that moved.
        public var key: RequestKey
        /// Where it is now.
        public var location: Location

        /// Creates a transition.
        public init(key: RequestKey, location: Location) {
            self.key = key
            self.location = location
        }
    }

    private struct Entry: Sendable {
        var request: PendingRequest
        var order: Order
        var location: Location
        /// When it first became due (set the first time it leaves `waiting`; what the
        /// starvation and throttle policies measure from).
        var eligibleSince: Date?
    }

    private var entries: [RequestKey: Entry] = [:]
    private var waiting = IndexedHeap<RequestKey, Order>()
    private var ready = IndexedHeap<RequestKey, Order>()
    private var blocked: [RequiredCondition: IndexedHeap<RequestKey, Order>] = [:]
    private var busy: Set<RequestKey> = []
    private var continuedQueue = IndexedHeap<RequestKey, Order>()
    private var deferred = IndexedHeap<RequestKey, Order>()
    private var parkedForApp: [AppID: Set<RequestKey>] = [:]
    private var parkedForDevice: Set<RequestKey> = []
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

    /// Since when the request under `key` has been due (`nil` while it waits for its date).
    public func eligibleSince(of key: RequestKey) -> Date? { entries[key]?.eligibleSince }

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

    /// The earliest instant a request not yet due becomes due, or a deferral ends: the
    /// engine's next wake for pending work.
    public var nextDueDate: Date? {
        switch (waiting.min?.priority.due, deferred.min?.priority.due) {
        case let (due?, held?): return min(due, held)
        case let (due, held): return due ?? held
        }
    }

    /// The due date of the first request not yet due (for coalescing: what comes next).
    public var nextWaitingDueDate: Date? { waiting.min?.priority.due }

    /// Number of requests a policy holds (deferred or parked).
    public var heldCount: Int { deferred.count + parkedForDevice.count + parkedForApp.values.reduce(0) { $0 + $1.count } }

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
        entries[request.key] = Entry(request: request, order: order, location: .waiting, eligibleSince: nil)
        keysByApp[request.app, default: []].insert(request.identifier)
        countsByApp[request.app, default: [:]][request.kind.limitClass, default: 0] += 1
        if request.kind != .continuedProcessing, order.due > now {
            place(request.key, at: .waiting)
        } else {
            entries[request.key]?.eligibleSince = max(now, order.due)
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

    /// Moves every request whose due date (or deferral) has come into ready, blocked or busy.
    public mutating func advance(to now: Date, conditions: Conditions) -> [Transition] {
        var transitions: [Transition] = []
        for heap in [\EligibilityIndex.waiting, \EligibilityIndex.deferred] {
            while let next = self[keyPath: heap].min, next.priority.due <= now {
                self[keyPath: heap].remove(next.key)
                guard let request = entries[next.key]?.request else { continue }
                if entries[next.key]?.eligibleSince == nil { entries[next.key]?.eligibleSince = max(now, next.priority.due) }
                let location = classify(request, conditions: conditions)
                place(next.key, at: location)
                transitions.append(Transition(key: next.key, location: location))
            }
        }
        return transitions
    }

    /// The first ready request whose conditions hold and whose identifier is not running,
    /// left in place (stale entries met on the way are re-filed).
    public mutating func peekReady(conditions: Conditions) -> PendingRequest? {
        while let next = ready.min {
            guard let request = entries[next.key]?.request else { ready.remove(next.key); continue }
            let location = classify(request, conditions: conditions)
            if location == .ready { return request }
            unplace(next.key, from: .ready)
            place(next.key, at: location)
        }
        return nil
    }

    /// Holds the request under `key` for a policy: until an instant, or until the app's or
    /// the device's state changes.
    public mutating func hold(_ key: RequestKey, until wait: PolicyWait) {
        guard let entry = entries[key] else { return }
        unplace(key, from: entry.location)
        switch wait {
        case .until(let date): place(key, at: .deferred(until: date))
        case .appChange: place(key, at: .parkedForApp)
        case .deviceChange, .capacity: place(key, at: .parkedForDevice)
        }
    }

    /// Re-files every request held until `app` changes.
    public mutating func releaseHeld(for app: AppID, conditions: Conditions) -> [Transition] {
        guard let keys = parkedForApp.removeValue(forKey: app) else { return [] }
        return refile(keys.sorted { (entries[$0]?.order.sequence ?? 0) < (entries[$1]?.order.sequence ?? 0) }, conditions: conditions)
    }

    /// Re-files every request held until the device changes.
    public mutating func releaseHeldForDevice(conditions: Conditions) -> [Transition] {
        let keys = parkedForDevice.sorted { (entries[$0]?.order.sequence ?? 0) < (entries[$1]?.order.sequence ?? 0) }
        parkedForDevice.removeAll()
        return refile(keys, conditions: conditions)
    }

    private mutating func refile(_ keys: [RequestKey], conditions: Conditions) -> [Transition] {
        keys.compactMap { key in
            guard let request = entries[key]?.request else { return nil }
            let location = classify(request, conditions: conditions)
            place(key, at: location)
            return Transition(key: key, location: location)
        }
    }

    /// Re-files the requests blocked on a condition that now holds. Requests made
    /// ineligible by a condition that no longer holds are found lazily, at pop.
    public mutating func conditionsChanged(to conditions: Conditions) -> [Transition] {
        var transitions: [Transition] = []
        for condition in RequiredCondition.allCases where conditions.satisfies(condition) {
            guard let bucket = blocked.removeValue(forKey: condition), !bucket.isEmpty else { continue }
            // Drain in the heap's array order (deterministic) instead of popping: moving
            // the whole bucket costs one insertion each, not a pop and an insertion.
            transitions.reserveCapacity(transitions.count + bucket.count)
            ready.reserveCapacity(ready.count + bucket.count)
            for key in bucket.keys {
                guard let request = entries[key]?.request else { continue }
                let location = classify(request, conditions: conditions)
                place(key, at: location)
                transitions.append(Transition(key: key, location: location))
            }
        }
        return transitions
    }

    /// Removes and returns the first ready request whose conditions hold and whose
    /// identifier is not running. Stale entries met on the way are re-filed.
    public mutating func popReady(conditions: Conditions) -> PendingRequest? {
        guard let request = peekReady(conditions: conditions) else { return nil }
        remove(request.key)
        return request
    }

    /// Removes and returns the first queued continued-processing request.
    public mutating func popContinuedProcessing() -> PendingRequest? {
        guard let next = continuedQueue.min else { return nil }
        return remove(next.key)
    }


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
        case .deferred(let until): deferred.update(key, priority: Order(due: until, sequence: order.sequence))
        case .parkedForApp: parkedForApp[key.app, default: []].insert(key)
        case .parkedForDevice: parkedForDevice.insert(key)
        }
    }

    private mutating func unplace(_ key: RequestKey, from location: Location) {
        switch location {
        case .waiting: waiting.remove(key)
        case .ready: ready.remove(key)
        case .blocked(let condition): blocked[condition]?.remove(key)
        case .busy: busy.remove(key)
        case .continuedQueue: continuedQueue.remove(key)
        case .deferred: deferred.remove(key)
        case .parkedForApp:
            parkedForApp[key.app]?.remove(key)
            if parkedForApp[key.app]?.isEmpty == true { parkedForApp[key.app] = nil }
        case .parkedForDevice: parkedForDevice.remove(key)
        }
    }
}
