import Foundation
import SchedulerCore

/// Settings for opening a ``SchedulerStore``.
public struct StoreOptions: Sendable {
    /// How hard SQLite works to make each commit survive a power cut.
    public var synchronous: Synchronous

    /// The only app whose requests the store may hold (an embedded app's own store), or
    /// `nil` for a store shared by several apps. When set, opening quarantines pending
    /// requests of any other app instead of loading (and launching) them.
    public var app: AppID?

    /// Creates options; the default is the safest setting, ``Synchronous/full``, for a store
    /// of any app.
    public init(synchronous: Synchronous = .full, app: AppID? = nil) {
        self.synchronous = synchronous
        self.app = app
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
    /// Where a database with no tables and no `-wal` beside it (a store copied without its
    /// `-wal`) was moved before a fresh store was created in its place, or `nil`.
    public var movedAsideWithoutSchema: URL?
    /// What was copied back from the file moved aside into the fresh store, and what could
    /// not be read (empty when no file was moved aside).
    public var salvage = StoreSalvage()
    /// Runs that had no end when the store was opened (the scheduler stopped while they ran),
    /// as now recorded: outcome ``RunOutcome/interrupted``, ended at the opening instant.
    public var interruptedRuns: [RunRecord]
    /// The requests of those runs that were put back in the pending list. A run whose app
    /// had already submitted a newer request with the same identifier restores nothing.
    public var restoredRequests: [PendingRequest]
    /// Pending requests that could not be loaded (unreadable, or another app's) and were
    /// moved to the quarantine with the reason (``SchedulerStore/quarantinedRequests()``).
    public var quarantinedRequests: [QuarantinedRequest]
    /// Runs without an end whose row could not be read, as `run-N: why`: recorded as
    /// interrupted, their requests not restored.
    public var unreadableRuns: [String]
    /// The pending requests as loaded at the opening, after the quarantine and the
    /// recovery: what the owner restores (``SchedulerStore/pendingRequests(app:)`` reads the
    /// same rows again, at a cost a store of 100,000 requests feels at start-up).
    public var loadedRequests: [PendingRequest] = []

    /// Creates a report; an empty one means nothing needed repair.
    public init(
        movedAsideCorruptFile: URL? = nil,
        corruptionDetail: String? = nil,
        interruptedRuns: [RunRecord] = [],
        restoredRequests: [PendingRequest] = [],
        quarantinedRequests: [QuarantinedRequest] = [],
        unreadableRuns: [String] = []
    ) {
        self.movedAsideCorruptFile = movedAsideCorruptFile
        self.corruptionDetail = corruptionDetail
        self.interruptedRuns = interruptedRuns
        self.restoredRequests = restoredRequests
        self.quarantinedRequests = quarantinedRequests
        self.unreadableRuns = unreadableRuns
    }
}
