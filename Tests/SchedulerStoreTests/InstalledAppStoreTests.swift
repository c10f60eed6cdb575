import Foundation
import SchedulerCore
import Testing
@testable import SchedulerStore

/// The daemon's tables: installed apps and the processes it launched for them.
@Suite("Installed apps in the store")
struct InstalledAppStoreTests {
    static func feedReader(installedAt: Date = Sample.now, executable: String = "/apps/feed/feedreader") -> InstalledApp {
        InstalledApp(
            app: Sample.app, manifestPath: "/apps/feed/Info.plist", executable: executable,
            launchArguments: ["--background", "", "a \"quoted\" / slashed ünïcödé argument"],
            permittedIdentifiers: ["com.example.feedreader.refresh", "com.example.feedreader.cleanup"],
            backgroundModes: ["fetch", "processing"], installedAt: installedAt)
    }

    static let photos = InstalledApp(
        app: Sample.otherApp, manifestPath: "/apps/photos/app.json", executable: "/apps/photos/photos",
        permittedIdentifiers: ["com.example.photos.export.*"], backgroundModes: [],
        installedAt: Date(timeIntervalSinceReferenceDate: 725_000_000.987_654_3))

    static func process(_ app: AppID = Sample.app, pid: Int32 = 4242) -> AppProcessRecord {
        AppProcessRecord(app: app, pid: pid, processGroup: pid, startTime: 123_456_789, cgroupPath: "/sys/fs/cgroup/user.slice/bgtaskd/\(app)", startedAt: Sample.now)
    }

    @Test("the plain reader of string arrays reads what it reads as JSONDecoder does, and leaves the rest to it")
    func plainStringArraysAgreeWithJSONDecoder() throws {
        let plain = [#"[]"#, #" [ ] "#, #"["a"]"#, #"["--background","","ünïcödé / slashed"]"#, "[\n \"a\" ,\t\"b\"\r\n]"]
        for json in plain {
            let decoded = try JSONDecoder().decode([String].self, from: Data(json.utf8))
            #expect(PlainStringArray.parse(json) == decoded, "\(json)")
        }
        // Escapes, control characters, other shapes and broken JSON: not the plain form.
        let other = [#"["a \"quoted\" one"]"#, #"["\u00e9"]"#, "[\"tab\there\"]", #"["a",]"#, #"["a""b"]"#, #"["a"] x"#,
                     #"{"a": "b"}"#, #"[1]"#, #"["a"#, #"[""#, "", #"[null]"#, #""a""#]
        for json in other {
            #expect(PlainStringArray.parse(json) == nil, "\(json)")
        }
        // What the store writes is read back either way.
        for strings in [["com.example.a", "com.example.b"], ["a \"quoted\" \\ one", "line\nbreak", "é"], []] {
            let encoded = String(decoding: try JSONEncoder().encode(strings), as: UTF8.self)
            let read = try PlainStringArray.parse(encoded) ?? JSONDecoder().decode([String].self, from: Data(encoded.utf8))
            #expect(read == strings)
        }
    }

    @Test("install, list, look up, reinstall replaces, across a reopen")
    func installAndReinstall() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        do {
            let store = try openStore(url)
            try store.installApp(Self.feedReader())
            try store.installApp(Self.photos)
            #expect(try store.installedApp(Sample.app) == Self.feedReader())
            #expect(try store.installedApp(AppID("com.example.absent")) == nil)
        }
        let store = try openStore(url)
        let listed = try store.installedApps()
        #expect(listed.apps == [Self.feedReader(), Self.photos])
        #expect(listed.unreadable.isEmpty)

        // A reinstall takes the new record and keeps the app's requests.
        try store.upsertRequest(Sample.request("com.example.feedreader.refresh"))
        let reinstalled = Self.feedReader(installedAt: Sample.now.addingTimeInterval(60), executable: "/apps/feed/v2/feedreader")
        try store.installApp(reinstalled)
        #expect(try store.installedApps().apps == [reinstalled, Self.photos])
        #expect(try store.pendingRequests(app: Sample.app).count == 1)
    }

    @Test("uninstall removes the app, its requests, settings, checkpoints and process in one go, and keeps its runs and other apps")
    func uninstallRemovesWhatTheAppLeft() throws {
        let directory = try TemporaryDirectory()
        let store = try openStore(directory.file("store.sqlite"))
        for app in [Self.feedReader(), Self.photos] { try store.installApp(app) }
        try store.upsertRequest(Sample.request("com.example.feedreader.refresh"))
        try store.upsertRequest(PendingRequest(app: Sample.app, identifier: "com.example.feedreader.cleanup", kind: .processing, submittedAt: Sample.now))
        try store.upsertRequest(Sample.request("com.example.photos.sync", app: Sample.otherApp))
        try store.setAppSetting("off", app: Sample.app, name: AppSettingName.backgroundRefresh)
        try store.setAppSetting("{}", app: Sample.app, name: AppSettingName.policyState)
        try store.setAppSetting("off", app: Sample.otherApp, name: AppSettingName.backgroundRefresh)
        #expect(try store.saveCheckpoint(Data([1, 2]), app: Sample.app, key: "offset", at: Sample.now) == nil)
        #expect(try store.saveCheckpoint(Data([3]), app: Sample.otherApp, key: "offset", at: Sample.now) == nil)
        try store.recordAppProcess(Self.process())
        try store.recordAppProcess(Self.process(Sample.otherApp, pid: 5000))
        // A finished run (its start consumed a request of its own).
        try store.upsertRequest(Sample.request("com.example.feedreader.earlier"))
        let run = Sample.run(1, of: Sample.request("com.example.feedreader.earlier"), startedAt: Sample.now.addingTimeInterval(-100))
        try store.recordRunStarted(run)
        var finished = run
        finished.endedAt = Sample.now.addingTimeInterval(-90)
        finished.outcome = .success
        finished.success = true
        try store.recordRunFinished(finished)

        let report = try store.uninstallApp(Sample.app)
        #expect(report.app == Sample.app)
        #expect(report.wasInstalled)
        #expect(report.removedRequests == ["com.example.feedreader.cleanup", "com.example.feedreader.refresh"])
        #expect(report.removedSettings == [AppSettingName.backgroundRefresh, AppSettingName.policyState])
        #expect(report.removedCheckpoints == ["offset"])
        #expect(report.removedProcess == Self.process())
        #expect(report.removedProcessRow)
        #expect(report.keptRuns == 1)

        #expect(try store.installedApps().apps == [Self.photos])
        #expect(try store.pendingRequests(app: Sample.app).isEmpty)
        #expect(try store.appSetting(app: Sample.app, name: AppSettingName.backgroundRefresh) == nil)
        #expect(try store.checkpointKeys(app: Sample.app).isEmpty)
        #expect(try store.appProcesses().processes == [Self.process(Sample.otherApp, pid: 5000)])
        #expect(try store.runs().map(\.id) == [RunID(1)], "the energy log keeps the run")
        // The other app is untouched.
        #expect(try store.pendingRequests(app: Sample.otherApp).map(\.identifier) == ["com.example.photos.sync"])
        #expect(try store.appSetting(app: Sample.otherApp, name: AppSettingName.backgroundRefresh) == "off")
        #expect(try store.checkpointKeys(app: Sample.otherApp) == ["offset"])

        // Again: nothing left, and it says the app was not installed.
        let again = try store.uninstallApp(Sample.app)
        #expect(!again.wasInstalled)
        #expect(!again.removedAnything)
        #expect(again.keptRuns == 1)
    }

    @Test("uninstall is one transaction: a failure part-way removes nothing")
    func uninstallIsAtomic() throws {
        let directory = try TemporaryDirectory()
        let store = try openStore(directory.file("store.sqlite"))
        try store.installApp(Self.feedReader())
        try store.upsertRequest(Sample.request("com.example.feedreader.refresh"))
        #expect(try store.saveCheckpoint(Data([1]), app: Sample.app, key: "k", at: Sample.now) == nil)
        // A trigger makes the last delete of the uninstall fail.
        try store.withConnection { (connection) throws(StoreError) in
            try connection.executeScript(
                "CREATE TRIGGER refuse BEFORE DELETE ON app_processes BEGIN SELECT RAISE(ABORT, 'refused by the test'); END")
        }
        try store.recordAppProcess(Self.process())
        #expect(throws: StoreError.self) { try store.uninstallApp(Sample.app) }
        #expect(try store.installedApp(Sample.app) != nil)
        #expect(try store.pendingRequests(app: Sample.app).count == 1)
        #expect(try store.checkpointKeys(app: Sample.app) == ["k"])
    }

    @Test("a store opened read-only lists installed apps and processes, and refuses to write")
    func readOnlyListing() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let owner = try openStore(url)
        try owner.installApp(Self.feedReader())
        try owner.recordAppProcess(Self.process())
        let before = try Data(contentsOf: url)

        let reader = try SchedulerStore.openForReading(at: url)
        #expect(try reader.installedApps().apps == [Self.feedReader()])
        #expect(try reader.installedApp(Sample.app) == Self.feedReader())
        #expect(try reader.appProcesses().processes == [Self.process()])
        let refused = try #require(throws: StoreError.self) { try reader.installApp(Self.photos) }
        #expect(refused.code == .readOnly)
        #expect(try Data(contentsOf: url) == before)
    }

    @Test("a reader of a store from before installed apps (version 3) lists none")
    func readerOfAnOlderStore() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        do {
            let store = try openStore(url)
            try store.upsertRequest(Sample.request("r"))
            try store.withConnection { (connection) throws(StoreError) in
                try connection.executeScript("DROP TABLE installed_apps; DROP TABLE app_processes; PRAGMA user_version = 3")
            }
        }
        let reader = try SchedulerStore.openForReading(at: url)
        #expect(try reader.installedApps().apps.isEmpty)
        #expect(try reader.installedApp(Sample.app) == nil)
        #expect(try reader.appProcesses().processes.isEmpty)
        #expect(try reader.pendingRequests().map(\.identifier) == ["r"])
    }

    @Test("a version-3 store migrates to the latest version and keeps its requests, runs, settings and quarantine")
    func migratesFromVersion3() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        // Build a version-3 store with the released steps 1 to 3 only.
        do {
            let connection = try SQLiteConnection.open(path: url.path, mode: .readWrite)
            _ = try connection.query("PRAGMA journal_mode = WAL") { $0.text(0) }
            for (index, step) in SchemaMigrations.steps.prefix(3).enumerated() {
                try connection.executeScript(step)
                try connection.executeScript("PRAGMA user_version = \(index + 1)")
            }
            try connection.executeScript("PRAGMA application_id = \(SchemaMigrations.applicationID)")
            try connection.execute(
                "INSERT INTO pending_requests (\(RequestColumns.names)) VALUES (\(RequestColumns.placeholders))",
                try RequestColumns.values(of: Sample.requestsUsingEveryField[1]))
            try connection.execute("INSERT INTO app_settings (app, name, value) VALUES (?, 'background-refresh', 'off')", [.text(Sample.app.rawValue)])
            try connection.execute(
                "INSERT INTO quarantined_requests (app, identifier, kind, submitted_at, requires_network, requires_power, reason, quarantined_at) VALUES ('x', 'y', 'bogus', 0, 0, 0, 'test', 0)")
        }
        #expect(try SchemaMigrations.version(of: SQLiteConnection.open(path: url.path, mode: .readOnly)) == 3)

        let (store, report) = try SchedulerStore.open(at: url, now: Sample.now)
        #expect(report.movedAsideCorruptFile == nil)
        let version = try store.withConnection { (connection) throws(StoreError) in try SchemaMigrations.version(of: connection) }
        #expect(version == 5)
        #expect(version == SchemaMigrations.latestVersion)
        #expect(try store.pendingRequests() == [Sample.requestsUsingEveryField[1]])
        #expect(try store.appSetting(app: Sample.app, name: AppSettingName.backgroundRefresh) == "off")
        #expect(try store.quarantinedRequests().map(\.reason) == ["test"])
        #expect(try store.installedApps().apps.isEmpty)
        try store.installApp(Self.feedReader())
        #expect(try store.installedApps().apps == [Self.feedReader()])
    }

    @Test("rows that cannot be read are reported with the reason, and the others listed")
    func badRowsAreReported() throws {
        let directory = try TemporaryDirectory()
        let store = try openStore(directory.file("store.sqlite"))
        try store.installApp(Self.feedReader())
        try store.recordAppProcess(Self.process())
        try store.withConnection { (connection) throws(StoreError) in
            try connection.executeScript(
                """
                INSERT INTO installed_apps VALUES ('com.example.badjson', '/m', '/e', 'not json', '[]', '[]', 0);
                INSERT INTO installed_apps VALUES ('com.example.numbers', '/m', '/e', '[1, 2]', '[]', '[]', 0);
                INSERT INTO installed_apps VALUES ('com.example.textdate', '/m', '/e', '[]', '[]', '[]', '2026-11-30');
                INSERT INTO installed_apps VALUES ('com.example.blobpath', X'2F6D', '/e', '[]', '[]', '[]', 0);
                INSERT INTO app_processes VALUES ('com.example.group1', 77, 1, 5, NULL, 0);
                INSERT INTO app_processes VALUES ('com.example.realpid', 77.5, 77, 5, NULL, 0);
                INSERT INTO app_processes VALUES ('com.example.negative', 77, 77, -5, NULL, 0);
                """)
        }
        let listed = try store.installedApps()
        #expect(listed.apps == [Self.feedReader()])
        let reasons = Dictionary(uniqueKeysWithValues: listed.unreadable.map { ($0.app, $0.reason) })
        #expect(reasons.count == 4)
        #expect(reasons["com.example.badjson"]?.contains("arguments of com.example.badjson is not a JSON array of strings") == true)
        #expect(reasons["com.example.numbers"]?.contains("arguments") == true)
        #expect(reasons["com.example.textdate"]?.contains("installed_at of com.example.textdate is text") == true)
        #expect(reasons["com.example.blobpath"]?.contains("manifest_path of com.example.blobpath is a blob") == true)
        #expect(listed.unreadable.allSatisfy { $0.table == "installed_apps" })
        let lookup = try #require(throws: StoreError.self) { try store.installedApp(AppID("com.example.badjson")) }
        #expect(lookup.code == .invalidData)

        let processes = try store.appProcesses()
        #expect(processes.processes == [Self.process()])
        let processReasons = Dictionary(uniqueKeysWithValues: processes.unreadable.map { ($0.app, $0.reason) })
        #expect(processReasons["com.example.group1"]?.contains("process group 1") == true)
        #expect(processReasons["com.example.realpid"]?.contains("pid of com.example.realpid is a real number") == true)
        #expect(processReasons["com.example.negative"]?.contains("start_time") == true)

        // Uninstalling an app whose process row is unreadable still removes the row.
        let report = try store.uninstallApp(AppID("com.example.group1"))
        #expect(report.removedProcessRow)
        #expect(report.removedProcess == nil)
        #expect(!report.wasInstalled)
    }

    @Test("a process is recorded, replaced, removed; pids and groups that could signal everything are refused")
    func appProcesses() throws {
        let store = try SchedulerStore.inMemory()
        try store.recordAppProcess(AppProcessRecord(app: Sample.app, pid: 100, processGroup: 100, startTime: 1, startedAt: Sample.now))
        let replaced = Self.process()
        try store.recordAppProcess(replaced)
        #expect(try store.appProcesses().processes == [replaced])
        #expect(try store.appProcesses().processes.first?.cgroupPath == replaced.cgroupPath)

        for (pid, group) in [(Int32(1), Int32(50)), (0, 50), (-3, 50), (50, 1), (50, 0), (50, -1)] {
            let refused = try #require(throws: StoreError.self) {
                try store.recordAppProcess(AppProcessRecord(app: Sample.otherApp, pid: pid, processGroup: group, startTime: 1, startedAt: Sample.now))
            }
            #expect(refused.code == .invalidData)
            #expect(refused.message.contains(Sample.otherApp.rawValue))
        }
        let huge = try #require(throws: StoreError.self) {
            try store.recordAppProcess(AppProcessRecord(app: Sample.otherApp, pid: 9, processGroup: 9, startTime: .max, startedAt: Sample.now))
        }
        #expect(huge.message.contains("start time"))
        #expect(try store.appProcesses().processes == [replaced])

        #expect(try store.removeAppProcess(app: Sample.app))
        #expect(try !store.removeAppProcess(app: Sample.app))
        #expect(try store.appProcesses().processes.isEmpty)
    }

    @Test("a store opened for the daemon (no app) keeps every app's requests; an app's own store quarantines the others")
    func daemonStoreKeepsEveryApp() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        do {
            let store = try openStore(url)
            try store.upsertRequest(Sample.request("com.example.feedreader.refresh"))
            try store.upsertRequest(Sample.request("com.example.photos.sync", app: Sample.otherApp))
        }
        do {
            let (store, report) = try SchedulerStore.open(at: url, now: Sample.now, options: StoreOptions(app: nil))
            #expect(report.quarantinedRequests.isEmpty)
            #expect(try store.pendingRequests().count == 2)
        }
        let (store, report) = try SchedulerStore.open(at: url, now: Sample.now, options: StoreOptions(app: Sample.app))
        #expect(report.quarantinedRequests.map(\.app) == [Sample.otherApp.rawValue])
        #expect(try store.pendingRequests().map(\.app) == [Sample.app])
    }
}
