// `import SwiftUI` for an app's lifecycle and background tasks on Linux (docs/porting.md,
// "A SwiftUI app"): `@main struct MyApp: App`, its scenes, `@Environment(\.scenePhase)`
// with `.onChange(of:)`, `.backgroundTask(.appRefresh(...))`, and
// `@UIApplicationDelegateAdaptor`, and the app's window shown without a screen (its views'
// `.onAppear`, `.task` and `.onChange`). Linux draws no user interface: nothing is drawn.
@_exported import UIKit

/// An app written with SwiftUI's lifecycle (Apple: `App`): `@main` on the type runs it.
///
/// `main()` creates the app (its `@UIApplicationDelegateAdaptor` makes the app delegate),
/// runs the launch as ``UIApplicationMain(delegate:)`` does, evaluates ``body`` before the
/// launch ends (each `.backgroundTask` registers its handler then, as registrations must
/// happen during the launch), then evaluates it again at each change of the scene phase
/// and calls the `.onChange(of:)` actions whose value changed.
@MainActor @preconcurrency
public protocol App {
    /// The app's scenes.
    associatedtype Body: Scene
    /// The app's scenes: evaluated at launch and at each change of the scene phase.
    @SceneBuilder var body: Body { get }
    /// Creates the app (`main()` does, once).
    init()
}

extension App {
    /// Runs the app: never returns (the process ends as an iOS app's does; see
    /// ``BGApplication/handleTerminationSignals(exitWhenDone:)``).
    public static func main() {
        AppRuntime.run(Self.self)
    }
}

/// A part of an app's user interface (Apple: `Scene`): here, what carries the scene
/// modifiers that matter without a screen (`.backgroundTask`, `.onChange(of:)`).
@MainActor @preconcurrency
public protocol Scene {
    /// The scenes this one is made of.
    associatedtype Body: Scene
    /// The scenes this one is made of (primitive scenes have `Never`).
    @SceneBuilder var body: Body { get }
}

extension Never: Scene {
    /// `Never` has no body: it is the body type of primitive scenes.
    public var body: Never { fatalError("Never has no body") }
}

/// Scenes with no body of their own: the runtime reads them directly.
@MainActor
protocol PrimitiveScene {
    /// Adds this scene's modifiers (and those of the scenes it wraps) to `collection`.
    func collect(into collection: inout SceneCollection)
}

extension Scene {
    /// The body of a scene that has none of its own (Apple traps the same way).
    nonisolated static func bodyOfPrimitive(_ type: Any.Type) -> Never {
        fatalError("\(type) is a primitive scene: it has no body")
    }
}

/// The scenes of a `@SceneBuilder` block with several, in order.
public struct TupleScene<each Content: Scene> {
    let content: (repeat each Content)
    /// The scenes, in order.
    public init(_ content: repeat each Content) { self.content = (repeat each content) }
    /// A primitive scene has no body.
    public var body: Never { Self.bodyOfPrimitive(Self.self) }
    @MainActor func collect(into collection: inout SceneCollection) {
        for scene in repeat each content { collection.add(scene) }
    }
}

/// Builds a scene from the scenes listed in a closure (Apple: `SceneBuilder`).
@resultBuilder
public enum SceneBuilder {
    /// A single scene.
    public static func buildBlock<Content: Scene>(_ content: Content) -> Content { content }
    /// Several scenes.
    public static func buildBlock<each Content: Scene>(_ content: repeat each Content) -> TupleScene<repeat each Content> {
        TupleScene(repeat each content)
    }
    /// A scene listed as is.
    public static func buildExpression<Content: Scene>(_ content: Content) -> Content { content }
}

/// The app's main window (Apple: `WindowGroup`). Its content is never drawn here.
public struct WindowGroup<Content: View> {
    private let makeContent: () -> Content
    /// A window group showing `content`.
    public init(@ViewBuilder content: @escaping () -> Content) { makeContent = content }
    /// A window group with a title.
    public init<S: StringProtocol>(_ title: S, @ViewBuilder content: @escaping () -> Content) { makeContent = content }
    /// A window group with a title and an identifier.
    public init<S: StringProtocol>(_ title: S, id: String, @ViewBuilder content: @escaping () -> Content) { makeContent = content }
    /// A window group with an identifier.
    public init(id: String, @ViewBuilder content: @escaping () -> Content) { makeContent = content }
    /// A primitive scene has no body.
    public var body: Never { Self.bodyOfPrimitive(Self.self) }
    @MainActor func collect(into collection: inout SceneCollection) {
        let makeContent = makeContent
        collection.windows.append(SceneCollection.WindowEntry(content: { makeContent() }))
    }
}

// Conformances apart from the types, so that their initializers are not main-actor
// isolated (views and scenes are made anywhere, as Apple's are).
extension TupleScene: Scene, PrimitiveScene {}
extension WindowGroup: Scene, PrimitiveScene {}
