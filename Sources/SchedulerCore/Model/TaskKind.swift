/// The kinds of scheduled background task (docs/system.md, "Kinds").
public enum TaskKind: String, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// `BGAppRefreshTaskRequest`: a small fetch so content is fresh at the next launch.
    case appRefresh = "refresh"
    /// `BGProcessingTaskRequest`: deferrable heavy work (sync, clean-up, compaction).
    case processing
    /// `BGHealthResearchTaskRequest`: a processing task with a data-protection class.
    case healthResearch = "health-research"
    /// `BGContinuedProcessingTaskRequest`: user-started work that continues in the background.
    case continuedProcessing = "continued-processing"

    public var description: String { rawValue }

    /// The `UIBackgroundModes` entry the manifest must list for this kind, if any.
    ///
    /// Continued processing needs no background mode: it is started from the foreground.
    public var requiredBackgroundMode: String? {
        switch self {
        case .appRefresh: return "fetch"
        case .processing, .healthResearch: return "processing"
        case .continuedProcessing: return nil
        }
    }

    /// Which per-app pending limit the kind counts against.
    public var limitClass: PendingLimitClass {
        switch self {
        case .appRefresh: return .refresh
        case .processing, .healthResearch: return .processing
        case .continuedProcessing: return .continuedProcessing
        }
    }
}

/// The groups of kinds that share one per-app pending limit (1 refresh, 10 processing).
public enum PendingLimitClass: String, Hashable, Sendable, Codable, CaseIterable {
    /// App refresh requests.
    case refresh
    /// Processing and health-research requests.
    case processing
    /// Continued-processing requests (queued user work).
    case continuedProcessing = "continued-processing"
}
