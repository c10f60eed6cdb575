import BackgroundTasks
import Foundation
import SchedulerCore
import SchedulerStore

/// A pending request as it is kept between launches: its content (the `userInfo` values a
/// property list can hold), its trigger, when it was added and when it fires next.
struct StoredNotificationRequest: Codable, Equatable {
    struct Sound: Codable, Equatable {
        var name: String?
        var critical: Bool
        var volume: Float
    }

    struct Attachment: Codable, Equatable {
        var identifier: String
        var url: URL
        var type: String
    }

    enum Trigger: Codable, Equatable {
        case timeInterval(seconds: Double, repeats: Bool)
        case calendar(components: DateComponents, repeats: Bool)
    }

    var identifier: String
    var title: String
    var subtitle: String
    var body: String
    var badge: Int?
    var sound: Sound?
    var launchImageName: String
    /// The `userInfo`, as a binary property list; `nil` when empty or when it holds values a
    /// property list cannot (they are not kept, with a warning).
    var userInfo: Data?
    var attachments: [Attachment]
    var categoryIdentifier: String
    var threadIdentifier: String
    var targetContentIdentifier: String?
    var summaryArgument: String
    var summaryArgumentCount: Int
    var interruptionLevel: UInt
    var relevanceScore: Double
    var filterCriteria: String?
    var trigger: Trigger?
    var added: Date
    var fireDate: Date

    /// The stored form of `entry`; `problem` says what of it could not be kept.
    init(_ entry: NotificationSchedule.Entry, problem: inout String?) {
        self.init(entry.request, added: entry.added, fireDate: entry.fireDate, problem: &problem)
    }

    /// The stored form of `request`, added at `added` and due at `fireDate`; `problem` says
    /// what of it could not be kept.
    init(_ request: UNNotificationRequest, added: Date, fireDate: Date, problem: inout String?) {
        let fields = request.content.fields
        identifier = request.identifier
        title = fields.title
        subtitle = fields.subtitle
        body = fields.body
        badge = fields.badge?.intValue
        sound = fields.sound.map { Sound(name: $0.name?.rawValue, critical: $0.isCritical, volume: $0.volume) }
        launchImageName = fields.launchImageName
        userInfo = nil
        if !fields.userInfo.isEmpty {
            var plist: [String: Any] = [:]
            for (key, value) in fields.userInfo {
                guard let key = key.base as? String else { continue }
                plist[key] = value
            }
            if plist.count == fields.userInfo.count, PropertyListSerialization.propertyList(plist, isValidFor: .binary) {
                userInfo = try? PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
            }
            if userInfo == nil {
                problem = "the userInfo of notification request \"\(request.identifier)\" holds keys or values a property list cannot, and is not kept for the next launch"
            }
        }
        attachments = fields.attachments.map { Attachment(identifier: $0.identifier, url: $0.url, type: $0.type) }
        categoryIdentifier = fields.categoryIdentifier
        threadIdentifier = fields.threadIdentifier
        targetContentIdentifier = fields.targetContentIdentifier
        summaryArgument = fields.summaryArgument
        summaryArgumentCount = fields.summaryArgumentCount
        interruptionLevel = fields.interruptionLevel.rawValue
        relevanceScore = fields.relevanceScore
        filterCriteria = fields.filterCriteria
        switch request.trigger {
        case let interval as UNTimeIntervalNotificationTrigger:
            trigger = .timeInterval(seconds: interval.timeInterval, repeats: interval.repeats)
        case let calendar as UNCalendarNotificationTrigger:
            trigger = .calendar(components: calendar.dateComponents, repeats: calendar.repeats)
        default:
            trigger = nil
        }
        self.added = added
        self.fireDate = fireDate
    }

    /// The request again; `problems` lists what could not be restored (an attachment whose
    /// file is gone, a `userInfo` that no longer reads).
    func request(problems: inout [String]) -> UNNotificationRequest {
        let content = UNMutableNotificationContent()
        content.title = title
        content.subtitle = subtitle
        content.body = body
        content.badge = badge.map { NSNumber(value: $0) }
        content.sound = sound.map { UNNotificationSound(name: $0.name.map(UNNotificationSoundName.init(rawValue:)), critical: $0.critical, volume: $0.volume) }
        content.launchImageName = launchImageName
        if let userInfo {
            if let values = try? PropertyListSerialization.propertyList(from: userInfo, options: [], format: nil) as? [String: Any] {
                content.userInfo = Dictionary(uniqueKeysWithValues: values.map { (AnyHashable($0.key), $0.value) })
            } else {
                problems.append("the userInfo of notification request \"\(identifier)\" could not be read back")
            }
        }
        content.attachments = attachments.compactMap { stored in
            do {
                return try UNNotificationAttachment(identifier: stored.identifier, url: stored.url, options: [UNNotificationAttachmentOptionsTypeHintKey: stored.type])
            } catch {
                problems.append("attachment \"\(stored.identifier)\" of notification request \"\(identifier)\" is gone: \((error as? UNError)?.message ?? "\(error)")")
                return nil
            }
        }
        content.categoryIdentifier = categoryIdentifier
        content.threadIdentifier = threadIdentifier
        content.targetContentIdentifier = targetContentIdentifier
        content.summaryArgument = summaryArgument
        content.summaryArgumentCount = summaryArgumentCount
        content.interruptionLevel = UNNotificationInterruptionLevel(rawValue: interruptionLevel) ?? .active
        content.relevanceScore = relevanceScore
        content.filterCriteria = filterCriteria
        return UNNotificationRequest(identifier: identifier, content: content, trigger: restoredTrigger)
    }

    /// The kept trigger, made again.
    var restoredTrigger: UNNotificationTrigger? {
        switch trigger {
        case .timeInterval(let seconds, let repeats)?: UNTimeIntervalNotificationTrigger(timeInterval: seconds, repeats: repeats)
        case .calendar(let components, let repeats)?: UNCalendarNotificationTrigger(dateMatching: components, repeats: repeats)
        case nil: nil
        }
    }
}

/// A delivered notification as the file keeps it: the request as it was when its moment came,
/// when it was delivered, and whether it went to the list. In `deliveredWhileAway`, one bgtaskd
/// delivered while the app was not running (docs/porting.md, "Local notifications"), which
/// the app's next launch adds to its delivered notifications, as iOS's list shows what came
/// while the app was not running; in `delivered`, one of the app's list as its processes left
/// it (always listed).
struct AwayDelivery: Codable, Equatable {
    /// The request, its `fireDate` the moment it was due.
    var request: StoredNotificationRequest
    /// When bgtaskd delivered it.
    var date: Date
    /// Whether it was kept in the list (the user allowed notifications).
    var listed: Bool
}

/// What the pending-notifications file keeps: the pending requests, the app's delivered list
/// as its processes left it (iOS's Notification Center keeps it while the app is not
/// running), what bgtaskd delivered while the app was not running (the app's next launch
/// takes it in and writes the file without it), and the badge such a delivery set.
///
/// Written as `{"version": 2, "pending": [...], "delivered": [...], "deliveredWhileAway": [...],
/// "badge": 3}` (`delivered` is optional: a file written before it was kept reads as an empty
/// list, and a build from before it reads the file and writes it without the list); a file
/// written before bgtaskd delivered notifications (version 1, a bare array of pending requests)
/// is read as pending requests alone.
struct KeptNotifications: Codable, Equatable {
    var pending: [StoredNotificationRequest] = []
    /// The app's delivered list, oldest first.
    var delivered: [AwayDelivery] = []
    var deliveredWhileAway: [AwayDelivery] = []
    /// The badge the latest delivery while away set, for the next launch to apply.
    var badge: Int?
    /// Whether this is what the file holds (`false`: the file could not be read, and this
    /// is empty for want of it; not written).
    var wasRead = true

    /// The most deliveries while away kept for the next launch (the list's own limit).
    static let deliveredLimit = NotificationSchedule.deliveredLimit

    private enum CodingKeys: String, CodingKey { case version, pending, delivered, deliveredWhileAway, badge }

    /// The file's JSON, of either version (version 1 was the bare array of pending requests).
    /// Every date must be within ``dateLimit`` seconds of 2001: no trigger computes with, and
    /// no message prints, a date beyond the calendar's years; every pending request's trigger
    /// must be one the center accepts.
    static func decode(_ bytes: [UInt8]) throws -> KeptNotifications {
        let isArray = bytes.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "[")
        var kept = isArray
            ? KeptNotifications(pending: try JSONDecoder().decode([StoredNotificationRequest].self, from: Data(bytes)))
            : try JSONDecoder().decode(KeptNotifications.self, from: Data(bytes))
        // bgtaskd keeps at most this many; more is another program's doing: the latest.
        kept.deliveredWhileAway = Array(kept.deliveredWhileAway.suffix(deliveredLimit))
        kept.delivered = Array(kept.delivered.suffix(deliveredLimit))
        let dates = kept.pending.flatMap { [($0.identifier, $0.fireDate), ($0.identifier, $0.added)] }
            + (kept.deliveredWhileAway + kept.delivered).flatMap { [($0.request.identifier, $0.date), ($0.request.identifier, $0.request.fireDate), ($0.request.identifier, $0.request.added)] }
        if let (identifier, date) = dates.first(where: { !(-dateLimit...dateLimit).contains($0.1.timeIntervalSinceReferenceDate) }) {
            throw KeptNotificationsError(description: "notification request \"\(identifier)\" has a date \(date.timeIntervalSinceReferenceDate) seconds from 2001, beyond the \(Int(dateLimit)) a date may be")
        }
        // A trigger the center would refuse (a repeating interval under 60 s, components that
        // match no date) cannot have been added: another program wrote it. Taken as it is, it
        // would be delivered once and then dropped without a word.
        for request in kept.pending {
            if let problem = request.restoredTrigger?.problem() {
                throw KeptNotificationsError(description: "notification request \"\(request.identifier)\" has a trigger the notification center refuses: \(problem)")
            }
        }
        return kept
    }

    /// How far from 2001 a kept date may be, in seconds (about 3,000 years either way).
    static let dateLimit: TimeInterval = 1e11

    init(pending: [StoredNotificationRequest] = [], delivered: [AwayDelivery] = [], deliveredWhileAway: [AwayDelivery] = [], badge: Int? = nil) {
        self.pending = pending
        self.delivered = delivered
        self.deliveredWhileAway = deliveredWhileAway
        self.badge = badge
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let version = try container.decode(Int.self, forKey: .version)
        guard version == 2 else {
            throw DecodingError.dataCorruptedError(forKey: .version, in: container, debugDescription: "version \(version) is not one this build reads (2)")
        }
        self.init(
            pending: try container.decode([StoredNotificationRequest].self, forKey: .pending),
            delivered: try container.decodeIfPresent([AwayDelivery].self, forKey: .delivered) ?? [],
            deliveredWhileAway: try container.decodeIfPresent([AwayDelivery].self, forKey: .deliveredWhileAway) ?? [],
            badge: try container.decodeIfPresent(Int.self, forKey: .badge)
        )
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(2, forKey: .version)
        try container.encode(pending, forKey: .pending)
        try container.encode(delivered, forKey: .delivered)
        try container.encode(deliveredWhileAway, forKey: .deliveredWhileAway)
        try container.encodeIfPresent(badge, forKey: .badge)
    }
}

/// A kept file whose JSON reads but whose values cannot be used.
struct KeptNotificationsError: Error, CustomStringConvertible {
    let description: String
}

/// The file that keeps an app's pending notifications between launches
/// (`pending-notifications.json` in its state directory): read bounded and without blocking,
/// written atomically. A file that cannot be read is moved aside (never overwritten with
/// nothing) and named in a warning.
///
/// Two kinds of process write it: the app's, and bgtaskd, which fires what the app did not
/// (``AwayNotifications``). Each reads, changes and writes it holding
/// `pending-notifications.lock` beside it (an exclusive `flock`, ``lock(waiting:)``); bgtaskd
/// records its firings in it, and the app's process takes them in before it fires or keeps
/// anything, so a moment is fired once, by whoever comes first.
struct PendingNotificationsFile {
    let url: URL

    /// The most a file may hold: 64 requests of generous content (``requestSizeLimit`` each),
    /// and the deliveries kept for the next launch.
    static let sizeLimit = 64 << 20

    /// The most one request may take as kept (its JSON): a million bytes, so that 64 of them
    /// leave room in ``sizeLimit`` for the file's own lines. A larger one is refused when
    /// added, rather than written into a file the next launch could not read.
    static let requestSizeLimit = 1_000_000

    /// The lock file's name, beside the file.
    static let lockName = "pending-notifications.lock"

    /// Takes the file's lock, waiting at most `waiting` seconds for another holder (the app
    /// waits up to a second, as for the scheduler's own state lock; bgtaskd hardly at all,
    /// and comes back); held until the returned object is released.
    func lock(waiting: TimeInterval = 1) throws(StoreError) -> StateDirectoryLock {
        try StateDirectoryLock.acquire(in: url.deletingLastPathComponent(), name: Self.lockName, waiting: waiting,
                                       holding: "is reading or writing the app's pending notifications")
    }

    /// What the file keeps (nothing when there is no file), what went wrong, and whether the
    /// file may be written this launch: a file that is unreadable for what it holds (bad
    /// JSON, a request kept twice, too large, not a regular file) is moved aside and the list
    /// starts empty; one that cannot be read now (permissions, an I/O error), or that could
    /// not be moved aside, is left alone and not written over.
    /// Without `movingAside`, a file unreadable for what it holds is left in place
    /// (bgtaskd's reads, and `bgtask notifications`: the file is the app's to set aside).
    func read(movingAside: Bool = true) -> (kept: KeptNotifications, problem: String?, writable: Bool) {
        let bytes: [UInt8]
        do {
            bytes = try BoundedFile.read(path: url.path, limit: Self.sizeLimit)
        } catch {
            switch error.problem {
            case .missing:
                return (KeptNotifications(), nil, true)
            case .failed, .unreachable:
                return (KeptNotifications(), "the pending notifications kept for this launch could not be read: \(error); they are left as they are and not written over this launch", false)
            default:
                let aside = movingAside ? moveAside() : (moved: false, phrase: "")
                return (KeptNotifications(), "the pending notifications kept for this launch could not be read: \(error)\(aside.phrase)", aside.moved)
            }
        }
        let problem: String
        do {
            let kept = try KeptNotifications.decode(bytes)
            var seen = Set<String>()
            guard let twice = kept.pending.first(where: { !seen.insert($0.identifier).inserted }) else { return (kept, nil, true) }
            problem = "\(url.path): notification request \"\(twice.identifier)\" is kept twice"
        } catch {
            problem = "\(url.path) could not be read (\(DecodingErrorText.describe(error, decoding: bytes, retrying: { _ = try KeptNotifications.decode([UInt8]($0)) })))"
        }
        let aside = movingAside ? moveAside() : (moved: false, phrase: "")
        return (KeptNotifications(), problem + aside.phrase, aside.moved)
    }

    /// Keeps `kept`; the reason when it could not. A file larger than ``sizeLimit`` (the
    /// most it reads back) keeps only the newer half of the delivered list, halved again until
    /// it fits, then of what bgtaskd delivered while the app was away (said), so that the next
    /// launch can read what was written: the pending requests alone fit (64 of at most
    /// ``requestSizeLimit``).
    /// `keptMeanwhile`: what becomes of them when the file cannot be written, for the
    /// message (the app keeps them in its process; bgtaskd presents nothing and looks again).
    func write(_ kept: KeptNotifications, sizeLimit: Int = sizeLimit, keptMeanwhile: String = "they last as long as the process") -> String? {
        do {
            var keep = kept
            var data = try JSONEncoder().encode(keep)
            var dropped = 0
            while data.count > sizeLimit, !keep.delivered.isEmpty || !keep.deliveredWhileAway.isEmpty {
                if !keep.delivered.isEmpty {
                    let half = keep.delivered.count / 2
                    dropped += keep.delivered.count - half
                    keep.delivered = Array(keep.delivered.suffix(half))
                } else {
                    let half = keep.deliveredWhileAway.count / 2
                    dropped += keep.deliveredWhileAway.count - half
                    keep.deliveredWhileAway = Array(keep.deliveredWhileAway.suffix(half))
                }
                data = try JSONEncoder().encode(keep)
            }
            try data.write(to: url, options: .atomic)
            guard dropped == 0 else {
                return "the delivered notifications would have made \(url.path) larger than \(sizeLimit) bytes: the \(dropped) oldest are not kept for later launches"
            }
            return nil
        } catch {
            return "the pending notifications could not be kept in \(url.path) (\(error.localizedDescription)); \(keptMeanwhile)"
        }
    }

    /// Moves an unreadable file aside (a name of its own: the pid and a random part, never
    /// replacing an earlier one), so that the next write does not lose it: whether it moved,
    /// and the phrase that says where it went.
    private func moveAside() -> (moved: Bool, phrase: String) {
        let aside = url.path + ".unreadable-\(getpid())-\(UUID().uuidString.prefix(8))"
        guard rename(url.path, aside) == 0 else {
            return (false, "; it is left in place and not written over this launch")
        }
        return (true, "; moved aside to \(aside), and the app's pending notifications start empty")
    }
}
