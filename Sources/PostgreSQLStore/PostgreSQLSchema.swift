import Foundation
import SchedulerStore

/// The PostgreSQL store's schema, as an ordered list of migration steps (docs/replicas.md,
/// "The schema").
///
/// `bgtask_schema_migrations` holds one row per step applied (its version, when, and by
/// which replica). Opening applies the missing steps, each in its own transaction together
/// with its row, under a transaction-scoped advisory lock, so that replicas started at once
/// (processes on several machines) migrate one after the other and each step is applied
/// once. Never edit a released step: append a new one.
///
/// Every table is prefixed `bgtask_`, so the scheduler can share a database (and its
/// `search_path`) with the service's own tables.
enum PostgreSQLSchema {
    /// Step `n` (1-based) brings a database from version `n - 1` to version `n`.
    static let steps: [String] = [
        // 1: what the SQLite store holds, for many replicas.
        //
        // Dates are double precision seconds since 2001-01-01 UTC (`Date`'s own value, as in
        // SQLite): exact, and the same numbers in both stores. Keys are COLLATE "C", so
        // ordering is by code point as in SQLite and Swift, whatever the database's locale.
        // Runs are keyed by (replica, id): each replica numbers its own runs, as each SQLite
        // file does, and the log is shared. The measurements live in the runs table (SQLite
        // has them in a table of their own only for its older files). The quarantine keeps
        // its rows in arrival order (`seq`).
        """
        CREATE TABLE bgtask_pending_requests (
            app text COLLATE "C" NOT NULL,
            identifier text COLLATE "C" NOT NULL,
            kind text NOT NULL,
            earliest_begin double precision,
            submitted_at double precision NOT NULL,
            requires_network boolean NOT NULL,
            requires_power boolean NOT NULL,
            extras text,
            PRIMARY KEY (app, identifier)
        );

        CREATE TABLE bgtask_runs (
            replica text COLLATE "C" NOT NULL,
            id bigint NOT NULL,
            app text COLLATE "C" NOT NULL,
            identifier text COLLATE "C" NOT NULL,
            kind text NOT NULL,
            earliest_begin double precision,
            submitted_at double precision NOT NULL,
            requires_network boolean NOT NULL,
            requires_power boolean NOT NULL,
            extras text,
            started_at double precision NOT NULL,
            ended_at double precision,
            outcome text,
            success boolean,
            stop_reason text,
            cpu_time double precision,
            peak_memory bigint,
            energy_joules double precision,
            measured_by text,
            bytes_read bigint,
            bytes_written bigint,
            PRIMARY KEY (replica, id)
        );
        -- The log is read newest first, by app or whole.
        CREATE INDEX bgtask_runs_by_start ON bgtask_runs (started_at, id);
        CREATE INDEX bgtask_runs_by_app_and_start ON bgtask_runs (app, started_at);
        -- Pruning deletes finished runs by end; without this it scans the whole log.
        CREATE INDEX bgtask_runs_by_end ON bgtask_runs (ended_at) WHERE ended_at IS NOT NULL;

        CREATE TABLE bgtask_quarantined_requests (
            seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            app text NOT NULL,
            identifier text NOT NULL,
            kind text NOT NULL,
            earliest_begin double precision,
            submitted_at double precision NOT NULL,
            requires_network boolean NOT NULL,
            requires_power boolean NOT NULL,
            extras text,
            reason text NOT NULL,
            quarantined_at double precision NOT NULL
        );

        CREATE TABLE bgtask_checkpoints (
            app text COLLATE "C" NOT NULL,
            key text COLLATE "C" NOT NULL,
            data bytea NOT NULL,
            updated_at double precision NOT NULL,
            PRIMARY KEY (app, key)
        );

        CREATE TABLE bgtask_app_settings (
            app text COLLATE "C" NOT NULL,
            name text COLLATE "C" NOT NULL,
            value text NOT NULL,
            PRIMARY KEY (app, name)
        );
        """,
        // 2: replicas share the queue (docs/replicas.md, "The guarantee", "No polling").
        //
        // A run claimed by a replica holds a lease, from the server's clock (replicas'
        // clocks may differ); a sweep ends runs whose lease ran out. Every change of a
        // pending row notifies `bgtask_requests` with `["app","identifier"]` in the same
        // transaction (a trigger, so that no writer can forget it); a key too long for a
        // notification's 8000 bytes sends an empty payload: "read everything".
        """
        ALTER TABLE bgtask_runs ADD COLUMN lease_expires_at timestamp with time zone;
        CREATE INDEX bgtask_runs_leased ON bgtask_runs (lease_expires_at) WHERE ended_at IS NULL;

        CREATE FUNCTION bgtask_notify_request_change() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            payload text;
        BEGIN
            IF TG_OP = 'DELETE' THEN
                payload := json_build_array(OLD.app, OLD.identifier)::text;
            ELSE
                payload := json_build_array(NEW.app, NEW.identifier)::text;
            END IF;
            IF octet_length(payload) > 7900 THEN
                payload := '';
            END IF;
            PERFORM pg_notify('bgtask_requests', payload);
            IF TG_OP = 'UPDATE' AND (OLD.app, OLD.identifier) IS DISTINCT FROM (NEW.app, NEW.identifier) THEN
                payload := json_build_array(OLD.app, OLD.identifier)::text;
                PERFORM pg_notify('bgtask_requests', CASE WHEN octet_length(payload) > 7900 THEN '' ELSE payload END);
            END IF;
            RETURN NULL;
        END
        $$;

        CREATE TRIGGER bgtask_pending_requests_changed
            AFTER INSERT OR UPDATE OR DELETE ON bgtask_pending_requests
            FOR EACH ROW EXECUTE FUNCTION bgtask_notify_request_change();
        """,
        // 3: word carries the row (docs/replicas.md, "No polling"; ``PostgreSQLColumns/Payload``).
        //
        // A replica that hears only a key must read the row back: with n replicas, every
        // write cost n - 1 reads. The trigger now sends the submission itself, or which
        // submission was removed, in the text the server writes for each column; the key
        // alone when that does not fit in a notification, and nothing (read everything)
        // when even the key does not. Dates are written with every digit whatever the
        // writer's session says (`extra_float_digits`), so that they read back exactly; a
        // `TRUNCATE`, which row triggers do not see, says "read everything".
        """
        CREATE OR REPLACE FUNCTION bgtask_notify_request_change() RETURNS trigger LANGUAGE plpgsql
        SET extra_float_digits = 3 AS $$
        DECLARE
            gone text;
            word text;
        BEGIN
            IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND (OLD.app, OLD.identifier) IS DISTINCT FROM (NEW.app, NEW.identifier)) THEN
                gone := json_build_array('removed', OLD.app, OLD.identifier, OLD.submitted_at::text)::text;
                IF octet_length(gone) > 7900 THEN
                    gone := json_build_array(OLD.app, OLD.identifier)::text;
                    IF octet_length(gone) > 7900 THEN gone := ''; END IF;
                END IF;
                PERFORM pg_notify('bgtask_requests', gone);
            END IF;
            IF TG_OP <> 'DELETE' THEN
                word := json_build_array('submitted', NEW.app, NEW.identifier, NEW.kind, NEW.earliest_begin::text, NEW.submitted_at::text,
                    CASE WHEN NEW.requires_network THEN 't' ELSE 'f' END, CASE WHEN NEW.requires_power THEN 't' ELSE 'f' END, NEW.extras)::text;
                IF octet_length(word) > 7900 THEN
                    word := json_build_array(NEW.app, NEW.identifier)::text;
                    IF octet_length(word) > 7900 THEN word := ''; END IF;
                END IF;
                PERFORM pg_notify('bgtask_requests', word);
            END IF;
            RETURN NULL;
        END
        $$;

        CREATE FUNCTION bgtask_notify_requests_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify('bgtask_requests', '');
            RETURN NULL;
        END
        $$;

        CREATE TRIGGER bgtask_pending_requests_truncated
            AFTER TRUNCATE ON bgtask_pending_requests
            FOR EACH STATEMENT EXECUTE FUNCTION bgtask_notify_requests_truncated();
        """,
    ]

    /// The version a database has once every step known here is applied.
    static var latestVersion: Int { steps.count }

    /// The table of applied steps. Created outside the steps (by the first opener, under the
    /// lock): it is what says which steps exist.
    static let migrationsTable = """
        CREATE TABLE bgtask_schema_migrations (
            version integer PRIMARY KEY,
            applied_at timestamp with time zone NOT NULL DEFAULT now(),
            applied_by text NOT NULL
        )
        """

    /// The advisory lock openers take around migrating ("BGTKSCHM"): one number for the
    /// whole database, since the steps touch several tables.
    static let lockKey: Int64 = 0x4247_544B_5343_484D

    /// The database's version: the highest step applied, 0 when none (or no table yet).
    static func version(on connection: PostgreSQLConnection) throws(StoreError) -> Int {
        let exists = try connection.execute("SELECT to_regclass('bgtask_schema_migrations') IS NOT NULL")
        guard exists.rowCount == 1, exists.row(0).text(0) == "t" else { return 0 }
        let result = try connection.execute("SELECT coalesce(max(version), 0) FROM bgtask_schema_migrations")
        guard result.rowCount == 1, let version = Int(result.row(0).text(0)) else {
            throw StoreError(code: .invalidData, path: connection.server, message: "the schema version in \(connection.server) cannot be read")
        }
        return version
    }

    /// Applies every step the database lacks, one transaction per step, each under the
    /// advisory lock: a replica that waited for another's step reads the version again and
    /// finds it done. `replica` is written into each step's row.
    /// - Throws: ``StoreError/Code/schemaTooNew`` when the database is at a version newer
    ///   than ``latestVersion``; nothing is written then.
    static func migrate(_ connection: PostgreSQLConnection, replica: String) throws(StoreError) {
        var finished = false
        while !finished {
            finished = try connection.transaction { () throws(StoreError) -> Bool in
                // A step may take as long as it needs (an index over a large table): no
                // statement timeout in this transaction (the session's applies again after
                // it). Waits for locks are bounded instead: for another replica's step (the
                // advisory lock), or behind a lock nobody releases, 10 minutes.
                try connection.execute("SET LOCAL statement_timeout = 0")
                try connection.execute("SET LOCAL lock_timeout = '10min'")
                try connection.execute("SELECT pg_advisory_xact_lock($1::bigint)", [.integer(lockKey)])
                let version = try version(on: connection)
                guard version <= latestVersion else {
                    throw StoreError(
                        code: .schemaTooNew,
                        path: connection.server,
                        message: "the scheduler's tables in the PostgreSQL database \(connection.server) have schema version \(version), "
                            + "but this build knows versions up to \(latestVersion); they were written by a newer version and are left untouched"
                    )
                }
                guard version < latestVersion else { return true }
                if version == 0, try connection.execute("SELECT to_regclass('bgtask_schema_migrations') IS NULL").row(0).text(0) == "t" {
                    try connection.executeScript(migrationsTable)
                }
                try connection.executeScript(steps[version])
                try connection.execute(
                    "INSERT INTO bgtask_schema_migrations (version, applied_by) VALUES ($1::integer, $2::text)",
                    [.integer(Int64(version + 1)), .text(replica)]
                )
                return false
            }
        }
    }
}
