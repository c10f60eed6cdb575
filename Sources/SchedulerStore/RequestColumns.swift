import Foundation
import SchedulerCore

/// How a ``PendingRequest`` maps to the columns that `pending_requests` and `runs` share.
///
/// Both tables store the full request (a run keeps its request so that an interrupted run can
/// put it back), so the mapping lives in one place. The PostgreSQL store (another target of
/// this package) uses its `package` part, so both stores encode and check a request's task
/// kind and extra fields the same way.
package enum RequestColumns {
    /// The request columns, in the order ``values(of:)`` binds them and ``decode(_:from:)``
    /// reads them.
    static let names = "app, identifier, kind, earliest_begin, submitted_at, requires_network, requires_power, extras"
    /// How many columns ``names`` lists.
    static let count: Int32 = 8
    /// `?` placeholders for ``names``.
    static let placeholders = "?, ?, ?, ?, ?, ?, ?, ?"

    /// The fields few requests use, stored as one JSON column.
    private struct Extras: Codable, Equatable {
        var protectionTypeOfRequiredData: String?
        var continuedProcessing: ContinuedProcessingOptions?
        var remoteNotificationPayload: String?
    }

    /// The values for ``names``.
    static func values(of request: PendingRequest) throws(StoreError) -> [SQLiteValue] {
        [
            .text(request.app.rawValue),
            .text(request.identifier),
            .text(request.kind.rawValue),
            .date(request.earliestBeginDate),
            .date(request.submittedAt),
            .bool(request.requiresNetworkConnectivity),
            .bool(request.requiresExternalPower),
            .optionalText(try encodeExtras(of: request)),
        ]
    }

    /// Reads a request from `row`, whose columns `offset ..< offset + count` are ``names``.
    ///
    /// Strict: every column must hold what ``values(of:)`` writes (text, finite numbers for
    /// dates, 0 or 1 for flags, JSON extras), so a row written by hand or by another program
    /// is reported (``StoreError/Code/invalidData``, naming the row and the column) instead
    /// of read as something else, such as a TEXT date read as 2001-01-01.
    ///
    /// `previousApp`, the app of the row read before, is reused when this row's app is the
    /// same (rows in key order come app by app).
    static func decode(_ row: SQLiteRow, from offset: Int32 = 0, previousApp: AppID? = nil) throws(StoreError) -> PendingRequest {
        let app = AppID(row.text(offset, reusing: previousApp?.rawValue))
        let identifier = row.text(offset + 1)
        // Built only for an error message (a daemon reads 100,000 rows at start-up).
        func name() -> String { "\(app)/\(identifier)" }
        guard row.isText(offset), row.isText(offset + 1) else {
            throw invalid("the row \(name()) has \(row.typeName(offset)) as its app and \(row.typeName(offset + 1)) as its identifier, not text")
        }
        guard row.isText(offset + 2) else {
            throw invalid("the task kind of \(name()) is \(row.typeName(offset + 2)), not text")
        }
        let kind = try kind(row.text(offset + 2), of: name)
        let submittedAt = try date(row, offset + 4, column: "submitted_at", of: name)
        let earliestBegin = row.isNull(offset + 3) || (row.isNumber(offset + 3) && ignoresEarliestBegin(kind: kind, seconds: row.double(offset + 3)))
            ? nil : try date(row, offset + 3, column: "earliest_begin", of: name)
        let requiresNetwork = try flag(row, offset + 5, column: "requires_network", of: name)
        let requiresPower = try flag(row, offset + 6, column: "requires_power", of: name)
        if !row.isNull(offset + 7), !row.isText(offset + 7) {
            throw invalid("the extra fields of \(name()) are \(row.typeName(offset + 7)), not JSON text")
        }
        return try assemble(
            app: app, identifier: identifier, kind: kind, earliestBegin: earliestBegin, submittedAt: submittedAt,
            requiresNetwork: requiresNetwork, requiresPower: requiresPower, extras: row.optionalText(offset + 7), of: name
        )
    }

    /// The task kind stored as `kindName`, or ``StoreError/Code/invalidData`` naming the row.
    package static func kind(_ kindName: String, of name: () -> String) throws(StoreError) -> TaskKind {
        guard let kind = TaskKind(rawValue: kindName) else {
            throw invalid("unknown task kind \"\(kindName)\" for \(name())")
        }
        return kind
    }

    /// A request from columns already checked one by one, its extra fields decoded from
    /// their JSON (strictly: JSON that does not decode is ``StoreError/Code/invalidData``
    /// naming the row).
    package static func assemble(
        app: AppID, identifier: String, kind: TaskKind, earliestBegin: Date?, submittedAt: Date,
        requiresNetwork: Bool, requiresPower: Bool, extras json: String?, of name: () -> String
    ) throws(StoreError) -> PendingRequest {
        let extras = try decodeExtras(json, of: name)
        var request = PendingRequest(
            app: app,
            identifier: identifier,
            kind: kind,
            earliestBeginDate: earliestBegin,
            requiresNetworkConnectivity: requiresNetwork,
            requiresExternalPower: requiresPower,
            protectionTypeOfRequiredData: extras.protectionTypeOfRequiredData,
            continuedProcessing: extras.continuedProcessing,
            submittedAt: submittedAt
        )
        request.remoteNotificationPayload = extras.remoteNotificationPayload
        return request
    }

    /// A date column: a finite number of seconds since 2001 (see ``SQLiteValue/date(_:)``).
    static func date(_ row: SQLiteRow, _ index: Int32, column: String, of name: () -> String) throws(StoreError) -> Date {
        guard row.isNumber(index) else {
            let shown = row.isText(index) ? " (\"\(row.text(index).excerpt(scalars: 40))\")" : ""
            throw invalid("\(column) of \(name()) is \(row.typeName(index))\(shown), not seconds since 2001-01-01")
        }
        return try storedDate(row.double(index), column: column, of: name)
    }

    /// Whether a stored `earliest_begin` of `seconds` is read as none: continued processing
    /// ignores the date (``PendingRequest/dueDate``), so the engine stores whatever the app
    /// gave, and one no stored date may be (``storedDate(_:column:of:)``) is no reason to
    /// set the request aside.
    package static func ignoresEarliestBegin(kind: TaskKind, seconds: Double) -> Bool {
        kind == .continuedProcessing && !storedDateRange.contains(seconds)
    }

    /// The seconds since 2001 a stored date may be: `Date.distantPast` to `Date.distantFuture`.
    package static let storedDateRange = Date.distantPast.timeIntervalSinceReferenceDate...Date.distantFuture.timeIntervalSinceReferenceDate

    /// A stored date of `seconds` since 2001: finite and between `Date.distantPast` and
    /// `Date.distantFuture` (0001 to 4001: every date a scheduler writes, and what the tools
    /// can print; `why` showed "<description unavailable>" for 1e300), else
    /// ``StoreError/Code/invalidData`` naming the row, the column and the value. Both stores.
    package static func storedDate(_ seconds: Double, column: String, of name: () -> String) throws(StoreError) -> Date {
        guard seconds.isFinite else {
            throw invalid("\(column) of \(name()) is \(seconds), not a finite date")
        }
        guard storedDateRange.contains(seconds) else {
            throw invalid("\(column) of \(name()) is \(seconds) seconds from 2001-01-01, not a date between 0001-01-01 and 4001-01-01")
        }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }

    /// A flag column: the integer 0 or 1 (a request's requirements, a run's `success`).
    static func flag(_ row: SQLiteRow, _ index: Int32, column: String, of name: () -> String) throws(StoreError) -> Bool {
        guard row.isNumber(index), row.double(index) == 0 || row.double(index) == 1 else {
            throw invalid("\(column) of \(name()) is \(row.typeName(index)) \(row.text(index)), not 0 or 1")
        }
        return row.bool(index)
    }

    /// The JSON of the fields few requests use, or `nil` when the request uses none of them
    /// (the column is then NULL rather than "{}").
    package static func encodeExtras(of request: PendingRequest) throws(StoreError) -> String? {
        let extras = Extras(
            protectionTypeOfRequiredData: request.protectionTypeOfRequiredData,
            continuedProcessing: request.continuedProcessing,
            remoteNotificationPayload: request.remoteNotificationPayload
        )
        // Most requests have no extras: keep the column NULL rather than "{}".
        guard extras != Extras() else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            return String(decoding: try encoder.encode(extras), as: UTF8.self)
        } catch {
            throw invalid("cannot encode the extra fields of \(request.key): \(error)")
        }
    }

    private static func decodeExtras(_ json: String?, of name: () -> String) throws(StoreError) -> Extras {
        guard let json else { return Extras() }
        do {
            return try JSONDecoder().decode(Extras.self, from: Data(json.utf8))
        } catch {
            throw invalid("cannot decode the extra fields of \(name()) (\(json.excerpt(scalars: 60).debugDescription)): \(DecodingErrorText.describe(error, under: "extras"))")
        }
    }

    private static func invalid(_ message: String) -> StoreError {
        StoreError(code: .invalidData, path: nil, message: message)
    }
}
