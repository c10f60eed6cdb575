import Testing
@testable import SchedulerCore

/// The identifier rules: non-empty, at most 255 UTF-8 bytes, reverse-DNS.
@Suite("Task identifier rules")
struct TaskIdentifierRulesTests {
    @Test("valid identifiers have no problem", arguments: [
        "com.example",
        "com.example.app.refresh",
        "org.my-company.feed_reader.sync2",
        "A.B",
        "1.2.3",
    ])
    func valid(identifier: String) {
        #expect(TaskIdentifierRules.problem(with: identifier) == nil)
        #expect(TaskIdentifierRules.problem(withPermittedEntry: identifier) == nil)
    }

    @Test func emptyIsRejected() {
        #expect(TaskIdentifierRules.problem(with: "") == .empty)
        #expect(TaskIdentifierRules.problem(withPermittedEntry: "") == .empty)
        #expect(TaskIdentifierProblem.empty.description.contains("empty"))
    }

    @Test("malformed reverse-DNS is rejected", arguments: [
        ("refresh", "only one label"),                      // no dot
        ("com.example.", "empty label"),                    // trailing dot
        (".com.example", "empty label"),                    // leading dot
        ("com..example", "empty label"),                    // double dot
        ("com.example app.refresh", "a space"),             // space
        ("com.exämple.refresh", "U+00E4"),                  // non-ASCII letter
        ("com.example/refresh", "'/'"),                     // path separator
        ("com.example.*", "wildcard is only allowed in manifest entries"),
        ("com.*.refresh", "'*' is only allowed as a trailing"),
    ])
    func notReverseDNS(identifier: String, reason: String) {
        let problem = TaskIdentifierRules.problem(with: identifier)
        #expect(problem == .notReverseDNS(identifier))
        let description = problem?.description ?? ""
        #expect(description.contains("\"\(identifier)\""), "names the identifier: \(description)")
        #expect(description.contains(reason), "says why: \(description)")
        #expect(description.contains("com.example.app.refresh"), "shows a good example: \(description)")
    }

    @Test(arguments: ["com.exa\u{1B}[2Jmple.app", "com.example.\u{0}", "com.example.\u{85}x", "com.\u{7F}.x"])
    func aControlCharacterIsNamedNeverPrinted(identifier: String) throws {
        let description = try #require(TaskIdentifierRules.problem(with: identifier)).description
        #expect(description.contains("the control character U+00"), "\(description)")
        #expect(!description.unicodeScalars.contains { $0.properties.generalCategory == .control }, "raw control character in \(description.debugDescription)")
    }

    @Test func lengthLimitIs255BytesOfASCII() {
        let base = "com.example."
        let exactly255 = base + String(repeating: "a", count: 255 - base.utf8.count)
        let exactly256 = exactly255 + "a"
        #expect(exactly255.utf8.count == 255)
        #expect(TaskIdentifierRules.problem(with: exactly255) == nil)
        #expect(TaskIdentifierRules.problem(with: exactly256) == .tooLong(bytes: 256))
        #expect(TaskIdentifierRules.maximumLength == 255)
    }

    @Test func lengthIsCountedInUTF8BytesNotCharacters() {
        // 2-byte "é": 128 characters of label but 256 bytes in total.
        let base = "com.x."
        let label = String(repeating: "é", count: (256 - base.utf8.count) / 2)
        let identifier = base + label
        #expect(identifier.utf8.count == 256)
        #expect(identifier.count < 255, "fewer characters than the limit")
        #expect(TaskIdentifierRules.problem(with: identifier) == .tooLong(bytes: 256))

        // One byte less is within the length limit, so the non-ASCII character is what fails.
        let within = "com.xy." + String(repeating: "é", count: 124)
        #expect(within.utf8.count == 255)
        #expect(TaskIdentifierRules.problem(with: within) == .notReverseDNS(within))
    }

    @Test func tooLongDescriptionGivesBothLengths() {
        let description = TaskIdentifierProblem.tooLong(bytes: 300).description
        #expect(description.contains("300"))
        #expect(description.contains("255"))
    }

    @Test func wildcardEntriesAreAcceptedOnlyInManifests() {
        #expect(TaskIdentifierRules.problem(withPermittedEntry: "com.example.app.export.*") == nil)
        #expect(TaskIdentifierRules.problem(withPermittedEntry: "com.example.*") == nil)
        #expect(TaskIdentifierRules.problem(with: "com.example.*") == .notReverseDNS("com.example.*"))
    }

    @Test("wildcards need a valid reverse-DNS prefix", arguments: [
        ("*", "'*'"),
        (".*", "a wildcard needs a prefix"),
        ("com.*", "only one label"),
        ("com..x.*", "empty label"),
        ("com.x*", "'*' is only allowed as a trailing"),
        ("com.*.*", "'*' is only allowed as a trailing"),
        ("com.ex ample.*", "a space"),
    ])
    func badWildcards(entry: String, reason: String) {
        let problem = TaskIdentifierRules.problem(withPermittedEntry: entry)
        #expect(problem == .notReverseDNS(entry))
        let description = problem?.description ?? ""
        #expect(description.contains(reason), "says why: \(description)")
    }

    @Test func wildcardEntryLengthCountsTheWholeEntry() {
        let base = "com.example."
        let prefix = base + String(repeating: "a", count: 254 - base.utf8.count)  // 254 bytes
        #expect(TaskIdentifierRules.problem(withPermittedEntry: prefix + ".*") == .tooLong(bytes: 256))
        let shorter = String(prefix.dropLast())
        #expect(TaskIdentifierRules.problem(withPermittedEntry: shorter + ".*") == nil)
    }
}
