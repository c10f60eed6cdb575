// A notification manager written before Swift concurrency (the tenth outside probe: a
// marketplace app's NotificationManager): the center's and WidgetKit's completion handlers
// capture `self` weakly and hop to the main queue. Apple's, imported from Objective-C, are
// `@preconcurrency`, so Xcode's Swift 5 mode is silent; so is this target, whose warnings fail
// its build.
import UIKit
import UserNotifications
import WidgetKit

public final class LegacyNotificationManager: NSObject {
    public var hasPermission = false
    public var pendingCount = 0
    public var widgetCount = -1

    public func requestPermission() {
        UNUserNotificationCenter.current().requestAuthorization(options: [.alert, .badge, .sound]) { [weak self] granted, _ in
            DispatchQueue.main.async { self?.hasPermission = granted }
        }
    }

    public func checkPermissionStatus() {
        UNUserNotificationCenter.current().getNotificationSettings { [weak self] settings in
            DispatchQueue.main.async { self?.hasPermission = settings.authorizationStatus == .authorized }
        }
    }

    public func countPending() {
        UNUserNotificationCenter.current().getPendingNotificationRequests { [weak self] requests in
            DispatchQueue.main.async { self?.pendingCount = requests.count }
        }
    }

    public func countWidgets() {
        WidgetCenter.shared.getCurrentConfigurations { [weak self] result in
            DispatchQueue.main.async { self?.widgetCount = (try? result.get().count) ?? 0 }
        }
    }
}
