import Foundation

// Handoff, universal links and Home Screen quick actions arrive through the same delegates
// that register background tasks, so their types are here for that code to compile
// (docs/porting.md, "User activities and quick actions"). Linux hands an app no activities
// and has no Home Screen: the delegate methods that receive them are never called, and a
// launch or a scene's connection never carries one.

/// The type of activity a universal link continues (Apple: `NSUserActivityTypeBrowsingWeb`).
public let NSUserActivityTypeBrowsingWeb = "NSUserActivityTypeBrowsingWeb"

/// Something the user was doing, to continue elsewhere or later (Apple: `NSUserActivity`, of
/// Foundation). Kept as the app sets it; Linux has no Handoff, Spotlight or Siri to publish
/// it to, so ``becomeCurrent()`` only marks it current.
open class NSUserActivity: NSObject {
    /// An identifier the app gives an activity to delete it later.
    public typealias PersistentIdentifier = String

    /// The kind of activity (a reverse-DNS name the app declares, or
    /// ``NSUserActivityTypeBrowsingWeb``).
    public let activityType: String
    /// What the user sees of it.
    open var title: String?
    /// The state to continue from.
    open var userInfo: [AnyHashable: Any]?
    /// The web page to continue in (a universal link's URL).
    open var webpageURL: URL?
    /// The page that led to ``webpageURL``.
    open var referrerURL: URL?
    /// When it stops being worth continuing.
    open var expirationDate: Date?
    /// Words it is found by.
    open var keywords: Set<String> = []
    /// The ``userInfo`` keys needed to continue it.
    open var requiredUserInfoKeys: Set<String>?
    /// Whether the app should update it before it is sent.
    open var needsSave = false
    /// Whether Handoff may offer it.
    open var isEligibleForHandoff = true
    /// Whether search may index it.
    open var isEligibleForSearch = false
    /// Whether public search may index it.
    open var isEligibleForPublicIndexing = false
    /// Whether Siri may suggest it.
    open var isEligibleForPrediction = false
    /// The app's identifier for it.
    open var persistentIdentifier: PersistentIdentifier?
    /// Which scene it belongs in.
    open var targetContentIdentifier: String?
    /// Told when it is continued or saved (never, on Linux).
    open weak var delegate: (any NSUserActivityDelegate)?
    /// Whether ``becomeCurrent()`` was called and not undone.
    public private(set) var isCurrent = false
    /// Whether ``invalidate()`` was called.
    public private(set) var isInvalidated = false

    /// An activity of `activityType`.
    public init(activityType: String) {
        self.activityType = activityType
        super.init()
    }

    /// Adds `otherDictionary`'s entries to ``userInfo``.
    open func addUserInfoEntries(from otherDictionary: [AnyHashable: Any]) {
        var merged = userInfo ?? [:]
        for (key, value) in otherDictionary { merged[key] = value }
        userInfo = merged
    }

    /// Makes it the current activity.
    open func becomeCurrent() { isCurrent = !isInvalidated }
    /// Makes it no longer current.
    open func resignCurrent() { isCurrent = false }
    /// Ends it for good.
    open func invalidate() {
        isInvalidated = true
        isCurrent = false
    }
}

/// What an activity tells its delegate (Apple: `NSUserActivityDelegate`); never called here.
public protocol NSUserActivityDelegate: NSObjectProtocol {
    /// It is about to be sent: update it.
    func userActivityWillSave(_ userActivity: NSUserActivity)
    /// Another device continued it.
    func userActivityWasContinued(_ userActivity: NSUserActivity)
}

extension NSUserActivityDelegate {
    /// Nothing.
    public func userActivityWillSave(_ userActivity: NSUserActivity) {}
    /// Nothing.
    public func userActivityWasContinued(_ userActivity: NSUserActivity) {}
}

/// An object that restores its state from an activity (Apple: `UIUserActivityRestoring`):
/// what the restoration handler of `application(_:continue:restorationHandler:)` takes.
/// Main-actor, as UIKit's.
@MainActor
public protocol UIUserActivityRestoring: NSObjectProtocol {
    /// Restores the state `activity` carries.
    func restoreUserActivityState(_ activity: NSUserActivity)
}

/// A Home Screen quick action (Apple: `UIApplicationShortcutItem`). Linux has no Home Screen:
/// the app may set ``UIApplication/shortcutItems`` and read them back; none is ever chosen.
///
/// `Sendable`, as Apple's is (a Swift 6 app hands the action its scene delegate received to an
/// actor: an outside compile probe). `@unchecked`: an `NSObject` subclass cannot be checked;
/// its parts are held behind a lock (the mutable subclass changes them); what it hands out is
/// their value at the time (the `userInfo` objects and the target identifier are the app's own
/// references, as Apple's `copy` properties share immutable objects).
open class UIApplicationShortcutItem: NSObject, @unchecked Sendable {
    private struct Parts {
        var type: String
        var localizedTitle: String
        var localizedSubtitle: String?
        var icon: UIApplicationShortcutIcon?
        var userInfo: [String: any NSSecureCoding]?
        var targetContentIdentifier: Any?
    }

    private let parts: Locked<Parts>

    /// The app's name for the action.
    open var type: String { parts.withLock { $0.type } }
    /// Its title.
    open var localizedTitle: String { parts.withLock { $0.localizedTitle } }
    /// Its subtitle.
    open var localizedSubtitle: String? { parts.withLock { $0.localizedSubtitle } }
    /// Its icon.
    open var icon: UIApplicationShortcutIcon? { parts.withLock { $0.icon } }
    /// What the app keeps with it.
    open var userInfo: [String: any NSSecureCoding]? { parts.withLock { $0.userInfo } }
    /// Which scene it opens.
    open var targetContentIdentifier: Any? { parts.withLock { $0.targetContentIdentifier } }

    /// An action with all its parts.
    public init(type: String, localizedTitle: String, localizedSubtitle: String?, icon: UIApplicationShortcutIcon?, userInfo: [String: any NSSecureCoding]? = nil) {
        parts = Locked(Parts(type: type, localizedTitle: localizedTitle, localizedSubtitle: localizedSubtitle, icon: icon, userInfo: userInfo))
        super.init()
    }

    /// An action with a title only.
    public convenience init(type: String, localizedTitle: String) {
        self.init(type: type, localizedTitle: localizedTitle, localizedSubtitle: nil, icon: nil, userInfo: nil)
    }

    fileprivate func set(type: String? = nil, title: String? = nil, subtitle: String?? = nil, icon: UIApplicationShortcutIcon?? = nil,
                         userInfo: [String: any NSSecureCoding]?? = nil, target: Any?? = nil) {
        parts.withLock { parts in
            if let type { parts.type = type }
            if let title { parts.localizedTitle = title }
            if let subtitle { parts.localizedSubtitle = subtitle }
            if let icon { parts.icon = icon }
            if let userInfo { parts.userInfo = userInfo }
            if let target { parts.targetContentIdentifier = target }
        }
    }
}

/// A quick action whose parts can change (Apple: `UIMutableApplicationShortcutItem`).
/// `@unchecked Sendable` as its superclass: its changes go through the superclass's lock.
open class UIMutableApplicationShortcutItem: UIApplicationShortcutItem, @unchecked Sendable {
    /// The app's name for the action.
    open override var type: String {
        get { super.type }
        set { set(type: newValue) }
    }
    /// Its title.
    open override var localizedTitle: String {
        get { super.localizedTitle }
        set { set(title: newValue) }
    }
    /// Its subtitle.
    open override var localizedSubtitle: String? {
        get { super.localizedSubtitle }
        set { set(subtitle: .some(newValue)) }
    }
    /// Its icon.
    open override var icon: UIApplicationShortcutIcon? {
        get { super.icon }
        set { set(icon: .some(newValue)) }
    }
    /// What the app keeps with it.
    open override var userInfo: [String: any NSSecureCoding]? {
        get { super.userInfo }
        set { set(userInfo: .some(newValue)) }
    }
    /// Which scene it opens.
    open override var targetContentIdentifier: Any? {
        get { super.targetContentIdentifier }
        set { set(target: .some(newValue)) }
    }
}

/// A quick action's icon (Apple: `UIApplicationShortcutIcon`). `@unchecked Sendable`: an
/// `NSObject` subclass cannot be checked; it holds one constant of a `Sendable` type.
open class UIApplicationShortcutIcon: NSObject, @unchecked Sendable {
    /// The system's icons: the C enum `UIApplicationShortcutIconType` (CUIKitTypes), open as
    /// Apple's.
    public typealias IconType = UIApplicationShortcutIconType

    /// What the icon is: a system icon, an SF Symbol or an image of the app's.
    public enum Source: Hashable, Sendable {
        case type(IconType)
        case systemImage(String)
        case templateImage(String)
    }

    /// What the icon is.
    public let source: Source

    /// A system icon.
    public init(type: IconType) {
        source = .type(type)
        super.init()
    }
    /// An SF Symbol by name.
    public init(systemImageName: String) {
        source = .systemImage(systemImageName)
        super.init()
    }
    /// An image of the app's by name.
    public init(templateImageName: String) {
        source = .templateImage(templateImageName)
        super.init()
    }
}
