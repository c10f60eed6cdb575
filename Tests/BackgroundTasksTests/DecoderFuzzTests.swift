import BackgroundTasks
import BackgroundTasksTesting
@testable import DeviceConditions
import Foundation
import SchedulerCore
import Testing

/// Seeded mutations of valid documents: byte flips, truncation, huge numbers, NaN and
/// infinities, duplicate keys, deep nesting and type swaps. Deterministic (SeededRandom), so
/// a failure names the seed and iteration that reproduce it.
struct Mutator {
    var random: SeededRandom

    init(seed: UInt64) {
        random = SeededRandom(seed: seed)
    }

    static let tokens = [
        "1e19", "-1e19", "1e300", "-1e300", "1e400", "NaN", "Infinity", "-Infinity", "9223372036854775808",
        "99999999999999999999", "-0", "0.0000001", "\"\"", "null", "[]", "{}", "true", "\"x\"", "1.5", "-1",
    ]

    mutating func pick<T>(_ values: [T]) -> T { values[random.int(in: 0...(values.count - 1))] }

    /// One to three mutations of `original`.
    mutating func mutate(_ original: [UInt8]) -> [UInt8] {
        var bytes = original
        for _ in 0..<random.int(in: 1...3) {
            let position = bytes.isEmpty ? 0 : random.int(in: 0...bytes.count)
            switch random.int(in: 0...8) {
            case 0: // flip a byte
                if !bytes.isEmpty { bytes[min(position, bytes.count - 1)] ^= UInt8(truncatingIfNeeded: 1 << random.int(in: 0...7)) }
            case 1: // truncate
                bytes = Array(bytes.prefix(position))
            case 2: // insert a token
                bytes.insert(contentsOf: Array(pick(Self.tokens).utf8), at: position)
            case 3: // replace a number with a huge or odd one
                if let range = numberRange(in: bytes, from: position) { bytes.replaceSubrange(range, with: Array(pick(Self.tokens).utf8)) }
            case 4: // duplicate a key: copy the first `"key": value,` after the first brace
                if let brace = bytes.firstIndex(of: UInt8(ascii: "{")), let comma = bytes[brace...].firstIndex(of: UInt8(ascii: ",")) {
                    bytes.insert(contentsOf: Array(bytes[(brace + 1)...comma]), at: comma + 1)
                }
            case 5: // deep nesting
                let depth = random.int(in: 500...2_000)
                bytes.insert(contentsOf: Array(repeating: UInt8(ascii: random.int(in: 0...1) == 0 ? "[" : "{"), count: depth), at: position)
            case 6: // type swap: quote a number, or unquote a string
                if let range = numberRange(in: bytes, from: position) {
                    bytes.insert(UInt8(ascii: "\""), at: range.upperBound)
                    bytes.insert(UInt8(ascii: "\""), at: range.lowerBound)
                } else if let quote = bytes[min(position, bytes.count)...].firstIndex(of: UInt8(ascii: "\"")) {
                    bytes.remove(at: quote)
                }
            case 7: // delete a span
                let end = min(bytes.count, position + random.int(in: 1...16))
                if position < end { bytes.removeSubrange(position..<end) }
            default: // random bytes
                bytes.insert(contentsOf: (0..<random.int(in: 1...8)).map { _ in UInt8(truncatingIfNeeded: random.next()) }, at: position)
            }
        }
        return bytes
    }

    /// The first run of number characters at or after `start`.
    private func numberRange(in bytes: [UInt8], from start: Int) -> Range<Int>? {
        func isNumber(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") }
        guard start < bytes.count, let first = bytes[start...].firstIndex(where: isNumber) else { return nil }
        let end = bytes[first...].firstIndex { !isNumber($0) } ?? bytes.count
        return first..<end
    }
}

/// A hang (a blocking open, a parser loop) fails the suite instead of stopping the run.
@Suite(.timeLimit(.minutes(1))) struct DecoderFuzzTests {
    static let iterations = 1_500

    @Test func strictJSONNeverCrashesAndAgreesWithFoundation() throws {
        let seeds = [
            #"{"a": [1, 2.5, -3e2, {"b": null, "c": "\u00e9\n"}], "d": true, "e": {"f": {"g": []}}}"#,
            #"[{"k": 1}, {"k": 2}, "x", false]"#,
        ].map { Array($0.utf8) }
        var mutator = Mutator(seed: 0x5EED_0001)
        for iteration in 0..<Self.iterations * 2 {
            let data = Data(mutator.mutate(mutator.pick(seeds)))
            let accepted = (try? StrictJSON.validate(data)) != nil
            guard accepted else { continue }
            // What the strict pass accepts, Foundation parses, apart from numbers it cannot hold.
            do {
                _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            } catch {
                let reason = "\((error as NSError).userInfo[NSDebugDescriptionErrorKey] ?? error)"
                #expect(reason.contains("not representable") || reason.contains("Unicode"), "iteration \(iteration): \(String(decoding: data, as: UTF8.self)): \(reason)")
            }
        }
    }

    @Test func policyFilesNeverCrashAndAcceptOnlyValuesInRange() throws {
        let seed = Array(PolicyConfiguration(weights: ["thermal": 2]).json().utf8)
        var mutator = Mutator(seed: 0x5EED_0002)
        var accepted = 0
        for iteration in 0..<Self.iterations {
            let data = Data(mutator.mutate(seed))
            guard let configuration = try? PolicyConfiguration.parse(data, source: "fuzz") else { continue }
            accepted += 1
            for (key, range) in PolicyConfiguration.numberRanges {
                let value: Double = switch key {
                case "threshold": configuration.threshold
                case "criticalBatteryLevel": configuration.criticalBatteryLevel
                case "processingCPUPressureLimit": configuration.processingCPUPressureLimit
                case "energyBudgetPerAppPerDay": configuration.energyBudgetPerAppPerDay
                case "minimumLaunchInterval": configuration.minimumLaunchInterval
                case "herdSpreadWindow": configuration.herdSpreadWindow
                case "herdSpreadWindowBeforeLaunch": configuration.herdSpreadWindowBeforeLaunch
                case "maximumDeferral": configuration.maximumDeferral
                default: configuration.coalescingTolerance
                }
                #expect(range.contains(value), "iteration \(iteration): \(key) = \(value)")
            }
            for (name, weight) in configuration.weights {
                #expect((0...PolicyConfiguration.maximumWeight).contains(weight), "iteration \(iteration): weight \(name) = \(weight)")
            }
            // Every message built from the values must be printable without trapping.
            _ = configuration.json()
        }
        #expect(accepted > 0, "no mutation was valid: the fuzz checked nothing")
    }

    @Test func manifestsNeverCrashInAnyFormat() throws {
        let dictionary: [String: Any] = [
            "CFBundleIdentifier": "com.example.app",
            "BGTaskSchedulerPermittedIdentifiers": ["com.example.app.refresh", "com.example.app.clean", "com.example.app.x.*"],
            "UIBackgroundModes": ["fetch", "processing"],
        ]
        let json = try JSONSerialization.data(withJSONObject: dictionary, options: [.sortedKeys])
        let xml = try PropertyListSerialization.data(fromPropertyList: dictionary, format: .xml, options: 0)
        let binary = try PropertyListSerialization.data(fromPropertyList: dictionary, format: .binary, options: 0)
        var mutator = Mutator(seed: 0x5EED_0003)
        for (format, seed) in [("json", json), ("xml", xml), ("binary", binary)] {
            for iteration in 0..<Self.iterations {
                let data = Data(mutator.mutate([UInt8](seed)))
                guard let manifest = try? AppManifest.parse(data, source: "fuzz") else { continue }
                // Whatever is accepted obeys the rules in code too.
                #expect(throws: Never.self, "\(format) iteration \(iteration)") { try manifest.validate() }
                #expect(manifest.permittedIdentifiers.count <= AppManifest.maximumIdentifiers)
            }
        }
    }

    @Test func scenariosNeverCrashAndAcceptOnlyValuesInRange() throws {
        let text = """
        {"version": 1, "name": "fuzz", "seed": 7, "jitterMinutes": 10,
         "battery": {"level": 0.8, "drainPerHour": 0.05, "inUseDrainPerHour": 0.15, "chargePerHour": 0.4},
         "days": [{"name": "d", "power": [{"from": "00:00", "to": "07:00"}],
                   "network": [{"from": "00:00", "to": "24:00", "metered": true}],
                   "thermal": [{"from": "12:00", "to": "13:00", "state": "fair"}],
                   "launches": [{"at": "08:05", "minutes": 5, "probability": 0.9, "app": "com.a"}]}]}
        """
        let seed = Array(text.utf8)
        var mutator = Mutator(seed: 0x5EED_0004)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var accepted = 0
        for iteration in 0..<Self.iterations {
            let data = Data(mutator.mutate(seed))
            guard let scenario = try? Scenario.parse(data, file: "fuzz") else { continue }
            accepted += 1
            let where_ = "iteration \(iteration): \(String(decoding: data, as: UTF8.self))"
            #expect(scenario.seed <= 1 << 53, "\(where_)")
            #expect((0...120).contains(scenario.jitterMinutes), "\(where_)")
            if let battery = scenario.battery {
                #expect((0...1).contains(battery.level), "\(where_)")
                for rate in [battery.drainPerHour, battery.inUseDrainPerHour, battery.chargePerHour] {
                    #expect((0...100).contains(rate), "\(where_)")
                }
            }
            for day in scenario.days {
                let ends = day.power.map { ($0.from, $0.to) } + day.network.map { ($0.from, $0.to) } + day.thermal.map { ($0.from, $0.to) }
                for (from, to) in ends { #expect(0 <= from && from < to && to <= 1440, "\(where_)") }
                for launch in day.launches {
                    #expect((0..<1440).contains(launch.at) && launch.minutes > 0 && launch.minutes <= 1440 && (0...1).contains(launch.probability), "\(where_)")
                }
            }
            // The accepted scenario plays without trapping.
            _ = scenario.script(start: start, days: 2)
        }
        #expect(accepted > 0, "no mutation was valid: the fuzz checked nothing")
    }

    @Test func sysfsValuesNeverCrashTheReaders() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-fuzz-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let sys = root.appendingPathComponent("sys"), proc = root.appendingPathComponent("proc")
        let zone = sys.appendingPathComponent("class/thermal/thermal_zone0")
        let battery = sys.appendingPathComponent("class/power_supply/BAT0")
        for directory in [zone, battery, sys.appendingPathComponent("devices/system/cpu"), proc.appendingPathComponent("pressure")] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        let files: [(URL, String)] = [
            (zone.appendingPathComponent("temp"), "45000"),
            (zone.appendingPathComponent("trip_point_0_type"), "passive"),
            (zone.appendingPathComponent("trip_point_0_temp"), "95000"),
            (zone.appendingPathComponent("trip_point_1_type"), "active"),
            (zone.appendingPathComponent("trip_point_1_temp"), "60000"),
            (battery.appendingPathComponent("type"), "Battery"),
            (battery.appendingPathComponent("status"), "Discharging"),
            (battery.appendingPathComponent("capacity"), "57"),
            (battery.appendingPathComponent("energy_full"), "50000000"),
            (sys.appendingPathComponent("devices/system/cpu/online"), "0-3,6,8-11"),
            (proc.appendingPathComponent("loadavg"), "1.25 0.80 0.50 2/300 1234"),
            (proc.appendingPathComponent("pressure/cpu"), "some avg10=12.50 avg60=3.00 avg300=1.00 total=123"),
        ]
        var mutator = Mutator(seed: 0x5EED_0005)
        let power = PowerSupplyReader(sysRoot: sys)
        let thermal = ThermalReader(sysRoot: sys)
        let cpu = CPUPressureReader(procRoot: proc, sysRoot: sys)
        for _ in 0..<100 {
            for (url, value) in files {
                try Data(mutator.mutate(Array(value.utf8))).write(to: url)
            }
            _ = thermal.read()
            if let level = power.read().batteryLevel.value { #expect((0...1).contains(level)) }
            if let pressure = cpu.read().value { #expect((0...1).contains(pressure)) }
        }
        // The CPU list parser alone, many more times.
        for iteration in 0..<Self.iterations * 4 {
            let text = String(decoding: mutator.mutate(Array(mutator.pick(["0-3,6,8-11", "0", "0-99999999999999999999", "5-2", "-", "0-65535"]).utf8)), as: UTF8.self)
            if let count = CPUPressureReader.countCPUList(text) {
                #expect((1...65_536).contains(count), "iteration \(iteration): \(text) counted \(count)")
            }
        }
    }
}
