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

        public var description: String { description(heldBy: nil) }

        /// The description, naming what holds a held request (`heldBy`, as a
        /// ``Transition/heldBy``) where it says "a policy" otherwise.
        public func description(heldBy: String?) -> String {
            let holder = heldBy ?? "a policy"
            switch self {
            case .waiting: return "waiting for its earliest begin date"
            case .ready: return "eligible"
            case .blocked(let condition): return "blocked on \(condition)"
            case .busy: return "waiting for its previous run to end"
            case .continuedQueue: return "queued behind running continued-processing work"
            case .deferred(let until): return "held by \(holder) until \(until)"
            case .parkedForApp: return "held by \(holder) until the app's state changes"
            case .parkedForDevice: return "held by \(holder) until the device's conditions change"
            }
        }
    }

    /// A request that moved to a new place, for the timeline ("became eligible").
    public struct Transition: Hashable, Sendable {
        /// The request that moved.
        public var key: RequestKey
        /// Where it is now.
        public var location: Location
        /// The policies that hold it there, for a request the launch loop judged and held
        /// (the first blocking policy met, or every blocking one, or "a low score"); `nil`
        /// for any other move, and for a weighed judgement when the engine keeps no
        /// rationales (``SchedulerConfiguration/explainsLaunches`` off: fleets and
        /// simulations that record no trace). What the trace and the timeline name.
        public var heldBy: String?

        /// Creates a transition.
        public init(key: RequestKey, location: Location, heldBy: String? = nil) {
            self.key = key
            self.location = location
            self.heldBy = heldBy
        }
    }

    /// A pending request's number inside the index: its facts live in arrays indexed by
    /// it, and the heaps track positions by it, so moving requests between places (the
    /// bulk of a condition change) never hashes a request key.
    private typealias Slot = Int32

    /// What filing a request looks at, kept apart from the request itself: plain values,
    /// so re-filing thousands of requests copies no strings and retains nothing.
    private struct Filing: Sendable {
        var order: Order
        var location: Location
        var isContinuedProcessing: Bool
        var requiresExternalPower: Bool
        var requiresNetwork: Bool
        /// A run under the same key is in progress (kept here so that filing the request
        /// never looks the key up in `running`).
        var keyIsRunning: Bool
        /// When it first became due (set the first time it leaves `waiting`; what the
        /// starvation and throttle policies measure from).
        var eligibleSince: Date?
        /// Since when it has been ready to run without a break: stamped when it enters
        /// `ready` from `waiting`, `blocked` or `busy` (its date came, its conditions came
        /// to hold, its key's run ended), kept while a policy holds it (what the
        /// wake-sharing policy measures its wait from).
        var readySince: Date?
    }

    /// A pending request and its key, by slot (`nil` for a free slot).
    private var records: ContiguousArray<(request: PendingRequest, key: RequestKey)?> = []
    /// The filing facts of each slot (meaningful while its record is set).
    private var filings: ContiguousArray<Filing> = []
    private var freeSlots: [Slot] = []
    private var slotsByKey: [RequestKey: Slot] = [:]
    private var waiting = SlotHeap<Order>()
    private var ready = SlotHeap<Order>()
    /// One heap per required condition, at ``RequiredCondition/bucket``.
    private var blocked = [SlotHeap<Order>](repeating: SlotHeap(), count: RequiredCondition.allCases.count)
    private var busy: Set<Slot> = []
    private var continuedQueue = SlotHeap<Order>()
    private var deferred = SlotHeap<Order>()
    /// The deferred requests a run starting earlier also releases (held ``PolicyWait/untilWake(_:)``).
    private var deferredUntilWake: Set<Slot> = []
    private var parkedForApp: [AppID: Set<Slot>] = [:]
    private var parkedForDevice: Set<Slot> = []
    private var running: Set<RequestKey> = []
    /// Each app's pending requests (one lookup per app for both the slots and the counts).
    private var byApp: [AppID: AppRequests] = [:]

    /// One app's pending requests: their slots, and how many there are of each limit class.
    private struct AppRequests: Sendable {
        var slots: Set<Slot> = []
        private var counts = (refresh: 0, processing: 0, continuedProcessing: 0)

        subscript(limitClass: PendingLimitClass) -> Int {
            get {
                switch limitClass {
                case .refresh: counts.refresh
                case .processing: counts.processing
                case .continuedProcessing: counts.continuedProcessing
                }
            }
            set {
                switch limitClass {
                case .refresh: counts.refresh = newValue
                case .processing: counts.processing = newValue
                case .continuedProcessing: counts.continuedProcessing = newValue
                }
            }
        }

        mutating func add(_ slot: Slot, of limitClass: PendingLimitClass) {
            slots.insert(slot)
            self[limitClass] += 1
        }
    }

    /// Whether app refresh is filed as needing the network, although its request cannot say
    /// so (``PolicyConfiguration/refreshRequiresNetwork``): offline, it then waits in the
    /// network's bucket, drained only when the network returns, instead of being judged
    /// at every other change. Change it with ``setRefreshRequiresNetwork(_:conditions:)``.
    public private(set) var refreshRequiresNetwork = true

    /// Creates an empty index.
    public init(refreshRequiresNetwork: Bool = true) {
        self.refreshRequiresNetwork = refreshRequiresNetwork
    }

    /// Makes room for `count` requests at once (a restore of a large store), so the
    /// tables are not grown one insert at a time.
    public mutating func reserveCapacity(_ count: Int) {
        records.reserveCapacity(count)
        filings.reserveCapacity(count)
        slotsByKey.reserveCapacity(count)
    }

    /// Changes ``refreshRequiresNetwork`` and re-files the refreshes it concerns.
    public mutating func setRefreshRequiresNetwork(_ requires: Bool, conditions: Conditions) -> [Transition] {
        guard requires != refreshRequiresNetwork else { return [] }
        refreshRequiresNetwork = requires
        var moved: [Slot] = []
        for slot in inSubmissionOrder(slotsByKey.values) where records[Int(slot)]?.request.kind == .appRefresh {
            filings[Int(slot)].requiresNetwork = requires || records[Int(slot)]!.request.requiresNetworkConnectivity
            // Only a refresh that was filed by its conditions moves; the others are
            // classified again when they leave where they are.
            switch filings[Int(slot)].location {
            case .ready, .blocked:
                unplace(slot, from: filings[Int(slot)].location)
                moved.append(slot)
            default:
                continue
            }
        }
        return refile(moved, conditions: conditions)
    }

    /// Number of pending requests.
    public var count: Int { slotsByKey.count }

    /// The pending request under `key`.
    public func request(for key: RequestKey) -> PendingRequest? { slotsByKey[key].flatMap { records[Int($0)]?.request } }

    /// The kind of the pending request under `key` (without copying the request).
    public func kind(of key: RequestKey) -> TaskKind? { slotsByKey[key].flatMap { records[Int($0)]?.request.kind } }

    /// Where the request under `key` sits.
    public func location(of key: RequestKey) -> Location? { slotsByKey[key].map { filings[Int($0)].location } }

    /// Since when the request under `key` has been due (`nil` while it waits for its date).
    public func eligibleSince(of key: RequestKey) -> Date? { slotsByKey[key].flatMap { filings[Int($0)].eligibleSince } }

    /// Since when the pending request under `key` has been ready to run without a break
    /// (``Candidate/readySince``), if it has been stamped.
    public func readySince(of key: RequestKey) -> Date? { slotsByKey[key].flatMap { filings[Int($0)].readySince } }

    /// The pending requests of `app`, in submission order.
    public func requests(of app: AppID) -> [PendingRequest] {
        inSubmissionOrder(byApp[app]?.slots ?? []).compactMap { records[Int($0)]?.request }
    }

    /// Every pending request, in submission order.
    public var allRequests: [PendingRequest] {
        inSubmissionOrder(slotsByKey.values).compactMap { records[Int($0)]?.request }
    }

    /// How many requests of `limitClass` `app` has pending.
    public func pendingCount(of app: AppID, in limitClass: PendingLimitClass) -> Int {
        byApp[app]?[limitClass] ?? 0
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

    /// The earliest instant at which a policy's hold on a request ends: the next time the
    /// engine judges a held request again (an app refresh placed shortly before a likely
    /// launch, a rate limit's end), the next wake it plans for.
    public var nextDeferralEnd: Date? { deferred.min?.priority.due }

    /// ``nextDeferralEnd`` leaving out the hold on the request under `key` (a request held
    /// until an instant does not wait for its own hold to end).
    public func nextDeferralEnd(excluding key: RequestKey) -> Date? {
        guard let slot = slotsByKey[key] else { return nextDeferralEnd }
        return deferred.minPriority(excluding: slot)?.due
    }

    /// Number of requests a policy holds (deferred or parked).
    public var heldCount: Int { deferred.count + parkedForDevice.count + parkedForApp.values.reduce(0) { $0 + $1.count } }

    /// Whether a pending request's fate turns on the device's readings now: one is ready,
    /// blocked on a required condition, or held until the device changes. Requests waiting
    /// for their date, deferred to an instant (a timer wakes for them) or parked until
    /// their app changes do not: the device need not be read for them until then.
    public var dependsOnDeviceReadings: Bool {
        !ready.isEmpty || !parkedForDevice.isEmpty || !continuedQueue.isEmpty || blocked.contains { !$0.isEmpty }
    }

    /// Whether some request is ready to launch (conditions are re-checked at pop).
    public var hasReady: Bool { !ready.isEmpty }

    /// Whether some continued-processing request is queued.
    public var hasQueuedContinuedProcessing: Bool { !continuedQueue.isEmpty }

    /// Adds `request` (replacing any pending request with the same key) and files it
    /// according to `now` and `conditions`. Returns the request it replaced, if any.
    ///
    /// A request already due is eligible since `now` (it was just filed), unless
    /// `filedEarlier`: a request read back from a store (a restart, another replica's
    /// submission) has been due since its due date, or its submission if that came later,
    /// and a restart must not start its wait again (the starvation guard and the throttle
    /// measure from it).
    @discardableResult
    public mutating func insert(_ request: PendingRequest, sequence: UInt64, now: Date, conditions: Conditions, filedEarlier: Bool = false) -> PendingRequest? {
        let key = request.key
        let replaced = remove(key)
        insert(request, key: key, sequence: sequence, now: now, conditions: conditions, filedEarlier: filedEarlier)
        return replaced
    }

    /// ``insert(_:sequence:now:conditions:filedEarlier:)`` of a request read back from a
    /// store, whose key is not pending (nothing to replace): what restoring a store's rows
    /// does, one lookup fewer each. Internal: only ``SchedulerEngine/restore(_:at:)`` calls
    /// it, right after finding the key absent (a pending key would leave its old slot
    /// filed: checked in debug builds).
    mutating func insertNew(_ request: PendingRequest, sequence: UInt64, now: Date, conditions: Conditions) {
        insert(request, key: request.key, sequence: sequence, now: now, conditions: conditions, filedEarlier: true)
    }

    private mutating func insert(_ request: PendingRequest, key: RequestKey, sequence: UInt64, now: Date, conditions: Conditions, filedEarlier: Bool) {
        assert(slotsByKey[key] == nil, "\(key) is already pending")
        let order = Order(due: request.dueDate, sequence: sequence)
        let slot: Slot
        if let free = freeSlots.popLast() {
            slot = free
        } else {
            slot = Slot(records.count)
            records.append(nil)
            filings.append(Filing(order: order, location: .waiting, isContinuedProcessing: false, requiresExternalPower: false, requiresNetwork: false, keyIsRunning: false))
        }
        let isDue = request.kind == .continuedProcessing || order.due <= now
        records[Int(slot)] = (request, key)
        filings[Int(slot)] = Filing(
            order: order, location: .waiting,
            isContinuedProcessing: request.kind == .continuedProcessing,
            requiresExternalPower: request.requiresExternalPower,
            requiresNetwork: request.needsNetwork(refreshRequiresNetwork: refreshRequiresNetwork),
            keyIsRunning: !running.isEmpty && running.contains(key),
            eligibleSince: isDue ? (filedEarlier ? min(now, max(order.due, request.submittedAt)) : max(now, order.due)) : nil,
            readySince: nil
        )
        slotsByKey[key] = slot
        byApp[request.app, default: AppRequests()].add(slot, of: request.kind.limitClass)
        place(slot, at: isDue ? classify(slot, conditions: conditions) : .waiting, readyAt: now)
    }

    /// Removes the request under `key` and returns it.
    @discardableResult
    public mutating func remove(_ key: RequestKey) -> PendingRequest? {
        guard let slot = slotsByKey.removeValue(forKey: key), let request = records[Int(slot)]?.request else { return nil }
        unplace(slot, from: filings[Int(slot)].location)
        records[Int(slot)] = nil
        freeSlots.append(slot)
        if let entry = byApp.index(forKey: key.app) {
            byApp.values[entry].slots.remove(slot)
            byApp.values[entry][request.kind.limitClass] -= 1
            if byApp.values[entry].slots.isEmpty { byApp.remove(at: entry) }
        }
        return request
    }

    /// Removes every request of `app` and returns them, in identifier order.
    public mutating func removeAll(of app: AppID) -> [PendingRequest] {
        let keys = (byApp[app]?.slots ?? []).compactMap { records[Int($0)]?.key }.sorted()
        return keys.compactMap { remove($0) }
    }

    /// Moves every request whose due date (or deferral) has come into ready, blocked or busy.
    public mutating func advance(to now: Date, conditions: Conditions) -> [Transition] {
        var transitions: [Transition] = []
        while let next = waiting.min, next.priority.due <= now {
            waiting.remove(next.key)
            transitions.append(refileDue(next.key, now: now, readyAt: now, conditions: conditions))
        }
        while let next = deferred.min, next.priority.due <= now {
            unplace(next.key, from: .deferred(until: next.priority.due))
            // A policy's hold ended: still ready since before it.
            transitions.append(refileDue(next.key, now: now, readyAt: nil, conditions: conditions))
        }
        return transitions
    }

    /// Files a slot just taken out of `waiting` or `deferred`.
    private mutating func refileDue(_ slot: Slot, now: Date, readyAt: Date?, conditions: Conditions) -> Transition {
        // Due since its due date, even when the owner's timer fired late (a suspended
        // machine, a busy process): a late wake does not start its wait again.
        if filings[Int(slot)].eligibleSince == nil { filings[Int(slot)].eligibleSince = min(now, filings[Int(slot)].order.due) }
        let location = classify(slot, conditions: conditions)
        place(slot, at: location, readyAt: readyAt)
        return Transition(key: records[Int(slot)]!.key, location: location)
    }

    /// The first ready request and since when it has been due.
    public struct Candidate: Sendable {
        /// The request.
        public var request: PendingRequest
        /// Since when it has been due.
        public var eligibleSince: Date
        /// Since when it has been ready to run without a break (due, its required
        /// conditions holding, no run of its key in progress; time a policy held it counts);
        /// `nil` when not stamped (``PolicyContext`` then takes ``eligibleSince``).
        public var readySince: Date?
    }

    /// The first ready request whose conditions hold and whose identifier is not running,
    /// left in place (stale entries met on the way are re-filed).
    public mutating func peekReady(conditions: Conditions) -> Candidate? {
        while let next = ready.min {
            let location = classify(next.key, conditions: conditions)
            if location == .ready {
                let filing = filings[Int(next.key)]
                return Candidate(request: records[Int(next.key)]!.request, eligibleSince: filing.eligibleSince ?? filing.order.due, readySince: filing.readySince)
            }
            unplace(next.key, from: .ready)
            place(next.key, at: location)
        }
        return nil
    }

    /// Holds the request ``peekReady(conditions:)`` just returned for a policy, without
    /// looking its key up again; returns where it went.
    public mutating func holdFirstReady(until wait: PolicyWait) -> Location {
        guard let slot = ready.min?.key else { preconditionFailure("holdFirstReady without a ready request") }
        ready.remove(slot)
        place(slot, at: Self.location(holding: wait))
        if case .untilWake = wait { deferredUntilWake.insert(slot) }
        return filings[Int(slot)].location
    }

    /// Where a request held until `wait` is filed.
    private static func location(holding wait: PolicyWait) -> Location {
        switch wait {
        case .until(let date), .untilWake(let date): return .deferred(until: date)
        case .appChange: return .parkedForApp
        case .deviceChange, .capacity: return .parkedForDevice
        }
    }

    /// Whether a request is held until an instant or a wake before it.
    public var hasHeldUntilWake: Bool { !deferredUntilWake.isEmpty }

    /// Re-files every request held until an instant or a wake before it: what the engine
    /// does when a run starts. They stay ready since when they were.
    public mutating func releaseHeldUntilWake(conditions: Conditions) -> [Transition] {
        let slots = inSubmissionOrder(deferredUntilWake)
        for slot in slots { unplace(slot, from: filings[Int(slot)].location) }
        return refile(slots, conditions: conditions)
    }

    /// Whether `app` has a request a policy holds until an instant.
    public func hasDeferred(of app: AppID) -> Bool {
        // Loops, not closures over `isDeferred`: a closure would copy the whole index.
        guard let slots = byApp[app]?.slots else { return false }
        for slot in slots where isDeferred(slot) { return true }
        return false
    }

    /// Re-files `app`'s requests a policy holds until an instant (or a wake before it): what
    /// the engine does when it launches the app, so that a task whose herd-spreading turn has
    /// not come may join its app's launch. They stay ready since when they were.
    public mutating func releaseDeferred(of app: AppID, conditions: Conditions) -> [Transition] {
        guard let slots = byApp[app]?.slots else { return [] }
        var deferred: [Slot] = []
        for slot in slots where isDeferred(slot) { deferred.append(slot) }
        let held = inSubmissionOrder(deferred)
        for slot in held { unplace(slot, from: filings[Int(slot)].location) }
        return refile(held, conditions: conditions)
    }

    /// Whether the request at `slot` is held until an instant.
    private func isDeferred(_ slot: Slot) -> Bool {
        if case .deferred = filings[Int(slot)].location { true } else { false }
    }

    /// Re-files every request held until `app` changes.
    public mutating func releaseHeld(for app: AppID, conditions: Conditions) -> [Transition] {
        guard let slots = parkedForApp.removeValue(forKey: app) else { return [] }
        return refile(inSubmissionOrder(slots), conditions: conditions)
    }

    /// Re-files every request held until the device changes.
    public mutating func releaseHeldForDevice(conditions: Conditions) -> [Transition] {
        let slots = inSubmissionOrder(parkedForDevice)
        parkedForDevice.removeAll()
        return refile(slots, conditions: conditions)
    }

    private func inSubmissionOrder(_ slots: some Sequence<Slot>) -> [Slot] {
        // Over the filings alone: a closure over `self` would copy the whole index.
        let filings = self.filings
        return slots.sorted { filings[Int($0)].order.sequence < filings[Int($1)].order.sequence }
    }

    /// Files slots that are in no place any more (their place was emptied wholesale).
    private mutating func refile(_ slots: [Slot], conditions: Conditions, readyAt: Date? = nil) -> [Transition] {
        var transitions: [Transition] = []
        refile(slots, conditions: conditions, readyAt: readyAt, into: &transitions)
        return transitions
    }

    private mutating func refile(_ slots: [Slot], conditions: Conditions, readyAt: Date? = nil, into transitions: inout [Transition]) {
        transitions.reserveCapacity(transitions.count + slots.count)
        for slot in slots {
            let location = classify(slot, conditions: conditions)
            place(slot, at: location, readyAt: readyAt)
            transitions.append(Transition(key: records[Int(slot)]!.key, location: location))
        }
    }

    /// Re-files the requests blocked on a condition that now holds. Requests made
    /// ineligible by a condition that no longer holds are found lazily, at pop.
    public mutating func conditionsChanged(to conditions: Conditions, at now: Date) -> [Transition] {
        var transitions: [Transition] = []
        for condition in RequiredCondition.allCases where conditions.satisfies(condition) {
            let bucket = blocked[condition.bucket]
            guard !bucket.isEmpty else { continue }
            blocked[condition.bucket] = SlotHeap()
            // Drain in the heap's array order (deterministic) instead of popping: moving
            // the whole bucket costs one insertion each, not a pop and an insertion.
            ready.reserveCapacity(ready.count + bucket.count)
            refile(bucket.keys, conditions: conditions, readyAt: now, into: &transitions)
        }
        return transitions
    }

    /// Removes and returns the first ready request whose conditions hold and whose
    /// identifier is not running. Stale entries met on the way are re-filed.
    public mutating func popReady(conditions: Conditions) -> PendingRequest? {
        guard let request = peekReady(conditions: conditions)?.request else { return nil }
        remove(request.key)
        return request
    }

    /// Removes and returns the first queued continued-processing request.
    public mutating func popContinuedProcessing() -> PendingRequest? {
        guard let next = continuedQueue.min, let key = records[Int(next.key)]?.key else { return nil }
        return remove(key)
    }

    /// Records that a run of `key` started, so a new request under the same key waits.
    public mutating func markRunning(_ key: RequestKey) {
        running.insert(key)
        if let slot = slotsByKey[key] { filings[Int(slot)].keyIsRunning = true }
    }

    /// Records that the run of `key` ended (at `now`); a request waiting for it becomes eligible.
    public mutating func markFinished(_ key: RequestKey, conditions: Conditions, at now: Date) -> [Transition] {
        running.remove(key)
        guard let slot = slotsByKey[key] else { return [] }
        filings[Int(slot)].keyIsRunning = false
        guard busy.remove(slot) != nil else { return [] }
        return refile([slot], conditions: conditions, readyAt: now)
    }

    /// Whether a run of `key` is in progress.
    public func isRunning(_ key: RequestKey) -> Bool { running.contains(key) }

    private func classify(_ slot: Slot, conditions: Conditions) -> Location {
        let filing = filings[Int(slot)]
        if filing.keyIsRunning { return .busy }
        if filing.isContinuedProcessing { return .continuedQueue }
        if let unmet = conditions.firstUnmet(requiresExternalPower: filing.requiresExternalPower, requiresNetwork: filing.requiresNetwork) {
            return .blocked(unmet)
        }
        return .ready
    }

    /// Files `slot` at `location`; `readyAt`, when given, stamps a request that enters
    /// `ready` (from its date, a condition or its key's run: not from a policy's hold).
    private mutating func place(_ slot: Slot, at location: Location, readyAt: Date? = nil) {
        let order = filings[Int(slot)].order
        filings[Int(slot)].location = location
        if location == .ready, let readyAt { filings[Int(slot)].readySince = readyAt }
        switch location {
        case .waiting: waiting.update(slot, priority: order)
        case .ready: ready.update(slot, priority: order)
        case .blocked(let condition): blocked[condition.bucket].update(slot, priority: order)
        case .busy: busy.insert(slot)
        case .continuedQueue: continuedQueue.update(slot, priority: order)
        case .deferred(let until): deferred.update(slot, priority: Order(due: until, sequence: order.sequence))
        case .parkedForApp: parkedForApp[records[Int(slot)]!.key.app, default: []].insert(slot)
        case .parkedForDevice: parkedForDevice.insert(slot)
        }
    }

    private mutating func unplace(_ slot: Slot, from location: Location) {
        switch location {
        case .waiting: waiting.remove(slot)
        case .ready: ready.remove(slot)
        case .blocked(let condition): blocked[condition.bucket].remove(slot)
        case .busy: busy.remove(slot)
        case .continuedQueue: continuedQueue.remove(slot)
        case .deferred:
            deferred.remove(slot)
            deferredUntilWake.remove(slot)
        case .parkedForApp:
            let app = records[Int(slot)]!.key.app
            parkedForApp[app]?.remove(slot)
            if parkedForApp[app]?.isEmpty == true { parkedForApp[app] = nil }
        case .parkedForDevice: parkedForDevice.remove(slot)
        }
    }
}

extension RequiredCondition {
    /// This condition's place in ``EligibilityIndex``'s array of blocked buckets.
    fileprivate var bucket: Int {
        switch self {
        case .externalPower: return 0
        case .network: return 1
        }
    }
}
