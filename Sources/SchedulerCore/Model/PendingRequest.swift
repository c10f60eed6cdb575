import Foundation

/// What to do with a continued-processing request that cannot start at once.
public enum ContinuedProcessingStrategy: String, Hashable, Sendable, Codable {
    /// Refuse the submission with `immediateRunIneligible`.
    case fail
    /// Queue it, first in first out, behind the concurrency cap (Apple's default).
    case queue
}

/// The fields only continued-processing requests carry.
public struct ContinuedProcessingOptions: Hashable, Sendable, Codable {
    /// The title shown to the user while the work runs.
    public var title: String
    /// The subtitle shown to the user while the work runs.
    public var subtitle: String
    /// `.fail` or `.queue` when the work cannot start at once.
    public var strategy: ContinuedProcessingStrategy
    /// Resources the work needs (for example `gpu`); each must be supported by the system.
    public var requiredResources: [String]

    /// Creates the options of one continued-processing request.
    public init(title: String, subtitle: String, strategy: ContinuedProcessingStrategy, requiredResources: [String] = []) {
        self.title = title
        self.subtitle = subtitle
        self.strategy = strategy
        self.requiredResources = requiredResources
    }
}

/// A request as the scheduler keeps it: the engine's, the store's and the daemon's view of
/// what the app submitted. The public `BGTaskRequest` classes convert to and from it.
public struct PendingRequest: Hashable, Sendable, Codable {
    /// The key under which the request is pending: its app and task identifier. Kept, not
    /// made at each use, because a key works out its hash value once (the engine looks a
    /// request up by its key many times per run).
    public private(set) var key: RequestKey
    /// The app that submitted the request.
    public var app: AppID {
        get { key.app }
        set { key = RequestKey(app: newValue, identifier: key.identifier) }
    }
    /// The task identifier.
    public var identifier: String {
        get { key.identifier }
        set { key = RequestKey(app: key.app, identifier: newValue) }
    }
    /// Which kind of task this is.
    public var kind: TaskKind
    /// The earliest instant the task may begin, or `nil` for "as soon as possible".
    /// A lower bound only: the system may run the task much later.
    public var earliestBeginDate: Date?
    /// Processing only: run only while the network is available.
    public var requiresNetworkConnectivity: Bool
    /// Processing only: run only while on external power.
    public var requiresExternalPower: Bool
    /// Health research only: the file protection class the task needs.
    public var protectionTypeOfRequiredData: String?
    /// Continued processing only.
    public var continuedProcessing: ContinuedProcessingOptions?
    /// When the request was accepted.
    public var submittedAt: Date
    /// A remote wake only (bgtaskd's silent-push analogue): the push's payload, a JSON
    /// object as text, handed to the app's remote-notification handler with the run.
    public var remoteNotificationPayload: String?

    /// Creates a request record.
    public init(
        app: AppID,
        identifier: String,
        kind: TaskKind,
        earliestBeginDate: Date? = nil,
        requiresNetworkConnectivity: Bool = false,
        requiresExternalPower: Bool = false,
        protectionTypeOfRequiredData: String? = nil,
        continuedProcessing: ContinuedProcessingOptions? = nil,
        submittedAt: Date
    ) {
        self.key = RequestKey(app: app, identifier: identifier)
        self.kind = kind
        self.earliestBeginDate = earliestBeginDate
        self.requiresNetworkConnectivity = requiresNetworkConnectivity
        self.requiresExternalPower = requiresExternalPower
        self.protectionTypeOfRequiredData = protectionTypeOfRequiredData
        self.continuedProcessing = continuedProcessing
        self.submittedAt = submittedAt
    }

    private enum CodingKeys: String, CodingKey {
        case app, identifier, kind, earliestBeginDate, requiresNetworkConnectivity, requiresExternalPower
        case protectionTypeOfRequiredData, continuedProcessing, submittedAt, remoteNotificationPayload
    }

    /// Decodes a request as it was always encoded: the app and the identifier as two fields.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        key = RequestKey(app: try container.decode(AppID.self, forKey: .app), identifier: try container.decode(String.self, forKey: .identifier))
        kind = try container.decode(TaskKind.self, forKey: .kind)
        earliestBeginDate = try container.decodeIfPresent(Date.self, forKey: .earliestBeginDate)
        requiresNetworkConnectivity = try container.decode(Bool.self, forKey: .requiresNetworkConnectivity)
        requiresExternalPower = try container.decode(Bool.self, forKey: .requiresExternalPower)
        protectionTypeOfRequiredData = try container.decodeIfPresent(String.self, forKey: .protectionTypeOfRequiredData)
        continuedProcessing = try container.decodeIfPresent(ContinuedProcessingOptions.self, forKey: .continuedProcessing)
        submittedAt = try container.decode(Date.self, forKey: .submittedAt)
        remoteNotificationPayload = try container.decodeIfPresent(String.self, forKey: .remoteNotificationPayload)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(app, forKey: .app)
        try container.encode(identifier, forKey: .identifier)
        try container.encode(kind, forKey: .kind)
        try container.encodeIfPresent(earliestBeginDate, forKey: .earliestBeginDate)
        try container.encode(requiresNetworkConnectivity, forKey: .requiresNetworkConnectivity)
        try container.encode(requiresExternalPower, forKey: .requiresExternalPower)
        try container.encodeIfPresent(protectionTypeOfRequiredData, forKey: .protectionTypeOfRequiredData)
        try container.encodeIfPresent(continuedProcessing, forKey: .continuedProcessing)
        try container.encode(submittedAt, forKey: .submittedAt)
        try container.encodeIfPresent(remoteNotificationPayload, forKey: .remoteNotificationPayload)
    }

    /// The device conditions this request waits for, in the order they are checked.
    public var requiredConditions: [RequiredCondition] {
        var conditions: [RequiredCondition] = []
        if requiresExternalPower { conditions.append(.externalPower) }
        if requiresNetworkConnectivity { conditions.append(.network) }
        return conditions
    }

    /// The instant from which the request is due: its earliest begin date, or its
    /// submission when it has none. Continued processing ignores `earliestBeginDate`.
    public var dueDate: Date {
        if kind == .continuedProcessing { return submittedAt }
        return earliestBeginDate ?? submittedAt
    }
}

extension PendingRequest {
    /// Whether the request needs the network: it says so, or it is an app refresh and
    /// refreshes need it (``PolicyConfiguration/refreshRequiresNetwork``). The one rule the
    /// network policy, the eligibility index and the engine's learning all use.
    public func needsNetwork(refreshRequiresNetwork: Bool) -> Bool {
        Self.needsNetwork(kind: kind, requiresNetworkConnectivity: requiresNetworkConnectivity, refreshRequiresNetwork: refreshRequiresNetwork)
    }

    /// ``needsNetwork(refreshRequiresNetwork:)`` for a request of `kind` that does or does not
    /// ask for the network itself.
    public static func needsNetwork(kind: TaskKind, requiresNetworkConnectivity: Bool, refreshRequiresNetwork: Bool) -> Bool {
        requiresNetworkConnectivity || (kind == .appRefresh && refreshRequiresNetwork)
    }
}

extension PendingRequest {
    /// Whether this request comes back when its run is cut off (its process died, or its
    /// replica's lease ran out): every kind's does but continued processing's, the user's
    /// foreground work, which ends with its process (docs/system.md, "Continued processing").
    public var isRestoredWhenCutOff: Bool { kind != .continuedProcessing }

    /// Why a cut-off run's request is not restored (continued processing), in every
    /// message and stop reason that says so.
    public static let whyNotRestoredWhenCutOff = "continued processing begins at the user's action, so its request was not restored"

    /// What became of this request when its run was cut off, for the messages that say so.
    public var cutOffFate: String {
        isRestoredWhenCutOff ? "its request restored" : Self.whyNotRestoredWhenCutOff
    }
}
