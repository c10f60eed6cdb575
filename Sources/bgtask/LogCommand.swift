import BackgroundTasks
import DaemonProtocol
import Foundation
import PostgreSQLStore
import SchedulerStore
import SchedulerCore

/// `bgtask log [--app A] [--since T] [--state DIR | --store URL] [--json]`: the run log (the energy log's
/// rows), oldest first, from the apps' state stores.
enum LogCommand {
    /// The options of `log` (shared with `energy`).
    typealias Options = RunLogOptions

    /// The usage lines for `bgtask help`.
    static let usage = """
      log [--app A] [--since T] [--state DIR | --store URL] [--json]
                        list recorded runs: start, end, app, task, kind, outcome, wall time,
                        CPU time, peak memory, estimated energy and stop reason
    """

    /// Parses the arguments after `log`.
    static func parse(_ arguments: [String]) -> Result<Options, UsageError> {
        RunLogOptions.parse(arguments, command: "log")
    }

    /// Reads the stores the options name and returns the text to print (a table, or JSON
    /// with `--json`).
    /// - Parameters:
    ///   - environment: Where `XDG_STATE_HOME` and `HOME` come from when `--state` is absent.
    ///   - now: The instant relative `--since` values count back from.
    ///   - warn: Where the lines naming stores and run rows that could not be read go
    ///     (standard error), apart from the output, which may be JSON.
    /// - Throws: ``RunLogError`` when no store can be read.
    static func run(_ options: Options, environment: [String: String], now: Date, warn: (String) -> Void) throws -> String {
        if options.help { return "usage: bgtask\n" + usage + "\n" + RunLogOptions.optionsHelp + "\n" }
        let reading = try RunLogReading.read(options, environment: environment, now: now)
        if let warnings = reading.warnings { warn(warnings) }
        return options.json ? try json(reading, options: options) : text(reading, options: options)
    }

    // MARK: Output

    private static func text(_ reading: RunLogReading, options: Options) -> String {
        guard !reading.runs.isEmpty else {
            return "no runs recorded in \(reading.whereDescription)\(reading.filterDescription(options))\n"
        }
        var output = "\(CountText.counted(reading.runs.count, "run")) recorded in "
            + "\(reading.whereDescription)\(reading.filterDescription(options)) (times in UTC)\n\n"
        // The store replicas share says which replica ran each run.
        let byReplica = reading.runs.contains { $0.replica != nil }
        let header = ["START", "END"] + (byReplica ? ["REPLICA"] : []) + ["APP", "TASK", "KIND", "OUTCOME", "WALL", "CPU", "PEAK MEM", "ENERGY", "STOP REASON"]
        let rows = reading.runs.map { entry -> [String] in
            let run = entry.run
            return [
                RunLogFormat.time(run.startedAt),
                run.endedAt.map(RunLogFormat.time) ?? "-",
            ] + (byReplica ? [entry.replica ?? "-"] : []) + [
                run.app.rawValue,
                run.identifier,
                run.request.kind.rawValue,
                run.outcome?.rawValue ?? "running",
                run.observedDuration.map(DurationText.measured) ?? "-",
                run.cpuTime.map(DurationText.measured) ?? "-",
                run.peakMemoryBytes.map(RunLogFormat.bytes) ?? "-",
                run.energyJoules.map(RunLogFormat.joules) ?? "-",
                run.stopReason ?? "-",
            ]
        }
        output += RunLogFormat.table(header: header, rows: rows)
        // Runs bgtaskd launched say where their figures came from (cgroup or rusage; RAPL
        // or the model): one line per source in use, under the table.
        let sources = Set(reading.runs.compactMap(\.run.measuredBy)).sorted()
        if !sources.isEmpty {
            output += "\nmeasured by: " + sources.joined(separator: " | ") + " (runs launched by bgtaskd; --json has it per run)\n"
        }
        return output
    }

    /// One run in `--json` output; every key is always present (`null` when unknown).
    struct Entry: Codable, Equatable {
        /// The store the run was read from.
        var store: String
        /// The replica that recorded it, in the store replicas share; `null` in a file.
        var replica: String?
        /// The run number (unique within its store; in the store replicas share, within its
        /// replica).
        var id: Int64
        var app: String
        var identifier: String
        var kind: String
        /// ISO 8601, UTC, with fractional seconds.
        var startedAt: String
        var endedAt: String?
        /// A ``RunOutcome`` raw value, or `null` while in progress.
        var outcome: String?
        var success: Bool?
        var stopReason: String?
        /// Seconds from launch to end; `null` while in progress and for an interrupted run
        /// (``RunRecord/observedDuration``: its recorded end is when the scheduler was back).
        var wallTime: Double?
        /// CPU seconds (user + system).
        var cpuTime: Double?
        var peakMemoryBytes: Int64?
        var energyJoules: Double?
        /// Bytes read and written, when measured (runs bgtaskd launched).
        var bytesRead: Int64?
        var bytesWritten: Int64?
        /// Where the measurements came from (`cgroup; energy: RAPL ...`), for runs bgtaskd
        /// launched; `null` for in-process runs (their process's CPU and memory; energy: model).
        var measuredBy: String?

        init(store: String, replica: String? = nil, run: RunRecord) {
            self.store = store
            self.replica = replica
            id = run.id.rawValue
            app = run.app.rawValue
            identifier = run.identifier
            kind = run.request.kind.rawValue
            startedAt = RunLogFormat.preciseTime(run.startedAt)
            endedAt = run.endedAt.map(RunLogFormat.preciseTime)
            outcome = run.outcome?.rawValue
            success = run.success
            stopReason = run.stopReason
            wallTime = run.observedDuration
            cpuTime = run.cpuTime
            peakMemoryBytes = run.peakMemoryBytes
            energyJoules = run.energyJoules
            bytesRead = run.bytesRead
            bytesWritten = run.bytesWritten
            measuredBy = run.measuredBy
        }

        private enum CodingKeys: String, CodingKey {
            case store, replica, id, app, identifier, kind, startedAt, endedAt, outcome, success, stopReason
            case wallTime, cpuTime, peakMemoryBytes, energyJoules, bytesRead, bytesWritten, measuredBy
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(store, forKey: .store)
            try container.encode(replica, forKey: .replica)
            try container.encode(id, forKey: .id)
            try container.encode(app, forKey: .app)
            try container.encode(identifier, forKey: .identifier)
            try container.encode(kind, forKey: .kind)
            try container.encode(startedAt, forKey: .startedAt)
            // Optionals through the generic `encode` become `null` instead of vanishing.
            try container.encode(endedAt, forKey: .endedAt)
            try container.encode(outcome, forKey: .outcome)
            try container.encode(success, forKey: .success)
            try container.encode(stopReason, forKey: .stopReason)
            try container.encode(wallTime, forKey: .wallTime)
            try container.encode(cpuTime, forKey: .cpuTime)
            try container.encode(peakMemoryBytes, forKey: .peakMemoryBytes)
            try container.encode(energyJoules, forKey: .energyJoules)
            try container.encode(bytesRead, forKey: .bytesRead)
            try container.encode(bytesWritten, forKey: .bytesWritten)
            try container.encode(measuredBy, forKey: .measuredBy)
        }
    }

    /// The `--json` document: the shared envelope, then the runs.
    struct Document: Codable, Equatable {
        /// Which stores were read, and the filters.
        var envelope: RunLogEnvelope
        /// The runs, oldest first.
        var runs: [Entry]

        private enum CodingKeys: String, CodingKey { case runs }

        init(envelope: RunLogEnvelope, runs: [Entry]) {
            self.envelope = envelope
            self.runs = runs
        }

        init(from decoder: any Decoder) throws {
            envelope = try RunLogEnvelope(from: decoder)
            runs = try decoder.container(keyedBy: CodingKeys.self).decode([Entry].self, forKey: .runs)
        }

        func encode(to encoder: any Encoder) throws {
            try envelope.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(runs, forKey: .runs)
        }
    }

    private static func json(_ reading: RunLogReading, options: Options) throws -> String {
        let document = Document(
            envelope: RunLogEnvelope(reading, options: options),
            runs: reading.runs.map { Entry(store: $0.store, replica: $0.replica, run: $0.run) }
        )
        return try RunLogFormat.json(document)
    }
}

// MARK: - Shared by `log` and `energy`

/// The part of the `--json` documents of `log` and `energy` that says what was read:
/// the stores, those skipped and why, and the filters. Every key is always present
/// (`null` when unset), so scripts need not test for missing keys.
struct RunLogEnvelope: Codable, Equatable {
    /// The stores read.
    var stores: [String]
    /// Stores that could not be read, with why.
    var skipped: [RunLogReading.Skipped]
    /// Damaged stores set aside beside the stores read (their runs are not shown).
    var setAside: [String]
    /// The `--app` filter, or `null`.
    var app: String?
    /// The start of the `--since` window (ISO 8601), or `null`.
    var since: String?

    private enum CodingKeys: String, CodingKey { case stores, skipped, setAside, app, since }

    init(_ reading: RunLogReading, options: RunLogOptions) {
        stores = reading.stores
        skipped = reading.skipped
        setAside = reading.setAside
        app = options.app?.rawValue
        since = reading.since.map(RunLogFormat.preciseTime)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(stores, forKey: .stores)
        try container.encode(skipped, forKey: .skipped)
        try container.encode(setAside, forKey: .setAside)
        try container.encode(app, forKey: .app)
        try container.encode(since, forKey: .since)
    }
}

/// The options `bgtask log` and `bgtask energy` share.
struct RunLogOptions: Equatable {
    /// Only this app's runs.
    var app: AppID?
    /// Only runs started at or after this.
    var since: Since?
    /// The state directory to read (holding `scheduler.sqlite`), instead of every app's.
    var stateDirectory: String?
    /// A shared store's address (`--store URL`; else `BGTASK_STORE_URL` when no
    /// `--state` is given), read instead of the files.
    var storeAddress: String?
    /// Print JSON instead of a table.
    var json = false
    /// `--help`: print the command's usage.
    var help = false

    /// A `--since` value: an instant, or a span back from now.
    enum Since: Equatable {
        /// An absolute instant (`2026-11-30T08:00:00Z`).
        case instant(Date)
        /// A span before now, in seconds (`24h`, `7d`, `30m`).
        case ago(TimeInterval)

        /// The instant this stands for, as of `now`.
        func resolve(now: Date) -> Date {
            switch self {
            case .instant(let date): return date
            case .ago(let span): return now.addingTimeInterval(-span)
            }
        }

        /// The longest span back from now: 100 years of 365.25 days (36,525 days, so 5217w
        /// is taken and 5218w refused, as the message's "at most 100 years" says). Runs are
        /// not older, and a bound keeps date arithmetic finite.
        static let maximumSpan: TimeInterval = 36_525 * 86_400

        /// Units of relative values, in seconds.
        static let units: [Character: TimeInterval] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400, "w": 604_800]

        /// Parses `text`: ISO 8601 with a time zone (`2026-11-30T08:00:00Z`,
        /// `2026-11-30T09:00:00.5+01:00`), a date (`2026-11-30`, midnight UTC), or a positive
        /// number followed by `s`, `m`, `h`, `d` or `w` (at most 100 years). `nil` when it is none
        /// of these.
        static func parse(_ text: String) -> Since? {
            if let unit = text.last, let seconds = units[unit] {
                let number = text.dropLast()
                // Digits and at most one point only: Double("1e3") or "inf" are not spans.
                guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
                      number.filter({ $0 == "." }).count <= 1,
                      let value = Double(number), value > 0, value * seconds <= maximumSpan
                else { return nil }
                return .ago(value * seconds)
            }
            return instant(from: text).map { .instant($0) }
        }

        /// The instant `text` names: `YYYY-MM-DD` (midnight UTC), or that followed by
        /// `Thh:mm:ss`, an optional fraction and a zone (`Z` or `±hh:mm`); `nil` when it is
        /// not one of these or a field is out of range (month 1-12, a day the month has,
        /// hour 0-23, minute and second 0-59, an offset of at most 23:59). One strict
        /// reading that builds the instant itself: Foundation's formatter rolls impossible
        /// fields over (25:00 is the next day, February 30 is March 2), so a typo would
        /// silently name another instant.
        static func instant(from text: String) -> Date? {
            let characters = Array(text.utf8)
            func number(_ start: Int, _ length: Int) -> Int? {
                guard start + length <= characters.count else { return nil }
                var value = 0
                for byte in characters[start ..< start + length] {
                    guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                    value = value * 10 + Int(byte - UInt8(ascii: "0"))
                }
                return value
            }
            func character(_ index: Int, is expected: Character) -> Bool {
                index < characters.count && characters[index] == expected.asciiValue
            }
            guard let year = number(0, 4), character(4, is: "-"), let month = number(5, 2), character(7, is: "-"),
                  let day = number(8, 2), (1 ... 12).contains(month), (1 ... GregorianDate.daysInMonth(month, of: year)).contains(day)
            else { return nil }
            let midnight = Double(GregorianDate.daysSince1970(year: year, month: month, day: day)) * 86_400
            guard characters.count > 10 else { return Date(timeIntervalSince1970: midnight) }
            guard character(10, is: "T"), let hour = number(11, 2), character(13, is: ":"), let minute = number(14, 2),
                  character(16, is: ":"), let second = number(17, 2), hour <= 23, minute <= 59, second <= 59
            else { return nil }
            let wholeSeconds = midnight + Double(hour * 3_600 + minute * 60 + second)
            var fraction = 0.0
            var zone = 19
            if character(zone, is: ".") {
                let digits = zone + 1
                zone = digits
                while zone < characters.count, characters[zone] >= UInt8(ascii: "0"), characters[zone] <= UInt8(ascii: "9") { zone += 1 }
                guard zone > digits, let digitsRead = Double("0." + String(decoding: characters[digits ..< zone], as: UTF8.self)) else { return nil }
                fraction = digitsRead
            }
            // The fraction is added last, kept inside its second: one of many nines
            // (0.99999999999999999999) rounds, as a Double of today's seconds, to the next whole
            // second, an instant the text does not name (an outside probe's was the next year).
            func instant(_ whole: Double) -> Date { Date(timeIntervalSince1970: min(whole + fraction, (whole + 1).nextDown)) }
            if character(zone, is: "Z") || character(zone, is: "z") {
                return zone + 1 == characters.count ? instant(wholeSeconds) : nil
            }
            guard character(zone, is: "+") || character(zone, is: "-"), let offsetHours = number(zone + 1, 2), character(zone + 3, is: ":"),
                  let offsetMinutes = number(zone + 4, 2), zone + 6 == characters.count, offsetHours <= 23, offsetMinutes <= 59
            else { return nil }
            let offset = Double(offsetHours * 3_600 + offsetMinutes * 60)
            return instant(character(zone, is: "+") ? wholeSeconds - offset : wholeSeconds + offset)
        }
    }

    /// The option lines for `--help`.
    static let optionsHelp = """

    options:
      --app A        only the runs of app A (for example com.example.feedreader)
      --since T      only runs started at or after T: ISO 8601 (2026-11-30T08:00:00Z,
                     2026-11-30) or a span back from now (30m, 24h, 7d, 2w)
      --state DIR    read DIR/scheduler.sqlite instead of every app's store under
                     $XDG_STATE_HOME/bgtask/ (else ~/.local/state/bgtask/)
      --store URL    read the store replicas share on PostgreSQL (postgresql://...,
                     or libpq's key=value form); default: $BGTASK_STORE_URL, unless
                     --state is given
      --json         print JSON
    """

    /// Parses the arguments after the command word; errors name the option or value at fault.
    static func parse(_ arguments: [String], command: String) -> Result<RunLogOptions, UsageError> {
        var options = RunLogOptions()
        var seen: Set<String> = []
        var index = 0
        func failure(_ message: String) -> Result<RunLogOptions, UsageError> {
            .failure(UsageError(message: message))
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--json":
                options.json = true
                index += 1
                continue
            case "--help", "-h":
                options.help = true
                index += 1
                continue
            case "--app", "--since", "--state", "--store":
                break
            default:
                return failure("unknown option for \(command): '\(argument)'")
            }
            guard seen.insert(argument).inserted else {
                return failure("\(argument) given more than once")
            }
            let value: String
            switch OptionValue.take(arguments, at: &index, for: argument, what: argument == "--app" ? "an app identifier" : argument == "--since" ? "an instant or a span" : argument == "--store" ? "a store address" : "a directory") {
            case .success(let text): value = text
            case .failure(let error): return .failure(error)
            }
            index += 1
            switch argument {
            case "--app":
                guard !value.hasPrefix("-") else {
                    return failure("--app needs an app identifier, got '\(value)'")
                }
                switch OptionValue.app(value, for: "--app") {
                case .success(let app): options.app = app
                case .failure(let error): return .failure(error)
                }
            case "--since":
                guard let since = Since.parse(value) else {
                    return failure(
                        "--since must be an ISO 8601 instant (2026-11-30T08:00:00Z) or a span "
                            + "such as 30m, 24h or 7d (above 0, at most 100 years), got '\(value)'"
                    )
                }
                options.since = since
            case "--store":
                guard !value.isEmpty, !value.hasPrefix("-") else {
                    return failure("--store needs a PostgreSQL address (postgresql://...), got '\(value)'")
                }
                options.storeAddress = value
            default:
                guard !value.isEmpty, !value.hasPrefix("-") else {
                    return failure("--state needs a directory, got '\(value)'")
                }
                options.stateDirectory = value
            }
        }
        if options.stateDirectory != nil, options.storeAddress != nil {
            return failure("--state and --store name two stores; give one")
        }
        return .success(options)
    }
}

/// A failure of `log` or `energy` that is not a usage error (no readable store, an unset
/// `HOME`): printed on standard error, exit status 1.
struct RunLogError: Error, Equatable, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// The runs read from the stores `log` and `energy` look at.
struct RunLogReading {
    /// A store that could not be read.
    struct Skipped: Codable, Equatable {
        var store: String
        var error: String
    }

    /// The stores read, in order.
    var stores: [String]
    /// The stores that could not be read, and the run rows of a read store that could not
    /// be (the error names the run).
    var skipped: [Skipped]
    /// The runs, with the store each came from and, in the store replicas share, the
    /// replica that recorded it (`nil` in a file of one app's or bgtaskd's), oldest first.
    var runs: [(store: String, replica: String?, run: RunRecord)]
    /// Damaged stores set aside beside the stores looked at
    /// (`CorruptStoreQuarantine.setAside(besides:)`): their runs are not among these.
    var setAside: [String] = []
    /// The resolved `--since`, if any.
    var since: Date?
    /// What was searched, for messages: one store's path, the directory of all stores, or
    /// "N stores: <apps' directory> and <bgtaskd's store>" when the daemon's is elsewhere.
    var whereDescription: String

    /// ` of A since T` for the filters in use, for messages.
    func filterDescription(_ options: RunLogOptions) -> String {
        var text = ""
        if let app = options.app { text += " for \(app)" }
        // To the millisecond when the time has a fraction: "no runs since 08:00:00" for a
        // --since of 08:00:00.5 would name another instant than the one given.
        if let since {
            let whole = since.timeIntervalSince1970.rounded(.down) == since.timeIntervalSince1970
            // Milliseconds cut, not rounded: 23:59:59.9996 is not shown as the next day.
            let shown = Date(timeIntervalSince1970: (since.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
            text += " since \(whole ? RunLogFormat.time(since) : RunLogFormat.preciseTime(shown))"
        }
        return text
    }

    /// Lines naming the stores and run rows that could not be read, for standard error;
    /// `nil` when there are none.
    var warnings: String? {
        let lines = skipped.map { "warning: skipped \($0.store): \($0.error)\n" }
            + setAside.map { CorruptStoreQuarantine.setAsideWarning(at: $0, consequence: "its runs that could not be read back are not shown") }
        return lines.isEmpty ? nil : lines.joined()
    }

    /// Finds the stores (``locate(_:environment:)``), opens each for reading, and collects
    /// its runs matching `--app` and `--since`, oldest first across stores.
    ///
    /// A store that cannot be read is skipped and named; when none could be read at all,
    /// this throws, naming each failure.
    static func read(_ options: RunLogOptions, environment: [String: String], now: Date) throws -> RunLogReading {
        let since = options.since?.resolve(now: now)
        if let address = options.sharedStoreAddress(environment: environment) {
            // The store replicas share: one log, every replica's runs.
            do {
                return try address.reading { store in
                    // One damaged row hides nothing else, as in a SQLite store.
                    let (runs, unreadable) = try store.readableRunsOfReplicas(app: options.app, since: since)
                    let skipped = unreadable.map { Skipped(store: store.storeDescription, error: "unreadable run row of replica \($0.tag): \($0.reason)") }
                    return RunLogReading(stores: [store.storeDescription], skipped: skipped, runs: runs.map { (store.storeDescription, $0.tag, $0.run) }, since: since, whereDescription: store.storeDescription)
                }
            } catch {
                throw RunLogError(message: "cannot read the run log: \((error as? StoreError)?.message ?? "\(error)")")
            }
        }
        let (urls, whereDescription) = try locate(options, environment: environment)
        var reading = RunLogReading(stores: [], skipped: [], runs: [], since: since, whereDescription: whereDescription)
        for url in urls {
            do throws(StoreError) {
                let store = try SchedulerStore.openForReading(at: url)
                // One damaged row hides nothing else: it is named, the others are shown.
                let (runs, unreadable) = try store.readableRuns(app: options.app, since: since)
                reading.stores.append(url.path)
                reading.runs += runs.map { (url.path, nil, $0) }
                // The reason names the run (run#N); `store` stays the store's path.
                reading.skipped += unreadable.map { Skipped(store: url.path, error: "unreadable run row: \($0.reason)") }
            } catch {
                reading.skipped.append(Skipped(store: url.path, error: error.message))
            }
        }
        reading.setAside = urls.flatMap { CorruptStoreQuarantine.setAside(besides: $0.path) }
        if reading.stores.isEmpty, !reading.skipped.isEmpty {
            throw RunLogError(message: "cannot read the run log: " + reading.skipped.map(\.error).joined(separator: "; "))
        }
        // Stable order across stores: by start, then store, then run number.
        reading.runs.sort { lhs, rhs in
            if lhs.run.startedAt != rhs.run.startedAt { return lhs.run.startedAt < rhs.run.startedAt }
            if lhs.store != rhs.store { return lhs.store < rhs.store }
            if lhs.run.id != rhs.run.id { return lhs.run.id < rhs.run.id }
            return (lhs.replica ?? "") < (rhs.replica ?? "")
        }
        return reading
    }

    /// The store files to read and a description of where they are.
    ///
    /// `--state DIR` names one directory holding `scheduler.sqlite` (or the file itself);
    /// otherwise every `<base>/bgtask/*/scheduler.sqlite` and bgtaskd's
    /// `<base>/bgtaskd/scheduler.sqlite`, where base is `$XDG_STATE_HOME`
    /// (when absolute) else `$HOME/.local/state`, as `EmbeddedScheduler` places them.
    static func locate(_ options: RunLogOptions, environment: [String: String]) throws -> ([URL], String) {
        let fileManager = FileManager.default
        if let state = options.stateDirectory {
            let store = try StateOption.store(named: state)
            return ([store], store.path)
        }
        // Where the embedded scheduler keeps every app's state, by its own rules (a variable
        // that is not UTF-8 is refused there, not read as another directory).
        let root: URL
        do {
            root = try EmbeddedScheduler.stateRoot(environment: environment)
        } catch {
            throw RunLogError(message: "\(error.message); name a state directory with --state DIR")
        }
        // A file or FIFO where the state directory should be is said, not read as "no runs".
        if let problem = DirectoryProblem.find(in: root.path) {
            throw RunLogError(message: "cannot read the state directory \(root.path): \(problem)")
        }
        let apps = (try? fileManager.contentsOfDirectory(atPath: root.path)) ?? []
        // Every embedded app's store, and bgtaskd's (the apps installed with the daemon),
        // found by the daemon's own rules for its state directory.
        let daemonStore = (try? DaemonPaths.resolve(environment: environment, uid: getuid()))
            .map { URL(fileURLWithPath: $0.stateDirectory).appendingPathComponent("scheduler.sqlite") }
        // Whatever is at a store's path is read (a directory, a link leading nowhere: skipped,
        // named), and bgtaskd's when its state directory cannot hold one (a regular file):
        // said, not read as "no runs".
        // (An entry of the apps' directory that is no directory holds no store: not read.)
        let stores = apps.sorted().map { root.appendingPathComponent($0).appendingPathComponent("scheduler.sqlite") }
            .filter { BoundedFile.lookupProblem(at: $0.path) != .missing }
            + (daemonStore.flatMap { SchedulerStore.isAbsent(at: $0) ? nil : [$0] } ?? [])
        // With several stores, what was searched: the embedded apps' directory and, when
        // it is elsewhere (it is by default), bgtaskd's store too, so runs bgtaskd launched
        // are not said to come from the apps' directory.
        guard stores.count != 1 else { return (stores, stores[0].path) }
        let daemonElsewhere = daemonStore.flatMap { store in stores.contains(store) && !store.path.hasPrefix(root.path + "/") ? store.path : nil }
        return (stores, daemonElsewhere.map { "\(stores.count) stores: \(root.path) and \($0)" } ?? root.path)
    }
}

/// What `--state PATH` names, for every command that reads a store (`log`, `energy`, `why`):
/// one reading, so they accept and refuse the same paths.
enum StateOption {
    /// The store file `--state path` names: `path/scheduler.sqlite` when `path` is a
    /// directory, else `path` itself (the store file, as `log` always took it). A path that
    /// is missing, a link loop or a link leading nowhere, or a directory without a store, is
    /// a ``RunLogError`` naming it and saying what is expected.
    static func store(named path: String) throws(RunLogError) -> URL {
        let url = URL(fileURLWithPath: path)
        // A link loop or a link leading nowhere is there, in `ls`: named, not "missing".
        switch BoundedFile.lookupProblem(at: url.path) {
        // Named as what --state names (a state directory, or its store file), not as a
        // directory: a path that cannot be looked at may have been meant as either.
        case .missing?: throw RunLogError(message: "--state \(url.path) does not exist (--state names a state directory or its scheduler.sqlite)")
        case let problem?: throw RunLogError(message: "--state \(url.path) cannot be read: it is \(problem.found)")
        case nil: break
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue else { return url }
        let store = url.appendingPathComponent("scheduler.sqlite")
        switch BoundedFile.lookupProblem(at: store.path) {
        case .missing?: throw RunLogError(message: "there is no scheduler store in \(url.path) (no scheduler.sqlite)")
        case let problem?: throw RunLogError(message: "the scheduler store \(store.path) cannot be read: it is \(problem.found)")
        case nil: return store
        }
    }
}

extension RunLogOptions {
    /// The shared store to read: `--store`, else `BGTASK_STORE_URL` unless `--state` names
    /// a directory; `nil` for the files.
    func sharedStoreAddress(environment: [String: String]) -> SharedStoreAddress? {
        SharedStoreAddress.chosen(given: storeAddress, otherPlaceGiven: stateDirectory != nil, otherPlace: "--state DIR", environment: environment)
    }
}

/// Formatting shared by `log` and `energy`.
enum RunLogFormat {
    /// `2026-11-30T08:00:00Z`: UTC, whole seconds, for tables.
    static func time(_ date: Date) -> String {
        GregorianDate.iso8601(date)
    }

    /// `2026-11-30T08:00:00.250Z`: UTC with milliseconds, for JSON.
    static func preciseTime(_ date: Date) -> String {
        GregorianDate.iso8601(date, milliseconds: true)
    }

    /// Joules: `0.25 J`, `42.5 J`, `1.50 kJ`.
    static func joules(_ value: Double) -> String {
        let magnitude = abs(value)
        if magnitude < 10 { return String(format: "%.2f J", value) }
        if magnitude < 1_000 { return String(format: "%.1f J", value) }
        return String(format: "%.2f kJ", value / 1_000)
    }

    /// Bytes in MiB: `52.3 MiB`.
    static func bytes(_ value: Int64) -> String {
        String(format: "%.1f MiB", Double(value) / 1_048_576)
    }

    /// A table: columns padded to their widest cell, two spaces apart; the last column is
    /// not padded (it holds free text).
    static func table(header: [String], rows: [[String]]) -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }
            .joined(separator: "  ")
            .replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
        .joined(separator: "\n") + "\n"
    }

    /// Pretty, key-sorted JSON, ending in a newline.
    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self) + "\n"
    }
}
