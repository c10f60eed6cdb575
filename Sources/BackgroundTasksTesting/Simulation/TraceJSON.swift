import BackgroundTasks
import Foundation
import SchedulerCore

/// A simulation's trace as JSON, byte-identical for the same scenario, seed and apps: keys
/// sorted, instants as UTC ISO 8601 with milliseconds, one object per event in order.
public enum TraceJSON {
    /// One trace event, flattened: `event` names the kind, the other fields are set as the
    /// kind needs them.
    struct Record: Encodable {
        var at: String
        var event: String
        var app: String?
        var identifier: String?
        var run: Int64?
        var kind: String?
        var location: String?
        var heldBy: String?
        var reason: String?
        var outcome: String?
        var success: Bool?
        var earliestBeginDate: String?
        var budget: Double?
        var endedAt: String?
        var cpuSeconds: Double?
        var joules: Double?
        var conditions: Conditions?
        var from: String?
        var to: String?
        var assertions: [Int]?
        var score: Double?
        var verdicts: [Verdict]?
    }

    /// One policy's verdict behind a launch.
    struct Verdict: Encodable {
        var policy: String
        var verdict: String
        var rationale: String
    }

    /// The whole document.
    struct Document: Encodable {
        var version = 1
        var scenario: String
        var seed: UInt64
        var start: String
        var end: String
        var events: [Record]
    }

    /// Encodes `trace` with a header naming the scenario, seed and span.
    public static func encode(_ trace: [SchedulerTraceEvent], scenario: String, seed: UInt64, start: Date, end: Date) -> Data {
        let document = Document(scenario: scenario, seed: seed, start: timestamp(start), end: timestamp(end), events: trace.map(record))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        // Encoding plain strings, numbers and Conditions cannot fail.
        return (try? encoder.encode(document)) ?? Data()
    }

    /// `yyyy-MM-ddTHH:mm:ss.SSSZ` in UTC, computed by hand: no formatter, no locale.
    static func timestamp(_ date: Date) -> String {
        GregorianDate.iso8601(date, milliseconds: true)
    }

    private static func record(_ event: SchedulerTraceEvent) -> Record {
        switch event {
        case .submitted(let request, let at):
            var record = Record(at: timestamp(at), event: "submitted", app: request.app.rawValue, identifier: request.identifier, kind: request.kind.rawValue)
            record.earliestBeginDate = request.earliestBeginDate.map(timestamp)
            return record
        case .cancelled(let key, let at):
            return Record(at: timestamp(at), event: "cancelled", app: key.app.rawValue, identifier: key.identifier)
        case .moved(let key, let location, let at, let heldBy):
            return Record(at: timestamp(at), event: "moved", app: key.app.rawValue, identifier: key.identifier, location: location.description, heldBy: heldBy)
        case .launched(let run, let budget, let evaluation):
            var record = Record(at: timestamp(run.startedAt), event: "launched", app: run.app.rawValue, identifier: run.identifier, run: run.id.rawValue, kind: run.request.kind.rawValue)
            record.budget = budget
            record.score = evaluation?.score
            record.verdicts = evaluation?.decisions.map { Verdict(policy: $0.policy, verdict: $0.verdict.description, rationale: $0.rationale) }
            return record
        case .expired(let run, let key, let reason, let at):
            return Record(at: timestamp(at), event: "expired", app: key.app.rawValue, identifier: key.identifier, run: run.rawValue, reason: reason)
        case .terminated(let run, let key, let reason, let at):
            return Record(at: timestamp(at), event: "terminated", app: key.app.rawValue, identifier: key.identifier, run: run.rawValue, reason: reason)
        case .finished(let run):
            var record = Record(at: timestamp(run.endedAt ?? run.startedAt), event: "finished", app: run.app.rawValue, identifier: run.identifier, run: run.id.rawValue, kind: run.request.kind.rawValue)
            record.reason = run.stopReason
            record.outcome = run.outcome?.rawValue
            record.success = run.success
            record.endedAt = run.endedAt.map(timestamp)
            record.cpuSeconds = run.cpuTime
            record.joules = run.energyJoules
            return record
        case .conditionsChanged(let conditions, let at):
            var record = Record(at: timestamp(at), event: "conditions")
            record.conditions = conditions
            return record
        case .lifecycle(let app, let from, let to, let at):
            var record = Record(at: timestamp(at), event: "lifecycle", app: app.rawValue)
            record.from = from.rawValue
            record.to = to.rawValue
            return record
        case .appTerminated(let app, let reason, let at):
            return Record(at: timestamp(at), event: "app-terminated", app: app.rawValue, reason: "\(reason)")
        case .assertionBegan(let app, let identifier, let name, let at):
            var record = Record(at: timestamp(at), event: "assertion-began", app: app.rawValue, identifier: name)
            record.assertions = [identifier]
            return record
        case .assertionEnded(let app, let identifier, let at):
            var record = Record(at: timestamp(at), event: "assertion-ended", app: app.rawValue)
            record.assertions = [identifier]
            return record
        case .assertionsExpired(let app, let identifiers, let at):
            var record = Record(at: timestamp(at), event: "assertions-expired", app: app.rawValue)
            record.assertions = identifiers
            return record
        }
    }
}
