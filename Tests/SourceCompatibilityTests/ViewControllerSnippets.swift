// View controllers as app delegates written before scenes use them, in Swift 6 mode with
// warnings as errors (docs/porting.md, "View controllers"): the window built in code, the
// root controller found through it, a controller subclass with an initializer of its own
// and `required init?(coder:)`, as UIKit code writes it.
import Testing
import UIKit

final class FeedListViewController: UIViewController {
    let feedName: String
    private(set) var loads = 0

    init(feedName: String) {
        self.feedName = feedName
        super.init(nibName: nil, bundle: nil)
    }

    required init?(coder: NSCoder) {
        fatalError("init(coder:) has not been implemented")
    }

    override func viewDidLoad() {
        super.viewDidLoad()
        loads += 1
        title = feedName
        view.backgroundColor = .systemBackground
    }

    func reload() {}
}

/// A colour from a hex string, as apps extend UIColor.
extension UIColor {
    convenience init(hex: String) {
        let value = UInt64(hex.trimmingCharacters(in: CharacterSet(charactersIn: "#")), radix: 16) ?? 0
        self.init(red: CGFloat((value >> 16) & 0xFF) / 255, green: CGFloat((value >> 8) & 0xFF) / 255,
                  blue: CGFloat(value & 0xFF) / 255, alpha: 1)
    }
}

/// A custom view as programmatic UIKit code writes it.
final class BannerView: UIView {
    override init(frame: CGRect) {
        super.init(frame: frame)
        backgroundColor = UIColor(red: 0.1, green: 0.2, blue: 0.3, alpha: 1)
    }

    required init?(coder: NSCoder) {
        fatalError("init(coder:) has not been implemented")
    }
}

final class WindowBuildingAppDelegate: UIResponder, UIApplicationDelegate {
    var window: UIWindow?

    func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?) -> Bool {
        window = UIWindow(frame: UIScreen.main.bounds)
        window?.backgroundColor = .white
        window?.rootViewController = UINavigationController(rootViewController: FeedListViewController(feedName: "News"))
        window?.makeKeyAndVisible()
        return true
    }

    /// What a refresh handler does with the controller on screen.
    func refreshVisibleList() -> Bool {
        guard let list = (window?.rootViewController as? UINavigationController)?.viewControllers.first as? FeedListViewController else { return false }
        list.reload()
        return true
    }
}

@Suite @MainActor struct ViewControllers {
    @Test func theDelegateFindsItsControllerThroughTheWindow() {
        let delegate = WindowBuildingAppDelegate()
        _ = delegate.application(UIApplication.shared, didFinishLaunchingWithOptions: nil)
        #expect(delegate.refreshVisibleList())
        #expect(delegate.window?.isKeyWindow == true && delegate.window?.backgroundColor == .white)
        #expect(delegate.window?.frame.width == 390, "a nominal phone's screen: layout arithmetic does not divide by zero")
        let list = (delegate.window?.rootViewController as? UINavigationController)?.topViewController as? FeedListViewController
        #expect(list?.isViewLoaded == true && list?.loads == 1, "a key window loads its root's shown view, as on iOS")
    }

    @Test func aViewLoadsOnceWhenFirstAskedFor() {
        let list = FeedListViewController(feedName: "News")
        #expect(!list.isViewLoaded && list.viewIfLoaded == nil && list.loads == 0)
        list.view.addSubview(BannerView(frame: CGRect(x: 0, y: 0, width: 10, height: 10)))
        _ = list.view
        #expect(list.isViewLoaded && list.loads == 1 && list.title == "News")
        #expect(list.view.backgroundColor == .systemBackground)
        #expect(list.view.subviews.count == 1 && list.view.subviews[0].superview === list.view)
        list.view.subviews[0].removeFromSuperview()
        #expect(list.view.subviews.isEmpty)
    }

    @Test func aNavigationStackPushesAndPopsButKeepsItsRoot() {
        let root = FeedListViewController(feedName: "root")
        let detail = FeedListViewController(feedName: "detail")
        let navigation = UINavigationController(rootViewController: root)
        navigation.pushViewController(detail, animated: true)
        #expect(navigation.viewControllers == [root, detail] && navigation.topViewController === detail)
        #expect(detail.navigationController === navigation && detail.parent === navigation)
        #expect(navigation.popViewController(animated: true) === detail)
        #expect(detail.parent == nil && detail.navigationController == nil)
        #expect(navigation.popViewController(animated: true) == nil, "the root stays")
        navigation.viewControllers = [detail, root]
        #expect(navigation.popToRootViewController(animated: false) == [root] && navigation.topViewController === detail)
    }

    @Test func coloursCompareByWhatTheySay() {
        #expect(UIColor(hex: "#336699") == UIColor(red: 0x33 / 255.0, green: 0x66 / 255.0, blue: 0x99 / 255.0, alpha: 1))
        #expect(UIColor.white != UIColor.black && UIColor.white.withAlphaComponent(0.5) != .white)
        #expect(UIColor(named: "Accent") == UIColor(named: "Accent"))
    }

    @Test func popToAControllerAndDismissAChain() {
        let a = UIViewController(), b = UIViewController(), c = UIViewController()
        let navigation = UINavigationController(rootViewController: a)
        navigation.pushViewController(b, animated: false)
        navigation.pushViewController(c, animated: false)
        #expect(navigation.popToViewController(a, animated: true) == [b, c] && navigation.viewControllers == [a])
        #expect(navigation.popToViewController(c, animated: true) == nil)
        let sheet = UIViewController(), alert = UIViewController()
        a.present(sheet, animated: true)
        sheet.present(alert, animated: true)
        a.dismiss(animated: true)
        #expect(a.presentedViewController == nil && sheet.presentedViewController == nil && alert.presentingViewController == nil)
    }

    @Test func oneControllerIsPresentedAtATime() {
        let root = UIViewController()
        let sheet = UIViewController()
        var completed = 0
        root.present(sheet, animated: true) { completed += 1 }
        #expect(root.presentedViewController === sheet && sheet.presentingViewController === root && completed == 1)
        root.present(UIViewController(), animated: true)
        #expect(root.presentedViewController === sheet, "a second is refused while one is presented")
        sheet.dismiss(animated: true) { completed += 1 }
        #expect(root.presentedViewController == nil && sheet.presentingViewController == nil && completed == 2)
    }

    @Test func tabsSelectByIndexOrController() {
        let first = UIViewController(), second = UIViewController()
        let tabs = UITabBarController()
        #expect(tabs.viewControllers == nil && tabs.selectedViewController == nil)
        tabs.viewControllers = [first, second]
        tabs.selectedViewController = second
        #expect(tabs.selectedIndex == 1 && second.tabBarController === tabs)
        tabs.setViewControllers([first], animated: false)
        #expect(tabs.selectedIndex == 0 && tabs.selectedViewController === first && second.parent == nil)
    }
}
