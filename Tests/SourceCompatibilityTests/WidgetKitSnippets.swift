// A refresh handler that reloads the app's widgets after fetching, as public apps write it,
// in Swift 6 mode with warnings as errors; and the configurations switched over.
import BackgroundTasks
import WidgetKit

enum WidgetRefresher {
    static let kind = "FeedWidget"

    static func handle(task: BGAppRefreshTask) {
        WidgetCenter.shared.reloadTimelines(ofKind: kind)
        WidgetCenter.shared.reloadAllTimelines()
        task.setTaskCompleted(success: true)
    }

    static func configuredSizes() async -> [String] {
        let widgets = (try? await WidgetCenter.shared.currentConfigurations()) ?? []
        return widgets.map { widget in
            switch widget.family {
            case .systemSmall: return "small"
            case .systemMedium, .systemLarge, .systemExtraLarge: return "larger"
            case .accessoryCircular, .accessoryRectangular, .accessoryInline: return "lock screen"
            @unknown default: return "unknown"
            }
        }
    }
}
