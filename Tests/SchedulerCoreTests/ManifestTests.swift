import Foundation
import Testing
@testable import SchedulerCore

/// Parsing, validating and querying app manifests. Every test builds its own data: no files,
/// no shared state, so the suite runs in parallel.
@Suite("App manifest")
struct ManifestTests {
    // MARK: Fixtures

    /// A complete XML Info.plist with keys this system does not read, as Xcode writes them.
    static let xmlPlist = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
            <key>CFBundleIdentifier</key>
            <string>com.example.feedreader</string>
            <key>CFBundleVersion</key>
            <string>42</string>
            <key>LSRequiresIPhoneOS</key>
            <true/>
            <key>BGTaskSchedulerPermittedIdentifiers</key>
            <array>
                <string>com.example.feedreader.refresh</string>
                <string>com.example.feedreader.cleanup</string>
                <string>com.example.feedreader.export.*</string>
            </array>
            <key>UIBackgroundModes</key>
            <array>
                <string>fetch</string>
                <string>processing</string>
                <string>audio</string>
            </array>
        </dict>
        </plist>
        """

    static let expectedIdentifiers = [
        "com.example.feedreader.refresh",
        "com.example.feedreader.cleanup",
        "com.example.feedreader.export.*",
    ]

    /// Parses a dictionary serialized as JSON: the shortest way to put one bad value in a test.
    func parseJSON(_ object: [String: Any], source: String = "test.json") throws(ManifestError) -> AppManifest {
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return try AppManifest.parse(data, source: source)
    }

    /// Parses `text` and returns the error it must raise.
    func parseError(parsing text: String, source: String = "Info.plist") -> ManifestError? {
        parseError(parsing: Data(text.utf8), source: source)
    }

    func parseError(parsing data: Data, source: String = "Info.plist") -> ManifestError? {
        do {
            let manifest = try AppManifest.parse(data, source: source)
            Issue.record("expected an error, parsed \(manifest)")
            return nil
        } catch {
            return error
        }
    }

    func parseError(parsingJSON object: [String: Any]) -> ManifestError? {
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return parseError(parsing: data, source: "app.json")
    }

    // MARK: Scenes

    @Test func sceneConfigurationsAreReadFromTheSceneManifest() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0">
            <dict>
                <key>UIApplicationSceneManifest</key>
                <dict>
                    <key>UIApplicationSupportsMultipleScenes</key>
                    <false/>
                    <key>UISceneConfigurations</key>
                    <dict>
                        <key>UIWindowSceneSessionRoleApplication</key>
                        <array>
                            <dict>
                                <key>UISceneConfigurationName</key>
                                <string>Default Configuration</string>
                                <key>UISceneDelegateClassName</key>
                                <string>$(PRODUCT_MODULE_NAME).SceneDelegate</string>
                                <key>UISceneStoryboardFile</key>
                                <string>Main</string>
                            </dict>
                        </array>
                    </dict>
                </dict>
            </dict>
            </plist>
            """
        let manifest = try AppManifest.parse(Data(xml.utf8), source: "Info.plist")
        #expect(manifest.sceneConfigurations == [.init(name: "Default Configuration", delegateClassName: "$(PRODUCT_MODULE_NAME).SceneDelegate")])
        #expect(try parseJSON([:]).sceneConfigurations.isEmpty, "no scenes declared")
        #expect(try parseJSON(["UIApplicationSceneManifest": ["UIApplicationSupportsMultipleScenes": false]]).sceneConfigurations.isEmpty)
    }

    @Test(arguments: [
        (#"{"UIApplicationSceneManifest": "scenes"}"#, "UIApplicationSceneManifest"),
        (#"{"UIApplicationSceneManifest": {"UISceneConfigurations": [1]}}"#, "UIApplicationSceneManifest.UISceneConfigurations"),
        (#"{"UIApplicationSceneManifest": {"UISceneConfigurations": {"UIWindowSceneSessionRoleApplication": {"x": 1}}}}"#,
         "UIApplicationSceneManifest.UISceneConfigurations.UIWindowSceneSessionRoleApplication"),
        (#"{"UIApplicationSceneManifest": {"UISceneConfigurations": {"UIWindowSceneSessionRoleApplication": ["one"]}}}"#,
         "UIApplicationSceneManifest.UISceneConfigurations.UIWindowSceneSessionRoleApplication[0]"),
        (#"{"UIApplicationSceneManifest": {"UISceneConfigurations": {"UIWindowSceneSessionRoleApplication": [{"UISceneDelegateClassName": 7}]}}}"#,
         "UIApplicationSceneManifest.UISceneConfigurations.UIWindowSceneSessionRoleApplication[0].UISceneDelegateClassName"),
    ])
    func aSceneManifestOfTheWrongShapeNamesTheKey(json: String, key: String) throws {
        let error = try #require(parseError(parsing: json, source: "app.json"))
        #expect(error.code == .wrongType)
        #expect(error.key == key, "\(error)")
    }

    // MARK: Formats

    @Test func parsesXMLPropertyList() throws {
        let manifest = try AppManifest.parse(Data(Self.xmlPlist.utf8), source: "/apps/feed/Info.plist")
        #expect(manifest.appID == AppID("com.example.feedreader"))
        #expect(manifest.permittedIdentifiers == Self.expectedIdentifiers)
        #expect(manifest.backgroundModes == ["fetch", "processing", "audio"])
        #expect(manifest.source == "/apps/feed/Info.plist")
    }

    @Test func parsesBinaryPropertyList() throws {
        let plist: [String: Any] = [
            "CFBundleIdentifier": "com.example.feedreader",
            "BGTaskSchedulerPermittedIdentifiers": Self.expectedIdentifiers,
            "UIBackgroundModes": ["fetch"],
            "UIRequiredDeviceCapabilities": ["armv7"],
            "LSRequiresIPhoneOS": true,
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        #expect(data.starts(with: Array("bplist".utf8)))
        let manifest = try AppManifest.parse(data, source: "Info.plist")
        #expect(manifest.appID == AppID("com.example.feedreader"))
        #expect(manifest.permittedIdentifiers == Self.expectedIdentifiers)
        #expect(manifest.backgroundModes == ["fetch"])
    }

    @Test func parsesJSON() throws {
        let json = """
            {
              "CFBundleIdentifier": "com.example.feedreader",
              "BGTaskSchedulerPermittedIdentifiers": [
                "com.example.feedreader.refresh",
                "com.example.feedreader.cleanup",
                "com.example.feedreader.export.*"
              ],
              "UIBackgroundModes": ["processing"],
              "SomeOtherKey": {"nested": [1, true, null]}
            }
            """
        let manifest = try AppManifest.parse(Data(json.utf8), source: "manifest.json")
        #expect(manifest.appID == AppID("com.example.feedreader"))
        #expect(manifest.permittedIdentifiers == Self.expectedIdentifiers)
        #expect(manifest.backgroundModes == ["processing"])
        #expect(manifest.source == "manifest.json")
    }

    @Test func toleratesByteOrderMarkAndLeadingWhitespace() throws {
        let json = Data([0xEF, 0xBB, 0xBF]) + Data("\n  {\"UIBackgroundModes\": [\"fetch\"]}".utf8)
        #expect(try AppManifest.parse(json, source: "m.json").backgroundModes == ["fetch"])
        let xml = Data("\n\n" .utf8) + Data(Self.xmlPlist.utf8)
        #expect(try AppManifest.parse(xml, source: "Info.plist").permittedIdentifiers == Self.expectedIdentifiers)
    }

    @Test func missingKeysMeanEmptyLists() throws {
        for text in ["{}", "<plist version=\"1.0\"><dict/></plist>"] {
            let manifest = try AppManifest.parse(Data(text.utf8), source: "m")
            #expect(manifest.appID == nil)
            #expect(manifest.permittedIdentifiers.isEmpty)
            #expect(manifest.backgroundModes.isEmpty)
        }
    }

    @Test func keepsManifestOrder() throws {
        let identifiers = (0..<20).reversed().map { "com.example.app.task\($0)" }
        let manifest = try parseJSON(["BGTaskSchedulerPermittedIdentifiers": identifiers])
        #expect(manifest.permittedIdentifiers == identifiers)
    }

    // MARK: Queries

    /// `count` other entries, so that a list is long enough for the set lookup (short lists
    /// are scanned): every query test runs both ways.
    static func otherEntries(_ count: Int) -> [String] { (0..<count).map { "com.example.other.task\($0)" } }

    @Test(arguments: [0, 20]) func permitsExactIdentifiers(others: Int) {
        let manifest = AppManifest(permittedIdentifiers: ["com.example.app.refresh"] + Self.otherEntries(others), backgroundModes: [])
        #expect(manifest.permits(identifier: "com.example.app.refresh", allowWildcard: false))
        #expect(manifest.permits(identifier: "com.example.app.refresh", allowWildcard: true))
        #expect(!manifest.permits(identifier: "com.example.app.refresh2", allowWildcard: true))
        #expect(!manifest.permits(identifier: "com.example.app", allowWildcard: true))
        #expect(!manifest.permits(identifier: "com.example.app.refresh.x", allowWildcard: true))
    }

    @Test(arguments: [0, 20]) func wildcardPermitsOnlyWhenAllowedAndNeverTheBarePrefix(others: Int) {
        let manifest = AppManifest(permittedIdentifiers: Self.otherEntries(others) + ["com.example.app.export.*"], backgroundModes: [])
        #expect(manifest.permits(identifier: "com.example.app.export.1", allowWildcard: true))
        #expect(manifest.permits(identifier: "com.example.app.export.photos.batch-7", allowWildcard: true))
        #expect(!manifest.permits(identifier: "com.example.app.export.1", allowWildcard: false))
        // The bare prefix, the prefix with a dot, and look-alikes are not matched.
        #expect(!manifest.permits(identifier: "com.example.app.export", allowWildcard: true))
        #expect(!manifest.permits(identifier: "com.example.app.export.", allowWildcard: true))
        #expect(!manifest.permits(identifier: "com.example.app.exporter.1", allowWildcard: true))
        #expect(!manifest.permits(identifier: "com.example.app.export*", allowWildcard: true))
        // The entry as written is not an identifier that is permitted without wildcards.
        #expect(!manifest.permits(identifier: "com.example.app.export.*", allowWildcard: false))
    }

    @Test(arguments: [0, 20]) func comparesIdentifiersByBytes(others: Int) {
        // "é" precomposed versus "e" + combining acute: equal as Swift Strings, not as keys.
        let manifest = AppManifest(permittedIdentifiers: ["com.example.caf\u{E9}"] + Self.otherEntries(others), backgroundModes: [])
        #expect(manifest.permits(identifier: "com.example.caf\u{E9}", allowWildcard: false))
        #expect(!manifest.permits(identifier: "com.example.cafe\u{301}", allowWildcard: false))
    }

    @Test func backgroundModes() {
        let manifest = AppManifest(permittedIdentifiers: [], backgroundModes: ["fetch", "audio"])
        #expect(manifest.hasBackgroundMode("fetch"))
        #expect(manifest.hasBackgroundMode("audio"))
        #expect(!manifest.hasBackgroundMode("processing"))
    }

    // MARK: Malformed documents

    @Test func emptyDataIsMalformed() throws {
        let error = try #require(parseError(parsing: Data(), source: "/apps/empty/Info.plist"))
        #expect(error.code == .malformed)
        #expect(error.file == "/apps/empty/Info.plist")
        #expect(error.key == nil)
        #expect(error.message.contains("empty"))
        #expect(error.description.hasPrefix("/apps/empty/Info.plist: "))
    }

    @Test func whitespaceOnlyIsMalformed() throws {
        let error = try #require(parseError(parsing: " \n\t "))
        #expect(error.code == .malformed)
        #expect(error.message.contains("whitespace"))
    }

    @Test func invalidJSONIsMalformedWithItsLineAndColumn() throws {
        let error = try #require(parseError(parsing: #"{"UIBackgroundModes": [}"#, source: "bad.json"))
        #expect(error.code == .malformed)
        #expect(error.file == "bad.json")
        #expect(error.message == "expected valid JSON, found an error at line 1, column 24 near \"}\": expected a value (object, array, string, number, true, false or null), found '}'")
    }

    @Test func invalidXMLIsMalformedWithTheParsersMessage() throws {
        let error = try #require(parseError(parsing: "<plist version=\"1.0\"><dict><key>a</dict></plist>"))
        #expect(error.code == .malformed)
        #expect(error.file == "Info.plist")
        #expect(error.message.contains("property list"))
    }

    @Test func truncatedBinaryPropertyListIsMalformed() throws {
        let full = try PropertyListSerialization.data(
            fromPropertyList: ["UIBackgroundModes": ["fetch"]], format: .binary, options: 0)
        let error = try #require(parseError(parsing: full.prefix(12)))
        #expect(error.code == .malformed)
    }

    @Test func plainTextIsMalformed() throws {
        let error = try #require(parseError(parsing: "UIBackgroundModes = fetch"))
        #expect(error.code == .malformed)
    }

    // MARK: Wrong types

    @Test("top level must be a dictionary", arguments: [
        ("[\"fetch\"]", "an array (1 element)"),
        ("\"fetch\"", "a string (\"fetch\")"),
        ("42", "a number (42)"),
        ("true", "a boolean (true)"),
        ("null", "null"),
        ("<plist version=\"1.0\"><array><string>x</string><string>y</string></array></plist>", "an array (2 elements)"),
        ("<plist version=\"1.0\"><string>x</string></plist>", "a string (\"x\")"),
    ])
    func topLevelNotADictionary(text: String, found: String) throws {
        let error = try #require(parseError(parsing: text, source: "top.plist"))
        #expect(error.code == .wrongType)
        #expect(error.file == "top.plist")
        #expect(error.key == nil)
        #expect(error.message == "expected a dictionary at the top level, found \(found)")
    }

    @Test func aBackgroundModeInAnotherCaseIsRefusedNamingTheEntryAndOneListedTwiceTakenOnce() throws {
        let twice = try AppManifest.parse(try JSONSerialization.data(withJSONObject: ["UIBackgroundModes": ["fetch", "processing", "fetch"]]), source: "app.json")
        #expect(twice.backgroundModes == ["fetch", "processing"])
        // The case is checked when the app is installed (BGAppInstallation), not at every
        // parse: an app installed before the rule still reads its manifest at launch.
        let parsed = try AppManifest.parse(try JSONSerialization.data(withJSONObject: ["UIBackgroundModes": ["fetch", "Processing"]]), source: "app.json")
        let cased = try #require(throws: ManifestError.self) { try parsed.checkBackgroundModeSpelling() }
        #expect(cased.code == .invalidValue && cased.key == "UIBackgroundModes" && cased.file == "app.json", "\(cased)")
        #expect(cased.message.contains("expected \"processing\""), "\(cased)")
        #expect(throws: Never.self) { try twice.checkBackgroundModeSpelling() }
        // A mode this system does not know is kept, as iOS ignores what it does not know.
        let manifest = try AppManifest.parse(try JSONSerialization.data(withJSONObject: ["UIBackgroundModes": ["fetch", "newsstand-content"]]), source: "app.json")
        #expect(manifest.backgroundModes == ["fetch", "newsstand-content"])
    }

    @Test("list keys must be arrays", arguments: ["BGTaskSchedulerPermittedIdentifiers", "UIBackgroundModes"])
    func listKeyOfWrongType(key: String) throws {
        let cases: [(Any, String)] = [
            ("fetch", "a string (\"fetch\")"),
            (true, "a boolean (true)"),
            (false, "a boolean (false)"),
            (1, "a number (1)"),
            (0, "a number (0)"),
            (2.5, "a number (2.5)"),
            (["a": "b"], "a dictionary"),
            (NSNull(), "null"),
        ]
        for (value, found) in cases {
            let error = try #require(parseError(parsingJSON: [key: value]))
            #expect(error.code == .wrongType)
            #expect(error.file == "app.json")
            #expect(error.key == key)
            #expect(error.message == "expected an array of strings, found \(found)")
            #expect(error.description == "app.json: \(key): expected an array of strings, found \(found)")
        }
    }

    @Test("list elements must be strings", arguments: ["BGTaskSchedulerPermittedIdentifiers", "UIBackgroundModes"])
    func listElementOfWrongType(key: String) throws {
        let good = key == "UIBackgroundModes" ? "fetch" : "com.example.app.refresh"
        let other = key == "UIBackgroundModes" ? "processing" : "com.example.app.sync"
        let cases: [(Any, String)] = [
            (42, "a number (42)"),
            (true, "a boolean (true)"),
            (["x"], "an array (1 element)"),
            (["k": 1], "a dictionary"),
            (NSNull(), "null"),
        ]
        for (value, found) in cases {
            let error = try #require(parseError(parsingJSON: [key: [good, other, value]]))
            #expect(error.code == .wrongType)
            #expect(error.key == "\(key)[2]")
            #expect(error.message == "expected a string, found \(found)")
        }
    }

    @Test func plistBooleansAndDatesAreNamedByType() throws {
        let text = """
            <plist version="1.0"><dict>
            <key>UIBackgroundModes</key><true/>
            </dict></plist>
            """
        let error = try #require(parseError(parsing: text))
        #expect(error.message == "expected an array of strings, found a boolean (true)")

        let dates = """
            <plist version="1.0"><dict>
            <key>BGTaskSchedulerPermittedIdentifiers</key>
            <array><date>2024-01-01T00:00:00Z</date><data>AAEC</data></array>
            </dict></plist>
            """
        let dateError = try #require(parseError(parsing: dates))
        #expect(dateError.key == "BGTaskSchedulerPermittedIdentifiers[0]")
        #expect(dateError.message == "expected a string, found a date")

        let binary = try PropertyListSerialization.data(
            fromPropertyList: ["BGTaskSchedulerPermittedIdentifiers": ["com.a.b", Data([1, 2, 3])]],
            format: .binary, options: 0)
        let dataError = try #require(parseError(parsing: binary))
        #expect(dataError.key == "BGTaskSchedulerPermittedIdentifiers[1]")
        #expect(dataError.message == "expected a string, found data (3 bytes)")
    }

    /// A binary property list written by hand: `objects` in order, one-byte offsets and
    /// references, the first object the top.
    static func binaryPropertyList(_ objects: [[UInt8]]) -> Data {
        var bytes = Array("bplist00".utf8)
        var offsets: [UInt8] = []
        for object in objects {
            offsets.append(UInt8(bytes.count))
            bytes += object
        }
        let table = bytes.count
        bytes += offsets
        bytes += [0, 0, 0, 0, 0, 0, 1, 1]
        bytes += (0..<8).map { UInt8(truncatingIfNeeded: objects.count >> (8 * (7 - $0))) }
        bytes += [UInt8](repeating: 0, count: 8)
        bytes += (0..<8).map { UInt8(truncatingIfNeeded: table >> (8 * (7 - $0))) }
        return Data(bytes)
    }

    @Test func aBinaryPropertyListWithASetIsRefusedBeforeFoundationSeesIt() throws {
        // {"k": {"a"}}: Foundation on Linux crashes the process bridging a set (a fuzzing
        // helper's find: `bgtask install` of such a file ended bgtaskd).
        let withSet = Self.binaryPropertyList([[0xD1, 1, 2], [0x51, UInt8(ascii: "k")], [0xC1, 3], [0x51, UInt8(ascii: "a")]])
        let error = try #require(parseError(parsing: withSet))
        #expect(error.code == .malformed)
        #expect(error.message.contains("found a set"), "\(error.message)")
        // A UID (a keyed archive's) and a marker the format does not define go too.
        let withUID = Self.binaryPropertyList([[0xD1, 1, 2], [0x51, UInt8(ascii: "k")], [0x80, 7]])
        #expect(try #require(parseError(parsing: withUID)).message.contains("found a UID"))
        let unknown = Self.binaryPropertyList([[0xD1, 1, 2], [0x51, UInt8(ascii: "k")], [0x70]])
        #expect(try #require(parseError(parsing: unknown)).message.contains("unknown type 0x7"))
        // The same hand-written form without the set is read (the writer is right).
        let plain = Self.binaryPropertyList([[0xD1, 1, 2], [0x52] + Array("CF".utf8), [0x51, UInt8(ascii: "a")]])
        #expect(BinaryPropertyListKeys.firstUnsupportedObject(in: plain) == nil)
        #expect((try PropertyListSerialization.propertyList(from: plain, options: [], format: nil) as? [String: String]) == ["CF": "a"])
    }

    /// Shared references can make a few hundred bytes stand for billions of objects, which
    /// PropertyListSerialization builds (bgtaskd grew to 5 GB installing a 240-byte one; a
    /// fuzzing helper's find); a container that contains itself, or nesting past the limit,
    /// goes the same way: all refused before Foundation sees the file.
    @Test func aBinaryPropertyListThatExpandsBeyondAManifestIsRefused() throws {
        // 40 arrays, each holding the next twice, then a string: 2^40 objects once read.
        let chain = Self.binaryPropertyList((0..<40).map { (index: Int) -> [UInt8] in [0xA2, UInt8(index + 1), UInt8(index + 1)] } + [[0x51, UInt8(ascii: "x")]])
        let expanded = try #require(parseError(parsing: chain))
        #expect(expanded.code == .malformed)
        #expect(expanded.message.contains("more than \(BinaryPropertyListKeys.maximumExpandedObjects) objects"), "\(expanded.message)")
        // Ten such levels (1,024 leaves) are a list like any other.
        let small = Self.binaryPropertyList((0..<10).map { (index: Int) -> [UInt8] in [0xA2, UInt8(index + 1), UInt8(index + 1)] } + [[0x51, UInt8(ascii: "x")]])
        #expect(BinaryPropertyListKeys.expansionProblem(in: small) == nil)
        // An array holding itself.
        let loop = Self.binaryPropertyList([[0xA1, 0]])
        #expect(try #require(parseError(parsing: loop)).message.contains("contains itself"))
        // Nesting deeper than the limit (here 50, to keep the hand-written file small).
        let deep = Self.binaryPropertyList((0..<60).map { [0xA1, UInt8($0 + 1)] } + [[0x51, UInt8(ascii: "x")]])
        #expect(BinaryPropertyListKeys.expansionProblem(in: deep, maximumDepth: 50)?.contains("nested more than 50 deep") == true)
        #expect(BinaryPropertyListKeys.expansionProblem(in: deep, maximumDepth: 100) == nil)
        // A real manifest passes.
        let real = try PropertyListSerialization.data(
            fromPropertyList: ["CFBundleIdentifier": "com.example.a", "BGTaskSchedulerPermittedIdentifiers": ["com.example.a.refresh"], "UIBackgroundModes": ["fetch"]],
            format: .binary, options: 0)
        #expect(BinaryPropertyListKeys.expansionProblem(in: real) == nil)
    }

    /// Foundation on Linux copies a string for every reference to it: 2,000 references to
    /// one 100 KB string, a 104 KB file, took 215 MB to read, and 200,000 references to a
    /// string of half a megabyte would stand for 100 GB. The bytes a file stands for once
    /// its references are followed are bounded like its objects.
    @Test func aBinaryPropertyListWhoseSharedStringsExpandBeyondAManifestIsRefused() throws {
        // Index 0 (the top): an array at 8 of `count` references (2 bytes each) to index 1,
        // a string of `length` bytes just after it.
        func shared(count: Int, length: Int, marker: UInt8 = 0x5) -> Data {
            let array: [UInt8] = [0xAF, 0x12] + Self.bigEndian(count, size: 4) + (0..<count).flatMap { _ in Self.bigEndian(1, size: 2) }
            let string: [UInt8] = [marker << 4 | 0x0F, 0x12] + Self.bigEndian(length, size: 4) + [UInt8](repeating: 0x78, count: marker == 0x6 ? 2 * length : length)
            return Self.binaryPropertyList(body: array + string, offsets: [8, 8 + array.count], offsetSize: 4, referenceSize: 2)
        }
        let limit = BinaryPropertyListKeys.maximumExpandedBytes
        let refused = shared(count: 2_000, length: 100_000)
        #expect(refused.count < 110_000)
        let error = try #require(parseError(parsing: refused))
        #expect(error.code == .malformed)
        #expect(error.message.contains("strings and data stand for more than \(limit >> 20) MiB"), "\(error.message)")
        // Data, and UTF-16 strings (two bytes a unit), count the same way.
        #expect(BinaryPropertyListKeys.expansionProblem(in: shared(count: 2_000, length: 100_000, marker: 0x4))?.contains("MiB") == true)
        #expect(BinaryPropertyListKeys.expansionProblem(in: shared(count: 100, length: limit / 200 + 1, marker: 0x6))?.contains("MiB") == true)
        // Within the bound, a shared string is a list like any other, and reads.
        let fine = shared(count: 160, length: 100_000)
        #expect(BinaryPropertyListKeys.expansionProblem(in: fine) == nil)
        #expect((try PropertyListSerialization.propertyList(from: fine, options: [], format: nil) as? [String])?.count == 160)
        // Shared inside a container that is itself shared: counted every time too.
        let inner: [UInt8] = [0xA4, 2, 2, 2, 2]  // index 1: an array of four references to index 2
        let string: [UInt8] = [0x5F, 0x12] + Self.bigEndian(1_000_000, size: 4) + [UInt8](repeating: 0x78, count: 1_000_000)
        let outer: [UInt8] = [0xA5, 1, 1, 1, 1, 1]  // index 0: five references to index 1
        let nested = Self.binaryPropertyList(
            body: outer + inner + string, offsets: [8, 8 + outer.count, 8 + outer.count + inner.count], offsetSize: 4, referenceSize: 1)
        #expect(BinaryPropertyListKeys.expansionProblem(in: nested)?.contains("MiB") == true)  // 5 x 4 x 1 MB
    }

    /// A binary property list laid out by hand: `body` follows the 8-byte header (so the
    /// first object is at offset 8), then the offset table `offsets` and the trailer.
    static func binaryPropertyList(body: [UInt8], offsets: [Int], offsetSize: Int, referenceSize: Int, top: Int = 0) -> Data {
        var bytes = Array("bplist00".utf8) + body
        let table = bytes.count
        for offset in offsets { bytes += bigEndian(offset, size: offsetSize) }
        bytes += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
        bytes += bigEndian(offsets.count, size: 8) + bigEndian(top, size: 8) + bigEndian(table, size: 8)
        return Data(bytes)
    }

    static func bigEndian(_ value: Int, size: Int) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: value >> (8 * (size - 1 - $0))) }
    }

    /// Many offset-table entries naming one dictionary whose keys are not strings: every
    /// entry used to be checked in full (a reviewer's 180 KB file took 20 s; a 1 MiB
    /// manifest would have held bgtaskd for minutes). Only dictionaries reachable from the
    /// top are checked now, each once.
    @Test func manyOffsetsNamingOneDictionaryAreCheckedOnce() throws {
        // Index 1: the integer 5 at 8. Index 0 (the top) and 150,000 more: one dictionary at
        // 10 of 60,000 entries whose keys and values are all that integer.
        let entries = 60_000
        let dictionary: [UInt8] = [0xDF, 0x12] + Self.bigEndian(entries, size: 4) + [UInt8](repeating: 1, count: 2 * entries)
        let aliased = Self.binaryPropertyList(
            body: [0x10, 5] + dictionary, offsets: [10, 8] + Array(repeating: 10, count: 150_000), offsetSize: 1, referenceSize: 1)
        #expect(aliased.count > 250_000)
        #expect(BinaryPropertyListKeys.structuralProblem(in: aliased) == nil)
        #expect(BinaryPropertyListKeys.firstUnsupportedObject(in: aliased) == nil)
        #expect(BinaryPropertyListKeys.firstDuplicate(in: aliased) == nil)
        #expect(BinaryPropertyListKeys.expansionProblem(in: aliased) == nil)
        // The dictionary's 120,000 references are read once, not once per entry naming it.
        #expect(BinaryPropertyListKeys.walk(aliased).work == 2 * entries)

        // A top array naming each alias of a smaller such dictionary: it stands for 100,000
        // copies of it, and is refused as such (after reading a bounded part of it).
        let small = 1_000
        let smallDictionary: [UInt8] = [0xDF, 0x12] + Self.bigEndian(small, size: 4) + (0..<2 * small).flatMap { _ in Self.bigEndian(1, size: 3) }
        let arrayOffset = 10 + smallDictionary.count
        let aliases = 100_000
        let array: [UInt8] = [0xAF, 0x12] + Self.bigEndian(aliases, size: 4) + (0..<aliases).flatMap { Self.bigEndian(2 + $0, size: 3) }
        let shared = Self.binaryPropertyList(
            body: [0x10, 5] + smallDictionary + array, offsets: [arrayOffset, 8] + Array(repeating: 10, count: aliases), offsetSize: 2, referenceSize: 3)
        #expect(shared.count > 250_000)
        #expect(BinaryPropertyListKeys.structuralProblem(in: shared) == nil)
        #expect(BinaryPropertyListKeys.firstDuplicate(in: shared) == nil)
        #expect(BinaryPropertyListKeys.expansionProblem(in: shared)?.contains("more than \(BinaryPropertyListKeys.maximumExpandedObjects) objects") == true)
        #expect(BinaryPropertyListKeys.walk(shared).work <= BinaryPropertyListKeys.maximumExpandedObjects + 1)
    }

    /// Keys whose strings overlap in the file (each header inside the previous one's text)
    /// would be decoded in full one after another, the file's size many times over; no writer
    /// lays keys out so, and such a list is refused.
    @Test func keysThatOverlapInTheFileAreRefused() throws {
        // Index 0 (the top): a dictionary at 8 of 2,000 keys, indices 1 to 2,000, each with the
        // value index 1. Index j: a string of 60,000 bytes, its header 4(j - 1) bytes after
        // the dictionary, its text the next headers and then filler.
        let keys = 2_000, length = 60_000
        let dictionary: [UInt8] = [0xDF, 0x11] + Self.bigEndian(keys, size: 2) + (1...keys).flatMap { Self.bigEndian($0, size: 2) } + (1...keys).flatMap { _ in Self.bigEndian(1, size: 2) }
        var body = dictionary
        for _ in 1...keys { body += [0x5F, 0x11] + Self.bigEndian(length, size: 2) }
        body += [UInt8](repeating: UInt8(ascii: "a"), count: length)
        let offsets = [8] + (1...keys).map { 8 + dictionary.count + 4 * ($0 - 1) }
        let overlapping = Self.binaryPropertyList(body: body, offsets: offsets, offsetSize: 4, referenceSize: 2)
        #expect(BinaryPropertyListKeys.structuralProblem(in: overlapping) == nil)
        #expect(BinaryPropertyListKeys.expansionProblem(in: overlapping)?.contains("keys overlap") == true)
        #expect(BinaryPropertyListKeys.walk(overlapping).work <= 2 * overlapping.count)
    }

    /// Only dictionaries reachable from the top are checked (Foundation reads no other), each
    /// however deep, and two keys naming one string object are one key given twice.
    @Test func repeatedKeysAreFoundInTheDictionariesReachableFromTheTop() throws {
        // {"k": [{"a": "k", "a": "k"}]}, the two keys distinct objects with one text.
        let nested = Self.binaryPropertyList([[0xD1, 1, 2], [0x51, UInt8(ascii: "k")], [0xA1, 3], [0xD2, 4, 5, 1, 1], [0x51, UInt8(ascii: "a")], [0x51, UInt8(ascii: "a")]])
        #expect(BinaryPropertyListKeys.firstDuplicate(in: nested) == "a")
        #expect(BinaryPropertyListKeys.expansionProblem(in: nested) == nil)
        // The same with index 5 naming index 4's bytes.
        let aliased = Self.binaryPropertyList(
            body: [0xD1, 1, 2, 0x51, UInt8(ascii: "k"), 0xA1, 3, 0xD2, 4, 5, 1, 1, 0x51, UInt8(ascii: "a")],
            offsets: [8, 11, 13, 15, 20, 20], offsetSize: 1, referenceSize: 1)
        #expect(BinaryPropertyListKeys.firstDuplicate(in: aliased) == "a")
        // The dictionary unreachable (the array holds the string): nothing to report.
        var unreachable = [UInt8](nested)
        unreachable[8 + 3 + 2 + 1] = 1
        #expect(BinaryPropertyListKeys.firstDuplicate(in: Data(unreachable)) == nil)
        // A list that expands beyond a manifest is refused as such even with a repeated key:
        // {"a": chain, "a": chain}, the chain of 40 arrays each holding the next twice.
        let chain: [[UInt8]] = (0..<40).map { (index: Int) -> [UInt8] in [0xA2, UInt8(index + 3), UInt8(index + 3)] } + [[0x51, UInt8(ascii: "x")]]
        let both = Self.binaryPropertyList([[0xD2, 1, 1, 2, 2], [0x51, UInt8(ascii: "a")]] + chain)
        #expect(BinaryPropertyListKeys.firstDuplicate(in: both) == "a")
        let refused = try #require(parseError(parsing: both))
        #expect(refused.message.contains("more than \(BinaryPropertyListKeys.maximumExpandedObjects) objects"), "\(refused.message)")
    }

    /// Arrays that overlap in the file, each one's header inside the previous one's
    /// references, each with 100,000 references: every level of the walk used to hold its
    /// array's references (260 MB for a 300 KB file before "nested more than 512 deep").
    @Test func overlappingArraysAreWalkedWithoutCopyingTheirReferences() throws {
        // Index 600 and up (to 65,535, so every 2-byte reference names an object): the string
        // "x" at 8. Index i < 600: an array at 10 + 8i of 100,000 references, the first
        // naming index i + 1, the others whatever bytes follow (the next headers, then
        // references to the string).
        let levels = 600, count = 100_000
        var body: [UInt8] = [0x51, UInt8(ascii: "x")]
        for level in 0..<levels { body += [0xAF, 0x12] + Self.bigEndian(count, size: 4) + Self.bigEndian(level + 1, size: 2) }
        for _ in 0..<count { body += Self.bigEndian(levels, size: 2) }
        let offsets = (0..<levels).map { 10 + 8 * $0 } + Array(repeating: 8, count: 65_536 - levels)
        let overlapping = Self.binaryPropertyList(body: body, offsets: offsets, offsetSize: 2, referenceSize: 2)
        #expect(overlapping.count > 300_000)
        #expect(BinaryPropertyListKeys.structuralProblem(in: overlapping) == nil)
        #expect(BinaryPropertyListKeys.expansionProblem(in: overlapping)?.contains("nested more than 512 deep") == true)
        // One reference read per level: none of the others is copied (or read).
        #expect(BinaryPropertyListKeys.walk(overlapping).work == 512)
    }

    /// Nesting is limited as in JSON and XML property lists: 512 arrays inside one another
    /// holding a string are read, 513 are refused (a string inside used to count as a level).
    @Test func binaryNestingStopsAtTheLimitJSONAndXMLHave() throws {
        let limit = StrictJSON.maximumDepth
        #expect(limit == 512)
        // Arrays at 8 + 3i, each of one 2-byte reference to the next; then the string.
        func nested(_ levels: Int) -> Data {
            var body: [UInt8] = []
            for level in 0..<levels { body += [0xA1] + Self.bigEndian(level + 1, size: 2) }
            body += [0x51, UInt8(ascii: "x")]
            return Self.binaryPropertyList(body: body, offsets: (0...levels).map { 8 + 3 * $0 }, offsetSize: 2, referenceSize: 2)
        }
        #expect(BinaryPropertyListKeys.expansionProblem(in: nested(limit)) == nil)
        #expect(BinaryPropertyListKeys.expansionProblem(in: nested(limit + 1)) == "arrays and dictionaries are nested more than \(limit) deep")
        // Foundation reads the one at the limit as the arrays and the string.
        var value = try PropertyListSerialization.propertyList(from: nested(limit), options: [], format: nil)
        for _ in 0..<limit { value = try #require((value as? [Any])?.first) }
        #expect(value as? String == "x")
        // JSON and XML property lists draw the line at the same place.
        func json(_ levels: Int) -> Data { Data((String(repeating: "[", count: levels) + "\"x\"" + String(repeating: "]", count: levels)).utf8) }
        #expect((try? StrictJSON.validate(json(limit))) != nil)
        #expect((try? StrictJSON.validate(json(limit + 1))) == nil)
        func xml(_ levels: Int) -> Data {
            Data(("<plist version=\"1.0\">" + String(repeating: "<array>", count: levels) + "<string>x</string>" + String(repeating: "</array>", count: levels) + "</plist>").utf8)
        }
        #expect(XMLPropertyListKeys.firstDuplicate(in: xml(limit)).tooDeep == false)
        #expect(XMLPropertyListKeys.firstDuplicate(in: xml(limit + 1)).tooDeep == true)
    }

    @Test func aTruncatedOrDamagedBinaryPropertyListIsRefusedAsOne() throws {
        let whole = try PropertyListSerialization.data(
            fromPropertyList: ["CFBundleIdentifier": "com.example.a", "BGTaskSchedulerPermittedIdentifiers": ["com.example.a.refresh"]],
            format: .binary, options: 0)
        #expect(BinaryPropertyListKeys.structuralProblem(in: whole) == nil)
        // Foundation would read these as old-style text: "Unexpected character b", or the
        // string "bplist00". Every cut of a real file is refused as a damaged binary list.
        for length in [8, 11, 39] + Array(stride(from: 40, to: whole.count, by: 7)) {
            let error = try #require(parseError(parsing: whole.prefix(length)), "cut at \(length)")
            #expect(error.code == .malformed)
            #expect(error.message.contains("expected a binary property list") && error.message.contains("damaged"), "cut at \(length): \(error.message)")
        }
        // A trailer whose offset size is 0, and one naming a top object past the count.
        var badSize = [UInt8](whole)
        badSize[badSize.count - 32 + 6] = 0
        #expect(BinaryPropertyListKeys.structuralProblem(in: Data(badSize))?.contains("1 to 8") == true)
        var badTop = [UInt8](whole)
        badTop[badTop.count - 32 + 23] = 0xFF
        #expect(BinaryPropertyListKeys.structuralProblem(in: Data(badTop))?.contains("top object") == true)
    }

    /// Any one damaged byte of a binary manifest that the property list parser refuses is
    /// said to be a damaged binary list: never the text parser's "Unexpected character b
    /// at line 1", which Foundation reports after trying the file as text (a tester's
    /// probe found 107 of 600 random corruptions said so).
    @Test func everyDamagedByteOfABinaryManifestIsNamedAsSuch() throws {
        let whole = [UInt8](try PropertyListSerialization.data(
            fromPropertyList: ["CFBundleIdentifier": "com.example.e", "CFBundleExecutable": "true"], format: .binary, options: 0))
        var refused = 0
        var reachedTheParser = 0
        for index in 8..<whole.count {
            for value: UInt8 in [0x00, 0x7F, 0xC8, 0xFF] where whole[index] != value {
                var damaged = whole
                damaged[index] = value
                // Some damage still parses (a changed letter of a string): only refusals count.
                let error: ManifestError
                do {
                    _ = try AppManifest.parse(Data(damaged), source: "Info.plist")
                    continue
                } catch let refusal {
                    error = refusal
                }
                guard error.code == .malformed else { continue }
                refused += 1
                if error.message.contains("read as text instead") { reachedTheParser += 1 }
                #expect(error.message.contains("binary property list"), "byte \(index) = \(value): \(error.message)")
            }
        }
        #expect(refused > 0)
        #expect(reachedTheParser > 0, "some damage passes the checks before Foundation's parser, which refuses it")
    }

    @Test func bundleIdentifierMustBeAString() throws {
        for (value, found) in [(7, "a number (7)"), (true, "a boolean (true)")] as [(Any, String)] {
            let error = try #require(parseError(parsingJSON: ["CFBundleIdentifier": value]))
            #expect(error.code == .wrongType)
            #expect(error.key == "CFBundleIdentifier")
            #expect(error.message == "expected a string, found \(found)")
        }
        let arrayError = try #require(parseError(parsingJSON: ["CFBundleIdentifier": ["com.a.b"]]))
        #expect(arrayError.message == "expected a string, found an array (1 element)")
    }

    // MARK: Invalid values

    @Test func bundleIdentifierMustBeReverseDNS() throws {
        let error = try #require(parseError(parsingJSON: ["CFBundleIdentifier": "feedreader"]))
        #expect(error.code == .invalidValue)
        #expect(error.file == "app.json")
        #expect(error.key == "CFBundleIdentifier")
        #expect(error.message.contains("\"feedreader\""))
        #expect(error.message.contains("only one label"))
    }

    @Test("invalid permitted entries name their index", arguments: [
        ("", "empty"),
        ("refresh", "only one label"),
        ("com.example.", "empty label"),
        ("com..example", "empty label"),
        ("com.example app", "a space"),
        ("com.*", "only one label"),
        ("*", "'*'"),
    ])
    func invalidPermittedEntry(entry: String, reason: String) throws {
        let error = try #require(parseError(parsingJSON: [
            "BGTaskSchedulerPermittedIdentifiers": ["com.example.app.refresh", entry],
        ]))
        #expect(error.code == .invalidValue)
        #expect(error.file == "app.json")
        #expect(error.key == "BGTaskSchedulerPermittedIdentifiers[1]")
        #expect(error.message.hasPrefix("expected a task identifier or a prefix.* wildcard, but "))
        #expect(error.message.contains(reason), "\(error.message)")
    }

    @Test func tooLongPermittedEntry() throws {
        let long = "com.example." + String(repeating: "x", count: 300)
        let error = try #require(parseError(parsingJSON: ["BGTaskSchedulerPermittedIdentifiers": [long]]))
        #expect(error.code == .invalidValue)
        #expect(error.key == "BGTaskSchedulerPermittedIdentifiers[0]")
        #expect(error.message.contains("312 bytes"))
    }

    @Test func duplicateEntriesAreAnErrorNamingTheEntry() throws {
        let error = try #require(parseError(parsingJSON: [
            "BGTaskSchedulerPermittedIdentifiers": [
                "com.example.app.refresh", "com.example.app.sync", "com.example.app.refresh",
            ],
        ]))
        #expect(error.code == .invalidValue)
        #expect(error.key == "BGTaskSchedulerPermittedIdentifiers[2]")
        #expect(error.message.contains("\"com.example.app.refresh\""))
        #expect(error.message.contains("index 0"))
    }

    @Test func duplicateWildcardEntriesAreAnError() throws {
        let error = try #require(parseError(parsingJSON: [
            "BGTaskSchedulerPermittedIdentifiers": ["com.example.app.export.*", "com.example.app.export.*"],
        ]))
        #expect(error.code == .invalidValue)
        #expect(error.key == "BGTaskSchedulerPermittedIdentifiers[1]")
    }

    @Test func xmlErrorsNameTheFileAndIndex() throws {
        let text = Self.xmlPlist.replacingOccurrences(
            of: "com.example.feedreader.cleanup", with: "com.example.feedreader..cleanup")
        let error = try #require(parseError(parsing: text, source: "/apps/feed/Info.plist"))
        #expect(error.description.hasPrefix(
            "/apps/feed/Info.plist: BGTaskSchedulerPermittedIdentifiers[1]: expected a task identifier"))
    }

    @Test func unknownBackgroundModesAreKept() throws {
        let manifest = try parseJSON(["UIBackgroundModes": ["fetch", "location", "voip"]])
        #expect(manifest.backgroundModes == ["fetch", "location", "voip"])
    }

    // MARK: Validation of manifests built in code

    @Test func validateAcceptsAGoodManifest() throws {
        let manifest = AppManifest(
            appID: AppID("com.example.app"),
            permittedIdentifiers: ["com.example.app.refresh", "com.example.app.export.*"],
            backgroundModes: ["fetch"])
        try manifest.validate()
    }

    @Test func validateNamesCodeWhenThereIsNoSource() throws {
        let manifest = AppManifest(permittedIdentifiers: ["com.example.app.refresh", "bad"], backgroundModes: [])
        let error = try #require(throws: ManifestError.self) { try manifest.validate() }
        #expect(error.file == "code")
        #expect(error.key == "BGTaskSchedulerPermittedIdentifiers[1]")
        #expect(error.code == .invalidValue)

        let invalidApp = AppManifest(appID: AppID("app"), permittedIdentifiers: [], backgroundModes: [], source: "main.swift")
        let appError = try #require(throws: ManifestError.self) { try invalidApp.validate() }
        #expect(appError.file == "main.swift")
        #expect(appError.key == "CFBundleIdentifier")
    }

    // MARK: The error type

    @Test func errorDescriptionFormat() {
        let withKey = ManifestError(code: .wrongType, file: "a.plist", key: "K[1]", message: "expected x, found y")
        #expect(withKey.description == "a.plist: K[1]: expected x, found y")
        let withoutKey = ManifestError(code: .malformed, file: "a.plist", message: "bad")
        #expect(withoutKey.description == "a.plist: bad")
    }

    @Test func errorCodesAreDistinct() {
        let codes: [ManifestError.Code] = [.unreadable, .malformed, .wrongType, .invalidValue, .missingKey]
        #expect(Set(codes).count == codes.count)
        #expect(Set(codes.map(\.description)).count == codes.count)
    }
}
