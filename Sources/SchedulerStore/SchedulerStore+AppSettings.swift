import Foundation
import SchedulerCore

/// The names of the per-app settings the system keeps, shared by the drivers and `bgtask`.
public enum AppSettingName {
    /// The Background App Refresh switch: `on` or `off` (absent means on).
    public static let backgroundRefresh = "background-refresh"
    /// What the policies learned of the app (usage history, throttle, energy spent today),
    /// as the JSON of `AppPolicyState`.
    public static let policyState = "policy-state"
}

extension SchedulerStore {
    /// The setting `name` of `app` (for example the Background App Refresh switch), or `nil`
    /// when it was never set.
    public func appSetting(app: AppID, name: String) throws(StoreError) -> String? {
        try withConnection { (connection) throws(StoreError) in
            try connection.query(
                "SELECT value FROM app_settings WHERE app = ? AND name = ?",
                [.text(app.rawValue), .text(name)]
            ) { row in row.text(0) }.first
        }
    }

    /// The setting `name` of every app that has it, in one query (bgtaskd's start-up reads
    /// the switches and policy states of all its apps at once).
    public func appSettings(named name: String) throws(StoreError) -> [AppID: String] {
        try withConnection { (connection) throws(StoreError) in
            var values: [AppID: String] = [:]
            for (app, value) in try connection.query("SELECT app, value FROM app_settings WHERE name = ?", [.text(name)], row: { row in (row.text(0), row.text(1)) }) {
                values[AppID(app)] = value
            }
            return values
        }
    }

    /// Sets the setting `name` of `app` to `value`; `nil` deletes it. Committed when it returns.
    public func setAppSetting(_ value: String?, app: AppID, name: String) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            try Self.setAppSetting(value, app: app, name: name, on: connection)
        }
    }

    /// Writes one setting on `connection` (inside or outside a transaction).
    static func setAppSetting(_ value: String?, app: AppID, name: String, on connection: SQLiteConnection) throws(StoreError) {
        if let value {
            try connection.execute(
                """
                INSERT INTO app_settings (app, name, value) VALUES (?, ?, ?)
                ON CONFLICT (app, name) DO UPDATE SET value = excluded.value
                """,
                [.text(app.rawValue), .text(name), .text(value)]
            )
        } else {
            try connection.execute(
                "DELETE FROM app_settings WHERE app = ? AND name = ?",
                [.text(app.rawValue), .text(name)]
            )
        }
    }
}
