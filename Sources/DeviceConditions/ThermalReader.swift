import Foundation
import SchedulerCore

/// The kinds of trip point that say something about throttling. `active` trips only switch
/// fans on, which is normal operation, so they are not used.
public enum ThermalTripKind: String, Hashable, Sendable, CaseIterable {
    /// The kernel starts passive cooling (throttling the CPU).
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
    /// The lowest trip temperature of each kind the zone has, degrees Celsius.
    public var trips: [ThermalTripKind: Double]

    /// Creates a zone reading.
    public init(name: String, type: String? = nil, celsius: Double, trips: [ThermalTripKind: Double] = [:]) {
        self.name = name
        self.type = type
        self.celsius = celsius
        self.trips = trips
    }

    /// This zone's state:
    ///
    /// - with at least one `passive`, `hot` or `critical` trip: at or above the critical trip
    ///   is `critical`; else at or above the hot trip `serious`; else at or above the passive
    ///   trip `fair`; else `nominal`. A zone with only some kinds uses the ones it has (a zone
    ///   with only a critical trip is `nominal` until it reaches it);
    /// - without such trips: the absolute thresholds ``ThermalReader/absoluteFair`` (70 C),
    ///   ``ThermalReader/absoluteSerious`` (85 C) and ``ThermalReader/absoluteCritical``
    ///   (100 C), each inclusive.
    ///
    /// The reason names the temperature and the threshold that decided.
    public func classify() -> (state: ThermalState, reason: String) {
        let label = name + (type.map { " (\($0))" } ?? "")
        let temperature = Self.format(celsius)
        if !trips.isEmpty {
            let ladder: [(ThermalTripKind, ThermalState)] = [(.critical, .critical), (.hot, .serious), (.passive, .fair)]
            for (kind, state) in ladder {
                if let trip = trips[kind], celsius >= trip {
                    return (state, "\(label) at \(temperature) >= \(kind.rawValue) trip \(Self.format(trip))")
                }
            }
            let listed = ThermalTripKind.allCases.compactMap { kind in trips[kind].map { "\(kind.rawValue) \(Self.format($0))" } }
            return (.nominal, "\(label) at \(temperature), below its trips (\(listed.joined(separator: ", ")))")
        }
        let ladder: [(Double, ThermalState)] = [
            (ThermalReader.absoluteCritical, .critical), (ThermalReader.absoluteSerious, .serious), (ThermalReader.absoluteFair, .fair),
        ]
        for (threshold, state) in ladder where celsius >= threshold {
            return (state, "\(label) at \(temperature) >= \(Self.format(threshold)) (no trip points: absolute threshold)")
        }
        return (.nominal, "\(label) at \(temperature), below \(Self.format(ThermalReader.absoluteFair)) (no trip points: absolute threshold)")
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

    /// Without trip points: `fair` from this temperature (C), where laptop CPUs usually
    /// begin to boost less.
    public static let absoluteFair = 70.0
    /// Without trip points: `serious` from this temperature (C), near where most CPUs
    /// begin to throttle.
    public static let absoluteSerious = 85.0
    /// Without trip points: `critical` from this temperature (C), at or above most CPUs'
    /// maximum junction temperature.
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
            // The lowest trip of a kind is the one that engages first.
            trips[kind] = min(trips[kind] ?? celsius, celsius)
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
