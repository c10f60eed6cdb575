import BackgroundTasks
import Foundation
import ProcessSupervision
import SchedulerCore
import Synchronization

/// What one run of an app process cost, as bgtaskd measures it (docs/daemon.md,
/// "Measurement"): CPU time, peak memory and I/O from the app's cgroup when it has one,
/// else from the reaped leader's rusage, else from procfs; energy from RAPL's package
/// counters when they are readable (the whole machine's energy during the run: an upper
/// bound for the app's), else the energy model. The run log says which.
public final class RunMeasurement: Sendable {
    private struct Started: Sendable {
        let meter: ProcessSupervision.RunMeter
        let process: SupervisedAppProcess
        let energy: RAPLEnergyReader.Sample?
    }

    private let started = Mutex<[RunID: Started]>([:])
    /// Runs handed to a process the user started: the daemon has no handle on it (no
    /// cgroup, no pidfd), so they are not measured, and the record says why.
    private let inUsersProcesses = Mutex<Set<RunID>>([])
    private let rapl: RAPLEnergyReader

    /// A measurement reading energy from `rapl`.
    public init(rapl: RAPLEnergyReader = RAPLEnergyReader()) {
        self.rapl = rapl
    }

    /// A run's starting counters taken ahead of time, from a process confirmed frozen
    /// (``AppProcess/suspend()``): nothing in it runs until it is thawed, so they are the
    /// counters at the start of the run it is thawed for.
    struct Baseline: Sendable {
        fileprivate let meter: ProcessSupervision.RunMeter
        fileprivate let process: SupervisedAppProcess
    }

    /// The counters of `process` now, for ``begin(_:in:atLaunch:baseline:)`` of its next run.
    func baseline(of process: any AppProcess) -> Baseline? {
        guard let process = process as? SupervisedAppProcess else { return nil }
        return Baseline(meter: ProcessSupervision.RunMeter.begin(process.process), process: process)
    }

    /// Starts measuring `run` in `process` (`atLaunch`: the process was started for it, so
    /// everything it used since counts, its launch included). `baseline`, taken while the
    /// process was frozen and used only for that same process, saves reading its counters
    /// now, on the way to a warm launch.
    func begin(_ run: RunID, in process: any AppProcess, atLaunch: Bool, baseline: Baseline? = nil) {
        guard let process = process as? SupervisedAppProcess else { return }
        let meter = baseline.flatMap { $0.process === process && !atLaunch ? $0.meter : nil }
            ?? ProcessSupervision.RunMeter.begin(process.process, atLaunch: atLaunch)
        let energy = rapl.sample()
        started.withLock { $0[run] = Started(meter: meter, process: process, energy: energy) }
    }

    /// Notes that `run` was handed to a process the user started, which the daemon cannot
    /// measure: its record says so, rather than that the app never ran it.
    func handedToUsersProcess(_ run: RunID) {
        inUsersProcesses.withLock { _ = $0.insert(run) }
    }

    /// Ends the measurement of `record`: the record with its CPU time, memory, I/O and
    /// energy, and where each came from.
    public func finish(_ record: RunRecord, model: EnergyModel) -> RunRecord {
        var measured = record
        let wall = record.duration ?? 0
        guard let start = started.withLock({ $0.removeValue(forKey: record.id) }) else {
            measured.energyJoules = model.estimate(cpuTime: nil, wallTime: wall)
            let inUsersProcess = inUsersProcesses.withLock { $0.remove(record.id) != nil }
            measured.measuredBy = inUsersProcess
                ? "not measured (a process the user started: bgtaskd measures the processes it launched); energy: model"
                : "not measured (the app never ran it); energy: model"
            return measured
        }
        let usage = start.meter.finish(reaped: start.process.reaped.withLock { $0 })
        measured.cpuTime = usage?.cpuSeconds
        measured.peakMemoryBytes = usage?.peakMemoryBytes.flatMap { Int64(exactly: $0) }
        measured.bytesRead = usage?.bytesRead.flatMap { Int64(exactly: $0) }
        measured.bytesWritten = usage?.bytesWritten.flatMap { Int64(exactly: $0) }
        if let first = start.energy, let last = rapl.sample(), let joules = RAPLEnergyReader.joules(from: first, to: last) {
            measured.energyJoules = joules
            measured.measuredBy = "\(usage?.source.rawValue ?? "unmeasured"); energy: RAPL (package, whole machine)"
        } else {
            measured.energyJoules = model.estimate(cpuTime: usage?.cpuSeconds, wallTime: wall)
            measured.measuredBy = "\(usage?.source.rawValue ?? "unmeasured"); energy: model"
        }
        return measured
    }
}

/// The driver's ``BackgroundTasks/RunMeter`` in bgtaskd: a run's measurement is begun by
/// the app's supervisor when it hands the run over, not when the engine launches it.
extension RunMeasurement: BackgroundTasks.RunMeter {
    public func runStarted(_ run: RunID) {}
}
