// The scheduler's value types (AppID, PendingRequest, RunRecord, Conditions...) appear in
// this module's public API, so importing BackgroundTasks brings them along.
@_exported import SchedulerCore
