import Foundation
import SchedulerCore

/// How a ``PendingRequest`` maps to the columns that `pending_requests` and `runs` share.
///
/// Both tables store the full request (a run keeps its request so that an interrupted run can
/// put it back), so the mapping lives in one place.
enum RequestColumns {
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
    static func decode(_ row: SQLiteRow, from offset: Int32 = 0) throws(StoreError) -> PendingRequest {
        let app = AppID(row.text(offset))
        let identifier = row.text(offset + 1)
        let kindName = row.text(offset + 2)
        guard let kind = TaskKind(rawValue: kindName) else {
            throw invalid("unknown task kind \"\(kindName)\" for \(app)/\(identifier)")
        }
        let extras = try decodeExtras(row.optionalText(offset + 7), of: "\(app)/\(identifier)")
        return PendingRequest(
            app: app,
            identifier: identifier,
            kind: kind,
            earliestBeginDate: row.optionalDate(offset + 3),
            requiresNetworkConnectivity: row.bool(offset + 5),
            requiresExternalPower: row.bool(offset + 6),
            protectionTypeOfRequiredData: extras.protectionTypeOfRequiredData,
            continuedProcessing: extras.continuedProcessing,
            submittedAt: row.date(offset + 4)
        )
    }

    private static func encodeExtras(of request: PendingRequest) throws(StoreError) -> String? {
        let extras = Extras(
            protectionTypeOfRequiredData: request.protectionTypeOfRequiredData,
            continuedProcessing: request.continuedProcessing
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

    private static func decodeExtras(_ json: String?, of name: String) throws(StoreError) -> Extras {
        guard let json else { return Extras() }
        do {
            return try JSONDecoder().decode(Extras.self, from: Data(json.utf8))
        } catch {
            throw invalid("cannot decode the extra fields of \(name): \(error)")
        }
    }

    private static func invalid(_ message: String) -> StoreError {
        StoreError(code: .invalidData, path: nil, message: message)
    }
}
