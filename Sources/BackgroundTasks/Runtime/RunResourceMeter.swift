import Foundation
import Synchronization
import SchedulerCore

/// Measures what runs cost, for the energy log: told when each run starts, it fills in a
/// finished run's CPU time, peak memory and estimated energy. ``RunResourceMeter`` reads
/// the process from the kernel; the simulator's meter applies a cost model.
public protocol RunMeter: Sendable {
    /// Starts charging `run`. Called when its handler is launched.
    func runStarted(_ run: RunID)
    /// `record` (a run that just ended) with its measurements and estimated energy filled in.
    func finish(_ record: RunRecord, model: EnergyModel) -> RunRecord
}

/// Measures the CPU time and memory of runs whose handlers execute in this process, for
/// the energy log.
///
/// In-process handlers share the process with each other and with the app, and Linux
/// accounts CPU time per thread or per process, not per Swift task. So the meter reads the
/// process's CPU time (user + system, `getrusage(RUSAGE_SELF)`) whenever a run starts or
/// finishes, and charges the CPU used over each interval between two such events equally
/// to the runs alive during it. That is an honest approximation, documented as such:
///
/// - two overlapping runs, one busy and one waiting on the network, are charged half each;
/// - CPU the app spends elsewhere (its UI, other threads) while a run is alive is charged
///   to the run; CPU used while no run is alive is charged to none.
///
/// The peak memory is the process's peak resident set (`ru_maxrss`) at the end of the run:
/// the high-water mark of the whole process since it started, not of the run alone. It is
/// still what matters to a low-memory killer, and a run that raises it shows up.
///
/// Thread-safe: events may arrive from any thread.
public final class RunResourceMeter: RunMeter {
    /// One reading of the process.
    public struct Sample: Sendable, Equatable {
        /// CPU time (user + system) the process has used since it started, in seconds.
        public var cpuTime: TimeInterval
        /// The process's peak resident memory so far, in bytes, when known.
        public var peakMemoryBytes: Int64?

        /// Creates a sample.
        public init(cpuTime: TimeInterval, peakMemoryBytes: Int64?) {
            self.cpuTime = cpuTime
            self.peakMemoryBytes = peakMemoryBytes
        }
    }

    /// What one run used.
    public struct Measurement: Sendable, Equatable {
        /// The run's share of the process's CPU time (user + system), in seconds.
        public var cpuTime: TimeInterval
        /// The process's peak resident memory when the run ended, in bytes (see the type's
        /// documentation: the process's peak, not the run's).
        public var peakMemoryBytes: Int64?

        /// Creates a measurement.
        public init(cpuTime: TimeInterval, peakMemoryBytes: Int64?) {
            self.cpuTime = cpuTime
            self.peakMemoryBytes = peakMemoryBytes
        }
    }

    private struct State {
        /// The process CPU time at the last event.
        var lastCPUTime: TimeInterval?
        /// CPU seconds charged so far to each run alive.
        var charged: [RunID: TimeInterval] = [:]
    }

    private let sampler: @Sendable () -> Sample
    private let state = Mutex(State())

    /// Creates a meter.
    /// - Parameter sampler: Reads the process; the default, ``processSample()``, asks the
    ///   kernel. Tests pass a fake to make the arithmetic deterministic.
    public init(sampler: @escaping @Sendable () -> Sample = RunResourceMeter.processSample) {
        self.sampler = sampler
    }

    /// Starts charging `run`. Call when its handler is launched.
    public func runStarted(_ run: RunID) {
        state.withLock { state in
            charge(&state, sample: sampler())
            state.charged[run] = 0
        }
    }

    /// Stops charging `run` and returns what it used, or `nil` when the meter never saw it
    /// start (for example a run launched before the meter existed).
    public func runFinished(_ run: RunID) -> Measurement? {
        state.withLock { state in
            let sample = sampler()
            charge(&state, sample: sample)
            guard let cpuTime = state.charged.removeValue(forKey: run) else { return nil }
            return Measurement(cpuTime: cpuTime, peakMemoryBytes: sample.peakMemoryBytes)
        }
    }

    /// Runs being charged now.
    public var runsAlive: Set<RunID> {
        state.withLock { Set($0.charged.keys) }
    }

    /// `record` (a run that just ended) with its measurements filled in: stops charging the
    /// run, sets ``RunRecord/cpuTime`` and ``RunRecord/peakMemoryBytes`` when the meter saw
    /// it start (other values are kept), and sets ``RunRecord/energyJoules`` from `model`,
    /// the run's CPU time and its wall time. Without a CPU time the energy is the base cost
    /// alone (see ``EnergyModel/estimate(cpuTime:wallTime:)``).
    public func finish(_ record: RunRecord, model: EnergyModel) -> RunRecord {
        var record = record
        if let measurement = runFinished(record.id) {
            record.cpuTime = measurement.cpuTime
            record.peakMemoryBytes = measurement.peakMemoryBytes
        }
        record.energyJoules = model.estimate(cpuTime: record.cpuTime, wallTime: record.duration ?? 0)
        return record
    }

    /// Charges the CPU used since the last event equally to the runs alive over it.
    private func charge(_ state: inout State, sample: Sample) {
        defer { state.lastCPUTime = sample.cpuTime }
        guard let last = state.lastCPUTime, !state.charged.isEmpty else { return }
        // A process's CPU time never decreases; a fake or broken sampler that goes back is
        // charged as nothing rather than as negative time.
        let used = max(0, sample.cpuTime - last)
        let share = used / Double(state.charged.count)
        for run in state.charged.keys { state.charged[run]! += share }
    }

    /// The process's CPU time (user + system) and peak resident set, from
    /// `getrusage(RUSAGE_SELF)`. `ru_maxrss` is in KiB on Linux; it is returned in bytes,
    /// or `nil` when the kernel reports none.
    @Sendable
    public static func processSample() -> Sample {
        var usage = rusage()
        // Glibc imports RUSAGE_SELF as an enum case while getrusage takes its Int32 value.
        guard getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage) == 0 else { return Sample(cpuTime: 0, peakMemoryBytes: nil) }
        func seconds(_ time: timeval) -> TimeInterval {
            TimeInterval(time.tv_sec) + TimeInterval(time.tv_usec) / 1_000_000
        }
        let peak = Int64(usage.ru_maxrss)
        return Sample(
            cpuTime: seconds(usage.ru_utime) + seconds(usage.ru_stime),
            peakMemoryBytes: peak > 0 ? peak * 1_024 : nil
        )
    }
}
