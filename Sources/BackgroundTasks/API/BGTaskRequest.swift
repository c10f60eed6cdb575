import Foundation
import Synchronization
import SchedulerCore

/// An abstract request to run a task in the background (Apple: `BGTaskRequest`).
///
/// Create one of the concrete subclasses, set its properties, and pass it to
/// ``BGTaskScheduler/submit(_:)``. The scheduler keeps a copy: changing the object after
/// submitting changes nothing. `copy()` (`NSCopying`) gives an independent request of
/// the same class. Like Apple's, it is an `NSObject`.
open class BGTaskRequest: NSObject, @unchecked Sendable, NSCopying {
    // @unchecked: `identifier` is immutable and every mutable property of this class and
    // its subclasses lives behind a Mutex, so a request may be shared between threads
    // (Sendable) even though the app mutates it.

    /// The identifier of the task, one of `BGTaskSchedulerPermittedIdentifiers`.
    public let identifier: String
    private let begin = Mutex<Date?>(nil)

    /// The earliest date the task may begin; `nil` for no delay. A lower bound only: the
    /// system may run the task much later, "many hours" on iOS.
    open var earliestBeginDate: Date? {
        get { begin.withLock { $0 } }
        set { begin.withLock { $0 = newValue } }
    }

    init(identifier: String) {
        self.identifier = identifier
    }

    /// A new request of the same kind (`BGAppRefreshTaskRequest`, `BGProcessingTaskRequest`...)
    /// with the same properties (`NSCopying`). A subclass of the app's own that adds
    /// properties overrides this to copy them, as with any `NSCopying` class.
    open func copy(with zone: NSZone?) -> Any {
        // The scheduler's record carries every property of every kind, and `make(from:)`
        // builds the matching class from it: one place knows each kind's properties.
        BGTaskRequest.make(from: pendingRequest(app: AppID("copy"), submittedAt: Date(timeIntervalSince1970: 0)))
    }

    /// The kind of task this request schedules.
    var kind: TaskKind { .appRefresh }

    /// The scheduler's record of this request.
    func pendingRequest(app: AppID, submittedAt: Date) -> PendingRequest {
        PendingRequest(app: app, identifier: identifier, kind: kind, earliestBeginDate: earliestBeginDate, submittedAt: submittedAt)
    }

    /// A new request object equal to `record` (for `pendingTaskRequests`).
    static func make(from record: PendingRequest) -> BGTaskRequest {
        let request: BGTaskRequest
        switch record.kind {
        case .appRefresh:
            request = BGAppRefreshTaskRequest(identifier: record.identifier)
        case .processing:
            let processing = BGProcessingTaskRequest(identifier: record.identifier)
            processing.requiresNetworkConnectivity = record.requiresNetworkConnectivity
            processing.requiresExternalPower = record.requiresExternalPower
            request = processing
        case .healthResearch:
            let health = BGHealthResearchTaskRequest(identifier: record.identifier)
            health.requiresNetworkConnectivity = record.requiresNetworkConnectivity
            health.requiresExternalPower = record.requiresExternalPower
            health.protectionTypeOfRequiredData = record.protectionTypeOfRequiredData.map(NSString.init(string:)) ?? health.protectionTypeOfRequiredData
            request = health
        case .continuedProcessing:
            let options = record.continuedProcessing
            let continued = BGContinuedProcessingTaskRequest(identifier: record.identifier, title: options?.title ?? "", subtitle: options?.subtitle ?? "")
            continued.strategy = options?.strategy == .fail ? .fail : .queue
            continued.requiredResources = BGContinuedProcessingTaskRequest.Resources(names: options?.requiredResources ?? [])
            request = continued
        }
        request.earliestBeginDate = record.earliestBeginDate
        return request
    }

    override open var description: String {
        // Not the date's own description: it traps on NaN, and an app typically prints the
        // request it could not submit (`submit` refuses such a date with `.invalidRequest`).
        "<\(type(of: self)) identifier: \(identifier), earliestBeginDate: \(earliestBeginDate.map(DateText.described) ?? "(null)")>"
    }
}

/// A request to launch the app in the background to refresh its content
/// (Apple: `BGAppRefreshTaskRequest`). At most one is pending per app.
open class BGAppRefreshTaskRequest: BGTaskRequest, @unchecked Sendable {
    /// Creates a refresh request for `identifier`.
    public override init(identifier: String) {
        super.init(identifier: identifier)
    }
}

/// A request to launch the app for deferrable heavy work while the device is idle
/// (Apple: `BGProcessingTaskRequest`). At most ten are pending per app.
open class BGProcessingTaskRequest: BGTaskRequest, @unchecked Sendable {
    // @unchecked: the mutable properties live behind `requirements`.
    private let requirements = Mutex((network: false, power: false))

    /// Run only while the network is available. Default `false`.
    open var requiresNetworkConnectivity: Bool {
        get { requirements.withLock { $0.network } }
        set { requirements.withLock { $0.network = newValue } }
    }
    /// Run only while on external power (also turns off the CPU monitor on iOS). Default `false`.
    open var requiresExternalPower: Bool {
        get { requirements.withLock { $0.power } }
        set { requirements.withLock { $0.power = newValue } }
    }

    /// Creates a processing request for `identifier`.
    public override init(identifier: String) {
        super.init(identifier: identifier)
    }

    override var kind: TaskKind { .processing }

    override func pendingRequest(app: AppID, submittedAt: Date) -> PendingRequest {
        var record = super.pendingRequest(app: app, submittedAt: submittedAt)
        record.requiresNetworkConnectivity = requiresNetworkConnectivity
        record.requiresExternalPower = requiresExternalPower
        return record
    }
}

/// `FileProtectionType` (whose raw value apps give ``BGHealthResearchTaskRequest/protectionTypeOfRequiredData``)
/// as Apple's: an `NS_TYPED_ENUM` struct that is `Hashable`, so that it can be a `case` of a
/// `switch` and an element of a `Set`. swift-corelibs-foundation declares it
/// `RawRepresentable` and `Sendable` only (`==` works through `RawRepresentable`, `~=` and
/// `Set` do not). Retroactive, and sound as such: equality and hashing are those of the raw
/// string, which `RawRepresentable` supplies, so a conformance another library adds for the
/// same reason means the same at run time; a Foundation that one day declares it gets a
/// warning here ("already stated"), and its own conformance is used.
extension FileProtectionType: @retroactive Hashable {}

/// A processing request for health research that needs protected data
/// (Apple: `BGHealthResearchTaskRequest`).
open class BGHealthResearchTaskRequest: BGProcessingTaskRequest, @unchecked Sendable {
    // @unchecked: the mutable property lives behind `protection`.
    private let protection = Mutex(FileProtectionType.completeUntilFirstUserAuthentication.rawValue)

    /// The file protection class the data the task reads needs: a `FileProtectionType`'s
    /// raw value, as an `NSString` as in Apple's SDK (`request.protectionTypeOfRequiredData =
    /// FileProtectionType.complete.rawValue as NSString`, or a string literal). Default
    /// `completeUntilFirstUserAuthentication`'s.
    open var protectionTypeOfRequiredData: NSString {
        get { NSString(string: protection.withLock { $0 }) }
        set {
            let value = String(describing: newValue)
            protection.withLock { $0 = value }
        }
    }

    /// Creates a health-research request for `identifier`.
    public override init(identifier: String) {
        super.init(identifier: identifier)
    }

    override var kind: TaskKind { .healthResearch }

    override func pendingRequest(app: AppID, submittedAt: Date) -> PendingRequest {
        var record = super.pendingRequest(app: app, submittedAt: submittedAt)
        record.protectionTypeOfRequiredData = protection.withLock { $0 }
        return record
    }
}

/// A request to continue user-started work after the app leaves the foreground, with
/// visible progress (Apple: `BGContinuedProcessingTaskRequest`, iOS 26).
/// `earliestBeginDate` is ignored: the work starts at once, or is queued or refused.
open class BGContinuedProcessingTaskRequest: BGTaskRequest, @unchecked Sendable {
    /// What to do when the work cannot start at once: `.fail` or `.queue`. The C enum
    /// `BGContinuedProcessingTaskRequestSubmissionStrategy` (CUIKitTypes), as on iOS, so a
    /// `switch` over it takes `default:` or `@unknown default:` without a warning.
    public typealias SubmissionStrategy = BGContinuedProcessingTaskRequestSubmissionStrategy

    /// Resources the work needs.
    public struct Resources: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        /// Creates a set from its raw value.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// No special resource.
        public static let `default` = Resources([])
        /// Background GPU access.
        public static let gpu = Resources(rawValue: 1 << 0)

        init(names: [String]) {
            self = names.contains("gpu") ? .gpu : .default
        }

        var names: [String] { contains(.gpu) ? ["gpu"] : [] }
    }

    // @unchecked (see BGTaskRequest): the mutable properties live behind `options`.
    private let options: Mutex<(title: String, subtitle: String, strategy: SubmissionStrategy, resources: Resources)>

    /// The title shown to the user.
    open var title: String {
        get { options.withLock { $0.title } }
        set { options.withLock { $0.title = newValue } }
    }
    /// The subtitle shown to the user.
    open var subtitle: String {
        get { options.withLock { $0.subtitle } }
        set { options.withLock { $0.subtitle = newValue } }
    }
    /// `.queue` (default) or `.fail`.
    open var strategy: SubmissionStrategy {
        get { options.withLock { $0.strategy } }
        set { options.withLock { $0.strategy = newValue } }
    }
    /// Resources the work needs; each must be in `BGTaskScheduler.supportedResources`.
    open var requiredResources: Resources {
        get { options.withLock { $0.resources } }
        set { options.withLock { $0.resources = newValue } }
    }

    /// Creates a request with the title and subtitle shown while the work runs.
    public init(identifier: String, title: String, subtitle: String) {
        options = Mutex((title, subtitle, .queue, .default))
        super.init(identifier: identifier)
    }

    override var kind: TaskKind { .continuedProcessing }

    override func pendingRequest(app: AppID, submittedAt: Date) -> PendingRequest {
        var record = super.pendingRequest(app: app, submittedAt: submittedAt)
        record.continuedProcessing = ContinuedProcessingOptions(
            title: title,
            subtitle: subtitle,
            strategy: strategy == .fail ? .fail : .queue,
            requiredResources: requiredResources.names
        )
        return record
    }
}

// Not `CustomStringConvertible`: Apple's imported enum is not, and an app that adds the
// conformance (as many do for their logs) would get "redundant conformance", an error.
extension BGContinuedProcessingTaskRequestSubmissionStrategy {
    /// `"fail"` or `"queue"` (`"strategy 7"` for a value without a name), for this
    /// package's messages.
    var name: String {
        switch self {
        case .fail: "fail"
        case .queue: "queue"
        default: "strategy \(rawValue)"
        }
    }
}
