// A processing task's importer written as apps write one since iOS 15 (an export of
// newline-delimited JSON streamed and decoded line by line, so that a large export never sits
// in memory; a local cache read back the same way): `URLSession.bytes(for:)`, `.lines` and
// `URL.lines`, which swift-corelibs-foundation lacks (FoundationCompat's; docs/porting.md,
// "Foundation beside the API", streaming bytes). Foundation alone is imported, as in the app.
import Foundation

/// One record of the export.
public struct ExportRecord: Codable, Equatable, Sendable {
    public let id: Int
    public let title: String

    public init(id: Int, title: String) {
        self.id = id
        self.title = title
    }
}

/// Streams an export and keeps a count, as a BGProcessingTask's handler would.
/// `@unchecked Sendable` as the app declares it: one import runs at a time (the handler's),
/// so its two counts are never written from two tasks at once.
public final class StreamingImporter: @unchecked Sendable {
    /// The records imported so far.
    public private(set) var imported: [ExportRecord] = []
    /// The lines that were not records.
    public private(set) var skippedLines = 0

    public init() {}

    /// Imports every record at `url`, skipping lines that are not records; stops with
    /// `CancellationError` when the task is cancelled (the handler's expiration).
    public func importRecords(from url: URL, session: URLSession = .shared) async throws -> Int {
        var request = URLRequest(url: url)
        request.setValue("application/x-ndjson", forHTTPHeaderField: "Accept")
        let (bytes, response) = try await session.bytes(for: request)
        guard let http = response as? HTTPURLResponse, (200..<300).contains(http.statusCode) else {
            bytes.task.cancel()
            throw URLError(.badServerResponse)
        }
        return try await importLines(bytes.lines)
    }

    /// Imports what an earlier run cached in a file.
    public func importCache(at file: URL) async throws -> Int {
        try await importLines(file.lines)
    }

    private func importLines<Lines: AsyncSequence>(_ lines: Lines) async throws -> Int where Lines.Element == String {
        let decoder = JSONDecoder()
        var count = 0
        for try await line in lines {
            try Task.checkCancellation()
            guard let record = try? decoder.decode(ExportRecord.self, from: Data(line.utf8)) else {
                skippedLines += 1
                continue
            }
            imported.append(record)
            count += 1
        }
        return count
    }
}
