import Foundation
@testable import PostgreSQLStore
import SchedulerCore
import SchedulerStore
import Synchronization
import Testing

/// What only the PostgreSQL store has: schema migrations in a shared database, replicas,
/// a server that goes away and comes back, credentials.
extension PostgreSQLServerTests {
    @Suite("PostgreSQL store")
    struct PostgreSQLOnly {
        /// A password that must never show in a message.
        static let secret = "Hunter2-S3cret"

        private func open(_ server: TestPostgreSQLServer, _ database: String, replica: String = "replica-a") throws -> PostgreSQLStore {
            try PostgreSQLStore.open(address: server.address(database: database), replica: replica, now: Sample.now)
        }

        private func migrations(_ server: TestPostgreSQLServer, _ database: String) throws -> [[String?]] {
            try server.query("SELECT version::text, applied_by FROM bgtask_schema_migrations ORDER BY version", in: database)
        }

        // MARK: Migrations

        @Test("a fresh database is migrated once; opening it again applies nothing")
        func migratesOnce() throws {
            let server = try TestPostgreSQLServer.shared()
            let database = try server.createDatabase()
            let store = try open(server, database)
            #expect(try migrations(server, database) == (1...PostgreSQLSchema.latestVersion).map { ["\($0)", "replica-a"] })
            let tables = try server.query(
                "SELECT tablename FROM pg_tables WHERE tablename LIKE 'bgtask_%' ORDER BY tablename", in: database
            ).compactMap(\.first)
            #expect(tables == [
                "bgtask_app_settings", "bgtask_checkpoints", "bgtask_pending_requests", "bgtask_quarantined_requests",
                "bgtask_runs", "bgtask_schema_migrations",
            ])
            try store.upsertRequest(Sample.request("kept"))
            store.close()
            let again = try open(server, database, replica: "replica-b")
            #expect(try migrations(server, database) == (1...PostgreSQLSchema.latestVersion).map { ["\($0)", "replica-a"] })
            #expect(try again.pendingRequests().map(\.identifier) == ["kept"])
        }

        @Test("a database migrated by a newer version is refused, named, and left untouched")
        func newerSchemaIsRefused() throws {
            let server = try TestPostgreSQLServer.shared()
            let database = try server.createDatabase()
            try open(server, database).upsertRequest(Sample.request("kept"))
            let newer = PostgreSQLSchema.latestVersion + 1
            try server.administer(
                "CREATE TABLE bgtask_from_the_future (x int); INSERT INTO bgtask_schema_migrations (version, applied_by) VALUES (\(newer), 'tomorrow')",
                in: database
            )
            let before = try migrations(server, database)
            let error = try #require(throws: StoreError.self) {
                try PostgreSQLStore.open(address: server.address(database: database) + " password=\(Self.secret)", replica: "replica-a", now: Sample.now)
            }
            #expect(error.code == .schemaTooNew)
            #expect(error.message.contains("schema version \(newer)"))
            #expect(error.message.contains("dbname=\(database)"))
            #expect(error.message.contains("left untouched"))
            #expect(!error.message.contains(Self.secret))
            #expect(try migrations(server, database) == before)
            #expect(try server.query("SELECT identifier FROM bgtask_pending_requests", in: database) == [["kept"]])
        }

        @Test("stores opening the same fresh database at once migrate it exactly once")
        func concurrentOpenersDoNotRace() throws {
            let server = try TestPostgreSQLServer.shared()
            // Each store has its own connection, so the server sees what it would see from
            // separate processes on separate machines: several sessions creating the same
            // tables at the same moment (without the advisory lock, one fails on a duplicate).
            let databases = try (0..<3).map { _ in try server.createDatabase() }
            let openers = 4
            let results = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: databases.count * openers) { index in
                let database = databases[index % databases.count]
                do {
                    let store = try PostgreSQLStore.open(address: server.address(database: database), replica: "replica-\(index)", now: Sample.now)
                    try store.upsertRequest(Sample.request("from-\(index)"))
                    results.withLock { $0.append("ok") }
                } catch {
                    results.withLock { $0.append("\(error)") }
                }
            }
            #expect(results.withLock { $0 } == Array(repeating: "ok", count: databases.count * openers))
            for database in databases {
                #expect(try migrations(server, database).count == PostgreSQLSchema.latestVersion)
                #expect(try server.query("SELECT count(*)::text FROM bgtask_pending_requests", in: database) == [["\(openers)"]])
            }
        }

        // MARK: Sessions and values

        @Test("the session commits synchronously whatever the database's default")
        func synchronousCommit() throws {
            let server = try TestPostgreSQLServer.shared()
            let database = try server.createDatabase()
            try server.administer("ALTER DATABASE \(database) SET synchronous_commit = off")
            let store = try open(server, database)
            let setting = try store.withConnection { (connection) throws(StoreError) in
                try connection.execute("SHOW synchronous_commit").row(0).text(0)
            }
            #expect(setting == "on")
        }

        @Test("what one store object wrote, another reads exactly")
        func durableAcrossStoreObjects() throws {
            let server = try TestPostgreSQLServer.shared()
            let database = try server.createDatabase()
            let writer = try open(server, database)
            for request in Sample.everyField { try writer.upsertRequest(request) }
            var run = Sample.finished(Sample.run(1, of: Sample.request("ran")), after: 2.000_000_1)
            try writer.recordRunStarted(Sample.run(1, of: run.request))
            run.measuredBy = "procfs"
            run.bytesRead = 1
            try writer.recordRunFinished(run, appSettings: [AppSettingName.policyState: "{}"])
            #expect(try writer.saveCheckpoint(Data([0, 1, 0xFF]), app: Sample.app, key: "k", at: Sample.now) == nil)
            writer.close()
            let reader = try open(server, database)
            #expect(Set(try reader.pendingRequests()) == Set(Sample.everyField))
            #expect(try reader.runs() == [run])
            #expect(try reader.appSetting(app: Sample.app, name: AppSettingName.policyState) == "{}")
            #expect(try reader.checkpoint(app: Sample.app, key: "k") == Data([0, 1, 0xFF]))
            #expect(reader.quarantinedAtOpen.isEmpty)
        }

        @Test("rows that cannot be read are quarantined when a store opens, with their values as they were")
        func quarantineAtOpen() throws {
            let server = try TestPostgreSQLServer.shared()
            let database = try server.createDatabase()
            let good = [Sample.request("good"), Sample.everyField[3]]
            for request in good { try open(server, database).upsertRequest(request) }
            let columns = PostgreSQLColumns.requestNames
            try server.administer(
                """
                INSERT INTO bgtask_pending_requests (\(columns)) VALUES
                    ('\(Sample.app)', 'kind', 'teleport', NULL, 0, false, false, NULL),
                    ('\(Sample.app)', 'nan', 'processing', NULL, 'NaN', false, false, NULL),
                    ('\(Sample.app)', 'infinite', 'processing', '-Infinity', 0, false, false, NULL),
                    ('\(Sample.app)', 'far', 'processing', 1e300, 0, false, false, NULL),
                    ('\(Sample.app)', 'json', 'processing', NULL, 0, false, false, '{"continuedProcessing": 5}');
                """,
                in: database
            )
            let later = Sample.now.addingTimeInterval(60)
            let store = try PostgreSQLStore.open(address: server.address(database: database), replica: "replica-a", now: later)
            let reasons = Dictionary(uniqueKeysWithValues: store.quarantinedAtOpen.map { ($0.identifier, $0.reason) })
            #expect(Set(reasons.keys) == ["kind", "nan", "infinite", "far", "json"])
            #expect(reasons["far"]?.contains("not a date between 0001-01-01 and 4001-01-01") == true)
            #expect(reasons["kind"]?.contains("unknown task kind \"teleport\"") == true)
            #expect(reasons["nan"]?.contains("submitted_at") == true)
            #expect(reasons["infinite"]?.contains("earliest_begin") == true)
            #expect(reasons["json"]?.contains("extra fields") == true && reasons["json"]?.hasSuffix(": at extras.continuedProcessing: expected an object") == true, "\(reasons["json"] ?? "")")
            #expect(Set(try store.pendingRequests()) == Set(good))
            #expect(try store.quarantinedRequests().allSatisfy { $0.quarantinedAt == later })
            #expect(try server.query("SELECT submitted_at::text FROM bgtask_quarantined_requests WHERE identifier = 'nan'", in: database) == [["NaN"]])
            // Nothing is found again at the next open.
            #expect(try open(server, database).quarantinedAtOpen.isEmpty)
        }

        @Test("a NUL byte, which PostgreSQL's text cannot hold, is refused before anything is written")
        func nulBytesAreRefused() throws {
            let server = try TestPostgreSQLServer.shared()
            let store = try open(server, try server.createDatabase())
            let error = try #require(throws: StoreError.self) {
                try store.upsertRequests([Sample.request("fine"), Sample.request("cut\0here")])
            }
            #expect(error.code == .invalidData)
            #expect(error.message.contains("NUL"))
            #expect(error.path == store.storeDescription)
            #expect(throws: StoreError.self) { try store.setAppSetting("a\0b", app: Sample.app, name: "n") }
            #expect(try store.pendingRequests().isEmpty)
            #expect(try store.appSetting(app: Sample.app, name: "n") == nil)
        }

        @Test("non-finite dates are refused before anything is written")
        func nonFiniteDatesAreRefused() throws {
            let server = try TestPostgreSQLServer.shared()
            let store = try open(server, try server.createDatabase())
            var request = Sample.request("never")
            request.earliestBeginDate = Date(timeIntervalSinceReferenceDate: .infinity)
            let error = try #require(throws: StoreError.self) { try store.upsertRequest(request) }
            #expect(error.code == .invalidData && error.message.contains("earliest_begin"))
            #expect(error.path == store.storeDescription && error.message.contains(store.storeDescription))
            #expect(try store.pendingRequests().isEmpty)
        }

        // MARK: Replicas

        @Test("replicas share requests and the log, but number, read and finish their own runs")
        func replicasKeepTheirRunsApart() throws {
            let fixture = try StoreFixture(.postgreSQL, replica: "replica-a")
            let storeA = fixture.store
            let storeB = try fixture.openAnother(replica: "replica-b")
            let requestA = Sample.request("a")
            let requestB = Sample.request("b", app: Sample.otherApp)
            try storeA.upsertRequest(requestA)
            try storeA.upsertRequest(requestB)
            #expect(try storeB.pendingRequests() == [requestA, requestB])

            // Both replicas number their first run 1.
            let runA = Sample.run(1, of: requestA, startedAt: Sample.now)
            let runB = Sample.run(1, of: requestB, startedAt: Sample.now.addingTimeInterval(1))
            try storeA.recordRunStarted(runA)
            try storeB.recordRunStarted(runB)
            #expect(try storeA.pendingRequests().isEmpty)
            #expect(try storeA.run(RunID(1)) == runA)
            #expect(try storeB.run(RunID(1)) == runB)
            let runC = Sample.run(2, of: Sample.request("c"), startedAt: Sample.now.addingTimeInterval(2))
            try storeB.recordRunStarted(runC)
            #expect(try storeA.maxRunID() == RunID(1))
            #expect(try storeB.maxRunID() == RunID(2))

            // A replica cannot finish another's run.
            let error = try #require(throws: StoreError.self) {
                try storeA.recordRunFinished(Sample.finished(runC, after: 1), appSettings: [:])
            }
            #expect(error.code == .invalidData && error.message.contains("replica-a"))
            let finishedB = Sample.finished(runB, after: 3)
            try storeB.recordRunFinished(finishedB, appSettings: [:])
            #expect(try storeA.run(RunID(1)) == runA, "replica A's run 1 is not B's")

            // The log and the summary cover every replica.
            #expect(try storeA.runs().map(\.request.identifier) == ["a", "b", "c"])
            #expect(try storeA.runs(app: nil, since: nil, limit: 2).map(\.request.identifier) == ["b", "c"])
            #expect(try storeA.energySummary(app: nil, since: nil).map(\.app) == [Sample.app, Sample.app, Sample.otherApp])

            // Pruning keeps each replica's newest run: both keep numbering upward.
            try storeA.recordRunFinished(Sample.finished(runA, after: 1), appSettings: [:])
            try storeB.recordRunFinished(Sample.finished(runC, after: 1), appSettings: [:])
            #expect(try storeA.pruneRuns(olderThan: Sample.now.addingTimeInterval(86_400)) == 1)
            #expect(try storeA.maxRunID() == RunID(1))
            #expect(try storeB.maxRunID() == RunID(2))
            #expect(try storeB.run(RunID(1)) == nil)
        }

        @Test("a replica name must be printable and not empty")
        func replicaNames() throws {
            let server = try TestPostgreSQLServer.shared()
            let database = try server.createDatabase()
            for name in ["", "a\nb", "a\0b", String(repeating: "r", count: 201)] {
                let error = try #require(throws: StoreError.self) {
                    try PostgreSQLStore.open(address: server.address(database: database), replica: name, now: Sample.now)
                }
                #expect(error.code == .invalidData && error.message.contains("replica name"))
            }
        }

        // MARK: A server that goes away

        @Test("a stopped server is unavailable, named without the password; restarted, the same store works again")
        func serverStoppedAndRestarted() throws {
            let server = try TestPostgreSQLServer.start(name: "restarted")
            defer { server.remove() }
            let database = try server.createDatabase()
            let address = server.address(database: database) + " password=\(Self.secret)"
            let store = try PostgreSQLStore.open(address: address, replica: "replica-a", now: Sample.now)
            try store.upsertRequest(Sample.request("before"))
            try server.stop()

            let calls: [(String, () throws -> Void)] = [
                ("submit", { try store.upsertRequest(Sample.request("during")) }),
                ("batch", { try store.upsertRequests([Sample.request("during-1"), Sample.request("during-2")]) }),
                ("read", { _ = try store.pendingRequests() }),
                ("run start", { try store.recordRunStarted(Sample.run(1, of: Sample.request("before"))) }),
                ("setting", { try store.setAppSetting("on", app: Sample.app, name: "s") }),
            ]
            for (name, call) in calls {
                let error = try #require(throws: StoreError.self, "\(name)") { try call() }
                #expect(error.code == .unavailable, "\(name)")
                #expect(error.message.contains("host=\(server.socketDirectory)") && error.message.contains("dbname=\(database)"), "\(name): \(error.message)")
                #expect(!error.message.contains(Self.secret), "\(name)")
                #expect(error.path == store.storeDescription, "\(name)")
            }
            let refused = try #require(throws: StoreError.self) {
                try PostgreSQLStore.open(address: address, replica: "replica-b", now: Sample.now)
            }
            #expect(refused.code == .unavailable)
            #expect(refused.message.contains("dbname=\(database)") && !refused.message.contains(Self.secret))

            try server.start()
            try store.upsertRequest(Sample.request("after"))
            // Nothing of what failed was written.
            #expect(try store.pendingRequests().map(\.identifier) == ["after", "before"])
            #expect(try store.runs().isEmpty)

            // Restarted while the store was idle: the next call reconnects by itself.
            try server.stop()
            try server.start()
            #expect(try store.pendingRequests().count == 2)
            // The submit's statement was prepared in a session that is gone: it is prepared
            // again in the new one, not run by a name the server no longer knows.
            try server.stop()
            try server.start()
            try store.upsertRequest(Sample.request("after-second-restart"))
            try store.upsertRequests([Sample.request("batch-1"), Sample.request("batch-2")])
            #expect(try store.pendingRequests().count == 5)
            // And it still prepares: the new session holds the submit's and the batch's statements.
            #expect(try preparedStatements(of: store) == 2)
        }

        /// How many statements the store's own session holds prepared, as the server says.
        private func preparedStatements(of store: PostgreSQLStore) throws -> Int? {
            try store.withConnection { (connection) throws(StoreError) in
                Int(try connection.execute("SELECT count(*) FROM pg_prepared_statements").row(0).text(0))
            }
        }

        @Test("a prepared submit whose statement the session lost (DISCARD ALL, as a pooler does) runs unprepared instead of failing")
        func preparedStatementDiscarded() throws {
            let fixture = try StoreFixture(.postgreSQL)
            let store = try #require(fixture.store as? PostgreSQLStore)
            try store.upsertRequest(Sample.request("first"))
            #expect(try preparedStatements(of: store) == 1)
            try store.withConnection { (connection) throws(StoreError) in
                _ = try connection.execute("DISCARD ALL")
            }
            try store.upsertRequest(Sample.request("second"))
            try store.upsertRequest(Sample.request("third"))
            #expect(try store.pendingRequests().map(\.identifier) == ["first", "second", "third"])
            // A statement that vanished once may vanish again: the connection stopped preparing.
            #expect(try preparedStatements(of: store) == 0)
        }

        @Test("a connection lost while a write commits says the outcome is unknown; one lost inside a transaction writes nothing; both reconnect")
        func connectionLostDuringACall() throws {
            let fixture = try StoreFixture(.postgreSQL)
            let store = fixture.store
            // A trigger that ends its own session: the server closes the connection in the
            // middle of the statement, deterministically.
            try (store as! PostgreSQLStore).withConnection { (connection) throws(StoreError) in
                try connection.executeScript(
                    """
                    CREATE FUNCTION bgtask_test_hang_up() RETURNS trigger LANGUAGE plpgsql AS $$
                        BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NEW; END $$;
                    CREATE TRIGGER hang_up BEFORE INSERT ON bgtask_pending_requests
                        FOR EACH ROW WHEN (NEW.identifier = 'hang-up') EXECUTE FUNCTION bgtask_test_hang_up();
                    """
                )
            }
            let alone = try #require(throws: StoreError.self) { try store.upsertRequest(Sample.request("hang-up")) }
            #expect(alone.code == .unavailable)
            #expect(alone.message.contains("unknown"))
            #expect(try store.pendingRequests().isEmpty)

            try store.upsertRequest(Sample.request("kept"))
            let batch = try #require(throws: StoreError.self) {
                try store.upsertRequests([Sample.request("lost"), Sample.request("hang-up")])
            }
            #expect(batch.code == .unavailable)
            #expect(try store.pendingRequests().map(\.identifier) == ["kept"])
        }

        // MARK: Waits that must end

        /// The session's `statement_timeout`, as the store's own connection sees it.
        private func statementTimeout(of store: PostgreSQLStore) throws -> String? {
            try store.withConnection { (connection) throws(StoreError) in
                try connection.execute("SELECT current_setting('statement_timeout')").row(0).text(0)
            }
        }

        @Test("a session gets a one-minute statement timeout unless the address or the server gives it one, 0 included")
        func statementTimeoutDefaults() throws {
            let server = try TestPostgreSQLServer.shared()
            let database = try server.createDatabase()
            let plain = try open(server, database)
            defer { plain.close() }
            #expect(try statementTimeout(of: plain) == "1min")
            let fromAddress = try PostgreSQLStore.open(
                address: server.address(database: database) + " options='-c statement_timeout=250'", replica: "replica-b", now: Sample.now)
            defer { fromAddress.close() }
            #expect(try statementTimeout(of: fromAddress) == "250ms", "the address's own is kept")
            try server.administer("ALTER DATABASE \(database) SET statement_timeout = '7s'")
            let fromServer = try open(server, database, replica: "replica-c")
            defer { fromServer.close() }
            #expect(try statementTimeout(of: fromServer) == "7s", "the database's setting is kept")
            try server.administer("ALTER DATABASE \(database) SET statement_timeout = 0")
            let disabled = try open(server, database, replica: "replica-d")
            defer { disabled.close() }
            #expect(try statementTimeout(of: disabled) == "0", "no timeout, set on purpose, is kept")
            try server.administer("ALTER DATABASE \(database) RESET statement_timeout")
            // A reconnected session is set up again.
            try plain.withConnection { (connection) throws(StoreError) in _ = connection.reset() }
            #expect(try statementTimeout(of: plain) == "1min")
        }

        @Test("a submit held by a lock nobody releases fails after the statement timeout, naming the server; nothing is lost, and it works once the lock goes")
        func aLockNobodyReleasesEndsInAnError() throws {
            let server = try TestPostgreSQLServer.shared()
            let database = try server.createDatabase()
            let store = try PostgreSQLStore.open(
                address: server.address(database: database) + " options='-c statement_timeout=300'", replica: "replica-a", now: Sample.now)
            defer { store.close() }
            try store.upsertRequest(Sample.request("before"))
            // Another session (an administrator's) takes the table and keeps its transaction open.
            let administrator = try open(server, database, replica: "administrator")
            defer { administrator.close() }
            try administrator.withConnection { (connection) throws(StoreError) in
                try connection.execute("BEGIN")
                try connection.execute("LOCK TABLE bgtask_pending_requests IN ACCESS EXCLUSIVE MODE")
            }
            let started = ContinuousClock.now
            let error = try #require(throws: StoreError.self) { try store.upsertRequest(Sample.request("held")) }
            let waited = ContinuousClock.now - started
            #expect(error.message.contains("57014"), "\(error.message)")
            #expect(error.message.contains("dbname=\(database)"), "names the server: \(error.message)")
            #expect(waited < .seconds(20), "the wait ended: \(waited)")
            // The administrator's next call rolls its transaction back (and so frees the table).
            #expect(try administrator.pendingRequests().map(\.identifier) == ["before"])
            try store.upsertRequest(Sample.request("after"))
            #expect(try store.pendingRequests().map(\.identifier) == ["after", "before"])
        }

        // MARK: Credentials

        @Test("a password from the URL or a pgpass file authenticates; a wrong one is refused without being shown")
        func credentials() throws {
            let server = try TestPostgreSQLServer.shared()
            let role = TestPostgreSQLServer.passwordRole
            let database = try server.createDatabase(owner: role)
            let encoded = TestPostgreSQLServer.password.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let url = "postgresql://\(role):\(encoded)@/\(database)?host=\(server.socketDirectory)"
            let store = try PostgreSQLStore.open(address: url, replica: "replica-a", now: Sample.now)
            #expect(!store.storeDescription.contains(TestPostgreSQLServer.password))
            #expect(store.storeDescription == "host=\(server.socketDirectory) dbname=\(database) user=\(role)")
            try store.upsertRequest(Sample.request("authenticated"))

            let wrong = "postgresql://\(role):\(Self.secret)@/\(database)?host=\(server.socketDirectory)"
            let error = try #require(throws: StoreError.self) { try PostgreSQLStore.open(address: wrong, replica: "replica-a", now: Sample.now) }
            #expect(error.code == .unavailable)
            #expect(error.message.contains("password authentication failed"))
            #expect(!error.message.contains(Self.secret))

            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-pgpass-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            // libpq ignores a pgpass file that others may read.
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            let passfile = directory.appendingPathComponent("pgpass")
            try Data("*:*:*:\(role):\(TestPostgreSQLServer.password)\n".utf8).write(to: passfile)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: passfile.path)
            let fromFile = try PostgreSQLStore.open(
                address: "host=\(server.socketDirectory) dbname=\(database) user=\(role) passfile=\(passfile.path)", replica: "replica-b", now: Sample.now
            )
            #expect(try fromFile.pendingRequests().map(\.identifier) == ["authenticated"])
        }

        @Test("an unreachable server is unavailable at open, named, without the password")
        func unreachableAtOpen() throws {
            let address = "postgresql://someone:\(Self.secret)@/bgtask?host=/nonexistent/bgtask-socket-dir"
            let error = try #require(throws: StoreError.self) { try PostgreSQLStore.open(address: address, replica: "replica-a", now: Sample.now) }
            #expect(error.code == .unavailable)
            #expect(error.message.contains("host=/nonexistent/bgtask-socket-dir") && error.message.contains("user=someone"))
            #expect(!error.message.contains(Self.secret))
        }
    }
}
