// A SwiftUI app as public apps and Apple's WWDC 2022 session write background refresh:
// `@main struct ...: App`, the refresh scheduled when the scene phase becomes background
// (`.onChange(of: phase)`), handled by `.backgroundTask(.appRefresh(...))`, and an app
// delegate through `@UIApplicationDelegateAdaptor`. Compiled in Swift 5 language mode with
// warnings as errors (docs/porting.md, "A SwiftUI app"); the only lines that are not iOS
// code are the `print`s the tests read (DaemonTests.SwiftUIApp) and a slow refresh they may
// ask for (`--slow-refresh`, to expire it), and a registration of its own in `init()`
// (`--register-in-init`).
import SwiftUI
import BackgroundTasks

let refreshIdentifier = "com.example.swiftuiapp.refresh"

@main
struct RefreshApp: App {
    @Environment(\.scenePhase) private var phase
    @UIApplicationDelegateAdaptor(AppDelegate.self) var appDelegate
    @StateObject private var model = FeedModel()

    init() {
        // Some apps also register the identifier themselves (test switch: --register-in-init).
        if CommandLine.arguments.contains("--register-in-init") {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshIdentifier, using: nil) { task in
                print("event init handler")
                task.setTaskCompleted(success: true)
            }
        }
    }

    var body: some Scene {
        WindowGroup {
            ContentView()
                .environmentObject(model)
        }
        .onChange(of: phase) { newPhase in
            print("event phase \(newPhase)")
            switch newPhase {
            case .background: scheduleAppRefresh()
            default: break
            }
        }
        .backgroundTask(.appRefresh(refreshIdentifier)) {
            print("event backgroundTask main=\(Thread.isMainThread)")
            scheduleAppRefresh()
            await refreshFeed()
        }
    }
}

// NSObject, as Apple's documentation and most SwiftUI apps write it.
class AppDelegate: NSObject, UIApplicationDelegate, ObservableObject {
    var launched = false

    func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]? = nil) -> Bool {
        setvbuf(stdout, nil, _IOLBF, 0)
        print("event didFinishLaunching state=\(application.applicationState == .background ? "background" : "foreground")")
        launched = true
        return true
    }
}

final class FeedModel: ObservableObject {
    @Published var title = "Latest stories"
}

struct ContentView: View {
    @Environment(\.scenePhase) private var scenePhase
    @EnvironmentObject var model: FeedModel
    @EnvironmentObject var appDelegate: AppDelegate
    @State private var count = 0

    var body: some View {
        NavigationStack {
            VStack(alignment: .leading, spacing: 8) {
                Text(model.title)
                if count > 0 {
                    Text("\(count) new")
                } else {
                    Image(systemName: "tray")
                }
                Button("Refresh") { count += 1 }
                Spacer()
            }
            .padding()
            .navigationTitle("Feed")
        }
        .onAppear {
            print("event view appeared title=\(model.title) launched=\(appDelegate.launched)")
        }
        .task {
            print("event view task")
        }
        .onChange(of: scenePhase) { newPhase in
            print("event view phase \(newPhase)")
        }
    }
}

func scheduleAppRefresh() {
    let request = BGAppRefreshTaskRequest(identifier: refreshIdentifier)
    request.earliestBeginDate = .now.addingTimeInterval(15 * 60)
    do {
        try BGTaskScheduler.shared.submit(request)
        print("event submitted")
    } catch {
        print("Could not schedule app refresh: \(error)")
    }
}

func refreshFeed() async {
    // A real app fetches here (`URLSession.shared.data(from:)`).
    let slow = CommandLine.arguments.contains("--slow-refresh")
    try? await Task.sleep(nanoseconds: slow ? 60_000_000_000 : 10_000_000)
    print("event refreshed cancelled=\(Task.isCancelled)")
}
