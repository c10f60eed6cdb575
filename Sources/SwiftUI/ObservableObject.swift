// SwiftUI's owners of observable objects (Apple: `@StateObject`, `@ObservedObject`,
// `@EnvironmentObject`), re-exported with Observation. `ObservableObject` and `@Published`
// are Combine's (Sources/Combine, which BackgroundTasks re-exports, as Apple's Foundation
// does): they publish to subscribers; nothing is drawn again here when a model changes.
@_exported import Observation

/// An observable object a view or app creates and owns (Apple: `@StateObject`): created
/// once, on first use.
@propertyWrapper
public struct StateObject<ObjectType: ObservableObject>: DynamicProperty {
    private final class Storage {
        let make: () -> ObjectType
        lazy var object: ObjectType = make()
        init(_ make: @escaping () -> ObjectType) { self.make = make }
    }
    private let storage: Storage
    /// The object `thunk` makes, when first read (in a shown view evaluated again, the object
    /// its place in the window already has: ``StateSlots``).
    public init(wrappedValue thunk: @autoclosure @escaping () -> ObjectType) { storage = StateSlots.claim(Storage(thunk)) }
    /// The object.
    public var wrappedValue: ObjectType { storage.object }
    /// Bindings to the object's properties (`$model.flag`).
    public var projectedValue: ObservedObject<ObjectType>.Wrapper { ObservedObject.Wrapper(object: storage.object) }
}

/// An observable object a view is given (Apple: `@ObservedObject`).
@propertyWrapper
public struct ObservedObject<ObjectType: ObservableObject>: DynamicProperty {
    /// Bindings to an object's properties.
    @dynamicMemberLookup
    public struct Wrapper {
        let object: ObjectType
        /// A binding to the property at `keyPath`.
        public subscript<Subject>(dynamicMember keyPath: ReferenceWritableKeyPath<ObjectType, Subject>) -> Binding<Subject> {
            let object = object
            return Binding(get: { object[keyPath: keyPath] }, set: { object[keyPath: keyPath] = $0 })
        }
    }
    /// The object.
    public var wrappedValue: ObjectType
    /// Observes `wrappedValue`.
    public init(wrappedValue: ObjectType) { self.wrappedValue = wrappedValue }
    /// Observes `initialValue`.
    public init(initialValue: ObjectType) { wrappedValue = initialValue }
    /// Bindings to the object's properties (`$model.flag`).
    public var projectedValue: Wrapper { Wrapper(object: wrappedValue) }
}

/// An observable object from an ancestor's `.environmentObject(_:)` (Apple:
/// `@EnvironmentObject`), resolved when a shown view's body is evaluated (docs/porting.md,
/// "A SwiftUI app"); read where no ancestor supplied one, it stops the program, as SwiftUI
/// does.
@propertyWrapper
public struct EnvironmentObject<ObjectType: ObservableObject>: DynamicProperty, HostResolvable {
    private let resolved = ResolvedBox()
    /// An object the environment supplies.
    public init() {}
    /// The object.
    public var wrappedValue: ObjectType {
        guard let object = resolved.environment?.objects[ObjectIdentifier(ObjectType.self)] as? ObjectType else {
            fatalError("No ObservableObject of type \(ObjectType.self) found: supply it with .environmentObject(_:) on the scene or an ancestor view")
        }
        return object
    }
    /// Bindings to the object's properties (`$model.flag`).
    public var projectedValue: ObservedObject<ObjectType>.Wrapper { ObservedObject.Wrapper(object: wrappedValue) }

    func resolve(in environment: HostEnvironment) { resolved.environment = environment }
}
