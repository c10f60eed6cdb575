// What Apple's Foundation brings to an iOS file that swift-corelibs-foundation does not, in
// one module that every framework module of this package re-exports (BackgroundTasks, and
// through it UIKit and SwiftUI; os and OSLog; Network; UserNotifications; WidgetKit): on iOS
// each of those frameworks imports Foundation, so a file that imports any of them has all of
// this (docs/porting.md, "Imports"). A file that imports Foundation alone gets none of the
// types, globals and macros (only the toolchain's Foundation is imported then); the
// members and conformances (`ProcessInfo()`, `%@` arguments) reach it once another file of its
// target imports one of the package's modules.

// Apple's Foundation re-exports Combine: a model that imports Foundation and Network declares
// `final class NetworkState: ObservableObject` with `@Published` properties (found by an
// outside compile probe in a public app's path monitor). Sources/Combine.
@_exported import Combine
// And the Observation macro: public apps declare `@Observable` models in files that import
// only Foundation or OSLog (the toolchain ships the module and its macro plugin on Linux).
@_exported import Observation
// `os_unfair_lock`, which Apple's Foundation brings with Darwin (Sources/COSLock).
@_exported import COSLock
@_exported import Foundation

// MARK: Dispatch's time constants

// Apple's Dispatch declares these (`var NSEC_PER_SEC: UInt64 { get }`), and iOS code writes
// `Task.sleep(nanoseconds: 2 * NSEC_PER_SEC)` and `DispatchTime` arithmetic with them. Linux's
// libdispatch defines them in its C header, which its Swift module does not re-export.

/// Nanoseconds in a second (Apple's Dispatch: `NSEC_PER_SEC`).
public var NSEC_PER_SEC: UInt64 { 1_000_000_000 }
/// Nanoseconds in a millisecond (Apple's Dispatch: `NSEC_PER_MSEC`).
public var NSEC_PER_MSEC: UInt64 { 1_000_000 }
/// Microseconds in a second (Apple's Dispatch: `USEC_PER_SEC`).
public var USEC_PER_SEC: UInt64 { 1_000_000 }
/// Nanoseconds in a microsecond (Apple's Dispatch: `NSEC_PER_USEC`).
public var NSEC_PER_USEC: UInt64 { 1_000 }
/// Milliseconds in a second (Darwin's `MSEC_PER_SEC`, beside the others in its headers).
public var MSEC_PER_SEC: UInt64 { 1_000 }

// MARK: ProcessInfo()

/// Lets `ProcessInfo()` compile as with Apple's Foundation, where `ProcessInfo` inherits
/// `NSObject`'s public `init()`: swift-corelibs-foundation's is internal, and a protocol
/// extension may declare an initializer that assigns `self`. Not for conforming to: only
/// `ProcessInfo` adopts it.
public protocol _ProcessInfoInitializing {}

extension _ProcessInfoInitializing where Self: ProcessInfo {
    /// The process's information, as `ProcessInfo.processInfo` (Apple's makes another object
    /// that reads the same process; code such as an SDK's `processInfo: ... = ProcessInfo()`
    /// only calls its methods). A subclass of `ProcessInfo` cannot be made so: stops the
    /// program, naming it.
    public init() {
        guard let shared = ProcessInfo.processInfo as? Self else {
            fatalError("ProcessInfo(): \(Self.self) is a subclass of ProcessInfo, which cannot be created on Linux (swift-corelibs-foundation's initializer is internal); use ProcessInfo.processInfo")
        }
        self = shared
    }
}

extension ProcessInfo: _ProcessInfoInitializing {}

// MARK: The Objective-C runtime's functions that Swift code calls

/// Runs `body` and returns what it returns (Apple's ObjectiveC: `autoreleasepool(invoking:)`,
/// which drains the objects autoreleased meanwhile: upload loops read each chunk inside
/// one). Linux has no autorelease pools: Swift frees objects when their last reference goes.
public func autoreleasepool<Result>(invoking body: () throws -> Result) rethrows -> Result {
    try body()
}

/// What ``objc_sync_enter(_:)`` and ``objc_sync_exit(_:)`` return when they succeed (Apple:
/// `OBJC_SYNC_SUCCESS`).
public var OBJC_SYNC_SUCCESS: Int32 { 0 }
/// What ``objc_sync_exit(_:)`` returns for a thread that does not hold the object's lock
/// (Apple: `OBJC_SYNC_NOT_OWNING_THREAD_ERROR`).
public var OBJC_SYNC_NOT_OWNING_THREAD_ERROR: Int32 { -1 }

/// Takes the recursive lock of `object` (Apple's ObjectiveC: `objc_sync_enter`, what
/// `@synchronized` compiles to; Swift code writes `objc_sync_enter(self); defer {
/// objc_sync_exit(self) }` around shared state): a thread that holds it may take it again,
/// another waits. One lock per object (its identity: a class instance, or a class), made when
/// first taken and dropped when no thread holds or waits for it. A value that is not an
/// object has no identity: nothing is locked, as Apple's does with `nil`.
@discardableResult
public func objc_sync_enter(_ object: Any) -> Int32 {
    guard let key = ObjectSynchronization.key(of: object) else { return OBJC_SYNC_SUCCESS }
    ObjectSynchronization.enter(key)
    return OBJC_SYNC_SUCCESS
}

/// Releases the lock ``objc_sync_enter(_:)`` took once (Apple's ObjectiveC: `objc_sync_exit`);
/// ``OBJC_SYNC_NOT_OWNING_THREAD_ERROR`` when the calling thread does not hold it.
@discardableResult
public func objc_sync_exit(_ object: Any) -> Int32 {
    guard let key = ObjectSynchronization.key(of: object) else { return OBJC_SYNC_SUCCESS }
    return ObjectSynchronization.exit(key) ? OBJC_SYNC_SUCCESS : OBJC_SYNC_NOT_OWNING_THREAD_ERROR
}

// MARK: Core Foundation's clock

// Apple's Foundation brings Core Foundation's types and functions, and iOS code times its
// background work with them (`let start = CFAbsoluteTimeGetCurrent()`, a background-task
// assertion checking `backgroundTimeRemaining` at most once a second). swift-corelibs-foundation
// keeps Core Foundation inside itself.

/// Seconds since 00:00:00 UTC on 1 January 2001 (Apple's Core Foundation: `CFAbsoluteTime`).
public typealias CFAbsoluteTime = Double
/// An interval in seconds (Apple's Core Foundation: `CFTimeInterval`).
public typealias CFTimeInterval = Double

/// The current instant as ``CFAbsoluteTime`` (Apple's Core Foundation:
/// `CFAbsoluteTimeGetCurrent()`): the wall clock, as `Date().timeIntervalSinceReferenceDate`
/// reads it, so it moves when the system's time is set, as Apple's does.
public func CFAbsoluteTimeGetCurrent() -> CFAbsoluteTime {
    Date().timeIntervalSinceReferenceDate
}

/// Seconds from 1 January 1970 to 1 January 2001 (Apple's Core Foundation:
/// `kCFAbsoluteTimeIntervalSince1970`).
public var kCFAbsoluteTimeIntervalSince1970: CFTimeInterval { 978_307_200 }
/// Seconds from 1 January 1904 to 1 January 2001 (Apple's Core Foundation:
/// `kCFAbsoluteTimeIntervalSince1904`).
public var kCFAbsoluteTimeIntervalSince1904: CFTimeInterval { 3_061_152_000 }
