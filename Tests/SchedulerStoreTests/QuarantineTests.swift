import Foundation
import SchedulerCore
import Testing
@testable import SchedulerStore

/// docs/ARCHITECTURE.md, "Bad rows are quarantined": one unreadable row hides nothing else
/// and is never launched or deleted.
@Suite("Quarantine of pending requests that cannot be loaded")
struct QuarantineTests {
    /// Inserts a raw row into `pending_requests`, bypassing the encoder.
    private func insertRaw(_ store: SchedulerStore, _ valuesSQL: String) throws {
        try store.withConnection { (connection) throws(StoreError) in
            try connection.executeScript(
                "INSERT INTO pending_requests (\(RequestColumns.names)) VALUES (\(valuesSQL))"
            )
        }
    }

    private static let good = [
        Sample.request("com.example.feedreader.refresh", submittedAt: Sample.now),
        PendingRequest(app: Sample.app, identifier: "com.example.feedreader.sync", kind: .processing, submittedAt: Sample.now.addingTimeInterval(1)),
    ]

    /// A store with the good requests and five bad rows: an unknown kind, bad extras JSON, a
    /// TEXT date (which SQLite would read as 2026 s after 2001-01-01), a date 1e300 s away
    /// (no calendar date: `why` printed "<description unavailable>"), and another app's row.
    private func storeWithBadRows(_ url: URL) throws {
        let store = try openStore(url)
        for request in Self.good { try store.upsertRequest(request) }
        let submitted = Sample.now.timeIntervalSinceReferenceDate
        try insertRaw(store, "'\(Sample.app)', 'com.example.feedreader.kind', 'teleport', NULL, \(submitted), 0, 0, NULL")
        try insertRaw(store, "'\(Sample.app)', 'com.example.feedreader.json', 'processing', NULL, \(submitted), 0, 0, '{not json'")
        try insertRaw(store, "'\(Sample.app)', 'com.example.feedreader.date', 'processing', '2026-11-30 10:00:00', \(submitted), 0, 0, NULL")
        try insertRaw(store, "'\(Sample.app)', 'com.example.feedreader.far', 'processing', 1e300, \(submitted), 0, 0, NULL")
        try insertRaw(store, "'\(Sample.otherApp)', 'com.example.photos.sync', 'processing', NULL, \(submitted), 0, 0, NULL")
    }

    @Test("the owner quarantines each bad row with its reason and loads the others")
    func ownerQuarantines() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        try storeWithBadRows(url)
        let later = Sample.now.addingTimeInterval(60)
        let (store, report) = try SchedulerStore.open(at: url, now: later, options: StoreOptions(app: Sample.app))

        #expect(try store.pendingRequests() == Self.good)
        // What the opening loaded is what the owner restores without reading again.
        #expect(Set(report.loadedRequests) == Set(Self.good))
        let byIdentifier = Dictionary(uniqueKeysWithValues: report.quarantinedRequests.map { ($0.identifier, $0) })
        #expect(Set(byIdentifier.keys) == ["com.example.feedreader.kind", "com.example.feedreader.json", "com.example.feedreader.date", "com.example.feedreader.far", "com.example.photos.sync"])
        #expect(byIdentifier["com.example.feedreader.far"]?.reason.contains("earliest_begin of com.example.feedreader/com.example.feedreader.far is 1e+300 seconds from 2001-01-01, not a date between 0001-01-01 and 4001-01-01") == true)
        #expect(byIdentifier["com.example.feedreader.kind"]?.reason.contains("unknown task kind \"teleport\"") == true)
        #expect(byIdentifier["com.example.feedreader.json"]?.reason == "cannot decode the extra fields of com.example.feedreader/com.example.feedreader.json (\"{not json\"): at extras: The given data was not valid JSON.")
        #expect(byIdentifier["com.example.feedreader.date"]?.reason.contains("earliest_begin") == true)
        #expect(byIdentifier["com.example.feedreader.date"]?.reason.contains("2026-11-30") == true)
        #expect(byIdentifier["com.example.photos.sync"]?.reason.contains("belongs to the app com.example.photos") == true)
        // Kept, not deleted: the quarantine holds every row, with the original values.
        #expect(try store.quarantinedRequests().map(\.identifier).sorted() == byIdentifier.keys.sorted())
        #expect(try store.quarantinedRequests().allSatisfy { $0.quarantinedAt == later })
        let keptDate = try store.withConnection { (connection) throws(StoreError) in
            try connection.query("SELECT typeof(earliest_begin), earliest_begin FROM quarantined_requests WHERE identifier = 'com.example.feedreader.date'") { row in
                "\(row.text(0)) \(row.text(1))"
            }.first
        }
        #expect(keptDate == "text 2026-11-30 10:00:00")
    }

    @Test("continued processing ignores its earliest begin date, so one far beyond 4001 loads (as none), where another kind's is set aside")
    func continuedProcessingFarDateLoads() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        var continued = try #require(Sample.requestsUsingEveryField.first { $0.kind == .continuedProcessing })
        continued.earliestBeginDate = Date(timeIntervalSinceReferenceDate: 1e300)
        var processing = PendingRequest(app: continued.app, identifier: "com.example.photos.far", kind: .processing, submittedAt: Sample.now)
        processing.earliestBeginDate = Date(timeIntervalSinceReferenceDate: 1e300)
        do {
            let store = try openStore(url)
            try store.upsertRequest(continued)
            try store.upsertRequest(processing)
        }
        let (reopened, report) = try SchedulerStore.open(at: url, now: Sample.now)
        var expected = continued
        expected.earliestBeginDate = nil
        #expect(try reopened.pendingRequests() == [expected])
        #expect(report.quarantinedRequests.map(\.identifier) == ["com.example.photos.far"])
    }

    @Test("without an owning app, another app's row is loaded; unreadable rows are still quarantined")
    func sharedStoreKeepsOtherApps() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        try storeWithBadRows(url)
        let (store, report) = try SchedulerStore.open(at: url, now: Sample.now)
        #expect(report.quarantinedRequests.count == 4)
        #expect(try store.pendingRequests(app: Sample.otherApp).map(\.identifier) == ["com.example.photos.sync"])
    }

    @Test("a row whose app identifier no app can have (another program's: '/', a control character) is quarantined, naming why; an installed app so named is an unreadable row")
    func impossibleAppIdentifiers() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        do {
            let store = try openStore(url)
            for request in Self.good { try store.upsertRequest(request) }
            let submitted = Sample.now.timeIntervalSinceReferenceDate
            try insertRaw(store, "'bad/app', 'bad.refresh', 'refresh', NULL, \(submitted), 0, 0, NULL")
            try insertRaw(store, "'../../etc', 'etc.refresh', 'refresh', NULL, \(submitted), 0, 0, NULL")
            try store.installApp(InstalledAppStoreTests.feedReader())
            try store.withConnection { (connection) throws(StoreError) in
                try connection.executeScript("INSERT INTO installed_apps SELECT 'bad/app', manifest_path, executable, arguments, permitted_identifiers, background_modes, installed_at FROM installed_apps")
            }
        }
        let (store, report) = try SchedulerStore.open(at: url, now: Sample.now)
        #expect(Set(report.quarantinedRequests.map(\.app)) == ["bad/app", "../../etc"], "\(report.quarantinedRequests)")
        #expect(report.quarantinedRequests.allSatisfy { $0.reason.hasPrefix("its app identifier is not one an app can have (an app identifier cannot contain '/'") }, "\(report.quarantinedRequests)")
        #expect(try store.pendingRequests() == Self.good)
        let installed = try store.installedApps()
        #expect(installed.apps.map(\.app) == [Sample.app])
        #expect(installed.unreadable.map(\.app) == ["bad/app"] && installed.unreadable.first?.reason.contains("not one an app can have") == true, "\(installed.unreadable)")
    }

    @Test("a reader lists unreadable rows beside the readable ones and moves nothing")
    func readerSeesAroundBadRows() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        try storeWithBadRows(url)
        let reader = try SchedulerStore.openForReading(at: url)
        let (requests, unreadable) = try reader.readablePendingRequests(app: Sample.app)
        #expect(requests == Self.good)
        #expect(unreadable.map(\.identifier).sorted() == ["com.example.feedreader.date", "com.example.feedreader.far", "com.example.feedreader.json", "com.example.feedreader.kind"])
        #expect(try reader.quarantinedRequests().isEmpty)
    }

    @Test("an unfinished run whose row cannot be read is ended as interrupted, its request not restored, and the rest recovered")
    func unreadableUnfinishedRun() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        do {
            let store = try openStore(url)
            try store.recordRunStarted(Sample.run(1, of: Sample.request("com.example.feedreader.a"), startedAt: Sample.now))
            try store.recordRunStarted(Sample.run(2, of: Sample.request("com.example.feedreader.b"), startedAt: Sample.now))
            try store.withConnection { (connection) throws(StoreError) in
                try connection.executeScript("UPDATE runs SET kind = 'teleport' WHERE id = 2")
            }
        }
        let (store, report) = try SchedulerStore.open(at: url, now: Sample.now.addingTimeInterval(60))
        #expect(report.interruptedRuns.map(\.id) == [RunID(1)])
        #expect(report.unreadableRuns.count == 1)
        #expect(report.unreadableRuns.first?.contains("run") == true)
        #expect(report.unreadableRuns.first?.contains("teleport") == true)
        #expect(try store.pendingRequests().map(\.identifier) == ["com.example.feedreader.a"])
        let ended = try store.withConnection { (connection) throws(StoreError) in
            try connection.query("SELECT outcome, ended_at IS NOT NULL FROM runs WHERE id = 2") { row in "\(row.text(0)) \(row.int64(1))" }.first
        }
        #expect(ended == "interrupted 1")
    }

}
