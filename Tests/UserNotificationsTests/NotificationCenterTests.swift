import BackgroundTasks
import Foundation
import Synchronization
import Testing
@testable import UserNotifications

/// A host driven by the test: virtual time, timers fired by ``advance(by:)``, main-actor
/// calls run by ``runMainActorCalls()``, completion handlers run at once, shown lines and
/// diagnostics collected.
final class FakeNotificationHost: NotificationHost {
    private struct State {
        var now = Date(timeIntervalSinceReferenceDate: 800_000_000)
        var timers: [(id: Int, at: Date, action: @Sendable () -> Void)] = []
        var cancelled: Set<Int> = []
        var nextID = 0
        var foreground = false
        var broughtToForeground = 0
        var unreadable = false
        var launchNotification: String?
        var categories: [SavedCategory]?
        var backgroundTimeHeld = 0
        var backgroundTimeEnded = 0
        var mainActorCalls: [@MainActor @Sendable () async -> Void] = []
        var shown: [String] = []
        var reports: [String] = []
        var badge: Int?
        var saved: SavedAuthorization?
        var pending: [StoredNotificationRequest] = []
        /// The delivered list the "file" keeps.
        var delivered: [AwayDelivery] = []
        /// What "bgtaskd" delivered while the app was away, for the next launch to take in.
        var away: [AwayDelivery] = []
        var awayBadge: Int?
    }

    private let state = Mutex(State())
    let userSwitch: Bool?
    /// The tap this "process" was started for.
    var launchNotification: String? {
        get { state.withLock { $0.launchNotification } }
        set { state.withLock { $0.launchNotification = newValue } }
    }

    init(userSwitch: Bool? = nil, saved: SavedAuthorization? = nil, slowSaves: Bool = false) {
        self.userSwitch = userSwitch
        self.slowSaves = slowSaves
        state.withLock { $0.saved = saved }
    }

    private final class Timer: DriverTimer {
        let id: Int
        weak let host: FakeNotificationHost?
        init(id: Int, host: FakeNotificationHost) { self.id = id; self.host = host }
        func cancel() { _ = host?.state.withLock { $0.cancelled.insert(id) } }
        // As the real clock's timers (a dispatch source): one nobody holds is cancelled, so a
        // center that drops a timer it needs is caught here.
        deinit { cancel() }
    }

    var now: Date { state.withLock { $0.now } }

    func schedule(at instant: Date, _ action: @escaping @Sendable () -> Void) -> any DriverTimer {
        let id = state.withLock { state in
            state.nextID += 1
            state.timers.append((state.nextID, instant, action))
            return state.nextID
        }
        return Timer(id: id, host: self)
    }

    /// Moves time forward by `seconds`, firing every timer due on the way, in order.
    func advance(by seconds: TimeInterval) {
        let end = now.addingTimeInterval(seconds)
        while true {
            let due = state.withLock { state -> (@Sendable () -> Void)? in
                let live = state.timers.enumerated().filter { !state.cancelled.contains($0.element.id) && $0.element.at <= end }
                guard let first = live.min(by: { ($0.element.at, $0.element.id) < ($1.element.at, $1.element.id) }) else { return nil }
                state.timers.remove(at: first.offset)
                state.now = max(state.now, first.element.at)
                return first.element.action
            }
            guard let due else { break }
            due()
        }
        state.withLock { $0.now = end }
    }

    var isInForeground: Bool {
        get { state.withLock { $0.foreground } }
        set { state.withLock { $0.foreground = newValue } }
    }

    /// How many times the center brought the app to the foreground.
    private(set) var broughtToForeground: Int {
        get { state.withLock { $0.broughtToForeground } }
        set { state.withLock { $0.broughtToForeground = newValue } }
    }

    /// How many times the center asked for background time, and how many it ended.
    var backgroundTime: (held: Int, ended: Int) { state.withLock { ($0.backgroundTimeHeld, $0.backgroundTimeEnded) } }

    func holdBackgroundTime(_ name: String) -> @Sendable () -> Void {
        state.withLock { $0.backgroundTimeHeld += 1 }
        return { [weak self] in self?.state.withLock { $0.backgroundTimeEnded += 1 } }
    }

    func bringToForeground() {
        state.withLock { state in
            state.broughtToForeground += 1
            state.foreground = true
        }
    }

    func callOnMainActor(_ what: String, _ body: @escaping @MainActor @Sendable () async -> Void) {
        state.withLock { $0.mainActorCalls.append(body) }
    }

    /// Runs the main-actor calls made so far (and those they make), in order.
    @MainActor
    func runMainActorCalls() async {
        while let call = state.withLock({ $0.mainActorCalls.isEmpty ? nil : $0.mainActorCalls.removeFirst() }) {
            await call()
        }
    }

    func complete(_ body: @escaping @Sendable () -> Void) { body() }
    func report(_ level: BGDiagnosticMessage.Level, _ text: String) { state.withLock { $0.reports.append("\(level): \(text)") } }
    func show(_ line: String, identifier: String) { state.withLock { $0.shown.append(line) } }
    func setBadge(_ number: Int) { state.withLock { $0.badge = number } }
    func savedAuthorization() -> SavedAuthorization? { state.withLock { $0.saved } }
    func savedCategories() -> [SavedCategory]? { state.withLock { $0.categories } }
    func saveCategories(_ categories: [SavedCategory]) {
        slowSave()
        state.withLock { $0.categories = categories }
    }
    func saveAuthorization(_ saved: SavedAuthorization) {
        slowSave()
        state.withLock { $0.saved = saved }
    }
    /// Whether a save takes as long as a file's write, the earlier ones longest (the k-th
    /// save of the test 20 − k ms, at least 1), so that writes started in one order finish in
    /// the other unless the center orders them.
    let slowSaves: Bool
    private let savesStarted = Mutex(0)
    private func slowSave() {
        guard slowSaves else { return }
        let started = savesStarted.withLock { count in defer { count += 1 }; return count }
        usleep(UInt32(max(1, 20 - started)) * 1_000)
    }
    var keepsPending: Bool { true }
    /// The pending "file"'s lock: apart from `state`, which the center's calls into this
    /// host take while holding its own lock (the real file's lock is taken first, too).
    private let fileLock = NSLock()
    /// Whether the "file"'s lock is held by "another process" (updates are refused but the
    /// first read of a launch).
    private let heldByAnother = Mutex(false)
    var lockedByAnother: Bool {
        get { heldByAnother.withLock { $0 } }
        set { heldByAnother.withLock { $0 = newValue } }
    }
    /// Whether the "file" cannot be read (moved aside: what is read is empty for want of it).
    var fileUnreadable: Bool {
        get { state.withLock { $0.unreadable } }
        set { state.withLock { $0.unreadable = newValue } }
    }
    func updatePending(orWithoutLock: Bool, _ body: (KeptNotifications) -> KeptNotifications?) -> Bool {
        fileLock.lock()
        defer { fileLock.unlock() }
        if lockedByAnother, !orWithoutLock { return false }
        var read = kept
        if fileUnreadable {
            read = KeptNotifications()
            read.wasRead = false
        }
        guard let keep = body(read) else { return true }
        state.withLock { state in
            state.pending = keep.pending
            state.delivered = keep.delivered
            state.away = []
            state.awayBadge = nil
        }
        return true
    }
    var pending: [StoredNotificationRequest] { state.withLock { $0.pending } }
    /// What the "file" keeps, as a delivery by bgtaskd leaves it.
    var kept: KeptNotifications {
        get { state.withLock { KeptNotifications(pending: $0.pending, delivered: $0.delivered, deliveredWhileAway: $0.away, badge: $0.awayBadge) } }
        set { state.withLock { $0.pending = newValue.pending; $0.delivered = newValue.delivered; $0.away = newValue.deliveredWhileAway; $0.awayBadge = newValue.badge } }
    }

    /// Another launch on the same device: what this one kept (the answer, the pending
    /// requests), its time, and nothing else.
    func nextLaunch(after seconds: TimeInterval, foreground: Bool = false) -> FakeNotificationHost {
        let next = FakeNotificationHost(userSwitch: userSwitch, saved: saved)
        let (delivered, categories) = state.withLock { ($0.delivered, $0.categories) }
        next.state.withLock { $0.pending = self.pending; $0.delivered = delivered; $0.categories = categories; $0.now = self.now.addingTimeInterval(seconds); $0.foreground = foreground }
        return next
    }

    var shown: [String] { state.withLock { $0.shown } }
    var reports: [String] { state.withLock { $0.reports } }
    var badge: Int? { state.withLock { $0.badge } }
    var saved: SavedAuthorization? { state.withLock { $0.saved } }
}

private func content(_ title: String, body: String = "", badge: Int? = nil) -> UNMutableNotificationContent {
    let content = UNMutableNotificationContent()
    content.title = title
    content.body = body
    content.sound = .default
    if let badge { content.badge = NSNumber(value: badge) }
    return content
}

private func allowedCenter(_ host: FakeNotificationHost) async throws -> UNUserNotificationCenter {
    let center = UNUserNotificationCenter(host: host)
    let granted = try await center.requestAuthorization(options: [.alert, .sound, .badge])
    #expect(granted)
    return center
}

@Suite("UserNotifications: the center")
struct NotificationCenterTests {
    @Test("threads asking for authorization and setting categories at once: the files keep the latest answer and set, not whichever write came last")
    func concurrentChangesKeepTheLatest() async {
        // (`finished.wait()` blocks a thread of the test's pool while the threads run.)
        let options: [UNAuthorizationOptions] = [.alert, .badge, .sound, .carPlay, .criticalAlert, .announcement, .providesAppNotificationSettings, .timeSensitive]
        for _ in 0..<5 {
            let host = FakeNotificationHost(slowSaves: true)
            let center = UNUserNotificationCenter(host: host)
            // Threads of their own (the cooperative pool runs two at a time here), all at once.
            let finished = DispatchGroup()
            for option in options {
                let both: [@Sendable () -> Void] = [{ center.requestAuthorization(options: option) { _, _ in } },
                                                    { center.setNotificationCategories([UNNotificationCategory(identifier: "c\(option.rawValue)", actions: [], intentIdentifiers: [])]) }]
                for work in both {
                    finished.enter()
                    Thread.detachNewThread { work(); finished.leave() }
                }
            }
            finished.wait()
            let settings = await center.notificationSettings()
            #expect(settings.authorizationStatus == .authorized)
            #expect(host.savedAuthorization()?.options == UNAuthorizationOptions(options).rawValue, "every option granted, and kept")
            let current = await center.notificationCategories()
            #expect(host.savedCategories()?.map(\.identifier) == current.map(\.identifier), "the set in force is the one kept")
        }
    }

    @Test("a time-interval request is delivered once its interval passed: shown, kept, its badge applied")
    func timeIntervalDelivery() async throws {
        let host = FakeNotificationHost()
        let center = try await allowedCenter(host)
        try await center.add(UNNotificationRequest(identifier: "done", content: content("New articles", body: "3 stories", badge: 3), trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: false)))
        #expect(await center.pendingNotificationRequests().map(\.identifier) == ["done"])
        host.advance(by: 59)
        #expect(host.shown.isEmpty)
        host.advance(by: 1)
        #expect(host.shown == ["New articles — 3 stories (sound, badge 3)"])
        #expect(host.badge == 3)
        #expect(await center.pendingNotificationRequests().isEmpty)
        let delivered = await center.deliveredNotifications()
        #expect(delivered.map(\.request.identifier) == ["done"])
        #expect(delivered.first?.date == host.now)
    }

    @Test("a request without a trigger is delivered at once; the content is copied when the request is made")
    func immediateDeliveryAndCopiedContent() async throws {
        let host = FakeNotificationHost()
        let center = try await allowedCenter(host)
        let mutable = content("First")
        let request = UNNotificationRequest(identifier: "now", content: mutable, trigger: nil)
        mutable.title = "Changed afterwards"
        try await center.add(request)
        host.advance(by: 0)
        #expect(host.shown == ["First (sound)"])
        #expect(request.content.title == "First")
        mutable.relevanceScore = .nan
        #expect(mutable.relevanceScore == 0)
        mutable.relevanceScore = 3
        #expect(mutable.relevanceScore == 1)
        #expect(UNNotificationSound.defaultCriticalSound(withAudioVolume: .infinity).volume == 1)
        #expect(!(request.content is UNMutableNotificationContent))
    }

    @Test("without authorization a request is refused with notificationsNotAllowed, as on iOS; a refusal is kept")
    func authorization() async throws {
        let host = FakeNotificationHost(userSwitch: false)
        let center = UNUserNotificationCenter(host: host)
        #expect(await center.notificationSettings().authorizationStatus == .notDetermined)
        do {
            try await center.add(UNNotificationRequest(identifier: "early", content: content("x"), trigger: nil))
            Issue.record("added without authorization")
        } catch UNError.notificationsNotAllowed {
            // As on iOS.
        }
        #expect(host.reports.last?.contains("has not asked") == true)
        let granted = try await center.requestAuthorization(options: [.alert])
        #expect(!granted)
        let settings = await center.notificationSettings()
        #expect(settings.authorizationStatus == .denied)
        #expect(settings.alertSetting == .disabled)
        #expect(host.saved == SavedAuthorization(status: UNAuthorizationStatus.denied.rawValue, options: 0))
        await #expect(throws: UNError(.notificationsNotAllowed)) {
            try await center.add(UNNotificationRequest(identifier: "late", content: content("x"), trigger: nil))
        }
        #expect(host.reports.last?.contains("did not allow") == true)
    }

    @Test("an answer kept by an earlier launch holds without asking again; provisional authorization delivers quietly")
    func savedAndProvisionalAuthorization() async throws {
        let kept = FakeNotificationHost(saved: SavedAuthorization(status: UNAuthorizationStatus.authorized.rawValue, options: UNAuthorizationOptions([.alert, .badge]).rawValue))
        let center = UNUserNotificationCenter(host: kept)
        let settings = await center.notificationSettings()
        #expect(settings.authorizationStatus == .authorized)
        #expect(settings.badgeSetting == .enabled)
        #expect(settings.soundSetting == .disabled)
        try await center.add(UNNotificationRequest(identifier: "bg", content: content("From a background launch"), trigger: nil))
        kept.advance(by: 0)
        #expect(kept.shown.count == 1)

        let quiet = FakeNotificationHost()
        let provisional = UNUserNotificationCenter(host: quiet)
        #expect(try await provisional.requestAuthorization(options: [.alert, .provisional]))
        let quietSettings = await provisional.notificationSettings()
        #expect(quietSettings.authorizationStatus == .provisional)
        #expect(quietSettings.alertSetting == .disabled)
        #expect(quietSettings.notificationCenterSetting == .enabled)
        try await provisional.add(UNNotificationRequest(identifier: "q", content: content("Quiet", badge: 2), trigger: nil))
        #expect(quiet.shown == ["Quiet (quietly, in the list)"], "no banner, no sound, no badge")
        #expect(quiet.badge == nil)
        #expect(await provisional.deliveredNotifications().map(\.request.identifier) == ["q"])
    }

    @Test("adding a request with a pending request's identifier replaces it; the old moment delivers nothing")
    func replacement() async throws {
        let host = FakeNotificationHost()
        let center = try await allowedCenter(host)
        try await center.add(UNNotificationRequest(identifier: "r", content: content("old"), trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: false)))
        try await center.add(UNNotificationRequest(identifier: "r", content: content("new"), trigger: UNTimeIntervalNotificationTrigger(timeInterval: 120, repeats: false)))
        #expect(await center.pendingNotificationRequests().map(\.content.title) == ["new"])
        host.advance(by: 90)
        #expect(host.shown.isEmpty)
        host.advance(by: 30)
        #expect(host.shown == ["new (sound)"])
    }

    @Test("a repeating interval fires every interval and stays pending; moments missed while nothing ran fire once")
    func repeatingInterval() async throws {
        let host = FakeNotificationHost()
        let center = try await allowedCenter(host)
        let start = host.now
        try await center.add(UNNotificationRequest(identifier: "tick", content: content("tick"), trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: true)))
        host.advance(by: 180)
        #expect(host.shown.count == 3)
        #expect(await center.pendingNotificationRequests().map(\.identifier) == ["tick"])
        let trigger = UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: true)
        // A series whose last firing was at start + 180 s, asked at start + 1 h: the next is
        // the series' first moment after now, once.
        let next = trigger.fireDate(scheduled: start, after: start.addingTimeInterval(180), now: start.addingTimeInterval(3600))
        #expect(next == start.addingTimeInterval(3660))
        center.removePendingNotificationRequests(withIdentifiers: ["tick"])
        host.advance(by: 600)
        #expect(host.shown.count == 3)
    }

    @Test("a calendar trigger fires at its next matching date, daily when it repeats")
    func calendarTrigger() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var components = DateComponents(hour: 8, minute: 30)
        components.calendar = calendar
        components.timeZone = calendar.timeZone
        let trigger = UNCalendarNotificationTrigger(dateMatching: components, repeats: true)
        let now = try #require(calendar.date(from: DateComponents(year: 2026, month: 12, day: 6, hour: 10)))
        let first = try #require(trigger.fireDate(scheduled: now, after: nil, now: now))
        #expect(first == calendar.date(from: DateComponents(year: 2026, month: 12, day: 7, hour: 8, minute: 30)))
        let second = trigger.fireDate(scheduled: now, after: first, now: first)
        #expect(second == calendar.date(from: DateComponents(year: 2026, month: 12, day: 8, hour: 8, minute: 30)))
        let once = UNCalendarNotificationTrigger(dateMatching: components, repeats: false)
        #expect(once.fireDate(scheduled: now, after: first, now: first) == nil)
        // Monthly on the 31st: months without one are skipped, not moved to the 1st.
        var thirtyFirst = DateComponents(day: 31, hour: 9)
        thirtyFirst.calendar = calendar
        thirtyFirst.timeZone = calendar.timeZone
        let monthly = UNCalendarNotificationTrigger(dateMatching: thirtyFirst, repeats: true)
        let december = try #require(monthly.fireDate(scheduled: now, after: nil, now: now))
        #expect(december == calendar.date(from: DateComponents(year: 2026, month: 12, day: 31, hour: 9)))
        let next = monthly.fireDate(scheduled: now, after: december, now: december)
        #expect(next == calendar.date(from: DateComponents(year: 2027, month: 1, day: 31, hour: 9)))
        let afterJanuary = try #require(next)
        #expect(monthly.fireDate(scheduled: now, after: afterJanuary, now: afterJanuary) == calendar.date(from: DateComponents(year: 2027, month: 3, day: 31, hour: 9)))
    }

    @Test("triggers that never fire are refused when added, naming the culprit")
    func invalidTriggers() async throws {
        let host = FakeNotificationHost()
        let center = try await allowedCenter(host)
        var past = DateComponents(year: 2001, month: 1, day: 1, hour: 0)
        past.timeZone = TimeZone(identifier: "UTC")
        let cases: [(UNNotificationTrigger, String)] = [
            (UNTimeIntervalNotificationTrigger(timeInterval: 0, repeats: false), "greater than 0"),
            (UNTimeIntervalNotificationTrigger(timeInterval: -5, repeats: false), "greater than 0"),
            (UNTimeIntervalNotificationTrigger(timeInterval: .nan, repeats: false), "greater than 0"),
            (UNTimeIntervalNotificationTrigger(timeInterval: 30, repeats: true), "at least 60 if repeating"),
            (UNCalendarNotificationTrigger(dateMatching: DateComponents(), repeats: true), "none is set"),
            (UNCalendarNotificationTrigger(dateMatching: past, repeats: false), "no date to come"),
        ]
        for (trigger, culprit) in cases {
            do {
                try await center.add(UNNotificationRequest(identifier: "bad", content: content("x"), trigger: trigger))
                Issue.record("\(trigger) was accepted")
            } catch let error as UNError {
                #expect(error.code == .notificationInvalidNoDate)
                #expect(error.message.contains("\"bad\""), "\(error.message)")
                #expect(error.message.contains(culprit), "\(error.message)")
            }
        }
        #expect(await center.pendingNotificationRequests().isEmpty)
        #expect(UNTimeIntervalNotificationTrigger(timeInterval: 30, repeats: true).nextTriggerDate() == nil)
    }

    @Test("in the foreground the delegate decides: no delegate shows nothing; its answer's options apply")
    @MainActor
    func foregroundDelegate() async throws {
        let host = FakeNotificationHost()
        let center = try await allowedCenter(host)
        host.isInForeground = true
        /// Posts at once and runs the delegate's call on the main actor.
        func post(_ identifier: String, _ title: String, badge: Int? = nil) async throws {
            try await center.add(UNNotificationRequest(identifier: identifier, content: content(title, badge: badge), trigger: nil))
            await host.runMainActorCalls()
        }
        try await post("a", "no delegate", badge: 5)
        #expect(host.shown.isEmpty)
        #expect(host.badge == nil)

        let handlerForm = HandlerFormDelegate(answer: [.banner, .sound])
        center.delegate = handlerForm
        try await post("b", "handler form", badge: 5)
        #expect(handlerForm.asked == ["b"])
        #expect(host.shown == ["handler form (sound, in the foreground)"])
        #expect(host.badge == nil)

        let asyncForm = AsyncFormDelegate(answer: [.list, .badge])
        center.delegate = asyncForm
        try await post("c", "async form", badge: 7)
        #expect(asyncForm.asked == ["c"])
        #expect(host.shown.last == "async form (quietly, in the list, badge 7, in the foreground)")
        #expect(host.badge == 7)

        let silent = AsyncFormDelegate(answer: [])
        center.delegate = silent
        try await post("d", "not presented")
        #expect(host.shown.count == 2)
        // A banner alone is not kept in the list; `.list` is.
        #expect(await center.deliveredNotifications().map(\.request.identifier) == ["c"])
        withExtendedLifetime((handlerForm, asyncForm, silent)) {}
    }

    @Test("the center keeps the 64 pending requests that fire soonest, as iOS does")
    func pendingLimit() async throws {
        let host = FakeNotificationHost()
        let center = try await allowedCenter(host)
        for index in 1...64 {
            try await center.add(UNNotificationRequest(identifier: "n\(index)", content: content("\(index)"), trigger: UNTimeIntervalNotificationTrigger(timeInterval: TimeInterval(index * 60), repeats: false)))
        }
        try await center.add(UNNotificationRequest(identifier: "latest", content: content("latest"), trigger: UNTimeIntervalNotificationTrigger(timeInterval: 86_400, repeats: false)))
        try await center.add(UNNotificationRequest(identifier: "soonest", content: content("soonest"), trigger: UNTimeIntervalNotificationTrigger(timeInterval: 1, repeats: false)))
        let pending = await center.pendingNotificationRequests().map(\.identifier)
        #expect(pending.count == 64)
        #expect(pending.first == "soonest")
        #expect(!pending.contains("latest"))
        #expect(!pending.contains("n64"))
        #expect(host.reports.contains { $0.contains("\"n64\"") })
        host.advance(by: 86_400)
        #expect(host.shown.count == 64)
    }

    @Test("removing pending and delivered notifications, and the badge count")
    func removalsAndBadge() async throws {
        let host = FakeNotificationHost()
        let center = try await allowedCenter(host)
        for identifier in ["a", "b", "c"] {
            try await center.add(UNNotificationRequest(identifier: identifier, content: content(identifier), trigger: nil))
        }
        try await center.add(UNNotificationRequest(identifier: "later", content: content("later"), trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: false)))
        host.advance(by: 0)
        center.removeDeliveredNotifications(withIdentifiers: ["b", "unknown"])
        #expect(await center.deliveredNotifications().map(\.request.identifier) == ["a", "c"])
        center.removeAllDeliveredNotifications()
        #expect(await center.deliveredNotifications().isEmpty)
        center.removeAllPendingNotificationRequests()
        host.advance(by: 120)
        #expect(host.shown.count == 3)
        try await center.setBadgeCount(4)
        #expect(host.badge == 4)
        await #expect(throws: UNError(.badgeInputInvalid)) { try await center.setBadgeCount(-1) }
        #expect(host.badge == 4)
    }

    @Test("an attachment must be a readable regular file of a type the system shows")
    func attachments() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("un-attachments-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let image = directory.appendingPathComponent("cover.png")
        try Data([0x89, 0x50, 0x4E, 0x47]).write(to: image)
        let attachment = try UNNotificationAttachment(identifier: "cover", url: image)
        #expect(attachment.type == "public.png")
        let text = directory.appendingPathComponent("notes.txt")
        try Data("x".utf8).write(to: text)
        let fifo = directory.appendingPathComponent("pipe.png")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let cases: [(URL, UNError.Code, String)] = [
            (directory.appendingPathComponent("missing.png"), .attachmentInvalidURL, "no file"),
            (fifo, .attachmentInvalidURL, "not a regular file"),
            (text, .attachmentUnrecognizedType, "notes.txt"),
            (URL(string: "https://example.com/a.png")!, .attachmentInvalidURL, "not a file URL"),
        ]
        for (url, code, culprit) in cases {
            do {
                _ = try UNNotificationAttachment(identifier: "x", url: url)
                Issue.record("\(url) accepted")
            } catch let error as UNError {
                #expect(error.code == code)
                #expect(error.message.contains(culprit), "\(error.message)")
            }
        }
        // A hint names the type of a file whose extension does not; it must be a type shown.
        let hinted = try UNNotificationAttachment(identifier: "t", url: text, options: [UNNotificationAttachmentOptionsTypeHintKey: "public.jpeg"])
        #expect(hinted.type == "public.jpeg")
        #expect(throws: UNError(.attachmentUnrecognizedType)) {
            try UNNotificationAttachment(identifier: "t", url: text, options: [UNNotificationAttachmentOptionsTypeHintKey: "public.plain-text"])
        }
        // Within its type's limit: an image of 10 MB and one byte is refused.
        let large = directory.appendingPathComponent("large.gif")
        #expect(FileManager.default.createFile(atPath: large.path, contents: nil))
        let handle = try FileHandle(forWritingTo: large)
        try handle.truncate(atOffset: 10_000_001)
        try handle.close()
        #expect(throws: UNError(.attachmentInvalidFileSize)) { try UNNotificationAttachment(identifier: "big", url: large) }
    }

    @Test("a notification does only what the user allowed: no badge or sound not asked for; a delegate's answer is cut to it")
    @MainActor
    func onlyWhatWasAllowed() async throws {
        let host = FakeNotificationHost()
        let center = UNUserNotificationCenter(host: host)
        #expect(try await center.requestAuthorization(options: [.alert]))
        try await center.add(UNNotificationRequest(identifier: "a", content: content("Alert only", badge: 3), trigger: nil))
        #expect(host.shown == ["Alert only"])
        #expect(host.badge == nil)
        host.isInForeground = true
        let greedy = AsyncFormDelegate(answer: [.banner, .list, .sound, .badge])
        center.delegate = greedy
        try await center.add(UNNotificationRequest(identifier: "b", content: content("Foreground", badge: 4), trigger: nil))
        await host.runMainActorCalls()
        #expect(host.shown.last == "Foreground (in the foreground)")
        #expect(host.badge == nil)
        withExtendedLifetime(greedy) {}
    }

    @Test("the user's switch overrides an answer kept from an earlier launch, as Settings does, and keeps the new one")
    func userSwitchOverridesTheKeptAnswer() async throws {
        let allowedBefore = SavedAuthorization(status: UNAuthorizationStatus.authorized.rawValue, options: UNAuthorizationOptions([.alert, .sound]).rawValue)
        let denying = FakeNotificationHost(userSwitch: false, saved: allowedBefore)
        let center = UNUserNotificationCenter(host: denying)
        #expect(await center.notificationSettings().authorizationStatus == .denied)
        #expect(denying.saved?.status == UNAuthorizationStatus.denied.rawValue)
        #expect(denying.reports.contains { $0.contains("BGTASK_NOTIFICATIONS=denied overrides") })
        #expect(try await center.requestAuthorization(options: [.alert]) == false, "asked again: the same answer")

        let deniedBefore = SavedAuthorization(status: UNAuthorizationStatus.denied.rawValue, options: 0)
        let allowing = FakeNotificationHost(userSwitch: true, saved: deniedBefore)
        #expect(await UNUserNotificationCenter(host: allowing).notificationSettings().authorizationStatus == .authorized)
        let unset = FakeNotificationHost(saved: deniedBefore)
        #expect(await UNUserNotificationCenter(host: unset).notificationSettings().authorizationStatus == .denied)
    }

    @Test("a delegate written without @Sendable on its completion handler, in a plain class, is the one called")
    @MainActor
    func aDelegateWithoutSendableIsCalled() async throws {
        let host = FakeNotificationHost()
        let center = try await allowedCenter(host)
        host.isInForeground = true
        let plain = PlainHandlerDelegate()
        center.delegate = plain
        try await center.add(UNNotificationRequest(identifier: "p", content: content("Plain"), trigger: nil))
        await host.runMainActorCalls()
        #expect(plain.calls.withLock { $0 } == ["p"])
        #expect(host.shown == ["Plain (sound, in the foreground)"])
    }

    @Test("the kept answer's file: bad contents, an unknown status, a FIFO or a directory in its place, a failed write; the switch's values")
    func authorizationFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("un-answer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = AuthorizationFile(url: directory.appendingPathComponent("notifications.json"))
        #expect(file.read().saved == nil && file.read().problem == nil, "no file: asked, nothing to say")
        let kept = SavedAuthorization(status: 2, options: 7)
        #expect(file.write(kept) == nil)
        #expect(file.read().saved == kept)
        try Data("{\"status\":9,\"options\":0}".utf8).write(to: file.url)
        #expect(file.read().problem?.contains("status 9 is not an authorization status") == true)
        try Data("{\"status\":".utf8).write(to: file.url)
        #expect(file.read().saved == nil)
        #expect(file.read().problem?.contains(file.url.path) == true)
        try FileManager.default.removeItem(at: file.url)
        #expect(mkfifo(file.url.path, 0o600) == 0)
        #expect(file.read().problem?.contains("FIFO") == true, "refused without blocking: \(String(describing: file.read().problem))")
        try FileManager.default.removeItem(at: file.url)
        try FileManager.default.createDirectory(at: file.url, withIntermediateDirectories: false)
        #expect(file.read().problem?.contains("directory") == true)
        let nowhere = AuthorizationFile(url: directory.appendingPathComponent("missing/notifications.json"))
        #expect(nowhere.write(kept)?.contains("could not be kept in") == true)

        #expect(AuthorizationFile.userSwitch(nil).answer == nil)
        #expect(AuthorizationFile.userSwitch("").answer == nil)
        #expect(AuthorizationFile.userSwitch("Denied").answer == false)
        #expect(AuthorizationFile.userSwitch("ALLOWED").answer == true)
        let odd = AuthorizationFile.userSwitch("no\u{1b}[31m")
        #expect(odd.answer == nil)
        #expect(odd.problem?.contains("expected \"allowed\" or \"denied\"") == true)
        #expect(odd.problem?.contains("\u{1b}") == false, "the value is shown terminal-safe")
    }

    @Test("pending requests outlive the launch: the next one delivers those due meanwhile (late, and said so) and arms the others; removals are kept too")
    func pendingRequestsOutliveTheLaunch() async throws {
        let host = FakeNotificationHost()
        let center = try await allowedCenter(host)
        let soon = content("Soon", badge: 1)
        soon.userInfo = ["article": 7, "tags": ["a", "b"]]
        soon.categoryIdentifier = "NEW"
        try await center.add(UNNotificationRequest(identifier: "soon", content: soon, trigger: UNTimeIntervalNotificationTrigger(timeInterval: 600, repeats: false)))
        try await center.add(UNNotificationRequest(identifier: "later", content: content("Later"), trigger: UNTimeIntervalNotificationTrigger(timeInterval: 7200, repeats: false)))
        try await center.add(UNNotificationRequest(identifier: "hourly", content: content("Hourly"), trigger: UNTimeIntervalNotificationTrigger(timeInterval: 3600, repeats: true)))
        try await center.add(UNNotificationRequest(identifier: "gone", content: content("Gone"), trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: false)))
        center.removePendingNotificationRequests(withIdentifiers: ["gone"])
        #expect(host.pending.map(\.identifier) == ["soon", "hourly", "later"])

        // The process ends; the next launch comes 30 minutes later.
        let next = host.nextLaunch(after: 1800)
        let restarted = UNUserNotificationCenter(host: next)
        restarted.loadKeptState()
        #expect(next.shown.count == 1)
        #expect(next.shown.first?.hasPrefix("Soon (sound, badge 1, late: due ") == true, "\(next.shown)")
        let delivered = await restarted.deliveredNotifications()
        #expect(delivered.first?.request.content.userInfo["article"] as? Int == 7)
        #expect(delivered.first?.request.content.userInfo["tags"] as? [String] == ["a", "b"])
        #expect(delivered.first?.request.content.categoryIdentifier == "NEW")
        #expect(await restarted.pendingNotificationRequests().map(\.identifier) == ["hourly", "later"])
        restarted.loadKeptState()
        #expect(next.shown.count == 1, "restored once")
        next.advance(by: 1800)
        #expect(next.shown.map { $0.components(separatedBy: " (").first ?? "" } == ["Soon", "Hourly"], "the hourly series goes on from its first moment")
        next.advance(by: 3600)
        #expect(next.shown.suffix(2).map { $0.components(separatedBy: " (").first ?? "" } == ["Later", "Hourly"])
        #expect(next.pending.map(\.identifier) == ["hourly"])
    }

    @Test("the delivered list outlives the launch, as iOS's Notification Center keeps it; removals are kept too")
    func theDeliveredListOutlivesTheLaunch() async throws {
        let host = FakeNotificationHost()
        let center = try await allowedCenter(host)
        for identifier in ["a", "b"] {
            try await center.add(UNNotificationRequest(identifier: identifier, content: content("Title \(identifier)"), trigger: nil))
        }
        #expect(host.kept.delivered.map(\.request.identifier) == ["a", "b"])
        let next = host.nextLaunch(after: 600)
        let again = UNUserNotificationCenter(host: next)
        let listed = await again.deliveredNotifications()
        #expect(listed.map(\.request.identifier) == ["a", "b"])
        #expect(listed.first?.request.content.title == "Title a" && listed.first?.date == host.now)
        again.removeDeliveredNotifications(withIdentifiers: ["a"])
        #expect(next.kept.delivered.map(\.request.identifier) == ["b"])
        let thirdHost = next.nextLaunch(after: 60)
        let third = UNUserNotificationCenter(host: thirdHost)
        #expect(await third.deliveredNotifications().map(\.request.identifier) == ["b"])
        third.removeAllDeliveredNotifications()
        #expect(await UNUserNotificationCenter(host: thirdHost.nextLaunch(after: 60)).deliveredNotifications().isEmpty)
    }

    @Test("a removal removes what bgtaskd delivered while the process was frozen too; the list is in the order the notifications came")
    func aRemovalCoversWhatBgtaskdDelivered() async throws {
        let host = FakeNotificationHost()
        let center = try await allowedCenter(host)
        try await center.add(UNNotificationRequest(identifier: "local", content: content("Local"), trigger: nil))
        // bgtaskd delivered "away" earlier than "local" (the file says so), not taken in yet.
        var problem: String?
        let away = StoredNotificationRequest(UNNotificationRequest(identifier: "away", content: content("Away"), trigger: nil),
                                             added: host.now.addingTimeInterval(-60), fireDate: host.now.addingTimeInterval(-60), problem: &problem)
        var kept = host.kept
        kept.deliveredWhileAway = [AwayDelivery(request: away, date: host.now.addingTimeInterval(-60), listed: true)]
        host.kept = kept
        center.removeDeliveredNotifications(withIdentifiers: ["nothing"])
        #expect(await center.deliveredNotifications().map(\.request.identifier) == ["away", "local"], "by date")
        kept = host.kept
        kept.deliveredWhileAway = [AwayDelivery(request: away, date: host.now.addingTimeInterval(-60), listed: true)]
        host.kept = kept
        center.removeAllDeliveredNotifications()
        #expect(await center.deliveredNotifications().isEmpty)
        #expect(host.kept.delivered.isEmpty && host.kept.deliveredWhileAway.isEmpty, "not added back after the removal")
    }

    @Test("an unreadable file does not empty the process's list, and a userInfo no file can keep stays with the process's own notification")
    func theProcessListStandsWithoutAFile() async throws {
        let host = FakeNotificationHost()
        let center = try await allowedCenter(host)
        let odd = content("Odd")
        odd.userInfo = ["object": NSObject(), "id": 7]
        try await center.add(UNNotificationRequest(identifier: "odd", content: odd, trigger: nil))
        try await center.add(UNNotificationRequest(identifier: "plain", content: content("Plain"), trigger: nil))
        let listed = await center.deliveredNotifications()
        #expect(listed.first?.request.content.userInfo["id"] as? Int == 7, "the process's own object, not the file's copy")
        host.fileUnreadable = true
        center.removeDeliveredNotifications(withIdentifiers: ["plain"])
        #expect(await center.deliveredNotifications().map(\.request.identifier) == ["odd"], "the file's emptiness is not the list's")
        #expect(host.kept.delivered.map(\.request.identifier) == ["odd"], "written back from the process's list")
    }

    @Test("a file too large to read back keeps the newer part of the delivered list, said")
    func anOversizedWriteKeepsTheNewerDelivered() throws {
        let scratch = try ScratchStateDirectory()
        defer { scratch.remove() }
        let file = scratch.file
        var problem: String?
        let delivered = (0..<8).map { index in
            let content = UNMutableNotificationContent()
            content.body = String(repeating: "x", count: 1_000)
            let date = Date(timeIntervalSinceReferenceDate: 800_000_000 + Double(index))
            return AwayDelivery(request: StoredNotificationRequest(UNNotificationRequest(identifier: "n\(index)", content: content, trigger: nil), added: date, fireDate: date, problem: &problem), date: date, listed: true)
        }
        let said = file.write(KeptNotifications(delivered: delivered), sizeLimit: 5_000)
        #expect(said?.contains("the 6 oldest are not kept") == true, "\(String(describing: said))")
        #expect(file.read().kept.delivered.map(\.request.identifier) == ["n6", "n7"])
        // What bgtaskd delivered while the app was away (a repeating request's moments) is
        // halved too once the list is gone: the file always reads back.
        let away = delivered.map { AwayDelivery(request: $0.request, date: $0.date, listed: false) }
        let awaySaid = file.write(KeptNotifications(delivered: Array(delivered.prefix(2)), deliveredWhileAway: away), sizeLimit: 5_000)
        #expect(awaySaid?.contains("oldest are not kept") == true, "\(String(describing: awaySaid))")
        let back = file.read()
        #expect(back.problem == nil && back.kept.delivered.isEmpty && back.kept.deliveredWhileAway.map(\.request.identifier) == ["n6", "n7"])
    }

    @Test("a process's changes to the delivered list join what another process kept meanwhile, rather than write over it")
    func deliveredChangesMergeWithTheFile() async throws {
        let host = FakeNotificationHost()
        let center = try await allowedCenter(host)
        try await center.add(UNNotificationRequest(identifier: "a", content: content("A"), trigger: nil))
        // Another process of the app delivered "b" meanwhile, and kept it.
        let other = host.nextLaunch(after: 1)
        let otherCenter = try await allowedCenter(other)
        try await otherCenter.add(UNNotificationRequest(identifier: "b", content: content("B"), trigger: nil))
        host.kept = other.kept
        // This one delivers "c" and removes "a": the file keeps "b".
        try await center.add(UNNotificationRequest(identifier: "c", content: content("C"), trigger: nil))
        center.removeDeliveredNotifications(withIdentifiers: ["a"])
        // In the order they came: "b" came a second after "c" (the other process's clock).
        #expect(host.kept.delivered.map(\.request.identifier) == ["c", "b"])
        #expect(await center.deliveredNotifications().map(\.request.identifier) == ["c", "b"])
        withExtendedLifetime(otherCenter) {}
    }

    @Test("the pending file: kept and read back; an unreadable one is moved aside, never overwritten with nothing; a userInfo a property list cannot hold is not kept")
    func pendingFile() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("un-pending-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = PendingNotificationsFile(url: directory.appendingPathComponent("pending-notifications.json"))
        #expect(file.read().kept.pending.isEmpty && file.read().problem == nil)
        let host = FakeNotificationHost()
        let center = try await allowedCenter(host)
        var components = DateComponents(hour: 8, minute: 30)
        components.timeZone = TimeZone(identifier: "UTC")
        try await center.add(UNNotificationRequest(identifier: "daily", content: content("Daily"), trigger: UNCalendarNotificationTrigger(dateMatching: components, repeats: true)))
        let odd = content("Odd")
        odd.userInfo = ["when": NSObject()]
        try await center.add(UNNotificationRequest(identifier: "odd", content: odd, trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: false)))
        #expect(host.reports.contains { $0.contains("userInfo of notification request \"odd\"") })
        #expect(file.write(KeptNotifications(pending: host.pending, delivered: host.kept.delivered)) == nil)
        let read = file.read()
        #expect(read.problem == nil)
        #expect(read.kept.pending == host.pending)
        #expect(read.kept.delivered == host.kept.delivered)
        // A file written before the delivered list was kept reads as an empty list.
        try Data("{\"version\": 2, \"pending\": []}".utf8).write(to: file.url)
        #expect(file.read().kept == KeptNotifications())
        var problems: [String] = []
        let daily = try #require(read.kept.pending.first { $0.identifier == "daily" }).request(problems: &problems)
        #expect((daily.trigger as? UNCalendarNotificationTrigger)?.dateComponents.hour == 8)
        #expect(daily.trigger?.repeats == true)
        #expect(problems.isEmpty)

        try Data("[{\"identifier\":".utf8).write(to: file.url)
        let damaged = file.read()
        #expect(damaged.kept.pending.isEmpty)
        #expect(damaged.problem?.contains("moved aside to") == true, "\(String(describing: damaged.problem))")
        #expect(!FileManager.default.fileExists(atPath: file.url.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).contains { $0.hasPrefix("pending-notifications.json.unreadable-") })
        #expect(mkfifo(file.url.path, 0o600) == 0)
        #expect(file.read().problem?.contains("FIFO") == true, "refused without blocking")
        let twice = [host.pending[0], host.pending[0]]
        try JSONEncoder().encode(twice).write(to: file.url)
        let duplicated = file.read()
        #expect(duplicated.problem?.contains("kept twice") == true)
        #expect(duplicated.writable, "moved aside: the next write loses nothing")
        // Each unreadable file has a place of its own, none replaced.
        let aside = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("pending-notifications.json.unreadable-") }
        #expect(aside.count == 3, "\(aside)")
        // A file that cannot be read now (no permission) is left alone and not written over.
        try JSONEncoder().encode(host.pending).write(to: file.url)
        #expect(chmod(file.url.path, 0) == 0)
        defer { _ = chmod(file.url.path, 0o600) }
        if geteuid() != 0 {
            let locked = file.read()
            #expect(!locked.writable)
            #expect(locked.problem?.contains("not written over") == true)
            #expect(FileManager.default.fileExists(atPath: file.url.path))
        }
    }

    @Test("a request over a million bytes as kept, or whose badge is no count (NaN, negative, past Int.max, a fraction), is refused; categories over 1 MiB are not kept, nor the older ones")
    func keptFilesStayReadable() async throws {
        let host = FakeNotificationHost()
        let center = UNUserNotificationCenter(host: host)
        _ = try await center.requestAuthorization(options: [.alert, .badge])
        let content = UNMutableNotificationContent()
        // A control character is kept as six bytes (\u0001): 180,000 of them take over a million.
        content.body = String(repeating: "\u{1}", count: 180_000)
        do {
            try await center.add(UNNotificationRequest(identifier: "huge", content: content, trigger: nil))
            Issue.record("a request too large to keep was added")
        } catch let error as UNError {
            #expect(error.code == .notificationInvalidNoContent && error.message.contains("more than the 1000000 a request may"), "\(error.message)")
        }
        content.body = "b"
        for bad in [NSNumber(value: Double.nan), NSNumber(value: 1e300), NSNumber(value: Int.min), NSNumber(value: UInt64.max), NSNumber(value: -1), NSNumber(value: 1.5)] {
            content.badge = bad
            do {
                try await center.add(UNNotificationRequest(identifier: "badge", content: content, trigger: nil))
                Issue.record("badge \(bad) was taken")
            } catch let error as UNError {
                #expect(error.code == .badgeInputInvalid && error.message.contains("is not a count"), "\(error.message)")
            }
        }
        #expect(host.badge == nil, "no badge was set")
        #expect(UNUserNotificationCenter.isBadgeCount(NSNumber(value: Int.max)) && UNUserNotificationCenter.isBadgeCount(NSNumber(value: 0)))
        #expect(UNUserNotificationCenter.isBadgeCount(NSNumber(value: 7.0)) && !UNUserNotificationCenter.isBadgeCount(NSNumber(value: UInt64(Int.max) + 1)))
        content.badge = 3
        try await center.add(UNNotificationRequest(identifier: "badge", content: content, trigger: nil))
        #expect(host.badge == 3)
        content.badge = nil
        content.body = String(repeating: "a", count: 900_000)
        try await center.add(UNNotificationRequest(identifier: "large", content: content, trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: false)))
        #expect(host.pending.map(\.identifier) == ["large"])

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("un-categories-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = CategoriesFile(url: directory.appendingPathComponent("notification-categories.json"))
        let small = UNNotificationCategory(identifier: "message", actions: [], intentIdentifiers: [])
        #expect(file.write([SavedCategory(small)]) == nil)
        let placeholder = String(repeating: "x", count: 600_000)
        let big = [0, 1].map { UNNotificationCategory(identifier: "c\($0)", actions: [], intentIdentifiers: [], hiddenPreviewsBodyPlaceholder: placeholder, options: []) }
        let problem = file.write(big.map(SavedCategory.init))
        #expect(problem?.contains("more than the 1048576 kept") == true, "\(String(describing: problem))")
        #expect(file.read().categories == nil && file.read().problem == nil, "the older set is gone too: the next launch has none rather than a stale one")
    }

    @Test("errors bridge to NSError in UNErrorDomain; categories are equal by identifier")
    func errorsAndCategories() {
        let error = UNError(.notificationsNotAllowed, message: "not allowed")
        let bridged = error as NSError
        #expect(bridged.domain == UNErrorDomain)
        #expect(bridged.code == 1)
        #expect(UNError.notificationsNotAllowed ~= (bridged as any Error))
        let reply = UNNotificationAction(identifier: "reply", title: "Reply", options: [.foreground])
        let one = UNNotificationCategory(identifier: "message", actions: [reply], intentIdentifiers: [], options: [.customDismissAction])
        let same = UNNotificationCategory(identifier: "message", actions: [], intentIdentifiers: [])
        #expect(Set([one, same]).count == 1)
    }
}

@MainActor
final class HandlerFormDelegate: NSObject, UNUserNotificationCenterDelegate {
    let answer: UNNotificationPresentationOptions
    var asked: [String] = []
    init(answer: UNNotificationPresentationOptions) { self.answer = answer }
    nonisolated func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification, withCompletionHandler completionHandler: @escaping @Sendable (UNNotificationPresentationOptions) -> Void) {
        MainActor.assumeIsolated {
            asked.append(notification.request.identifier)
            completionHandler(answer)
        }
    }
}

@MainActor
final class AsyncFormDelegate: NSObject, UNUserNotificationCenterDelegate {
    let answer: UNNotificationPresentationOptions
    var asked: [String] = []
    init(answer: UNNotificationPresentationOptions) { self.answer = answer }
    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification) async -> UNNotificationPresentationOptions {
        asked.append(notification.request.identifier)
        return answer
    }
}

/// A delegate as Swift 5-era code writes it: a plain class, the completion handler without
/// `@Sendable`.
final class PlainHandlerDelegate: NSObject, UNUserNotificationCenterDelegate, Sendable {
    let calls = Mutex<[String]>([])
    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification, withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void) {
        calls.withLock { $0.append(notification.request.identifier) }
        completionHandler([.banner, .sound])
    }
}

@Suite("UserNotifications: files a cut-off write left")
struct LeftoverWritesTests {
    @Test("an old temporary file of an atomic write is removed; a fresh one, a link and other files are left")
    func staleTemporaryFilesGo() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("un-leftovers-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func make(_ name: String, age: TimeInterval) throws {
            let url = directory.appendingPathComponent(name)
            try Data("partial".utf8).write(to: url)
            let when = Date().addingTimeInterval(-age)
            try FileManager.default.setAttributes([.modificationDate: when], ofItemAtPath: url.path)
        }
        try make(".dat.nosync3AD2.kP90or", age: 3_600)
        try make(".dat.nosync3CAF.YKCmrb", age: 5)
        try make("pending-notifications.json", age: 3_600)
        try FileManager.default.createSymbolicLink(atPath: directory.appendingPathComponent(".dat.nosyncLINK.aaaaaa").path, withDestinationPath: "/etc/hostname")
        let removed = LeftoverWrites.removeStale(in: directory, now: Date())
        #expect(removed == [".dat.nosync3AD2.kP90or"])
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(left == [".dat.nosync3CAF.YKCmrb", ".dat.nosyncLINK.aaaaaa", "pending-notifications.json"])
        #expect(LeftoverWrites.removeStale(in: directory.appendingPathComponent("missing"), now: Date()).isEmpty)
    }
}
