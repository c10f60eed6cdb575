/// The schema, as an ordered list of migration steps.
///
/// `PRAGMA user_version` records how many steps a database has applied. Opening applies the
/// missing ones, each in its own transaction together with the new version number, so a crash
/// mid-migration leaves the database at the previous version. Never edit a released step:
/// append a new one.
enum SchemaMigrations {
    /// Step `n` (1-based) brings a database from version `n - 1` to version `n`.
    static let steps: [String] = [
        // 1: pending requests, the run log, checkpoints, per-app settings.
        //
        // Dates are REAL seconds since 2001-01-01 UTC (see `SQLiteValue.date`), exact.
        // Requests keep the columns the scheduler filters on; the fields only continued
        // processing and health research use go into `extras` as JSON (NULL when unused).
        """
        CREATE TABLE pending_requests (
            app TEXT NOT NULL,
            identifier TEXT NOT NULL,
            kind TEXT NOT NULL,
            earliest_begin REAL,
            submitted_at REAL NOT NULL,
            requires_network INTEGER NOT NULL,
            requires_power INTEGER NOT NULL,
            extras TEXT,
            PRIMARY KEY (app, identifier)
        ) WITHOUT ROWID;

        CREATE TABLE runs (
            id INTEGER PRIMARY KEY,
            app TEXT NOT NULL,
            identifier TEXT NOT NULL,
            kind TEXT NOT NULL,
            earliest_begin REAL,
            submitted_at REAL NOT NULL,
            requires_network INTEGER NOT NULL,
            requires_power INTEGER NOT NULL,
            extras TEXT,
            started_at REAL NOT NULL,
            ended_at REAL,
            outcome TEXT,
            success INTEGER,
            stop_reason TEXT
        );
        CREATE INDEX runs_by_app_and_start ON runs (app, started_at);
        -- Crash recovery looks for runs without an end; keep that lookup small.
        CREATE INDEX runs_unfinished ON runs (id) WHERE ended_at IS NULL;

        CREATE TABLE checkpoints (
            app TEXT NOT NULL,
            key TEXT NOT NULL,
            data BLOB NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (app, key)
        ) WITHOUT ROWID;

        CREATE TABLE app_settings (
            app TEXT NOT NULL,
            name TEXT NOT NULL,
            value TEXT NOT NULL,
            PRIMARY KEY (app, name)
        ) WITHOUT ROWID;
        """,
        // 2: the energy log's measurements of each run, and an index for pruning by age.
        //
        // The new columns are nullable: runs recorded before this step, runs still in
        // progress, and runs whose resources could not be measured have no values, and
        // NULL says "unknown" where 0 would claim a measurement.
        """
        ALTER TABLE runs ADD COLUMN cpu_time REAL;
        ALTER TABLE runs ADD COLUMN peak_memory INTEGER;
        ALTER TABLE runs ADD COLUMN energy_joules REAL;
        -- Pruning deletes finished runs by end; without this it scans the whole log.
        CREATE INDEX runs_by_end ON runs (ended_at) WHERE ended_at IS NOT NULL;
        """,
    ]

    /// The version a database has once every step known here is applied.
    static var latestVersion: Int { steps.count }

    /// The database's `PRAGMA user_version`.
    static func version(of connection: SQLiteConnection) throws(StoreError) -> Int {
        let versions = try connection.query("PRAGMA user_version") { row in Int(row.int64(0)) }
        return versions.first ?? 0
    }

    /// Refuses a database written by newer code, before anything has been written to it.
    static func refuseIfTooNew(_ connection: SQLiteConnection) throws(StoreError) {
        let version = try version(of: connection)
        guard version > latestVersion else { return }
        let location = connection.path ?? "(in memory)"
        throw StoreError(
            code: .schemaTooNew,
            path: connection.path,
            message: "the scheduler store at \(location) has schema version \(version), "
                + "but this build knows versions up to \(latestVersion); "
                + "it was written by a newer version and is left untouched"
        )
    }

    /// Applies every step the database lacks.
    ///
    /// The version is read again inside each step's write transaction: another process that
    /// opened the same file at the same moment may have migrated it in between.
    static func migrate(_ connection: SQLiteConnection) throws(StoreError) {
        try refuseIfTooNew(connection)
        var finished = false
        while !finished {
            finished = try connection.transaction { () throws(StoreError) -> Bool in
                try refuseIfTooNew(connection)
                let version = try version(of: connection)
                guard version < latestVersion else { return true }
                try connection.executeScript(steps[version])
                // PRAGMA takes no parameters; the value is an integer computed here.
                try connection.executeScript("PRAGMA user_version = \(version + 1)")
                return false
            }
        }
    }
}
