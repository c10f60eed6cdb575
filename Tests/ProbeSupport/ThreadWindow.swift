import Foundation

/// One thread's counters, from `/proc/<pid>/task/<tid>/status` and `schedstat`.
public struct ThreadCounters: Sendable, Equatable {
    /// The thread's name (`Name:`), "?" when the kernel gave none.
    public var name: String
    /// Voluntary plus nonvoluntary context switches: each is a wakeup of the thread.
    public var contextSwitches: Int64
    /// Nanoseconds on CPU (the first field of schedstat), 0 when the kernel lacks it.
    public var runtimeNanoseconds: Int64

    /// Every thread of process `pid` now, by thread id; empty when its `/proc` entry cannot
    /// be listed (the process is gone, or `/proc` hides it). Reading does not wake it.
    public static func sample(pid: Int32) -> [String: ThreadCounters] {
        var threads: [String: ThreadCounters] = [:]
        for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? [] {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else { continue }
            var counters = ThreadCounters(name: "?", contextSwitches: 0, runtimeNanoseconds: 0)
            for line in status.split(separator: "\n") {
                if line.hasPrefix("Name:") { counters.name = line.dropFirst(5).trimmingCharacters(in: .whitespaces) }
                if line.hasPrefix("voluntary_ctxt_switches") || line.hasPrefix("nonvoluntary_ctxt_switches") {
                    counters.contextSwitches += Int64(line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0
                }
            }
            if let schedstat = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8),
               let onCPU = schedstat.split(separator: " ").first.flatMap({ Int64($0) }) {
                counters.runtimeNanoseconds = onCPU
            }
            threads[task] = counters
        }
        return threads
    }
}

/// A process's threads watched over a window without waking it: what the idle test
/// (`ProcessTests.IdleWakeups`) and bgtask-bench's idle benchmarks (l, s) count.
///
/// Threads come and go (a thread pool retires idle workers), so the caller samples every
/// 100 ms or so with ``sample()``: a thread that exits in the window counts up to its last
/// sample (its wakeup to exit is not seen, and it is listed in ``exited``), one born in it
/// from zero.
public struct ThreadWindow: Sendable {
    /// The process watched.
    public let pid: Int32
    /// The threads at the window's start.
    public let first: [String: ThreadCounters]
    /// Every thread's latest sample.
    public private(set) var last: [String: ThreadCounters]

    /// Starts the window at `pid`'s threads now.
    public init(pid: Int32) {
        self.pid = pid
        first = ThreadCounters.sample(pid: pid)
        last = first
    }

    /// Samples every thread again.
    public mutating func sample() {
        for (tid, counters) in ThreadCounters.sample(pid: pid) { last[tid] = counters }
    }

    /// Context switches of every thread over the window.
    public var switches: Int64 { deltas.reduce(0) { $0 + $1.switches } }

    /// Nanoseconds on CPU of every thread over the window.
    public var runtimeNanoseconds: Int64 { deltas.reduce(0) { $0 + $1.runtime } }

    /// Each thread that switched: "name (tid N[, born in the window]): count".
    public var woke: [String] {
        deltas.filter { $0.switches > 0 }.map { delta in
            "\(delta.name) (tid \(delta.tid)\(first[delta.tid] == nil ? ", born in the window" : "")): \(delta.switches)"
        }
    }

    /// Threads seen in the window.
    public var threadsSeen: Int { Set(first.keys).union(last.keys).count }

    /// The threads sampled in the window that are gone now ("name (tid N)"): each woke once
    /// more to exit, after its last sample.
    public func exited() -> [String] {
        let remaining = ThreadCounters.sample(pid: pid)
        return last.filter { remaining[$0.key] == nil }.sorted { $0.key < $1.key }.map { "\($0.value.name) (tid \($0.key))" }
    }

    /// Per thread (by id), its name and what changed since the window's start.
    private var deltas: [(tid: String, name: String, switches: Int64, runtime: Int64)] {
        last.sorted { $0.key < $1.key }.map { tid, now in
            let then = first[tid] ?? ThreadCounters(name: now.name, contextSwitches: 0, runtimeNanoseconds: 0)
            return (tid, now.name, now.contextSwitches - then.contextSwitches, now.runtimeNanoseconds - then.runtimeNanoseconds)
        }
    }
}
