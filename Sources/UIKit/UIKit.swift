// `import UIKit`, as every iOS app delegate begins, on Linux: the part of UIKit that
// background execution needs (UIApplication and its delegate, background assertions,
// scenes; docs/porting.md, "Imports"), which the BackgroundTasks module defines, and
// URLSession. Linux draws
// no user interface: views, view controllers and the rest of UIKit are not here.
@_exported import BackgroundTasks
#if canImport(FoundationNetworking)
// On iOS `import UIKit` brings URLSession with Foundation; on Linux it lives in
// FoundationNetworking (libcurl), so that a refresh handler's `URLSession.shared` compiles.
@_exported import FoundationNetworking
#endif
// On iOS `import UIKit` brings UserNotifications too: app delegates that are the
// notification center's delegate import UIKit alone (docs/porting.md, "Local notifications").
@_exported import UserNotifications
