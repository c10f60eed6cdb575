import BackgroundTasks
import BackgroundTasksTesting
import Foundation
import PreconcurrencyApp
import Testing
import UserNotifications
import WidgetKit
import SchedulerCore

/// What UserNotificationsSnippets.swift compiles, run on a simulated device: the center is
/// the running app's, and its notifications come on the device's virtual clock.
@Suite struct UserNotificationsSnippetTests {
    let app = AppID("com.example.notifying")

    @Test func aRefreshHandlerPostsANotificationDeliveredOnTheDevicesClock() async throws {
        let device = try compatDevice()
        let manifest = AppManifest(appID: app, permittedIdentifiers: [NewArticlesNotifier.refreshIdentifier], backgroundModes: ["fetch"])
        let context = device.install(app: app, manifest: manifest) {
            NewArticlesNotifier.register()
        }
        let center = context.withCurrent { UNUserNotificationCenter.current() }
        #expect(context.withCurrent { UNUserNotificationCenter.current() } === center, "one center per app")
        #expect(try await center.requestAuthorization(options: [.alert, .badge, .sound]))
        try context.withCurrent {
            try BGTaskScheduler.shared.submit(BGAppRefreshTaskRequest(identifier: NewArticlesNotifier.refreshIdentifier))
        }
        await device.run(for: 60)
        #expect(device.runs(of: NewArticlesNotifier.refreshIdentifier).map(\.outcome) == [.success], "the add's completion completed the task")
        let delivered = await center.deliveredNotifications()
        #expect(delivered.map(\.request.identifier) == ["new-articles"])
        #expect(delivered.first?.request.content.title == "New articles")
        #expect(delivered.first?.request.content.userInfo["articleIDs"] as? [Int] == [1, 2, 3])
        #expect(context.application.applicationIconBadgeNumber == 3)
        let lines = device.log.messages.filter { $0.app == app }.map(\.text)
        #expect(lines.contains("\"new-articles\": New articles — Morning edition — 3 new stories are waiting (sound, badge 3)"), "\(lines)")
        // The run's moment and the notification's: a second after the add, on virtual time.
        let run = try #require(device.runs(of: NewArticlesNotifier.refreshIdentifier).first)
        let date = try #require(delivered.first?.date)
        #expect(date.timeIntervalSince(run.startedAt) >= 1 && date.timeIntervalSince(run.startedAt) < 2, "\(date) after \(run.startedAt)")
        // Another app on the same device has its own center, with nothing delivered.
        let other = device.install(app: AppID("com.example.other"), manifest: AppManifest(appID: AppID("com.example.other"), permittedIdentifiers: [], backgroundModes: [])) {}
        let otherCenter = other.withCurrent { UNUserNotificationCenter.current() }
        #expect(otherCenter !== center)
        #expect(await otherCenter.deliveredNotifications().isEmpty)
    }

    @Test func theLocalNotificationsOfBeforeIOS10GoThroughTheCenter() async throws {
        let device = try compatDevice()
        let context = device.install(app: app, manifest: AppManifest(appID: app, permittedIdentifiers: [], backgroundModes: ["fetch"])) {}
        await MainActor.run {
            context.withCurrent {
                LegacyFetchNotifier.askPermission()
                LegacyFetchNotifier.tellUser(found: 4)
                LegacyFetchNotifier.remindLater()
            }
        }
        #expect(await MainActor.run { context.withCurrent { LegacyFetchNotifier.alertsAllowed && LegacyFetchNotifier.scheduledCount == 1 } })
        await device.run(for: 60)
        let center = context.withCurrent { UNUserNotificationCenter.current() }
        #expect(await center.deliveredNotifications().map(\.request.content.body).sorted() == ["4 new stories", "Stories are waiting"], "both shown now")
        await device.run(for: 3_600)
        #expect(await center.deliveredNotifications().map(\.request.content.title).sorted() == ["", "Reminder", "Reminder"], "the reminder came again an hour later, on the device's clock")
        #expect(await MainActor.run { context.withCurrent { LegacyFetchNotifier.scheduledCount } } == 0)
        // cancelAllLocalNotifications cancels the legacy ones only.
        let content = UNMutableNotificationContent()
        content.title = "Modern"
        try await center.add(UNNotificationRequest(identifier: "modern", content: content, trigger: UNTimeIntervalNotificationTrigger(timeInterval: 600, repeats: false)))
        await MainActor.run { context.withCurrent { LegacyFetchNotifier.remindLater(); LegacyFetchNotifier.cancelAll() } }
        #expect(await center.pendingNotificationRequests().map(\.identifier) == ["modern"])
    }

    @Test func eachScheduleOfALegacyNotificationIsACopyAndADateThatIsNoDateSchedulesNothing() async throws {
        let device = try compatDevice()
        let context = device.install(app: app, manifest: AppManifest(appID: app, permittedIdentifiers: [], backgroundModes: ["fetch"])) {}
        await MainActor.run { context.withCurrent { LegacyFetchNotifier.askPermission() } }
        let center = context.withCurrent { UNUserNotificationCenter.current() }
        let original = await MainActor.run { context.withCurrent { LegacyFetchNotifier.remind(inHours: [1, 2, 3]) } }
        #expect(await center.pendingNotificationRequests().count == 3, "a copy per schedule, as iOS keeps")
        await MainActor.run { context.withCurrent { LegacyFetchNotifier.cancel(LegacyFetchNotifier.scheduled[0]) } }
        #expect(await center.pendingNotificationRequests().count == 2, "one of the system's copies cancels itself")
        await MainActor.run { context.withCurrent { LegacyFetchNotifier.cancel(original) } }
        let left = await center.pendingNotificationRequests().map(\.identifier)
        #expect(left.isEmpty, "the app's own object cancels every copy made of it: \(left)")
        for date in [Date(timeIntervalSinceReferenceDate: .nan), .init(timeIntervalSinceReferenceDate: .infinity), .init(timeIntervalSinceReferenceDate: -1e300)] {
            for interval: NSCalendar.Unit in [[], .day] {
                await MainActor.run { context.withCurrent { LegacyFetchNotifier.schedule(at: date, repeatInterval: interval) } }
            }
        }
        let pending = await center.pendingNotificationRequests()
        let delivered = await center.deliveredNotifications()
        #expect(pending.isEmpty && delivered.isEmpty)
        let said = device.log.messages.filter { $0.text.contains("is no date to fire at: not scheduled") }
        #expect(said.count == 6, "\(device.log.messages.map(\.text))")
    }

    @Test func withoutAuthorizationTheHandlerSeesApplesError() async throws {
        let device = try compatDevice()
        let manifest = AppManifest(appID: app, permittedIdentifiers: [NewArticlesNotifier.refreshIdentifier], backgroundModes: ["fetch"])
        let context = device.install(app: app, manifest: manifest) {
            NewArticlesNotifier.register()
        }
        try context.withCurrent {
            try BGTaskScheduler.shared.submit(BGAppRefreshTaskRequest(identifier: NewArticlesNotifier.refreshIdentifier))
        }
        await device.run(for: 60)
        #expect(device.runs(of: NewArticlesNotifier.refreshIdentifier).map(\.outcome) == [.failure], "the add failed: the task completed unsuccessfully")
        let warnings = device.log.messages.filter { $0.app == app && $0.level == .warning }.map(\.text)
        #expect(warnings.contains { $0.contains("\"new-articles\" refused: notifications are not allowed") }, "\(warnings)")
        #expect(await context.withCurrent { UNUserNotificationCenter.current() }.deliveredNotifications().isEmpty)
    }

    @Test @MainActor func inTheForegroundTheDelegateIsAskedOnTheMainActorAndCountedAsAppWork() async throws {
        let device = try compatDevice()
        let context = device.install(app: app, manifest: AppManifest(appID: app, permittedIdentifiers: [], backgroundModes: [])) {}
        context.withCurrent { context.application.enterForeground() }
        let center = context.withCurrent { UNUserNotificationCenter.current() }
        let delegate = ForegroundRecorder()
        center.delegate = delegate
        #expect(try await center.requestAuthorization(options: [.alert, .badge, .sound]))
        let content = UNMutableNotificationContent()
        content.title = "While you read"
        content.badge = 2
        try await center.add(UNNotificationRequest(identifier: "fg", content: content, trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: false)))
        await device.run(for: 120)
        // Settled by the run: the delegate's answer was counted as the app's work.
        #expect(delegate.asked == ["fg"])
        #expect(await center.deliveredNotifications().map(\.request.identifier) == ["fg"])
        #expect(context.application.applicationIconBadgeNumber == 2)
        let lines = device.log.messages.filter { $0.app == app }.map(\.text)
        #expect(lines.contains("\"fg\": While you read (badge 2, in the foreground)"), "\(lines)")
        withExtendedLifetime(delegate) {}
    }

    @Test @MainActor func whatTheImportsBringWorks() throws {
        // The Foundation the module re-exports and localizedUserNotificationString (no
        // Localizable.strings in the test bundle: the key is the format).
        #expect(ReminderScheduler().localizedTitle(count: 3) == "3 new stories")
        #expect(ReminderScheduler().morningTrigger().dateComponents.hour == 7)
        #expect(NSString.localizedUserNotificationString(forKey: "plain", arguments: nil) == "plain")
        // Key-value coding on defaults means set and object.
        let suite = "bgtask.test.kvc.\(UUID().uuidString)"
        let defaults = try #require(UserDefaults(suiteName: suite))
        defer { defaults.removePersistentDomain(forName: suite) }
        defaults.setValue(42, forKey: "answer")
        #expect(defaults.value(forKey: "answer") as? Int == 42)
        #expect(defaults.integer(forKey: "answer") == 42)
        defaults.setValue(nil, forKey: "answer")
        #expect(defaults.value(forKey: "answer") == nil)
        // The deep-link method compiles with Apple's keys and default; nothing calls it here.
        let device = try compatDevice()
        let context = device.install(app: app, manifest: AppManifest(appID: app, permittedIdentifiers: [], backgroundModes: [])) {}
        let delegate = UIKitOnlyAppDelegate()
        #expect(delegate.application(context.application, open: URL(string: "feedreader://item/1")!, options: [:]))
        #expect(UIApplication.OpenURLOptionsKey.sourceApplication.rawValue == "UIApplicationOpenURLOptionsSourceApplicationKey")
    }

    @Test func aRefreshThatReloadsWidgetsIsNotedAndCompletes() async throws {
        let device = try compatDevice()
        let identifier = "com.example.notifying.widgets"
        let manifest = AppManifest(appID: app, permittedIdentifiers: [identifier], backgroundModes: ["fetch"])
        let context = device.install(app: app, manifest: manifest) {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { task in
                WidgetRefresher.handle(task: task as! BGAppRefreshTask)
            }
        }
        try context.withCurrent { try BGTaskScheduler.shared.submit(BGAppRefreshTaskRequest(identifier: identifier)) }
        await device.run(for: 60)
        #expect(device.runs(of: identifier).map(\.outcome) == [.success])
        let notes = device.log.messages.filter { $0.app == app && $0.level == .info }.map(\.text)
        #expect(notes.contains("WidgetCenter.reloadTimelines(ofKind: \"FeedWidget\"): Linux has no widgets; nothing to reload"), "\(notes)")
        #expect(notes.contains("WidgetCenter.reloadAllTimelines(): Linux has no widgets; nothing to reload"), "\(notes)")
        #expect(await WidgetRefresher.configuredSizes().isEmpty)
    }

    @Test func theSettingsSwitchAndTheDailyReminder() async throws {
        let device = try compatDevice()
        let context = device.install(app: app, manifest: AppManifest(appID: app, permittedIdentifiers: [], backgroundModes: [])) {}
        let center = context.withCurrent { UNUserNotificationCenter.current() }
        // The snippets ask `UNUserNotificationCenter.current()` from where they run: bound here.
        #expect(await BGAppContext.$current.withValue(context) { await notificationsAllowed() } == false)
        try await BGAppContext.$current.withValue(context) { try await DailyReminder.schedule() }
        #expect(await BGAppContext.$current.withValue(context) { await notificationsAllowed() })
        let pending = await center.pendingNotificationRequests()
        #expect(pending.map(\.identifier) == [DailyReminder.identifier])
        let trigger = try #require(pending.first?.trigger as? UNCalendarNotificationTrigger)
        #expect(trigger.repeats && trigger.dateComponents.hour == 8 && trigger.dateComponents.minute == 30)
        #expect(await BGAppContext.$current.withValue(context) { await DailyReminder.nextDate() } != nil)
    }
}

/// A main-actor delegate in its `async` form, recording what it was asked.
@MainActor
final class ForegroundRecorder: NSObject, UNUserNotificationCenterDelegate {
    var asked: [String] = []
    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification) async -> UNNotificationPresentationOptions {
        asked.append(notification.request.identifier)
        return [.banner, .list, .badge]
    }
}
