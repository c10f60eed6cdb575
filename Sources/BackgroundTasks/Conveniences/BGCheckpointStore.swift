import Foundation
import DaemonProtocol
import SchedulerStore
import SchedulerCore

/// A durable key-value store for a task's progress, so idempotent work can stop at any
/// moment (expiration) and the next run resumes where it left off (docs/system.md, "Best practice").
///
/// ```swift
/// let store = BGTaskScheduler.shared.checkpoints
/// var offset = try store.load(Int.self, forKey: "sync.offset") ?? 0
/// for batch in batches(from: offset) { ...; offset += batch.count; try store.save(offset, forKey: "sync.offset") }
/// ```
///
/// Values are JSON-encoded and committed to the scheduler's SQLite store before `save`
/// returns; they belong to the app and survive restarts. A key is 1 to 255 bytes without
/// control characters, a value at most 256 KiB, and one app holds at most 1,000 keys and
/// 16 MiB (``CheckpointRules``): a checkpoint records progress, not data.
public struct BGCheckpointStore: Sendable {
    let context: BGAppContext

    /// An error reading or writing a checkpoint; it names the key.
    public struct Error: Swift.Error, CustomStringConvertible, Sendable {
        /// The key concerned.
        public var key: String
        /// What went wrong.
        public var message: String
        /// The key as a message shows it: control characters escaped and cut to 200 scalars
        /// (a refused key may be 100 KB or hold a NUL), the message whole.
        public var description: String { "checkpoint '\(DecodingErrorText.printable(key))': \(message)" }
    }

    /// The value saved under `key`, or `nil`.
    public func load<Value: Decodable>(_ type: Value.Type, forKey key: String) throws -> Value? {
        guard let data = try rawValue(forKey: key) else { return nil }
        do {
            return try JSONDecoder().decode(Value.self, from: data)
        } catch {
            throw Error(key: key, message: "stored value is not a \(Value.self): \(error)")
        }
    }

    /// Saves `value` under `key`, durably.
    public func save<Value: Encodable>(_ value: Value, forKey key: String) throws {
        let data: Data
        do {
            data = try JSONEncoder().encode(value)
        } catch {
            throw Error(key: key, message: "cannot encode \(Value.self): \(error)")
        }
        if let uplink = context.driver.uplink {
            // The key and the value's size here, before they travel; the app's totals at bgtaskd.
            if let problem = CheckpointRules.saveProblem(key: key, valueBytes: data.count, others: CheckpointUsage(keys: 0, bytes: 0)) {
                throw Error(key: key, message: problem)
            }
            _ = try linked(.checkpointSet(key: key, value: data), key: key, uplink: uplink)
            return
        }
        // Counted and written in one transaction: threads (or replicas) saving at once
        // cannot together pass the app's totals.
        if let problem = try store(for: key).saveCheckpoint(data, app: context.app, key: key, at: context.driver.clock.now()) {
            throw Error(key: key, message: problem)
        }
    }

    /// Removes the value under `key`.
    public func remove(forKey key: String) throws {
        if let problem = CheckpointRules.keyProblem(key) { throw Error(key: key, message: problem) }
        if let uplink = context.driver.uplink {
            _ = try linked(.checkpointRemove(key: key), key: key, uplink: uplink)
            return
        }
        try store(for: key).removeCheckpoint(app: context.app, key: key)
    }

    /// The keys that have values.
    public func keys() throws -> [String] {
        if let uplink = context.driver.uplink {
            guard case .names(let names) = try linked(.checkpointKeys, key: "*", uplink: uplink) else { return [] }
            return names
        }
        return try store(for: "*").checkpointKeys(app: context.app)
    }

    /// The stored bytes under `key`: from the scheduler's store, or from bgtaskd's when the
    /// app runs under the daemon (which keeps the app's checkpoints; docs/daemon.md).
    private func rawValue(forKey key: String) throws -> Data? {
        if let problem = CheckpointRules.keyProblem(key) { throw Error(key: key, message: problem) }
        if let uplink = context.driver.uplink {
            guard case .data(let data) = try linked(.checkpointGet(key: key), key: key, uplink: uplink) else { return nil }
            return data
        }
        return try store(for: key).checkpoint(app: context.app, key: key)
    }

    private func linked(_ request: AppRequest, key: String, uplink: any SchedulerUplink) throws -> Reply {
        do {
            return try context.driver.linkedCall(request, uplink: uplink)
        } catch {
            throw Error(key: key, message: error.message)
        }
    }

    private func store(for key: String) throws -> any SchedulerStorage {
        guard let store = context.driver.store else {
            throw Error(key: key, message: context.driver.unavailableReason ?? "no store")
        }
        return store
    }
}
