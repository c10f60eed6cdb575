// Shapes a twentieth outside compile probe found in public apps (written here in their shape,
// not copied), in Swift 6 mode with warnings as errors, and what they do here.
import BackgroundTasks
import Foundation
import Testing
import UIKit

/// After a background sync, a clipboard app asks for the snapshots of its scenes in the
/// background to be taken again (`requestSceneSessionRefresh`: Linux has no app switcher).
@MainActor func refreshSnapshotsAfterBackgroundSync(_ application: UIApplication) -> Int {
    var asked = 0
    for session in application.openSessions where session.scene?.activationState == .background {
        application.requestSceneSessionRefresh(session)
        asked += 1
    }
    return asked
}

/// A Swift 6 app keeps the quick action its scene delegate received in an actor (a check-in
/// app's): the item crosses from the main actor, so it must be `Sendable`, as Apple's is.
actor SelectedQuickAction {
    private var name: String?

    func select(_ item: UIApplicationShortcutItem?) {
        name = item?.userInfo?["name"] as? String ?? item?.type
    }

    func selected() -> String? { name }
}

final class QuickActionSceneDelegate: UIResponder, UIWindowSceneDelegate {
    let selection = SelectedQuickAction()

    func windowScene(_ windowScene: UIWindowScene, performActionFor shortcutItem: UIApplicationShortcutItem, completionHandler: @escaping (Bool) -> Void) {
        Task {
            await selection.select(shortcutItem)
            completionHandler(true)
        }
    }

    func hand(_ item: UIApplicationShortcutItem) async {
        await selection.select(item)
    }
}

@Suite struct TwentiethProbeTests {
    @Test @MainActor func aSceneSessionRefreshIsAcceptedAndDoesNothing() {
        // No scene is connected in a test process: nothing to refresh, and the call exists.
        #expect(refreshSnapshotsAfterBackgroundSync(UIApplication.shared) == 0)
        UIApplication.shared.requestSceneSessionRefresh(UISceneSession(role: .windowApplication, configuration: UISceneConfiguration(name: nil, sessionRole: .windowApplication)))
    }

    @Test @MainActor func aQuickActionCrossesToAnActor() async {
        let delegate = QuickActionSceneDelegate()
        let item = UIApplicationShortcutItem(type: "com.example.checkin.scan", localizedTitle: "Scan", localizedSubtitle: nil, icon: UIApplicationShortcutIcon(systemImageName: "qrcode"), userInfo: ["name": "scan" as NSString])
        await delegate.hand(item)
        #expect(await delegate.selection.selected() == "scan")
    }

    /// Without the item's lock this fails under ThreadSanitizer (docs/testing.md), where it
    /// reports the race; in a plain build a torn string may or may not crash it.
    @Test func aMutableQuickActionChangedOnOneThreadIsReadWholeOnOthers() async {
        let item = UIMutableApplicationShortcutItem(type: "a", localizedTitle: "A")
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for index in 0..<2_000 { item.localizedTitle = "title \(index)" }
            }
            for _ in 0..<2 {
                group.addTask {
                    for _ in 0..<2_000 { #expect(item.localizedTitle.hasPrefix("title ") || item.localizedTitle == "A") }
                }
            }
        }
        #expect(item.localizedTitle == "title 1999")
        #expect(item.type == "a")
    }
}
