import Foundation

/// How a value is shown in a log line (Apple: `OSLogPrivacy`).
public struct OSLogPrivacy: Equatable, Sendable {
    enum Level: Equatable, Sendable { case `public`, `private`, sensitive, auto }
    let level: Level
    let mask: Mask

    /// What a redacted value is replaced with.
    public struct Mask: Equatable, Sendable {
        let hashes: Bool
        /// A hash of the value, so equal values can be matched without showing them.
        public static let hash = Mask(hashes: true)
        /// Nothing: `<private>`.
        public static let none = Mask(hashes: false)
    }

    /// Shown in the clear.
    public static let `public` = OSLogPrivacy(level: .public, mask: .none)
    /// Redacted.
    public static let `private` = OSLogPrivacy(level: .private, mask: .none)
    /// Redacted, even where private values are shown.
    public static let sensitive = OSLogPrivacy(level: .sensitive, mask: .none)
    /// Strings and objects redacted, numbers and booleans shown (the default).
    public static let auto = OSLogPrivacy(level: .auto, mask: .none)

    /// Redacted, as `mask` says.
    public static func `private`(mask: Mask) -> OSLogPrivacy { OSLogPrivacy(level: .private, mask: mask) }
    /// Redacted, as `mask` says.
    public static func sensitive(mask: Mask) -> OSLogPrivacy { OSLogPrivacy(level: .sensitive, mask: mask) }
    /// The default, redacting as `mask` says.
    public static func auto(mask: Mask) -> OSLogPrivacy { OSLogPrivacy(level: .auto, mask: mask) }
}

/// Padding of an interpolated string (Apple: `OSLogStringAlignment`).
public struct OSLogStringAlignment: Sendable {
    let columns: Int
    let left: Bool
    /// No padding.
    public static let none = OSLogStringAlignment(columns: 0, left: false)
    /// Padded on the right to `columns`.
    public static func left(columns: @autoclosure () -> Int) -> OSLogStringAlignment { OSLogStringAlignment(columns: columns(), left: true) }
    /// Padded on the left to `columns`.
    public static func right(columns: @autoclosure () -> Int) -> OSLogStringAlignment { OSLogStringAlignment(columns: columns(), left: false) }

    func apply(_ text: String) -> String {
        // Bounded as os_log's field widths are: `Int.min` overflowed here, `Int.max` could
        // not be allocated.
        let missing = min(max(columns, 0), OSLogFormat.maximumFieldWidth) - text.count
        guard missing > 0 else { return text }
        let padding = String(repeating: " ", count: missing)
        return left ? text + padding : padding + text
    }
}

/// Padding of an interpolated number (Apple: `OSLogIntegerAlignment`).
public typealias OSLogIntegerAlignment = OSLogStringAlignment

/// How an integer is written (Apple: `OSLogIntegerFormatting`).
public struct OSLogIntegerFormatting: Sendable {
    let radix: Int
    let explicitPositiveSign: Bool
    let prefix: Bool
    let uppercase: Bool
    let minDigits: Int

    /// Decimal.
    public static let decimal = OSLogIntegerFormatting(radix: 10, explicitPositiveSign: false, prefix: false, uppercase: false, minDigits: 0)
    /// Hexadecimal, lowercase, no prefix.
    public static let hex = OSLogIntegerFormatting(radix: 16, explicitPositiveSign: false, prefix: false, uppercase: false, minDigits: 0)
    /// Octal, no prefix.
    public static let octal = OSLogIntegerFormatting(radix: 8, explicitPositiveSign: false, prefix: false, uppercase: false, minDigits: 0)

    /// Decimal, with a `+` on positive numbers and at least `minDigits` digits.
    public static func decimal(explicitPositiveSign: Bool = false, minDigits: @autoclosure () -> Int = 0) -> OSLogIntegerFormatting {
        OSLogIntegerFormatting(radix: 10, explicitPositiveSign: explicitPositiveSign, prefix: false, uppercase: false, minDigits: minDigits())
    }
    /// Hexadecimal.
    public static func hex(explicitPositiveSign: Bool = false, includePrefix: Bool = false, uppercase: Bool = false, minDigits: @autoclosure () -> Int = 0) -> OSLogIntegerFormatting {
        OSLogIntegerFormatting(radix: 16, explicitPositiveSign: explicitPositiveSign, prefix: includePrefix, uppercase: uppercase, minDigits: minDigits())
    }
    /// Octal.
    public static func octal(explicitPositiveSign: Bool = false, includePrefix: Bool = false, uppercase: Bool = false, minDigits: @autoclosure () -> Int = 0) -> OSLogIntegerFormatting {
        OSLogIntegerFormatting(radix: 8, explicitPositiveSign: explicitPositiveSign, prefix: includePrefix, uppercase: uppercase, minDigits: minDigits())
    }

    func apply<T: BinaryInteger>(_ value: T) -> String {
        var digits = String(value.magnitude, radix: radix, uppercase: uppercase)
        let wanted = min(max(minDigits, 0), OSLogFormat.maximumFieldWidth)  // bounded as alignments are
        if digits.count < wanted { digits = String(repeating: "0", count: wanted - digits.count) + digits }
        // Apple's overlay writes the prefix of Swift's literals: `0x`, `0o`.
        if prefix { digits = (radix == 16 ? "0x" : radix == 8 ? "0o" : "") + digits }
        if value < 0 { return "-" + digits }
        return explicitPositiveSign ? "+" + digits : digits
    }
}

/// How a floating-point number is written (Apple: `OSLogFloatFormatting`): printf's `%f`,
/// `%e`, `%g` or `%a`, with a `+` on positive numbers when asked (`explicitPositiveSign`) and
/// the letters in capitals when asked (`uppercase`: `1.23E+03`, `INF`), as Apple's overlay
/// builds its format.
public struct OSLogFloatFormatting: Sendable {
    let style: Character
    let precision: Int?
    var explicitPositiveSign = false
    var uppercase = false

    /// Fixed notation, six places.
    public static let fixed = OSLogFloatFormatting(style: "f", precision: nil)
    /// Exponential notation.
    public static let exponential = OSLogFloatFormatting(style: "e", precision: nil)
    /// Fixed or exponential, whichever is shorter.
    public static let hybrid = OSLogFloatFormatting(style: "g", precision: nil)
    /// Hexadecimal notation (`0x1.8p+1`).
    public static let hex = OSLogFloatFormatting(style: "a", precision: nil)
    /// Fixed notation with `precision` places.
    public static func fixed(precision: @autoclosure () -> Int, explicitPositiveSign: Bool = false, uppercase: Bool = false) -> OSLogFloatFormatting {
        OSLogFloatFormatting(style: "f", precision: precision(), explicitPositiveSign: explicitPositiveSign, uppercase: uppercase)
    }
    /// Fixed notation, six places.
    public static func fixed(explicitPositiveSign: Bool = false, uppercase: Bool = false) -> OSLogFloatFormatting {
        OSLogFloatFormatting(style: "f", precision: nil, explicitPositiveSign: explicitPositiveSign, uppercase: uppercase)
    }
    /// Exponential notation with `precision` places.
    public static func exponential(precision: @autoclosure () -> Int, explicitPositiveSign: Bool = false, uppercase: Bool = false) -> OSLogFloatFormatting {
        OSLogFloatFormatting(style: "e", precision: precision(), explicitPositiveSign: explicitPositiveSign, uppercase: uppercase)
    }
    /// Exponential notation.
    public static func exponential(explicitPositiveSign: Bool = false, uppercase: Bool = false) -> OSLogFloatFormatting {
        OSLogFloatFormatting(style: "e", precision: nil, explicitPositiveSign: explicitPositiveSign, uppercase: uppercase)
    }
    /// Fixed or exponential, whichever is shorter, with `precision` significant digits.
    public static func hybrid(precision: @autoclosure () -> Int, explicitPositiveSign: Bool = false, uppercase: Bool = false) -> OSLogFloatFormatting {
        OSLogFloatFormatting(style: "g", precision: precision(), explicitPositiveSign: explicitPositiveSign, uppercase: uppercase)
    }
    /// Fixed or exponential, whichever is shorter.
    public static func hybrid(explicitPositiveSign: Bool = false, uppercase: Bool = false) -> OSLogFloatFormatting {
        OSLogFloatFormatting(style: "g", precision: nil, explicitPositiveSign: explicitPositiveSign, uppercase: uppercase)
    }
    /// Hexadecimal notation.
    public static func hex(explicitPositiveSign: Bool = false, uppercase: Bool = false) -> OSLogFloatFormatting {
        OSLogFloatFormatting(style: "a", precision: nil, explicitPositiveSign: explicitPositiveSign, uppercase: uppercase)
    }

    func apply(_ value: Double) -> String {
        let sign = explicitPositiveSign ? "+" : ""
        let letter = uppercase ? String(style).uppercased() : String(style)
        // Hexadecimal takes the exact digits unless a precision is given; the others six
        // places, as printf's defaults. Bounded so that a hostile precision cannot ask for a
        // huge string.
        guard let precision else {
            return String(format: "%\(sign)\(style == "a" ? "" : ".6")\(letter)", value)
        }
        return String(format: "%\(sign).\(min(max(precision, 0), 50))\(letter)", value)
    }
}

/// How a boolean is written (Apple: `OSLogBoolFormat`).
public enum OSLogBoolFormat: Sendable {
    /// `true` / `false`.
    case truth
    /// `YES` / `NO`.
    case answer
}

/// A log message: literal text and interpolated values, each with its privacy, evaluated
/// only when the message is written (Apple: `OSLogMessage`).
public struct OSLogMessage: ExpressibleByStringInterpolation, ExpressibleByStringLiteral {
    /// The pieces, rendered in order when the message is written (on the logging thread,
    /// before the call returns: they may capture what is not `Sendable`, as on iOS).
    let pieces: [() -> String]

    /// A message of literal text.
    public init(stringLiteral value: String) { pieces = [{ value }] }
    /// A message with interpolated values.
    public init(stringInterpolation: OSLogInterpolation) { pieces = stringInterpolation.pieces }

    func rendered() -> String { pieces.map { $0() }.joined() }
}

/// The interpolations a log message accepts (Apple: `OSLogInterpolation`). Values are kept
/// as autoclosures, not evaluated unless the line is written. A format's own parameters
/// (`minDigits`, `columns`, `precision`) are evaluated when the message is made, written or
/// not: Apple's keep them as escaping autoclosures, which these `Sendable` formats cannot
/// hold (docs/porting.md, "Logging").
public struct OSLogInterpolation: StringInterpolationProtocol {
    var pieces: [() -> String] = []

    /// Reserves room for the message's pieces.
    public init(literalCapacity: Int, interpolationCount: Int) {
        pieces.reserveCapacity(2 * interpolationCount + 1)
    }

    /// Literal text, shown as is.
    public mutating func appendLiteral(_ literal: String) { pieces.append { literal } }

    /// A string: redacted unless public (by default).
    public mutating func appendInterpolation(_ value: @autoclosure @escaping () -> String, align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto) {
        pieces.append { align.apply(LogSink.shown(value(), privacy: privacy, dynamic: true)) }
    }

    /// Any value that describes itself: redacted unless public (by default).
    public mutating func appendInterpolation<T: CustomStringConvertible>(_ value: @autoclosure @escaping () -> T, align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto) {
        pieces.append { align.apply(LogSink.shown(value().description, privacy: privacy, dynamic: true)) }
    }

    /// An error (Apple: `appendInterpolation(_:privacy:attributes:)` of `any Error`, so
    /// `logger.error("sync failed: \(error)")` compiles as on iOS): its description, redacted
    /// unless public (by default). `attributes` is accepted and unused, as Apple's tools
    /// read it and nothing here does.
    public mutating func appendInterpolation(_ error: @autoclosure @escaping () -> any Error, privacy: OSLogPrivacy = .auto, attributes: String = "") {
        pieces.append { LogSink.shown(String(describing: error()), privacy: privacy, dynamic: true) }
    }

    /// A type's name, shown.
    public mutating func appendInterpolation(_ value: @autoclosure @escaping () -> Any.Type, align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto) {
        pieces.append { align.apply(LogSink.shown(String(describing: value()), privacy: privacy, dynamic: false)) }
    }

    /// An integer: shown unless private. One overload per standard integer type, as Apple's:
    /// a plain generic one would lose to the `CustomStringConvertible` one, which redacts
    /// (`\(count)`, `\(42)`, `\(x ?? 0)` would print `<private>`). Disfavouring that one
    /// would let a generic win, but it takes an underscored attribute and would show an
    /// integer type of the app's own that Apple's log redacts.
    private mutating func appendInteger<T: BinaryInteger>(_ value: @escaping () -> T, format: OSLogIntegerFormatting, align: OSLogIntegerAlignment, privacy: OSLogPrivacy) {
        pieces.append { align.apply(LogSink.shown(format.apply(value()), privacy: privacy, dynamic: false)) }
    }

    /// An integer: shown unless private.
    public mutating func appendInterpolation(_ value: @autoclosure @escaping () -> Int, format: OSLogIntegerFormatting = .decimal, align: OSLogIntegerAlignment = .none, privacy: OSLogPrivacy = .auto) {
        appendInteger(value, format: format, align: align, privacy: privacy)
    }

    /// An integer: shown unless private.
    public mutating func appendInterpolation(_ value: @autoclosure @escaping () -> Int8, format: OSLogIntegerFormatting = .decimal, align: OSLogIntegerAlignment = .none, privacy: OSLogPrivacy = .auto) {
        appendInteger(value, format: format, align: align, privacy: privacy)
    }

    /// An integer: shown unless private.
    public mutating func appendInterpolation(_ value: @autoclosure @escaping () -> Int16, format: OSLogIntegerFormatting = .decimal, align: OSLogIntegerAlignment = .none, privacy: OSLogPrivacy = .auto) {
        appendInteger(value, format: format, align: align, privacy: privacy)
    }

    /// An integer: shown unless private.
    public mutating func appendInterpolation(_ value: @autoclosure @escaping () -> Int32, format: OSLogIntegerFormatting = .decimal, align: OSLogIntegerAlignment = .none, privacy: OSLogPrivacy = .auto) {
        appendInteger(value, format: format, align: align, privacy: privacy)
    }

    /// An integer: shown unless private.
    public mutating func appendInterpolation(_ value: @autoclosure @escaping () -> Int64, format: OSLogIntegerFormatting = .decimal, align: OSLogIntegerAlignment = .none, privacy: OSLogPrivacy = .auto) {
        appendInteger(value, format: format, align: align, privacy: privacy)
    }

    /// An integer: shown unless private.
    public mutating func appendInterpolation(_ value: @autoclosure @escaping () -> UInt, format: OSLogIntegerFormatting = .decimal, align: OSLogIntegerAlignment = .none, privacy: OSLogPrivacy = .auto) {
        appendInteger(value, format: format, align: align, privacy: privacy)
    }

    /// An integer: shown unless private.
    public mutating func appendInterpolation(_ value: @autoclosure @escaping () -> UInt8, format: OSLogIntegerFormatting = .decimal, align: OSLogIntegerAlignment = .none, privacy: OSLogPrivacy = .auto) {
        appendInteger(value, format: format, align: align, privacy: privacy)
    }

    /// An integer: shown unless private.
    public mutating func appendInterpolation(_ value: @autoclosure @escaping () -> UInt16, format: OSLogIntegerFormatting = .decimal, align: OSLogIntegerAlignment = .none, privacy: OSLogPrivacy = .auto) {
        appendInteger(value, format: format, align: align, privacy: privacy)
    }

    /// An integer: shown unless private.
    public mutating func appendInterpolation(_ value: @autoclosure @escaping () -> UInt32, format: OSLogIntegerFormatting = .decimal, align: OSLogIntegerAlignment = .none, privacy: OSLogPrivacy = .auto) {
        appendInteger(value, format: format, align: align, privacy: privacy)
    }

    /// An integer: shown unless private.
    public mutating func appendInterpolation(_ value: @autoclosure @escaping () -> UInt64, format: OSLogIntegerFormatting = .decimal, align: OSLogIntegerAlignment = .none, privacy: OSLogPrivacy = .auto) {
        appendInteger(value, format: format, align: align, privacy: privacy)
    }

    /// A floating-point number: shown unless private.
    public mutating func appendInterpolation(_ value: @autoclosure @escaping () -> Double, format: OSLogFloatFormatting = .fixed, align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto) {
        pieces.append { align.apply(LogSink.shown(format.apply(value()), privacy: privacy, dynamic: false)) }
    }

    /// A floating-point number: shown unless private.
    public mutating func appendInterpolation(_ value: @autoclosure @escaping () -> Float, format: OSLogFloatFormatting = .fixed, align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto) {
        pieces.append { align.apply(LogSink.shown(format.apply(Double(value())), privacy: privacy, dynamic: false)) }
    }

    /// A boolean: shown unless private.
    public mutating func appendInterpolation(_ value: @autoclosure @escaping () -> Bool, format: OSLogBoolFormat = .truth, privacy: OSLogPrivacy = .auto) {
        pieces.append {
            let flag = value()
            let text = format == .truth ? (flag ? "true" : "false") : (flag ? "YES" : "NO")
            return LogSink.shown(text, privacy: privacy, dynamic: false)
        }
    }
}
