import BackgroundTasks
import Foundation
import SchedulerCore
import SchedulerStore
import Testing
@testable import UserNotifications

/// A state directory of its own for one test, removed by ``remove()``.
/// A state directory of the test's own, removed by `remove()`.
struct ScratchStateDirectory {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("un-state-\(UUID().uuidString)")
    var file: PendingNotificationsFile { PendingNotificationsFile(url: url.appendingPathComponent("pending-notifications.json")) }

    init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }

    func remove() { try? FileManager.default.removeItem(at: url) }

    /// Writes the user's answer as the app's center keeps it.
    func saveAnswer(_ status: UNAuthorizationStatus, _ options: UNAuthorizationOptions) throws {
        let answer = AuthorizationFile(url: url.appendingPathComponent("notifications.json"))
        #expect(answer.write(SavedAuthorization(status: status.rawValue, options: options.rawValue)) == nil)
    }
}

/// Pending requests as an app's center keeps them: added at `host`'s now.
private func keptRequests(_ requests: [UNNotificationRequest], host: FakeNotificationHost) async throws -> [StoredNotificationRequest] {
    let center = UNUserNotificationCenter(host: host)
    _ = try await center.requestAuthorization(options: [.alert, .sound, .badge])
    for request in requests { try await center.add(request) }
    return host.pending
}

private func reminder(_ identifier: String, after seconds: TimeInterval, repeats: Bool = false, badge: Int? = nil) -> UNNotificationRequest {
    let content = UNMutableNotificationContent()
    content.title = "Reminder"
    content.body = identifier
    content.sound = .default
    if let badge { content.badge = NSNumber(value: badge) }
    return UNNotificationRequest(identifier: identifier, content: content, trigger: UNTimeIntervalNotificationTrigger(timeInterval: seconds, repeats: repeats))
}

@Suite("UserNotifications: delivered while the app is away (bgtaskd's side)")
struct AwayNotificationsTests {
    @Test("due requests are fired as the app would: shown as allowed, repeats moved on, the delivery and its badge kept for the next launch")
    func deliversDueRequests() async throws {
        let scratch = try ScratchStateDirectory()
        defer { scratch.remove() }
        let host = FakeNotificationHost()
        let added = host.now
        let pending = try await keptRequests([
            reminder("soon", after: 60, badge: 4), reminder("hourly", after: 3600, repeats: true), reminder("later", after: 7200),
        ], host: host)
        #expect(scratch.file.write(KeptNotifications(pending: pending)) == nil)
        try scratch.saveAnswer(.authorized, [.alert, .sound, .badge])
        let away = AwayNotifications(app: AppID("com.example.reader"), directory: scratch.url, switchValue: nil)
        #expect(away.nextMoment().moment == added.addingTimeInterval(60))

        // Nothing due yet: nothing changes.
        let early = away.deliverDue(now: added.addingTimeInterval(30))
        #expect(early.shown.isEmpty && early.failure == nil && early.notPresented.isEmpty)
        #expect(early.next == added.addingTimeInterval(60))
        #expect(scratch.file.read().kept == KeptNotifications(pending: pending))

        // 65 minutes on: "soon" and the first "hourly" come.
        let now = added.addingTimeInterval(3900)
        let outcome = away.deliverDue(now: now)
        #expect(outcome.failure == nil && outcome.notPresented.isEmpty, "\(outcome)")
        #expect(outcome.shown.count == 2)
        #expect(outcome.shown.first?.hasPrefix("notification \"soon\" shown: Reminder — soon (sound, badge 4, delivered by bgtaskd: the app did not, late: due ") == true, "\(outcome.shown)")
        #expect(outcome.shown.last?.hasPrefix("notification \"hourly\" shown: Reminder — hourly (sound, delivered by bgtaskd: the app did not, late: due ") == true, "\(outcome.shown)")
        let kept = scratch.file.read().kept
        #expect(kept.pending.map(\.identifier) == ["hourly", "later"])
        #expect(kept.pending.first?.fireDate == added.addingTimeInterval(7200), "the series goes on from its next moment")
        #expect(kept.deliveredWhileAway.map(\.request.identifier) == ["soon", "hourly"])
        #expect(kept.deliveredWhileAway.allSatisfy { $0.date == now && $0.listed })
        #expect(kept.deliveredWhileAway.first?.request.fireDate == added.addingTimeInterval(60), "recorded with the moment it was due")
        #expect(kept.badge == 4)
        #expect(outcome.next == added.addingTimeInterval(7200))
        #expect(away.nextMoment().moment == added.addingTimeInterval(7200))
    }

    @Test("a moment is left to the app for the grace; nothing is done while another process holds the file's lock")
    func graceAndBusy() async throws {
        let scratch = try ScratchStateDirectory()
        defer { scratch.remove() }
        let host = FakeNotificationHost()
        let pending = try await keptRequests([reminder("soon", after: 60)], host: host)
        #expect(scratch.file.write(KeptNotifications(pending: pending)) == nil)
        try scratch.saveAnswer(.authorized, [.alert])
        let away = AwayNotifications(app: AppID("com.example.reader"), directory: scratch.url, switchValue: nil)
        let moment = host.now.addingTimeInterval(60)

        let withinGrace = away.deliverDue(now: moment.addingTimeInterval(AwayNotifications.grace - 0.5))
        #expect(withinGrace.shown.isEmpty && withinGrace.next == moment, "the app's own timer delivers at the moment")
        #expect(scratch.file.read().kept == KeptNotifications(pending: pending))

        let later = moment.addingTimeInterval(AwayNotifications.grace)
        // Another process's hold, for the length of the call (released when the closure ends).
        let busy = withExtendedLifetime(try scratch.file.lock()) { away.deliverDue(now: later) }
        #expect(busy.busy && busy.shown.isEmpty)
        #expect(scratch.file.read().kept == KeptNotifications(pending: pending))
        #expect(away.deliverDue(now: later).shown.count == 1, "once the lock is free")
    }

    @Test("one moment is delivered once, by whoever comes first: the app's process takes in what bgtaskd fired (moved on, listed, no line), and bgtaskd finds nothing due of what the app fired")
    func onceByWhoeverComesFirst() async throws {
        // bgtaskd first: the app's process was frozen at the moment, its timer fires late.
        do {
            let scratch = try ScratchStateDirectory()
            defer { scratch.remove() }
            try scratch.saveAnswer(.authorized, [.alert, .badge])
            let host = FakeNotificationHost()
            let center = UNUserNotificationCenter(host: host)
            _ = try await center.requestAuthorization(options: [.alert, .badge])
            try await center.add(reminder("hourly", after: 3600, repeats: true, badge: 2))
            // What the app's process kept, as bgtaskd finds it; bgtaskd fires the first moment.
            #expect(scratch.file.write(host.kept) == nil)
            let away = AwayNotifications(app: AppID("com.example.reader"), directory: scratch.url, switchValue: nil)
            let outcome = away.deliverDue(now: host.now.addingTimeInterval(3600 + AwayNotifications.grace))
            #expect(outcome.shown.count == 1)
            host.kept = scratch.file.read().kept
            // The app's process thaws: its timer for that moment fires.
            host.advance(by: 3600 + 30)
            #expect(host.shown.isEmpty, "not delivered twice: \(host.shown)")
            #expect(await center.deliveredNotifications().map(\.request.identifier) == ["hourly"])
            #expect(host.badge == 2)
            #expect(host.kept.deliveredWhileAway.isEmpty && host.kept.pending.first?.fireDate == host.now.addingTimeInterval(-30).addingTimeInterval(3600), "moved on to its next moment, taken in once")
            // Its next moment is its own again.
            host.advance(by: 3600)
            #expect(host.shown.count == 1, "\(host.shown)")
        }
        // The app first: it fired at the moment and kept that; bgtaskd finds nothing due.
        do {
            let scratch = try ScratchStateDirectory()
            defer { scratch.remove() }
            try scratch.saveAnswer(.authorized, [.alert])
            let host = FakeNotificationHost()
            let center = UNUserNotificationCenter(host: host)
            _ = try await center.requestAuthorization(options: [.alert])
            try await center.add(reminder("soon", after: 60))
            host.advance(by: 60)
            #expect(host.shown.count == 1)
            #expect(scratch.file.write(host.kept) == nil)
            let away = AwayNotifications(app: AppID("com.example.reader"), directory: scratch.url, switchValue: nil)
            let outcome = away.deliverDue(now: host.now.addingTimeInterval(AwayNotifications.grace))
            #expect(outcome.shown.isEmpty && outcome.failure == nil)
        }
    }

    @Test("what the user allowed decides: denied (or the switch) fires without showing (recorded as not listed); provisional goes quietly to the list; never asked shows nothing")
    func presentationAsAllowed() async throws {
        for (status, options, switchValue, shown, listed) in [
            (UNAuthorizationStatus.denied, UNAuthorizationOptions(), nil as String?, nil as String?, false),
            (.authorized, [.alert, .sound, .badge], "denied", nil, false),
            (.provisional, [.alert, .sound, .badge], nil, "notification \"soon\" shown: Reminder — soon (quietly, in the list, delivered by bgtaskd: the app did not, late: due ", true),
            (.authorized, [.sound], nil, "notification \"soon\" shown: Reminder — soon (quietly, in the list, sound, delivered by bgtaskd: the app did not, late: due ", true),
        ] {
            let scratch = try ScratchStateDirectory()
            defer { scratch.remove() }
            let host = FakeNotificationHost()
            let pending = try await keptRequests([reminder("soon", after: 60, badge: 2)], host: host)
            #expect(scratch.file.write(KeptNotifications(pending: pending)) == nil)
            try scratch.saveAnswer(status, options)
            let away = AwayNotifications(app: AppID("com.example.reader"), directory: scratch.url, switchValue: switchValue)
            let outcome = away.deliverDue(now: host.now.addingTimeInterval(3600))
            let kept = scratch.file.read().kept
            #expect(kept.pending.isEmpty, "fired either way")
            if let shown {
                #expect(outcome.shown.count == 1 && outcome.shown[0].hasPrefix(shown), "\(status.rawValue): \(outcome.shown)")
                #expect(kept.deliveredWhileAway.map(\.listed) == [listed])
            } else {
                #expect(outcome.shown.isEmpty)
                #expect(outcome.notPresented.contains { $0.contains("was not presented") }, "\(outcome)")
                #expect(kept.deliveredWhileAway.map(\.listed) == [false], "recorded all the same, for the app to move on from")
            }
            #expect(kept.badge == (options.contains(.badge) && status == .authorized && switchValue == nil ? 2 : nil))
        }
        // An app that never asked has no answer kept: nothing is shown.
        let scratch = try ScratchStateDirectory()
        defer { scratch.remove() }
        let host = FakeNotificationHost()
        #expect(scratch.file.write(KeptNotifications(pending: try await keptRequests([reminder("soon", after: 60)], host: host))) == nil)
        let outcome = AwayNotifications(app: AppID("com.example.reader"), directory: scratch.url, switchValue: nil).deliverDue(now: host.now.addingTimeInterval(61 + AwayNotifications.grace))
        #expect(outcome.shown.isEmpty && scratch.file.read().kept.deliveredWhileAway.map(\.listed) == [false])
    }

    @Test("a file it cannot read is never written over; a missing file is nothing to do; a version-1 file (the bare array) is read")
    func filesItCannotUse() async throws {
        let scratch = try ScratchStateDirectory()
        defer { scratch.remove() }
        let away = AwayNotifications(app: AppID("com.example.reader"), directory: scratch.url, switchValue: nil)
        #expect(away.deliverDue(now: Date()) == AwayNotifications.Outcome())
        #expect(away.nextMoment().moment == nil && away.nextMoment().problem == nil)
        #expect(!FileManager.default.fileExists(atPath: scratch.file.url.path), "nothing created")

        let unreadable = Data("{\"version\": 3, \"pending\": []}".utf8)
        try unreadable.write(to: scratch.file.url)
        let newer = away.deliverDue(now: Date())
        #expect(newer.failure?.contains("version 3") == true && newer.failure?.contains("left for the app") == true, "\(newer)")
        #expect(newer.shown.isEmpty)
        #expect(away.nextMoment().problem?.contains("version 3") == true, "a look says why too")
        #expect(try Data(contentsOf: scratch.file.url) == unreadable, "left in place for the app, never moved aside by bgtaskd")

        let host = FakeNotificationHost()
        let pending = try await keptRequests([reminder("soon", after: 60)], host: host)
        try JSONEncoder().encode(pending).write(to: scratch.file.url)
        try scratch.saveAnswer(.authorized, [.alert])
        #expect(away.nextMoment().moment == host.now.addingTimeInterval(60))
        #expect(away.deliverDue(now: host.now.addingTimeInterval(60 + AwayNotifications.grace)).shown == ["notification \"soon\" shown: Reminder — soon (delivered by bgtaskd: the app did not)"])
        #expect(scratch.file.read().kept.pending.isEmpty)
    }

    @Test("a repeating request bgtaskd fired several times while the app was frozen is not fired again by the app's late timer; one fired without being presented moves on too")
    func severalFiringsWhileFrozen() async throws {
        for presented in [true, false] {
            let scratch = try ScratchStateDirectory()
            defer { scratch.remove() }
            try scratch.saveAnswer(presented ? .authorized : .denied, presented ? [.alert] : [])
            let host = FakeNotificationHost()
            let center = UNUserNotificationCenter(host: host)
            _ = try await center.requestAuthorization(options: [.alert])
            try await center.add(reminder("minutely", after: 60, repeats: true))
            #expect(scratch.file.write(host.kept) == nil)
            let away = AwayNotifications(app: AppID("com.example.reader"), directory: scratch.url, switchValue: nil)
            let first = away.deliverDue(now: host.now.addingTimeInterval(60 + AwayNotifications.grace))
            let second = away.deliverDue(now: host.now.addingTimeInterval(120 + AwayNotifications.grace))
            #expect(first.shown.count == (presented ? 1 : 0) && second.shown.count == (presented ? 1 : 0))
            host.kept = scratch.file.read().kept
            // Thawed: its timer for the first moment fires, late.
            host.advance(by: 150)
            #expect(host.shown.isEmpty, "\(presented): not fired again by the app: \(host.shown)")
            #expect(host.kept.pending.first?.fireDate == host.now.addingTimeInterval(-150).addingTimeInterval(180), "on from bgtaskd's last firing")
            #expect(await center.deliveredNotifications().count == (presented ? 1 : 0))
            host.advance(by: 30)
            #expect(host.shown.count == 1, "its next moment is its own (the app's process was allowed): \(host.shown)")
        }
    }

    @Test("a moment beyond the dates a file keeps is refused when added, and a series ends before it: the file stays readable")
    func farMomentsAreRefused() async throws {
        let host = FakeNotificationHost()
        let center = UNUserNotificationCenter(host: host)
        _ = try await center.requestAuthorization(options: [.alert])
        var components = DateComponents(year: 6000, month: 1, day: 1)
        components.timeZone = TimeZone(identifier: "UTC")
        let content = UNMutableNotificationContent()
        content.title = "far"
        let refused = await #expect(throws: UNError.self) {
            try await center.add(UNNotificationRequest(identifier: "far", content: content, trigger: UNCalendarNotificationTrigger(dateMatching: components, repeats: false)))
        }
        #expect(refused?.code == .notificationInvalidNoDate && refused?.message.contains("beyond the") == true, "\(String(describing: refused))")
        await #expect(throws: UNError.self) {
            try await center.add(UNNotificationRequest(identifier: "longest", content: content, trigger: UNTimeIntervalNotificationTrigger(timeInterval: 5e11, repeats: false)))
        }
        #expect(host.pending.isEmpty)
    }

    @Test("while another process holds the file's lock the app's timer fires nothing and tries again; keeping waits too")
    func appWaitsForTheLock() async throws {
        let host = FakeNotificationHost()
        let center = UNUserNotificationCenter(host: host)
        _ = try await center.requestAuthorization(options: [.alert])
        try await center.add(reminder("soon", after: 60))
        host.lockedByAnother = true
        host.advance(by: 61)
        #expect(host.shown.isEmpty, "not fired without the lock")
        host.lockedByAnother = false
        host.advance(by: 1)
        #expect(host.shown.count == 1, "\(host.shown)")
        #expect(host.pending.isEmpty)
    }

    @Test("a change made while another process holds the file's lock is kept once the lock is free, however long it is held, tried after 1, 2, 4... s; a removal too")
    func keepingWaitsForTheLock() async throws {
        let host = FakeNotificationHost()
        let center = UNUserNotificationCenter(host: host)
        _ = try await center.requestAuthorization(options: [.alert])
        host.lockedByAnother = true
        try await center.add(reminder("later", after: 3_600))
        #expect(host.pending.isEmpty, "not written without the lock")
        // Tried again after 1, 2, 4... seconds (at 1, 3, 7).
        host.advance(by: 5)
        #expect(host.pending.isEmpty, "still held")
        host.lockedByAnother = false
        host.advance(by: 1)
        #expect(host.pending.isEmpty, "the next try is at 7 s")
        host.advance(by: 1)
        #expect(host.pending.map(\.identifier) == ["later"])
        // A write that went through starts the backing off again.
        host.lockedByAnother = true
        center.removePendingNotificationRequests(withIdentifiers: ["later"])
        host.advance(by: 2)
        #expect(host.pending.map(\.identifier) == ["later"], "still held")
        host.lockedByAnother = false
        host.advance(by: 1)
        #expect(host.pending.isEmpty, "the removal kept at the try 3 s after it")
    }

    @Test("a file no app could have written is not delivered from: more than 64 pending, or a date beyond the calendar; 64 due at once are")
    func filesNoAppWrites() async throws {
        let scratch = try ScratchStateDirectory()
        defer { scratch.remove() }
        try scratch.saveAnswer(.authorized, [.alert])
        let host = FakeNotificationHost()
        let one = try #require(try await keptRequests([reminder("r", after: 60)], host: host).first)
        let many = (0..<65).map { index -> StoredNotificationRequest in
            var request = one
            request.identifier = "r\(index)"
            return request
        }
        let away = AwayNotifications(app: AppID("com.example.reader"), directory: scratch.url, switchValue: nil)
        #expect(scratch.file.write(KeptNotifications(pending: many)) == nil)
        #expect(away.nextMoment().problem?.contains("holds 65 pending notification requests, more than the 64 an app keeps") == true, "\(away.nextMoment())")
        let refused = away.deliverDue(now: host.now.addingTimeInterval(120))
        #expect(refused.failure?.contains("holds 65") == true && refused.shown.isEmpty)
        #expect(scratch.file.read().kept.pending.count == 65, "left as it was")

        #expect(scratch.file.write(KeptNotifications(pending: Array(many.prefix(64)))) == nil)
        let all = away.deliverDue(now: host.now.addingTimeInterval(120))
        #expect(all.shown.count == 64 && all.failure == nil)
        #expect(scratch.file.read().kept.deliveredWhileAway.count == 64)

        var far = one
        far.fireDate = Date(timeIntervalSinceReferenceDate: 1e300)
        #expect(scratch.file.write(KeptNotifications(pending: [far])) == nil)
        #expect(away.nextMoment().problem?.contains("has a date 1e+300 seconds from 2001") == true, "\(away.nextMoment())")
        #expect(away.deliverDue(now: host.now).failure != nil)

        // A trigger the center refuses (an outside probe: a repeating interval of 59 s was
        // delivered once, then dropped without a word) makes the file unreadable, named.
        var tooOften = one
        tooOften.trigger = .timeInterval(seconds: 59, repeats: true)
        #expect(scratch.file.write(KeptNotifications(pending: [tooOften])) == nil)
        let refusal = "notification request \"r\" has a trigger the notification center refuses: the time interval must be at least 60 if repeating"
        #expect(away.nextMoment().problem?.contains(refusal) == true, "\(away.nextMoment())")
        let held = away.deliverDue(now: host.now.addingTimeInterval(120))
        #expect(held.shown.isEmpty && held.failure?.contains(refusal) == true, "\(held)")
        #expect(scratch.file.read(movingAside: false).problem?.contains(refusal) == true)
        var matchingNothing = one
        matchingNothing.trigger = .calendar(components: DateComponents(), repeats: true)
        #expect(scratch.file.write(KeptNotifications(pending: [matchingNothing])) == nil)
        #expect(away.nextMoment().problem?.contains("the date components match no date") == true, "\(away.nextMoment())")
        var everyMinute = one
        everyMinute.trigger = .timeInterval(seconds: 60, repeats: true)
        #expect(scratch.file.write(KeptNotifications(pending: [everyMinute])) == nil)
        #expect(away.nextMoment().problem == nil, "a trigger the center accepts is read")
    }

    @Test("the app's next launch takes in what was delivered while it was away: the list, the badge, and the file written without them")
    func nextLaunchTakesThemIn() async throws {
        let host = FakeNotificationHost()
        let pending = try await keptRequests([reminder("soon", after: 60, badge: 5), reminder("later", after: 7200)], host: host)
        let delivered = AwayDelivery(request: pending[0], date: host.now.addingTimeInterval(60), listed: true)
        let unlisted = AwayDelivery(request: pending[0], date: host.now.addingTimeInterval(61), listed: false)
        host.kept = KeptNotifications(pending: [pending[1]], deliveredWhileAway: [delivered, unlisted], badge: 5)

        let next = host.nextLaunch(after: 600)
        next.kept = host.kept
        let center = UNUserNotificationCenter(host: next)
        center.loadKeptState()
        let list = await center.deliveredNotifications()
        #expect(list.map(\.request.identifier) == ["soon"])
        #expect(list.first?.date == host.now.addingTimeInterval(60))
        #expect(list.first?.request.content.badge == 5)
        #expect(next.badge == 5)
        #expect(next.shown.isEmpty, "shown by bgtaskd already")
        #expect(next.reports.contains { $0.contains("\"soon\" was delivered by bgtaskd at") })
        #expect(await center.pendingNotificationRequests().map(\.identifier) == ["later"])
        #expect(next.kept.deliveredWhileAway.isEmpty && next.kept.badge == nil, "taken in once")
        #expect(next.kept.pending.map(\.identifier) == ["later"])
    }
}
