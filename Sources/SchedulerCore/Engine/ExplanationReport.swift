import Foundation

/// `bgtask why`'s report of an ``Explanation``, in text and JSON: the same rendering
/// whether the explanation comes from a store read beside an embedded app or from
/// bgtaskd's live engine.
public enum ExplanationReport {
    /// The report for people: the request, where it sits, the verdict, every policy's
    /// rationale (the blocking ones first), and the predicted next run. `runningWhere`
    /// names the process a run in progress belongs to.
    ///
    /// `cutOff`: a run of the request that never ended in a process gone (its request is
    /// restored when the app starts), so "submit one" is not what a user should do.
    public static func text(_ explanation: Explanation, app: AppID, identifier: String, running: RunRecord?, runningWhere: String?, notes: [String], conditions: Conditions, cutOff: RunRecord? = nil) -> String {
        var lines = ["\(app) / \(identifier)"]
        if let running {
            lines.append("  a run is in progress: \(running.id), started \(running.startedAt)\(runningWhere.map { " in \($0)" } ?? "")")
        }
        lines += notes.map { "  note: \($0)" }
        guard let request = explanation.request else {
            lines.append("  \(running == nil ? summary(explanation, cutOff: cutOff) : "no further request is pending")")
            return lines.joined(separator: "\n") + "\n"
        }
        lines.append("  \(request.kind) request submitted \(request.submittedAt); earliestBeginDate \(request.earliestBeginDate.map { "\($0)" } ?? "none")")
        if !request.requiredConditions.isEmpty {
            lines.append("  requires: \(request.requiredConditions.map(\.description).joined(separator: ", "))")
        }
        if let location = explanation.location { lines.append("  now: \(location)") }
        if let since = explanation.eligibleSince { lines.append("  due since: \(since)") }
        if let trigger = explanation.lastSharedTrigger { lines.append("  last shared trigger (power or network back): \(trigger)") }
        lines.append("  device: \(conditions)")
        lines.append("  verdict: \(explanation.summary)")
        if let evaluation = explanation.evaluation {
            let width = evaluation.decisions.map(\.policy.count).max() ?? 10
            let blocking = evaluation.decisions.filter(\.blocks)
            if !blocking.isEmpty {
                lines.append("  blocking:")
                lines += blocking.map { "    \($0.policy.padding(toLength: width, withPad: " ", startingAt: 0))  \($0.rationale)" }
            }
            lines.append("  other policies:")
            lines += evaluation.decisions.filter { !$0.blocks }.map {
                "    \($0.policy.padding(toLength: width, withPad: " ", startingAt: 0))  \($0.verdict): \($0.rationale)"
            }
            lines.append(String(format: "  score %.2f (threshold %.2f)", evaluation.score, evaluation.threshold))
        }
        if let predicted = explanation.predictedNextRun { lines.append("  predicted next run: \(predicted)") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The explanation's summary, or, with nothing pending but a run cut off, that its
    /// request comes back.
    private static func summary(_ explanation: Explanation, cutOff: RunRecord?) -> String {
        guard explanation.request == nil, let cutOff else { return explanation.summary }
        guard cutOff.request.isRestoredWhenCutOff else {
            return "no request is pending now: \(cutOff.id) was cut off when the app stopped; \(PendingRequest.whyNotRestoredWhenCutOff)"
        }
        return "no request is pending now: \(cutOff.id) was cut off when the app stopped, and its request is restored when the app starts (it need not be submitted again)"
    }

    private struct Report: Encodable {
        struct Decision: Encodable {
            var policy: String
            var verdict: String
            var score: Double?
            var blocks: Bool
            var rationale: String
            var waitsUntil: Date?
        }
        var app: String
        var identifier: String
        var pending: Bool
        var kind: String?
        var earliestBeginDate: Date?
        var location: String?
        var runningSince: Date?
        var summary: String
        var conditions: Conditions
        var decisions: [Decision]
        var score: Double?
        var threshold: Double?
        var earliestPossibleRun: Date?
        var waitingFor: [String]
        var predictedNextRun: Date?
        var eligibleSince: Date?
        var lastSharedTrigger: Date?
        var evaluatedAt: Date
        /// Unreadable pending rows, and a run whose process died, as sentences.
        var notes: [String]
    }

    /// The same report as JSON (stable keys, sorted; dates in ISO 8601), for request
    /// `identifier` of `app` (named even when nothing is pending under it).
    public static func json(_ explanation: Explanation, app: AppID, identifier: String, running: RunRecord?, notes: [String], conditions: Conditions, now: Date, cutOff: RunRecord? = nil) -> String {
        let decisions = (explanation.evaluation?.decisions ?? []).map { decision -> Report.Decision in
            var score: Double?
            let verdict: String
            switch decision.verdict {
            case .mustNotProceed: verdict = "mustNotProceed"
            case .mustProceed: verdict = "mustProceed"
            case .canProceed(let value): verdict = "canProceed"; score = value
            }
            return Report.Decision(policy: decision.policy, verdict: verdict, score: score, blocks: decision.blocks, rationale: decision.rationale, waitsUntil: decision.wait?.instant)
        }
        let report = Report(
            app: app.rawValue,
            identifier: identifier,
            pending: explanation.request != nil,
            kind: explanation.request?.kind.rawValue,
            earliestBeginDate: explanation.request?.earliestBeginDate,
            location: explanation.location.map { "\($0)" },
            runningSince: running?.startedAt,
            summary: summary(explanation, cutOff: cutOff),
            conditions: conditions,
            decisions: decisions,
            score: explanation.evaluation?.score,
            threshold: explanation.evaluation?.threshold,
            earliestPossibleRun: explanation.earliestPossibleRun,
            waitingFor: explanation.waitingFor,
            predictedNextRun: explanation.predictedNextRun,
            eligibleSince: explanation.eligibleSince,
            lastSharedTrigger: explanation.lastSharedTrigger,
            evaluatedAt: now,
            notes: notes
        )
        return ReportJSON.text(report)
    }
}
