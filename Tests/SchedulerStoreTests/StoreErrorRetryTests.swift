import CSQLite
@testable import SchedulerStore
import Testing

/// Which store failures a writer tries again (a run's end the store did not take:
/// docs/replicas.md, "Failures"): those that may pass, decided on the code, SQLite's result
/// and the server's SQLSTATE, never on a message's words.
@Suite struct StoreErrorRetryTests {
    @Test func onlyFailuresThatMayPassAreRetried() {
        #expect(StoreError(code: .unavailable, path: nil, message: "cannot be reached").mayPassIfRetried)
        #expect(!StoreError(code: .invalidData, path: nil, message: "never recorded as started").mayPassIfRetried)
        #expect(!StoreError(code: .closed, path: nil, message: "closed").mayPassIfRetried)

        func sqlite(_ result: Int32) -> StoreError {
            var error = StoreError(code: .sqlite, path: nil, message: "sqlite")
            error.sqliteResult = result
            return error
        }
        #expect(sqlite(SQLITE_FULL).mayPassIfRetried && sqlite(SQLITE_BUSY).mayPassIfRetried)
        #expect(sqlite(SQLITE_IOERR | (3 << 8)).mayPassIfRetried, "an extended I/O error (its primary code decides)")
        #expect(!sqlite(SQLITE_CONSTRAINT).mayPassIfRetried)

        func server(_ state: String?) -> StoreError {
            // The message names a SQLSTATE that is not the one given: the field decides.
            var error = StoreError(code: .server, path: nil, message: "refused a statement: SQLSTATE 57014")
            error.sqlState = state
            return error
        }
        #expect(server("57014").mayPassIfRetried && server("40P01").mayPassIfRetried && server("53100").mayPassIfRetried)
        #expect(!server("23505").mayPassIfRetried && !server("42P01").mayPassIfRetried && !server(nil).mayPassIfRetried)
    }
}
