// A path monitor's models as public apps write them, in a file that imports Foundation and
// Network only (found by an outside compile probe: Kiwix's `NetworkState: ObservableObject`,
// an `@Observable` monitor that triggers a sync), with Dispatch's time constants and
// `ProcessInfo()` (an SDK's activity coordinator), in Swift 6 mode with warnings as errors.
// On iOS, Network imports Foundation, which brings Combine, Observation and Dispatch's
// constants: here Network re-exports them (Sources/FoundationCompat).
import Foundation
import Network
import FoundationOnlyFiles
import Testing

final class NetworkState: ObservableObject, @unchecked Sendable {
    // @unchecked: the monitor calls the handler on its own serial queue only.
    @Published var isOnline = false
    private let monitor = NWPathMonitor()

    func start() {
        monitor.pathUpdateHandler = { [weak self] path in self?.isOnline = path.status == .satisfied }
        monitor.start(queue: DispatchQueue(label: "network-state"))
    }

    deinit { monitor.cancel() }
}

@MainActor @Observable
final class SyncTrigger {
    var lastSync: Date?
    var pending = 0

    /// Waits a moment for the network to settle, as such monitors do, then syncs.
    func settleThenSync() async {
        try? await Task.sleep(nanoseconds: 100 * NSEC_PER_MSEC)
        pending += 1
        lastSync = Date()
    }
}

/// An SDK's seam over the process's activities, with `ProcessInfo()` as its default.
protocol ActivityCoordinating {
    func beginActivity(options: ProcessInfo.ActivityOptions, reason: String) -> any NSObjectProtocol
    func endActivity(_ activity: any NSObjectProtocol)
}

extension ProcessInfo: ActivityCoordinating {}

struct UploadCoordinator {
    var processInfo: any ActivityCoordinating = ProcessInfo()
}

@Suite struct FoundationCompatTests {
    @Test func dispatchsTimeConstantsHaveApplesValuesAndType() {
        let values: [UInt64] = [NSEC_PER_SEC, NSEC_PER_MSEC, USEC_PER_SEC, NSEC_PER_USEC, MSEC_PER_SEC]
        #expect(values == [1_000_000_000, 1_000_000, 1_000_000, 1_000, 1_000])
        #expect(DispatchTime(uptimeNanoseconds: 2 * NSEC_PER_SEC).uptimeNanoseconds == 2_000_000_000)
    }

    @Test func coreFoundationsClockReadsTheWallClockSince2001() {
        let before = Date().timeIntervalSinceReferenceDate
        let now: CFAbsoluteTime = CFAbsoluteTimeGetCurrent()
        let after = Date().timeIntervalSinceReferenceDate
        #expect(before <= now && now <= after)
        #expect(Date(timeIntervalSince1970: kCFAbsoluteTimeIntervalSince1970) == Date(timeIntervalSinceReferenceDate: 0))
        #expect(kCFAbsoluteTimeIntervalSince1904 - kCFAbsoluteTimeIntervalSince1970 == 2_082_844_800, "1904 to 1970")
        let elapsed: CFTimeInterval = CFAbsoluteTimeGetCurrent() - now
        #expect(elapsed >= 0)
    }

    @Test func processInfoMadeAnewIsTheProcesssInformation() {
        let made = ProcessInfo()
        #expect(made === ProcessInfo.processInfo)
        #expect(made.processIdentifier == getpid())
        let coordinator = UploadCoordinator()
        let activity = coordinator.processInfo.beginActivity(options: [.background], reason: "upload")
        coordinator.processInfo.endActivity(activity)
    }

    @Test @MainActor func anObservableModelAndAnObservableObjectFromNetworkAloneWork() async {
        let trigger = SyncTrigger()
        await withCheckedContinuation { continuation in
            withObservationTracking { _ = trigger.pending } onChange: { continuation.resume() }
            Task { await trigger.settleThenSync() }
        }
        #expect(trigger.pending == 1)
        let state = NetworkState()
        var seen: [Bool] = []
        let subscription = state.$isOnline.sink { seen.append($0) }
        state.isOnline = true
        #expect(seen == [false, true])
        subscription.cancel()
    }
}

/// Files that import Foundation alone in a target that imports FoundationCompat into each
/// (Tests/FoundationOnlyFiles).
@Suite struct FoundationOnlyFilesTests {
    @Test func aFoundationOnlyModelPublishesAndAFetcherFetches() async throws {
        let state = FoundationOnlyFiles.FeedState()
        var seen: [Bool] = []
        let subscription = state.$isRefreshing.sink { seen.append($0) }
        state.isRefreshing = true
        state.finished(at: Date(timeIntervalSinceReferenceDate: 0))
        #expect(seen == [false, true, false] && state.lastRefresh == Date(timeIntervalSinceReferenceDate: 0))
        subscription.cancel()
        // The session is swift-corelibs-foundation's (libcurl's schemes: no file: URLs), asked
        // without the network: its answer is its own error.
        let fetcher = FoundationOnlyFiles.FeedFetcher()
        do {
            _ = try await fetcher.fetch(URL(fileURLWithPath: "/nonexistent/feed.xml"), timeout: 30)
            Issue.record("a file: URL was fetched")
        } catch {
            #expect((error as NSError).domain == NSURLErrorDomain && (error as NSError).code == NSURLErrorUnsupportedURL, "\(error)")
        }
        #expect(fetcher.startedAt > 0)
    }

    @Test func aFoundationOnlyImporterStreamsAnExportLineByLine() async throws {
        let export = (1...500).map { "{\"id\":\($0),\"title\":\"item \($0)\"}" }.joined(separator: "\r\n") + "\nnot a record\n"
        let server = try LoopbackHTTPServer(body: export)
        defer { server.close() }
        let importer = FoundationOnlyFiles.StreamingImporter()
        #expect(try await importer.importRecords(from: URL(string: "http://127.0.0.1:\(server.port)/export.ndjson")!) == 500)
        #expect(importer.imported.last == FoundationOnlyFiles.ExportRecord(id: 500, title: "item 500") && importer.skippedLines == 1)
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString).ndjson")
        try Data(export.utf8).write(to: cache)
        defer { try? FileManager.default.removeItem(at: cache) }
        #expect(try await importer.importCache(at: cache) == 500 && importer.imported.count == 1000)
    }

    @Test func aFoundationOnlyUploaderSetsItsBackgroundSession() {
        // Declared in FoundationCompat, set in a module none of whose files imports UIKit;
        // read back here, where only FoundationCompat's property is visible.
        let configuration = FoundationOnlyFiles.UploadSession.configuration(identifier: "com.example.uploads", group: "group.com.example")
        #expect(configuration.identifier == "com.example.uploads" && configuration.sessionSendsLaunchEvents)
        #expect(configuration.sharedContainerIdentifier == "group.com.example" && !configuration.allowsConstrainedNetworkAccess)
    }
}
