import Foundation
import Synchronization

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
        var postedLevel: Double?
    }

    private let seen: Mutex<Seen>

    /// Starts from `conditions` (what the driver has now).
    init(conditions: Conditions) {
        seen = Mutex(Seen(lowPowerMode: conditions.lowPowerMode, thermalState: conditions.thermalState,
                          batteryState: Self.batteryState(conditions), postedLevel: conditions.batteryLevel))
    }

    /// Registers with the driver: every `conditionsChanged` it reports is looked at for
    /// `context` (held weakly: the driver outlives its apps in the simulator).
    func follow(_ driver: SchedulerDriver, for context: AppContext) {
        driver.observe { [weak self, weak context] event in
            guard case .conditionsChanged(let conditions, _) = event, let self, let context else { return }
            self.changed(to: conditions, in: context)
        }
    }

    /// What `conditions` change, posted in iOS's order of concern: power state, heat, battery.
    func changed(to conditions: Conditions, in context: AppContext) {
        let monitoring = context.device.isBatteryMonitoringEnabled
        let names = seen.withLock { seen -> [(Notification.Name, any AnyObject & Sendable)] in
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
            if let level = conditions.batteryLevel, seen.postedLevel.map({ abs($0 - level) >= 0.01 }) ?? true {
                seen.postedLevel = level
                if monitoring { names.append((UIDevice.batteryLevelDidChangeNotification, context.device)) }
            }
            return names
        }
        context.application.post(names)
    }

    private static func batteryState(_ conditions: Conditions) -> UIDevice.BatteryState {
        UIDevice.BatteryReading(conditions: conditions).uiState
    }
}
