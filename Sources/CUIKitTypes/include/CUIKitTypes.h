// UIKit's enums (and BackgroundTasks' error code) as iOS declares them: C enums that Swift imports as non-frozen (open)
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

/// Where a scene is in its life (Apple: `UIScene.ActivationState`, `UISceneActivationState`).
typedef BGTASK_OPEN_ENUM UISceneActivationState : long {
    /// Not connected, or disconnected.
    UISceneActivationStateUnattached = -1,
    /// In the foreground, receiving events.
    UISceneActivationStateForegroundActive = 0,
    /// In the foreground, not receiving events.
    UISceneActivationStateForegroundInactive = 1,
    /// In the background.
    UISceneActivationStateBackground = 2,
} UISceneActivationState;

/// What the device's battery is doing (Apple: `UIDevice.BatteryState`, `UIDeviceBatteryState`).
typedef BGTASK_OPEN_ENUM UIDeviceBatteryState : long {
    /// Not known: battery monitoring is off, or the machine has no battery.
    UIDeviceBatteryStateUnknown = 0,
    /// On battery, discharging.
    UIDeviceBatteryStateUnplugged = 1,
    /// Plugged in, less than 100 %.
    UIDeviceBatteryStateCharging = 2,
    /// Plugged in, full (or not charging).
    UIDeviceBatteryStateFull = 3,
} UIDeviceBatteryState;

/// What to do with a continued-processing request that cannot start at once (Apple:
/// `BGContinuedProcessingTaskRequest.SubmissionStrategy`,
/// `BGContinuedProcessingTaskRequestSubmissionStrategy`).
typedef BGTASK_OPEN_ENUM BGContinuedProcessingTaskRequestSubmissionStrategy : long {
    /// Refuse the submission with `immediateRunIneligible`.
    BGContinuedProcessingTaskRequestSubmissionStrategyFail = 0,
    /// Queue it behind other continued-processing work (the default).
    BGContinuedProcessingTaskRequestSubmissionStrategyQueue = 1,
} BGContinuedProcessingTaskRequestSubmissionStrategy;

/// The codes of `BGTaskScheduler.Error` (Apple: `BGTaskSchedulerErrorCode`, an
/// `NS_ERROR_ENUM` that Swift imports as the non-frozen `BGTaskScheduler.Error.Code`).
/// Declared here, as on iOS, so that a `switch` over the four codes with `@unknown default:`
/// or `default:` compiles as with Apple's SDK; this project's own `invalidRequest` (100) is
/// a value beyond the known cases (`BGTaskScheduler.Error.Code.invalidRequest`), which such
/// a `default` receives, as it would a code a later iOS adds.
typedef BGTASK_OPEN_ENUM BGTaskSchedulerErrorCode : long {
    /// Background refresh is off for the app, or the system cannot schedule now.
    BGTaskSchedulerErrorCodeUnavailable = 1,
    /// The app already has the maximum number of pending requests of this kind
    /// (1 refresh, 10 processing).
    BGTaskSchedulerErrorCodeTooManyPendingTaskRequests = 2,
    /// The identifier is not in `BGTaskSchedulerPermittedIdentifiers`, the kind's background
    /// mode is missing from `UIBackgroundModes`, or a resource is unsupported.
    BGTaskSchedulerErrorCodeNotPermitted = 3,
    /// A continued-processing request with strategy `.fail` cannot start now.
    BGTaskSchedulerErrorCodeImmediateRunIneligible = 4,
} BGTaskSchedulerErrorCode;

/// The kind of interface the device has (Apple: `UIUserInterfaceIdiom`).
typedef BGTASK_OPEN_ENUM UIUserInterfaceIdiom : long {
    /// Not one of the kinds below: what a Linux machine reports.
    UIUserInterfaceIdiomUnspecified = -1,
    /// An iPhone.
    UIUserInterfaceIdiomPhone = 0,
    /// An iPad.
    UIUserInterfaceIdiomPad = 1,
    /// Apple TV. Named `.tv` for Swift, as Apple's SDK imports it: Swift's importer keeps an
    /// all-capitals case name as written (`.TV`), which `case .tv:` (PostHog's device type,
    /// the seventeenth outside probe) does not find.
    UIUserInterfaceIdiomTV __attribute__((swift_name("tv"))) = 2,
    /// CarPlay.
    UIUserInterfaceIdiomCarPlay = 3,
    /// A Mac.
    UIUserInterfaceIdiomMac = 5,
    /// Apple Vision Pro.
    UIUserInterfaceIdiomVision = 6,
} UIUserInterfaceIdiom;

/// Light or dark appearance (Apple: `UIUserInterfaceStyle`).
typedef BGTASK_OPEN_ENUM UIUserInterfaceStyle : long {
    /// Not chosen.
    UIUserInterfaceStyleUnspecified = 0,
    /// Light.
    UIUserInterfaceStyleLight = 1,
    /// Dark.
    UIUserInterfaceStyleDark = 2,
} UIUserInterfaceStyle;

/// How the device is held (Apple: `UIDeviceOrientation`).
typedef BGTASK_OPEN_ENUM UIDeviceOrientation : long {
    /// Not known (Linux has no orientation sensor).
    UIDeviceOrientationUnknown = 0,
    /// Upright, the home button below.
    UIDeviceOrientationPortrait = 1,
    /// Upside down.
    UIDeviceOrientationPortraitUpsideDown = 2,
    /// On its side, the home button on the right.
    UIDeviceOrientationLandscapeLeft = 3,
    /// On its side, the home button on the left.
    UIDeviceOrientationLandscapeRight = 4,
    /// Flat, face up.
    UIDeviceOrientationFaceUp = 5,
    /// Flat, face down.
    UIDeviceOrientationFaceDown = 6,
} UIDeviceOrientation;

/// How the app's interface is laid out (Apple: `UIInterfaceOrientation`; landscape left
/// is the device's landscape right, as Apple numbers them).
typedef BGTASK_OPEN_ENUM UIInterfaceOrientation : long {
    /// Not known.
    UIInterfaceOrientationUnknown = 0,
    /// Portrait.
    UIInterfaceOrientationPortrait = 1,
    /// Portrait, upside down.
    UIInterfaceOrientationPortraitUpsideDown = 2,
    /// Landscape, the home button on the left.
    UIInterfaceOrientationLandscapeLeft = 4,
    /// Landscape, the home button on the right.
    UIInterfaceOrientationLandscapeRight = 3,
} UIInterfaceOrientation;

/// The direction of the interface's layout (Apple: `UIUserInterfaceLayoutDirection`).
typedef BGTASK_OPEN_ENUM UIUserInterfaceLayoutDirection : long {
    /// Left to right.
    UIUserInterfaceLayoutDirectionLeftToRight = 0,
    /// Right to left.
    UIUserInterfaceLayoutDirectionRightToLeft = 1,
} UIUserInterfaceLayoutDirection;

/// How the status bar appears or goes (Apple: `UIStatusBarAnimation`).
typedef BGTASK_OPEN_ENUM UIStatusBarAnimation : long {
    /// At once.
    UIStatusBarAnimationNone = 0,
    /// Fading.
    UIStatusBarAnimationFade = 1,
    /// Sliding.
    UIStatusBarAnimationSlide = 2,
} UIStatusBarAnimation;

/// How an alert controller shows (Apple: `UIAlertController.Style`).
typedef BGTASK_OPEN_ENUM UIAlertControllerStyle : long {
    /// A sheet of actions from the bottom.
    UIAlertControllerStyleActionSheet = 0,
    /// An alert in the middle.
    UIAlertControllerStyleAlert = 1,
} UIAlertControllerStyle;

/// What an alert's action does (Apple: `UIAlertAction.Style`).
typedef BGTASK_OPEN_ENUM UIAlertActionStyle : long {
    /// An ordinary action.
    UIAlertActionStyleDefault = 0,
    /// Cancels.
    UIAlertActionStyleCancel = 1,
    /// Destroys something.
    UIAlertActionStyleDestructive = 2,
} UIAlertActionStyle;

/// Whether a window's interface is in the foreground and active (Apple:
/// `UIUserInterfaceActiveAppearance`, iOS 14).
typedef BGTASK_OPEN_ENUM UIUserInterfaceActiveAppearance : long {
    /// Not known (a view or controller not in a window).
    UIUserInterfaceActiveAppearanceUnspecified = -1,
    /// In the background, or in the foreground but not active.
    UIUserInterfaceActiveAppearanceInactive = 0,
    /// In the foreground and active.
    UIUserInterfaceActiveAppearanceActive = 1,
} UIUserInterfaceActiveAppearance;

/// What went wrong with a scene's request (Apple: `UISceneError.Code`, open as Apple's C enum).
typedef BGTASK_OPEN_ENUM UISceneErrorCode : long {
    /// The app asked for another scene, and supports only one.
    UISceneErrorCodeMultipleScenesNotSupported = 0,
    /// The request was denied.
    UISceneErrorCodeRequestDenied = 1,
    /// A geometry request that is invalid or unsupported.
    UISceneErrorCodeGeometryRequestUnsupported = 100,
    /// A valid geometry request the system denied (Linux: an orientation other than portrait).
    UISceneErrorCodeGeometryRequestDenied = 101,
} UISceneErrorCode;

/// The system icons of a Home Screen quick action (Apple: `UIApplicationShortcutIcon.IconType`).
typedef BGTASK_OPEN_ENUM UIApplicationShortcutIconType : long {
    UIApplicationShortcutIconTypeCompose = 0,
    UIApplicationShortcutIconTypePlay,
    UIApplicationShortcutIconTypePause,
    UIApplicationShortcutIconTypeAdd,
    UIApplicationShortcutIconTypeLocation,
    UIApplicationShortcutIconTypeSearch,
    UIApplicationShortcutIconTypeShare,
    UIApplicationShortcutIconTypeProhibit,
    UIApplicationShortcutIconTypeContact,
    UIApplicationShortcutIconTypeHome,
    UIApplicationShortcutIconTypeMarkLocation,
    UIApplicationShortcutIconTypeFavorite,
    UIApplicationShortcutIconTypeLove,
    UIApplicationShortcutIconTypeCloud,
    UIApplicationShortcutIconTypeInvitation,
    UIApplicationShortcutIconTypeConfirmation,
    UIApplicationShortcutIconTypeMail,
    UIApplicationShortcutIconTypeMessage,
    UIApplicationShortcutIconTypeDate,
    UIApplicationShortcutIconTypeTime,
    UIApplicationShortcutIconTypeCapturePhoto,
    UIApplicationShortcutIconTypeCaptureVideo,
    UIApplicationShortcutIconTypeTask,
    UIApplicationShortcutIconTypeTaskCompleted,
    UIApplicationShortcutIconTypeAlarm,
    UIApplicationShortcutIconTypeBookmark,
    UIApplicationShortcutIconTypeShuffle,
    UIApplicationShortcutIconTypeAudio,
    UIApplicationShortcutIconTypeUpdate,
} UIApplicationShortcutIconType;

#endif
