import SchedulerCore

/// When to try a failed task again: the engine's ``RetryPolicy``, under the name the app
/// uses with ``BGTaskScheduler/setRetryPolicy(_:forTaskWithIdentifier:)``.
public typealias BGRetryPolicy = RetryPolicy
