#if canImport(Glibc)
import Glibc
#endif
import Foundation
import os
import Testing

/// `OSSignposter` and `os_signpost` (Sources/os/OSSignposter.swift): debug-level lines of
/// their log, an interval's end with its duration, Apple's runtime checks as error lines.
/// Each body runs in a child process (an exit test) whose `BGTASK_LOG=debug` is its own.
extension ProcessTests {
    @Suite struct Signposts {
        static func lines(_ result: ExitTest.Result?) -> [String] {
            (result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? "").split(separator: "\n").map(String.init)
        }

        @Test func signpostsAreDebugLinesAndAnIntervalSaysHowLongItTook() async {
            let lines = Self.lines(await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                setenv("BGTASK_LOG", "debug", 1)
                let signposter = OSSignposter(subsystem: "com.example.sync", category: "refresh")
                let id = signposter.makeSignpostID()
                let count = 3
                signposter.emitEvent("fetched", id: id, "\(count) items from \("the server")")
                let state = signposter.beginInterval("refresh")
                usleep(20_000)
                signposter.endInterval("refresh", state)
                signposter.endInterval("refresh", state)
                let other = signposter.beginInterval("parse", id: id)
                signposter.endInterval("merge", other)
                let answer = signposter.withIntervalSignpost("save") { 42 }
                FileHandle.standardError.write(Data("answer \(answer)\n".utf8))
                os_signpost(.begin, log: OSLog(subsystem: "com.example.sync", category: .pointsOfInterest), name: "upload")
                OSSignposter.disabled.emitEvent("never")
                exit(0)
            })
            #expect(lines.contains { $0.hasPrefix("com.example.sync[refresh] debug: signpost event \"fetched\" (id ") && $0.hasSuffix("): 3 items from <private>") }, "\(lines)")
            #expect(lines.contains("com.example.sync[refresh] debug: signpost begin \"refresh\" (exclusive)"), "\(lines)")
            let end = lines.first { $0.hasPrefix("com.example.sync[refresh] debug: signpost end \"refresh\" (exclusive) after ") }
            #expect(end?.hasSuffix(" ms") == true, "took about 20 ms: \(lines)")
            #expect(lines.contains("com.example.sync[refresh] error: signpost interval \"refresh\" (exclusive) ended twice: an interval state ends one interval"), "\(lines)")
            #expect(lines.contains { $0.hasPrefix("com.example.sync[refresh] error: signpost interval begun as \"parse\" ended as \"merge\"") }, "\(lines)")
            #expect(lines.contains { $0.hasPrefix("com.example.sync[refresh] debug: signpost end \"save\" (exclusive) after ") })
            #expect(lines.contains("answer 42"))
            #expect(lines.contains("com.example.sync[PointsOfInterest] debug: signpost begin \"upload\" (exclusive)"), "\(lines)")
            #expect(!lines.contains { $0.contains("never") })
        }

        @Test func withoutDebugLoggingNothingIsWrittenButTheChecks() async {
            let lines = Self.lines(await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                unsetenv("BGTASK_LOG")
                let signposter = OSSignposter(logger: Logger(subsystem: "com.example.sync", category: "quiet"))
                #expect(!signposter.isEnabled)
                let state = signposter.beginInterval("refresh")
                signposter.endInterval("refresh", state)
                signposter.endInterval("refresh", state)
                exit(0)
            })
            #expect(lines == ["com.example.sync[quiet] error: signpost interval \"refresh\" (exclusive) ended twice: an interval state ends one interval"], "\(lines)")
        }
    }
}
