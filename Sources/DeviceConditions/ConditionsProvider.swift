import SchedulerCore
import Synchronization

/// Something that reads the device conditions the engine consults.
public protocol ConditionsProvider: Sendable {
    /// The conditions now. Never throws: what cannot be read takes the documented default.
    func read() -> Conditions
    /// The battery alone now (what `UIDevice` asks): by default from ``read()``; a provider
    /// that can read it alone, more cheaply, says so.
    func readBattery() -> (level: Double?, state: BatteryState)
    /// Low Power Mode and the thermal state alone now (what `ProcessInfo` asks): by default
    /// from ``read()``; a provider that can read them alone, more cheaply, says so.
    func readPower() -> (lowPowerMode: Bool, thermalState: ThermalState)
}

extension ConditionsProvider {
    /// The battery of ``read()``.
    public func readBattery() -> (level: Double?, state: BatteryState) {
        let conditions = read()
        return (conditions.batteryLevel, conditions.batteryState)
    }

    /// Low Power Mode and the thermal state of ``read()``.
    public func readPower() -> (lowPowerMode: Bool, thermalState: ThermalState) {
        let conditions = read()
        return (conditions.lowPowerMode, conditions.thermalState)
    }
}

/// Conditions set by hand: for tests, the simulator, and machines where reading the
/// device makes no sense.
public final class FixedConditions: ConditionsProvider {
    private let current: Mutex<Conditions>

    /// Starts with `conditions`.
    public init(_ conditions: Conditions = .favorable) {
        current = Mutex(conditions)
    }

    /// The conditions last set.
    public func read() -> Conditions { current.withLock { $0 } }

    /// Changes the conditions returned from now on.
    public func set(_ conditions: Conditions) {
        current.withLock { $0 = conditions }
    }
}
