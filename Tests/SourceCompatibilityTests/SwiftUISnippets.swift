// SwiftUI app shapes in Swift 6 language mode with warnings as errors (the Swift 5 one is
// Tests/SwiftUIApp, run by DaemonTests): the iOS 17 forms of onChange, a title and an
// identifier on the window group, several scenes, background URL session handlers, an
// environment key of the app's own, state and bindings, ForEach over Identifiable values.
import BackgroundTasks
import SwiftUI

struct FeedItem: Identifiable, Sendable {
    let id: Int
    let title: String
}

private struct FeedSourceKey: EnvironmentKey {
    static let defaultValue = "https://example.com/feed"
}

extension EnvironmentValues {
    var feedSource: String {
        get { self[FeedSourceKey.self] }
        set { self[FeedSourceKey.self] = newValue }
    }
}

/// What the snippet app's scenes did, for SwiftUISceneTests.
@MainActor final class SnippetAppRecord {
    static let shared = SnippetAppRecord()
    var phases: [String] = []
    var zeroArgumentCalls = 0
}

struct Swift6FeedApp: App {
    @Environment(\.scenePhase) private var scenePhase
    @Environment(\.feedSource) private var feedSource

    var body: some Scene {
        WindowGroup("Feed", id: "main") {
            FeedList(items: [FeedItem(id: 1, title: "One")])
        }
        .onChange(of: scenePhase, initial: true) { oldPhase, newPhase in
            SnippetAppRecord.shared.phases.append("\(oldPhase)->\(newPhase)")
        }
        .onChange(of: scenePhase) {
            SnippetAppRecord.shared.zeroArgumentCalls += 1
        }
        .backgroundTask(.appRefresh("com.example.swiftui6.refresh")) {
            await Self.refresh()
        }
        .backgroundTask(.urlSession("com.example.swiftui6.downloads")) {}
        .backgroundTask(.urlSession) { identifier in
            _ = identifier
        }
        WindowGroup(id: "settings") {
            EmptyView()
        }
    }

    static func refresh() async {
        let request = BGAppRefreshTaskRequest(identifier: "com.example.swiftui6.refresh")
        request.earliestBeginDate = Date(timeIntervalSinceNow: 3600)
        try? BGTaskScheduler.shared.submit(request)
    }
}

struct FeedList: View {
    let items: [FeedItem]
    @State private var selected: Int?
    @State private var showsAll = false

    var body: some View {
        NavigationView {
            List {
                ForEach(items) { item in
                    HStack(alignment: .top) {
                        Text(item.title)
                        Spacer(minLength: 4)
                    }
                }
                ForEach(["a", "b"], id: \.self) { name in Text(verbatim: name) }
                Toggled(isOn: $showsAll)
                if let selected {
                    Text("Selected \(selected)")
                }
                if #available(iOS 17, *) {
                    Group { Button(action: { selected = nil }) { Image("clear") } }
                }
            }
            .navigationTitle("Feed")
        }
    }
}

/// A view taking a binding, as controls do.
struct Toggled: View {
    @Binding var isOn: Bool
    var body: some View {
        Button(isOn ? "On" : "Off") { isOn.toggle() }
    }
}

// Models as SwiftUI apps keep them: an ObservableObject owned by the app and handed to the
// views, its refresh called from the background task; an @Observable one (iOS 17).
@MainActor final class SwiftUIFeedStore: ObservableObject {
    @Published var items: [FeedItem] = []
    @Published var isRefreshing = false

    func refresh() async {
        isRefreshing = true
        objectWillChange.send()
        items.append(FeedItem(id: items.count + 1, title: "Fresh"))
        isRefreshing = false
    }
}

@Observable @MainActor final class Settings {
    var refreshesInBackground = true
}

struct StoreBackedApp: App {
    @StateObject private var store = SwiftUIFeedStore()
    @State private var settings = Settings()

    var body: some Scene {
        WindowGroup {
            StoreView(store: store)
                .environmentObject(store)
        }
        .backgroundTask(.appRefresh("com.example.swiftui6.store")) { @MainActor in
            await store.refresh()
        }
    }
}

struct StoreView: View {
    @ObservedObject var store: SwiftUIFeedStore
    @EnvironmentObject var shared: SwiftUIFeedStore

    var body: some View {
        ScrollView {
            ZStack {
                Color.clear
                if store.isRefreshing { ProgressView("Refreshing") } else { Label("Up to date", systemImage: "checkmark") }
            }
            Form {
                Section("Options") {
                    Toggle("Refreshing", isOn: $store.isRefreshing)
                }
            }
            Text("\(store.items.count) items").font(.headline).foregroundColor(.secondary).frame(maxWidth: 320)
        }
        .task { await store.refresh() }
        .onAppear { _ = store.items.count }
        .refreshable { await store.refresh() }
    }
}

// Bindings into collections, as list editors write them.
struct TodoItem: Identifiable, Equatable {
    var id = UUID()
    var title: String
    var isDone = false
}

struct TodoList: View {
    @State private var items = [TodoItem(title: "Refresh")]
    @AppStorage("lastOpened") private var lastOpened = Date()
    @FocusState private var focused: Bool

    var body: some View {
        List {
            ForEach($items) { $item in
                Toggle(item.title, isOn: $item.isDone)
            }
            .onDelete { items.remove(atOffsets: $0) }
            .onMove { items.move(fromOffsets: $0, toOffset: $1) }
            Text("Opened \(lastOpened, style: .relative)").bold()
            Text("\(items.count, specifier: "%d") items, \(Date(), formatter: DateFormatter())")
            TextField("New", text: .constant("")).focused($focused).submitLabel(.done)
        }
        .listStyle(.insetGrouped)
        .toolbar { ToolbarItem(placement: .topBarTrailing) { EditButton() } }
        .sheet(isPresented: .constant(false)) { Text("Sheet") }
    }
}

// An app's own shape, a grid, a geometry reader and a label with a built icon.
struct Badge: Shape {
    func path(in rect: CGRect) -> Path {
        var path = Path()
        path.move(to: CGPoint(x: rect.midX, y: rect.minY))
        path.addLine(to: CGPoint(x: rect.maxX, y: rect.maxY))
        path.addLine(to: CGPoint(x: rect.minX, y: rect.maxY))
        path.closeSubpath()
        return path
    }
}

struct Dashboard: View {
    let columns = [GridItem(.adaptive(minimum: 80)), GridItem(.flexible())]

    var body: some View {
        GeometryReader { proxy in
            ScrollView {
                LazyVGrid(columns: columns, spacing: 8) {
                    ForEach(0..<4) { index in
                        Badge().fill(Color.orange).frame(width: proxy.size.width / 4, height: 40)
                        Label { Text("Item \(index)") } icon: { Image(systemName: "star") }
                    }
                }
                LazyVStack(alignment: .leading) { Text("More") }
            }
        }
    }
}
