import Foundation
import SchedulerCore

extension ScenarioScript {
    /// The same script with the network down every day from `from` to `to` (seconds after
    /// each midnight): a shared outage, at whose end every device of a fleet regains the
    /// network at the same instant.
    public func withNetworkDown(daily from: TimeInterval, to: TimeInterval) -> ScenarioScript {
        guard from < to else { return self }
        var windows: [(from: Date, to: Date)] = []
        var day = start
        while day < end {
            windows.append((day.addingTimeInterval(from), min(end, day.addingTimeInterval(to))))
            day = day.addingTimeInterval(86_400)
        }
        func isDown(_ instant: Date) -> Bool { windows.contains { $0.from <= instant && instant < $0.to } }
        func offline(_ conditions: Conditions) -> Conditions {
            var conditions = conditions
            conditions.networkAvailable = false
            conditions.networkMetered = nil
            return conditions
        }

        let boundaries = windows.flatMap { [$0.from, $0.to] }.filter { $0 > start && $0 < end }
        let instants = Array(Set(changes.map(\.at) + boundaries)).sorted()
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
        copy.bands = bands.flatMap { band -> [DeviceReport.Band] in
            guard band.kind == "network" || band.kind == "metered" else { return [band] }
            return windows.reduce([band]) { pieces, window in
                pieces.flatMap { piece -> [DeviceReport.Band] in
                    guard piece.from < window.to, window.from < piece.to else { return [piece] }
                    var kept: [DeviceReport.Band] = []
                    if piece.from < window.from { kept.append(DeviceReport.Band(kind: piece.kind, from: piece.from, to: window.from, label: piece.label)) }
                    if window.to < piece.to { kept.append(DeviceReport.Band(kind: piece.kind, from: window.to, to: piece.to, label: piece.label)) }
                    return kept
                }
            }
        }
        return copy
    }
}
