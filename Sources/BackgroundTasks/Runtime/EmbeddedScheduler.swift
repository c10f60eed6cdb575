import Foundation
import PostgreSQLStore
import SchedulerStore
import DaemonProtocol
import DeviceConditions
import Synchronization
import SchedulerCore

/// The scheduler embedded in one long-running process, for when no daemon runs
/// (docs/system.md, "On Linux"): the real-time driver runs due tasks in-process and keeps state in SQLite
/// under `$XDG_STATE_HOME/bgtask/<app-id>/` (else `~/.local/state/bgtask/<app-id>/`).
///
/// Call ``bootstrap(_:)`` once, before the first use of `BGTaskScheduler.shared`, to say
/// which app this is and what it may do; without it the first use configures the
/// defaults: the manifest from `$BGTASK_MANIFEST`, else `Info.plist` or
/// `<executable>.bgtask.json` beside the executable.
public enum EmbeddedScheduler {
    /// How the process's own app is set up.
    public struct Configuration: Sendable {
        /// The app; default: the manifest's `CFBundleIdentifier`, else `local.<executable name>`.
        public var app: AppID?
        /// What the app may schedule, given in code; default: loaded from ``manifestURL``.
        public var manifest: AppManifest?
        /// Where the manifest file is; default: `$BGTASK_MANIFEST`, else beside the executable.
        public var manifestURL: URL?
        /// Where the state lives; default: `$XDG_STATE_HOME/bgtask/<app>/`.
        public var stateDirectory: URL?
        /// The engine's tunables; default: ``EmbeddedScheduler/defaultSchedulerConfiguration(environment:machineIDFile:)``,
        /// with the environment the scheduler starts with (``EmbeddedScheduler/makeContext(_:environment:)``).
        /// Read before one is set, it is the process's; so changing one value of it in
        /// code (`configuration.scheduler.maximumConcurrentRuns = 1`) sets the others to
        /// the process's defaults, as read then.
        public var scheduler: SchedulerConfiguration {
            get { chosenScheduler ?? EmbeddedScheduler.defaultSchedulerConfiguration() }
            set { chosenScheduler = newValue }
        }
        /// The tunables given in code, or `nil` for the defaults of the start's environment
        /// (so that building a configuration reads no environment: tests inject theirs).
        var chosenScheduler: SchedulerConfiguration?
        /// Background assertion tunables.
        public var assertions: AssertionConfiguration
        /// Reads the device; default: the Linux readers under `/sys` and `/proc`.
        public var conditions: (any ConditionsProvider)?
        /// Where warnings go; default: standard error.
        public var log: BGDiagnosticLog?
        /// Whether to schedule through bgtaskd (docs/daemon.md, "The app side").
        public var daemon: DaemonChoice
        /// The policies' configuration and profile (docs/policies.md, "Profiles"); default:
        /// `BGTASK_POLICY` (``policyConfiguration(from:)``) of the environment the scheduler
        /// starts with, else the phone's. Read before one is set, it is the process's (so
        /// changing one value of it in code starts from the process's `BGTASK_POLICY`).
        public var policy: PolicyConfiguration {
            get { chosenPolicy ?? EmbeddedScheduler.defaultPolicyConfiguration() }
            set { chosenPolicy = newValue }
        }
        /// The policy given in code, or `nil` for `BGTASK_POLICY` of the start's environment.
        var chosenPolicy: PolicyConfiguration?

        /// The engine's tunables: those given in code, else the defaults of `environment`.
        func scheduler(environment: [String: String]) -> SchedulerConfiguration {
            chosenScheduler ?? EmbeddedScheduler.defaultSchedulerConfiguration(environment: environment)
        }
        /// The policy: the one given in code, else `BGTASK_POLICY` of `environment`.
        func policy(environment: [String: String]) -> PolicyConfiguration {
            chosenPolicy ?? EmbeddedScheduler.defaultPolicyConfiguration(environment: environment)
        }
        /// Where the scheduler's state lives (docs/replicas.md): by default
        /// `BGTASK_STORE_URL` when it is set, else the SQLite file in the state directory.
        public var store: StoreChoice
        /// This process's name among the replicas of a shared store; default:
        /// `BGTASK_REPLICA`, else `<host name>:<pid>`.
        public var replica: String?
        /// How long a claim in a shared store holds without renewal; default:
        /// `BGTASK_STORE_LEASE` (seconds, 1 to 3600), else 30 s.
        public var storeLease: TimeInterval?

        /// Creates a configuration; every `nil` takes the default.
        public init(
            app: AppID? = nil,
            manifest: AppManifest? = nil,
            manifestURL: URL? = nil,
            stateDirectory: URL? = nil,
            scheduler: SchedulerConfiguration? = nil,
            assertions: AssertionConfiguration = .init(),
            conditions: (any ConditionsProvider)? = nil,
            log: BGDiagnosticLog? = nil,
            daemon: DaemonChoice = .automatic,
            policy: PolicyConfiguration? = nil,
            store: StoreChoice = .automatic,
            replica: String? = nil,
            storeLease: TimeInterval? = nil
        ) {
            self.daemon = daemon
            self.store = store
            self.replica = replica
            self.storeLease = storeLease
            self.chosenPolicy = policy
            self.app = app
            self.manifest = manifest
            self.manifestURL = manifestURL
            self.stateDirectory = stateDirectory
            self.chosenScheduler = scheduler
            self.assertions = assertions
            self.conditions = conditions
            self.log = log
        }
    }

    /// Apple's defaults, with `BACKGROUND_TASK_SIMULATE_EXPIRATION=YES` honoured (every
    /// run expires within 5 s of launch), `BGTASK_MANUAL_LAUNCH=1` (nothing scheduled
    /// launches until `simulateLaunch`; ``manualLaunchSwitch(_:)``), and the herd-spreading salt taken from the
    /// machine's identity (`machineIDFile`, hashed; 0 when unreadable or `nil`) so that
    /// machines seeing the same outage end spread their work differently.
    public static func defaultSchedulerConfiguration(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        machineIDFile: String? = "/etc/machine-id"
    ) -> SchedulerConfiguration {
        var configuration = SchedulerConfiguration()
        if environment["BACKGROUND_TASK_SIMULATE_EXPIRATION"]?.uppercased() == "YES" {
            configuration.simulatedExpirationAfter = 5
        }
        configuration.launchesOnlyWhenSimulated = manualLaunchSwitch(environment["BGTASK_MANUAL_LAUNCH"])
        if let machineIDFile, let machineID = MachineID.read(from: [machineIDFile]) {
            configuration.deviceSalt = StableHash.fnv1a(machineID.utf8)
        }
        return configuration
    }

    /// `BGTASK_MANUAL_LAUNCH`: `1`, `yes` or `true` turn the switch on; unset, empty, `0`,
    /// `no`, `false` leave it off; anything else leaves it off with a warning naming the value.
    static func manualLaunchSwitch(_ value: String?) -> Bool {
        guard let value else { return false }
        switch value.lowercased() {
        case "1", "yes", "true": return true
        case "", "0", "no", "false": return false
        default:
            StandardStream.writeError("bgtask: BGTASK_MANUAL_LAUNCH=\(value) is not 1, yes, true, 0, no or false; the manual launch switch stays off\n")
            return false
        }
    }

    /// `BGTASK_POLICY` from `environment` (``policyConfiguration(from:)``); a value that
    /// cannot be used is reported on standard error and the phone's profile is used.
    public static func defaultPolicyConfiguration(environment: [String: String] = ProcessInfo.processInfo.environment) -> PolicyConfiguration {
        switch policyConfiguration(from: environment["BGTASK_POLICY"]) {
        case .success(let configuration):
            return configuration
        case .failure(let error):
            StandardStream.writeError("bgtask: \(policyVariableProblem(error)); the phone's policy profile is used\n")
            return PolicyConfiguration()
        }
    }

    /// `error` of ``policyConfiguration(from:)`` with the variable named once: its own error
    /// starts with it when the value is not a file ("BGTASK_POLICY: BGTASK_POLICY: ..."
    /// doubled it), a file's error names the file.
    static func policyVariableProblem(_ error: PolicyConfigurationError) -> String {
        error.source == "BGTASK_POLICY" ? "\(error)" : "BGTASK_POLICY: \(error)"
    }

    /// What `BGTASK_POLICY` selects: unset or empty, the phone's profile; a profile's name
    /// (`phone`, `server`), that profile with its defaults; anything else is the path of a
    /// policy file (docs/policies.md, "Configuration"; its `profile` key picks the profile).
    public static func policyConfiguration(from value: String?) -> Result<PolicyConfiguration, PolicyConfigurationError> {
        guard let value, !value.isEmpty else { return .success(PolicyConfiguration()) }
        if let profile = PolicyProfile(rawValue: value) { return .success(profile.defaults) }
        guard value.contains("/") || value.hasSuffix(".json") else {
            return .failure(PolicyConfigurationError(source: "BGTASK_POLICY", key: nil, message: "expected \(PolicyProfile.allCases.map(\.rawValue).joined(separator: ", ")) or the path of a policy file, found \"\(value)\""))
        }
        do {
            return .success(try PolicyConfiguration.load(path: value))
        } catch {
            return .failure(error)
        }
    }

    /// `<host name>:<pid>`: unique among the replicas running now, so a restarted process
    /// never renews its predecessor's leases.
    static func defaultReplicaName() -> String {
        "\(ProcessInfo.processInfo.hostName):\(getpid())"
    }

    /// The lease of a shared store's claims: `configured`, else `BGTASK_STORE_LEASE`, else
    /// 30 s; a value outside 1...3600 s is refused with a message naming it (the default
    /// is used).
    static func sharedStoreLease(configured: TimeInterval?, environment: [String: String]) -> (lease: TimeInterval, problem: String?) {
        let range: ClosedRange<TimeInterval> = 1...3600
        let fallback = SchedulerDriver.defaultSharedStoreLease
        if let configured {
            return range.contains(configured) ? (configured, nil) : (fallback, "storeLease \(configured) is not from 1 to 3600 seconds; the lease is 30 s")
        }
        guard let text = environment["BGTASK_STORE_LEASE"], !text.isEmpty else { return (fallback, nil) }
        guard let seconds = Double(text), seconds.isFinite, range.contains(seconds) else {
            return (fallback, "BGTASK_STORE_LEASE=\(text) is not a number of seconds from 1 to 3600; the lease is 30 s")
        }
        return (seconds, nil)
    }

    /// The process's bootstrap configuration, handed over once.
    private static let bootstrapGate = BootstrapGate<Configuration>()

    /// Sets up the process's app. Call once, before the first use of the API.
    /// - Throws: ``EmbeddedSchedulerError`` when the API was already used, when it was
    ///   called before (the first configuration stands), or the manifest cannot be loaded
    ///   (the error names the file and key).
    public static func bootstrap(_ configuration: Configuration) throws(EmbeddedSchedulerError) {
        if configuration.manifest == nil {
            do {
                _ = try loadManifest(configuration)
            } catch {
                throw EmbeddedSchedulerError(message: "\(error)")
            }
        }
        switch bootstrapGate.offer(configuration) {
        case .success: break
        case .failure(.alreadyUsed):
            throw EmbeddedSchedulerError(message: "EmbeddedScheduler.bootstrap called after BGTaskScheduler.shared was first used; call it first thing in main")
        case .failure(.alreadyOffered):
            throw EmbeddedSchedulerError(message: "EmbeddedScheduler.bootstrap called a second time; the first call's configuration stands (call it once, first thing in main)")
        }
    }

    /// The process's own app context, created on first use.
    static let processContext: BGAppContext = {
        // An app started with a standard descriptor closed (`2>&-`) would give it to the
        // first file the scheduler opens (its store's lock file, its connection to bgtaskd),
        // and the process's log lines would land there: /dev/null takes its place first, as
        // bgtask and bgtaskd do at start.
        _ = StandardStream.reopenClosedStandardDescriptors()
        let configuration = bootstrapGate.close() ?? Configuration()
        // Before the context is published: whoever finds it finds its state directory too.
        processStateDirectory.withLock { $0 = configuration.stateDirectory }
        let context = makeContext(configuration)
        madeProcessContext.withLock { $0 = context }
        return context
    }()

    /// The state directory the process's bootstrap configuration named, if any.
    static let processStateDirectory = Mutex<URL?>(nil)

    /// ``processContext`` once it was made; `nil` before, without making it.
    static var existingProcessContext: BGAppContext? { madeProcessContext.withLock { $0 } }
    private static let madeProcessContext = Mutex<BGAppContext?>(nil)

    /// Builds a context with a real-time driver from `configuration`. Failures (no
    /// manifest, unusable state directory) leave a context whose submissions fail with
    /// `unavailable` naming the cause, rather than a crash. One exception: a process bgtaskd
    /// launched for its tasks (``isDaemonLaunch(environment:parentPID:isRunning:)``) that
    /// cannot reach or greet bgtaskd logs why and exits with status 1, because a scheduler
    /// of its own would acknowledge submissions bgtaskd never sees.
    public static func makeContext(_ configuration: Configuration, environment: [String: String] = ProcessInfo.processInfo.environment) -> BGAppContext {
        let log = configuration.log ?? .standardError()
        var manifest: AppManifest
        var problems: [String] = []
        if let given = configuration.manifest {
            manifest = given
        } else {
            do {
                manifest = try loadManifest(configuration, environment: environment)
            } catch {
                problems.append("\(error)")
                manifest = AppManifest(permittedIdentifiers: [], backgroundModes: [], source: "no manifest")
            }
        }
        let app = configuration.app ?? manifest.appID ?? AppID("local." + ProcessInfo.processInfo.processName)
        if problems.isEmpty, let uplink = connectToDaemon(
            configuration.daemon, app: app, stateDirectoryConfigured: configuration.stateDirectory != nil,
            environment: environment, log: log) {
            return makeLinkedContext(configuration, app: app, manifest: manifest, uplink: uplink, environment: environment, log: log)
        }
        if let socket = launchedByDaemon(configuration.daemon, environment: environment) {
            // bgtaskd started this process for its tasks and cannot be reached (it stalled,
            // died, or is not bgtaskd): a scheduler of its own would acknowledge submits into
            // a store bgtaskd never reads, and keep a background process alive that nothing
            // ends (docs/daemon.md, "Reconnecting"). The process ends instead; a daemon that
            // lives records the launch as failed.
            let cause = problems.isEmpty ? "bgtaskd at \(socket) could not be reached or refused this process (see above)" : problems.joined(separator: "; ")
            log(.error, app: app, "bgtaskd started this process, but \(cause); it exits rather than run a scheduler of its own, whose requests bgtaskd would never see")
            exit(1)
        }
        let clock = DispatchDriverClock()
        var store: (any SchedulerStorage)?
        var loaded: [PendingRequest]?
        var lease = SchedulerDriver.defaultSharedStoreLease
        if let address = configuration.store.sharedAddress(environment: environment) {
            // A store shared by replicas: no state directory, no lock (every replica is an owner).
            let replica = configuration.replica ?? environment["BGTASK_REPLICA"].flatMap { $0.isEmpty ? nil : $0 } ?? defaultReplicaName()
            let (seconds, problem) = sharedStoreLease(configured: configuration.storeLease, environment: environment)
            lease = seconds
            if let problem { log(.error, app: app, problem) }
            do {
                let opened = try PostgreSQLStore.open(address: address, replica: replica, now: clock.now())
                let read: (loaded: [PendingRequest], quarantined: [QuarantinedRequest])
                do {
                    // A row written badly between the open and this read is quarantined too.
                    read = try opened.loadPendingRequests(app: app, now: clock.now())
                } catch {
                    opened.close()
                    throw error
                }
                loaded = read.loaded
                store = opened
                log(.info, app: app, "scheduling in \(opened.storeDescription) as replica \(replica)")
                logQuarantined(opened.quarantinedAtOpen + read.quarantined, in: opened.storeDescription, app: app, log: log)
            } catch {
                problems.append("the shared store could not be opened: \(error)")
            }
        } else {
            do {
                let directory = try stateDirectory(for: app, configured: configuration.stateDirectory, environment: environment)
                let (opened, report) = try openStore(in: directory, now: clock.now(), app: app)
                store = opened
                loaded = report.loadedRequests
                reportOpening(report, of: opened, app: app, now: clock.now(), log: log)
            } catch let error as StoreError where error.code == .locked {
                // Another process of the app owns the state: this one is refused, not a second
                // owner (docs/ARCHITECTURE.md, "One owner per state directory").
                problems.append("another process of \(app) owns its scheduler state: \(error.message); "
                    + "this process's scheduler does nothing: submissions fail, pending requests read as none")
            } catch {
                // Said with what follows: the store is not opened again while this process
                // runs (a disk full at the start stays the reason after room came back: an
                // outside probe), and the state directory is not held meanwhile.
                problems.append("\(error); this process's scheduler runs without its store until the app is started again: "
                    + "submissions fail, pending requests read as none, and another process of \(app) may take the state directory")
            }
        }
        // Override files (low-power-mode, device-idle) live beside every app's state.
        let conditions = configuration.conditions ?? LinuxConditionsReader(stateDirectory: try? stateRoot(environment: environment))
        let driver = SchedulerDriver(
            configuration: configuration.scheduler(environment: environment),
            conditions: conditions.read(),
            clock: clock,
            store: store,
            unavailableReason: problems.joined(separator: "; "),
            log: log,
            policies: PolicySet(configuration: configuration.policy(environment: environment)),
            loadedRequests: loaded,
            sharedStoreLease: lease
        )
        for problem in problems { log(.error, app: app, problem) }
        // UIDevice (and ProcessInfo's Low Power Mode and thermal state) report what the
        // scheduler judges by: the machine's, or the configured conditions'.
        let context = BGAppContext(app: app, manifest: manifest, driver: driver, assertions: configuration.assertions,
                                 battery: UIDevice.battery(of: conditions), power: UIDevice.power(of: conditions))
        ConditionsMonitor.start(conditions, driver: driver)
        return context
    }

    /// Logs what opening a store found (quarantined rows, a corrupt file moved aside, runs
    /// cut off by a stop) and prunes the run log: what every owner does once it has opened
    /// its store (an embedded app, bgtaskd). `app` is the store's app, `nil` for the daemon's.
    public static func reportOpening(_ report: StoreOpenReport, of store: SchedulerStore, app: AppID?, now: Date, log: BGDiagnosticLog) {
        logQuarantined(report.quarantinedRequests, in: store.url?.path ?? "the store", app: app, log: log)
        for run in report.unreadableRuns {
            log(.error, app: app, "a run without an end could not be read (\(run)); it was recorded as interrupted, its request not restored")
        }
        if let moved = report.movedAsideWithoutSchema {
            log(.error, app: app, "the scheduler's database had no tables and no -wal beside it, as a store copied without its -wal (which holds every commit) has; it was moved to \(moved.path) and a fresh one started: put the -wal back beside it as \(moved.path)-wal to read what it held")
        }
        if let moved = report.movedAsideCorruptFile {
            let copied = report.salvage.copiedRows.sorted { $0.key < $1.key }.map { "\($0.value) from \($0.key)" }
            let salvaged = copied.isEmpty ? "nothing could be copied back from it" : "the rows still readable were copied back (\(copied.joined(separator: ", ")))"
            log(.error, app: app, "the scheduler's database was corrupt (\(report.corruptionDetail ?? "unknown damage")); it was moved to \(moved.path) and a fresh one started; \(salvaged)")
            for problem in report.salvage.problems {
                log(.error, app: app, "from the damaged store \(moved.path): \(problem)")
            }
        }
        do {
            let pruned = try store.pruneRuns(olderThan: EnergyModel().pruneCutoff(now: now))
            if pruned > 0 { log(.info, app: app, "pruned \(pruned) run record(s) older than the retention period") }
        } catch {
            log(.warning, app: app, "could not prune old run records: \(error)")
        }
        let restored = Set(report.restoredRequests.map(\.key))
        for run in report.interruptedRuns {
            let what = !run.request.isRestoredWhenCutOff
                ? PendingRequest.whyNotRestoredWhenCutOff + " (and is no throttle strike)"
                : (restored.contains(run.request.key) ? "its request was restored" : "its request was not restored: the app had filed it again during the run")
                    + ", and the stop counts as a throttle strike"
            log(.warning, app: run.app, "\(run.id) of '\(run.identifier)' was interrupted by a stop of the scheduler; \(what)")
        }
    }

    /// Logs each pending row an opening set aside, naming it, its reason and the store.
    static func logQuarantined(_ rows: [QuarantinedRequest], in store: String, app: AppID?, log: BGDiagnosticLog) {
        for row in rows { log(.error, app: app, row.setAsideMessage(in: store)) }
    }

    /// The manifest for `configuration`: given in code, else `manifestURL`, else
    /// `$BGTASK_MANIFEST`, else beside `executable` (symbolic links resolved) where
    /// `Bundle.main` looks for `Info.plist` (`Contents/Info.plist`, `Resources/Info.plist`,
    /// `Info.plist`, in that order), else `<executable>.bgtask.json` there.
    public static func loadManifest(
        _ configuration: Configuration,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        executable: URL = URL(fileURLWithPath: CommandLine.arguments.first ?? ProcessInfo.processInfo.processName)
    ) throws -> AppManifest {
        if let manifest = configuration.manifest { return manifest }
        if let url = configuration.manifestURL { return try AppManifest.load(contentsOf: url) }
        if let path = environment["BGTASK_MANIFEST"], !path.isEmpty {
            return try AppManifest.load(contentsOf: URL(fileURLWithPath: path))
        }
        let executable = executable.resolvingSymlinksInPath()
        let directory = executable.deletingLastPathComponent()
        // Where Foundation's Bundle.main finds Info.plist on Linux, in its order (so the
        // manifest and Bundle.main.bundleIdentifier agree; docs/porting.md), then JSON.
        let candidates = [
            directory.appendingPathComponent("Contents/Info.plist"),
            directory.appendingPathComponent("Resources/Info.plist"),
            directory.appendingPathComponent("Info.plist"),
            directory.appendingPathComponent(executable.lastPathComponent + ".bgtask.json"),
        ]
        for candidate in candidates where FileManager.default.fileExists(atPath: candidate.path) {
            return try AppManifest.load(contentsOf: candidate)
        }
        // Skipped as Bundle.main skips them, but there in `ls`: a candidate that is a link
        // loop or leads nowhere is named, or "no app manifest" sends the user looking for a
        // file they can see.
        let unreadable = candidates.compactMap { candidate -> String? in
            guard let problem = BoundedFile.lookupProblem(at: candidate.path), problem != .missing else { return nil }
            return "; \(candidate.path) is there but cannot be read: it is \(problem.found)"
        }
        throw EmbeddedSchedulerError(message: "no app manifest: set BGTASK_MANIFEST, put Info.plist or \(executable.lastPathComponent).bgtask.json in \(directory.path), or call EmbeddedScheduler.bootstrap with one" + unreadable.joined())
    }

    /// The socket of the bgtaskd that started this process, for its tasks or for the user
    /// (`BGTASK_LAUNCH=background` or `opened` with `BGTASK_DAEMON_SOCKET`, and no choice in
    /// code that overrides the environment), or `nil`.
    static func launchedByDaemon(_ choice: DaemonChoice, environment: [String: String]) -> String? {
        guard choice == .automatic, isDaemonLaunch(environment: environment),
              let socket = environment["BGTASK_DAEMON_SOCKET"], !socket.isEmpty else { return nil }
        return socket
    }

    /// How bgtaskd started this process (`BGTASK_LAUNCH`).
    package enum DaemonLaunch: Sendable, Equatable {
        /// For its tasks, into the background (`background`).
        case background
        /// For the user, into the foreground (`opened`: a tap on one of its notifications).
        case opened
    }

    /// How bgtaskd started this process, or `nil` when it did not: `BGTASK_LAUNCH` is
    /// `background` or `opened` and, when bgtaskd said its pid (`BGTASK_DAEMON_PID`), that
    /// process is this one's parent, or is gone (an app whose daemon died is reparented, and
    /// is still the launched app).
    ///
    /// The variables are inherited: a program the launched app runs that links
    /// BackgroundTasks too sees them, but its parent is the app, not the daemon, so it is
    /// an ordinary process (it must not exit as a launched app that lost its daemon would).
    static func daemonLaunch(environment: [String: String], parentPID: pid_t = getppid(),
                             isRunning: (pid_t) -> Bool = { kill($0, 0) == 0 || errno != ESRCH }) -> DaemonLaunch? {
        let launch: DaemonLaunch
        switch environment["BGTASK_LAUNCH"] {
        case "background": launch = .background
        case "opened": launch = .opened
        default: return nil
        }
        guard let text = environment["BGTASK_DAEMON_PID"] else { return launch }
        guard let daemon = pid_t(text), daemon > 0 else { return nil }
        return parentPID == daemon || !isRunning(daemon) ? launch : nil
    }

    /// Whether this process is one bgtaskd spawned (``daemonLaunch(environment:parentPID:isRunning:)``).
    static func isDaemonLaunch(environment: [String: String], parentPID: pid_t = getppid(),
                               isRunning: (pid_t) -> Bool = { kill($0, 0) == 0 || errno != ESRCH }) -> Bool {
        daemonLaunch(environment: environment, parentPID: parentPID, isRunning: isRunning) != nil
    }

    /// The directory holding every app's state: `$XDG_STATE_HOME/bgtask`, else
    /// `~/.local/state/bgtask` (not created).
    /// - Throws: ``EmbeddedSchedulerError`` when neither is set, or when the one used is not
    ///   valid UTF-8 in this process's environment (the path read would name another
    ///   directory, an empty store made there and the real one left behind).
    public static func stateRoot(environment: [String: String] = ProcessInfo.processInfo.environment) throws(EmbeddedSchedulerError) -> URL {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            if let problem = EnvironmentText.problem(variable: "XDG_STATE_HOME", value: state) { throw EmbeddedSchedulerError(message: problem) }
            return URL(fileURLWithPath: state).appendingPathComponent("bgtask")
        }
        if let home = environment["HOME"], !home.isEmpty {
            if let problem = EnvironmentText.problem(variable: "HOME", value: home) { throw EmbeddedSchedulerError(message: problem) }
            return URL(fileURLWithPath: home).appendingPathComponent(".local/state/bgtask")
        }
        throw EmbeddedSchedulerError(message: "neither XDG_STATE_HOME nor HOME is set; cannot choose a state directory")
    }

    /// `$XDG_STATE_HOME/bgtask/<app>/`, else `~/.local/state/bgtask/<app>/`, created 0700.
    public static func stateDirectory(for app: AppID, configured: URL?, environment: [String: String] = ProcessInfo.processInfo.environment) throws(EmbeddedSchedulerError) -> URL {
        let directory: URL
        if let configured {
            directory = configured
        } else {
            // The app's name becomes a path component: one that leaves the state root
            // (`../x`, `a/b`) would make this app another's owner.
            if let problem = AppID.problem(with: app.rawValue) {
                throw EmbeddedSchedulerError(message: "cannot choose a state directory for the app: \(problem); give the app a reverse-DNS identifier (CFBundleIdentifier) or a state directory")
            }
            directory = try stateRoot(environment: environment).appendingPathComponent(app.rawValue)
        }
        return try prepareStateDirectory(directory)
    }

    /// Creates `directory` (0700, parents included) if it is missing and checks that it is a
    /// usable directory: what every owner of a store does first (an embedded app, bgtaskd).
    /// - Throws: ``EmbeddedSchedulerError`` naming the directory and the problem.
    public static func prepareStateDirectory(_ directory: URL) throws(EmbeddedSchedulerError) -> URL {
        if let problem = DirectoryProblem.find(in: directory.path) {
            throw EmbeddedSchedulerError(message: "cannot use the state directory \(directory.path): \(problem)")
        }
        if let problem = StoreLocation.createDirectory(directory.path, mode: 0o700) {
            throw EmbeddedSchedulerError(message: "cannot create the state directory \(directory.path): \(problem)")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw EmbeddedSchedulerError(message: "the state directory \(directory.path) is not a directory")
        }
        return directory
    }

    /// Opens (or creates) `scheduler.sqlite` in `directory` as its owner: it holds
    /// `scheduler.sqlite.lock` while the store lives, and fails with ``StoreError/Code/locked``
    /// naming the owner's process id when another process of the app owns the directory
    /// (docs/ARCHITECTURE.md, "One owner per state directory"). With `app`, pending requests
    /// of any other app are quarantined rather than loaded.
    public static func openStore(in directory: URL, now: Date, app: AppID? = nil) throws(StoreError) -> (SchedulerStore, StoreOpenReport) {
        try SchedulerStore.open(at: directory.appendingPathComponent("scheduler.sqlite"), now: now, options: StoreOptions(app: app))
    }
}

/// A setup problem of the embedded scheduler; the message names the file or variable.
public struct EmbeddedSchedulerError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public var message: String
    public var description: String { message }
}

/// A value offered before first use, taken once at first use: checking that the first use
/// has not happened and storing the offer is one atomic step, so an offer racing the first
/// use either lands before it (and is what it takes) or is refused, never lost in between.
final class BootstrapGate<Value: Sendable>: Sendable {
    private struct State {
        var offered: Value?
        var closed = false
    }

    /// Why an offer was refused.
    enum Refusal: Error {
        /// The first use already happened.
        case alreadyUsed
        /// A value was offered before: the first offer stands.
        case alreadyOffered
    }

    private let state = Mutex(State())

    /// Stores `value` for the first use. Refused when the first use already happened, or a
    /// value was offered before (two configurations, the later silently winning, would leave
    /// the first caller's store or manifest unused without a word).
    func offer(_ value: Value) -> Result<Void, Refusal> {
        state.withLock { state in
            guard !state.closed else { return .failure(.alreadyUsed) }
            guard state.offered == nil else { return .failure(.alreadyOffered) }
            state.offered = value
            return .success(())
        }
    }

    /// The first use: closes the gate and returns the value offered (`nil` if none).
    func close() -> Value? {
        state.withLock { state in
            state.closed = true
            return state.offered
        }
    }
}

extension QuarantinedRequest {
    /// The log line for this row, set aside in `store`: what it is, why, and where it went.
    func setAsideMessage(in store: String) -> String {
        "the pending request \(app)/\(identifier) was not loaded: \(reason); it was moved to the quarantine of \(store)"
    }
}
