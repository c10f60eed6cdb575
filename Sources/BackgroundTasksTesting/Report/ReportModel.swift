import Foundation
import SchedulerCore

/// What a simulated device's energy report shows, in the spirit of Xcode's energy log: a
/// timeline per app and task (runs as bars coloured by outcome), bands for the device's
/// conditions, markers for app launches, and a table per task. Built from a simulation's
/// trace; rendered by ``HTMLReport``.
public struct DeviceReport: Hashable, Sendable, Codable {
    /// One stretch of time during which a device condition held.
    public struct Band: Hashable, Sendable, Codable {
        /// Which condition: `charging`, `network`, `metered`, `low-power-mode`, `in-use`,
        /// `thermal` (with the state in ``label``).
        public var kind: String
        /// When it began.
        public var from: Date
        /// When it ended.
        public var to: Date
        /// A short label (for `thermal`, the state; else empty).
        public var label: String

        /// Creates a band.
        public init(kind: String, from: Date, to: Date, label: String = "") {
            self.kind = kind
            self.from = from
            self.to = to
            self.label = label
        }
    }

    /// The user opened an app.
    public struct Launch: Hashable, Sendable, Codable {
        /// The app.
        public var app: String
        /// When it came to the foreground.
        public var at: Date
        /// How old its data was: seconds since its last successful refresh, `nil` when it
        /// never had one.
        public var staleness: TimeInterval?

        /// Creates a launch marker.
        public init(app: String, at: Date, staleness: TimeInterval?) {
            self.app = app
            self.at = at
            self.staleness = staleness
        }
    }

    /// One run, drawn as a bar.
    public struct Run: Hashable, Sendable, Codable {
        /// When it started.
        public var start: Date
        /// When it ended.
        public var end: Date
        /// How it ended (`success`, `failure`, `expired`, `terminated`, `crashed`, `interrupted`).
        public var outcome: String
        /// Why it stopped, when known.
        public var stopReason: String?

        /// Creates a run bar.
        public init(start: Date, end: Date, outcome: String, stopReason: String?) {
            self.start = start
            self.end = end
            self.outcome = outcome
            self.stopReason = stopReason
        }
    }

    /// One task of one app: its runs, and the figures of the table.
    public struct Task: Hashable, Sendable, Codable {
        /// The app.
        public var app: String
        /// The task identifier.
        public var identifier: String
        /// The runs, in start order.
        public var runs: [Run]
        /// Runs that ended in expiration.
        public var expirations: Int
        /// Runs that were terminated.
        public var terminations: Int
        /// CPU seconds of all runs (simulated work counts as CPU time).
        public var cpuSeconds: Double
        /// Estimated joules of all runs.
        public var joules: Double

        /// Creates a task track.
        public init(app: String, identifier: String, runs: [Run], expirations: Int, terminations: Int, cpuSeconds: Double, joules: Double) {
            self.app = app
            self.identifier = identifier
            self.runs = runs
            self.expirations = expirations
            self.terminations = terminations
            self.cpuSeconds = cpuSeconds
            self.joules = joules
        }
    }

    /// The page title.
    public var title: String
    /// The scenario's name.
    public var scenario: String
    /// The seed of every random choice.
    public var seed: UInt64
    /// The simulated span.
    public var start: Date
    /// The end of the simulated span.
    public var end: Date
    /// Condition bands.
    public var bands: [Band]
    /// App launches.
    public var launches: [Launch]
    /// Tasks, by app then identifier.
    public var tasks: [Task]
    /// Device wakes (instants at which at least one run started).
    public var wakeups: Int
    /// Free-form lines shown under the title (for example how to reproduce the run).
    public var notes: [String]

    /// Creates a report.
    public init(title: String, scenario: String, seed: UInt64, start: Date, end: Date, bands: [Band], launches: [Launch], tasks: [Task], wakeups: Int, notes: [String]) {
        self.title = title
        self.scenario = scenario
        self.seed = seed
        self.start = start
        self.end = end
        self.bands = bands
        self.launches = launches
        self.tasks = tasks
        self.wakeups = wakeups
        self.notes = notes
    }
}

/// What a fleet report shows: the load a fleet of devices puts on a backend, minute by
/// minute, the stampede after a shared event, and what the devices got out of it.
public struct FleetReport: Hashable, Sendable, Codable {
    /// A labelled instant on the load chart (for example "every device regains the network").
    public struct Marker: Hashable, Sendable, Codable {
        /// Minutes from the start of the simulation.
        public var minute: Int
        /// What happened.
        public var label: String

        /// Creates a marker.
        public init(minute: Int, label: String) {
            self.minute = minute
            self.label = label
        }
    }

    /// One row of the summary table.
    public struct Row: Hashable, Sendable, Codable {
        /// What the figure is.
        public var name: String
        /// The figure, formatted.
        public var value: String

        /// Creates a row.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A second series drawn under the first, for comparison (the same fleet with herd
    /// spreading off, say).
    public struct Comparison: Hashable, Sendable, Codable {
        /// What the first series is (the legend).
        public var label: String
        /// What this series is (the legend).
        public var comparisonLabel: String
        /// Task runs started in each minute, in the other setting.
        public var runsPerMinute: [Int]

        /// Creates a comparison.
        public init(label: String, comparisonLabel: String, runsPerMinute: [Int]) {
            self.label = label
            self.comparisonLabel = comparisonLabel
            self.runsPerMinute = runsPerMinute
        }
    }

    /// The page title.
    public var title: String
    /// Devices simulated.
    public var devices: Int
    /// Days simulated.
    public var days: Int
    /// The scenario mix, for example `commuter=0.5, office=0.3, night-charger=0.2`.
    public var mix: String
    /// The seed.
    public var seed: UInt64
    /// Task runs started in each minute of the simulation, across the fleet (backend requests).
    public var runsPerMinute: [Int]
    /// Shared events worth a marker.
    public var markers: [Marker]
    /// The summary table (mean and peak rate, peak-to-mean, worst minute, fresh launches,
    /// energy per device per day...).
    public var summary: [Row]
    /// Free-form lines shown under the title.
    public var notes: [String]
    /// A series to compare with, if any.
    public var comparison: Comparison?

    /// Creates a fleet report.
    public init(title: String, devices: Int, days: Int, mix: String, seed: UInt64, runsPerMinute: [Int], markers: [Marker], summary: [Row], notes: [String], comparison: Comparison? = nil) {
        self.title = title
        self.devices = devices
        self.days = days
        self.mix = mix
        self.seed = seed
        self.runsPerMinute = runsPerMinute
        self.markers = markers
        self.summary = summary
        self.notes = notes
        self.comparison = comparison
    }
}
