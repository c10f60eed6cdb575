import BackgroundTasks
import Foundation
import SchedulerCore

/// What a run costs in simulation, where its CPU time cannot be measured: a run keeps a
/// share of one core busy for as long as it is alive.
///
/// Real handlers that simulate their work (sleeping on ``SimulatedDevice/swiftClock``)
/// and modelled apps both take virtual time; this turns that time into CPU seconds, and
/// ``EnergyModel`` turns CPU and wall time into joules, as the energy log does for real runs.
public struct CostModel: Hashable, Sendable, Codable {
    /// The share of one core a run keeps busy while alive (0...1); default 0.3: background
    /// work mostly waits on the network or the disk.
    public var cpuShare: Double
    /// Shares for particular task identifiers (a compute-heavy clean-up, say).
    public var cpuShareByIdentifier: [String: Double]

    /// The default share, 0.3 (see ``cpuShare``).
    public static let defaultCPUShare = 0.3

    /// Creates a cost model.
    public init(cpuShare: Double = CostModel.defaultCPUShare, cpuShareByIdentifier: [String: Double] = [:]) {
        self.cpuShare = cpuShare
        self.cpuShareByIdentifier = cpuShareByIdentifier
    }

    /// The share of a core a run of `identifier` keeps busy, clamped to 0...1.
    public func share(of identifier: String) -> Double {
        min(1, max(0, cpuShareByIdentifier[identifier] ?? cpuShare))
    }

    /// `record` (ended) with its CPU time and estimated energy filled in.
    public func measured(_ record: RunRecord, energy: EnergyModel) -> RunRecord {
        var record = record
        let wall = record.duration ?? 0
        record.cpuTime = wall * share(of: record.identifier)
        record.energyJoules = energy.estimate(cpuTime: record.cpuTime, wallTime: wall)
        return record
    }
}

extension SchedulerConfiguration {
    /// The tunables of a simulated device: Apple's defaults, and nothing read from this
    /// machine (its identity would make traces differ between machines) or from the
    /// process's environment unless passed: a test run with
    /// `BACKGROUND_TASK_SIMULATE_EXPIRATION=YES` exported gives the same traces as one
    /// without.
    /// - Parameters:
    ///   - simulatesExpiration: every run expires within 5 s of its start, as
    ///     `BACKGROUND_TASK_SIMULATE_EXPIRATION=YES` does on a real device.
    ///   - environment: variables to honour as a real device would (the CLI passes its
    ///     own: `BACKGROUND_TASK_SIMULATE_EXPIRATION=YES` has the effect of
    ///     `simulatesExpiration`); empty by default.
    ///
    /// Only `BACKGROUND_TASK_SIMULATE_EXPIRATION` is honoured: the developer's manual launch
    /// switch (`BGTASK_MANUAL_LAUNCH`) is for their real app, and a simulation in which
    /// nothing launches by itself would show nothing.
    public static func simulation(simulatesExpiration: Bool = false, environment: [String: String] = [:]) -> SchedulerConfiguration {
        let honoured = environment.filter { $0.key == "BACKGROUND_TASK_SIMULATE_EXPIRATION" }
        var configuration = EmbeddedScheduler.defaultSchedulerConfiguration(environment: honoured, machineIDFile: nil)
        if simulatesExpiration, configuration.simulatedExpirationAfter == nil {
            configuration.simulatedExpirationAfter = EmbeddedScheduler.defaultSchedulerConfiguration(
                environment: ["BACKGROUND_TASK_SIMULATE_EXPIRATION": "YES"], machineIDFile: nil
            ).simulatedExpirationAfter
        }
        return configuration
    }

    /// This configuration for a simulated device seeded `seed`: its own device salt, or
    /// the seed when it has none (0), so that simulated devices spread their work
    /// differently, as machines do.
    public func salted(by seed: UInt64) -> SchedulerConfiguration {
        var configuration = self
        if configuration.deviceSalt == 0 { configuration.deviceSalt = seed }
        return configuration
    }
}

/// The simulator's ``RunMeter``: applies a ``CostModel`` to each run's virtual duration.
public struct SimulatedRunMeter: RunMeter {
    /// The cost model applied.
    public let costs: CostModel

    /// Creates a meter applying `costs`.
    public init(costs: CostModel = .init()) {
        self.costs = costs
    }

    /// Nothing to do: the cost follows from the run's duration.
    public func runStarted(_ run: RunID) {}

    /// `record` with CPU time and energy from the cost model.
    public func finish(_ record: RunRecord, model: EnergyModel) -> RunRecord {
        costs.measured(record, energy: model)
    }
}
