import Foundation
import SchedulerCore

/// Everything the readers found on the device, with where each value came from: the input
/// of ``conditions`` (what the engine consumes) and of `bgtask conditions [--json]`.
///
/// The JSON form has exactly these keys: `externalPower` (bool), `batteryLevel` (0...1 or
/// `null`), `batteryState` (`unknown`, `no-battery`, `discharging`, `charging`, `full`),
/// `lowPowerMode` (bool), `thermalState` (`nominal`, `fair`, `serious`, `critical`),
/// `networkAvailable` (bool), `networkMetered` (bool or `null`), `deviceIdle` (bool),
/// `cpuPressure` (0...1 or `null`) and `sources` (an object from each of those names to the
/// file or service the value came from, or `"unknown: <why>"`). Absent values are written as
/// `null`, never left out, so a consumer can tell "unknown" from "not reported".
public struct DeviceReading: Hashable, Sendable, Codable {
    /// On external power, or no system battery.
    public var externalPower: Bool
    /// Battery charge, 0...1; `nil` when there is no system battery or no sound reading.
    public var batteryLevel: Double?
    /// What the system battery is doing.
    public var batteryState: BatteryState
    /// Low Power Mode.
    public var lowPowerMode: Bool
    /// The hottest zone's state.
    public var thermalState: ThermalState
    /// An interface is up with a default route.
    public var networkAvailable: Bool
    /// Whether the network is metered; `nil` when nothing readable says.
    public var networkMetered: Bool?
    /// The user is not using the device.
    public var deviceIdle: Bool
    /// CPU pressure, 0...1; `nil` when unknown.
    public var cpuPressure: Double?
    /// For each field name above, the file or service the value came from, or
    /// `"unknown: <why>"` when it is a documented default.
    public var sources: [String: String]

    /// The field names, in the order `bgtask conditions` prints them.
    public static let fieldNames = [
        "externalPower", "batteryLevel", "batteryState", "lowPowerMode", "thermalState",
        "networkAvailable", "networkMetered", "deviceIdle", "cpuPressure",
    ]

    /// Creates a reading; `sources` defaults to empty (fill it for every field you set).
    public init(
        externalPower: Bool,
        batteryLevel: Double?,
        batteryState: BatteryState,
        lowPowerMode: Bool,
        thermalState: ThermalState,
        networkAvailable: Bool,
        networkMetered: Bool?,
        deviceIdle: Bool,
        cpuPressure: Double?,
        sources: [String: String] = [:]
    ) {
        self.externalPower = externalPower
        self.batteryLevel = batteryLevel
        self.batteryState = batteryState
        self.lowPowerMode = lowPowerMode
        self.thermalState = thermalState
        self.networkAvailable = networkAvailable
        self.networkMetered = networkMetered
        self.deviceIdle = deviceIdle
        self.cpuPressure = cpuPressure
        self.sources = sources
    }

    /// The snapshot the engine consumes.
    public var conditions: Conditions {
        Conditions(
            externalPower: externalPower,
            networkAvailable: networkAvailable,
            batteryLevel: batteryLevel,
            batteryState: batteryState,
            lowPowerMode: lowPowerMode,
            thermalState: thermalState,
            networkMetered: networkMetered,
            deviceIdle: deviceIdle,
            cpuPressure: cpuPressure
        )
    }

    /// The value of field `name` as `bgtask conditions` prints it (`null` when absent).
    public func displayValue(of name: String) -> String {
        func fraction(_ value: Double?) -> String {
            guard let value else { return "null" }
            var text = String(format: "%.4f", value)
            while text.hasSuffix("0") && !text.hasSuffix(".0") { text.removeLast() }
            return text
        }
        switch name {
        case "externalPower": return String(externalPower)
        case "batteryLevel": return fraction(batteryLevel)
        case "batteryState": return batteryState.rawValue
        case "lowPowerMode": return String(lowPowerMode)
        case "thermalState": return thermalState.description
        case "networkAvailable": return String(networkAvailable)
        case "networkMetered": return networkMetered.map { String($0) } ?? "null"
        case "deviceIdle": return String(deviceIdle)
        case "cpuPressure": return fraction(cpuPressure)
        default: return "?"
        }
    }

    // MARK: Codable

    private enum CodingKeys: String, CodingKey {
        case externalPower, batteryLevel, batteryState, lowPowerMode, thermalState
        case networkAvailable, networkMetered, deviceIdle, cpuPressure, sources
    }

    /// Writes every key, `null` for absent values, and the thermal state by name (the
    /// synthesized form would leave `nil`s out and write the thermal state as a number).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(externalPower, forKey: .externalPower)
        if let batteryLevel { try container.encode(batteryLevel, forKey: .batteryLevel) } else { try container.encodeNil(forKey: .batteryLevel) }
        try container.encode(batteryState, forKey: .batteryState)
        try container.encode(lowPowerMode, forKey: .lowPowerMode)
        try container.encode(thermalState.description, forKey: .thermalState)
        try container.encode(networkAvailable, forKey: .networkAvailable)
        if let networkMetered { try container.encode(networkMetered, forKey: .networkMetered) } else { try container.encodeNil(forKey: .networkMetered) }
        try container.encode(deviceIdle, forKey: .deviceIdle)
        if let cpuPressure { try container.encode(cpuPressure, forKey: .cpuPressure) } else { try container.encodeNil(forKey: .cpuPressure) }
        try container.encode(sources, forKey: .sources)
    }

    /// Reads the form ``encode(to:)`` writes.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        externalPower = try container.decode(Bool.self, forKey: .externalPower)
        batteryLevel = try container.decodeIfPresent(Double.self, forKey: .batteryLevel)
        batteryState = try container.decode(BatteryState.self, forKey: .batteryState)
        lowPowerMode = try container.decode(Bool.self, forKey: .lowPowerMode)
        let thermalName = try container.decode(String.self, forKey: .thermalState)
        guard let thermal = ThermalState(name: thermalName) else {
            throw DecodingError.dataCorruptedError(forKey: .thermalState, in: container, debugDescription: "unknown thermal state '\(thermalName)'")
        }
        thermalState = thermal
        networkAvailable = try container.decode(Bool.self, forKey: .networkAvailable)
        networkMetered = try container.decodeIfPresent(Bool.self, forKey: .networkMetered)
        deviceIdle = try container.decode(Bool.self, forKey: .deviceIdle)
        cpuPressure = try container.decodeIfPresent(Double.self, forKey: .cpuPressure)
        sources = try container.decode([String: String].self, forKey: .sources)
    }
}

extension DeviceReading {
    /// One line per field: name, value and source, in ``fieldNames`` order, under a header;
    /// what `bgtask conditions` prints.
    public func table() -> String {
        let width = Self.fieldNames.map(\.count).max() ?? 0
        let values = Self.fieldNames.map { displayValue(of: $0) }
        let valueWidth = max(values.map(\.count).max() ?? 0, "value".count)
        func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }
        var lines = [pad("condition", width) + "  " + pad("value", valueWidth) + "  source"]
        for (name, value) in zip(Self.fieldNames, values) {
            lines.append(pad(name, width) + "  " + pad(value, valueWidth) + "  " + (sources[name] ?? "unknown: not read"))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The JSON form (see the type's documentation), pretty-printed with sorted keys so
    /// that output is stable.
    public func jsonString() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self) + "\n"
    }
}
