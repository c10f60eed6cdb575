// The scheduler's value types (AppID, PendingRequest, RunRecord, Conditions...) appear in
// this module's public API, but are not re-exported: an app that imports BackgroundTasks
// (or UIKit, SwiftUI) sees Apple's names and this package's few, not the engine's 107
// types, which would make an app's own `Conditions` or `RetryPolicy` in another of its
// modules ambiguous (an outside probe: a Mastodon client's own `AppContext` in every file that
// imported UIKit). Code that configures the scheduler imports SchedulerCore (a product).
import SchedulerCore
// Apple's BackgroundTasks module re-exports Foundation: iOS code that imports only
// BackgroundTasks uses Date, TimeInterval, NSError, NotificationCenter... (docs/porting.md).
@_exported import Foundation
// Apple's Foundation re-exports Combine (publishers, `ObservableObject`, `@Published`): a
// model file that imports Foundation declares `class Store: ObservableObject` and
// subscribes with `sink` (Sources/Combine; docs/porting.md, "Combine"). Combine re-exports
// FoundationNetworking, so URLSession comes with it, as with Apple's Foundation: a refresh
// handler that imports Foundation and BackgroundTasks fetches with `URLSession.shared`.
// Every program linking BackgroundTasks so loads libcurl, bgtaskd and bgtask too (measured
// on a minimal program with and without the import: about 7 ms more at start and 1.2 MB
// more private memory; the Swift driver names autolinked libraries before any
// `--as-needed` a package can pass, so they cannot drop it).
@_exported import Combine
// What Apple's Foundation brings beside it (Combine, Observation, os_unfair_lock, Dispatch's
// time constants, `ProcessInfo()`): Sources/FoundationCompat.
@_exported import FoundationCompat
// UIKit's enums (`UIApplicationState`, `UIBackgroundRefreshStatus`, `UIBackgroundFetchResult`)
// are C enums, as on iOS: see Sources/CUIKitTypes.
@_exported import CUIKitTypes
// `os_unfair_lock`, which Apple's Foundation brings with Darwin (Sources/COSLock): a class
// guarding its state with one compiles where it imports Foundation and BackgroundTasks (or
// UIKit), as on iOS.
@_exported import COSLock

/// Apple's documented Swift signature of `register(forTaskWithIdentifier:using:launchHandler:)`
/// names the queue `dispatch_queue_t?`, which Darwin's Dispatch makes an alias of
/// `DispatchQueue`; apps that wrap the scheduler behind a protocol copy that spelling.
public typealias dispatch_queue_t = DispatchQueue
