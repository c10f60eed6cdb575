import BackgroundTasks
import Foundation
import PostgreSQLStore
import SchedulerStore

/// The store replicas share, as a reader (`log`, `energy`, `why`, `pending`) chose it, and
/// where its address came from: an error about an address from `BGTASK_STORE_URL` says so,
/// or a user who typed no address is left guessing which one failed.
struct SharedStoreAddress: Equatable {
    /// The address (a `postgresql://` URI or libpq's `key=value` form); never printed, since
    /// it may hold a password: messages show the store's redacted description.
    var address: String
    /// Whether it came from `BGTASK_STORE_URL` rather than `--store`.
    var fromEnvironment: Bool
    /// The option that reads another place instead (`--state DIR`, `--socket PATH`), for
    /// the hint in an error.
    var otherPlace: String

    /// `--store`'s address (`given`), else, unless `otherPlaceGiven`, `BGTASK_STORE_URL`'s
    /// (``StoreChoice/readerAddress(given:otherPlaceGiven:environment:)``); `nil` for the
    /// reader's own place.
    static func chosen(given: String?, otherPlaceGiven: Bool, otherPlace: String, environment: [String: String]) -> SharedStoreAddress? {
        guard let address = StoreChoice.readerAddress(given: given, otherPlaceGiven: otherPlaceGiven, environment: environment) else { return nil }
        return SharedStoreAddress(address: address, fromEnvironment: given == nil, otherPlace: otherPlace)
    }

    /// Opens the store to read, runs `body` on it and closes it. A ``StoreError`` of an
    /// address from `BGTASK_STORE_URL` ends by naming the variable (and how to read another
    /// store); the message itself never shows a password.
    func reading<T>(_ body: (PostgreSQLStore) throws -> T) throws -> T {
        do {
            return try PostgreSQLStore.reading(address: address, body)
        } catch var error as StoreError where fromEnvironment {
            error.message += " (the address is BGTASK_STORE_URL's; unset it, or give --store URL or \(otherPlace), to read another store)"
            throw error
        }
    }
}
