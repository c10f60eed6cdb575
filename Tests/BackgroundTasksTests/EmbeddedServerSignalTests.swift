#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

extension ProcessTests {
    /// docs/system.md, "Assertions" and "On Linux": in an embedded server, SIGTERM means "entering the background": work
    /// guarded by an assertion gets its window to finish before the process exits. The
    /// child is the example app's real executable, `feedreader serve`.
    @Suite struct EmbeddedServerSignals {
        private func startServer(_ arguments: [String], scratch: ScratchDirectory) async throws -> ChildProcess {
            let feedreader = try ProductBinary.locate("feedreader")
            let state = scratch.url.appendingPathComponent("state").path
            let child = try ChildProcess(feedreader, arguments: ["serve", "--state", state] + arguments, scratch: scratch.url)
            let ready = await child.output.waitFor(atLeast: 2, timeout: .seconds(60))
            #expect(ready && child.output.lines.contains("ready"), "feedreader did not start: \(child.output.lines); stderr: \(child.standardError())")
            return child
        }

        @Test func sigtermLetsTheDraftUploadFinishThenExitsCleanly() async throws {
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let child = try await startServer(["--upload-seconds", "0.3"], scratch: scratch)
            child.kill(SIGTERM)
            let termination = await child.termination()
            await child.output.waitForEndOfFile()
            let lines = child.output.lines
            #expect(termination.reason == .exit && termination.status == 0, "\(termination); stderr: \(child.standardError())")
            let background = try #require(lines.firstIndex(of: "state: background"), "\(lines)")
            let uploaded = try #require(lines.firstIndex(of: "draft uploaded"), "the upload guarded by the assertion did not finish: \(lines)")
            let suspended = try #require(lines.firstIndex(of: "state: suspended"), "\(lines)")
            #expect(background < uploaded && uploaded < suspended)
        }

        @Test func sigtermWithWorkLongerThanTheWindowExpiresTheAssertionThenExits() async throws {
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            // The upload takes 60 s; the assertion window is 1 s: the expiration handler
            // ends the assertion, the app is suspended, the process exits without the upload.
            let child = try await startServer(["--upload-seconds", "60", "--assertion-window", "1"], scratch: scratch)
            child.kill(SIGTERM)
            let termination = await child.termination()
            await child.output.waitForEndOfFile()
            let lines = child.output.lines
            #expect(termination.reason == .exit && termination.status == 0, "\(termination); stderr: \(child.standardError())")
            #expect(!lines.contains("draft uploaded"))
            #expect(lines.contains("state: suspended"), "\(lines)")
        }
    }
}
