// App delegates as iOS apps write them, made from their classes as iOS makes them
// (`[[cls alloc] init]`): `class AppDelegate: NSObject, UIApplicationDelegate` behind
// `@UIApplicationDelegateAdaptor`, an `override init()` that is not `required`, a delegate
// named to UIApplicationMain by its class's name. Swift 6 language mode, warnings as errors.
import BackgroundTasks
import Foundation
import SwiftUI
import Synchronization
import Testing

/// The SwiftUI form Apple's documentation and most public apps use: an NSObject delegate.
final class ObjectAppDelegate: NSObject, UIApplicationDelegate {
    var events: [String] = []
    let made = Date()

    func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]? = nil) -> Bool {
        events.append("didFinishLaunching")
        return true
    }
}

/// An app delegate with an `init()` of its own, not `required`, as iOS code writes it.
final class InitializingAppDelegate: UIResponder, UIApplicationDelegate {
    let startedAt: String
    override init() {
        startedAt = "init"
        super.init()
    }
}

/// A SwiftUI app with the NSObject delegate behind the adaptor (compiled here; the adaptor
/// makes one in Tests/SwiftUIApp, run end to end by DaemonTests: making one here would set
/// the process's adopted delegate).
struct ObjectDelegateApp: App {
    @UIApplicationDelegateAdaptor(ObjectAppDelegate.self) var appDelegate
    var body: some Scene {
        WindowGroup { Text("Reader") }
    }
}

/// Counts deinitializations, so a test can see an object made once is released once.
final class MadeObjectCounter: Sendable {
    let released = Atomic<Int>(0)
}

/// A class with default values and an inherited `init()`.
class InheritingObject: NSObject {
    var count = 42
    var names = ["a", "b"]
    var counter: MadeObjectCounter?
    deinit { counter?.released.add(1, ordering: .relaxed) }
}

/// A subclass that inherits its superclass's inherited `init()` and adds a default.
final class InheritingChild: InheritingObject {
    var label = "child"
}

/// A class whose `init()` sets what has no default.
class OverridingObject: NSObject {
    let value: Int
    override init() {
        value = 7
        super.init()
    }
}

/// A subclass that inherits the overriding `init()`.
final class OverridingChild: OverridingObject {
    var extra = "extra"
}

/// A class whose `init()` is a convenience over a designated initializer taking its store.
class ConvenienceObject: NSObject {
    let store: String
    init(store: String) {
        self.store = store
        super.init()
    }
    convenience override init() {
        self.init(store: "shared")
    }
}

/// A generic class (each specialization has metadata of its own).
final class GenericObject<Element>: NSObject {
    var elements: [Element] = []
}

/// A class with another designated initializer only: it has no `init()`.
final class ValueOnlyObject: NSObject {
    let value: Int
    init(value: Int) {
        self.value = value
        super.init()
    }
}

@Suite struct ObjectMakingTests {
    @Test @MainActor func aClassIsMadeByTheInitItInheritsDeclaresOrOverrides() {
        let inheriting = ObjectMaking.make(InheritingObject.self)
        #expect(type(of: inheriting) == InheritingObject.self && inheriting.count == 42 && inheriting.names == ["a", "b"])
        let child = ObjectMaking.make(InheritingChild.self)
        #expect(type(of: child) == InheritingChild.self && child.count == 42 && child.label == "child")
        let overriding = ObjectMaking.make(OverridingObject.self)
        #expect(overriding.value == 7)
        let overridingChild = ObjectMaking.make(OverridingChild.self)
        #expect(overridingChild.value == 7 && overridingChild.extra == "extra")
        #expect(ObjectMaking.make(ConvenienceObject.self).store == "shared")
        let generic = ObjectMaking.make(GenericObject<String>.self)
        generic.elements.append("x")
        #expect(type(of: generic) == GenericObject<String>.self && generic.elements == ["x"])
        #expect(type(of: ObjectMaking.make(NSObject.self)) == NSObject.self)
        // Made from a class value known only at run time, as a name or a configuration gives it.
        let dynamic: NSObject.Type = NSClassFromString(NSStringFromClass(InheritingChild.self)) as! NSObject.Type
        #expect(ObjectMaking.make(dynamic) is InheritingChild)
    }

    @Test @MainActor func aMadeObjectIsReleasedOnceWhenTheLastReferenceGoes() {
        let counter = MadeObjectCounter()
        for _ in 0..<1_000 {
            let object = ObjectMaking.make(InheritingChild.self)
            object.counter = counter
            let copies = [object, object]
            #expect(copies.count == 2)
        }
        #expect(counter.released.load(ordering: .relaxed) == 1_000)
    }

    @Test func aClassWithoutInitStopsTheProgramAsOniOS() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run { _ = ObjectMaking.make(ValueOnlyObject.self) }
        }
        let text = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        #expect(text.contains("Use of unimplemented initializer 'init()'") && text.contains("ValueOnlyObject"), "\(text)")
    }

    @Test @MainActor func aDelegateNamedByItsClassIsMadeWhateverItsInit() throws {
        let object = try makeApplicationDelegate(named: NSStringFromClass(ObjectAppDelegate.self)).get()
        #expect(object is ObjectAppDelegate)
        let responder = try makeApplicationDelegate(named: NSStringFromClass(InitializingAppDelegate.self)).get()
        #expect((responder as? InitializingAppDelegate)?.startedAt == "init")
        guard case .failure(let notADelegate) = makeApplicationDelegate(named: NSStringFromClass(InheritingObject.self)) else {
            Issue.record("a class that is no delegate was made one")
            return
        }
        #expect(notADelegate.message.contains("does not adopt UIApplicationDelegate"))
    }
}
