/// What a checkpoint may be (`BGCheckpointStore`): the same rules for an embedded app, an
/// app under bgtaskd and a replica on a shared store (docs/system.md, "Checkpoints").
///
/// Checkpoints hold a task's progress (an offset, a cursor, a timestamp), not its data. The
/// limits keep one app from filling the store everyone's requests live in: without them an
/// app could write an empty key, a 500 KB key, or 300 values of 700 KB (205 MB) into
/// bgtaskd's store.
public enum CheckpointRules {
    /// The longest key, in bytes of UTF-8.
    public static let maximumKeyBytes = 255
    /// The largest value, in bytes (well inside one protocol frame once base64-encoded).
    public static let maximumValueBytes = 256 * 1024
    /// The most keys one app may hold.
    public static let maximumKeysPerApp = 1_000
    /// The most bytes (keys and values) one app's checkpoints may hold together.
    public static let maximumBytesPerApp = 16 * 1024 * 1024

    /// Why `key` cannot name a checkpoint, or `nil`: it is not empty, at most
    /// ``maximumKeyBytes`` bytes, and holds no control character (it is shown by tools and
    /// logs).
    public static func keyProblem(_ key: String) -> String? {
        if key.isEmpty { return "a checkpoint key cannot be empty" }
        let bytes = key.utf8.count
        if bytes > maximumKeyBytes {
            return "a checkpoint key is at most \(maximumKeyBytes) bytes of UTF-8; this one has \(bytes)"
        }
        if let control = StrictJSON.firstControlCharacter(in: key) {
            return "a checkpoint key cannot contain control characters; this one has \(StrictJSON.codePoint(control))"
        }
        return nil
    }

    /// Why a value of `valueBytes` bytes cannot be saved under `key` by an app whose other
    /// checkpoints (every key but this one) are `others`, or `nil` when it can.
    public static func saveProblem(key: String, valueBytes: Int, others: CheckpointUsage) -> String? {
        if let problem = keyProblem(key) { return problem }
        if valueBytes > maximumValueBytes {
            return "a checkpoint value is at most \(maximumValueBytes) bytes; this one has \(valueBytes) (save progress, not data)"
        }
        if others.keys + 1 > maximumKeysPerApp {
            return "the app already has \(others.keys) checkpoints, the most one app may hold is \(maximumKeysPerApp); remove some first"
        }
        let total = others.bytes + key.utf8.count + valueBytes
        if total > maximumBytesPerApp {
            return "the app's checkpoints would hold \(total) bytes, over the \(maximumBytesPerApp) one app may hold; remove some first"
        }
        return nil
    }
}

/// How much one app's checkpoints hold.
public struct CheckpointUsage: Hashable, Sendable {
    /// How many keys.
    public var keys: Int
    /// Their keys' and values' bytes together.
    public var bytes: Int

    /// Usage of `keys` keys holding `bytes` bytes.
    public init(keys: Int, bytes: Int) {
        self.keys = keys
        self.bytes = bytes
    }
}
