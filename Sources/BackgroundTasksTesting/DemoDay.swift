import BackgroundTasks
import Foundation

/// The day `bgtask demo` simulates: a phone's day in scripted conditions.
///
/// | from  | to    | power    | network |
/// |-------|-------|----------|---------|
/// | 00:00 | 07:00 | charger  | Wi-Fi   |
/// | 07:00 | 07:40 | battery  | none (commute) |
/// | 07:40 | 17:30 | battery  | yes     |
/// | 17:30 | 18:10 | battery  | none (commute) |
/// | 18:10 | 23:00 | battery  | yes     |
/// | 23:00 | 24:00 | charger  | Wi-Fi   |
public enum DemoDay {
    /// The scripted condition changes, as offsets in seconds from midnight.
    public static let conditionChanges: [(offset: TimeInterval, conditions: Conditions)] = [
        (7 * 3600, Conditions(externalPower: false, networkAvailable: false)),
        (7 * 3600 + 40 * 60, Conditions(externalPower: false, networkAvailable: true)),
        (17 * 3600 + 30 * 60, Conditions(externalPower: false, networkAvailable: false)),
        (18 * 3600 + 10 * 60, Conditions(externalPower: false, networkAvailable: true)),
        (23 * 3600, Conditions(externalPower: true, networkAvailable: true)),
    ]

    /// The conditions at midnight: on the charger, on Wi-Fi.
    public static let midnight = Conditions(externalPower: true, networkAvailable: true)

    /// Applies the script to `device`, from `start` (midnight).
    public static func script(_ device: SimulatedDevice, from start: Date) {
        for change in conditionChanges {
            device.setConditions(change.conditions, at: start.addingTimeInterval(change.offset))
        }
    }
}
