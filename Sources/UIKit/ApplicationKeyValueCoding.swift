// SDKs that are also built into app extensions cannot name `UIApplication.shared` there
// (Apple marks it unavailable to extensions), so they reach it through key-value coding:
// `UIApplication.value(forKeyPath: "sharedApplication") as? UIApplication` (Segment's
// `safeShared`, Amplitude's `AppUtil`, RevenueCat's `SystemInfo`: the seventeenth outside
// probe). On iOS that is `NSObject`'s `value(forKey:)` sent to the class. The application
// here is not an `NSObject` (swift-corelibs-foundation's has no key-value coding anyway), so
// the class answers the one key such code asks it for (docs/porting.md, "Push registration,
// badge, Settings and the device").
import BackgroundTasks

extension BGApplication {
    /// The class's value for `key` (Apple: `NSObject`'s key-value coding sent to the class):
    /// for `"sharedApplication"`, ``BGApplication/shared``, as UIKit's class method of that
    /// name answers; `nil` for any other key.
    ///
    /// iOS raises for a key the class does not have; `nil` is chosen instead, because code
    /// that runs on iOS asks only for keys the class has there, and of those this package
    /// knows only `sharedApplication`: an answer of `nil` lets such code take the path it
    /// takes where the value is missing (an SDK's `as? UIApplication` failing, as in an app
    /// extension), where stopping the program would end an app that works on iOS.
    public static func value(forKey key: String) -> Any? {
        key == "sharedApplication" ? shared : nil
    }

    /// The class's value along `keyPath` (Apple: `NSObject`'s `value(forKeyPath:)` sent to
    /// the class): ``value(forKey:)`` of the path's one key, so `"sharedApplication"` is
    /// ``BGApplication/shared``; `nil` for any other path, a dotted one included (this
    /// package does not follow a path past the application: it has no key-value coding).
    public static func value(forKeyPath keyPath: String) -> Any? {
        value(forKey: keyPath)
    }
}
