import Foundation

/// Why the engine refused a submission. The codes mirror `BGTaskScheduler.Error.Code`.
public struct SubmitRejection: Error, Hashable, Sendable, CustomStringConvertible {
    /// Which of Apple's error codes (or this project's `invalidRequest`) applies.
    public enum Code: Int, Hashable, Sendable, Codable {
        /// Background refresh is off for the app, or the system cannot schedule.
        case unavailable = 1
        /// The app already has the maximum number of pending requests of this kind.
        case tooManyPendingTaskRequests = 2
        /// Identifier not in the manifest, background mode missing, or resource unsupported.
        case notPermitted = 3
        /// A continued-processing request with strategy `.fail` cannot start now.
        case immediateRunIneligible = 4
        /// The request itself is malformed (for example a NaN `earliestBeginDate`).
        case invalidRequest = 100
    }

    /// The code.
    public var code: Code
    /// A message that names the culprit.
    public var message: String

    /// Creates a rejection.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The refusal of an identifier `manifest` does not list (`notPermitted`), naming it and
    /// the manifest; `why`, when given, is added as a clause (bgtaskd says the identifier is
    /// the system's own). One wording for the engine's check and the daemon's.
    public static func notListed(_ identifier: String, in manifest: AppManifest, why: String? = nil) -> SubmitRejection {
        SubmitRejection(.notPermitted, "'\(identifier)' is not listed in BGTaskSchedulerPermittedIdentifiers of \(manifest.source ?? "the manifest")" + (why.map { "; \($0)" } ?? ""))
    }

    public var description: String { message }
}

/// An error from a call that needs a request to be pending or a run in progress.
public struct EngineError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was missing.
    public enum Code: Hashable, Sendable {
        /// No pending request has the identifier.
        case noPendingRequest
        /// No run of the identifier is in progress.
        case noRunningTask
        /// A run of the identifier is already in progress.
        case alreadyRunning
    }

    /// The code.
    public var code: Code
    /// A message that names the identifier.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

/// What an app tells the engine about itself when it starts.
public struct AppRegistration: Hashable, Sendable {
    /// The app.
    public var app: AppID
    /// What the app may schedule.
    public var manifest: AppManifest
    /// The per-app Background App Refresh switch (Settings > General on iOS).
    public var backgroundRefreshEnabled: Bool

    /// Creates a registration.
    public init(app: AppID, manifest: AppManifest, backgroundRefreshEnabled: Bool = true) {
        self.app = app
        self.manifest = manifest
        self.backgroundRefreshEnabled = backgroundRefreshEnabled
    }
}

/// Something that happened, fed to `SchedulerEngine.handle(_:at:)`.
public enum EngineEvent: Hashable, Sendable {
    /// The driver's timer fired: run what is due.
    case timerFired
    /// The device conditions changed.
    case conditionsChanged(Conditions)
    /// The host delivered the expiration of a run; `handlerWasSet` says whether the app
    /// had set an expiration handler (without one the run is recorded as failed).
    case expirationDelivered(RunID, handlerWasSet: Bool)
    /// The handler called `setTaskCompleted(success:)`.
    case taskCompleted(RunID, success: Bool)
    /// The host could not start the handler (no handler registered): the app got the run,
    /// so its request is used up (a process that never got it is ``appNotStarted(_:reason:restoringRequest:)``).
    case launchFailed(RunID, reason: String)
    /// The app's process could not be started for the run, or did not finish launching
    /// (bgtaskd: the executable could not be run, the process timed out, exited or lost its
    /// connection first, was told to quit, or the daemon stopped): recorded as a failure
    /// with its throttle strike, as
    /// ``launchFailed(_:reason:)``, and, since the app never got the task, its request is
    /// filed again when `restoringRequest` (not for continued processing, nor when the app
    /// filed a newer one of the same identifier, nor when the submission checks refuse it).
    case appNotStarted(RunID, reason: String, restoringRequest: Bool)
    /// The process running the handler died.
    case runCrashed(RunID, reason: String)
    /// The host could not claim the run's request in a store shared by several schedulers
    /// (another replica claimed it first, it was replaced or cancelled there, or the store
    /// could not be reached): the run never started here and is forgotten, with no record,
    /// no strike and no retry. The request is the store's: the replica that claimed it runs
    /// it, or this engine learns of it again when the store is read (docs/replicas.md).
    case runNotClaimed(RunID)
    /// The host read the progress of a continued-processing run (completed fraction).
    case progressSampled(RunID, completedUnitCount: Int64)
    /// The user brought the app to the foreground (usage history; lifts a force-quit).
    case appForegrounded(AppID)
    /// The user force-quit the app in the app switcher.
    case appForceQuit(AppID)
    /// The app cancelled its pending request under this key (the driver removed it from
    /// the store first). A running task is not affected.
    case requestCancelled(RequestKey)
    /// The app cancelled all its pending requests (the driver removed them from the store first).
    case allRequestsCancelled(AppID)
    /// The app's Background App Refresh switch changed (the driver saved it first);
    /// turned on, what the switch held is judged again at once.
    case backgroundRefreshChanged(AppID, enabled: Bool)
    /// The process hosting the app is about to exit (SIGTERM under a supervisor): its runs
    /// in progress get their expiration now (and their grace period), and none of its
    /// requests launches until it registers again.
    case appTerminating(AppID)
    /// The host asks that the app's runs in progress get their expiration now, `reason`
    /// saying why (bgtaskd: the user started another process of the app while the
    /// daemon's own ran a task); unlike ``appTerminating(_:)``, launches go on.
    case runsExpired(AppID, reason: String)
    /// The host ends the app's process at the user's word, `reason` saying which (bgtaskd: a
    /// force-quit, a reinstall with another executable): its runs (in progress, or still
    /// waiting for the process to launch) get their expiration now where they run, and however
    /// they then end it is no throttle strike: the user's doing. Not sent where nothing ends
    /// the process (an embedded app's own `forceQuit()`).
    case appEndedByTheUser(AppID, reason: String)
    /// An app was installed with the daemon (or installed again): the engine learns its
    /// manifest and switch, and what it held for the app is judged again.
    case appInstalled(AppRegistration)
    /// An app was uninstalled (the driver removed it from the store first): its pending
    /// requests go, its runs in progress are ended by force (recorded as terminated), and
    /// the engine forgets it.
    case appUninstalled(AppID)
}

/// Something the driver must do, returned by the engine in order.
///
/// The cases that carry a whole run record (or request) are `indirect`: the others (a wake,
/// moved requests) are most of the effects, and an effect is as large as its largest case,
/// so every effect appended, copied or matched would otherwise move some 350 bytes.
public enum EngineEffect: Hashable, Sendable {
    /// Persist the run (which consumes its request) and call the app's handler.
    /// `evaluation` is the policies' judgement that let it run (`nil` for a simulated
    /// launch and for continued processing, which the policies do not judge).
    indirect case launch(RunRecord, budget: TimeInterval?, evaluation: PolicyEvaluation?)
    /// Call the run's expiration handler; the run has `grace` seconds to complete.
    case expire(RunID, reason: String, grace: TimeInterval)
    /// The run is over: persist the record; later completions of it are ignored.
    indirect case runFinished(RunRecord)
    /// Persist this retry of a failed run, which the engine already filed (the app's
    /// ``RetryPolicy``, or the request of a run whose app could not be started,
    /// ``EngineEvent/appNotStarted(_:reason:restoringRequest:)``; it comes before the run's
    /// `.runFinished`, so the retry is on disk before the failure that produced it).
    indirect case retryScheduled(PendingRequest)
    /// Stop the run's work by force (terminate the process group when out of process).
    case terminate(RunID, reason: String)
    /// Read the progress of a continued-processing run and report `.progressSampled`.
    case sampleProgress(RunID)
    /// Pending requests moved (became eligible, blocked on a condition, held...): for
    /// timelines. One effect per batch, so a bucket of 100,000 moves is one array.
    case requestsMoved([EligibilityIndex.Transition])
    /// Wake the engine (`.timerFired`) at this instant; `nil` means nothing is scheduled.
    case wake(at: Date?)
}
