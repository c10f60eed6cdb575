// Shapes a seventeenth outside compile probe found in Swift SDKs (analytics, networking,
// feature flags), written here in their shape, not copied, in Swift 6 mode with warnings as
// errors, and what they do here.
import BackgroundTasks
import BackgroundTasksTesting
import Foundation
import SchedulerCore
import Testing
import UIKit

/// An analytics SDK built into apps and their extensions: the shared application through
/// key-value coding, as `UIApplication.shared` is unavailable in an extension.
enum ExtensionSafeApplication {
    /// Segment's shape.
    static var safeShared: UIApplication? {
        guard let application = UIApplication.value(forKeyPath: "sharedApplication") as? UIApplication else { return nil }
        return application
    }

    /// Amplitude's and RevenueCat's shape.
    static var sharedApplication: UIApplication? {
        UIApplication.value(forKey: "sharedApplication") as? UIApplication
    }
}

/// A product-analytics SDK's device type, from the idiom (PostHog's shape: `.tv`, as Apple's
/// SDK names the case).
func deviceType(of idiom: UIUserInterfaceIdiom) -> String {
    switch idiom {
    case .phone: "Mobile"
    case .pad: "Tablet"
    case .tv: "TV"
    case .carPlay: "CarPlay"
    case .mac: "Desktop"
    case .vision: "Vision"
    default: "Unknown"
    }
}

/// A product-analytics SDK that reads the screen's size when a window becomes key (PostHog's
/// shape, with a block where it names a selector: Linux has no Objective-C runtime).
@MainActor
final class KeyWindowSizeTracker {
    private(set) var sizes: [CGSize] = []
    private var token: (any NSObjectProtocol)?

    init(window: UIWindow?) {
        token = NotificationCenter.default.addObserver(forName: UIWindow.didBecomeKeyNotification, object: window, queue: .main) { [weak self] notification in
            // The window (main-actor, so Sendable) is taken out of the notification, which is not.
            guard let window = notification.object as? UIWindow else { return }
            MainActor.assumeIsolated { self?.sizes.append(window.bounds.size) }
        }
    }

    func stop() { token.map(NotificationCenter.default.removeObserver) }
}

/// What the four window notifications told, in order, for the windows watched.
final class WindowWatch: @unchecked Sendable {
    // @unchecked: `heard` is only touched under `lock`; the tokens are set in `init` and read
    // in `deinit`.
    private let lock = NSLock()
    private var heard: [String] = []
    private var tokens: [any NSObjectProtocol] = []

    init(_ windows: [(name: String, window: UIWindow)]) {
        let names: [Notification.Name] = [UIWindow.didBecomeKeyNotification, UIWindow.didResignKeyNotification,
                                          UIWindow.didBecomeVisibleNotification, UIWindow.didBecomeHiddenNotification]
        for (label, window) in windows {
            for name in names {
                tokens.append(NotificationCenter.default.addObserver(forName: name, object: window, queue: nil) { [weak self] notification in
                    let entry = "\(label) \(notification.name.rawValue.dropFirst("UIWindow".count).dropLast("Notification".count))"
                    self?.lock.withLock { self?.heard.append(entry) }
                })
            }
        }
    }

    deinit { tokens.forEach(NotificationCenter.default.removeObserver) }

    var events: [String] { lock.withLock { heard } }
}

/// An analytics SDK's default parameters: the accessibility settings, the text size and the
/// appearance (TelemetryDeck's shape).
@MainActor
func accessibilityParameters() -> [String: String] {
    [
        "accessibility.isReduceMotionEnabled": "\(UIAccessibility.isReduceMotionEnabled)",
        "accessibility.isVoiceOverRunning": "\(UIAccessibility.isVoiceOverRunning)",
        "accessibility.isBoldTextEnabled": "\(UIAccessibility.isBoldTextEnabled)",
        "accessibility.isReduceTransparencyEnabled": "\(UIAccessibility.isReduceTransparencyEnabled)",
        "accessibility.isGrayscaleEnabled": "\(UIAccessibility.isGrayscaleEnabled)",
        "accessibility.isInvertColorsEnabled": "\(UIAccessibility.isInvertColorsEnabled)",
        "accessibility.isDarkerSystemColorsEnabled": "\(UIAccessibility.isDarkerSystemColorsEnabled)",
        "accessibility.isSwitchControlRunning": "\(UIAccessibility.isSwitchControlRunning)",
        "accessibility.isClosedCaptioningEnabled": "\(UIAccessibility.isClosedCaptioningEnabled)",
        "accessibility.isMonoAudioEnabled": "\(UIAccessibility.isMonoAudioEnabled)",
        "accessibility.isShakeToUndoEnabled": "\(UIAccessibility.isShakeToUndoEnabled)",
        "accessibility.isOnOffSwitchLabelsEnabled": "\(UIAccessibility.isOnOffSwitchLabelsEnabled)",
        "accessibility.prefersCrossFadeTransitions": "\(UIAccessibility.prefersCrossFadeTransitions)",
        "accessibility.isVideoAutoplayEnabled": "\(UIAccessibility.isVideoAutoplayEnabled)",
        "accessibility.shouldDifferentiateWithoutColor": "\(UIAccessibility.shouldDifferentiateWithoutColor)",
        "accessibility.preferredContentSizeCategory":
            UIApplication.shared.preferredContentSizeCategory.rawValue.replacingOccurrences(of: "UICTContentSizeCategory", with: ""),
        "userInterfaceStyle": UIScreen.main.traitCollection.userInterfaceStyle == .dark ? "Dark" : "Light",
    ]
}

@Suite @MainActor struct SeventeenthProbeSnippetTests {
    /// A modelled app's context, so that no test makes the test process's own app (the
    /// sixteenth probe's suite makes them).
    static func context(_ name: String, launchedByUser: Bool = false) throws -> (SimulatedDevice, BGAppContext) {
        try SixteenthProbeSnippetTests.context(name, launchedByUser: launchedByUser)
    }

    @Test func theSharedApplicationThroughKeyValueCodingIsShared() throws {
        let (_, context) = try Self.context("com.example.analytics")
        context.withCurrent {
            #expect(ExtensionSafeApplication.safeShared === context.application)
            #expect(ExtensionSafeApplication.sharedApplication === context.application)
            #expect(UIApplication.value(forKey: "sharedApplication") as? UIApplication === UIApplication.shared)
        }
        // A key the class does not have here: nil, not a stop (iOS raises for one it lacks).
        #expect(UIApplication.value(forKey: "applicationState") == nil)
        #expect(UIApplication.value(forKeyPath: "sharedApplication.delegate") == nil)
        #expect(UIApplication.value(forKeyPath: "") == nil)
    }

    @Test func theIdiomsCasesHaveApplesSwiftNamesAndValues() throws {
        let cases: [UIUserInterfaceIdiom] = [.unspecified, .phone, .pad, .tv, .carPlay, .mac, .vision]
        #expect(cases.map(\.rawValue) == [-1, 0, 1, 2, 3, 5, 6])
        #expect(cases.map(deviceType(of:)) == ["Unknown", "Mobile", "Tablet", "TV", "CarPlay", "Desktop", "Vision"])
        // A Linux machine is none of them.
        let (_, context) = try Self.context("com.example.product-analytics")
        #expect(context.withCurrent { deviceType(of: UIDevice.current.userInterfaceIdiom) } == "Unknown")
    }

    @Test func aFileThatImportsOnlyUIKitsApplicationSubmoduleRuns() async throws {
        // UIKitSubmoduleSnippet.swift: its cache empties when the app enters the background.
        let (device, context) = try Self.context("com.example.images", launchedByUser: true)
        await device.settle()
        let cache = SubmoduleMemoryCache(application: context.application)
        cache.set(Data([1, 2, 3]), for: "avatar")
        #expect(cache.count == 1)
        context.withCurrent {
            context.application.enterForeground()
            context.application.enterBackground()
        }
        await device.settle()
        #expect(cache.count == 0)
    }

    @Test func filesThatImportOnlyUIKitsOtherSubmodulesCompile() throws {
        // UIKitSubmodulesSnippet.swift, with a modelled app's device.
        let (_, context) = try Self.context("com.example.network")
        context.withCurrent {
            let device = UIDevice.current
            #expect(submoduleUserAgent(app: "Feed/1.0") == "Feed/1.0 (\(device.model); \(device.systemName) \(device.systemVersion); Scale/3.00)")
        }
        #expect(submoduleBadge().frame.width == 20)
    }

    @Test func windowNotificationsHaveApplesNamesAndArePostedAsWindowsChange() async throws {
        #expect([UIWindow.didBecomeKeyNotification, UIWindow.didResignKeyNotification, UIWindow.didBecomeVisibleNotification,
                 UIWindow.didBecomeHiddenNotification].map(\.rawValue)
                == ["UIWindowDidBecomeKeyNotification", "UIWindowDidResignKeyNotification", "UIWindowDidBecomeVisibleNotification",
                    "UIWindowDidBecomeHiddenNotification"])
        let (device, context) = try Self.context("com.example.screens", launchedByUser: true)
        await device.settle()
        let main = UIWindow(frame: CGRect(x: 0, y: 0, width: 390, height: 844))
        let overlay = UIWindow(frame: CGRect(x: 0, y: 0, width: 200, height: 100))
        let watch = WindowWatch([("main", main), ("overlay", overlay)])
        let tracker = KeyWindowSizeTracker(window: main)
        context.withCurrent {
            main.makeKeyAndVisible()
            main.makeKeyAndVisible()  // already key and shown: nothing to announce
            overlay.makeKeyAndVisible()
            overlay.isHidden = true
            overlay.isHidden = true  // no change
            main.makeKey()
        }
        await device.settle()
        #expect(watch.events == ["main DidBecomeVisible", "main DidBecomeKey",
                                 "overlay DidBecomeVisible", "main DidResignKey", "overlay DidBecomeKey",
                                 "overlay DidBecomeHidden",
                                 "overlay DidResignKey", "main DidBecomeKey"])
        // The `.main` observer ran on the main actor with the window as object (Foundation's
        // post waits for `.main` observers, and the device settled after the posts).
        #expect(tracker.sizes == [CGSize(width: 390, height: 844), CGSize(width: 390, height: 844)])
        tracker.stop()
    }

    @Test func accessibilitySettingsAreThoseOfADeviceWithNoneTurnedOn() throws {
        let (_, context) = try Self.context("com.example.telemetry")
        let parameters = context.withCurrent { accessibilityParameters() }
        #expect(parameters.count == 17)
        #expect(parameters.filter { $0.key.hasPrefix("accessibility.is") || $0.key.hasPrefix("accessibility.prefers")
            || $0.key.hasPrefix("accessibility.should") }.values.allSatisfy { $0 == "false" })
        #expect(parameters["accessibility.preferredContentSizeCategory"] == "L" && parameters["userInterfaceStyle"] == "Light")
        // The screen's traits: light, no scene, the device's idiom.
        let screen = UIScreen.main.traitCollection
        #expect(screen.userInterfaceStyle == .light && screen.activeAppearance == .unspecified && screen.userInterfaceIdiom == .unspecified)
        // The notifications' names are Apple's constants'.
        #expect(UIAccessibility.reduceMotionStatusDidChangeNotification.rawValue == "UIAccessibilityReduceMotionStatusDidChangeNotification")
        #expect(UIAccessibility.voiceOverStatusDidChangeNotification.rawValue == "UIAccessibilityVoiceOverStatusDidChangeNotification")
        #expect(UIContentSizeCategory.didChangeNotification.rawValue == "UIContentSizeCategoryDidChangeNotification")
    }

    @Test func contentSizeCategoriesHaveApplesRawValuesAndOrder() {
        #expect(UIContentSizeCategory.large.rawValue == "UICTContentSizeCategoryL")
        #expect(UIContentSizeCategory.accessibilityExtraExtraExtraLarge.rawValue == "UICTContentSizeCategoryAccessibilityXXXL")
        #expect(UIContentSizeCategory.unspecified.rawValue == "_UICTContentSizeCategoryUnspecified")
        #expect(UIContentSizeCategory(rawValue: "UICTContentSizeCategoryXS") == .extraSmall)
        #expect(UIContentSizeCategory.extraSmall < .large && UIContentSizeCategory.extraExtraExtraLarge < .accessibilityMedium)
        #expect(UIContentSizeCategory.unspecified < .extraSmall && !(UIContentSizeCategory.large < .large))
        #expect(!UIContentSizeCategory.extraExtraExtraLarge.isAccessibilityCategory && UIContentSizeCategory.accessibilityMedium.isAccessibilityCategory)
        #expect(!UIContentSizeCategory.unspecified.isAccessibilityCategory)
    }

    @Test func uiKitsClassesAreNotFoundByName() {
        // docs/porting.md, "What Linux cannot compile": an SDK that checks for the class by
        // name takes its path for platforms without UIKit; `#if canImport(UIKit)` is the test.
        #expect(NSClassFromString("UIApplication") == nil && NSClassFromString("UIDevice") == nil)
    }
}
