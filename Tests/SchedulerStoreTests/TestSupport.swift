import Foundation
import SchedulerCore
@testable import SchedulerStore

/// A fresh directory per test, removed when the test lets go of it. Tests run in parallel,
/// so each one works in its own directory and shares nothing.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("SchedulerStoreTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// A path inside the directory.
    func file(_ name: String) -> URL {
        url.appendingPathComponent(name, isDirectory: false)
    }

    /// The names of the files in the directory, sorted.
    func listing() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }
}

/// Values used across the tests.
enum Sample {
    static let app = AppID("com.example.feedreader")
    static let otherApp = AppID("com.example.photos")

    /// 2024-01-02 03:04:05 UTC.
    static let now = Date(timeIntervalSince1970: 1_704_164_645)

    /// A plain refresh request.
    static func request(_ identifier: String, app: AppID = app, submittedAt: Date = now) -> PendingRequest {
        PendingRequest(app: app, identifier: identifier, kind: .appRefresh, submittedAt: submittedAt)
    }

    /// One request of each kind with every optional field used (and one with none), with
    /// dates that have long fractional parts.
    static let requestsUsingEveryField: [PendingRequest] = [
        PendingRequest(
            app: app,
            identifier: "com.example.feedreader.refresh",
            kind: .appRefresh,
            earliestBeginDate: nil,
            submittedAt: Date(timeIntervalSinceReferenceDate: 725_000_000.123_456_7)
        ),
        PendingRequest(
            app: app,
            identifier: "com.example.feedreader.sync",
            kind: .processing,
            earliestBeginDate: Date(timeIntervalSinceReferenceDate: 725_003_600.987_654_3),
            requiresNetworkConnectivity: true,
            requiresExternalPower: true,
            submittedAt: Date(timeIntervalSinceReferenceDate: 725_000_001.000_000_1)
        ),
        PendingRequest(
            app: app,
            identifier: "com.example.feedreader.study",
            kind: .healthResearch,
            earliestBeginDate: Date(timeIntervalSinceReferenceDate: -1_000.5),
            requiresNetworkConnectivity: false,
            requiresExternalPower: true,
            protectionTypeOfRequiredData: "NSFileProtectionCompleteUntilFirstUserAuthentication",
            submittedAt: Date(timeIntervalSinceReferenceDate: 725_000_002.5)
        ),
        PendingRequest(
            app: otherApp,
            identifier: "com.example.photos.export.\u{1F4F7}",
            kind: .continuedProcessing,
            earliestBeginDate: Date(timeIntervalSinceReferenceDate: 725_000_100.25),
            continuedProcessing: ContinuedProcessingOptions(
                title: "Exporting \"Holiday\"",
                subtitle: "12 of 40 photos — ünïcödé",
                strategy: .fail,
                requiredResources: ["gpu", "neural-engine"]
            ),
            submittedAt: Date(timeIntervalSinceReferenceDate: 725_000_003.333_333_333)
        ),
    ]

    /// A run of `request`, in progress.
    static func run(_ id: Int64, of request: PendingRequest, startedAt: Date) -> RunRecord {
        RunRecord(id: RunID(id), request: request, startedAt: startedAt)
    }
}

/// Opens the store at `url` as of `now`, keeping only the store (not the report).
func openStore(_ url: URL, now: Date = Sample.now) throws -> SchedulerStore {
    try SchedulerStore.open(at: url, now: now).0
}

/// Makes a file or directory immutable (`chattr +i`), which even root cannot write; `false`
/// when the file system or the process's capabilities do not allow it.
func setImmutable(_ url: URL, _ immutable: Bool) -> Bool {
    let descriptor = open(url.path, O_RDONLY | O_NONBLOCK)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    // FS_IOC_GETFLAGS / FS_IOC_SETFLAGS and FS_IMMUTABLE_FL from <linux/fs.h>.
    let getFlags: UInt = 0x8008_6601
    let setFlags: UInt = 0x4008_6602
    let immutableFlag: CInt = 0x10
    var flags: CInt = 0
    guard ioctl(descriptor, getFlags, &flags) == 0 else { return false }
    flags = immutable ? flags | immutableFlag : flags & ~immutableFlag
    return ioctl(descriptor, setFlags, &flags) == 0
}

/// Whether this process can make files immutable (root with CAP_LINUX_IMMUTABLE on a file
/// system that supports it).
func canMakeFilesImmutable() -> Bool {
    guard let directory = try? TemporaryDirectory() else { return false }
    let probe = directory.file("probe")
    guard FileManager.default.createFile(atPath: probe.path, contents: Data()) else { return false }
    guard setImmutable(probe, true) else { return false }
    return setImmutable(probe, false)
}
