import Foundation
import SchedulerCore

/// Reads every device condition of a Linux machine from files only (sysfs, procfs, `/run`,
/// `/dev`, power-profiles-daemon's state): no D-Bus, no external processes, so it works for
/// an unprivileged user, in a container, and on fake trees in tests.
///
/// Each part has its own reader, which documents its sources and its rules for bad input:
/// ``PowerSupplyReader``, ``LowPowerModeReader``, ``ThermalReader``, ``NetworkReader``,
/// ``DeviceIdleReader``, ``CPUPressureReader``. A value that cannot be read soundly takes
/// the documented default and its source says `unknown: <why>`; nothing here throws or
/// crashes on a malformed file.
///
/// ``reading(now:)`` is the testable core (`now` decides terminal idleness); ``read()``
/// (the ``ConditionsProvider`` requirement) calls it with the current time.
public struct LinuxConditionsReader: ConditionsProvider {
    /// Where each tree is.
    public var roots: DeviceRoots
    /// The directory holding the `low-power-mode` and `device-idle` override files, if any.
    public var stateDirectory: URL?
    /// How recent terminal activity must be for the device to be "in use".
    public var idleThreshold: TimeInterval

    /// Reads under `roots` (default: from `BGTASK_SYS_ROOT`, `BGTASK_PROC_ROOT`,
    /// `BGTASK_RUN_ROOT`, `BGTASK_DEV_ROOT`, `BGTASK_VAR_LIB_ROOT`, `BGTASK_ETC_ROOT` in
    /// `environment`, else the machine's own directories).
    public init(
        roots: DeviceRoots? = nil,
        stateDirectory: URL? = nil,
        idleThreshold: TimeInterval = DeviceIdleReader.defaultThreshold,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.roots = roots ?? DeviceRoots(environment: environment)
        self.stateDirectory = stateDirectory
        self.idleThreshold = idleThreshold
    }

    /// The groups of values that are read together.
    public struct Parts: OptionSet, Hashable, Sendable {
        /// One bit per part.
        public let rawValue: Int
        /// Creates a set from its raw bits.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// External power, battery level and state (a power-supply uevent changes them).
        public static let power = Parts(rawValue: 1 << 0)
        /// Network availability and metered-ness (rtnetlink changes them).
        public static let network = Parts(rawValue: 1 << 1)
        /// Low Power Mode.
        public static let lowPowerMode = Parts(rawValue: 1 << 2)
        /// The thermal state.
        public static let thermal = Parts(rawValue: 1 << 3)
        /// Idle or in use.
        public static let idle = Parts(rawValue: 1 << 4)
        /// CPU pressure.
        public static let cpuPressure = Parts(rawValue: 1 << 5)

        /// Everything.
        public static let all: Parts = [.power, .network, .lowPowerMode, .thermal, .idle, .cpuPressure]
        /// What no kernel event announces, so it is sampled (at most every 30 s, and only
        /// while something depends on conditions). Power is included for the battery
        /// level: not every battery driver sends a uevent when its capacity changes.
        public static let sampled: Parts = [.power, .lowPowerMode, .thermal, .idle, .cpuPressure]
    }

    /// The power reader over these roots.
    public var powerReader: PowerSupplyReader { PowerSupplyReader(sysRoot: roots.sys) }
    /// The Low Power Mode reader over these roots.
    public var lowPowerModeReader: LowPowerModeReader { LowPowerModeReader(sysRoot: roots.sys, varLibRoot: roots.varLib, stateDirectory: stateDirectory) }
    /// The thermal reader over these roots.
    public var thermalReader: ThermalReader { ThermalReader(sysRoot: roots.sys) }
    /// The network reader over these roots.
    public var networkReader: NetworkReader { NetworkReader(sysRoot: roots.sys, procRoot: roots.proc, runRoot: roots.run, etcRoot: roots.etc) }
    /// The idle reader over these roots.
    public var idleReader: DeviceIdleReader { DeviceIdleReader(runRoot: roots.run, devRoot: roots.dev, stateDirectory: stateDirectory, threshold: idleThreshold) }
    /// The CPU pressure reader over these roots.
    public var cpuPressureReader: CPUPressureReader { CPUPressureReader(procRoot: roots.proc, sysRoot: roots.sys) }

    /// Every value, read now; `now` is the instant terminal activity is measured against.
    public func reading(now: Date) -> DeviceReading {
        var reading = DeviceReading(
            externalPower: true, batteryLevel: nil, batteryState: .unknown, lowPowerMode: false, thermalState: .nominal,
            networkAvailable: false, networkMetered: nil, deviceIdle: true, cpuPressure: nil
        )
        refresh(&reading, parts: .all, now: now)
        return reading
    }

    /// Re-reads `parts` into `reading`, leaving the other values (and their sources) as
    /// they were: how the conditions monitor updates power on a uevent without touching
    /// the slower readings.
    public func refresh(_ reading: inout DeviceReading, parts: Parts, now: Date) {
        if parts.contains(.power) {
            let power = powerReader.read()
            reading.externalPower = power.externalPower.value
            reading.batteryLevel = power.batteryLevel.value
            reading.batteryState = power.batteryState.value
            reading.sources["externalPower"] = power.externalPower.source
            reading.sources["batteryLevel"] = power.batteryLevel.source
            reading.sources["batteryState"] = power.batteryState.source
        }
        if parts.contains(.network) {
            let network = networkReader.read()
            reading.networkAvailable = network.available.value
            reading.networkMetered = network.metered.value
            reading.sources["networkAvailable"] = network.available.source
            reading.sources["networkMetered"] = network.metered.source
        }
        if parts.contains(.lowPowerMode) {
            let lowPower = lowPowerModeReader.read()
            reading.lowPowerMode = lowPower.value
            reading.sources["lowPowerMode"] = lowPower.source
        }
        if parts.contains(.thermal) {
            let thermal = thermalReader.read()
            reading.thermalState = thermal.value
            reading.sources["thermalState"] = thermal.source
        }
        if parts.contains(.idle) {
            let idle = idleReader.read(now: now)
            reading.deviceIdle = idle.value
            reading.sources["deviceIdle"] = idle.source
        }
        if parts.contains(.cpuPressure) {
            let cpu = cpuPressureReader.read()
            reading.cpuPressure = cpu.value
            reading.sources["cpuPressure"] = cpu.source
        }
    }

    /// The machine's battery alone: its power supplies, not every condition.
    public func readBattery() -> (level: Double?, state: BatteryState) {
        let power = powerReader.read()
        return (power.batteryLevel.value, power.batteryState.value)
    }

    /// The machine's Low Power Mode and thermal state alone (the power profile and the
    /// thermal zones, not the network, power supplies, idleness or pressure): an app may
    /// ask `ProcessInfo` for them in a loop.
    public func readPower() -> (lowPowerMode: Bool, thermalState: ThermalState) {
        (lowPowerModeReader.read().value, thermalReader.read().value)
    }

    /// The conditions now (``reading(now:)`` at the current time).
    public func read() -> Conditions {
        reading(now: Date()).conditions
    }
}
