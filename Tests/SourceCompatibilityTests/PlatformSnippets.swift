// Background-task code that leans on the platform around BackgroundTasks (NSError
// bridging, Foundation's file protection types, UIKit's push registration, badge, Settings
// and device), in the shapes public iOS apps write it, compiled here in Swift 6
// language mode with warnings as errors. An outside probe found each missing (its
// findings 3, 7 and 5); PlatformSnippetTests runs them.
import BackgroundTasks
import UIKit
import os

// MARK: 1. Submit errors kept as NSError and cast back (completion handlers typed `NSError?`,
// a stored last error, a test double that throws NSErrors of the domain)

final class RefreshScheduleReporter: @unchecked Sendable {
    // @unchecked: a test shape, touched from one thread at a time.
    private(set) var lastError: NSError?

    func submit(_ request: BGTaskRequest, scheduler: (BGTaskRequest) throws -> Void, completion: (NSError?) -> Void) {
        do {
            try scheduler(request)
            completion(nil)
        } catch {
            lastError = error as NSError
            completion(error as NSError)
        }
    }

    /// What the app shows for its last error: the typed error when it is one.
    func lastErrorSummary() -> String {
        guard let lastError else { return "none" }
        guard let typed = lastError as? BGTaskScheduler.Error else { return "other: \(lastError.domain)" }
        switch typed.code {
        case .unavailable: return "refresh off"
        case .tooManyPendingTaskRequests: return "too many"
        case .notPermitted: return "not permitted"
        case .immediateRunIneligible: return "cannot run now"
        @unknown default: return "code \(typed.code.rawValue)"
        }
    }
}

/// A fake scheduler for unit tests that throws what iOS would, as NSErrors.
struct ThrowingFakeScheduler {
    let code: Int
    func submit(_ request: BGTaskRequest) throws {
        throw NSError(domain: BGTaskSchedulerErrorDomain, code: code, userInfo: [NSLocalizedDescriptionKey: "fake"])
    }
}

func submitThroughFake(_ fake: ThrowingFakeScheduler) -> String {
    do {
        try fake.submit(BGAppRefreshTaskRequest(identifier: "com.example.app.refresh"))
        return "ok"
    } catch BGTaskScheduler.Error.notPermitted {
        return "notPermitted"
    } catch BGTaskScheduler.Error.tooManyPendingTaskRequests {
        return "tooMany"
    } catch let error as BGTaskScheduler.Error {
        return "typed \(error.code)"
    } catch {
        return "untyped"
    }
}

func printedUnderlyingError(_ error: BGTaskScheduler.Error) -> String {
    "\(error._nsError.domain) \(error._nsError.code)"
}

// MARK: 2. A study app's health-research request, its protection type switched over and kept in a set
// (the property is an NSString in Apple's SDK: the app passes a FileProtectionType's raw value)

enum StudyUploadScheduler {
    static let identifier = "com.example.study.upload"
    static let acceptedProtection: Set<FileProtectionType> = [.completeUnlessOpen, .completeUntilFirstUserAuthentication]

    static func request(protection: FileProtectionType) -> BGHealthResearchTaskRequest? {
        guard acceptedProtection.contains(protection) else { return nil }
        let request = BGHealthResearchTaskRequest(identifier: identifier)
        request.protectionTypeOfRequiredData = protection.rawValue as NSString
        return request
    }

    static func describe(_ request: BGHealthResearchTaskRequest) -> String {
        switch FileProtectionType(rawValue: request.protectionTypeOfRequiredData as String) {
        case .complete: return "complete"
        case .completeUnlessOpen: return "unlessOpen"
        case .completeUntilFirstUserAuthentication: return "untilFirstAuth"
        case .none: return "none"
        default: return "other"
        }
    }
}

// MARK: 3. An app delegate that registers for pushes at launch and sets the badge from a refresh

final class PushRegisteringAppDelegate: UIResponder, UIApplicationDelegate {
    nonisolated static let refreshIdentifier = "com.example.reader.refresh"
    var deviceTokenHex: String?
    var registrationError: (any Error)?

    func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?) -> Bool {
        BGTaskScheduler.shared.register(forTaskWithIdentifier: Self.refreshIdentifier, using: nil) { task in
            self.handleRefresh(task as! BGAppRefreshTask)
        }
        if !application.isRegisteredForRemoteNotifications {
            application.registerForRemoteNotifications()
        }
        return true
    }

    func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {
        deviceTokenHex = deviceToken.map { String(format: "%02x", $0) }.joined()
    }

    func application(_ application: UIApplication, didFailToRegisterForRemoteNotificationsWithError error: any Error) {
        registrationError = error
    }

    func handleRefresh(_ task: BGAppRefreshTask) {
        UIApplication.shared.applicationIconBadgeNumber = 3
        task.setTaskCompleted(success: true)
    }

    func logOut() {
        UIApplication.shared.unregisterForRemoteNotifications()
        UIApplication.shared.applicationIconBadgeNumber = 0
    }
}

// MARK: 4. A settings row for Background App Refresh, and the battery check of a processing handler

@MainActor
final class BackgroundRefreshSettingsRow {
    private(set) var openedSettings: Bool?

    var isDenied: Bool { UIApplication.shared.backgroundRefreshStatus == .denied }

    func openSettings() {
        guard let url = URL(string: UIApplication.openSettingsURLString) else { return }
        if UIApplication.shared.canOpenURL(url) {
            UIApplication.shared.open(url, options: [:], completionHandler: nil)
        } else {
            UIApplication.shared.open(url) { opened in
                self.openedSettings = opened
            }
        }
    }

    func openSettingsAsync() async -> Bool {
        guard let url = URL(string: UIApplication.openSettingsURLString) else { return false }
        return await UIApplication.shared.open(url, options: [.universalLinksOnly: false])
    }
}

enum HeavyWorkGate {
    static func shouldRunHeavyWork() -> Bool {
        UIDevice.current.isBatteryMonitoringEnabled = true
        defer { UIDevice.current.isBatteryMonitoringEnabled = false }
        switch UIDevice.current.batteryState {
        case .charging, .full: return true
        case .unplugged: return UIDevice.current.batteryLevel > 0.5
        case .unknown: return UIDevice.current.isMultitaskingSupported
        @unknown default: return false
        }
    }
}

// MARK: Found in public apps (2026-12-06 probe): the device's identity in a diagnostics
// header, Low Power Mode and the thermal state before heavy work, the idle timer held off
// during an upload, and a scheduler seam spelled with `dispatch_queue_t` (Apple's
// documented signature).

enum DiagnosticsHeader {
    static func line() -> String {
        "Device: \(UIDevice.current.model) \(UIDevice.current.systemName): \(UIDevice.current.systemVersion) "
            + "(\(UIDevice.current.identifierForVendor?.uuidString ?? "unknown"))"
    }
}

enum PowerAwareWork {
    static func mayRunHeavyWork() -> Bool {
        guard !ProcessInfo.processInfo.isLowPowerModeEnabled else { return false }
        switch ProcessInfo.processInfo.thermalState {
        case .nominal, .fair: return true
        case .serious, .critical: return false
        @unknown default: return false
        }
    }

    static let observedNames: [Notification.Name] = [.NSProcessInfoPowerStateDidChange, ProcessInfo.thermalStateDidChangeNotification]
}

@MainActor
final class UploadProgressKeeper {
    func uploadStarted() { UIApplication.shared.isIdleTimerDisabled = true }
    func uploadEnded() { UIApplication.shared.isIdleTimerDisabled = false }
}

protocol QueueSpelledScheduling {
    @discardableResult
    func register(forTaskWithIdentifier identifier: String, using queue: dispatch_queue_t?, launchHandler: @escaping (BGTask) -> Void) -> Bool
    func submit(_ taskRequest: BGTaskRequest) throws
}

extension BGTaskScheduler: QueueSpelledScheduling {}

// MARK: Found in public apps (the second 2026-12-06 probe): `\(error)` in a Logger line,
// memory warnings and scene notifications observed beside the lifecycle, remote-control
// events begun in didFinishLaunching, a scene delegate that opens URLs.

enum SchedulingLog {
    static let logger = Logger(subsystem: "com.example.compat", category: "scheduling")

    static func couldNotSchedule(_ error: any Error) {
        logger.warning("Could not schedule the processing task: \(error)")
        logger.error("\(error, privacy: .public)")
    }
}

@MainActor
final class LifecycleWatcher {
    private var tokens: [any NSObjectProtocol] = []
    private(set) var heard: [String] = []

    func start() {
        for name in [UIApplication.didReceiveMemoryWarningNotification, UIApplication.significantTimeChangeNotification,
                     UIApplication.userDidTakeScreenshotNotification, UIScene.didEnterBackgroundNotification, UIScene.willEnterForegroundNotification] {
            tokens.append(NotificationCenter.default.addObserver(forName: name, object: nil, queue: .main) { [weak self] notification in
                let name = notification.name.rawValue
                MainActor.assumeIsolated { self?.heard.append(name) }
            })
        }
        UIApplication.shared.beginReceivingRemoteControlEvents()
    }

    func stop() {
        UIApplication.shared.endReceivingRemoteControlEvents()
        tokens.forEach(NotificationCenter.default.removeObserver)
    }
}

final class URLOpeningSceneDelegate: UIResponder, UIWindowSceneDelegate {
    var window: UIWindow?
    private(set) var opened: [URL] = []

    func scene(_ scene: UIScene, willConnectTo session: UISceneSession, options connectionOptions: UIScene.ConnectionOptions) {
        opened += connectionOptions.urlContexts.map(\.url)
    }

    func scene(_ scene: UIScene, openURLContexts URLContexts: Set<UIOpenURLContext>) {
        opened += URLContexts.map(\.url)
    }
}

// MARK: Description extensions apps add for their logs (found in ten apps'
// `UIDevice+Battery.swift` by the third 2026-12-06 probe): Apple's imported enums and
// `UIBackgroundTaskIdentifier` are not `CustomStringConvertible`, so an app may make them so;
// were this package's, the conformance would be "redundant", an error. (`@retroactive`, as
// Apple's SDK warns without it too.)

extension UIDevice.BatteryState: @retroactive CustomStringConvertible {
    public var description: String {
        switch self {
        case .unknown: return "unknown"
        case .unplugged: return "unplugged"
        case .charging: return "charging"
        case .full: return "full"
        @unknown default: return "state \(rawValue)"
        }
    }
}

extension UIScene.ActivationState: @retroactive CustomStringConvertible {
    public var description: String {
        switch self {
        case .unattached: return "unattached"
        case .foregroundActive: return "foregroundActive"
        case .foregroundInactive: return "foregroundInactive"
        case .background: return "background"
        @unknown default: return "state \(rawValue)"
        }
    }
}

extension BGContinuedProcessingTaskRequest.SubmissionStrategy: @retroactive CustomStringConvertible {
    public var description: String {
        switch self {
        case .fail: return "fail"
        case .queue: return "queue"
        @unknown default: return "strategy \(rawValue)"
        }
    }
}

extension BGTaskScheduler.Error.Code: @retroactive CustomStringConvertible {
    public var description: String {
        switch self {
        case .unavailable: return "unavailable"
        case .tooManyPendingTaskRequests: return "tooManyPendingTaskRequests"
        case .notPermitted: return "notPermitted"
        case .immediateRunIneligible: return "immediateRunIneligible"
        @unknown default: return "code \(rawValue)"
        }
    }
}

// (No `@retroactive` here only because this test module is in the same package.)
extension UIBackgroundTaskIdentifier: CustomStringConvertible {
    public var description: String { "bgTask#\(rawValue)" }
}
