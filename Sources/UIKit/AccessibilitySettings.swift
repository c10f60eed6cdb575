// The device's accessibility and text-size settings, which analytics SDKs put in every event
// they send (TelemetryDeck's default parameters, the seventeenth outside probe): the
// settings a Linux machine gives an app, which has no screen reader, no display
// accommodations and no Dynamic Type. Linux draws nothing, so nothing here changes what is
// shown; the values say what iOS reports on a device where none of them was turned on.
import BackgroundTasks
import Foundation

/// UIKit's accessibility settings (Apple: `UIAccessibility`, a namespace of static
/// properties). Each is `false`: a Linux app has no VoiceOver, Switch Control or display
/// accommodations to read, so it reads what an iOS device with none of them turned on
/// reports. Their change notifications have Apple's names (the constants' own, as
/// `"UIAccessibilityReduceMotionStatusDidChangeNotification"`) and are never posted: the
/// settings never change. Not main-actor (Apple's properties are): they read no state, so
/// code that reads them on the main actor compiles, as on iOS, and so does code elsewhere.
public struct UIAccessibility: Sendable {
    /// Whether VoiceOver is running: `false`.
    public static var isVoiceOverRunning: Bool { false }
    /// Whether Switch Control is running: `false`.
    public static var isSwitchControlRunning: Bool { false }
    /// Whether Reduce Motion is on: `false`.
    public static var isReduceMotionEnabled: Bool { false }
    /// Whether Reduce Motion and Prefer Cross-Fade Transitions are both on: `false`.
    public static var prefersCrossFadeTransitions: Bool { false }
    /// Whether Reduce Transparency is on: `false`.
    public static var isReduceTransparencyEnabled: Bool { false }
    /// Whether Bold Text is on: `false`.
    public static var isBoldTextEnabled: Bool { false }
    /// Whether the Grayscale colour filter is on: `false`.
    public static var isGrayscaleEnabled: Bool { false }
    /// Whether Classic Invert is on: `false`.
    public static var isInvertColorsEnabled: Bool { false }
    /// Whether Increase Contrast is on: `false`.
    public static var isDarkerSystemColorsEnabled: Bool { false }
    /// Whether Differentiate Without Color is on: `false`.
    public static var shouldDifferentiateWithoutColor: Bool { false }
    /// Whether Closed Captions + SDH is on: `false`.
    public static var isClosedCaptioningEnabled: Bool { false }
    /// Whether Mono Audio is on: `false`.
    public static var isMonoAudioEnabled: Bool { false }
    /// Whether Shake to Undo is on: `false` (Linux has no motion sensor to shake).
    public static var isShakeToUndoEnabled: Bool { false }
    /// Whether On/Off Labels is on: `false`.
    public static var isOnOffSwitchLabelsEnabled: Bool { false }
    /// Whether Auto-Play Video Previews is on: `false`.
    public static var isVideoAutoplayEnabled: Bool { false }

    /// VoiceOver started or stopped (never posted).
    public static let voiceOverStatusDidChangeNotification = Notification.Name("UIAccessibilityVoiceOverStatusDidChangeNotification")
    /// Switch Control started or stopped (never posted).
    public static let switchControlStatusDidChangeNotification = Notification.Name("UIAccessibilitySwitchControlStatusDidChangeNotification")
    /// Reduce Motion changed (never posted).
    public static let reduceMotionStatusDidChangeNotification = Notification.Name("UIAccessibilityReduceMotionStatusDidChangeNotification")
    /// Prefer Cross-Fade Transitions changed (never posted; Apple's name has no `Notification`).
    public static let prefersCrossFadeTransitionsStatusDidChange = Notification.Name("UIAccessibilityPrefersCrossFadeTransitionsStatusDidChangeNotification")
    /// Reduce Transparency changed (never posted).
    public static let reduceTransparencyStatusDidChangeNotification = Notification.Name("UIAccessibilityReduceTransparencyStatusDidChangeNotification")
    /// Bold Text changed (never posted).
    public static let boldTextStatusDidChangeNotification = Notification.Name("UIAccessibilityBoldTextStatusDidChangeNotification")
    /// Grayscale changed (never posted).
    public static let grayscaleStatusDidChangeNotification = Notification.Name("UIAccessibilityGrayscaleStatusDidChangeNotification")
    /// Classic Invert changed (never posted).
    public static let invertColorsStatusDidChangeNotification = Notification.Name("UIAccessibilityInvertColorsStatusDidChangeNotification")
    /// Increase Contrast changed (never posted).
    public static let darkerSystemColorsStatusDidChangeNotification = Notification.Name("UIAccessibilityDarkerSystemColorsStatusDidChangeNotification")
    /// Differentiate Without Color changed (never posted).
    public static let differentiateWithoutColorDidChangeNotification = Notification.Name("UIAccessibilityShouldDifferentiateWithoutColorDidChangeNotification")
    /// Closed Captions + SDH changed (never posted).
    public static let closedCaptioningStatusDidChangeNotification = Notification.Name("UIAccessibilityClosedCaptioningStatusDidChangeNotification")
    /// Mono Audio changed (never posted).
    public static let monoAudioStatusDidChangeNotification = Notification.Name("UIAccessibilityMonoAudioStatusDidChangeNotification")
    /// Shake to Undo changed (never posted).
    public static let shakeToUndoDidChangeNotification = Notification.Name("UIAccessibilityShakeToUndoDidChangeNotification")
    /// On/Off Labels changed (never posted).
    public static let onOffSwitchLabelsDidChangeNotification = Notification.Name("UIAccessibilityOnOffSwitchLabelsDidChangeNotification")
    /// Auto-Play Video Previews changed (never posted).
    public static let videoAutoplayStatusDidChangeNotification = Notification.Name("UIAccessibilityVideoAutoplayStatusDidChangeNotification")
}

/// The size of text the user asked for (Apple: `UIContentSizeCategory`, Dynamic Type), with
/// Apple's raw values (`"UICTContentSizeCategoryL"` for ``large``), so an SDK that reports
/// the raw value reports what an iOS device at the default size does. Ordered from
/// ``extraSmall`` to ``accessibilityExtraExtraExtraLarge``, as UIKit's overlay compares them;
/// ``unspecified`` and a raw value not among these come before every known size.
public struct UIContentSizeCategory: RawRepresentable, Hashable, Comparable, Sendable {
    /// The category's name.
    public let rawValue: String
    /// A category by name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// A category by name.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// No size given.
    public static let unspecified = UIContentSizeCategory("_UICTContentSizeCategoryUnspecified")
    /// Extra small.
    public static let extraSmall = UIContentSizeCategory("UICTContentSizeCategoryXS")
    /// Small.
    public static let small = UIContentSizeCategory("UICTContentSizeCategoryS")
    /// Medium.
    public static let medium = UIContentSizeCategory("UICTContentSizeCategoryM")
    /// Large: the default, what a Linux app is given.
    public static let large = UIContentSizeCategory("UICTContentSizeCategoryL")
    /// Extra large.
    public static let extraLarge = UIContentSizeCategory("UICTContentSizeCategoryXL")
    /// Extra extra large.
    public static let extraExtraLarge = UIContentSizeCategory("UICTContentSizeCategoryXXL")
    /// The largest size outside the accessibility sizes.
    public static let extraExtraExtraLarge = UIContentSizeCategory("UICTContentSizeCategoryXXXL")
    /// Accessibility medium.
    public static let accessibilityMedium = UIContentSizeCategory("UICTContentSizeCategoryAccessibilityM")
    /// Accessibility large.
    public static let accessibilityLarge = UIContentSizeCategory("UICTContentSizeCategoryAccessibilityL")
    /// Accessibility extra large.
    public static let accessibilityExtraLarge = UIContentSizeCategory("UICTContentSizeCategoryAccessibilityXL")
    /// Accessibility extra extra large.
    public static let accessibilityExtraExtraLarge = UIContentSizeCategory("UICTContentSizeCategoryAccessibilityXXL")
    /// The largest size.
    public static let accessibilityExtraExtraExtraLarge = UIContentSizeCategory("UICTContentSizeCategoryAccessibilityXXXL")

    /// The known sizes, smallest first.
    private static let ordered: [UIContentSizeCategory] = [
        .extraSmall, .small, .medium, .large, .extraLarge, .extraExtraLarge, .extraExtraExtraLarge,
        .accessibilityMedium, .accessibilityLarge, .accessibilityExtraLarge, .accessibilityExtraExtraLarge,
        .accessibilityExtraExtraExtraLarge,
    ]

    /// Whether the category is one of the accessibility sizes (Apple: `isAccessibilityCategory`).
    public var isAccessibilityCategory: Bool { (Self.ordered.firstIndex(of: self) ?? -1) >= 7 }

    /// Whether `lhs` is the smaller size.
    public static func < (lhs: UIContentSizeCategory, rhs: UIContentSizeCategory) -> Bool {
        (ordered.firstIndex(of: lhs) ?? -1) < (ordered.firstIndex(of: rhs) ?? -1)
    }

    /// Posted when the user changes the text size (never posted: the size does not change here).
    public static let didChangeNotification = Notification.Name("UIContentSizeCategoryDidChangeNotification")
    /// The user-info key of the new category in ``didChangeNotification``.
    public static let newValueUserInfoKey = "UIContentSizeCategoryNewValueKey"
}

extension BGApplication {
    /// The text size the user asked for (Apple: `preferredContentSizeCategory`): ``UIContentSizeCategory/large``,
    /// iOS's default, as a Linux app has no Dynamic Type setting to read. Not main-actor
    /// (the application here is not): it reads no state.
    public var preferredContentSizeCategory: UIContentSizeCategory { .large }
}
