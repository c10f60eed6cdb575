import Foundation
import SchedulerCore

// The messages bgtaskd and its clients exchange inside frames (docs/protocol.md,
// "Messages"). Each frame's payload is one JSON object: a client sends
// ``ClientEnvelope`` (a request and the number its reply will carry), the daemon sends
// ``DaemonEnvelope`` (a reply to a numbered request, or a message it pushes to an app).
// Swift's synthesized Codable form is the wire form: an enum case is an object with one
// key naming the case. The frame's version byte versions the whole set.

/// Who a connection speaks for; the first request of every connection says it.
public enum ClientRole: String, Codable, Sendable, Hashable {
    /// An app process: it may read and change only its own requests. The daemon checks
    /// that its executable (`/proc/<pid>/exe`) is the installed app's.
    case app
    /// `bgtask`, run by the same user: the administrator.
    case admin
}

/// The first request of every connection.
public struct Hello: Codable, Sendable, Hashable {
    /// Who the connection speaks for.
    public var role: ClientRole
    /// The app an app connection speaks for (its `CFBundleIdentifier`); the daemon checks
    /// that the process runs the app's installed executable.
    public var app: AppID?

    /// Creates a hello.
    public init(role: ClientRole, app: AppID? = nil) {
        self.role = role
        self.app = app
    }
}

/// How an app's own lifecycle changed, as the app reports it.
public enum AppTransition: String, Codable, Sendable, Hashable {
    /// The user opened the app (counts as a use; lifts a force-quit).
    case foreground
    /// The app moved to the background.
    case background
    /// The user force-quit the app.
    case forceQuit
}

/// What an app asks of the daemon, about itself only.
public enum AppRequest: Codable, Sendable, Hashable {
    /// The app finished launching: its registration window closed with these identifiers
    /// registered. The daemon hands it the runs it was launched for.
    case finishedLaunching(registered: [String])
    /// `BGTaskScheduler.submit`: acknowledged only once the request is on disk.
    case submit(PendingRequest)
    /// `cancel(taskRequestWithIdentifier:)`.
    case cancel(identifier: String)
    /// `cancelAllTaskRequests()`.
    case cancelAll
    /// `getPendingTaskRequests`.
    case pending
    /// `setTaskCompleted(success:)` of a run the daemon pushed.
    case taskCompleted(run: RunID, success: Bool)
    /// The run's expiration was delivered to the app.
    case expirationDelivered(run: RunID, handlerWasSet: Bool)
    /// A continued-processing run's progress, as the daemon asked for it.
    case progressSampled(run: RunID, completedUnitCount: Int64)
    /// The app could not start a pushed run (no handler registered for it).
    case launchFailed(run: RunID, reason: String)
    /// `_simulateLaunchForTaskWithIdentifier`.
    case simulateLaunch(identifier: String)
    /// `_simulateExpirationForTaskWithIdentifier`.
    case simulateExpiration(identifier: String)
    /// The Background App Refresh switch of the app.
    case setBackgroundRefresh(enabled: Bool)
    /// Reads the Background App Refresh switch.
    case backgroundRefreshStatus
    /// The app's own lifecycle transition.
    case lifecycle(AppTransition)
    /// The app began its first background assertion (`beginBackgroundTask`), or ended its
    /// last: while it holds one, a process the daemon launched is not suspended (up to the
    /// assertion window).
    case assertionsHeld(Bool)
    /// `BGTaskScheduler.setRetryPolicy` for one identifier (`nil` removes it).
    case setRetryPolicy(identifier: String, policy: RetryPolicyTerms?)
    /// Reads a durable checkpoint (`BGCheckpointStore`).
    case checkpointGet(key: String)
    /// Writes a durable checkpoint; acknowledged once on disk.
    case checkpointSet(key: String, value: Data)
    /// Removes a checkpoint.
    case checkpointRemove(key: String)
    /// The checkpoint keys that have values.
    case checkpointKeys
}

extension AppRequest {
    /// The name of the request on the wire (the key of its case in the synthesized form).
    public var caseName: String {
        switch self {
        case .finishedLaunching: "finishedLaunching"
        case .submit: "submit"
        case .cancel: "cancel"
        case .cancelAll: "cancelAll"
        case .pending: "pending"
        case .taskCompleted: "taskCompleted"
        case .expirationDelivered: "expirationDelivered"
        case .progressSampled: "progressSampled"
        case .launchFailed: "launchFailed"
        case .simulateLaunch: "simulateLaunch"
        case .simulateExpiration: "simulateExpiration"
        case .setBackgroundRefresh: "setBackgroundRefresh"
        case .backgroundRefreshStatus: "backgroundRefreshStatus"
        case .lifecycle: "lifecycle"
        case .assertionsHeld: "assertionsHeld"
        case .setRetryPolicy: "setRetryPolicy"
        case .checkpointGet: "checkpointGet"
        case .checkpointSet: "checkpointSet"
        case .checkpointRemove: "checkpointRemove"
        case .checkpointKeys: "checkpointKeys"
        }
    }

    /// Every app request's name, for the message that refuses an unknown one (a test
    /// checks it against ``caseName`` of one request of every case).
    public static let caseNames = [
        "finishedLaunching", "submit", "cancel", "cancelAll", "pending", "taskCompleted", "expirationDelivered",
        "progressSampled", "launchFailed", "simulateLaunch", "simulateExpiration", "setBackgroundRefresh",
        "backgroundRefreshStatus", "lifecycle", "assertionsHeld", "setRetryPolicy", "checkpointGet", "checkpointSet",
        "checkpointRemove", "checkpointKeys",
    ]
}

/// A retry policy as it travels: checked by the daemon before it becomes a `RetryPolicy`
/// (whose initializer refuses a negative delay or a multiplier below 1).
public struct RetryPolicyTerms: Codable, Sendable, Hashable {
    /// The delay before the first retry, in seconds.
    public var initialDelay: Double
    /// Each further retry waits this many times longer.
    public var multiplier: Double
    /// No retry waits longer, in seconds.
    public var maximumDelay: Double
    /// Give up after this many consecutive failures (`nil`: never).
    public var maximumAttempts: Int?

    /// The terms of `policy`.
    public init(_ policy: RetryPolicy) {
        initialDelay = policy.initialDelay
        multiplier = policy.multiplier
        maximumDelay = policy.maximumDelay
        maximumAttempts = policy.maximumAttempts
    }

    /// The policy, or a message naming the field out of range.
    public func policy() -> Result<RetryPolicy, DaemonFailure> {
        guard initialDelay.isFinite, (0...31_536_000).contains(initialDelay) else {
            return .failure(DaemonFailure(.invalid, "retry policy: initialDelay must be 0 to 31536000 seconds, got \(initialDelay)"))
        }
        guard multiplier.isFinite, (1...1000).contains(multiplier) else {
            return .failure(DaemonFailure(.invalid, "retry policy: multiplier must be 1 to 1000, got \(multiplier)"))
        }
        guard maximumDelay.isFinite, (0...31_536_000).contains(maximumDelay) else {
            return .failure(DaemonFailure(.invalid, "retry policy: maximumDelay must be 0 to 31536000 seconds, got \(maximumDelay)"))
        }
        // RetryPolicy raises a cap below the first delay to it; a client built on it never
        // sends one, so one that does is not ours.
        guard maximumDelay >= initialDelay else {
            return .failure(DaemonFailure(.invalid, "retry policy: maximumDelay (\(maximumDelay) s) must not be below initialDelay (\(initialDelay) s)"))
        }
        if let maximumAttempts, maximumAttempts < 0 {
            return .failure(DaemonFailure(.invalid, "retry policy: maximumAttempts must not be negative, got \(maximumAttempts)"))
        }
        return .success(RetryPolicy(initialDelay: initialDelay, multiplier: multiplier, maximumDelay: maximumDelay, maximumAttempts: maximumAttempts))
    }
}

/// What `bgtask` asks of the daemon.
public enum AdminRequest: Codable, Sendable, Hashable {
    /// The daemon's state: pid, paths, apps, pending and running counts, conditions.
    case status
    /// The installed apps and their processes.
    case apps
    /// Installs (or reinstalls) the app whose manifest is at this absolute path.
    case install(manifestPath: String)
    /// Removes an app and its requests.
    case uninstall(app: AppID)
    /// The pending requests, of one app or of all.
    case pending(app: AppID?)
    /// Launches a pending request now (simulate launch), starting the app if needed.
    case run(app: AppID, identifier: String)
    /// Expires a run in progress now (simulate expiration).
    case expire(app: AppID, identifier: String)
    /// Why a request has not run, from the live engine.
    case why(app: AppID, identifier: String)
    /// The device conditions the engine judges with.
    case conditions
    /// The policy configuration in force.
    case policy
    /// Turns an app's Background App Refresh switch on or off.
    case setBackgroundRefresh(app: AppID, enabled: Bool)
    /// The user opened the app.
    case open(app: AppID)
    /// The app went to the background.
    case background(app: AppID)
    /// The user force-quit the app.
    case forceQuit(app: AppID)
    /// A remote wake (the silent-push analogue) with an optional JSON payload.
    case push(app: AppID, payload: String?)
    /// The user responds to one of the app's delivered notifications (taps it, or one of its
    /// actions): sent to the app's running process.
    case respond(app: AppID, response: NotificationResponseRequest)
}

extension AdminRequest {
    /// Whether the request only reads (status, apps, pending, why, conditions, policy): a
    /// daemon that is stopping still answers these, and refuses the others.
    public var onlyReads: Bool {
        switch self {
        case .status, .apps, .pending, .why, .conditions, .policy: true
        case .install, .uninstall, .run, .expire, .setBackgroundRefresh, .open, .background, .forceQuit, .push, .respond: false
        }
    }

    /// The app the request names, if it names one.
    public var app: AppID? {
        switch self {
        case .status, .apps, .install, .conditions, .policy: nil
        case .pending(let app): app
        case .uninstall(let app), .run(let app, _), .expire(let app, _), .why(let app, _), .setBackgroundRefresh(let app, _),
             .open(let app), .background(let app), .forceQuit(let app), .push(let app, _), .respond(let app, _): app
        }
    }

    /// The name of the request on the wire (the key of its case in the synthesized form).
    public var caseName: String {
        switch self {
        case .status: "status"
        case .apps: "apps"
        case .install: "install"
        case .uninstall: "uninstall"
        case .pending: "pending"
        case .run: "run"
        case .expire: "expire"
        case .why: "why"
        case .conditions: "conditions"
        case .policy: "policy"
        case .setBackgroundRefresh: "setBackgroundRefresh"
        case .open: "open"
        case .background: "background"
        case .forceQuit: "forceQuit"
        case .push: "push"
        case .respond: "respond"
        }
    }

    /// Every administrator request's name, for the message that refuses an unknown one (a
    /// test checks it against ``caseName`` of one request of every case).
    public static let caseNames = [
        "status", "apps", "install", "uninstall", "pending", "run", "expire", "why", "conditions", "policy",
        "setBackgroundRefresh", "open", "background", "forceQuit", "push", "respond",
    ]
}

/// A request of any role.
public enum ClientRequest: Codable, Sendable, Hashable {
    /// The first request of a connection.
    case hello(Hello)
    /// An app's request.
    case app(AppRequest)
    /// An administrator's request.
    case admin(AdminRequest)
}

/// A numbered request: the reply carries the same number.
public struct ClientEnvelope: Codable, Sendable, Hashable {
    /// The request's number, unique on its connection, within ``requestIDs``.
    public var id: UInt64
    /// The request.
    public var request: ClientRequest

    /// The numbers a request may have: from 1. A reply numbered 0
    /// (``MessageLink/connectionReplyID``) answers the connection itself, so a request
    /// numbered 0 would be answered by what a client takes for the connection's failure;
    /// such a message is refused as malformed (docs/protocol.md, "Malformed messages").
    public static let requestIDs: ClosedRange<UInt64> = 1...UInt64.max

    /// What a request's number must be, as a malformed message's diagnosis says it.
    public static let requestIDRule = "'id' must be a whole number from \(requestIDs.lowerBound) to \(requestIDs.upperBound)"

    /// Creates an envelope.
    public init(id: UInt64, request: ClientRequest) {
        self.id = id
        self.request = request
    }

    private enum CodingKeys: String, CodingKey {
        case id, request
    }

    /// Decodes an envelope, refusing a number outside ``requestIDs``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let id = try container.decode(UInt64.self, forKey: .id)
        guard Self.requestIDs.contains(id) else {
            throw DecodingError.dataCorruptedError(forKey: .id, in: container, debugDescription: "\(Self.requestIDRule), got \(id)")
        }
        self.id = id
        request = try container.decode(ClientRequest.self, forKey: .request)
    }
}

/// Why a request failed, in a form clients map onto their own errors.
public enum FailureCode: String, Codable, Sendable, Hashable {
    /// A submission was refused; `rejection` says with which of Apple's codes.
    case submitRejected
    /// No request with that identifier is pending.
    case noPendingRequest
    /// No run of that identifier is in progress.
    case noRunningTask
    /// A run of that identifier is already in progress.
    case alreadyRunning
    /// The app is not installed with the daemon.
    case notInstalled
    /// The request is not allowed on this connection.
    case notPermitted
    /// The request is malformed (an argument out of range, an unknown key).
    case invalid
    /// The daemon could not carry it out (a store write failed...).
    case failed
    /// Not now, shortly: the daemon's own process of the app is finishing the runs it was
    /// started for (the daemon expires them), so another process of the app cannot be the
    /// app yet; ask again in a moment (docs/daemon.md, "One process per app").
    case busy
    /// The daemon has as many connections open as it keeps
    /// (`FrameServer.maximumConnections`): sent as the reply to the connection itself
    /// (``MessageLink/connectionReplyID``) before the connection is closed; try again once
    /// others have closed (docs/protocol.md, "Limits").
    case connectionLimit
    /// Another process of the app is the app (connected, started by the user, or the
    /// daemon's own with runs handed to it): one process per app. The refused process is
    /// not the app and must not act as one with a scheduler of its own, whose requests the
    /// daemon would never see (docs/daemon.md, "One process per app").
    case appConnected

    /// A code this build does not know (a newer daemon's) reads as ``failed``: the message
    /// still says what happened, and the reply is not lost to a decoding error.
    public init(from decoder: any Decoder) throws {
        let raw = try decoder.singleValueContainer().decode(String.self)
        self = FailureCode(rawValue: raw) ?? .failed
    }
}

/// A failure: a code and a message that names the culprit.
public struct DaemonFailure: Codable, Sendable, Hashable, Error, CustomStringConvertible {
    /// What kind of failure.
    public var code: FailureCode
    /// For ``FailureCode/submitRejected``: Apple's code.
    public var rejection: SubmitRejection.Code?
    /// What went wrong.
    public var message: String

    /// Creates a failure.
    public init(_ code: FailureCode, _ message: String, rejection: SubmitRejection.Code? = nil) {
        self.code = code
        self.message = message
        self.rejection = rejection
    }

    public var description: String { message }
}

/// The reply to one request.
public enum Reply: Codable, Sendable, Hashable {
    /// Done; an optional line for people.
    case done(String?)
    /// Failed.
    case failed(DaemonFailure)
    /// Welcome of a hello: the connection is accepted in its role.
    case welcome(Welcome)
    /// Pending requests.
    case pending([PendingRequest])
    /// A switch's value.
    case flag(Bool)
    /// A checkpoint's value (nil: none).
    case data(Data?)
    /// Names (checkpoint keys).
    case names([String])
    /// A document for `bgtask` to print: text for people and its JSON form (status, apps,
    /// why, conditions, policy, install).
    case report(text: String, json: String)
}

/// The daemon's answer to a hello.
public struct Welcome: Codable, Sendable, Hashable {
    /// The daemon's process id.
    public var daemonPID: Int32
    /// For an app connection: the app's Background App Refresh switch.
    public var backgroundRefreshEnabled: Bool?

    /// Creates a welcome.
    public init(daemonPID: Int32, backgroundRefreshEnabled: Bool? = nil) {
        self.daemonPID = daemonPID
        self.backgroundRefreshEnabled = backgroundRefreshEnabled
    }
}

/// The user's response to one of an app's delivered notifications (`bgtask respond`; Apple:
/// what `UNNotificationResponse` carries): which notification, which action, what was typed.
public struct NotificationResponseRequest: Codable, Sendable, Hashable {
    /// The notification request's identifier.
    public var notification: String
    /// The action: `com.apple.UNNotificationDefaultActionIdentifier` (a tap),
    /// `com.apple.UNNotificationDismissActionIdentifier`, or one of its category's actions.
    public var action: String
    /// What the user typed, for a text-input action.
    public var text: String?

    /// The identifier of the default action (a tap), as UserNotifications spells it.
    public static let defaultAction = "com.apple.UNNotificationDefaultActionIdentifier"
    /// The identifier of the dismissal, as UserNotifications spells it.
    public static let dismissAction = "com.apple.UNNotificationDismissActionIdentifier"
    /// The most bytes a notification's or an action's identifier may have here.
    public static let maximumIdentifierBytes = 1_024
    /// The most bytes of text.
    public static let maximumTextBytes = 4_096

    /// A response to `notification` with `action` (the default: a tap) and `text`.
    public init(notification: String, action: String = NotificationResponseRequest.defaultAction, text: String? = nil) {
        self.notification = notification
        self.action = action
        self.text = text
    }

    /// What is wrong with the response, in one sentence naming the culprit; `nil` when it
    /// can be sent: identifiers not empty, at most ``maximumIdentifierBytes``, without a
    /// control character (they are written to logs); text at most ``maximumTextBytes``,
    /// without a control character but line feeds and tabs. The CLI checks before it sends,
    /// the daemon again.
    public var problem: String? {
        for (name, value) in [("notification identifier", notification), ("action identifier", action)] {
            if value.isEmpty { return "the \(name) is empty" }
            if value.utf8.count > Self.maximumIdentifierBytes { return "the \(name) is \(value.utf8.count) bytes; at most \(Self.maximumIdentifierBytes)" }
            if value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                return "the \(name) \"\(StrictJSON.escaped(value))\" holds a control character"
            }
        }
        if let text {
            if text.utf8.count > Self.maximumTextBytes { return "the text is \(text.utf8.count) bytes; at most \(Self.maximumTextBytes)" }
            if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\n" && $0 != "\t" }) {
                return "the text holds a control character other than a line feed or a tab"
            }
        }
        return nil
    }
}

/// What the daemon tells an app without being asked.
public enum AppPush: Codable, Sendable, Hashable {
    /// Run this task now, within `budget` seconds (nil: no budget).
    case launch(RunRecord, budget: TimeInterval?)
    /// The run's time is up: call its expiration handler.
    case expire(run: RunID, reason: String)
    /// The run was ended by force after its grace period.
    case terminate(run: RunID, reason: String)
    /// The run is over, as recorded.
    case finished(RunRecord)
    /// Report the continued-processing run's progress.
    case sampleProgress(run: RunID)
    /// The daemon asks the app to leave: the user force-quit it, or it was uninstalled.
    case quit(reason: String)
    /// The user opened the app (`bgtask open`): it comes to the foreground.
    case foreground
    /// The user sent the app to the background (`bgtask background`).
    case background
    /// The device's conditions as the daemon's scheduler sees them: once the app finished
    /// launching, then at each change while it is connected (held while its process is
    /// frozen, the latest sent when it is thawed). The app posts iOS's change notifications
    /// from them (Low Power Mode, thermal state, battery).
    case deviceConditions(Conditions)
    /// The user responded to one of the app's delivered notifications (`bgtask respond`):
    /// its notification center tells its delegate, as iOS does on a tap.
    case notificationResponse(NotificationResponseRequest)

    /// Every case's name on the wire. A push whose name is not here comes from a newer
    /// daemon: an app ignores it (``MessageLink``) rather than closing its connection.
    public static let names: Set<String> = [
        "launch", "expire", "terminate", "finished", "sampleProgress", "quit", "foreground", "background", "deviceConditions",
        "notificationResponse",
    ]
}

/// What the daemon sends.
public enum DaemonEnvelope: Codable, Sendable, Hashable {
    /// The reply to request `id`.
    case reply(id: UInt64, Reply)
    /// A message pushed to an app.
    case push(AppPush)
}

/// Encoding and strict decoding of the messages (frame payloads).
public enum MessageCoding {
    /// The JSON form of `message`.
    public static func encode<Message: Encodable>(_ message: Message) throws -> Data {
        try jsonEncoded(message)
    }

    /// The JSON form of a client's `envelope`: an app's launch, submit and completion
    /// messages are written by hand (``ClientEnvelopeWriter``, the same JSON), the others
    /// as above.
    public static func encode(_ envelope: ClientEnvelope) throws -> Data {
        try ClientEnvelopeWriter.encode(envelope) ?? jsonEncoded(envelope)
    }

    /// The JSON form of the daemon's `envelope`: `done` and `welcome` replies and the
    /// launch, expire, terminate and deviceConditions pushes are written by hand
    /// (``DaemonEnvelopeWriter``: JSON that reads back as the same message, numbers as Swift
    /// writes them), the others as above.
    public static func encode(_ envelope: DaemonEnvelope) throws -> Data {
        try DaemonEnvelopeWriter.encode(envelope) ?? jsonEncoded(envelope)
    }

    /// `message` through `JSONEncoder`, with the protocol's date and data forms.
    static func jsonEncoded<Message: Encodable>(_ message: Message) throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.dataEncodingStrategy = .base64
        return try encoder.encode(message)
    }

    /// A client's envelope: the frequent messages through ``PlainMessageReader``, any
    /// other (and anything it does not take on) as ``decode(_:from:)-generic`` decodes it,
    /// then refused if it has a key its request does not (``UnknownKeys``: the plain reader
    /// refuses those itself).
    public static func decode(_ type: ClientEnvelope.Type, from payload: Data) throws(MessageDecodingError) -> ClientEnvelope {
        if let envelope = PlainMessageReader.clientEnvelope(payload) { return envelope }
        let envelope = try foundationDecoded(type, from: payload)
        if let place = unknownKey(in: payload, of: envelope) {
            throw MessageDecodingError(message: UnknownKeys.problem(at: place))
        }
        return envelope
    }

    /// The place of a key `payload` has that `envelope`, decoded from it, does not.
    static func unknownKey(in payload: Data, of envelope: ClientEnvelope) -> [UnknownKeys.Step]? {
        // The envelope was just decoded, so it encodes; if it did not, there is nothing to
        // compare with and the decoded request stands.
        guard let known = try? jsonEncoded(envelope) else { return nil }
        return UnknownKeys.first(in: payload, knownFrom: known)
    }

    /// The daemon's envelope: the frequent replies and the launch, expire and terminate
    /// pushes through ``PlainMessageReader``, the rest as ``decode(_:from:)-generic``
    /// decodes it.
    public static func decode(_ type: DaemonEnvelope.Type, from payload: Data) throws(MessageDecodingError) -> DaemonEnvelope {
        if let envelope = PlainMessageReader.daemonEnvelope(payload) { return envelope }
        return try foundationDecoded(type, from: payload)
    }

    /// Decodes `payload` after the strict checks every outside document passes
    /// (`StrictJSON`: duplicate keys refused, syntax errors with line and column).
    /// - Throws: ``MessageDecodingError`` naming what was wrong.
    public static func decode<Message: Decodable>(_ type: Message.Type, from payload: Data) throws(MessageDecodingError) -> Message {
        try foundationDecoded(type, from: payload)
    }

    /// `payload` through `StrictJSON` and `JSONDecoder`, with the protocol's date and data
    /// forms.
    static func foundationDecoded<Message: Decodable>(_ type: Message.Type, from payload: Data) throws(MessageDecodingError) -> Message {
        do {
            try StrictJSON.validate(payload)
        } catch {
            throw MessageDecodingError(message: "\(error.verdict(on: "the message")): \(error)")
        }
        do {
            return try jsonDecoder().decode(type, from: payload)
        } catch {
            throw MessageDecodingError(message: "the message is not a \(Message.self): \(DecodingErrorText.describe(error))")
        }
    }

    /// A `JSONDecoder` with the protocol's date and data forms.
    static func jsonDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        decoder.dataDecodingStrategy = .base64
        return decoder
    }
}

/// A frame whose payload is not a message of the protocol.
public struct MessageDecodingError: Error, Sendable, CustomStringConvertible {
    /// What was wrong.
    public var message: String
    public var description: String { message }
}
