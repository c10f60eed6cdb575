// UIKit's enums as iOS declares them: C enums that Swift imports as non-frozen (open)
// enums, so `switch` statements written for iOS compile here exactly as there: `default:`
// and `@unknown default:` without a warning, a switch over the known cases alone with the
// warning (Swift 5) or error (Swift 6) Apple's SDK gives. docs/porting.md, "Enums in switch".
#ifndef CUIKITTYPES_H
#define CUIKITTYPES_H

#define BGTASK_OPEN_ENUM enum __attribute__((enum_extensibility(open)))

/// The state of an app (Apple: `UIApplication.State`, `BGApplication.State` here).
typedef BGTASK_OPEN_ENUM UIApplicationState : long {
    /// In the foreground, receiving events.
    UIApplicationStateActive = 0,
    /// In the foreground, not receiving events (launching, or leaving the foreground).
    UIApplicationStateInactive = 1,
    /// In the background (or suspended).
    UIApplicationStateBackground = 2,
} UIApplicationState;

/// Whether the app may run in the background (Apple: `UIBackgroundRefreshStatus`).
typedef BGTASK_OPEN_ENUM UIBackgroundRefreshStatus : long {
    /// Restricted by the system (no store: the scheduler cannot schedule).
    UIBackgroundRefreshStatusRestricted = 0,
    /// The user turned Background App Refresh off for this app.
    UIBackgroundRefreshStatusDenied = 1,
    /// Available.
    UIBackgroundRefreshStatusAvailable = 2,
} UIBackgroundRefreshStatus;

/// What a background fetch found (Apple: `UIBackgroundFetchResult`), passed to the
/// completion handler of `setBackgroundFetchHandler(_:)`.
typedef BGTASK_OPEN_ENUM UIBackgroundFetchResult : unsigned long {
    /// New data was downloaded (the run succeeded).
    UIBackgroundFetchResultNewData = 0,
    /// There was nothing new (the run succeeded).
    UIBackgroundFetchResultNoData = 1,
    /// The fetch failed (the run is recorded as failed).
    UIBackgroundFetchResultFailed = 2,
} UIBackgroundFetchResult;

#endif
