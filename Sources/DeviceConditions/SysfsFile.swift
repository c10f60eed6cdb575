#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SchedulerCore

/// A value read from the device together with where it came from: the file or service, or
/// `"unknown: <why>"` when the value is a documented default because nothing sound could be
/// read.
public struct SourcedValue<Value: Hashable & Sendable>: Hashable, Sendable {
    /// The value (a reading, or the documented default when ``source`` starts with `unknown:`).
    public var value: Value
    /// Which file or service the value came from, or `"unknown: <why>"`.
    public var source: String

    /// Pairs a value with its source.
    public init(_ value: Value, source: String) {
        self.value = value
        self.source = source
    }

    /// Whether the value is a default rather than a reading.
    public var isUnknown: Bool { source.hasPrefix(SysfsFile.unknownPrefix) }
}

/// The outcome of reading one small pseudo-file.
enum FileContents: Hashable, Sendable {
    /// The file's text with surrounding whitespace removed.
    case text(String)
    /// No such file (or no such directory on the way).
    case missing
    /// The file exists but could not be read; the text says why (`Permission denied`,
    /// `No data available`: sysfs attributes fail on read when the device cannot answer).
    case unreadable(String)

    /// The text, when there is one.
    var text: String? {
        if case .text(let text) = self { return text }
        return nil
    }
}

/// Reading sysfs, procfs and state files the way the readers need: distinguishing a file
/// that is missing from one that fails on read, never trusting more than a bounded amount
/// of data, and describing bad values for the `unknown:` sources.
enum SysfsFile {
    /// What every source that is a default rather than a reading starts with.
    static let unknownPrefix = "unknown: "

    /// The largest table read (`/proc/net/route`, `/proc/net/ipv6_route`,
    /// `/proc/net/if_inet6`, `/proc/cpuinfo`). A full Internet routing table in
    /// `/proc/net/route` is a few tens of MiB, far more than any device this scheduler runs
    /// on keeps, so the cap guards memory without losing real tables.
    static let maximumSize = 32 << 20
    /// The largest single value or small state file read: sysfs attributes are at most a
    /// page (4 KiB); logind session files and the idle override are a few hundred bytes.
    static let valueLimit = 64 << 10

    /// Reads `url` through ``BoundedFile`` (never blocking on a FIFO, refusing what is not
    /// a regular file, at most `limit` bytes), trimmed of surrounding whitespace. Missing
    /// and unreadable are told apart, unlike `FileManager`.
    static func contents(of url: URL, limit: Int = valueLimit) -> FileContents {
        let data: [UInt8]
        do {
            data = try BoundedFile.read(path: url.path, limit: limit)
        } catch {
            switch error.problem {
            // A link that leads nowhere is an attribute that is not there.
            case .missing, .danglingSymbolicLink: return .missing
            case .symbolicLinkLoop: return .unreadable("a symbolic link loop")
            case .notRegularFile(let what): return .unreadable("it is \(what), not a regular file")
            case .tooLarge(let limit, _): return .unreadable("larger than \(BoundedFile.describe(bytes: limit))")
            case .failed(let why), .unreachable(let why): return .unreadable(why)
            }
        }
        return .text(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The names in `directory`, sorted so that readings and their sources are stable;
    /// empty when the directory is missing or unreadable.
    static func entries(_ directory: URL) -> [String] {
        listing(directory).names
    }

    /// The names in `directory`, sorted, and why it could not be listed when it is there but
    /// cannot be (a link loop, not a directory, no permission); a missing directory is no
    /// problem (no entries).
    static func listing(_ directory: URL) -> (names: [String], problem: String?) {
        do {
            return (try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted(), nil)
        } catch {
            // What is at the path, in the words every reader of outside files here uses.
            switch BoundedFile.lookupProblem(at: directory.path) {
            case .missing?:
                return ([], nil)
            case let problem?:
                return ([], "\(directory.path) cannot be listed: it is \(problem.found)")
            case nil:
                let reason = (error as NSError).localizedDescription
                return ([], "\(directory.path) cannot be listed (\(reason.isEmpty ? "\(error)" : reason))")
            }
        }
    }

    /// Whether `url` is an existing directory.
    static func isDirectory(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// `value` quoted for a message, shortened so a garbage file cannot flood the output.
    static func quoted(_ value: String) -> String {
        let shown = value.excerpt(scalars: 40)
        return "\"" + shown.replacingOccurrences(of: "\n", with: "\\n") + "\""
    }

    /// Why a file gave no usable text: missing, unreadable or empty; `nil` when it has text.
    static func problem(_ contents: FileContents, _ url: URL) -> String? {
        switch contents {
        case .missing: return "\(url.path) is missing"
        case .unreadable(let why): return "\(url.path) cannot be read (\(why))"
        case .text(let text): return text.isEmpty ? "\(url.path) is empty" : nil
        }
    }

    /// An `unknown:` source with its reason.
    static func unknown(_ why: String) -> String { unknownPrefix + why }

    /// Reads `key=value` lines (INI files and logind's environment-style files): the value
    /// of the first `key` in `section` (any section when `nil`), unquoted.
    static func keyValue(_ text: String, key: String, section: String? = nil) -> String? {
        var current: String?
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                current = String(line.dropFirst().dropLast())
                continue
            }
            if let section, current != section { continue }
            guard let equals = line.firstIndex(of: "=") else { continue }
            guard line[..<equals].trimmingCharacters(in: .whitespaces) == key else { continue }
            var value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            return value
        }
        return nil
    }
}
