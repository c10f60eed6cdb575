/// The identity of one app known to the scheduler: its bundle identifier on iOS, a
/// reverse-DNS name chosen in the app's manifest (or derived from its executable) here.
public struct AppID: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    /// The identifier as written, for example `com.example.feedreader`.
    public let rawValue: String

    /// Wraps an app identifier. Validation happens where identifiers enter the system
    /// (the manifest loader), so that stored values always round-trip.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    public static func < (lhs: AppID, rhs: AppID) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
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

    /// Names the request `identifier` of `app`.
    public init(app: AppID, identifier: String) {
        self.app = app
        self.identifier = identifier
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
