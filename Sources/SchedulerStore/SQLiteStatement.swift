import CSQLite
import Foundation

/// A value for one `?` parameter of a statement.
enum SQLiteValue {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    /// A date as REAL seconds since 2001-01-01 00:00:00 UTC, or NULL.
    ///
    /// Why not seconds since 1970: `Date` stores seconds since 2001 as a `Double`, and
    /// converting to the 1970 epoch adds 978 307 200 s, which rounds away the last bit of
    /// about half of all present-day instants; such a date would not compare `==` after a
    /// round trip. Seconds since 2001 are `Date`'s own representation, so they are exact.
    /// In SQL, `datetime(col + 978307200, 'unixepoch')` shows the date.
    static func date(_ date: Date?) -> SQLiteValue {
        date.map { .real($0.timeIntervalSinceReferenceDate) } ?? .null
    }

    /// A flag as INTEGER 0 or 1, or NULL.
    static func bool(_ flag: Bool?) -> SQLiteValue {
        flag.map { .integer($0 ? 1 : 0) } ?? .null
    }

    /// Text, or NULL.
    static func optionalText(_ text: String?) -> SQLiteValue {
        text.map { .text($0) } ?? .null
    }

    /// A real number, or NULL. NaN and infinities are stored as NULL: SQLite would turn NaN
    /// into NULL anyway, and an infinite measurement is no measurement.
    static func optionalReal(_ number: Double?) -> SQLiteValue {
        guard let number, number.isFinite else { return .null }
        return .real(number)
    }

    /// An integer, or NULL.
    static func optionalInteger(_ number: Int64?) -> SQLiteValue {
        number.map { .integer($0) } ?? .null
    }
}

/// One prepared statement. Owned by the ``SQLiteConnection`` that caches it; never shared.
final class SQLiteStatement {
    /// The `sqlite3_stmt` handle.
    let handle: OpaquePointer

    init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Binds `values` to parameters 1...n. Returns SQLite's result code.
    func bind(_ values: [SQLiteValue]) -> Int32 {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch value {
            case .null:
                result = sqlite3_bind_null(handle, index)
            case .integer(let number):
                result = sqlite3_bind_int64(handle, index, number)
            case .real(let number):
                result = sqlite3_bind_double(handle, index, number)
            case .text(let text):
                // Pass the UTF-8 length so embedded NULs survive; TRANSIENT makes SQLite copy
                // the bytes, because the temporary C string dies when this call returns.
                result = sqlite3_bind_text(handle, index, text, Int32(text.utf8.count), csqlite_transient())
            case .blob(let data):
                if data.isEmpty {
                    // A NULL pointer would bind SQL NULL, not an empty blob.
                    result = sqlite3_bind_zeroblob(handle, index, 0)
                } else {
                    result = data.withUnsafeBytes { bytes in
                        sqlite3_bind_blob(handle, index, bytes.baseAddress, Int32(bytes.count), csqlite_transient())
                    }
                }
            }
            if result != SQLITE_OK { return result }
        }
        return SQLITE_OK
    }

    /// Makes the statement ready for its next use and drops the bound values (so that no
    /// copy of the caller's data lingers in the cache).
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }
}

/// The current row of a statement, valid only inside the row callback of
/// ``SQLiteConnection/query(_:_:row:)``.
struct SQLiteRow {
    let handle: OpaquePointer

    /// Whether column `index` (0-based) is NULL.
    func isNull(_ index: Int32) -> Bool {
        sqlite3_column_type(handle, index) == SQLITE_NULL
    }

    /// Whether column `index` holds a number (INTEGER or REAL): what dates and flags must
    /// be. SQLite would otherwise read a TEXT `2026-11-30` as the number 2026.
    func isNumber(_ index: Int32) -> Bool {
        let type = sqlite3_column_type(handle, index)
        return type == SQLITE_INTEGER || type == SQLITE_FLOAT
    }

    /// Whether column `index` holds an INTEGER (counts of bytes must).
    func isInteger(_ index: Int32) -> Bool {
        sqlite3_column_type(handle, index) == SQLITE_INTEGER
    }

    /// Whether column `index` holds TEXT.
    func isText(_ index: Int32) -> Bool {
        sqlite3_column_type(handle, index) == SQLITE_TEXT
    }

    /// SQLite's name for the storage class of column `index`, for error messages.
    func typeName(_ index: Int32) -> String {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: return "an integer"
        case SQLITE_FLOAT: return "a real number"
        case SQLITE_TEXT: return "text"
        case SQLITE_BLOB: return "a blob"
        default: return "NULL"
        }
    }

    func int64(_ index: Int32) -> Int64 {
        sqlite3_column_int64(handle, index)
    }

    func double(_ index: Int32) -> Double {
        sqlite3_column_double(handle, index)
    }

    func bool(_ index: Int32) -> Bool {
        int64(index) != 0
    }

    func text(_ index: Int32) -> String {
        guard let bytes = sqlite3_column_text(handle, index) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// ``text(_:)``, but `candidate` itself when the column holds exactly its bytes: rows
    /// read in key order repeat their first column (an app's requests), and sharing one
    /// string saves an allocation per row and makes comparisons of it instant.
    func text(_ index: Int32, reusing candidate: String?) -> String {
        guard var candidate, let bytes = sqlite3_column_text(handle, index) else { return text(index) }
        let count = Int(sqlite3_column_bytes(handle, index))
        let same = candidate.withUTF8 { known in known.count == count && (count == 0 || memcmp(known.baseAddress!, bytes, count) == 0) }
        return same ? candidate : text(index)
    }

    func blob(_ index: Int32) -> Data {
        // Zero-length blobs come back as a NULL pointer.
        guard let bytes = sqlite3_column_blob(handle, index) else { return Data() }
        return Data(bytes: bytes, count: Int(sqlite3_column_bytes(handle, index)))
    }

    /// A date stored by ``SQLiteValue/date(_:)``.
    func date(_ index: Int32) -> Date {
        Date(timeIntervalSinceReferenceDate: double(index))
    }

    func optionalDate(_ index: Int32) -> Date? {
        isNull(index) ? nil : date(index)
    }

    func optionalText(_ index: Int32) -> String? {
        isNull(index) ? nil : text(index)
    }

    func optionalBool(_ index: Int32) -> Bool? {
        isNull(index) ? nil : bool(index)
    }

    func optionalDouble(_ index: Int32) -> Double? {
        isNull(index) ? nil : double(index)
    }

    func optionalInt64(_ index: Int32) -> Int64? {
        isNull(index) ? nil : int64(index)
    }

    /// Column `index` as it is stored, whatever its type: for copying rows as they are.
    func value(_ index: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: .integer(int64(index))
        case SQLITE_FLOAT: .real(double(index))
        case SQLITE_TEXT: .text(text(index))
        case SQLITE_BLOB: .blob(blob(index))
        default: .null
        }
    }
}
