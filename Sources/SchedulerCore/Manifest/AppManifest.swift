import Foundation

/// The Info.plist keys that say what an app may schedule (docs/system.md, "Declare"): the task
/// identifiers it may submit and the background modes it declares.
///
/// On Linux the manifest is a file next to the executable, in any of the formats Apple's
/// tools produce (XML or binary property list) or JSON. Parsing is pure: this type never
/// touches the file system; `AppManifest.load(contentsOf:)` in BackgroundTasks reads files.
public struct AppManifest: Hashable, Sendable {
    /// The names of the keys this type reads, as they appear in an Info.plist.
    public enum Key {
        /// `CFBundleIdentifier`: the app's reverse-DNS identifier (optional).
        public static let bundleIdentifier = "CFBundleIdentifier"
        /// `BGTaskSchedulerPermittedIdentifiers`: the task identifiers the app may submit.
        public static let permittedIdentifiers = "BGTaskSchedulerPermittedIdentifiers"
        /// `UIBackgroundModes`: declared modes such as `fetch` and `processing`.
        public static let backgroundModes = "UIBackgroundModes"
        /// `CFBundleExecutable`: the app's executable, relative to the manifest's directory
        /// or absolute (optional; `bgtaskd` requires it to launch the app).
        public static let executable = "CFBundleExecutable"
        /// `BGTaskLaunchArguments`: the arguments `bgtaskd` passes to the executable after
        /// its name (optional; not an Apple key: iOS launches apps without arguments).
        public static let launchArguments = "BGTaskLaunchArguments"
        /// `UIApplicationSceneManifest`: the app's scenes; its
        /// `UISceneConfigurations.UIWindowSceneSessionRoleApplication` entries name the
        /// scene delegate classes (optional).
        public static let sceneManifest = "UIApplicationSceneManifest"
    }

    /// One entry of `UIApplicationSceneManifest.UISceneConfigurations.UIWindowSceneSessionRoleApplication`:
    /// a window scene configuration, as iOS reads it to connect the app's scene.
    public struct SceneConfiguration: Hashable, Sendable {
        /// `UISceneConfigurationName` (optional).
        public var name: String?
        /// `UISceneDelegateClassName`, as written (Xcode's `$(PRODUCT_MODULE_NAME).SceneDelegate`
        /// is expanded by the app, which knows its module).
        public var delegateClassName: String?

        /// A configuration.
        public init(name: String? = nil, delegateClassName: String? = nil) {
            self.name = name
            self.delegateClassName = delegateClassName
        }
    }

    /// The app's identifier (`CFBundleIdentifier`), when the manifest declares one.
    public var appID: AppID?
    /// `BGTaskSchedulerPermittedIdentifiers`, in manifest order (kept so that listings and
    /// error indices match what the developer wrote). Entries are identifiers or `prefix.*`
    /// wildcards.
    public var permittedIdentifiers: [String] {
        didSet { lookup = PermittedLookup(permittedIdentifiers) }
    }
    /// `UIBackgroundModes`, for example `fetch` (refresh) and `processing`. Modes this system
    /// does not know (`audio`, `location`, ...) are kept: real Info.plists list them.
    public var backgroundModes: Set<String>
    /// Where the manifest came from, for error messages: a file path, or `code`.
    public var source: String?
    /// `CFBundleExecutable` as written: a path relative to the manifest's directory, or an
    /// absolute one; `nil` when the manifest has none (the embedded scheduler needs none,
    /// `bgtaskd` refuses to install such an app). Resolving and checking the file is the
    /// installer's job (`BGAppInstallation` in BackgroundTasks): parsing never touches files.
    public var executableName: String?
    /// `BGTaskLaunchArguments`: what `bgtaskd` passes to the executable after its name, as
    /// an argv array (never through a shell); empty when the key is absent.
    public var launchArguments: [String]
    /// The window scene configurations of `UIApplicationSceneManifest`, in order; empty
    /// when the app declares no scenes.
    public var sceneConfigurations: [SceneConfiguration] = []

    /// ``permittedIdentifiers`` indexed for ``permits(identifier:allowWildcard:)``, which
    /// runs on every submit: wildcard prefixes apart, and the exact entries of a long list
    /// in a set (by UTF-8 bytes). A short list is scanned instead: building a set for every
    /// app costs more than it saves (bgtaskd builds 10,000 manifests at start-up).
    private var lookup: PermittedLookup

    private struct PermittedLookup: Hashable, Sendable {
        /// Lists with more exact entries than this get a set.
        static let scanLimit = 16
        /// The exact entries, for a list longer than ``scanLimit``.
        var exact: Set<[UInt8]>?
        var wildcardPrefixes: [[UInt8]] = []

        init(_ entries: [String]) {
            var exactCount = 0
            for entry in entries {
                if let prefix = TaskIdentifierRules.wildcardPrefix(of: entry) {
                    wildcardPrefixes.append(Array(prefix.utf8))
                } else {
                    exactCount += 1
                }
            }
            guard exactCount > Self.scanLimit else { return }
            var exact = Set<[UInt8]>(minimumCapacity: exactCount)
            for entry in entries where TaskIdentifierRules.wildcardPrefix(of: entry) == nil { exact.insert(Array(entry.utf8)) }
            self.exact = exact
        }
    }

    /// Creates a manifest in code. Nothing is checked here; call ``validate()`` to apply the
    /// same rules as ``parse(_:source:)``.
    public init(
        appID: AppID? = nil,
        permittedIdentifiers: [String],
        backgroundModes: Set<String>,
        source: String? = nil,
        executableName: String? = nil,
        launchArguments: [String] = []
    ) {
        self.appID = appID
        self.permittedIdentifiers = permittedIdentifiers
        self.backgroundModes = backgroundModes
        self.source = source
        self.executableName = executableName
        self.launchArguments = launchArguments
        self.lookup = PermittedLookup(permittedIdentifiers)
    }

    /// Whether the manifest permits submitting `identifier`.
    ///
    /// An entry permits its exact identifier. A wildcard entry `prefix.*` permits
    /// `prefix.<anything non-empty>`, but only when `allowWildcard` is set (Apple allows
    /// wildcards for continued processing only) and never the bare `prefix` itself.
    /// Comparison is by UTF-8 bytes, not Unicode equivalence, because identifiers are keys
    /// in the store and on the wire, where two spellings of "é" are different keys.
    public func permits(identifier: String, allowWildcard: Bool) -> Bool {
        if let exact = lookup.exact {
            if exact.contains(Array(identifier.utf8)) { return true }
        } else if permittedIdentifiers.contains(where: { $0.utf8.elementsEqual(identifier.utf8) && TaskIdentifierRules.wildcardPrefix(of: $0) == nil }) {
            return true
        }
        guard allowWildcard, !lookup.wildcardPrefixes.isEmpty else { return false }
        let wanted = Array(identifier.utf8)
        return lookup.wildcardPrefixes.contains { prefix in
            // Needs the prefix, a dot, and at least one more byte.
            wanted.count > prefix.count + 1 && wanted.starts(with: prefix) && wanted[prefix.count] == UInt8(ascii: ".")
        }
    }

    /// Whether `UIBackgroundModes` lists `mode` (for example `fetch` or `processing`).
    /// `remote-notification`: the mode that lets the system wake the app with a push.
    public static let remoteNotificationMode = "remote-notification"

    public func hasBackgroundMode(_ mode: String) -> Bool {
        backgroundModes.contains(mode)
    }

    /// What this manifest does not allow of `request` (`nil` when it allows it): the one
    /// reading of the manifest that a submission's check (`SchedulerEngine.checkPermitted`)
    /// and a reinstall's removal of what is no longer allowed both word their own way.
    public struct Refusal: Hashable, Sendable {
        /// Whether `BGTaskSchedulerPermittedIdentifiers` lists the identifier (a
        /// continued-processing request matching a `prefix.*` entry counts).
        public var isListed: Bool
        /// The background mode the request's kind needs and the manifest does not declare.
        public var missingMode: String?
    }

    /// What this manifest does not allow of `request`, or `nil`. A remote wake (an app
    /// refresh the system files with a payload) needs `remote-notification`, not `fetch`, as
    /// iOS wakes such an app for a silent push without the fetch mode.
    public func refusal(of request: PendingRequest) -> Refusal? {
        let isListed = permits(identifier: request.identifier, allowWildcard: request.kind == .continuedProcessing)
        let remoteWake = request.remoteNotificationPayload != nil && hasBackgroundMode(Self.remoteNotificationMode)
        let missingMode = request.kind.requiredBackgroundMode.flatMap { hasBackgroundMode($0) || remoteWake ? nil : $0 }
        return isListed && missingMode == nil ? nil : Refusal(isListed: isListed, missingMode: missingMode)
    }

    /// Checks the rules ``parse(_:source:)`` applies: `CFBundleIdentifier` is reverse-DNS,
    /// every permitted entry is a valid identifier or `prefix.*` wildcard, and no entry is
    /// listed twice; `CFBundleExecutable` names a file (not empty, not `.` or `..`, no NUL);
    /// `BGTaskLaunchArguments` has at most ``maximumLaunchArguments`` entries of at most
    /// ``maximumLaunchArgumentBytes`` bytes each, none with a NUL. For manifests built in
    /// code; errors name ``source`` (or `code`).
    public func validate() throws(ManifestError) {
        let file = source ?? "code"
        if let appID, let problem = TaskIdentifierRules.problem(with: appID.rawValue) {
            throw ManifestError(
                code: .invalidValue, file: file, key: Key.bundleIdentifier,
                message: "expected a reverse-DNS app identifier, but \(problem)")
        }
        if let executableName, let problem = Self.problem(withExecutableName: executableName) {
            throw ManifestError(
                code: .invalidValue, file: file, key: Key.executable,
                message: "expected the path of the app's executable (relative to the manifest's directory, or absolute), but \(problem)")
        }
        if launchArguments.count > Self.maximumLaunchArguments {
            throw ManifestError(
                code: .invalidValue, file: file, key: Key.launchArguments,
                message: "expected at most \(Self.maximumLaunchArguments) arguments, found \(launchArguments.count)")
        }
        for (index, argument) in launchArguments.enumerated() {
            let key = "\(Key.launchArguments)[\(index)]"
            // An argv entry is a C string: a NUL would silently cut it short at exec.
            if argument.utf8.contains(0) {
                throw ManifestError(
                    code: .invalidValue, file: file, key: key,
                    message: "expected an argument without NUL characters (exec would cut it at the first one), found one")
            }
            let bytes = argument.utf8.count
            if bytes > Self.maximumLaunchArgumentBytes {
                throw ManifestError(
                    code: .invalidValue, file: file, key: key,
                    message: "expected an argument of at most \(Self.maximumLaunchArgumentBytes) bytes, found \(bytes) bytes")
            }
        }
        var firstIndex: [String: Int] = [:]
        for (index, entry) in permittedIdentifiers.enumerated() {
            let key = "\(Key.permittedIdentifiers)[\(index)]"
            if let problem = TaskIdentifierRules.problem(withPermittedEntry: entry) {
                throw ManifestError(
                    code: .invalidValue, file: file, key: key,
                    message: "expected a task identifier or a prefix.* wildcard, but \(problem)")
            }
            if let earlier = firstIndex[entry] {
                throw ManifestError(
                    code: .invalidValue, file: file, key: key,
                    message: "expected each identifier once, but \"\(entry)\" is also at index \(earlier); remove one of them")
            }
            firstIndex[entry] = index
        }
    }

    /// Parses and validates a manifest.
    ///
    /// The format is detected from the content, not the file name, because Info.plists are
    /// often converted in place (`plutil -convert binary1`): `bplist` magic means a binary
    /// property list, a leading `<` an XML property list, anything else JSON. Unknown keys
    /// are ignored, as real Info.plists carry many. Every key read is optional here
    /// (`CFBundleIdentifier`, `BGTaskSchedulerPermittedIdentifiers`, `UIBackgroundModes`,
    /// and the daemon's `CFBundleExecutable` and `BGTaskLaunchArguments`); the daemon's
    /// installer requires the ones it needs (docs/manifest.md).
    ///
    /// - Parameters:
    ///   - data: the file's content.
    ///   - source: the file path (or `code`), used in errors and kept in ``source``.
    /// - Throws: ``ManifestError`` naming `source` and the offending key: `.malformed` for
    ///   empty or unparsable data, `.wrongType` for values of the wrong type (including a
    ///   top level that is not a dictionary), `.invalidValue` for invalid or duplicate
    ///   identifiers.
    public static func parse(_ data: Data, source: String) throws(ManifestError) -> AppManifest {
        guard data.count <= maximumSize else {
            throw ManifestError(
                code: .malformed, file: source,
                message: "expected a manifest of at most \(BoundedFile.describe(bytes: maximumSize)), found \(data.count) bytes")
        }
        let root = try decodeDocument(data, source: source)
        guard let dictionary = SerializedValue.dictionary(root) else {
            throw ManifestError(
                code: .wrongType, file: source,
                message: "expected a dictionary at the top level, found \(SerializedValue.describe(root))")
        }

        var appID: AppID?
        if let value = dictionary[Key.bundleIdentifier] {
            guard let string = SerializedValue.string(value) else {
                throw ManifestError(
                    code: .wrongType, file: source, key: Key.bundleIdentifier,
                    message: "expected a string, found \(SerializedValue.describe(value))")
            }
            appID = AppID(string)
        }
        var executableName: String?
        if let value = dictionary[Key.executable] {
            guard let string = SerializedValue.string(value) else {
                throw ManifestError(
                    code: .wrongType, file: source, key: Key.executable,
                    message: "expected a string, found \(SerializedValue.describe(value))")
            }
            executableName = string
        }
        let permitted = try stringArray(dictionary, key: Key.permittedIdentifiers, source: source)
        let modes = try stringArray(dictionary, key: Key.backgroundModes, source: source)
        let arguments = try stringArray(dictionary, key: Key.launchArguments, source: source, limit: maximumLaunchArguments)

        var manifest = AppManifest(
            appID: appID, permittedIdentifiers: permitted, backgroundModes: Set(modes), source: source,
            executableName: executableName, launchArguments: arguments)
        manifest.sceneConfigurations = try sceneConfigurations(dictionary, source: source)
        try manifest.validate()
        return manifest
    }

    /// Apple's `UIBackgroundModes` values: any other is kept (iOS ignores what it does not
    /// know), but one of these spelt in another case is a mistake (`Processing` declares
    /// nothing on iOS either).
    static let knownBackgroundModes: Set<String> = [
        "audio", "location", "voip", "external-accessory", "bluetooth-central", "bluetooth-peripheral",
        "fetch", "remote-notification", "processing", "nearby-interaction", "push-to-talk",
    ]

    /// Refuses one of Apple's modes in another case, naming the entry: the mode it was meant
    /// to declare would be missing without a word. Checked when an app is installed with
    /// bgtaskd (`BGAppInstallation`), not at every parse: an app installed before this rule
    /// still launches (its manifest is read again at each launch). A mode listed twice is
    /// taken once, as iOS takes it.
    public func checkBackgroundModeSpelling() throws(ManifestError) {
        for mode in backgroundModes.sorted() where !Self.knownBackgroundModes.contains(mode) {
            if let known = Self.knownBackgroundModes.first(where: { $0.lowercased() == mode.lowercased() }) {
                throw ManifestError(code: .invalidValue, file: source ?? "code", key: Key.backgroundModes, message: "expected \"\(known)\" (modes are case-sensitive: iOS would not take \"\(mode)\" for it either), found \"\(mode)\"")
            }
        }
    }

    /// What is wrong with `name` as a `CFBundleExecutable`, or `nil` when it can name a
    /// file: not empty, no NUL (a path is a C string), and not `.` or `..` (directories,
    /// never an executable). Slashes are allowed: `bin/app` is relative to the manifest.
    static func problem(withExecutableName name: String) -> String? {
        if name.isEmpty { return "it is empty" }
        if name.utf8.contains(0) { return "it contains a NUL character" }
        if name == "." || name == ".." { return "\"\(name)\" names a directory" }
        if name.utf8.count > maximumExecutableNameBytes {
            return "it is \(name.utf8.count) bytes long, and a path may have at most \(maximumExecutableNameBytes)"
        }
        return nil
    }

    /// The window scene configurations under `UIApplicationSceneManifest`; each level is
    /// optional, and one of the wrong type is refused with its key path.
    private static func sceneConfigurations(_ dictionary: [String: Any], source: String) throws(ManifestError) -> [SceneConfiguration] {
        func wrongType(_ key: String, _ expected: String, _ value: Any) -> ManifestError {
            ManifestError(code: .wrongType, file: source, key: key, message: "expected \(expected), found \(SerializedValue.describe(value))")
        }
        guard let value = dictionary[Key.sceneManifest] else { return [] }
        guard let sceneManifest = SerializedValue.dictionary(value) else { throw wrongType(Key.sceneManifest, "a dictionary", value) }
        let configurationsKey = Key.sceneManifest + ".UISceneConfigurations"
        guard let configurationsValue = sceneManifest["UISceneConfigurations"] else { return [] }
        guard let configurations = SerializedValue.dictionary(configurationsValue) else { throw wrongType(configurationsKey, "a dictionary", configurationsValue) }
        let roleKey = configurationsKey + ".UIWindowSceneSessionRoleApplication"
        guard let roleValue = configurations["UIWindowSceneSessionRoleApplication"] else { return [] }
        guard let entries = roleValue as? [Any] else { throw wrongType(roleKey, "an array of dictionaries", roleValue) }
        guard entries.count <= maximumSceneConfigurations else {
            throw ManifestError(code: .invalidValue, file: source, key: roleKey, message: "expected at most \(maximumSceneConfigurations) entries, found \(entries.count)")
        }
        var result: [SceneConfiguration] = []
        for (index, entryValue) in entries.enumerated() {
            let entryKey = "\(roleKey)[\(index)]"
            guard let entry = SerializedValue.dictionary(entryValue) else { throw wrongType(entryKey, "a dictionary", entryValue) }
            var configuration = SceneConfiguration()
            for (field, path) in [("UISceneConfigurationName", \SceneConfiguration.name), ("UISceneDelegateClassName", \SceneConfiguration.delegateClassName)] {
                guard let fieldValue = entry[field] else { continue }
                guard let string = SerializedValue.string(fieldValue) else { throw wrongType("\(entryKey).\(field)", "a string", fieldValue) }
                configuration[keyPath: path] = string
            }
            result.append(configuration)
        }
        return result
    }

    /// The most window scene configurations a manifest may list.
    public static let maximumSceneConfigurations = 64

    /// The array of strings under `key`; empty when the key is absent (Apple's behaviour).
    private static func stringArray(
        _ dictionary: [String: Any], key: String, source: String, limit: Int = maximumIdentifiers
    ) throws(ManifestError) -> [String] {
        guard let value = dictionary[key] else { return [] }
        guard let array = value as? [Any] else {
            throw ManifestError(
                code: .wrongType, file: source, key: key,
                message: "expected an array of strings, found \(SerializedValue.describe(value))")
        }
        guard array.count <= limit else {
            throw ManifestError(
                code: .invalidValue, file: source, key: key,
                message: "expected at most \(limit) entries, found \(array.count)")
        }
        var strings: [String] = []
        strings.reserveCapacity(array.count)
        for (index, element) in array.enumerated() {
            guard let string = SerializedValue.string(element) else {
                throw ManifestError(
                    code: .wrongType, file: source, key: "\(key)[\(index)]",
                    message: "expected a string, found \(SerializedValue.describe(element))")
            }
            strings.append(string)
        }
        return strings
    }

    /// The largest manifest read (a real Info.plist is a few KiB).
    public static let maximumSize = 1 << 20
    /// The most entries `BGTaskSchedulerPermittedIdentifiers` or `UIBackgroundModes` may list.
    public static let maximumIdentifiers = 10_000
    /// The most entries `BGTaskLaunchArguments` may list.
    public static let maximumLaunchArguments = 256
    /// The longest `BGTaskLaunchArguments` entry, in UTF-8 bytes.
    public static let maximumLaunchArgumentBytes = 4096
    /// The longest `CFBundleExecutable`, in UTF-8 bytes: Linux's `PATH_MAX`, counting the
    /// terminating NUL, so longer cannot be opened.
    public static let maximumExecutableNameBytes = 4095

    /// Decodes the document with the parser its first bytes call for.
    private static func decodeDocument(_ data: Data, source: String) throws(ManifestError) -> Any {
        let bytes = significantBytes(of: data)
        guard let first = bytes.first else {
            let what = data.isEmpty ? "the file is empty" : "the file contains only whitespace"
            throw ManifestError(
                code: .malformed, file: source,
                message: "expected a property list or JSON document, but \(what)")
        }
        // A UTF-16 byte-order mark: an XML property list may be UTF-16, JSON may not.
        let isUTF16 = data.starts(with: [0xFE, 0xFF]) || data.starts(with: [0xFF, 0xFE])
        // The XML of a UTF-16 property list, as UTF-8, for the duplicate-key scan.
        var utf16XML: Data?
        if isUTF16, !data.starts(with: [0xFF, 0xFE, 0x00, 0x00]) {
            let text = String(data: data, encoding: .utf16) ?? ""
            let xml = text.drop(while: { $0.isWhitespace || $0 == "\u{FEFF}" })
            utf16XML = Data(xml.utf8)
            guard xml.first == "<" else {
                throw ManifestError(
                    code: .malformed, file: source,
                    message: "expected a property list or UTF-8 JSON, found UTF-16 text that is not a property list; JSON must be UTF-8 (convert with iconv -f UTF-16 -t UTF-8)")
            }
        }
        let isPropertyList =
            bytes.starts(with: Array("bplist".utf8))
            || first == UInt8(ascii: "<")
            || (isUTF16 && !data.starts(with: [0xFF, 0xFE, 0x00, 0x00]))
        do {
            if isPropertyList {
                if let xml = first == UInt8(ascii: "<") ? data : utf16XML {
                    let (duplicate, tooDeep) = XMLPropertyListKeys.firstDuplicate(in: xml)
                    if let duplicate {
                        throw ManifestError(
                            code: .malformed, file: source, key: duplicate.path,
                            message: "duplicate key \"\(duplicate.key)\" in a <dict>: each key may appear once (the property list parser would keep the last one silently)")
                    }
                    if tooDeep {
                        throw ManifestError(
                            code: .malformed, file: source,
                            message: "expected <dict> and <array> nested at most \(StrictJSON.maximumDepth) deep, found deeper nesting")
                    }
                    if let (text, line, root) = XMLPropertyListKeys.contentAfterRoot(in: xml) {
                        throw ManifestError(
                            code: .malformed, file: source,
                            message: "expected nothing but whitespace and comments after </\(StrictJSON.escaped(root))>, found \"\(text)\" at line \(line) (the property list parser would ignore it silently)")
                    }
                }
                if let problem = BinaryPropertyListKeys.structuralProblem(in: data) {
                    throw ManifestError(
                        code: .malformed, file: source,
                        message: "expected a binary property list (the file starts with \"bplist\"), found a damaged one: \(problem)")
                }
                if let object = BinaryPropertyListKeys.firstUnsupportedObject(in: data) {
                    throw ManifestError(
                        code: .malformed, file: source,
                        message: "expected a property list of dictionaries, arrays, strings, numbers, booleans, dates and data, found \(object) in the binary property list")
                }
                // One walk finds both; its expansion, loop and depth problems come first, as
                // a repeated key found in a list that cannot be read safely matters less.
                let walk = BinaryPropertyListKeys.walk(data)
                if let problem = walk.problem {
                    throw ManifestError(
                        code: .malformed, file: source,
                        message: "expected a manifest-sized binary property list, found one that cannot be read safely: \(problem)")
                }
                if let key = walk.duplicate {
                    throw ManifestError(
                        code: .malformed, file: source, key: key,
                        message: "duplicate key \"\(key)\" in a dictionary of a binary property list: each key may appear once (the property list parser would keep the last one silently)")
                }
                return try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
            }
            do {
                try StrictJSON.validate(data)
            } catch {
                throw ManifestError(code: .malformed, file: source, key: error.culpritKeyPath, message: error.explanation(in: data))
            }
            // Fragments allowed so that `"text"` or `42` reports "found a string" (a type
            // error the developer can act on) rather than a generic parse failure.
            return try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch let error as ManifestError {
            throw error
        } catch {
            if isPropertyList, significantBytes(of: data).starts(with: Array("bplist".utf8)) {
                // Foundation reads a binary list it cannot parse as text next, and reports
                // that parse ("Unexpected character b at line 1"): say what the file is.
                throw ManifestError(
                    code: .malformed, file: source,
                    message: "expected a binary property list (the file starts with \"bplist\"), found a damaged one that the property list parser refuses (read as text instead, it said: \(parserMessage(error)))")
            }
            // Foundation names no place for a byte that is not UTF-8 (its whole message is
            // "Unable to convert string to correct encoding"): find it.
            if isPropertyList, first == UInt8(ascii: "<"), let invalid = XMLPropertyListKeys.firstInvalidUTF8(in: data) {
                throw ManifestError(
                    code: .malformed, file: source,
                    message: "expected a property list in UTF-8 (no other encoding is declared), found a byte that is not UTF-8 (0x\(String(invalid.byte, radix: 16, uppercase: true))) at line \(invalid.line), column \(invalid.column) (byte offset \(invalid.offset)); the parser said: \(parserMessage(error))")
            }
            let format = isPropertyList ? "a valid property list" : "valid JSON"
            throw ManifestError(
                code: .malformed, file: source,
                message: "expected \(format), but the parser said: \(parserMessage(error))")
        }
    }

    /// The data after a UTF-8 byte-order mark and leading whitespace, which both parsers skip.
    private static func significantBytes(of data: Data) -> Data.SubSequence {
        var rest = data[...]
        if rest.starts(with: [0xEF, 0xBB, 0xBF]) { rest = rest.dropFirst(3) }
        return rest.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
    }

    /// The parser's own explanation: Foundation puts the useful part ("Invalid value around
    /// character 6.") in the debug description, while the localized description is generic.
    private static func parserMessage(_ error: any Error) -> String {
        let nsError = error as NSError
        if let debug = nsError.userInfo[NSDebugDescriptionErrorKey] as? String, !debug.isEmpty {
            return debug
        }
        return nsError.localizedDescription
    }
}
