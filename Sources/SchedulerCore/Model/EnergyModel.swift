import Foundation

/// How the energy log turns what a run used into an estimate of the energy it cost, and how
/// long the log keeps runs.
///
/// Linux offers no per-process energy meter that works everywhere (RAPL counters are
/// package-wide, root-only on current kernels, and absent on ARM), so the log estimates,
/// like Xcode's "energy impact": a run costs
///
///     cpuTime × perCoreWatts + wallTime × baseWatts
///
/// The figures are for comparing runs and apps with each other, not for a power meter.
///
/// Decoding accepts any subset of the keys (the others keep their defaults) and refuses a
/// negative, infinite or NaN value with the key named.
public struct EnergyModel: Hashable, Sendable, Codable {
    /// Watts charged per second of CPU time (user + system); default 2.0 W.
    ///
    /// Why 2.0: one busy core of a phone or laptop SoC draws roughly 1 to 5 W above idle
    /// (efficiency cores about 0.5 W, performance cores 2 to 5 W); 2 W sits in that range
    /// without favouring either, and one CPU-second then costs 2 J.
    public var perCoreWatts: Double
    /// Watts charged for every second a run is alive, busy or not; default 0.5 W.
    ///
    /// Why: a run keeps the device out of its deepest sleep (memory refreshed, SoC uncore and
    /// often a radio awake) even while it only waits on the network; half a watt is a
    /// typical difference between a suspended and an awake-but-idle phone or laptop. It is
    /// what makes a task that waits for 10 minutes cost more than one that is done in 1 s.
    public var baseWatts: Double
    /// How long finished runs stay in the log; default 30 days (Xcode Organizer's energy
    /// reports also look back a few weeks). Pruning deletes the older ones.
    public var retention: TimeInterval

    /// The default per-core wattage, 2.0 W (see ``perCoreWatts``).
    public static let defaultPerCoreWatts = 2.0
    /// The default base wattage, 0.5 W (see ``baseWatts``).
    public static let defaultBaseWatts = 0.5
    /// The default retention, 30 days (see ``retention``).
    public static let defaultRetention: TimeInterval = 30 * 86_400

    /// Creates a model; every parameter defaults to the documented default.
    public init(
        perCoreWatts: Double = EnergyModel.defaultPerCoreWatts,
        baseWatts: Double = EnergyModel.defaultBaseWatts,
        retention: TimeInterval = EnergyModel.defaultRetention
    ) {
        self.perCoreWatts = perCoreWatts
        self.baseWatts = baseWatts
        self.retention = retention
    }

    /// The estimated energy of a run, in joules: `cpuTime × perCoreWatts + wallTime × baseWatts`.
    ///
    /// A missing CPU time (not measured) counts as none, so the result is then the base
    /// cost alone: a lower bound rather than a guess. Negative or non-finite inputs (times
    /// or wattages) count as 0, so a clock that stepped backwards never yields negative
    /// energy, and the result is at most ``maximumEstimate``: what the stores accept of a
    /// run, so a model configured in code with absurd wattages cannot write a run row that
    /// every later read refuses.
    public func estimate(cpuTime: TimeInterval?, wallTime: TimeInterval) -> Double {
        func usable(_ value: Double) -> Double { value.isFinite && value > 0 ? value : 0 }
        // Every factor is finite and at least 0, so the sum is too, or +infinity on overflow.
        return min(usable(cpuTime ?? 0) * usable(perCoreWatts) + usable(wallTime) * usable(baseWatts), Self.maximumEstimate)
    }

    /// The most joules one run may be estimated at, and stored with: a petajoule (a megawatt
    /// for 30 years). Sums of any number of such runs a store can hold stay finite.
    public static let maximumEstimate: Double = 1e15

    /// The instant before which finished runs are pruned, as of `now`.
    public func pruneCutoff(now: Date) -> Date {
        now.addingTimeInterval(-retention)
    }

    // MARK: Codable

    private enum CodingKeys: String, CodingKey {
        case perCoreWatts, baseWatts, retention
    }

    /// Decodes a model; missing keys take their defaults, invalid values are refused with
    /// the key named.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func value(_ key: CodingKeys, default fallback: Double) throws -> Double {
            guard let value = try container.decodeIfPresent(Double.self, forKey: key) else { return fallback }
            guard value.isFinite, value >= 0 else {
                throw DecodingError.dataCorruptedError(
                    forKey: key,
                    in: container,
                    debugDescription: "\(key.stringValue) must be a finite number of at least 0, got \(value)"
                )
            }
            return value
        }
        perCoreWatts = try value(.perCoreWatts, default: Self.defaultPerCoreWatts)
        baseWatts = try value(.baseWatts, default: Self.defaultBaseWatts)
        retention = try value(.retention, default: Self.defaultRetention)
    }

    /// Encodes every key.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(perCoreWatts, forKey: .perCoreWatts)
        try container.encode(baseWatts, forKey: .baseWatts)
        try container.encode(retention, forKey: .retention)
    }
}

/// The energy log summed per app and task: what Xcode Organizer's energy report shows.
public enum EnergySummary {
    /// The totals of one app's runs of one task identifier (or of all its tasks).
    public struct Row: Hashable, Sendable, Codable {
        /// The app.
        public var app: AppID
        /// The task identifier, or `nil` in a per-app total (``byApp(from:)``).
        public var identifier: String?
        /// Finished runs, whatever their outcome.
        public var runs: Int
        /// Runs still in progress (not counted in any other figure).
        public var inProgress: Int
        /// Finished runs per outcome, keyed by ``RunOutcome/rawValue``; outcomes that did not
        /// occur are absent.
        public var outcomes: [String: Int]
        /// Runs that were expired: outcome ``RunOutcome/expired`` or ``RunOutcome/terminated``.
        public var expirations: Int
        /// Mean wall time of the finished runs that have a real duration, or `nil` when none.
        /// Interrupted runs are left out: their end is when the scheduler noticed, on its
        /// next start, which may be hours after the run really stopped.
        public var meanDuration: TimeInterval?
        /// The 95th percentile of the same durations, by the nearest-rank method (the
        /// smallest duration that at least 95 % of the runs do not exceed), or `nil`.
        public var p95Duration: TimeInterval?
        /// CPU seconds (user + system) of the finished runs that were measured. A CPU time
        /// that is negative, infinite or NaN is left out, and the total stops at the largest
        /// finite `Double`, so it is always a number JSON can hold.
        public var cpuSeconds: Double
        /// Estimated joules of the finished runs that have an estimate (see ``EnergyModel``),
        /// summed as ``cpuSeconds`` is.
        public var energyJoules: Double
        /// Finished runs that carry no energy estimate (recorded before the energy log
        /// existed, or not measured, or one that is negative, infinite or NaN), so the reader
        /// knows ``energyJoules`` leaves them out.
        public var unmeasuredRuns: Int

        /// Creates a row.
        public init(
            app: AppID,
            identifier: String?,
            runs: Int = 0,
            inProgress: Int = 0,
            outcomes: [String: Int] = [:],
            expirations: Int = 0,
            meanDuration: TimeInterval? = nil,
            p95Duration: TimeInterval? = nil,
            cpuSeconds: Double = 0,
            energyJoules: Double = 0,
            unmeasuredRuns: Int = 0
        ) {
            self.app = app
            self.identifier = identifier
            self.runs = runs
            self.inProgress = inProgress
            self.outcomes = outcomes
            self.expirations = expirations
            self.meanDuration = meanDuration
            self.p95Duration = p95Duration
            self.cpuSeconds = cpuSeconds
            self.energyJoules = energyJoules
            self.unmeasuredRuns = unmeasuredRuns
        }

        private enum CodingKeys: String, CodingKey {
            case app, identifier, runs, inProgress, outcomes, expirations, meanDuration, p95Duration
            case cpuSeconds, energyJoules, unmeasuredRuns
        }

        /// Decodes a row (absent optional fields are `nil`).
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            app = try container.decode(AppID.self, forKey: .app)
            identifier = try container.decodeIfPresent(String.self, forKey: .identifier)
            runs = try container.decode(Int.self, forKey: .runs)
            inProgress = try container.decode(Int.self, forKey: .inProgress)
            outcomes = try container.decode([String: Int].self, forKey: .outcomes)
            expirations = try container.decode(Int.self, forKey: .expirations)
            meanDuration = try container.decodeIfPresent(Double.self, forKey: .meanDuration)
            p95Duration = try container.decodeIfPresent(Double.self, forKey: .p95Duration)
            cpuSeconds = try container.decode(Double.self, forKey: .cpuSeconds)
            energyJoules = try container.decode(Double.self, forKey: .energyJoules)
            unmeasuredRuns = try container.decode(Int.self, forKey: .unmeasuredRuns)
        }

        /// Encodes every field, `nil` ones as `null`, so JSON readers always find each key.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(app, forKey: .app)
            try container.encode(identifier, forKey: .identifier)
            try container.encode(runs, forKey: .runs)
            try container.encode(inProgress, forKey: .inProgress)
            try container.encode(outcomes, forKey: .outcomes)
            try container.encode(expirations, forKey: .expirations)
            try container.encode(meanDuration, forKey: .meanDuration)
            try container.encode(p95Duration, forKey: .p95Duration)
            try container.encode(cpuSeconds, forKey: .cpuSeconds)
            try container.encode(energyJoules, forKey: .energyJoules)
            try container.encode(unmeasuredRuns, forKey: .unmeasuredRuns)
        }
    }

    /// One row per app and task identifier, sorted by app then identifier.
    public static func make(from runs: [RunRecord]) -> [Row] {
        summarize(runs) { RequestKey(app: $0.app, identifier: $0.identifier) }
            .map { key, runs in row(app: key.app, identifier: key.identifier, runs: runs) }
    }

    /// One row per app (``Row/identifier`` `nil`), all its tasks together, sorted by app.
    /// The percentile is computed over the app's runs, not combined from per-task rows.
    public static func byApp(from runs: [RunRecord]) -> [Row] {
        summarize(runs) { $0.app }
            .map { app, runs in row(app: app, identifier: nil, runs: runs) }
    }

    /// The nearest-rank percentile `fraction` (0...1) of `values`, or `nil` when empty: the
    /// smallest value such that at least `fraction` of the values are at most it.
    public static func percentile(_ fraction: Double, of values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }

    private static func summarize<Key: Hashable & Comparable>(
        _ runs: [RunRecord],
        by key: (RunRecord) -> Key
    ) -> [(Key, [RunRecord])] {
        Dictionary(grouping: runs, by: key).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    private static func row(app: AppID, identifier: String?, runs: [RunRecord]) -> Row {
        var row = Row(app: app, identifier: identifier)
        var durations: [TimeInterval] = []
        for run in runs {
            guard let outcome = run.outcome, run.duration != nil else {
                row.inProgress += 1
                continue
            }
            row.runs += 1
            row.outcomes[outcome.rawValue, default: 0] += 1
            if outcome == .expired || outcome == .terminated { row.expirations += 1 }
            if let duration = run.observedDuration, duration.isFinite { durations.append(max(0, duration)) }
            // Only what a run can have is summed (the stores refuse anything else when they
            // read a row; records built in code are not checked): an infinite or NaN figure
            // made the sum one too, which JSON cannot encode.
            if let cpuTime = run.cpuTime, usable(cpuTime) { row.cpuSeconds = saturatingSum(row.cpuSeconds, cpuTime) }
            if let joules = run.energyJoules, usable(joules) {
                row.energyJoules = saturatingSum(row.energyJoules, joules)
            } else {
                row.unmeasuredRuns += 1
            }
        }
        if !durations.isEmpty {
            let count = Double(durations.count)
            let total = durations.reduce(0, +)
            // Dividing each first cannot overflow; the plain sum is kept when finite so that
            // ordinary means are exactly what they always were.
            row.meanDuration = total.isFinite ? total / count : durations.reduce(0) { $0 + $1 / count }
            row.p95Duration = percentile(0.95, of: durations)
        }
        return row
    }

    /// Whether a measurement can be summed: finite and not negative.
    private static func usable(_ value: Double) -> Bool { value.isFinite && value >= 0 }

    /// `total + value`, or the largest finite `Double` when that would be infinite: a total
    /// says "at least this much" rather than becoming a value JSON cannot hold.
    private static func saturatingSum(_ total: Double, _ value: Double) -> Double {
        let sum = total + value
        return sum.isFinite ? sum : .greatestFiniteMagnitude
    }
}
