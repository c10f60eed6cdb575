import BackgroundTasks
import Foundation
import SchedulerCore

/// A scenario played out over a number of days from a start: every change of the device's
/// conditions, every foreground session and the condition bands of the report, with all
/// random choices made from one seed (the same scenario, start, days and seed give an equal
/// script on every machine).
public struct ScenarioScript: Hashable, Sendable {
    /// The device's conditions from an instant on.
    public struct ConditionChange: Hashable, Sendable {
        /// When the conditions change.
        public var at: Date
        /// The conditions from then on.
        public var conditions: Conditions

        /// Creates a change.
        public init(at: Date, conditions: Conditions) {
            self.at = at
            self.conditions = conditions
        }
    }

    /// The user has an app in the foreground.
    public struct ForegroundSession: Hashable, Sendable {
        /// The app; `nil` means every installed app.
        public var app: String?
        /// When the user opens it.
        public var start: Date
        /// When the user leaves it (cut at the script's end).
        public var end: Date

        /// Creates a session.
        public init(app: String?, start: Date, end: Date) {
            self.app = app
            self.start = start
            self.end = end
        }
    }

    /// The first instant (a midnight).
    public var start: Date
    /// The end: `start` plus the days simulated.
    public var end: Date
    /// The seed the random choices were drawn from.
    public var seed: UInt64
    /// The conditions at `start`.
    public var initialConditions: Conditions
    /// The changes after `start`, at strictly increasing instants, each different from the
    /// conditions before it.
    public var changes: [ConditionChange]
    /// The foreground sessions, by start.
    public var sessions: [ForegroundSession]
    /// Condition bands for ``DeviceReport``: `charging`, `in-use`, `low-power-mode`,
    /// `metered`, `network`, `thermal` (labelled with the state), contiguous stretches
    /// merged across midnight, sorted by kind then start.
    public var bands: [DeviceReport.Band]

    /// The conditions in force at `instant` (the initial ones before the first change).
    public func conditions(at instant: Date) -> Conditions {
        // Binary search for the number of changes at or before `instant`.
        var low = 0, high = changes.count
        while low < high {
            let middle = (low + high) / 2
            if changes[middle].at <= instant { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? initialConditions : changes[low - 1].conditions
    }
}

extension Scenario {
    /// The scenario played for `days` days from `start` (a midnight), drawing every random
    /// choice from `seed` (the scenario's own when `nil`).
    ///
    /// At most ``Simulation/maximumDays`` days are drawn (the script is kept in memory; a
    /// `Simulation` refuses more before it asks), fewer than none as none.
    public func script(start: Date, days: Int, seed: UInt64? = nil) -> ScenarioScript {
        ScriptBuilder(scenario: self, days: min(max(days, 0), Simulation.maximumDays), seed: seed ?? self.seed).script(start: start)
    }

    /// Simulated day `index` as a script plays it: the pattern's day with every boundary and
    /// launch moved by the jitter and the launches that do not happen removed (times in
    /// minutes since that day's start). `nil` when the scenario has no days.
    public func drawnDay(_ index: Int, seed: UInt64? = nil) -> Day? {
        guard !days.isEmpty, index >= 0 else { return nil }
        var random = SeededRandom(seed: seed ?? self.seed, stream: UInt64(index))
        return days[index % days.count].drawn(jitter: min(max(jitterMinutes, 0), 120), random: &random)
    }
}

// MARK: - Drawing each day

extension Scenario.Day {
    /// This day as it happens on one simulated day: every boundary and launch moved by up
    /// to `jitter` minutes, and the launches that do not happen removed. The draws come in
    /// a fixed order (the lists as written, then the launches), so a seed replays exactly.
    func drawn(jitter: Int, random: inout SeededRandom) -> Scenario.Day {
        var day = self
        day.power = Self.jittered(power, by: jitter, random: &random)
        day.network = Self.jittered(network, by: jitter, random: &random)
        day.lowPowerMode = Self.jittered(lowPowerMode, by: jitter, random: &random)
        day.thermal = Self.jittered(thermal, by: jitter, random: &random)
        day.inUse = Self.jittered(inUse, by: jitter, random: &random)
        day.launches = Self.drawn(launches, jitter: jitter, random: &random)
        return day
    }

    /// Intervals with moved boundaries, kept in the day and in order: a boundary pushed
    /// before the previous one stops there, and an interval that collapses is dropped.
    static func jittered<Element: DayInterval>(_ intervals: [Element], by jitter: Int, random: inout SeededRandom) -> [Element] {
        var floor = 0
        var result: [Element] = []
        for var interval in intervals {
            interval.from = max(shifted(interval.from, by: jitter, random: &random), floor)
            interval.to = max(shifted(interval.to, by: jitter, random: &random), interval.from)
            floor = interval.to
            if interval.to > interval.from { result.append(interval) }
        }
        return result
    }

    /// A boundary moved by a whole number of minutes in `-jitter...jitter`, kept in the day.
    /// 00:00 and 24:00 stay put: they are where one day meets the next, not events, and
    /// moving them would open a gap at midnight in a night spent on the charger.
    static func shifted(_ minute: Int, by jitter: Int, random: inout SeededRandom) -> Int {
        let offset = random.int(in: -jitter...jitter)
        let inDay = min(max(minute, 0), Scenario.minutesPerDay)
        guard inDay > 0, inDay < Scenario.minutesPerDay else { return inDay }
        return min(max(inDay + offset, 0), Scenario.minutesPerDay)
    }

    /// The launches that happen, moved and kept in order. Each launch draws its move and
    /// its chance whatever the outcome, so one launch's probability never shifts another's.
    static func drawn(_ launches: [Scenario.Launch], jitter: Int, random: inout SeededRandom) -> [Scenario.Launch] {
        var earliest = 0
        var result: [Scenario.Launch] = []
        for var launch in launches {
            let offset = random.int(in: -jitter...jitter)
            let happens = random.unit() < launch.probability
            launch.at = max(min(max(launch.at + offset, 0), Scenario.minutesPerDay - 1), earliest)
            earliest = launch.at
            if happens { result.append(launch) }
        }
        return result
    }
}

// MARK: - Building the script

/// Where one layer of the device's state starts (`delta` +1) or stops (-1) holding, in
/// seconds since the script's start.
struct ScenarioEdge {
    enum Layer {
        case power
        case network(metered: Bool)
        case lowPowerMode
        case thermal(ThermalState)
        case inUse
    }

    var offset: TimeInterval
    var delta: Int
    var layer: Layer
}

/// What holds between two edges: everything but the battery level, which moves within.
struct ScenarioFacts: Hashable {
    var onPower = false
    var network = false
    var metered = false
    var lowPowerMode = false
    var thermal = ThermalState.nominal
    var inUse = false
}

/// The layers' state while sweeping edges in time order. Depths rather than flags, so
/// overlapping in-use stretches and sessions, and an interval that ends where the next
/// begins, come out right whatever order edges at one instant are applied in.
struct ScenarioSweep {
    private var power = 0, network = 0, lowPowerMode = 0, thermal = 0, inUse = 0
    private var metered = false
    private var thermalState = ThermalState.nominal

    mutating func apply(_ edge: ScenarioEdge) {
        switch edge.layer {
        case .power: power += edge.delta
        case .network(let isMetered):
            network += edge.delta
            if edge.delta > 0 { metered = isMetered }
        case .lowPowerMode: lowPowerMode += edge.delta
        case .thermal(let state):
            thermal += edge.delta
            if edge.delta > 0 { thermalState = state }
        case .inUse: inUse += edge.delta
        }
    }

    var facts: ScenarioFacts {
        ScenarioFacts(
            onPower: power > 0,
            network: network > 0,
            metered: network > 0 && metered,
            lowPowerMode: lowPowerMode > 0,
            thermal: thermal > 0 ? thermalState : .nominal,
            inUse: inUse > 0
        )
    }
}

/// A stretch of the script with the same facts, in seconds since its start.
struct ScenarioSegment {
    var from: TimeInterval
    var to: TimeInterval
    var facts: ScenarioFacts
}

/// Plays a scenario: draws each day, turns the days into edges, sweeps them into segments,
/// then walks the battery through the segments.
struct ScriptBuilder {
    let scenario: Scenario
    let days: Int
    let seed: UInt64

    static let secondsPerDay: TimeInterval = 86_400
    /// How often a moving battery level is reported.
    static let batteryReportInterval: TimeInterval = 30 * 60

    /// A foreground session, in seconds since the script's start.
    typealias Session = (app: String?, from: TimeInterval, to: TimeInterval)

    var total: TimeInterval { TimeInterval(days) * Self.secondsPerDay }

    func script(start: Date) -> ScenarioScript {
        let drawnDays = drawDays()
        let sessions = self.sessions(of: drawnDays)
        let segments = Self.segments(edges(of: drawnDays, sessions: sessions), until: total)
        var battery = BatteryWalk(battery: scenario.battery)
        let (initial, changes) = battery.changes(over: segments, start: start)
        return ScenarioScript(
            start: start,
            end: start.addingTimeInterval(total),
            seed: seed,
            initialConditions: initial,
            changes: changes,
            sessions: sessions.map { .init(app: $0.app, start: start.addingTimeInterval($0.from), end: start.addingTimeInterval($0.to)) },
            bands: BandKind.bands(of: segments, start: start)
        )
    }

    /// Each simulated day with its random choices made, from its own stream of the seed (so
    /// day 5 is the same whether 7 or 30 days are played).
    func drawDays() -> [Scenario.Day] {
        (0..<days).compactMap { scenario.drawnDay($0, seed: seed) }
    }

    /// The shortest session a launch opens, in seconds (docs/scenarios.md, "A day").
    static let shortestSession: TimeInterval = 1

    /// The launches that happen, as (app, from, to) in seconds, cut at the end.
    func sessions(of drawnDays: [Scenario.Day]) -> [Session] {
        drawnDays.enumerated().flatMap { index, day in
            day.launches.compactMap { launch -> Session? in
                let from = Self.offset(day: index, minute: launch.at)
                // At least a second: a length the file may give (above 0) but that vanishes
                // next to the offset's magnitude would lose the launch. (One of none or less,
                // in a scenario built in code without the file's checks, opens nothing.)
                let length = launch.minutes > 0 ? max(launch.minutes * 60, Self.shortestSession) : launch.minutes * 60
                let to = min(from + length, total)
                return to > from ? (launch.app, from, to) : nil
            }
        }
    }

    func edges(of drawnDays: [Scenario.Day], sessions: [Session]) -> [ScenarioEdge] {
        // A device without a battery is on external power throughout, whatever the days say.
        var edges = scenario.battery == nil ? [ScenarioEdge(offset: 0, delta: 1, layer: .power)] : []
        for (index, day) in drawnDays.enumerated() {
            if scenario.battery != nil {
                edges += Self.edges(day.power, day: index) { _ in .power }
            }
            edges += Self.edges(day.network, day: index) { .network(metered: $0.metered) }
            edges += Self.edges(day.lowPowerMode, day: index) { _ in .lowPowerMode }
            edges += Self.edges(day.thermal, day: index) { .thermal($0.state) }
            edges += Self.edges(day.inUse, day: index) { _ in .inUse }
        }
        for session in sessions {
            edges.append(ScenarioEdge(offset: session.from, delta: 1, layer: .inUse))
            edges.append(ScenarioEdge(offset: session.to, delta: -1, layer: .inUse))
        }
        return edges.sorted { $0.offset < $1.offset }
    }

    static func edges<Element: DayInterval>(_ intervals: [Element], day: Int, layer: (Element) -> ScenarioEdge.Layer) -> [ScenarioEdge] {
        intervals.flatMap { interval in
            [
                ScenarioEdge(offset: offset(day: day, minute: interval.from), delta: 1, layer: layer(interval)),
                ScenarioEdge(offset: offset(day: day, minute: interval.to), delta: -1, layer: layer(interval)),
            ]
        }
    }

    static func offset(day: Int, minute: Int) -> TimeInterval {
        TimeInterval(day) * secondsPerDay + TimeInterval(minute) * 60
    }

    /// Sorted edges swept into segments that tile `0..<total`, neighbours always different.
    static func segments(_ edges: [ScenarioEdge], until total: TimeInterval) -> [ScenarioSegment] {
        var sweep = ScenarioSweep()
        var segments: [ScenarioSegment] = []
        var next = 0
        var cursor: TimeInterval = 0
        while cursor < total {
            while next < edges.count, edges[next].offset <= cursor {
                sweep.apply(edges[next])
                next += 1
            }
            let until = next < edges.count ? min(edges[next].offset, total) : total
            if let last = segments.last, last.facts == sweep.facts {
                segments[segments.count - 1].to = until
            } else {
                segments.append(ScenarioSegment(from: cursor, to: until, facts: sweep.facts))
            }
            cursor = until
        }
        return segments
    }
}

/// The battery level through the segments, and the conditions it reports.
struct BatteryWalk {
    let battery: Scenario.Battery?
    /// The level at the start of the next segment (exact; rounded only when reported).
    private var level: Double

    init(battery: Scenario.Battery?) {
        self.battery = battery
        level = min(max(battery?.level ?? 0, 0), 1)
    }

    /// The conditions at the start and every change after it.
    mutating func changes(over segments: [ScenarioSegment], start: Date) -> (Conditions, [ScenarioScript.ConditionChange]) {
        var initial = conditions(ScenarioFacts(), level: level)
        var changes: [ScenarioScript.ConditionChange] = []
        for segment in segments {
            for sample in samples(in: segment) {
                let conditions = conditions(segment.facts, level: sample.level)
                if sample.offset == 0 {
                    initial = conditions
                } else if conditions != (changes.last?.conditions ?? initial) {
                    changes.append(.init(at: start.addingTimeInterval(sample.offset), conditions: conditions))
                }
            }
        }
        return (initial, changes)
    }

    /// The instants at which the segment is reported, with the level then: its start, every
    /// half hour (on the grid from the start) while the level moves, and the instant it
    /// reaches full or empty (rounded up to a second). Advances the level to the end.
    mutating func samples(in segment: ScenarioSegment) -> [(offset: TimeInterval, level: Double)] {
        var samples = [(offset: segment.from, level: level)]
        let rate = ratePerSecond(segment.facts)
        let bound: Double = rate > 0 ? 1 : 0
        guard battery != nil, rate != 0, level != bound else { return samples }
        let reached = segment.from + (bound - level) / rate
        let step = ScriptBuilder.batteryReportInterval
        var instant = ((segment.from / step).rounded(.down) + 1) * step
        while instant < min(reached, segment.to) {
            samples.append((instant, level + rate * (instant - segment.from)))
            instant += step
        }
        if reached.rounded(.up) < segment.to { samples.append((reached.rounded(.up), bound)) }
        level = min(max(level + rate * (segment.to - segment.from), 0), 1)
        return samples
    }

    /// Level gained (positive) or lost per second in a segment.
    func ratePerSecond(_ facts: ScenarioFacts) -> Double {
        guard let battery else { return 0 }
        if facts.onPower { return battery.chargePerHour / 3600 }
        return -(facts.inUse ? battery.inUseDrainPerHour : battery.drainPerHour) / 3600
    }

    func conditions(_ facts: ScenarioFacts, level: Double) -> Conditions {
        let reported = battery.map { _ in (min(max(level, 0), 1) * 1000).rounded() / 1000 }
        let state: BatteryState = switch reported {
        case nil: .noBattery
        case let reported? where facts.onPower: reported >= 1 ? .full : .charging
        case _?: .discharging
        }
        return Conditions(
            externalPower: battery == nil || facts.onPower,
            networkAvailable: facts.network,
            batteryLevel: reported,
            batteryState: state,
            lowPowerMode: facts.lowPowerMode,
            thermalState: facts.thermal,
            networkMetered: facts.network ? facts.metered : nil,
            deviceIdle: !facts.inUse,
            cpuPressure: nil
        )
    }
}

/// The condition bands of a report, one kind per case (raw value: the band's kind).
enum BandKind: String, CaseIterable {
    case charging
    case inUse = "in-use"
    case lowPowerMode = "low-power-mode"
    case metered
    case network
    case thermal

    /// The band's label while the condition holds, `nil` while it does not.
    func label(_ facts: ScenarioFacts) -> String? {
        let holds: Bool
        switch self {
        case .charging: holds = facts.onPower
        case .inUse: holds = facts.inUse
        case .lowPowerMode: holds = facts.lowPowerMode
        case .metered: holds = facts.metered
        case .network: holds = facts.network
        case .thermal: return facts.thermal == .nominal ? nil : facts.thermal.description
        }
        return holds ? "" : nil
    }

    /// Every kind's bands, neighbouring segments with the same label merged (segments tile
    /// the script, so this merges across midnight), sorted by kind then start.
    static func bands(of segments: [ScenarioSegment], start: Date) -> [DeviceReport.Band] {
        allCases.sorted { $0.rawValue < $1.rawValue }.flatMap { kind in
            var bands: [DeviceReport.Band] = []
            var previousLabel: String?
            for segment in segments {
                let label = kind.label(segment.facts)
                if let label, label == previousLabel {
                    bands[bands.count - 1].to = start.addingTimeInterval(segment.to)
                } else if let label {
                    bands.append(.init(kind: kind.rawValue, from: start.addingTimeInterval(segment.from), to: start.addingTimeInterval(segment.to), label: label))
                }
                previousLabel = label
            }
            return bands
        }
    }
}
