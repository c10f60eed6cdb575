import Foundation

/// A value behind an `NSLock`, for state that holds non-`Sendable` things (closures from
/// app code, Dispatch sources) which `Mutex` would need to be `sending`. Every access goes
/// through the lock, which is what makes the `@unchecked` honest.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
