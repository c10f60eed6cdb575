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
