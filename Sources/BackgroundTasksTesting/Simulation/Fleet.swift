import BackgroundTasks
import Dispatch
import Foundation
import SchedulerCore
import Synchronization

/// Many devices, each with its own seeded variation of a scenario from a mix, running the
/// same modelled apps: the load a backend will see (task runs per minute), whether devices
/// stampede after a shared event, and what the devices got out of it (fresh content at
/// launch, energy). Devices are independent, so they run on every core; the aggregate does
/// not depend on how they were spread over threads.
public struct Fleet: Sendable {
    /// Scenarios and the share of devices living each.
    public struct Mix: Hashable, Sendable, CustomStringConvertible {
        /// One scenario and its weight.
        public struct Entry: Hashable, Sendable {
            /// The scenario.
            public var scenario: Scenario
            /// Its weight (positive; weights are normalised when drawing).
            public var weight: Double
            /// The file it was read from, as given; `nil` for a built-in or one made in code.
            public var file: String?

            /// Creates an entry.
            public init(scenario: Scenario, weight: Double, file: String? = nil) {
                self.scenario = scenario
                self.weight = weight
                self.file = file
            }

            /// How ``Mix/parse(_:)`` names it: the file as given, else the scenario's name.
            var label: String { file ?? scenario.name }
            /// The file's absolute path, as a file's other errors give it.
            var absoluteFile: String? { file.map { URL(fileURLWithPath: $0).path } }
            /// How an error names it: the file's absolute path, else "scenario 'NAME'".
            var shownName: String { absoluteFile ?? "scenario '\(scenario.name)'" }
        }

        /// The scenarios and their weights.
        public var entries: [Entry]

        /// Creates a mix.
        public init(_ entries: [Entry]) {
            self.entries = entries
        }

        /// The default: commuter 0.4, office 0.3, night-charger 0.2, travel 0.1.
        public static var standard: Mix {
            Mix([("commuter", 0.4), ("office", 0.3), ("night-charger", 0.2), ("travel", 0.1)].compactMap { name, weight in
                Scenario.builtIn(named: name).map { Entry(scenario: $0, weight: weight) }
            })
        }

        /// The largest weight ``parse(_:)`` accepts: weights are relative, and a bound keeps
        /// their sum finite.
        public static let maximumWeight = 1_000_000.0

        /// Parses `commuter=0.5,office=0.3,lives/nurse.json=0.2,...`: built-in scenario names
        /// or scenario files (a path with a slash or ending in `.json`, or anything at that
        /// path: ``Scenario/builtInOrFile(_:)``), each with a weight above 0 and at most
        /// ``maximumWeight``. The weight follows the last `=`, so a path may hold one; a path
        /// holding a comma cannot be given (commas separate the entries). A file is read and
        /// checked here, its errors named with the file and the culprit's place in it.
        public static func parse(_ text: String) throws(FleetError) -> Mix {
            var entries: [Entry] = []
            var files: Set<String> = []
            for part in text.split(separator: ",", omittingEmptySubsequences: false) {
                let separator = part.lastIndex(of: "=")
                let pieces = separator.map { [part[..<$0], part[part.index(after: $0)...]] }?.map { $0.trimmingCharacters(in: .whitespaces) } ?? []
                // Plain decimals only: Double would take 0x10, 1e-320 or "inf".
                guard pieces.count == 2, !pieces[0].isEmpty, CommandLineValue.isPlainDecimal(pieces[1]), let weight = Double(pieces[1]), weight.isFinite,
                      weight >= 1e-9, weight <= maximumWeight else {
                    throw FleetError("--mix: expected name=weight or FILE=weight with a weight above 0 and at most \(formatWeight(maximumWeight)), written in plain decimals (at least 0.000000001), found '\(part)'")
                }
                let name = pieces[0]
                let found: Scenario?
                do throws(ScenarioError) {
                    found = try Scenario.builtInOrFile(name)
                } catch {
                    throw FleetError("--mix: \(error)", file: name)
                }
                guard let scenario = found else {
                    throw FleetError("--mix: unknown scenario '\(name)' (built-in: \(Scenario.builtInNames.joined(separator: ", ")); or a scenario file, a path with a / or ending in .json)")
                }
                let isBuiltIn = Scenario.builtIn(named: name) != nil
                if isBuiltIn {
                    guard !entries.contains(where: { $0.file == nil && $0.scenario.name == scenario.name }) else {
                        throw FleetError("--mix: scenario '\(scenario.name)' is listed twice")
                    }
                } else {
                    // The same file under two spellings (./a.json, a link to it) is listed
                    // twice too: compared as the kernel resolves them (realpath; Foundation's
                    // standardizing drops `..` before following links). It was just read.
                    let resolved = realpath(name, nil).map { pointer in defer { free(pointer) }; return String(cString: pointer) } ?? name
                    guard files.insert(resolved).inserted else {
                        throw FleetError("--mix: the scenario file '\(name)' is listed twice (\(resolved))")
                    }
                }
                entries.append(Entry(scenario: scenario, weight: weight, file: isBuiltIn ? nil : name))
            }
            return Mix(entries)
        }

        /// `commuter=0.4,office=0.3,...`: what ``parse(_:)`` reads, so it can be pasted back
        /// (a scenario read from a file is named by its file).
        public var description: String {
            entries.map { "\($0.label)=\(formatWeight($0.weight))" }.joined(separator: ",")
        }

        /// The scenario of device number `index` under `seed`: a weighted draw of its own.
        func scenario(forDevice index: Int, seed: UInt64) -> Scenario {
            var random = SeededRandom(seed: seed, stream: UInt64(index) &* 2 &+ 1)
            let total = entries.reduce(0) { $0 + $1.weight }
            var pick = random.unit() * total
            for entry in entries {
                pick -= entry.weight
                if pick < 0 { return entry.scenario }
            }
            return entries[entries.count - 1].scenario
        }
    }

    /// A window of every day during which every device of the fleet is offline: at its end
    /// they all regain the network at once (the shared event a backend fears).
    public struct SharedOutage: Hashable, Sendable {
        /// Start, minutes after midnight.
        public var from: Int
        /// End, minutes after midnight (> from).
        public var to: Int

        /// Whether the window is the whole day (00:00-24:00): repeated daily, the network
        /// never returns, so nothing follows its return.
        public var coversTheDay: Bool { from == 0 && to == 24 * 60 }

        /// Creates an outage window.
        public init(from: Int, to: Int) {
            self.from = from
            self.to = to
        }

        /// Parses `HH:MM-HH:MM`: exactly two digits, a colon and two digits on each side
        /// (the times of a scenario file), from 00:00 to 24:00, the start before the end.
        public static func parse(_ text: String) throws(FleetError) -> SharedOutage {
            let parts = text.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2, let from = JSONNode.minute(of: parts[0]), let to = JSONNode.minute(of: parts[1]), from < to else {
                throw FleetError("--shared-outage: expected HH:MM-HH:MM (00:00 to 24:00) with the start before the end, found '\(text)'")
            }
            return SharedOutage(from: from, to: to)
        }
    }

    /// Devices simulated.
    public var devices: Int
    /// Days simulated.
    public var days: Int
    /// The scenario mix.
    public var mix: Mix
    /// The seed of every random choice.
    public var seed: UInt64
    /// The apps every device runs (modelled).
    public var apps: [ModelledApp]
    /// A daily shared outage, if any.
    public var sharedOutage: SharedOutage?
    /// Content at most this old at a launch counts as fresh.
    public var freshWithin: TimeInterval
    /// The engine's tunables.
    public var configuration: SchedulerConfiguration
    /// The policies.
    public var policies: PolicySet
    /// The first simulated instant (a midnight, UTC).
    public var start: Date
    /// Days of usage each device's apps have behind them when the simulation starts (the
    /// usage model learns the user's habits from them; nothing runs). Rounded up to whole
    /// repetitions of each scenario's pattern when it is at most four weeks long; the
    /// pattern's days before the start's, as many as these, when it is longer. Default 14:
    /// a fleet is of apps installed some time ago, not all installed at the same midnight.
    public var historyDays: Int

    /// The most devices one fleet may simulate.
    public static let maximumDevices = 10_000_000
    /// The most days one fleet may simulate.
    public static let maximumDays = 3_660
    /// The most device-days one fleet may simulate (about an hour of work on two cores).
    public static let maximumDeviceDays = 100_000_000
    /// The most scenario events (``Scenario/eventBound(days:)``) one device may play, as
    /// one simulation may (``Scenario/maximumEventsPerSimulation``): what a device keeps of
    /// its run (its runs and sessions) grows with them, on every core at once. Ten years of
    /// the busiest life in docs/lives (67 events a day) fit.
    public static let maximumDeviceEvents = Scenario.maximumEventsPerSimulation
    /// The most scenario events a fleet may play, counted for the mix's average device:
    /// ``maximumDeviceDays`` of days with 36 events each (the busiest day of any built-in,
    /// the commuter's weekday), so every fleet of built-ins the device-days allow is
    /// allowed, whatever part of a week it covers, and a mix of denser scenario files is
    /// bounded by about the same hour of work.
    public static let maximumEvents = 36 * maximumDeviceDays

    /// Creates a fleet; refuses sizes that make no sense or would not finish.
    public init(
        devices: Int,
        days: Int,
        mix: Mix = .standard,
        seed: UInt64 = 1,
        apps: [ModelledApp] = [.feedReader()],
        sharedOutage: SharedOutage? = nil,
        freshWithin: TimeInterval = 20 * 60,
        configuration: SchedulerConfiguration = .simulation(),
        policies: PolicySet = PolicySet(),
        start: Date = Simulation.defaultStart,
        historyDays: Int = 14
    ) throws(FleetError) {
        guard devices >= 1 else { throw FleetError("--devices must be at least 1, found \(devices)") }
        guard devices <= Self.maximumDevices else { throw FleetError("--devices \(devices) is more than the \(Self.maximumDevices) a fleet may simulate") }
        guard days >= 1 else { throw FleetError("--days must be at least 1, found \(days)") }
        guard days <= Self.maximumDays else { throw FleetError("--days \(days) is more than the \(Self.maximumDays) a simulation may cover") }
        guard devices.multipliedReportingOverflow(by: days).partialValue <= Self.maximumDeviceDays, !devices.multipliedReportingOverflow(by: days).overflow else {
            throw FleetError("--devices \(devices) × --days \(days) is more than the \(Self.maximumDeviceDays) device-days a fleet may simulate (it would take hours)")
        }
        guard !mix.entries.isEmpty else { throw FleetError("--mix names no scenario") }
        guard !apps.isEmpty else { throw FleetError("a fleet needs at least one app") }
        // A launch for an app the fleet does not run would open nothing, silently (a typo in
        // a scenario file's app identifier would leave its launches out of every figure).
        for entry in mix.entries {
            do throws(ScenarioError) {
                try entry.scenario.checkLaunchApps(among: apps.map(\.app.rawValue))
            } catch {
                var located = error
                located.file = entry.absoluteFile
                throw FleetError("--mix: \(entry.file == nil ? "scenario '\(entry.scenario.name)': " : "")\(located)", file: entry.file)
            }
        }
        // Events grow with a scenario file's density, which the device-days do not see. Too
        // many is the command line's (its --days, --devices), as for `bgtask simulate`.
        for entry in mix.entries where entry.scenario.eventBound(days: days) > Self.maximumDeviceEvents {
            let fits = entry.scenario.mostDays(upTo: days, fitting: Self.maximumDeviceEvents)
            let advice = fits > 0 ? "simulate at most \(CountText.counted(fits, "day"))" : "even one day is too many: the scenario needs fewer intervals or launches"
            throw FleetError("--days \(days) plays \(entry.scenario.eventBound(days: days)) scenario events on a device living \(entry.shownName), more than the \(Self.maximumDeviceEvents) one device may play; \(advice)")
        }
        let totalWeight = mix.entries.reduce(0) { $0 + $1.weight }
        let eventsPerDevice = mix.entries.reduce(0.0) { $0 + $1.weight / totalWeight * Double($1.scenario.eventBound(days: days)) }
        guard eventsPerDevice * Double(devices) <= Double(Self.maximumEvents) else {
            let devicesThatFit = Int(Double(Self.maximumEvents) / eventsPerDevice)
            throw FleetError("--devices \(devices) × --days \(days) of this mix plays about \(Int(eventsPerDevice * Double(devices))) scenario events, more than the \(Self.maximumEvents) a fleet may play (it would take hours); simulate at most \(devicesThatFit) devices over \(CountText.counted(days, "day")), or fewer days, or sparser scenarios")
        }
        self.devices = devices
        self.days = days
        self.mix = mix
        self.seed = seed
        self.apps = apps
        self.sharedOutage = sharedOutage
        self.freshWithin = freshWithin
        self.configuration = configuration
        self.policies = policies
        self.start = start
        self.historyDays = max(0, historyDays)
    }

    /// The script device number `index` lives: a draw from the mix, its own seed, and the
    /// shared outage laid over it; and the foreground sessions of its history.
    public func script(forDevice index: Int) -> (script: ScenarioScript, history: [ScenarioScript.ForegroundSession]) {
        let scenario = mix.scenario(forDevice: index, seed: seed)
        var deviceSeed = SeededRandom(seed: seed, stream: UInt64(index) &* 2)
        let seed = deviceSeed.next()
        var script = scenario.script(start: start, days: days, seed: seed)
        if let sharedOutage {
            script = script.withNetworkDown(daily: TimeInterval(sharedOutage.from * 60), to: TimeInterval(sharedOutage.to * 60))
        }
        guard historyDays > 0 else { return (script, []) }
        // The history's last day is the pattern's day before the start's (its last): whole
        // repetitions of a pattern of up to four weeks (every built-in's), the last
        // `historyDays` days of a longer one (a scenario file's year would otherwise give
        // every device a year of history to draw).
        let pattern = max(1, scenario.days.count)
        var past = scenario
        var history = (historyDays + pattern - 1) / pattern * pattern
        if pattern > Self.longestRepeatedHistoryPattern {
            history = historyDays
            let first = (pattern - historyDays % pattern) % pattern
            past.days = Array(scenario.days[first...] + scenario.days[..<first])
        }
        let drawn = past.script(start: start.addingTimeInterval(-Double(history) * 86_400), days: history, seed: deviceSeed.next())
        return (script, drawn.sessions)
    }

    /// The longest pattern whose whole repetitions make a device's history (four weeks).
    static let longestRepeatedHistoryPattern = 28

    /// Simulates every device, on every core (or on `workers` threads). `progress` is called
    /// (from worker threads) with the number of devices done so far, after every device: it
    /// should be cheap (a progress bar redraws only when its figure changes). The result does not depend on the number of threads. The calling thread takes
    /// part and is blocked until the fleet is done: from Swift concurrency, call it from a
    /// detached task or a thread of your own rather than from a task that others wait on.
    public func run(workers: Int? = nil, progress: (@Sendable (Int) -> Void)? = nil) -> FleetResult {
        let workers = max(1, min(workers ?? ProcessInfo.processInfo.activeProcessorCount, devices))
        // One total for the fleet: a result per worker would hold a minute count of every
        // simulated day each (3660 days on 64 cores: 2.7 GB). Workers add their devices in
        // small batches, so the lock is rarely contended and memory does not grow with the
        // cores. The sums are whole numbers, so the order of the adds does not matter.
        let total = Mutex(FleetResult(devices: 0, days: days, freshWithin: freshWithin))
        let done = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            var batch: [FleetResult.Device] = []
            var batchEntries = 0
            var index = worker
            while index < devices {
                let device = simulateDevice(index)
                batchEntries += device.runStarts.count + device.ages.count
                batch.append(device)
                let finished = done.add(1, ordering: .relaxed).newValue
                progress?(finished)
                index += workers
                if batch.count == Self.batch.devices || batchEntries >= Self.batch.entries || index >= devices {
                    total.withLock { total in for device in batch { total.add(device) } }
                    batch.removeAll()
                    batchEntries = 0
                }
            }
        }
        return total.withLock { $0 }
    }

    /// What a worker holds before adding its devices to the fleet's total: at most this
    /// many devices, or fewer once their run starts and launches reach `entries` (a device
    /// of ten years has about 10^5 of each, so a batch of them would hold tens of MB).
    static let batch = (devices: 16, entries: 10_000)

    /// One device's contribution.
    func simulateDevice(_ index: Int) -> FleetResult.Device {
        let (script, history) = script(forDevice: index)
        var device = ModelledDevice(apps: apps, script: script, options: .init(configuration: configuration, policies: policies, recordsTrace: false), history: history)
        device.run(until: script.end)
        let result = SimulationResult(
            scenario: "", seed: script.seed, start: script.start, end: script.end,
            runs: device.runs, launches: device.launches, wakeups: device.wakeups, trace: [], bands: []
        )
        let ages = apps.flatMap { result.staleness(of: $0.app) }.map(\.age)
        let appIDs = Set(apps.map(\.app))
        return FleetResult.Device(
            runStarts: device.runs.map { Int($0.startedAt.timeIntervalSince(start) / 60) },
            launches: ages.count,
            freshLaunches: ages.filter { $0.map { $0 <= freshWithin } ?? false }.count,
            ages: ages,
            refreshes: device.runs.filter { appIDs.contains($0.app) && $0.request.kind == .appRefresh && $0.outcome == .success }.count,
            joules: result.joules(),
            wakeups: device.wakeups
        )
    }

    /// The policy against the two timers across the fleet (docs/scenarios.md, "Comparing
    /// with timers"): the fleet as it is, then with every device under timer15 and under
    /// the equal-budget timer (``PolicySet/deviceRulesOnly(timerInterval:)``), whose
    /// interval is found by bisection on the fleet's first ``equalBudgetSample`` devices
    /// (every device when fewer), then played by the whole fleet. Staleness is pooled over
    /// every launch of the fleet, to 10 seconds. `progress` is told of each of the three
    /// whole-fleet runs.
    public func compareWithTimers(workers: Int? = nil, progress: (@Sendable (_ run: Int, _ devicesDone: Int) -> Void)? = nil) -> FleetComparison {
        func played(_ fleet: Fleet, run: Int?) -> FleetResult {
            var told: (@Sendable (Int) -> Void)?
            if let run, let progress {
                told = { done in progress(run, done) }
            }
            return fleet.run(workers: workers, progress: told)
        }
        func timer(_ interval: TimeInterval, devices: Int? = nil) -> Fleet {
            var fleet = self
            fleet.policies = .deviceRulesOnly(timerInterval: interval)
            if let devices { fleet.devices = devices }
            return fleet
        }
        let policy = played(self, run: 1)
        let timer15 = played(timer(15 * 60), run: 2)
        let sample = min(devices, Self.equalBudgetSample)
        // On the whole fleet when it is the sample; else the sample's own figures steer.
        let sampled = sample == devices ? policy : played({ var fleet = self; fleet.devices = sample; return fleet }(), run: nil)
        let sampledTimer15 = sample == devices ? timer15 : played(timer(15 * 60, devices: sample), run: nil)
        var search = BaselineComparison.EqualBudgetSearch(target: sampled.figures.wakeupsPerDay, timer15: sampledTimer15.figures)
        while let interval = search.next {
            search.record(played(timer(interval, devices: sample), run: nil).figures, for: interval)
        }
        let equalBudget = played(timer(search.best.interval), run: 3)
        return FleetComparison(policyRun: policy, timer15: timer15.figures, equalBudgetTimer: equalBudget.figures, equalBudgetInterval: search.best.interval)
    }

    /// How many devices the equal-budget timer's interval is looked for on.
    public static let equalBudgetSample = 2_000
}

/// The policy against the two timers across a fleet (``Fleet/compareWithTimers(workers:progress:)``),
/// with the same figures and goals as ``BaselineComparison`` on one life.
public struct FleetComparison: Sendable {
    /// The fleet's run under the full policy (the fleet as it was given).
    public var policyRun: FleetResult
    /// The full policy's figures (per device per day).
    public var policy: BaselineComparison.Figures { policyRun.figures }
    /// The 15-minute timer's.
    public var timer15: BaselineComparison.Figures
    /// The equal-budget timer's.
    public var equalBudgetTimer: BaselineComparison.Figures
    /// The equal-budget timer's interval, in seconds.
    public var equalBudgetInterval: TimeInterval
    /// Whether each goal holds.
    public var goals: BaselineComparison.Goals { .judging(policy: policy, timer15: timer15, equalBudgetTimer: equalBudgetTimer) }
}

/// What a fleet simulation measured.
public struct FleetResult: Sendable {
    /// One device's contribution.
    public struct Device: Sendable {
        /// The minute (from the start) of each run's start.
        public var runStarts: [Int]
        /// App launches.
        public var launches: Int
        /// Launches that found content at most ``Fleet/freshWithin`` old.
        public var freshLaunches: Int
        /// The content's age at each launch (`nil`: no refresh had succeeded yet).
        public var ages: [TimeInterval?]
        /// Successful refreshes of the fleet's apps.
        public var refreshes: Int
        /// Estimated joules of all runs.
        public var joules: Double
        /// Device wakes for background work.
        public var wakeups: Int
    }

    /// Devices simulated.
    public private(set) var devices: Int
    /// Days simulated.
    public let days: Int
    /// The freshness threshold used.
    public let freshWithin: TimeInterval
    /// Task runs started in each minute, across the fleet.
    public private(set) var runsPerMinute: [Int]
    /// App launches across the fleet.
    public private(set) var launches = 0
    /// Launches that found fresh content.
    public private(set) var freshLaunches = 0
    /// Estimated millijoules of all runs, summed as whole numbers: floating-point sums
    /// depend on their order, and the devices' order over threads is not fixed.
    private var millijoules: Int64 = 0
    /// Estimated joules of all runs.
    public var joules: Double { Double(millijoules) / 1000 }
    /// Device wakes for background work, across the fleet.
    public private(set) var wakeups = 0
    /// Successful refreshes across the fleet.
    public private(set) var refreshes = 0
    /// Launches before any refresh had succeeded.
    public private(set) var launchesWithoutContent = 0
    /// Launches by the content's age, in bins of ``ageBin`` seconds; the last bin holds
    /// every older age. Whole counts, so sums do not depend on the devices' order.
    private var ageCounts: [Int]

    /// The width of an age bin: staleness figures are to this precision.
    public static let ageBin: TimeInterval = 10
    /// Ages beyond this share the last bin (two weeks).
    public static let ageBins = 14 * 86_400 / 10

    init(devices: Int, days: Int, freshWithin: TimeInterval) {
        self.devices = devices
        self.days = days
        self.freshWithin = freshWithin
        runsPerMinute = Array(repeating: 0, count: days * 1440)
        ageCounts = Array(repeating: 0, count: Self.ageBins)
    }

    /// The `fraction` quantile (0...1) of the content's age at the launches, in minutes, at
    /// the middle of its 10-second bin; a launch that found no content counts as older than
    /// any content, so `nil` when the launch at that rank found none (or there was none).
    public func stalenessMinutes(quantile fraction: Double) -> Double? {
        let found = launches - launchesWithoutContent
        guard launches > 0 else { return nil }
        // The nearest-rank quantile, as EnergySummary.percentile takes it on a sorted list.
        let rank = min(launches, max(1, Int((min(max(fraction, 0), 1) * Double(launches)).rounded(.up))))
        guard rank <= found else { return nil }
        var seen = 0
        for (bin, count) in ageCounts.enumerated() {
            seen += count
            if seen >= rank { return (Double(bin) + 0.5) * Self.ageBin / 60 }
        }
        return nil
    }

    /// The figures of the fleet, per device per day, as ``BaselineComparison`` gives them
    /// for one life.
    public var figures: BaselineComparison.Figures {
        let deviceDays = Double(max(1, devices) * max(1, days))
        return BaselineComparison.Figures(
            stalenessMedianMinutes: stalenessMinutes(quantile: 0.5), stalenessP90Minutes: stalenessMinutes(quantile: 0.9),
            wakeupsPerDay: Double(wakeups) / deviceDays, joulesPerDay: joules / deviceDays,
            launches: launches, launchesWithoutContent: launchesWithoutContent, refreshesPerDay: Double(refreshes) / deviceDays)
    }

    mutating func add(_ device: Device) {
        devices += 1
        for minute in device.runStarts where minute >= 0 && minute < runsPerMinute.count { runsPerMinute[minute] += 1 }
        launches += device.launches
        freshLaunches += device.freshLaunches
        millijoules += Int64((device.joules * 1000).rounded())
        wakeups += device.wakeups
        refreshes += device.refreshes
        for age in device.ages {
            guard let age else {
                launchesWithoutContent += 1
                continue
            }
            let bin = age.isFinite && age > 0 ? min(Self.ageBins - 1, Int(min(age / Self.ageBin, Double(Self.ageBins)))) : 0
            ageCounts[bin] += 1
        }
    }

    /// Runs across the fleet.
    public var runs: Int { runsPerMinute.reduce(0, +) }
    /// Mean runs per minute.
    public var meanPerMinute: Double { Double(runs) / Double(max(1, runsPerMinute.count)) }
    /// The busiest minute: its index (from the start) and its runs.
    public var peak: (minute: Int, runs: Int) {
        runsPerMinute.enumerated().max { ($0.element, -$0.offset) < ($1.element, -$1.offset) }.map { ($0.offset, $0.element) } ?? (0, 0)
    }
    /// Peak-to-mean ratio of runs per minute.
    public var peakToMean: Double { meanPerMinute > 0 ? Double(peak.runs) / meanPerMinute : 0 }
    /// The share of launches that found fresh content (0...1).
    public var freshShare: Double { launches > 0 ? Double(freshLaunches) / Double(launches) : 0 }
    /// Estimated joules per device per day.
    public var joulesPerDevicePerDay: Double { joules / Double(max(1, devices)) / Double(max(1, days)) }
    /// Wakeups per device per day.
    public var wakeupsPerDevicePerDay: Double { Double(wakeups) / Double(max(1, devices)) / Double(max(1, days)) }

    /// The busiest minute within `window` minutes after `minute`, each day (for the
    /// stampede after a shared event).
    public func peakAfter(minuteOfDay minute: Int, window: Int) -> Int {
        (0..<days).map { day in
            let from = day * 1440 + minute
            let to = min(runsPerMinute.count, from + window)
            return from < to ? runsPerMinute[from..<to].max() ?? 0 : 0
        }.max() ?? 0
    }

    /// The summary as rows, for text and for the report.
    public func summaryRows(sharedOutage: Fleet.SharedOutage?) -> [FleetReport.Row] {
        var rows = [
            FleetReport.Row(name: "devices", value: "\(devices)"),
            FleetReport.Row(name: "task runs (backend requests)", value: "\(runs)"),
            FleetReport.Row(name: "runs per minute, mean", value: String(format: "%.1f", meanPerMinute)),
            FleetReport.Row(name: "runs per minute, peak", value: "\(peak.runs)"),
            FleetReport.Row(name: "peak-to-mean", value: String(format: "%.1f", peakToMean)),
            FleetReport.Row(name: "worst minute", value: Self.minuteLabel(peak.minute)),
            FleetReport.Row(name: "launches that found content at most \(DurationText.spoken(freshWithin)) old", value: launches == 0 ? "n/a (no launches)" : String(format: "%.1f %% of %d", freshShare * 100, launches)),
            FleetReport.Row(name: "wakeups per device per day", value: String(format: "%.1f", wakeupsPerDevicePerDay)),
            FleetReport.Row(name: "energy per device per day", value: String(format: "%.0f J", joulesPerDevicePerDay)),
        ]
        if let sharedOutage {
            if sharedOutage.coversTheDay {
                rows.append(FleetReport.Row(name: "the shared outage", value: "covers the whole day, every day: the network never returns"))
            } else {
                rows.append(FleetReport.Row(name: "peak minute in the 15 min after the network returns at \(Self.clock(sharedOutage.to))", value: "\(peakAfter(minuteOfDay: sharedOutage.to, window: 15))"))
            }
        }
        return rows
    }

    /// `day 2 08:01`
    static func minuteLabel(_ minute: Int) -> String {
        "day \(minute / 1440 + 1) \(clock(minute % 1440))"
    }

    static func clock(_ minuteOfDay: Int) -> String {
        String(format: "%02d:%02d", minuteOfDay / 60, minuteOfDay % 60)
    }
}

/// A fleet that cannot be simulated as asked; the message names the option.
public struct FleetError: Error, CustomStringConvertible, Equatable {
    /// What is wrong, naming the option.
    public var message: String
    /// The scenario file of the mix the error comes from (its content, not the command
    /// line: `bgtask fleet` then exits 1 as `bgtask simulate` does for a bad file, not 64).
    public var file: String?
    /// Creates an error.
    public init(_ message: String, file: String? = nil) {
        self.message = message
        self.file = file
    }
    public var description: String { message }
}

private func formatWeight(_ weight: Double) -> String {
    weight == weight.rounded() && abs(weight) < 1e15 ? String(Int(weight)) : String(format: "%g", weight)
}
