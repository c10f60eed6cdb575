// A file of an app that imports UIKit, SwiftUI and the app's own framework, whose types have
// names the package's engine also has (Tests/AppOwnTypes): each name is the app's, without
// qualification, as on iOS (the tenth outside probe: "'AppContext' is ambiguous for type
// lookup in this context" in 124 files of a Mastodon client). Swift 6, warnings as errors.
import AppOwnTypes
import SwiftUI
import Testing
import UIKit
import UserNotifications

extension AppContext {
    /// The shared container, as the app declares it.
    static let shared = AppContext(name: "shared")
}

@MainActor
final class OwnTypesAppDelegate: UIResponder, UIApplicationDelegate {
    let context = AppContext.shared
    let retry = RetryPolicy(attempts: 3)
    var conditions = Conditions(isOnline: true)
    let app = AppID("social")
    let log = DiagnosticLog()
    let kind: TaskKind = .sync
}

@Suite struct AppOwnTypesTests {
    @Test @MainActor func theAppsOwnTypesAreTheOnesNamed() {
        let delegate = OwnTypesAppDelegate()
        #expect(delegate.context.name == "shared" && delegate.retry.attempts == 3)
        #expect(delegate.conditions.isOnline && delegate.app.value == "social" && delegate.kind == .sync)
    }
}
