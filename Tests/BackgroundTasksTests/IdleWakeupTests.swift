#if canImport(Glibc)
import Glibc
#endif
import Foundation
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
        /// One thread's name and context switches (voluntary + nonvoluntary).
        struct ThreadSample {
            var name: String
            var switches: Int64
        }

        /// Every thread of `pid` now, by thread id. Reading /proc does not wake the process.
        static func threads(of pid: Int32) -> [Int: ThreadSample] {
            let directory = "/proc/\(pid)/task"
            guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [:] }
            var samples: [Int: ThreadSample] = [:]
            for entry in entries {
                guard let tid = Int(entry), let status = try? String(contentsOfFile: "\(directory)/\(entry)/status", encoding: .utf8) else { continue }
                var sample = ThreadSample(name: "?", switches: 0)
                for line in status.split(separator: "\n") {
                    let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                    guard parts.count == 2 else { continue }
                    switch parts[0] {
                    case "Name": sample.name = parts[1]
                    case "voluntary_ctxt_switches", "nonvoluntary_ctxt_switches": sample.switches += Int64(parts[1]) ?? 0
                    default: break
                    }
                }
                samples[tid] = sample
            }
            return samples
        }

        /// The threads of `pid` that switched over `seconds`, sampled every 100 ms, as
        /// bgtask-bench's DaemonBenchmarks.measureIdle counts: a thread that exits in the
        /// window counts up to its last sample (its wakeup to exit is not seen), one born in
        /// it from zero.
        static func wakeups(of pid: Int32, seconds: Double) async throws -> (total: Int64, woke: [String]) {
            let first = threads(of: pid)
            var last = first
            let end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
            while ContinuousClock.now < end {
                try await Task.sleep(for: .milliseconds(100))
                for (tid, sample) in threads(of: pid) { last[tid] = sample }
            }
            var total: Int64 = 0
            var woke: [String] = []
            for (tid, now) in last.sorted(by: { $0.key < $1.key }) {
                let delta = now.switches - (first[tid]?.switches ?? 0)
                total += delta
                if delta > 0 { woke.append("\(now.name) (tid \(tid)\(first[tid] == nil ? ", born in the window" : "")): \(delta)") }
            }
            return (total, woke)
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
            let expected = 11
            let reached = await child.output.waitFor(atLeast: expected, timeout: .seconds(60))
            let lines = child.output.lines
            try #require(reached, "the probe wrote \(lines) and stopped; stderr: \(child.standardError())")
            let done = try #require(lines.first { $0.hasPrefix("done ") }, "\(lines)")
            let pid = try #require(Int32(done.dropFirst("done ".count)))
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
