import Dispatch
import Foundation
import SchedulerStore
import Synchronization
import SchedulerCore

/// One app as the runtime sees it: its identity and manifest, its scheduler and
/// application objects, its registered handlers, and the driver that runs its tasks.
///
/// Apple's API is made of singletons (`BGTaskScheduler.shared`, `UIApplication.shared`),
/// yet the simulator runs many apps in one process. So the singletons resolve to the
/// context of the code that is running: the task-local ``BGAppContext/current`` (bound by
/// the driver around every call into an app), else the context attached to the current
/// Dispatch queue (handler queues carry it, so completion blocks find it too), else the
/// process's own embedded app.
public final class BGAppContext: Sendable {
    /// The app.
    public let app: AppID
    /// What the app may schedule.
    public let manifest: AppManifest
    /// The manifest as the app declared it, without the system's identifiers: what an
    /// app's own submissions of those are checked against
    /// (``AppManifest/systemOnlyIdentifierRefusal(_:of:)``).
    let declaredManifest: AppManifest
    /// The driver that runs the app's tasks.
    public let driver: SchedulerDriver
    /// The app's `BGTaskScheduler`.
    public let scheduler: BGTaskScheduler
    /// The app's `UIApplication`.
    public let application: BGApplication
    /// The app's `UIDevice`.
    public let device: UIDevice
    /// The serial queue the app's background-fetch and remote-notification handlers run on
    /// (when not isolated to an actor). Launch handlers registered with `using: nil` get a
    /// serial queue of their own registration's (BGTaskScheduler.swift).
    public let defaultHandlerQueue: DispatchQueue
    /// Where the expiration handlers of background assertions and the termination signals
    /// are handled: separate from handler queues, so an expiration handler runs even while
    /// the handler's own queue is busy with the work it cancels. A task's expiration
    /// handler runs on its run's own queue (``BGTask``).
    let expirationQueue: DispatchQueue
    /// Whether submitted `earliestBeginDate`s are computed from the wall clock and must be
    /// moved to virtual time (simulated apps written as iOS code is).
    let wallClockDateTranslation: Bool
    /// Whether bgtaskd launched the process into the background (`BGTASK_LAUNCH=background`):
    /// finishing its launch does not make it active (the user did not open it).
    package let launchedInBackground: Bool
    /// Whether bgtaskd started the process, for its tasks or for the user's tap
    /// (`BGTASK_LAUNCH` set by it): its SIGTERM then means the process is being ended.
    package let launchedByDaemon: Bool
    /// Other modules' per-app objects (``service(_:make:)``).
    let services = AppServiceObjects()
    /// Posts `ProcessInfo`'s and `UIDevice`'s change notifications as the driver reports
    /// the device changing.
    let deviceChanges: DeviceChangeNotifier
    /// Who is told of the device's conditions changing (``observeConditions(_:)``).
    let conditionsWatchers = ConditionsWatchers()

    /// The context bound by the driver around calls into app code.
    @TaskLocal public static var current: BGAppContext?

    static let queueKey = DispatchSpecificKey<WeakContext>()

    /// Creates a context and attaches it to `driver`. `battery` reads the battery
    /// ``UIDevice/current`` reports, `power` its Low Power Mode and thermal state (both by
    /// default the machine's, as the scheduler reads them); `deviceIdentity` is what it says
    /// of itself (by default this machine's).
    public init(
        app: AppID,
        manifest: AppManifest,
        driver: SchedulerDriver,
        assertions: AssertionConfiguration = .init(),
        backgroundRefreshEnabled: Bool = true,
        wallClockDateTranslation: Bool = false,
        launchedInBackground: Bool = false,
        launchedByDaemon: Bool? = nil,
        battery: (@Sendable () -> UIDevice.BatteryReading)? = nil,
        power: (@Sendable () -> UIDevice.PowerReading)? = nil,
        deviceIdentity: UIDevice.Identity? = nil
    ) {
        self.launchedInBackground = launchedInBackground
        self.launchedByDaemon = launchedByDaemon ?? launchedInBackground
        self.wallClockDateTranslation = wallClockDateTranslation
        self.app = app
        self.manifest = manifest.permittingSystemIdentifiers(for: app)
        self.declaredManifest = manifest
        self.driver = driver
        self.defaultHandlerQueue = DispatchQueue(label: "bgtask.\(app.rawValue).handlers")
        self.expirationQueue = DispatchQueue(label: "bgtask.\(app.rawValue).expiration")
        self.scheduler = BGTaskScheduler()
        self.application = BGApplication(assertions: assertions)
        self.device = UIDevice(
            app: app,
            identity: deviceIdentity ?? .machine(),
            readBattery: battery ?? UIDevice.battery(),
            readPower: power ?? UIDevice.power()
        )
        // Under bgtaskd the driver's conditions are not the device's: the daemon's first
        // report after the launch is the starting point.
        deviceChanges = DeviceChangeNotifier(conditions: driver.isLinkedToDaemon ? nil : driver.conditions)
        scheduler.context = self
        application.context = self
        bind(defaultHandlerQueue)
        bind(expirationQueue)
        withCurrent { application.registerRemoteWakeHandler() }
        // One trace observer per app, for as long as its driver lives; watchers come and go.
        driver.observe { [weak conditionsWatchers] event in
            if case .conditionsChanged(let conditions, _) = event { conditionsWatchers?.changed(to: conditions) }
        }
        deviceChanges.follow(self)
        let stored = try? driver.store?.appSetting(app: app, name: AppSettingName.backgroundRefresh)
        driver.attach(self, backgroundRefreshEnabled: stored.map { $0 != "off" } ?? backgroundRefreshEnabled)
    }

    /// The context of the code that is running, without making the process's own (see
    /// ``resolve()``): `nil` on a thread bound to no app before anything made it. For
    /// what may be asked from any thread before `main` bootstraps the scheduler
    /// (`ProcessInfo.processInfo.thermalState` in a library), which must not close the
    /// bootstrap or start a scheduler.
    package static func resolveExisting() -> BGAppContext? {
        if let current { return current }
        if let bound = DispatchQueue.getSpecific(key: queueKey)?.context { return bound }
        return EmbeddedScheduler.existingProcessContext
    }

    /// The context of the code that is running (see the type's documentation).
    public static func resolve() -> BGAppContext {
        if let current { return current }
        if let bound = DispatchQueue.getSpecific(key: queueKey)?.context { return bound }
        return EmbeddedScheduler.processContext
    }

    /// Runs `body` with this context as the current one.
    @discardableResult
    public func withCurrent<R>(_ body: () throws -> R) rethrows -> R {
        try BGAppContext.$current.withValue(self, operation: body)
    }

    /// Attaches this context to `queue` so code running on it resolves to this app,
    /// unless the queue already belongs to another app.
    func bind(_ queue: DispatchQueue) {
        if queue.getSpecific(key: BGAppContext.queueKey)?.context == nil {
            queue.setSpecific(key: BGAppContext.queueKey, value: WeakContext(self))
        }
    }

    /// Runs `body` on `queue` as app work: bound to this context and counted by the
    /// driver's activity tracker until it returns.
    func dispatch(on queue: DispatchQueue, _ body: @escaping @Sendable () -> Void) {
        driver.runAppWork {
            self.driver.activity.enter()
            queue.async {
                self.driver.clock.appWorkStarted()
                self.withCurrent(body)
                self.driver.activity.leave()
            }
        }
    }

    /// The driver's instant for a date the app computed: unchanged normally; under
    /// translation, the clock's (``DriverClock/instant(forWallClockDate:)``: the simulator
    /// measures the date from the wall instant the current app work started, so the wall
    /// time app code spends after computing the date does not count).
    func driverDate(forAppDate date: Date) -> Date {
        guard wallClockDateTranslation else { return date }
        return driver.clock.instant(forWallClockDate: date)
    }

    /// The date the app reads for one of the driver's instants: unchanged normally; under
    /// translation, the wall-clock date as far from `Date()` as the instant is from the
    /// driver's now (``DriverClock/wallClockDate(forInstant:)``), so a pending request's
    /// `earliestBeginDate` read back compares with `Date()` as it does on iOS.
    func appDate(forDriverDate instant: Date) -> Date {
        guard wallClockDateTranslation else { return instant }
        return driver.clock.wallClockDate(forInstant: instant)
    }

    // MARK: Launching tasks

    /// Makes the `BGTask` for a run, or `nil` when no handler is registered for it.
    func makeTask(for record: RunRecord) -> BGTask? {
        guard scheduler.registration(for: record.identifier) != nil else { return nil }
        return BGTask.make(for: record, context: self)
    }

    /// Calls the registered handler with `task`, now or, while the app has not finished
    /// launching, once it has (all handlers must be registered first).
    func deliver(_ task: BGTask) {
        guard application.hasFinishedLaunching else {
            application.deferUntilLaunched(task)
            return
        }
        guard let registration = scheduler.registration(for: task.identifier) else {
            driver.log(.error, app: app, "no launch handler registered for task with identifier '\(task.identifier)'")
            task.setTaskCompleted(success: false)
            return
        }
        task.noteHandedOver()
        registration.invoke(task, context: self)
    }
}

/// A weak reference for Dispatch queue-specific data (a queue must not keep its app alive).
final class WeakContext: @unchecked Sendable {
    // Set once at creation; read-only afterwards.
    weak var context: BGAppContext?
    init(_ context: BGAppContext) { self.context = context }
}
