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

/// An app's local notifications while no process of it runs, as bgtaskd delivers them
/// (docs/daemon.md, "Notifications while the app is not running"): iOS shows a notification
/// at its moment whether or not the app runs; here the app's own process delivers while it
/// runs, and bgtaskd, which launches and ends apps, delivers the rest.
///
/// The app keeps its pending requests in `pending-notifications.json` in its state
/// directory (``PendingNotificationsFile``). While no process of the app is connected to
/// bgtaskd, bgtaskd reads that file, and at each request's moment fires it as the app would
/// have: presented as the user allowed (the answer kept in `notifications.json`, with the
/// `BGTASK_NOTIFICATIONS` switch), a repeating request moved on to its next moment, the
/// delivery and its badge written into the file for the app's next launch, which adds them to
/// its delivered notifications and its icon. Every read, change and write happens under the
/// file's lock, with the check that the app is still away made under it too.
package struct AwayNotifications: Sendable {
    /// The app.
    package let app: AppID
    /// The app's state directory.
    package let directory: URL
    /// What the user's switch says (`BGTASK_NOTIFICATIONS` as bgtaskd passes it on to the
    /// app): `true` allowed, `false` denied, `nil` not set.
    package let userSwitch: Bool?

    /// The notifications of `app`, whose state directory is `directory`; `switchValue` is
    /// `BGTASK_NOTIFICATIONS` as the app's launches get it.
    package init(app: AppID, directory: URL, switchValue: String?) {
        self.app = app
        self.directory = directory
        userSwitch = AuthorizationFile.userSwitch(switchValue).answer
    }

    /// The notifications of `app` in its default state directory under `environment` (the
    /// environment bgtaskd gives its launches: `XDG_STATE_HOME`, else `HOME`); `nil` when none
    /// can be chosen (neither is set, or the app's identifier cannot name a directory).
    package static func defaultLocation(of app: AppID, environment: [String: String]) -> AwayNotifications? {
        guard AppID.problem(with: app.rawValue) == nil, let root = try? EmbeddedScheduler.stateRoot(environment: environment) else { return nil }
        return AwayNotifications(app: app, directory: root.appendingPathComponent(app.rawValue), switchValue: environment["BGTASK_NOTIFICATIONS"])
    }

    private var file: PendingNotificationsFile {
        PendingNotificationsFile(url: directory.appendingPathComponent("pending-notifications.json"))
    }

    /// The soonest moment of the app's pending requests, or `nil` when none is pending (or
    /// the file cannot be read: a look never moves it aside or writes it).
    package func nextMoment() -> Date? {
        guard let bytes = try? BoundedFile.read(path: file.url.path, limit: PendingNotificationsFile.sizeLimit) else { return nil }
        return (try? KeptNotifications.decode(bytes))?.pending.map(\.fireDate).min()
    }

    /// What one delivery while away did.
    package struct Outcome: Sendable, Equatable {
        /// The lines shown, one per notification presented.
        package var shown: [String] = []
        /// Diagnostics: notifications fired but not presented, files that could not be read
        /// or written.
        package var problems: [String] = []
        /// The soonest pending moment left, to deliver at next.
        package var next: Date?
        /// Whether the app was found back (a process connected or started): nothing was done.
        package var appCameBack = false
        /// Whether the file's lock was held by another process (the app writing): try again soon.
        package var busy = false
    }

    /// Fires every pending request whose moment came by `now`, holding the file's lock, if
    /// `stillAway` (asked under the lock) says no process of the app is there.
    package func deliverDue(now: Date, stillAway: () -> Bool) -> Outcome {
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
                outcome.problems.append("the app's pending notifications were not delivered: \(error)")
            }
            return outcome
        }
        return withExtendedLifetime(lock) {
            guard stillAway() else {
                outcome.appCameBack = true
                return outcome
            }
            let (read, problem, writable) = file.read()
            if let problem { outcome.problems.append(problem) }
            guard writable, problem == nil else { return outcome }
            var kept = read
            let allowed = allowedPresentation(&outcome)
            let due = kept.pending.filter { $0.fireDate <= now }.sorted { ($0.fireDate, $0.identifier) < ($1.fireDate, $1.identifier) }
            guard !due.isEmpty else {
                outcome.next = kept.pending.map(\.fireDate).min()
                return outcome
            }
            for fired in due {
                kept.pending.removeAll { $0.identifier == fired.identifier }
                if let next = Self.nextFireDate(of: fired, now: now) {
                    var again = fired
                    again.fireDate = next
                    kept.pending.append(again)
                }
                guard NotificationPresentation.isShown(allowed) else {
                    outcome.problems.append("notification \"\(fired.identifier)\" came due while the app was not running and was not presented (the user allowed no presentation)")
                    continue
                }
                if allowed.contains(.badge), let badge = fired.badge { kept.badge = badge }
                kept.deliveredWhileAway.removeAll { $0.request.identifier == fired.identifier }
                kept.deliveredWhileAway.append(AwayDelivery(request: fired, date: now, listed: NotificationPresentation.isListed(allowed)))
                let late = now.timeIntervalSince(fired.fireDate) >= 60 ? ["late: due \(fired.fireDate)"] : []
                outcome.shown.append(NotificationPresentation.line(
                    title: fired.title, subtitle: fired.subtitle, body: fired.body, hasSound: fired.sound != nil, badge: fired.badge,
                    options: allowed, more: ["delivered by bgtaskd while the app was not running"] + late))
            }
            if kept.deliveredWhileAway.count > KeptNotifications.deliveredLimit {
                kept.deliveredWhileAway.removeFirst(kept.deliveredWhileAway.count - KeptNotifications.deliveredLimit)
            }
            kept.pending.sort { ($0.fireDate, $0.identifier) < ($1.fireDate, $1.identifier) }
            if let failure = file.write(kept) {
                // Nothing is presented that the file does not record: the app's next launch
                // would deliver it again.
                outcome.shown = []
                outcome.problems.append(failure)
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
        if let problem { outcome.problems.append(problem) }
        guard let saved, var status = UNAuthorizationStatus.known(rawValue: saved.status) else {
            return []
        }
        var options = UNAuthorizationOptions(rawValue: saved.options)
        if let allowed = userSwitch, allowed == (status == .denied) {
            if allowed {
                status = .authorized
            } else {
                status = .denied
                options = []
            }
        }
        return NotificationPresentation.allowed(status: status, options: options)
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
        return trigger?.fireDate(scheduled: request.added, after: request.fireDate, now: now)
    }
}
