import Foundation
import SchedulerCore

/// Finds a key a client's message carries that its request does not have
/// (docs/protocol.md, "Malformed messages"): `JSONDecoder` ignores such a key, so
/// `{"install": {"manifestPath": "...", "force": true}}` would be carried out without the
/// switch its sender believed it set.
///
/// The request is encoded again from what was decoded; every key of the message must be
/// one the encoded form has at the same place. Array elements share one place (an array's
/// elements have one shape, and a dictionary with keys other than strings is encoded as an
/// array whose order is not kept), and a key whose value is `null` is not looked at (an
/// optional field that is absent is not encoded, so its name cannot be learned this way).
/// Only messages the plain reader did not take are checked: the frequent ones it reads
/// refuse any key they do not know.
enum UnknownKeys {
    /// One step from a value to one inside it (array elements share ``MessageProblem/PathStep/element``).
    typealias Step = MessageProblem.PathStep

    /// The place of the first key, in key order, that `message` has and `known` lacks, as
    /// the steps leading to it (the last is the key); nil when every key of `message` is
    /// known, or either is not JSON.
    static func first(in message: Data, knownFrom known: Data) -> [Step]? {
        guard let given = try? JSONSerialization.jsonObject(with: message, options: [.fragmentsAllowed]),
              let encoded = try? JSONSerialization.jsonObject(with: known, options: [.fragmentsAllowed]) else { return nil }
        var places: Set<[Step]> = []
        collectPlaces(encoded, at: [], into: &places)
        return firstUnknown(given, at: [], known: places)
    }

    /// What the daemon answers for the unknown key at `place`: the key and the place of the
    /// object that holds it (`request.admin._0.install`), shown printable and cut short.
    static func problem(at place: [Step]) -> String {
        var key = ""
        if case .key(let last)? = place.last { key = last }
        return "unknown key \"\(DecodingErrorText.printable(key, limit: 60))\" in \(MessageProblem.pathText(place.dropLast())): the request has no such field"
    }

    /// Every place at which `value` has a key.
    private static func collectPlaces(_ value: Any, at place: [Step], into places: inout Set<[Step]>) {
        if let object = value as? [String: Any] {
            for (key, inner) in object {
                let keyPlace = place + [.key(key)]
                places.insert(keyPlace)
                collectPlaces(inner, at: keyPlace, into: &places)
            }
        } else if let array = value as? [Any] {
            for element in array { collectPlaces(element, at: place + [.element], into: &places) }
        }
    }

    private static func firstUnknown(_ value: Any, at place: [Step], known: Set<[Step]>) -> [Step]? {
        if let object = value as? [String: Any] {
            for key in object.keys.sorted() {
                let inner = object[key]!
                let keyPlace = place + [.key(key)]
                if inner is NSNull { continue }
                guard known.contains(keyPlace) else { return keyPlace }
                if let found = firstUnknown(inner, at: keyPlace, known: known) { return found }
            }
        } else if let array = value as? [Any] {
            for element in array {
                if let found = firstUnknown(element, at: place + [.element], known: known) { return found }
            }
        }
        return nil
    }
}
