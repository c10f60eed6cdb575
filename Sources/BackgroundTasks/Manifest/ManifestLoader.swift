import Foundation
import SchedulerCore

extension AppManifest {
    /// Reads and parses the manifest at `url` (XML or binary property list, or JSON).
    ///
    /// This is the only place that reads manifest files: SchedulerCore stays pure and parses
    /// bytes with ``AppManifest/parse(_:source:)``, which this calls with the file's path as
    /// the source so every error names the file.
    ///
    /// - Throws: ``ManifestError`` with code `.unreadable` naming the path when the URL is
    ///   not a file URL, the file does not exist, is not a regular file (a directory, a FIFO,
    ///   a device: said so), is a symbolic link loop, is larger than
    ///   ``AppManifest/maximumSize``, or cannot be read; any
    ///   error of ``AppManifest/parse(_:source:)`` otherwise.
    public static func load(contentsOf url: URL) throws(ManifestError) -> AppManifest {
        guard url.isFileURL else {
            throw ManifestError(
                code: .unreadable, file: url.absoluteString,
                message: "expected a file URL, found a \(url.scheme ?? "schemeless") URL")
        }
        // `path`, not `path(percentEncoded:)`: it drops the trailing slash Foundation adds to
        // directory URLs, so the error names the path as the user typed it.
        let path = url.path
        // BoundedFile says what was found instead of a file (a directory, a FIFO, whose open
        // would block, a device, a symbolic link loop), never blocks, and stops at the size
        // limit: Foundation's errors for these are generic or wrong ("You don't have
        // permission" for a FIFO, even as root).
        let data: Data
        do {
            data = Data(try BoundedFile.read(path: path, limit: AppManifest.maximumSize))
        } catch {
            if case .tooLarge(_, let size) = error.problem {
                throw ManifestError(
                    code: .unreadable, file: path,
                    message: "expected a manifest of at most \(BoundedFile.describe(bytes: AppManifest.maximumSize)), found \(size.map { "a file of \($0) bytes" } ?? "a larger file")")
            }
            throw ManifestError(code: .unreadable, file: path, message: "expected a manifest file, found \(error.problem.found)")
        }
        return try parse(data, source: path)
    }
}
