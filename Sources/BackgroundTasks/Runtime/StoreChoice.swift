/// Where an embedded scheduler keeps its state (docs/replicas.md, "Choosing the store").
public enum StoreChoice: Sendable, Equatable {
    /// `BGTASK_STORE_URL` when it is set and not empty (a PostgreSQL address: replicas
    /// share it), else the SQLite file in the app's state directory.
    case automatic
    /// The SQLite file in the app's state directory, whatever the environment says.
    case sqlite
    /// The PostgreSQL store at `address`: a `postgresql://` or `postgres://` URI, or
    /// libpq's `key=value` form. Credentials may come from it, the `PG*` environment or a
    /// pgpass file; they are never logged.
    case postgreSQL(address: String)

    /// The shared store's address this choice names in `environment`, or `nil` for SQLite
    /// (the one reading of `BGTASK_STORE_URL`, for the scheduler and `bgtask` alike).
    public func sharedAddress(environment: [String: String]) -> String? {
        switch self {
        case .automatic:
            guard let address = environment["BGTASK_STORE_URL"], !address.isEmpty else { return nil }
            return address
        case .sqlite:
            return nil
        case .postgreSQL(let address):
            return address
        }
    }

    /// What a reader such as `bgtask log`, `why` or `pending` reads: the shared store
    /// `given` (`--store`), else, unless the reader was pointed at another place
    /// (`--state`, `--socket`), the one `BGTASK_STORE_URL` names; `nil` for the reader's
    /// own place.
    public static func readerAddress(given: String?, otherPlaceGiven: Bool, environment: [String: String]) -> String? {
        given ?? (otherPlaceGiven ? nil : StoreChoice.automatic.sharedAddress(environment: environment))
    }
}
