/// The identity of one app known to the scheduler: its bundle identifier on iOS, a
/// reverse-DNS name chosen in the app's manifest (or derived from its executable) here.
public struct AppID: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    /// The identifier as written, for example `com.example.feedreader`.
    public let rawValue: String
    /// `rawValue`'s hash value in this process, worked out once: the engine looks apps and
    /// their requests up in dictionaries many times per run, and hashing the text each time
    /// was a tenth of a long simulation. (Per process, as `hashValue` is: never stored.)
    private let hashOfRawValue: Int

    /// Wraps an app identifier. Validation happens where identifiers enter the system
    /// (the manifest loader), so that stored values always round-trip.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
        self.hashOfRawValue = rawValue.hashValue
    }

    public static func == (lhs: AppID, rhs: AppID) -> Bool {
        lhs.hashOfRawValue == rhs.hashOfRawValue && lhs.rawValue == rhs.rawValue
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(hashOfRawValue) }

    /// What a `Set` or `Dictionary` hashes an app by: the kept hash value mixed with the
    /// table's seed (``StableHash/mix(_:seed:)``), without running a `Hasher` (its set-up
    /// and finalization were a twentieth of a long simulation, for one `Int`).
    public func _rawHashValue(seed: Int) -> Int { StableHash.mix(hashOfRawValue, seed: seed) }

    public var description: String { rawValue }

    /// Why `text` cannot name an app, or `nil` when it can.
    ///
    /// An app identifier becomes one file-name component (the embedded scheduler's state
    /// directory `$XDG_STATE_HOME/bgtask/<app>/`, the daemon's log file), so whatever names
    /// an app from outside (a command-line argument, a configuration in code) must be one:
    /// not empty, at most ``TaskIdentifierRules/maximumLength`` bytes of UTF-8, not `.` or
    /// `..`, and without `/` or control characters. That is looser than the reverse-DNS
    /// rule manifests follow (``TaskIdentifierRules``), because an app without
    /// `CFBundleIdentifier` is named `local.<process name>`, and a process name may hold
    /// characters reverse-DNS does not allow; it is strict exactly where a name could
    /// reach another directory (`../x`) or the terminal (an escape sequence).
    public static func problem(with text: String) -> String? {
        if text.isEmpty { return "an app identifier cannot be empty" }
        let bytes = text.utf8.count
        if bytes > TaskIdentifierRules.maximumLength {
            return "an app identifier is at most \(TaskIdentifierRules.maximumLength) bytes of UTF-8; this one has \(bytes)"
        }
        if text == "." || text == ".." { return "'\(text)' is not an app identifier (it names a directory)" }
        if let control = StrictJSON.firstControlCharacter(in: text) {
            return "an app identifier cannot contain control characters; this one has \(StrictJSON.codePoint(control))"
        }
        if text.contains("/") { return "an app identifier cannot contain '/' (it names a directory of its own); got '\(text)'" }
        return nil
    }

    public static func < (lhs: AppID, rhs: AppID) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// Names one pending request: an app and one of its task identifiers. An app has at most
/// one pending request per identifier (submitting again replaces it).
public struct RequestKey: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    /// The app that submitted the request.
    public let app: AppID
    /// The task identifier, for example `com.example.feedreader.refresh`.
    public let identifier: String
    /// The hash value of the two in this process, worked out once (see ``AppID``'s).
    private let hashOfKey: Int

    /// Names the request `identifier` of `app`.
    public init(app: AppID, identifier: String) {
        self.app = app
        self.identifier = identifier
        var hasher = Hasher()
        hasher.combine(app)
        hasher.combine(identifier)
        self.hashOfKey = hasher.finalize()
    }

    public static func == (lhs: RequestKey, rhs: RequestKey) -> Bool {
        lhs.hashOfKey == rhs.hashOfKey && lhs.app == rhs.app && lhs.identifier == rhs.identifier
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(hashOfKey) }

    /// As ``AppID``'s: the kept hash value mixed with the table's seed, without a `Hasher`.
    public func _rawHashValue(seed: Int) -> Int { StableHash.mix(hashOfKey, seed: seed) }

    private enum CodingKeys: String, CodingKey { case app, identifier }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(app: try container.decode(AppID.self, forKey: .app), identifier: try container.decode(String.self, forKey: .identifier))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(app, forKey: .app)
        try container.encode(identifier, forKey: .identifier)
    }

    public var description: String { "\(app.rawValue)/\(identifier)" }

    public static func < (lhs: RequestKey, rhs: RequestKey) -> Bool {
        (lhs.app.rawValue, lhs.identifier) < (rhs.app.rawValue, rhs.identifier)
    }
}

/// Identifies one run of a task (one launch of its handler). Unique per store, increasing.
public struct RunID: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    /// The numeric value, as stored in the run log.
    public let rawValue: Int64

    /// Wraps a run number.
    public init(_ rawValue: Int64) { self.rawValue = rawValue }

    public var description: String { "run#\(rawValue)" }

    public static func < (lhs: RunID, rhs: RunID) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Int64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
