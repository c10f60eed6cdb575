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
    /// other decoder of the project uses. When the bytes are JSON after all, the decoder
    /// refused a number out of its field's range (a negative count, 1e30 or a fraction for a
    /// whole number), which it does not place: given `decode` (the decoding that failed) and at
    /// most ``numberSearchLimit`` bytes, the number is found by decoding again with numbers set
    /// to 0, halving the suspects each time, and named with its key path.
    public static func describe(_ error: any Error, decoding bytes: [UInt8], retrying decode: ((Data) throws -> Void)? = nil, under root: String? = nil) -> String {
        guard isUnplacedCorruption(error) else {
            return describe(error, under: root)
        }
        let data = Data(bytes)
        do {
            try StrictJSON.validate(data)
        } catch {
            return error.placedExplanation(in: data)
        }
        if let decode, data.count <= numberSearchLimit, let found = numberOutOfRange(in: data, decode: decode) {
            let place = (root.map { [$0] } ?? []) + [found.path]
            let path = place.filter { !$0.isEmpty }.joined(separator: ".")
            return "\(path.isEmpty ? "the document" : "at \(path)"): \(printable(found.text, limit: 40)) does not fit its field (out of its range)"
        }
        return "the document is JSON, but a value in it does not fit its field (most likely a number out of its range); the decoder does not say which"
    }

    /// The most bytes ``describe(_:decoding:retrying:under:)`` decodes again to find a number
    /// out of range (each try decodes the whole document: a larger one is described without it).
    public static let numberSearchLimit = 1 << 20

    /// Whether `error` is Foundation's "not valid JSON" without a place.
    private static func isUnplacedCorruption(_ error: any Error) -> Bool {
        guard case .dataCorrupted(let context)? = error as? DecodingError else { return false }
        return context.codingPath.isEmpty
    }

    /// One step of a key path into a JSON tree.
    private enum Step {
        case key(String)
        case index(Int)
    }

    /// The number of `data` whose value makes `decode` fail without a place (found by setting
    /// numbers to 0: the first whose change lets it pass or fail elsewhere), with its key path.
    private static func numberOutOfRange(in data: Data, decode: (Data) throws -> Void) -> (path: String, text: String)? {
        guard let tree = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else { return nil }
        var suspects: [(steps: [Step], text: String)] = []
        collectSuspects(in: tree, steps: [], into: &suspects)
        guard !suspects.isEmpty else { return nil }
        /// Whether the document with the first `count` suspects set to 0 still fails unplaced
        /// (one rebuild of the tree, in the order the suspects were collected).
        func stillFails(zeroing count: Int) -> Bool {
            var seen = 0
            let changed = zeroingSuspects(in: tree, first: count, seen: &seen)
            guard let bytes = try? JSONSerialization.data(withJSONObject: changed, options: [.fragmentsAllowed]) else { return true }
            do {
                try decode(bytes)
                return false
            } catch {
                return isUnplacedCorruption(error)
            }
        }
        guard !stillFails(zeroing: suspects.count) else { return nil }
        // The fewest first suspects whose zeroing lets the decoding pass: the last of them is it.
        var low = 1, high = suspects.count
        while low < high {
            let middle = (low + high) / 2
            if stillFails(zeroing: middle) { low = middle + 1 } else { high = middle }
        }
        let found = suspects[low - 1]
        var path = ""
        for step in found.steps {
            switch step {
            case .key(let key): path += (path.isEmpty ? "" : ".") + printable(key, limit: 60)
            case .index(let index): path += "[\(index)]"
            }
        }
        return (path, found.text)
    }

    /// The numbers of `value` that some field may refuse (negative, not whole, or beyond a
    /// 64-bit whole number), depth first, keys in order.
    private static func collectSuspects(in value: Any, steps: [Step], into suspects: inout [(steps: [Step], text: String)]) {
        switch value {
        case let number as NSNumber:
            if isSuspect(number) { suspects.append((steps, number.stringValue)) }
        case let array as [Any]:
            for (index, element) in array.enumerated() { collectSuspects(in: element, steps: steps + [.index(index)], into: &suspects) }
        case let object as [String: Any]:
            for key in object.keys.sorted() { collectSuspects(in: object[key]!, steps: steps + [.key(key)], into: &suspects) }
        default:
            break
        }
    }

    /// `value` with its first `count` suspects (as ``collectSuspects(in:steps:into:)`` orders
    /// them; `seen` counts those passed) set to 0.
    private static func zeroingSuspects(in value: Any, first count: Int, seen: inout Int) -> Any {
        guard seen < count else { return value }
        switch value {
        case let number as NSNumber:
            guard isSuspect(number) else { return number }
            seen += 1
            return NSNumber(value: 0)
        case let array as [Any]:
            return array.map { zeroingSuspects(in: $0, first: count, seen: &seen) }
        case let object as [String: Any]:
            var changed = object
            for key in object.keys.sorted() { changed[key] = zeroingSuspects(in: object[key]!, first: count, seen: &seen) }
            return changed
        default:
            return value
        }
    }

    /// Whether some field may refuse `number`: negative, not whole, or beyond a 64-bit whole
    /// number (JSONSerialization's booleans, 0 and 1, never are).
    private static func isSuspect(_ number: NSNumber) -> Bool {
        (Int(exactly: number.doubleValue) ?? -1) < 0
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
