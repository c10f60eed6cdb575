import Foundation
import SchedulerCore

/// Writes the messages an app sends on its way to its first task, and with every submit,
/// as the JSON `JSONEncoder` would give for them (docs/protocol.md, "Coding of the frequent
/// messages"), without Codable: a process's first Codable encoding instantiates the
/// metadata of every nested type it meets, which cost a cold launch about 5 ms before the
/// app's handler could run, and each submit 25 us of encoding after that.
///
/// Only the hello, `finishedLaunching` and a plain submit (no continued-processing options,
/// data protection class or remote payload, finite dates) are written here; for anything
/// else ``encode(_:)`` answers nil and `MessageCoding` uses `JSONEncoder`. The daemon reads
/// both alike; tests check that each written message decodes to itself.
enum ClientEnvelopeWriter {
    /// The JSON of `envelope`, or nil when it is not one of the messages written here.
    static func encode(_ envelope: ClientEnvelope) -> Data? {
        var json = PlainJSONWriter()
        json.raw("{\"id\":")
        json.integer(envelope.id)
        json.raw(",\"request\":")
        switch envelope.request {
        case .hello(let hello):
            json.raw("{\"hello\":{\"_0\":{\"role\":")
            json.string(hello.role.rawValue)
            if let app = hello.app {
                json.raw(",\"app\":")
                json.string(app.rawValue)
            }
            json.raw("}}}")
        case .app(.finishedLaunching(let registered)):
            json.raw("{\"app\":{\"_0\":{\"finishedLaunching\":{\"registered\":[")
            for (index, identifier) in registered.enumerated() {
                if index > 0 { json.raw(",") }
                json.string(identifier)
            }
            json.raw("]}}}}")
        case .app(.submit(let request)):
            guard request.continuedProcessing == nil, request.protectionTypeOfRequiredData == nil,
                  request.remoteNotificationPayload == nil else { return nil }
            json.raw("{\"app\":{\"_0\":{\"submit\":{\"_0\":{\"app\":")
            json.string(request.app.rawValue)
            json.raw(",\"identifier\":")
            json.string(request.identifier)
            json.raw(",\"kind\":")
            json.string(request.kind.rawValue)
            if let earliest = request.earliestBeginDate {
                json.raw(",\"earliestBeginDate\":")
                guard json.seconds(earliest) else { return nil }
            }
            json.raw(",\"requiresNetworkConnectivity\":")
            json.bool(request.requiresNetworkConnectivity)
            json.raw(",\"requiresExternalPower\":")
            json.bool(request.requiresExternalPower)
            json.raw(",\"submittedAt\":")
            guard json.seconds(request.submittedAt) else { return nil }
            json.raw("}}}}}")
        case .app(.taskCompleted(let run, let success)):
            json.raw("{\"app\":{\"_0\":{\"taskCompleted\":{\"run\":")
            json.integer(run.rawValue)
            json.raw(",\"success\":")
            json.bool(success)
            json.raw("}}}}")
        default:
            return nil
        }
        json.raw("}")
        return json.data
    }
}

/// Writes the daemon's frequent replies, `done` and `welcome`, as `JSONEncoder` would give
/// them (see ``ClientEnvelopeWriter``): every submit is answered with a `done`.
enum DaemonEnvelopeWriter {
    /// The JSON of `envelope`, or nil when it is not one of the messages written here.
    static func encode(_ envelope: DaemonEnvelope) -> Data? {
        guard case .reply(let id, let reply) = envelope else { return nil }
        var json = PlainJSONWriter()
        json.raw("{\"reply\":{\"id\":")
        json.integer(id)
        json.raw(",\"_1\":")
        switch reply {
        case .done(let text):
            json.raw("{\"done\":{")
            if let text {
                json.raw("\"_0\":")
                json.string(text)
            }
            json.raw("}}")
        case .welcome(let welcome):
            json.raw("{\"welcome\":{\"_0\":{\"daemonPID\":")
            json.integer(welcome.daemonPID)
            if let enabled = welcome.backgroundRefreshEnabled {
                json.raw(",\"backgroundRefreshEnabled\":")
                json.bool(enabled)
            }
            json.raw("}}}")
        default:
            return nil
        }
        json.raw("}}")
        return json.data
    }
}
