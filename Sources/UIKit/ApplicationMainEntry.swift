// `@UIApplicationMain`, as iOS apps written before Swift 5.3 mark their app delegate, on
// Linux (docs/porting.md, "Imports"). The compiler turns the attribute into a `main` that
// calls two C functions, `NSStringFromClass` on the delegate's class and
// `UIApplicationMain(argc, argv, nil, name)`, the second found in the Clang module UIKit
// (Sources/CUIKitModuleMap). Neither exists on Linux, so they are defined here as C symbols:
// the first gives the class's name (as Foundation's `NSStringFromClass` does) as an
// `NSString`, the second reads it and runs the Swift `UIApplicationMain(_:_:_:_:)`, which
// finds the class by that name, creates the delegate and never returns.
import BackgroundTasks
import Foundation

/// The C symbol `NSStringFromClass` that `@UIApplicationMain`'s generated `main` calls with
/// the delegate's class (its metadata pointer: Swift on Linux has no Objective-C metatypes
/// apart from it). Returns a retained `NSString` with the class's name, `Module.AppDelegate`:
/// the compiler declares the result autoreleased, which on Linux means owned by the caller,
/// and `main` releases it after `UIApplicationMain` (which does not return).
@_cdecl("NSStringFromClass")
public func _uiApplicationMainClassName(_ classMetadata: UnsafeRawPointer) -> UnsafeMutableRawPointer? {
    let delegateClass: AnyClass = unsafeBitCast(classMetadata, to: AnyClass.self)
    return Unmanaged.passRetained(NSString(string: NSStringFromClass(delegateClass))).toOpaque()
}

/// The C symbol `UIApplicationMain` that `@UIApplicationMain`'s generated `main` calls on
/// the main thread: reads the delegate's class name that ``_uiApplicationMainClassName(_:)``
/// made and runs the app as `UIApplicationMain(argc, argv, nil, name)` does in Swift (a
/// class that cannot be found or created stops the program with a message naming it).
@_cdecl("UIApplicationMain")
public func _uiApplicationMainEntry(
    _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>,
    _ principalClassName: UnsafeMutableRawPointer?, _ delegateClassName: UnsafeMutableRawPointer?
) -> Int32 {
    func string(_ pointer: UnsafeMutableRawPointer?) -> String? {
        pointer.map { String(Unmanaged<NSString>.fromOpaque($0).takeUnretainedValue()) }
    }
    return UIApplicationMain(argc, argv, string(principalClassName), string(delegateClassName))
}
