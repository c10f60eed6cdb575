import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// What download managers and sync code take from Apple's URL loading beside
// swift-corelibs-foundation (docs/porting.md, "Background URL sessions"): the resume data of
// a failed download, the reasons iOS gives for a refused or cancelled transfer, the session's
// tasks and resumption in async form. Functions and properties are disfavoured overloads, so a
// later Foundation's own are taken; the two reason enums are types, which would clash with a
// Foundation that declares them (then they go).

/// The key of a failed or cancelled download's resume data in its error's `userInfo`
/// (Apple: `NSURLSessionDownloadTaskResumeData`; swift-corelibs-foundation's
/// `URLSessionDownloadTaskResumeData`).
public let NSURLSessionDownloadTaskResumeData: String = URLSessionDownloadTaskResumeData

/// The key of ``Foundation/URLError/networkUnavailableReason`` in an error's `userInfo`
/// (Apple: `NSURLErrorNetworkUnavailableReasonKey`).
public let NSURLErrorNetworkUnavailableReasonKey = "NSURLErrorNetworkUnavailableReasonKey"

extension URLError {
    /// Why a task was refused the network (Apple: `URLError.NetworkUnavailableReason`,
    /// Apple's raw values).
    public enum NetworkUnavailableReason: Int, Sendable {
        /// The request did not allow cellular access.
        case cellular = 0
        /// The request did not allow an expensive network.
        case expensive = 1
        /// The request did not allow a constrained (Low Data Mode) network.
        case constrained = 2
    }

    /// Why a background transfer was cancelled (Apple: `URLError.BackgroundTaskCancelledReason`,
    /// Apple's raw values).
    public enum BackgroundTaskCancelledReason: Int, Sendable {
        /// The user force-quit the app.
        case userForceQuitApplication = 0
        /// The user turned Background App Refresh off.
        case backgroundUpdatesDisabled = 1
        /// The system ran short of resources.
        case insufficientSystemResources = 2
    }

    /// The data to resume the failed or cancelled download with (Apple:
    /// `downloadTaskResumeData`): the error's `NSURLSessionDownloadTaskResumeData`. swift-
    /// corelibs-foundation produces none (it cannot resume a download): `nil`, and the app's
    /// usual fallback, downloading again from the start, runs.
    @_disfavoredOverload
    public var downloadTaskResumeData: Data? { userInfo[URLSessionDownloadTaskResumeData] as? Data }

    /// Why the network was refused (Apple: `networkUnavailableReason`), from the error's
    /// `userInfo`; `nil` here in practice: nothing refuses a network on Linux (the
    /// configuration's switches are kept, not enforced).
    @_disfavoredOverload
    public var networkUnavailableReason: NetworkUnavailableReason? {
        (userInfo[NSURLErrorNetworkUnavailableReasonKey] as? Int).flatMap(NetworkUnavailableReason.init(rawValue:))
    }

    /// Why a background transfer was cancelled (Apple: `backgroundTaskCancelledReason`),
    /// from the error's `userInfo` (`NSURLErrorBackgroundTaskCancelledReasonKey`).
    @_disfavoredOverload
    public var backgroundTaskCancelledReason: BackgroundTaskCancelledReason? {
        (userInfo[NSURLErrorBackgroundTaskCancelledReasonKey] as? Int).flatMap(BackgroundTaskCancelledReason.init(rawValue:))
    }
}

extension URLSession {
    /// The session's tasks that have not finished, by kind (Apple: `tasks`, iOS 15):
    /// `getTasksWithCompletionHandler(_:)` awaited.
    @_disfavoredOverload
    public var tasks: ([URLSessionDataTask], [URLSessionUploadTask], [URLSessionDownloadTask]) {
        get async {
            await withCheckedContinuation { continuation in
                getTasksWithCompletionHandler { data, upload, download in
                    continuation.resume(returning: (data, upload, download))
                }
            }
        }
    }

    /// Resumes a download from `resumeData` (Apple: `download(resumeFrom:delegate:)`, iOS 15).
    /// swift-corelibs-foundation cannot resume downloads (it produces no resume data, and a
    /// task made with `downloadTask(withResumeData:)` stops the program when resumed): this
    /// throws `URLError(.unknown)` saying so, at once, and the caller downloads again from the
    /// start, as it does on iOS when the data no longer applies. `delegate` is not used.
    @_disfavoredOverload
    public func download(resumeFrom resumeData: Data, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> (URL, URLResponse) {
        throw URLError(.unknown, userInfo: [
            NSLocalizedDescriptionKey: "a download cannot be resumed on Linux (swift-corelibs-foundation has no resume data); download it again from the start",
        ])
    }
}

extension URLSessionDownloadTask {
    /// Cancels the download, answering the data to resume it with (Apple:
    /// `cancelByProducingResumeData()`, async): `cancel(byProducingResumeData:)` awaited.
    /// swift-corelibs-foundation produces none: `nil`.
    @_disfavoredOverload
    public func cancelByProducingResumeData() async -> Data? {
        await withCheckedContinuation { continuation in
            cancel(byProducingResumeData: { continuation.resume(returning: $0) })
        }
    }
}
