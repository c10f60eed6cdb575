import Foundation

/// A validating pass over a JSON document before Foundation decodes it, for the checks
/// `JSONSerialization` does not make (docs/ARCHITECTURE.md, "Bad input"):
///
/// - **duplicate keys** in an object (Foundation keeps the last one silently, so a second
///   `CFBundleIdentifier` would change an app's identity), compared as Swift strings after
///   unescaping, as Foundation's dictionary compares them;
/// - **the position of a syntax error**, as line and column (1-based, columns in bytes);
/// - **the encoding**: JSON files must be UTF-8 (a UTF-16 or UTF-32 document is refused
///   with that said, rather than as "invalid value around character 0");
/// - **depth**: nesting deeper than ``maximumDepth`` is refused;
/// - **numbers beyond a Double** (`1e999`, 400 digits): Foundation refuses them without
///   saying where, or would make them infinite;
/// - **lone surrogates** (`"\ud800"` with no low half): not a character; Foundation says
///   only "Unexpected end of file".
///
/// The scan is iterative (an explicit stack, no recursion, so no input can overflow the
/// call stack) and linear in the input: each byte is looked at a bounded number of times
/// and each object's keys go into one hash set.
public enum StrictJSON {
    /// Arrays and objects nested deeper than this are refused.
    public static let maximumDepth = 512

    /// What was wrong with a document, and where.
    public struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        /// The kind of problem.
        public enum Kind: Hashable, Sendable {
            /// Not JSON at this position.
            case syntax
            /// The same key twice in one object; ``Failure/path`` is the key's path.
            case duplicateKey(String)
            /// Nested deeper than ``StrictJSON/maximumDepth``.
            case tooDeep
            /// A number no Double holds (`1e400`, 400 digits): grammatical JSON, so said at
            /// its key (``Failure/path``), as a value of the wrong kind is, not as a syntax error.
            case numberOutOfRange
            /// Not UTF-8.
            case encoding
        }

        /// The kind.
        public var kind: Kind
        /// What is wrong ("expected a value, found 'x'").
        public var message: String
        /// Where: the JSON path of the value being read (`$.days[1].network`).
        public var path: String
        /// 1-based line of the offending byte.
        public var line: Int
        /// 1-based column (in bytes) of the offending byte.
        public var column: Int
        /// 0-based byte offset of the offending byte.
        public var offset: Int

        /// `line L, column C (at $.path): message`.
        public var description: String {
            "line \(line), column \(column)\(path == "$" ? "" : " (at \(path))"): \(message)"
        }

        /// The one wording of this failure in the errors of every decoder (manifests, policy
        /// files, scenarios), which add the file and the key: "expected valid JSON, found an
        /// error at line 2, column 10 near "x}": ...", or for a duplicate key its message and
        /// position. `data` is the document, for the bytes near a syntax error.
        public func explanation(in data: Data) -> String {
            switch kind {
            case .duplicateKey, .numberOutOfRange: return "\(message) (line \(line), column \(column))"
            // Where: a byte that is not UTF-8 cannot be shown, so its position says it.
            case .encoding: return "expected UTF-8 JSON: \(message) (line \(line), column \(column), byte \(offset))"
            case .syntax, .tooDeep: return "expected valid JSON, found an error at line \(line), column \(column)\(Self.near(offset, in: data)): \(message)"
            }
        }

        /// What this failure makes of `subject` ("the message"): grammatical JSON with a
        /// number no Double holds "cannot be read"; anything else "is not valid JSON".
        public func verdict(on subject: String) -> String {
            if case .numberOutOfRange = kind { return "\(subject) cannot be read" }
            return "\(subject) is not valid JSON"
        }

        /// ``explanation(in:)`` placed at its key for a reader with no key of its own to
        /// report (a push payload, a kept file): `at $.badge: expected a number within the
        /// range of a Double ...` for a number out of range; the explanation alone otherwise.
        public func placedExplanation(in data: Data) -> String {
            guard case .numberOutOfRange = kind, path != "$" else { return explanation(in: data) }
            return "at \(path): \(explanation(in: data))"
        }

        /// The key a duplicate or a number out of range concerns, as decoders write keys
        /// (`days[1].network`, no leading `$.`); `nil` for other failures and at the top level.
        public var culpritKeyPath: String? {
            switch kind {
            case .duplicateKey, .numberOutOfRange: break
            case .syntax, .tooDeep, .encoding: return nil
            }
            guard path != "$" else { return nil }
            var key = path.dropFirst()
            if key.hasPrefix(".") { key = key.dropFirst() }
            return String(key)
        }

        /// ` near "text"`: up to 12 bytes from `offset` to the end of its line (and the rest of
        /// a character cut at the twelfth); empty at the end. A byte that is not part of valid
        /// UTF-8 is written `\xB1`, as the message names it, not as a replacement character.
        static func near(_ offset: Int, in data: Data) -> String {
            guard offset >= 0, offset < data.count else { return "" }
            let line = data.dropFirst(offset).prefix { $0 != UInt8(ascii: "\n") }
            // A character cut at the twelfth byte is completed (at most 3 continuation bytes).
            var length = min(12, line.count)
            for byte in line.dropFirst(length).prefix(3) {
                guard byte & 0xC0 == 0x80 else { break }
                length += 1
            }
            let rest = line.prefix(length)
            guard !rest.isEmpty else { return "" }
            var shown = ""
            var index = rest.startIndex
            while index < rest.endIndex {
                let lead = rest[index]
                let length = lead < 0x80 ? 1 : lead >> 5 == 0b110 ? 2 : lead >> 4 == 0b1110 ? 3 : lead >> 3 == 0b11110 ? 4 : 0
                if length > 0, let end = rest.index(index, offsetBy: length, limitedBy: rest.endIndex),
                   let character = String(validating: rest[index..<end], as: UTF8.self) {
                    // Escaped as JSON writes it, control characters included: the excerpt is
                    // shown, never obeyed by a terminal.
                    shown += escaped(character)
                    index = end
                } else {
                    shown += String(format: "\\x%02X", lead)
                    index = rest.index(after: index)
                }
            }
            return " near \"" + shown + "\""
        }
    }

    /// Checks `data`; returns normally when it is one well-formed UTF-8 JSON value (any
    /// type at the top level) without duplicate keys and not nested too deeply.
    public static func validate(_ data: Data) throws(Failure) {
        if let failure = scan(data, keepsTopLevelNumbers: false).failure { throw failure }
    }

    /// Checks `data` as ``validate(_:)`` does and returns the numbers that are members of
    /// the top-level object, as written, by key (`["seed": "9007199254740993"]`; empty when
    /// the document is not an object). `JSONSerialization` rounds every number it is not
    /// sure of through a Double (`9007199254740993e0` becomes 2^53), so a field that must be
    /// read exactly, such as a 64-bit seed, is read from its text.
    public static func topLevelNumberLiterals(validating data: Data) throws(Failure) -> [String: String] {
        let outcome = scan(data, keepsTopLevelNumbers: true)
        if let failure = outcome.failure { throw failure }
        return outcome.numbers
    }

    /// ``topLevelNumberLiterals(validating:)`` that does not stop at a failure: it returns
    /// the failure, if any, with the numbers read before it, so that a caller answering a
    /// broken document can still use a field that came before the fault (bgtaskd's reply
    /// to a malformed request carries the request's `id`) without reading the bytes again.
    ///
    /// Before a failure, a number counts only once its member ended (a `,` or `}` after it):
    /// in `{"id":12 34` neither 12 nor 1234 is what the writer meant. A key the failure found
    /// twice in the top-level object has no number (which one would be meant?). Nothing
    /// after the failure is read: past a fault, what looks like a member may be inside a
    /// string or a value that the fault broke.
    public static func topLevelNumberLiterals(readingUpToFailure data: Data) -> (numbers: [String: String], failure: Failure?) {
        scan(data, keepsTopLevelNumbers: true)
    }

    private static func scan(_ data: Data, keepsTopLevelNumbers: Bool) -> (numbers: [String: String], failure: Failure?) {
        // Copied once so the scanner works on a plain buffer (Data's own subscripts are slow).
        let bytes = [UInt8](data)
        return bytes.withUnsafeBufferPointer { buffer in
            var scanner = Scanner(bytes: buffer)
            scanner.keepsTopLevelNumbers = keepsTopLevelNumbers
            do throws(Failure) {
                try scanner.document()
                return (scanner.topLevelNumbers, nil)
            } catch {
                return (scanner.topLevelNumbers, error)
            }
        }
    }

    /// `.key` for identifier-like keys, `["odd key"]` for the rest, so a path stays unambiguous.
    public static func pathComponent(_ key: String) -> String {
        let simple = !key.isEmpty && key.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil || $0 == "_") }
        return simple ? "." + key : "[\(quoted(key))]"
    }

    /// A string in double quotes with `\` and `"` escaped, shortened to 60 Unicode scalars.
    static func quoted(_ text: String) -> String {
        "\"" + escaped(text.excerpt(scalars: 60)) + "\""
    }

    /// `text` with `\`, `"` and control characters (U+0000-U+001F, U+007F-U+009F) escaped as
    /// JSON writes them (`\u001B`), for messages: a key or value read from a file is shown
    /// to a terminal, where a raw ESC would be obeyed rather than seen.
    public static func escaped(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case _ where scalar.properties.generalCategory == .control: result += "\\u" + hex4(scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// The first control character (U+0000-U+001F, U+007F-U+009F) of `text`, or `nil`.
    public static func firstControlCharacter(in text: String) -> Unicode.Scalar? {
        text.unicodeScalars.first { $0.properties.generalCategory == .control }
    }

    /// `U+001B`: a scalar as Unicode writes it.
    public static func codePoint(_ scalar: Unicode.Scalar) -> String {
        "U+" + hex4(scalar.value)
    }

    private static func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var offset = 0

        /// One open array or object.
        enum Frame {
            case array(index: Int)
            case object(key: String?)
        }
        var stack: [Frame] = []
        /// The keys seen in each open object, innermost last: apart from the frames so that
        /// inserting mutates the set in place (inside an enum payload every insert would
        /// copy the whole set, which is quadratic).
        var objectKeys: [Set<String>] = []
        /// Whether ``topLevelNumbers`` is filled (only the callers that need it pay for it).
        var keepsTopLevelNumbers = false
        /// The text of each number directly in the top-level object, by key.
        var topLevelNumbers: [String: String] = [:]

        init(bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
        }

        var path: String {
            var text = "$"
            for frame in stack {
                switch frame {
                case .array(let index): text += "[\(index)]"
                case .object(let key): if let key { text += StrictJSON.pathComponent(key) }
                }
            }
            return text
        }

        func failure(_ kind: Failure.Kind, _ message: String, at position: Int? = nil) -> Failure {
            let at = min(position ?? offset, bytes.count)
            var line = 1
            var lineStart = 0
            for index in 0..<at where bytes[index] == 0x0A {
                line += 1
                lineStart = index + 1
            }
            return Failure(kind: kind, message: message, path: path, line: line, column: at - lineStart + 1, offset: at)
        }

        /// What is at the current position, for "found ..." (a character, or the end).
        var found: String {
            guard offset < bytes.count else { return "the end of the document" }
            let byte = bytes[offset]
            if byte >= 0x20, byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
            return String(format: "byte 0x%02X", byte)
        }

        mutating func skipWhitespace() {
            while offset < bytes.count {
                switch bytes[offset] {
                case 0x20, 0x09, 0x0A, 0x0D: offset += 1
                default: return
                }
            }
        }

        mutating func document() throws(Failure) {
            try checkEncoding()
            if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { offset = 3 }
            skipWhitespace()
            guard offset < bytes.count else { throw failure(.syntax, "expected a JSON value, found \(bytes.isEmpty ? "an empty document" : "only whitespace")") }
            try values()
            skipWhitespace()
            guard offset == bytes.count else { throw failure(.syntax, "expected the end of the document after the value, found \(found)") }
        }

        /// UTF-16 and UTF-32 (with or without a byte-order mark) are told apart by their NULs.
        func checkEncoding() throws(Failure) {
            let prefix = Array(bytes.prefix(4))
            let marks: [([UInt8], String)] = [
                ([0x00, 0x00, 0xFE, 0xFF], "UTF-32"), ([0xFF, 0xFE, 0x00, 0x00], "UTF-32"),
                ([0xFE, 0xFF], "UTF-16"), ([0xFF, 0xFE], "UTF-16"),
            ]
            for (mark, name) in marks where prefix.starts(with: mark) {
                throw Failure(kind: .encoding, message: "JSON must be UTF-8, found a \(name) byte-order mark", path: "$", line: 1, column: 1, offset: 0)
            }
            if prefix.count >= 2, prefix[0] == 0 || prefix[1] == 0 {
                throw Failure(kind: .encoding, message: "JSON must be UTF-8, found NUL bytes at the start (UTF-16 or UTF-32 text?)", path: "$", line: 1, column: 1, offset: 0)
            }
        }

        /// Reads one value, iteratively: containers push a frame instead of recursing.
        mutating func values() throws(Failure) {
            while true {
                // Read a value (or open a container).
                skipWhitespace()
                guard offset < bytes.count else { throw failure(.syntax, "expected a value, found the end of the document") }
                var opened = false
                switch bytes[offset] {
                case UInt8(ascii: "{"):
                    try push(.object(key: nil))
                    objectKeys.append([])
                    offset += 1
                    skipWhitespace()
                    if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") {
                        offset += 1
                        stack.removeLast()
                        objectKeys.removeLast()
                    } else {
                        try key()
                        opened = true
                    }
                case UInt8(ascii: "["):
                    try push(.array(index: 0))
                    offset += 1
                    skipWhitespace()
                    if offset < bytes.count, bytes[offset] == UInt8(ascii: "]") {
                        offset += 1
                        stack.removeLast()
                    } else {
                        opened = true
                    }
                case UInt8(ascii: "\""):
                    _ = try string(decode: false)
                case UInt8(ascii: "t"): try literal("true")
                case UInt8(ascii: "f"): try literal("false")
                case UInt8(ascii: "n"): try literal("null")
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
                default: throw failure(.syntax, "expected a value (object, array, string, number, true, false or null), found \(found)")
                }
                if opened { continue }
                // After a value: close containers or move to the next element.
                while true {
                    guard let top = stack.last else { return }
                    skipWhitespace()
                    guard offset < bytes.count else {
                        throw failure(.syntax, "expected ',' or '\(isObject(top) ? "}" : "]")', found the end of the document")
                    }
                    let byte = bytes[offset]
                    switch top {
                    case .array(let index):
                        if byte == UInt8(ascii: ",") {
                            offset += 1
                            stack[stack.count - 1] = .array(index: index + 1)
                            break
                        }
                        guard byte == UInt8(ascii: "]") else { throw failure(.syntax, "expected ',' or ']' after an array element, found \(found)") }
                        offset += 1
                        stack.removeLast()
                        continue
                    case .object:
                        if byte == UInt8(ascii: ",") {
                            offset += 1
                            skipWhitespace()
                            try key()
                            break
                        }
                        guard byte == UInt8(ascii: "}") else { throw failure(.syntax, "expected ',' or '}' after an object member, found \(found)") }
                        offset += 1
                        stack.removeLast()
                        objectKeys.removeLast()
                        continue
                    }
                    break
                }
            }
        }

        func isObject(_ frame: Frame) -> Bool {
            if case .object = frame { return true }
            return false
        }

        mutating func push(_ frame: Frame) throws(Failure) {
            guard stack.count < StrictJSON.maximumDepth else {
                throw failure(.tooDeep, "expected arrays and objects nested at most \(StrictJSON.maximumDepth) deep, found deeper nesting")
            }
            stack.append(frame)
        }

        /// Reads `"key" :` in the object on top of the stack, refusing a repeated key.
        mutating func key() throws(Failure) {
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else {
                throw failure(.syntax, "expected a key in double quotes, found \(found)")
            }
            let start = offset
            let name = try string(decode: true) ?? ""
            // Marked before throwing so the path names the repeated key.
            let isNew = objectKeys[objectKeys.count - 1].insert(name).inserted
            stack[stack.count - 1] = .object(key: name)
            guard isNew else {
                // Neither value is the document's: the first is not kept for the caller.
                if stack.count == 1 { topLevelNumbers[name] = nil }
                throw failure(.duplicateKey(name), "duplicate key \(StrictJSON.quoted(name)): each key may appear once in an object (Foundation would keep the last one silently)", at: start)
            }
            skipWhitespace()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: ":") else {
                throw failure(.syntax, "expected ':' after the key \(StrictJSON.quoted(name)), found \(found)")
            }
            offset += 1
        }

        mutating func literal(_ word: String) throws(Failure) {
            let expected = Array(word.utf8)
            let count = expected.count
            let matches = offset + count <= bytes.count && (0..<count).allSatisfy { bytes[offset + $0] == expected[$0] }
            guard matches else { throw failure(.syntax, "expected a value, found \(found)") }
            offset += count
        }

        mutating func number() throws(Failure) {
            let start = offset
            func digits() -> Int {
                let start = offset
                while offset < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) { offset += 1 }
                return offset - start
            }
            if bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            let integerStart = offset
            let integerDigits = digits()
            guard integerDigits > 0 else { throw failure(.syntax, "expected a digit in the number, found \(found)") }
            if integerDigits > 1, bytes[integerStart] == UInt8(ascii: "0") {
                throw failure(.syntax, "expected no leading zero in a number", at: integerStart)
            }
            if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
                offset += 1
                guard digits() > 0 else { throw failure(.syntax, "expected a digit after the decimal point, found \(found)") }
            }
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
                offset += 1
                if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") { offset += 1 }
                guard digits() > 0 else { throw failure(.syntax, "expected a digit in the exponent, found \(found)") }
            }
            // Grammatical, but is it a number a decoder can hold? Double's range is what
            // every field of ours reads numbers into.
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
            if let value = Double(text), value.isFinite {
                if keepsTopLevelNumbers, stack.count == 1, case .object(let key?) = stack[0], memberEnds(after: offset) { topLevelNumbers[key] = text }
                return
            }
            let shown = text.count > 24 ? String(text.prefix(24)) + "... (\(text.count) characters)" : text
            throw failure(.numberOutOfRange, "expected a number within the range of a Double (about ±1.8e308), found \(shown)", at: start)
        }

        /// Whether the next byte from `position` that is not whitespace ends an object's
        /// member (`,` or `}`), looked at without moving: in a valid document it always
        /// does, so only a number cut short or run on before a failure is left out.
        func memberEnds(after position: Int) -> Bool {
            // A copy that only moves its offset: its arrays are shared, never copied.
            var lookahead = self
            lookahead.offset = position
            lookahead.skipWhitespace()
            return lookahead.offset < bytes.count && (bytes[lookahead.offset] == UInt8(ascii: ",") || bytes[lookahead.offset] == UInt8(ascii: "}"))
        }

        /// Reads a string; returns its decoded value when `decode` (keys), else `nil`.
        mutating func string(decode: Bool) throws(Failure) -> String? {
            let open = offset
            offset += 1
            var scalars = String.UnicodeScalarView()
            var runStart = offset
            func flushRun(_ end: Int) throws(Failure) {
                guard runStart < end else { return }
                let run = UnsafeBufferPointer(rebasing: bytes[runStart..<end])
                guard let text = String(validating: run, as: UTF8.self) else {
                    // Placed at the first byte that is not UTF-8, not at the run's start.
                    var parser = Unicode.UTF8.ForwardParser()
                    var bytes = run.makeIterator()
                    var valid = 0
                    while case .valid(let scalar) = parser.parseScalar(from: &bytes) { valid += scalar.count }
                    throw failure(.encoding, "JSON must be UTF-8, found invalid UTF-8 in a string", at: runStart + valid)
                }
                if decode { scalars.append(contentsOf: text.unicodeScalars) }
            }
            while true {
                guard offset < bytes.count else { throw failure(.syntax, "expected the closing '\"' of the string, found the end of the document", at: open) }
                let byte = bytes[offset]
                if byte == UInt8(ascii: "\"") {
                    try flushRun(offset)
                    offset += 1
                    return decode ? String(scalars) : nil
                }
                if byte < 0x20 { throw failure(.syntax, "expected no control characters in a string (escape them), found \(found)") }
                guard byte == UInt8(ascii: "\\") else {
                    offset += 1
                    continue
                }
                try flushRun(offset)
                offset += 1
                guard offset < bytes.count else { throw failure(.syntax, "expected an escape after '\\', found the end of the document") }
                let escaped = bytes[offset]
                offset += 1
                var scalar: Unicode.Scalar?
                switch escaped {
                case UInt8(ascii: "\""): scalar = "\""
                case UInt8(ascii: "\\"): scalar = "\\"
                case UInt8(ascii: "/"): scalar = "/"
                case UInt8(ascii: "b"): scalar = "\u{08}"
                case UInt8(ascii: "f"): scalar = "\u{0C}"
                case UInt8(ascii: "n"): scalar = "\n"
                case UInt8(ascii: "r"): scalar = "\r"
                case UInt8(ascii: "t"): scalar = "\t"
                case UInt8(ascii: "u"):
                    let escapeStart = offset - 2
                    let high = try hex4()
                    if (0xD800...0xDBFF).contains(high), offset + 1 < bytes.count, bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u") {
                        let save = offset
                        offset += 2
                        let low = try hex4()
                        if (0xDC00...0xDFFF).contains(low) {
                            scalar = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
                        } else {
                            offset = save
                        }
                    }
                    // A lone surrogate is grammatical JSON but no character: Foundation
                    // cannot decode it and says only "Unexpected end of file".
                    if scalar == nil {
                        guard let single = Unicode.Scalar(high) else {
                            let half = (0xD800...0xDBFF).contains(high) ? "a high surrogate with no low surrogate (\\uDC00-\\uDFFF) after it" : "a low surrogate with no high surrogate before it"
                            throw failure(.syntax, "expected a character escape, found \\u\(String(format: "%04X", high)), \(half): a lone surrogate is not a character", at: escapeStart)
                        }
                        scalar = single
                    }
                default:
                    offset -= 1
                    throw failure(.syntax, "expected an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX), found \(found)")
                }
                if decode, let scalar { scalars.append(scalar) }
                runStart = offset
            }
        }

        mutating func hex4() throws(Failure) -> UInt32 {
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard offset < bytes.count else { throw failure(.syntax, "expected 4 hexadecimal digits after \\u, found the end of the document") }
                let byte = bytes[offset]
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: throw failure(.syntax, "expected 4 hexadecimal digits after \\u, found \(found)")
                }
                value = value << 4 | digit
                offset += 1
            }
            return value
        }
    }
}
