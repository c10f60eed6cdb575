import Foundation
import SchedulerCore

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

    /// Sets the setting `name` of `app` to `value`; `nil` deletes it. Committed when it returns.
    public func setAppSetting(_ value: String?, app: AppID, name: String) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
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
}
