// Alerts (Apple: `UIAlertController`, `UIAlertAction`), which app contexts and settings code
// build beside their background work ("Background App Refresh is off: open Settings?"; found
// by outside compile probes in a messenger's app context and a push SDK). Linux shows no
// alert and nobody taps one: the controller keeps its title, message, style and actions,
// presenting it makes it the presented controller as for any controller, and the actions'
// handlers are never called.
import BackgroundTasks
import Foundation

/// An alert or action sheet (Apple: `UIAlertController`): kept as built, never shown.
@preconcurrency @MainActor
open class UIAlertController: UIViewController {
    /// `UIAlertController.Style`: the C enum `UIAlertControllerStyle` (CUIKitTypes), as on iOS.
    public typealias Style = UIAlertControllerStyle

    /// The alert's message.
    open var message: String?
    /// How it shows.
    public private(set) var preferredStyle: Style = .alert
    /// Its actions, in the order added.
    public private(set) var actions: [UIAlertAction] = []
    /// The action the alert stresses (one of ``actions``).
    open var preferredAction: UIAlertAction?

    /// An alert titled `title` with `message`, shown as `preferredStyle` (never shown on Linux).
    public convenience init(title: String?, message: String?, preferredStyle: Style) {
        self.init(nibName: nil, bundle: nil)
        self.title = title
        self.message = message
        self.preferredStyle = preferredStyle
    }

    /// Adds `action` to the alert.
    open func addAction(_ action: UIAlertAction) {
        actions.append(action)
    }
}

/// A button of an alert (Apple: `UIAlertAction`): kept; nobody taps it on Linux, so its
/// handler is never called.
@preconcurrency @MainActor
open class UIAlertAction: NSObject {
    /// `UIAlertAction.Style`: the C enum `UIAlertActionStyle` (CUIKitTypes), as on iOS.
    public typealias Style = UIAlertActionStyle

    /// The button's title.
    public let title: String?
    /// What the button does.
    public let style: Style
    /// Whether the button can be tapped.
    open var isEnabled = true
    /// What runs when the button is tapped (never, here).
    let handler: ((UIAlertAction) -> Void)?

    /// A button titled `title` of `style`; `handler` runs when it is tapped (never on Linux).
    public init(title: String?, style: Style, handler: ((UIAlertAction) -> Void)? = nil) {
        self.title = title
        self.style = style
        self.handler = handler
        super.init()
    }
}
