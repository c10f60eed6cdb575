import Foundation
import SchedulerCore

/// Where a ``SchedulerDriver`` hands the runs of an app that lives in another process:
/// bgtaskd's launcher implements it (docs/daemon.md). The driver calls these after
/// releasing its lock, in the order the engine decided; the host answers through the
/// driver's public events (``SchedulerDriver/taskCompleted(_:success:)``,
/// ``SchedulerDriver/expirationDelivered(_:handlerWasSet:)``,
/// ``SchedulerDriver/launchFailed(_:reason:)``, ``SchedulerDriver/runCrashed(_:reason:)``,
/// ``SchedulerDriver/progressSampled(_:completedUnitCount:)``).
public protocol RemoteTaskHost: AnyObject, Sendable {
    /// Start `run` in the app (launching the app first when it is not running), within
    /// `budget` seconds (`nil`: no budget).
    func launch(_ run: RunRecord, budget: TimeInterval?)
    /// The run's time is up: deliver its expiration.
    func expire(_ run: RunID, reason: String)
    /// The grace period ended without completion: end the run's work by force.
    func terminate(_ run: RunID, reason: String)
    /// The run is over and recorded.
    func finished(_ run: RunRecord)
    /// Read the progress of the continued-processing `run` and report it.
    func sampleProgress(_ run: RunID)
}
