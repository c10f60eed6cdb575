import Foundation

// More views that draw nothing: controls, shapes, navigation, text with values (docs/porting.md, "A
// SwiftUI app"). Nobody types, taps or picks on Linux; a binding a control holds is never
// written by it.

/// A localized string with its interpolations (Apple: `LocalizedStringKey`): the text a
/// `Text("...")` literal becomes, with `\(value, specifier: "%.1f")`, `\(date, style: .time)`,
/// `\(value, format: ...)` and `\(value, formatter: ...)` as on iOS. Linux has no app string
/// tables here: the key is the text.
public struct LocalizedStringKey: ExpressibleByStringInterpolation, Equatable, Sendable {
    /// The text, interpolations written out.
    public let key: String

    /// A key of `value`.
    public init(_ value: String) { key = value }
    /// A key of a literal.
    public init(stringLiteral value: String) { key = value }
    /// A key of an interpolated literal.
    public init(stringInterpolation: StringInterpolation) { key = stringInterpolation.text }

    /// The pieces of an interpolated key.
    public struct StringInterpolation: StringInterpolationProtocol {
        var text = ""
        /// Creates it.
        public init(literalCapacity: Int, interpolationCount: Int) {}
        /// A literal part.
        public mutating func appendLiteral(_ literal: String) { text += literal }
        /// Any value, as `String(describing:)` writes it.
        public mutating func appendInterpolation<T>(_ value: T) { text += String(describing: value) }
        /// A string.
        public mutating func appendInterpolation(_ string: String) { text += string }
        /// A number with a C format (`"%.1f"`).
        public mutating func appendInterpolation<T: CVarArg>(_ value: T, specifier: String) { text += String(format: specifier, value) }
        /// A value through a Foundation formatter (`\(date, formatter: Self.dateFormatter)`).
        public mutating func appendInterpolation<Subject>(_ subject: Subject, formatter: Formatter) {
            text += formatter.string(for: subject) ?? String(describing: subject)
        }
        /// A value through a format style (`.number`, `.dateTime`...).
        public mutating func appendInterpolation<F: FormatStyle>(_ input: F.FormatInput, format: F) where F.FormatOutput == String {
            text += format.format(input)
        }
        /// A date in a text style.
        public mutating func appendInterpolation(_ date: Date, style: Text.DateStyle) { text += Text.describe(date, style: style) }
        /// Text.
        public mutating func appendInterpolation(_ text: Text) { self.text += text.content }
    }
}

extension Text {
    /// Text of a localized key (a string literal, interpolations included); Linux has no
    /// string tables here, so the key is the text.
    public init(_ key: LocalizedStringKey, tableName: String? = nil, bundle: Bundle? = nil, comment: StaticString? = nil) {
        self.init(verbatim: key.key)
    }
    /// A date in `style`.
    public init(_ date: Date, style: DateStyle) { self.init(verbatim: Text.describe(date, style: style)) }
    /// A value through a format style (`Text(price, format: .currency(code: "EUR"))`).
    public init<F: FormatStyle>(_ input: F.FormatInput, format: F) where F.FormatOutput == String {
        self.init(verbatim: format.format(input))
    }
    /// A value through a Foundation formatter.
    public init<Subject>(_ subject: Subject, formatter: Formatter) {
        self.init(verbatim: formatter.string(for: subject) ?? String(describing: subject))
    }
    /// A range of dates.
    public init(_ dates: ClosedRange<Date>) { self.init(verbatim: "\(dates.lowerBound) - \(dates.upperBound)") }
    /// A timer counting over `timerInterval` (iOS 16): the time left (or gone, when not
    /// `countsDown`) as it reads when the text is made ("4:59", "1:02:03" with hours), or at
    /// `pauseTime`; nothing redraws it on Linux.
    public init(timerInterval: ClosedRange<Date>, pauseTime: Date? = nil, countsDown: Bool = true, showsHours: Bool = true) {
        let now = min(max(pauseTime ?? Date(), timerInterval.lowerBound), timerInterval.upperBound)
        let span = countsDown ? timerInterval.upperBound.timeIntervalSince(now) : now.timeIntervalSince(timerInterval.lowerBound)
        // Dates far apart (or not finite) are held to what a clock could show: a hundred
        // million hours, never a number Int cannot hold.
        let seconds = span.isFinite ? Int(min(max(span, 0), 3.6e11).rounded(.down)) : 0
        let hours = seconds / 3600, minutes = (seconds % 3600) / 60, rest = seconds % 60
        let text = showsHours && hours > 0
            ? String(format: "%d:%02d:%02d", hours, minutes, rest)
            : String(format: "%d:%02d", showsHours ? minutes : seconds / 60, rest)
        self.init(verbatim: text)
    }

    static func describe(_ date: Date, style: DateStyle) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateStyle = style.date
        formatter.timeStyle = style.time
        return formatter.string(from: date)
    }

    /// Text that follows the other (`Text("a") + Text("b")`).
    public static func + (lhs: Text, rhs: Text) -> Text { Text(verbatim: lhs.content + rhs.content) }
    /// This text in bold.
    public func bold() -> Text { self }
    /// This text in bold, when `isActive`.
    public func bold(_ isActive: Bool) -> Text { self }
    /// This text in italics.
    public func italic() -> Text { self }
    /// This text at `weight`.
    public func fontWeight(_ weight: Font.Weight?) -> Text { self }
    /// This text struck through.
    public func strikethrough(_ isActive: Bool = true, color: Color? = nil) -> Text { self }
    /// This text underlined.
    public func underline(_ isActive: Bool = true, color: Color? = nil) -> Text { self }
    /// This text with digits of one width.
    public func monospacedDigit() -> Text { self }
    /// This text in a monospaced font.
    public func monospaced(_ isActive: Bool = true) -> Text { self }
    /// This text with `kerning` between letters.
    public func kerning(_ kerning: CGFloat) -> Text { self }
}

extension Button where Label == Text {
    /// A button titled by a localized key.
    public init(_ titleKey: LocalizedStringKey, action: @escaping () -> Void) {
        self.init(action: action) { Text(titleKey) }
    }
    /// A button titled `title` with a role.
    public init<S: StringProtocol>(_ title: S, role: ButtonRole?, action: @escaping () -> Void) {
        self.init(action: action) { Text(title) }
    }
}

extension Button where Label == SwiftUI.Label<Text, Image> {
    /// A button titled `title` with the system symbol `systemImage` (iOS 17).
    public init<S: StringProtocol>(_ title: S, systemImage: String, action: @escaping () -> Void) {
        self.init(action: action) { SwiftUI.Label(title, systemImage: systemImage) }
    }
    /// The same with a role (iOS 17).
    public init<S: StringProtocol>(_ title: S, systemImage: String, role: ButtonRole?, action: @escaping () -> Void) {
        self.init(action: action) { SwiftUI.Label(title, systemImage: systemImage) }
    }
}

extension Button {
    /// A button with a role, labelled `label`.
    public init(role: ButtonRole?, action: @escaping () -> Void, @ViewBuilder label: () -> Label) {
        self.init(action: action, label: label)
    }
}

/// A text field (Apple: `TextField`); nobody types here.
public struct TextField<Label: View> {
    let text: Binding<String>
    /// A field titled `title`, editing `text`.
    public init<S: StringProtocol>(_ title: S, text: Binding<String>) where Label == Text { self.text = text }
    /// A field titled `title`, editing `text`, with a prompt.
    public init<S: StringProtocol>(_ title: S, text: Binding<String>, prompt: Text?) where Label == Text { self.text = text }
    /// A field titled `title`, editing `text`, growing along `axis`.
    public init<S: StringProtocol>(_ title: S, text: Binding<String>, axis: Axis) where Label == Text { self.text = text }
    /// A field editing a value through a format style.
    public init<S: StringProtocol, F: ParseableFormatStyle>(_ title: S, value: Binding<F.FormatInput>, format: F) where Label == Text, F.FormatOutput == String {
        text = .constant("")
    }
}

/// A direction of layout (Apple: `Axis`).
public enum Axis: Int8, Hashable, Sendable, CaseIterable {
    case horizontal, vertical
}

/// A field whose text is hidden (Apple: `SecureField`); nobody types here.
public struct SecureField<Label: View> {
    /// A field titled `title`, editing `text`.
    public init<S: StringProtocol>(_ title: S, text: Binding<String>) where Label == Text {}
}

/// A choice among values (Apple: `Picker`); nobody picks here.
public struct Picker<Label: View, SelectionValue: Hashable, Content: View> {
    let content: Content
    /// A picker titled `title` choosing `selection` among `content` (tagged views).
    public init<S: StringProtocol>(_ title: S, selection: Binding<SelectionValue>, @ViewBuilder content: () -> Content) where Label == Text {
        self.content = content()
    }
    /// A picker labelled `label`.
    public init(selection: Binding<SelectionValue>, @ViewBuilder content: () -> Content, @ViewBuilder label: () -> Label) {
        self.content = content()
    }
}

/// The parts of a date a picker edits (Apple: `DatePickerComponents`).
public struct DatePickerComponents: OptionSet, Sendable {
    /// Its `rawValue`.
    public let rawValue: UInt
    /// Creates it.
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// Hours and minutes.
    public static let hourAndMinute = DatePickerComponents(rawValue: 1)
    /// The day.
    public static let date = DatePickerComponents(rawValue: 2)
}

/// A date picker (Apple: `DatePicker`); nobody picks here.
public struct DatePicker<Label: View> {
    /// A picker titled `title` editing `selection`.
    public init<S: StringProtocol>(_ title: S, selection: Binding<Date>, displayedComponents: DatePickerComponents = [.hourAndMinute, .date]) where Label == Text {}
    /// A picker titled `title` editing `selection` within `range`.
    public init<S: StringProtocol>(_ title: S, selection: Binding<Date>, in range: ClosedRange<Date>, displayedComponents: DatePickerComponents = [.hourAndMinute, .date]) where Label == Text {}
    /// A picker titled `title` editing `selection` from a date on.
    public init<S: StringProtocol>(_ title: S, selection: Binding<Date>, in range: PartialRangeFrom<Date>, displayedComponents: DatePickerComponents = [.hourAndMinute, .date]) where Label == Text {}
}

/// A control that steps a value (Apple: `Stepper`); nobody taps here.
public struct Stepper<Label: View> {
    /// A stepper titled `title` changing `value` within `bounds` by `step`.
    public init<S: StringProtocol, V: Strideable>(_ title: S, value: Binding<V>, in bounds: ClosedRange<V>, step: V.Stride = 1) where Label == Text {}
    /// A stepper labelled `label`.
    public init<V: Strideable>(value: Binding<V>, in bounds: ClosedRange<V>, step: V.Stride = 1, @ViewBuilder label: () -> Label) {}
    /// A stepper titled `title` changing `value` by `step`, without bounds.
    public init<S: StringProtocol, V: Strideable>(_ title: S, value: Binding<V>, step: V.Stride = 1) where Label == Text {}
    /// A stepper titled `title` whose taps call `onIncrement` and `onDecrement`.
    public init<S: StringProtocol>(_ title: S, onIncrement: (() -> Void)?, onDecrement: (() -> Void)?) where Label == Text {}
}

/// A slider (Apple: `Slider`); nobody slides here.
public struct Slider<Label: View> {
    /// A slider of `value` within `bounds`.
    public init<V: BinaryFloatingPoint>(value: Binding<V>, in bounds: ClosedRange<V> = 0...1) where Label == EmptyView, V.Stride: BinaryFloatingPoint {}
    /// A slider of `value` within `bounds`, labelled `label`.
    public init<V: BinaryFloatingPoint>(value: Binding<V>, in bounds: ClosedRange<V>, @ViewBuilder label: () -> Label) where V.Stride: BinaryFloatingPoint {}
    /// A slider of `value` within `bounds` by `step`, labelled `label`.
    public init<V: BinaryFloatingPoint>(value: Binding<V>, in bounds: ClosedRange<V>, step: V.Stride, @ViewBuilder label: () -> Label) where V.Stride: BinaryFloatingPoint {}
    /// A slider of `value` within `bounds` by `step`.
    public init<V: BinaryFloatingPoint>(value: Binding<V>, in bounds: ClosedRange<V>, step: V.Stride) where Label == EmptyView, V.Stride: BinaryFloatingPoint {}
}

/// Tabs (Apple: `TabView`).
public struct TabView<SelectionValue: Hashable, Content: View> {
    let content: Content
    /// Tabs of `content` (`.tabItem`).
    public init(@ViewBuilder content: () -> Content) where SelectionValue == Int { self.content = content() }
    /// Tabs of `content` with the chosen one in `selection`.
    public init(selection: Binding<SelectionValue>?, @ViewBuilder content: () -> Content) { self.content = content() }
}

/// A line between views (Apple: `Divider`).
public struct Divider {
    /// A divider.
    public init() {}
}

/// A link that opens a URL (Apple: `Link`); nobody follows it here.
public struct Link<Label: View> {
    /// A link titled `title` to `destination`.
    public init<S: StringProtocol>(_ title: S, destination: URL) where Label == Text {}
    /// A link labelled `label`.
    public init(destination: URL, @ViewBuilder label: () -> Label) {}
}

/// An image loaded from a URL (Apple: `AsyncImage`); nothing is loaded here.
public struct AsyncImage<Content: View> {
    /// An image at `url`.
    public init(url: URL?, scale: CGFloat = 1) where Content == Image {}
    /// An image at `url` shown by `content`, `placeholder` meanwhile.
    public init<I: View, P: View>(url: URL?, scale: CGFloat = 1, @ViewBuilder content: @escaping (Image) -> I, @ViewBuilder placeholder: @escaping () -> P) where Content == ConditionalContent<I, P> {}
}

/// A title and a value (Apple: `LabeledContent`).
public struct LabeledContent<Label: View, Content: View> {
    /// `title` with `value`.
    public init<S: StringProtocol, V: StringProtocol>(_ title: S, value: V) where Label == Text, Content == Text {}
    /// `title` with the content built.
    public init<S: StringProtocol>(_ title: S, @ViewBuilder content: () -> Content) where Label == Text {}
    /// A label and content, both built.
    public init(@ViewBuilder content: () -> Content, @ViewBuilder label: () -> Label) {}
}

/// What an empty screen says (Apple: `ContentUnavailableView`).
public struct ContentUnavailableView {
    /// A title with a symbol and a description.
    public init<S: StringProtocol>(_ title: S, systemImage: String, description: Text? = nil) {}
}

/// A menu (Apple: `Menu`); nobody opens it here.
public struct Menu<Label: View, Content: View> {
    /// A menu titled `title` of `content`.
    public init<S: StringProtocol>(_ title: S, @ViewBuilder content: () -> Content) where Label == Text {}
    /// A menu labelled `label`.
    public init(@ViewBuilder content: () -> Content, @ViewBuilder label: () -> Label) {}
}

/// A link to another view (Apple: `NavigationLink`); nobody follows it here.
public struct NavigationLink<Label: View, Destination: View> {
    /// A link to `destination` labelled `label`.
    public init(destination: Destination, @ViewBuilder label: () -> Label) {}
    /// A link to the view `destination` makes, labelled `label`.
    public init(@ViewBuilder destination: () -> Destination, @ViewBuilder label: () -> Label) {}
    /// A link titled `title` to `destination`.
    public init<S: StringProtocol>(_ title: S, destination: Destination) where Label == Text {}
    /// A link presenting `value` (`navigationDestination(for:)`), labelled `label`.
    public init<P: Hashable>(value: P?, @ViewBuilder label: () -> Label) where Destination == Never {}
    /// A link titled `title` presenting `value`.
    public init<S: StringProtocol, P: Hashable>(_ title: S, value: P?) where Label == Text, Destination == Never {}
}

/// A split view of a sidebar and a detail (Apple: `NavigationSplitView`).
public struct NavigationSplitView<Sidebar: View, Detail: View> {
    let sidebar: Sidebar
    let detail: Detail
    /// A sidebar and a detail.
    public init(@ViewBuilder sidebar: () -> Sidebar, @ViewBuilder detail: () -> Detail) {
        self.sidebar = sidebar()
        self.detail = detail()
    }
}

/// A button that turns editing of a list on and off (Apple: `EditButton`).
public struct EditButton {
    /// An edit button.
    public init() {}
}

/// A shape (Apple: `Shape`): nothing is drawn here.
public protocol Shape: PrimitiveView, Sendable {
    /// The outline of the shape in `rect` (nothing is drawn with it here).
    func path(in rect: CGRect) -> Path
}

nonisolated extension Shape {
    /// The outline of a shape of the package's: an empty path (nothing is drawn).
    public func path(in rect: CGRect) -> Path { Path() }
}

/// An outline (Apple: `Path`): the app's shapes build one; nothing is drawn with it here.
public struct Path: Shape, Equatable {
    /// The rectangle the elements added so far bound.
    public private(set) var boundingRect: CGRect = .zero
    /// Whether nothing was added.
    public var isEmpty: Bool { boundingRect == .zero && !started }
    private var started = false
    /// An empty path.
    nonisolated public init() {}
    /// A path built by `callback`.
    public init(_ callback: (inout Path) -> Void) { callback(&self) }
    /// A rectangle.
    public init(_ rect: CGRect) { addRect(rect) }
    /// A rounded rectangle.
    public init(roundedRect rect: CGRect, cornerRadius: CGFloat) { addRect(rect) }
    /// An ellipse in `rect`.
    public init(ellipseIn rect: CGRect) { addEllipse(in: rect) }
    /// Starts a new subpath at `point`.
    public mutating func move(to point: CGPoint) { include(point) }
    /// A line to `point`.
    public mutating func addLine(to point: CGPoint) { include(point) }
    /// Lines through `points`.
    public mutating func addLines(_ points: [CGPoint]) { points.forEach { include($0) } }
    /// A quadratic curve to `point`.
    public mutating func addQuadCurve(to point: CGPoint, control: CGPoint) { include(point) }
    /// A cubic curve to `point`.
    public mutating func addCurve(to point: CGPoint, control1: CGPoint, control2: CGPoint) { include(point) }
    /// An arc.
    public mutating func addArc(center: CGPoint, radius: CGFloat, startAngle: Angle, endAngle: Angle, clockwise: Bool) {
        include(CGRect(x: center.x - radius, y: center.y - radius, width: 2 * radius, height: 2 * radius))
    }
    /// A rectangle.
    public mutating func addRect(_ rect: CGRect) { include(rect) }
    /// An ellipse in `rect`.
    public mutating func addEllipse(in rect: CGRect) { include(rect) }
    /// Closes the current subpath.
    public mutating func closeSubpath() {}
    /// The outline itself.
    public func path(in rect: CGRect) -> Path { self }

    private mutating func include(_ point: CGPoint) { include(CGRect(origin: point, size: .zero)) }
    private mutating func include(_ rect: CGRect) {
        boundingRect = started ? boundingRect.union(rect) : rect
        started = true
    }
}

/// An angle (Apple: `Angle`).
public struct Angle: Hashable, Sendable, Comparable {
    /// The angle in radians.
    public var radians: Double
    /// The angle in degrees.
    public var degrees: Double { radians * 180 / .pi }
    /// An angle of `radians`.
    public init(radians: Double) { self.radians = radians }
    /// An angle of `degrees`.
    public init(degrees: Double) { radians = degrees * .pi / 180 }
    /// An angle of `radians`.
    public static func radians(_ radians: Double) -> Angle { Angle(radians: radians) }
    /// An angle of `degrees`.
    public static func degrees(_ degrees: Double) -> Angle { Angle(degrees: degrees) }
    /// No angle.
    public static let zero = Angle(radians: 0)
    /// Orders by size.
    public static func < (lhs: Angle, rhs: Angle) -> Bool { lhs.radians < rhs.radians }
}

nonisolated extension Shape {
    /// The shape filled with `content`.
    public func fill<S: ShapeStyle>(_ content: S) -> Self { self }
    /// The shape's outline in `content`.
    public func stroke<S: ShapeStyle>(_ content: S, lineWidth: CGFloat = 1) -> Self { self }
}

/// A rectangle (Apple: `Rectangle`).
public struct Rectangle: Shape {
    /// A rectangle.
    public init() {}
}
/// A rectangle with rounded corners (Apple: `RoundedRectangle`).
public struct RoundedRectangle: Shape {
    /// Corners of `cornerRadius`.
    public init(cornerRadius: CGFloat, style: RoundedCornerStyle = .continuous) {}
}

/// How corners are rounded (Apple: `RoundedCornerStyle`).
public enum RoundedCornerStyle: Hashable, Sendable {
    case circular, continuous
}
/// A circle (Apple: `Circle`).
public struct Circle: Shape {
    /// A circle.
    public init() {}
}
/// A capsule (Apple: `Capsule`).
public struct Capsule: Shape {
    /// A capsule.
    public init() {}
}

extension List {
    /// A row per element of `data`, told apart by `id`.
    public init<Data: RandomAccessCollection, ID: Hashable, RowContent: View>(_ data: Data, id: KeyPath<Data.Element, ID>, @ViewBuilder rowContent: @escaping (Data.Element) -> RowContent) where Content == ForEach<Data, ID, RowContent> {
        self.init { ForEach(data, id: id, content: rowContent) }
    }
    /// A row per element of `data`.
    public init<Data: RandomAccessCollection, RowContent: View>(_ data: Data, @ViewBuilder rowContent: @escaping (Data.Element) -> RowContent) where Content == ForEach<Data, Data.Element.ID, RowContent>, Data.Element: Identifiable {
        self.init { ForEach(data, content: rowContent) }
    }
    /// A list of `content` with a selection.
    public init<SelectionValue: Hashable>(selection: Binding<SelectionValue?>?, @ViewBuilder content: () -> Content) { self.init(content: content) }
}

extension ForEach {
    /// A view per element of a bound collection, each given a binding to its element
    /// (`ForEach($model.items) { $item in ... }`).
    public init<C: MutableCollection & RandomAccessCollection>(_ data: Binding<C>, @ViewBuilder content: @escaping (Binding<C.Element>) -> Content)
    where C.Element: Identifiable, Data == [Binding<C.Element>], ID == C.Element.ID {
        self.init(data.elementBindings, id: \.wrappedValue.id, content: content)
    }
}

extension Binding where Value: MutableCollection & RandomAccessCollection {
    /// A binding to each element, by its index now.
    var elementBindings: [Binding<Value.Element>] {
        let collection = self
        return wrappedValue.indices.map { index in
            Binding<Value.Element>(get: { collection.wrappedValue[index] }, set: { collection.wrappedValue[index] = $0 })
        }
    }
}

extension List {
    /// A row per element of a bound collection (`List($items) { $item in ... }`).
    public init<C: MutableCollection & RandomAccessCollection, RowContent: View>(_ data: Binding<C>, @ViewBuilder rowContent: @escaping (Binding<C.Element>) -> RowContent)
    where C.Element: Identifiable, Content == ForEach<[Binding<C.Element>], C.Element.ID, RowContent> {
        self.init { ForEach(data, content: rowContent) }
    }
}

extension RangeReplaceableCollection where Self: MutableCollection {
    /// Removes the elements at `offsets` (SwiftUI's, for `onDelete`).
    public mutating func remove(atOffsets offsets: IndexSet) {
        for offset in offsets.sorted(by: >) {
            remove(at: index(startIndex, offsetBy: offset))
        }
    }
}

extension MutableCollection where Self: RangeReplaceableCollection {
    /// Moves the elements at `source` to before `destination` (SwiftUI's, for `onMove`).
    public mutating func move(fromOffsets source: IndexSet, toOffset destination: Int) {
        let moving = source.sorted().map { self[index(startIndex, offsetBy: $0)] }
        let before = source.filter { $0 < destination }.count
        remove(atOffsets: source)
        let at = index(startIndex, offsetBy: destination - before)
        insert(contentsOf: moving, at: at)
    }
}

extension ForEach where Data == Range<Int>, ID == Int {
    /// A view per integer of `data`.
    public init(_ data: Range<Int>, @ViewBuilder content: @escaping (Int) -> Content) {
        self.init(data, id: \.self, content: content)
    }
}

extension ForEach {
    /// Rows the user may delete: never here.
    public func onDelete(perform action: ((IndexSet) -> Void)?) -> Self { self }
    /// Rows the user may move: never here.
    public func onMove(perform action: ((IndexSet, Int) -> Void)?) -> Self { self }
}

extension Section {
    /// A section with a header and a footer.
    public init<Header: View, Footer: View>(header: Header, footer: Footer, @ViewBuilder content: () -> Content) { self.init(content: content) }
    /// A section with a header.
    public init<Header: View>(header: Header, @ViewBuilder content: () -> Content) { self.init(content: content) }
    /// A section whose header (and footer) are built.
    public init<Header: View>(@ViewBuilder content: () -> Content, @ViewBuilder header: () -> Header) { self.init(content: content) }
    /// A section whose header and footer are built.
    public init<Header: View, Footer: View>(@ViewBuilder content: () -> Content, @ViewBuilder header: () -> Header, @ViewBuilder footer: () -> Footer) {
        self.init(content: content)
    }
}

/// A toolbar item (Apple: `ToolbarItem`).
public struct ToolbarItem<Content: View> {
    /// An item at `placement` showing `content`.
    public init(placement: ToolbarItemPlacement = .automatic, @ViewBuilder content: () -> Content) {}
}

/// A group of toolbar items (Apple: `ToolbarItemGroup`).
public struct ToolbarItemGroup<Content: View> {
    /// Items at `placement` showing `content`.
    public init(placement: ToolbarItemPlacement = .automatic, @ViewBuilder content: () -> Content) {}
}

/// An old-style alert (Apple: `Alert`).
public struct Alert {
    /// A button of an alert.
    public struct Button {
        /// A default button.
        public static func `default`(_ label: Text, action: (() -> Void)? = {}) -> Button { Button() }
        /// A cancel button.
        public static func cancel(_ label: Text, action: (() -> Void)? = {}) -> Button { Button() }
        /// A cancel button titled "Cancel".
        public static func cancel(_ action: (() -> Void)? = {}) -> Button { Button() }
        /// A destructive button.
        public static func destructive(_ label: Text, action: (() -> Void)? = {}) -> Button { Button() }
    }
    /// An alert with a title, a message and one button.
    public init(title: Text, message: Text? = nil, dismissButton: Button? = nil) {}
    /// An alert with two buttons.
    public init(title: Text, message: Text? = nil, primaryButton: Button, secondaryButton: Button) {}
}

extension TextField: PrimitiveView {}
extension SecureField: PrimitiveView {}
extension Picker: PrimitiveView {}
extension DatePicker: PrimitiveView {}
extension Stepper: PrimitiveView {}
extension Slider: PrimitiveView {}
extension TabView: PrimitiveView {}
extension Divider: PrimitiveView {}
extension Link: PrimitiveView {}
extension AsyncImage: PrimitiveView {}
extension LabeledContent: PrimitiveView {}
extension ContentUnavailableView: PrimitiveView {}
extension Menu: PrimitiveView {}
extension NavigationLink: PrimitiveView {}
extension NavigationSplitView: PrimitiveView {}
extension EditButton: PrimitiveView {}
extension ToolbarItem: PrimitiveView {}
extension ToolbarItemGroup: PrimitiveView {}
extension Color: PrimitiveView {}

/// A vertical stack made as it scrolls (Apple: `LazyVStack`).
public struct LazyVStack<Content: View> {
    let content: Content
    /// A column of `content`.
    public init(alignment: HorizontalAlignment = .center, spacing: CGFloat? = nil, @ViewBuilder content: () -> Content) {
        self.content = content()
    }
}

/// A horizontal stack made as it scrolls (Apple: `LazyHStack`).
public struct LazyHStack<Content: View> {
    let content: Content
    /// A row of `content`.
    public init(alignment: VerticalAlignment = .center, spacing: CGFloat? = nil, @ViewBuilder content: () -> Content) {
        self.content = content()
    }
}

/// A column of a lazy grid (Apple: `GridItem`).
public struct GridItem: Sendable {
    /// How a column is sized (Apple: `GridItem.Size`).
    public enum Size: Sendable {
        case fixed(CGFloat)
        case flexible(minimum: CGFloat = 10, maximum: CGFloat = .infinity)
        case adaptive(minimum: CGFloat, maximum: CGFloat = .infinity)
    }
    /// The column's size.
    public var size: Size
    /// A column of `size`.
    public init(_ size: Size = .flexible(), spacing: CGFloat? = nil, alignment: Alignment? = nil) { self.size = size }
}

/// A grid growing downwards (Apple: `LazyVGrid`).
public struct LazyVGrid<Content: View> {
    let content: Content
    /// A grid of `columns`.
    public init(columns: [GridItem], alignment: HorizontalAlignment = .center, spacing: CGFloat? = nil, @ViewBuilder content: () -> Content) {
        self.content = content()
    }
}

/// A grid growing sideways (Apple: `LazyHGrid`).
public struct LazyHGrid<Content: View> {
    let content: Content
    /// A grid of `rows`.
    public init(rows: [GridItem], alignment: VerticalAlignment = .center, spacing: CGFloat? = nil, @ViewBuilder content: () -> Content) {
        self.content = content()
    }
}

/// The size a `GeometryReader` offers (Apple: `GeometryProxy`): no screen, so zero.
public struct GeometryProxy {
    /// The offered size: zero.
    public var size: CGSize { .zero }
    /// The frame in a coordinate space: zero.
    public func frame(in coordinateSpace: CoordinateSpace) -> CGRect { .zero }
}

/// A coordinate space (Apple: `CoordinateSpace`).
public enum CoordinateSpace: Hashable {
    case global, local
    case named(AnyHashable)
}

/// A view given its size (Apple: `GeometryReader`): its content is made with a zero size,
/// as nothing is laid out on a screen.
public struct GeometryReader<Content: View> {
    let content: Content
    /// `content` given the offered size.
    public init(@ViewBuilder content: @escaping (GeometryProxy) -> Content) { self.content = content(GeometryProxy()) }
}

extension LazyVStack: PrimitiveView {}
extension LazyHStack: PrimitiveView {}
extension LazyVGrid: PrimitiveView {}
extension LazyHGrid: PrimitiveView {}
extension GeometryReader: PrimitiveView {}
