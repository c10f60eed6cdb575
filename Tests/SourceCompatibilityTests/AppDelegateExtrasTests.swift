import BackgroundTasks
import BackgroundTasksTesting
import Foundation
import SchedulerCore
import Testing
import UIKit

/// What AppDelegateExtrasSnippets.swift compiles, run where the library decides.
@Suite @MainActor struct AppDelegateExtrasTests {
    static let start = Date(timeIntervalSince1970: 1_796_083_200)

    /// A modelled app's application, so that no test makes the test process's own app.
    static func application() throws -> (SimulatedDevice, UIApplication) {
        let device = try SimulatedDevice(start: start)
        let app = AppID("com.example.bank")
        let context = device.install(app: app, manifest: AppManifest(appID: app, permittedIdentifiers: [], backgroundModes: [], source: "test")) {}
        return (device, context.application)
    }

    @Test func aUniversalLinkIsContinuedByTheDelegatesOwnCall() throws {
        let (_, application) = try Self.application()
        let delegate = LinkingAppDelegate()
        let activity = NSUserActivity(activityType: NSUserActivityTypeBrowsingWeb)
        activity.webpageURL = URL(string: "https://bank.example.com/statements/42")
        activity.addUserInfoEntries(from: ["a": 1])
        activity.addUserInfoEntries(from: ["b": 2])
        #expect(activity.userInfo?.count == 2)
        var restored: [any UIUserActivityRestoring]?? = .none
        let handled = delegate.application(application, continue: activity) { restored = .some($0) }
        #expect(handled && delegate.openedPaths == ["/statements/42"])
        #expect(restored != nil)
        activity.becomeCurrent()
        #expect(activity.isCurrent)
        activity.invalidate()
        activity.becomeCurrent()
        #expect(!activity.isCurrent && activity.isInvalidated)
    }

    @Test func quickActionsAreKeptAsSetAndAMutableOneChanges() throws {
        let (_, application) = try Self.application()
        let item = UIMutableApplicationShortcutItem(type: "a", localizedTitle: "A")
        item.localizedSubtitle = "sub"
        item.icon = UIApplicationShortcutIcon(type: .search)
        item.type = "b"
        #expect(item.type == "b" && item.localizedSubtitle == "sub" && item.icon?.source == .type(.search))
        let delegate = LinkingAppDelegate()
        var done: Bool?
        delegate.application(application, performActionFor: item) { done = $0 }
        #expect(done == false && delegate.performedShortcuts == ["b"])
        #expect(UIApplicationShortcutIcon(systemImageName: "camera").source == .systemImage("camera"))
        // The launch sets two quick actions; they are kept as set.
        #expect(delegate.application(application, didFinishLaunchingWithOptions: nil))
        #expect(application.shortcutItems?.map(\.type) == ["com.example.bank.transfer", "com.example.bank.scan"])
        #expect(application.shortcutItems?.last?.localizedSubtitle == "Deposit")
    }

    @Test func thePrivacyCoverIsLaidOverTheWindowAndTakenAway() throws {
        let (_, application) = try Self.application()
        let delegate = LinkingAppDelegate()
        let window = UIWindow(frame: CGRect(x: 0, y: 0, width: 390, height: 844))
        delegate.window = window
        delegate.applicationWillResignActive(application)
        let cover = window.viewWithTag(LinkingAppDelegate.coverTag)
        #expect(cover?.frame.size.width == 390)
        #expect(window.subviews.count == 1)
        delegate.applicationDidBecomeActive(application)
        #expect(window.viewWithTag(LinkingAppDelegate.coverTag) == nil && window.subviews.isEmpty)
        // Hidden until made key and visible, as Apple's windows are.
        #expect(window.isHidden)
        window.makeKeyAndVisible()
        #expect(!window.isHidden)
        window.isHidden = true
        window.overrideUserInterfaceStyle = .dark
        #expect(window.isHidden && window.overrideUserInterfaceStyle == .dark)
    }

    @Test func theKeyWindowIsTheLastMadeKeyWhileTheAppKeepsIt() throws {
        let device = try SimulatedDevice(start: Self.start)
        let app = AppID("com.example.windows")
        let context = device.install(app: app, manifest: AppManifest(appID: app, permittedIdentifiers: [], backgroundModes: [], source: "test")) {}
        context.withCurrent {
            let first = UIWindow(frame: .zero)
            first.makeKeyAndVisible()
            let second = UIWindow(frame: .zero)
            second.makeKeyAndVisible()
            #expect(!first.isKeyWindow && second.isKeyWindow)
            let application = context.application
            #expect(application.liveWindows.count == 2)
            #expect(application.liveWindows.last { $0.isKeyWindow } === second)
            first.makeKey()
            #expect(first.isKeyWindow && !second.isKeyWindow)
            // No scene on Linux unless a scene-based app connected one: none here.
            #expect(currentKeyWindow() == nil)
        }
        // Windows the app let go are not listed.
        context.withCurrent { #expect(context.application.liveWindows.isEmpty) }
    }

    @Test func theDeviceIsNeitherAPhoneNorAPad() throws {
        let (device, _) = try Self.application()
        let context = try #require(device.context(of: AppID("com.example.bank")))
        context.withCurrent {
            #expect(UIDevice.current.userInterfaceIdiom == .unspecified)
            #expect(deviceKind() == "unknown")
        }
    }

    @Test func activitiesRunTheirWorkAtOnce() {
        var saved = 0
        saveBracketedByAnActivity { saved += 1 }
        ProcessInfo.processInfo.performActivity(options: .background, reason: "test") { saved += 1 }
        #expect(saved == 2)
        #expect(ProcessInfo.ActivityOptions.userInteractive.contains(.latencyCritical))
        #expect(ProcessInfo.ActivityOptions.userInitiated.contains(.idleSystemSleepDisabled))
        #expect(!ProcessInfo.ActivityOptions.userInitiatedAllowingIdleSystemSleep.contains(.idleSystemSleepDisabled))
    }
}
