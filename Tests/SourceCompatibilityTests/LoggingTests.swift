import BackgroundTasks
import Foundation
@testable import os
import Testing

/// `import os`: the lines Logger and os_log write, values redacted as Apple's log shows
/// them (docs/porting.md, "Logging").
@Suite struct LoggingTests {
    private func rendered(_ message: OSLogMessage) -> String { message.rendered() }

    @Test func theLockAndSignpostSubmodulesBringWhatTheySay() async {
        let counter = SubmoduleLockedCounter()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 { group.addTask { for _ in 0..<1_000 { _ = counter.increment() } } }
        }
        #expect(counter.increment() == 4_001)
        #expect(SubmoduleSignposts.measured { 7 } == 7)
    }

    @Test func stringsAreRedactedUnlessPublicAndNumbersShownUnlessPrivate() {
        let name = "secret.txt"
        let count = 42
        #expect(rendered("file \(name) count \(count)") == "file <private> count 42")
        #expect(rendered("file \(name, privacy: .public) count \(count, privacy: .private)") == "file secret.txt count <private>")
        #expect(rendered("flag \(true) \(false, format: .answer)") == "flag true NO")
        #expect(rendered("type \(Int.self)") == "type Int")
        #expect(rendered("\(name, privacy: .private(mask: .hash))").hasPrefix("<mask.hash: '"))
    }

    @Test func anErrorIsItsDescriptionRedactedUnlessPublic() {
        struct SyncError: Error { var code: Int }
        let error: any Error = SyncError(code: 7)
        #expect(rendered("failed: \(error)") == "failed: <private>")
        #expect(rendered("failed: \(error, privacy: .public)") == "failed: SyncError(code: 7)")
    }

    @Test func numbersFollowTheirFormats() {
        #expect(rendered("\(255, format: .hex)") == "ff")
        #expect(rendered("\(255, format: .hex(includePrefix: true, uppercase: true))") == "0xFF")
        #expect(rendered("\(7, format: .decimal(explicitPositiveSign: true, minDigits: 3))") == "+007")
        #expect(rendered("\(-7, format: .decimal(minDigits: 3))") == "-007")
        #expect(rendered("\(3.14159, format: .fixed(precision: 2))") == "3.14")
        #expect(rendered("[\(12, align: .right(columns: 4))][\(12, align: .left(columns: 4))]") == "[  12][12  ]")
    }

    /// An outside probe: the sign and capital flags of float formats were dropped, and an
    /// octal prefix read `0` where Apple's overlay writes Swift's `0o`.
    @Test func floatFlagsAndTheOctalPrefixAreApples() {
        #expect(rendered("\(3.14159, format: .fixed(precision: 2, explicitPositiveSign: true))") == "+3.14")
        #expect(rendered("\(-3.14159, format: .fixed(precision: 2, explicitPositiveSign: true))") == "-3.14")
        #expect(rendered("\(1234.5, format: .exponential(precision: 2, uppercase: true))") == "1.23E+03")
        #expect(rendered("\(1234.5, format: .exponential)") == "1.234500e+03")
        #expect(rendered("\(2.5, format: .fixed(explicitPositiveSign: true))") == "+2.500000")
        #expect(rendered("\(0.0001, format: .hybrid(uppercase: true))") == "0.0001")
        #expect(rendered("\(1e-10, format: .hybrid(precision: 3, uppercase: true))") == "1E-10")
        #expect(rendered("\(3.0, format: .hex)") == "0x1.8p+1")
        #expect(rendered("\(3.0, format: .hex(uppercase: true))") == "0X1.8P+1")
        #expect(rendered("\(Double.infinity, format: .fixed(uppercase: true))") == "INF")
        #expect(rendered("\(UInt(8), format: .octal(includePrefix: true))") == "0o10")
        #expect(rendered("\(UInt(8), format: .octal)") == "10")
    }

    /// Widths, digit counts and precisions a program may write but no line can hold are
    /// bounded at 1,024 (an outside probe: Int.min columns overflowed, Int.max could not be
    /// allocated, `%.99999999999d` stopped the program inside String(format:)).
    @Test func absurdWidthsAndPrecisionsAreBounded() {
        #expect(rendered("[\(12, align: .left(columns: Int.min))]") == "[12]")
        #expect(rendered("[\(12, align: .right(columns: -3))]") == "[12]")
        #expect(rendered("\(12, align: .left(columns: Int.max))").count == OSLogFormat.maximumFieldWidth)
        #expect(rendered("\(7, format: .decimal(minDigits: Int.max))").count == OSLogFormat.maximumFieldWidth)
        #expect(rendered("\(-7, format: .hex(minDigits: Int.min))") == "-7")
        #expect(OSLogFormat.render("%{public}.99999999999d", [1]).count == OSLogFormat.maximumFieldWidth)
        #expect(OSLogFormat.render("%{public}999999999d", [1]).count == OSLogFormat.maximumFieldWidth)
        #expect(OSLogFormat.render("%{public}2000.3f|%05d", [1.5, 42]).count == OSLogFormat.maximumFieldWidth + 6)
        #expect(OSLogFormat.render("%05d", [42]) == "00042", "a width within the bound is kept, flags too")
        #expect(OSLogFormat.bounded("-01024.1025l") == "-01024.1024l")
    }

    /// A C string passed for `%s` (C-interop code's `strerror(errno)`) is its text, not its
    /// address, and `%Lf` given a Double is the Double (it printed nan): an outside probe.
    @Test func aCStringIsItsTextAndALongDoubleConversionTakesADouble() {
        #expect(OSLogFormat.render("%{public}s", [strerror(ENOENT)!]) == String(cString: strerror(ENOENT)))
        "read-only".withCString { text in
            #expect(OSLogFormat.render("%{public}s!", [text]) == "read-only!")
        }
        #expect(OSLogFormat.render("%{public}.1Lf|%{public}Lg", [2.5, 0.25]) == "2.5|0.25")
    }

    /// A `*` width or precision takes its argument, as printf and Apple's os_log do (an
    /// outside probe: read as a conversion, it shifted the arguments, and a private value
    /// was shown where a public one was asked for).
    @Test func aStarWidthOrPrecisionTakesItsArgumentAndShiftsNoOther() {
        let secret = "SECRET-TOKEN"
        let line = OSLogFormat.render("%{public}.*s|%{private}s|%{public}s", [Int32(3), "abcdef", secret, "public-text"])
        #expect(line == "abc|<private>|public-text")
        #expect(!line.contains(secret))
        #expect(OSLogFormat.render("[%{public}*d]", [Int32(5), 42]) == "[   42]")
        #expect(OSLogFormat.render("[%{public}*d]", [Int32(-5), 42]) == "[42   ]", "a negative width justifies left")
        #expect(OSLogFormat.render("[%{public}.*f]", [Int32(-1), 1.5]) == "[1.500000]", "a negative precision is none")
        #expect(OSLogFormat.render("[%{public}-8s][%{public}8.2s]", ["ab", "xyz"]) == "[ab      ][      xy]")
        #expect(OSLogFormat.render("[%{public}*d]", [Int32.min, 1]).count == OSLogFormat.maximumFieldWidth + 2, "bounded")
        // Missing arguments: the conversion is shown, nothing read past the end.
        #expect(OSLogFormat.render("[%{public}*d]", [Int32(4)]) == "[%4d]")
        #expect(OSLogFormat.render("%.***d", []) == "%d", "stars past the precision's take nothing away")
        #expect(OSLogFormat.render("[%{public}*.*s]", [Int32(6), Int32(2), "abcdef"]) == "[    ab]")
        // A conversion it does not know is as private as a string.
        #expect(OSLogFormat.render("%S|%{public}S", [secret, "open"]) == "<private>|open")
    }

    @Test func valuesAreOnlyEvaluatedWhenTheLineIsWritten() {
        final class Counter: @unchecked Sendable {
            // @unchecked: touched by this test's thread only.
            var calls = 0
            var value: Int { calls += 1; return calls }
        }
        let counter = Counter()
        // Debug lines are off unless BGTASK_LOG=debug, which the test run does not set.
        if !LogSink.writes(.debug) {
            Logger(subsystem: "test", category: "lazy").debug("value \(counter.value)")
            #expect(counter.calls == 0)
        }
        Logger(OSLog.disabled).error("value \(counter.value)")
        #expect(counter.calls == 0, "a disabled log evaluates nothing")
        _ = rendered("value \(counter.value)")
        #expect(counter.calls == 1)
    }

    @Test func osLogFormatsHonourTheirPrivacyModifiersAndNeverReadPastTheirArguments() {
        #expect(OSLogFormat.render("task %{public}@ attempt %d", ["refresh" as NSString, 3]) == "task refresh attempt 3")
        #expect(OSLogFormat.render("task %@ in %{private}d s", ["refresh" as NSString, 3]) == "task <private> in <private> s")
        #expect(OSLogFormat.render("100%% done", []) == "100% done")
        #expect(OSLogFormat.render("%d and %d", [1]) == "1 and %d", "a missing argument is not read")
        #expect(OSLogFormat.render("only %d", [1, 2]) == "only 1", "an extra argument is never shown, as printf ignores it")
        // A real app's call: a dynamic string with no conversion for it (it was shown, unredacted).
        #expect(OSLogFormat.render("handleTask: ", ["secret token" as NSString]) == "handleTask: ")
        #expect(OSLogFormat.render("%05.1f|%x|%{public}s", [2.5, 255, "x" as NSString]) == "002.5|ff|x")
        #expect(OSLogFormat.render("%n %{public}n", [1, 2]) == "1 2", "%n writes nothing anywhere")
        #expect(OSLogFormat.render("trailing %", []) == "trailing %")
    }

    @Test func objectArgumentsAreShownByTheirDescriptionAsApplesPercentAtShowsThem() {
        final class Named: NSObject {
            override var description: String { "<Named custom>" }
        }
        let error = NSError(domain: "BGTaskSchedulerErrorDomain", code: 3)
        let request = BGAppRefreshTaskRequest(identifier: "com.example.feeds.refresh")
        #expect(OSLogFormat.render("failed: %{public}@", [error]) == #"failed: Error Domain=BGTaskSchedulerErrorDomain Code=3 "(null)""#)
        #expect(OSLogFormat.render("%{public}@ of %{public}@", [NSNumber(value: 3), "x" as NSString]) == "3 of x")
        #expect(OSLogFormat.render("at %{public}@", [NSDate(timeIntervalSince1970: 0)]) == "at 1970-01-01 00:00:00 +0000")
        #expect(OSLogFormat.render("%{public}@ %{public}@", [request, Named()]) == "\(request.description) <Named custom>")
        #expect(OSLogFormat.render("%@ and %d", [error, 2]) == "<private> and 2", "objects are private by default")
        // `error as CVarArg` bridges any Error to its NSError, as on iOS.
        let thrown: any Error = BGTaskScheduler.Error(.notPermitted, message: "not listed")
        #expect(OSLogFormat.render("%{public}@", [thrown as CVarArg]) == #"Error Domain=BGTaskSchedulerErrorDomain Code=3 "(null)"UserInfo={NSLocalizedDescription=not listed}"#)
        // The conformance is the process's: String(format:) gets the same descriptions (6.3's
        // Foundation would hand the objects to CoreFoundation as CF objects and halt on them).
        #expect(String(format: "%@ | %@ | %@ | %d", error, Named(), NSNumber(value: 4), 5) == #"Error Domain=BGTaskSchedulerErrorDomain Code=3 "(null)" | <Named custom> | 4 | 5"#)
        #expect(NSString(format: "%@ and %@", "a" as NSString, NSDate(timeIntervalSince1970: 0)) == "a and 1970-01-01 00:00:00 +0000")
    }

    @Test func bgtaskLogSetsTheLeastLevelWrittenAsBgtaskdReadsIt() {
        func written(_ setting: String?) -> [String] {
            let minimum = LogSink.minimumLevel(setting: setting)
            return [OSLogType.debug, .info, .default, .error, .fault].filter { LogSink.writes($0, minimum: minimum) }.map(\.name)
        }
        #expect(written(nil) == ["notice", "error", "fault"])
        #expect(written("debug") == ["debug", "info", "notice", "error", "fault"])
        #expect(written("INFO") == ["info", "notice", "error", "fault"])
        #expect(written("warning") == ["notice", "error", "fault"])
        #expect(written("error") == ["error", "fault"])
    }

    @Test func bgtaskLogPrivateShowsPrivateValuesButNeverSensitiveOnes() {
        #expect(LogSink.shown("alice", privacy: .private, dynamic: true, showsPrivate: true) == "alice")
        #expect(LogSink.shown("alice", privacy: .auto, dynamic: true, showsPrivate: true) == "alice")
        #expect(LogSink.shown("1234", privacy: .sensitive, dynamic: false, showsPrivate: true) == "<private>")
        #expect(LogSink.shown("alice", privacy: .private, dynamic: true, showsPrivate: false) == "<private>")
        #expect(LogSink.shown("alice", privacy: .public, dynamic: true, showsPrivate: false) == "alice")
    }

    @Test func aLineIsOneLineWithItsOrigin() {
        let log = OSLog(subsystem: "com.example", category: "Sync")
        #expect(LogSink.line(.error, log: log, "failed\nforged: line") == "com.example[Sync] error: failed\\nforged: line\n")
        #expect(LogSink.line(.default, log: .default, "hello") == "notice: hello\n")
        // A public value that holds an escape sequence is shown, not obeyed by a terminal.
        #expect(LogSink.line(.error, log: .default, "a\u{1B}[2Jb\rc") == "error: a\\u001B[2Jb\\u000Dc\n")
        #expect(log.isEnabled(type: .error))
        #expect(!OSLog.disabled.isEnabled(type: .fault))
    }
}
