#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SchedulerCore

/// The processor's energy counters from Intel RAPL through the powercap interface
/// (`/sys/class/powercap/intel-rapl:N/energy_uj`), for the energy of a run where the
/// machine exposes them (docs/process-supervision.md, "Energy"). Only package-level zones
/// (`intel-rapl:N`, not the sub-zones `intel-rapl:N:M`, which the package already counts)
/// are summed. Since 2020 `energy_uj` is readable by root only on most kernels: an
/// unreadable counter makes the reader answer `nil`, and the daemon falls back to the model.
public struct RAPLEnergyReader: Sendable {
    /// One reading: each package zone's counter and its wrap-around range, microjoules.
    public struct Sample: Sendable, Hashable {
        /// Zone name (`intel-rapl:0`) -> (energy_uj, max_energy_range_uj).
        public var zones: [String: Counter]

        /// One zone's counter.
        public struct Counter: Sendable, Hashable {
            /// `energy_uj`.
            public var energy: UInt64
            /// `max_energy_range_uj`: the counter wraps to 0 after this value.
            public var range: UInt64
            /// Creates a counter reading.
            public init(energy: UInt64, range: UInt64) {
                self.energy = energy
                self.range = range
            }
        }

        /// Creates a sample.
        public init(zones: [String: Counter]) { self.zones = zones }
    }

    /// The powercap directory (`/sys/class/powercap`; tests pass a fake tree).
    public let root: String

    /// A reader of the counters under `root`.
    public init(root: String = "/sys/class/powercap") { self.root = root }

    /// The package zones' counters now; `nil` when there is no package zone or any of
    /// their counters cannot be read or is out of range.
    public func sample() -> Sample? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: root) else { return nil }
        var zones: [String: Sample.Counter] = [:]
        for name in names where Self.isPackageZone(name) {
            let directory = root + "/" + name
            guard let energy = Self.number(directory + "/energy_uj"),
                  let range = Self.number(directory + "/max_energy_range_uj"),
                  range > 0, energy <= range
            else { return nil }
            zones[name] = Sample.Counter(energy: energy, range: range)
        }
        return zones.isEmpty ? nil : Sample(zones: zones)
    }

    /// Joules consumed between two samples, summed over package zones. A counter below its
    /// earlier value wrapped once: `(range - start) + end`. `nil` when the samples do not
    /// have the same zones (a zone appeared or vanished).
    public static func joules(from start: Sample, to end: Sample) -> Double? {
        guard Set(start.zones.keys) == Set(end.zones.keys) else { return nil }
        var microjoules: Double = 0
        for (name, first) in start.zones {
            guard let last = end.zones[name] else { return nil }
            if last.energy >= first.energy {
                microjoules += Double(last.energy - first.energy)
            } else {
                // The counter wraps to zero after max_energy_range_uj.
                let range = max(first.range, last.range)
                microjoules += Double(range - min(first.energy, range)) + Double(last.energy)
            }
        }
        return microjoules / 1_000_000
    }

    /// `intel-rapl:N` with N decimal digits (sub-zones have a second colon).
    static func isPackageZone(_ name: String) -> Bool {
        let prefix = "intel-rapl:"
        guard name.hasPrefix(prefix) else { return false }
        let rest = name.dropFirst(prefix.count)
        return !rest.isEmpty && rest.allSatisfy { $0.isASCII && $0.isNumber }
    }

    private static func number(_ path: String) -> UInt64? {
        guard let text = KernelFiles.text(path) else { return nil }
        return UInt64(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
