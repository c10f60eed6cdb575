import BackgroundTasks
import DaemonProtocol
import DeviceConditions
import Dispatch
import Foundation
import ProcessSupervision
import SchedulerCore
import SchedulerStore
import Synchronization

/// bgtaskd: one process per user holding the engine, the store, the device conditions and
/// the launcher, behind a Unix socket (docs/daemon.md).
///
/// ``start(_:environment:)`` resolves the paths, takes ownership of the state directory
/// (a second daemon for the same state is refused, naming the holder), ends the app
/// processes a previous daemon left behind, opens the store, installs the apps, listens
/// (on its socket, or on the one systemd passed), and tells systemd it is ready. SIGTERM
/// and SIGINT expire what runs, wait for the runs to end, and exit; nothing pending is lost.
public final class Daemon: Sendable {
    /// The request handling.
    public let service: DaemonService
    /// The resolved paths.
    public let paths: DaemonPaths.Resolved
    private let server: FrameServer
    private let notifier: SystemdNotifier?
    private let log: BGDiagnosticLog
    private let sessions = Mutex<[ObjectIdentifier: DaemonSession]>([:])
    private let stopping = Mutex(false)
    /// The watch on the state directory, the store and the socket (``StateWatch``).
    private let stateWatch = Mutex<StateWatch?>(nil)
    private let watchdog: WatchdogPinger?
    /// SIGTERM to SIGKILL for app processes: how long stopping waits for them to end.
    private let killGrace: TimeInterval
    /// `--policy`: read again on SIGHUP.
    private let policyFile: String?

    /// Why the daemon did not start; the message names the path, the holder or the flag.
    public struct StartError: Error, CustomStringConvertible, Sendable {
        /// What went wrong.
        public var message: String
        public var description: String { message }
    }

    /// Starts a daemon with `options`; returns once it listens.
    public static func start(_ options: DaemonOptions, environment: [String: String]) throws(StartError) -> Daemon {
        // Start-up's phases, for the ready line (docs/daemon.md, "Start-up").
        let started = ContinuousClock.now
        var phases: [(String, Duration)] = []
        var phaseStart = started
        func endPhase(_ name: String) {
            let now = ContinuousClock.now
            phases.append((name, now - phaseStart))
            phaseStart = now
        }
        let log = BGDiagnosticLog.standardError(minimumLevel: options.logLevel, program: "bgtaskd")
        let uid = getuid()
        let paths: DaemonPaths.Resolved
        do {
            paths = try DaemonPaths.resolve(environment: environment, socketOverride: options.socketPath, stateOverride: options.stateDirectory, uid: uid)
        } catch {
            throw StartError(message: "\(error)")
        }
        for warning in paths.warnings { log(.warning, app: nil, warning) }

        // The policy configuration, first: a file that cannot be read or parsed stops the
        // start, naming the file and key, before anything is opened (never a daemon judging
        // with something else than it was asked to).
        var policies = PolicySet()
        if let file = options.policyFile {
            do {
                policies = PolicySet(configuration: try PolicyConfiguration.load(path: file))
            } catch {
                throw StartError(message: "--policy: \(error)")
            }
            log(.info, app: nil, "policy configuration from \(file)")
        }

        // The state directory, owned by this daemon alone (the store's lock).
        let stateDirectory = URL(fileURLWithPath: paths.stateDirectory)
        do {
            _ = try EmbeddedScheduler.prepareStateDirectory(stateDirectory)
        } catch {
            throw StartError(message: "\(error)")
        }

        // The socket's directory is checked (or the socket systemd passed taken) before the
        // store is opened: a start refused for it must leave the store as it was (opening it
        // moves a damaged database aside and creates a fresh one). After the state directory,
        // which may hold it (`--socket STATE/run/s` on a first start).
        let endpoint: FrameServer.Endpoint
        // Where clients reach this daemon: the socket systemd passed is bound where its unit
        // says, which need not be the default path (the ready line, `bgtask status`, the
        // apps' BGTASK_DAEMON_SOCKET and the connection-limit message all name it).
        var socketPath = paths.socketPath
        // Whether `socketPath` is where the socket is in the file system (not a systemd
        // socket without a path, whose apps are told the default path).
        var socketPathIsReal = false
        do {
            let passed = try SystemdActivation.listeningSockets(environment: environment)
            if let first = passed.first {
                endpoint = .adopted(descriptor: first.descriptor)
                if let bound = first.boundPath {
                    socketPath = bound
                    socketPathIsReal = true
                } else {
                    log(.warning, app: nil, "the socket systemd passed (fd \(first.descriptor)) has no path in the file system; apps are told \(socketPath)")
                }
                log(.info, app: nil, "using the socket systemd passed (fd \(first.descriptor)) at \(socketPath)")
            } else {
                try DaemonPaths.prepareSocketDirectory(paths.socketDirectory, uid: uid)
                endpoint = .path(paths.socketPath)
                socketPathIsReal = true
            }
        } catch {
            throw StartError(message: "\(error)")
        }

        let clock = DispatchDriverClock()
        let store: SchedulerStore
        let report: StoreOpenReport
        do {
            (store, report) = try SchedulerStore.open(at: stateDirectory.appendingPathComponent("scheduler.sqlite"), now: clock.now(), options: StoreOptions(app: nil))
        } catch where error.code == .locked {
            throw StartError(message: "another bgtaskd owns \(paths.stateDirectory): \(error.message); stop it first, or give this one another --state-dir")
        } catch {
            throw StartError(message: "cannot open the daemon's store in \(paths.stateDirectory): \(error)")
        }
        EmbeddedScheduler.reportOpening(report, of: store, app: nil, now: clock.now(), log: log)
        endPhase("store")

        // Where app processes go.
        let delegation: CgroupDelegation?
        switch options.cgroups ? CgroupDelegation.detect() : .unavailable(reason: "disabled by --no-cgroups") {
        case .available(let found):
            do {
                try found.enterDaemonLeaf(pid: getpid())
                _ = found.enableControllers()
                delegation = found
                log(.info, app: nil, "app processes go into cgroups under \(found.appsCgroup)")
            } catch {
                delegation = nil
                log(.warning, app: nil, "cgroup subtree \(found.subtree) found but not usable (\(error)); app processes get their own process group only, measured by rusage")
            }
        case .unavailable(let reason):
            delegation = nil
            log(.info, app: nil, "no delegated cgroup v2 subtree (\(reason)); app processes get their own process group only, measured by rusage")
        }
        // Now that this daemon's cgroups are known: a recorded cgroup is killed only if it is
        // one of them.
        endOrphans(recordedIn: store, delegation: delegation, log: log)
        let logDirectory = stateDirectory.appendingPathComponent("logs").path
        // Where the apps' output goes: a start that cannot use it is refused here, rather than
        // every launch failing (and counting as a throttle strike).
        try? FileManager.default.createDirectory(atPath: logDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var logsInfo = stat()
        guard lstat(logDirectory, &logsInfo) == 0, logsInfo.st_mode & S_IFMT == S_IFDIR else {
            let found = lstat(logDirectory, &logsInfo) == 0 ? (BoundedFile.nonRegularKind(logsInfo.st_mode) ?? "a regular file") : systemErrorText(errno)
            throw StartError(message: "the apps' log directory \(logDirectory) is not a directory (\(found)); remove what is there")
        }

        // The socket, before anything can launch an app: a daemon that cannot listen (a
        // socket directory of the wrong mode, another bgtaskd on the socket) stops here, with
        // no app process started for a run it could not see through (systemd: a socket it
        // passed, and readiness and the watchdog below).
        let transportLog: TransportLog = { level, text in
            let mapped: BGDiagnosticMessage.Level = switch level {
            case .debug: .debug
            case .info: .info
            case .warning: .warning
            case .error: .error
            }
            log(mapped, app: nil, text)
        }
        // Connections that arrive before the daemon is ready wait here, unread, and are
        // taken up once it is (a client's request waits for the start-up to end).
        let box = Mutex<(daemon: Daemon?, early: [FrameConnection])>((nil, []))
        let server: FrameServer
        // Before the server sizes its connection cap from the limit (docs/protocol.md, "Limits").
        let descriptorLimit = FrameServer.raiseDescriptorLimit()
        let maximumConnections = FrameServer.defaultMaximumConnections
        log(.debug, app: nil, "descriptor limit \(descriptorLimit); at most \(maximumConnections) connections")
        do {
            server = try FrameServer(
                endpoint: endpoint,
                connectionOptions: FrameConnection.Options(firstFrameTimeout: .seconds(Int64(options.firstFrameTimeout))),
                maximumConnections: maximumConnections,
                // Every connection's queue targets this one serial queue: nothing a connection
                // does waits for another, and without a common target each busy connection
                // queue took a libdispatch worker of its own (600 connections, 257 threads).
                connectionQueue: DispatchQueue(label: "bgtaskd.connections"),
                refusalAtCapacity: Self.connectionLimitRefusal(socketPath: socketPath, limit: maximumConnections),
                log: transportLog
            ) { connection in
                let daemon = box.withLock { box -> Daemon? in
                    if box.daemon == nil { box.early.append(connection) }
                    return box.daemon
                }
                daemon?.accept(connection)
            }
        } catch where error.code == .inUse {
            // The server's message names the holder's pid and uid when the kernel tells
            // (docs/protocol.md); this one's advice follows it.
            throw StartError(message: "\(error.message); stop it first, or give this one another --socket")
        } catch {
            throw StartError(message: "\(error)")
        }
        endPhase("socket")

        let conditions = LinuxConditionsReader(stateDirectory: stateDirectory)
        let measurement = RunMeasurement()
        let driver = SchedulerDriver(
            configuration: EmbeddedScheduler.defaultSchedulerConfiguration(environment: environment),
            conditions: conditions.read(),
            clock: clock,
            store: store,
            log: log,
            policies: policies,
            meter: measurement,
            loadedRequests: report.loadedRequests)
        endPhase("engine")

        // The installed apps are listed beside the socket when it has a path apps reach it by.
        let listSocket = socketPathIsReal ? socketPath : nil
        let service = DaemonService(
            driver: driver, store: store,
            spawner: ProcessSpawner(delegation: delegation, logDirectory: logDirectory) { log(.warning, app: nil, $0) },
            timing: options.timing,
            launchEnvironment: .init(socketPath: socketPath, environment: environment),
            status: .init(pid: getpid(), socketPath: socketPath, stateDirectory: paths.stateDirectory, startedAt: clock.now(),
                          containment: delegation.map { "cgroups under \($0.appsCgroup)" } ?? "process groups (no delegated cgroup)"),
            pushLimit: options.pushLimit,
            measurement: measurement,
            conditionsReader: conditions,
            policySource: options.policyFile ?? "defaults",
            installedAppsListSocket: listSocket,
            log: log)
        // Only now that every app is installed with its switch and what its policies learned:
        // a change of the device judges the restored requests, and judged before, a request
        // was taken for an unknown app's (its switch on, no launch to space from).
        service.watchConditions(through: ConditionsMonitor.start(conditions, driver: driver))
        endPhase("apps")

        // systemd's notifications are best effort, but never silent: a NOTIFY_SOCKET that
        // is unusable or names no socket leaves `systemctl start` waiting for READY=1 until
        // its timeout, and the log should say why.
        let notifier: SystemdNotifier?
        do {
            notifier = try SystemdNotifier(environment: environment)
        } catch {
            notifier = nil
            log(.warning, app: nil, "systemd will not be told bgtaskd is ready: \(error)")
        }
        for warning in notifier?.warnings ?? [] { log(.warning, app: nil, warning) }
        let daemon = Daemon(service: service, paths: paths, server: server, notifier: notifier, log: log, killGrace: options.timing.killGrace, policyFile: options.policyFile)
        let early = box.withLock { box -> [FrameConnection] in
            box.daemon = daemon
            defer { box.early = [] }
            return box.early
        }
        for connection in early { daemon.accept(connection) }
        // Removed from under the daemon (docs/daemon.md, "Removed from under it"): it stops,
        // rather than acknowledge writes into a file nobody can open again, or run unreachable.
        let (watch, watchProblem) = StateWatch.start(
            stateDirectory: paths.stateDirectory, storeNames: ["scheduler.sqlite", "scheduler.sqlite.lock"],
            socketPath: { if case .path = endpoint { return socketPath } else { return nil } }(),
            queue: DispatchQueue(label: "bgtaskd.state-watch")
        ) { [weak daemon] loss in
            guard let daemon, !daemon.isStopping else { return }
            log(.error, app: nil, "bgtaskd stops: \(loss.reason)")
            daemon.stop(reason: loss.reason, exitStatus: 1)
        }
        daemon.stateWatch.withLock { $0 = watch }
        if let watchProblem {
            log(.warning, app: nil, "the state directory and the socket are not watched (\(watchProblem)): bgtaskd would not notice their removal")
        }
        do {
            try notifier?.ready(status: "\(service.installedAppCount) app(s) installed, \(driver.pendingCount) request(s) pending")
        } catch {
            log(.warning, app: nil, "systemd was not told bgtaskd is ready (READY=1): \(error)")
        }
        let took = phases.map { "\($0.0) \(DurationText.measured($0.1.transportSeconds))" }.joined(separator: ", ")
        log(.info, app: nil, "bgtaskd \(getpid()) ready on \(socketPath) with state in \(paths.stateDirectory): \(service.installedAppCount) app(s), \(driver.pendingCount) request(s) pending; started in \(DurationText.measured((ContinuousClock.now - started).transportSeconds)) (\(took))")
        return daemon
    }

    private init(service: DaemonService, paths: DaemonPaths.Resolved, server: FrameServer, notifier: SystemdNotifier?, log: BGDiagnosticLog, killGrace: TimeInterval, policyFile: String?) {
        self.service = service
        self.policyFile = policyFile
        self.killGrace = min(max(killGrace, 0), 60)
        self.paths = paths
        self.server = server
        self.notifier = notifier
        self.log = log
        // The watchdog pings only while the engine's lock and the apps' table can be taken.
        self.watchdog = notifier?.startWatchdog(
            probe: { [service] in service.livenessProbe() },
            onError: { [log] error in log(.warning, app: nil, "systemd watchdog ping failed: \(error)") })
    }

    /// What a client refused at the connection cap is told before its connection closes:
    /// the reply to the connection itself (docs/protocol.md, "Limits"), so `bgtask` says the
    /// daemon is full instead of reporting a reset. Encoded once: the cap does not change.
    static func connectionLimitRefusal(socketPath: String, limit: Int) -> Data? {
        let failure = DaemonFailure(.connectionLimit, "bgtaskd at \(socketPath) is at its connection limit (\(limit)); try again")
        return try? MessageCoding.encode(DaemonEnvelope.reply(id: MessageLink.connectionReplyID, .failed(failure)))
    }

    /// Ends the app processes a previous daemon recorded and did not see exit (it was
    /// killed): only a process whose start time still matches, so a reused pid is spared;
    /// then those in its app cgroups that no row names.
    private static func endOrphans(recordedIn store: SchedulerStore, delegation: CgroupDelegation?, log: BGDiagnosticLog) {
        let appsCgroup = delegation?.appsCgroup
        let reaper = OrphanReaper()
        var killed: Set<String> = []
        for process in (try? store.appProcesses())?.processes ?? [] {
            // `cgroup.kill` kills everything in the cgroup: only one of this daemon's app
            // cgroups (`<apps cgroup>/<name>`) is written, never a path the store names
            // elsewhere (a row another program wrote, or a daemon started with other
            // cgroups); without it the process is still ended by its pid and start time.
            var cgroup = process.cgroupPath
            if let path = cgroup, !CgroupDelegation.isAppCgroup(path, of: appsCgroup) {
                log(.warning, app: process.app, "the cgroup recorded for process \(process.pid), \(path), is not one of this bgtaskd's app cgroups (\(appsCgroup.map { "under \($0)" } ?? "it has none")): not used")
                cgroup = nil
            }
            let outcome = reaper.end(pid: process.pid, processGroup: process.processGroup, startTime: process.startTime, cgroupPath: cgroup)
            log(.info, app: process.app, "process \(process.pid) left by a previous bgtaskd: \(outcome)")
            if case .killedCgroup(let path) = outcome { killed.insert(path) }
            _ = try? store.removeAppProcess(app: process.app)
        }
        // What no row names: an app process whose row the store did not take at its launch.
        // Only while this is the subtree's one daemon: another bgtaskd started from the same
        // cgroup (another --state-dir) shares its apps cgroup, and its apps live.
        guard let delegation else { return }
        let others = delegation.otherProcessesInDaemonLeaf()
        guard others.isEmpty else {
            log(.warning, app: nil, "another process is in this bgtaskd's cgroup \(delegation.daemonCgroup) (pid \(others.map(String.init).joined(separator: ", "))): the app cgroups no record names are left alone, as they may be its apps")
            return
        }
        for (cgroup, failure) in reaper.endUnrecordedAppCgroups(under: delegation.appsCgroup, excluding: killed) {
            if let failure {
                log(.warning, app: nil, "processes left by a previous bgtaskd in \(cgroup), which it had not recorded, could not be ended: \(failure)")
            } else {
                log(.info, app: nil, "processes left by a previous bgtaskd in \(cgroup), which it had not recorded (its store did not take the row): killed the cgroup")
            }
        }
    }



    // MARK: Connections

    private func accept(_ connection: FrameConnection) {
        let session = DaemonSession(connection: connection, service: service, log: log) { [weak self] in self?.isStopping ?? true }
        let key = ObjectIdentifier(session)
        sessions.withLock { $0[key] = session }
        session.start { [weak self] in
            _ = self?.sessions.withLock { $0.removeValue(forKey: key) }
        }
    }

    // MARK: Stopping

    /// Reads the `--policy` file again (SIGHUP).
    func reloadPolicy() {
        guard let file = policyFile else {
            log(.info, app: nil, "SIGHUP: no --policy file to read again; the defaults stay")
            return
        }
        do {
            service.setPolicyConfiguration(try PolicyConfiguration.load(path: file), source: file)
            log(.info, app: nil, "SIGHUP: policy configuration read again from \(file)")
        } catch {
            log(.error, app: nil, "SIGHUP: \(error); the configuration in force stays")
        }
    }

    /// Whether ``stop(reason:exitStatus:)`` was called.
    var isStopping: Bool { stopping.withLock { $0 } }

    /// Expires what runs, waits for the runs to end, stops every app and exits with
    /// `exitStatus` (0 for SIGTERM and SIGINT; 1 when what the daemon needs was removed).
    public func stop(reason: String, exitStatus: Int32 = 0) {
        let first = stopping.withLock { stopping -> Bool in
            defer { stopping = true }
            return !stopping
        }
        guard first else { return }
        // Its own stop removes the socket: not a loss to report.
        stateWatch.withLock { $0?.cancel() }
        log(.info, app: nil, "stopping (\(reason)): expiring the runs in progress")
        try? notifier?.stopping()
        let driver = service.driver
        let group = DispatchGroup()
        // Every installed app, not only those running something now: nothing launches for
        // any of them while the daemon stops (a request falling due, `bgtask run`, a push
        // would hand a run to a process the exit then cuts off, or start one of ours).
        // Runs still waiting for their app's process to launch never reached it: failed
        // first, their requests filed again (expired below, they would be recorded as cut
        // off, their requests used up).
        for app in service.installedApps.map(\.app) {
            service.supervisor(of: app)?.daemonStoppingLaunches(reason: "bgtaskd is stopping")
            // Expired first with the daemon's reason, which the run log keeps as the stop
            // reason (marked terminating alone, they read "the app's process is terminating").
            driver.expireRuns(of: app, reason: "bgtaskd is stopping")
            driver.appTerminating(app)
        }
        // Read after: a run that started before its app was marked is expired with it.
        for app in Set(driver.activeRuns.map(\.app)) {
            group.enter()
            driver.whenRunsEnd(of: app) { group.leave() }
        }
        group.notify(queue: .main) { [self] in
            for app in service.installedApps {
                service.supervisor(of: app.app)?.daemonStopping(reason: "bgtaskd is stopping")
            }
            // The apps get SIGTERM, and SIGKILL after the kill grace: wait for them (bounded),
            // so no app outlives its daemon, not even one that ignores SIGTERM.
            waitForAppProcesses(until: .now() + killGrace + 1) { [self] in
                server.close()
                watchdog?.cancel()
                service.store.close()
                log(.info, app: nil, "stopped; \(driver.pendingCount) request(s) pending stay on disk")
                exit(exitStatus)
            }
        }
    }

    /// Calls `done` on the main queue once no app process of this daemon runs (each
    /// supervisor reports its process's exit), or at `deadline` (a process still there then
    /// is recorded in the store: the next start ends it).
    private func waitForAppProcesses(until deadline: DispatchTime, _ done: @escaping @Sendable () -> Void) {
        let once = Mutex(false)
        let finish: @Sendable () -> Void = {
            guard once.withLock({ called in defer { called = true }; return !called }) else { return }
            DispatchQueue.main.async(execute: done)
        }
        let group = DispatchGroup()
        let supervisors = service.installedApps.compactMap { service.supervisor(of: $0.app) }
        for supervisor in supervisors {
            group.enter()
            supervisor.whenProcessEnds { group.leave() }
        }
        group.notify(queue: .main, execute: finish)
        DispatchQueue.main.asyncAfter(deadline: deadline) { [self] in
            guard !once.withLock({ $0 }) else { return }
            for supervisor in supervisors {
                if let pid = supervisor.processID {
                    log(.warning, app: supervisor.app, "\(supervisor.app)'s process \(pid) did not end in time; the next bgtaskd ends it")
                }
            }
            finish()
        }
    }
}

/// One client connection: the first request says who it is (``Hello``); an app is checked
/// against its installed executable, `bgtask` is the administrator; then each request gets
/// its reply. A message that is not one of the protocol closes this connection only.
final class DaemonSession: AppLink, Sendable {
    private enum Role {
        case unknown
        case app(AppID)
        case admin
    }

    let connection: FrameConnection
    private let service: DaemonService
    private let log: BGDiagnosticLog
    private let role = Mutex(Role.unknown)
    /// Whether the daemon is stopping: an administrator's request that changes something is
    /// then refused with that reason, not left to a connection closed without a reply.
    private let daemonStopping: @Sendable () -> Bool

    init(connection: FrameConnection, service: DaemonService, log: BGDiagnosticLog, daemonStopping: @escaping @Sendable () -> Bool = { false }) {
        self.daemonStopping = daemonStopping
        self.connection = connection
        self.service = service
        self.log = log
    }

    func start(onEnd: @escaping @Sendable () -> Void) {
        connection.start(
            onFrame: { [weak self] frame in self?.received(frame) },
            onClose: { [weak self] reason in
                if let self, case .app(let app) = self.role.withLock({ $0 }) {
                    self.service.supervisor(of: app)?.disconnected(self, reason: "\(reason)")
                }
                onEnd()
            })
    }

    private func received(_ frame: Frame) {
        let envelope: ClientEnvelope
        do {
            envelope = try MessageCoding.decode(ClientEnvelope.self, from: frame.payload)
        } catch {
            // Said in words naming the field; the request is answered `invalid` when its
            // number could be read, so a client waiting for it learns why (docs/protocol.md).
            let problem = MessageProblem.diagnose(clientPayload: frame.payload)
            if let id = problem.id { send(.reply(id: id, .failed(DaemonFailure(.invalid, problem.message)))) }
            // Logged by the server with its other faulty closes, throttled (a client looping
            // on malformed messages made a warning each).
            connection.close(refusingPeer: "malformed message: \(problem.message)")
            return
        }
        let reply: Reply
        switch (role.withLock { $0 }, envelope.request) {
        case (.unknown, .hello(let hello)):
            reply = greet(hello)
        case (.unknown, _):
            reply = .failed(DaemonFailure(.invalid, "the first request of a connection must be hello"))
            send(.reply(id: envelope.id, reply))
            connection.close(refusingPeer: "the first request was not hello")
            return
        case (_, .hello):
            reply = .failed(DaemonFailure(.invalid, "hello was already said on this connection"))
        case (.app(let app), .app(let request)):
            // A submission is answered when its group commit is on disk, from whichever
            // thread commits; the rest at once.
            service.handle(request, from: app) { [weak self] reply in
                // A request the app posted without waiting never sees its reply: the log does.
                if case .failed(let failure) = reply { self?.log(.debug, app: app, "\(request.caseName) of \(app) refused: \(failure.message)") }
                self?.send(.reply(id: envelope.id, reply))
            }
            return
        case (.admin, .admin(let request)) where !request.onlyReads && daemonStopping():
            reply = .failed(DaemonFailure(.failed, "bgtaskd is stopping: \(request.caseName) was not carried out; do it again once bgtaskd runs again"))
        case (.admin, .admin(let request)):
            // `run` and `push` are answered once their launch was attempted (a spawn that
            // failed at once is the answer), possibly from another thread; the rest at once.
            service.handle(request) { [weak self] reply in self?.send(.reply(id: envelope.id, reply)) }
            return
        case (.app, .admin):
            reply = .failed(DaemonFailure(.notPermitted, "an app connection cannot make administrator requests"))
        case (.admin, .app):
            reply = .failed(DaemonFailure(.notPermitted, "an administrator connection cannot make app requests"))
        }
        send(.reply(id: envelope.id, reply))
        if case .failed(let failure) = reply, case .unknown = role.withLock({ $0 }) {
            // A busy answer is asked again every few hundred milliseconds: not a warning each
            // time; any other refusal is the peer's fault, logged with the server's throttle.
            if failure.code == .busy {
                log(.debug, app: nil, "refused \(connection.name): \(failure.message)")
                connection.close(reason: failure.message)
            } else {
                connection.close(refusingPeer: "refused: \(failure.message)")
            }
        }
    }

    private func greet(_ hello: Hello) -> Reply {
        let pid = connection.peer?.pid ?? 0
        switch hello.role {
        case .admin:
            // An administrator speaks for no app: a hello that names one means something the
            // daemon would otherwise drop (an outside probe's raw client), as an unknown key.
            if let app = hello.app {
                return .failed(DaemonFailure(.invalid, "an administrator's hello names no app, got '\(app.rawValue.excerpt(scalars: 200))'; an app's says role \"app\""))
            }
            role.withLock { $0 = .admin }
            return .welcome(Welcome(daemonPID: getpid()))
        case .app:
            switch service.identify(hello: hello, pid: pid) {
            case .failure(let failure):
                return .failed(failure)
            case .success(let app):
                guard let supervisor = service.supervisor(of: app) else {
                    return .failed(DaemonFailure(.notInstalled, "\(app) is not installed"))
                }
                // The role is set first: a push the supervisor sends at once is this app's.
                role.withLock { $0 = .app(app) }
                switch supervisor.connect(self, pid: pid) {
                case .accepted:
                    break
                case .busy:
                    role.withLock { $0 = .unknown }
                    return .failed(DaemonFailure(.busy, "bgtaskd's own process of \(app) (pid \(supervisor.processID.map(String.init) ?? "unknown")) is finishing its tasks, which are being expired; ask again shortly (one process per app)"))
                case .refused:
                    role.withLock { $0 = .unknown }
                    let holder = supervisor.processID.map { "bgtaskd's own process of \(app) (pid \($0))" }
                        ?? "another process of \(app)\(supervisor.connectedProcessID.map { " (pid \($0), started by the user)" } ?? "")"
                    return .failed(DaemonFailure(.appConnected, "\(holder) is already connected to bgtaskd; one process per app"))
                }
                log(.debug, app: app, "\(app) connected (pid \(pid))")
                return .welcome(Welcome(daemonPID: getpid(), backgroundRefreshEnabled: service.driver.backgroundRefreshEnabled(for: app)))
            }
        }
    }

    private func send(_ envelope: DaemonEnvelope) { Self.send(envelope, on: connection, log: log) }

    /// Sends `envelope` on `connection`. A connection found closed (the peer went before its
    /// reply: `EPIPE`) is noted at debug only: its close is the server's line to log, once
    /// (throttled under a flood, docs/protocol.md, "Limits"), not a second warning here.
    static func send(_ envelope: DaemonEnvelope, on connection: FrameConnection, log: BGDiagnosticLog) {
        do {
            var payload = try MessageCoding.encode(envelope)
            if payload.count > FrameFormat.maximumPayloadLength, case .reply(let id, _) = envelope {
                // A reply that cannot travel is answered, not dropped (the client would wait).
                payload = try MessageCoding.encode(DaemonEnvelope.reply(id: id, .failed(DaemonFailure(
                    .invalid, "the answer is \(payload.count) bytes, over the protocol's \(FrameFormat.maximumPayloadLength)-byte frame limit; ask for less (for example bgtask pending <app>)"))))
            }
            try connection.send(payload)
        } catch FrameConnection.SendError.closed(let reason) {
            log(.debug, app: nil, "could not send to \(connection.name): it is closed (\(reason))")
        } catch {
            log(.warning, app: nil, "could not send to \(connection.name): \(error)")
        }
    }

    // MARK: AppLink

    func push(_ message: AppPush) { send(.push(message)) }
    func close(reason: String) { connection.close(reason: reason) }
}
