#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ProbeSupport
import Testing

extension ProcessTests {
    /// docs/daemon.md, "Idle cost", for the embedded runtime: an embedded app that has run a
    /// task of each ordinary handler kind (main-actor, nonisolated `using: nil`, on a queue of
    /// its own, two expirations, an assertion, performExpiringActivity, completion handlers,
    /// a lifecycle notification; `bgtask-idle-probe`) takes no wakeups once idle. The first
    /// block the runtime ran on a global non-overcommit queue (or on Swift concurrency's
    /// global executor) would start libdispatch's worker-pool monitor, which wakes the
    /// process once a second for the rest of its life: about 3 context switches here.
    @Suite struct IdleWakeups {
        /// The threads of `pid` that switched over `seconds`, sampled every 100 ms
        /// (``ThreadWindow``, as bgtask-bench's idle benchmarks count).
        static func wakeups(of pid: Int32, seconds: Double) async throws -> (total: Int64, woke: [String]) {
            var window = ThreadWindow(pid: pid)
            // An unlistable /proc entry would read as a quiet process.
            try #require(!window.first.isEmpty, "cannot list the threads of process \(pid) (/proc/\(pid)/task)")
            let end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
            while ContinuousClock.now < end {
                try await Task.sleep(for: .milliseconds(100))
                window.sample()
            }
            return (window.switches, window.woke)
        }

        @Test func embeddedAppIsQuietAfterRunningEachHandlerKind() async throws {
            let probe = try ProductBinary.locate("bgtask-idle-probe")
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            // A clean environment: no BGTASK_* or XDG_* of this process's reaches the app.
            let child = try ChildProcess(
                probe, arguments: [scratch.url.appendingPathComponent("state").path], scratch: scratch.url,
                environment: ["PATH": "/usr/bin:/bin", "HOME": scratch.url.path]
            )
            defer { child.kill(SIGKILL) }

            // The window starts only once the app said that everything completed.
            let expected = 12
            let reached = await child.output.waitFor(atLeast: expected, timeout: .seconds(60))
            let lines = child.output.lines
            try #require(reached, "the probe wrote \(lines) and stopped; stderr: \(child.standardError())")
            let done = try #require(lines.first { $0.hasPrefix("done ") }, "\(lines)")
            let pid = try #require(Int32(done.dropFirst("done ".count)))
            // ProcessInfo read before the bootstrap answered (the machine's reading) and left
            // the bootstrap open: the probe fails otherwise.
            #expect(lines.first?.hasPrefix("device lowPowerMode ") == true, "\(lines)")
            for line in ["ran main", "ran nil", "ran queue", "expired main-expire", "expired nil-expire", "assertion ended",
                         "expiring activity ran", "submitted ok", "notification didBecomeActive"] {
                #expect(lines.contains(line), "\(lines)")
            }

            // Settle, then count every thread's context switches over 3 s.
            try await Task.sleep(for: .seconds(1))
            let (switches, woke) = try await Self.wakeups(of: pid, seconds: 3)
            #expect(kill(pid, 0) == 0, "the probe exited; stderr: \(child.standardError())")
            #expect(switches == 0, "the idle app woke: \(woke.joined(separator: "; ")) (libdispatch's worker-pool monitor wakes once a second); stderr: \(child.standardError())")
        }
    }
}
