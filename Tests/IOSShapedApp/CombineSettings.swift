// A settings model as older apps write it, in Swift 5 mode with only `import
// BackgroundTasks` (Apple's Foundation brings Combine, and so this module): a published
// refresh interval whose changes reschedule the refresh (docs/porting.md, "Combine").
import BackgroundTasks

public final class RefreshSettings: ObservableObject {
    @Published public var intervalMinutes = 15
    public private(set) var rescheduled: [Int] = []
    private var cancellables = Set<AnyCancellable>()

    public init() {
        $intervalMinutes
            .dropFirst()
            .removeDuplicates()
            .sink { [weak self] minutes in self?.rescheduled.append(minutes) }
            .store(in: &cancellables)
    }
}
