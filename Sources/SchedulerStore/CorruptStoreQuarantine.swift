import Foundation

/// Moves a damaged database out of the way so a fresh one can take its place, keeping the
/// old bytes for inspection instead of deleting them.
public enum CorruptStoreQuarantine {
    /// The files SQLite keeps beside a database. They must move with it: a `-wal` or
    /// `-journal` left at the original name would be replayed into the fresh database.
    static let companionSuffixes = ["-wal", "-shm", "-journal"]

    /// Moves `path` to `<path>.corrupt-<yyyyMMdd-HHmmss>` (UTC, from `now`; `-1`, `-2`... is
    /// appended if that name is taken) and each companion file to the new name plus its
    /// suffix, the names SQLite expects, so the moved set still opens together.
    ///
    /// - Returns: The new path of the database file.
    /// `companionsFound`: the companion suffixes that were beside the file before this
    /// process opened it (`nil`: all are the file's); the others SQLite made when the opening
    /// examined it (an empty `-wal`, a `-shm` index) belong neither to the file set aside nor to
    /// the fresh store made in its place, and are removed when they hold nothing of it: a
    /// `-shm` (an index SQLite rebuilds), an empty `-wal` or `-journal`. One that holds bytes
    /// moves with the file, as a companion that was there does.
    static func moveAside(path: String, now: Date, as label: String = "corrupt", because reason: String = "is damaged", companionsFound: Set<String>? = nil) throws(StoreError) -> String {
        let fileManager = FileManager.default
        let base = "\(path).\(label)-\(timestamp(now))"
        var destination = base
        var attempt = 0
        while ([""] + companionSuffixes).contains(where: { fileManager.fileExists(atPath: destination + $0) }) {
            attempt += 1
            destination = "\(base)-\(attempt)"
        }
        do {
            try fileManager.moveItem(atPath: path, toPath: destination)
            for suffix in companionSuffixes where fileManager.fileExists(atPath: path + suffix) {
                if let companionsFound, !companionsFound.contains(suffix), suffix == "-shm" || Self.isEmpty(path + suffix) {
                    try? fileManager.removeItem(atPath: path + suffix)
                } else {
                    try fileManager.moveItem(atPath: path + suffix, toPath: destination + suffix)
                }
            }
        } catch {
            throw StoreError(
                code: .cannotOpen,
                path: path,
                message: "the scheduler store at \(path) \(reason) and could not be moved aside "
                    + "to \(destination): \(error)"
            )
        }
        return destination
    }

    /// Whether the file at `path` holds no byte (`false` when it cannot be looked at).
    private static func isEmpty(_ path: String) -> Bool {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue == 0
    }

    /// The damaged stores set aside beside the store at `path` (`<path>.corrupt-...`, and
    /// `<path>.no-schema-...`, a store copied without its `-wal`; not their companion
    /// files), oldest first, as full paths: what `bgtask status`, `log` and `energy` name,
    /// so a store started afresh does not look like one that lost its apps for no reason.
    /// Empty when there are none or the directory cannot be listed.
    public static func setAside(besides path: String) -> [String] {
        let directory = (path as NSString).deletingLastPathComponent
        let base = (path as NSString).lastPathComponent
        let prefixes = [base + ".corrupt-", base + ".no-schema-"]
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        // Oldest first by the time in the name, whichever the kind.
        let stamped = names.compactMap { name -> (stamp: Substring, name: String)? in
            guard !companionSuffixes.contains(where: { name.hasSuffix($0) }),
                  let prefix = prefixes.first(where: { name.hasPrefix($0) }) else { return nil }
            return (name.dropFirst(prefix.count), name)
        }
        return stamped.sorted { ($0.stamp, $0.name) < ($1.stamp, $1.name) }
            .map { (directory as NSString).appendingPathComponent($0.name) }
    }

    /// The line of standard error for the damaged store set aside at `setAsidePath`, saying
    /// `consequence` of it ("its runs that could not be read back are not shown"): the one wording `log`, `energy`,
    /// `apps` and `pending` use.
    public static func setAsideWarning(at setAsidePath: String, consequence: String) -> String {
        "warning: a damaged store was set aside at \(setAsidePath): \(consequence) (docs/daemon.md, \"A damaged store\")\n"
    }

    /// `yyyyMMdd-HHmmss` in UTC: the same instant gives the same name on every machine.
    static func timestamp(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func padded(_ value: Int?, _ width: Int) -> String {
            let digits = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return padded(parts.year, 4) + padded(parts.month, 2) + padded(parts.day, 2) + "-"
            + padded(parts.hour, 2) + padded(parts.minute, 2) + padded(parts.second, 2)
    }
}
