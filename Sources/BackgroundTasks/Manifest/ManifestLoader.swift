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
    ///   not a file URL, the file does not exist, is a directory, or cannot be read; any
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
        // Checked before reading because Foundation's errors for these cases are generic
        // ("The operation could not be completed"), and these are the two mistakes people
        // actually make: a wrong path, or the app's directory instead of its manifest.
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ManifestError(
                code: .unreadable, file: path,
                message: "expected a manifest file, found nothing: no such file or directory")
        }
        if isDirectory.boolValue {
            throw ManifestError(
                code: .unreadable, file: path,
                message: "expected a manifest file, found a directory")
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ManifestError(
                code: .unreadable, file: path,
                message: "expected a readable file, but reading failed: \(readFailure(error))")
        }
        return try parse(data, source: path)
    }

    /// The most specific reason Foundation gives: the POSIX error underneath ("Permission
    /// denied") says more than the Cocoa wrapper around it.
    private static func readFailure(_ error: any Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError {
            return underlying.localizedDescription
        }
        return nsError.localizedDescription
    }
}
