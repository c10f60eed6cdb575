import Foundation

/// Foundation's `DecodingError` in words: where (the key path, as `request.app._0.submit`)
/// and what (the kind of value expected, the key missing), without Swift's type names. One
/// wording for every decoder whose input comes from outside: the daemon's messages, a
/// store's JSON columns.
public enum DecodingErrorText {
    /// `error` as one line naming its key path (under `root`, when the decoded value sat
    /// there in a larger document).
    public static func describe(_ error: any Error, under root: String? = nil) -> String {
        guard let error = error as? DecodingError else { return printable("\(error)") }
        switch error {
        case .typeMismatch(let type, let context):
            return "\(place(context.codingPath, root)): expected \(kind(of: type))"
        case .valueNotFound(let type, let context):
            return "\(place(context.codingPath, root)): expected \(kind(of: type)), got null or nothing"
        case .keyNotFound(let key, let context):
            let where_ = place(context.codingPath, root)
            return key.stringValue == "_0" ? "\(where_): the value is missing (expected {\"_0\": ...})" : "\(where_): the key '\(printable(key.stringValue))' is missing"
        case .dataCorrupted(let context):
            // A string enum's unknown value: Foundation names the Swift type
            // ("Cannot initialize ClientRole from invalid String value king").
            let text = context.debugDescription
            if text.hasPrefix("Cannot initialize "), let range = text.range(of: " from invalid String value ") {
                return "\(place(context.codingPath, root)): unknown value \"\(printable(String(text[range.upperBound...]), limit: 60))\""
            }
            return "\(place(context.codingPath, root)): \(printable(text))"
        @unknown default:
            return printable("\(error)")
        }
    }

    /// ``describe(_:under:)`` for an error decoding `bytes`: where Foundation's decoder says
    /// only "The given data was not valid JSON." (no place), ``StrictJSON`` reads the bytes
    /// again and says where and what (line, column, the text near it), in the wording every
    /// other decoder of the project uses.
    public static func describe(_ error: any Error, decoding bytes: [UInt8], under root: String? = nil) -> String {
        guard case .dataCorrupted(let context)? = error as? DecodingError, context.codingPath.isEmpty else {
            return describe(error, under: root)
        }
        let data = Data(bytes)
        do {
            try StrictJSON.validate(data)
        } catch {
            return error.explanation(in: data)
        }
        return describe(error, under: root)
    }

    /// A key path as `request.app._0.submit._0.earliestBeginDate` (array indices as `[2]`).
    private static func place(_ path: [any CodingKey], _ root: String?) -> String {
        var text = root ?? ""
        for key in path {
            if let index = key.intValue, key.stringValue.hasPrefix("Index") || key.stringValue == "\(index)" {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + printable(key.stringValue)
            }
        }
        return text.isEmpty ? "the message" : "at \(text)"
    }

    /// What a Swift type holds, as a client's author would call it.
    private static func kind(of type: Any.Type) -> String {
        switch type {
        case is Int.Type, is Int64.Type, is Int32.Type, is UInt64.Type, is UInt32.Type, is UInt.Type: return "a whole number in range"
        case is Double.Type, is Float.Type, is Date.Type: return "a number"
        case is String.Type: return "a string"
        case is Bool.Type: return "true or false"
        case is Data.Type: return "a base64 string"
        default:
            let name = "\(type)"
            if name.hasPrefix("Array") { return "an array" }
            if name.hasPrefix("Dictionary") { return "an object" }
            return "an object"
        }
    }

    /// `text` with control characters escaped and cut to 200 Unicode scalars: safe in a log
    /// line and a terminal whatever the peer sent (cut by scalars, not characters, which
    /// bound nothing: see ``Swift/String/excerpt(scalars:)``).
    public static func printable(_ text: String, limit: Int = 200) -> String {
        let shown = text.excerpt(scalars: limit)
        return shown.unicodeScalars.contains { $0.properties.generalCategory == .control }
            ? shown.unicodeScalars.map { $0.properties.generalCategory == .control ? "\\u" + StrictJSON.codePoint($0).dropFirst(2) : String($0) }.joined()
            : shown
    }
}
