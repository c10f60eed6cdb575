#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SchedulerCore
import SchedulerStore
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

        /// An app started with standard error closed (`2>&-`) gets /dev/null there before its
        /// scheduler opens anything (an outside probe: descriptor 2 became the store's lock
        /// file, so the process's log lines would have been written into it).
        @Test func anAppStartedWithStandardErrorClosedGetsDevNullThere() async throws {
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let feedreader = try ProductBinary.locate("feedreader")
            let state = scratch.url.appendingPathComponent("state").path
            let child = try ChildProcess(URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", "exec \"$0\" serve --state \"$1\" 2>&-", feedreader.path, state],
                                         scratch: scratch.url)
            let ready = await child.output.waitFor(atLeast: 2, timeout: .seconds(60))
            #expect(ready && child.output.lines.contains("ready"), "feedreader did not start: \(child.output.lines)")
            let target = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(child.processIdentifier)/fd/2")
            #expect(target == "/dev/null", "descriptor 2 is \(target)")
            child.kill(SIGTERM)
            let termination = await child.termination()
            #expect(termination.reason == .exit && termination.status == 0, "\(termination)")
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

        /// A background task in progress when SIGTERM arrives gets its expiration before the
        /// process exits, and its run is recorded as expired: not left unfinished, to be
        /// found interrupted and restored at the next start as if nothing had happened.
        @Test func sigtermExpiresARunningBackgroundTaskAndRecordsItBeforeExiting() async throws {
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let probe = try ProductBinary.locate("bgtask-durability-probe")
            let child = try ChildProcess(probe, arguments: [scratch.url.path, "--until-sigterm"], scratch: scratch.url)
            let running = await child.output.waitFor(atLeast: 1, timeout: .seconds(60))
            #expect(running && child.output.lines == ["running"], "\(child.output.lines); stderr: \(child.standardError())")
            child.kill(SIGTERM)
            let termination = await child.termination()
            await child.output.waitForEndOfFile()
            #expect(termination.reason == .exit && termination.status == 0, "\(termination); stderr: \(child.standardError())")
            #expect(child.output.lines == ["running", "expired"])

            let (store, report) = try SchedulerStore.open(at: scratch.url.appendingPathComponent("scheduler.sqlite"), now: Date())
            #expect(report.interruptedRuns.isEmpty, "the run was left unfinished: \(report.interruptedRuns)")
            #expect(report.restoredRequests.isEmpty)
            let runs = try store.runs(app: AppID("com.example.durable"))
            #expect(runs.map(\.outcome) == [.expired], "\(runs)")
            #expect(runs.first?.stopReason?.contains("terminating") == true, "\(runs.first?.stopReason ?? "no reason")")
        }
    }
}
