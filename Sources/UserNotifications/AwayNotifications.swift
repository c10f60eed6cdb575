import BackgroundTasks
import Foundation
import SchedulerCore
import SchedulerStore

/// How a delivered notification is presented, as the user allowed it: the rules the center
/// applies in the background and bgtaskd applies while the app is not running.
enum NotificationPresentation {
    /// What the user allowed a notification to do: a banner (`.alert`), a sound, the badge,
    /// each as asked for and granted; a place in the list whenever notifications are
    /// allowed; provisional authorization delivers quietly, to the list only.
    static func allowed(status: UNAuthorizationStatus, options: UNAuthorizationOptions) -> UNNotificationPresentationOptions {
        switch status {
        case .authorized, .ephemeral:
            var allowed: UNNotificationPresentationOptions = [.list]
            if options.contains(.alert) { allowed.formUnion([.banner, .alert]) }
            if options.contains(.sound) { allowed.insert(.sound) }
            if options.contains(.badge) { allowed.insert(.badge) }
            return allowed
        case .provisional:
            return [.list]
        default:
            return []
        }
    }

    /// Whether `options` show the notification at all (a banner or the list).
    static func isShown(_ options: UNNotificationPresentationOptions) -> Bool {
        !options.isDisjoint(with: [.banner, .alert, .list])
    }

    /// Whether `options` keep it in the delivered list (the list, or an alert, its older name).
    static func isListed(_ options: UNNotificationPresentationOptions) -> Bool {
        !options.isDisjoint(with: [.alert, .list])
    }

    /// The line a shown notification is: `Title — Subtitle — Body (quietly, in the list,
    /// sound, badge 3, ...)`, with `more` notes after those `options` give.
    static func line(title: String, subtitle: String, body: String, hasSound: Bool, badge: Int?, options: UNNotificationPresentationOptions, more: [String] = []) -> String {
        var line = [title, subtitle, body].filter { !$0.isEmpty }.joined(separator: " — ")
        if line.isEmpty { line = "(no text)" }
        var notes: [String] = []
        if options.isDisjoint(with: [.banner, .alert]) { notes.append("quietly, in the list") }
        if options.contains(.sound), hasSound { notes.append("sound") }
        if options.contains(.badge), let badge { notes.append("badge \(badge)") }
        notes += more
        return line + (notes.isEmpty ? "" : " (\(notes.joined(separator: ", ")))")
    }
}

/// An app's local notifications that no process of it delivers, as bgtaskd delivers them
/// (docs/daemon.md, "Notifications while the app is not running"): iOS shows a notification
/// at its moment whether or not the app runs; here the app's process delivers while it runs
/// and uses its center, and bgtaskd, which launches, freezes and ends apps, the rest.
///
/// The app keeps its pending requests in `pending-notifications.json` in its state
/// directory (``PendingNotificationsFile``). bgtaskd reads that file and, a grace after each
/// moment, fires what is still pending as the app would have: presented as the user allowed
/// (the answer kept in `notifications.json`, with the `BGTASK_NOTIFICATIONS` switch), a
/// repeating request moved on to its next moment, the delivery and its badge written into the
/// file, which a process of the app takes in (its delivered notifications, its icon). Every
/// read, change and write, by the app or bgtaskd, happens under the file's lock.
package struct AwayNotifications: Sendable {
    /// The app.
    package let app: AppID
    /// The app's state directory's path (a URL is made only when the file is used: bgtaskd
    /// makes one of these for each of thousands of apps at its start).
    private let directoryPath: String
    /// What the user's switch says (`BGTASK_NOTIFICATIONS` as bgtaskd passes it on to the
    /// app): `true` allowed, `false` denied, `nil` not set.
    package let userSwitch: Bool?

    /// The app's state directory.
    package var directory: URL { URL(fileURLWithPath: directoryPath, isDirectory: true) }

    /// The notifications of `app`, whose state directory is `directory`; `switchValue` is
    /// `BGTASK_NOTIFICATIONS` as the app's launches get it.
    package init(app: AppID, directory: URL, switchValue: String?) {
        self.init(app: app, directoryPath: directory.path, userSwitch: AuthorizationFile.userSwitch(switchValue).answer)
    }

    private init(app: AppID, directoryPath: String, userSwitch: Bool?) {
        self.app = app
        self.directoryPath = directoryPath
        self.userSwitch = userSwitch
    }

    /// Where every app's notifications are by default under one environment (the one bgtaskd
    /// gives its launches: `XDG_STATE_HOME`, else `HOME`, and `BGTASK_NOTIFICATIONS`), worked
    /// out once.
    package struct DefaultLocations: Sendable {
        private let rootPath: String
        private let userSwitch: Bool?

        /// - Throws: ``EmbeddedSchedulerError`` when no state root can be chosen (neither
        ///   variable is set, or the one used is not valid UTF-8), saying why.
        package init(environment: [String: String]) throws(EmbeddedSchedulerError) {
            rootPath = try EmbeddedScheduler.stateRoot(environment: environment).path
            userSwitch = AuthorizationFile.userSwitch(environment["BGTASK_NOTIFICATIONS"]).answer
        }

        /// The state root's path.
        package var root: String { rootPath }

        /// The apps (by identifier) whose state directory holds a pending-notifications
        /// file, from one listing of the state root; `nil` when it cannot be listed (then any
        /// app may have one). No file is opened.
        package func appsWithPendingFiles() -> Set<String>? {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: rootPath) else {
                // No state root yet: no app has kept anything.
                return FileManager.default.fileExists(atPath: rootPath) ? nil : []
            }
            // A link leading nowhere is there (in `ls`): listed, so its problem is said.
            return Set(names.filter { BoundedFile.lookupProblem(at: rootPath + "/" + $0 + "/pending-notifications.json") != .missing })
        }

        /// The notifications of `app`; `nil` when its identifier cannot name a directory.
        package func of(_ app: AppID) -> AwayNotifications? {
            guard AppID.problem(with: app.rawValue) == nil else { return nil }
            return AwayNotifications(app: app, directoryPath: rootPath + "/" + app.rawValue, userSwitch: userSwitch)
        }
    }

    private var file: PendingNotificationsFile {
        PendingNotificationsFile(url: directory.appendingPathComponent("pending-notifications.json"))
    }

    /// The soonest moment of the app's pending requests (`nil` when none is pending), or
    /// why the file cannot be used (it is only read: a look never moves it aside or writes
    /// it; a missing file is no problem).
    package func nextMoment() -> (moment: Date?, problem: String?) {
        let (kept, problem, _) = file.read(movingAside: false)
        if let problem { return (nil, problem + "; it is left for the app") }
        if let problem = Self.tooMany(kept, at: file.url) { return (nil, problem) }
        return (kept.pending.map(\.fireDate).min(), nil)
    }

    /// Why a file holding more pending requests than an app keeps is not delivered from: the
    /// app writes at most ``NotificationSchedule/pendingLimit``; more is another program's
    /// doing, and reading each would be work without end.
    private static func tooMany(_ kept: KeptNotifications, at url: URL) -> String? {
        guard kept.pending.count > NotificationSchedule.pendingLimit else { return nil }
        return "\(url.path) holds \(kept.pending.count) pending notification requests, more than the \(NotificationSchedule.pendingLimit) an app keeps; none is delivered from it (the app keeps the \(NotificationSchedule.pendingLimit) soonest when it next runs)"
    }

    /// What the app's pending file holds, for `bgtask notifications`.
    package struct Summary: Sendable, Equatable {
        /// A pending request: when it fires next, whether it repeats, its title.
        package struct Pending: Sendable, Equatable {
            package var identifier: String
            package var nextMoment: Date
            package var repeats: Bool
            package var title: String
        }
        /// A firing of bgtaskd's the app has not taken in yet.
        package struct Fired: Sendable, Equatable {
            package var identifier: String
            package var date: Date
            /// Whether it went to the delivered list (shown as the user allowed).
            package var listed: Bool
        }
        /// A notification in the app's delivered list, as its processes left it.
        package struct Delivered: Sendable, Equatable {
            package var identifier: String
            package var date: Date
            package var title: String
        }
        /// The file.
        package var path: String
        /// Soonest first.
        package var pending: [Pending] = []
        /// The app's delivered list, oldest first (what `bgtask respond` can answer, with
        /// the firings of bgtaskd's listed).
        package var delivered: [Delivered] = []
        package var fired: [Fired] = []
        /// Why the file cannot be read, if it cannot.
        package var problem: String?
    }

    /// What the app's pending file holds (only read: never moved aside or written), or `nil`
    /// when there is no file.
    package func summary() -> Summary? {
        let file = self.file
        // A link leading nowhere is a file the user sees: read, and its problem said, not
        // taken for "no notifications".
        guard BoundedFile.lookupProblem(at: file.url.path) != .missing else { return nil }
        let (kept, problem, _) = file.read(movingAside: false)
        var summary = Summary(path: file.url.path, problem: problem)
        summary.pending = kept.pending.sorted { ($0.fireDate, $0.identifier) < ($1.fireDate, $1.identifier) }.map { request in
            let repeats: Bool = switch request.trigger {
            case .timeInterval(_, let repeats)?, .calendar(_, let repeats)?: repeats
            case nil: false
            }
            return Summary.Pending(identifier: request.identifier, nextMoment: request.fireDate, repeats: repeats, title: request.title)
        }
        summary.delivered = kept.delivered.map { Summary.Delivered(identifier: $0.request.identifier, date: $0.date, title: $0.request.title) }
        summary.fired = kept.deliveredWhileAway.map { Summary.Fired(identifier: $0.request.identifier, date: $0.date, listed: $0.listed) }
        return summary
    }

    /// What one delivery while away did.
    package struct Outcome: Sendable, Equatable {
        /// The log lines of the notifications presented, one each, naming it
        /// (`notification "reminder" shown: Reminder — Time to read (...)`).
        package var shown: [String] = []
        /// Notifications fired but not presented (the user allowed no presentation), as lines
        /// for the log.
        package var notPresented: [String] = []
        /// Why nothing could be delivered (the file or its lock unusable, a failed write):
        /// nothing changed; the caller tries again later, not at once.
        package var failure: String?
        /// The soonest pending moment left, to deliver at next (plus ``grace``).
        package var next: Date?
        /// Whether the file's lock was held by another process (the app writing): try again soon.
        package var busy = false
    }

    /// How long after a moment bgtaskd delivers what the app has not: a process of the app
    /// that uses its notification center delivers at the moment itself (as the delegate's
    /// `willPresent` in the foreground); bgtaskd takes what is still pending after this.
    package static let grace: TimeInterval = 2

    /// Fires every pending request whose moment came by `now` less ``grace``, holding the
    /// file's lock. Whoever takes the lock first fires a moment: a process of the app that
    /// fires it moves it on in the file, so bgtaskd finds nothing due; one bgtaskd fired is
    /// recorded in the file, and the app's process takes it in under the same lock instead
    /// of delivering it again. Linear in the file's requests, which it reads only if an app
    /// could have written them (at most ``NotificationSchedule/pendingLimit``).
    package func deliverDue(now: Date) -> Outcome {
        var outcome = Outcome()
        let file = self.file
        guard FileManager.default.fileExists(atPath: file.url.path) else { return outcome }
        let lock: StateDirectoryLock
        do {
            lock = try file.lock(waiting: 0.02)
        } catch {
            if error.code == .locked {
                outcome.busy = true
            } else {
                outcome.failure = "the app's pending notifications were not delivered: \(error)"
            }
            return outcome
        }
        return withExtendedLifetime(lock) {
            let (read, problem, writable) = file.read(movingAside: false)
            if let problem {
                outcome.failure = problem + "; it is left for the app"
                return outcome
            }
            guard writable else { return outcome }
            if let failure = Self.tooMany(read, at: file.url) {
                outcome.failure = failure
                return outcome
            }
            var kept = read
            let due = kept.pending.filter { $0.fireDate <= now.addingTimeInterval(-Self.grace) }.sorted { ($0.fireDate, $0.identifier) < ($1.fireDate, $1.identifier) }
            guard !due.isEmpty else {
                outcome.next = kept.pending.map(\.fireDate).min()
                return outcome
            }
            let allowed = allowedPresentation(&outcome)
            let fired = Set(due.map(\.identifier))
            var delivered: [AwayDelivery] = []
            var again: [StoredNotificationRequest] = []
            for request in due {
                if let next = Self.nextFireDate(of: request, now: now) {
                    var repeated = request
                    repeated.fireDate = next
                    again.append(repeated)
                }
                // Every firing is recorded, presented or not: the app's process moves its
                // request on from it instead of writing the old moment back.
                guard NotificationPresentation.isShown(allowed) else {
                    delivered.append(AwayDelivery(request: request, date: now, listed: false))
                    outcome.notPresented.append("notification \"\(request.identifier)\" came due, the app did not deliver it, and it was not presented (the user allowed no presentation)")
                    continue
                }
                if allowed.contains(.badge), let badge = request.badge { kept.badge = badge }
                delivered.append(AwayDelivery(request: request, date: now, listed: NotificationPresentation.isListed(allowed)))
                let late = now.timeIntervalSince(request.fireDate) >= 60 ? ["late: due \(request.fireDate)"] : []
                outcome.shown.append("notification \"\(StrictJSON.escaped(request.identifier))\" shown: " + NotificationPresentation.line(
                    title: request.title, subtitle: request.subtitle, body: request.body, hasSound: request.sound != nil, badge: request.badge,
                    options: allowed, more: ["delivered by bgtaskd: the app did not"] + late))
            }
            kept.pending = (kept.pending.filter { !fired.contains($0.identifier) } + again)
                .sorted { ($0.fireDate, $0.identifier) < ($1.fireDate, $1.identifier) }
            // One delivery per request kept, the latest (as the list replaces one with its identifier).
            let redelivered = Set(delivered.map(\.request.identifier))
            kept.deliveredWhileAway = Array((kept.deliveredWhileAway.filter { !redelivered.contains($0.request.identifier) } + delivered)
                .suffix(KeptNotifications.deliveredLimit))
            if let failure = file.write(kept, keptMeanwhile: "nothing was presented, and bgtaskd looks again in a while") {
                // Nothing is presented that the file does not record: the app's next launch
                // would deliver it again.
                outcome.shown = []
                outcome.notPresented = []
                outcome.failure = failure
                return outcome
            }
            outcome.next = kept.pending.map(\.fireDate).min()
            return outcome
        }
    }

    /// What the user allowed, from the kept answer and the switch (as the app's center reads
    /// them at launch); none when the app never asked.
    private func allowedPresentation(_ outcome: inout Outcome) -> UNNotificationPresentationOptions {
        let (saved, problem) = AuthorizationFile(url: directory.appendingPathComponent("notifications.json")).read()
        if let problem { outcome.notPresented.append(problem) }
        guard let answer = saved?.applying(userSwitch: userSwitch) else { return [] }
        return NotificationPresentation.allowed(status: answer.status, options: answer.options)
    }

    /// The moment after `request`'s `fireDate` when it fires again (a repeating trigger), or
    /// `nil`: the center's rule (a series whose moments passed fires once, then goes on
    /// from the next moment after now).
    static func nextFireDate(of request: StoredNotificationRequest, now: Date) -> Date? {
        let trigger: UNNotificationTrigger? = switch request.trigger {
        case .timeInterval(let seconds, let repeats)?: UNTimeIntervalNotificationTrigger(timeInterval: seconds, repeats: repeats)
        case .calendar(let components, let repeats)?: UNCalendarNotificationTrigger(dateMatching: components, repeats: repeats)
        case nil: nil
        }
        guard let next = trigger?.fireDate(scheduled: request.added, after: request.fireDate, now: now), NotificationSchedule.isKeepable(next) else { return nil }
        return next
    }
}
