#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SchedulerCore
import SchedulerStore
import Synchronization
import Testing

extension ProcessTests {
    /// docs/system.md, "Properties" (durability): a `submit` that returned has been committed to SQLite, so killing
    /// the process at any instant loses no acknowledged request.
    ///
    /// The child, `bgtask-durability-probe`, submits requests through the real driver and
    /// store and writes each identifier to stdout after its submit returned. The test reads
    /// the acknowledgements, kills the child with SIGKILL in the middle of its loop, reopens
    /// the store and checks that every acknowledged request is pending.
    @Suite struct Durability {
        /// The app the probe submits for.
        static let app = AppID("com.example.durable")

        @Test func everyAcknowledgedSubmitSurvivesSIGKILL() async throws {
            let probe = try ProductBinary.locate("bgtask-durability-probe")
            let directory = try ScratchDirectory()
            defer { directory.remove() }

            // Far more than it can submit before the kill, so the kill lands mid-loop.
            let child = try ChildProcess(probe, arguments: [directory.url.path, "1000000"], scratch: directory.url)
            let killAfter = Int.random(in: 200...400)
            let reached = await child.output.waitFor(atLeast: killAfter, timeout: .seconds(120))
            #expect(reached, "the probe acknowledged only \(child.output.lines.count) submits before it stopped or the 120 s timeout; stderr: \(child.standardError())")
            child.kill(SIGKILL)
            let termination = await child.termination()
            await child.output.waitForEndOfFile()

            // Killed by our signal, not finished or crashed on its own.
            #expect(termination.reason == .uncaughtSignal && termination.status == SIGKILL,
                    "expected the probe to die of SIGKILL, got \(termination); stderr: \(child.standardError())")

            // Everything written to the pipe before the kill was acknowledged, including lines
            // the test had not read yet when it sent the signal.
            let acknowledged = child.output.lines
            #expect(acknowledged.count >= killAfter)
            #expect(acknowledged == (0..<acknowledged.count).map { "com.example.durable.\($0)" },
                    "acknowledgements are not the identifiers in order: \(acknowledged.prefix(5))...")

            let (store, report) = try SchedulerStore.open(at: directory.url.appendingPathComponent("scheduler.sqlite"), now: Date())
            #expect(report.movedAsideCorruptFile == nil, "the store was found corrupt after the kill: \(report.corruptionDetail ?? "")")
            let pending = try store.pendingRequests(app: Self.app)
            let pendingIdentifiers = Set(pending.map(\.identifier))
            let lost = acknowledged.filter { !pendingIdentifiers.contains($0) }
            #expect(lost.isEmpty, "\(lost.count) of \(acknowledged.count) acknowledged submits are missing after SIGKILL: \(lost.prefix(10))")
            // At most the one submit in flight at the kill may be on disk unacknowledged.
            let inFlight = "com.example.durable.\(acknowledged.count)"
            let unexpected = pendingIdentifiers.subtracting(acknowledged).subtracting([inFlight])
            #expect(unexpected.isEmpty, "requests on disk that were never submitted: \(unexpected.sorted().prefix(10))")
            #expect(pending.allSatisfy { $0.kind == .processing && $0.app == Self.app })
        }

        /// The probe itself works: left alone it submits everything and exits 0, and the store
        /// then holds exactly what it acknowledged (so the kill test's findings are about the
        /// kill, not about a broken probe).
        @Test func probeRunToCompletionPersistsEverySubmit() async throws {
            let probe = try ProductBinary.locate("bgtask-durability-probe")
            let directory = try ScratchDirectory()
            defer { directory.remove() }

            let child = try ChildProcess(probe, arguments: [directory.url.path, "25"], scratch: directory.url)
            let termination = await child.termination()
            await child.output.waitForEndOfFile()
            #expect(termination.reason == .exit && termination.status == 0, "probe ended with \(termination); stderr: \(child.standardError())")

            let expected = (0..<25).map { "com.example.durable.\($0)" }
            #expect(child.output.lines == expected)
            let (store, _) = try SchedulerStore.open(at: directory.url.appendingPathComponent("scheduler.sqlite"), now: Date())
            #expect(Set(try store.pendingRequests(app: Self.app).map(\.identifier)) == Set(expected))
        }
    }
}
