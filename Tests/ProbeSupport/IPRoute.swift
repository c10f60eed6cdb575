import Foundation

/// iproute2's `ip`, for tests that change the machine's links and routes (rtnetlink's
/// announcements, the path monitor's).
public enum IPRoute {
    /// The `ip` program, or `nil` when iproute2 is not installed.
    public static func find() -> String? {
        ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs `ip` with `arguments` and returns its status and standard error, without
    /// blocking a thread.
    public static func run(_ ip: String, _ arguments: [String]) async throws -> (status: Int32, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ip)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (status, text.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
