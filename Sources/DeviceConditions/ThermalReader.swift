import Foundation
import SchedulerCore

/// The kinds of trip point a thermal zone declares (`trip_point_N_type`).
public enum ThermalTripKind: String, Hashable, Sendable, CaseIterable {
    /// Fans switch on (or up a level): normal operation, but the device is warm.
    case active
    /// The kernel starts passive cooling: it throttles the CPU, so performance is reduced.
    case passive
    /// The platform considers the zone hot (often the last warning before shutdown).
    case hot
    /// The kernel shuts the machine down.
    case critical
}

/// One thermal zone's temperature and usable trip points.
public struct ThermalZoneReading: Hashable, Sendable {
    /// The zone's directory name (`thermal_zone0`).
    public var name: String
    /// The zone's `type` (`x86_pkg_temp`, `acpitz`...), if readable.
    public var type: String?
    /// The temperature, degrees Celsius.
    public var celsius: Double
    /// The trip temperature of each kind the zone has, degrees Celsius: the lowest of each
    /// kind (the one that engages first), except `active`, where it is the highest (fans
    /// at their last level).
    public var trips: [ThermalTripKind: Double]

    /// Creates a zone reading.
    public init(name: String, type: String? = nil, celsius: Double, trips: [ThermalTripKind: Double] = [:]) {
        self.name = name
        self.type = type
        self.celsius = celsius
        self.trips = trips
    }

    /// How far below the passive trip a zone is already `fair` (C): close enough that the
    /// next burst of work would make the kernel throttle.
    public static let fairMarginBelowPassive = 10.0

    /// This zone's state, with Apple's meanings of the states (docs/policies.md, "Thermal
    /// state"), each threshold inclusive:
    ///
    /// - `critical` at or above the lowest `hot` or `critical` trip (the platform is about to
    ///   act to protect itself);
    /// - `serious` ("performance is reduced") at or above the `passive` trip: the kernel is
    ///   throttling;
    /// - `fair` at or above the highest `active` trip (every fan level engaged), or within
    ///   ``fairMarginBelowPassive`` (10 C) below the `passive` trip;
    /// - `nominal` otherwise.
    ///
    /// A threshold the zone has no trip for falls back to the absolute one:
    /// ``ThermalReader/absoluteCritical`` (100 C) without a hot or critical trip,
    /// ``ThermalReader/absoluteSerious`` (85 C) without a passive trip, and
    /// ``ThermalReader/absoluteFair`` (70 C) without an active or passive trip. The reason
    /// names the temperature and the threshold that decided.
    public func classify() -> (state: ThermalState, reason: String) {
        let label = name + (type.map { " (\($0))" } ?? "")
        let temperature = Self.format(celsius)
        let hotTrips = [trips[.hot].map { ($0, "hot trip") }, trips[.critical].map { ($0, "critical trip") }].compactMap { $0 }
        let critical = hotTrips.min { $0.0 < $1.0 } ?? (ThermalReader.absoluteCritical, "absolute threshold (no hot or critical trip)")
        let serious = trips[.passive].map { ($0, "passive trip: the kernel throttles") }
            ?? (ThermalReader.absoluteSerious, "absolute threshold (no passive trip)")
        let fairTrips = [
            trips[.active].map { ($0, "highest active trip: fans at full") },
            trips[.passive].map { ($0 - Self.fairMarginBelowPassive, "\(Self.format(Self.fairMarginBelowPassive)) below the passive trip \(Self.format($0))") },
        ].compactMap { $0 }
        let fair = fairTrips.min { $0.0 < $1.0 } ?? (ThermalReader.absoluteFair, "absolute threshold (no active or passive trip)")
        for (state, (threshold, what)) in [(ThermalState.critical, critical), (.serious, serious), (.fair, fair)] where celsius >= threshold {
            return (state, "\(label) at \(temperature) >= \(Self.format(threshold)), the \(what)")
        }
        return (.nominal, "\(label) at \(temperature), below \(Self.format(fair.0)), the \(fair.1)")
    }

    static func format(_ celsius: Double) -> String { String(format: "%.1f C", celsius) }
}

/// Reads `/sys/class/thermal/thermal_zone*` (under ``sysRoot``): `temp` in millidegrees
/// Celsius, and `trip_point_N_temp` / `trip_point_N_type` pairs.
///
/// The device's state is the highest state of any zone (see
/// ``ThermalZoneReading/classify()`` for one zone). A zone is ignored, with a note in the
/// source, when its `temp` is missing, unreadable, not a whole number, or outside
/// ``plausibleCelsius`` (-100...200 C): sensors report -273 C or absurd values when they are
/// absent or broken, and such a value must neither raise nor lower the state. A trip point
/// outside 0...200 C (drivers mark unused trips with values like -2147483648) is ignored.
/// With no usable zone at all (a container, a virtual machine) the state is `nominal` with
/// an `unknown:` source, so a machine without sensors is not starved.
public struct ThermalReader: Sendable {
    /// Where `/sys` is.
    public var sysRoot: URL

    /// Reads under `sysRoot`.
    public init(sysRoot: URL) {
        self.sysRoot = sysRoot
    }

    /// Without an active or passive trip: `fair` from this temperature (C), where laptop
    /// CPUs usually begin to boost less.
    public static let absoluteFair = 70.0
    /// Without a passive trip: `serious` from this temperature (C), near where most laptop
    /// firmware sets its passive trip (throttling).
    public static let absoluteSerious = 85.0
    /// Without a hot or critical trip: `critical` from this temperature (C), at or above
    /// most CPUs' maximum junction temperature.
    public static let absoluteCritical = 100.0
    /// Temperatures outside this range (C) are sensor errors, not readings.
    public static let plausibleCelsius = -100.0...200.0
    /// Trip temperatures outside this range (C) are placeholders, not limits.
    static let plausibleTripCelsius = 0.0...200.0

    /// The usable zones and the notes about ignored ones.
    public func zones() -> (zones: [ThermalZoneReading], ignored: [String]) {
        let directory = sysRoot.appendingPathComponent("class/thermal")
        var zones: [ThermalZoneReading] = []
        var ignored: [String] = []
        for name in SysfsFile.entries(directory) where name.hasPrefix("thermal_zone") {
            let zone = directory.appendingPathComponent(name)
            let tempURL = zone.appendingPathComponent("temp")
            let contents = SysfsFile.contents(of: tempURL)
            if let problem = SysfsFile.problem(contents, tempURL) {
                ignored.append(problem)
                continue
            }
            let text = contents.text ?? ""
            guard let millidegrees = Int(text) else {
                ignored.append("\(tempURL.path) is \(SysfsFile.quoted(text)), not a number")
                continue
            }
            let celsius = Double(millidegrees) / 1000
            guard Self.plausibleCelsius.contains(celsius) else {
                ignored.append("\(tempURL.path) is \(SysfsFile.quoted(text)) (\(ThermalZoneReading.format(celsius))), outside -100...200 C")
                continue
            }
            let type = SysfsFile.contents(of: zone.appendingPathComponent("type")).text.flatMap { $0.isEmpty ? nil : $0 }
            zones.append(ThermalZoneReading(name: name, type: type, celsius: celsius, trips: trips(in: zone)))
        }
        return (zones, ignored)
    }

    private func trips(in zone: URL) -> [ThermalTripKind: Double] {
        var trips: [ThermalTripKind: Double] = [:]
        for entry in SysfsFile.entries(zone) where entry.hasPrefix("trip_point_") && entry.hasSuffix("_type") {
            let index = entry.dropFirst("trip_point_".count).dropLast("_type".count)
            guard !index.isEmpty, index.allSatisfy(\.isNumber) else { continue }
            guard let typeText = SysfsFile.contents(of: zone.appendingPathComponent(entry)).text,
                  let kind = ThermalTripKind(rawValue: typeText),
                  let tempText = SysfsFile.contents(of: zone.appendingPathComponent("trip_point_\(index)_temp")).text,
                  let millidegrees = Int(tempText) else { continue }
            let celsius = Double(millidegrees) / 1000
            guard Self.plausibleTripCelsius.contains(celsius), celsius > 0 else { continue }
            // The lowest trip of a kind is the one that engages first; for fans, the
            // highest is the one after which no more cooling is left.
            trips[kind] = kind == .active ? max(trips[kind] ?? celsius, celsius) : min(trips[kind] ?? celsius, celsius)
        }
        return trips
    }

    /// The device's thermal state: the hottest zone's state, with its reason (and the
    /// ignored zones) as the source.
    public func read() -> SourcedValue<ThermalState> {
        let (zones, ignored) = zones()
        let ignoredNote = ignored.isEmpty ? "" : "; ignored: " + ignored.joined(separator: "; ")
        guard !zones.isEmpty else {
            let directory = sysRoot.appendingPathComponent("class/thermal").path
            let why = ignored.isEmpty ? "no thermal zones under \(directory)" : "no usable thermal zone under \(directory)"
            return SourcedValue(.nominal, source: SysfsFile.unknown(why + "; assumed nominal" + ignoredNote))
        }
        var worst = zones[0].classify()
        for zone in zones.dropFirst() {
            let verdict = zone.classify()
            if verdict.state > worst.state { worst = verdict }
        }
        let directory = sysRoot.appendingPathComponent("class/thermal").path
        return SourcedValue(worst.state, source: "\(directory): \(worst.reason)" + ignoredNote)
    }
}
