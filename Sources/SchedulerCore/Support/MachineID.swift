import Foundation

/// This machine's identity (machine-id(5)), what the scheduler salts its herd-spreading
/// turns with and `UIDevice.identifierForVendor` is derived from: one reader for both.
public enum MachineID {
    /// Where systemd and D-Bus keep it, in the order they are read.
    public static let standardFiles = ["/etc/machine-id", "/var/lib/dbus/machine-id"]

    /// The first of `files` that reads as a non-empty id, trimmed; `nil` when none does (a
    /// container without one). Read with ``BoundedFile``: a FIFO in its place is never
    /// waited on, and the file is a 33-byte id.
    public static func read(from files: [String] = standardFiles) -> String? {
        for path in files {
            guard let bytes = try? BoundedFile.read(path: path, limit: 4096) else { continue }
            let machineID = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if !machineID.isEmpty { return machineID }
        }
        return nil
    }
}
