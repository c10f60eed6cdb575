/// The rules every task identifier (and app identifier) follows: non-empty, at most
/// ``maximumLength`` bytes of UTF-8, and reverse-DNS.
///
/// Reverse-DNS here means at least two dot-separated labels, each non-empty and made of ASCII
/// letters, digits, `-` and `_`. The rules are stricter than Apple's (which accepts almost any
/// string) on purpose: identifiers become file names, SQLite keys, socket messages and CLI
/// arguments on Linux, and a typo such as a space or `..` is far easier to report at the
/// manifest than to diagnose later as "task never runs".
public enum TaskIdentifierRules {
    /// The longest identifier accepted, in bytes of UTF-8 (not characters, since storage and
    /// the wire protocol limit bytes).
    public static let maximumLength = 255

    /// Why `identifier` is not a valid task identifier, or `nil` when it is.
    ///
    /// Checks run in order: empty, too long, then reverse-DNS shape.
    public static func problem(with identifier: String) -> TaskIdentifierProblem? {
        if identifier.isEmpty { return .empty }
        let bytes = identifier.utf8.count
        if bytes > maximumLength { return .tooLong(bytes: bytes) }
        if shapeDefect(of: identifier) != nil { return .notReverseDNS(identifier) }
        return nil
    }

    /// Why `entry` is not a valid `BGTaskSchedulerPermittedIdentifiers` entry, or `nil` when
    /// it is.
    ///
    /// An entry is either an identifier or a wildcard `prefix.*` whose `prefix` is itself a
    /// valid identifier (so `com.*` or a bare `*` are refused: they would permit far more than
    /// one app's work). The length limit applies to the whole entry as written.
    public static func problem(withPermittedEntry entry: String) -> TaskIdentifierProblem? {
        guard let prefix = wildcardPrefix(of: entry) else { return problem(with: entry) }
        if entry.utf8.count > maximumLength { return .tooLong(bytes: entry.utf8.count) }
        if prefix.isEmpty || shapeDefect(of: prefix) != nil { return .notReverseDNS(entry) }
        return nil
    }

    /// The part before a trailing `.*`, or `nil` when `entry` is not a wildcard entry.
    ///
    /// Shared with ``AppManifest/permits(identifier:allowWildcard:)`` so that what validation
    /// accepts as a wildcard and what matching treats as one can never drift apart.
    static func wildcardPrefix(of entry: String) -> Substring? {
        guard entry.hasSuffix(".*") else { return nil }
        return entry.dropLast(2)
    }

    /// What is wrong with the reverse-DNS shape of `text`, or `nil` when it is well formed.
    /// Kept separate from the public enum so the problem's description can say precisely
    /// which rule was broken without the enum having to carry the reason.
    static func shapeDefect<S: StringProtocol>(of text: S) -> ShapeDefect? {
        var labels = 0
        var labelLength = 0
        for scalar in text.unicodeScalars {
            if scalar == "." {
                if labelLength == 0 { return .emptyLabel }
                labels += 1
                labelLength = 0
            } else if isLabelCharacter(scalar) {
                labelLength += 1
            } else {
                return .badCharacter(scalar)
            }
        }
        if labelLength == 0 { return .emptyLabel }
        labels += 1
        return labels >= 2 ? nil : .singleLabel
    }

    /// ASCII letters, digits, `-` and `_`: the characters that are safe unquoted in file
    /// names, shells and SQL alike.
    private static func isLabelCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true  // 0-9, A-Z, a-z
        case 0x2D, 0x5F: return true  // "-", "_"
        default: return false
        }
    }

    /// The ways a string can fail the reverse-DNS shape.
    enum ShapeDefect: Hashable {
        /// A leading or trailing dot, or `..`.
        case emptyLabel
        /// No dot at all.
        case singleLabel
        /// A character outside ASCII letters, digits, `-` and `_`.
        case badCharacter(Unicode.Scalar)

        /// The broken rule as a clause about `subject` ("it", or "the prefix before '.*'").
        func explanation(subject: String = "it") -> String {
            switch self {
            case .emptyLabel:
                return "\(subject) has an empty label (a leading or trailing dot, or '..')"
            case .singleLabel:
                return "\(subject) has only one label (reverse-DNS needs at least one dot)"
            case .badCharacter(let scalar):
                // A control character is named, never printed: messages go to terminals.
                let shown = scalar == " " ? "a space"
                    : scalar.properties.generalCategory == .control ? "the control character U+\(hex(scalar.value))"
                    : "'\(scalar)' (U+\(hex(scalar.value)))"
                return "\(subject) contains \(shown)"
            }
        }

        private func hex(_ value: UInt32) -> String {
            let digits = String(value, radix: 16, uppercase: true)
            return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        }
    }
}

/// Why a string is not a valid task identifier (see ``TaskIdentifierRules``).
public enum TaskIdentifierProblem: Hashable, Sendable, CustomStringConvertible {
    /// The identifier is the empty string.
    case empty
    /// The identifier is longer than ``TaskIdentifierRules/maximumLength`` bytes of UTF-8;
    /// `bytes` is its actual length.
    case tooLong(bytes: Int)
    /// The identifier (the associated value, as written) is not reverse-DNS.
    case notReverseDNS(String)

    /// What is wrong and what a good identifier looks like, for example
    /// `"com example.sync" is not reverse-DNS: it contains a space; ...`.
    public var description: String {
        switch self {
        case .empty:
            return "the identifier is empty; \(Self.advice)"
        case .tooLong(let bytes):
            return "the identifier is \(bytes) bytes of UTF-8, longer than the maximum of "
                + "\(TaskIdentifierRules.maximumLength); \(Self.advice)"
        case .notReverseDNS(let identifier):
            return "\"\(StrictJSON.escaped(identifier))\" is not reverse-DNS: \(Self.reason(for: identifier)); \(Self.advice)"
        }
    }

    private static let advice =
        "use at least two dot-separated labels of ASCII letters, digits, '-' and '_', "
        + "for example com.example.app.refresh"

    /// Re-derives the broken rule from the identifier. A wildcard entry is judged by its
    /// prefix, so `com.*` reports "only one label" rather than blaming the `*`.
    private static func reason(for identifier: String) -> String {
        let subject = TaskIdentifierRules.wildcardPrefix(of: identifier) ?? Substring(identifier)
        if subject.isEmpty { return "a wildcard needs a prefix, as in com.example.app.export.*" }
        if let defect = TaskIdentifierRules.shapeDefect(of: subject) {
            if case .badCharacter("*") = defect {
                return "'*' is only allowed as a trailing '.*' wildcard in a manifest entry"
            }
            let isWildcard = subject.endIndex != identifier.endIndex
            return defect.explanation(subject: isWildcard ? "the prefix before '.*'" : "it")
        }
        // Valid shape as a prefix, but a wildcard where a plain identifier was needed.
        return "a '.*' wildcard is only allowed in manifest entries, not as an identifier"
    }
}
