import Foundation
import SchedulerCore

extension SchedulerStore {
    /// The checkpoint `key` of `app` (progress an idempotent task saved so that its next run
    /// resumes), or `nil` if none was saved.
    public func checkpoint(app: AppID, key: String) throws(StoreError) -> Data? {
        try withConnection { (connection) throws(StoreError) in
            try connection.query(
                "SELECT data FROM checkpoints WHERE app = ? AND key = ?",
                [.text(app.rawValue), .text(key)]
            ) { row in row.blob(0) }.first
        }
    }

    /// Saves `data` as the checkpoint `key` of `app` unless ``CheckpointRules`` refuse it;
    /// the app's totals are counted and the value written in one `BEGIN IMMEDIATE`
    /// transaction (``SchedulerStorage/saveCheckpoint(_:app:key:at:)``).
    public func saveCheckpoint(_ data: Data, app: AppID, key: String, at: Date) throws(StoreError) -> String? {
        if let problem = CheckpointRules.saveProblem(key: key, valueBytes: data.count, others: CheckpointUsage(keys: 0, bytes: 0)) {
            return problem
        }
        return try withConnection { (connection) throws(StoreError) in
            try connection.transaction { () throws(StoreError) -> String? in
                let others = try Self.checkpointUsage(app: app, excluding: key, on: connection)
                if let problem = CheckpointRules.saveProblem(key: key, valueBytes: data.count, others: others) { return problem }
                try connection.execute(
                    """
                    INSERT INTO checkpoints (app, key, data, updated_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (app, key) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at
                    """,
                    [.text(app.rawValue), .text(key), .blob(data), .date(at)]
                )
                return nil
            }
        }
    }

    /// Deletes the checkpoint `key` of `app`, if any. Committed when it returns.
    public func removeCheckpoint(app: AppID, key: String) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            try connection.execute(
                "DELETE FROM checkpoints WHERE app = ? AND key = ?",
                [.text(app.rawValue), .text(key)]
            )
        }
    }

    /// The keys of `app`'s checkpoints, sorted.
    public func checkpointKeys(app: AppID) throws(StoreError) -> [String] {
        try withConnection { (connection) throws(StoreError) in
            try connection.query(
                "SELECT key FROM checkpoints WHERE app = ? ORDER BY key",
                [.text(app.rawValue)]
            ) { row in row.text(0) }
        }
    }

    /// How much `app`'s checkpoints other than `key` hold: their number and their keys' and
    /// values' bytes.
    public func checkpointUsage(app: AppID, excluding key: String) throws(StoreError) -> CheckpointUsage {
        try withConnection { (connection) throws(StoreError) in try Self.checkpointUsage(app: app, excluding: key, on: connection) }
    }

    private static func checkpointUsage(app: AppID, excluding key: String, on connection: SQLiteConnection) throws(StoreError) -> CheckpointUsage {
        try connection.query(
            "SELECT count(*), coalesce(sum(length(CAST(key AS BLOB)) + length(data)), 0) FROM checkpoints WHERE app = ? AND key <> ?",
            [.text(app.rawValue), .text(key)]
        ) { row in CheckpointUsage(keys: Int(row.int64(0)), bytes: Int(row.int64(1))) }.first ?? CheckpointUsage(keys: 0, bytes: 0)
    }
}
