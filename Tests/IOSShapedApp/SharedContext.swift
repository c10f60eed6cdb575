// The app's context reached through the app delegate from a nonisolated static property, as
// a Mastodon client writes it (the tenth outside probe, Swift 5 mode): Apple's
// `UIApplication.delegate` is imported from Objective-C, implicitly `@preconcurrency`, so
// Swift 5 code may read it outside the main actor without a diagnostic; so may this target,
// whose warnings fail its build.
import BackgroundTasks

public final class LegacyServices {
    public let name: String
    public init(name: String) { self.name = name }
}

public final class ServicesAppDelegate: UIResponder, UIApplicationDelegate {
    public let services = LegacyServices(name: "shared")
}

extension LegacyServices {
    /// The services the app delegate holds, or `nil` when the delegate is another.
    public static var shared: LegacyServices? {
        (UIApplication.shared.delegate as? ServicesAppDelegate)?.services
    }
}
