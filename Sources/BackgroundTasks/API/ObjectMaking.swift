import CObjectMaking
import Foundation

/// Creates objects from their classes, as iOS makes an app's delegates with Objective-C's
/// `[[cls alloc] init]`: the app delegate of `@main` and of
/// `@UIApplicationDelegateAdaptor(AppDelegate.self)`, a scene configuration's
/// `delegateClass`, a delegate class named to `UIApplicationMain`. Such classes are usually
/// `class AppDelegate: NSObject, UIApplicationDelegate`, whose `init()` is not `required`, so
/// Swift's `type.init()` cannot be written for them; Swift's class metadata makes them
/// instead (Sources/CObjectMaking/ObjectMaking.c: each class's entry for `NSObject.init()`,
/// the `init()` it declares, overrides or inherits).
package enum ObjectMaking {
    /// A new instance of `type`, made by its `init()`. A class that has no `init()` (it
    /// declares other designated initializers only) stops the program with "Use of
    /// unimplemented initializer 'init()'", as it does on iOS.
    /// Main-actor: the classes made so are delegates and windows, whose `init()` is the main
    /// actor's, and it runs here, synchronously.
    @MainActor
    package static func make<Object: NSObject>(_ type: Object.Type) -> Object {
        // `type` is a subclass of NSObject (or NSObject), whose metadata the runtime reads:
        // the metatype of a Swift class is its metadata's address.
        let metadata = unsafeBitCast(type as AnyClass, to: UnsafeRawPointer.self)
        // The allocating initializer returns its object retained once: taken over here.
        let object = Unmanaged<NSObject>.fromOpaque(bgtask_make_nsobject(metadata)).takeRetainedValue()
        // An entry for `init()` makes an instance of the class it was looked up in.
        return object as! Object
    }
}
