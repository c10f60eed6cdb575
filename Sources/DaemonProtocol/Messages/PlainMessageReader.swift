import Foundation
import SchedulerCore

/// Reads the frequent messages without Codable (docs/protocol.md, "Coding of the frequent
/// messages"): on the daemon's side an app's hello, `finishedLaunching`, plain submit,
/// `taskCompleted` and `cancel`; on the app's side the `done` and `welcome` replies and the
/// `launch`, `expire`, `terminate` and `deviceConditions` pushes.
///
/// Each reader accepts exactly the wire form Swift's synthesized Codable gives (see
/// `DaemonMessages.swift`) with only the keys it knows, and answers nil for anything else:
/// another message, a key it does not know, an optional written as `null`, a string with
/// an escape, a number in a rarer form. `MessageCoding` then decodes the payload with
/// `StrictJSON` and `JSONDecoder`, so a message reads the same either way and every error
/// is still theirs. Tests check both paths against each other.
enum PlainMessageReader {
    /// A client's envelope, or nil.
    static func clientEnvelope(_ payload: Data) -> ClientEnvelope? {
        guard let envelope = PlainJSONReader.read(payload)?.object(keys: ["id", "request"]),
              let id = envelope["id"]?.integer(UInt64.self), ClientEnvelope.requestIDs.contains(id),
              let request = envelope["request"].flatMap(clientRequest) else { return nil }
        return ClientEnvelope(id: id, request: request)
    }

    /// The daemon's envelope, or nil.
    static func daemonEnvelope(_ payload: Data) -> DaemonEnvelope? {
        guard let (name, body) = PlainJSONReader.read(payload)?.onlyMember else { return nil }
        switch name {
        case "reply":
            guard let envelope = body.object(keys: ["id", "_1"]),
                  let id = envelope["id"]?.integer(UInt64.self),
                  let reply = envelope["_1"].flatMap(reply) else { return nil }
            return .reply(id: id, reply)
        case "push":
            // A launch is what a cold-launched app reads first: through JSONDecoder, its first
            // Codable use would instantiate the metadata of every nested type (milliseconds).
            return onlyValue(body).flatMap(push).map(DaemonEnvelope.push)
        default:
            return nil
        }
    }

    /// The name of the push `payload` carries when it is well formed and not one of
    /// ``AppPush/names``: a newer daemon's message; nil for anything else.
    static func unknownPushName(_ payload: Data) -> String? {
        guard let (envelope, body) = PlainJSONReader.read(payload)?.onlyMember, envelope == "push",
              let (name, _) = onlyValue(body)?.onlyMember, !AppPush.names.contains(name) else { return nil }
        return name
    }

    /// A run's launch (a run not yet ended: no outcome or measurement), expiration or
    /// termination.
    private static func push(_ value: PlainJSONValue) -> AppPush? {
        guard let (name, body) = value.onlyMember else { return nil }
        switch name {
        case "launch":
            guard let fields = body.object(keys: ["_0", "budget"]), let record = fields["_0"].flatMap(launchedRun) else { return nil }
            guard let budget = fields["budget"] else { return .launch(record, budget: nil) }
            return budget.plainDouble.map { .launch(record, budget: $0) }
        case "expire", "terminate":
            guard let fields = body.object(keys: ["run", "reason"]), let run = fields["run"]?.integer(Int64.self),
                  let reason = fields["reason"]?.string else { return nil }
            return name == "expire" ? .expire(run: RunID(run), reason: reason) : .terminate(run: RunID(run), reason: reason)
        case "deviceConditions":
            // Every launched app gets one after its launch: through JSONDecoder it would be
            // the process's first Codable use.
            return onlyValue(body).flatMap(conditions).map(AppPush.deviceConditions)
        default:
            return nil
        }
    }

    /// The device's conditions in their Codable form (an optional written `null`, or a
    /// number in a rarer form, is left to JSONDecoder).
    private static func conditions(_ value: PlainJSONValue) -> Conditions? {
        guard let fields = value.object(keys: ["externalPower", "networkAvailable", "batteryLevel", "batteryState", "lowPowerMode",
                                               "thermalState", "networkMetered", "deviceIdle", "cpuPressure"]),
              let externalPower = fields["externalPower"]?.bool, let networkAvailable = fields["networkAvailable"]?.bool,
              let batteryState = fields["batteryState"]?.string.flatMap(BatteryState.init(rawValue:)),
              let lowPowerMode = fields["lowPowerMode"]?.bool,
              let thermalState = fields["thermalState"]?.string.flatMap(ThermalState.init(name:)),
              let deviceIdle = fields["deviceIdle"]?.bool else { return nil }
        var batteryLevel: Double?
        if let level = fields["batteryLevel"] {
            guard let number = level.plainDouble else { return nil }
            batteryLevel = number
        }
        var networkMetered: Bool?
        if let metered = fields["networkMetered"] {
            guard let flag = metered.bool else { return nil }
            networkMetered = flag
        }
        var cpuPressure: Double?
        if let pressure = fields["cpuPressure"] {
            guard let number = pressure.plainDouble else { return nil }
            cpuPressure = number
        }
        return Conditions(externalPower: externalPower, networkAvailable: networkAvailable, batteryLevel: batteryLevel,
                          batteryState: batteryState, lowPowerMode: lowPowerMode, thermalState: thermalState,
                          networkMetered: networkMetered, deviceIdle: deviceIdle, cpuPressure: cpuPressure)
    }

    /// A run as the daemon hands it over: its number, request and start only.
    private static func launchedRun(_ value: PlainJSONValue) -> RunRecord? {
        guard let fields = value.object(keys: ["id", "request", "startedAt"]),
              let id = fields["id"]?.integer(Int64.self),
              let request = fields["request"].flatMap(pendingRequest),
              let started = fields["startedAt"]?.plainDouble else { return nil }
        return RunRecord(id: RunID(id), request: request, startedAt: Date(timeIntervalSince1970: started))
    }

    /// The value of an enum case with one unlabelled associated value: `{"_0": value}`.
    private static func onlyValue(_ body: PlainJSONValue) -> PlainJSONValue? {
        body.object(keys: ["_0"])?["_0"]
    }

    private static func clientRequest(_ value: PlainJSONValue) -> ClientRequest? {
        guard let (name, body) = value.onlyMember, let payload = onlyValue(body) else { return nil }
        switch name {
        case "hello": return hello(payload).map(ClientRequest.hello)
        case "app": return appRequest(payload).map(ClientRequest.app)
        default: return nil
        }
    }

    private static func hello(_ value: PlainJSONValue) -> Hello? {
        guard let hello = value.object(keys: ["role", "app"]),
              let role = hello["role"]?.string.flatMap(ClientRole.init(rawValue:)) else { return nil }
        guard let app = hello["app"] else { return Hello(role: role) }
        guard let name = app.string else { return nil }
        return Hello(role: role, app: AppID(name))
    }

    private static func appRequest(_ value: PlainJSONValue) -> AppRequest? {
        guard let (name, body) = value.onlyMember else { return nil }
        switch name {
        case "finishedLaunching":
            guard case .array(let elements) = body.object(keys: ["registered"])?["registered"] else { return nil }
            var registered: [String] = []
            registered.reserveCapacity(elements.count)
            for element in elements {
                guard let identifier = element.string else { return nil }
                registered.append(identifier)
            }
            return .finishedLaunching(registered: registered)
        case "submit":
            return onlyValue(body).flatMap(pendingRequest).map(AppRequest.submit)
        case "taskCompleted":
            guard let fields = body.object(keys: ["run", "success"]),
                  let run = fields["run"]?.integer(Int64.self), let success = fields["success"]?.bool else { return nil }
            return .taskCompleted(run: RunID(run), success: success)
        case "cancel":
            return body.object(keys: ["identifier"])?["identifier"]?.string.map(AppRequest.cancel)
        default:
            return nil
        }
    }

    /// A request without the rarer fields (continued processing, data protection, a remote
    /// payload): those go through `JSONDecoder`.
    private static func pendingRequest(_ value: PlainJSONValue) -> PendingRequest? {
        guard let fields = value.object(keys: ["app", "identifier", "kind", "earliestBeginDate",
                                               "requiresNetworkConnectivity", "requiresExternalPower", "submittedAt"]),
              let app = fields["app"]?.string, let identifier = fields["identifier"]?.string,
              let kind = fields["kind"]?.string.flatMap(TaskKind.init(rawValue:)),
              let network = fields["requiresNetworkConnectivity"]?.bool, let power = fields["requiresExternalPower"]?.bool,
              let submitted = fields["submittedAt"]?.plainDouble else { return nil }
        var earliest: Date?
        if let value = fields["earliestBeginDate"] {
            guard let seconds = value.plainDouble else { return nil }
            earliest = Date(timeIntervalSince1970: seconds)
        }
        return PendingRequest(app: AppID(app), identifier: identifier, kind: kind, earliestBeginDate: earliest,
                              requiresNetworkConnectivity: network, requiresExternalPower: power,
                              submittedAt: Date(timeIntervalSince1970: submitted))
    }

    private static func reply(_ value: PlainJSONValue) -> Reply? {
        guard let (name, body) = value.onlyMember else { return nil }
        switch name {
        case "done":
            guard let fields = body.object(keys: ["_0"]) else { return nil }
            guard let text = fields["_0"] else { return .done(nil) }
            return text.string.map(Reply.done)
        case "welcome":
            guard let fields = onlyValue(body)?.object(keys: ["daemonPID", "backgroundRefreshEnabled"]),
                  let pid = fields["daemonPID"]?.integer(Int32.self) else { return nil }
            guard let enabled = fields["backgroundRefreshEnabled"] else { return .welcome(Welcome(daemonPID: pid)) }
            return enabled.bool.map { .welcome(Welcome(daemonPID: pid, backgroundRefreshEnabled: $0)) }
        default:
            return nil
        }
    }
}
