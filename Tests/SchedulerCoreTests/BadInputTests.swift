#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import SchedulerCore
import Testing

/// A fresh directory under the temporary directory, removed by the caller.
private func scratchDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-badinput-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A hang (a blocking open, a parser loop) fails the suite instead of stopping the run.
@Suite(.timeLimit(.minutes(1))) struct StrictJSONTests {
    private func scan(_ text: String) -> StrictJSON.Failure? {
        do {
            try StrictJSON.validate(Data(text.utf8))
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [
        "{}", "[]", "0", "-0.5e+10", "\"x\"", "true", "null", " {\"a\": [1, {\"b\": null}], \"c\": \"\\u00e9\\n\"} ",
        "{\"a\": {\"a\": {\"a\": 1}}}", "[{\"k\": 1}, {\"k\": 2}]", "\u{FEFF}{\"bom\": 1}",
    ])
    func acceptsWellFormedDocuments(text: String) {
        #expect(scan(text) == nil, "\(text)")
    }

    @Test func theExcerptNearAnErrorWritesBytesThatAreNotUTF8AsTheMessageNamesThem() throws {
        // `{"a": ` then a stray continuation byte: the message names byte 0xB1, and so does
        // the excerpt (it showed U+FFFD).
        let stray = Data(#"{"a": "#.utf8) + Data([0xB1]) + Data("1}".utf8)
        let failure = try #require(Self.failure(of: stray))
        let text = failure.explanation(in: stray)
        #expect(text.contains(#"near "\xB11}""#), "\(text)")
        #expect(text.contains("byte 0xB1"))
        #expect(!text.contains("\u{FFFD}"))
        // Valid characters stay as they are, a character cut at the twelfth byte is completed,
        // and control characters are escaped as JSON writes them.
        let cut = Data(#"{"a": x1234567890éz"#.utf8)
        #expect(try #require(Self.failure(of: cut)).explanation(in: cut).contains(#"near "x1234567890é""#))
        let control = Data("{\"a\": x\u{1B}[31m}".utf8)
        #expect(try #require(Self.failure(of: control)).explanation(in: control).contains(#"near "x\u001B[31m}""#))
    }

    private static func failure(of data: Data) -> StrictJSON.Failure? {
        do {
            try StrictJSON.validate(data)
            return nil
        } catch {
            return error
        }
    }

    @Test func refusesADuplicateKeyNamingItsPathAndPosition() throws {
        let failure = try #require(scan("{\"days\": [{\"name\": \"a\",\n \"name\": \"b\"}]}"))
        #expect(failure.kind == .duplicateKey("name"))
        #expect(failure.path == "$.days[0].name")
        #expect(failure.line == 2)
        #expect(failure.column == 2)
        #expect(failure.message.contains("duplicate key \"name\""))
    }

    @Test func keysAreComparedAfterUnescaping() throws {
        let failure = try #require(scan(#"{"CFBundleIdentifier": "a.b", "CFBundle\u0049dentifier": "c.d"}"#))
        #expect(failure.kind == .duplicateKey("CFBundleIdentifier"))
        #expect(failure.path == "$.CFBundleIdentifier")
    }

    @Test func oddKeysAreQuotedInThePath() throws {
        let failure = try #require(scan(#"{"a b": {"x": 1, "x": 2}}"#))
        #expect(failure.path == #"$["a b"].x"#)
    }

    @Test(arguments: [
        ("{\"a\": 1,\n \"b\": x}", 2, 7), ("[1, 2", 1, 6), ("{\"a\" 1}", 1, 6), ("[01]", 1, 2), ("", 1, 1), ("[1] [2]", 1, 5),
        ("{\"a\": \"\u{01}\"}", 1, 8), ("[\"\\q\"]", 1, 4), ("[1.]", 1, 4), ("{,}", 1, 2), ("[1,]", 1, 4), ("tru", 1, 1),
    ])
    func syntaxErrorsHaveALineAndColumn(text: String, line: Int, column: Int) throws {
        let failure = try #require(scan(text), "\(text)")
        #expect(failure.kind == .syntax)
        #expect(failure.line == line, "\(text): \(failure)")
        #expect(failure.column == column, "\(text): \(failure)")
    }

    @Test func nestingIsLimitedWithoutRecursion() throws {
        let atLimit = String(repeating: "[", count: StrictJSON.maximumDepth) + String(repeating: "]", count: StrictJSON.maximumDepth)
        #expect(scan(atLimit) == nil)
        let over = String(repeating: "[", count: StrictJSON.maximumDepth + 1) + String(repeating: "]", count: StrictJSON.maximumDepth + 1)
        #expect(scan(over)?.kind == .tooDeep)
        // A million open brackets: refused at the limit, no stack overflow.
        #expect(scan(String(repeating: "[{\"a\":", count: 500_000))?.kind == .tooDeep)
    }

    @Test func invalidUTF8IsPlacedInTheExplanation() throws {
        let data = Data("{\"version\": 1,\n \"name\": \"a".utf8) + Data([0xFF]) + Data("b\"}".utf8)
        do {
            try StrictJSON.validate(data)
            Issue.record("invalid UTF-8 accepted")
        } catch {
            #expect(error.explanation(in: data) == "expected UTF-8 JSON: JSON must be UTF-8, found invalid UTF-8 in a string (line 2, column 12, byte 26)", "\(error.explanation(in: data))")
        }
    }

    @Test func otherEncodingsAreRefusedAsNotUTF8() throws {
        var utf16 = Data([0xFF, 0xFE])
        utf16.append("{\"a\": 1}".data(using: .utf16LittleEndian)!)
        do {
            try StrictJSON.validate(utf16)
            Issue.record("UTF-16 accepted")
        } catch {
            #expect(error.kind == .encoding)
            #expect(error.message.contains("JSON must be UTF-8"))
        }
        do {
            try StrictJSON.validate("{\"a\": 1}".data(using: .utf16BigEndian)!)
            Issue.record("UTF-16 without a mark accepted")
        } catch {
            #expect(error.kind == .encoding)
        }
        do {
            try StrictJSON.validate(Data([0x5B, 0x22, 0xC3, 0x28, 0x22, 0x5D]))
            Issue.record("invalid UTF-8 accepted")
        } catch {
            #expect(error.kind == .encoding)
        }
    }

    @Test func numbersBeyondADoubleAreRefusedNamingTheirPathShortened() throws {
        #expect(scan("[1e308, -1.7976931348623157e308, 1e-999, 0.000]") == nil, "in range (an underflow is 0)")
        let huge = try #require(scan("{\"policy\": {\"threshold\": 1e999}}"))
        #expect(huge.path == "$.policy.threshold")
        #expect(huge.kind == .numberOutOfRange && huge.culpritKeyPath == "policy.threshold", "said at its key, as a value of the wrong kind is")
        #expect(huge.placedExplanation(in: Data()) .hasPrefix("at $.policy.threshold: expected a number within the range of a Double"), "\(huge)")
        #expect(huge.message.contains("within the range of a Double") && huge.message.contains("1e999"), "\(huge.message)")
        #expect(huge.column == 26)
        let digits = String(repeating: "9", count: 100_000)
        let long = try #require(scan("{\"days\": [\(digits)]}"))
        #expect(long.path == "$.days[0]")
        #expect(long.message.contains("(100000 characters)") && long.message.count < 200, "the number is not echoed whole")
    }

    @Test func theTopLevelObjectsNumbersAreKeptAsWritten() throws {
        let literals = try StrictJSON.topLevelNumberLiterals(validating: Data(#"{"seed": 9007199254740993e0, "a": {"b": 1}, "c": [2], "d": -0.50, "e": "3"}"#.utf8))
        // Only numbers directly in the root object, exactly as written.
        #expect(literals == ["seed": "9007199254740993e0", "d": "-0.50"])
        #expect(try StrictJSON.topLevelNumberLiterals(validating: Data("[1, 2]".utf8)).isEmpty)
        #expect(try StrictJSON.topLevelNumberLiterals(validating: Data("7".utf8)).isEmpty)
        // The same checks as validate.
        #expect(throws: StrictJSON.Failure.self) { try StrictJSON.topLevelNumberLiterals(validating: Data(#"{"a": 1, "a": 2}"#.utf8)) }
    }

    /// Read up to a failure: the members that ended before it, none after it, none twice.
    @Test func theTopLevelNumbersBeforeAFailureAreKept() {
        func read(_ text: String) -> (numbers: [String: String], failure: StrictJSON.Failure?) {
            StrictJSON.topLevelNumberLiterals(readingUpToFailure: Data(text.utf8))
        }
        let valid = read(#"{"a": 1, "b": 2.5}"#)
        #expect(valid.numbers == ["a": "1", "b": "2.5"] && valid.failure == nil)
        let cut = read(#"{"a": 1 , "b": [1, 2}, "c": 3}"#)
        #expect(cut.numbers == ["a": "1"] && cut.failure?.path == "$.b[1]", "\(cut)")
        // A number whose member does not end is not one the writer finished.
        #expect(read(#"{"a": 1, "b": 12 34}"#).numbers == ["a": "1"])
        #expect(read(#"{"a": 1, "b": 7"#).numbers == ["a": "1"])
        // A key twice at the top level has no number; twice further in, it is not a top-level key.
        let twice = read(#"{"a": 1, "b": 2, "a": 3}"#)
        #expect(twice.numbers == ["b": "2"] && twice.failure?.kind == .duplicateKey("a"), "\(twice)")
        #expect(read(#"{"a": 1, "b": {"c": 1, "c": 2}}"#).numbers == ["a": "1"])
    }

    @Test func aLoneSurrogateIsRefusedNamingIt() throws {
        #expect(scan("[\"\\ud83d\\ude00\", \"\\u00e9\"]") == nil, "a pair and a plain escape")
        let high = try #require(scan("{\"name\": \"a\\ud800\"}"))
        #expect(high.path == "$.name")
        #expect(high.message.contains("\\uD800") && high.message.contains("high surrogate"), "\(high.message)")
        #expect(high.column == 12)
        let low = try #require(scan("[\"\\udc00x\"]"))
        #expect(low.message.contains("low surrogate with no high surrogate"), "\(low.message)")
        let unpaired = try #require(scan("[\"\\ud800\\u0041\"]"))
        #expect(unpaired.message.contains("\\uD800"))
    }

    @Test func manyKeysAreCheckedInLinearTime() throws {
        // 100,000 distinct keys and a duplicate at the very end: a quadratic scan would take minutes.
        var text = "{"
        for index in 0..<100_000 { text += "\"k\(index)\": \(index)," }
        text += "\"k7\": 0}"
        let began = ContinuousClock.now
        let failure = try #require(scan(text))
        #expect(failure.kind == .duplicateKey("k7"))
        #expect(ContinuousClock.now - began < .seconds(20))
    }
}

/// A hang (a blocking open, a parser loop) fails the suite instead of stopping the run.
@Suite(.timeLimit(.minutes(1))) struct BoundedFileTests {
    private func problem(_ path: String, limit: Int = 1 << 20) -> BoundedFile.Problem? {
        do {
            _ = try BoundedFile.read(path: path, limit: limit)
            return nil
        } catch {
            return error.problem
        }
    }

    @Test func readsARegularFile() throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("a")
        try Data("hello".utf8).write(to: file)
        #expect(try BoundedFile.read(path: file.path, limit: 5) == Array("hello".utf8))
        #expect(problem(file.path, limit: 4) == .tooLarge(limit: 4, size: 5))
        #expect(BoundedFile.Problem.tooLarge(limit: 4, size: 5).found == "a file of 5 bytes, larger than 4 bytes")
        // A size fstat cannot give (sysfs says 4096, procfs 0, whatever they hold): the limit alone.
        #expect(BoundedFile.Problem.tooLarge(limit: 1 << 20, size: nil).found == "a file larger than 1 MiB")
    }

    @Test func aFIFOIsRefusedWithoutBlocking() throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        // Without O_NONBLOCK and the stat check this would wait for a writer forever.
        #expect(problem(fifo) == .notRegularFile("a FIFO (named pipe)"))
        do {
            _ = try BoundedFile.read(path: fifo, limit: 10)
        } catch {
            #expect(error.description == "\(fifo): expected a regular file, found a FIFO (named pipe)")
        }
    }

    @Test func directoriesDevicesLoopsAndMissingFilesAreNamed() throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(problem(directory.path) == .notRegularFile("a directory"))
        #expect(problem("/dev/null") == .notRegularFile("a character device"))
        #expect(problem(directory.appendingPathComponent("missing").path) == .missing)
        let loop = directory.appendingPathComponent("loop")
        try FileManager.default.createSymbolicLink(atPath: loop.path, withDestinationPath: loop.path)
        #expect(problem(loop.path) == .symbolicLinkLoop)
        #expect(BoundedFile.Problem.symbolicLinkLoop.found.contains("symbolic link loop"))
        // A link that is there but leads nowhere is not "no such file".
        let dangling = directory.appendingPathComponent("dangling")
        try FileManager.default.createSymbolicLink(atPath: dangling.path, withDestinationPath: "missing/\u{1B}x")
        #expect(problem(dangling.path) == .danglingSymbolicLink(target: "missing/\u{1B}x"))
        #expect(problem(dangling.path)?.found == #"a symbolic link to "missing/\u001Bx", which does not exist"#)
        // The same words for a path that is only looked up (a state directory): missing only
        // when nothing is there, a loop on the way named as one.
        #expect(BoundedFile.lookupProblem(at: directory.path) == nil)
        #expect(BoundedFile.lookupProblem(at: "/dev/null") == nil)
        #expect(BoundedFile.lookupProblem(at: directory.appendingPathComponent("missing").path) == .missing)
        #expect(BoundedFile.lookupProblem(at: loop.path) == .symbolicLinkLoop)
        #expect(BoundedFile.lookupProblem(at: loop.appendingPathComponent("scheduler.sqlite").path) == .symbolicLinkLoop)
        #expect(BoundedFile.lookupProblem(at: dangling.path) == .danglingSymbolicLink(target: "missing/\u{1B}x"))
    }

    @Test func saturatingConversionNeverTraps() {
        #expect(Int(saturating: 1e19) == .max)
        #expect(Int(saturating: -1e300) == .min)
        #expect(Int(saturating: .nan) == 0)
        #expect(Int(saturating: .infinity) == .max)
        #expect(Int(saturating: 12.9) == 12)
    }
}

/// A hang (a blocking open, a parser loop) fails the suite instead of stopping the run.
@Suite(.timeLimit(.minutes(1))) struct PolicyFileBadInputTests {
    private func error(_ text: String) -> PolicyConfigurationError? {
        do {
            _ = try PolicyConfiguration.parse(Data(text.utf8), source: "p.json")
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: ["threshold", "criticalBatteryLevel", "processingCPUPressureLimit", "energyBudgetPerAppPerDay",
                      "minimumLaunchInterval", "herdSpreadWindow", "herdSpreadWindowBeforeLaunch", "maximumDeferral", "coalescingTolerance"])
    func hugeNumbersAreRefusedWithTheKeyAndRange(key: String) throws {
        for value in ["1e19", "1e300", "-1", "9223372036854775808", "1e400"] {
            let refused = try #require(error("{\"\(key)\": \(value)}"), "\(key)=\(value) accepted")
            #expect(refused.description.contains(key), "\(refused)")
            if value != "1e400" { #expect(refused.message.contains("from 0 to"), "\(refused)") }
        }
        // The largest accepted value is accepted and usable by every message.
        let range = try #require(PolicyConfiguration.numberRanges[key])
        let configuration = try PolicyConfiguration.parse(Data("{\"\(key)\": \(range.upperBound)}".utf8), source: "p.json")
        _ = PolicySet(configuration: configuration)
    }

    @Test func negativeZeroIsZero() throws {
        let configuration = try PolicyConfiguration.parse(Data(#"{"threshold": -0.0, "herdSpreadWindow": -0.0}"#.utf8), source: "p.json")
        #expect(configuration.threshold.sign == .plus && configuration.herdSpreadWindow.sign == .plus)
        #expect(configuration.summary(source: "p.json").contains("threshold 0.0;"), "\(configuration.summary(source: "p.json"))")
    }

    @Test func runningWorkCannotExpireFromNominal() throws {
        let refused = try #require(error(#"{"thermalExpiresAt": "nominal"}"#))
        #expect(refused.key == "thermalExpiresAt" && refused.message.contains("every run would expire as it starts"), "\(refused)")
        // Waiting from nominal is allowed (that kind waits for good), as is a before-launch
        // herd window longer than the window (the policy takes the shorter).
        #expect(error(#"{"thermalDefersProcessingAt": "nominal", "thermalExpiresAt": "fair"}"#) == nil)
        #expect(error(#"{"herdSpreadWindow": 0}"#) == nil)
    }

    @Test func theSummaryShowsNumbersAsSetNotRoundedAway() throws {
        let configuration = try PolicyConfiguration.parse(
            Data(#"{"maximumDeferral": 10, "minimumLaunchInterval": 0.5, "criticalBatteryLevel": 0.205, "coalescingTolerance": 1e6}"#.utf8), source: "p.json")
        let summary = configuration.summary(source: "p.json")
        for text in ["starvation guard after 10 s", "at least 0.5 s apart", "critical battery 20.5 %", "runs due within 1000000 s"] {
            #expect(summary.contains(text), "\(text) in \(summary)")
        }
        #expect(PolicyConfiguration().summary(source: "defaults").contains("starvation guard after 48 h\n"))
        #expect(PolicyConfiguration().summary(source: "defaults").contains("critical battery 20 %"))
    }

    @Test func aLongUnknownKeyIsCutShort() throws {
        let long = String(repeating: "k", count: 60_000)
        let refused = try #require(error("{\"\(long)\": 1}"))
        #expect(refused.key == String(repeating: "k", count: 80) + "..." && refused.message == "unknown key")
        let weight = try #require(error("{\"weights\": {\"\(long)\": 1}}"))
        #expect(weight.key.map { $0.hasPrefix("weights.kkk") && $0.count < 100 } == true, "\(weight)")
    }

    @Test func weightsAreBounded() throws {
        let refused = try #require(error(#"{"weights": {"thermal": 1e19}}"#))
        #expect(refused.key == "weights.thermal")
        #expect(refused.message.contains("from 0 to 1000"))
    }

    @Test func aDuplicateKeyIsRefusedNamingIt() throws {
        let refused = try #require(error("{\"threshold\": 0.2,\n\"threshold\": 0.9}"))
        #expect(refused.key == "threshold")
        #expect(refused.message.contains("duplicate key"))
        #expect(refused.message.contains("line 2, column 1"))
        let nested = try #require(error(#"{"weights": {"thermal": 1, "thermal": 2}}"#))
        #expect(nested.key == "weights.thermal")
    }

    @Test func aSyntaxErrorHasItsLineAndColumn() throws {
        let refused = try #require(error("{\n  \"threshold\": 0.5,\n  \"herdSpreadWindow\" 60\n}"))
        #expect(refused.message.contains("line 3, column 22"), "\(refused)")
    }

    @Test func aFIFOPolicyFileIsRefusedWithoutBlocking() throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("policy.json").path
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(throws: PolicyConfigurationError.self) { try PolicyConfiguration.load(path: fifo) }
        do {
            _ = try PolicyConfiguration.load(path: fifo)
        } catch {
            #expect(error.description == "\(fifo): expected a policy configuration file, found a FIFO (named pipe)")
        }
    }
}

/// A hang (a blocking open, a parser loop) fails the suite instead of stopping the run.
@Suite(.timeLimit(.minutes(1))) struct ManifestBadInputTests {
    private func error(_ data: Data) -> ManifestError? {
        do {
            _ = try AppManifest.parse(data, source: "m")
            return nil
        } catch {
            return error
        }
    }

    @Test func aSecondBundleIdentifierInJSONIsRefused() throws {
        let refused = try #require(error(Data(#"{"CFBundleIdentifier": "com.a", "BGTaskSchedulerPermittedIdentifiers": [], "CFBundleIdentifier": "com.b"}"#.utf8)))
        #expect(refused.code == .malformed)
        #expect(refused.key == "CFBundleIdentifier")
        #expect(refused.message.contains("duplicate key \"CFBundleIdentifier\""))
        #expect(refused.message.contains("line 1, column"))
    }

    @Test func aSecondKeyInAnXMLDictIsRefused() throws {
        let xml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0"><dict>
          <!-- <key>CFBundleIdentifier</key> in a comment does not count -->
          <key>CFBundleIdentifier</key><string>com.a</string>
          <key>Nested</key><array><dict><key>x</key><true/></dict><dict><key>y</key><true/><key>y</key><false/></dict></array>
        </dict></plist>
        """
        let refused = try #require(error(Data(xml.utf8)))
        #expect(refused.key == "Nested[1].y")
        #expect(refused.message.contains("duplicate key \"y\""))
        let top = xml.replacingOccurrences(of: "<key>Nested</key>", with: "<key>CFBundle&#73;dentifier</key><string>com.b</string><key>Nested</key>")
        #expect(error(Data(top.utf8))?.key == "CFBundleIdentifier")
    }

    @Test func aRepeatedKeyInABinaryPropertyListIsRefused() throws {
        let original = try PropertyListSerialization.data(
            fromPropertyList: ["CFBundleIdentifier": "com.a", "CFBundleIdentifieR": "com.b"], format: .binary, options: 0)
        #expect(error(original) == nil, "two different keys are accepted")
        // Lower-casing the second key's last letter makes it the first key: two keys, one text.
        var bytes = [UInt8](original)
        let second = Array("CFBundleIdentifieR".utf8)
        let index = try #require((0...(bytes.count - second.count)).first { bytes[$0..<$0 + second.count].elementsEqual(second) })
        bytes[index + second.count - 1] = UInt8(ascii: "r")
        let refused = try #require(error(Data(bytes)))
        #expect(refused.key == "CFBundleIdentifier")
        #expect(refused.message.contains("binary property list"))
    }

    @Test func manyXMLKeysAreCheckedInLinearTime() throws {
        var xml = "<plist version=\"1.0\"><dict>"
        for index in 0..<50_000 { xml += "<key>k\(index)</key><true/>" }
        xml += "<key>k7</key><true/></dict></plist>"
        let began = ContinuousClock.now
        let (duplicate, tooDeep) = XMLPropertyListKeys.firstDuplicate(in: Data(xml.utf8))
        #expect(duplicate?.key == "k7")
        #expect(!tooDeep)
        #expect(ContinuousClock.now - began < .seconds(20))
    }

    /// PropertyListSerialization stops at </plist> and ignores what follows.
    @Test(arguments: [
        ("</plist>\njunk <foo/> trailing\n", "\"junk <foo/> trailing\" at line 2"),
        ("</plist><plist version=\"1.0\"><dict/></plist>", "\"<plist version=\\\"1.0\\\"><di\" at line 1"),
        ("</plist>\n<!-- a comment -->\n\u{1B}[2J", "\"\\u001B[2J\" at line 3"),
        ("</plist>\u{0}", "\"\\u0000\" at line 1"),
    ])
    func contentAfterTheClosingPlistIsRefused(ending: String, found: String) throws {
        let xml = #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>CFBundleIdentifier</key><string>com.a</string></dict>"# + ending
        let refused = try #require(error(Data(xml.utf8)), "\(ending.debugDescription) accepted")
        #expect(refused.code == .malformed)
        #expect(refused.description.hasPrefix("m: expected nothing but whitespace and comments after </plist>, found \(found)"), "\(refused)")
        // The same in UTF-16.
        var utf16 = Data([0xFF, 0xFE])
        utf16.append(xml.data(using: .utf16LittleEndian)!)
        #expect(error(utf16)?.message.contains("after </plist>") == true)
    }

    @Test func whitespaceCommentsAndInstructionsAfterTheClosingPlistAreXMLAndAccepted() throws {
        for ending in ["</plist>", "</plist>\n\n", "</plist>\n<!-- generated -->\n<?pi x?>\n", "</plist>\r\n\t "] {
            let xml = #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>CFBundleIdentifier</key><string>com.a</string></dict>"# + ending
            #expect(try AppManifest.parse(Data(xml.utf8), source: "m").appID == AppID("com.a"), "\(ending.debugDescription)")
        }
        // A comment or CDATA inside that mentions </plist> is not the end of the root.
        let inside = #"<plist version="1.0"><dict><!-- </plist> junk --><key>CFBundleIdentifier</key><string><![CDATA[com.a]]></string></dict></plist>"#
        #expect(try AppManifest.parse(Data(inside.utf8), source: "m").appID == AppID("com.a"))
    }

    /// Foundation refuses a byte that is not UTF-8 with "Unable to convert string to
    /// correct encoding" and no place: the error names the byte, its line, column and
    /// offset, and keeps the parser's words.
    @Test(arguments: [
        ([0xFF], 0xFF as UInt8),                      // never in UTF-8
        ([0xC3, UInt8(ascii: "x")], 0xC3),            // a sequence cut short
        ([0x80], 0x80),                               // a stray continuation byte
        ([0xC0, 0xAF], 0xC0),                         // an overlong "/"
        ([0xED, 0xA0, 0x80], 0xED),                   // a UTF-16 surrogate
        ([0xF4, 0x90, 0x80, 0x80], 0xF4),             // beyond U+10FFFF
    ] as [([UInt8], UInt8)])
    func aByteThatIsNotUTF8InAnXMLManifestIsNamedWithItsLine(bad: [UInt8], byte: UInt8) throws {
        let head = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">\n<dict>\n  <!-- caf\u{E9} -->\n  <key>CFBundleIdentifier</key>\n  <string>com.a"
        let data = Data(Array(head.utf8) + bad + Array("</string>\n</dict>\n</plist>\n".utf8))
        let refused = try #require(error(data))
        #expect(refused.code == .malformed)
        let offset = head.utf8.count
        let hex = String(byte, radix: 16, uppercase: true)
        #expect(refused.description == "m: expected a property list in UTF-8 (no other encoding is declared), found a byte that is not UTF-8 (0x\(hex)) at line 6, column 16 (byte offset \(offset)); the parser said: Unable to convert string to correct encoding", "\(refused)")
        #expect(XMLPropertyListKeys.firstInvalidUTF8(in: data) == .init(byte: byte, offset: offset, line: 6, column: 16))
    }

    /// What the parser accepts stays accepted: bytes that are not UTF-8 in a comment (it
    /// skips comments unread), or in a list whose declaration names another encoding.
    @Test func bytesThatAreNotUTF8WhereTheParserTakesThemAreNotSought() throws {
        let comment = Data(Array("<?xml version=\"1.0\"?><plist version=\"1.0\"><!-- caf".utf8) + [0xE9] + Array(" --><dict><key>CFBundleIdentifier</key><string>com.a</string></dict></plist>".utf8))
        #expect(XMLPropertyListKeys.firstInvalidUTF8(in: comment) == nil)
        #expect(try AppManifest.parse(comment, source: "m").appID == AppID("com.a"))
        let latin1 = Data(Array("<?xml version='1.0' encoding='ISO-8859-1'?><plist version=\"1.0\"><dict><key>CFBundleIdentifier</key><string>com.a</string><key>CFBundleName</key><string>caf".utf8) + [0xE9] + Array("</string></dict></plist>".utf8))
        #expect(XMLPropertyListKeys.firstInvalidUTF8(in: latin1) == nil)
        #expect(try AppManifest.parse(latin1, source: "m").appID == AppID("com.a"))
        // Every well-formed sequence, one to four bytes, passes.
        let text = "<plist version=\"1.0\"><dict><key>CFBundleIdentifier</key><string>com.a</string><key>N</key><string>a\u{E9}\u{20AC}\u{10FFFF}\u{1F600}</string></dict></plist>"
        #expect(XMLPropertyListKeys.firstInvalidUTF8(in: Data(text.utf8)) == nil)
    }

    @Test func aUTF16JSONManifestSaysJSONMustBeUTF8() throws {
        var data = Data([0xFF, 0xFE])
        data.append(#"{"CFBundleIdentifier": "com.a"}"#.data(using: .utf16LittleEndian)!)
        let refused = try #require(error(data))
        #expect(refused.message.contains("JSON must be UTF-8"), "\(refused)")
        // A UTF-16 XML property list is still a property list.
        var plist = Data([0xFF, 0xFE])
        plist.append(#"<?xml version="1.0" encoding="UTF-16"?><plist version="1.0"><dict><key>CFBundleIdentifier</key><string>com.a</string></dict></plist>"#.data(using: .utf16LittleEndian)!)
        #expect(try AppManifest.parse(plist, source: "m").appID == AppID("com.a"))
    }

    @Test func aUTF16XMLPropertyListWithADuplicateKeyIsRefusedToo() throws {
        var plist = Data([0xFF, 0xFE])
        plist.append(#"<?xml version="1.0" encoding="UTF-16"?><plist version="1.0"><dict><key>CFBundleIdentifier</key><string>com.a</string><key>CFBundleIdentifier</key><string>com.b</string></dict></plist>"#.data(using: .utf16LittleEndian)!)
        let refused = try #require(error(plist))
        #expect(refused.message.contains("duplicate key \"CFBundleIdentifier\""), "\(refused)")
    }

    @Test func sizeAndCountAreCapped() throws {
        let many = (0...AppManifest.maximumIdentifiers).map { "\"com.a.t\($0)\"" }.joined(separator: ",")
        let refused = try #require(error(Data("{\"BGTaskSchedulerPermittedIdentifiers\": [\(many)]}".utf8)))
        #expect(refused.key == "BGTaskSchedulerPermittedIdentifiers")
        #expect(refused.message.contains("at most 10000 entries"))
        let huge = Data(repeating: 0x20, count: AppManifest.maximumSize + 1)
        #expect(error(huge)?.message.contains("at most 1 MiB") == true)
    }
}

/// Standard streams that fail (a full disk, a reader gone) are reported, never a trap.
@Suite struct StandardStreamTests {
    @Test func textFromElsewhereIsShownNotObeyed() {
        #expect(StandardStream.terminalSafe("plain, é ✓\n\ttabbed") == "plain, é ✓\n\ttabbed", "line feeds, tabs and text pass")
        #expect(StandardStream.terminalSafe("\u{1B}[2J\u{1B}]0;pwned\u{07}\r\u{0}\u{7F}\u{9B}x") == #"\u001B[2J\u001B]0;pwned\u0007\u000D\u0000\u007F\u009Bx"#)
        // Bidirectional controls and line separators are shown, not obeyed (a right-to-left
        // override would turn the rest of a message around); other format characters and
        // right-to-left text itself pass.
        #expect(StandardStream.terminalSafe("a\u{202E}nosj.live\u{202C}b\u{2066}c\u{2069}\u{200F}\u{061C}\u{2028}\u{2029}") == #"a\u202Enosj.live\u202Cb\u2066c\u2069\u200F\u061C\u2028\u2029"#)
        #expect(StandardStream.terminalSafe("שלום \u{200D}👍") == "שלום \u{200D}👍", "Hebrew and a zero-width joiner pass")
    }

    @Test func aFailingWriteReturnsItsErrnoInsteadOfTrapping() throws {
        let full = open("/dev/full", O_WRONLY | O_CLOEXEC)
        try #require(full >= 0)
        defer { close(full) }
        // FileHandle.write would trap here (a try! inside Foundation).
        #expect(StandardStream.write("a log line\n", to: full) == ENOSPC)
        let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        try #require(null >= 0)
        defer { close(null) }
        #expect(StandardStream.write(String(repeating: "x", count: 1_000_000), to: null) == nil)
    }

    /// A pipe whose reader went away is EPIPE, not the process's death: an app's stderr piped
    /// to a log collector that ended killed it at its next log line (an outside probe, exit
    /// 141). The test process keeps SIGPIPE's default action, so without the fix it dies here.
    @Test func aPipeWithoutAReaderIsEPIPEAndNoSignal() throws {
        // Only with SIGPIPE's default action could the test process die here; said if not.
        var action = sigaction()
        sigaction(SIGPIPE, nil, &action)
        let handler = unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self)
        #expect(handler == 0, "SIGPIPE's action in the test process is not the default (\(handler)): this test cannot fail here")
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }  // not for another test's child
        close(ends[0])
        defer { close(ends[1]) }
        #expect(StandardStream.write("into a broken pipe\n", to: ends[1]) == EPIPE)
        #expect(StandardStream.write(String(repeating: "y", count: 100_000), to: ends[1]) == EPIPE)
        // Nothing is left pending for the thread, and its signal mask is as it was.
        var pending = sigset_t()
        sigpending(&pending)
        #expect(sigismember(&pending, SIGPIPE) == 0)
        var mask = sigset_t()
        pthread_sigmask(SIG_SETMASK, nil, &mask)
        #expect(sigismember(&mask, SIGPIPE) == 0)
    }

    /// Lines longer than a pipe takes whole (4 KiB) from several threads at once come out
    /// whole, one after another (an outside probe: 136 of 160 lines of 100 KB came out mixed).
    @Test func longLinesFromSeveralThreadsDoNotInterleave() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }  // not for another test's child
        let (reader, writer) = (ends[0], ends[1])
        let collected = Mutex(Data())
        let drained = DispatchSemaphore(value: 0)
        let expected = 80 * 100_001
        Thread.detachNewThread {
            // Until every byte came (not until the end of the pipe: a child another test
            // spawns at that moment could hold the write end open).
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while collected.withLock({ $0.count }) < expected {
                let count = read(reader, &buffer, buffer.count)
                if count <= 0 { break }
                collected.withLock { $0.append(contentsOf: buffer[0..<count]) }
            }
            close(reader)
            drained.signal()
        }
        let letters = Array("abcdefgh")
        DispatchQueue.concurrentPerform(iterations: letters.count) { index in
            for _ in 0..<10 {
                _ = StandardStream.write(String(repeating: letters[index], count: 100_000) + "\n", to: writer)
            }
        }
        close(writer)
        #expect(drained.wait(timeout: .now() + 60) == .success)
        let lines = String(decoding: collected.withLock { $0 }, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 80)
        #expect(lines.allSatisfy { $0.count == 100_000 && Set($0).count == 1 }, "a line holds another thread's letters")
    }
}

/// Excerpts of outside text in messages are bounded by Unicode scalars, so one grapheme
/// cluster of any length cannot pass whole.
@Suite struct TextExcerptTests {
    @Test func anExcerptIsBoundedByScalarsAndMarkedWhenCut() {
        #expect("short".excerpt(scalars: 40) == "short")
        #expect(String(repeating: "x", count: 40).excerpt(scalars: 40) == String(repeating: "x", count: 40))
        #expect(String(repeating: "x", count: 41).excerpt(scalars: 40) == String(repeating: "x", count: 40) + "...")
        let cluster = "a" + String(repeating: "\u{301}", count: 100_000)
        #expect(cluster.excerpt(scalars: 40).unicodeScalars.count == 43)
    }
}

/// Arguments that are not UTF-8 (a file name in another encoding): `CommandLine.arguments`
/// turned their bytes into U+FFFD, and bgtask then called an existing file missing.
@Suite struct CommandLineArgumentTests {
    @Test("arguments that are UTF-8 are taken as they are; the first that is not is refused by its number, its bad bytes shown")
    func invalidUTF8IsRefusedByNumber() {
        let good: [[UInt8]] = [Array("install".utf8), Array("/tmp/caf\u{E9}.json".utf8)]
        #expect((try? CommandLineValue.arguments(good).get()) == ["install", "/tmp/caf\u{E9}.json"])
        let bad = good + [Array("/tmp/Inf".utf8) + [0xFF] + Array(".json".utf8), [0xC3]]
        switch CommandLineValue.arguments(bad) {
        case .success(let decoded): Issue.record("decoded \(decoded)")
        case .failure(let error):
            #expect(error.message == "argument 3 is not valid UTF-8 ('/tmp/Inf\\xFF.json'); names and paths are read as UTF-8 (rename the file)")
        }
        // A truncated sequence and a lone continuation byte, each byte shown.
        if case .failure(let error) = CommandLineValue.arguments([[0x61, 0xE2, 0x82, 0x62, 0x80]]) {
            #expect(error.message.hasPrefix("argument 1 is not valid UTF-8 ('a\\xE2\\x82b\\x80')"), "\(error.message)")
        } else {
            Issue.record("a truncated sequence was taken")
        }
    }

    @Test("a report's reproduce line quotes a word a shell would split or expand, and only such a word")
    func reproduceLinesQuoteWhatAShellWouldChange() {
        #expect(CommandLineValue.shellWord("docs/lives/night-shift.json=1,commuter=3") == "docs/lives/night-shift.json=1,commuter=3")
        #expect(CommandLineValue.shellWord("my lives/nurse.json=1") == "'my lives/nurse.json=1'")
        #expect(CommandLineValue.shellWord("it's.json") == #"'it'\''s.json'"#)
        #expect(CommandLineValue.shellWord("$HOME/x;rm") == "'$HOME/x;rm'")
        #expect(CommandLineValue.shellWord("caf\u{E9}.json") == "'caf\u{E9}.json'")
        #expect(CommandLineValue.shellWord("") == "''")
    }
}
