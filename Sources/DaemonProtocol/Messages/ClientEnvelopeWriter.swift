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
            json.raw("{\"app\":{\"_0\":{\"submit\":{\"_0\":")
            guard json.plainRequest(request) else { return nil }
            json.raw("}}}}")
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

/// Writes the daemon's frequent messages as `JSONEncoder` would give them (see
/// ``ClientEnvelopeWriter``): the `done` and `welcome` replies (every submit is answered
/// with a `done`), the `launch`, `expire` and `terminate` pushes of every run, and the
/// `deviceConditions` push every launched app gets.
enum DaemonEnvelopeWriter {
    /// The JSON of `envelope`, or nil when it is not one of the messages written here.
    static func encode(_ envelope: DaemonEnvelope) -> Data? {
        if case .push(let push) = envelope { return encode(push) }
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

    /// A run's launch (not yet ended, its request plain), expiration or termination, the
    /// device's conditions, or nil.
    private static func encode(_ push: AppPush) -> Data? {
        var json = PlainJSONWriter()
        json.raw("{\"push\":{\"_0\":")
        switch push {
        case .launch(let record, let budget):
            guard record.endedAt == nil, record.outcome == nil, record.success == nil, record.stopReason == nil,
                  record.cpuTime == nil, record.peakMemoryBytes == nil, record.energyJoules == nil, record.measuredBy == nil,
                  record.bytesRead == nil, record.bytesWritten == nil else { return nil }
            json.raw("{\"launch\":{\"_0\":{\"id\":")
            json.integer(record.id.rawValue)
            json.raw(",\"request\":")
            guard json.plainRequest(record.request) else { return nil }
            json.raw(",\"startedAt\":")
            guard json.seconds(record.startedAt) else { return nil }
            json.raw("}")
            if let budget {
                json.raw(",\"budget\":")
                guard json.double(budget) else { return nil }
            }
            json.raw("}}")
        case .expire(let run, let reason), .terminate(let run, let reason):
            if case .expire = push { json.raw("{\"expire\":{\"run\":") } else { json.raw("{\"terminate\":{\"run\":") }
            json.integer(run.rawValue)
            json.raw(",\"reason\":")
            json.string(reason)
            json.raw("}}")
        case .deviceConditions(let conditions):
            json.raw("{\"deviceConditions\":{\"_0\":")
            guard json.conditions(conditions) else { return nil }
            json.raw("}}")
        default:
            return nil
        }
        json.raw("}}")
        return json.data
    }
}
