// `UIColor` (docs/porting.md, "View controllers"): Linux draws nothing, so a colour is what
// the code said, kept by name, enough for `view.backgroundColor = .systemBackground` and
// SwiftUI's `Color(uiColor:)` to compile and compare.
import Foundation

/// A colour (Apple: `UIColor`), kept as what the code said: a system colour's name or its
/// components. Nothing is drawn with it on Linux.
public struct UIColor: Hashable, Sendable {
    /// What the colour is: a system colour's name, an asset's name or its components.
    package let name: String

    package init(name: String) { self.name = name }

    /// A colour of red, green, blue and alpha components (0...1).
    public init(red: CGFloat, green: CGFloat, blue: CGFloat, alpha: CGFloat) {
        name = "rgba(\(red), \(green), \(blue), \(alpha))"
    }

    /// A gray of `white` (0 black ... 1 white) and `alpha`.
    public init(white: CGFloat, alpha: CGFloat) {
        name = "white(\(white), \(alpha))"
    }

    /// A colour of hue, saturation, brightness and alpha components (0...1).
    public init(hue: CGFloat, saturation: CGFloat, brightness: CGFloat, alpha: CGFloat) {
        name = "hsba(\(hue), \(saturation), \(brightness), \(alpha))"
    }

    /// The colour named `name` in the app's assets. Linux has no asset catalog: the colour
    /// is kept by name and is never `nil`.
    public init?(named name: String) { self.name = name }

    /// This colour at `alpha`.
    public func withAlphaComponent(_ alpha: CGFloat) -> UIColor {
        UIColor(name: "\(name) alpha \(alpha)")
    }

    /// The background of the system's interface.
    public static let systemBackground = UIColor(name: "systemBackground")
    /// A background above the system background.
    public static let secondarySystemBackground = UIColor(name: "secondarySystemBackground")
    /// A grouped background.
    public static let systemGroupedBackground = UIColor(name: "systemGroupedBackground")
    /// Primary text.
    public static let label = UIColor(name: "label")
    /// Secondary text.
    public static let secondaryLabel = UIColor(name: "secondaryLabel")
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
}
