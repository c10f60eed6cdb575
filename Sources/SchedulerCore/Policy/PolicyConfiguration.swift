import Foundation

/// The policy set's tunables: one versioned configuration with documented defaults,
/// printed by `bgtask policy` and read from a JSON file. Every number here is a default a
/// reader can find in docs/policies.md with its rationale.
public struct PolicyConfiguration: Hashable, Sendable, Codable {
    /// The configuration format this code reads and writes.
    public static let currentVersion = 1

    /// The format version (`currentVersion`).
    public var version: Int
    /// Which standard policies judge (``PolicyProfile``): the phone's (all), or a server's.
    /// A file's `profile` key also picks the defaults its other keys override.
    public var profile: PolicyProfile = .phone
    /// The weighted score (0...1) at or above which a request with no blocking verdict runs.
    public var threshold: Double
    /// Each policy's weight in the score (policy name -> weight >= 0). Policies not listed weigh 1.
    public var weights: [String: Double]
    /// Battery level at or below which nothing runs unless charging (Apple: 20 %).
    public var criticalBatteryLevel: Double
    /// Kinds low power mode holds back (Apple: refresh; processing waits for good conditions too).
    public var lowPowerModeBlocks: [TaskKind]
    /// Thermal state from which processing waits.
    public var thermalDefersProcessingAt: ThermalState
    /// Thermal state from which refresh waits.
    public var thermalDefersRefreshAt: ThermalState
    /// Thermal state from which running background work is expired.
    public var thermalExpiresAt: ThermalState
    /// Processing runs only while the user is not using the device, and is expired when the user becomes active.
    public var processingRequiresIdleDevice: Bool
    /// CPU pressure (0...1) above which processing waits.
    public var processingCPUPressureLimit: Double
    /// App refresh waits for the network even though its request cannot say so: a refresh
    /// exists to fetch content, and one run offline only fails and spends energy.
    public var refreshRequiresNetwork: Bool
    /// Estimated energy one app's background runs may use per day, in joules.
    public var energyBudgetPerAppPerDay: Double
    /// Minimum time between two background launches of one app (rate limit).
    public var minimumLaunchInterval: TimeInterval
    /// After a shared trigger (power plugged in, network back), launches are spread over this window.
    public var herdSpreadWindow: TimeInterval
    /// The shorter window an app refresh gets after a shared trigger when its app is likely
    /// to be opened within the lead time: content the user is about to see does not wait
    /// its full turn (it is still spread, over this window).
    public var herdSpreadWindowBeforeLaunch: TimeInterval
    /// A request eligible this long is run even if its score is below the threshold (processing is
    /// "fulfilled within the next two days"); blocking verdicts still hold.
    public var maximumDeferral: TimeInterval
    /// Runs due within this tolerance of a wake start in that same wake (coalescing).
    public var coalescingTolerance: TimeInterval
    /// How long a processing run that would wake the device alone may wait, from when it
    /// became ready, for a wake the engine already plans (wake sharing; 0: never waits).
    public var wakeSharingWindow: TimeInterval

    /// The documented defaults.
    public init(
        version: Int = PolicyConfiguration.currentVersion,
        threshold: Double = 0.4,
        weights: [String: Double] = [:],
        criticalBatteryLevel: Double = 0.2,
        lowPowerModeBlocks: [TaskKind] = [.appRefresh, .processing, .healthResearch],
        thermalDefersProcessingAt: ThermalState = .fair,
        thermalDefersRefreshAt: ThermalState = .serious,
        thermalExpiresAt: ThermalState = .serious,
        processingRequiresIdleDevice: Bool = true,
        processingCPUPressureLimit: Double = 0.5,
        refreshRequiresNetwork: Bool = true,
        energyBudgetPerAppPerDay: Double = 2_000,
        minimumLaunchInterval: TimeInterval = 60,
        herdSpreadWindow: TimeInterval = 600,
        herdSpreadWindowBeforeLaunch: TimeInterval = 120,
        maximumDeferral: TimeInterval = 2 * 86_400,
        coalescingTolerance: TimeInterval = 60,
        wakeSharingWindow: TimeInterval = 3_600
    ) {
        self.version = version
        self.threshold = threshold
        self.weights = weights
        self.criticalBatteryLevel = criticalBatteryLevel
        self.lowPowerModeBlocks = lowPowerModeBlocks
        self.thermalDefersProcessingAt = thermalDefersProcessingAt
        self.thermalDefersRefreshAt = thermalDefersRefreshAt
        self.thermalExpiresAt = thermalExpiresAt
        self.processingRequiresIdleDevice = processingRequiresIdleDevice
        self.processingCPUPressureLimit = processingCPUPressureLimit
        self.refreshRequiresNetwork = refreshRequiresNetwork
        self.energyBudgetPerAppPerDay = energyBudgetPerAppPerDay
        self.minimumLaunchInterval = minimumLaunchInterval
        self.herdSpreadWindow = herdSpreadWindow
        self.herdSpreadWindowBeforeLaunch = herdSpreadWindowBeforeLaunch
        self.maximumDeferral = maximumDeferral
        self.coalescingTolerance = coalescingTolerance
        self.wakeSharingWindow = wakeSharingWindow
    }

    /// The weight of `policy` (1 when not configured).
    public func weight(of policy: String) -> Double { weights[policy] ?? 1 }

    /// The configuration as pretty, sorted JSON (what `bgtask policy` prints).
    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}

/// A policy configuration that was refused; the previous one stays in force.
public struct PolicyConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Where the configuration came from.
    public var source: String
    /// The offending key (`weights.thermal`), if one.
    public var key: String?
    /// What was expected and found.
    public var message: String

    /// An error about `source`, at `key` when one is at fault.
    public init(source: String, key: String?, message: String) {
        self.source = source
        self.key = key
        self.message = message
    }

    /// The source, the key and the message. The key is shown as it is: every key that
    /// comes from the file is written as a path when it enters (``StrictJSON``'s form:
    /// `weights["odd key"]`, control characters escaped), so it is shown, never obeyed.
    public var description: String { "\(source): \(key.map { "\($0): " } ?? "")\(message)" }
}

extension PolicyConfiguration {
    // Computed: key paths are not Sendable, so they cannot be stored in a static let.
    private static var numberKeys: [String: WritableKeyPath<PolicyConfiguration, Double>] { [
        "threshold": \.threshold,
        "criticalBatteryLevel": \.criticalBatteryLevel,
        "processingCPUPressureLimit": \.processingCPUPressureLimit,
        "energyBudgetPerAppPerDay": \.energyBudgetPerAppPerDay,
        "minimumLaunchInterval": \.minimumLaunchInterval,
        "herdSpreadWindow": \.herdSpreadWindow,
        "herdSpreadWindowBeforeLaunch": \.herdSpreadWindowBeforeLaunch,
        "maximumDeferral": \.maximumDeferral,
        "coalescingTolerance": \.coalescingTolerance,
        "wakeSharingWindow": \.wakeSharingWindow,
    ] }
    /// The longest duration a configuration may set (366 days, the farthest an
    /// `earliestBeginDate` may be): longer is a mistake, and unbounded values overflow
    /// the integer arithmetic of dates and messages.
    public static let maximumDuration: TimeInterval = 366 * 86_400
    /// The largest daily energy budget (1 GJ, about 280 kWh: far beyond any device).
    public static let maximumEnergyBudget = 1e9
    /// The largest policy weight.
    public static let maximumWeight = 1_000.0

    /// The accepted range of each number key (docs/policies.md, "Configuration").
    public static var numberRanges: [String: ClosedRange<Double>] { [
        "threshold": 0...1,
        "criticalBatteryLevel": 0...1,
        "processingCPUPressureLimit": 0...1,
        "energyBudgetPerAppPerDay": 0...maximumEnergyBudget,
        "minimumLaunchInterval": 0...maximumDuration,
        "herdSpreadWindow": 0...maximumDuration,
        "herdSpreadWindowBeforeLaunch": 0...maximumDuration,
        "maximumDeferral": 0...maximumDuration,
        "coalescingTolerance": 0...maximumDuration,
        "wakeSharingWindow": 0...maximumDuration,
    ] }

    /// A range for messages: "from 0 to 1", "from 0 to 31622400".
    static func describe(_ range: ClosedRange<Double>) -> String {
        func text(_ value: Double) -> String { value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)" }
        return "from \(text(range.lowerBound)) to \(text(range.upperBound))"
    }
    private static var booleanKeys: [String: WritableKeyPath<PolicyConfiguration, Bool>] { [
        "processingRequiresIdleDevice": \.processingRequiresIdleDevice,
        "refreshRequiresNetwork": \.refreshRequiresNetwork,
    ] }
    private static var thermalKeys: [String: WritableKeyPath<PolicyConfiguration, ThermalState>] { [
        "thermalDefersProcessingAt": \.thermalDefersProcessingAt,
        "thermalDefersRefreshAt": \.thermalDefersRefreshAt,
        "thermalExpiresAt": \.thermalExpiresAt,
    ] }

    /// The largest configuration file read (a complete one is under 1 KiB).
    public static let maximumFileSize = 64 << 10

    /// Reads and parses the configuration file at `path` (through ``BoundedFile``: a FIFO,
    /// a device or a directory is refused with what it is, never waited on; at most
    /// ``maximumFileSize`` bytes). Errors name the path.
    public static func load(path: String) throws(PolicyConfigurationError) -> PolicyConfiguration {
        let bytes: [UInt8]
        do {
            bytes = try BoundedFile.read(path: path, limit: maximumFileSize)
        } catch {
            throw PolicyConfigurationError(source: path, key: nil, message: "expected a policy configuration file, found \(error.problem.found)")
        }
        return try parse(Data(bytes), source: path)
    }

    /// Parses a JSON configuration. Keys not given keep their defaults; an unknown key, a
    /// wrong type or an out-of-range value is refused with the key named.
    public static func parse(_ data: Data, source: String) throws(PolicyConfigurationError) -> PolicyConfiguration {
        func fail(_ key: String?, _ message: String) -> PolicyConfigurationError {
            PolicyConfigurationError(source: source, key: key, message: message)
        }
        guard data.count <= maximumFileSize else {
            throw fail(nil, "expected a configuration of at most \(BoundedFile.describe(bytes: maximumFileSize)), found \(data.count) bytes")
        }
        // Syntax errors with their line and column, duplicate keys, encoding and depth
        // first: JSONSerialization gives no position and keeps the last duplicate silently.
        do {
            try StrictJSON.validate(data)
        } catch {
            throw fail(error.culpritKeyPath, error.explanation(in: data))
        }
        let object: Any
        do {
            // Fragments too: a document of `null` or `"x"` is valid JSON, and is said to be
            // the wrong kind of value, not "not in the correct format".
            object = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw fail(nil, "not valid JSON: \(error.localizedDescription)")
        }
        guard let dictionary = object as? [String: Any] else {
            throw fail(nil, "expected a JSON object at the top level, found \(SerializedValue.describe(object))")
        }
        // The profile first: it picks the defaults the other keys override.
        var configuration = PolicyConfiguration()
        if let value = dictionary["profile"] {
            guard let name = value as? String, let profile = PolicyProfile(rawValue: name) else {
                throw fail("profile", "expected one of \(PolicyProfile.allCases.map(\.rawValue).joined(separator: ", ")), found \(SerializedValue.describe(value))")
            }
            configuration = profile.defaults
        }
        for (key, value) in dictionary.sorted(by: { $0.key < $1.key }) {
            if key == "profile" {
                continue
            } else if key == "version" {
                guard let number = value as? NSNumber, !SerializedValue.isBoolean(number), number.intValue == currentVersion, number.doubleValue == Double(currentVersion) else {
                    throw fail(key, "expected \(currentVersion), found \(SerializedValue.describe(value))")
                }
            } else if let path = numberKeys[key] {
                let range = numberRanges[key] ?? 0...0
                guard let number = value as? NSNumber, !SerializedValue.isBoolean(number), number.doubleValue.isFinite, range.contains(number.doubleValue) else {
                    throw fail(key, "expected a number \(describe(range)), found \(SerializedValue.describe(value))")
                }
                // -0 is 0 (it would print as "-0.0").
                configuration[keyPath: path] = number.doubleValue + 0
            } else if let path = thermalKeys[key] {
                guard let name = value as? String, let state = ThermalState(name: name) else {
                    throw fail(key, "expected one of nominal, fair, serious, critical, found \(SerializedValue.describe(value))")
                }
                configuration[keyPath: path] = state
            } else if let path = booleanKeys[key] {
                guard let number = value as? NSNumber, SerializedValue.isBoolean(number) else { throw fail(key, "expected true or false, found \(SerializedValue.describe(value))") }
                configuration[keyPath: path] = number.boolValue
            } else if key == "lowPowerModeBlocks" {
                guard let elements = value as? [Any] else { throw fail(key, "expected an array of task kinds, found \(SerializedValue.describe(value))") }
                var kinds: [TaskKind] = []
                let names = TaskKind.allCases.map(\.rawValue).joined(separator: ", ")
                for (index, element) in elements.enumerated() {
                    guard let name = element as? String, let kind = TaskKind(rawValue: name) else {
                        throw fail("\(key)[\(index)]", "expected one of \(names), found \(SerializedValue.describe(element))")
                    }
                    // A kind twice is a slip (another kind was meant): refused, as a repeated key is.
                    guard !kinds.contains(kind) else { throw fail("\(key)[\(index)]", "\(name) is listed twice") }
                    kinds.append(kind)
                }
                configuration.lowPowerModeBlocks = kinds
            } else if key == "weights" {
                guard let weights = value as? [String: Any] else { throw fail(key, "expected an object of policy name -> weight, found \(SerializedValue.describe(value))") }
                for (name, weight) in weights.sorted(by: { $0.key < $1.key }) {
                    guard PolicySet.names.contains(name) else {
                        // A key from the file, however long (a 60 KB key was repeated whole), cut short.
                        throw fail("weights" + StrictJSON.pathComponent(name).excerpt(scalars: 80), "no policy has this name; known: \(PolicySet.names.joined(separator: ", "))")
                    }
                    // A weight for a policy the profile leaves out does nothing, but is kept:
                    // refusing it would refuse the whole file, and an app would fall back to
                    // the phone's profile for one idle weight.
                    guard let number = weight as? NSNumber, !SerializedValue.isBoolean(number), number.doubleValue.isFinite,
                          (0...maximumWeight).contains(number.doubleValue) else {
                        throw fail("weights.\(name)", "expected a number \(describe(0...maximumWeight)), found \(SerializedValue.describe(weight))")
                    }
                    configuration.weights[name] = number.doubleValue
                }
            } else {
                // The file's own text: as a path, so an odd key is quoted and escaped.
                let path = StrictJSON.pathComponent(key)
                throw fail((path.hasPrefix(".") ? String(path.dropFirst()) : path).excerpt(scalars: 80), "unknown key")
            }
        }
        // The device is always at least nominal: running work expiring from there would
        // expire every run as it starts, which no configuration can mean. (Waiting from
        // nominal is allowed: it holds that kind for good, as a profile may want.)
        if configuration.thermalExpiresAt == .nominal {
            throw fail("thermalExpiresAt", "expected fair, serious or critical, found \"nominal\": the device is always at least nominal, so every run would expire as it starts")
        }
        return configuration
    }
}
