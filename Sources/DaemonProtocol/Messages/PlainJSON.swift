import Foundation
import SchedulerCore

// The small JSON writer and reader of the messages on every submit and launch (docs/protocol.md,
// "Coding of the frequent messages"). Codable through JSONEncoder and JSONDecoder cost
// about half the CPU of a submit, on both sides, mostly in generic metadata lookups and
// keyed-container boxes; these two know only JSON, and the message types say what they
// write and accept (`ClientEnvelopeWriter`, `DaemonEnvelopeWriter`, `PlainMessageReader`).

/// Appends JSON text to a byte buffer, strings escaped as JSON requires.
struct PlainJSONWriter {
    private(set) var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(256) }

    /// Appends `text` as is: punctuation and keys written by the caller.
    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Appends `text` as a JSON string: quotes, backslashes and control characters escaped.
    mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case UInt8(ascii: "\n"): raw("\\n")
            case UInt8(ascii: "\r"): raw("\\r")
            case UInt8(ascii: "\t"): raw("\\t")
            case 0..<0x20:
                raw("\\u00")
                bytes.append(Self.hexDigit(byte >> 4))
                bytes.append(Self.hexDigit(byte & 0xF))
            default:
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends an integer in decimal.
    mutating func integer<Number: BinaryInteger>(_ number: Number) {
        bytes.append(contentsOf: String(number).utf8)
    }

    /// Appends `true` or `false`.
    mutating func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }

    /// Appends a date as `JSONEncoder`'s `.secondsSince1970` writes it: the shortest
    /// decimal that reads back as the same double (Swift's description). Returns false,
    /// writing nothing, when it is not finite, which `JSONEncoder` refuses (the caller then
    /// lets it say so).
    mutating func seconds(_ date: Date) -> Bool {
        double(date.timeIntervalSince1970)
    }

    /// Appends a number as the shortest decimal that reads back as the same double;
    /// false, writing nothing, when it is not finite.
    mutating func double(_ value: Double) -> Bool {
        guard value.isFinite else { return false }
        bytes.append(contentsOf: value.description.utf8)
        return true
    }

    /// ``double(_:)`` for a number Swift writes without an exponent; false otherwise.
    private mutating func plainDouble(_ value: Double) -> Bool {
        guard value.isFinite, !value.description.contains("e") else { return false }
        return double(value)
    }

    /// Appends a plain request (no continued-processing options, data protection class or
    /// remote payload, finite dates) in `PendingRequest`'s Codable form; false, with the
    /// writer to be thrown away, for any other.
    mutating func plainRequest(_ request: PendingRequest) -> Bool {
        guard request.continuedProcessing == nil, request.protectionTypeOfRequiredData == nil,
              request.remoteNotificationPayload == nil else { return false }
        raw("{\"app\":")
        string(request.app.rawValue)
        raw(",\"identifier\":")
        string(request.identifier)
        raw(",\"kind\":")
        string(request.kind.rawValue)
        if let earliest = request.earliestBeginDate {
            raw(",\"earliestBeginDate\":")
            guard seconds(earliest) else { return false }
        }
        raw(",\"requiresNetworkConnectivity\":")
        bool(request.requiresNetworkConnectivity)
        raw(",\"requiresExternalPower\":")
        bool(request.requiresExternalPower)
        raw(",\"submittedAt\":")
        guard seconds(request.submittedAt) else { return false }
        raw("}")
        return true
    }

    /// Appends `conditions` in their Codable form (absent optionals left out, as
    /// `JSONEncoder` leaves them); false, with the writer to be thrown away, when a number
    /// is not finite or needs an exponent (which the plain reader leaves to `JSONDecoder`).
    mutating func conditions(_ conditions: Conditions) -> Bool {
        raw("{\"externalPower\":")
        bool(conditions.externalPower)
        raw(",\"networkAvailable\":")
        bool(conditions.networkAvailable)
        if let level = conditions.batteryLevel {
            raw(",\"batteryLevel\":")
            guard plainDouble(level) else { return false }
        }
        raw(",\"batteryState\":")
        string(conditions.batteryState.rawValue)
        raw(",\"lowPowerMode\":")
        bool(conditions.lowPowerMode)
        raw(",\"thermalState\":")
        string(conditions.thermalState.description)
        if let metered = conditions.networkMetered {
            raw(",\"networkMetered\":")
            bool(metered)
        }
        raw(",\"deviceIdle\":")
        bool(conditions.deviceIdle)
        if let pressure = conditions.cpuPressure {
            raw(",\"cpuPressure\":")
            guard plainDouble(pressure) else { return false }
        }
        raw("}")
        return true
    }

    /// The text written.
    var data: Data { Data(bytes) }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }
}

/// A JSON document read by ``PlainJSONReader``.
enum PlainJSONValue: Equatable {
    case object([(key: String, value: PlainJSONValue)])
    case array([PlainJSONValue])
    case string(String)
    /// A number's text, checked against JSON's grammar.
    case number(Substring)
    case bool(Bool)
    case null

    static func == (lhs: PlainJSONValue, rhs: PlainJSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.object(let left), .object(let right)):
            left.count == right.count && zip(left, right).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case (.array(let left), .array(let right)): left == right
        case (.string(let left), .string(let right)): left == right
        case (.number(let left), .number(let right)): left == right
        case (.bool(let left), .bool(let right)): left == right
        case (.null, .null): true
        default: false
        }
    }

    /// An object whose keys are all among `keys`, or nil: another key, or not an object.
    /// The readers of the messages accept only the keys they know and leave anything else
    /// to `JSONDecoder`, which decides about it.
    func object(keys: [String]) -> PlainJSONObject? {
        guard case .object(let members) = self, members.allSatisfy({ keys.contains($0.key) }) else { return nil }
        return PlainJSONObject(members: members)
    }

    /// The one member of an object with exactly one (an enum case's form), or nil.
    var onlyMember: (key: String, value: PlainJSONValue)? {
        guard case .object(let members) = self, members.count == 1 else { return nil }
        return members[0]
    }

    var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// A number with no fraction or exponent, within `Number`'s range, or nil.
    func integer<Number: FixedWidthInteger>(_: Number.Type) -> Number? {
        guard case .number(let text) = self, !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) else { return nil }
        return Number(text)
    }

    /// A finite double written without an exponent (what Swift writes for the dates of
    /// today), or nil: the rarer forms are left to `JSONDecoder`.
    var plainDouble: Double? {
        guard case .number(let text) = self, !text.contains(where: { $0 == "e" || $0 == "E" }),
              let value = Double(text), value.isFinite else { return nil }
        // A decimal so small it reads as zero is not the zero JSONDecoder may refuse.
        if value == 0, text.contains(where: { ("1"..."9").contains($0) }) { return nil }
        return value
    }
}

/// The members of an object (a handful: looked up by a scan).
struct PlainJSONObject {
    let members: [(key: String, value: PlainJSONValue)]

    subscript(key: String) -> PlainJSONValue? {
        members.first { $0.key == key }?.value
    }
}

/// Reads the JSON messages of the protocol's frequent exchanges, or answers nil for
/// anything it does not take on: a string with an escape, a key twice in one object,
/// nesting deeper than ``maximumDepth``, anything that is not JSON. A nil sends the
/// payload to `StrictJSON` and `JSONDecoder`, which read it or say what is wrong with it,
/// so this reader never has to explain an error and never accepts what they would refuse.
struct PlainJSONReader {
    /// Deeper documents are not a frequent message.
    static let maximumDepth = 8

    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0

    /// The document in `data`, or nil.
    static func read(_ data: Data) -> PlainJSONValue? {
        data.withUnsafeBytes { raw in
            var reader = PlainJSONReader(bytes: raw.bindMemory(to: UInt8.self))
            guard let value = reader.value(depth: 0) else { return nil }
            reader.skipWhitespace()
            return reader.position == reader.bytes.count ? value : nil
        }
    }

    private init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { position += 1 }
    }

    private mutating func value(depth: Int) -> PlainJSONValue? {
        skipWhitespace()
        guard let byte = current else { return nil }
        switch byte {
        case UInt8(ascii: "{"):
            guard depth < Self.maximumDepth else { return nil }
            return object(depth: depth + 1)
        case UInt8(ascii: "["):
            guard depth < Self.maximumDepth else { return nil }
            return array(depth: depth + 1)
        case UInt8(ascii: "\""):
            return string().map(PlainJSONValue.string)
        case UInt8(ascii: "t"):
            return literal("true") ? .bool(true) : nil
        case UInt8(ascii: "f"):
            return literal("false") ? .bool(false) : nil
        case UInt8(ascii: "n"):
            return literal("null") ? .null : nil
        default:
            return number()
        }
    }

    private mutating func object(depth: Int) -> PlainJSONValue? {
        position += 1
        var members: [(key: String, value: PlainJSONValue)] = []
        // Objects here have a handful of keys, but a peer may send 100,000: a set keeps the
        // duplicate check linear (a scan made one 1 MiB frame cost minutes of CPU).
        var keys: Set<String> = []
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            position += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\""), let key = string() else { return nil }
            guard keys.insert(key).inserted else { return nil }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { return nil }
            position += 1
            guard let value = value(depth: depth) else { return nil }
            members.append((key, value))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"): position += 1; return .object(members)
            default: return nil
            }
        }
    }

    private mutating func array(depth: Int) -> PlainJSONValue? {
        position += 1
        var elements: [PlainJSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            position += 1
            return .array(elements)
        }
        while true {
            guard let element = value(depth: depth) else { return nil }
            elements.append(element)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"): position += 1; return .array(elements)
            default: return nil
            }
        }
    }

    /// A string without escapes or control characters, valid UTF-8; the opening quote is
    /// at `position`.
    private mutating func string() -> String? {
        position += 1
        let start = position
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                let text = String(validating: bytes[start..<position], as: UTF8.self)
                position += 1
                return text
            case UInt8(ascii: "\\"), 0..<0x20:
                return nil
            default:
                position += 1
            }
        }
        return nil
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count else { return false }
        let matches = word.withUTF8Buffer { expected in
            (0..<count).allSatisfy { bytes[position + $0] == expected[$0] }
        }
        if matches { position += count }
        return matches
    }

    /// JSON's number grammar: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    private mutating func number() -> PlainJSONValue? {
        let start = position
        if current == UInt8(ascii: "-") { position += 1 }
        guard let first = current, isDigit(first) else { return nil }
        position += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if current == UInt8(ascii: ".") {
            position += 1
            guard skipDigits() > 0 else { return nil }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            position += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
            guard skipDigits() > 0 else { return nil }
        }
        // The grammar admits ASCII only, so the bytes are their own text.
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        return .number(text[...])
    }

    @discardableResult
    private mutating func skipDigits() -> Int {
        let start = position
        while let byte = current, isDigit(byte) { position += 1 }
        return position - start
    }

    private func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
}
