import BackgroundTasks
import Foundation
import SchedulerCore

/// A simulated device's life as a repeating pattern of days: when it is on power, online,
/// in Low Power Mode, hot, in the user's hands, and when the user opens apps. Written as
/// JSON (schema version 1, documented in `docs/scenarios.md`), read by ``parse(_:file:)``,
/// and turned into concrete, seeded events by ``script(start:days:seed:)``.
///
/// Times of day are whole minutes since the day's start (0...1440); the simulation starts
/// at a midnight and its days are 86,400 s apart, with no time zones.
public struct Scenario: Hashable, Sendable {
    /// The battery of a device that has one. A scenario without it is a device without a
    /// battery: always on external power.
    public struct Battery: Hashable, Sendable {
        /// The level at the start of the simulation, 0...1.
        public var level: Double
        /// Level lost per hour on battery while idle.
        public var drainPerHour: Double
        /// Level lost per hour on battery while the device is in use (or an app is open).
        public var inUseDrainPerHour: Double
        /// Level gained per hour on external power.
        public var chargePerHour: Double

        /// Creates a battery; `inUseDrainPerHour` defaults to `drainPerHour`.
        public init(level: Double, drainPerHour: Double, inUseDrainPerHour: Double? = nil, chargePerHour: Double) {
            self.level = level
            self.drainPerHour = drainPerHour
            self.inUseDrainPerHour = inUseDrainPerHour ?? drainPerHour
            self.chargePerHour = chargePerHour
        }
    }

    /// A stretch of a day during which something holds (on power, Low Power Mode, in use).
    public struct Interval: Hashable, Sendable {
        /// Its start, in minutes since the day's start.
        public var from: Int
        /// Its end (exclusive), in minutes since the day's start; 1440 is midnight after.
        public var to: Int

        /// Creates an interval.
        public init(from: Int, to: Int) {
            self.from = from
            self.to = to
        }
    }

    /// A stretch of a day with the network available.
    public struct NetworkInterval: Hashable, Sendable {
        /// Its start, in minutes since the day's start.
        public var from: Int
        /// Its end (exclusive), in minutes since the day's start.
        public var to: Int
        /// Whether the network is metered (cellular) rather than not (Wi-Fi, wired).
        public var metered: Bool

        /// Creates a network interval.
        public init(from: Int, to: Int, metered: Bool = false) {
            self.from = from
            self.to = to
            self.metered = metered
        }
    }

    /// A stretch of a day at a raised thermal state.
    public struct ThermalInterval: Hashable, Sendable {
        /// Its start, in minutes since the day's start.
        public var from: Int
        /// Its end (exclusive), in minutes since the day's start.
        public var to: Int
        /// The state (fair, serious or critical; outside intervals the device is nominal).
        public var state: ThermalState

        /// Creates a thermal interval.
        public init(from: Int, to: Int, state: ThermalState) {
            self.from = from
            self.to = to
            self.state = state
        }
    }

    /// The user opening an app: a foreground session that may or may not happen on a day.
    public struct Launch: Hashable, Sendable {
        /// When, in minutes since the day's start (0...1439).
        public var at: Int
        /// How long the app stays in the foreground, in minutes.
        public var minutes: Double
        /// The chance that it happens on a given day, 0...1.
        public var probability: Double
        /// The app's identifier; `nil` means every installed app.
        public var app: String?

        /// Creates a launch.
        public init(at: Int, minutes: Double = 5, probability: Double = 1, app: String? = nil) {
            self.at = at
            self.minutes = minutes
            self.probability = probability
            self.app = app
        }
    }

    /// One day of the pattern. Lists are in order and do not overlap.
    public struct Day: Hashable, Sendable {
        /// A label for people ("weekday").
        public var name: String
        /// When the device is on external power (outside: on battery). Only with a battery.
        public var power: [Interval]
        /// When the network is available (outside: offline).
        public var network: [NetworkInterval]
        /// When Low Power Mode is on.
        public var lowPowerMode: [Interval]
        /// When the device is warmer than nominal.
        public var thermal: [ThermalInterval]
        /// When the user is using the device (outside: idle or locked).
        public var inUse: [Interval]
        /// When the user opens apps (a session also counts as in use).
        public var launches: [Launch]

        /// Creates a day; what is not given never happens.
        public init(
            name: String = "",
            power: [Interval] = [],
            network: [NetworkInterval] = [],
            lowPowerMode: [Interval] = [],
            thermal: [ThermalInterval] = [],
            inUse: [Interval] = [],
            launches: [Launch] = []
        ) {
            self.name = name
            self.power = power
            self.network = network
            self.lowPowerMode = lowPowerMode
            self.thermal = thermal
            self.inUse = inUse
            self.launches = launches
        }
    }

    /// The scenario's name ("commuter").
    public var name: String
    /// One line saying what it models.
    public var description: String
    /// The seed of every random choice, unless a script is given another.
    public var seed: UInt64
    /// How far (in whole minutes, 0...120) each boundary and launch moves, at random, each day.
    public var jitterMinutes: Int
    /// The battery; `nil` for a device without one (always on external power).
    public var battery: Battery?
    /// The pattern: simulated day `n` follows `days[n % days.count]`.
    public var days: [Day]

    /// Creates a scenario. Unlike ``parse(_:file:)`` this checks nothing; scripts clamp
    /// what is out of range rather than fail.
    public init(name: String, description: String = "", seed: UInt64 = 1, jitterMinutes: Int = 0, battery: Battery? = nil, days: [Day]) {
        self.name = name
        self.description = description
        self.seed = seed
        self.jitterMinutes = jitterMinutes
        self.battery = battery
        self.days = days
    }

    /// Minutes in a day: the end of a day's times.
    static let minutesPerDay = 1440

    /// Reads a scenario from JSON, checking every value. `file` only labels errors.
    public static func parse(_ data: Data, file: String? = nil) throws(ScenarioError) -> Scenario {
        do throws(ScenarioError) {
            return try ScenarioParser.scenario(JSONNode.document(data))
        } catch {
            var located = error
            located.file = file
            throw located
        }
    }

    /// Reads a scenario file. A file that cannot be read fails at path `$` saying what was
    /// found: nothing, a FIFO, a directory... (through ``BoundedFile``, which never blocks),
    /// or a file larger than ``maximumFileSize``.
    public static func load(from url: URL) throws(ScenarioError) -> Scenario {
        let data: Data
        do {
            data = Data(try BoundedFile.read(path: url.path, limit: maximumFileSize))
        } catch {
            throw ScenarioError(file: url.path, path: "$", message: "expected a readable scenario file, found \(error.problem.found)")
        }
        return try parse(data, file: url.path)
    }

    /// The built-in scenario named `text`, or the scenario file at `text` when it looks like
    /// one: a path with a slash or ending in `.json`, or anything at that path
    /// (``somethingIsAt(_:)``, so a link leading nowhere is read and named, not taken for an
    /// unknown name); `nil` when it is neither. What `bgtask simulate` and `bgtask fleet
    /// --mix` take. A path ending in `/` names a directory and is refused as one (Foundation
    /// would read the file without the slash).
    public static func builtInOrFile(_ text: String) throws(ScenarioError) -> Scenario? {
        if let scenario = builtIn(named: text) { return scenario }
        guard !text.isEmpty, text.contains("/") || text.hasSuffix(".json") || somethingIsAt(text) else { return nil }
        if text.hasSuffix("/"), text.count > 1 {
            throw ScenarioError(file: text, path: "$", message: "expected a scenario file, found a path ending in /, which names a directory (drop the /)")
        }
        return try load(from: URL(fileURLWithPath: text))
    }

    /// The most events one simulation plays of a device's scenario (``eventBound(days:)``,
    /// for each app and seed it plays): a simulation keeps its trace of every event in
    /// memory until the end, a fleet's device its runs and sessions, on every core at once.
    /// A launch of the example app's real handlers costs about 12 KB of trace, an interval's
    /// boundary about 2 KB, so a scenario opening an app every minute grew by 12 MB a
    /// simulated day; this bounds the events' part near 1.5 GB, and still plays ten years
    /// of every built-in scenario and of every life in docs/lives (the busiest, heavy-user,
    /// holds 67 a day: 245,000 in ten years).
    public static let maximumEventsPerSimulation = 250_000

    /// The most days, up to `days`, whose events (``eventBound(days:)``) times `multiplier`
    /// (apps, seeds) stay within `limit`; 0 when even one day is over it.
    public func mostDays(upTo days: Int, fitting limit: Int, multiplier: Int = 1) -> Int {
        func fits(_ count: Int) -> Bool {
            let (total, overflow) = eventBound(days: count).multipliedReportingOverflow(by: max(1, multiplier))
            return !overflow && total <= limit
        }
        guard days > 0, !fits(days) else { return max(0, days) }
        // Events grow with days: `fitting` fits, `over` does not.
        var fitting = 0, over = days
        while over - fitting > 1 {
            let middle = fitting + (over - fitting) / 2
            if fits(middle) { fitting = middle } else { over = middle }
        }
        return fitting
    }

    /// Whether anything is at `path`, even what cannot be read (a symbolic link loop or a
    /// link that leads nowhere, a file behind a directory that cannot be searched): reading
    /// it then says what it is. `FileManager.fileExists` follows links and calls all of
    /// these "no file", which made them "neither a built-in scenario nor a file".
    public static func somethingIsAt(_ path: String) -> Bool {
        var info = stat()
        if lstat(path, &info) == 0 { return true }
        let code = errno
        return code != ENOENT && code != ENOTDIR
    }

    /// Checks that every launch naming an app names one of `apps`, the identifiers of the
    /// apps simulated: a launch for any other app would never open one (a typo such as
    /// `com.example.feedreadr` would leave the app's launches out silently). The error
    /// names the launch's key path (`$.days[1].launches[0].app`) and the apps simulated;
    /// its `file` is left for the caller. Launches without an app open every app.
    public func checkLaunchApps(among apps: [String]) throws(ScenarioError) {
        for (dayIndex, day) in days.enumerated() {
            for (launchIndex, launch) in day.launches.enumerated() {
                guard let app = launch.app, !apps.contains(app) else { continue }
                let simulated = apps.isEmpty ? "none" : apps.joined(separator: ", ")
                throw ScenarioError(
                    path: "$.days[\(dayIndex)].launches[\(launchIndex)].app",
                    message: "expected an app that is simulated (\(simulated)) or null for every app, found \(JSONNode.quoted(app)), which no app simulated is")
            }
        }
    }

    /// The most scenario events `days` simulated days of this scenario hold: each interval
    /// of a day (`power` only with a battery) starts and ends, and each launch opens and
    /// closes a session. Jitter moves them and a launch's probability may drop it, never
    /// add one, so a script holds at most this many (the battery's reports aside, at most
    /// two an hour). Computed from the pattern, without playing it: what a simulation
    /// keeps grows with it (its trace holds several records for each event), so
    /// `bgtask simulate` bounds it before it starts (docs/scenarios.md, "How long a
    /// simulation may be"). Saturates at `Int.max`.
    public func eventBound(days: Int) -> Int {
        guard days > 0, !self.days.isEmpty else { return 0 }
        let perDay = self.days.map { day in
            let intervals = (battery == nil ? 0 : day.power.count) + day.network.count + day.lowPowerMode.count + day.thermal.count + day.inUse.count
            return 2 * (intervals + day.launches.count)
        }
        // Whole cycles of the pattern, then the days of the last, partial one.
        let (cycles, rest) = days.quotientAndRemainder(dividingBy: perDay.count)
        let (total, overflow) = perDay.reduce(0, +).multipliedReportingOverflow(by: cycles)
        guard !overflow else { return .max }
        let (sum, overflowed) = total.addingReportingOverflow(perDay[..<rest].reduce(0, +))
        return overflowed ? .max : sum
    }

    /// The largest scenario file read (the built-in ones are under 4 KiB).
    public static let maximumFileSize = 1 << 20

    /// `minute` as `HH:MM` (1440 is `24:00`).
    static func clock(_ minute: Int) -> String {
        let hours = minute / 60, minutes = minute % 60
        return (hours < 10 ? "0" : "") + "\(hours):" + (minutes < 10 ? "0" : "") + "\(minutes)"
    }
}

/// What was wrong with a scenario, and where: the file, the JSON path of the culprit
/// (`$.days[1].network[0].to`) and what was expected and found.
public struct ScenarioError: Error, CustomStringConvertible, Hashable, Sendable {
    /// The file read, when there was one.
    public var file: String?
    /// Where in the document, as a JSON path from the root `$`.
    public var path: String
    /// What was expected and what was found.
    public var message: String

    /// Creates an error.
    public init(file: String? = nil, path: String, message: String) {
        self.file = file
        self.path = path
        self.message = message
    }

    /// `file: path: message`, as compilers print it; a path or message that quotes a huge
    /// key or value is cut (``Swift/String/excerpt(scalars:)``): the file and the path locate
    /// the culprit, and a 300,000-digit value repeated in full helps nobody.
    public var description: String {
        [file, path.excerpt(scalars: Self.shownPathLength), message.excerpt(scalars: Self.shownMessageLength)]
            .compactMap { $0 }.joined(separator: ": ")
    }

    /// The most Unicode scalars of the path and of the message ``description`` shows.
    static let shownPathLength = 200, shownMessageLength = 600
}

// MARK: - Reading

/// What jitter and validation need of any interval: its two ends, in minutes.
protocol DayInterval {
    var from: Int { get set }
    var to: Int { get set }
}

extension Scenario.Interval: DayInterval {}
extension Scenario.NetworkInterval: DayInterval {}
extension Scenario.ThermalInterval: DayInterval {}

/// The schema, read from JSON values by hand: `Codable` can neither say where a value sat
/// nor notice keys it does not know, and both are what make an error useful.
enum ScenarioParser {
    static let topKeys = ["version", "name", "description", "seed", "jitterMinutes", "battery", "days"]
    static let batteryKeys = ["level", "drainPerHour", "inUseDrainPerHour", "chargePerHour"]
    static let dayKeys = ["name", "power", "network", "lowPowerMode", "thermal", "inUse", "launches"]
    static let launchKeys = ["at", "minutes", "probability", "app"]
    static let thermalStates: [ThermalState] = [.fair, .serious, .critical]

    static func scenario(_ root: JSONNode) throws(ScenarioError) -> Scenario {
        let object = try root.object(keys: topKeys)
        try version(object.required("version", expecting: "the number 1"))
        let name = try object.required("name", expecting: "a non-empty string").nonEmptyString()
        let description = try object.optional("description")?.string() ?? ""
        let seed = try object.optional("seed").map(seed) ?? 1
        let jitter = try object.optional("jitterMinutes").map(jitterMinutes) ?? 0
        let battery = try object.optional("battery").map(battery)
        let days = try days(object.required("days", expecting: "a non-empty array of days"), hasBattery: battery != nil)
        return Scenario(name: name, description: description, seed: seed, jitterMinutes: jitter, battery: battery, days: days)
    }

    static func version(_ node: JSONNode) throws(ScenarioError) {
        let version = try node.number()
        guard exactWholeNumber(node, version) == 1 else { throw node.failure("expected version 1, found \(shown(node, version))") }
    }

    /// The whole number `node` holds, read from its text when it has one (a Double rounds
    /// `1.0000000000000000001` to 1 and `119.99999999999999999` to 120); `nil` when it is
    /// not a whole number from 0 to `UInt64.max`. `value` is the node's number.
    static func exactWholeNumber(_ node: JSONNode, _ value: Double) -> UInt64? {
        if let literal = node.literal { return JSONNode.wholeNumber(ofLiteral: literal) }
        return value >= 0 && value < 0x1p64 && value == value.rounded() ? UInt64(value) : nil
    }

    /// `node`'s number for a message: its text as written when it has one.
    static func shown(_ node: JSONNode, _ value: Double) -> String {
        node.literal.map(JSONNode.shortened) ?? JSONNode.render(value)
    }

    /// Seeds stop at 2^53, the largest whole number every JSON reader holds exactly, so a
    /// seed written down reproduces the same run anywhere.
    static let maximumSeed: UInt64 = 1 << 53

    /// The seed is read from its text as written: through a Double, `9007199254740993` or
    /// `9007199254740992.5` would become 2^53 and be taken for a seed they are not.
    static func seed(_ node: JSONNode) throws(ScenarioError) -> UInt64 {
        let value = try node.number()
        // From the text when there is one (always, in a document); from the Double otherwise.
        let exact = exactWholeNumber(node, value)
        if let exact, exact <= maximumSeed { return exact }
        // Whole numbers exactly; else the text as written (9007199254740992.5 reads
        // 9007199254740992 through a Double, and 2^64 reads 1.8446744073709552e+19); else as
        // JSON writes it.
        let shown = exact.map { String($0) } ?? node.literal.map(JSONNode.shortened) ?? JSONNode.render(value)
        throw node.failure("expected a whole number between 0 and \(maximumSeed), found \(shown)")
    }

    static func jitterMinutes(_ node: JSONNode) throws(ScenarioError) -> Int {
        let jitter = try node.number()
        guard let minutes = exactWholeNumber(node, jitter), minutes <= 120 else {
            throw node.failure("expected a whole number of minutes between 0 and 120, found \(shown(node, jitter))")
        }
        return Int(minutes)
    }

    static func battery(_ node: JSONNode) throws(ScenarioError) -> Scenario.Battery {
        let object = try node.object(keys: batteryKeys)
        let level = try object.required("level", expecting: "a number between 0 and 1").number(in: 0...1, "a number between 0 and 1")
        let drain = try rate(object.required("drainPerHour", expecting: "a number from 0 to 100"))
        let inUseDrain = try object.optional("inUseDrainPerHour").map(rate)
        let charge = try rate(object.required("chargePerHour", expecting: "a number from 0 to 100"))
        return Scenario.Battery(level: level, drainPerHour: drain, inUseDrainPerHour: inUseDrain, chargePerHour: charge)
    }

    /// The fastest battery rate, in levels per hour: 100 empties a full battery in 36 s,
    /// faster than any device; unbounded rates overflow the script's time arithmetic.
    static let maximumRate = 100.0
    /// The longest launch, in minutes: one day.
    static let maximumLaunchMinutes = 1440.0

    static func rate(_ node: JSONNode) throws(ScenarioError) -> Double {
        try node.number(in: 0...maximumRate, "a number from 0 to 100 (levels per hour)")
    }

    static func days(_ node: JSONNode, hasBattery: Bool) throws(ScenarioError) -> [Scenario.Day] {
        let elements = try node.array()
        guard !elements.isEmpty else { throw node.failure("expected a non-empty array of days, found an empty array") }
        var days: [Scenario.Day] = []
        for element in elements {
            days.append(try day(element, hasBattery: hasBattery))
        }
        return days
    }

    static func day(_ node: JSONNode, hasBattery: Bool) throws(ScenarioError) -> Scenario.Day {
        let object = try node.object(keys: dayKeys)
        if !hasBattery, let power = object.optional("power") {
            // Without a battery the device is on power all the time: a power list would
            // say otherwise, and silently ignoring it would hide the mistake.
            throw power.failure("expected no \"power\" key, since a scenario without \"battery\" is always on external power, found one")
        }
        var day = Scenario.Day(name: try object.optional("name")?.string() ?? "")
        day.power = try plainIntervals(object.optional("power"))
        day.network = try intervals(object.optional("network"), extraKeys: ["metered"], make: networkInterval)
        day.lowPowerMode = try plainIntervals(object.optional("lowPowerMode"))
        day.thermal = try intervals(object.optional("thermal"), extraKeys: ["state"], make: thermalInterval)
        day.inUse = try plainIntervals(object.optional("inUse"))
        day.launches = try launches(object.optional("launches"))
        return day
    }

    static func networkInterval(_ entry: JSONObject, from: Int, to: Int) throws(ScenarioError) -> Scenario.NetworkInterval {
        Scenario.NetworkInterval(from: from, to: to, metered: try entry.optional("metered")?.bool() ?? false)
    }

    static func thermalInterval(_ entry: JSONObject, from: Int, to: Int) throws(ScenarioError) -> Scenario.ThermalInterval {
        Scenario.ThermalInterval(from: from, to: to, state: try thermalState(entry.required("state", expecting: "fair, serious or critical")))
    }

    /// A list of intervals with nothing but their ends.
    static func plainIntervals(_ node: JSONNode?) throws(ScenarioError) -> [Scenario.Interval] {
        try intervals(node, extraKeys: []) { _, from, to in Scenario.Interval(from: from, to: to) }
    }

    /// A list of intervals: each `from` < `to`, each starting at or after the previous end.
    static func intervals<Element: DayInterval>(
        _ node: JSONNode?,
        extraKeys: [String],
        make: (JSONObject, Int, Int) throws(ScenarioError) -> Element
    ) throws(ScenarioError) -> [Element] {
        guard let node else { return [] }
        var result: [Element] = []
        for element in try node.array() {
            let object = try element.object(keys: ["from", "to"] + extraKeys)
            let fromNode = try object.required("from", expecting: "a time HH:MM")
            let toNode = try object.required("to", expecting: "a time HH:MM")
            let from = try fromNode.time(asEnd: false)
            let to = try toNode.time(asEnd: true)
            guard to > from else {
                throw toNode.failure("expected a time after the start \"\(Scenario.clock(from))\", found \"\(Scenario.clock(to))\" (negative or empty duration)")
            }
            if let previous = result.last, from < previous.to {
                throw fromNode.failure("expected a start at or after \"\(Scenario.clock(previous.to))\", the end of the previous interval, found \"\(Scenario.clock(from))\" (intervals overlap or are out of order)")
            }
            result.append(try make(object, from, to))
        }
        return result
    }

    static func thermalState(_ node: JSONNode) throws(ScenarioError) -> ThermalState {
        let names = thermalStates.map(\.description)
        let name = try node.string()
        guard let state = ThermalState(name: name), thermalStates.contains(state) else {
            throw node.failure("expected one of \(names.joined(separator: ", ")), found \"\(name)\"")
        }
        return state
    }

    static func launches(_ node: JSONNode?) throws(ScenarioError) -> [Scenario.Launch] {
        guard let node else { return [] }
        var result: [Scenario.Launch] = []
        for element in try node.array() {
            let launch = try launch(element)
            if let previous = result.last, launch.at < previous.at {
                throw ScenarioError(path: element.path + JSONNode.component("at"), message: "expected a launch at or after \"\(Scenario.clock(previous.at))\", the previous launch, found \"\(Scenario.clock(launch.at))\" (launches out of order)")
            }
            result.append(launch)
        }
        return result
    }

    static func launch(_ node: JSONNode) throws(ScenarioError) -> Scenario.Launch {
        let object = try node.object(keys: launchKeys)
        let at = try object.required("at", expecting: "a time HH:MM").time(asEnd: false)
        let minutes = try object.optional("minutes")?.number(in: .leastNonzeroMagnitude...maximumLaunchMinutes, "a number of minutes above 0 and at most 1440") ?? 5
        let probability = try object.optional("probability")?.number(in: 0...1, "a probability between 0 and 1") ?? 1
        let app = try object.optional("app").flatMap(app)
        return Scenario.Launch(at: at, minutes: minutes, probability: probability, app: app)
    }

    /// An app identifier, or `null` for every installed app. The identifier follows the
    /// rules of a manifest's `CFBundleIdentifier` (``TaskIdentifierRules``): a launch for
    /// `com.example.feedreader ` (a trailing space) could never match an app.
    static func app(_ node: JSONNode) throws(ScenarioError) -> String? {
        if case .null = node.kind { return nil }
        guard case .string(let app) = node.kind, !app.isEmpty else {
            throw node.expected("a non-empty string (an app identifier) or null")
        }
        try node.refuseControlCharacters(app)
        if let problem = TaskIdentifierRules.problem(with: app) {
            throw node.failure("expected an app identifier (as a manifest's CFBundleIdentifier) or null, found \(JSONNode.quoted(app)): \(problem)")
        }
        return app
    }
}

/// A JSON value as `JSONSerialization` gives it, sorted into the kinds of the JSON text.
enum JSONKind {
    case null
    case boolean(Bool)
    case number(Double)
    case string(String)
    case array([Any])
    case object([String: Any])

    init(_ value: Any) {
        switch value {
        case let string as String: self = .string(string)
        // Foundation hands out booleans as NSNumbers too (see SerializedValue.isBoolean).
        case let number as NSNumber:
            self = SerializedValue.isBoolean(number) ? .boolean(number.boolValue) : .number(number.doubleValue)
        case let array as [Any]: self = .array(array)
        case let object as [String: Any]: self = .object(object)
        default: self = .null
        }
    }
}

/// One value of the document being read, and its path from the root.
struct JSONNode {
    let kind: JSONKind
    let path: String
    /// A number's text as written, for the members of the top-level object (the seed is
    /// read from it); `nil` elsewhere.
    let literal: String?
    /// The root's: the text of the top-level object's numbers, by key (``StrictJSON``).
    let memberLiterals: [String: String]

    init(_ value: Any, path: String, literal: String? = nil, memberLiterals: [String: String] = [:]) {
        kind = JSONKind(value)
        self.path = path
        self.literal = literal
        self.memberLiterals = memberLiterals
    }

    /// The root of `data`; invalid JSON fails at `$`, with the position when Foundation gives one.
    static func document(_ data: Data) throws(ScenarioError) -> JSONNode {
        guard data.count <= Scenario.maximumFileSize else {
            throw ScenarioError(path: "$", message: "expected a scenario of at most \(BoundedFile.describe(bytes: Scenario.maximumFileSize)), found \(data.count) bytes")
        }
        // Duplicate keys (JSONSerialization keeps the last silently), the encoding, the depth
        // and syntax errors with their position, before Foundation decodes.
        let literals: [String: String]
        do {
            literals = try StrictJSON.topLevelNumberLiterals(validating: data)
        } catch {
            throw ScenarioError(path: error.culpritKeyPath == nil ? "$" : error.path, message: error.explanation(in: data))
        }
        do {
            return JSONNode(try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]), path: "$", memberLiterals: literals)
        } catch {
            throw ScenarioError(path: "$", message: "expected valid JSON, found \(JSONPosition.describe(error, in: data))")
        }
    }

    func failure(_ message: String) -> ScenarioError {
        ScenarioError(path: path, message: message)
    }

    /// A wrong-type failure: "expected `what`, found a string ("x")".
    func expected(_ what: String) -> ScenarioError {
        failure("expected \(what), found \(found)")
    }

    /// What this value is, for messages.
    var found: String {
        switch kind {
        case .null: return "null"
        case .boolean(let value): return "a boolean (\(value))"
        case .number(let value): return "a number (\(Self.render(value)))"
        case .string(let value): return "a string (\(Self.quoted(value)))"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    func object(keys: [String]) throws(ScenarioError) -> JSONObject {
        guard case .object(let entries) = kind else { throw expected("an object") }
        if let unknown = entries.keys.sorted().first(where: { !keys.contains($0) }) {
            throw ScenarioError(path: path + Self.component(unknown), message: "expected one of the keys \(keys.joined(separator: ", ")), found unknown key \(Self.quoted(unknown))")
        }
        return JSONObject(entries: entries, path: path, literals: memberLiterals)
    }

    func array() throws(ScenarioError) -> [JSONNode] {
        guard case .array(let elements) = kind else { throw expected("an array") }
        return elements.enumerated().map { JSONNode($0.element, path: "\(path)[\($0.offset)]") }
    }

    /// A string without control characters: every string of a scenario is printed (names,
    /// descriptions, app identifiers in timelines and reports) or compared with names that
    /// have none, and a raw ESC or NUL would reach the terminal.
    func string() throws(ScenarioError) -> String {
        guard case .string(let value) = kind else { throw expected("a string") }
        try refuseControlCharacters(value)
        return value
    }

    func refuseControlCharacters(_ value: String) throws(ScenarioError) {
        guard let scalar = StrictJSON.firstControlCharacter(in: value) else { return }
        throw failure("expected a string without control characters (U+0000-U+001F, U+007F-U+009F), found \(StrictJSON.codePoint(scalar)) in \(Self.quoted(value))")
    }

    func nonEmptyString() throws(ScenarioError) -> String {
        let value = try string()
        guard !value.isEmpty else { throw failure("expected a non-empty string, found \"\"") }
        return value
    }

    func bool() throws(ScenarioError) -> Bool {
        guard case .boolean(let value) = kind else { throw expected("a boolean") }
        return value
    }

    func number() throws(ScenarioError) -> Double {
        guard case .number(let value) = kind, value.isFinite else { throw expected("a number") }
        return value
    }

    /// A number in `range`; outside it, "expected `expectation`, found 1.5".
    func number(in range: ClosedRange<Double>, _ expectation: String) throws(ScenarioError) -> Double {
        let value = try number()
        guard range.contains(value) else { throw failure("expected \(expectation), found \(Self.render(value))") }
        return value
    }

    /// A time `HH:MM` as minutes since the day's start; `24:00` only as the end of an interval.
    func time(asEnd: Bool) throws(ScenarioError) -> Int {
        let expectation = asEnd ? "a time HH:MM between 00:00 and 24:00" : "a time HH:MM between 00:00 and 23:59"
        guard case .string(let text) = kind else { throw expected(expectation) }
        guard let minute = Self.minute(of: text), asEnd || minute < Scenario.minutesPerDay else {
            throw failure("expected \(expectation), found \(Self.quoted(text))")
        }
        return minute
    }

    /// Minutes since midnight of exactly two digits, a colon and two digits, up to 24:00.
    static func minute(of text: String) -> Int? {
        let bytes = Array(text.utf8)
        guard bytes.count == 5, bytes[2] == UInt8(ascii: ":") else { return nil }
        let digits = [bytes[0], bytes[1], bytes[3], bytes[4]].map { Int($0) - Int(UInt8(ascii: "0")) }
        guard digits.allSatisfy({ (0...9).contains($0) }) else { return nil }
        let hours = digits[0] * 10 + digits[1], minutes = digits[2] * 10 + digits[3]
        guard minutes < 60, hours * 60 + minutes <= Scenario.minutesPerDay else { return nil }
        return hours * 60 + minutes
    }

    /// The exact value of a JSON number's text (`9007199254740993`, `9.007199254740993e15`,
    /// `-0`) when it is a whole number from 0 to `UInt64.max`; `nil` for a fraction, a
    /// negative number or a larger one. Exact at any length, unlike a Double.
    static func wholeNumber(ofLiteral literal: String) -> UInt64? {
        // Over the bytes, in one pass each: a literal is up to a megabyte of digits, and
        // stepping a String's characters from the end made this quadratic (a seed written
        // with 100,000 zeros took a minute).
        let zero = UInt8(ascii: "0")
        var text = Array(literal.utf8)[...]
        var negative = false
        if text.first == UInt8(ascii: "-") {
            negative = true
            text = text.dropFirst()
        }
        let marks = text.indices.filter { text[$0] == UInt8(ascii: "e") || text[$0] == UInt8(ascii: "E") }
        guard marks.count <= 1 else { return nil }
        let mantissa = marks.first.map { text[..<$0] } ?? text
        // Clamped far beyond any exponent that can matter (a document is at most 1 MiB), so
        // the arithmetic below cannot overflow.
        var exponent = 0
        if let mark = marks.first {
            var written = text[(mark + 1)...]
            if written.first == UInt8(ascii: "+") { written = written.dropFirst() }
            let negativeExponent = written.first == UInt8(ascii: "-")
            exponent = Int(String(decoding: written, as: UTF8.self)) ?? (negativeExponent ? -10_000_000 : 10_000_000)
            exponent = min(max(exponent, -10_000_000), 10_000_000)
        }
        let dot = mantissa.firstIndex(of: UInt8(ascii: "."))
        let whole = dot.map { mantissa[..<$0] } ?? mantissa
        let fraction = dot.map { mantissa[($0 + 1)...] } ?? mantissa[mantissa.endIndex...]
        let written = Array(whole + fraction)
        guard written.allSatisfy({ $0 >= zero && $0 <= UInt8(ascii: "9") }) else { return nil }
        var digits = Array(written.drop { $0 == zero })
        if digits.isEmpty { return 0 }
        guard !negative else { return nil }
        var scale = exponent - fraction.count
        let trailingZeros = digits.reversed().prefix { $0 == zero }.count
        digits.removeLast(trailingZeros)
        scale += trailingZeros
        guard scale >= 0, digits.count + scale <= 20 else { return nil }
        return UInt64(String(decoding: digits, as: UTF8.self) + String(repeating: "0", count: scale))
    }

    /// A number's text for a message: at most 24 characters, then its length.
    static func shortened(_ literal: String) -> String {
        literal.count > 24 ? String(literal.prefix(24)) + "... (\(literal.count) characters)" : literal
    }

    /// A number as JSON would write it: whole numbers without a decimal point.
    static func render(_ number: Double) -> String {
        if number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) }
        return "\(number)"
    }

    /// In double quotes, escaped as JSON writes it (control characters too: messages go to
    /// terminals).
    static func quoted(_ text: String) -> String {
        "\"" + StrictJSON.escaped(text) + "\""
    }

    /// `.key` for identifier-like keys, `["odd key"]` for the rest, so a path stays
    /// unambiguous (the same paths as ``StrictJSON``'s duplicate-key errors).
    static func component(_ key: String) -> String {
        StrictJSON.pathComponent(key)
    }
}

/// The entries of a JSON object whose keys have been checked.
struct JSONObject {
    let entries: [String: Any]
    let path: String
    /// The numbers' text as written, by key (the top-level object only).
    var literals: [String: String] = [:]

    /// The value under `key`, or `nil` when absent (an explicit `null` is a value: it is
    /// refused where null is not allowed, not taken for a default).
    func optional(_ key: String) -> JSONNode? {
        entries[key].map { JSONNode($0, path: path + JSONNode.component(key), literal: literals[key]) }
    }

    func required(_ key: String, expecting expectation: String) throws(ScenarioError) -> JSONNode {
        guard let node = optional(key) else {
            throw ScenarioError(path: path, message: "missing required key \(JSONNode.quoted(key)): expected \(expectation)")
        }
        return node
    }
}

/// Where a JSON syntax error sits, as line, column and the text there (in the manner of
/// SQLite's `near "x"`), from the character offset in Foundation's message.
enum JSONPosition {
    /// Foundation's complaint about a document `StrictJSON` accepted (rare: its numbers and
    /// strings are checked alike), without a position of its own.
    static func describe(_ error: any Error, in data: Data) -> String {
        let nsError = error as NSError
        return "an error: \(nsError.userInfo[NSDebugDescriptionErrorKey] as? String ?? nsError.localizedDescription)"
    }
}
