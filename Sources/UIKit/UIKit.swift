// `import UIKit`, as every iOS app delegate begins, on Linux: the part of UIKit that
// background execution needs (UIApplication and its delegate, background assertions,
// scenes; docs/porting.md, "Imports"), which the BackgroundTasks module defines, and
// URLSession (BackgroundTasks brings FoundationNetworking), view controllers, windows
// and colours kept without a screen (ViewControllers.swift), and a pasteboard kept in the
// process (Pasteboard.swift). Linux draws nothing: labels,
// tables, gestures and the rest of UIKit's interface are not here.
@_exported import BackgroundTasks
// The Clang module UIKit (Sources/CUIKitModuleMap), which this one overlays as Apple's
// overlays do: it declares the C entry point of `@UIApplicationMain` (ApplicationMainEntry.swift).
@_exported import UIKit
// On iOS `import UIKit` brings UserNotifications too: app delegates that are the
// notification center's delegate import UIKit alone (docs/porting.md, "Local notifications").
@_exported import UserNotifications
