// `import UIKit.UIApplication` alone, as an image-loading library's memory cache writes it
// (Nuke's `Cache.swift`, the seventeenth outside probe): the Clang submodule of
// Sources/CUIKitModuleMap, which loads the Swift module UIKit, in Swift 6 mode with warnings
// as errors. No other import: Foundation and the application come with it.
import UIKit.UIApplication

/// A memory cache that empties when the app is sent to the background, as Nuke's does.
final class SubmoduleMemoryCache: @unchecked Sendable {
    // @unchecked: `entries` is read and written under `lock` only; `token` is set in `init`
    // and read in `deinit`.
    private let lock = NSLock()
    private var entries: [String: Data] = [:]
    private var token: (any NSObjectProtocol)?

    /// A cache emptied when `application` enters the background (Nuke passes `nil`: any).
    init(application: UIApplication?) {
        token = NotificationCenter.default.addObserver(forName: UIApplication.didEnterBackgroundNotification, object: application,
                                                       queue: nil) { [weak self] _ in self?.removeAll() }
    }

    deinit {
        if let token { NotificationCenter.default.removeObserver(token) }
    }

    var count: Int { lock.withLock { entries.count } }

    func set(_ data: Data, for key: String) { lock.withLock { entries[key] = data } }

    func removeAll() { lock.withLock { entries.removeAll() } }
}
