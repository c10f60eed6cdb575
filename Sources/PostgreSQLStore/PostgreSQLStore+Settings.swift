import Foundation
import SchedulerCore
import SchedulerStore

extension PostgreSQLStore {
    // MARK: App settings

    /// The setting `name` of `app`, or `nil` when it was never set.
    public func appSetting(app: AppID, name: String) throws(StoreError) -> String? {
        try withConnection { (connection) throws(StoreError) in
            let result = try connection.execute(
                "SELECT value FROM bgtask_app_settings WHERE app = $1 AND name = $2", [.text(app.rawValue), .text(name)]
            )
            return result.rowCount == 0 ? nil : result.row(0).text(0)
        }
    }

    /// The setting `name` of every app that has it, in one query.
    public func appSettings(named name: String) throws(StoreError) -> [AppID: String] {
        try withConnection { (connection) throws(StoreError) in
            var values: [AppID: String] = [:]
            let result = try connection.execute("SELECT app, value FROM bgtask_app_settings WHERE name = $1", [.text(name)])
            for index in 0..<result.rowCount {
                values[AppID(result.row(index).text(0))] = result.row(index).text(1)
            }
            return values
        }
    }

    /// Sets the setting `name` of `app` to `value`; `nil` deletes it. Committed when it returns.
    public func setAppSetting(_ value: String?, app: AppID, name: String) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            try Self.setAppSetting(value, app: app, name: name, on: connection, commits: true)
        }
    }

    /// Writes one setting on `connection`: `commits` when it is a statement of its own,
    /// not when it is part of a transaction.
    static func setAppSetting(_ value: String?, app: AppID, name: String, on connection: PostgreSQLConnection, commits: Bool) throws(StoreError) {
        if let value {
            try connection.execute(
                """
                INSERT INTO bgtask_app_settings (app, name, value) VALUES ($1, $2, $3) \
                ON CONFLICT (app, name) DO UPDATE SET value = excluded.value
                """,
                [.text(app.rawValue), .text(name), .text(value)], commits: commits
            )
        } else {
            try connection.execute(
                "DELETE FROM bgtask_app_settings WHERE app = $1 AND name = $2", [.text(app.rawValue), .text(name)], commits: commits
            )
        }
    }

    /// Sets the setting `name` of `app` to what `update` makes of the value stored now
    /// (`nil` when there is none; `update` returning `nil` leaves the row as it is), in one
    /// transaction holding the row's lock: how replicas add their changes to one app's
    /// shared memory instead of overwriting each other's.
    public func updateAppSetting(app: AppID, name: String, _ update: (String?) -> String?) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            try connection.transaction { () throws(StoreError) in
                try Self.updateAppSetting(app: app, name: name, on: connection, update)
            }
        }
    }

    /// ``updateAppSetting(app:name:_:)`` inside a transaction on `connection`. A row that
    /// does not exist yet cannot be locked: the first value is inserted if nobody else
    /// inserted one meanwhile; if somebody did, their committed row is locked, read and
    /// updated (read committed: the next statement sees it).
    static func updateAppSetting(app: AppID, name: String, on connection: PostgreSQLConnection, _ update: (String?) -> String?) throws(StoreError) {
        let key: [PostgreSQLValue] = [.text(app.rawValue), .text(name)]
        for _ in 0..<2 {
            let stored = try connection.execute("SELECT value FROM bgtask_app_settings WHERE app = $1 AND name = $2 FOR UPDATE", key)
            if stored.rowCount == 1 {
                let current = stored.row(0).text(0)
                guard let value = update(current), value != current else { return }
                try connection.execute("UPDATE bgtask_app_settings SET value = $3 WHERE app = $1 AND name = $2", key + [.text(value)])
                return
            }
            guard let value = update(nil) else { return }
            let inserted = try connection.execute(
                "INSERT INTO bgtask_app_settings (app, name, value) VALUES ($1, $2, $3) ON CONFLICT (app, name) DO NOTHING", key + [.text(value)]
            )
            if inserted.affectedRows == 1 { return }
        }
        throw StoreError(code: .server, path: connection.server, message: "the setting '\(name)' of \(app) was inserted and removed by others while this replica tried to update it; try again")
    }

    // MARK: Checkpoints

    /// The checkpoint `key` of `app`, or `nil` if none was saved.
    public func checkpoint(app: AppID, key: String) throws(StoreError) -> Data? {
        try withConnection { (connection) throws(StoreError) in
            // Hex, whatever the session's bytea_output says.
            let result = try connection.execute(
                "SELECT encode(data, 'hex') FROM bgtask_checkpoints WHERE app = $1 AND key = $2", [.text(app.rawValue), .text(key)]
            )
            guard result.rowCount > 0 else { return nil }
            let hex = result.row(0).text(0)
            guard let data = Data(hex: hex) else {
                throw PostgreSQLColumns.invalid("the checkpoint \(key) of \(app) does not read back as bytes")
            }
            return data
        }
    }

    /// Deletes the checkpoint `key` of `app`, if any. Committed when it returns.
    public func removeCheckpoint(app: AppID, key: String) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            _ = try connection.execute(
                "DELETE FROM bgtask_checkpoints WHERE app = $1 AND key = $2", [.text(app.rawValue), .text(key)], commits: true
            )
        }
    }

    /// The keys of `app`'s checkpoints, sorted (by code point).
    public func checkpointKeys(app: AppID) throws(StoreError) -> [String] {
        try withConnection { (connection) throws(StoreError) in
            try connection.execute("SELECT key FROM bgtask_checkpoints WHERE app = $1 ORDER BY key", [.text(app.rawValue)]).map { row in row.text(0) }
        }
    }
}

extension PostgreSQLStore {
    /// How much `app`'s checkpoints other than `key` hold: their number and their keys' and
    /// values' bytes.
    public func checkpointUsage(app: AppID, excluding key: String) throws(StoreError) -> CheckpointUsage {
        try withConnection { (connection) throws(StoreError) in try Self.checkpointUsage(app: app, excluding: key, on: connection) }
    }

    private static func checkpointUsage(app: AppID, excluding key: String, on connection: PostgreSQLConnection) throws(StoreError) -> CheckpointUsage {
        let result = try connection.execute(
            "SELECT count(*)::text, coalesce(sum(octet_length(key) + octet_length(data)), 0)::text FROM bgtask_checkpoints WHERE app = $1 AND key <> $2",
            [.text(app.rawValue), .text(key)]
        )
        guard result.rowCount > 0, let keys = Int(result.row(0).text(0)), let bytes = Int(result.row(0).text(1)) else {
            throw PostgreSQLColumns.invalid("the checkpoints of \(app) could not be counted")
        }
        return CheckpointUsage(keys: keys, bytes: bytes)
    }

    /// Saves `data` as the checkpoint `key` of `app` unless ``CheckpointRules`` refuse it.
    /// Replicas may save at once: a transaction-scoped advisory lock on the app (its name's
    /// hash) makes their count-then-write steps take turns, so together they cannot pass
    /// the app's totals (``SchedulerStorage/saveCheckpoint(_:app:key:at:)``).
    public func saveCheckpoint(_ data: Data, app: AppID, key: String, at: Date) throws(StoreError) -> String? {
        if let problem = CheckpointRules.saveProblem(key: key, valueBytes: data.count, others: CheckpointUsage(keys: 0, bytes: 0)) {
            return problem
        }
        guard at.timeIntervalSinceReferenceDate.isFinite else {
            throw PostgreSQLColumns.invalid("the time of the checkpoint \(key) of \(app) is not a finite date; nothing was written")
        }
        return try withConnection { (connection) throws(StoreError) in
            try connection.transaction { () throws(StoreError) -> String? in
                _ = try connection.execute("SELECT pg_advisory_xact_lock(hashtextextended('bgtask checkpoints ' || $1, 0))", [.text(app.rawValue)])
                let others = try Self.checkpointUsage(app: app, excluding: key, on: connection)
                if let problem = CheckpointRules.saveProblem(key: key, valueBytes: data.count, others: others) { return problem }
                _ = try connection.execute(
                    """
                    INSERT INTO bgtask_checkpoints (app, key, data, updated_at) VALUES ($1, $2, $3::bytea, $4) \
                    ON CONFLICT (app, key) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at
                    """,
                    [.text(app.rawValue), .text(key), .bytes(data), .date(at)]
                )
                return nil
            }
        }
    }
}

extension Data {
    /// Bytes from lowercase or uppercase hexadecimal text, or `nil` when it is not that.
    fileprivate init?(hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        self.init(bytes)
    }
}
