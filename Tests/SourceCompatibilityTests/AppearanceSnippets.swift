// Appearance and menu code in the files that run an app's background work, in the shapes an
// eighth outside compile probe found in public apps (an audiobook player's App with its
// playback commands and window tint, a messenger's app mediator reading the window's active
// appearance beside beginBackgroundTask, a widget app's UI-test modifier), in Swift 6 mode
// with warnings as errors. Linux draws nothing: these compile, keep what was set and read it
// back (AppearanceTests).
import Foundation
import SwiftUI
import Testing
import UIKit

struct PlayerCommands: Commands {
    var hasBook: Bool
    var body: some Commands {
        CommandMenu("Playback") {
            Button("Play/Pause") {}
                .keyboardShortcut(.space, modifiers: [])
                .disabled(!hasBook)
            Divider()
            Button("Skip Forward") {}
                .keyboardShortcut(.rightArrow, modifiers: [.command, .shift])
        }
        if hasBook {
            CommandGroup(before: .toolbar) {
                Button("Refresh") {}.keyboardShortcut("r")
            }
        }
    }
}

struct PlayerApp: App {
    var body: some Scene {
        WindowGroup {
            Text("Library")
        }
        .commands {
            PlayerCommands(hasBook: true)
            SidebarCommands()
        }
    }
}

@MainActor
enum WindowAppearance {
    /// The accent and colour scheme pushed to every window of the app's scenes, as the
    /// player's App does when its settings change.
    static func apply(tint: Color?, style: UIUserInterfaceStyle) {
        let color = tint.map(UIColor.init)
        for scene in UIApplication.shared.connectedScenes {
            guard let windowScene = scene as? UIWindowScene else { continue }
            for window in windowScene.windows {
                window.tintColor = color
                window.overrideUserInterfaceStyle = style
                var controller: UIViewController? = window.rootViewController
                while let current = controller {
                    current.overrideUserInterfaceStyle = style
                    controller = current.presentedViewController
                }
            }
        }
    }

    /// The messenger's reading of the app's state: active only while the window is too.
    static func state(of window: UIWindow) -> UIApplication.State {
        switch UIApplication.shared.applicationState {
        case .active: window.traitCollection.activeAppearance == .active ? .active : .inactive
        case .inactive: .inactive
        case .background: .background
        @unknown default: .inactive
        }
    }
}

extension UIUserInterfaceActiveAppearance: @retroactive CustomStringConvertible {
    public var description: String {
        switch self {
        case .active: "active"
        case .inactive: "inactive"
        case .unspecified: "unspecified"
        @unknown default: "unknown"
        }
    }
}

/// A UI-test modifier set from launch arguments.
struct UITestEnvironment: ViewModifier {
    var size: DynamicTypeSize?
    var reduceMotion: Bool

    func body(content: Content) -> some View {
        switch (size, reduceMotion) {
        case (nil, false):
            content
        case (let size?, false):
            content.environment(\.dynamicTypeSize, size)
        case (nil, true):
            content.transaction { $0.disablesAnimations = true }
        case (let size?, true):
            content
                .environment(\.dynamicTypeSize, size)
                .transaction { transaction in transaction.disablesAnimations = true }
        }
    }
}

@Suite struct AppearanceTests {
    @Test @MainActor func traitsSayWhatTheAppSetAndWhetherTheWindowIsActive() {
        let window = UIWindow(frame: .zero)
        #expect(window.traitCollection.userInterfaceStyle == .light)
        #expect(window.traitCollection.activeAppearance == .unspecified, "a window without a scene")
        window.overrideUserInterfaceStyle = .dark
        #expect(window.traitCollection.userInterfaceStyle == .dark)
        let outer = UIView()
        let inner = UIView()
        outer.addSubview(inner)
        #expect(inner.traitCollection.userInterfaceStyle == .unspecified)
        outer.overrideUserInterfaceStyle = .dark
        #expect(inner.traitCollection.userInterfaceStyle == .dark, "the nearest override up the superviews")
        let controller = UIViewController()
        controller.overrideUserInterfaceStyle = .light
        #expect(controller.traitCollection.userInterfaceStyle == .light && !controller.isViewLoaded)
        #expect(UIUserInterfaceActiveAppearance.active.description == "active")
        let states: [UIScene.ActivationState?] = [.foregroundActive, .foregroundInactive, .background, .unattached, nil]
        #expect(states.map { UIUserInterfaceActiveAppearance.of(sceneState: $0) } == [.active, .inactive, .inactive, .inactive, .unspecified])
        #expect(UITraitCollection(userInterfaceStyle: .dark) == UITraitCollection(userInterfaceStyle: .dark))
        #expect(UITraitCollection(userInterfaceStyle: .dark) != UITraitCollection(activeAppearance: .active))
    }

    @Test @MainActor func aRootControllersViewIsInItsWindowAndTakesItsTraits() {
        let window = UIWindow(frame: CGRect(x: 0, y: 0, width: 390, height: 844))
        let root = UIViewController()
        window.rootViewController = root
        #expect(root.viewIfLoaded?.window == nil, "not loaded before the window is made key")
        window.makeKeyAndVisible()
        let label = UIView()
        root.view.addSubview(label)
        #expect(root.viewIfLoaded?.window === window && label.window === window)
        #expect(label.traitCollection.userInterfaceStyle == .light, "the window's default")
        window.overrideUserInterfaceStyle = .dark
        #expect(label.traitCollection.userInterfaceStyle == .dark, "the window's override reaches its views")
        label.overrideUserInterfaceStyle = .light
        #expect(label.traitCollection.userInterfaceStyle == .light)
        #expect(label.traitCollection.activeAppearance == window.traitCollection.activeAppearance)
        // A new root takes the old one's place.
        let next = UIViewController()
        window.rootViewController = next
        #expect(root.view.window == nil && next.viewIfLoaded?.window === window)
        #expect(UIView().window == nil)
    }

    @Test @MainActor func aSwiftUIColourIsTheSameColourInUIKit() {
        #expect(UIColor(Color.red) == UIColor(Color("red")))
        #expect(UIColor(Color(uiColor: .systemBackground)) == .systemBackground)
        #expect(UIColor(Color.red) != UIColor(Color.green))
    }

    @Test func textSizesAreOrderedAndTheEnvironmentKeepsOne() {
        #expect(DynamicTypeSize.allCases.first == .xSmall && DynamicTypeSize.allCases.count == 12)
        #expect(DynamicTypeSize.xxxLarge < .accessibility1)
        #expect(!DynamicTypeSize.xxxLarge.isAccessibilitySize && DynamicTypeSize.accessibility3.isAccessibilitySize)
        var environment = EnvironmentValues()
        #expect(environment.dynamicTypeSize == .large)
        environment.dynamicTypeSize = .accessibility2
        #expect(environment.dynamicTypeSize == .accessibility2)
        var transaction = Transaction(animation: .default)
        transaction.disablesAnimations = true
        #expect(withTransaction(transaction) { 7 } == 7)
        #expect(KeyboardShortcut("r").modifiers == .command && KeyboardShortcut.defaultAction.key == .return)
    }
}
