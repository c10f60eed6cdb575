import Foundation

/// Reads how contended the CPUs are, 0...1.
///
/// 1. Pressure stall information, `<proc>/pressure/cpu`: the `some avg10=` percentage / 100,
///    the share of the last 10 s in which some runnable task waited for a CPU. It is a
///    percentage by definition; a value outside 0...100 is reported and skipped.
/// 2. Without PSI (kernels built without it, or booted with `psi=0`, where the file fails on
///    read): the 1-minute load average (first field of `<proc>/loadavg`) divided by the
///    number of CPUs, **clamped to 1**, since a load above the CPU count means "saturated",
///    the same as 1 for a scheduler deciding whether to add work. The CPUs are counted from
///    `<sys>/devices/system/cpu/online` (ranges such as `0-3,6`; CPU numbers 0...65535, a
///    malformed list is skipped), else the `processor` lines
///    of `<proc>/cpuinfo`.
/// 3. Neither: `nil` (unknown).
public struct CPUPressureReader: Sendable {
    /// Where `/proc` is.
    public var procRoot: URL
    /// Where `/sys` is.
    public var sysRoot: URL

    /// Reads under the given roots.
    public init(procRoot: URL, sysRoot: URL) {
        self.procRoot = procRoot
        self.sysRoot = sysRoot
    }

    /// Reads now.
    public func read() -> SourcedValue<Double?> {
        var notes: [String] = []
        let psiURL = procRoot.appendingPathComponent("pressure/cpu")
        let psi = SysfsFile.contents(of: psiURL)
        if let text = psi.text {
            if let percent = Self.someAvg10(text) {
                if (0...100).contains(percent) {
                    return SourcedValue(Self.rounded(percent / 100), source: "\(psiURL.path) some avg10=\(Self.trimmed(percent))")
                }
                notes.append("\(psiURL.path) some avg10=\(Self.trimmed(percent)) is outside 0...100")
            } else {
                notes.append("\(psiURL.path) has no some avg10=")
            }
        } else if case .unreadable(let why) = psi {
            notes.append("\(psiURL.path) cannot be read (\(why))")
        }

        let loadURL = procRoot.appendingPathComponent("loadavg")
        let load = SysfsFile.contents(of: loadURL)
        guard let loadText = load.text, let first = loadText.split(separator: " ").first, let average = Double(first),
              average.isFinite, average >= 0 else {
            let problem = SysfsFile.problem(load, loadURL) ?? "\(loadURL.path) is \(SysfsFile.quoted(load.text ?? "")), not a load average"
            return SourcedValue(nil, source: SysfsFile.unknown((notes + [problem]).joined(separator: "; ")))
        }
        guard let (cpus, cpuSource) = cpuCount() else {
            notes.append("the CPUs cannot be counted from \(sysRoot.appendingPathComponent("devices/system/cpu/online").path) or \(procRoot.appendingPathComponent("cpuinfo").path)")
            return SourcedValue(nil, source: SysfsFile.unknown(notes.joined(separator: "; ")))
        }
        let pressure = Self.rounded(min(1, average / Double(cpus)))
        let clamped = average > Double(cpus) ? ", clamped to 1" : ""
        let fallback = notes.isEmpty ? "" : " (" + notes.joined(separator: "; ") + ")"
        return SourcedValue(pressure, source: "\(loadURL.path) \(first) / \(cpus) CPUs from \(cpuSource)\(clamped)\(fallback)")
    }

    /// The `avg10` of the `some` line of a PSI file.
    static func someAvg10(_ text: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix("some ") {
            for field in line.split(separator: " ") where field.hasPrefix("avg10=") {
                return Double(field.dropFirst("avg10=".count))
            }
        }
        return nil
    }

    /// The number of online CPUs and the file it came from.
    func cpuCount() -> (Int, String)? {
        let onlineURL = sysRoot.appendingPathComponent("devices/system/cpu/online")
        if let text = SysfsFile.contents(of: onlineURL).text, let count = Self.countCPUList(text), count > 0 {
            return (count, onlineURL.path)
        }
        let cpuinfoURL = procRoot.appendingPathComponent("cpuinfo")
        if let text = SysfsFile.contents(of: cpuinfoURL, limit: SysfsFile.maximumSize).text {
            let count = text.split(separator: "\n").filter { line in
                line.hasPrefix("processor") && line.split(separator: ":").first?.trimmingCharacters(in: .whitespaces) == "processor"
            }.count
            if count > 0 { return (count, cpuinfoURL.path) }
        }
        return nil
    }

    /// The highest CPU number accepted in a CPU list: the kernel's `NR_CPUS` is at most
    /// 8192 today; anything far above is a corrupt file, not a machine.
    static let maximumCPUNumber = 65_535

    /// Counts a kernel CPU list such as `0-3,6,8-9`; `nil` when malformed: a number that is
    /// not plain decimal digits or is above ``maximumCPUNumber``, a range whose end is below
    /// its start (`5-2`), an empty part, or a CPU listed twice.
    static func countCPUList(_ text: String) -> Int? {
        func cpu(_ digits: Substring) -> Int? {
            guard !digits.isEmpty, digits.count <= 5, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                  let number = Int(digits), number <= maximumCPUNumber else { return nil }
            return number
        }
        var ranges: [ClosedRange<Int>] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let bounds = part.split(separator: "-", omittingEmptySubsequences: false)
            if bounds.count == 1, let single = cpu(bounds[0]) {
                ranges.append(single...single)
            } else if bounds.count == 2, let low = cpu(bounds[0]), let high = cpu(bounds[1]), low <= high {
                ranges.append(low...high)
            } else {
                return nil
            }
        }
        // Sorted, a CPU listed twice overlaps its neighbour.
        ranges.sort { $0.lowerBound < $1.lowerBound }
        for (earlier, later) in zip(ranges, ranges.dropFirst()) where later.lowerBound <= earlier.upperBound { return nil }
        return ranges.reduce(0) { $0 + $1.count }
    }

    /// Four decimals: all the precision PSI (two decimals of a percentage) has, and without
    /// binary noise such as 0.008199999999999999 in the JSON.
    static func rounded(_ value: Double) -> Double { (value * 10_000).rounded() / 10_000 }

    private static func trimmed(_ value: Double) -> String { String(format: "%.2f", value) }
}
