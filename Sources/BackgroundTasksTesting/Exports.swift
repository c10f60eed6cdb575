// A test or a simulation names the engine's types (`AppID`, `AppManifest`, `Conditions`,
// `Scenario`'s days) beside the app's: importing BackgroundTasksTesting brings them, and
// BackgroundTasks. An app's own files import BackgroundTasks (or UIKit), which does not
// re-export the engine (Sources/BackgroundTasks/Exports.swift).
@_exported import BackgroundTasks
@_exported import SchedulerCore
