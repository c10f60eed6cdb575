import Foundation
import SchedulerCore

// iOS 13's scenes, so that a scene-based app's `SceneDelegate` compiles and hears its life
// (docs/porting.md, "Scenes"). Linux has no windows: the app has one scene, connected when
// the user starts the app (not for a background launch), whose delegate is told of the
// app's state changes instead of the app delegate, as iOS does for an app with scenes:
//
//     class SceneDelegate: UIResponder, UIWindowSceneDelegate {
//         var window: UIWindow?
//         func sceneDidEnterBackground(_ scene: UIScene) {
//             (UIApplication.shared.delegate as? AppDelegate)?.scheduleAppRefresh()
//         }
//     }

/// A scene of the app (Apple: `UIScene`): on Linux, the one the user's launch connects.
@preconcurrency @MainActor
open class UIScene: UIResponder {
    /// Where a scene is in its life (Apple: `UIScene.ActivationState`): the C enum
    /// `UISceneActivationState` (CUIKitTypes), as on iOS, so a `switch` over it takes
    /// `default:` or `@unknown default:` without a warning (docs/porting.md).
    public typealias ActivationState = UISceneActivationState

    /// The options a scene connects with (Apple: `UIScene.ConnectionOptions`); none on Linux.
    @MainActor
    open class ConnectionOptions: NSObject {
        /// No options.
        public override init() { super.init() }
        /// The URLs the scene was opened to show (Apple: `urlContexts`): always empty, as no
        /// app on Linux opens another with a URL.
        public var urlContexts: Set<UIOpenURLContext> { [] }
        /// The activities the scene was opened to continue (Apple: `userActivities`): always
        /// empty, as Linux hands no activities.
        public var userActivities: Set<NSUserActivity> { [] }
        /// The type of the activity being handed off (Apple: `handoffUserActivityType`): `nil`.
        public var handoffUserActivityType: String? { nil }
        /// The quick action the scene was opened with (Apple: `shortcutItem`): `nil`, as Linux
        /// has no Home Screen.
        public var shortcutItem: UIApplicationShortcutItem? { nil }
    }

    /// How a URL was opened (Apple: `UIScene.OpenURLOptions`).
    @MainActor
    open class OpenURLOptions: NSObject {
        /// The app that asked (`nil`: not known, as for any other app's on iOS).
        public var sourceApplication: String? { nil }
        /// Whether the file is to be opened in place.
        public var openInPlace: Bool { false }
    }

    /// Posted when a scene is about to connect (Apple: `willConnectNotification`), with
    /// the scene as the object, after its delegate's `scene(_:willConnectTo:options:)`.
    nonisolated public static let willConnectNotification = Notification.Name("UISceneWillConnectNotification")
    /// Posted when a scene was released (the app terminates), after its delegate heard it.
    nonisolated public static let didDisconnectNotification = Notification.Name("UISceneDidDisconnectNotification")
    /// Posted when a scene became active, after its delegate heard it.
    nonisolated public static let didActivateNotification = Notification.Name("UISceneDidActivateNotification")
    /// Posted when a scene is about to stop being active, after its delegate heard it.
    nonisolated public static let willDeactivateNotification = Notification.Name("UISceneWillDeactivateNotification")
    /// Posted when a scene is about to come to the foreground, after its delegate heard it.
    nonisolated public static let willEnterForegroundNotification = Notification.Name("UISceneWillEnterForegroundNotification")
    /// Posted when a scene entered the background, after its delegate heard it.
    nonisolated public static let didEnterBackgroundNotification = Notification.Name("UISceneDidEnterBackgroundNotification")

    /// The scene's session.
    public private(set) var session: UISceneSession
    /// The scene's delegate, told of its life.
    public var delegate: (any UISceneDelegate)?
    /// Where the scene is.
    public internal(set) var activationState: ActivationState = .unattached
    /// A title (Apple: `title: String!`; unused on Linux).
    public var title: String! = ""

    /// A scene of `session`.
    public required init(session: UISceneSession, connectionOptions: ConnectionOptions) {
        self.session = session
        super.init()
    }

    /// A scene with a session of its own.
    public override init() {
        session = UISceneSession(role: .windowApplication, configuration: UISceneConfiguration(name: nil, sessionRole: .windowApplication))
        super.init()
    }
}

/// A URL the app was asked to open (Apple: `UIOpenURLContext`). None ever comes on Linux:
/// the class exists so that a scene delegate's `scene(_:openURLContexts:)` compiles.
@preconcurrency @MainActor
open class UIOpenURLContext: NSObject {
    /// The URL.
    public let url: URL
    /// How it was opened.
    public let options: UIScene.OpenURLOptions

    /// A context for `url`.
    public init(url: URL, options: UIScene.OpenURLOptions = UIScene.OpenURLOptions()) {
        self.url = url
        self.options = options
        super.init()
    }
}

/// A window scene (Apple: `UIWindowScene`).
@preconcurrency @MainActor
open class UIWindowScene: UIScene {
    /// The scene's windows (Apple: `windows`): those of the scene that were made key, while
    /// the app keeps them, back to front by level.
    public var windows: [UIWindow] {
        (BGAppContext.resolveExisting()?.application.liveWindows ?? []).filter { $0.windowScene === self }
    }
    /// The scene's key window (Apple: `keyWindow`, iOS 15).
    public var keyWindow: UIWindow? { windows.last { $0.isKeyWindow } }
    /// How the scene's interface is laid out (Apple: `interfaceOrientation`): portrait, as
    /// the screen's bounds are (Linux turns nothing).
    public var interfaceOrientation: UIInterfaceOrientation { .portrait }

    /// What an app asks of its scene's geometry (Apple: `UIWindowScene.GeometryPreferences`,
    /// iOS 16), given to ``requestGeometryUpdate(_:errorHandler:)``.
    @preconcurrency @MainActor
    open class GeometryPreferences: NSObject {
        /// Preferences that ask for nothing.
        public override init() { super.init() }

        /// An iPhone's or iPad's preferences (Apple: `GeometryPreferences.iOS`): the
        /// orientations the interface may take, as an app's orientation lock asks for them.
        @preconcurrency @MainActor
        open class iOS: GeometryPreferences {
            /// The orientations asked for.
            open var interfaceOrientations: UIInterfaceOrientationMask
            /// Preferences asking for every orientation.
            public override init() {
                interfaceOrientations = .all
                super.init()
            }
            /// Preferences asking for `interfaceOrientations`.
            public init(interfaceOrientations: UIInterfaceOrientationMask) {
                self.interfaceOrientations = interfaceOrientations
                super.init()
            }
        }
    }

    /// The preferences of the latest ``requestGeometryUpdate(_:errorHandler:)``, as the app
    /// asked for them (none until it asks).
    public private(set) var requestedGeometryPreferences: GeometryPreferences?

    /// Asks the system to change the scene's geometry (Apple: iOS 16), as an app delegate's
    /// orientation lock does. Linux has no screen to turn: the interface stays portrait
    /// (``interfaceOrientation``). A request whose orientations include portrait is met as it
    /// stands; one that excludes it is denied: `errorHandler` gets
    /// `UISceneError.Code.geometryRequestDenied` on the main queue, as iOS tells a
    /// request it does not grant. The preferences are kept
    /// (``requestedGeometryPreferences``).
    @preconcurrency
    public func requestGeometryUpdate(_ geometryPreferences: GeometryPreferences, errorHandler: (@MainActor @Sendable (any Error) -> Void)? = nil) {
        requestedGeometryPreferences = geometryPreferences
        guard let asked = (geometryPreferences as? GeometryPreferences.iOS)?.interfaceOrientations,
              !asked.contains(.portrait), let errorHandler else { return }
        DispatchQueue.main.async {
            MainActor.assumeIsolated { errorHandler(UISceneError(.geometryRequestDenied)) }
        }
    }
}

/// An error of a scene's request (Apple: `UISceneError`, domain `UISceneErrorDomain`).
public struct UISceneError: CustomNSError, Hashable, Sendable {
    /// What went wrong, with Apple's numbers (an open C enum, as Apple's: a `switch` needs
    /// its `@unknown default`).
    public typealias Code = UISceneErrorCode

    /// The error's code.
    public let code: Code
    /// An error of `code`.
    public init(_ code: Code) { self.code = code }

    /// `UISceneErrorDomain`.
    public static var errorDomain: String { "UISceneErrorDomain" }
    /// The code's number.
    public var errorCode: Int { code.rawValue }
    /// A description of the code.
    public var errorUserInfo: [String: Any] {
        let description = switch code {
        case .multipleScenesNotSupported: "The app does not support multiple scenes."
        case .requestDenied: "The request was denied."
        case .geometryRequestUnsupported: "The geometry request is invalid or unsupported."
        case .geometryRequestDenied: "The geometry request was denied: Linux keeps the interface in portrait."
        default: "Scene error \(code.rawValue)."
        }
        return [NSLocalizedDescriptionKey: description]
    }

    /// `Code.multipleScenesNotSupported`.
    public static var multipleScenesNotSupported: Code { .multipleScenesNotSupported }
    /// `Code.requestDenied`.
    public static var requestDenied: Code { .requestDenied }
    /// `Code.geometryRequestUnsupported`.
    public static var geometryRequestUnsupported: Code { .geometryRequestUnsupported }
    /// `Code.geometryRequestDenied`.
    public static var geometryRequestDenied: Code { .geometryRequestDenied }
}

/// The session of a scene (Apple: `UISceneSession`).
@preconcurrency @MainActor
open class UISceneSession: NSObject {
    /// A session's role (Apple: `UISceneSession.Role`).
    public struct Role: Hashable, RawRepresentable, Sendable {
        /// The role's name.
        public let rawValue: String
        /// A role by name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A role by name.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        /// The app's main windows: `UIWindowSceneSessionRoleApplication`.
        public static let windowApplication = Role("UIWindowSceneSessionRoleApplication")
    }

    /// The session's role.
    public let role: Role
    /// The configuration the scene connected with.
    public let configuration: UISceneConfiguration
    /// An identifier for the session.
    public let persistentIdentifier: String
    /// The session's scene, while connected.
    public internal(set) weak var scene: UIScene?

    /// A session of `role` with `configuration`.
    public init(role: Role, configuration: UISceneConfiguration) {
        self.role = role
        self.configuration = configuration
        persistentIdentifier = UUID().uuidString
        super.init()
    }
}

/// How a scene is created (Apple: `UISceneConfiguration`). Made with a name, it takes the
/// delegate class of the manifest's scene configuration of that name and role
/// (`UIApplicationSceneManifest`), as iOS reads Info.plist; `delegateClass` may be set.
@preconcurrency @MainActor
open class UISceneConfiguration: NSObject {
    /// The configuration's name.
    public let name: String?
    /// The role of its sessions.
    public let role: UISceneSession.Role
    /// The scene delegate's class: set it, or name it in the manifest.
    public var delegateClass: AnyClass?
    /// The scene's class (a ``UIWindowScene`` when `nil`).
    public var sceneClass: AnyClass?

    /// A configuration named `name` for `sessionRole`. Its delegate class, unless set, is
    /// the manifest's for that name (read when the scene connects).
    public init(name: String?, sessionRole: UISceneSession.Role) {
        self.name = name
        role = sessionRole
        super.init()
    }

    /// The manifest's `UISceneDelegateClassName` for this configuration, as written: the
    /// entry of its name, else (as iOS takes a lone unnamed configuration) the first.
    func manifestDelegateClassName(in manifest: AppManifest) -> String? {
        guard role == .windowApplication else { return nil }
        let configurations = manifest.sceneConfigurations
        return (configurations.first { $0.name == name } ?? configurations.first)?.delegateClassName
    }
}

/// What a scene's delegate hears (Apple: `UISceneDelegate`). Every method has a default that
/// does nothing, as Apple's are optional; the system calls them on the main actor.
@preconcurrency @MainActor
public protocol UISceneDelegate: AnyObject {
    /// The scene connected (the user started the app).
    func scene(_ scene: UIScene, willConnectTo session: UISceneSession, options connectionOptions: UIScene.ConnectionOptions)
    /// The scene was released.
    func sceneDidDisconnect(_ scene: UIScene)
    /// The scene became active.
    func sceneDidBecomeActive(_ scene: UIScene)
    /// The scene is about to stop being active.
    func sceneWillResignActive(_ scene: UIScene)
    /// The scene is about to come to the foreground.
    func sceneWillEnterForeground(_ scene: UIScene)
    /// The scene is in the background (a good moment to schedule a refresh).
    func sceneDidEnterBackground(_ scene: UIScene)
    /// The scene is asked to open URLs; never called on Linux (no app opens another).
    func scene(_ scene: UIScene, openURLContexts URLContexts: Set<UIOpenURLContext>)
}

// Apple's methods are optional: each default does nothing.
extension UISceneDelegate {
    /// Does nothing (Apple's is optional).
    public func scene(_ scene: UIScene, willConnectTo session: UISceneSession, options connectionOptions: UIScene.ConnectionOptions) {}
    /// Does nothing (Apple's is optional).
    public func sceneDidDisconnect(_ scene: UIScene) {}
    /// Does nothing (Apple's is optional).
    public func sceneDidBecomeActive(_ scene: UIScene) {}
    /// Does nothing (Apple's is optional).
    public func sceneWillResignActive(_ scene: UIScene) {}
    /// Does nothing (Apple's is optional).
    public func sceneWillEnterForeground(_ scene: UIScene) {}
    /// Does nothing (Apple's is optional).
    public func sceneDidEnterBackground(_ scene: UIScene) {}
    /// Does nothing (Apple's is optional; never called on Linux).
    public func scene(_ scene: UIScene, openURLContexts URLContexts: Set<UIOpenURLContext>) {}
}

/// A window scene's delegate (Apple: `UIWindowSceneDelegate`), with its `window`.
@preconcurrency @MainActor
public protocol UIWindowSceneDelegate: UISceneDelegate {
    /// The scene's window (Linux draws none).
    var window: UIWindow? { get set }
}

extension UIWindowSceneDelegate {
    public var window: UIWindow? {
        get { nil }
        set {}
    }
}

extension BGApplication {
    /// Connects the app's scene, as iOS does when the user starts a scene-based app: asks
    /// the delegate for the configuration, creates the scene delegate of its class (or the
    /// manifest's; `$(PRODUCT_MODULE_NAME)` is the app delegate's module), tells it the
    /// scene will connect and enter the foreground. Returns the scene, or `nil` when the app
    /// declares no scene delegate (it is then told nothing: the app delegate is).
    @MainActor
    func connectScene(for delegate: any UIApplicationDelegate) -> UIScene? {
        let options = UIScene.ConnectionOptions()
        let probe = UISceneSession(role: .windowApplication, configuration: UISceneConfiguration(name: nil, sessionRole: .windowApplication))
        let configuration = delegate.application(self, configurationForConnecting: probe, options: options)
        // The module is the first part of the delegate type's full name. Not through
        // `NSStringFromClass`, which stops the program for a class that is not at the top
        // level of its file (a `private` delegate, one nested in a type), where Apple's
        // names it: an outside probe's test delegate was such a class.
        let module = String(reflecting: type(of: delegate)).split(separator: ".").first.map(String.init) ?? ""
        /// The configured scene delegate cannot be made: said, and the app delegate is told
        /// of the app's states instead (``sceneDelegateCouldNotBeMade``), so work scheduled
        /// there still runs.
        func cannotConnect(_ why: String) -> UIScene? {
            sceneDelegateCouldNotBeMade = true
            requiredContext.driver.log(.error, app: requiredContext.app, "\(why): no scene connects, and the app delegate is told of the app's states instead")
            return nil
        }
        var delegateClass: AnyClass? = configuration.delegateClass
        if delegateClass == nil, let written = configuration.manifestDelegateClassName(in: requiredContext.manifest) {
            let name = written.replacingOccurrences(of: "$(PRODUCT_MODULE_NAME)", with: module)
            delegateClass = NSClassFromString(name) ?? NSClassFromString(module + "." + name)
            if delegateClass == nil {
                return cannotConnect("the manifest's UISceneDelegateClassName '\(written)' names no class of this program (looked for '\(name)')")
            }
        }
        guard let delegateClass else { return nil }
        // Made as iOS makes it, by its `init()` (``ObjectMaking``): a scene delegate derives
        // from UIResponder or, often in SwiftUI apps, from NSObject. A Swift class of neither
        // has no entry for `init()` the runtime can find.
        guard let objectClass = delegateClass as? NSObject.Type else {
            return cannotConnect("the scene delegate \(NSStringFromClass(delegateClass)) cannot be created: it does not derive from NSObject (class SceneDelegate: UIResponder, UIWindowSceneDelegate)")
        }
        // Asked before the object is made: making it runs the app's `init()`.
        guard objectClass is any UISceneDelegate.Type else {
            return cannotConnect("\(NSStringFromClass(objectClass)) is not a UISceneDelegate")
        }
        let sceneDelegate = ObjectMaking.make(objectClass) as! any UISceneDelegate
        let session = UISceneSession(role: .windowApplication, configuration: configuration)
        let sceneType = (configuration.sceneClass as? UIScene.Type) ?? UIWindowScene.self
        let scene = sceneType.init(session: session, connectionOptions: options)
        session.scene = scene
        scene.delegate = sceneDelegate
        sceneDelegate.scene(scene, willConnectTo: session, options: options)
        queueSceneNotification(UIScene.willConnectNotification, of: scene)
        return scene
    }
}

// Not `CustomStringConvertible`: Apple's imported enum is not, and an app that adds the
// conformance would get "redundant conformance", an error.
extension UISceneActivationState {
    /// The state's name as Swift spells it (`"foregroundActive"`; `"state 7"` for a value
    /// without a name), for this package's messages.
    var name: String {
        switch self {
        case .unattached: "unattached"
        case .foregroundActive: "foregroundActive"
        case .foregroundInactive: "foregroundInactive"
        case .background: "background"
        default: "state \(rawValue)"
        }
    }
}
