import Foundation

// iOS code stores settings through key-value coding on `UserDefaults` (`setValue(_:forKey:)`,
// `value(forKey:)`: `NSObject` methods on Apple's platforms, which swift-corelibs-foundation
// does not have, as it has no key-value coding). On defaults they mean `set(_:forKey:)` and
// `object(forKey:)`, which these are.
extension UserDefaults {
    /// Stores `value` under `key` (Apple: key-value coding's `setValue(_:forKey:)`): the
    /// same as `set(_:forKey:)`; `nil` removes the value.
    @_disfavoredOverload
    public func setValue(_ value: Any?, forKey key: String) {
        set(value, forKey: key)
    }

    /// The value under `key` (Apple: key-value coding's `value(forKey:)`): the same as
    /// `object(forKey:)`.
    @_disfavoredOverload
    public func value(forKey key: String) -> Any? {
        object(forKey: key)
    }
}
