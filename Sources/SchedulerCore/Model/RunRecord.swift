import Foundation

/// How a run ended (the energy log's outcome column).
public enum RunOutcome: String, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// The handler called `setTaskCompleted(success: true)` before expiration.
    case success
    /// The handler called `setTaskCompleted(success: false)`, the handler could not be
    /// launched, or the run expired with no expiration handler set.
    case failure
    /// The run was expired and the handler completed within the grace period.
    case expired
    /// The run was expired and did not complete within the grace period.
    case terminated
    /// The process running the handler died.
    case crashed
    /// The scheduler itself stopped (crash, kill) while the run was in progress; found
    /// and recorded on the next start, and the request was restored.
    case interrupted

    public var description: String { rawValue }
}

/// One run of a task, as the run log records it.
public struct RunRecord: Hashable, Sendable, Codable {
    /// The run's number.
    public var id: RunID
    /// The request that was launched (consumed at launch; restored if the run is interrupted).
    public var request: PendingRequest
    /// When the handler was launched.
    public var startedAt: Date
    /// When the run ended, or `nil` while it is in progress.
    public var endedAt: Date?
    /// How the run ended, or `nil` while it is in progress.
    public var outcome: RunOutcome?
    /// The `success` flag the handler passed to `setTaskCompleted`, if it called it.
    public var success: Bool?
    /// A human-readable reason for the end (for example "budget of 30 s exhausted").
    public var stopReason: String?
    /// CPU time (user + system) the run used, in seconds, when measured.
    public var cpuTime: TimeInterval?
    /// Peak resident memory of the process running the handler, in bytes, when known.
    public var peakMemoryBytes: Int64?
    /// Estimated energy of the run, in joules (see `EnergyModel`), when measured.
    public var energyJoules: Double?
    /// Where the measurements came from, for a run out of process (bgtaskd): `cgroup`,
    /// `rusage` or `procfs` for CPU and memory, then `RAPL` or `model` for energy (for
    /// example "cgroup; energy: RAPL"); `nil` for in-process runs.
    public var measuredBy: String?
    /// Bytes the run's process read from storage, when measured.
    public var bytesRead: Int64?
    /// Bytes the run's process wrote to storage, when measured.
    public var bytesWritten: Int64?

    /// Creates a run record.
    public init(
        id: RunID,
        request: PendingRequest,
        startedAt: Date,
        endedAt: Date? = nil,
        outcome: RunOutcome? = nil,
        success: Bool? = nil,
        stopReason: String? = nil,
        cpuTime: TimeInterval? = nil,
        peakMemoryBytes: Int64? = nil,
        energyJoules: Double? = nil,
        measuredBy: String? = nil,
        bytesRead: Int64? = nil,
        bytesWritten: Int64? = nil
    ) {
        self.measuredBy = measuredBy
        self.bytesRead = bytesRead
        self.bytesWritten = bytesWritten
        self.id = id
        self.request = request
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.outcome = outcome
        self.success = success
        self.stopReason = stopReason
        self.cpuTime = cpuTime
        self.peakMemoryBytes = peakMemoryBytes
        self.energyJoules = energyJoules
    }

    /// The app of the run.
    public var app: AppID { request.app }
    /// The task identifier of the run.
    public var identifier: String { request.identifier }
    /// Wall time from launch to end, when ended; for a figure shown to people, use
    /// ``observedDuration``, which leaves out an interrupted run's span.
    public var duration: TimeInterval? { endedAt.map { $0.timeIntervalSince(startedAt) } }
    /// How long the run is known to have run: ``duration``, but `nil` for an
    /// ``RunOutcome/interrupted`` run, whose end was recorded when the scheduler was back
    /// (its next start, or a replica's lease running out), so its span holds time in which
    /// nothing watched it.
    public var observedDuration: TimeInterval? { outcome == .interrupted ? nil : duration }
}
