import Foundation
import UIKit

// Views on Linux, which draws nothing: values that the shown window (ViewHost.swift) reads
// for their content and their behaviour (docs/porting.md, "A SwiftUI app").

/// A part of the user interface (Apple: `View`).
@MainActor @preconcurrency
public protocol View {
    /// The views this one is made of.
    associatedtype Body: View
    /// The views this one is made of (`Never` for the primitive views here).
    @ViewBuilder var body: Body { get }
}

extension Never: View {}

/// Views with no body of their own.
public protocol PrimitiveView: View where Body == Never {}

extension PrimitiveView {
    /// A primitive view has no body (Apple traps the same way).
    public var body: Never { fatalError("\(Self.self) is a primitive view: it has no body") }
}

/// Builds a view from the views listed in a closure (Apple: `ViewBuilder`).
@resultBuilder
public enum ViewBuilder {
    /// A block of one view: that view.
    public static func buildBlock<Content: View>(_ content: Content) -> Content { content }
    /// The views of a block, in order.
    public static func buildBlock<each Content: View>(_ content: repeat each Content) -> TupleView<(repeat each Content)> {
        TupleView((repeat each content))
    }
    /// A view listed as is.
    public static func buildExpression<Content: View>(_ content: Content) -> Content { content }
    /// An `if` without `else`.
    public static func buildIf<Content: View>(_ content: Content?) -> Content? { content }
    /// The first branch of an `if`/`else` or `switch`.
    public static func buildEither<TrueContent: View, FalseContent: View>(first: TrueContent) -> ConditionalContent<TrueContent, FalseContent> {
        ConditionalContent(storage: .trueContent(first))
    }
    /// The other branch.
    public static func buildEither<TrueContent: View, FalseContent: View>(second: FalseContent) -> ConditionalContent<TrueContent, FalseContent> {
        ConditionalContent(storage: .falseContent(second))
    }
    /// An `if #available` block.
    public static func buildLimitedAvailability<Content: View>(_ content: Content) -> AnyView { AnyView(content) }
}

extension Optional: View where Wrapped: View {}
extension Optional: PrimitiveView where Wrapped: View {}

/// The views of a `@ViewBuilder` block.
public struct TupleView<T> {
    /// The views.
    public let value: T
    /// Views in a tuple.
    public init(_ value: T) { self.value = value }
}

/// One branch of an `if`/`else` in a `@ViewBuilder` block.
public struct ConditionalContent<TrueContent: View, FalseContent: View> {
    enum Storage {
        case trueContent(TrueContent)
        case falseContent(FalseContent)
    }
    let storage: Storage
}

/// Any view, its type erased (Apple: `AnyView`).
public struct AnyView {
    private let view: Any
    /// Erases `view`'s type.
    public init<V: View>(_ view: V) { self.view = view }
}

/// No view (Apple: `EmptyView`).
public struct EmptyView {
    /// No view.
    public init() {}
}

/// Text (Apple: `Text`).
public struct Text {
    /// The text.
    public let content: String
    /// Text showing `content`.
    public init<S: StringProtocol>(_ content: S) { self.content = String(content) }
    /// Text showing `content` as is.
    public init(verbatim content: String) { self.content = content }
}

/// An image (Apple: `Image`); nothing is loaded.
public struct Image {
    /// The image's name.
    public let name: String
    /// The image named `name` in the app's assets.
    public init(_ name: String) { self.name = name }
    /// The system symbol named `systemName`.
    public init(systemName: String) { name = systemName }
    /// The image of an asset catalog's resource (Apple: `init(_:)` with an `ImageResource`, iOS 17).
    public init(_ resource: ImageResource) { name = resource.name }
    /// The image of a `UIImage` (Apple: `init(uiImage:)`): its asset's or symbol's name when
    /// it is kept by name, else empty.
    public init(uiImage: UIImage) { name = uiImage.assetName ?? "" }
}

/// An image in an asset catalog (Apple: `ImageResource`, iOS 17, from DeveloperToolsSupport,
/// which SwiftUI re-exports): apps keep them beside preferences and notification content (the
/// fifteenth outside probe: a daylight app's preference keys, read by its background
/// refresh). Xcode generates a static member for each asset (`.solarchartLinear`); SwiftPM on
/// Linux generates none, so an app declares the ones it names (`static let solarchartLinear =
/// ImageResource(name: "solarchart-linear", bundle: .main)`). Nothing is loaded.
public struct ImageResource: Hashable, Sendable {
    /// The asset's name.
    public let name: String
    /// The bundle's path, where the asset would be looked for.
    public let bundlePath: String
    /// The asset called `name` in `bundle`.
    public init(name: String, bundle: Bundle) {
        self.name = name
        bundlePath = bundle.bundlePath
    }
}

/// Flexible space (Apple: `Spacer`).
public struct Spacer {
    /// Space of at least `minLength` points.
    public init(minLength: CGFloat? = nil) {}
}

/// A button (Apple: `Button`); nobody presses it here.
public struct Button<Label: View> {
    let action: () -> Void
    let label: Label
    /// A button with `label` calling `action`.
    public init(action: @escaping () -> Void, @ViewBuilder label: () -> Label) {
        self.action = action
        self.label = label()
    }
}

extension Button where Label == Text {
    /// A button titled `title` calling `action`.
    public init<S: StringProtocol>(_ title: S, action: @escaping () -> Void) {
        self.init(action: action) { Text(title) }
    }
}

/// How views in a column line up (Apple: `HorizontalAlignment`).
public struct HorizontalAlignment: Equatable, Sendable {
    let name: String
    /// Leading edges.
    public static let leading = HorizontalAlignment(name: "leading")
    /// Centres.
    public static let center = HorizontalAlignment(name: "center")
    /// Trailing edges.
    public static let trailing = HorizontalAlignment(name: "trailing")
}

/// How views in a row line up (Apple: `VerticalAlignment`).
public struct VerticalAlignment: Equatable, Sendable {
    let name: String
    /// Top edges.
    public static let top = VerticalAlignment(name: "top")
    /// Centres.
    public static let center = VerticalAlignment(name: "center")
    /// Bottom edges.
    public static let bottom = VerticalAlignment(name: "bottom")
}

/// A column of views (Apple: `VStack`).
public struct VStack<Content: View> {
    let content: Content
    /// A column of `content`.
    public init(alignment: HorizontalAlignment = .center, spacing: CGFloat? = nil, @ViewBuilder content: () -> Content) {
        self.content = content()
    }
}

/// A row of views (Apple: `HStack`).
public struct HStack<Content: View> {
    let content: Content
    /// A row of `content`.
    public init(alignment: VerticalAlignment = .center, spacing: CGFloat? = nil, @ViewBuilder content: () -> Content) {
        self.content = content()
    }
}

/// Views grouped without layout (Apple: `Group`).
public struct Group<Content: View> {
    let content: Content
    /// `content` as one view.
    public init(@ViewBuilder content: () -> Content) { self.content = content() }
}

/// A list (Apple: `List`).
public struct List<Content: View> {
    let content: Content
    /// A list of `content`.
    public init(@ViewBuilder content: () -> Content) { self.content = content() }
}

/// A navigation stack (Apple: `NavigationStack`).
public struct NavigationStack<Root: View> {
    let root: Root
    /// A stack whose root is `root`.
    public init(@ViewBuilder root: () -> Root) { self.root = root() }
}

/// A navigation view (Apple: `NavigationView`, deprecated there for `NavigationStack`).
public struct NavigationView<Content: View> {
    let content: Content
    /// A navigation view of `content`.
    public init(@ViewBuilder content: () -> Content) { self.content = content() }
}

/// A view per element of a collection (Apple: `ForEach`): the rows are made when the
/// shown window reads them.
public struct ForEach<Data: RandomAccessCollection, ID: Hashable, Content: View> {
    /// The elements.
    public let data: Data
    /// The view of an element.
    public let content: (Data.Element) -> Content
    let idPath: KeyPath<Data.Element, ID>
    /// A view per element of `data`, told apart by `id`.
    public init(_ data: Data, id: KeyPath<Data.Element, ID>, @ViewBuilder content: @escaping (Data.Element) -> Content) {
        self.data = data
        self.idPath = id
        self.content = content
    }
}

extension ForEach where Data.Element: Identifiable, ID == Data.Element.ID {
    /// A view per element of `data`, told apart by their `id`.
    public init(_ data: Data, @ViewBuilder content: @escaping (Data.Element) -> Content) {
        self.init(data, id: \.id, content: content)
    }
}

/// Views over each other (Apple: `ZStack`).
public struct ZStack<Content: View> {
    let content: Content
    /// `content`, back to front.
    public init(@ViewBuilder content: () -> Content) { self.content = content() }
}

/// A scrolling view (Apple: `ScrollView`).
public struct ScrollView<Content: View> {
    let content: Content
    /// `content`, scrolling.
    public init(@ViewBuilder content: () -> Content) { self.content = content() }
}

/// A form (Apple: `Form`).
public struct Form<Content: View> {
    let content: Content
    /// A form of `content`.
    public init(@ViewBuilder content: () -> Content) { self.content = content() }
}

/// A section of a list or form (Apple: `Section`).
public struct Section<Content: View> {
    let content: Content
    /// A section of `content`.
    public init(@ViewBuilder content: () -> Content) { self.content = content() }
    /// A section titled `title`.
    public init<S: StringProtocol>(_ title: S, @ViewBuilder content: () -> Content) { self.content = content() }
}

/// A switch (Apple: `Toggle`); nobody flips it here.
public struct Toggle<Label: View> {
    let isOn: Binding<Bool>
    let label: Label
    /// A switch bound to `isOn`, labelled `label`.
    public init(isOn: Binding<Bool>, @ViewBuilder label: () -> Label) {
        self.isOn = isOn
        self.label = label()
    }
}

extension Toggle where Label == Text {
    /// A switch titled `title`, bound to `isOn`.
    public init<S: StringProtocol>(_ title: S, isOn: Binding<Bool>) { self.init(isOn: isOn) { Text(title) } }
}

extension Toggle where Label == SwiftUI.Label<Text, Image> {
    /// A switch titled `title` with the system symbol `systemImage` (iOS 17), bound to `isOn`.
    public init<S: StringProtocol>(_ title: S, systemImage: String, isOn: Binding<Bool>) {
        self.init(isOn: isOn) { SwiftUI.Label(title, systemImage: systemImage) }
    }
}

/// Progress (Apple: `ProgressView`).
public struct ProgressView {
    /// An indeterminate progress indicator.
    public init() {}
    /// One titled `title`.
    public init<S: StringProtocol>(_ title: S) {}
    /// One at `value` of `total` (1 by default).
    public init<V: BinaryFloatingPoint>(value: V?, total: V = 1.0) {}
}

/// A title with an icon (Apple: `Label`).
public struct Label<Title: View, Icon: View> {
    let title: Title
    let icon: Icon
    /// A label of a built title and icon.
    public init(@ViewBuilder title: () -> Title, @ViewBuilder icon: () -> Icon) {
        self.title = title()
        self.icon = icon()
    }
}

extension Label where Title == Text, Icon == Image {
    /// A label titled `title` with the system symbol `systemImage`.
    public init<S: StringProtocol>(_ title: S, systemImage: String) {
        self.init(title: { Text(title) }, icon: { Image(systemName: systemImage) })
    }
    /// A label titled `title` with the image named `image`.
    public init<S: StringProtocol>(_ title: S, image: String) {
        self.init(title: { Text(title) }, icon: { Image(image) })
    }
}

nonisolated extension View {
    /// `action` when the user pulls the view to refresh: nobody pulls here.
    public func refreshable(action: @escaping @Sendable () async -> Void) -> Self { self }
}

// Conformances apart from the types, so that their initializers are not main-actor
// isolated (views and scenes are made anywhere, as Apple's are).
extension TupleView: PrimitiveView {}
extension ConditionalContent: PrimitiveView {}
extension AnyView: PrimitiveView {}
extension EmptyView: PrimitiveView {}
extension Text: PrimitiveView {}
extension Image: PrimitiveView {}
extension Spacer: PrimitiveView {}
extension Button: PrimitiveView {}
extension VStack: PrimitiveView {}
extension HStack: PrimitiveView {}
extension Group: PrimitiveView {}
extension List: PrimitiveView {}
extension NavigationStack: PrimitiveView {}
extension NavigationView: PrimitiveView {}
extension ForEach: PrimitiveView {}
extension ZStack: PrimitiveView {}
extension ScrollView: PrimitiveView {}
extension Form: PrimitiveView {}
extension Section: PrimitiveView {}
extension Toggle: PrimitiveView {}
extension ProgressView: PrimitiveView {}
extension Label: PrimitiveView {}
