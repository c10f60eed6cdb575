// Combine in background-task code as public apps write it, in Swift 6 mode with warnings
// as errors (docs/porting.md, "Combine"): a coordinator that schedules its refresh when the
// app enters the background, a debounced published flag, a fetch as a publisher chain.
import BackgroundTasks
import IOSShapedApp
import Combine
import Testing
import UIKit

@MainActor
final class RefreshCoordinator: ObservableObject {
    static let refreshIdentifier = "com.example.combine.refresh"
    @Published private(set) var lastRefresh: Date?
    @Published var isRefreshing = false
    private(set) var scheduled = 0
    private var cancellables = Set<AnyCancellable>()

    init(center: NotificationCenter = .default) {
        center.publisher(for: UIApplication.didEnterBackgroundNotification)
            .sink { [weak self] _ in self?.scheduleRefresh() }
            .store(in: &cancellables)
        $isRefreshing
            .removeDuplicates()
            .debounce(for: .milliseconds(200), scheduler: RunLoop.main)
            .sink { refreshing in print("refreshing: \(refreshing)") }
            .store(in: &cancellables)
    }

    func scheduleRefresh() {
        scheduled += 1
        let request = BGAppRefreshTaskRequest(identifier: Self.refreshIdentifier)
        request.earliestBeginDate = Date(timeIntervalSinceNow: 15 * 60)
        try? BGTaskScheduler.shared.submit(request)
    }

    func fetchHeadlines(from url: URL) -> AnyPublisher<[String], Error> {
        URLSession.shared.dataTaskPublisher(for: url)
            .map(\.data)
            .decode(type: [String].self, decoder: JSONDecoder())
            .receive(on: DispatchQueue.main)
            .eraseToAnyPublisher()
    }

    func handle(_ task: BGAppRefreshTask, url: URL) {
        isRefreshing = true
        let fetch = fetchHeadlines(from: url).sink(receiveCompletion: { [weak self] completion in
            self?.isRefreshing = false
            if case .failure = completion { task.setTaskCompleted(success: false) }
        }, receiveValue: { [weak self] _ in
            self?.lastRefresh = Date()
            task.setTaskCompleted(success: true)
        })
        task.expirationHandler = { fetch.cancel() }
    }
}

@Suite @MainActor struct CombineInAppCode {
    @Test func theCoordinatorSchedulesWhenTheAppEntersTheBackground() {
        let center = NotificationCenter()
        let coordinator = RefreshCoordinator(center: center)
        let changes = Box(0)
        let watching = coordinator.objectWillChange.sink { changes.value += 1 }
        center.post(name: UIApplication.didEnterBackgroundNotification, object: nil)
        #expect(coordinator.scheduled == 1)
        coordinator.isRefreshing = true
        #expect(changes.value == 1)
        watching.cancel()
    }
}

@Suite struct CombineInSwift5Code {
    @Test func aPublishedSettingReschedulesOnEachNewValue() {
        let settings = RefreshSettings()
        settings.intervalMinutes = 30
        settings.intervalMinutes = 30
        settings.intervalMinutes = 60
        #expect(settings.rescheduled == [30, 60])
    }
}

/// A value a sink writes from the test's thread.
final class Box<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
