import Foundation
import SchedulerCore

/// Writes the messages an app sends on its way to its first task, and with every submit,
/// as the JSON `JSONEncoder` would give for them (docs/protocol.md, "Messages"), without
/// Codable: a process's first Codable encoding instantiates the metadata of every nested
/// type it meets, which cost a cold launch about 5 ms before the app's handler could run,
/// and each submit 25 us of encoding after that.
///
/// Only the hello, `finishedLaunching` and a plain submit (no continued-processing options,
/// data protection class or remote payload, finite dates) are written here; for anything
/// else ``encode(_:)`` answers nil and `MessageCoding` uses `JSONEncoder`. The daemon reads
/// both alike; tests check that each written message decodes to itself.
enum ClientEnvelopeWriter {
    /// The JSON of `envelope`, or nil when it is not one of the messages written here.
    static func encode(_ envelope: ClientEnvelope) -> Data? {
        var json = "{\"id\":\(envelope.id),\"request\":"
        switch envelope.request {
        case .hello(let hello):
            json += "{\"hello\":{\"_0\":{\"role\":"
            string(hello.role.rawValue, into: &json)
            if let app = hello.app {
                json += ",\"app\":"
                string(app.rawValue, into: &json)
            }
            json += "}}}"
        case .app(.finishedLaunching(let registered)):
            json += "{\"app\":{\"_0\":{\"finishedLaunching\":{\"registered\":["
            for (index, identifier) in registered.enumerated() {
                if index > 0 { json += "," }
                string(identifier, into: &json)
            }
            json += "]}}}}"
        case .app(.submit(let request)):
            guard request.continuedProcessing == nil, request.protectionTypeOfRequiredData == nil,
                  request.remoteNotificationPayload == nil else { return nil }
            json += "{\"app\":{\"_0\":{\"submit\":{\"_0\":{\"app\":"
            string(request.app.rawValue, into: &json)
            json += ",\"identifier\":"
            string(request.identifier, into: &json)
            json += ",\"kind\":"
            string(request.kind.rawValue, into: &json)
            if let earliest = request.earliestBeginDate {
                guard let seconds = number(earliest) else { return nil }
                json += ",\"earliestBeginDate\":" + seconds
            }
            json += ",\"requiresNetworkConnectivity\":\(request.requiresNetworkConnectivity)"
            json += ",\"requiresExternalPower\":\(request.requiresExternalPower)"
            guard let submitted = number(request.submittedAt) else { return nil }
            json += ",\"submittedAt\":" + submitted
            json += "}}}}}"
        default:
            return nil
        }
        json += "}"
        return Data(json.utf8)
    }

    /// A date as `JSONEncoder`'s `.secondsSince1970` writes it: the shortest decimal that
    /// reads back as the same double (Swift's description); nil when not finite, which
    /// `JSONEncoder` refuses (the caller then lets it say so).
    private static func number(_ date: Date) -> String? {
        let seconds = date.timeIntervalSince1970
        return seconds.isFinite ? "\(seconds)" : nil
    }

    /// `text` as a JSON string: quotes, backslashes and control characters escaped.
    private static func string(_ text: String, into json: inout String) {
        json += "\""
        var plainStart = text.unicodeScalars.startIndex
        var index = plainStart
        let scalars = text.unicodeScalars
        while index < scalars.endIndex {
            let scalar = scalars[index]
            let escape: String? = switch scalar {
            case "\"": "\\\""
            case "\\": "\\\\"
            case "\n": "\\n"
            case "\r": "\\r"
            case "\t": "\\t"
            default: scalar.value < 0x20 ? "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16) : nil
            }
            if let escape {
                json.unicodeScalars.append(contentsOf: scalars[plainStart..<index])
                json += escape
                plainStart = scalars.index(after: index)
            }
            index = scalars.index(after: index)
        }
        json.unicodeScalars.append(contentsOf: scalars[plainStart..<scalars.endIndex])
        json += "\""
    }
}
