import BackgroundTasks
import Foundation
import SchedulerCore

/// Turns a trace into a readable timeline: one line per thing that happened, times as
/// `HH:MM:SS` from the start of the simulated day. Runs of one task that end the same
/// way in a row are folded into one line ("ran 12 times, all success"), and a reading in
/// which only the battery level moved is left out (the report draws it) unless the level
/// crossed a line that matters (``batteryMilestone(from:to:)``), so a day of 15-minute
/// refreshes stays readable. A due request held by a policy is said once per hold (not at
/// every judgement that holds it again), with the instant or change it waits for.
public struct Timeline: Sendable {
    /// One line of the timeline.
    public struct Line: Hashable, Sendable {
        /// When it happened.
        public var at: Date
        /// What happened.
        public var text: String
    }

    /// The lines, in order.
    public private(set) var lines: [Line] = []

    /// The instant times are measured from.
    public let start: Date

    /// Builds the timeline of `trace`, with times measured from `start`.
    public init(trace: [SchedulerTraceEvent], start: Date) {
        self.start = start
        // A task is named by the last part of its identifier ("refresh"), unless two
        // identifiers of the trace end alike (two apps' refreshes): then whole.
        var lastParts: [String: Set<String>] = [:]
        for event in trace {
            let identifier: String
            switch event {
            case .submitted(let request, _): identifier = request.identifier
            case .moved(let key, _, _, _), .cancelled(let key, _): identifier = key.identifier
            case .launched(let record, _, _), .finished(let record): identifier = record.identifier
            default: continue
            }
            lastParts[Self.lastPart(identifier), default: []].insert(identifier)
        }
        let ambiguous = Set(lastParts.filter { $0.value.count > 1 }.keys)
        let short: (String) -> String = { identifier in
            let part = Self.lastPart(identifier)
            return ambiguous.contains(part) ? identifier : part
        }
        var eligibleSince: [RequestKey: Date] = [:]
        var shownConditions: Conditions?
        var lastBatteryLevel: Double?
        // The kind of hold last said for each held request, until it runs or is blocked.
        var shownHold: [RequestKey: String] = [:]
        // Runs of one task that ended alike, after the one already printed.
        var fold: (identifier: String, outcome: RunOutcome, first: Date, last: Date, count: Int)?

        func flush() {
            guard let folded = fold else { return }
            if folded.count > 0 {
                let times = folded.count == 1 ? "1 more run" : "\(folded.count) more runs"
                lines.append(Line(at: folded.first, text: "\(short(folded.identifier)): \(times) until \(Self.offset(folded.last, from: start)), all \(folded.outcome)"))
            }
            fold = nil
        }

        for event in trace {
            switch event {
            case .finished(let record):
                let started = record.startedAt
                defer { eligibleSince[record.request.key] = nil }
                let outcome = record.outcome ?? .failure
                let duration = record.duration.map { String(format: "%.0f s", $0) } ?? "?"
                if var folded = fold, folded.identifier == record.identifier, folded.outcome == outcome {
                    if folded.count == 0 { folded.first = started }
                    folded.last = started
                    folded.count += 1
                    fold = folded
                    continue
                }
                flush()
                let waited = eligibleSince.removeValue(forKey: record.request.key).flatMap { since in
                    since < started ? ", eligible since \(Self.offset(since, from: start))" : nil
                } ?? ""
                shownHold[record.request.key] = nil
                let reason = record.stopReason.map { $0 == "completed" ? "" : " (\($0))" } ?? ""
                lines.append(Line(at: started, text: "\(short(record.identifier)): ran \(duration), \(outcome)\(reason)\(waited)"))
                fold = (record.identifier, outcome, started, started, 0)
            case .launched:
                continue
            case .moved(let key, let location, let at, let heldBy):
                switch location {
                case .ready:
                    eligibleSince[key] = eligibleSince[key] ?? at
                case .blocked:
                    eligibleSince[key] = eligibleSince[key] ?? at
                    shownHold[key] = nil
                    flush()
                    lines.append(Line(at: at, text: "\(short(key.identifier)): due, \(location)"))
                case .deferred(let until):
                    guard shownHold[key] != "deferred" else { continue }
                    shownHold[key] = "deferred"
                    flush()
                    lines.append(Line(at: at, text: "\(short(key.identifier)): due, held by \(heldBy ?? "a policy") until \(Self.offset(until, from: start))"))
                case .parkedForApp, .parkedForDevice:
                    guard shownHold[key] != location.description else { continue }
                    shownHold[key] = location.description
                    flush()
                    lines.append(Line(at: at, text: "\(short(key.identifier)): due, \(location.description(heldBy: heldBy))"))
                default:
                    continue
                }
            case .expired(_, let key, let reason, let at):
                flush()
                lines.append(Line(at: at, text: "\(short(key.identifier)): expired, \(reason)"))
            case .terminated(_, let key, let reason, let at):
                flush()
                lines.append(Line(at: at, text: "\(short(key.identifier)): terminated, \(reason)"))
            case .conditionsChanged(let conditions, let at):
                let milestone = Self.batteryMilestone(from: lastBatteryLevel, to: conditions.batteryLevel)
                lastBatteryLevel = conditions.batteryLevel
                if var previous = shownConditions, !milestone {
                    previous.batteryLevel = conditions.batteryLevel
                    if previous == conditions { continue }
                }
                shownConditions = conditions
                flush()
                lines.append(Line(at: at, text: "device: \(conditions)"))
            case .lifecycle(let app, _, let to, let at):
                flush()
                lines.append(Line(at: at, text: "\(app): \(to)"))
            case .appTerminated(let app, let reason, let at):
                flush()
                lines.append(Line(at: at, text: "\(app): terminated by the system, \(reason)"))
            case .assertionBegan(let app, let identifier, let name, let at):
                flush()
                lines.append(Line(at: at, text: "\(app): began background assertion \(identifier)\(name.map { " \"\($0)\"" } ?? "")"))
            case .assertionEnded(let app, let identifier, let at):
                flush()
                lines.append(Line(at: at, text: "\(app): ended background assertion \(identifier)"))
            case .assertionsExpired(let app, let identifiers, let at):
                flush()
                lines.append(Line(at: at, text: "\(app): background window closed, expiring assertion(s) \(identifiers.map(String.init).joined(separator: ", "))"))
            case .submitted, .cancelled:
                continue
            }
        }
        flush()
        lines.sort { $0.at < $1.at }
    }

    /// The timeline as text, one line per event, times relative to ``start``.
    public func render() -> String {
        lines.map { "\(Self.offset($0.at, from: start))  \($0.text)" }.joined(separator: "\n")
    }

    /// Whether a battery reading from `old` to `new` crosses a line a reader needs to see:
    /// the battery becomes empty or full, or crosses the critical level (the default
    /// ``PolicyConfiguration/criticalBatteryLevel``, at or below which refreshes and processing
    /// wait). A reading with no level (a device without a battery) crosses nothing.
    static func batteryMilestone(from old: Double?, to new: Double?) -> Bool {
        guard let old, let new, old != new else { return false }
        return new <= 0 || new >= 1 || (old <= criticalBatteryLevel) != (new <= criticalBatteryLevel)
    }

    /// The default critical level, read once (a configuration is made with its tables).
    private static let criticalBatteryLevel = PolicyConfiguration().criticalBatteryLevel

    private static func lastPart(_ identifier: String) -> String {
        identifier.split(separator: ".").last.map(String.init) ?? identifier
    }

    private static func offset(_ date: Date, from start: Date) -> String {
        let seconds = Int(date.timeIntervalSince(start).rounded(.down))
        let day = seconds / 86_400
        let time = String(format: "%02d:%02d:%02d", seconds % 86_400 / 3600, seconds / 60 % 60, seconds % 60)
        return day > 0 ? "+\(day)d \(time)" : time
    }
}
