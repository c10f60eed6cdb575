// UIKit's names from before Swift 4.2, which old app delegates still spell. Current Xcode
// refuses them with the new name; so does this package, with the same fix-it, instead of
// "cannot find type in scope" (docs/porting.md, "Imports").
import BackgroundTasks

/// Renamed in Swift 4.2: `UIApplication.LaunchOptionsKey`.
@available(swift, obsoleted: 4.2, renamed: "UIApplication.LaunchOptionsKey")
public typealias UIApplicationLaunchOptionsKey = UIApplication.LaunchOptionsKey

/// Renamed in Swift 4.2: `UIApplication.OpenURLOptionsKey`.
@available(swift, obsoleted: 4.2, renamed: "UIApplication.OpenURLOptionsKey")
public typealias UIApplicationOpenURLOptionsKey = UIApplication.OpenURLOptionsKey

/// Renamed in Swift 4.2: `UIBackgroundTaskIdentifier.invalid`.
@available(swift, obsoleted: 4.2, renamed: "UIBackgroundTaskIdentifier.invalid")
public let UIBackgroundTaskInvalid = UIBackgroundTaskIdentifier.invalid

/// Renamed in Swift 4.2: `UIApplication.backgroundFetchIntervalMinimum`.
@available(swift, obsoleted: 4.2, renamed: "UIApplication.backgroundFetchIntervalMinimum")
public let UIApplicationBackgroundFetchIntervalMinimum = UIApplication.backgroundFetchIntervalMinimum

/// Renamed in Swift 4.2: `UIApplication.backgroundFetchIntervalNever`.
@available(swift, obsoleted: 4.2, renamed: "UIApplication.backgroundFetchIntervalNever")
public let UIApplicationBackgroundFetchIntervalNever = UIApplication.backgroundFetchIntervalNever
