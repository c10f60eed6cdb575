import Foundation

/// Makes the text a store keeps of an app's policy state (``AppPolicyState`` as JSON)
/// without encoding the usage model again while it has not changed.
///
/// The state is saved with every run's end (its throttle and energy change) and at other
/// moments, and the usage model, hundreds of decayed weights, is most of its text and of
/// the time to encode it (about 2 ms a save, measured with `perf` in bgtask-bench c',
/// under the scheduler's lock), while only the user's launches and the network's history
/// change it. So the encoder keeps the text of the last usage model it encoded for each of
/// the few apps saved most recently, reuses it while the app's model is equal to the one
/// it was made from, and encodes the rest of the state alone. The text is the same JSON
/// object as `JSONEncoder().encode(state)` makes, with `usage` as its first key instead of
/// its third (a decoder reads keys in any order).
///
/// Memory stays bounded: ``capacity`` apps (a daemon serves thousands).
public struct PolicyStateTextEncoder: Sendable {
    /// The user info key that makes ``AppPolicyState/encode(to:)`` leave the usage model out.
    public static let usageOmitted = CodingUserInfoKey(rawValue: "bgtask.policyState.usageOmitted")!

    /// How many apps' usage texts are kept by default.
    public static let defaultCapacity = 16

    /// How many apps' usage texts are kept: the least recently saved goes first.
    public let capacity: Int

    /// The kept texts, the most recently used last.
    private var recent: [(app: AppID, usage: UsageModel, text: String)] = []

    /// How many times a usage model was encoded (not reused): for tests.
    package private(set) var usageEncodings = 0

    /// An encoder keeping the usage texts of `capacity` apps (at least 1).
    public init(capacity: Int = defaultCapacity) {
        self.capacity = max(1, capacity)
    }

    /// `state` of `app` as JSON text, or `nil` when it cannot be encoded (a weight that is
    /// not a number: the model refuses those, so this does not happen in practice).
    public mutating func text(of state: AppPolicyState, for app: AppID) -> String? {
        guard let usageText = usageText(of: state.usage, for: app) else { return nil }
        let encoder = JSONEncoder()
        encoder.userInfo[Self.usageOmitted] = true
        guard let rest = try? encoder.encode(state), rest.first == UInt8(ascii: "{"), rest.last == UInt8(ascii: "}") else { return nil }
        // `rest` is an object without the usage key: the usage goes first, then its fields.
        let fields = rest.dropFirst().dropLast()
        var text = "{\"\(AppPolicyState.usageKey)\":"
        text.reserveCapacity(usageText.utf8.count + rest.count + 16)
        text += usageText
        if !fields.isEmpty {
            text += ","
            text += String(decoding: fields, as: UTF8.self)
        }
        text += "}"
        return text
    }

    /// The text of `usage`, kept from the last time `app`'s model was encoded while it is
    /// equal to that model, else encoded now and kept.
    private mutating func usageText(of usage: UsageModel, for app: AppID) -> String? {
        if let index = recent.firstIndex(where: { $0.app == app }) {
            let kept = recent.remove(at: index)
            if kept.usage == usage {
                recent.append(kept)
                return kept.text
            }
        }
        guard let data = try? JSONEncoder().encode(usage) else { return nil }
        usageEncodings += 1
        let text = String(decoding: data, as: UTF8.self)
        recent.append((app, usage, text))
        if recent.count > capacity { recent.removeFirst(recent.count - capacity) }
        return text
    }
}
