@testable import BackgroundTasks
import BackgroundTasksTesting
import DeviceConditions
import Foundation
import SchedulerStore
import Synchronization
import Testing
import SchedulerCore

@Suite struct EmbeddedSchedulerTests {
    /// A diagnostic is one line of standard error: a quoted multi-line error (SQLite's
    /// integrity report) keeps its line ends written out, control characters are escaped.
    @Test func aDiagnosticIsOneLineOfStandardError() {
        let message = BGDiagnosticMessage(.error, app: nil, "the database was corrupt (*** in database main ***\nPage 4: btreeInitPage() returns error code 11)\u{1B}[2J")
        let line = BGDiagnosticLog.line(of: message)
        #expect(line == "bgtask error: the database was corrupt (*** in database main ***\\nPage 4: btreeInitPage() returns error code 11)\\u001B[2J")
        #expect(!line.contains("\n"))
    }

    /// The warning about a BGTASK_POLICY an app cannot use names the variable once (it read
    /// "BGTASK_POLICY: BGTASK_POLICY: expected ..."), and a file's error still names it.
    @Test func aBadPolicyVariableIsNamedOnce() throws {
        guard case .failure(let word) = EmbeddedScheduler.policyConfiguration(from: "phoen") else {
            Issue.record("phoen was accepted")
            return
        }
        let text = EmbeddedScheduler.policyVariableProblem(word)
        #expect(text.hasPrefix("BGTASK_POLICY: expected"), "\(text)")
        #expect(text.components(separatedBy: "BGTASK_POLICY").count == 2, "\(text)")
        let missing = "/nonexistent-bgtask/policy.json"
        guard case .failure(let file) = EmbeddedScheduler.policyConfiguration(from: missing) else {
            Issue.record("\(missing) was accepted")
            return
        }
        #expect(EmbeddedScheduler.policyVariableProblem(file).hasPrefix("BGTASK_POLICY: \(missing)"))
    }

    private func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-embedded-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    private func configuration(state: URL) -> EmbeddedScheduler.Configuration {
        EmbeddedScheduler.Configuration(
            app: testApp,
            manifest: testManifest,
            stateDirectory: state,
            // Nothing from this machine or the developer's environment (BGTASK_MANUAL_LAUNCH...).
            scheduler: EmbeddedScheduler.defaultSchedulerConfiguration(environment: [:], machineIDFile: nil),
            conditions: FixedConditions(),
            log: .collecting(),
            policy: PolicyConfiguration()
        )
    }

    @Test func bgtaskPolicyNamesAProfileOrAFile() throws {
        #expect(try EmbeddedScheduler.policyConfiguration(from: nil).get() == PolicyConfiguration())
        #expect(try EmbeddedScheduler.policyConfiguration(from: "").get() == PolicyConfiguration())
        #expect(try EmbeddedScheduler.policyConfiguration(from: "phone").get() == PolicyProfile.phone.defaults)
        #expect(try EmbeddedScheduler.policyConfiguration(from: "server").get() == PolicyProfile.server.defaults)
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("policy.json")
        try Data(#"{"profile": "server", "maximumDeferral": 3600}"#.utf8).write(to: file)
        let loaded = try EmbeddedScheduler.policyConfiguration(from: file.path).get()
        #expect(loaded.profile == .server && loaded.maximumDeferral == 3600)
        // A misspelt profile is not taken for a file; a missing file is named.
        guard case .failure(let typo) = EmbeddedScheduler.policyConfiguration(from: "sever") else { Issue.record("accepted"); return }
        #expect(typo.description.contains("BGTASK_POLICY") && typo.description.contains("\"sever\""), "\(typo)")
        let missing = directory.appendingPathComponent("none.json").path
        guard case .failure(let absent) = EmbeddedScheduler.policyConfiguration(from: missing) else { Issue.record("accepted"); return }
        #expect(absent.description.contains(missing), "\(absent)")
        // The default reads the variable, and a bad one falls back to the phone's profile.
        #expect(EmbeddedScheduler.defaultPolicyConfiguration(environment: ["BGTASK_POLICY": "server"]).profile == .server)
        #expect(EmbeddedScheduler.defaultPolicyConfiguration(environment: [:]).profile == .phone)
    }

    @Test func defaultsComeFromTheEnvironmentTheSchedulerStartsWithAndWhatCodeSetsWins() throws {
        let state = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: state) }
        let environment = ["BGTASK_POLICY": "server", "BACKGROUND_TASK_SIMULATE_EXPIRATION": "YES", "BGTASK_MANUAL_LAUNCH": "1"]
        // Nothing chosen in code: the start's environment decides (not the process's).
        let unchosen = EmbeddedScheduler.Configuration(app: testApp, manifest: testManifest, stateDirectory: state, conditions: FixedConditions(), log: .collecting())
        let fromEnvironment = EmbeddedScheduler.makeContext(unchosen, environment: environment)
        #expect(fromEnvironment.driver.policyConfiguration.profile == .server)
        #expect(fromEnvironment.driver.configuration.budget(for: .appRefresh) == 5)
        #expect(fromEnvironment.driver.configuration.launchesOnlyWhenSimulated)
        fromEnvironment.driver.store?.close()
        let plain = EmbeddedScheduler.makeContext(unchosen, environment: [:])
        #expect(plain.driver.policyConfiguration.profile == .phone)
        #expect(plain.driver.configuration.budget(for: .appRefresh) == SchedulerConfiguration().budget(for: .appRefresh))
        #expect(!plain.driver.configuration.launchesOnlyWhenSimulated)
        plain.driver.store?.close()
        // Chosen in code (here, by changing one value): the environment is not read for it.
        var chosen = unchosen
        chosen.policy = PolicyProfile.phone.defaults
        chosen.scheduler = EmbeddedScheduler.defaultSchedulerConfiguration(environment: [:], machineIDFile: nil)
        let fromCode = EmbeddedScheduler.makeContext(chosen, environment: environment)
        #expect(fromCode.driver.policyConfiguration.profile == .phone)
        #expect(!fromCode.driver.configuration.launchesOnlyWhenSimulated)
        fromCode.driver.store?.close()
    }

    @Test func aBadSharedStoreAddressMakesEverySubmitUnavailableWithoutShowingThePassword() throws {
        let state = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: state) }
        for address in ["postgresql://worker:s3cret-Pw@db.example:99999/jobs", "postgresql://worker:s3cret-Pw@/jobs?sslmode=bogus", "nonsense s3cret-Pw"] {
            var configuration = configuration(state: state)
            configuration.store = .postgreSQL(address: address)
            let context = EmbeddedScheduler.makeContext(configuration, environment: [:])
            #expect(context.driver.store == nil)
            do {
                try context.driver.submit(PendingRequest(app: testApp, identifier: processingID, kind: .processing, submittedAt: testStart))
                Issue.record("accepted with \(address)")
            } catch {
                #expect(error.code == .unavailable)
                let text = "\(error)"
                #expect(text.contains("shared store"), "\(text)")
                #expect(!text.contains("s3cret-Pw"), "the password is shown: \(text)")
            }
        }
        // BGTASK_STORE_URL chooses it too, and an empty one is no choice.
        #expect(StoreChoice.automatic.sharedAddress(environment: ["BGTASK_STORE_URL": "postgresql:///jobs"]) == "postgresql:///jobs")
        #expect(StoreChoice.automatic.sharedAddress(environment: ["BGTASK_STORE_URL": ""]) == nil)
        #expect(StoreChoice.sqlite.sharedAddress(environment: ["BGTASK_STORE_URL": "postgresql:///jobs"]) == nil)
        #expect(EmbeddedScheduler.sharedStoreLease(configured: nil, environment: ["BGTASK_STORE_LEASE": "5"]).lease == 5)
        #expect(EmbeddedScheduler.sharedStoreLease(configured: nil, environment: ["BGTASK_STORE_LEASE": "1e9"]).problem?.contains("BGTASK_STORE_LEASE=1e9") == true)
        #expect(EmbeddedScheduler.sharedStoreLease(configured: 0, environment: [:]).lease == 30)
    }

    @Test func anEmbeddedSchedulerJudgesWithItsConfiguredProfile() throws {
        let state = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: state) }
        var configuration = configuration(state: state)
        configuration.policy = PolicyProfile.server.defaults
        let context = EmbeddedScheduler.makeContext(configuration, environment: [:])
        #expect(context.driver.policyConfiguration.profile == .server)
    }

    /// docs/ARCHITECTURE.md, "One owner per state directory": a second scheduler on the same
    /// state (here in the same process; `ProcessTests.Ownership` does it with two processes)
    /// is refused, and the owner's requests are on disk for the next owner.
    @Test func aSecondSchedulerOnTheSameStateIsRefusedAndTheOwnersRequestsAreOnDisk() throws {
        let state = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: state) }
        let first = EmbeddedScheduler.makeContext(configuration(state: state))
        first.withCurrent {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: processingID, using: nil) { $0.setTaskCompleted(success: true) }
        }
        let request = BGProcessingTaskRequest(identifier: processingID)
        request.earliestBeginDate = Date(timeIntervalSinceNow: 3600)
        try first.withCurrent { try BGTaskScheduler.shared.submit(request) }

        let database = state.appendingPathComponent("scheduler.sqlite")
        #expect(try SchedulerStore.openForReading(at: database).pendingRequests(app: testApp).map(\.identifier) == [processingID])

        let log = BGDiagnosticLog.collecting()
        var settings = configuration(state: state)
        settings.log = log
        let second = EmbeddedScheduler.makeContext(settings)
        second.withCurrent {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: processingID, using: nil) { $0.setTaskCompleted(success: true) }
        }
        #expect(second.driver.store == nil)
        #expect(second.driver.pendingRequests(of: testApp).isEmpty)
        #expect {
            try second.withCurrent { try BGTaskScheduler.shared.submit(BGProcessingTaskRequest(identifier: processingID)) }
        } throws: { error in
            guard let error = error as? BGTaskScheduler.Error else { return false }
            return error.code == .unavailable && error.message.contains("process \(getpid())") && error.message.contains(database.path)
        }
        #expect(log.messages.contains { $0.level == .error && $0.text.contains("another process of \(testApp) owns its scheduler state") })
        // The refused scheduler changed nothing.
        #expect(first.driver.pendingRequests(of: testApp).map(\.identifier) == [processingID])
        #expect(try SchedulerStore.openForReading(at: database).pendingRequests(app: testApp).count == 1)
    }

    @Test func stateDirectoryUnderAFileOrInASymlinkLoopIsNamed() throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let file = parent.appendingPathComponent("plain")
        try Data("x".utf8).write(to: file)
        let underFile = try #require(throws: EmbeddedSchedulerError.self) {
            _ = try EmbeddedScheduler.stateDirectory(for: testApp, configured: file.appendingPathComponent("state"))
        }
        #expect(underFile.message.contains("\(file.path) is a regular file"), "\(underFile.message)")
        let a = parent.appendingPathComponent("a"), b = parent.appendingPathComponent("b")
        try FileManager.default.createSymbolicLink(at: a, withDestinationURL: b)
        try FileManager.default.createSymbolicLink(at: b, withDestinationURL: a)
        let loop = try #require(throws: EmbeddedSchedulerError.self) {
            _ = try EmbeddedScheduler.stateDirectory(for: testApp, configured: a.appendingPathComponent("state"))
        }
        #expect(loop.message.contains("\(a.path) is a symbolic link that loops"), "\(loop.message)")
        // No raw Foundation error code (512); the random temporary path may contain the digits.
        #expect(!loop.message.replacingOccurrences(of: parent.path, with: "").contains("512"), "\(loop.message)")
    }

    @Test func stateDirectoryThatIsAFileMakesSubmitUnavailableNamingThePath() throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let file = parent.appendingPathComponent("not-a-directory")
        try Data("x".utf8).write(to: file)
        let context = EmbeddedScheduler.makeContext(configuration(state: file))
        context.withCurrent {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { $0.setTaskCompleted(success: true) }
        }
        #expect(context.application.backgroundRefreshStatus == .restricted)
        #expect {
            try context.withCurrent { try BGTaskScheduler.shared.submit(BGAppRefreshTaskRequest(identifier: refreshID)) }
        } throws: { error in
            guard let error = error as? BGTaskScheduler.Error else { return false }
            return error.code == .unavailable && error.message.contains(file.path)
                && error.message.contains("runs without its store until the app is started again")
        }
        #expect(try Data(contentsOf: file) == Data("x".utf8), "the file in the way is left untouched")
    }

    @Test func corruptDatabaseIsMovedAsideAndAFreshOneStarted() throws {
        let state = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: state) }
        let database = state.appendingPathComponent("scheduler.sqlite")
        try Data(repeating: 0xA5, count: 8192).write(to: database)
        let log = BGDiagnosticLog.collecting()
        var settings = configuration(state: state)
        settings.log = log
        let context = EmbeddedScheduler.makeContext(settings)
        #expect(context.driver.store != nil)
        let names = try FileManager.default.contentsOfDirectory(atPath: state.path)
        #expect(names.contains { $0.hasPrefix("scheduler.sqlite.corrupt-") })
        #expect(log.messages.contains { $0.level == .error && $0.text.contains("corrupt") })
    }

    @Test func stateDirectoryDefaultsToXDGStateHome() throws {
        let base = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: base) }
        let directory = try EmbeddedScheduler.stateDirectory(for: testApp, configured: nil, environment: ["XDG_STATE_HOME": base.path, "HOME": "/nonexistent"])
        #expect(directory.path == base.appendingPathComponent("bgtask/com.example.test").path)
        let fallback = try EmbeddedScheduler.stateDirectory(for: testApp, configured: nil, environment: ["HOME": base.path])
        #expect(fallback.path == base.appendingPathComponent(".local/state/bgtask/com.example.test").path)
        #expect(throws: EmbeddedSchedulerError.self) {
            try EmbeddedScheduler.stateDirectory(for: testApp, configured: nil, environment: [:])
        }
    }

    /// An app named in code with a name that leaves the state root gets no directory
    /// there (it would become the owner of another app's, or of any, directory).
    @Test func anAppNameThatIsNotOneDirectoryNameGetsNoStateDirectory() throws {
        let base = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: base) }
        for name in ["..", "../com.example.other", "com.example/sub", ""] {
            #expect(throws: EmbeddedSchedulerError.self, "\(name)") {
                try EmbeddedScheduler.stateDirectory(for: AppID(name), configured: nil, environment: ["XDG_STATE_HOME": base.path])
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: base.path).isEmpty)
        // A process name that is not reverse-DNS still gets its own directory.
        let local = try EmbeddedScheduler.stateDirectory(for: AppID("local.my tool+1"), configured: nil, environment: ["XDG_STATE_HOME": base.path])
        #expect(local.lastPathComponent == "local.my tool+1")
    }

    /// A program that bgtaskd's launched app runs inherits the launch variables; only the
    /// process whose parent is the daemon (or whose daemon is gone) is the launched app.
    @Test func onlyTheDaemonsOwnChildIsTheLaunchedApp() {
        let daemon: pid_t = 4242
        let launch = ["BGTASK_LAUNCH": "background", "BGTASK_DAEMON_SOCKET": "/run/bgtaskd.sock", "BGTASK_DAEMON_PID": "4242"]
        let alive: (pid_t) -> Bool = { _ in true }
        #expect(EmbeddedScheduler.isDaemonLaunch(environment: launch, parentPID: daemon, isRunning: alive))
        // The app's own child: its parent is the app.
        #expect(!EmbeddedScheduler.isDaemonLaunch(environment: launch, parentPID: 5000, isRunning: alive))
        // The daemon died and the app was reparented: still the launched app.
        #expect(EmbeddedScheduler.isDaemonLaunch(environment: launch, parentPID: 1, isRunning: { _ in false }))
        // A daemon that does not say its pid: the variable alone decides, as before.
        var unnamed = launch
        unnamed["BGTASK_DAEMON_PID"] = nil
        #expect(EmbeddedScheduler.isDaemonLaunch(environment: unnamed, parentPID: 5000, isRunning: alive))
        // Not a launch, and a pid that cannot be one.
        #expect(!EmbeddedScheduler.isDaemonLaunch(environment: ["BGTASK_DAEMON_PID": "4242"], parentPID: daemon, isRunning: alive))
        for bad in ["", "0", "-3", "x", "99999999999"] {
            var broken = launch
            broken["BGTASK_DAEMON_PID"] = bad
            #expect(!EmbeddedScheduler.isDaemonLaunch(environment: broken, parentPID: daemon, isRunning: alive), "\(bad)")
        }
        // The real check of a process's liveness: this process is running and is not its
        // own parent, so a process claiming it as its daemon is not the launched app.
        #expect(!EmbeddedScheduler.isDaemonLaunch(environment: ["BGTASK_LAUNCH": "background", "BGTASK_DAEMON_PID": String(getpid())], parentPID: 1))
        // Started for the user (a tap on a notification): the daemon's, into the foreground.
        var opened = launch
        opened["BGTASK_LAUNCH"] = "opened"
        #expect(EmbeddedScheduler.daemonLaunch(environment: opened, parentPID: daemon, isRunning: alive) == .opened)
        #expect(EmbeddedScheduler.daemonLaunch(environment: launch, parentPID: daemon, isRunning: alive) == .background)
        opened["BGTASK_LAUNCH"] = "foreground"
        #expect(EmbeddedScheduler.daemonLaunch(environment: opened, parentPID: daemon, isRunning: alive) == nil, "a value bgtaskd never sets")
    }

    @Test func realTimeDriverRunsADueTaskInProcess() async throws {
        let state = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: state) }
        let context = EmbeddedScheduler.makeContext(configuration(state: state))
        let ran = AsyncStream<Bool>.makeStream()
        context.withCurrent {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { task in
                task.setTaskCompleted(success: true)
                ran.continuation.yield(true)
            }
        }
        context.application.finishLaunching()
        let request = BGAppRefreshTaskRequest(identifier: refreshID)
        request.earliestBeginDate = Date(timeIntervalSinceNow: 0.05)
        try context.withCurrent { try BGTaskScheduler.shared.submit(request) }
        // Waits for the handler's signal (an event), not for a guessed delay; the 60 s
        // bound only turns a scheduler that never runs the task into a failure, not a hang.
        let timeout = Task {
            try await Task.sleep(for: .seconds(60))
            ran.continuation.yield(false)
        }
        var iterator = ran.stream.makeAsyncIterator()
        #expect(await iterator.next() == true, "the due task did not run within 60 s")
        timeout.cancel()
    }
}

@Suite struct ManifestDiscoveryTests {
    private func scratch() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-manifest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    private let json = #"{"CFBundleIdentifier": "com.example.found", "BGTaskSchedulerPermittedIdentifiers": ["com.example.found.refresh"], "UIBackgroundModes": ["fetch"]}"#

    @Test func manifestFromTheEnvironmentVariable() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("manifest.json")
        try Data(json.utf8).write(to: file)
        let manifest = try EmbeddedScheduler.loadManifest(.init(), environment: ["BGTASK_MANIFEST": file.path], executable: directory.appendingPathComponent("app"))
        #expect(manifest.appID == AppID("com.example.found"))
    }

    @Test func manifestBesideTheExecutable() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(json.utf8).write(to: directory.appendingPathComponent("server.bgtask.json"))
        let manifest = try EmbeddedScheduler.loadManifest(.init(), environment: [:], executable: directory.appendingPathComponent("server"))
        #expect(manifest.permittedIdentifiers == ["com.example.found.refresh"])
    }

    @Test func missingManifestSaysWhereToPutOne() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect {
            try EmbeddedScheduler.loadManifest(.init(), environment: [:], executable: directory.appendingPathComponent("server"))
        } throws: { error in
            "\(error)".contains("BGTASK_MANIFEST") && "\(error)".contains("server.bgtask.json")
        }
    }

    /// A candidate beside the executable that is a link loop is skipped, as Bundle.main
    /// skips it, but named in the error instead of left for the user to find in `ls`.
    @Test func aManifestBesideTheExecutableThatIsALinkLoopIsNamed() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let loop = directory.appendingPathComponent("Info.plist").path
        try FileManager.default.createSymbolicLink(atPath: loop, withDestinationPath: loop)
        #expect {
            try EmbeddedScheduler.loadManifest(.init(), environment: [:], executable: directory.appendingPathComponent("server"))
        } throws: { error in
            "\(error)".hasPrefix("no app manifest: ") && "\(error)".hasSuffix("; \(loop) is there but cannot be read: it is a symbolic link loop (too many levels of symbolic links)")
        }
        // A readable candidate after it is still found.
        try Data(json.utf8).write(to: directory.appendingPathComponent("server.bgtask.json"))
        #expect(try EmbeddedScheduler.loadManifest(.init(), environment: [:], executable: directory.appendingPathComponent("server")).appID == AppID("com.example.found"))
    }

    @Test func manifestWithAWrongTypeNamesTheFileAndKey() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("Info.plist")
        try Data(#"{"UIBackgroundModes": "fetch"}"#.utf8).write(to: file)
        #expect {
            try EmbeddedScheduler.loadManifest(.init(manifestURL: file))
        } throws: { error in
            "\(error)".contains(file.path) && "\(error)".contains("UIBackgroundModes")
        }
    }
}

@Suite struct RunLogRetentionTests {
    @Test func runsOlderThanTheRetentionArePrunedAsNewRunsFinish() async throws {
        let store = try SchedulerStore.inMemory()
        let old = RunRecord(
            id: RunID(1),
            request: PendingRequest(app: testApp, identifier: refreshID, kind: .appRefresh, submittedAt: testStart.addingTimeInterval(-40 * 86_400)),
            startedAt: testStart.addingTimeInterval(-40 * 86_400), endedAt: testStart.addingTimeInterval(-40 * 86_400 + 5),
            outcome: .success, success: true, stopReason: "completed")
        try store.recordRunStarted(old)
        try store.recordRunFinished(old)
        let device = try SimulatedDevice(start: testStart, store: store, policies: .foundation)
        let context = device.install(app: testApp, manifest: testManifest) {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { $0.setTaskCompleted(success: true) }
        }
        try submit(refresh(after: 60), in: context)
        await device.run(for: 120)
        let remaining = try store.runs().map(\.id)
        #expect(!remaining.contains(RunID(1)), "the 40-day-old run is pruned")
        #expect(remaining.count == 1, "the new run is kept")
    }
}

/// What the policies learn of an app is saved with each run's record and with each
/// foreground, and a new driver on the same store starts from it.
@Suite struct PolicyStatePersistenceTests {
    private func savedState(in store: SchedulerStore) throws -> AppPolicyState {
        let text = try #require(try store.appSetting(app: testApp, name: AppSettingName.policyState))
        return try JSONDecoder().decode(AppPolicyState.self, from: Data(text.utf8))
    }

    @Test func learnedStateIsSavedWithTheRunAndRestoredByTheNextDriver() async throws {
        let store = try SchedulerStore.inMemory()
        let first = try SimulatedDevice(start: testStart, store: store, policies: .foundation)
        let context = first.install(app: testApp, manifest: testManifest) {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { $0.setTaskCompleted(success: true) }
        }
        try submit(refresh(after: 60), in: context)
        await first.run(for: 120)
        let run = try #require(first.runs(of: refreshID).first)
        #expect(try savedState(in: store).lastLaunch == run.startedAt, "saved in the run's finishing transaction")
        let foregrounds = try savedState(in: store).usage.foregroundCount
        first.driver.appForegrounded(testApp)
        #expect(try savedState(in: store).usage.foregroundCount == foregrounds + 1, "saved as the foreground is learned")

        // A restart 20 s after the run: the rate limit (launches at least 60 s apart) knows
        // about the run only through the saved state.
        let second = try SimulatedDevice(start: run.startedAt.addingTimeInterval(20), store: store)
        let restarted = second.install(app: testApp, manifest: testManifest) {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { $0.setTaskCompleted(success: true) }
        }
        try submit(refresh(after: 0), in: restarted)
        let explanation = second.driver.explain(RequestKey(app: testApp, identifier: refreshID))
        let rateLimit = try #require(explanation.evaluation?.decisions.first { $0.policy == "rate-limit" })
        #expect(rateLimit.verdict == .mustNotProceed, "\(rateLimit)")
        #expect(rateLimit.rationale.contains("20 s ago"), "\(rateLimit.rationale)")
    }

    /// A saved state whose launch ledger is damaged is kept without it, and the log says so,
    /// naming the field; an intact one says nothing.
    @Test func aDamagedLaunchLedgerIsDroppedWithAWarning() async throws {
        var state = AppPolicyState(usage: UsageModel(createdAt: testStart))
        state.recordLaunch(at: testStart, now: testStart, refreshesAllowed: true)
        var object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(state)) as? [String: Any])
        var ledger = try #require(object["launchLedger"] as? [String: Any])
        ledger["decayedCount"] = -1.0
        object["launchLedger"] = ledger
        let damaged = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        let intact = String(decoding: try JSONEncoder().encode(state), as: UTF8.self)
        for (text, isDamaged) in [(damaged, true), (intact, false)] {
            let store = try SchedulerStore.inMemory()
            try store.setAppSetting(text, app: testApp, name: AppSettingName.policyState)
            let device = try SimulatedDevice(start: testStart.addingTimeInterval(60), store: store, policies: .foundation)
            _ = device.install(app: testApp, manifest: testManifest) {}
            let warnings = device.log.messages.filter { $0.level == .warning && $0.text.contains("launch ledger") }
            if isDamaged {
                #expect(warnings.count == 1 && warnings.allSatisfy { $0.text.contains("launchLedger.decayedCount") }, "\(warnings)")
                #expect(device.driver.policyState(of: testApp)?.lastLaunch == testStart, "the rest of the state is kept")
            } else {
                #expect(warnings.isEmpty, "\(warnings)")
            }
        }
    }

    @Test func aNetworkLossLearnedIsSavedAsTheNetworkComesBack() async throws {
        let store = try SchedulerStore.inMemory()
        let device = try SimulatedDevice(start: testStart, store: store, policies: .foundation)
        // An app the user opened once: nothing runs, so no run's transaction saves the state.
        _ = device.install(app: testApp, manifest: testManifest) {}
        device.driver.appForegrounded(testApp)
        let lost = device.now.addingTimeInterval(600)
        device.setConditions(Conditions(externalPower: true, networkAvailable: false), at: lost)
        await device.run(for: 3 * 3_600)
        #expect(try savedState(in: store).usage.networkLossHours(at: device.now).isEmpty, "not learned while still away")
        device.setConditions(Conditions(externalPower: true, networkAvailable: true))
        await device.settle()
        let usage = try savedState(in: store).usage
        #expect(usage.networkLossShare(hourOfWeek: usage.hourOfWeek(of: lost), at: device.now) > 0.99)
    }
}

/// `EmbeddedScheduler.bootstrap` racing the first use of the API and other calls of itself
/// (its gate, on an instance: the process's own is global): the first offer is taken by the
/// first use, every other is refused with why, none is lost.
@Suite struct BootstrapGateTests {
    @Test(arguments: 0..<20)
    func anOfferRacingTheFirstUseIsTakenOrRefusedNeverLost(round: Int) {
        let gate = BootstrapGate<Int>()
        let accepted = Mutex<[Int]>([])
        let refusedAsSecond = Mutex<Int>(0)
        let refusedAsLate = Mutex<Int>(0)
        let taken = Mutex<Int??>(nil)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            if thread == round % 8 {
                let value = gate.close()
                taken.withLock { $0 = .some(value) }
                return
            }
            switch gate.offer(thread) {
            case .success: accepted.withLock { $0.append(thread) }
            case .failure(.alreadyOffered): refusedAsSecond.withLock { $0 += 1 }
            case .failure(.alreadyUsed): refusedAsLate.withLock { $0 += 1 }
            }
        }
        let took = taken.withLock { $0 } ?? nil
        let offers = accepted.withLock { $0 }
        // At most one offer is accepted; the first use took it (or nothing was offered
        // before it), and every offer after the accepted one was refused as a second call.
        #expect(offers.count <= 1)
        if let took { #expect(offers == [took]) } else { #expect(offers.isEmpty) }
        let second = refusedAsSecond.withLock { $0 }
        if second > 0 { #expect(offers.count == 1, "a second offer is refused only after a first was accepted") }
        #expect(offers.count + second + refusedAsLate.withLock { $0 } == 7, "every offer accepted or refused")
        guard case .failure(.alreadyUsed) = gate.offer(99) else {
            Issue.record("after the first use every offer is refused as too late")
            return
        }
        #expect(gate.close() == took, "closing again takes nothing new")
    }

    @Test func aSecondOfferIsRefusedAndTheFirstStands() {
        let gate = BootstrapGate<Int>()
        guard case .success = gate.offer(1), case .failure(.alreadyOffered) = gate.offer(2) else {
            Issue.record("the second offer was not refused as a second")
            return
        }
        #expect(gate.close() == 1)
    }
}
