import Foundation
import Synchronization

// `NSException` and the uncaught-exception handler, which swift-corelibs-foundation lacks
// (it has `NSExceptionName` only): crash reporters and analytics SDKs install a handler to
// flush what they hold before the app ends, and SDK code raises `NSException` for a broken
// invariant (docs/porting.md, "Foundation beside the API"). Linux has no Objective-C
// exceptions: nothing can catch one, so raising ends the process, after the handler, as an
// uncaught exception ends an iOS app. Swift's own runtime errors (`fatalError`, a forced
// unwrap of nil) do not pass through the handler, on iOS either.

/// An exceptional condition that ends the app when raised (Apple: `NSException`). Raising
/// calls the handler set with `NSSetUncaughtExceptionHandler`, then stops the process with
/// iOS's words, "Terminating app due to uncaught exception".
///
/// @unchecked Sendable: every stored property is a constant set at creation.
open class NSException: NSObject, NSCopying, @unchecked Sendable {
    private let exceptionName: NSExceptionName
    private let exceptionReason: String?
    private let exceptionUserInfo: [AnyHashable: Any]?
    private let stack: [String]

    /// An exception named `name`, explained by `reason`, carrying `userInfo` (Apple:
    /// `init(name:reason:userInfo:)`). The call stack is taken here, so that the handler sees
    /// where it was made.
    public init(name aName: NSExceptionName, reason aReason: String?, userInfo aUserInfo: [AnyHashable: Any]? = nil) {
        exceptionName = aName
        exceptionReason = aReason
        exceptionUserInfo = aUserInfo
        stack = Thread.callStackSymbols
        super.init()
    }

    /// The exception's name (Apple: `name`).
    open var name: NSExceptionName { exceptionName }
    /// Why it was raised, for a person (Apple: `reason`).
    open var reason: String? { exceptionReason }
    /// What the raiser attached (Apple: `userInfo`).
    open var userInfo: [AnyHashable: Any]? { exceptionUserInfo }
    /// The call stack where the exception was made, one frame a line (Apple:
    /// `callStackSymbols`).
    open var callStackSymbols: [String] { stack }
    /// The return addresses of that stack (Apple: `callStackReturnAddresses`), as Foundation's
    /// `Thread.callStackReturnAddresses` gives them here: none on Linux.
    open var callStackReturnAddresses: [NSNumber] { [] }

    /// The exception itself, as Apple's (an exception does not change).
    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override var description: String { exceptionReason ?? exceptionName.rawValue }

    /// Raises the exception (Apple: `raise()`): nothing on Linux can catch it, so the
    /// uncaught-exception handler is called, then the process stops as iOS stops an app with
    /// an uncaught exception: the line "*** Terminating app due to uncaught exception 'NAME',
    /// reason: 'REASON'" on standard error, then `abort()` (SIGABRT, which crash reporters'
    /// signal handlers expect). The handler runs once, for the first exception: one raised
    /// in the handler itself stops the process at once, and one raised on another thread
    /// meanwhile waits for good, so the first thread's handler finishes its work (its
    /// `abort()` ends the process).
    open func raise() {
        switch UncaughtExceptionHandler.beginRaising() {
        case .first:
            UncaughtExceptionHandler.current()?(self)
        case .again:
            break
        case .elsewhere:
            while true { pause() }
        }
        let reasonPart = exceptionReason.map { ", reason: '\($0)'" } ?? ""
        // write(2), its result ignored, not FileHandle: corelibs' FileHandle.write traps when
        // standard error is closed, which would end the process by another signal than SIGABRT.
        let line = Array("*** Terminating app due to uncaught exception '\(exceptionName.rawValue)'\(reasonPart)\n".utf8)
        _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
        abort()
    }

    /// Raises an exception named `name` whose reason is `format` filled from `argList` (Apple:
    /// `raise(_:format:arguments:)`).
    open class func raise(_ name: NSExceptionName, format: String, arguments argList: CVaListPointer) {
        NSException(name: name, reason: NSString(format: format, arguments: argList) as String).raise()
    }
}

/// The handler called with an exception nobody caught, just before the app ends (Apple:
/// `NSUncaughtExceptionHandler`). Apple's is a C function, which captures nothing and is
/// called on whichever thread raised; here a `@Sendable` closure says the same to Swift: a
/// function or a closure written for Apple's compiles as it is.
public typealias NSUncaughtExceptionHandler = @Sendable (NSException) -> Void

/// Sets the handler called with an uncaught exception, before the app ends (Apple:
/// `NSSetUncaughtExceptionHandler(_:)`); `nil` removes it. One handler for the process: a
/// crash reporter that chains keeps the previous one (`NSGetUncaughtExceptionHandler()`).
public func NSSetUncaughtExceptionHandler(_ handler: NSUncaughtExceptionHandler?) {
    UncaughtExceptionHandler.set(handler)
}

/// The handler set with `NSSetUncaughtExceptionHandler(_:)`, or `nil` (Apple:
/// `NSGetUncaughtExceptionHandler()`).
public func NSGetUncaughtExceptionHandler() -> NSUncaughtExceptionHandler? {
    UncaughtExceptionHandler.current()
}

/// The process's one uncaught-exception handler.
enum UncaughtExceptionHandler {
    private static let installed = Mutex<NSUncaughtExceptionHandler?>(nil)
    /// The thread raising the first exception (`pthread_self`), 0 while none is.
    private static let raisingThread = Atomic<UInt>(0)

    /// What a raise is: the first of the process, one more on the thread already raising
    /// (from the handler), or one on another thread meanwhile.
    enum Raise { case first, again, elsewhere }

    static func set(_ handler: NSUncaughtExceptionHandler?) {
        installed.withLock { $0 = handler }
    }

    /// The handler, read under the lock and called outside it (it is the app's code).
    static func current() -> NSUncaughtExceptionHandler? {
        installed.withLock { $0 }
    }

    /// Marks this thread as raising, unless a thread already is: the handler runs once (one
    /// that raised would otherwise recurse until the stack overflowed).
    static func beginRaising() -> Raise {
        let me = UInt(pthread_self())  // pthread_t is an unsigned long on Linux
        let (exchanged, original) = raisingThread.compareExchange(expected: 0, desired: me, ordering: .sequentiallyConsistent)
        if exchanged { return .first }
        return original == me ? .again : .elsewhere
    }
}

extension NSExceptionName {
    // The names iOS code raises with and matches on (Apple's values); swift-corelibs-foundation
    // declares only those of NSDecimalNumber and FileHandle. Disfavoured, so a Foundation that
    // declares them is taken first.

    /// A general exception (Apple: `genericException`).
    @_disfavoredOverload public static let genericException = NSExceptionName("NSGenericException")
    /// An index or range out of bounds (Apple: `rangeException`).
    @_disfavoredOverload public static let rangeException = NSExceptionName("NSRangeException")
    /// An argument a method does not take (Apple: `invalidArgumentException`).
    @_disfavoredOverload public static let invalidArgumentException = NSExceptionName("NSInvalidArgumentException")
    /// A broken invariant of the code itself (Apple: `internalInconsistencyException`).
    @_disfavoredOverload public static let internalInconsistencyException = NSExceptionName("NSInternalInconsistencyException")
    /// Memory that could not be allocated (Apple: `mallocException`).
    @_disfavoredOverload public static let mallocException = NSExceptionName("NSMallocException")
    /// An object that could not be reached (Apple: `objectInaccessibleException`).
    @_disfavoredOverload public static let objectInaccessibleException = NSExceptionName("NSObjectInaccessibleException")
    /// An object that is not available (Apple: `objectNotAvailableException`).
    @_disfavoredOverload public static let objectNotAvailableException = NSExceptionName("NSObjectNotAvailableException")
    /// A destination that is no longer valid (Apple: `destinationInvalidException`).
    @_disfavoredOverload public static let destinationInvalidException = NSExceptionName("NSDestinationInvalidException")
    /// An archive that cannot be read (Apple: `inconsistentArchiveException`).
    @_disfavoredOverload public static let inconsistentArchiveException = NSExceptionName("NSInconsistentArchiveException")
    /// A string that could not be converted (Apple: `characterConversionException`).
    @_disfavoredOverload public static let characterConversionException = NSExceptionName("NSCharacterConversionException")
    /// Text that could not be parsed (Apple: `parseErrorException`).
    @_disfavoredOverload public static let parseErrorException = NSExceptionName("NSParseErrorException")
}
