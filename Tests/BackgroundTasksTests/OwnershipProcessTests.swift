#if canImport(Glibc)
import Glibc
#endif
@testable import bgtask
import Foundation
import SchedulerCore
import SchedulerStore
import Testing

extension ProcessTests {
    /// docs/ARCHITECTURE.md, "One owner per state directory", with real processes: two
    /// processes of one app on one state directory. The first owns it (holds the lock); the
    /// second is refused clearly and changes nothing; diagnostics read beside the owner
    /// without touching its run in progress; after the owner is killed, the next process
    /// owns the state, recovers the run once and the throttle holds its request.
    @Suite struct Ownership {
        static let app = AppID("com.example.owner")
        static let block = "com.example.owner.0"

        /// Waits until `child` has written at least `count` lines, recording its stderr if not.
        /// Stops the test (rather than indexing past the end) when the child wrote fewer.
        private func lines(_ child: ChildProcess, atLeast count: Int) async throws -> [String] {
            let reached = await child.output.waitFor(atLeast: count, timeout: .seconds(60))
            try #require(reached, "the probe wrote \(child.output.lines) and stopped; stderr: \(child.standardError())")
            return child.output.lines
        }

        @Test func twoProcessesOfOneAppOnOneStateDirectory() async throws {
            let probe = try ProductBinary.locate("bgtask-ownership-probe")
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let state = scratch.url.appendingPathComponent("state")
            let database = state.appendingPathComponent("scheduler.sqlite")

            // The owner submits its 10 processing requests (the limit) and starts a run.
            let owner = try ChildProcess(probe, arguments: [state.path, "10"], scratch: scratch.url, standardInput: true)
            var ownerLines = try await lines(owner, atLeast: 11)
            #expect(ownerLines.prefix(10).allSatisfy { $0.hasPrefix("accepted ") }, "\(ownerLines)")
            let ownerPID = try #require(ownerLines[10].split(separator: " ").last.flatMap { Int32($0) })
            owner.send("launch")
            ownerLines = try await lines(owner, atLeast: 12)
            #expect(ownerLines[11] == "running \(ownerPID) \(Self.block)")
            #expect(SchedulerStore.owner(of: database)?.pid == ownerPID)

            // A second process of the app: every submission refused with `unavailable`,
            // naming the owner's pid and the state directory; it sees nothing pending.
            let second = try ChildProcess(probe, arguments: [state.path, "2"], scratch: scratch.url, standardInput: true)
            let secondLines = try await lines(second, atLeast: 3)
            for line in secondLines.prefix(2) {
                #expect(line.hasPrefix("refused com.example.owner."), "\(line)")
                #expect(line.contains("unavailable"), "\(line)")
                #expect(line.contains("process \(ownerPID)"), "\(line)")
                #expect(line.contains(state.path), "\(line)")
            }
            second.send("pending")
            #expect(try await lines(second, atLeast: 4).last == "pending 0 ")
            second.send("exit")
            #expect(await second.termination().status == 0)
            #expect(second.standardError().contains("another process of com.example.owner owns its scheduler state"), "\(second.standardError())")

            // Read-only diagnostics beside the owner: the limit held (9 pending and the one
            // running, none of the second process's), the run is in progress and stays so
            // (no recovery by a reader).
            let reader = try SchedulerStore.openForReading(at: database)
            let pending = try reader.pendingRequests(app: Self.app)
            #expect(pending.count == 9 && pending.allSatisfy { $0.kind == .processing } && !pending.contains { $0.identifier == Self.block })
            let unfinished = try reader.runs(app: Self.app).filter { $0.endedAt == nil }
            #expect(unfinished.map(\.identifier) == [Self.block])
            let why = try WhyCommand.run(
                .init(app: Self.app.rawValue, identifier: Self.block, state: state.path),
                environment: [:], now: Date(), conditions: .favorable
            )
            #expect(why.contains("a run is in progress"), "\(why)")
            #expect(why.contains("process \(ownerPID)"), "\(why)")
            #expect(try reader.runs(app: Self.app).filter { $0.endedAt == nil }.count == 1, "bgtask why recovered a running task")
            // And a would-be owner in this process is refused too, naming the owner.
            let refused = try #require(throws: StoreError.self) { _ = try SchedulerStore.open(at: database, now: Date()) }
            #expect(refused.code == .locked && refused.holderPID == ownerPID)

            // cancelAll in the owner: the store agrees at once.
            owner.send("cancelAll")
            #expect(try await lines(owner, atLeast: 13).last == "cancelled")
            #expect(try reader.pendingRequests(app: Self.app).isEmpty)

            // The owner dies during its run. The next process owns the state: it recovers
            // the run once, and the throttle holds the restored request (no crash loop).
            owner.kill(SIGKILL)
            _ = await owner.termination()
            let next = try ChildProcess(probe, arguments: [state.path, "0"], scratch: scratch.url, standardInput: true)
            _ = try await lines(next, atLeast: 1)
            next.send("pending")
            #expect(try await lines(next, atLeast: 2).last == "pending 1 \(Self.block)")
            let runs = try reader.runs(app: Self.app)
            #expect(runs.filter { $0.identifier == Self.block }.map(\.outcome) == [.interrupted], "the task ran twice or was not recovered: \(runs)")
            let saved = try #require(try reader.appSetting(app: Self.app, name: AppSettingName.policyState))
            #expect(try JSONDecoder().decode(AppPolicyState.self, from: Data(saved.utf8)).throttle.recentStrikes.map(\.cause) == [.interrupted])
            next.send("exit")
            #expect(await next.termination().status == 0)
        }
    }
}
