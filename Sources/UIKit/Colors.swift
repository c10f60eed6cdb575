// `UIColor` (docs/porting.md, "View controllers"): Linux draws nothing, so a colour is what
// the code said, kept by name, enough for `view.backgroundColor = .systemBackground`, an
// app's `extension UIColor { convenience init(hex:) }` and SwiftUI's `Color(uiColor:)` to
// compile and compare.
import Foundation

/// A colour (Apple: `UIColor`), kept as what the code said: a system colour's name or its
/// components. Nothing is drawn with it on Linux. Two colours are equal when they say the
/// same. @unchecked Sendable: immutable (as Apple's, which is Sendable).
open class UIColor: NSObject, @unchecked Sendable {
    /// What the colour is: a system colour's name, an asset's name or its components.
    package let name: String

    package init(name: String) {
        self.name = name
        super.init()
    }

    /// A colour of red, green, blue and alpha components (0...1).
    public init(red: CGFloat, green: CGFloat, blue: CGFloat, alpha: CGFloat) {
        name = "rgba(\(red), \(green), \(blue), \(alpha))"
        super.init()
    }

    /// A gray of `white` (0 black ... 1 white) and `alpha`.
    public init(white: CGFloat, alpha: CGFloat) {
        name = "white(\(white), \(alpha))"
        super.init()
    }

    /// A colour of hue, saturation, brightness and alpha components (0...1).
    public init(hue: CGFloat, saturation: CGFloat, brightness: CGFloat, alpha: CGFloat) {
        name = "hsba(\(hue), \(saturation), \(brightness), \(alpha))"
        super.init()
    }

    /// The colour named `name` in the app's assets. Linux has no asset catalog: the colour
    /// is kept by name and is never `nil`.
    public init?(named name: String) {
        self.name = name
        super.init()
    }

    /// This colour at `alpha`.
    open func withAlphaComponent(_ alpha: CGFloat) -> UIColor {
        UIColor(name: "\(name) alpha \(alpha)")
    }

    /// Colours are equal when they say the same.
    open override func isEqual(_ object: Any?) -> Bool {
        (object as? UIColor)?.name == name
    }

    /// The hash of what the colour says.
    open override var hash: Int { name.hashValue }

    /// What the colour says.
    open override var description: String { "UIColor(\(name))" }

    /// The background of the system's interface.
    public static let systemBackground = UIColor(name: "systemBackground")
    /// A background above the system background.
    public static let secondarySystemBackground = UIColor(name: "secondarySystemBackground")
    /// A background above the secondary one.
    public static let tertiarySystemBackground = UIColor(name: "tertiarySystemBackground")
    /// A grouped background.
    public static let systemGroupedBackground = UIColor(name: "systemGroupedBackground")
    /// Primary text.
    public static let label = UIColor(name: "label")
    /// Secondary text.
    public static let secondaryLabel = UIColor(name: "secondaryLabel")
    /// Tertiary text.
    public static let tertiaryLabel = UIColor(name: "tertiaryLabel")
    /// Separator lines.
    public static let separator = UIColor(name: "separator")
    /// The app's tint.
    public static let tintColor = UIColor(name: "tintColor")
    /// A gray of the system.
    public static let systemGray = UIColor(name: "systemGray")
    /// The system's blue.
    public static let systemBlue = UIColor(name: "systemBlue")
    /// The system's red.
    public static let systemRed = UIColor(name: "systemRed")
    /// The system's green.
    public static let systemGreen = UIColor(name: "systemGreen")
    /// The system's orange.
    public static let systemOrange = UIColor(name: "systemOrange")
    /// The system's yellow.
    public static let systemYellow = UIColor(name: "systemYellow")
    /// The system's purple.
    public static let systemPurple = UIColor(name: "systemPurple")
    /// The system's pink.
    public static let systemPink = UIColor(name: "systemPink")
    /// The system's indigo.
    public static let systemIndigo = UIColor(name: "systemIndigo")
    /// The system's teal.
    public static let systemTeal = UIColor(name: "systemTeal")
    /// White.
    public static let white = UIColor(name: "white")
    /// Black.
    public static let black = UIColor(name: "black")
    /// No colour.
    public static let clear = UIColor(name: "clear")
    /// Red.
    public static let red = UIColor(name: "red")
    /// Green.
    public static let green = UIColor(name: "green")
    /// Blue.
    public static let blue = UIColor(name: "blue")
    /// Gray.
    public static let gray = UIColor(name: "gray")
    /// Light gray.
    public static let lightGray = UIColor(name: "lightGray")
    /// Dark gray.
    public static let darkGray = UIColor(name: "darkGray")
    /// Orange.
    public static let orange = UIColor(name: "orange")
    /// Yellow.
    public static let yellow = UIColor(name: "yellow")
    /// Purple.
    public static let purple = UIColor(name: "purple")
    /// Brown.
    public static let brown = UIColor(name: "brown")
    /// Cyan.
    public static let cyan = UIColor(name: "cyan")
    /// Magenta.
    public static let magenta = UIColor(name: "magenta")
}
