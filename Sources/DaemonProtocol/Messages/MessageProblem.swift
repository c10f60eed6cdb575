import Foundation
import SchedulerCore

/// Why a client's frame is not a request of the protocol, said so that the sender can act:
/// the field at fault and what it should hold, and the request's number when it can be read,
/// so that the daemon answers `invalid` to that request before it closes the connection
/// (docs/protocol.md, "Malformed messages").
///
/// Only a frame that failed to decode is looked at again, so the common path pays nothing.
/// Foundation's own decoding errors name neither the field nor the fault in words a client's
/// author knows (an unknown request reads as "Key '_0' not found", an id of -1 as "not valid
/// JSON"); this walks the message's shape from the outside in and stops at the first fault.
public struct MessageProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request's number, when the frame had a valid one.
    public var id: UInt64?
    /// What is wrong, naming the field.
    public var message: String

    public var description: String { message }

    /// The first fault of a client's frame `payload` that ``MessageCoding`` could not decode.
    public static func diagnose(clientPayload payload: Data) -> MessageProblem {
        let scanned = StrictJSON.topLevelNumberLiterals(readingUpToFailure: payload)
        if let failure = scanned.failure {
            // Not JSON, so not parsed again: its number is the one the validating scan read
            // before the fault, if any.
            return MessageProblem(id: requestNumber(literal: scanned.numbers["id"]), message: "\(failure.verdict(on: "the message")): \(failure)")
        }
        guard let object = (try? JSONSerialization.jsonObject(with: payload, options: [.fragmentsAllowed])) as? [String: Any] else {
            return MessageProblem(id: nil, message: "a message must be a JSON object with the keys 'id' and 'request'")
        }
        if let extra = object.keys.sorted().first(where: { $0 != "id" && $0 != "request" }) {
            return MessageProblem(id: nil, message: "unknown key \(shown(extra)) in the message: it has only 'id' and 'request'")
        }
        guard let rawID = object["id"] else { return MessageProblem(id: nil, message: "the message has no 'id' (the request's number)") }
        guard let id = requestNumber(payload) else {
            return MessageProblem(id: nil, message: "\(ClientEnvelope.requestIDRule), got \(shown(rawID))")
        }
        guard let request = object["request"] else { return MessageProblem(id: id, message: "the message has no 'request'") }
        let roles = ["hello", "app", "admin"]
        guard let requestObject = request as? [String: Any], requestObject.count == 1, let role = requestObject.keys.first else {
            return MessageProblem(id: id, message: "'request' must be an object with one key: \(roles.joined(separator: ", ")); got \(shown(request))")
        }
        guard roles.contains(role) else {
            return MessageProblem(id: id, message: "unknown kind of request \(shown(role)): expected \(roles.joined(separator: ", "))")
        }
        // The synthesized form of a case with one unlabelled value: {"_0": value}.
        guard let wrapper = requestObject[role] as? [String: Any], wrapper.count == 1, let body = wrapper["_0"] else {
            return MessageProblem(id: id, message: "'request.\(role)' must be an object with one key, '_0', holding the \(role) request")
        }
        let known: [String]
        switch role {
        case "hello":
            if let problem = decodingProblem(Hello.self, body, at: "request.hello") { return MessageProblem(id: id, message: problem) }
            known = []
        case "app":
            known = AppRequest.caseNames
        default:
            known = AdminRequest.caseNames
        }
        if role != "hello" {
            guard let cases = body as? [String: Any], cases.count == 1, let name = cases.keys.first else {
                return MessageProblem(id: id, message: "'request.\(role)._0' must be an object with one key naming the \(role) request, one of: \(known.joined(separator: ", "))")
            }
            guard known.contains(name) else {
                return MessageProblem(id: id, message: "unknown \(role) request \(shown(name)); the \(role) requests are: \(known.joined(separator: ", "))")
            }
        }
        // The shape holds up to the request's name: its arguments are at fault.
        do {
            let envelope = try MessageCoding.jsonDecoder().decode(ClientEnvelope.self, from: payload)
            if let place = MessageCoding.unknownKey(in: payload, of: envelope) {
                return MessageProblem(id: id, message: UnknownKeys.problem(at: place))
            }
            return MessageProblem(id: id, message: "the message could not be read")
        } catch {
            // A number no field's type can hold (2^63 for a run, 1.5 for a count) makes
            // Foundation's decoder say only "The given data was not valid JSON.", with no
            // place: find the number whose replacement by 0 lets the message decode.
            if case .dataCorrupted(let context)? = error as? DecodingError, context.codingPath.isEmpty,
               let (path, number) = unfitNumber(in: object) {
                return MessageProblem(id: id, message: "at \(path): expected a whole number within the field's range (at most 64 bits), got \(number)")
            }
            return MessageProblem(id: id, message: DecodingErrorText.describe(error))
        }
    }

    /// Where `message` holds a number that the envelope cannot decode, with the number: the
    /// first fractional or out-of-range number (not exactly an `Int64`) whose
    /// replacement by 0 makes the whole message decode.
    private static func unfitNumber(in message: [String: Any]) -> (path: String, number: String)? {
        var candidates: [(path: [PathStep], text: String)] = []
        collectNumbers(message, path: [], into: &candidates)
        // Each try decodes the whole message again: a few suspects only (a hostile frame of
        // 1 MiB could hold thousands), since the answer is a courtesy to a broken client.
        for candidate in candidates.prefix(16) {
            let replaced = replacing(candidate.path[...], in: message, with: 0)
            guard let data = try? JSONSerialization.data(withJSONObject: replaced, options: []) else { continue }
            if (try? MessageCoding.jsonDecoder().decode(ClientEnvelope.self, from: data)) != nil {
                return (pathText(candidate.path), candidate.text)
            }
        }
        return nil
    }

    /// One step from a value of a message to one inside it.
    enum PathStep: Hashable {
        /// The member of an object with this key.
        case key(String)
        /// The element of an array at this index.
        case index(Int)
        /// Any element of an array (a place all its elements share: ``UnknownKeys``).
        case element
    }

    /// Every number in `value` that is not exactly a 64-bit integer, with its path.
    private static func collectNumbers(_ value: Any, path: [PathStep], into found: inout [(path: [PathStep], text: String)]) {
        if let object = value as? [String: Any] {
            for key in object.keys.sorted() { collectNumbers(object[key]!, path: path + [.key(key)], into: &found) }
        } else if let array = value as? [Any] {
            for (index, element) in array.enumerated() { collectNumbers(element, path: path + [.index(index)], into: &found) }
        } else if let number = value as? NSNumber, !(value is Bool) {
            // Candidates only: a fractional date is right where it is; the decode decides.
            let double = number.doubleValue
            if double.rounded() != double || Int64(exactly: double) == nil {
                found.append((path, DecodingErrorText.printable("\(number)", limit: 40)))
            }
        }
    }

    private static func replacing(_ path: ArraySlice<PathStep>, in value: Any, with replacement: Any) -> Any {
        guard let step = path.first else { return replacement }
        switch step {
        case .key(let key):
            guard var object = value as? [String: Any], let inner = object[key] else { return value }
            object[key] = replacing(path.dropFirst(), in: inner, with: replacement)
            return object
        case .index(let index):
            guard var array = value as? [Any], array.indices.contains(index) else { return value }
            array[index] = replacing(path.dropFirst(), in: array[index], with: replacement)
            return array
        case .element:
            return value
        }
    }

    /// `path` as `request.app._0.submit._0.run` (an index as `[2]`, any element as `[]`), each
    /// key printable and cut short; "the message" for the message itself.
    static func pathText(_ path: some Collection<PathStep>) -> String {
        var text = ""
        for step in path {
            switch step {
            case .key(let key): text += (text.isEmpty ? "" : ".") + DecodingErrorText.printable(key, limit: 60)
            case .index(let index): text += "[\(index)]"
            case .element: text += "[]"
            }
        }
        return text.isEmpty ? "the message" : text
    }

    /// The request's number, read exactly (JSONSerialization would give 2^64 and 1.5 as
    /// numbers like any other), when it is one a request may have (not 0: that number's
    /// reply is the connection's).
    private static func requestNumber(_ payload: Data) -> UInt64? {
        struct Numbered: Decodable { var id: UInt64 }
        return (try? JSONDecoder().decode(Numbered.self, from: payload).id).flatMap { ClientEnvelope.requestIDs.contains($0) ? $0 : nil }
    }

    /// The request's number in a payload that is not valid JSON (a duplicate key, nesting
    /// beyond the limit, a lone surrogate or raw control character in a string, bytes
    /// after the object), from the text of the top-level `"id"` that ``StrictJSON`` read
    /// before the fault: only plain digits within ``ClientEnvelope/requestIDs`` (not a
    /// sign, fraction or exponent); nil when it is missing or anything else.
    private static func requestNumber(literal: String?) -> UInt64? {
        literal.flatMap { UInt64($0) }.flatMap { ClientEnvelope.requestIDs.contains($0) ? $0 : nil }
    }

    /// A value from the message as it may be shown in a log line: JSON text, at most 60
    /// characters, control characters escaped.
    private static func shown(_ value: Any) -> String {
        let text: String
        if let string = value as? String {
            text = "\"\(string)\""
        } else if let data = try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys]) {
            text = String(decoding: data, as: UTF8.self)
        } else {
            text = "\(value)"
        }
        return DecodingErrorText.printable(text, limit: 60)
    }

    /// `body` decoded as `type`, or the fault in words, with paths under `path`.
    private static func decodingProblem<Value: Decodable>(_ type: Value.Type, _ body: Any, at path: String) -> String? {
        guard let data = try? JSONSerialization.data(withJSONObject: body, options: [.fragmentsAllowed]) else { return nil }
        do {
            _ = try MessageCoding.jsonDecoder().decode(type, from: data)
            return nil
        } catch {
            return DecodingErrorText.describe(error, under: path)
        }
    }
}
