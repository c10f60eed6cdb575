// Views and view controllers without a screen (docs/porting.md, "View controllers"): app
// delegates written before scenes build their window in code
// (`window = UIWindow(frame: UIScreen.main.bounds); window?.rootViewController = ...`) and
// find their controllers through it (`window?.rootViewController as? UINavigationController`).
// Linux draws nothing: these types keep the hierarchy the code builds (parents, children,
// the navigation stack, the presented controller) and load a controller's view when it is
// first asked for (`loadView`, then `viewDidLoad`), as iOS does; nothing appears, so the
// system never calls the appearance methods (`viewWillAppear(_:)`...).
//
// Their base is UIResponder, as Apple's: its `init()` is not `required` (delegates are made
// from their classes by ObjectMaking), so a controller subclass with an initializer of its
// own (`init(viewModel:)` beside `required init?(coder:)`) compiles as UIKit code writes it.
import BackgroundTasks
import Foundation

/// The screen (Apple: `UIScreen`). Linux shows nothing: its size is a nominal phone's in
/// portrait (390 x 844 points at scale 3), so that layout arithmetic (`h / bounds.width`)
/// computes numbers rather than dividing by zero.
@preconcurrency @MainActor
public final class UIScreen {
    /// The device's screen.
    public static let main = UIScreen()
    /// The screen's rectangle in points (nominal).
    public let bounds = CGRect(x: 0, y: 0, width: 390, height: 844)
    /// The screen's rectangle in pixels (nominal).
    public let nativeBounds = CGRect(x: 0, y: 0, width: 1170, height: 2532)
    /// Points to pixels.
    public let scale: CGFloat = 3
    /// Points to pixels, natively.
    public let nativeScale: CGFloat = 3
    /// Brightness (0...1).
    public var brightness: CGFloat = 1
}

/// A rectangle of the interface (Apple: `UIView`), kept without being drawn: its frame,
/// colour, visibility and subviews.
@preconcurrency @MainActor
open class UIView: UIResponder {
    /// The view's rectangle in its superview.
    open var frame: CGRect
    /// The view's rectangle in its own coordinates.
    open var bounds: CGRect {
        get { CGRect(origin: .zero, size: frame.size) }
        set { frame.size = newValue.size }
    }
    /// Its background colour.
    open var backgroundColor: UIColor?
    /// Whether it is hidden.
    open var isHidden = false
    /// Its opacity.
    open var alpha: CGFloat = 1
    /// A number the app gives it.
    open var tag = 0
    /// Whether it takes touches (there are none on Linux).
    open var isUserInteractionEnabled = true
    /// Its subviews, back to front.
    public private(set) var subviews: [UIView] = []
    /// The view it is a subview of.
    public private(set) weak var superview: UIView?
    /// The window whose views this one holds (only the view a window keeps its views in).
    fileprivate weak var hostWindow: UIWindow?
    /// The window the view is in (Apple: `window`): through its superviews, the window its
    /// top view belongs to; `nil` for a view in no window (`viewIfLoaded?.window != nil` tells
    /// whether a controller's view is in a window). A window's root controller's view is put
    /// in it when the window is made key (or the root is set on a key window).
    public var window: UIWindow? {
        var top = self
        while let parent = top.superview { top = parent }
        return top.hostWindow
    }

    /// A view of `frame`.
    public init(frame: CGRect) {
        self.frame = frame
        super.init()
    }

    /// A view from an archive. Linux has no storyboards or nibs: an empty view.
    public required init?(coder: NSCoder) {
        frame = .zero
        super.init()
    }

    /// A view of an empty frame.
    public override convenience init() {
        self.init(frame: .zero)
    }

    /// Adds `view` on top of the subviews (moving it from another superview). Adding the
    /// view itself or one of its superviews stops the program, as UIKit raises.
    open func addSubview(_ view: UIView) {
        if sequence(first: self, next: \.superview).contains(where: { $0 === view }) {
            fatalError("UIView.addSubview: a view cannot be added to itself or to one of its subviews")
        }
        view.removeFromSuperview()
        subviews.append(view)
        view.superview = self
    }

    /// Removes the view from its superview.
    open func removeFromSuperview() {
        guard let superview else { return }
        superview.subviews.removeAll { $0 === self }
        self.superview = nil
    }

    /// Asks the view and its subviews to give up the keyboard (Apple: `endEditing(_:)`);
    /// returns whether one of them resigned first responder: `false`. Linux has no text
    /// input, and nothing here becomes first responder, so there is nothing to resign.
    @discardableResult
    open func endEditing(_ force: Bool) -> Bool { false }

    /// The view itself or the first of its descendants (depth first, back to front) whose
    /// ``tag`` is `tag`.
    open func viewWithTag(_ tag: Int) -> UIView? {
        if self.tag == tag { return self }
        for subview in subviews {
            if let found = subview.viewWithTag(tag) { return found }
        }
        return nil
    }

    /// Moves `view`, one of the subviews, to the front.
    open func bringSubviewToFront(_ view: UIView) {
        guard let index = subviews.firstIndex(where: { $0 === view }) else { return }
        subviews.append(subviews.remove(at: index))
    }

    /// Moves `view`, one of the subviews, to the back.
    open func sendSubviewToBack(_ view: UIView) {
        guard let index = subviews.firstIndex(where: { $0 === view }) else { return }
        subviews.insert(subviews.remove(at: index), at: 0)
    }

    /// The view's tint (kept as set; the superview's when not set, as on iOS).
    open var tintColor: UIColor! {
        get { ownTintColor ?? superview?.tintColor ?? .systemBlue }
        set { ownTintColor = newValue }
    }
    fileprivate var ownTintColor: UIColor?

    /// The appearance the view asks for (Apple: `overrideUserInterfaceStyle`), kept as set.
    open var overrideUserInterfaceStyle: UIUserInterfaceStyle = .unspecified

    /// Asks for a layout pass (there is none on Linux).
    open func setNeedsLayout() {}
    /// Lays out now (nothing to lay out on Linux).
    open func layoutIfNeeded() {}

    /// Whether changes animate (Apple: `areAnimationsEnabled`; UI tests turn it off). Kept as
    /// set: nothing is drawn, so nothing animates either way.
    public private(set) static var areAnimationsEnabled = true
    /// Turns animations on or off for the app (Apple: `setAnimationsEnabled(_:)`).
    open class func setAnimationsEnabled(_ enabled: Bool) { areAnimationsEnabled = enabled }
    /// Runs `actionsWithoutAnimation` at once (Apple: `performWithoutAnimation(_:)`).
    open class func performWithoutAnimation(_ actionsWithoutAnimation: () -> Void) { actionsWithoutAnimation() }
    /// Makes the changes of `animations` at once, as nothing is drawn (Apple: animated over
    /// `duration`).
    open class func animate(withDuration duration: TimeInterval, animations: @escaping () -> Void) {
        animations()
    }
    /// Makes the changes of `animations` at once, then calls `completion` with `true` on the
    /// main queue, after the caller's turn, as iOS calls it once the animation ended.
    open class func animate(withDuration duration: TimeInterval, animations: @escaping () -> Void, completion: ((Bool) -> Void)? = nil) {
        animations()
        guard let completion else { return }
        let finished = UncheckedCompletion(completion)
        DispatchQueue.main.async { MainActor.assumeIsolated { finished.call(true) } }
    }
    /// Lays out the subviews; override to position them.
    open func layoutSubviews() {}
}

/// A controller of a view (Apple: `UIViewController`): its view, loaded when first asked
/// for, its place in the hierarchy (parent, children, navigation and tab controllers, the
/// presented controller). Linux shows nothing: the appearance methods are there to override
/// and are never called by the system.
@preconcurrency @MainActor
open class UIViewController: UIResponder {
    private var loadedView: UIView?
    /// The controller's title (its tab bar item's too, as UIKit keeps them in step).
    open var title: String? {
        didSet { ownTabBarItem?.title = title }
    }
    /// The controller's item in a tab bar (Apple: `tabBarItem`): made on first use, titled
    /// as the controller; its badge (`badgeValue`) is kept and shown nowhere.
    open var tabBarItem: UITabBarItem! {
        get {
            if let item = ownTabBarItem { return item }
            let item = UITabBarItem()
            item.title = title
            ownTabBarItem = item
            return item
        }
        set { ownTabBarItem = newValue }
    }
    private var ownTabBarItem: UITabBarItem?
    /// The appearance the controller asks for (Apple: `overrideUserInterfaceStyle`), kept as
    /// set: an app's dark-mode switch sets it on every presented controller.
    open var overrideUserInterfaceStyle: UIUserInterfaceStyle = .unspecified
    /// The controller that contains this one.
    public private(set) weak var parent: UIViewController?
    /// The controllers this one contains.
    public private(set) var children: [UIViewController] = []
    /// The controller this one presented.
    public private(set) var presentedViewController: UIViewController?
    /// The controller that presented this one.
    public private(set) weak var presentingViewController: UIViewController?

    /// A controller whose view is made in code (Linux has no nibs).
    public init(nibName nibNameOrNil: String?, bundle nibBundleOrNil: Bundle?) {
        super.init()
    }

    /// A controller from an archive. Linux has no storyboards: a controller like `init(nibName: nil, bundle: nil)`'s.
    public required init?(coder: NSCoder) {
        super.init()
    }

    /// A controller whose view is made in code.
    public override convenience init() {
        self.init(nibName: nil, bundle: nil)
    }

    /// The controller's view, loaded the first time it is asked for (``loadView()``, then
    /// ``viewDidLoad()``), as on iOS.
    open var view: UIView! {
        get {
            if loadedView == nil {
                loadView()
                if loadedView == nil { loadedView = UIView() }
                viewDidLoad()
            }
            return loadedView
        }
        set { loadedView = newValue }
    }

    /// The view if it was loaded, without loading it.
    public var viewIfLoaded: UIView? { loadedView }
    /// Whether the view was loaded.
    public var isViewLoaded: Bool { loadedView != nil }

    /// Makes the view: override to set ``view``; by default an empty view.
    open func loadView() {
        loadedView = UIView()
    }

    /// Loads the view if it is not loaded yet.
    public func loadViewIfNeeded() {
        _ = view
    }

    /// The view was loaded.
    open func viewDidLoad() {}
    /// The orientations the controller's interface supports (Apple: iPhone's default, every
    /// one but upside down). The system never asks on Linux: no screen turns.
    open var supportedInterfaceOrientations: UIInterfaceOrientationMask { .allButUpsideDown }
    /// Whether the interface may turn with the device (Apple: `true` by default; deprecated in
    /// iOS 16 for `setNeedsUpdateOfSupportedInterfaceOrientations()`).
    open var shouldAutorotate: Bool { true }
    /// Tells the system that ``supportedInterfaceOrientations`` changed (Apple: iOS 16), as an
    /// orientation lock does: nothing turns on Linux, so there is nothing to update.
    open func setNeedsUpdateOfSupportedInterfaceOrientations() {}
    /// Asks the system to turn the interface to the device's orientation (Apple: a class
    /// method, deprecated in iOS 16): nothing turns on Linux.
    open class func attemptRotationToDeviceOrientation() {}
    /// The view is about to appear (never called on Linux: nothing appears).
    open func viewWillAppear(_ animated: Bool) {}
    /// The view appeared (never called on Linux).
    open func viewDidAppear(_ animated: Bool) {}
    /// The view is about to disappear (never called on Linux).
    open func viewWillDisappear(_ animated: Bool) {}
    /// The view disappeared (never called on Linux).
    open func viewDidDisappear(_ animated: Bool) {}
    /// The view is about to lay out its subviews (never called on Linux).
    open func viewWillLayoutSubviews() {}
    /// The view laid out its subviews (never called on Linux).
    open func viewDidLayoutSubviews() {}

    /// Adds `child` to the children (call ``didMove(toParent:)`` on it after, as on iOS).
    /// Adding the controller itself or one of its parents stops the program, as UIKit raises.
    open func addChild(_ child: UIViewController) {
        if sequence(first: self, next: \.parent).contains(where: { $0 === child }) {
            fatalError("UIViewController.addChild: a controller cannot be its own child or its parent's")
        }
        child.removeFromParent()
        child.willMove(toParent: self)
        children.append(child)
        child.parent = self
    }

    /// Removes the controller from its parent.
    open func removeFromParent() {
        guard let parent else { return }
        parent.children.removeAll { $0 === self }
        self.parent = nil
    }

    /// The controller is about to be added to or removed from `parent`.
    open func willMove(toParent parent: UIViewController?) {}
    /// The controller was added to or removed from `parent`.
    open func didMove(toParent parent: UIViewController?) {}

    /// The nearest navigation controller that contains this one.
    public var navigationController: UINavigationController? { nearestContainer() }

    /// The nearest tab bar controller that contains this one.
    public var tabBarController: UITabBarController? { nearestContainer() }

    /// The nearest parent, grandparent... of type `Container`.
    private func nearestContainer<Container: UIViewController>() -> Container? {
        parent.flatMap { sequence(first: $0, next: \.parent).lazy.compactMap { $0 as? Container }.first }
    }

    /// Presents `controller` over this one (nothing is shown on Linux); `completion` runs at
    /// once. One presented at a time, as on iOS: a second is refused while one is presented.
    open func present(_ controller: UIViewController, animated flag: Bool, completion: (() -> Void)? = nil) {
        guard presentedViewController == nil, controller.presentingViewController == nil else { return }
        presentedViewController = controller
        controller.presentingViewController = self
        completion?()
    }

    /// Dismisses the controller this one presented (and any it presented in turn), or this
    /// one if it was presented; `completion` runs at once.
    open func dismiss(animated flag: Bool, completion: (() -> Void)? = nil) {
        let root = presentedViewController != nil ? self : presentingViewController
        var current = root
        while let presenter = current, let presented = presenter.presentedViewController {
            presenter.presentedViewController = nil
            presented.presentingViewController = nil
            current = presented
        }
        completion?()
    }

    /// The controller's item in a navigation bar (its title and back button).
    public private(set) lazy var navigationItem = UINavigationItem(title: "")

    /// Lays the controller out for a key window: loads its view (and, for containers, the
    /// shown child's), as a window does when it becomes key on iOS.
    package func loadForWindow(_ window: UIWindow) {
        loadViewIfNeeded()
        // The root's view is the window's content, as UIKit adds it to the window: its views
        // then know their window (`view.window`, and the window's traits).
        if window.rootViewController === self, let view, view.superview == nil { window.addSubview(view) }
        shownChild?.loadForWindow(window)
    }

    /// The child a container shows (the top of a stack, the selected tab).
    var shownChild: UIViewController? { nil }
}

/// A stack of controllers (Apple: `UINavigationController`); its children are the stack.
@preconcurrency @MainActor
open class UINavigationController: UIViewController {
    /// The stack, bottom to top.
    open var viewControllers: [UIViewController] {
        get { children }
        set { setViewControllers(newValue, animated: false) }
    }
    /// The controller on top of the stack.
    open var topViewController: UIViewController? { children.last }
    /// The controller shown: the presented one over the top, or the top.
    open var visibleViewController: UIViewController? { topViewController?.presentedViewController ?? topViewController }

    /// A stack of `rootViewController`.
    public init(rootViewController: UIViewController) {
        super.init(nibName: nil, bundle: nil)
        pushViewController(rootViewController, animated: false)
    }

    /// An empty stack.
    public override init(nibName nibNameOrNil: String?, bundle nibBundleOrNil: Bundle?) {
        super.init(nibName: nibNameOrNil, bundle: nibBundleOrNil)
    }

    /// A stack from an archive: empty.
    public required init?(coder: NSCoder) {
        super.init(coder: coder)
    }

    /// Pushes `controller` on the stack. Pushing one already on it stops the program, as
    /// UIKit raises.
    open func pushViewController(_ controller: UIViewController, animated: Bool) {
        if children.contains(where: { $0 === controller }) {
            fatalError("UINavigationController: pushing the same view controller instance more than once is not supported")
        }
        addChild(controller)
        controller.didMove(toParent: self)
    }

    /// Pops the controllers above `controller`; returns them (nil if it is not on the stack).
    @discardableResult
    open func popToViewController(_ controller: UIViewController, animated: Bool) -> [UIViewController]? {
        guard children.contains(where: { $0 === controller }) else { return nil }
        var popped: [UIViewController] = []
        while let top = children.last, top !== controller, let removed = popViewController(animated: animated) {
            popped.insert(removed, at: 0)
        }
        return popped
    }

    override var shownChild: UIViewController? { topViewController }

    /// Pops the top controller (never the root) and returns it.
    @discardableResult
    open func popViewController(animated: Bool) -> UIViewController? {
        guard children.count > 1, let top = children.last else { return nil }
        top.willMove(toParent: nil)
        top.removeFromParent()
        return top
    }

    /// Pops every controller above the root; returns them.
    @discardableResult
    open func popToRootViewController(animated: Bool) -> [UIViewController]? {
        var popped: [UIViewController] = []
        while let top = popViewController(animated: animated) { popped.insert(top, at: 0) }
        return popped
    }

    /// Replaces the stack.
    open func setViewControllers(_ controllers: [UIViewController], animated: Bool) {
        for child in children {
            child.willMove(toParent: nil)
            child.removeFromParent()
        }
        for controller in controllers { pushViewController(controller, animated: animated) }
    }
}

/// Controllers chosen by tabs (Apple: `UITabBarController`); its children are the tabs'.
@preconcurrency @MainActor
open class UITabBarController: UIViewController {
    /// The tabs' controllers.
    open var viewControllers: [UIViewController]? {
        get { children.isEmpty ? nil : children }
        set { setViewControllers(newValue, animated: false) }
    }
    /// The selected tab's index.
    open var selectedIndex = 0
    /// The selected tab's controller.
    open var selectedViewController: UIViewController? {
        get { children.indices.contains(selectedIndex) ? children[selectedIndex] : nil }
        set {
            if let newValue, let index = children.firstIndex(where: { $0 === newValue }) { selectedIndex = index }
        }
    }

    override var shownChild: UIViewController? { selectedViewController }

    /// Replaces the tabs' controllers.
    open func setViewControllers(_ controllers: [UIViewController]?, animated: Bool) {
        for child in children {
            child.willMove(toParent: nil)
            child.removeFromParent()
        }
        for controller in controllers ?? [] {
            addChild(controller)
            controller.didMove(toParent: self)
        }
        if !children.indices.contains(selectedIndex) { selectedIndex = 0 }
    }
}

/// The title and back button a controller shows in a navigation bar (Apple: `UINavigationItem`).
@preconcurrency @MainActor
open class UINavigationItem: NSObject {
    /// The title.
    open var title: String?
    /// A line above the title.
    open var prompt: String?
    /// Whether the back button is hidden.
    open var hidesBackButton = false
    /// An item titled `title`.
    public init(title: String) {
        self.title = title
        super.init()
    }
}

/// A controller's item in a tab bar (Apple: `UITabBarItem`): its title, tag and badge,
/// kept as set (Linux shows no tab bar).
@preconcurrency @MainActor
open class UITabBarItem: NSObject {
    /// The item's title.
    open var title: String?
    /// A number the app gives it.
    open var tag = 0
    /// Whether the item can be chosen.
    open var isEnabled = true
    /// The badge's text (`nil`: no badge), as a chat list's unread count is set.
    open var badgeValue: String?
    /// The badge's colour.
    open var badgeColor: UIColor?
    /// An item without a title.
    public override init() {
        super.init()
    }
}

extension UIViewController: WindowRoot {}

extension UIWindow {
    /// The window's root view controller (Linux shows nothing: the window keeps it). A root
    /// set on a key window has its view loaded, as ``makeKeyAndVisible()`` does.
    public var rootViewController: UIViewController? {
        get { rootViewControllerObject as? UIViewController }
        set {
            if let old = rootViewControllerObject as? UIViewController, old !== newValue, let view = old.viewIfLoaded,
               view.superview === content {
                view.removeFromSuperview()
            }
            rootViewControllerObject = newValue
            if isKeyWindow { newValue?.loadForWindow(self) }
        }
    }

    /// The window's background colour.
    public var backgroundColor: UIColor? {
        get { backgroundColorObject as? UIColor }
        set { backgroundColorObject = newValue }
    }

    // Apple's UIWindow is a UIView; here it is a UIResponder (the BackgroundTasks module,
    // which declares it, has no views), so what code asks of a window as a view (a privacy
    // screen laid over it in `applicationWillResignActive`) is kept by a view of its own: its
    // subviews' `superview` is that view, not the window.

    /// The view that holds what is added to the window. Made on first use, with the tint and
    /// appearance set on the window's class's ``appearance()`` proxy (the nearest class up to
    /// `UIWindow` that set one), as UIKit gives a window its proxy's settings.
    fileprivate var content: UIView {
        if let view = contentViewObject as? UIView { return view }
        let view = UIView(frame: bounds)
        view.hostWindow = self
        contentViewObject = view
        if !UIWindow.isAppearanceProxy(self) {
            let proxies = sequence(first: type(of: self) as AnyClass, next: { $0 === UIWindow.self ? nil : _getSuperclass($0) })
                .compactMap { UIWindow.appearanceProxies[ObjectIdentifier($0)]?.contentViewObject as? UIView }
            view.ownTintColor = proxies.lazy.compactMap(\.ownTintColor).first
            view.overrideUserInterfaceStyle = proxies.lazy.map(\.overrideUserInterfaceStyle).first { $0 != .unspecified } ?? .unspecified
        }
        return view
    }

    /// The appearance proxy of the window's class (Apple: `UIAppearance.appearance()`): what
    /// is set on it (`tintColor`, `overrideUserInterfaceStyle`) is what windows of the class
    /// (and its subclasses) start with when first used afterwards (`UIWindow.appearance().overrideUserInterfaceStyle
    /// = .dark` in an app's `init`). The proxy is itself a window of the class, made with its
    /// `init()` (``ObjectMaking``). Nothing is drawn, so that is all it does.
    public class func appearance() -> Self {
        let key = ObjectIdentifier(self)
        if let proxy = appearanceProxies[key] as? Self { return proxy }
        let proxy = ObjectMaking.make(self)
        appearanceProxies[key] = proxy
        return proxy
    }

    /// The proxies made by ``appearance()``, by class.
    fileprivate static var appearanceProxies: [ObjectIdentifier: UIWindow] = [:]

    /// Whether `window` is one of the proxies (which take nothing from the others).
    fileprivate static func isAppearanceProxy(_ window: UIWindow) -> Bool {
        appearanceProxies.values.contains { $0 === window }
    }

    /// The views added to the window, back to front.
    public var subviews: [UIView] { content.subviews }
    /// Adds `view` on top of the window's views.
    public func addSubview(_ view: UIView) { content.addSubview(view) }
    /// The first of the window's views (depth first) whose tag is `tag`.
    public func viewWithTag(_ tag: Int) -> UIView? { content.subviews.lazy.compactMap { $0.viewWithTag(tag) }.first }
    /// Moves `view` to the front of the window's views.
    public func bringSubviewToFront(_ view: UIView) { content.bringSubviewToFront(view) }
    /// Asks the window's views to give up the keyboard (Apple: `UIView.endEditing(_:)`):
    /// `false`, as for any view (nothing here becomes first responder).
    @discardableResult
    public func endEditing(_ force: Bool) -> Bool { content.endEditing(force) }
    /// Removes the window from its superview (Apple: `UIView.removeFromSuperview()`). A window
    /// has none, on iOS too: it is the root of its views. So nothing changes: the window and
    /// its views stay as they were, and the application lists it while the app keeps it (an
    /// overlay window is taken away by letting it go, as the code that calls this does next:
    /// `overlayWindow = nil`).
    public func removeFromSuperview() {}
    /// Whether the window is hidden: until `makeKeyAndVisible()`, as on iOS; then as set
    /// (nothing shows either way).
    public var isHidden: Bool {
        get { windowIsHidden }
        set { windowIsHidden = newValue }
    }
    /// The window's opacity (kept as set).
    public var alpha: CGFloat {
        get { content.alpha }
        set { content.alpha = newValue }
    }
    /// The window's tint.
    public var tintColor: UIColor! {
        get { content.tintColor }
        set { content.tintColor = newValue }
    }
    /// The appearance the window asks for (kept as set).
    public var overrideUserInterfaceStyle: UIUserInterfaceStyle {
        get { content.overrideUserInterfaceStyle }
        set { content.overrideUserInterfaceStyle = newValue }
    }
}

/// A completion handler UIKit's API takes plain (Apple's are imported without `@Sendable`)
/// carried to the main queue. @unchecked Sendable: it was handed over on the main actor and is
/// called there, once.
private struct UncheckedCompletion: @unchecked Sendable {
    let call: (Bool) -> Void
    init(_ call: @escaping (Bool) -> Void) { self.call = call }
}
