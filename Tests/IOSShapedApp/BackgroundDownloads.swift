// A download manager as podcast and photo apps write it (Swift 5 mode, warnings as errors):
// a background URL session made once, lazily, with its delegate; the app delegate's
// `handleEventsForBackgroundURLSession` keeps the completion handler the session's last
// event calls. On Linux the session's transfers run in the app's process (docs/porting.md,
// "Background URL sessions"); the system never calls the app delegate method.
import BackgroundTasks

/// The app's downloads, in a background session. (`@unchecked Sendable`, as such managers
/// write it: URLSession's delegate protocols are `Sendable` in Apple's SDK and here, and the
/// state is touched from the session's delegate queue.)
public final class BackgroundDownloads: NSObject, URLSessionDownloadDelegate, @unchecked Sendable {
    /// The session's identifier.
    public static let identifier = "com.example.podcasts.downloads"
    /// What finished, as the text downloaded.
    public private(set) var finished: [String] = []
    /// Where the last download was (the test removes it: swift-corelibs-foundation leaves the
    /// file where iOS removes it once the delegate returns; docs/porting.md).
    public private(set) var lastLocation: URL?
    /// Called when a download finished (the test waits on it).
    public var onFinish: ((String) -> Void)?
    /// The completion handler kept from the app delegate, called once the session's events are in.
    public var backgroundCompletionHandler: (() -> Void)?

    /// The session, made on first use.
    public lazy var session: URLSession = {
        let configuration = URLSessionConfiguration.background(withIdentifier: BackgroundDownloads.identifier)
        configuration.isDiscretionary = true
        configuration.sessionSendsLaunchEvents = true
        configuration.allowsExpensiveNetworkAccess = false
        configuration.allowsConstrainedNetworkAccess = false
        configuration.waitsForConnectivity = true
        configuration.sharedContainerIdentifier = "group.com.example.podcasts"
        return URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }()

    /// Starts downloading `url`.
    public func download(_ url: URL) {
        var request = URLRequest(url: url)
        request.allowsExpensiveNetworkAccess = false
        request.allowsConstrainedNetworkAccess = false
        if #available(iOS 15.0, *) { request.attribution = .developer }
        let task = session.downloadTask(with: request)
        task.resume()
    }

    public func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        // The file goes when this returns: read (or move) it now.
        let text = (try? String(contentsOf: location, encoding: .utf8)) ?? ""
        finished.append(text)
        lastLocation = location
        onFinish?(text)
    }

    /// The data to resume the last failed download with, when the error carried some.
    public private(set) var resumeData: Data?

    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        guard let error = error else { return }
        // Both spellings public apps use for the resume data.
        if let urlError = error as? URLError, let data = urlError.downloadTaskResumeData {
            resumeData = data
        } else if let data = (error as NSError).userInfo[NSURLSessionDownloadTaskResumeData] as? Data {
            resumeData = data
        }
        if let reason = (error as? URLError)?.backgroundTaskCancelledReason, reason == .userForceQuitApplication {
            resumeData = nil
        }
        onFinish?("failed: \(error.localizedDescription)")
    }

    /// iOS calls this once the events of a relaunch are delivered.
    public func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
        DispatchQueue.main.async {
            self.backgroundCompletionHandler?()
            self.backgroundCompletionHandler = nil
        }
    }
}

/// The app delegate's side: the completion handler kept for the session's events.
public final class DownloadingAppDelegate: UIResponder, UIApplicationDelegate {
    /// The app's downloads.
    public let downloads = BackgroundDownloads()

    public func application(_ application: UIApplication, handleEventsForBackgroundURLSession identifier: String, completionHandler: @escaping () -> Void) {
        if identifier == BackgroundDownloads.identifier {
            downloads.backgroundCompletionHandler = completionHandler
        }
    }
}
