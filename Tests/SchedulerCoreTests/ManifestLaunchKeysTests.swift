import Foundation
import Testing
@testable import SchedulerCore

/// `CFBundleExecutable` and `BGTaskLaunchArguments`, the keys `bgtaskd` reads to launch an
/// app, in every manifest format. Pure parsing: no files.
@Suite("Manifest launch keys")
struct ManifestLaunchKeysTests {
    static let xml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
            <key>CFBundleIdentifier</key>
            <string>com.example.feedreader</string>
            <key>CFBundleExecutable</key>
            <string>bin/feedreader</string>
            <key>BGTaskLaunchArguments</key>
            <array>
                <string>--background</string>
                <string></string>
                <string>--feed=https://example.com/a b</string>
            </array>
            <key>BGTaskSchedulerPermittedIdentifiers</key>
            <array><string>com.example.feedreader.refresh</string></array>
        </dict>
        </plist>
        """

    static let arguments = ["--background", "", "--feed=https://example.com/a b"]

    func parse(_ object: [String: Any], source: String = "app.json") throws(ManifestError) -> AppManifest {
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return try AppManifest.parse(data, source: source)
    }

    func error(_ object: [String: Any]) -> ManifestError? {
        do {
            let manifest = try parse(object)
            Issue.record("expected an error, parsed \(manifest)")
            return nil
        } catch {
            return error
        }
    }

    @Test func xmlPropertyList() throws {
        let manifest = try AppManifest.parse(Data(Self.xml.utf8), source: "/apps/feed/Info.plist")
        #expect(manifest.executableName == "bin/feedreader")
        #expect(manifest.launchArguments == Self.arguments)
        #expect(manifest.appID == AppID("com.example.feedreader"))
    }

    @Test func binaryPropertyList() throws {
        let plist: [String: Any] = [
            "CFBundleIdentifier": "com.example.feedreader",
            "CFBundleExecutable": "/opt/feed/feedreader",
            "BGTaskLaunchArguments": Self.arguments,
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        #expect(data.starts(with: Array("bplist".utf8)))
        let manifest = try AppManifest.parse(data, source: "Info.plist")
        #expect(manifest.executableName == "/opt/feed/feedreader")
        #expect(manifest.launchArguments == Self.arguments)
    }

    @Test func json() throws {
        let text = """
            {"CFBundleIdentifier": "com.example.feedreader", "CFBundleExecutable": "feedreader",
             "BGTaskLaunchArguments": ["--background", "", "--feed=https://example.com/a b"]}
            """
        let manifest = try AppManifest.parse(Data(text.utf8), source: "app.json")
        #expect(manifest.executableName == "feedreader")
        #expect(manifest.launchArguments == Self.arguments)
    }

    @Test func manifestsWithoutTheKeysStillParse() throws {
        let manifest = try parse(["BGTaskSchedulerPermittedIdentifiers": ["com.example.a.refresh"], "UIBackgroundModes": ["fetch"]])
        #expect(manifest.executableName == nil)
        #expect(manifest.launchArguments == [])
        #expect(manifest.permits(identifier: "com.example.a.refresh", allowWildcard: false))
    }

    @Test func executableOfTheWrongTypeNamesTheKey() throws {
        for (value, found) in [(42 as Any, "a number (42)"), (["a"] as Any, "an array (1 element)"), (true as Any, "a boolean (true)")] {
            let refused = try #require(error(["CFBundleExecutable": value]))
            #expect(refused.code == .wrongType)
            #expect(refused.key == "CFBundleExecutable")
            #expect(refused.description == "app.json: CFBundleExecutable: expected a string, found \(found)")
        }
    }

    @Test(arguments: [
        ("", "it is empty"),
        (".", "\".\" names a directory"),
        ("..", "\"..\" names a directory"),
        ("bin/app\u{0}x", "it contains a NUL character"),
        (String(repeating: "a", count: 4096), "4096 bytes long"),
    ])
    func executableNamesThatCannotBeAFileAreRefused(name: String, reason: String) throws {
        let refused = try #require(error(["CFBundleExecutable": name]))
        #expect(refused.code == .invalidValue)
        #expect(refused.key == "CFBundleExecutable")
        #expect(refused.message.contains(reason))
        #expect(refused.message.hasPrefix("expected the path of the app's executable"))
    }

    @Test func argumentsOfTheWrongTypeNameTheKeyAndIndex() throws {
        let notArray = try #require(error(["BGTaskLaunchArguments": "--background"]))
        #expect(notArray.code == .wrongType)
        #expect(notArray.key == "BGTaskLaunchArguments")
        #expect(notArray.message == "expected an array of strings, found a string (\"--background\")")

        let number = try #require(error(["BGTaskLaunchArguments": ["a", "b", 3]]))
        #expect(number.code == .wrongType)
        #expect(number.key == "BGTaskLaunchArguments[2]")
        #expect(number.description == "app.json: BGTaskLaunchArguments[2]: expected a string, found a number (3)")

        // The same in a property list, where a <dict> sits in the array.
        let xml = Self.xml.replacingOccurrences(of: "<string></string>", with: "<dict/>")
        let plistError: ManifestError
        do {
            _ = try AppManifest.parse(Data(xml.utf8), source: "Info.plist")
            Issue.record("a dictionary argument was accepted")
            return
        } catch {
            plistError = error
        }
        #expect(plistError.key == "BGTaskLaunchArguments[1]")
        #expect(plistError.message == "expected a string, found a dictionary")
    }

    @Test func argumentLimits() throws {
        // 256 arguments, one of them 4096 bytes (all 256 that long would pass the 1 MiB
        // limit of the whole manifest).
        var atLimit = Array(repeating: "x", count: AppManifest.maximumLaunchArguments)
        atLimit[7] = String(repeating: "é", count: AppManifest.maximumLaunchArgumentBytes / 2)
        #expect(try parse(["BGTaskLaunchArguments": atLimit]).launchArguments == atLimit)

        let tooMany = try #require(error(["BGTaskLaunchArguments": Array(repeating: "x", count: 257)]))
        #expect(tooMany.code == .invalidValue)
        #expect(tooMany.key == "BGTaskLaunchArguments")
        #expect(tooMany.message == "expected at most 256 entries, found 257")

        let long = ["ok", "ok", String(repeating: "é", count: 2049)]  // 4098 bytes
        let tooLong = try #require(error(["BGTaskLaunchArguments": long]))
        #expect(tooLong.key == "BGTaskLaunchArguments[2]")
        #expect(tooLong.message == "expected an argument of at most 4096 bytes, found 4098 bytes")

        let nul = try #require(error(["BGTaskLaunchArguments": ["a\u{0}b"]]))
        #expect(nul.key == "BGTaskLaunchArguments[0]")
        #expect(nul.message.contains("without NUL characters"))
    }

    @Test func manifestsBuiltInCodeAreValidatedTheSameWay() throws {
        let bad = AppManifest(permittedIdentifiers: [], backgroundModes: [], executableName: "..", launchArguments: [])
        #expect(throws: ManifestError.self) { try bad.validate() }
        let manyArguments = AppManifest(permittedIdentifiers: [], backgroundModes: [], launchArguments: Array(repeating: "", count: 300))
        let refused = try #require(throws: ManifestError.self) { try manyArguments.validate() }
        #expect(refused.file == "code")
        #expect(refused.key == "BGTaskLaunchArguments")
        let good = AppManifest(permittedIdentifiers: [], backgroundModes: [], executableName: "app", launchArguments: ["-v"])
        try good.validate()
    }

    @Test func installedAppRoundTripsThroughJSONAndGivesItsManifest() throws {
        let app = InstalledApp(
            app: AppID("com.example.feedreader"), manifestPath: "/apps/feed/Info.plist", executable: "/apps/feed/feedreader",
            launchArguments: ["--background"], permittedIdentifiers: ["com.example.feedreader.refresh", "com.example.feedreader.export.*"],
            backgroundModes: ["processing", "fetch", "audio"], installedAt: Date(timeIntervalSinceReferenceDate: 725_000_000.125))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(app)
        #expect(try JSONDecoder().decode(InstalledApp.self, from: data) == app)
        // Stable output: the modes are sorted, whatever the set's order.
        #expect(String(decoding: data, as: UTF8.self).contains("\"backgroundModes\":[\"audio\",\"fetch\",\"processing\"]"))
        let manifest = app.manifest
        #expect(manifest.appID == app.app)
        #expect(manifest.source == "/apps/feed/Info.plist")
        #expect(manifest.permits(identifier: "com.example.feedreader.refresh", allowWildcard: false))
        #expect(manifest.permits(identifier: "com.example.feedreader.export.x", allowWildcard: true))
        #expect(!manifest.permits(identifier: "com.example.feedreader.export.x", allowWildcard: false))
        #expect(manifest.hasBackgroundMode("fetch"))
        #expect(manifest.launchArguments == ["--background"])
    }
}
