import Dispatch
import Foundation
import SchedulerCore

/// What one benchmark reports: its headline figure against its target, and the figures
/// that explain it (written to the console and, with `--json`, to a file).
struct BenchmarkResult: Codable, Sendable {
    /// Short stable name, for example `durable-submit`.
    var name: String
    /// What was measured, in one line.
    var title: String
    /// The target, in words (`ratio >= 0.5`).
    var target: String
    /// The headline value compared with the target, in `unit`.
    var value: Double
    /// The unit of `value`.
    var unit: String
    /// Whether `value` meets the target.
    var pass: Bool
    /// Every figure measured, by name (units in the name: `_us`, `_ms`, `_per_s`).
    var metrics: [String: Double]
    /// What exactly was measured and what was not.
    var notes: [String]

    var verdict: String { pass ? "PASS" : "MISS" }
}

/// The whole run, as written by `--json`.
struct BenchmarkReport: Codable, Sendable {
    var date: String
    var configuration: String
    var processors: Int
    var quick: Bool
    var swiftVersion: String
    var machine: String
    var loadAverageAtStart: String
    var loadAverageAtEnd: String
    var results: [BenchmarkResult]
}

/// Monotonic time in nanoseconds (CLOCK_MONOTONIC through Dispatch).
@inline(__always)
func monotonicNanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// Order statistics of a sample.
struct Distribution: Sendable {
    let sorted: [Double]

    init(_ values: [Double]) { sorted = values.sorted() }

    var count: Int { sorted.count }
    var min: Double { sorted.first ?? .nan }
    var max: Double { sorted.last ?? .nan }
    var mean: Double { sorted.isEmpty ? .nan : sorted.reduce(0, +) / Double(sorted.count) }
    var median: Double { percentile(50) }
    /// The share (0...1) of the sample for which `condition` holds.
    func share(where condition: (Double) -> Bool) -> Double {
        sorted.isEmpty ? .nan : Double(sorted.filter(condition).count) / Double(sorted.count)
    }

    /// The nearest-rank percentile (`p` in 0...100): the smallest value with at least
    /// p% of the sample at or below it.
    func percentile(_ p: Double) -> Double {
        EnergySummary.percentile(p / 100, of: sorted) ?? .nan
    }
}


/// A fresh directory under the system temporary directory, removed by ``remove()``.
struct ScratchDirectory {
    let url: URL

    init(_ label: String) throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("bgtask-bench-\(label)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
    }

    func file(_ name: String) -> URL { url.appendingPathComponent(name, isDirectory: false) }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// The file system type of `path` (from `/proc/mounts`, longest matching mount point),
/// so the report says what the fsyncs went to.
func fileSystemDescription(of path: String) -> String {
    guard let mounts = try? String(contentsOfFile: "/proc/mounts", encoding: .utf8) else { return "unknown" }
    var best: (mountPoint: String, description: String)?
    for line in mounts.split(separator: "\n") {
        let fields = line.split(separator: " ")
        guard fields.count >= 3 else { continue }
        let mountPoint = String(fields[1])
        let matches = mountPoint == "/" || path == mountPoint || path.hasPrefix(mountPoint + "/")
        if matches, mountPoint.count >= (best?.mountPoint.count ?? -1) {
            best = (mountPoint, "\(fields[2]) on \(fields[0]) (mounted at \(mountPoint))")
        }
    }
    return best?.description ?? "unknown"
}

/// `12345.6` -> `"12345.6"`, with a fixed number of decimals.
func format(_ value: Double, _ decimals: Int = 1) -> String {
    String(format: "%.\(decimals)f", value)
}

/// Writes a line to standard output at once (progress lines survive a crash or a pipe).
func say(_ line: String = "") {
    let bytes = Array((line + "\n").utf8)
    bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(1, buffer.baseAddress! + offset, buffer.count - offset)
            if written <= 0 { if errno == EINTR { continue } else { return } }
            offset += written
        }
    }
}

/// The machine's processor time so far, from the first line of /proc/stat (clock ticks).
struct ProcessorTimes {
    var total: UInt64
    var steal: UInt64

    /// The counters now, or nil when /proc/stat cannot be read.
    static func read() -> ProcessorTimes? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let line = text.split(separator: "\n").first, line.hasPrefix("cpu ") else { return nil }
        let fields = line.split(separator: " ").dropFirst().compactMap { UInt64($0) }
        // user nice system idle iowait irq softirq steal ...
        guard fields.count >= 8 else { return nil }
        return ProcessorTimes(total: fields.prefix(8).reduce(0, +), steal: fields[7])
    }

    /// The share of processor time the host took since `earlier` (0...1).
    func stealShare(since earlier: ProcessorTimes) -> Double {
        let total = total >= earlier.total ? total - earlier.total : 0
        let steal = steal >= earlier.steal ? steal - earlier.steal : 0
        return total > 0 ? Double(steal) / Double(total) : 0
    }
}

/// This executable's path (`/proc/self/exe`, else how it was called): where its sibling
/// products are, and what the scale benchmark re-executes as a child.
func ownExecutablePath() -> String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
}
