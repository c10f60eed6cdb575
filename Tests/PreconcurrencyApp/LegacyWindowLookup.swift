// The key window as code written before scenes finds it (Swift 5 mode): through
// `UIApplication.shared.keyWindow` (deprecated in iOS 13) or `windows` (deprecated in iOS 15),
// which Xcode warns about and compiles; so does this package (the deprecation warnings stay
// warnings in this target).
import BackgroundTasks
import UIKit

/// The root controller of the key window, or of the first window, from a plain function (not
/// main-actor), as code written before concurrency reads it: a warning, as in Xcode.
public func legacyRootViewController() -> UIViewController? {
    UIApplication.shared.keyWindow?.rootViewController ?? UIApplication.shared.windows.first?.rootViewController
}

/// Whether a pre-iOS 10 local notification launched the app (a deprecated key, warned about).
public func launchedByLocalNotification(_ options: [UIApplication.LaunchOptionsKey: Any]?) -> Bool {
    options?[.localNotification] != nil
}
