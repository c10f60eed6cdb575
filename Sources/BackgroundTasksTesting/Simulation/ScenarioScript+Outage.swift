import Foundation
import SchedulerCore

extension ScenarioScript {
    /// The same script with the network down every day from `from` to `to` (seconds after
    /// each midnight): a shared outage, at whose end every device of a fleet regains the
    /// network at the same instant. Linear in the days and changes.
    public func withNetworkDown(daily from: TimeInterval, to: TimeInterval) -> ScenarioScript {
        guard from < to else { return self }
        let dayCount = Int((end.timeIntervalSince(start) / 86_400).rounded(.up))
        /// The window of day `day`, cut at the script's end.
        func window(_ day: Int) -> (from: Date, to: Date) {
            let midnight = start.addingTimeInterval(Double(day) * 86_400)
            return (midnight.addingTimeInterval(from), min(end, midnight.addingTimeInterval(to)))
        }
        func isDown(_ instant: Date) -> Bool {
            guard instant >= start, instant < end else { return false }
            let sinceMidnight = instant.timeIntervalSince(start).truncatingRemainder(dividingBy: 86_400)
            return sinceMidnight >= from && sinceMidnight < to
        }
        func offline(_ conditions: Conditions) -> Conditions {
            var conditions = conditions
            conditions.networkAvailable = false
            conditions.networkMetered = nil
            return conditions
        }

        // Every instant at which the effective conditions may change, in order: the
        // original changes merged with the windows' edges (both lists are already sorted).
        let edges = (0..<dayCount).flatMap { [window($0).from, window($0).to] }.filter { $0 > start && $0 < end }
        var instants: [Date] = []
        instants.reserveCapacity(changes.count + edges.count)
        var changeIndex = 0
        var edgeIndex = 0
        while changeIndex < changes.count || edgeIndex < edges.count {
            let next: Date
            if edgeIndex >= edges.count || (changeIndex < changes.count && changes[changeIndex].at <= edges[edgeIndex]) {
                next = changes[changeIndex].at
                changeIndex += 1
            } else {
                next = edges[edgeIndex]
                edgeIndex += 1
            }
            if instants.last != next { instants.append(next) }
        }

        var base = initialConditions
        var originals = changes[...]
        var copy = self
        copy.initialConditions = isDown(start) ? offline(initialConditions) : initialConditions
        copy.changes = []
        var previous = copy.initialConditions
        for instant in instants {
            while let next = originals.first, next.at <= instant {
                base = next.conditions
                originals = originals.dropFirst()
            }
            let effective = isDown(instant) ? offline(base) : base
            guard effective != previous else { continue }
            copy.changes.append(ConditionChange(at: instant, conditions: effective))
            previous = effective
        }
        // Network bands lose the windows they overlap (only the days each band spans).
        copy.bands = bands.flatMap { band -> [DeviceReport.Band] in
            guard band.kind == "network" || band.kind == "metered" else { return [band] }
            let firstDay = max(0, Int((band.from.timeIntervalSince(start) / 86_400).rounded(.down)))
            let lastDay = min(dayCount - 1, Int((band.to.timeIntervalSince(start) / 86_400).rounded(.down)))
            guard firstDay <= lastDay else { return [band] }
            // Windows are disjoint and in order: walk them once, keeping what lies between.
            var kept: [DeviceReport.Band] = []
            var cursor = band.from
            for day in firstDay...lastDay {
                let window = window(day)
                guard window.to > cursor, window.from < band.to else { continue }
                if cursor < window.from { kept.append(DeviceReport.Band(kind: band.kind, from: cursor, to: window.from, label: band.label)) }
                cursor = max(cursor, window.to)
            }
            if cursor < band.to { kept.append(DeviceReport.Band(kind: band.kind, from: cursor, to: band.to, label: band.label)) }
            return kept
        }
        return copy
    }
}
