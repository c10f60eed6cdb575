// Shapes a sixteenth outside compile probe found in public apps around their background work
// (written here in their shape, not copied), in Swift 6 mode with warnings as errors, and
// what they do here.
import BackgroundTasks
import BackgroundTasksTesting
import Foundation
import IOSShapedApp
import SchedulerCore
import Testing
import UIKit
import UserNotifications

/// A wallet's two-factor screen: an overlay window above alerts, made when the app needs the
/// user's answer and taken away after, and the keyboard dismissed from the main window.
@MainActor
final class TwoFactorOverlay {
    private(set) var window: UIWindow?

    func show(_ controller: UIViewController) {
        let overlay = UIWindow(frame: UIScreen.main.bounds)
        overlay.windowLevel = UIWindow.Level.alert + 1
        controller.view.frame = overlay.bounds
        overlay.rootViewController = controller
        overlay.makeKeyAndVisible()
        window = overlay
    }

    func hide() {
        window?.endEditing(true)
        window?.removeFromSuperview()
        window = nil
    }
}

/// An analytics SDK's view of the app's state, from the application's notifications and, so
/// that the same code works inside an app extension, from the extension host's.
final class HostStateTracker: @unchecked Sendable {
    // @unchecked: `heard` is only touched under `lock`; the tokens are set in `init` and
    // read in `deinit`.
    private let lock = NSLock()
    private var heard: [String] = []
    private var tokens: [any NSObjectProtocol] = []

    init(application: UIApplication) {
        let center = NotificationCenter.default
        tokens.append(center.addObserver(forName: UIApplication.didEnterBackgroundNotification, object: application, queue: nil) { [weak self] _ in
            self?.record("background")
        })
        let hostNames: [NSNotification.Name] = [.NSExtensionHostWillResignActive, .NSExtensionHostDidBecomeActive,
                                                .NSExtensionHostDidEnterBackground, .NSExtensionHostWillEnterForeground]
        for name in hostNames {
            tokens.append(center.addObserver(forName: name, object: nil, queue: nil) { [weak self] notification in
                self?.record(notification.name.rawValue)
            })
        }
    }

    deinit { tokens.forEach(NotificationCenter.default.removeObserver) }

    private func record(_ what: String) { lock.withLock { heard.append(what) } }

    var events: [String] { lock.withLock { heard } }
}

/// A wallet's clean-up when it becomes active again: an address copied before it went to the
/// background does not linger on the pasteboard.
func clearPasteboardOnReturn() {
    if UIPasteboard.general.hasStrings { UIPasteboard.general.string = "" }
}

/// The pasteboards' change notifications heard, by the changed pasteboard's name.
final class PasteboardWatch: @unchecked Sendable {
    // @unchecked: `heard` is only touched under `lock`; the token is set in `init` and read
    // in `deinit`.
    private let lock = NSLock()
    private var heard: [(name: String, count: Int, app: String?)] = []
    private var token: (any NSObjectProtocol)?

    init(_ pasteboard: UIPasteboard) {
        token = NotificationCenter.default.addObserver(forName: UIPasteboard.changedNotification, object: pasteboard, queue: nil) { [weak self] notification in
            guard let board = notification.object as? UIPasteboard else { return }
            // With the app whose context is bound where it is delivered: the writer's
            // notification queue binds it; the pasteboard's own queue binds none.
            let entry = (board.name.rawValue, board.changeCount, BGAppContext.current?.app.rawValue)
            self?.lock.withLock { self?.heard.append(entry) }
        }
    }

    deinit { token.map(NotificationCenter.default.removeObserver) }

    var counts: [Int] { lock.withLock { heard.map(\.count) } }
    var apps: [String?] { lock.withLock { heard.map(\.app) } }

    /// Waits (wall time, at most 5 s) until `count` notifications were heard.
    func wait(for count: Int) async {
        for _ in 0..<500 where counts.count < count { try? await Task.sleep(for: .milliseconds(10)) }
    }
}

/// A push SDK's notification-center delegate that forwards to the app's previous one, written
/// as Linux needs it: a plain call where iOS code calls the optional requirement with `?(…)`
/// (docs/porting.md, "What Linux cannot compile").
final class ForwardingNotificationDelegate: NSObject, UNUserNotificationCenterDelegate {
    weak var previous: UNUserNotificationCenterDelegate?

    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification,
                                withCompletionHandler completionHandler: @escaping @Sendable (UNNotificationPresentationOptions) -> Void) {
        if previous?.userNotificationCenter(center, willPresent: notification, withCompletionHandler: completionHandler) != nil { return }
        completionHandler([.banner])
    }
}

/// The same for the app delegate's background fetch, its handler declared `@Sendable` as the
/// requirement's is here (a plain one, forwarded, warns in Swift 6 mode: docs/porting.md).
final class ForwardingFetchDelegate: UIResponder, UIApplicationDelegate {
    weak var previous: UIApplicationDelegate?

    func application(_ application: UIApplication, performFetchWithCompletionHandler completionHandler: @escaping @Sendable (UIBackgroundFetchResult) -> Void) {
        if previous?.application(application, performFetchWithCompletionHandler: completionHandler) != nil { return }
        completionHandler(.failed)
    }
}

/// An app delegate that does not implement the fetch: its default answers.
final class FetchlessAppDelegate: UIResponder, UIApplicationDelegate {}

@Suite @MainActor struct SixteenthProbeSnippetTests {
    static let start = Date(timeIntervalSince1970: 1_796_083_200)

    /// A modelled app's context, so that no test makes the test process's own app.
    static func context(_ name: String, launchedByUser: Bool = false) throws -> (SimulatedDevice, BGAppContext) {
        let device = try SimulatedDevice(start: start)
        let app = AppID(name)
        let manifest = AppManifest(appID: app, permittedIdentifiers: [], backgroundModes: [], source: "test")
        let context = device.install(app: app, manifest: manifest, launchedByUser: launchedByUser) {}
        return (device, context)
    }

    @Test func theExtensionHostsNamesAreApplesAndNeverPosted() async throws {
        let names: [NSNotification.Name] = [.NSExtensionHostWillResignActive, .NSExtensionHostDidBecomeActive,
                                            .NSExtensionHostDidEnterBackground, .NSExtensionHostWillEnterForeground]
        #expect(names.map(\.rawValue) == ["NSExtensionHostWillResignActiveNotification", "NSExtensionHostDidBecomeActiveNotification",
                                          "NSExtensionHostDidEnterBackgroundNotification", "NSExtensionHostWillEnterForegroundNotification"])
        let (device, context) = try Self.context("com.example.analytics", launchedByUser: true)
        await device.settle()
        let tracker = HostStateTracker(application: context.application)
        context.withCurrent {
            context.application.enterForeground()
            context.application.enterBackground()
        }
        await device.settle()
        // The app's own move is heard; the host's never come: Linux has no app extensions.
        #expect(tracker.events == ["background"])
    }

    @Test func theGeneralPasteboardIsClearedOnReturnAndCountsTheChange() {
        let general = UIPasteboard.general
        #expect(general.name.rawValue == "com.apple.UIKit.pboard.general" && UIPasteboard.general === general)
        general.string = "bc1q-address"
        let before = general.changeCount
        clearPasteboardOnReturn()
        #expect(general.string == "" && general.hasStrings && general.numberOfItems == 1)
        #expect(general.changeCount == before + 1)
        // Nothing to clear: no write, no change.
        general.strings = nil
        let empty = general.changeCount
        clearPasteboardOnReturn()
        #expect(general.changeCount == empty && general.numberOfItems == 0 && general.string == nil && general.strings == nil)
    }

    @Test func aPasteboardKeepsStringsAndURLsAndEveryWriteCounts() throws {
        let board = UIPasteboard.withUniqueName()
        #expect(board.changeCount == 0 && !board.hasStrings && !board.hasURLs && board.urls == nil)
        board.strings = ["a", "b"]
        #expect(board.string == "a" && board.strings == ["a", "b"] && board.numberOfItems == 2 && board.url == nil)
        let link = try #require(URL(string: "https://example.com/invoice/7"))
        board.url = link
        #expect(board.urls == [link] && board.hasURLs && !board.hasStrings && board.string == nil)
        board.urls = [link, link]
        board.string = nil
        #expect(board.numberOfItems == 0 && board.changeCount == 4)
        // One pasteboard by name: another handle sees the same contents, until it is removed.
        let again = try #require(UIPasteboard(name: board.name, create: false))
        again.string = "shared"
        #expect(board.string == "shared" && board.changeCount == 5)
        #expect(UIPasteboard(name: UIPasteboard.Name("com.example.none"), create: false) == nil)
        UIPasteboard.remove(withName: board.name)
        #expect(UIPasteboard(name: board.name, create: false) == nil && again.string == "shared")
        // From many threads at once, every write is counted once.
        let busy = UIPasteboard.withUniqueName()
        DispatchQueue.concurrentPerform(iterations: 200) { busy.string = "\($0)" }
        #expect(busy.changeCount == 200 && busy.numberOfItems == 1)
    }

    @Test func aChangeIsAnnouncedAfterItsCountGrewWithThePasteboardAsObject() async throws {
        // In a simulated app: from the application's notification queue, as app work.
        let (device, context) = try Self.context("com.example.pasteboard")
        let board = UIPasteboard.withUniqueName()
        let watch = PasteboardWatch(board)
        context.withCurrent {
            board.string = "one"
            // Through another handle of the name: announced with the first.
            UIPasteboard(name: board.name, create: false)?.url = URL(string: "https://example.com")
        }
        await device.settle()
        // Two writes, two notifications; each observer reads the count grown by its write.
        #expect(watch.counts.count == 2 && watch.counts.first ?? 0 >= 1 && watch.counts.last == 2)
        #expect(watch.apps == ["com.example.pasteboard", "com.example.pasteboard"], "delivered as the writing app's work")
        // Outside any app (no context): from the pasteboard's own queue.
        let lone = UIPasteboard.withUniqueName()
        let loneWatch = PasteboardWatch(lone)
        await Task.detached { lone.strings = ["x"] }.value
        await loneWatch.wait(for: 1)
        #expect(loneWatch.counts == [1])
        // (Where no app's context is bound, the process's own default context answers
        // `BGAppContext.current`: not the simulated app's.)
        #expect(loneWatch.apps.count == 1 && loneWatch.apps.first != "com.example.pasteboard", "not the simulated app's work: \(loneWatch.apps)")
    }

    @Test func aMainActorTypesFoundationBlocksReachItThroughTheDocumentedHops() async throws {
        // Tests/IOSShapedApp/MainActorBlocks.swift, Swift 5 mode: a `.main` observer and the
        // main operation queue's block run on the main actor (`MainActor.assumeIsolated`).
        let scheduler = BackgroundWorkScheduler()
        let name = Notification.Name("com.example.store.left-\(UUID().uuidString)")
        scheduler.start(pausingOn: name, interval: 3600)
        // Posted from another thread, as the application's notifications are.
        await Task.detached { NotificationCenter.default.post(name: name, object: nil) }.value
        #expect(scheduler.pauses == 1)
        for _ in 0..<500 where scheduler.ticks == 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(scheduler.ticks == 1)
        // A block operation and its completion block (BlockOperation, completionBlock).
        scheduler.runOperation()
        for _ in 0..<500 where scheduler.operationsCompleted == 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(scheduler.operationsRun == 1 && scheduler.operationsCompleted == 1)
        scheduler.stop()
    }

    @Test func aForwardedOptionalRequirementIsAPlainCallAnsweredByTheDefault() throws {
        let (_, context) = try Self.context("com.example.push")
        let forwarder = ForwardingFetchDelegate()
        // Called back at once, on this thread; a box, as the handler is `@Sendable`.
        let results = Box<[UIBackgroundFetchResult]>([])
        // No previous delegate: the SDK's own answer.
        forwarder.application(context.application, performFetchWithCompletionHandler: { results.value.append($0) })
        // A previous delegate without the method: its default does what an unimplemented
        // optional does on iOS (`.noData`), and the SDK does not answer twice.
        let previous = FetchlessAppDelegate()
        forwarder.previous = previous
        forwarder.application(context.application, performFetchWithCompletionHandler: { results.value.append($0) })
        #expect(results.value == [.failed, .noData])
        _ = ForwardingNotificationDelegate()
    }

    @Test func windowLevelsCompareAndAddAsUIKitsOverlayLetsThem() {
        #expect(UIWindow.Level.normal.rawValue == 0 && UIWindow.Level.statusBar.rawValue == 1000 && UIWindow.Level.alert.rawValue == 2000)
        #expect((UIWindow.Level.alert + 1).rawValue == 2001)
        #expect((1 + UIWindow.Level.normal) == UIWindow.Level(1))
        #expect((UIWindow.Level.statusBar - 1) < .statusBar && .statusBar < UIWindow.Level.alert)
        #expect(UIWindow.Level.alert - UIWindow.Level.statusBar == 1000)
        var level = UIWindow.Level(rawValue: 5)
        level += 2
        level -= 1
        #expect(level == UIWindow.Level(6))
        #expect(max(UIWindow.Level.alert, .normal) == .alert)
        #expect(UIWindow(frame: .zero).windowLevel == .normal)
    }

    @Test func anOverlayWindowIsListedInFrontByItsLevelAndGoesWhenLetGo() throws {
        let (_, context) = try Self.context("com.example.wallet")
        try context.withCurrent {
            let main = UIWindow(frame: UIScreen.main.bounds)
            main.makeKeyAndVisible()
            let overlay = TwoFactorOverlay()
            overlay.show(UIViewController())
            let banner = UIWindow(frame: .zero)
            do {
                let shown = try #require(overlay.window)
                // Made key after the main window, at the alert level plus one: in front.
                #expect(shown.windowLevel.rawValue == 2001 && shown.isKeyWindow)
                #expect(context.application.liveWindows.map(\.windowLevel) == [.normal, UIWindow.Level.alert + 1])
                // A window made key later at a lower level is listed behind the overlay.
                banner.windowLevel = .statusBar
                banner.makeKeyAndVisible()
                #expect(context.application.liveWindows.map(\.windowLevel) == [.normal, .statusBar, UIWindow.Level.alert + 1])
                #expect(context.application.liveWindows.last { $0.isKeyWindow } === banner)
                // Nothing to resign (no text input), and a window has no superview to leave:
                // its views stay, and it is listed while the app keeps it.
                #expect(!shown.endEditing(true) && !UIView().endEditing(false))
                shown.removeFromSuperview()
                #expect(shown.subviews.count == 1 && context.application.liveWindows.contains { $0 === shown })
            }
            overlay.hide()
            #expect(overlay.window == nil)
            #expect(context.application.liveWindows.map(\.windowLevel) == [.normal, .statusBar])
            withExtendedLifetime((main, banner)) {}
        }
    }
}
