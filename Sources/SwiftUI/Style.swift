import Foundation
import UIKit

// Appearance: fonts, colours, shape styles, edges, alignment, animation and the style
// protocols of controls. Nothing is drawn on Linux, so these are values that name what
// Apple's would draw (docs/porting.md, "A SwiftUI app").

/// A font (Apple: `Font`).
public struct Font: Hashable, Sendable {
    let description: String

    /// A text style of Dynamic Type (Apple: `Font.TextStyle`).
    public enum TextStyle: Hashable, Sendable, CaseIterable {
        case largeTitle, title, title2, title3, headline, subheadline, body, callout, footnote, caption, caption2
    }
    /// A font weight (Apple: `Font.Weight`).
    public struct Weight: Hashable, Sendable {
        let value: Double
        /// `Weight.ultraLight`, as Apple names it.
        public static let ultraLight = Weight(value: -0.8)
        /// `Weight.thin`, as Apple names it.
        public static let thin = Weight(value: -0.6)
        /// `Weight.light`, as Apple names it.
        public static let light = Weight(value: -0.4)
        /// `Weight.regular`, as Apple names it.
        public static let regular = Weight(value: 0)
        /// `Weight.medium`, as Apple names it.
        public static let medium = Weight(value: 0.23)
        /// `Weight.semibold`, as Apple names it.
        public static let semibold = Weight(value: 0.3)
        /// `Weight.bold`, as Apple names it.
        public static let bold = Weight(value: 0.4)
        /// `Weight.heavy`, as Apple names it.
        public static let heavy = Weight(value: 0.56)
        /// `Weight.black`, as Apple names it.
        public static let black = Weight(value: 0.62)
    }
    /// A font design (Apple: `Font.Design`).
    public enum Design: Hashable, Sendable {
        case `default`, serif, rounded, monospaced
    }

    /// `Font.largeTitle`, as Apple names it.
    public static let largeTitle = Font(description: "largeTitle")
    /// `Font.title`, as Apple names it.
    public static let title = Font(description: "title")
    /// `Font.title2`, as Apple names it.
    public static let title2 = Font(description: "title2")
    /// `Font.title3`, as Apple names it.
    public static let title3 = Font(description: "title3")
    /// `Font.headline`, as Apple names it.
    public static let headline = Font(description: "headline")
    /// `Font.subheadline`, as Apple names it.
    public static let subheadline = Font(description: "subheadline")
    /// `Font.body`, as Apple names it.
    public static let body = Font(description: "body")
    /// `Font.callout`, as Apple names it.
    public static let callout = Font(description: "callout")
    /// `Font.footnote`, as Apple names it.
    public static let footnote = Font(description: "footnote")
    /// `Font.caption`, as Apple names it.
    public static let caption = Font(description: "caption")
    /// `Font.caption2`, as Apple names it.
    public static let caption2 = Font(description: "caption2")

    /// The system font at `size` points.
    public static func system(size: CGFloat, weight: Weight? = nil, design: Design? = nil) -> Font {
        Font(description: "system \(size)")
    }
    /// The system font of `style`.
    public static func system(_ style: TextStyle, design: Design? = nil, weight: Weight? = nil) -> Font {
        Font(description: "system \(style)")
    }
    /// A font named `name` at `size` points.
    public static func custom(_ name: String, size: CGFloat) -> Font { Font(description: "\(name) \(size)") }
    /// This font, bold.
    public func bold() -> Font { self }
    /// This font, italic.
    public func italic() -> Font { self }
    /// This font, monospaced.
    public func monospaced() -> Font { self }
    /// This font with digits of one width.
    public func monospacedDigit() -> Font { self }
    /// This font at `weight`.
    public func weight(_ weight: Weight) -> Font { self }
}

/// What fills or strokes a shape or text (Apple: `ShapeStyle`).
public protocol ShapeStyle: Sendable {}

/// A colour (Apple: `Color`).
public struct Color: Hashable, Sendable, ShapeStyle {
    let name: String
    /// The colour named `name` in the app's assets.
    public init(_ name: String) { self.name = name }
    /// A colour of red, green and blue components.
    public init(red: Double, green: Double, blue: Double, opacity: Double = 1) { name = "rgb(\(red), \(green), \(blue))" }
    /// A UIKit colour's equivalent.
    public init(uiColor: UIColor) { name = uiColor.name }
    /// A UIKit colour's equivalent (`Color(.systemBackground)`).
    public init(_ uiColor: UIColor) { name = uiColor.name }
    /// This colour at `opacity`.
    public func opacity(_ opacity: Double) -> Color { self }

    /// `Color.primary`, as Apple names it.
    public static let primary = Color("primary")
    /// `Color.secondary`, as Apple names it.
    public static let secondary = Color("secondary")
    /// `Color.accentColor`, as Apple names it.
    public static let accentColor = Color("accentColor")
    /// `Color.red`, as Apple names it.
    public static let red = Color("red")
    /// `Color.orange`, as Apple names it.
    public static let orange = Color("orange")
    /// `Color.yellow`, as Apple names it.
    public static let yellow = Color("yellow")
    /// `Color.green`, as Apple names it.
    public static let green = Color("green")
    /// `Color.mint`, as Apple names it.
    public static let mint = Color("mint")
    /// `Color.teal`, as Apple names it.
    public static let teal = Color("teal")
    /// `Color.cyan`, as Apple names it.
    public static let cyan = Color("cyan")
    /// `Color.blue`, as Apple names it.
    public static let blue = Color("blue")
    /// `Color.indigo`, as Apple names it.
    public static let indigo = Color("indigo")
    /// `Color.purple`, as Apple names it.
    public static let purple = Color("purple")
    /// `Color.pink`, as Apple names it.
    public static let pink = Color("pink")
    /// `Color.brown`, as Apple names it.
    public static let brown = Color("brown")
    /// `Color.gray`, as Apple names it.
    public static let gray = Color("gray")
    /// `Color.white`, as Apple names it.
    public static let white = Color("white")
    /// `Color.black`, as Apple names it.
    public static let black = Color("black")
    /// `Color.clear`, as Apple names it.
    public static let clear = Color("clear")
}

extension ShapeStyle where Self == Color {
    /// `.red`, as Apple names it.
    public static var red: Color { Color.red }
    /// `.orange`, as Apple names it.
    public static var orange: Color { Color.orange }
    /// `.yellow`, as Apple names it.
    public static var yellow: Color { Color.yellow }
    /// `.green`, as Apple names it.
    public static var green: Color { Color.green }
    /// `.blue`, as Apple names it.
    public static var blue: Color { Color.blue }
    /// `.purple`, as Apple names it.
    public static var purple: Color { Color.purple }
    /// `.pink`, as Apple names it.
    public static var pink: Color { Color.pink }
    /// `.gray`, as Apple names it.
    public static var gray: Color { Color.gray }
    /// `.white`, as Apple names it.
    public static var white: Color { Color.white }
    /// `.black`, as Apple names it.
    public static var black: Color { Color.black }
    /// `.clear`, as Apple names it.
    public static var clear: Color { Color.clear }
    /// `.accentColor`, as Apple names it.
    public static var accentColor: Color { Color.accentColor }
}

/// The levels of content (Apple: `HierarchicalShapeStyle`): `.primary`, `.secondary`...
public struct HierarchicalShapeStyle: ShapeStyle {
    let level: Int
    /// `HierarchicalShapeStyle.primary`, as Apple names it.
    public static let primary = HierarchicalShapeStyle(level: 0)
    /// `HierarchicalShapeStyle.secondary`, as Apple names it.
    public static let secondary = HierarchicalShapeStyle(level: 1)
    /// `HierarchicalShapeStyle.tertiary`, as Apple names it.
    public static let tertiary = HierarchicalShapeStyle(level: 2)
    /// `HierarchicalShapeStyle.quaternary`, as Apple names it.
    public static let quaternary = HierarchicalShapeStyle(level: 3)
}

extension ShapeStyle where Self == HierarchicalShapeStyle {
    /// `.primary`, as Apple names it.
    public static var primary: HierarchicalShapeStyle { .primary }
    /// `.secondary`, as Apple names it.
    public static var secondary: HierarchicalShapeStyle { .secondary }
    /// `.tertiary`, as Apple names it.
    public static var tertiary: HierarchicalShapeStyle { .tertiary }
    /// `.quaternary`, as Apple names it.
    public static var quaternary: HierarchicalShapeStyle { .quaternary }
}

/// The app's tint (Apple: `TintShapeStyle`, `.tint`).
public struct TintShapeStyle: ShapeStyle {
    /// Creates it.
    public init() {}
}

extension ShapeStyle where Self == TintShapeStyle {
    /// `.tint`, as Apple names it.
    public static var tint: TintShapeStyle { TintShapeStyle() }
}

/// A translucent material (Apple: `Material`).
public struct Material: ShapeStyle {
    let thickness: Int
    /// `Material.ultraThinMaterial`, as Apple names it.
    public static let ultraThinMaterial = Material(thickness: 0)
    /// `Material.thinMaterial`, as Apple names it.
    public static let thinMaterial = Material(thickness: 1)
    /// `Material.regularMaterial`, as Apple names it.
    public static let regularMaterial = Material(thickness: 2)
    /// `Material.thickMaterial`, as Apple names it.
    public static let thickMaterial = Material(thickness: 3)
    /// `Material.bar`, as Apple names it.
    public static let bar = Material(thickness: 4)
}

extension ShapeStyle where Self == Material {
    /// `.ultraThinMaterial`, as Apple names it.
    public static var ultraThinMaterial: Material { .ultraThinMaterial }
    /// `.thinMaterial`, as Apple names it.
    public static var thinMaterial: Material { .thinMaterial }
    /// `.regularMaterial`, as Apple names it.
    public static var regularMaterial: Material { .regularMaterial }
    /// `.thickMaterial`, as Apple names it.
    public static var thickMaterial: Material { .thickMaterial }
    /// `.bar`, as Apple names it.
    public static var bar: Material { .bar }
}

/// A gradient between colours (Apple: `LinearGradient`).
public struct LinearGradient: ShapeStyle {
    /// A gradient of `colors` from `startPoint` to `endPoint`.
    public init(colors: [Color], startPoint: UnitPoint, endPoint: UnitPoint) {}
}

/// A point in a unit square (Apple: `UnitPoint`).
public struct UnitPoint: Hashable, Sendable {
    /// Its `x`.
    public var x: CGFloat
    /// Its `y`.
    public var y: CGFloat
    /// Creates it.
    public init(x: CGFloat, y: CGFloat) {
        self.x = x
        self.y = y
    }
    /// `UnitPoint.zero`, as Apple names it.
    public static let zero = UnitPoint(x: 0, y: 0)
    /// `UnitPoint.center`, as Apple names it.
    public static let center = UnitPoint(x: 0.5, y: 0.5)
    /// `UnitPoint.top`, as Apple names it.
    public static let top = UnitPoint(x: 0.5, y: 0)
    /// `UnitPoint.bottom`, as Apple names it.
    public static let bottom = UnitPoint(x: 0.5, y: 1)
    /// `UnitPoint.leading`, as Apple names it.
    public static let leading = UnitPoint(x: 0, y: 0.5)
    /// `UnitPoint.trailing`, as Apple names it.
    public static let trailing = UnitPoint(x: 1, y: 0.5)
    /// `UnitPoint.topLeading`, as Apple names it.
    public static let topLeading = UnitPoint(x: 0, y: 0)
    /// `UnitPoint.topTrailing`, as Apple names it.
    public static let topTrailing = UnitPoint(x: 1, y: 0)
    /// `UnitPoint.bottomLeading`, as Apple names it.
    public static let bottomLeading = UnitPoint(x: 0, y: 1)
    /// `UnitPoint.bottomTrailing`, as Apple names it.
    public static let bottomTrailing = UnitPoint(x: 1, y: 1)
}

/// An edge of a rectangle (Apple: `Edge`), and sets of them for padding.
public enum Edge: Int8, CaseIterable, Hashable, Sendable {
    case top, leading, bottom, trailing

    /// A set of edges (Apple: `Edge.Set`).
    public struct Set: OptionSet, Hashable, Sendable {
        /// Its `rawValue`.
        public let rawValue: Int8
        /// Creates it.
        public init(rawValue: Int8) { self.rawValue = rawValue }
        /// The set holding `edge`.
        public init(_ edge: Edge) { rawValue = 1 << edge.rawValue }
        /// `Set.top`, as Apple names it.
        public static let top = Set(.top)
        /// `Set.leading`, as Apple names it.
        public static let leading = Set(.leading)
        /// `Set.bottom`, as Apple names it.
        public static let bottom = Set(.bottom)
        /// `Set.trailing`, as Apple names it.
        public static let trailing = Set(.trailing)
        /// `Set.horizontal`, as Apple names it.
        public static let horizontal: Set = [.leading, .trailing]
        /// `Set.vertical`, as Apple names it.
        public static let vertical: Set = [.top, .bottom]
        /// `Set.all`, as Apple names it.
        public static let all: Set = [.top, .leading, .bottom, .trailing]
    }
}

/// Where a view sits in its frame (Apple: `Alignment`).
public struct Alignment: Equatable, Sendable {
    /// Its `horizontal`.
    public var horizontal: HorizontalAlignment
    /// Its `vertical`.
    public var vertical: VerticalAlignment
    /// Creates it.
    public init(horizontal: HorizontalAlignment, vertical: VerticalAlignment) {
        self.horizontal = horizontal
        self.vertical = vertical
    }
    /// `Alignment.center`, as Apple names it.
    public static let center = Alignment(horizontal: .center, vertical: .center)
    /// `Alignment.leading`, as Apple names it.
    public static let leading = Alignment(horizontal: .leading, vertical: .center)
    /// `Alignment.trailing`, as Apple names it.
    public static let trailing = Alignment(horizontal: .trailing, vertical: .center)
    /// `Alignment.top`, as Apple names it.
    public static let top = Alignment(horizontal: .center, vertical: .top)
    /// `Alignment.bottom`, as Apple names it.
    public static let bottom = Alignment(horizontal: .center, vertical: .bottom)
    /// `Alignment.topLeading`, as Apple names it.
    public static let topLeading = Alignment(horizontal: .leading, vertical: .top)
    /// `Alignment.topTrailing`, as Apple names it.
    public static let topTrailing = Alignment(horizontal: .trailing, vertical: .top)
    /// `Alignment.bottomLeading`, as Apple names it.
    public static let bottomLeading = Alignment(horizontal: .leading, vertical: .bottom)
    /// `Alignment.bottomTrailing`, as Apple names it.
    public static let bottomTrailing = Alignment(horizontal: .trailing, vertical: .bottom)
}

/// How lines of text line up (Apple: `TextAlignment`).
public enum TextAlignment: Hashable, Sendable, CaseIterable {
    case leading, center, trailing
}

/// Whether content keeps its aspect ratio by fitting or filling (Apple: `ContentMode`).
public enum ContentMode: Hashable, Sendable, CaseIterable {
    case fit, fill
}

/// A light or dark appearance (Apple: `ColorScheme`). Linux shows none: `.light`.
public enum ColorScheme: Hashable, Sendable, CaseIterable {
    case light, dark
}

/// An animation (Apple: `Animation`): nothing moves here.
public struct Animation: Equatable, Sendable {
    let name: String
    /// `Animation.default`, as Apple names it.
    public static let `default` = Animation(name: "default")
    /// `Animation.linear`, as Apple names it.
    public static let linear = Animation(name: "linear")
    /// `Animation.easeIn`, as Apple names it.
    public static let easeIn = Animation(name: "easeIn")
    /// `Animation.easeOut`, as Apple names it.
    public static let easeOut = Animation(name: "easeOut")
    /// `Animation.easeInOut`, as Apple names it.
    public static let easeInOut = Animation(name: "easeInOut")
    /// `Animation.spring`, as Apple names it.
    public static let spring = Animation(name: "spring")
    /// `Animation.bouncy`, as Apple names it.
    public static let bouncy = Animation(name: "bouncy")
    /// `Animation.smooth`, as Apple names it.
    public static let smooth = Animation(name: "smooth")
    /// `Animation.linear`, as Apple names it.
    public static func linear(duration: Double) -> Animation { .linear }
    /// `Animation.easeIn`, as Apple names it.
    public static func easeIn(duration: Double) -> Animation { .easeIn }
    /// `Animation.easeOut`, as Apple names it.
    public static func easeOut(duration: Double) -> Animation { .easeOut }
    /// `Animation.easeInOut`, as Apple names it.
    public static func easeInOut(duration: Double) -> Animation { .easeInOut }
    /// `Animation.spring`, as Apple names it.
    public static func spring(response: Double = 0.5, dampingFraction: Double = 0.825, blendDuration: Double = 0) -> Animation { .spring }
    /// The same, as Apple names it; nothing changes here.
    public func delay(_ delay: Double) -> Animation { self }
    /// The same, as Apple names it; nothing changes here.
    public func repeatForever(autoreverses: Bool = true) -> Animation { self }
}

/// How a view comes and goes (Apple: `AnyTransition`).
public struct AnyTransition: Sendable {
    let name: String
    /// `AnyTransition.identity`, as Apple names it.
    public static let identity = AnyTransition(name: "identity")
    /// `AnyTransition.opacity`, as Apple names it.
    public static let opacity = AnyTransition(name: "opacity")
    /// `AnyTransition.slide`, as Apple names it.
    public static let slide = AnyTransition(name: "slide")
    /// `AnyTransition.scale`, as Apple names it.
    public static let scale = AnyTransition(name: "scale")
    /// `AnyTransition.move`, as Apple names it.
    public static func move(edge: Edge) -> AnyTransition { AnyTransition(name: "move") }
    /// `AnyTransition.scale`, as Apple names it.
    public static func scale(scale: CGFloat, anchor: UnitPoint = .center) -> AnyTransition { .scale }
    /// `AnyTransition.asymmetric`, as Apple names it.
    public static func asymmetric(insertion: AnyTransition, removal: AnyTransition) -> AnyTransition { insertion }
    /// The same, as Apple names it; nothing changes here.
    public func combined(with other: AnyTransition) -> AnyTransition { self }
}

/// Runs `body` at once: state changes take effect, with no animation to show (Apple:
/// `withAnimation`).
@discardableResult
public func withAnimation<Result>(_ animation: Animation? = .default, _ body: () throws -> Result) rethrows -> Result {
    try body()
}

// The styles of controls (Apple: `ButtonStyle`, `ListStyle`...): names of how they would look.

/// How a button looks (Apple: `PrimitiveButtonStyle`).
public protocol PrimitiveButtonStyle {}
/// A button's look built from its label (Apple: `ButtonStyle`).
@MainActor @preconcurrency
public protocol ButtonStyle {
    /// The look of a button.
    associatedtype Body: View
    /// The button's look.
    @ViewBuilder func makeBody(configuration: Configuration) -> Body
    /// What a style gets of the button.
    typealias Configuration = ButtonStyleConfiguration
}
/// What a button style gets of its button (Apple: `ButtonStyleConfiguration`).
public struct ButtonStyleConfiguration {
    /// The button's label.
    public let label: AnyView
    /// Whether it is pressed: never here.
    public let isPressed: Bool
    /// The button's role.
    public let role: ButtonRole?
}
/// What a button does (Apple: `ButtonRole`).
public struct ButtonRole: Equatable, Sendable {
    let name: String
    /// `ButtonRole.destructive`, as Apple names it.
    public static let destructive = ButtonRole(name: "destructive")
    /// `ButtonRole.cancel`, as Apple names it.
    public static let cancel = ButtonRole(name: "cancel")
}
/// Apple's `DefaultButtonStyle`: names how it would look; nothing is drawn here.
public struct DefaultButtonStyle: PrimitiveButtonStyle { public init() {} }
/// Apple's `PlainButtonStyle`: names how it would look; nothing is drawn here.
public struct PlainButtonStyle: PrimitiveButtonStyle { public init() {} }
/// Apple's `BorderlessButtonStyle`: names how it would look; nothing is drawn here.
public struct BorderlessButtonStyle: PrimitiveButtonStyle { public init() {} }
/// Apple's `BorderedButtonStyle`: names how it would look; nothing is drawn here.
public struct BorderedButtonStyle: PrimitiveButtonStyle { public init() {} }
/// Apple's `BorderedProminentButtonStyle`: names how it would look; nothing is drawn here.
public struct BorderedProminentButtonStyle: PrimitiveButtonStyle { public init() {} }
extension PrimitiveButtonStyle where Self == DefaultButtonStyle { public static var automatic: Self { .init() } }
extension PrimitiveButtonStyle where Self == PlainButtonStyle { public static var plain: Self { .init() } }
extension PrimitiveButtonStyle where Self == BorderlessButtonStyle { public static var borderless: Self { .init() } }
extension PrimitiveButtonStyle where Self == BorderedButtonStyle { public static var bordered: Self { .init() } }
extension PrimitiveButtonStyle where Self == BorderedProminentButtonStyle { public static var borderedProminent: Self { .init() } }

/// How a list looks (Apple: `ListStyle`).
public protocol ListStyle {}
/// Apple's `DefaultListStyle`: names how it would look; nothing is drawn here.
public struct DefaultListStyle: ListStyle { public init() {} }
/// Apple's `PlainListStyle`: names how it would look; nothing is drawn here.
public struct PlainListStyle: ListStyle { public init() {} }
/// Apple's `GroupedListStyle`: names how it would look; nothing is drawn here.
public struct GroupedListStyle: ListStyle { public init() {} }
/// Apple's `InsetListStyle`: names how it would look; nothing is drawn here.
public struct InsetListStyle: ListStyle { public init() {} }
/// Apple's `InsetGroupedListStyle`: names how it would look; nothing is drawn here.
public struct InsetGroupedListStyle: ListStyle { public init() {} }
/// Apple's `SidebarListStyle`: names how it would look; nothing is drawn here.
public struct SidebarListStyle: ListStyle { public init() {} }
extension ListStyle where Self == DefaultListStyle { public static var automatic: Self { .init() } }
extension ListStyle where Self == PlainListStyle { public static var plain: Self { .init() } }
extension ListStyle where Self == GroupedListStyle { public static var grouped: Self { .init() } }
extension ListStyle where Self == InsetListStyle { public static var inset: Self { .init() } }
extension ListStyle where Self == InsetGroupedListStyle { public static var insetGrouped: Self { .init() } }
extension ListStyle where Self == SidebarListStyle { public static var sidebar: Self { .init() } }

/// How a picker looks (Apple: `PickerStyle`).
public protocol PickerStyle {}
/// Apple's `DefaultPickerStyle`: names how it would look; nothing is drawn here.
public struct DefaultPickerStyle: PickerStyle { public init() {} }
/// Apple's `SegmentedPickerStyle`: names how it would look; nothing is drawn here.
public struct SegmentedPickerStyle: PickerStyle { public init() {} }
/// Apple's `MenuPickerStyle`: names how it would look; nothing is drawn here.
public struct MenuPickerStyle: PickerStyle { public init() {} }
/// Apple's `WheelPickerStyle`: names how it would look; nothing is drawn here.
public struct WheelPickerStyle: PickerStyle { public init() {} }
/// Apple's `InlinePickerStyle`: names how it would look; nothing is drawn here.
public struct InlinePickerStyle: PickerStyle { public init() {} }
/// Apple's `NavigationLinkPickerStyle`: names how it would look; nothing is drawn here.
public struct NavigationLinkPickerStyle: PickerStyle { public init() {} }
extension PickerStyle where Self == DefaultPickerStyle { public static var automatic: Self { .init() } }
extension PickerStyle where Self == SegmentedPickerStyle { public static var segmented: Self { .init() } }
extension PickerStyle where Self == MenuPickerStyle { public static var menu: Self { .init() } }
extension PickerStyle where Self == WheelPickerStyle { public static var wheel: Self { .init() } }
extension PickerStyle where Self == InlinePickerStyle { public static var inline: Self { .init() } }
extension PickerStyle where Self == NavigationLinkPickerStyle { public static var navigationLink: Self { .init() } }

/// How a text field looks (Apple: `TextFieldStyle`).
public protocol TextFieldStyle {}
/// Apple's `DefaultTextFieldStyle`: names how it would look; nothing is drawn here.
public struct DefaultTextFieldStyle: TextFieldStyle { public init() {} }
/// Apple's `PlainTextFieldStyle`: names how it would look; nothing is drawn here.
public struct PlainTextFieldStyle: TextFieldStyle { public init() {} }
/// Apple's `RoundedBorderTextFieldStyle`: names how it would look; nothing is drawn here.
public struct RoundedBorderTextFieldStyle: TextFieldStyle { public init() {} }
extension TextFieldStyle where Self == DefaultTextFieldStyle { public static var automatic: Self { .init() } }
extension TextFieldStyle where Self == PlainTextFieldStyle { public static var plain: Self { .init() } }
extension TextFieldStyle where Self == RoundedBorderTextFieldStyle { public static var roundedBorder: Self { .init() } }

/// How a toggle looks (Apple: `ToggleStyle`).
public protocol ToggleStyle {}
/// Apple's `DefaultToggleStyle`: names how it would look; nothing is drawn here.
public struct DefaultToggleStyle: ToggleStyle { public init() {} }
/// Apple's `SwitchToggleStyle`: names how it would look; nothing is drawn here.
public struct SwitchToggleStyle: ToggleStyle { public init() {} }
/// Apple's `ButtonToggleStyle`: names how it would look; nothing is drawn here.
public struct ButtonToggleStyle: ToggleStyle { public init() {} }
extension ToggleStyle where Self == DefaultToggleStyle { public static var automatic: Self { .init() } }
extension ToggleStyle where Self == SwitchToggleStyle { public static var `switch`: Self { .init() } }
extension ToggleStyle where Self == ButtonToggleStyle { public static var button: Self { .init() } }

/// How a label looks (Apple: `LabelStyle`).
public protocol LabelStyle {}
/// Apple's `DefaultLabelStyle`: names how it would look; nothing is drawn here.
public struct DefaultLabelStyle: LabelStyle { public init() {} }
/// Apple's `IconOnlyLabelStyle`: names how it would look; nothing is drawn here.
public struct IconOnlyLabelStyle: LabelStyle { public init() {} }
/// Apple's `TitleOnlyLabelStyle`: names how it would look; nothing is drawn here.
public struct TitleOnlyLabelStyle: LabelStyle { public init() {} }
/// Apple's `TitleAndIconLabelStyle`: names how it would look; nothing is drawn here.
public struct TitleAndIconLabelStyle: LabelStyle { public init() {} }
extension LabelStyle where Self == DefaultLabelStyle { public static var automatic: Self { .init() } }
extension LabelStyle where Self == IconOnlyLabelStyle { public static var iconOnly: Self { .init() } }
extension LabelStyle where Self == TitleOnlyLabelStyle { public static var titleOnly: Self { .init() } }
extension LabelStyle where Self == TitleAndIconLabelStyle { public static var titleAndIcon: Self { .init() } }

/// How a navigation view looks (Apple: `NavigationViewStyle`).
public protocol NavigationViewStyle {}
/// Apple's `DefaultNavigationViewStyle`: names how it would look; nothing is drawn here.
public struct DefaultNavigationViewStyle: NavigationViewStyle { public init() {} }
/// Apple's `StackNavigationViewStyle`: names how it would look; nothing is drawn here.
public struct StackNavigationViewStyle: NavigationViewStyle { public init() {} }
extension NavigationViewStyle where Self == DefaultNavigationViewStyle { public static var automatic: Self { .init() } }
extension NavigationViewStyle where Self == StackNavigationViewStyle { public static var stack: Self { .init() } }

/// Where a toolbar item goes (Apple: `ToolbarItemPlacement`).
public struct ToolbarItemPlacement: Equatable, Sendable {
    let name: String
    /// `ToolbarItemPlacement.automatic`, as Apple names it.
    public static let automatic = ToolbarItemPlacement(name: "automatic")
    /// `ToolbarItemPlacement.principal`, as Apple names it.
    public static let principal = ToolbarItemPlacement(name: "principal")
    /// `ToolbarItemPlacement.primaryAction`, as Apple names it.
    public static let primaryAction = ToolbarItemPlacement(name: "primaryAction")
    /// `ToolbarItemPlacement.confirmationAction`, as Apple names it.
    public static let confirmationAction = ToolbarItemPlacement(name: "confirmationAction")
    /// `ToolbarItemPlacement.cancellationAction`, as Apple names it.
    public static let cancellationAction = ToolbarItemPlacement(name: "cancellationAction")
    /// `ToolbarItemPlacement.destructiveAction`, as Apple names it.
    public static let destructiveAction = ToolbarItemPlacement(name: "destructiveAction")
    /// `ToolbarItemPlacement.navigationBarLeading`, as Apple names it.
    public static let navigationBarLeading = ToolbarItemPlacement(name: "navigationBarLeading")
    /// `ToolbarItemPlacement.navigationBarTrailing`, as Apple names it.
    public static let navigationBarTrailing = ToolbarItemPlacement(name: "navigationBarTrailing")
    /// `ToolbarItemPlacement.topBarLeading`, as Apple names it.
    public static let topBarLeading = ToolbarItemPlacement(name: "topBarLeading")
    /// `ToolbarItemPlacement.topBarTrailing`, as Apple names it.
    public static let topBarTrailing = ToolbarItemPlacement(name: "topBarTrailing")
    /// `ToolbarItemPlacement.bottomBar`, as Apple names it.
    public static let bottomBar = ToolbarItemPlacement(name: "bottomBar")
    /// `ToolbarItemPlacement.keyboard`, as Apple names it.
    public static let keyboard = ToolbarItemPlacement(name: "keyboard")
}

/// A navigation bar's item (Apple: `NavigationBarItem`), for its title's display mode.
public enum NavigationBarItem {
    /// How large a navigation title is (Apple: `NavigationBarItem.TitleDisplayMode`).
    public enum TitleDisplayMode: Hashable, Sendable {
        case automatic, inline, large
    }
}

extension Image {
    /// The scale of a symbol image (Apple: `Image.Scale`).
    public enum Scale: Hashable, Sendable {
        case small, medium, large
    }
}

extension Text {
    /// How a date is shown in text (Apple: `Text.DateStyle`). Here `.relative`, `.offset`
    /// and `.timer`, which Apple shows as a duration that counts, show the date and time:
    /// nothing is drawn again as time passes.
    public struct DateStyle: Sendable {
        let date: DateFormatter.Style
        let time: DateFormatter.Style
        /// The time.
        public static let time = DateStyle(date: .none, time: .short)
        /// The day.
        public static let date = DateStyle(date: .medium, time: .none)
        /// Relative to now (here: the date and time).
        public static let relative = DateStyle(date: .short, time: .short)
        /// The offset from now (here: the date and time).
        public static let offset = DateStyle(date: .short, time: .short)
        /// A counting timer (here: the date and time).
        public static let timer = DateStyle(date: .short, time: .short)
    }
    /// How text changes case (Apple: `Text.Case`).
    public enum Case: Hashable, Sendable {
        case uppercase, lowercase
    }
}
