import Foundation

/// Logs a C-style format (Apple: `os_log(_:dso:log:type:_:)`). A conversion may carry a
/// privacy modifier, `%{public}@` or `%{private}d`; without one, strings and objects (`%@`,
/// `%s`) are redacted and numbers shown, as Apple's log does. A format whose arguments do
/// not match is written as is, with its arguments after it, never read past them.
public func os_log(_ message: StaticString, dso: UnsafeRawPointer? = #dsohandle, log: OSLog = .default, type: OSLogType = .default, _ args: any CVarArg...) {
    guard log.isEnabled(type: type) else { return }
    LogSink.write(type, log: log, OSLogFormat.render("\(message)", args))
}

/// Logs a C-style format at `type` (Apple: `os_log(_:dso:log:_:_:)`, the type first).
public func os_log(_ type: OSLogType, dso: UnsafeRawPointer? = #dsohandle, log: OSLog = .default, _ message: StaticString, _ args: any CVarArg...) {
    guard log.isEnabled(type: type) else { return }
    LogSink.write(type, log: log, OSLogFormat.render("\(message)", args))
}

/// Logs a message written as Logger's are, with interpolations and their privacy
/// (Apple: `os_log(_:log:_:)`, iOS 14). A plain literal with no interpolation goes to the
/// C-format form instead (this one is disfavored), which writes it the same unless it holds a `%`.
@_disfavoredOverload
public func os_log(_ logLevel: OSLogType = .default, log logObject: OSLog = .default, _ message: OSLogMessage) {
    guard logObject.isEnabled(type: logLevel) else { return }
    LogSink.write(logLevel, log: logObject, message.rendered())
}

/// Logs a message to the default log at the default level (Apple: `os_log(_:)`, iOS 14).
@_disfavoredOverload
public func os_log(_ message: OSLogMessage) {
    os_log(.default, log: .default, message)
}

/// The C-style formats of `os_log`.
enum OSLogFormat {
    /// `format` with each conversion replaced by its argument, as its privacy shows it.
    static func render(_ format: String, _ args: [any CVarArg]) -> String {
        var output = ""
        var remaining = args[...]
        var index = format.startIndex
        while index < format.endIndex {
            let character = format[index]
            guard character == "%" else {
                output.append(character)
                index = format.index(after: index)
                continue
            }
            var cursor = format.index(after: index)
            if cursor < format.endIndex, format[cursor] == "%" {
                output.append("%")
                index = format.index(after: cursor)
                continue
            }
            // Optional {modifiers}: public, private, sensitive (and others Apple knows).
            var privacy = OSLogPrivacy.auto
            if cursor < format.endIndex, format[cursor] == "{", let close = format[cursor...].firstIndex(of: "}") {
                let modifiers = format[format.index(after: cursor)..<close].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                if modifiers.contains("public") { privacy = .public }
                if modifiers.contains("private") { privacy = .private }
                if modifiers.contains("sensitive") { privacy = .sensitive }
                cursor = format.index(after: close)
            }
            // Flags, width, precision and length, then the conversion character. A `*` width
            // or precision takes the next argument (an Int32, as C code passes it), as printf
            // and Apple's os_log do: read as a conversion, it shifted every later argument one
            // slot, so a private one showed where a public one was asked for (an outside
            // probe: `%.*s|%{private}s|%{public}s` printed the secret).
            var specification = "%"
            var inPrecision = false
            while cursor < format.endIndex, "-+ #0123456789.hlqLzjt*".contains(format[cursor]) {
                let character = format[cursor]
                cursor = format.index(after: cursor)
                guard character == "*" else {
                    if character == "." { inPrecision = true }
                    specification.append(character)
                    continue
                }
                let value = remaining.popFirst().flatMap(Self.integer)
                if inPrecision {
                    // A negative precision, or none given, is as if none were written (the `.`
                    // goes; a second `*` there has nothing left to take away).
                    if let value, value >= 0 { specification += String(value) } else if specification.hasSuffix(".") { specification.removeLast() }
                } else if let value {
                    // A negative width is a left-justified one.
                    specification += (value < 0 ? "-" : "") + String(value.magnitude)
                }
            }
            guard cursor < format.endIndex else {
                output += format[index...]
                break
            }
            let conversion = format[cursor]
            specification = Self.bounded(specification)
            specification.append(conversion)
            index = format.index(after: cursor)
            guard let argument = remaining.popFirst() else {
                // Fewer arguments than conversions: the conversion is shown, as written
                // but for a width or precision beyond the bound.
                output += specification
                continue
            }
            var dynamic = conversion == "@" || conversion == "s"
            var text: String
            switch conversion {
            case "@", "s":
                // A C string given to `%s` (`strerror(errno)`, as C-interop code passes it):
                // its text, not its address (an outside probe).
                if conversion == "s", let pointer = argument as? UnsafePointer<CChar> {
                    text = String(cString: pointer)
                } else if conversion == "s", let pointer = argument as? UnsafeMutablePointer<CChar> {
                    text = String(cString: pointer)
                } else {
                    text = String(describing: argument)
                }
                text = Self.fitted(text, to: specification)
            case let floating where "fFeEgGaA".contains(floating) && specification.contains("L"):
                // `L` asks for a long double, which a Swift caller never passes: formatted as
                // the Double it is, not read past it (it printed nan).
                text = String(format: specification.replacingOccurrences(of: "L", with: ""), argument)
            case "d", "i", "u", "x", "X", "o", "c", "f", "F", "e", "E", "g", "G", "a", "A", "p":
                text = String(format: specification, argument)
            default:
                // A conversion this does not know (`%S`, `%n`...) shows its argument as text:
                // a number as a number's privacy, anything else as private as a string's.
                text = String(describing: argument)
                dynamic = !(argument is any BinaryInteger || argument is any BinaryFloatingPoint || argument is Bool)
            }
            output += LogSink.shown(text, privacy: privacy, dynamic: dynamic)
        }
        // Arguments beyond the conversions are never shown, as printf and Apple's os_log
        // ignore them: appended, a dynamic string passed that way escaped its privacy.
        return output
    }

    /// `argument` as a width or precision (`*`): an integer of any width, else `nil`.
    static func integer(_ argument: any CVarArg) -> Int? {
        guard let integer = argument as? any BinaryInteger else { return nil }
        return Int(clamping: integer)
    }

    /// `text` cut to the specification's precision (characters) and padded to its width,
    /// on the left unless it has the `-` flag, as printf fits a `%s`.
    static func fitted(_ text: String, to specification: String) -> String {
        var rest = specification.dropFirst()  // the %
        let flags = rest.prefix { "-+ #0".contains($0) }
        rest = rest.dropFirst(flags.count)
        let width = Int(rest.prefix { $0.isASCII && $0.isNumber }) ?? 0
        rest = rest.drop { $0.isASCII && $0.isNumber }
        var fitted = text
        if rest.first == "." {
            let precision = Int(rest.dropFirst().prefix { $0.isASCII && $0.isNumber }) ?? 0
            fitted = String(fitted.prefix(precision))
        }
        let padding = String(repeating: " ", count: max(0, width - fitted.count))
        return flags.contains("-") ? fitted + padding : padding + fitted
    }

    /// The widest field and the most digits a conversion may ask for: a width or precision
    /// beyond it is taken as this (`%.99999999999d` stopped the program inside
    /// `String(format:)`, `%999999999d` built a gigabyte), as Apple bounds a message's size.
    static let maximumFieldWidth = 1_024

    /// `specification` (flags, width, precision and length after the `%`) with each number
    /// in it above ``maximumFieldWidth`` brought down to it.
    static func bounded(_ specification: String) -> String {
        var result = ""
        var digits = ""
        func flush() {
            // Leading zeros are the zero-padding flag, kept; more than four digits after them
            // is beyond the bound whatever they are (read without overflow).
            let zeros = digits.prefix { $0 == "0" }
            let number = digits.dropFirst(zeros.count)
            if number.count > 4 || (Int(number) ?? 0) > maximumFieldWidth { digits = zeros + String(maximumFieldWidth) }
            result += digits
            digits = ""
        }
        for character in specification {
            if character.isASCII, character.isNumber {
                digits.append(character)
            } else {
                flush()
                result.append(character)
            }
        }
        flush()
        return result
    }
}


/// Whether messages of `type` sent to `log` are written (Apple: `os_log_type_enabled`), for
/// code that skips building a costly debug message: as ``OSLog/isEnabled(type:)`` answers
/// (`BGTASK_LOG` decides the least level written; a disabled log writes nothing).
public func os_log_type_enabled(_ log: OSLog, _ type: OSLogType) -> Bool {
    log.isEnabled(type: type)
}
