// Local-notification code as iOS apps write it beside their background tasks, in Swift 6
// language mode with warnings as errors: a refresh handler that posts what it found, an
// app delegate that is the center's delegate (categories, actions, the nonisolated and the
// async forms), the settings switched over with `@unknown default`, a daily reminder by
// calendar date, the badge, a SwiftUI app holding its notification delegate.
import BackgroundTasks
import Foundation
import SwiftUI
import UIKit
import UserNotifications

/// A refresh handler that posts a notification about new content, completion-handler style.
enum NewArticlesNotifier {
    static let refreshIdentifier = "com.example.app.refresh"

    static func register() {
        BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshIdentifier, using: nil) { task in
            handleAppRefresh(task: task as! BGAppRefreshTask)
        }
    }

    static func handleAppRefresh(task: BGAppRefreshTask) {
        let content = UNMutableNotificationContent()
        content.title = "New articles"
        content.subtitle = "Morning edition"
        content.body = "3 new stories are waiting"
        content.sound = UNNotificationSound.default
        content.badge = 3
        content.userInfo = ["articleIDs": [1, 2, 3]]
        content.categoryIdentifier = "NEW_ARTICLES"
        content.threadIdentifier = "feed"
        if #available(iOS 15.0, *) {
            content.interruptionLevel = .timeSensitive
            content.relevanceScore = 0.8
        }
        let trigger = UNTimeIntervalNotificationTrigger(timeInterval: 1, repeats: false)
        let request = UNNotificationRequest(identifier: "new-articles", content: content, trigger: trigger)
        UNUserNotificationCenter.current().add(request) { error in
            if let error = error {
                print("Could not post: \(error.localizedDescription)")
            }
            task.setTaskCompleted(success: error == nil)
        }
    }
}

/// An app delegate that is also the notification center's delegate.
@MainActor
final class NotifyingAppDelegate: UIResponder, UIApplicationDelegate, UNUserNotificationCenterDelegate {
    var lastAction: String?

    func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?) -> Bool {
        let center = UNUserNotificationCenter.current()
        center.delegate = self
        center.requestAuthorization(options: [.alert, .badge, .sound]) { granted, error in
            if let error {
                print("Authorization failed: \(error)")
            }
            print("Notifications allowed: \(granted)")
        }
        let open = UNNotificationAction(identifier: "OPEN", title: "Open", options: [.foreground])
        let reply = UNTextInputNotificationAction(identifier: "REPLY", title: "Reply", options: [], textInputButtonTitle: "Send", textInputPlaceholder: "Message")
        let later = UNNotificationAction(identifier: "LATER", title: "Later", options: [], icon: UNNotificationActionIcon(systemImageName: "clock"))
        let category = UNNotificationCategory(identifier: "NEW_ARTICLES", actions: [open, reply, later], intentIdentifiers: [], options: [.customDismissAction])
        center.setNotificationCategories([category])
        return true
    }

    nonisolated func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification, withCompletionHandler completionHandler: @escaping @Sendable (UNNotificationPresentationOptions) -> Void) {
        completionHandler([.banner, .list, .sound, .badge])
    }

    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {
        switch response.actionIdentifier {
        case UNNotificationDefaultActionIdentifier:
            lastAction = "opened \(response.notification.request.identifier)"
        case UNNotificationDismissActionIdentifier:
            lastAction = "dismissed"
        case "REPLY":
            if let textResponse = response as? UNTextInputNotificationResponse {
                lastAction = "replied \(textResponse.userText)"
            }
        default:
            break
        }
    }
}

/// Whether the app may notify, as apps switch over the imported enum.
func notificationsAllowed() async -> Bool {
    let settings = await UNUserNotificationCenter.current().notificationSettings()
    switch settings.authorizationStatus {
    case .authorized, .provisional, .ephemeral:
        return settings.alertSetting == .enabled || settings.notificationCenterSetting == .enabled
    case .denied, .notDetermined:
        return false
    @unknown default:
        return false
    }
}

/// A daily reminder at 08:30, replaced when rescheduled, and the housekeeping around it.
enum DailyReminder {
    static let identifier = "daily-digest"

    static func schedule(hour: Int = 8, minute: Int = 30) async throws {
        let center = UNUserNotificationCenter.current()
        guard try await center.requestAuthorization(options: [.alert, .sound]) else { return }
        var components = DateComponents()
        components.hour = hour
        components.minute = minute
        let content = UNMutableNotificationContent()
        content.title = "Your daily digest"
        content.body = String(format: "%d stories since yesterday", 12)
        content.sound = .default
        content.badge = NSNumber(value: 1)
        let trigger = UNCalendarNotificationTrigger(dateMatching: components, repeats: true)
        center.removePendingNotificationRequests(withIdentifiers: [identifier])
        try await center.add(UNNotificationRequest(identifier: identifier, content: content, trigger: trigger))
    }

    static func pendingTitles(_ done: @escaping @Sendable ([String]) -> Void) {
        UNUserNotificationCenter.current().getPendingNotificationRequests { requests in
            done(requests.map { $0.content.title })
        }
    }

    static func nextDate() async -> Date? {
        let requests = await UNUserNotificationCenter.current().pendingNotificationRequests()
        let trigger = requests.first { $0.identifier == identifier }?.trigger as? UNCalendarNotificationTrigger
        return trigger?.nextTriggerDate()
    }

    static func clearBadge() async {
        UNUserNotificationCenter.current().removeAllDeliveredNotifications()
        do {
            try await UNUserNotificationCenter.current().setBadgeCount(0)
        } catch UNError.badgeInputInvalid {
            print("invalid badge")
        } catch {
            print("badge: \(error)")
        }
    }
}

/// A SwiftUI app that keeps its notification delegate, a plain `NSObject`.
final class ForegroundNotificationDelegate: NSObject, UNUserNotificationCenterDelegate, Sendable {
    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification) async -> UNNotificationPresentationOptions {
        [.banner, .sound]
    }
}

struct NotifyingSwiftUIApp: App {
    let notificationDelegate = ForegroundNotificationDelegate()

    var body: some Scene {
        WindowGroup {
            Text("Feed")
                .onAppear {
                    UNUserNotificationCenter.current().delegate = notificationDelegate
                }
        }
        .backgroundTask(.appRefresh(NewArticlesNotifier.refreshIdentifier)) {
            let content = UNMutableNotificationContent()
            content.title = "Refreshed"
            try? await UNUserNotificationCenter.current().add(UNNotificationRequest(identifier: "refreshed", content: content, trigger: nil))
        }
    }
}
