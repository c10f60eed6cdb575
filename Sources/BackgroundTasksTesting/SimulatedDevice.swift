import BackgroundTasks
import DeviceConditions
import Foundation
import SchedulerStore
import Synchronization
import SchedulerCore

/// A device in virtual time: the real engine and driver, an in-memory store, scripted
/// conditions, and apps whose real handler code runs in-process.
///
/// ```swift
/// let device = try SimulatedDevice(start: midnight)
/// let app = device.install(app: "com.example.feed", manifest: manifest) { FeedReader().didFinishLaunching() }
/// device.setConditions(Conditions(externalPower: false, networkAvailable: true), at: midnight + 8 * 3600)
/// await device.run(for: 86_400)
/// #expect(device.runs(of: "com.example.feed.refresh").count > 40)
/// ```
///
/// Time moves only inside ``run(until:)``: each timer fires in (instant, insertion) order,
/// and after each the device waits until the apps' handlers have returned or parked on
/// ``swiftClock``, so the same script always gives the same trace.
public final class SimulatedDevice: Sendable {
    /// The virtual clock.
    public let clock: VirtualClock
    /// The driver hosting the engine (the same class production uses).
    public let driver: SchedulerDriver
    /// A Swift `Clock` for app code to sleep on in virtual time.
    public let swiftClock: SimulatedClock
    /// Diagnostics of the driver and apps, kept for assertions.
    public let log: BGDiagnosticLog

    /// Whether ``install(app:manifest:backgroundRefreshEnabled:dateTranslation:launchedByUser:didFinishLaunching:)``
    /// counts as the user opening the app when it is not told: true by default; a
    /// ``Simulation`` sets it false, so its scenario alone says when the user opens apps.
    public let installsLaunchedByUser: Bool

    private let recorded = TraceBuffer()
    private let contexts = Mutex<[AppID: BGAppContext]>([:])
    /// Per installed app, the played script's sessions open now (see
    /// ``openSession(for:recordingIn:)``); touched only by the clock's scheduled actions.
    private let openSessions = Mutex<[AppID: Int]>([:])
    private let assertions: AssertionConfiguration

    /// Creates a device at `start`.
    /// - Parameters:
    ///   - configuration: the engine's tunables: Apple's by default
    ///     (``SchedulerConfiguration/simulation(simulatesExpiration:environment:)``, which
    ///     reads nothing from the process's environment; pass `simulatesExpiration: true`
    ///     for every run to expire within 5 s of its start).
    ///   - conditions: the conditions at `start`.
    ///   - store: a store to use (an in-memory one by default).
    ///   - policies: the policies the engine consults (the standard set by default).
    ///   - stuckWorkLimit: wall-clock patience with app work that blocks a thread.
    ///   - costs: what a run costs: CPU time as a share of its (virtual) duration, which
    ///     the energy log turns into joules.
    ///   - installsLaunchedByUser: see ``installsLaunchedByUser``.
    public init(
        start: Date,
        configuration: SchedulerConfiguration = .simulation(),
        assertions: AssertionConfiguration = .init(),
        conditions: Conditions = .favorable,
        store: (any SchedulerStorage)? = nil,
        policies: PolicySet = PolicySet(),
        stuckWorkLimit: Duration = .seconds(30),
        costs: CostModel = .init(),
        installsLaunchedByUser: Bool = true
    ) throws {
        if let problem = DateText.rangeProblem(start) { throw SimulatedDeviceError("the simulated device cannot start at \(problem)") }
        self.installsLaunchedByUser = installsLaunchedByUser
        self.stuckWorkLimit = stuckWorkLimit
        let clock = VirtualClock(start: start)
        let activity = BGActivityTracker()
        let log = BGDiagnosticLog.collecting()
        self.clock = clock
        self.log = log
        self.assertions = assertions
        self.driver = SchedulerDriver(
            configuration: configuration,
            conditions: conditions,
            clock: clock,
            store: try store ?? SchedulerStore.inMemory(),
            activity: activity,
            log: log,
            serializesAppWork: true,
            policies: policies,
            meter: SimulatedRunMeter(costs: costs)
        )
        self.swiftClock = SimulatedClock(virtual: clock, activity: activity)
        driver.observe { [recorded] event in recorded.append(event) }
    }

    /// The current virtual instant.
    public var now: Date { clock.now() }

    /// Ends the device, as the end of a simulation does (``Simulation`` calls it once it has
    /// the trace). Runs still in progress get their expiration (their work, cancelled,
    /// stops sleeping on ``swiftClock``), and everything due now happens (``settle()``);
    /// then the device and its driver forget the installed apps' contexts and the
    /// tasks of runs in progress, and the clock drops its pending timers. App code that
    /// keeps a reference to the device (a handler that calls ``work(for:)``, a simulated
    /// service that answers in virtual time) no longer forms a cycle with it, so everything
    /// is freed once the caller lets go. Nothing is played after this; the trace stays
    /// readable, with those expirations at its end. A cycle within the app's own code (a
    /// closure its context keeps that holds the context strongly) is the app's.
    ///
    /// Not done when the device is merely let go of: an app's context holds the driver
    /// (and the driver the context), and a caller may go on using a context whose device it
    /// dropped. A test that builds devices itself calls this when it is done with one.
    public func shutDown() async {
        guard !driver.hasDetachedAllApps else { return }
        for app in installedApps { driver.expireRuns(of: app, reason: "the simulated device shut down") }
        await settle()  // the expirations, and what they wake, are app work due now
        let installed = contexts.withLock { contexts -> [AppID: BGAppContext] in
            defer { contexts.removeAll() }
            return contexts
        }
        _ = installed  // released here, outside the lock
        driver.detachAllApps()
        clock.cancelAll()
    }

    /// Everything the driver reported, in order.
    public var trace: [SchedulerTraceEvent] { recorded.events }

    // MARK: Apps

    /// Installs and launches an app: `didFinishLaunching` runs with the app's context bound
    /// (so `BGTaskScheduler.shared` is this app's), then the app finishes launching and
    /// moves to the background, as an app the user launched once and left; with
    /// `launchedByUser` false, as an app the system launched into the background (no
    /// foreground, so the usage model learns nothing from the install). `nil` takes
    /// ``installsLaunchedByUser``.
    /// - Parameter dateTranslation: on (default), `earliestBeginDate`s the app computes
    ///   from the wall clock (`Date(timeIntervalSinceNow:)`, as iOS code does) are moved to
    ///   the same offset from virtual now.
    @discardableResult
    public func install(
        app: AppID,
        manifest: AppManifest,
        backgroundRefreshEnabled: Bool = true,
        dateTranslation: Bool = true,
        launchedByUser: Bool? = nil,
        didFinishLaunching: () -> Void
    ) -> BGAppContext {
        let context = BGAppContext(
            app: app,
            manifest: manifest,
            driver: driver,
            assertions: assertions,
            backgroundRefreshEnabled: backgroundRefreshEnabled,
            wallClockDateTranslation: dateTranslation,
            // UIDevice's battery, power management and identity are the simulated device's.
            battery: { [driver] in UIDevice.BatteryReading(conditions: driver.conditions) },
            power: { [driver] in UIDevice.PowerReading(conditions: driver.conditions) },
            deviceIdentity: .simulated(salt: driver.configuration.deviceSalt)
        )
        contexts.withLock { $0[app] = context }
        clock.appWorkStarted()
        context.withCurrent {
            context.application.launch()
            didFinishLaunching()
            context.application.finishLaunching(activate: launchedByUser ?? installsLaunchedByUser)
            context.application.enterBackground()
        }
        return context
    }

    /// The context of an installed app.
    public func context(of app: AppID) -> BGAppContext? { contexts.withLock { $0[app] } }

    /// The installed apps, in identifier order.
    public var installedApps: [AppID] { contexts.withLock { $0.keys.sorted() } }

    /// Plays `script` from now: its conditions now, its condition changes and the user's
    /// foreground sessions (each brings the app, or every installed app when the session
    /// names none, to the foreground and back to the background) at their instants.
    public func play(_ script: ScenarioScript) {
        setConditions(script.initialConditions)
        for change in script.changes { setConditions(change.conditions, at: change.at) }
        for session in script.sessions {
            let opened = OpenedApps()
            _ = clock.schedule(at: session.start) { [weak self] in self?.openSession(for: session.app, recordingIn: opened) }
            _ = clock.schedule(at: session.end) { [weak self] in self?.closeSession(opened) }
        }
    }

    /// The apps one played session opened, so that its end closes those and no others (an
    /// app installed during a session for every app was not opened by it).
    private final class OpenedApps: Sendable {
        let apps = Mutex<[AppID]>([])
    }

    /// A session of the installed app `name` (every installed app when `nil`) starts: each
    /// app it names comes to the foreground, with its context bound, as the user would bring
    /// it, unless another session of it is open (sessions may overlap, ``openSessions``).
    private func openSession(for name: String?, recordingIn opened: OpenedApps) {
        let targets = contexts.withLock { contexts in
            contexts.values.filter { name == nil || $0.app.rawValue == name }.sorted { $0.app < $1.app }
        }
        opened.apps.withLock { $0 = targets.map(\.app) }
        let arriving = targets.filter { context in
            openSessions.withLock { open in
                defer { open[context.app, default: 0] += 1 }
                return open[context.app, default: 0] == 0
            }
        }
        for context in arriving {
            context.withCurrent { context.application.enterForeground() }
        }
    }

    /// A session ends: each app it opened goes to the background, unless another of its
    /// sessions is still open.
    private func closeSession(_ opened: OpenedApps) {
        let apps = opened.apps.withLock { $0 }
        let leaving = apps.filter { app in
            openSessions.withLock { open in
                let count = open[app, default: 0]
                open[app] = max(0, count - 1)
                return count == 1
            }
        }
        let targets = contexts.withLock { contexts in leaving.compactMap { contexts[$0] } }
        for context in targets {
            context.withCurrent { context.application.enterBackground() }
        }
    }

    /// App work that takes `seconds` of virtual time ("this fetch takes 12 s"): sleeps on
    /// ``swiftClock``, so the simulation advances and an expiration can interrupt it
    /// (cancelling the sleep with `CancellationError`).
    ///
    /// - Throws: ``SimulationError`` for a duration that is no number of seconds to sleep
    ///   (NaN, infinite, negative, or beyond ``maximumWorkSeconds``: Swift's `Duration`
    ///   would stop the program); `CancellationError` when interrupted.
    public func work(for seconds: TimeInterval) async throws {
        guard seconds.isFinite, (0...Self.maximumWorkSeconds).contains(seconds) else {
            log(.error, app: BGAppContext.current?.app, "work(for: \(seconds)): app work takes 0 to \(Int(Self.maximumWorkSeconds)) seconds; none was done")
            throw SimulationError("work(for: \(seconds)): app work takes 0 to \(Int(Self.maximumWorkSeconds)) seconds")
        }
        try await swiftClock.sleep(for: .seconds(seconds))
    }

    /// The longest app work ``work(for:)`` takes: about 31,700 years, within what Swift's
    /// `Duration` holds.
    public static let maximumWorkSeconds: TimeInterval = 1e12

    // MARK: Scripting

    /// Changes the device conditions at `instant` (now when `nil`).
    public func setConditions(_ conditions: Conditions, at instant: Date? = nil) {
        guard let instant, instant > now else {
            driver.conditionsChanged(conditions)
            return
        }
        _ = clock.schedule(at: instant) { [driver] in driver.conditionsChanged(conditions) }
    }

    /// Runs `action` at `instant` in virtual time, bound to the app context that was current
    /// when it was scheduled, counted as app work. For simulated I/O in app code: "this
    /// response arrives in 4 s".
    public func schedule(at instant: Date, _ action: @escaping @Sendable () -> Void) {
        let context = BGAppContext.current
        _ = clock.schedule(at: instant) {
            if let context { context.withCurrent(action) } else { action() }
        }
    }

    /// ``schedule(at:_:)`` after `delay` seconds. A delay that is not a finite number
    /// schedules nothing and is logged as an error (as ``run(for:)`` refuses one).
    public func schedule(after delay: TimeInterval, _ action: @escaping @Sendable () -> Void) {
        guard delay.isFinite else {
            log(.error, app: BGAppContext.current?.app, "schedule(after: \(delay)): a delay must be a finite number of seconds; nothing is scheduled")
            return
        }
        schedule(at: now.addingTimeInterval(delay), action)
    }

    // MARK: Running

    /// How long (wall clock) the device waits for app work to return or park before it
    /// reports the work as stuck and goes on without it.
    public let stuckWorkLimit: Duration

    /// Advances virtual time to `end`, firing everything due on the way in order.
    ///
    /// An `end` that is no instant the engine can keep time in (NaN, or after
    /// `Date.distantFuture`, +infinity included: `run(for: .infinity)`) plays nothing and is
    /// reported in ``log`` as an error naming it, as is any run after ``shutDown()``; an
    /// `end` before now (-infinity included) lets what is due now happen.
    public func run(until end: Date) async {
        // Shut down: the driver let go of the apps (``shutDown()``).
        if driver.hasDetachedAllApps {
            log(.error, app: nil, "run(until:): the simulated device was shut down; nothing is played")
            return
        }
        // NaN first: Date's `<=` is `!(rhs < lhs)`, true for a NaN date, which must be
        // refused, not settled on (the clock would become NaN).
        if end.timeIntervalSinceReferenceDate.isNaN || end > now, let problem = DateText.rangeProblem(end) {
            log(.error, app: nil, "run(until:) cannot run the simulated device to \(problem) (virtual time \(now)); nothing is played")
            return
        }
        await settleAppWork()
        while let action = clock.popNext(notAfter: end) {
            action()
            await settleAppWork()
        }
        clock.advance(to: end)
    }

    /// Waits for app work to return or park on ``swiftClock``. Work that blocks a thread
    /// (a busy loop, a semaphore, `sleep`) would stop virtual time for good; after
    /// ``stuckWorkLimit`` it is reported and the simulation goes on without it.
    private func settleAppWork() async {
        guard await driver.activity.waitUntilIdle(timeout: stuckWorkLimit) == false else { return }
        log(.error, app: nil, "app work neither returned nor parked on the simulated clock within \(stuckWorkLimit) of wall time (virtual time \(now)); the simulation goes on without it and its trace may vary. Sleep on SimulatedDevice.swiftClock instead of blocking a thread.")
    }

    /// Advances virtual time by `duration` seconds (see ``run(until:)`` for what cannot be
    /// played: a NaN or infinite duration, or one past `Date.distantFuture`).
    public func run(for duration: TimeInterval) async {
        guard duration.isFinite else {
            log(.error, app: nil, "run(for: \(duration)): a duration must be a finite number of seconds; nothing is played")
            return
        }
        await run(until: now.addingTimeInterval(duration))
    }

    /// Lets everything due now happen, without advancing time.
    public func settle() async {
        await run(until: now)
    }

    // MARK: Queries

    /// The finished runs, optionally of one task identifier, in the order they ended.
    public func runs(of identifier: String? = nil) -> [RunRecord] {
        trace.compactMap { event in
            guard case .finished(let record) = event, identifier == nil || record.identifier == identifier else { return nil }
            return record
        }
    }
}

/// The trace events a simulated device recorded.
final class TraceBuffer: Sendable {
    private let events_ = Mutex<[SchedulerTraceEvent]>([])
    func append(_ event: SchedulerTraceEvent) { events_.withLock { $0.append(event) } }
    var events: [SchedulerTraceEvent] { events_.withLock { $0 } }
}

/// A simulated device that cannot be made as asked (a start that is no finite instant in
/// Foundation's range); the description names the culprit.
public struct SimulatedDeviceError: Error, CustomStringConvertible, Sendable {
    /// What was wrong, in a sentence.
    public let description: String

    init(_ description: String) { self.description = description }
}
