import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// What iOS code takes from Apple's Foundation beside background work and
// swift-corelibs-foundation lacks: app-group containers, the directory URLs of iOS 16,
// process activities, the Mac-runtime flags and the app-extension host's notification
// names. Each function and property is `@_disfavoredOverload`, so that when a later
// Foundation brings its own, its own is taken; a type (`ProcessInfo.ActivityOptions`) cannot
// be: a Foundation that declares it too makes the name ambiguous, and this one must then go
// (docs/porting.md, "Foundation beside the API").

extension FileManager {
    /// The shared container of an app group (Apple:
    /// `containerURL(forSecurityApplicationGroupIdentifier:)`), created if missing (0700), as
    /// iOS creates it: `$XDG_DATA_HOME/bgtask/app-groups/<group>/`, else
    /// `~/.local/share/bgtask/app-groups/<group>/`. Every process of the user that names the
    /// group shares it, as an app and its extensions do on iOS (Linux has no entitlements to
    /// check). `nil` for an identifier that cannot name a directory (empty, over 255 bytes,
    /// `.` or `..`, or a character other than letters, digits, `.`, `-` and `_`), when neither
    /// `XDG_DATA_HOME` nor `HOME` says where, or when the directory cannot be created, as iOS
    /// gives `nil` for a group the app does not belong to.
    @_disfavoredOverload
    public func containerURL(forSecurityApplicationGroupIdentifier groupIdentifier: String) -> URL? {
        AppGroupContainer.url(for: groupIdentifier, environment: ProcessInfo.processInfo.environment, fileManager: self)
    }
}

/// Where app groups' shared containers live.
enum AppGroupContainer {
    /// The container of `group` (created), or `nil` (see
    /// `FileManager.containerURL(forSecurityApplicationGroupIdentifier:)`).
    static func url(for group: String, environment: [String: String], fileManager: FileManager) -> URL? {
        guard isValid(group), let base = dataHome(environment) else { return nil }
        let directory = base.appendingPathComponent("bgtask/app-groups/\(group)", isDirectory: true)
        do {
            try fileManager.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            return nil
        }
        return directory
    }

    /// Whether `group` can name one directory of its own.
    static func isValid(_ group: String) -> Bool {
        guard !group.isEmpty, group.utf8.count <= 255, group != ".", group != ".." else { return false }
        return group.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "." || scalar == "-" || scalar == "_")
        }
    }

    /// `$XDG_DATA_HOME` when absolute, else `$HOME/.local/share`.
    /// `nil` too when the one used is not valid UTF-8 in this process's environment
    /// (``EnvironmentText``): the path read would name another directory.
    static func dataHome(_ environment: [String: String]) -> URL? {
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            guard EnvironmentText.problem(variable: "XDG_DATA_HOME", value: data) == nil else { return nil }
            return URL(fileURLWithPath: data, isDirectory: true)
        }
        if let home = environment["HOME"], home.hasPrefix("/") {
            guard EnvironmentText.problem(variable: "HOME", value: home) == nil else { return nil }
            return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(".local/share", isDirectory: true)
        }
        return nil
    }
}

extension URL {
    /// The user's documents directory (Apple: `URL.documentsDirectory`, iOS 16): what Linux's
    /// Foundation gives for `.documentDirectory` (`~/Documents`), so that code mixing this
    /// and `FileManager.urls(for:in:)` finds one place.
    @_disfavoredOverload public static var documentsDirectory: URL { userDirectory(.documentDirectory, "Documents") }
    /// The application support directory (Apple: `URL.applicationSupportDirectory`): Linux's
    /// Foundation's (`$XDG_DATA_HOME`, else `~/.local/share`).
    @_disfavoredOverload public static var applicationSupportDirectory: URL { userDirectory(.applicationSupportDirectory, ".local/share") }
    /// The caches directory (Apple: `URL.cachesDirectory`): Linux's Foundation's
    /// (`$XDG_CACHE_HOME`, else `~/.cache`).
    @_disfavoredOverload public static var cachesDirectory: URL { userDirectory(.cachesDirectory, ".cache") }
    /// The downloads directory (Apple: `URL.downloadsDirectory`).
    @_disfavoredOverload public static var downloadsDirectory: URL { userDirectory(.downloadsDirectory, "Downloads") }
    /// The desktop directory (Apple: `URL.desktopDirectory`).
    @_disfavoredOverload public static var desktopDirectory: URL { userDirectory(.desktopDirectory, "Desktop") }
    /// The movies directory (Apple: `URL.moviesDirectory`).
    @_disfavoredOverload public static var moviesDirectory: URL { userDirectory(.moviesDirectory, "Videos") }
    /// The music directory (Apple: `URL.musicDirectory`).
    @_disfavoredOverload public static var musicDirectory: URL { userDirectory(.musicDirectory, "Music") }
    /// The pictures directory (Apple: `URL.picturesDirectory`).
    @_disfavoredOverload public static var picturesDirectory: URL { userDirectory(.picturesDirectory, "Pictures") }

    /// Foundation's directory for `directory`, else `fallback` under the home directory, as
    /// a directory URL (a trailing `/`, as Apple's are: `appending(path:)` then adds below it).
    private static func userDirectory(_ directory: FileManager.SearchPathDirectory, _ fallback: String) -> URL {
        let url = FileManager.default.urls(for: directory, in: .userDomainMask).first
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(fallback)
        return URL(fileURLWithPath: url.path, isDirectory: true)
    }
}

extension NSURL {
    /// A file URL for `path` (Apple's `NSURL.fileURL(withPath:)`, iOS 2: an app writing a
    /// notification attachment to the temporary directory, the eighteenth outside probe;
    /// swift-corelibs-foundation has only `fileURL(withPathComponents:)`): as
    /// `URL(fileURLWithPath:)`, a relative path resolved against the current directory, a
    /// trailing `/` when the path names a directory that exists.
    @_disfavoredOverload public class func fileURL(withPath path: String) -> URL {
        URL(fileURLWithPath: path)
    }

    /// A file URL for `path`, a directory URL (a trailing `/`) when `isDir` (Apple's
    /// `NSURL.fileURL(withPath:isDirectory:)`).
    @_disfavoredOverload public class func fileURL(withPath path: String, isDirectory isDir: Bool) -> URL {
        URL(fileURLWithPath: path, isDirectory: isDir)
    }

    /// A file URL for `path` relative to `baseURL` (Apple's
    /// `NSURL.fileURL(withPath:relativeTo:)`, iOS 9).
    @_disfavoredOverload public class func fileURL(withPath path: String, relativeTo baseURL: URL?) -> URL {
        URL(fileURLWithPath: path, relativeTo: baseURL)
    }

    /// A file URL for `path` relative to `baseURL`, a directory URL when `isDir` (Apple's
    /// `NSURL.fileURL(withPath:isDirectory:relativeTo:)`, iOS 9).
    @_disfavoredOverload public class func fileURL(withPath path: String, isDirectory isDir: Bool, relativeTo baseURL: URL?) -> URL {
        URL(fileURLWithPath: path, isDirectory: isDir, relativeTo: baseURL)
    }
}

extension ProcessInfo {
    /// Whether the iOS app runs on a Mac (Apple: `isiOSAppOnMac`): `false`.
    @_disfavoredOverload public var isiOSAppOnMac: Bool { false }
    /// Whether the app is a Mac Catalyst app (Apple: `isMacCatalystApp`): `false`.
    @_disfavoredOverload public var isMacCatalystApp: Bool { false }

    /// What an activity asks of the system (Apple: `ProcessInfo.ActivityOptions`), with
    /// Apple's values.
    public struct ActivityOptions: OptionSet, Hashable, Sendable {
        /// The bits.
        public let rawValue: UInt64
        /// Options from their bits.
        public init(rawValue: UInt64) { self.rawValue = rawValue }

        /// Keep the display awake.
        public static let idleDisplaySleepDisabled = ActivityOptions(rawValue: 1 << 40)
        /// Keep the system awake.
        public static let idleSystemSleepDisabled = ActivityOptions(rawValue: 1 << 20)
        /// Do not terminate suddenly.
        public static let suddenTerminationDisabled = ActivityOptions(rawValue: 1 << 14)
        /// Do not terminate automatically.
        public static let automaticTerminationDisabled = ActivityOptions(rawValue: 1 << 15)
        /// Track animation.
        public static let animationTrackingEnabled = ActivityOptions(rawValue: 1 << 45)
        /// Track the activity.
        public static let trackingEnabled = ActivityOptions(rawValue: 1 << 46)
        /// Work the user asked for.
        public static let userInitiated = ActivityOptions(rawValue: 0x00FF_FFFF | (1 << 20))
        /// Work the user asked for that lets the system sleep.
        public static let userInitiatedAllowingIdleSystemSleep = ActivityOptions(rawValue: 0x00FF_FFFF & ~(1 << 20))
        /// Work the user did not ask for.
        public static let background = ActivityOptions(rawValue: 0xFF)
        /// Work whose latency matters.
        public static let latencyCritical = ActivityOptions(rawValue: 0xFF_0000_0000)
        /// Work the user is waiting for.
        public static let userInteractive = ActivityOptions(rawValue: 0x00FF_FFFF | (1 << 20) | 0xFF_0000_0000)
    }

    /// Begins an activity (Apple: `beginActivity(options:reason:)`) and returns its token for
    /// ``endActivity(_:)``. On Linux it changes nothing: this package neither holds the
    /// system awake (no sleep inhibitor is taken) nor terminates apps suddenly, and there is no
    /// App Nap to hold off; background time is asked with `beginBackgroundTask` or a
    /// `BGProcessingTask`, as docs/porting.md says.
    @_disfavoredOverload
    public func beginActivity(options: ActivityOptions = [], reason: String) -> any NSObjectProtocol {
        ProcessActivity(options: options, reason: reason)
    }

    /// Ends an activity begun with ``beginActivity(options:reason:)``.
    @_disfavoredOverload
    public func endActivity(_ activity: any NSObjectProtocol) {}

    /// Runs `block` as an activity (Apple: `performActivity(options:reason:using:)`): at once,
    /// on this thread.
    @_disfavoredOverload
    public func performActivity(options: ActivityOptions = [], reason: String, using block: () -> Void) {
        let activity = beginActivity(options: options, reason: reason)
        block()
        endActivity(activity)
    }
}

/// The token of a process activity: what it was begun with, for a debugger's eye.
final class ProcessActivity: NSObject, @unchecked Sendable {
    // @unchecked: both properties are constants set at creation.
    let options: ProcessInfo.ActivityOptions
    let reason: String
    init(options: ProcessInfo.ActivityOptions, reason: String) {
        self.options = options
        self.reason = reason
    }
    override var description: String { "<activity \(reason)>" }
}

extension URLSession {
    /// The session's tasks that have not ended (Apple: `allTasks`, iOS 15): what
    /// `getAllTasks(completionHandler:)` gives, awaited (an expiration handler cancels them).
    @_disfavoredOverload
    public var allTasks: [URLSessionTask] {
        get async {
            await withCheckedContinuation { (continuation: CheckedContinuation<SessionTasks, Never>) in
                getAllTasks { continuation.resume(returning: SessionTasks(tasks: $0)) }
            }.tasks
        }
    }
}

extension URLCache {
    /// A cache keeping its files in `directory` (Apple: `init(memoryCapacity:diskCapacity:directory:)`,
    /// iOS 13): swift-corelibs-foundation's `diskPath:` form with the directory's path.
    @_disfavoredOverload
    public convenience init(memoryCapacity: Int, diskCapacity: Int, directory: URL? = nil) {
        self.init(memoryCapacity: memoryCapacity, diskCapacity: diskCapacity, diskPath: directory?.path)
    }
}

// An app extension's view of its host app (Foundation, iOS 8.2): SDKs that track the app's
// state observe these beside UIApplication's lifecycle notifications, so that the same code
// works inside an extension. Linux has no app extensions: nothing ever posts them, so such
// an observer is simply never called (docs/porting.md, "Lifecycle notifications").
extension NSNotification.Name {
    /// Posted on iOS to an app extension when its host app moves from active to inactive
    /// (Apple: `NSExtensionHostWillResignActive`). Never posted on Linux: there are no app
    /// extensions.
    @_disfavoredOverload
    public static let NSExtensionHostWillResignActive = NSNotification.Name("NSExtensionHostWillResignActiveNotification")
    /// Posted on iOS to an app extension when its host app moves from inactive to active
    /// (Apple: `NSExtensionHostDidBecomeActive`). Never posted on Linux: there are no app
    /// extensions.
    @_disfavoredOverload
    public static let NSExtensionHostDidBecomeActive = NSNotification.Name("NSExtensionHostDidBecomeActiveNotification")
    /// Posted on iOS to an app extension when its host app begins running in the background
    /// (Apple: `NSExtensionHostDidEnterBackground`). Never posted on Linux: there are no app
    /// extensions.
    @_disfavoredOverload
    public static let NSExtensionHostDidEnterBackground = NSNotification.Name("NSExtensionHostDidEnterBackgroundNotification")
    /// Posted on iOS to an app extension when its host app begins running in the foreground
    /// (Apple: `NSExtensionHostWillEnterForeground`). Never posted on Linux: there are no app
    /// extensions.
    @_disfavoredOverload
    public static let NSExtensionHostWillEnterForeground = NSNotification.Name("NSExtensionHostWillEnterForegroundNotification")
}

/// A session's tasks, handed from Foundation's queue to the awaiting code. @unchecked
/// Sendable: URLSessionTask is thread-safe (its state is behind Foundation's own lock) and
/// the array is not changed after it is made.
struct SessionTasks: @unchecked Sendable {
    let tasks: [URLSessionTask]
}
