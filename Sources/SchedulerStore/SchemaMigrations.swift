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
        // 3: pending requests that could not be loaded (unreadable, another app's, over the
        // pending limit), kept with the reason instead of deleted. The request columns have
        // no type on purpose: no affinity, so the bad values are kept exactly as they were.
        """
        CREATE TABLE quarantined_requests (
            app, identifier, kind, earliest_begin, submitted_at, requires_network, requires_power, extras,
            reason TEXT NOT NULL,
            quarantined_at REAL NOT NULL
        );
        """,
        // 4: the apps installed with bgtaskd and the processes it launched for them
        // (docs/manifest.md). A store of one embedded app leaves both empty.
        //
        // `installed_apps` keeps the manifest's lists as JSON arrays of strings (read back
        // strictly: a row that does not decode is reported, never dropped). `app_processes`
        // holds the one process the daemon runs per app, so a daemon restarted after a kill
        // ends what the previous one left: `start_time` is field 22 of /proc/<pid>/stat,
        // which tells the process from a later one given the same pid.
        """
        CREATE TABLE installed_apps (
            app TEXT NOT NULL PRIMARY KEY,
            manifest_path TEXT NOT NULL,
            executable TEXT NOT NULL,
            arguments TEXT NOT NULL,
            permitted_identifiers TEXT NOT NULL,
            background_modes TEXT NOT NULL,
            installed_at REAL NOT NULL
        ) WITHOUT ROWID;

        CREATE TABLE app_processes (
            app TEXT NOT NULL PRIMARY KEY,
            pid INTEGER NOT NULL,
            process_group INTEGER NOT NULL,
            start_time INTEGER NOT NULL,
            cgroup_path TEXT,
            started_at REAL NOT NULL
        ) WITHOUT ROWID;
        """,
        // Step 5: how a run out of process was measured (bgtaskd): where its CPU time and
        // memory came from (cgroup, rusage, procfs) and its energy (RAPL or the model), and
        // its I/O. A table of its own, so readers of older stores select runs as before.
        """
        CREATE TABLE run_measurements (
            run_id INTEGER NOT NULL PRIMARY KEY,
            measured_by TEXT NOT NULL,
            bytes_read INTEGER,
            bytes_written INTEGER
        );
        """,
    ]

    /// `PRAGMA application_id` of a scheduler store ("BGTK"): what tells our files from other
    /// programs' SQLite databases. Stamped on every store this build opens for writing.
    static let applicationID: Int32 = 0x4247_544B

    /// The tables every scheduler store has from step 1: a database with `user_version` set
    /// but without them is not ours (it predates the `application_id` stamp or never had it).
    static let coreTables: Set<String> = ["pending_requests", "runs", "checkpoints", "app_settings"]

    /// Refuses a database that is not a scheduler store, before anything has been written
    /// to it: another `application_id`, or tables without our schema. An empty database
    /// (no tables, version 0) is a new store and is fine. This is also the first read, where
    /// a file that is not a database at all shows up (as ``StoreError/Code/corrupt``).
    static func refuseIfForeign(_ connection: SQLiteConnection) throws(StoreError) {
        let applicationID = try connection.query("PRAGMA application_id") { row in Int32(truncatingIfNeeded: row.int64(0)) }.first ?? 0
        let location = connection.path ?? "(in memory)"
        func foreign(_ why: String) -> StoreError {
            StoreError(
                code: .foreignDatabase,
                path: connection.path,
                message: "\(location) is not a scheduler store: \(why); it belongs to another program "
                    + "and was left untouched (choose another state directory, or move the file away)"
            )
        }
        if applicationID == Self.applicationID { return }
        if applicationID != 0 {
            throw foreign("its SQLite application_id is \(hex(applicationID)), a scheduler store's is \(hex(Self.applicationID))")
        }
        let tables = Set(try connection.query(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        ) { row in row.text(0) })
        let version = try version(of: connection)
        if tables.isEmpty && version == 0 { return }
        let missing = coreTables.subtracting(tables)
        guard missing.isEmpty else {
            let listed = tables.sorted().prefix(5).joined(separator: ", ")
            throw foreign(
                "it has user_version \(version) and the tables \(listed.isEmpty ? "(none)" : listed)\(tables.count > 5 ? ", ..." : ""), "
                    + "but not the scheduler's \(missing.sorted().joined(separator: ", "))"
            )
        }
    }

    /// Writes ``applicationID`` into a store that does not carry it yet (a new one, or one
    /// from before the stamp).
    static func stampApplicationID(_ connection: SQLiteConnection) throws(StoreError) {
        let current = try connection.query("PRAGMA application_id") { row in Int32(truncatingIfNeeded: row.int64(0)) }.first
        guard current != applicationID else { return }
        // PRAGMA takes no parameters; the value is a constant of this file.
        try connection.executeScript("PRAGMA application_id = \(applicationID)")
    }

    private static func hex(_ value: Int32) -> String {
        "0x" + String(UInt32(bitPattern: value), radix: 16, uppercase: true)
    }

    /// The version a database has once every step known here is applied.
    static var latestVersion: Int { steps.count }

    /// The oldest version a read-only reader (`bgtask why/log/energy`) can read without
    /// migrating: step 2 added the run measurements the readers select; step 3 only added
    /// the quarantine table, which they do not need; step 4 the installed apps, which a
    /// reader of an older store lists as none; step 5 the run measurements of bgtaskd, which
    /// a reader of an older store reads as none. Readers never migrate.
    static let minimumReadableVersion = 2

    /// Whether the database has the table `name` (a reader may face a store older than
    /// this build, which it must not migrate).
    static func hasTable(_ name: String, on connection: SQLiteConnection) throws(StoreError) -> Bool {
        try !connection.query(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(name)]
        ) { _ in () }.isEmpty
    }

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
