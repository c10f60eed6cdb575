import Foundation
@testable import PostgreSQLStore
import SchedulerCore
@testable import SchedulerStore
import Testing

/// The two implementations of ``SchedulerStorage`` the contract suite runs against.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    case postgreSQL

    var testDescription: String {
        switch self {
        case .sqlite: "SQLite (in memory)"
        case .postgreSQL: "PostgreSQL"
        }
    }
}

/// One store under test: SQLite in memory, or a PostgreSQL store on a fresh database of the
/// run's server. The databases are not dropped: dropping costs time, and the whole server
/// (a few hundred megabytes at most) is removed when the test run ends; a store closes its
/// connection when it is released. The contract tests see only
/// ``store`` (an `any SchedulerStorage`); the few that must reach below it (a row no store
/// would write, a statement that fails halfway through a transaction) do it through the
/// fixture, once per implementation.
final class StoreFixture {
    let kind: StoreKind
    let store: any SchedulerStorage
    private let database: (server: TestPostgreSQLServer, name: String)?

    init(_ kind: StoreKind, replica: String = "replica-a") throws {
        self.kind = kind
        switch kind {
        case .sqlite:
            store = try SchedulerStore.inMemory()
            database = nil
        case .postgreSQL:
            let server = try TestPostgreSQLServer.shared()
            let name = try server.createDatabase()
            database = (server, name)
            store = try PostgreSQLStore.open(address: server.address(database: name), replica: replica, now: Sample.now)
        }
    }

    /// Another store on the same database (PostgreSQL only), as another replica would open it.
    func openAnother(replica: String) throws -> PostgreSQLStore {
        guard let database else { throw TestServerError(description: "only a PostgreSQL fixture has a database to share") }
        return try PostgreSQLStore.open(address: database.server.address(database: database.name), replica: replica, now: Sample.now)
    }

    /// Writes a pending row with the task kind `kind`, which no store writes unless it is one
    /// of ``TaskKind``'s: what another program (or a newer version) could leave.
    func insertRawRequest(app: AppID, identifier: String, kind: String) throws {
        switch store {
        case let sqlite as SchedulerStore:
            try sqlite.withConnection { (connection) throws(StoreError) in
                try connection.execute(
                    "INSERT INTO pending_requests (\(RequestColumns.names)) VALUES (?, ?, ?, NULL, 0, 0, 0, NULL)",
                    [.text(app.rawValue), .text(identifier), .text(kind)]
                )
            }
        case let postgreSQL as PostgreSQLStore:
            try postgreSQL.withConnection { (connection) throws(StoreError) in
                _ = try connection.execute(
                    "INSERT INTO bgtask_pending_requests (\(PostgreSQLColumns.requestNames)) VALUES ($1, $2, $3, NULL, 0, false, false, NULL)",
                    [.text(app.rawValue), .text(identifier), .text(kind)]
                )
            }
        default:
            Issue.record("unknown store \(type(of: store))")
        }
    }

    /// Sets `assignments` (SQL, for example `energy_joules = 'Infinity'`) on the run `id`:
    /// values no scheduler writes, as another program or a damaged disk could leave them.
    func damageRun(_ id: Int64, sqlite: String, postgreSQL: String) throws {
        switch store {
        case let sqliteStore as SchedulerStore:
            try sqliteStore.withConnection { (connection) throws(StoreError) in
                try connection.execute("UPDATE runs SET \(sqlite) WHERE id = ?", [.integer(id)])
            }
        case let postgreSQLStore as PostgreSQLStore:
            try postgreSQLStore.withConnection { (connection) throws(StoreError) in
                _ = try connection.execute("UPDATE bgtask_runs SET \(postgreSQL) WHERE id = $1", [.integer(id)])
            }
        default:
            Issue.record("unknown store \(type(of: store))")
        }
    }

    /// Makes every write of a pending request named `poison` fail inside the database (a
    /// trigger), so that a test can see a transaction fail after some of its statements ran.
    func poisonIdentifier() throws {
        switch store {
        case let sqlite as SchedulerStore:
            try sqlite.withConnection { (connection) throws(StoreError) in
                try connection.executeScript(
                    "CREATE TRIGGER poison BEFORE INSERT ON pending_requests WHEN NEW.identifier = 'poison' BEGIN SELECT RAISE(ABORT, 'poisoned'); END;"
                )
            }
        case let postgreSQL as PostgreSQLStore:
            try postgreSQL.withConnection { (connection) throws(StoreError) in
                try connection.executeScript(
                    """
                    CREATE FUNCTION bgtask_test_poison() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'poisoned'; END $$;
                    CREATE TRIGGER poison BEFORE INSERT OR UPDATE ON bgtask_pending_requests
                        FOR EACH ROW WHEN (NEW.identifier = 'poison') EXECUTE FUNCTION bgtask_test_poison();
                    """
                )
            }
        default:
            Issue.record("unknown store \(type(of: store))")
        }
    }
}

/// Values the tests share.
enum Sample {
    static let app = AppID("com.example.mail")
    static let otherApp = AppID("com.example.maps")

    /// 2025-03-04 05:06:07.5 UTC.
    static let now = Date(timeIntervalSince1970: 1_741_064_767.5)

    /// A plain refresh request.
    static func request(_ identifier: String, app: AppID = app, submittedAt: Date = now) -> PendingRequest {
        PendingRequest(app: app, identifier: identifier, kind: .appRefresh, submittedAt: submittedAt)
    }

    /// A run of `request`, in progress.
    static func run(_ id: Int64, of request: PendingRequest, startedAt: Date = now) -> RunRecord {
        RunRecord(id: RunID(id), request: request, startedAt: startedAt)
    }

    /// `run` ended as `outcome` after `seconds`.
    static func finished(_ run: RunRecord, after seconds: TimeInterval, outcome: RunOutcome = .success) -> RunRecord {
        var ended = run
        ended.endedAt = run.startedAt.addingTimeInterval(seconds)
        ended.outcome = outcome
        ended.success = outcome == .success
        ended.stopReason = "completed"
        return ended
    }

    /// Every kind of request, every optional field used by one of them, dates with long
    /// fractions (and one before 2001), names beyond ASCII.
    static let everyField: [PendingRequest] = {
        var remote = PendingRequest(
            app: app, identifier: "com.example.mail.push", kind: .appRefresh,
            submittedAt: Date(timeIntervalSinceReferenceDate: 760_000_000.000_000_3)
        )
        remote.remoteNotificationPayload = #"{"aps":{"content-available":1},"mailbox":"Inbox ✉️"}"#
        return [
            remote,
            PendingRequest(
                app: app, identifier: "com.example.mail.index", kind: .processing,
                earliestBeginDate: Date(timeIntervalSinceReferenceDate: 760_007_200.123_456_789),
                requiresNetworkConnectivity: true, requiresExternalPower: true,
                submittedAt: Date(timeIntervalSinceReferenceDate: 760_000_001.987_654_321)
            ),
            PendingRequest(
                app: app, identifier: "com.example.mail.sleep-study", kind: .healthResearch,
                earliestBeginDate: Date(timeIntervalSinceReferenceDate: -86_400.25),
                requiresExternalPower: true, protectionTypeOfRequiredData: "NSFileProtectionComplete",
                submittedAt: Date(timeIntervalSinceReferenceDate: 760_000_002.5)
            ),
            PendingRequest(
                app: otherApp, identifier: "com.example.maps.offline.🗺️", kind: .continuedProcessing,
                continuedProcessing: ContinuedProcessingOptions(
                    title: "Downloading \"Zürich\"", subtitle: "3 of 12 tiles — ça avance", strategy: .queue, requiredResources: ["gpu"]
                ),
                submittedAt: Date(timeIntervalSinceReferenceDate: 760_000_003.141_592_653)
            ),
        ]
    }()
}

extension SchedulerStorage {
    /// The whole run log.
    func runs() throws(StoreError) -> [RunRecord] { try runs(app: nil, since: nil, limit: nil) }
}
