/// A device condition that a request can require (docs/system.md, "Schedule": processing requests add
/// `requiresNetworkConnectivity` and `requiresExternalPower`).
public enum RequiredCondition: String, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// The device is on external power (or has no battery at all).
    case externalPower = "external-power"
    /// The network is available.
    case network

    public var description: String { rawValue }
}

/// What the system battery is doing.
public enum BatteryState: String, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// No reading (or a reading that made no sense).
    case unknown
    /// No system battery (a desktop or a server): always on external power.
    case noBattery = "no-battery"
    /// Running on the battery.
    case discharging
    /// On external power, charging.
    case charging
    /// On external power, full (or not charging).
    case full

    public var description: String { rawValue }
}

/// The device's thermal state, as `ProcessInfo.ThermalState` on Apple's systems.
public enum ThermalState: Int, Hashable, Sendable, Codable, CaseIterable, Comparable, CustomStringConvertible {
    /// Within normal limits.
    case nominal = 0
    /// Slightly elevated: deferrable work should wait.
    case fair = 1
    /// High: background work is expired.
    case serious = 2
    /// Critical: nothing runs in the background.
    case critical = 3

    public static func < (lhs: ThermalState, rhs: ThermalState) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .nominal: return "nominal"
        case .fair: return "fair"
        case .serious: return "serious"
        case .critical: return "critical"
        }
    }

    /// Parses the names used in `description`.
    public init?(name: String) {
        guard let state = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = state
    }

    /// Decodes the name (`"fair"`), as the JSON of `bgtask conditions` and policy files write it.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let name = try container.decode(String.self)
        guard let state = ThermalState(name: name) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected nominal, fair, serious or critical, found \"\(name)\"")
        }
        self = state
    }

    /// Encodes the name.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// A snapshot of the device conditions the engine consults (docs/system.md, "How the system
/// decides" and "On Linux"). Readers fill what they can; what they cannot read keeps the documented
/// default (favourable where unknown, so a machine without sensors is not starved).
public struct Conditions: Hashable, Sendable, Codable, CustomStringConvertible {
    /// On external power, or no system battery.
    public var externalPower: Bool
    /// Some interface is up with a global address and a default route.
    public var networkAvailable: Bool
    /// Battery charge, 0...1; `nil` when there is no battery or it cannot be read.
    public var batteryLevel: Double?
    /// What the battery is doing.
    public var batteryState: BatteryState
    /// Low Power Mode (power-profiles-daemon `power-saver`, ACPI `low-power`, or an override).
    public var lowPowerMode: Bool
    /// The thermal state.
    public var thermalState: ThermalState
    /// Whether the network is metered; `nil` when unknown.
    public var networkMetered: Bool?
    /// The user is not using the device (idle or locked).
    public var deviceIdle: Bool
    /// CPU pressure, 0...1 (PSI `some avg10` / 100, else load average per core); `nil` unknown.
    public var cpuPressure: Double?

    /// Creates a snapshot; everything beyond power and network defaults to "fine".
    public init(
        externalPower: Bool,
        networkAvailable: Bool,
        batteryLevel: Double? = nil,
        batteryState: BatteryState? = nil,
        lowPowerMode: Bool = false,
        thermalState: ThermalState = .nominal,
        networkMetered: Bool? = nil,
        deviceIdle: Bool = true,
        cpuPressure: Double? = nil
    ) {
        self.externalPower = externalPower
        self.networkAvailable = networkAvailable
        self.batteryLevel = batteryLevel
        self.batteryState = batteryState ?? (batteryLevel == nil ? (externalPower ? .noBattery : .unknown) : (externalPower ? .charging : .discharging))
        self.lowPowerMode = lowPowerMode
        self.thermalState = thermalState
        self.networkMetered = networkMetered
        self.deviceIdle = deviceIdle
        self.cpuPressure = cpuPressure
    }

    /// Whether `condition` holds in this snapshot.
    public func satisfies(_ condition: RequiredCondition) -> Bool {
        switch condition {
        case .externalPower: return externalPower
        case .network: return networkAvailable
        }
    }

    /// The first condition `request` requires that does not hold, in the order of
    /// ``PendingRequest/requiredConditions``, without building that list (the index files
    /// thousands of requests at once when a condition changes).
    public func firstUnmet(for request: PendingRequest) -> RequiredCondition? {
        firstUnmet(requiresExternalPower: request.requiresExternalPower, requiresNetwork: request.requiresNetworkConnectivity)
    }

    /// The first unmet of the required conditions given as flags, in the order of
    /// ``PendingRequest/requiredConditions``.
    public func firstUnmet(requiresExternalPower: Bool, requiresNetwork: Bool) -> RequiredCondition? {
        if requiresExternalPower, !externalPower { return .externalPower }
        if requiresNetwork, !networkAvailable { return .network }
        return nil
    }

    /// A plugged-in, connected, idle device: what a desktop or server usually is.
    public static let favorable = Conditions(externalPower: true, networkAvailable: true)

    /// The battery's charge in whole percents, as iOS reports levels (0.57 - 0.56 is not
    /// 0.01 in floating point); `nil` without a level, or with one no battery has (not
    /// finite, outside 0...1). What the daemon compares and the app's change notifications
    /// count in, so the two cannot disagree on whether a percent changed.
    public var batteryPercent: Int? {
        guard let level = batteryLevel, level.isFinite, (0...1).contains(level) else { return nil }
        return Int((level * 100).rounded())
    }

    public var description: String {
        var parts = ["power=\(externalPower ? "external" : "battery")", "network=\(networkAvailable ? "up" : "down")"]
        if let batteryLevel { parts.append("battery=\(Int((batteryLevel * 100).rounded()))%") }
        if lowPowerMode { parts.append("low-power-mode") }
        if thermalState != .nominal { parts.append("thermal=\(thermalState)") }
        if networkMetered == true { parts.append("metered") }
        if !deviceIdle { parts.append("in-use") }
        return parts.joined(separator: " ")
    }
}
