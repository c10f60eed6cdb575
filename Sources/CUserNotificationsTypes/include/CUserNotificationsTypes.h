// UserNotifications' enums as iOS declares them: C enums that Swift imports as non-frozen
// (open) enums, so `switch settings.authorizationStatus { ... @unknown default: ... }`
// compiles here exactly as on iOS, without a warning (docs/porting.md, "Enums in switch").
#ifndef CUSERNOTIFICATIONSTYPES_H
#define CUSERNOTIFICATIONSTYPES_H

#define BGTASK_UN_OPEN_ENUM enum __attribute__((enum_extensibility(open)))

/// Whether the app may post notifications (Apple: `UNAuthorizationStatus`).
typedef BGTASK_UN_OPEN_ENUM UNAuthorizationStatus : long {
    /// The app has not asked yet.
    UNAuthorizationStatusNotDetermined = 0,
    /// The user refused.
    UNAuthorizationStatusDenied = 1,
    /// The user allowed.
    UNAuthorizationStatusAuthorized = 2,
    /// Allowed quietly (the provisional option).
    UNAuthorizationStatusProvisional = 3,
    /// Allowed for a limited time (App Clips).
    UNAuthorizationStatusEphemeral = 4,
} UNAuthorizationStatus;

/// Whether one kind of presentation is on (Apple: `UNNotificationSetting`).
typedef BGTASK_UN_OPEN_ENUM UNNotificationSetting : long {
    /// The device has no such presentation.
    UNNotificationSettingNotSupported = 0,
    /// Off.
    UNNotificationSettingDisabled = 1,
    /// On.
    UNNotificationSettingEnabled = 2,
} UNNotificationSetting;

/// How alerts look (Apple: `UNAlertStyle`).
typedef BGTASK_UN_OPEN_ENUM UNAlertStyle : long {
    /// No alert.
    UNAlertStyleNone = 0,
    /// A banner that goes away by itself.
    UNAlertStyleBanner = 1,
    /// An alert that stays until the user acts.
    UNAlertStyleAlert = 2,
} UNAlertStyle;

/// When previews show (Apple: `UNShowPreviewsSetting`).
typedef BGTASK_UN_OPEN_ENUM UNShowPreviewsSetting : long {
    /// Always.
    UNShowPreviewsSettingAlways = 0,
    /// Only when the device is unlocked.
    UNShowPreviewsSettingWhenAuthenticated = 1,
    /// Never.
    UNShowPreviewsSettingNever = 2,
} UNShowPreviewsSetting;

/// How urgently a notification interrupts (Apple: `UNNotificationInterruptionLevel`).
typedef BGTASK_UN_OPEN_ENUM UNNotificationInterruptionLevel : unsigned long {
    /// Added to the list quietly.
    UNNotificationInterruptionLevelPassive = 0,
    /// Presented at once (the default).
    UNNotificationInterruptionLevelActive = 1,
    /// Breaks through Focus.
    UNNotificationInterruptionLevelTimeSensitive = 2,
    /// Breaks through Focus and the mute switch (an entitlement Apple grants).
    UNNotificationInterruptionLevelCritical = 3,
} UNNotificationInterruptionLevel;

/// The codes of the center's errors (Apple: `UNError.Code`, an `NSError` code of
/// `UNErrorDomain`); `UNError.Code` is this enum.
typedef BGTASK_UN_OPEN_ENUM UNErrorCode : long {
    /// The app is not allowed to post notifications (never asked, or refused).
    UNErrorCodeNotificationsNotAllowed = 1,
    /// An attachment's URL is not a readable file.
    UNErrorCodeAttachmentInvalidURL = 100,
    /// An attachment's type is not one the system shows.
    UNErrorCodeAttachmentUnrecognizedType = 101,
    /// An attachment's file is too large for its type.
    UNErrorCodeAttachmentInvalidFileSize = 102,
    /// An attachment is not in the data store.
    UNErrorCodeAttachmentNotInDataStore = 103,
    /// An attachment could not be moved into the data store.
    UNErrorCodeAttachmentMoveIntoDataStoreFailed = 104,
    /// An attachment's file is corrupt.
    UNErrorCodeAttachmentCorrupt = 105,
    /// The notification's trigger has no date to come.
    UNErrorCodeNotificationInvalidNoDate = 1400,
    /// The notification has no content to show.
    UNErrorCodeNotificationInvalidNoContent = 1401,
    /// The content-providing object is not allowed.
    UNErrorCodeContentProvidingObjectNotAllowed = 1500,
    /// The content-providing object is invalid.
    UNErrorCodeContentProvidingInvalid = 1501,
    /// The badge count is invalid (negative).
    UNErrorCodeBadgeInputInvalid = 1600,
} UNErrorCode;

#endif
