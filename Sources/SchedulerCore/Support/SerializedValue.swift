import Foundation

/// Reading and describing the untyped values Foundation's parsers return (manifests, policy
/// configurations, scenario files), which differ between formats and platforms (a plist
/// top level is `[AnyHashable: Any]`, JSON's is `[String: Any]`; plist booleans are `Bool`,
/// JSON's are `NSNumber`).
public enum SerializedValue {
    /// `value` as a string dictionary, or `nil` when it is not a dictionary.
    public static func dictionary(_ value: Any) -> [String: Any]? {
        if let dictionary = value as? [String: Any] { return dictionary }
        guard let dictionary = value as? [AnyHashable: Any] else { return nil }
        var result: [String: Any] = [:]
        for (key, element) in dictionary {
            // Property list and JSON keys are always strings; anything else cannot name a key
            // we read, so dropping it is the same as ignoring an unknown key.
            if let key = key.base as? String { result[key] = element }
        }
        return result
    }

    /// `value` as a string, or `nil` when it is anything else (numbers never convert).
    public static func string(_ value: Any) -> String? {
        value as? String
    }

    /// Whether an `NSNumber` holds a boolean. `value is Bool` cannot tell: on Linux any
    /// NSNumber of 0 or 1 casts to `Bool`. Booleans, and only booleans, have the objCType
    /// `c` (both JSON's `true` and a plist's `<true/>`), on Linux and on Darwin alike.
    public static func isBoolean(_ number: NSNumber) -> Bool {
        String(cString: number.objCType) == "c"
    }

    /// The type of `value` with an article, plus the value itself for scalars, for messages
    /// such as "expected an array of strings, found a boolean (true)".
    public static func describe(_ value: Any) -> String {
        if let string = value as? String { return "a string (\(quoted(string)))" }
        if let number = value as? NSNumber {
            if isBoolean(number) { return "a boolean (\(number.boolValue))" }
            return "a number (\(number))"
        }
        if let array = value as? [Any] { return "an array (\(CountText.counted(array.count, "element")))" }
        if dictionary(value) != nil { return "a dictionary" }
        if value is Date { return "a date" }
        if let data = value as? Data { return "data (\(data.count) bytes)" }
        if value is NSNull { return "null" }
        return "a value of type \(type(of: value))"
    }

    /// Quotes a string for a message, shortened so one bad value cannot flood a terminal,
    /// and escaped as JSON writes it (control characters too) so it is shown, not obeyed.
    private static func quoted(_ string: String) -> String {
        "\"\(StrictJSON.escaped(string.excerpt(scalars: 60)))\""
    }
}
