import BackgroundTasks
import DaemonProtocol
import DeviceConditions
import Foundation
import SchedulerCore
import SchedulerStore
import Synchronization
import UserNotifications

/// What bgtaskd does with requests, independent of sockets: the installed apps and their
/// supervisors, the driver that hosts the one engine, and the answer to every app and
/// administrator request (docs/daemon.md). ``Daemon`` puts it behind the socket.
public final class DaemonService: Sendable {
    /// The engine host (the daemon's store, its conditions, its clock).
    public let driver: SchedulerDriver
    /// The daemon's store.
    public let store: SchedulerStore
    /// Where messages go.
    public let log: BGDiagnosticLog
    private let spawner: any AppSpawner
    private let timing: AppSupervision.Timing
    private let launchEnvironment: LaunchEnvironment
    /// Where the installed apps keep their local notifications (their default state
    /// directories under the environment of their launches), for delivering those they do not.
    private let notificationLocations: AwayNotifications.DefaultLocations?
    private let status: StatusFacts
    private let apps = Mutex<[AppID: InstalledAppEntry]>([:])
    private let pushes: PushLimiter
    private let measurement: RunMeasurement?
    /// The device's readers with their sources, for `bgtask conditions` (`nil` in tests
    /// that script the conditions: the engine's conditions are answered then).
    private let conditionsReader: LinuxConditionsReader?
    /// The conditions monitor's watcher, which reads the device on demand as the engine's
    /// one writer of conditions (``watchConditions(through:)``).
    private let conditionsWatcher = Mutex<ConditionsWatcher?>(nil)
    /// Where the policy configuration in force came from ("defaults", or its file).
    private let policySource: Mutex<String>
    /// The clock of the supervisors' timers (launch timeouts, suspension, idle end): the
    /// driver's wall clock, on a queue of their own. A suspension waits for the cgroup
    /// freezer (milliseconds, up to tens), and on the driver's timer queue it held back the
    /// engine's next expiration by as much (bgtask-bench k: 30 ms late behind a freeze).
    private let supervisionClock: any DriverClock
    /// The clock of the runs' budget deadlines (the supervisors push each expiration at its
    /// deadline): a queue neither the engine's store writes nor a freeze can hold up.
    private let deadlineClock: any DriverClock

    private let committer: GroupCommitter

    /// The socket beside which the installed apps are listed (``InstalledAppsList``), or
    /// `nil` for none (a socket with no path in the file system, tests without a daemon).
    private let installedAppsListSocket: String?
    /// Held while the list is written: installs and uninstalls on two connections write it
    /// one after the other, each from the apps' table as it is then.
    private let installedAppsListWrites = Mutex<Void>(())

    /// One installed app and its supervisor.
    struct InstalledAppEntry: Sendable {
        var installed: InstalledApp
        let supervisor: AppSupervisor
    }

    /// The environment of a background launch: a clean one (a fixed `PATH`, the user's
    /// `HOME`, `USER`, `LOGNAME`, `LANG`, `LC_ALL`, `XDG_RUNTIME_DIR`, `XDG_STATE_HOME`,
    /// `TZ`, `BGTASK_LOG` and `BGTASK_NOTIFICATIONS` when the daemon has them) plus the
    /// `BGTASK_*` variables that link the app to the daemon. `XDG_STATE_HOME` so that a
    /// background launch finds what the user's launches keep in the app's state directory
    /// (the answer to the notification request).
    public struct LaunchEnvironment: Sendable {
        /// The daemon's socket.
        public var socketPath: String
        /// The variables passed on from the daemon's own environment.
        public var inherited: [String: String]

        /// Takes the passed-on variables from `environment`.
        public init(socketPath: String, environment: [String: String]) {
            self.socketPath = socketPath
            let kept = ["HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "XDG_RUNTIME_DIR", "XDG_STATE_HOME", "TZ", "BGTASK_LOG", "BGTASK_NOTIFICATIONS"]
            // A variable Foundation read lossily (not valid UTF-8: EnvironmentText) would reach
            // the app as valid UTF-8 naming another directory, which the app could no longer
            // tell: it is not passed on (the app then says which is missing).
            inherited = environment.filter { kept.contains($0.key) && EnvironmentText.problem(variable: $0.key, value: $0.value) == nil }
        }

        /// The whole environment for `app`.
        public func environment(for app: InstalledApp) -> [String: String] {
            var environment = inherited
            environment["PATH"] = "/usr/local/bin:/usr/bin:/bin"
            environment["BGTASK_DAEMON_SOCKET"] = socketPath
            environment["BGTASK_APP"] = app.app.rawValue
            environment["BGTASK_MANIFEST"] = app.manifestPath
            environment["BGTASK_LAUNCH"] = "background"
            // The app's own children inherit all of these; the parent's pid tells the
            // launched app from them (EmbeddedScheduler.isDaemonLaunch).
            environment["BGTASK_DAEMON_PID"] = String(getpid())
            return environment
        }
    }

    /// What `bgtask status` reports about the daemon itself.
    public struct StatusFacts: Sendable {
        /// The daemon's pid.
        public var pid: Int32
        /// Its socket.
        public var socketPath: String
        /// Its state directory.
        public var stateDirectory: String
        /// When it started.
        public var startedAt: Date
        /// Where app processes go (a cgroup path, or "process groups").
        public var containment: String

        /// Creates the facts.
        public init(pid: Int32, socketPath: String, stateDirectory: String, startedAt: Date, containment: String) {
            self.pid = pid
            self.socketPath = socketPath
            self.stateDirectory = stateDirectory
            self.startedAt = startedAt
            self.containment = containment
        }
    }

    /// Creates the service over `driver` (whose store is `store`) and loads the installed apps.
    public init(
        driver: SchedulerDriver,
        store: SchedulerStore,
        spawner: any AppSpawner,
        timing: AppSupervision.Timing = .init(),
        launchEnvironment: LaunchEnvironment,
        status: StatusFacts,
        pushLimit: PushLimiter.Limit = .init(),
        measurement: RunMeasurement? = nil,
        conditionsReader: LinuxConditionsReader? = nil,
        policySource: String = "defaults",
        installedAppsListSocket: String? = nil,
        log: BGDiagnosticLog
    ) {
        self.installedAppsListSocket = installedAppsListSocket
        self.conditionsReader = conditionsReader
        self.policySource = Mutex(policySource)
        let realTime = driver.clock is DispatchDriverClock
        self.supervisionClock = realTime ? DispatchDriverClock(queue: DispatchQueue(label: "bgtaskd.supervision")) : driver.clock
        self.deadlineClock = realTime ? DispatchDriverClock(queue: DispatchQueue(label: "bgtaskd.deadlines")) : driver.clock
        self.measurement = measurement
        self.driver = driver
        self.store = store
        self.spawner = spawner
        var timing = timing
        // The supervision ends a run that overran its grace at the instant the grace ends,
        // the engine's grace, without waiting for the engine's durable record of it.
        if timing.terminationGrace == nil { timing.terminationGrace = driver.configuration.expirationGrace }
        self.timing = timing
        self.launchEnvironment = launchEnvironment
        notificationLocations = try? AwayNotifications.DefaultLocations(environment: launchEnvironment.inherited)
        self.status = status
        self.log = log
        self.pushes = PushLimiter(limit: pushLimit)
        self.committer = GroupCommitter(driver: driver)
        loadInstalledApps()
        publishInstalledApps()
        // Every change of the device the engine sees reaches the connected apps, whose
        // processes post iOS's change notifications from it (AppPush.deviceConditions). In
        // order, off the conditions monitor's queue (a supervisor may hold its lock for a
        // freeze, up to a second): a serial queue of their own; inline on a virtual clock.
        let fanOut = realTime ? DispatchQueue(label: "bgtaskd.device-changes") : nil
        driver.observe { [weak self] event in
            guard case .conditionsChanged = event, let self else { return }
            // The driver's conditions when the block runs, not the event's: a change queued
            // behind a freeze must not follow a newer reading an app took at its launch
            // (AppSupervisor.finishedLaunching), and a burst folds into its latest.
            let tellEveryApp: @Sendable () -> Void = { [weak self] in
                guard let self else { return }
                let conditions = self.driver.conditions
                for supervisor in self.apps.withLock({ $0.values.map(\.supervisor) }) { supervisor.deviceChanged(conditions) }
            }
            if let fanOut { fanOut.async(execute: tellEveryApp) } else { tellEveryApp() }
        }
    }

    /// `bgtask conditions` reads the device through `watcher` (the monitor's, which feeds
    /// the driver), so its reading becomes the engine's; without one it only reads.
    public func watchConditions(through watcher: ConditionsWatcher?) {
        conditionsWatcher.withLock { $0 = watcher }
    }

    /// Replaces the policy configuration in force (the engine judges everything again with
    /// it), saying where it came from.
    public func setPolicyConfiguration(_ configuration: PolicyConfiguration, source: String) {
        driver.setPolicyConfiguration(configuration)
        policySource.withLock { $0 = source }
    }

    private func loadInstalledApps() {
        let listed: (apps: [InstalledApp], unreadable: [UnreadableAppRow])
        do {
            listed = try store.installedApps()
        } catch {
            log(.error, app: nil, "could not read the installed apps: \(error)")
            return
        }
        for row in listed.unreadable {
            log(.error, app: nil, "an installed app could not be read (\(row)); reinstall it with bgtask install")
        }
        // One query for every app's switch and policy state, one lock hold for the engine.
        // Switches that cannot be read are taken as off: launching an app the user switched
        // off is the worse mistake, and the log says how to turn them back on.
        let switches: [AppID: String]?
        do {
            switches = try store.appSettings(named: AppSettingName.backgroundRefresh)
        } catch {
            switches = nil
            log(.error, app: nil, "could not read the apps' Background App Refresh switches: \(error); every app's background refresh is held until bgtaskd restarts with a readable store or `bgtask settings APP background-refresh on` sets it")
        }
        // One listing of the apps' state directories instead of a look at each app's file:
        // with 10,000 apps installed, that look cost a fifth of the start-up.
        let withPendingFiles = notificationLocations?.appsWithPendingFiles()
        let installs = listed.apps.map { app in
            (makeSupervisor(for: app, pendingFileMayExist: withPendingFiles.map { $0.contains(app.app.rawValue) } ?? true).0,
             registration(of: app, refresh: switches.map { refreshSwitch($0[app.app], of: app.app) } ?? false))
        }
        // The driver reads their saved policy states and last launches (one query each) and
        // registers every app before it judges any.
        // A request an installed manifest does not allow (a daemon stopped between a
        // reinstall's record and its removal) is removed here too.
        for removed in driver.install(installs.map { ($0.1, $0.0 as any RemoteTaskHost) }, removingWhatIsNoLongerAllowed: true) {
            log(.info, app: removed.key.app, "removed the pending request '\(removed.key.identifier)' of \(removed.key.app): \(removed.reason)")
        }
    }

    /// Writes the list of installed apps beside the socket (``InstalledAppsList``), for apps
    /// whose hello this daemon does not answer in time; a failure is logged (the apps then
    /// decide as if no list were there).
    private func publishInstalledApps() {
        guard let socket = installedAppsListSocket else { return }
        installedAppsListWrites.withLock { _ in
            let installed = apps.withLock { Array($0.keys) }
            do {
                try InstalledAppsList.write(installed, socketPath: socket)
            } catch {
                log(.warning, app: nil, "could not list the installed apps in \(InstalledAppsList.path(forSocket: socket)): \(error); an installed app that finds bgtaskd unresponsive will use a scheduler of its own")
            }
        }
    }

    /// Whether the Background App Refresh switch `value` kept for `app` is on: no value is
    /// the default, on; `on` and `off` are what `bgtask settings` writes; anything else (a row
    /// another program wrote) is taken as off, as a switch that cannot be read is, and said.
    private func refreshSwitch(_ value: String?, of app: AppID) -> Bool {
        switch value {
        case nil, "on": return true
        case "off": return false
        case let other?:
            log(.error, app: app, "the Background App Refresh switch holds \"\(StandardStream.terminalSafe(other.excerpt(scalars: 40)))\", neither on nor off: taken as off until `bgtask settings \(app) background-refresh on|off` sets it")
            return false
        }
    }

    /// What the engine knows of `app`: its manifest with the system's identifiers.
    private func registration(of app: InstalledApp, refresh: Bool) -> AppRegistration {
        AppRegistration(app: app.app, manifest: app.manifest.permittingSystemIdentifiers(for: app.app), backgroundRefreshEnabled: refresh)
    }

    /// Makes (or updates) the supervisor of `app` and installs it in the driver. Returns the
    /// supervisor when a reinstall replaced the executable or arguments of a process it holds
    /// (``AppSupervisor/update(_:)``).
    private func register(_ app: InstalledApp) -> (replaced: AppSupervisor?, removed: [SchedulerDriver.RemovedRequest]) {
        let (supervisor, replacedLive) = makeSupervisor(for: app)
        let refresh: Bool
        do {
            refresh = refreshSwitch(try store.appSetting(app: app.app, name: AppSettingName.backgroundRefresh), of: app.app)
        } catch {
            // As at start-up: an unknown switch holds the app's refreshes (see loadInstalledApps).
            refresh = false
            log(.error, app: app.app, "could not read the Background App Refresh switch: \(error); its background refresh is held until `bgtask settings \(app.app) background-refresh on` sets it")
        }
        let removed = driver.install(registration(of: app, refresh: refresh), host: supervisor, removingWhatIsNoLongerAllowed: true)
        return (replacedLive ? supervisor : nil, removed)
    }

    /// The supervisor of `app`: made (and attached to the driver) on first use, updated
    /// with the app's launch target on a reinstall; with whether that update replaced the
    /// executable or arguments of a process the supervisor holds.
    private func makeSupervisor(for app: InstalledApp, pendingFileMayExist: Bool = true) -> (AppSupervisor, replacedLive: Bool) {
        let target = LaunchTarget(app: app.app, executable: app.executable, arguments: app.launchArguments, environment: launchEnvironment.environment(for: app))
        var made = false
        let result = apps.withLock { apps -> (AppSupervisor, replacedLive: Bool) in
            if let existing = apps[app.app] {
                let replacedLive = existing.supervisor.update(target)
                apps[app.app]?.installed = app
                return (existing.supervisor, replacedLive)
            }
            made = true
            let store = self.store
            let log = self.log
            let clock = driver.clock
            let supervisor = AppSupervisor(
                target: target, timing: timing, clock: supervisionClock, deadlineClock: deadlineClock, spawner: spawner, log: log,
                measurement: measurement,
                processChanged: { id, process in
                    // Recorded so that a daemon restarted after a crash ends the orphan
                    // (docs/daemon.md, "Crash safety").
                    do {
                        if let process {
                            try store.recordAppProcess(AppProcessRecord(
                                app: id, pid: process.pid, processGroup: process.pid,
                                startTime: process.startTime, cgroupPath: process.cgroupPath,
                                startedAt: clock.now()))
                        } else {
                            _ = try store.removeAppProcess(app: id)
                        }
                    } catch {
                        log(.error, app: id, "could not record the app's process in the store: \(error)")
                    }
                })
            supervisor.attach(to: driver)
            apps[app.app] = InstalledAppEntry(installed: app, supervisor: supervisor)
            return (supervisor, false)
        }
        // The app's local notifications, delivered while it is away (docs/daemon.md,
        // "Notifications while the app is not running"): in the state directory its
        // launches get (the file is read outside the apps' lock).
        if made, let notifications = notificationLocations?.of(app.app) {
            result.0.deliverNotifications(notifications, armNow: pendingFileMayExist)
        }
        return result
    }

    /// How many apps are installed (without sorting them all).
    public var installedAppCount: Int { apps.withLock { $0.count } }

    /// Takes, one after the other, the locks every request needs (the engine's, the apps'
    /// table): it returns only while neither is stuck (the systemd watchdog pings after it).
    public func livenessProbe() {
        _ = driver.pendingCount
        _ = installedAppCount
    }

    /// The installed apps.
    public var installedApps: [InstalledApp] { apps.withLock { $0.values.map(\.installed).sorted { $0.app < $1.app } } }

    /// The supervisor of `app`, when installed.
    public func supervisor(of app: AppID) -> AppSupervisor? { apps.withLock { $0[app]?.supervisor } }

    // MARK: Installing

    /// What an install did: the app as recorded, and the pending requests a reinstall
    /// removed because the new manifest no longer allows them (identifier and why).
    public struct InstallReport: Sendable {
        /// The app as installed.
        public var app: InstalledApp
        /// The requests removed, in submission order, each with the reason.
        public var removedRequests: [SchedulerDriver.RemovedRequest]
    }

    /// Validates the manifest at `path`, records the app, and installs it in the engine.
    /// On a reinstall, pending requests the new manifest no longer allows (an identifier taken
    /// out of `BGTaskSchedulerPermittedIdentifiers`, a background mode taken out of
    /// `UIBackgroundModes`) are removed first, as the app could not submit them now: left, they
    /// would launch the app for tasks it may no longer have.
    public func install(manifestPath path: String) throws(DaemonFailure) -> InstalledApp {
        try installReporting(manifestPath: path).app
    }

    /// Whether `path` (absolute), as given or with its symbolic links resolved, is a file of
    /// the daemon's own process: `/proc/self`, `/proc/thread-self`, `/proc/<its pid>` or one of
    /// its threads' ids, and
    /// `/dev/fd`, `/dev/stdin`, `/dev/stdout`, `/dev/stderr` (links into it). Read by the
    /// daemon, such a path is its own descriptors, environment or command line, never the
    /// caller's (an outside probe's raw client installed `/proc/self/environ`, and the
    /// refusal quoted the daemon's environment back).
    static func namesTheDaemonsOwnProcess(_ path: String) -> Bool {
        func own(_ path: String) -> Bool {
            var components: [Substring] = []
            for component in path.split(separator: "/") where component != "." {
                if component == ".." { _ = components.popLast() } else { components.append(component) }
            }
            guard components.count >= 2 else { return false }
            switch components[0] {
            case "proc":
                // Itself, or one of its threads (`/proc/<tid>` names the thread's process too).
                return ["self", "thread-self", Substring(String(getpid()))].contains(components[1])
                    || (components[1].allSatisfy(\.isNumber) && FileManager.default.fileExists(atPath: "/proc/self/task/\(components[1])"))
            case "dev": return ["fd", "stdin", "stdout", "stderr"].contains(components[1])
            default: return false
            }
        }
        return own(path) || own(URL(fileURLWithPath: path).resolvingSymlinksInPath().path)
    }

    /// ``install(manifestPath:)``, with what it removed.
    public func installReporting(manifestPath path: String) throws(DaemonFailure) -> InstallReport {
        // The daemon's working directory is not the caller's: a relative path would name
        // another file (bgtask sends an absolute one).
        // A path no file system takes is refused before anything echoes it whole.
        guard path.utf8.count <= Int(PATH_MAX) else {
            throw DaemonFailure(.invalid, "install: the manifest's path is \(path.utf8.count) bytes, more than the \(PATH_MAX) a path may have ('\(path.excerpt(scalars: 80))')")
        }
        guard path.hasPrefix("/") else {
            throw DaemonFailure(.invalid, "install needs the manifest's absolute path, got '\(path.excerpt(scalars: 200))'")
        }
        if Self.namesTheDaemonsOwnProcess(path) {
            throw DaemonFailure(.invalid, "install: '\(path.excerpt(scalars: 200))' names bgtaskd's own process (/proc/self, /dev/fd, /dev/stdin...), not a file of the caller's; give the manifest's own path (bgtask resolves such paths before it sends them)")
        }
        let app: InstalledApp
        do {
            app = try BGAppInstallation.validate(manifestAt: URL(fileURLWithPath: path), now: driver.clock.now())
        } catch {
            throw DaemonFailure(.invalid, "\(error)")
        }
        do {
            try store.installApp(app)
        } catch {
            throw DaemonFailure(.failed, "could not record \(app.app) in the store: \(error)")
        }
        // Registering removes the pending requests the new manifest no longer allows, in the
        // same hold of the driver's lock (SchedulerDriver.install).
        let (replaced, removed) = register(app)
        for request in removed {
            log(.info, app: app.app, "removed the pending request '\(request.key.identifier)' of \(app.app): \(request.reason) (reinstalled from \(path))")
        }
        publishInstalledApps()
        log(.info, app: app.app, "installed \(app.app) (\(app.executable))")
        if let supervisor = replaced {
            // The process of the old executable is not the app any more: it would keep the
            // app's runs as warm launches for as long as they come. It is told to quit, as on
            // an uninstall, and the next run cold-launches the new executable.
            let reason = "the app was reinstalled with another executable or arguments (\(app.executable))"
            log(.info, app: app.app, "\(app.app)'s running process ends: \(reason)")
            // The user's doing, as a force-quit: its runs hear their expiration first, and
            // their end with the process is no strike against the new install.
            driver.appEndedByTheUser(app.app, reason: reason)
            driver.afterHostCalls(of: app.app) { supervisor.quit(reason: reason) }
        }
        return InstallReport(app: app, removedRequests: removed)
    }

    /// Ends the app's process, removes the app, its requests, settings and checkpoints in
    /// one transaction (its run history stays for the energy log), and forgets it.
    public func uninstall(_ app: AppID) throws(DaemonFailure) -> UninstallReport {
        guard let entry = apps.withLock({ $0[app] }) else {
            throw DaemonFailure(.notInstalled, "\(app) is not installed (bgtask apps lists what is)")
        }
        var report: UninstallReport?
        do {
            // The daemon's store is its own SQLite file (the driver holds the same object).
            let store = self.store
            try driver.uninstall(app) { _ in report = try store.uninstallApp(app) }
        } catch {
            throw DaemonFailure(.failed, "could not uninstall \(app): \(error)")
        }
        let supervisor = entry.supervisor
        supervisor.stopNotifications()
        driver.afterHostCalls(of: app) { supervisor.quit(reason: "the app was uninstalled") }
        _ = apps.withLock { $0.removeValue(forKey: app) }
        publishInstalledApps()
        pushes.reset(app)
        log(.info, app: app, "uninstalled \(app)")
        return report ?? UninstallReport(app: app, wasInstalled: true, removedRequests: [], removedSettings: [], removedCheckpoints: [], removedProcess: nil, removedProcessRow: false, keptRuns: 0)
    }

    // MARK: Connections

    /// Which installed app a connecting process is: the one its hello names, when the
    /// process runs that app's installed executable (`/proc/<pid>/exe`).
    public func identify(hello: Hello, pid: Int32) -> Result<AppID, DaemonFailure> {
        guard let claimed = hello.app else {
            return .failure(DaemonFailure(.invalid, "an app connection must name its app"))
        }
        if let problem = AppID.problem(with: claimed.rawValue) {
            return .failure(DaemonFailure(.invalid, "hello: \(problem)"))
        }
        guard let entry = apps.withLock({ $0[claimed] }) else {
            return .failure(DaemonFailure(.notInstalled, "\(claimed) is not installed with bgtaskd"))
        }
        do {
            _ = try ExecutableIdentity.check(pid: pid, installed: entry.installed)
            return .success(claimed)
        } catch {
            return .failure(DaemonFailure(.notPermitted, "refused: \(error)"))
        }
    }

    // MARK: App requests

    /// Answers a request of `app`'s own connection (it may read and change only its own
    /// requests and runs). `reply` is called once: at once, or for a submission once its
    /// group commit is on disk (one commit for every submission waiting meanwhile), from
    /// whichever thread commits.
    public func handle(_ request: AppRequest, from app: AppID, reply: @escaping @Sendable (Reply) -> Void) {
        // A connection that outlived its app's uninstall changes nothing any more.
        guard isInstalled(app) else { return reply(notInstalled(app)) }
        guard case .submit(var pending) = request else { return reply(answer(request, from: app)) }
        guard pending.app == app else {
            return reply(.failed(DaemonFailure(.notPermitted, "\(app) may submit only its own requests, not \(pending.app)'s")))
        }
        if let refusal = systemOnlyIdentifierRefusal(pending.identifier, of: app) {
            return reply(.failed(DaemonFailure(.submitRejected, refusal.message, rejection: refusal.code)))
        }
        // What the daemon decides is not taken from the wire: when it accepted the request,
        // and whether it is a remote wake (only `bgtask push` makes those).
        pending.submittedAt = driver.clock.now()
        pending.remoteNotificationPayload = nil
        committer.submit(pending) { result in
            switch result {
            case .success: reply(.done(nil))
            case .failure(let error): reply(.failed(DaemonFailure(.submitRejected, error.message, rejection: error.code)))
            }
        }
    }

    /// The refusal of an identifier only the system schedules for `app` (its remote wake's),
    /// which its installed manifest does not list, when the app asks for it itself. Here and
    /// not in the engine: the engine's manifest permits it, for the system's own wakes.
    private func systemOnlyIdentifierRefusal(_ identifier: String, of app: AppID) -> SubmitRejection? {
        apps.withLock { $0[app]?.installed.manifest }?.systemOnlyIdentifierRefusal(identifier, of: app)
    }

    /// The refusal of a task identifier no request could have (empty, over 255 bytes, a
    /// control character), by the rule `bgtask` applies to its arguments: a client that
    /// skips `bgtask` (100,000 bytes sent by hand) gets the same answer, not a report
    /// echoing it.
    private func unusableIdentifier(_ identifier: String) -> Reply? {
        guard case .failure(let problem) = CommandLineValue.taskIdentifier(identifier, for: "identifier") else { return nil }
        return .failed(DaemonFailure(.invalid, problem.message))
    }

    /// The answer to an app request other than a submission.
    private func answer(_ request: AppRequest, from app: AppID) -> Reply {
        switch request {
        case .finishedLaunching:
            supervisor(of: app)?.finishedLaunching()
            return .done(nil)
        case .submit:
            // Never reached: handle(_:from:reply:) sends submissions to the group commit.
            return .failed(DaemonFailure(.failed, "a submission is answered by the group commit"))
        case .cancel(let identifier):
            // A delete the store refused is the app's to hear (its log is its developer's).
            if let problem = driver.cancel(RequestKey(app: app, identifier: identifier)) { return .failed(DaemonFailure(.failed, problem)) }
            return .done(nil)
        case .cancelAll:
            if let problem = driver.cancelAll(of: app) { return .failed(DaemonFailure(.failed, problem)) }
            return .done(nil)
        case .pending:
            return .pending(driver.pendingRequests(of: app))
        case .taskCompleted(let run, let success):
            return ownRun(run, of: app) {
                // The supervisor first: its own timer must not end the run at the grace's end
                // while the engine is recording the completion.
                supervisor(of: app)?.completing(run)
                driver.taskCompleted(run, success: success)
            }
        case .expirationDelivered(let run, let handlerWasSet):
            return ownRun(run, of: app) { driver.expirationDelivered(run, handlerWasSet: handlerWasSet) }
        case .progressSampled(let run, let completed):
            return ownRun(run, of: app) { driver.progressSampled(run, completedUnitCount: completed) }
        case .launchFailed(let run, let reason):
            return ownRun(run, of: app) { driver.launchFailed(run, reason: Self.recordedReason(reason)) }
        case .simulateLaunch(let identifier):
            return engineCall { () throws(EngineError) in try driver.simulateLaunch(RequestKey(app: app, identifier: identifier)) }
        case .simulateExpiration(let identifier):
            return engineCall { () throws(EngineError) in try driver.simulateExpiration(RequestKey(app: app, identifier: identifier)) }
        case .setBackgroundRefresh(let enabled):
            driver.setBackgroundRefresh(enabled, for: app)
            return .flag(driver.backgroundRefreshEnabled(for: app))
        case .backgroundRefreshStatus:
            return .flag(driver.backgroundRefreshEnabled(for: app))
        case .lifecycle(let transition):
            lifecycle(transition, of: app)
            return .done(nil)
        case .assertionsHeld(let held):
            supervisor(of: app)?.assertionsChanged(held: held)
            return .done(nil)
        case .setRetryPolicy(let identifier, let terms):
            guard apps.withLock({ $0[app]?.installed.manifest })?.permittingSystemIdentifiers(for: app).permits(identifier: identifier, allowWildcard: true) == true else {
                return .failed(DaemonFailure(.notPermitted, "\(identifier) is not in the BGTaskSchedulerPermittedIdentifiers of \(app)'s installed manifest"))
            }
            // A retry policy would file the remote wake again after a failed run: a wake
            // outside the push limit, as a submission of it would be.
            if let refusal = systemOnlyIdentifierRefusal(identifier, of: app) {
                return .failed(DaemonFailure(.notPermitted, refusal.message))
            }
            guard let terms else {
                driver.setRetryPolicy(nil, for: RequestKey(app: app, identifier: identifier))
                return .done(nil)
            }
            switch terms.policy() {
            case .success(let policy):
                driver.setRetryPolicy(policy, for: RequestKey(app: app, identifier: identifier))
                return .done(nil)
            case .failure(let failure):
                return .failed(failure)
            }
        case .checkpointGet(let key):
            if let problem = CheckpointRules.keyProblem(key) { return .failed(DaemonFailure(.invalid, problem)) }
            return storeCall { .data(try store.checkpoint(app: app, key: key)) }
        case .checkpointSet(let key, let value):
            return storeCall {
                // One app cannot fill the store every app's requests live in.
                if let problem = try store.saveCheckpoint(value, app: app, key: key, at: driver.clock.now()) {
                    return .failed(DaemonFailure(.invalid, problem))
                }
                return .done(nil)
            }
        case .checkpointRemove(let key):
            if let problem = CheckpointRules.keyProblem(key) { return .failed(DaemonFailure(.invalid, problem)) }
            return storeCall {
                try store.removeCheckpoint(app: app, key: key)
                return .done(nil)
            }
        case .checkpointKeys:
            return storeCall { .names(try store.checkpointKeys(app: app)) }
        }
    }

    /// What an app says of a run it could not start, as the run log keeps it: at most
    /// 1,000 Unicode scalars (then `...`), control characters escaped (`bgtask log` and
    /// this log show it), so at most about 6 KB.
    public static func recordedReason(_ reason: String) -> String {
        StandardStream.terminalSafe(reason.excerpt(scalars: 1_000))
    }

    private func ownRun(_ run: RunID, of app: AppID, _ body: () -> Void) -> Reply {
        guard let owner = driver.app(ofRun: run) else {
            return .failed(DaemonFailure(.noRunningTask, "\(run) is not in progress"))
        }
        guard owner == app else {
            return .failed(DaemonFailure(.notPermitted, "\(run) belongs to \(owner), not \(app)"))
        }
        body()
        return .done(nil)
    }

    private func engineCall(_ body: () throws(EngineError) -> Void) -> Reply {
        do {
            try body()
            return .done(nil)
        } catch {
            let code: FailureCode = switch error.code {
            case .noPendingRequest: .noPendingRequest
            case .noRunningTask: .noRunningTask
            case .alreadyRunning: .alreadyRunning
            }
            return .failed(DaemonFailure(code, error.message))
        }
    }

    private func storeCall(_ body: () throws -> Reply) -> Reply {
        do {
            return try body()
        } catch {
            return .failed(DaemonFailure(.failed, "\(error)"))
        }
    }

    /// A lifecycle transition of `app`: its own report, or (`fromOutside`) the user's word
    /// through `bgtask`, which the app is told of.
    private func lifecycle(_ transition: AppTransition, of app: AppID, fromOutside: Bool = false) {
        switch transition {
        case .foreground:
            driver.appForegrounded(app)
            supervisor(of: app)?.opened(tellApp: fromOutside)
        case .background:
            supervisor(of: app)?.backgrounded(tellApp: fromOutside)
        case .forceQuit:
            driver.appForceQuit(app)
            // Its runs in progress hear their expiration before the quit (pushed in order),
            // as the user's doing: a run that then ends with the process (a process the user
            // started loses its connection with the SIGTERM) is no strike against the app.
            driver.appEndedByTheUser(app, reason: "the user force-quit the app")
            if let supervisor = supervisor(of: app) {
                driver.afterHostCalls(of: app) { supervisor.quit(reason: "the user force-quit the app") }
            }
        }
    }

    // MARK: Administrator requests

    /// Answers `bgtask`: `reply` is called once, at once, or for `run` and `push` once the
    /// launch they asked for reached the app's supervisor (on the thread that made that
    /// app's host calls), so that a spawn that failed at once (the executable cannot be
    /// run: ENOEXEC, EACCES, ENOENT) is the answer, naming the app, the executable and
    /// the cause, instead of a success (docs/protocol.md, "Messages").
    public func handle(_ request: AdminRequest, reply: @escaping @Sendable (Reply) -> Void) {
        var launched: LaunchAsked?
        let answer = answer(request, launched: &launched)
        guard let launched else { return reply(answer) }
        driver.afterHostCalls(of: launched.app) { [self] in
            guard let reason = supervisor(of: launched.app)?.spawnFailure(of: launched.run) else { return reply(answer) }
            // A wake that never reached the app is not one of its pushes (as a refused one).
            if let pushedAt = launched.pushedAt { pushes.forget(launched.app, at: pushedAt) }
            // Said only when it is so (not for continued processing, nor a request the checks refused).
            let pendingAgain = launched.identifier.map { identifier in driver.pendingRequests(of: launched.app).contains { $0.identifier == identifier } } ?? false
            let kept = pendingAgain ? ", its request kept for the next attempt" : ""
            reply(.failed(DaemonFailure(.failed, "\(launched.app) could not be started: \(reason); \(launched.run) was recorded as failed\(kept)")))
        }
    }

    /// A run `bgtask run` or `bgtask push` started, whose launch the answer waits for.
    private struct LaunchAsked {
        var run: RunID
        var app: AppID
        /// The identifier `bgtask run` named; `nil` for a push.
        var identifier: String?
        /// When the push was admitted (``PushLimiter``), for a push.
        var pushedAt: Date?
    }

    /// The answer to `request`; `launched` is set to the run a `run` or `push` started.
    private func answer(_ request: AdminRequest, launched: inout LaunchAsked?) -> Reply {
        // An app named from outside obeys the command line's rules (AppID.problem): a name
        // no app can have is refused as such, not looked up, and never echoed whole (a
        // megabyte of name came back as "not installed" in a reply at the frame limit).
        if let app = request.app, let problem = AppID.problem(with: app.rawValue) {
            return .failed(DaemonFailure(.invalid, "\(request.caseName): \(problem)"))
        }
        switch request {
        case .status:
            return statusReport()
        case .apps:
            return appsReport()
        case .install(let path):
            do {
                let report = try installReporting(manifestPath: path)
                let removed = report.removedRequests.map { "'\($0.key.identifier)' (\($0.reason))" }
                return .done("installed \(report.app.app): \(report.app.executable)"
                    + (removed.isEmpty ? "" : "; removed \(removed.count) pending request(s) the new manifest does not allow: \(removed.joined(separator: ", "))"))
            } catch {
                return .failed(error)
            }
        case .uninstall(let app):
            do {
                let report = try uninstall(app)
                return .done("uninstalled \(app): \(report.removedRequests.count) pending request(s) removed, \(report.keptRuns) run record(s) kept for the energy log")
            } catch {
                return .failed(error)
            }
        case .pending(let app):
            if let app {
                guard isInstalled(app) else { return notInstalled(app) }
                return .pending(driver.pendingRequests(of: app))
            }
            return .pending(driver.allPendingRequests.sorted { $0.key < $1.key })
        case .run(let app, let identifier):
            if let refusal = unusableIdentifier(identifier) { return refusal }
            guard isInstalled(app) else { return notInstalled(app) }
            var run: RunID?
            let reply = engineCall { () throws(EngineError) in run = try driver.simulateLaunch(RequestKey(app: app, identifier: identifier)) }
            launched = run.map { LaunchAsked(run: $0, app: app, identifier: identifier) }
            return reply
        case .expire(let app, let identifier):
            if let refusal = unusableIdentifier(identifier) { return refusal }
            guard isInstalled(app) else { return notInstalled(app) }
            return engineCall { () throws(EngineError) in try driver.simulateExpiration(RequestKey(app: app, identifier: identifier)) }
        case .why(let app, let identifier):
            if let refusal = unusableIdentifier(identifier) { return refusal }
            guard isInstalled(app) else { return notInstalled(app) }
            let key = RequestKey(app: app, identifier: identifier)
            let explanation = driver.explain(key)
            let running = driver.activeRuns.first { $0.request.key == key }
            let conditions = driver.conditions
            let place = supervisor(of: app)?.processID.map { "pid \($0), launched by bgtaskd (pid \(status.pid))" } ?? "bgtaskd (pid \(status.pid))"
            return .report(
                text: ExplanationReport.text(explanation, app: app, identifier: identifier, running: running, runningWhere: place, notes: [], conditions: conditions),
                json: ExplanationReport.json(explanation, app: app, identifier: identifier, running: running, notes: [], conditions: conditions, now: driver.clock.now()))
        case .conditions:
            guard let reader = conditionsReader else {
                let conditions = driver.conditions
                return .report(text: "\(conditions)\n", json: ReportJSON.text(conditions))
            }
            // Read now, with each value's source, as `bgtask conditions` prints it: the
            // daemon's own reading (its state directory's overrides included).
            // Through the conditions monitor when it runs: what the user is shown is then
            // what the engine judges by from now on (a change the monitor's 30-s look, taken
            // only while work depends on the device, has not met yet is taken now), from the
            // one writer of the engine's conditions.
            let reading = conditionsWatcher.withLock { $0 }?.readEverything() ?? reader.reading(now: driver.clock.now())
            return .report(text: reading.table(), json: (try? reading.jsonString()) ?? ReportJSON.text(driver.conditions))
        case .policy:
            let policy = driver.policyConfiguration
            return .report(text: policy.summary(source: "bgtaskd (pid \(status.pid)): \(policySource.withLock { $0 })"), json: policy.json() + "\n")
        case .setBackgroundRefresh(let app, let enabled):
            guard isInstalled(app) else { return notInstalled(app) }
            let problem = driver.setBackgroundRefreshSaying(enabled, for: app).problem
            let now = driver.backgroundRefreshEnabled(for: app)
            return now == enabled ? .done("Background App Refresh of \(app) is \(enabled ? "on" : "off")") : .failed(DaemonFailure(.failed, "the switch of \(app) could not be saved; it stays \(now ? "on" : "off")" + (problem.map { ": \($0)" } ?? " (see the daemon's log)")))
        case .open(let app):
            guard isInstalled(app) else { return notInstalled(app) }
            lifecycle(.foreground, of: app, fromOutside: true)
            return .done("\(app) opened: counted as a use; background launches are allowed again")
        case .background(let app):
            guard isInstalled(app) else { return notInstalled(app) }
            lifecycle(.background, of: app, fromOutside: true)
            return .done("\(app) moved to the background")
        case .forceQuit(let app):
            guard isInstalled(app) else { return notInstalled(app) }
            lifecycle(.forceQuit, of: app)
            return .done("\(app) force-quit: no background launches until it is opened again")
        case .push(let app, let payload):
            guard isInstalled(app) else { return notInstalled(app) }
            let (reply, run, pushedAt) = push(payload, to: app)
            launched = run.map { LaunchAsked(run: $0, app: app, pushedAt: pushedAt) }
            return reply
        case .respond(let app, let response):
            // Checked again here (bgtask checks before it sends): another client could send anything.
            if let problem = response.problem { return .failed(DaemonFailure(.invalid, problem)) }
            guard isInstalled(app) else { return notInstalled(app) }
            guard let supervisor = supervisor(of: app) else { return notInstalled(app) }
            switch supervisor.respond(response) {
            case .refused(let reason):
                return .failed(DaemonFailure(.failed, "no response sent to \(app): \(reason)"))
            case .sent:
                return .done("response to notification \"\(response.notification)\" sent to \(app); the app's log says what its notification center did with it")
            case .waitingForLaunch(let started):
                let how = started ? "\(app) was not running: started for it" : "\(app) is launching"
                return .done("\(how); the response to notification \"\(response.notification)\" follows its launch (the app's log says what its notification center did with it, the daemon's log if the launch failed)")
            }
        }
    }

    private func isInstalled(_ app: AppID) -> Bool { apps.withLock { $0[app] != nil } }

    private func notInstalled(_ app: AppID) -> Reply {
        .failed(DaemonFailure(.notInstalled, "\(app) is not installed (bgtask apps lists what is; bgtask install <manifest> installs one)"))
    }

    // MARK: Remote wake

    /// A remote wake: the analogue of a silent push. It becomes an app-refresh run of the
    /// app's system identifier `<app>.remote-notification`, launched now (docs/daemon.md,
    /// "Remote wake"), at most as often as ``PushLimiter`` allows.
    /// Returns the answer, and for a wake delivered its run and the instant it was admitted.
    private func push(_ payload: String?, to app: AppID) -> (Reply, RunID?, Date?) {
        if let payload, let problem = RemoteWake.payloadProblem(payload) {
            return (.failed(DaemonFailure(.invalid, problem)), nil, nil)
        }
        // An app without the background mode gets no remote wakes (iOS delivers silent pushes
        // only to apps with it): said as such, not as its identifier missing from the
        // manifest's list, which the system adds itself for an app with the mode.
        if let installed = apps.withLock({ $0[app]?.installed }), !installed.backgroundModes.contains(RemoteWake.backgroundMode) {
            return (.failed(DaemonFailure(.failed, "push to \(app) could not be delivered: its manifest (\(installed.manifestPath)) does not list \(RemoteWake.backgroundMode) in UIBackgroundModes, which an app needs to be woken by a push")), nil, nil)
        }
        let now = driver.clock.now()
        let identifier = RemoteWake.identifier(for: app)
        var request = PendingRequest(app: app, identifier: identifier, kind: .appRefresh, submittedAt: now)
        request.remoteNotificationPayload = payload ?? "{}"
        if let wait = pushes.admit(app, at: now) {
            // The instant itself, to the second: "in 1 h" may be 59 minutes or one.
            let next = Date(timeIntervalSinceReferenceDate: (now.timeIntervalSinceReferenceDate + wait).rounded(.up))
            let at = next.formatted(Date.ISO8601FormatStyle(timeZone: .gmt))
            return (.failed(DaemonFailure(.failed, "push to \(app) refused: at most \(pushes.limit.count) pushes per \(DurationText.spoken(pushes.limit.period)); the next is allowed at \(at) (in \(DurationText.spoken(wait)))")), nil, nil)
        }
        let run: RunID?
        do {
            run = try driver.wake(request)
        } catch {
            pushes.forget(app, at: now)
            return (.failed(DaemonFailure(.failed, "push to \(app) could not be delivered: \(error.message)")), nil, nil)
        }
        return (.done("woke \(app) for a remote notification"), run, now)
    }

    // MARK: Reports

    private func rows() -> [InstalledAppRow] {
        let entries = apps.withLock { $0.values.sorted { $0.installed.app < $1.installed.app } }
        let pending = driver.allPendingRequests
        let running = driver.activeRuns
        return entries.map { entry in
            let supervision = entry.supervisor.supervision
            return InstalledAppRow(
                app: entry.installed.app.rawValue,
                executable: entry.installed.executable,
                manifest: entry.installed.manifestPath,
                state: "\(supervision.phase)",
                pid: entry.supervisor.processID,
                pending: pending.filter { $0.app == entry.installed.app }.count,
                running: running.filter { $0.app == entry.installed.app }.count,
                backgroundRefresh: driver.backgroundRefreshEnabled(for: entry.installed.app))
        }
    }

    private func appsReport() -> Reply {
        let rows = rows()
        return .report(text: InstalledAppRow.text(rows), json: ReportJSON.text(rows))
    }

    private struct StatusReport: Encodable {
        var pid: Int32
        var socket: String
        var stateDirectory: String
        var startedAt: Date
        var containment: String
        var policy: String
        var apps: Int
        var pending: Int
        var running: Int
        var nextWake: Date?
        var conditions: Conditions
        /// Damaged stores set aside in the state directory (their rows are not in this one).
        var setAsideStores: [String]
    }

    private func statusReport() -> Reply {
        let report = StatusReport(
            pid: status.pid, socket: status.socketPath, stateDirectory: status.stateDirectory,
            startedAt: status.startedAt, containment: status.containment, policy: policySource.withLock { $0 },
            apps: apps.withLock { $0.count }, pending: driver.pendingCount,
            running: driver.activeRuns.count, nextWake: driver.nextWake, conditions: driver.conditions,
            setAsideStores: CorruptStoreQuarantine.setAside(besides: (status.stateDirectory as NSString).appendingPathComponent("scheduler.sqlite")))
        var text = """
            bgtaskd running (pid \(report.pid)) since \(report.startedAt)
              socket: \(report.socket)
              state: \(report.stateDirectory)
              app processes: \(report.containment)
              policy configuration: \(report.policy)
              apps installed: \(report.apps); requests pending: \(report.pending); runs in progress: \(report.running)
              next wake: \(report.nextWake.map { "\($0)" } ?? "none")
              device: \(report.conditions)

            """
        if let newest = report.setAsideStores.last {
            // A store started afresh after damage: its apps and requests are not lost, they
            // are in the file set aside, which nothing else would point at.
            text += "warning: \(CountText.counted(report.setAsideStores.count, "damaged store")) set aside in \(report.stateDirectory), the newest \(newest): "
                + "what it held is not in this store (docs/daemon.md, \"A damaged store\")\n"
        }
        return .report(text: text, json: ReportJSON.text(report))
    }

}
