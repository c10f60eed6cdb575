import Foundation

/// The center's pending and delivered notifications, as a pure state machine: adding a
/// request, a request's moment coming, removals. No clock, no timers, no app code: the
/// center (``UNUserNotificationCenter``) owns one under its lock and arms a timer for each
/// pending request's fire date.
struct NotificationSchedule {
    /// A request waiting for its moment.
    struct Entry {
        let request: UNNotificationRequest
        /// When it was added (a time-interval trigger counts from here).
        let added: Date
        /// When it fires next.
        var fireDate: Date
        /// Which addition this is: a timer armed for an entry that was replaced or removed
        /// since finds another serial and does nothing.
        let serial: Int
    }

    /// What adding a request did.
    enum Addition {
        /// Pending until `entry.fireDate`; `replaced` when a request with its identifier was
        /// pending; `dropped`: requests no longer kept (only the soonest
        /// ``pendingLimit`` are, as on iOS), possibly the new one itself.
        case scheduled(entry: Entry, replaced: Bool, dropped: [String])
        /// Refused, with the reason.
        case refused(UNError)
    }

    /// How many pending requests are kept (iOS keeps the 64 that fire soonest).
    static let pendingLimit = 64
    /// How many delivered notifications are kept (the oldest go first).
    static let deliveredLimit = 256

    private(set) var entries: [String: Entry] = [:]
    private(set) var delivered: [UNNotification] = []
    private var lastSerial = 0

    /// The pending requests, soonest first (ties by identifier).
    var pendingRequests: [UNNotificationRequest] { sortedEntries.map(\.request) }

    /// The pending entries, soonest first (ties by identifier).
    var sortedEntries: [Entry] {
        entries.values.sorted { ($0.fireDate, $0.request.identifier) < ($1.fireDate, $1.request.identifier) }
    }

    /// Adds `request` at `now`, replacing a pending request with its identifier.
    mutating func add(_ request: UNNotificationRequest, at now: Date) -> Addition {
        if let problem = request.trigger?.problem() {
            return .refused(UNError(.notificationInvalidNoDate, message: "notification request \"\(request.identifier)\" refused: \(problem)"))
        }
        if request.trigger is UNPushNotificationTrigger {
            return .refused(UNError(.notificationInvalidNoDate, message: "notification request \"\(request.identifier)\" refused: a push trigger is the system's (a remote notification's), not an app's"))
        }
        let fireDate: Date
        if let trigger = request.trigger {
            guard let first = trigger.fireDate(scheduled: now, after: nil, now: now) else {
                return .refused(UNError(.notificationInvalidNoDate, message: "notification request \"\(request.identifier)\" refused: its trigger has no date to come (\(trigger))"))
            }
            guard Self.isKeepable(first) else {
                return .refused(UNError(.notificationInvalidNoDate, message: "notification request \"\(request.identifier)\" refused: its first moment is \(Int(first.timeIntervalSinceReferenceDate)) seconds from 2001, beyond the \(Int(KeptNotifications.dateLimit)) a kept date may be"))
            }
            fireDate = first
        } else {
            fireDate = now
        }
        lastSerial += 1
        let entry = Entry(request: request, added: now, fireDate: fireDate, serial: lastSerial)
        let replaced = entries.updateValue(entry, forKey: request.identifier) != nil
        var dropped: [String] = []
        if entries.count > Self.pendingLimit {
            for late in sortedEntries.dropFirst(Self.pendingLimit) {
                entries[late.request.identifier] = nil
                dropped.append(late.request.identifier)
            }
        }
        return .scheduled(entry: entry, replaced: replaced, dropped: dropped)
    }

    /// Puts back a request kept by an earlier launch, added at `added` and due at
    /// `fireDate` (a moment that passed while the app was not running fires at once);
    /// `nil` when one with its identifier is already pending (added in this launch: the
    /// newer one stays) or the soonest ``pendingLimit`` are already kept.
    mutating func restore(_ request: UNNotificationRequest, added: Date, fireDate: Date) -> Entry? {
        guard entries[request.identifier] == nil, entries.count < Self.pendingLimit else { return nil }
        lastSerial += 1
        let entry = Entry(request: request, added: added, fireDate: fireDate, serial: lastSerial)
        entries[request.identifier] = entry
        return entry
    }

    /// The entry of `identifier` armed as `serial` for the moment `armedFor` (any moment when
    /// `nil`) fires at `now`: the notification to deliver, and the entry's next firing when
    /// its trigger repeats (it stays pending), or `nil` when the entry was replaced or
    /// removed since, or has moved on from that moment (bgtaskd delivered it meanwhile).
    mutating func fire(identifier: String, serial: Int, armedFor: Date? = nil, at now: Date) -> (notification: UNNotification, next: Entry?)? {
        guard var entry = entries[identifier], entry.serial == serial, armedFor.map({ $0 == entry.fireDate }) ?? true else { return nil }
        let notification = UNNotification(date: now, request: entry.request)
        if let trigger = entry.request.trigger, let next = trigger.fireDate(scheduled: entry.added, after: entry.fireDate, now: now), Self.isKeepable(next) {
            entry.fireDate = next
            entries[identifier] = entry
            return (notification, entry)
        }
        entries[identifier] = nil
        return (notification, nil)
    }

    /// Keeps `notification` as delivered (replacing one with its identifier, as a request
    /// added again replaces the notification it showed).
    /// The list stays in the order the notifications came (by date; a later one of the same
    /// date after), so the limit drops the oldest.
    mutating func recordDelivery(_ notification: UNNotification) {
        delivered.removeAll { $0.request.identifier == notification.request.identifier }
        let place = delivered.lastIndex { $0.date <= notification.date }.map { $0 + 1 } ?? 0
        delivered.insert(notification, at: place)
        if delivered.count > Self.deliveredLimit { delivered.removeFirst(delivered.count - Self.deliveredLimit) }
    }

    /// Whether `date` can be kept in the pending file (``KeptNotifications/dateLimit``): a
    /// moment beyond it is refused, and a series that would go past it ends.
    static func isKeepable(_ date: Date) -> Bool {
        abs(date.timeIntervalSinceReferenceDate) <= KeptNotifications.dateLimit
    }

    /// Moves the pending entry of `identifier` to `fireDate` (what bgtaskd's firing left in
    /// the file): the new entry, or `nil` when there is none.
    mutating func move(identifier: String, to fireDate: Date) -> Entry? {
        guard var entry = entries[identifier] else { return nil }
        entry.fireDate = fireDate
        entries[identifier] = entry
        return entry
    }

    /// Removes the pending requests of `identifiers` (unknown ones are ignored).
    mutating func removePending(_ identifiers: [String]) {
        for identifier in identifiers { entries[identifier] = nil }
    }

    /// Removes every pending request.
    mutating func removeAllPending() { entries = [:] }

    /// Removes the delivered notifications of `identifiers`.
    mutating func removeDelivered(_ identifiers: [String]) {
        let gone = Set(identifiers)
        delivered.removeAll { gone.contains($0.request.identifier) }
    }

    /// Removes every delivered notification.
    mutating func removeAllDelivered() { delivered = [] }

    /// The delivered list as the pending file keeps it (every process of the app, and
    /// bgtaskd, share it), the latest ``deliveredLimit``.
    mutating func replaceDelivered(with notifications: [UNNotification]) {
        delivered = []
        for notification in notifications { recordDelivery(notification) }
    }
}
