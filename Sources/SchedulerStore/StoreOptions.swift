import Foundation
import SchedulerCore

/// Settings for opening a ``SchedulerStore``.
public struct StoreOptions: Sendable {
    /// How hard SQLite works to make each commit survive a power cut.
    public var synchronous: Synchronous

    /// Creates options; the default is the safest setting, ``Synchronous/full``.
    public init(synchronous: Synchronous = .full) {
        self.synchronous = synchronous
    }

    /// SQLite's `PRAGMA synchronous` levels that make sense in WAL mode.
    public enum Synchronous: Sendable {
        /// Every commit is flushed to disk before it returns: no acknowledged write is lost,
        /// even on power loss. The default.
        case full
        /// Commits survive a crash of the process, but the last ones may be lost if the whole
        /// machine loses power. Faster; suits simulations and benchmarks.
        case normal

        /// The value for `PRAGMA synchronous`.
        var pragmaValue: String {
            switch self {
            case .full: return "FULL"
            case .normal: return "NORMAL"
            }
        }
    }
}

/// What ``SchedulerStore/open(at:now:options:)`` found and repaired while opening.
public struct StoreOpenReport: Sendable {
    /// Where a corrupt or not-a-database file was moved before a fresh store was created in
    /// its place, or `nil` when the file was fine.
    public var movedAsideCorruptFile: URL?
    /// SQLite's explanation of the damage (for example "file is not a database"), when a file
    /// was moved aside.
    public var corruptionDetail: String?
    /// Runs that had no end when the store was opened (the scheduler stopped while they ran),
    /// as now recorded: outcome ``RunOutcome/interrupted``, ended at the opening instant.
    public var interruptedRuns: [RunRecord]
    /// The requests of those runs that were put back in the pending list. A run whose app
    /// had already submitted a newer request with the same identifier restores nothing.
    public var restoredRequests: [PendingRequest]

    /// Creates a report; an empty one means nothing needed repair.
    public init(
        movedAsideCorruptFile: URL? = nil,
        corruptionDetail: String? = nil,
        interruptedRuns: [RunRecord] = [],
        restoredRequests: [PendingRequest] = []
    ) {
        self.movedAsideCorruptFile = movedAsideCorruptFile
        self.corruptionDetail = corruptionDetail
        self.interruptedRuns = interruptedRuns
        self.restoredRequests = restoredRequests
    }
}
