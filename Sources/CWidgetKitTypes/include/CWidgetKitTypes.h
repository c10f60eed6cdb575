// WidgetKit's widget sizes as iOS declares them for Swift: a non-frozen enum, so a `switch`
// ends with `@unknown default:` without a warning (docs/porting.md, "Widgets").
#ifndef CWIDGETKITTYPES_H
#define CWIDGETKITTYPES_H

/// The size and shape of a widget (Apple: `WidgetFamily`).
typedef enum __attribute__((enum_extensibility(open))) WidgetFamily : long {
    /// A small square Home Screen widget.
    WidgetFamilySystemSmall = 0,
    /// A medium Home Screen widget.
    WidgetFamilySystemMedium = 1,
    /// A large Home Screen widget.
    WidgetFamilySystemLarge = 2,
    /// An extra-large widget (iPad).
    WidgetFamilySystemExtraLarge = 3,
    /// A circular Lock Screen widget.
    WidgetFamilyAccessoryCircular = 4,
    /// A rectangular Lock Screen widget.
    WidgetFamilyAccessoryRectangular = 5,
    /// A line of text on the Lock Screen.
    WidgetFamilyAccessoryInline = 6,
} WidgetFamily;

#endif
