import Foundation

/// Finds a `<key>` repeated inside one `<dict>` of an XML property list, which
/// `PropertyListSerialization` accepts silently (the last one wins). A light scan of the
/// tags, not an XML parser: the document is parsed by Foundation afterwards, and this pass
/// only needs the nesting of `dict` and `array` and the text of each `key`. Iterative,
/// linear, and limited to ``StrictJSON/maximumDepth`` levels like JSON documents.
public enum XMLPropertyListKeys {
    /// A repeated key: its text and its path (`CFBundleIdentifier`, `Root.items[2].name`).
    public struct Duplicate: Hashable, Sendable {
        /// The key as written (entities decoded).
        public var key: String
        /// Where, as a path of keys and array indices without a leading `$`.
        public var path: String
    }

    private enum Frame {
        case dict(keys: Set<String>, key: String?)
        case array(index: Int)
        case other
    }

    /// The first repeated key, or `nil`. Malformed XML is left for Foundation to report.
    /// Throws nothing; nesting beyond the limit is reported as `tooDeep`.
    public static func firstDuplicate(in data: Data) -> (duplicate: Duplicate?, tooDeep: Bool) {
        let bytes = [UInt8](data)
        var stack: [Frame] = []
        var index = 0
        var keyStart: Int?
        func path(_ frames: [Frame]) -> String {
            var text = ""
            for frame in frames {
                switch frame {
                case .dict(_, let key): if let key { text += (text.isEmpty ? "" : ".") + key }
                case .array(let index): text += "[\(index - 1)]"
                case .other: break
                }
            }
            return text
        }
        /// A value element starts inside the container on top of the stack.
        func noteChild(_ name: ArraySlice<UInt8>) {
            guard case .array(let count) = stack.last, !name.elementsEqual("key".utf8) else { return }
            stack[stack.count - 1] = .array(index: count + 1)
        }
        func find(_ needle: [UInt8], from start: Int) -> Int? {
            guard !needle.isEmpty, bytes.count >= needle.count else { return nil }
            var position = start
            while position + needle.count <= bytes.count {
                if bytes[position] == needle[0], bytes[position..<position + needle.count].elementsEqual(needle) { return position }
                position += 1
            }
            return nil
        }
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "<") else {
                index += 1
                continue
            }
            let rest = bytes[index...]
            if rest.starts(with: "<!--".utf8) {
                guard let end = find(Array("-->".utf8), from: index + 4) else { return (nil, false) }
                index = end + 3
                continue
            }
            if rest.starts(with: "<![CDATA[".utf8) {
                guard let end = find(Array("]]>".utf8), from: index + 9) else { return (nil, false) }
                index = end + 3
                continue
            }
            if rest.starts(with: "<?".utf8) || rest.starts(with: "<!".utf8) {
                guard let end = find([UInt8(ascii: ">")], from: index + 2) else { return (nil, false) }
                index = end + 1
                continue
            }
            guard let close = find([UInt8(ascii: ">")], from: index + 1) else { return (nil, false) }
            let closing = bytes[index + 1] == UInt8(ascii: "/")
            let selfClosing = close > index + 1 && bytes[close - 1] == UInt8(ascii: "/")
            let nameStart = index + (closing ? 2 : 1)
            var nameEnd = nameStart
            while nameEnd < close, ![UInt8(ascii: " "), 0x09, 0x0A, 0x0D, UInt8(ascii: "/")].contains(bytes[nameEnd]) { nameEnd += 1 }
            let name = bytes[nameStart..<nameEnd]
            if closing {
                if name.elementsEqual("key".utf8), let start = keyStart {
                    let key = decodeEntities(bytes[start..<index])
                    keyStart = nil
                    if case .dict(var keys, _) = stack.last {
                        let isNew = keys.insert(key).inserted
                        stack[stack.count - 1] = .dict(keys: keys, key: key)
                        if !isNew { return (Duplicate(key: key, path: path(stack)), false) }
                    }
                } else if name.elementsEqual("dict".utf8) || name.elementsEqual("array".utf8) {
                    if !stack.isEmpty { stack.removeLast() }
                }
            } else {
                noteChild(name)
                if name.elementsEqual("key".utf8), !selfClosing {
                    keyStart = close + 1
                } else if !selfClosing, name.elementsEqual("dict".utf8) || name.elementsEqual("array".utf8) {
                    guard stack.count < StrictJSON.maximumDepth else { return (nil, true) }
                    stack.append(name.elementsEqual("dict".utf8) ? .dict(keys: [], key: nil) : .array(index: 0))
                }
            }
            index = close + 1
        }
        return (nil, false)
    }

    /// The five predefined entities and numeric character references.
    private static func decodeEntities(_ bytes: ArraySlice<UInt8>) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.contains("&") else { return text }
        var result = ""
        var rest = Substring(text)
        while let ampersand = rest.firstIndex(of: "&") {
            result += rest[..<ampersand]
            guard let semicolon = rest[ampersand...].firstIndex(of: ";"), rest.distance(from: ampersand, to: semicolon) <= 10 else {
                result += rest[ampersand...]
                return result
            }
            let entity = rest[rest.index(after: ampersand)..<semicolon]
            switch entity {
            case "lt": result += "<"
            case "gt": result += ">"
            case "amp": result += "&"
            case "quot": result += "\""
            case "apos": result += "'"
            default:
                var scalar: Unicode.Scalar?
                if entity.hasPrefix("#x") || entity.hasPrefix("#X") {
                    scalar = UInt32(entity.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init)
                } else if entity.hasPrefix("#") {
                    scalar = UInt32(entity.dropFirst()).flatMap(Unicode.Scalar.init)
                }
                if let scalar { result.unicodeScalars.append(scalar) } else { result += "&" + entity + ";" }
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        return result + rest
    }
}
