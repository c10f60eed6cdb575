import Foundation

/// The JSON that `--json` prints: pretty, keys sorted, dates in ISO 8601, one trailing
/// newline. One encoder configuration for every report (bgtask and bgtaskd alike).
public enum ReportJSON {
    /// `value` as report JSON; `fallback` when it cannot be encoded (a non-finite number).
    public static func text<Value: Encodable>(_ value: Value, fallback: String = "{}") -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return ((try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? fallback) + "\n"
    }
}

/// An optional a report writes as `null` when it has no value: synthesized encoding leaves
/// such a key out, and a report's keys are documented as always present.
@propertyWrapper
public struct NullWhenAbsent<Value: Encodable & Hashable & Sendable>: Encodable, Hashable, Sendable {
    /// The value, if any.
    public var wrappedValue: Value?

    /// Wraps `wrappedValue`.
    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wrappedValue)  // an absent value encodes as null
    }
}
