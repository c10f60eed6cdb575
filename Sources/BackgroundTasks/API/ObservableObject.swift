import Foundation

// Combine's observable-object vocabulary, which Apple's Foundation re-exports (iOS 13): a
// model file that imports Foundation (here BackgroundTasks, which re-exports Foundation; or
// UIKit, SwiftUI) declares `class Store: ObservableObject { @Published var items = [...] }`.
// Combine is not in the Linux toolchain: these keep values and publish nothing, so code
// that subscribes (`$store.items.sink`) does not compile (docs/porting.md, "A SwiftUI app").
// SwiftUI's `@StateObject`, `@ObservedObject` and `@EnvironmentObject` are in SwiftUI.

/// The publisher of an observable object's coming changes (Apple: Combine's
/// `ObservableObjectPublisher`): nobody subscribes here, so `send()` does nothing.
public final class ObservableObjectPublisher: Sendable {
    /// A publisher.
    public init() {}
    /// Announces a change: no subscriber here.
    public func send() {}
}

/// A model whose changes the interface would follow (Apple: `ObservableObject`).
public protocol ObservableObject: AnyObject {
    /// The publisher of the object's coming changes (`objectWillChange.send()`).
    var objectWillChange: ObservableObjectPublisher { get }
}

extension ObservableObject {
    /// A publisher nobody subscribes to.
    public var objectWillChange: ObservableObjectPublisher { ObservableObjectPublisher() }
}

/// A property of an observable object (Apple: `@Published`): here a stored value.
@propertyWrapper
public struct Published<Value> {
    /// The value.
    public var wrappedValue: Value
    /// A published property starting at `wrappedValue`.
    public init(wrappedValue: Value) { self.wrappedValue = wrappedValue }
    /// A published property starting at `initialValue`.
    public init(initialValue: Value) { wrappedValue = initialValue }
}

