import Foundation

/// An abstract request to run a task in the background (Apple: `BGTaskRequest`).
///
/// Create one of the concrete subclasses, set its properties, and pass it to
/// ``BGTaskScheduler/submit(_:)``. The scheduler keeps a copy: changing the object after
/// submitting changes nothing.
open class BGTaskRequest: @unchecked Sendable, CustomStringConvertible {
    // @unchecked: like Apple's NSObject subclass, a request is a plain mutable value
    // object; the scheduler copies it on submit and never shares it across threads.

    /// The identifier of the task, one of `BGTaskSchedulerPermittedIdentifiers`.
    public let identifier: String
    /// The earliest date the task may begin; `nil` for no delay. A lower bound only: the
    /// system may run the task much later, "many hours" on iOS.
    open var earliestBeginDate: Date?

    init(identifier: String) {
        self.identifier = identifier
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
            health.protectionTypeOfRequiredData = record.protectionTypeOfRequiredData.map(FileProtectionType.init(rawValue:)) ?? health.protectionTypeOfRequiredData
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

    public var description: String {
        "<\(type(of: self)) identifier: \(identifier), earliestBeginDate: \(earliestBeginDate.map { "\($0)" } ?? "(null)")>"
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
    /// Run only while the network is available. Default `false`.
    open var requiresNetworkConnectivity = false
    /// Run only while on external power (also turns off the CPU monitor on iOS). Default `false`.
    open var requiresExternalPower = false

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

/// A processing request for health research that needs protected data
/// (Apple: `BGHealthResearchTaskRequest`).
open class BGHealthResearchTaskRequest: BGProcessingTaskRequest, @unchecked Sendable {
    /// The file protection class the data the task reads needs. Default
    /// `completeUntilFirstUserAuthentication`.
    open var protectionTypeOfRequiredData: FileProtectionType = .completeUntilFirstUserAuthentication

    /// Creates a health-research request for `identifier`.
    public override init(identifier: String) {
        super.init(identifier: identifier)
    }

    override var kind: TaskKind { .healthResearch }

    override func pendingRequest(app: AppID, submittedAt: Date) -> PendingRequest {
        var record = super.pendingRequest(app: app, submittedAt: submittedAt)
        record.protectionTypeOfRequiredData = protectionTypeOfRequiredData.rawValue
        return record
    }
}

/// A request to continue user-started work after the app leaves the foreground, with
/// visible progress (Apple: `BGContinuedProcessingTaskRequest`, iOS 26).
/// `earliestBeginDate` is ignored: the work starts at once, or is queued or refused.
open class BGContinuedProcessingTaskRequest: BGTaskRequest, @unchecked Sendable {
    /// What to do when the work cannot start at once.
    public enum SubmissionStrategy: Int, Sendable, Hashable {
        /// Refuse the submission with `immediateRunIneligible`.
        case fail = 0
        /// Queue it behind other continued-processing work (the default).
        case queue = 1
    }

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

    /// The title shown to the user.
    open var title: String
    /// The subtitle shown to the user.
    open var subtitle: String
    /// `.queue` (default) or `.fail`.
    open var strategy: SubmissionStrategy = .queue
    /// Resources the work needs; each must be in `BGTaskScheduler.supportedResources`.
    open var requiredResources: Resources = .default

    /// Creates a request with the title and subtitle shown while the work runs.
    public init(identifier: String, title: String, subtitle: String) {
        self.title = title
        self.subtitle = subtitle
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
