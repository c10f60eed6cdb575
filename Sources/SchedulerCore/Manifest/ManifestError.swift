/// A manifest that cannot be used: unreadable, not a property list or JSON, or with a key of
/// the wrong type or value. Every error names the file and, where there is one, the key
/// (with the index for array elements), and says what was expected and what was found,
/// because a developer fixing an Info.plist needs exactly those three things.
public struct ManifestError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The category of a manifest error.
    ///
    /// A struct of static constants rather than an enum so that new categories can be added
    /// without breaking callers that switch over the existing ones.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The category's stable name, for example `wrong-type`.
        public let rawValue: String

        /// Wraps a category name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The file could not be read: missing, a directory, or no permission.
        public static let unreadable = Code(rawValue: "unreadable")
        /// The content is empty or is not a property list (XML or binary) or JSON document.
        public static let malformed = Code(rawValue: "malformed")
        /// A value has the wrong type, for example a string where an array was expected.
        public static let wrongType = Code(rawValue: "wrong-type")
        /// A value has the right type but is not acceptable: an invalid or duplicate identifier.
        public static let invalidValue = Code(rawValue: "invalid-value")
        /// A required key is absent. None of the keys parsed today is required (Apple treats
        /// missing lists as empty); the code exists for callers that require one, such as a
        /// daemon that needs `CFBundleIdentifier` to name the app.
        public static let missingKey = Code(rawValue: "missing-key")

        /// The category's name, as in logs.
        public var description: String { rawValue }
    }

    /// The category of the error.
    public var code: Code
    /// The manifest's source: its file path, or `code` for a manifest built in code.
    public var file: String
    /// The offending key, for example `BGTaskSchedulerPermittedIdentifiers[2]`; `nil` when
    /// the problem concerns the whole file.
    public var key: String?
    /// What was expected and what was found.
    public var message: String

    /// Creates an error.
    public init(code: Code, file: String, key: String? = nil, message: String) {
        self.code = code
        self.file = file
        self.key = key
        self.message = message
    }

    /// `<file>: <key>: <message>`, or `<file>: <message>` when there is no key: the shape
    /// compilers use, so editors and terminals can jump to the file.
    public var description: String {
        if let key { return "\(file): \(key): \(message)" }
        return "\(file): \(message)"
    }
}
