import Foundation
import SchedulerCore

/// What ``PowerSupplyReader`` found: external power, battery level and battery state, each
/// with its source.
public struct PowerReading: Hashable, Sendable {
    /// On external power, or no system battery.
    public var externalPower: SourcedValue<Bool>
    /// Charge 0...1; `nil` with no system battery or no sound reading.
    public var batteryLevel: SourcedValue<Double?>
    /// What the system battery is doing.
    public var batteryState: SourcedValue<BatteryState>
}

/// Reads `/sys/class/power_supply/*` (under ``sysRoot``).
///
/// Each supply directory has `type` (`Mains`, `USB`, `USB_C`, `USB_PD`..., `Wireless`,
/// `Battery`), and depending on the type `online`, `status`, `capacity`, `capacity_level`,
/// `present` and `scope`.
///
/// - Supplies with `scope` = `Device` are ignored: they are the batteries of peripherals
///   (a wireless mouse, a headset), not of the computer.
/// - A battery with `present` = `0` (an empty second battery bay) is ignored.
/// - **External power** is, in order: some `Mains`/`USB*`/`Wireless`/`BrickID` supply with
///   `online` = `1`; else no system battery at all (a desktop or a server: treated as on
///   external power); else a battery whose status is `Charging`, `Full` or `Not charging`
///   (both mean plugged in); else `false` (a supply `online` = `0` or a battery
///   `Discharging` is named as the source; with neither, the source is `unknown:` and the
///   machine is assumed to be on battery, the cautious choice for a device that has one).
/// - **Battery level** is `capacity` / 100 when `capacity` is a whole number in 0...100.
///   Anything else (empty, not a number, 250, -1, a read error) makes the level unknown
///   (`nil`) with the file and its value named: never clamped, never guessed, and no
///   fallback, because a driver that reports nonsense is not trusted for its coarse level
///   either. Only when `capacity` does not exist is `capacity_level` used, as the documented
///   approximation `Critical` 0.05, `Low` 0.15, `Normal` 0.5, `High` 0.8, `Full` 1.0 (the
///   first two stay below the 20 % "critically low" line, as the kernel means them to).
///   With several system batteries the level is known only when every battery's is, and is
///   their mean weighted by `energy_full` (or `charge_full`) when every battery has one,
///   else the plain mean.
/// - **Battery state**: `Charging` beats `Discharging` beats `Full`/`Not charging` across
///   batteries; `Unknown` or an unreadable status gives `unknown`; no system battery gives
///   `no-battery`.
public struct PowerSupplyReader: Sendable {
    /// Where `/sys` is.
    public var sysRoot: URL

    /// Reads under `sysRoot`.
    public init(sysRoot: URL) {
        self.sysRoot = sysRoot
    }

    /// The level implied by each `capacity_level` value (used only without `capacity`).
    public static let capacityLevelApproximation: [String: Double] = [
        "Critical": 0.05, "Low": 0.15, "Normal": 0.5, "High": 0.8, "Full": 1.0,
    ]

    /// Types that feed the computer from outside.
    static func isExternalType(_ type: String) -> Bool {
        type == "Mains" || type.hasPrefix("USB") || type == "Wireless" || type == "BrickID"
    }

    private struct Battery {
        var name: String
        var level: SourcedValue<Double?>
        var state: SourcedValue<BatteryState>
        var fullEnergy: Double?
    }

    /// Reads every supply now.
    public func read() -> PowerReading {
        let directory = sysRoot.appendingPathComponent("class/power_supply")
        var ignored: [String] = []
        var onlineExternal: SourcedValue<Bool>?
        var offlineExternal: SourcedValue<Bool>?
        var batteries: [Battery] = []
        /// A supply whose type cannot be read may be the battery.
        var untyped = false

        let listing = SysfsFile.listing(directory)
        if let problem = listing.problem {
            // The supplies cannot be told: not a desktop without a battery, but nothing known.
            let unknown = SysfsFile.unknown(problem + "; assumed on battery")
            return PowerReading(
                externalPower: SourcedValue(false, source: unknown),
                batteryLevel: SourcedValue(nil, source: unknown),
                batteryState: SourcedValue(.unknown, source: unknown)
            )
        }
        for name in listing.names {
            let supply = directory.appendingPathComponent(name)
            let typeURL = supply.appendingPathComponent("type")
            guard let type = SysfsFile.contents(of: typeURL).text, !type.isEmpty else {
                ignored.append("\(name) (no readable type)")
                untyped = true
                continue
            }
            if SysfsFile.contents(of: supply.appendingPathComponent("scope")).text?.lowercased() == "device" {
                // A peripheral's own battery says nothing about the computer's power.
                ignored.append("\(name) (scope Device)")
                continue
            }
            if Self.isExternalType(type) {
                let onlineURL = supply.appendingPathComponent("online")
                switch SysfsFile.contents(of: onlineURL).text {
                case "1": if onlineExternal == nil { onlineExternal = SourcedValue(true, source: "\(onlineURL.path) is 1") }
                case "0": if offlineExternal == nil { offlineExternal = SourcedValue(false, source: "\(onlineURL.path) is 0") }
                default: ignored.append("\(name) (online not 0 or 1)")
                }
            } else if type == "Battery" {
                if SysfsFile.contents(of: supply.appendingPathComponent("present")).text == "0" {
                    ignored.append("\(name) (present 0)")
                    continue
                }
                batteries.append(readBattery(name: name, at: supply))
            } else {
                ignored.append("\(name) (type \(type))")
            }
        }

        let ignoredNote = ignored.isEmpty ? "" : "; ignored: " + ignored.joined(separator: ", ")
        if batteries.isEmpty {
            let none = "no system battery under \(directory.path)" + ignoredNote
            // With a supply whose type could not be read, external power is a guess: said so.
            let treated = none + " (treated as external power)"
            return PowerReading(
                externalPower: onlineExternal ?? SourcedValue(true, source: untyped ? SysfsFile.unknown(treated) : treated),
                batteryLevel: SourcedValue(nil, source: none),
                batteryState: SourcedValue(.noBattery, source: none)
            )
        }

        let state = Self.combinedState(batteries.map(\.state))
        let externalPower: SourcedValue<Bool>
        if let onlineExternal {
            externalPower = onlineExternal
        } else if let charging = batteries.first(where: { $0.state.value == .charging }) {
            externalPower = SourcedValue(true, source: charging.state.source)
        } else if let offlineExternal {
            externalPower = offlineExternal
        } else if let discharging = batteries.first(where: { $0.state.value == .discharging }) {
            // Before a full one: a second battery that is full or not charging while the
            // first discharges (two-battery laptops) is idle, not plugged in.
            externalPower = SourcedValue(false, source: discharging.state.source)
        } else if let full = batteries.first(where: { $0.state.value == .full }) {
            externalPower = SourcedValue(true, source: full.state.source)
        } else {
            externalPower = SourcedValue(false, source: SysfsFile.unknown("no external supply reports online and no battery status says charging; assumed on battery" + ignoredNote))
        }
        return PowerReading(externalPower: externalPower, batteryLevel: Self.combinedLevel(batteries), batteryState: state)
    }

    private func readBattery(name: String, at supply: URL) -> Battery {
        let statusURL = supply.appendingPathComponent("status")
        let statusContents = SysfsFile.contents(of: statusURL)
        let state: SourcedValue<BatteryState>
        if let problem = SysfsFile.problem(statusContents, statusURL) {
            state = SourcedValue(.unknown, source: SysfsFile.unknown(problem))
        } else {
            let text = statusContents.text ?? ""
            switch text {
            case "Charging": state = SourcedValue(.charging, source: "\(statusURL.path) is \"Charging\"")
            case "Discharging": state = SourcedValue(.discharging, source: "\(statusURL.path) is \"Discharging\"")
            case "Full", "Not charging": state = SourcedValue(.full, source: "\(statusURL.path) is \"\(text)\"")
            default: state = SourcedValue(.unknown, source: SysfsFile.unknown("\(statusURL.path) is \(SysfsFile.quoted(text))"))
            }
        }

        let capacityURL = supply.appendingPathComponent("capacity")
        let capacity = SysfsFile.contents(of: capacityURL)
        let level: SourcedValue<Double?>
        if capacity == .missing {
            level = Self.levelFromCapacityLevel(supply.appendingPathComponent("capacity_level"), capacityURL: capacityURL)
        } else {
            level = Self.level(fromCapacity: capacity, at: capacityURL)
        }

        var fullEnergy: Double?
        for file in ["energy_full", "charge_full"] {
            if let text = SysfsFile.contents(of: supply.appendingPathComponent(file)).text, let value = Int(text), value > 0 {
                fullEnergy = Double(value)
                break
            }
        }
        return Battery(name: name, level: level, state: state, fullEnergy: fullEnergy)
    }

    /// The level from the contents of a `capacity` file: a whole percentage 0...100, else
    /// unknown with the file and its value named.
    static func level(fromCapacity contents: FileContents, at url: URL) -> SourcedValue<Double?> {
        if let problem = SysfsFile.problem(contents, url) { return SourcedValue(nil, source: SysfsFile.unknown(problem)) }
        let text = contents.text ?? ""
        guard let percent = Int(text) else {
            return SourcedValue(nil, source: SysfsFile.unknown("\(url.path) is \(SysfsFile.quoted(text)), not a number"))
        }
        guard (0...100).contains(percent) else {
            return SourcedValue(nil, source: SysfsFile.unknown("\(url.path) is \(SysfsFile.quoted(text)), outside 0...100"))
        }
        return SourcedValue(Double(percent) / 100, source: url.path)
    }

    private static func levelFromCapacityLevel(_ url: URL, capacityURL: URL) -> SourcedValue<Double?> {
        let contents = SysfsFile.contents(of: url)
        if let problem = SysfsFile.problem(contents, url) {
            return SourcedValue(nil, source: SysfsFile.unknown("\(capacityURL.path) is missing and \(problem)"))
        }
        let text = contents.text ?? ""
        guard let approximation = capacityLevelApproximation[text] else {
            return SourcedValue(nil, source: SysfsFile.unknown("\(capacityURL.path) is missing and \(url.path) is \(SysfsFile.quoted(text))"))
        }
        return SourcedValue(approximation, source: "\(url.path) is \"\(text)\" (approximate: no capacity file)")
    }

    private static func combinedLevel(_ batteries: [Battery]) -> SourcedValue<Double?> {
        if batteries.count == 1 { return batteries[0].level }
        if let unknown = batteries.first(where: { $0.level.value == nil }) { return unknown.level }
        let levels = batteries.compactMap(\.level.value)
        let sources = batteries.map(\.level.source).joined(separator: " + ")
        let weights = batteries.compactMap(\.fullEnergy)
        if weights.count == batteries.count, weights.reduce(0, +) > 0 {
            let total = zip(levels, weights).map { $0 * $1 }.reduce(0, +) / weights.reduce(0, +)
            return SourcedValue((total * 10_000).rounded() / 10_000, source: sources + " (weighted by full charge)")
        }
        return SourcedValue((levels.reduce(0, +) / Double(levels.count) * 10_000).rounded() / 10_000, source: sources + " (mean)")
    }

    private static func combinedState(_ states: [SourcedValue<BatteryState>]) -> SourcedValue<BatteryState> {
        for wanted in [BatteryState.charging, .discharging] {
            if let state = states.first(where: { $0.value == wanted }) { return state }
        }
        if let unknown = states.first(where: { $0.value == .unknown }) { return unknown }
        return states[0]
    }
}
