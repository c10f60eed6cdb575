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

/// What the shown window's views did, in order.
@MainActor final class WalkRecord {
    var events: [String] = []
}

final class WalkModel: ObservableObject {
    let name: String
    init(name: String) { self.name = name }
}

/// A window's content with a branch, rows, an environment object and the scene phase.
struct BranchingView: View {
    let showsDetail: Bool
    let record: WalkRecord
    @Environment(\.scenePhase) private var phase
    @EnvironmentObject private var model: WalkModel

    var body: some View {
        VStack {
            Text(model.name)
            if showsDetail {
                Text("detail")
                    .onAppear { record.events.append("detail appeared") }
                    .onDisappear { record.events.append("detail gone") }
            }
            ForEach(0..<3) { row in
                Text("\(row)").onAppear { record.events.append("row \(row)") }
            }
        }
        .onChange(of: phase) { old, new in record.events.append("phase \(old)->\(new)") }
        .onAppear { record.events.append("appeared \(model.name)") }
    }
}

final class CountedModel: ObservableObject {
    init(record: WalkRecord) { MainActor.assumeIsolated { record.events.append("model made") } }
}

/// A view with state changed by its own `.onAppear`, and a model it owns.
struct StatefulView: View {
    let record: WalkRecord
    @State private var seen = 0
    @StateObject private var model: CountedModel

    init(record: WalkRecord) {
        self.record = record
        _model = StateObject(wrappedValue: CountedModel(record: record))
    }

    var body: some View {
        let _ = model
        let _ = record.events.append("body seen=\(seen)")
        Text("stateful").onAppear { seen += 1 }
    }
}

struct Row: Identifiable, Equatable {
    let id: String
}

/// A row that counts its appearances in its own state.
struct CountingRow: View {
    let row: Row
    let record: WalkRecord
    @State private var appearances = 0

    var body: some View {
        let _ = record.events.append("\(row.id) appearances=\(appearances)")
        Text(row.id).onAppear { appearances += 1 }
    }
}

/// An app's own modifier with behaviour in its body.
struct Announcing: ViewModifier {
    let record: WalkRecord
    func body(content: Content) -> some View {
        content.onAppear { record.events.append("modifier appeared") }
    }
}

/// The window shown without a screen (ShownWindow): its views' bodies are evaluated with
/// their environment, appear and disappear by place in the tree, and see the phase change.
@MainActor @Suite struct ShownWindowTests {
    @Test("the first evaluation shows every view (onAppear once each, environment objects resolved); a later one calls onChange where the value changed and onDisappear where a view went")
    func appearChangeAndDisappear() {
        let record = WalkRecord()
        let model = WalkModel(name: "feed")
        var showsDetail = true
        var values = EnvironmentValues()
        values.scenePhase = .inactive
        let window = ShownWindow(
            content: { BranchingView(showsDetail: showsDetail, record: record).environmentObject(model) },
            environment: { HostEnvironment(values: values) })
        window.update()
        #expect(Set(record.events) == ["appeared feed", "detail appeared", "row 0", "row 1", "row 2"])
        #expect(record.events.count == 5)

        record.events = []
        window.update()
        #expect(record.events.isEmpty, "nothing changed, nothing appeared again")

        showsDetail = false
        values.scenePhase = .active
        window.update()
        #expect(record.events == ["phase inactive->active", "detail gone"])
    }

    @Test("an environment object the scene supplies (WindowGroup { ... }.environmentObject(model)) is found by the window's views")
    func sceneSuppliedObjects() throws {
        var collection = SceneCollection()
        let model = WalkModel(name: "scene")
        let record = WalkRecord()
        collection.add(WindowGroup { BranchingView(showsDetail: false, record: record) }.environmentObject(model))
        let entry = try #require(collection.windows.first)
        let window = ShownWindow(content: entry.content, environment: { entry.environment(base: EnvironmentValues()) })
        window.update()
        #expect(record.events.contains("appeared scene"))
    }

    @Test("a shown view's @State and @StateObject are kept by its place when the window is evaluated again")
    func stateIsKeptByPlace() {
        let record = WalkRecord()
        let window = ShownWindow(content: { StatefulView(record: record) }, environment: { HostEnvironment(values: EnvironmentValues()) })
        window.update()
        #expect(record.events == ["model made", "body seen=0"])
        record.events = []
        window.update()
        window.update()
        #expect(record.events == ["body seen=1", "body seen=1"], "the state kept, the model made once")
    }

    @Test("rows are known by their identifier: a row inserted at the top appears, the others keep their state and do not appear again")
    func rowsKeepStateByIdentifier() {
        let record = WalkRecord()
        var rows = [Row(id: "b"), Row(id: "c")]
        let window = ShownWindow(content: { List { ForEach(rows) { CountingRow(row: $0, record: record) } } },
                                 environment: { HostEnvironment(values: EnvironmentValues()) })
        window.update()
        #expect(record.events == ["b appearances=0", "c appearances=0"])
        record.events = []
        rows.insert(Row(id: "a"), at: 0)
        window.update()
        #expect(record.events == ["a appearances=0", "b appearances=1", "c appearances=1"])
    }

    @Test(".onReceive calls its action on the main actor with each value while the view is shown, and stops when it goes")
    func onReceiveFollowsAPublisherWhileShown() async {
        let record = WalkRecord()
        let counts = CurrentValueSubject<Int, Never>(1)
        var shown = true
        let window = ShownWindow(
            content: {
                VStack {
                    if shown {
                        // Main-actor state touched without `await`, as in a view's body on iOS.
                        Text("x").onReceive(counts) { record.events.append("got \($0)") }
                    }
                }
            },
            environment: { HostEnvironment(values: EnvironmentValues()) })
        window.update()
        for _ in 0..<1_000 where record.events.isEmpty { await Task.yield() }
        counts.send(2)
        for _ in 0..<1_000 where record.events.count < 2 { await Task.yield() }
        #expect(record.events == ["got 1", "got 2"])
        shown = false
        window.update()
        for _ in 0..<100 { await Task.yield() }
        counts.send(3)
        for _ in 0..<100 { await Task.yield() }
        #expect(record.events == ["got 1", "got 2"], "cancelled with the view")
    }

    @Test("an app's ViewModifier is evaluated with its content; a .task written in a body is main-actor isolated and starts")
    func modifiersAndTasks() async {
        let record = WalkRecord()
        let window = ShownWindow(
            content: {
                // `record` is main-actor state touched without `await`: this compiles only
                // if the task's closure is main-actor isolated, as in a view's body on iOS.
                Text("x").modifier(Announcing(record: record)).task { record.events.append("task ran") }
            },
            environment: { HostEnvironment(values: EnvironmentValues()) })
        window.update()
        #expect(record.events == ["modifier appeared"])
        for _ in 0..<1_000 where record.events.count < 2 { await Task.yield() }
        #expect(record.events == ["modifier appeared", "task ran"])
    }
}
