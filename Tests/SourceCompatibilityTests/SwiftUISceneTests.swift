import BackgroundTasks
@testable import SwiftUI
import Testing

/// How the app's scenes are read (SwiftUI's AppRuntime, without running an app): the
/// `.backgroundTask` identifiers, and `.onChange(of:)` called when the phase changes.
@MainActor @Suite(.serialized) struct SwiftUISceneTests {
    /// Evaluates the app's body for `phase` (the environment is the process's: the suite
    /// is serialized, and no other test reads it).
    static func collect(_ app: Swift6FeedApp, phase: ScenePhase) -> SceneCollection {
        EnvironmentValues.current.withLock { $0.scenePhase = phase }
        defer { EnvironmentValues.current.withLock { $0 = EnvironmentValues() } }
        var collection = SceneCollection()
        collection.add(app.body)
        return collection
    }

    @Test("the refresh handlers of every scene are found; URL session handlers are counted, never run")
    func backgroundTasksAreFound() {
        let found = Self.collect(Swift6FeedApp(), phase: .inactive)
        #expect(found.refreshActions.map(\.identifier) == ["com.example.swiftui6.refresh"])
        #expect(found.urlSessionActions == 2)
    }

    @Test("onChange: initial calls at the first evaluation only; a changed value calls with old and new; an unchanged one does not")
    func onChangeFollowsThePhase() {
        SnippetAppRecord.shared.phases = []
        SnippetAppRecord.shared.zeroArgumentCalls = 0
        let app = Swift6FeedApp()
        let first = Self.collect(app, phase: .inactive)
        for change in first.changes { change.fire(after: nil) }
        #expect(SnippetAppRecord.shared.phases == ["inactive->inactive"])
        #expect(SnippetAppRecord.shared.zeroArgumentCalls == 0)

        let second = Self.collect(app, phase: .active)
        for (index, change) in second.changes.enumerated() { change.fire(after: first.changes[index]) }
        let third = Self.collect(app, phase: .active)
        for (index, change) in third.changes.enumerated() { change.fire(after: second.changes[index]) }
        #expect(SnippetAppRecord.shared.phases == ["inactive->inactive", "inactive->active"])
        #expect(SnippetAppRecord.shared.zeroArgumentCalls == 1)
    }

    @Test func theScenePhaseFollowsTheApplicationsState() {
        #expect(AppRuntime.phase(of: .active) == .active)
        #expect(AppRuntime.phase(of: .inactive) == .inactive)
        #expect(AppRuntime.phase(of: .background) == .background)
        #expect(EnvironmentValues().feedSource == "https://example.com/feed")
    }
}
