import Foundation

// View modifiers that draw or react to the user. Nothing is drawn, so appearance changes
// nothing; nobody taps, types or pulls, so presentations, gestures and navigation never
// happen (docs/porting.md, "A SwiftUI app"). The modifiers that run code when a shown view
// appears, changes or goes are in ViewHost.swift.

nonisolated extension View {
    /// Padding along `edges`.
    public func padding(_ edges: Edge.Set = .all, _ length: CGFloat? = nil) -> Self { self }
    /// Padding of `length` on every edge.
    public func padding(_ length: CGFloat) -> Self { self }
    /// A fixed size.
    public func frame(width: CGFloat? = nil, height: CGFloat? = nil, alignment: Alignment = .center) -> Self { self }
    /// Flexible size limits.
    public func frame(minWidth: CGFloat? = nil, idealWidth: CGFloat? = nil, maxWidth: CGFloat? = nil, minHeight: CGFloat? = nil,
                      idealHeight: CGFloat? = nil, maxHeight: CGFloat? = nil, alignment: Alignment = .center) -> Self { self }
    /// The font of the text inside.
    public func font(_ font: Font?) -> Self { self }
    /// The weight of the text inside.
    public func fontWeight(_ weight: Font.Weight?) -> Self { self }
    /// The text inside in bold.
    public func bold(_ isActive: Bool = true) -> Self { self }
    /// The colour of the content.
    public func foregroundColor(_ color: Color?) -> Self { self }
    /// The style of the content.
    public func foregroundStyle<S: ShapeStyle>(_ style: S) -> Self { self }
    /// The styles of the content's levels.
    public func foregroundStyle<S1: ShapeStyle, S2: ShapeStyle>(_ primary: S1, _ secondary: S2) -> Self { self }
    /// The tint of controls inside.
    public func tint(_ tint: Color?) -> Self { self }
    /// The appearance the presentation prefers, `nil` for the system's (Apple:
    /// `preferredColorScheme(_:)`). Nothing is shown: `\.colorScheme` stays `.light`.
    public func preferredColorScheme(_ colorScheme: ColorScheme?) -> Self { self }
    /// Whether the status bar is hidden (Apple: `statusBarHidden(_:)`): Linux shows none.
    public func statusBarHidden(_ hidden: Bool = true) -> Self { self }
    /// A background style.
    public func background<S: ShapeStyle>(_ style: S, ignoresSafeAreaEdges edges: Edge.Set = .all) -> Self { self }
    /// A background view.
    public func background<V: View>(alignment: Alignment = .center, @ViewBuilder content: () -> V) -> Self { self }
    /// A view over this one.
    public func overlay<V: View>(alignment: Alignment = .center, @ViewBuilder content: () -> V) -> Self { self }
    /// A view over this one (the iOS 13 form).
    @_disfavoredOverload
    public func overlay<V: View>(_ overlay: V, alignment: Alignment = .center) -> Self { self }
    /// A view behind this one (the iOS 13 form).
    @_disfavoredOverload
    public func background<V: View>(_ background: V, alignment: Alignment = .center) -> Self { self }
    /// A style over this view.
    public func overlay<S: ShapeStyle>(_ style: S) -> Self { self }
    /// Rounded corners.
    public func cornerRadius(_ radius: CGFloat, antialiased: Bool = true) -> Self { self }
    /// A clipping shape.
    public func clipShape<S: Shape>(_ shape: S) -> Self { self }
    /// A shadow.
    public func shadow(color: Color = .black, radius: CGFloat, x: CGFloat = 0, y: CGFloat = 0) -> Self { self }
    /// Transparency.
    public func opacity(_ opacity: Double) -> Self { self }
    /// A scale.
    public func scaleEffect(_ scale: CGFloat, anchor: UnitPoint = .center) -> Self { self }
    /// Whether the user can interact with it.
    public func disabled(_ disabled: Bool) -> Self { self }
    /// How many lines text may take.
    public func lineLimit(_ number: Int?) -> Self { self }
    /// How lines of text line up.
    public func multilineTextAlignment(_ alignment: TextAlignment) -> Self { self }
    /// The case of text inside.
    public func textCase(_ textCase: Text.Case?) -> Self { self }
    /// The size of symbol images inside.
    public func imageScale(_ scale: Image.Scale) -> Self { self }
    /// An aspect ratio.
    public func aspectRatio(_ ratio: CGFloat? = nil, contentMode: ContentMode) -> Self { self }
    /// Keeps the aspect ratio, fitting.
    public func scaledToFit() -> Self { self }
    /// Keeps the aspect ratio, filling.
    public func scaledToFill() -> Self { self }
    /// Extends into the safe area.
    public func ignoresSafeArea(_ regions: Edge.Set = .all) -> Self { self }
    /// An identity for animations and lists.
    public func id<ID: Hashable>(_ id: ID) -> Self { self }
    /// A tag for a picker or tab selection.
    public func tag<V: Hashable>(_ tag: V) -> Self { self }
    /// The tab's item in a `TabView`.
    public func tabItem<V: View>(@ViewBuilder _ label: () -> V) -> Self { self }
    /// A badge.
    public func badge(_ count: Int) -> Self { self }
    /// A badge of text.
    public func badge<S: StringProtocol>(_ label: S?) -> Self { self }
    /// How the view comes and goes.
    public func transition(_ transition: AnyTransition) -> Self { self }
    /// An animation of changes of `value`.
    public func animation<V: Equatable>(_ animation: Animation?, value: V) -> Self { self }
    /// A blur.
    public func blur(radius: CGFloat, opaque: Bool = false) -> Self { self }
    /// How changes of the content animate.
    public func contentTransition(_ transition: ContentTransition) -> Self { self }
    /// The sizes a sheet may take.
    public func presentationDetents(_ detents: Set<PresentationDetent>) -> Self { self }
    /// What a text field's content is, for autofill.
    public func textContentType(_ textContentType: UITextContentType?) -> Self { self }
    /// The keyboard of a text field.
    public func keyboardType(_ type: UIKeyboardType) -> Self { self }
    /// Automatic capitalization (before iOS 15).
    public func autocapitalization(_ style: UITextAutocapitalizationType) -> Self { self }
    /// Automatic capitalization.
    public func textInputAutocapitalization(_ autocapitalization: TextInputAutocapitalization?) -> Self { self }
    /// Whether autocorrection is off.
    public func autocorrectionDisabled(_ disable: Bool = true) -> Self { self }
    /// Whether autocorrection is off (before iOS 16).
    public func disableAutocorrection(_ disable: Bool?) -> Self { self }
    /// The label of the keyboard's return key.
    public func submitLabel(_ submitLabel: SubmitLabel) -> Self { self }
    /// Haptic feedback when `trigger` changes: Linux has no haptics.
    public func sensoryFeedback<T: Equatable>(_ feedback: SensoryFeedback, trigger: T) -> Self { self }
    /// The size of controls inside.
    public func controlSize(_ controlSize: ControlSize) -> Self { self }
    /// The user defaults `@AppStorage` uses below; here each `@AppStorage` names its own store.
    public func defaultAppStorage(_ store: UserDefaults) -> Self { self }
    /// The accessibility label.
    public func accessibilityLabel<S: StringProtocol>(_ label: S) -> Self { self }

    /// The style of buttons inside.
    public func buttonStyle<S: PrimitiveButtonStyle>(_ style: S) -> Self { self }
    /// The style of buttons inside, built from their labels.
    public func buttonStyle<S: ButtonStyle>(_ style: S) -> Self { self }
    /// The style of lists inside.
    public func listStyle<S: ListStyle>(_ style: S) -> Self { self }
    /// The style of pickers inside.
    public func pickerStyle<S: PickerStyle>(_ style: S) -> Self { self }
    /// The style of text fields inside.
    public func textFieldStyle<S: TextFieldStyle>(_ style: S) -> Self { self }
    /// The style of toggles inside.
    public func toggleStyle<S: ToggleStyle>(_ style: S) -> Self { self }
    /// The style of labels inside.
    public func labelStyle<S: LabelStyle>(_ style: S) -> Self { self }
    /// The style of navigation views inside.
    public func navigationViewStyle<S: NavigationViewStyle>(_ style: S) -> Self { self }

    /// The navigation title.
    public func navigationTitle<S: StringProtocol>(_ title: S) -> Self { self }
    /// The navigation title of a localized key.
    public func navigationTitle(_ titleKey: LocalizedStringKey) -> Self { self }
    /// The navigation title as text.
    public func navigationTitle(_ title: Text) -> Self { self }
    /// The navigation title (before iOS 14).
    public func navigationBarTitle<S: StringProtocol>(_ title: S) -> Self { self }
    /// How large the navigation title is.
    public func navigationBarTitleDisplayMode(_ displayMode: NavigationBarItem.TitleDisplayMode) -> Self { self }
    /// Items of the navigation bar (before iOS 14).
    public func navigationBarItems<L: View, T: View>(leading: L, trailing: T) -> Self { self }
    /// A trailing item of the navigation bar (before iOS 14).
    public func navigationBarItems<T: View>(trailing: T) -> Self { self }
    /// A leading item of the navigation bar (before iOS 14).
    public func navigationBarItems<L: View>(leading: L) -> Self { self }
    /// The toolbar's items.
    public func toolbar<Content: View>(@ViewBuilder content: () -> Content) -> Self { self }
    /// Where values pushed by `NavigationLink(value:)` lead: never here.
    public func navigationDestination<D: Hashable, C: View>(for data: D.Type, @ViewBuilder destination: @escaping (D) -> C) -> Self { self }
    /// A destination shown while `isPresented`: never here.
    public func navigationDestination<V: View>(isPresented: Binding<Bool>, @ViewBuilder destination: () -> V) -> Self { self }

    /// A sheet shown while `isPresented`: never here.
    public func sheet<Content: View>(isPresented: Binding<Bool>, onDismiss: (() -> Void)? = nil, @ViewBuilder content: @escaping () -> Content) -> Self { self }
    /// A sheet for `item`: never here.
    public func sheet<Item: Identifiable, Content: View>(item: Binding<Item?>, onDismiss: (() -> Void)? = nil, @ViewBuilder content: @escaping (Item) -> Content) -> Self { self }
    /// A full-screen cover shown while `isPresented`: never here.
    public func fullScreenCover<Content: View>(isPresented: Binding<Bool>, onDismiss: (() -> Void)? = nil, @ViewBuilder content: @escaping () -> Content) -> Self { self }
    /// An alert shown while `isPresented`: never here.
    public func alert<S: StringProtocol, A: View>(_ title: S, isPresented: Binding<Bool>, @ViewBuilder actions: () -> A) -> Self { self }
    /// An alert with a message shown while `isPresented`: never here.
    public func alert<S: StringProtocol, A: View, M: View>(_ title: S, isPresented: Binding<Bool>, @ViewBuilder actions: () -> A, @ViewBuilder message: () -> M) -> Self { self }
    /// An alert of a localized key shown while `isPresented`: never here.
    public func alert<A: View, M: View>(_ titleKey: LocalizedStringKey, isPresented: Binding<Bool>, @ViewBuilder actions: () -> A, @ViewBuilder message: () -> M) -> Self { self }
    /// An old-style alert shown while `isPresented`: never here.
    public func alert(isPresented: Binding<Bool>, content: () -> Alert) -> Self { self }
    /// A confirmation dialog shown while `isPresented`: never here.
    public func confirmationDialog<S: StringProtocol, A: View>(_ title: S, isPresented: Binding<Bool>, titleVisibility: Visibility = .automatic, @ViewBuilder actions: () -> A) -> Self { self }
    /// A context menu: never opened here.
    public func contextMenu<M: View>(@ViewBuilder menuItems: () -> M) -> Self { self }
    /// Swipe actions on a row: never here.
    public func swipeActions<T: View>(edge: HorizontalEdge = .trailing, allowsFullSwipe: Bool = true, @ViewBuilder content: () -> T) -> Self { self }
    /// A search field editing `text`: nobody types here.
    public func searchable(text: Binding<String>, prompt: Text? = nil) -> Self { self }
    /// A search field with a prompt.
    public func searchable<S: StringProtocol>(text: Binding<String>, prompt: S) -> Self { self }
    /// `action` on a tap: never here.
    public func onTapGesture(count: Int = 1, perform action: @escaping () -> Void) -> Self { self }
    /// `action` when the user submits a field: never here.
    public func onSubmit(of triggers: SubmitTriggers = .text, _ action: @escaping () -> Void) -> Self { self }
    /// `action` when the app is opened with a URL: never here (no app opens another on Linux).
    public func onOpenURL(perform action: @escaping (URL) -> Void) -> Self { self }
    /// `action` when the app continues an activity of `activityType` (Apple:
    /// `onContinueUserActivity(_:perform:)`): never here, as Linux hands no activities
    /// (docs/porting.md, "User activities and quick actions").
    public func onContinueUserActivity(_ activityType: String, perform action: @escaping (NSUserActivity) -> Void) -> Self { self }
    /// Advertises an activity of `activityType` while `isActive` (Apple:
    /// `userActivity(_:isActive:_:)`): nothing advertises it on Linux; `update` is not called.
    public func userActivity(_ activityType: String, isActive: Bool = true, _ update: @escaping (NSUserActivity) -> Void) -> Self { self }
    /// Advertises an activity for `element` (Apple: `userActivity(_:element:_:)`): as above.
    public func userActivity<P>(_ activityType: String, element: P?, _ update: @escaping (P, NSUserActivity) -> Void) -> Self { self }
    /// Which external events the view's scene prefers and allows (Apple:
    /// `handlesExternalEvents(preferring:allowing:)`): none arrive on Linux.
    public func handlesExternalEvents(preferring: Set<String>, allowing: Set<String>) -> Self { self }
    /// Focus bound to `condition`: nothing takes focus here.
    public func focused(_ condition: FocusState<Bool>.Binding) -> Self { self }
    /// Focus bound to a value: nothing takes focus here.
    public func focused<V: Hashable>(_ binding: FocusState<V>.Binding, equals value: V) -> Self { self }

}

nonisolated extension Scene {
    /// Which external events (URLs, activities) create the scene (Apple:
    /// `handlesExternalEvents(matching:)`): none arrive on Linux.
    public func handlesExternalEvents(matching conditions: Set<String>) -> Self { self }

    /// The user defaults `@AppStorage` uses in the scene; here each names its own store.
    public func defaultAppStorage(_ store: UserDefaults) -> Self { self }
}

/// How content changes animate (Apple: `ContentTransition`).
public struct ContentTransition: Sendable {
    let name: String
    /// No animation.
    public static let identity = ContentTransition(name: "identity")
    /// A fade.
    public static let opacity = ContentTransition(name: "opacity")
    /// Digits rolling.
    public static func numericText(countsDown: Bool = false) -> ContentTransition { ContentTransition(name: "numericText") }
}

/// A size a sheet may take (Apple: `PresentationDetent`).
public struct PresentationDetent: Hashable, Sendable {
    let name: String
    /// Half the screen.
    public static let medium = PresentationDetent(name: "medium")
    /// The whole screen.
    public static let large = PresentationDetent(name: "large")
    /// A fraction of the screen.
    public static func fraction(_ fraction: CGFloat) -> PresentationDetent { PresentationDetent(name: "fraction \(fraction)") }
    /// A height in points.
    public static func height(_ height: CGFloat) -> PresentationDetent { PresentationDetent(name: "height \(height)") }
}

/// What a text field holds, for autofill (Apple: `UITextContentType`).
public struct UITextContentType: Hashable, Sendable {
    let rawValue: String
    /// A name.
    public static let name = UITextContentType(rawValue: "name")
    /// A user name.
    public static let username = UITextContentType(rawValue: "username")
    /// A password.
    public static let password = UITextContentType(rawValue: "password")
    /// A new password.
    public static let newPassword = UITextContentType(rawValue: "newPassword")
    /// A one-time code.
    public static let oneTimeCode = UITextContentType(rawValue: "oneTimeCode")
    /// An email address.
    public static let emailAddress = UITextContentType(rawValue: "emailAddress")
    /// A URL.
    public static let URL = UITextContentType(rawValue: "URL")
    /// A telephone number.
    public static let telephoneNumber = UITextContentType(rawValue: "telephoneNumber")
}

/// A keyboard (Apple: `UIKeyboardType`).
public enum UIKeyboardType: Int, Hashable, Sendable {
    case `default`, asciiCapable, numbersAndPunctuation, URL, numberPad, phonePad, namePhonePad, emailAddress, decimalPad, twitter, webSearch
}

/// Automatic capitalization before iOS 15 (Apple: `UITextAutocapitalizationType`).
public enum UITextAutocapitalizationType: Int, Hashable, Sendable {
    case none, words, sentences, allCharacters
}

/// Automatic capitalization (Apple: `TextInputAutocapitalization`).
public struct TextInputAutocapitalization: Sendable {
    let name: String
    /// None.
    public static let never = TextInputAutocapitalization(name: "never")
    /// Each word.
    public static let words = TextInputAutocapitalization(name: "words")
    /// Each sentence.
    public static let sentences = TextInputAutocapitalization(name: "sentences")
    /// Every character.
    public static let characters = TextInputAutocapitalization(name: "characters")
}

/// The label of the keyboard's return key (Apple: `SubmitLabel`).
public struct SubmitLabel: Sendable {
    let name: String
    /// Done.
    public static let done = SubmitLabel(name: "done")
    /// Go.
    public static let go = SubmitLabel(name: "go")
    /// Send.
    public static let send = SubmitLabel(name: "send")
    /// Join.
    public static let join = SubmitLabel(name: "join")
    /// Route.
    public static let route = SubmitLabel(name: "route")
    /// Search.
    public static let search = SubmitLabel(name: "search")
    /// Return.
    public static let `return` = SubmitLabel(name: "return")
    /// Next.
    public static let next = SubmitLabel(name: "next")
    /// Continue.
    public static let `continue` = SubmitLabel(name: "continue")
}

extension Image {
    /// The image resizable.
    public func resizable() -> Image { self }
    /// How a symbol's layers are coloured.
    public func renderingMode(_ mode: TemplateRenderingMode?) -> Image { self }
    /// How an image is drawn (Apple: `Image.TemplateRenderingMode`).
    public enum TemplateRenderingMode: Hashable, Sendable {
        case template, original
    }
}

/// Whether something shows (Apple: `Visibility`).
public enum Visibility: Hashable, Sendable, CaseIterable {
    case automatic, visible, hidden
}

/// A leading or trailing edge (Apple: `HorizontalEdge`).
public enum HorizontalEdge: Int8, Hashable, Sendable, CaseIterable {
    case leading, trailing
}

/// What submits a field (Apple: `SubmitTriggers`).
public struct SubmitTriggers: OptionSet, Sendable {
    /// Its `rawValue`.
    public let rawValue: Int
    /// Creates it.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// A text field's submission.
    public static let text = SubmitTriggers(rawValue: 1)
    /// A search field's submission.
    public static let search = SubmitTriggers(rawValue: 2)
}

/// The size of controls (Apple: `ControlSize`).
public enum ControlSize: Hashable, Sendable, CaseIterable {
    case mini, small, regular, large, extraLarge
}

/// Haptic feedback (Apple: `SensoryFeedback`): Linux has no haptics.
public struct SensoryFeedback: Equatable, Sendable {
    let name: String
    /// A task succeeded.
    public static let success = SensoryFeedback(name: "success")
    /// A warning.
    public static let warning = SensoryFeedback(name: "warning")
    /// An error.
    public static let error = SensoryFeedback(name: "error")
    /// A selection changed.
    public static let selection = SensoryFeedback(name: "selection")
    /// A value went up.
    public static let increase = SensoryFeedback(name: "increase")
    /// A value went down.
    public static let decrease = SensoryFeedback(name: "decrease")
    /// An impact.
    public static let impact = SensoryFeedback(name: "impact")
}
