import Foundation
import Synchronization
import SchedulerCore

// `ProcessInfo`'s and `UIDevice`'s change notifications, posted when the app's scheduler
// sees the device change (docs/porting.md, "Push registration, badge, Settings and the
// device"): Low Power Mode (`NSProcessInfoPowerStateDidChange`), the thermal state
// (`ProcessInfo.thermalStateDidChangeNotification`), and, while the app monitors its battery,
// the battery's state and level (`UIDevice.batteryStateDidChangeNotification`,
// `batteryLevelDidChangeNotification`, a level change of a percent or more). An app that
// pauses heavy work on a hot device and waits for the notification to go on hears it.

/// Turns the conditions the app's driver reports into the notifications iOS posts. One per
/// app context; its state is under one lock; posting is the application's, outside it.
final class DeviceChangeNotifier: Sendable {
    private struct Seen {
        var lowPowerMode: Bool
        var thermalState: ThermalState
        var batteryState: UIDevice.BatteryState
        /// The battery level last posted (or seen while not monitored), in whole percents.
        var postedPercent: Int?
        /// What changed while the app was suspended or not running, once each, posted when it
        /// runs again (iOS runs no code in a suspended app, and tells it on resuming).
        var held: [(Notification.Name, any AnyObject & Sendable)] = []
    }

    /// What was seen last; `nil` until the first report, which is taken as it is, not as a
    /// change.
    private let seen: Mutex<Seen?>

    /// Starts from `conditions` (what the driver has now); with `nil` (an app under
    /// bgtaskd, whose driver knows nothing of the device until the daemon tells it after the
    /// launch), from the first report.
    init(conditions: Conditions?) {
        seen = Mutex(conditions.map(Self.seen(as:)))
    }

    private static func seen(as conditions: Conditions) -> Seen {
        Seen(lowPowerMode: conditions.lowPowerMode, thermalState: conditions.thermalState,
             batteryState: batteryState(conditions), postedPercent: conditions.batteryPercent)
    }

    /// Follows `context`'s conditions (held weakly: the driver outlives its apps in the
    /// simulator) and its lifecycle, to post what was held while it was suspended.
    func follow(_ context: BGAppContext) {
        _ = context.observeConditions { [weak self, weak context] conditions in
            guard let self, let context else { return }
            self.changed(to: conditions, in: context)
        }
        context.application.observeState { [weak self, weak context] state in
            guard Self.runsCode(state), let self, let context else { return }
            let held = self.seen.withLock { seen -> [(Notification.Name, any AnyObject & Sendable)] in
                defer { seen?.held = [] }
                return seen?.held ?? []
            }
            context.application.post(held.map { ($0.0, .kept($0.1)) })
        }
    }

    /// Whether an app in `state` runs code (not suspended, not gone).
    private static func runsCode(_ state: ApplicationLifecycleState) -> Bool {
        state != .suspended && state != .notRunning
    }


    /// What `conditions` change, posted in iOS's order of concern: power state, heat, battery.
    func changed(to conditions: Conditions, in context: BGAppContext) {
        let monitoring = context.device.isBatteryMonitoringEnabled
        let running = Self.runsCode(context.application.lifecycleState)
        let names = seen.withLock { known -> [(Notification.Name, any AnyObject & Sendable)] in
            guard var seen = known else {
                known = Self.seen(as: conditions)
                return []
            }
            defer { known = seen }
            var names: [(Notification.Name, any AnyObject & Sendable)] = []
            if conditions.lowPowerMode != seen.lowPowerMode {
                seen.lowPowerMode = conditions.lowPowerMode
                names.append((.NSProcessInfoPowerStateDidChange, ProcessInfo.processInfo))
            }
            if conditions.thermalState != seen.thermalState {
                seen.thermalState = conditions.thermalState
                names.append((ProcessInfo.thermalStateDidChangeNotification, ProcessInfo.processInfo))
            }
            let batteryState = Self.batteryState(conditions)
            if batteryState != seen.batteryState {
                seen.batteryState = batteryState
                if monitoring { names.append((UIDevice.batteryStateDidChangeNotification, context.device)) }
            }
            // iOS posts level changes of a percent or more (its levels are whole percents).
            if let percent = conditions.batteryPercent, percent != seen.postedPercent {
                seen.postedPercent = percent
                if monitoring { names.append((UIDevice.batteryLevelDidChangeNotification, context.device)) }
            }
            guard !running else { return names }
            for change in names where !seen.held.contains(where: { $0.0 == change.0 }) { seen.held.append(change) }
            return []
        }
        context.application.post(names.map { ($0.0, .kept($0.1)) })
    }

    private static func batteryState(_ conditions: Conditions) -> UIDevice.BatteryState {
        UIDevice.BatteryReading(conditions: conditions).uiState
    }
}
