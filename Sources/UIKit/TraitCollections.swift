// Trait collections (Apple: `UITraitCollection`), for code beside background work that asks
// whether the interface is active or dark (an app mediator that reports the app's state
// from `window.traitCollection.activeAppearance`, found by an outside compile probe in a
// public messenger). Linux draws nothing: the traits say what the app set and what its
// scene's state is.
import BackgroundTasks
import Foundation

/// The traits of a window, view or controller (Apple: `UITraitCollection`): its appearance,
/// whether its interface is active, the device's idiom. Immutable, as Apple's.
/// @unchecked Sendable: every property is a constant.
open class UITraitCollection: NSObject, @unchecked Sendable {
    /// Light or dark: what the nearest override says, else `.light` in a window (nothing is
    /// shown, so the system's appearance is the default one), `.unspecified` outside one.
    public let userInterfaceStyle: UIUserInterfaceStyle
    /// Whether the window's scene is in the foreground and active (Apple:
    /// `activeAppearance`, iOS 14): `.active` while it is `.foregroundActive`, `.inactive`
    /// in any other state, `.unspecified` outside a window.
    public let activeAppearance: UIUserInterfaceActiveAppearance
    /// The kind of interface (``UIDevice/userInterfaceIdiom``: `.unspecified` on Linux).
    public let userInterfaceIdiom: UIUserInterfaceIdiom

    /// A collection of `style`, `activeAppearance` and `idiom` (the device's by default).
    package init(style: UIUserInterfaceStyle, activeAppearance: UIUserInterfaceActiveAppearance, idiom: UIUserInterfaceIdiom = UIDevice.linuxIdiom) {
        userInterfaceStyle = style
        self.activeAppearance = activeAppearance
        userInterfaceIdiom = idiom
        super.init()
    }

    /// An empty collection: every trait unspecified.
    public override convenience init() {
        self.init(style: .unspecified, activeAppearance: .unspecified, idiom: .unspecified)
    }

    /// A collection with only the appearance `style` (Apple: `init(userInterfaceStyle:)`).
    public convenience init(userInterfaceStyle style: UIUserInterfaceStyle) {
        self.init(style: style, activeAppearance: .unspecified, idiom: .unspecified)
    }

    /// A collection with only `activeAppearance` (Apple: `init(activeAppearance:)`).
    public convenience init(activeAppearance: UIUserInterfaceActiveAppearance) {
        self.init(style: .unspecified, activeAppearance: activeAppearance, idiom: .unspecified)
    }

    /// Collections are equal when every trait is.
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UITraitCollection else { return false }
        return other.userInterfaceStyle == userInterfaceStyle && other.activeAppearance == activeAppearance
            && other.userInterfaceIdiom == userInterfaceIdiom
    }

    /// The hash of the traits.
    open override var hash: Int {
        var hasher = Hasher()
        hasher.combine(userInterfaceStyle.rawValue)
        hasher.combine(activeAppearance.rawValue)
        hasher.combine(userInterfaceIdiom.rawValue)
        return hasher.finalize()
    }
}

extension UIView {
    /// The view's traits (Apple: `traitCollection`): its appearance from the nearest
    /// ``overrideUserInterfaceStyle`` up its superviews (the window's included), else its
    /// window's (`.light`), `.unspecified` outside a window; its window's `activeAppearance`
    /// (`.unspecified` outside one).
    public var traitCollection: UITraitCollection {
        let style = sequence(first: self, next: \.superview).lazy.map(\.overrideUserInterfaceStyle).first { $0 != .unspecified }
        guard let windowTraits = window?.traitCollection else {
            return UITraitCollection(style: style ?? .unspecified, activeAppearance: .unspecified)
        }
        return UITraitCollection(style: style ?? windowTraits.userInterfaceStyle, activeAppearance: windowTraits.activeAppearance)
    }
}

extension UIWindow {
    /// The window's traits (Apple: `traitCollection`): its ``overrideUserInterfaceStyle``, else
    /// `.light`; `activeAppearance` from its scene (`.active` while `.foregroundActive`,
    /// `.inactive` otherwise, `.unspecified` for a window without a scene).
    public var traitCollection: UITraitCollection {
        let style = overrideUserInterfaceStyle == .unspecified ? .light : overrideUserInterfaceStyle
        return UITraitCollection(style: style, activeAppearance: .of(sceneState: windowScene?.activationState))
    }
}

extension UIScreen {
    /// The screen's traits (Apple: `traitCollection`), as analytics SDKs read the system's
    /// appearance from it: `.light` (nothing is shown, so the system's appearance is the
    /// default one, as a window's without an override), `activeAppearance` `.unspecified`
    /// (a screen belongs to no scene), the device's idiom (`.unspecified`).
    public var traitCollection: UITraitCollection {
        UITraitCollection(style: .light, activeAppearance: .unspecified)
    }
}

extension UIViewController {
    /// The controller's traits (Apple: `traitCollection`): its own
    /// ``overrideUserInterfaceStyle`` when set, else its view's (the view is not loaded for it).
    public var traitCollection: UITraitCollection {
        let viewTraits = viewIfLoaded?.traitCollection
        let style = overrideUserInterfaceStyle != .unspecified ? overrideUserInterfaceStyle : viewTraits?.userInterfaceStyle ?? .unspecified
        return UITraitCollection(style: style, activeAppearance: viewTraits?.activeAppearance ?? .unspecified)
    }
}

extension UIUserInterfaceActiveAppearance {
    /// A window's active appearance when its scene is in `sceneState` (`nil`: no scene):
    /// `.active` while `.foregroundActive`, `.inactive` in any other state, `.unspecified`
    /// without a scene.
    package static func of(sceneState: UIScene.ActivationState?) -> UIUserInterfaceActiveAppearance {
        switch sceneState {
        case .foregroundActive?: .active
        case nil: .unspecified
        default: .inactive
        }
    }
}
