// Test instrumentation, not iOS code: what the kernel says of this process's SIGTERM while
// the delegate's launch code runs (DaemonTests.AppDelegateApp, "a SIGTERM while the
// delegate's didFinishLaunching still runs"). By then UIApplicationMain must have blocked it
// in the main thread and libdispatch must have installed its handler (registered the
// source): otherwise a SIGTERM that comes now is dropped (SignalWatch).
import Foundation

enum SignalState {
    /// "caught=B blocked=B others=N": SIGTERM has a handler in the process; it is blocked in
    /// the calling thread; N other threads do not block it (one of them could take it before
    /// the handler exists). Reads /proc (Linux).
    static func describeTermination() -> String {
        let bit = UInt64(1) << UInt64(SIGTERM - 1)
        let caught = mask("SigCgt", in: "/proc/self/status").map { $0 & bit != 0 }
        let blocked = mask("SigBlk", in: "/proc/thread-self/status").map { $0 & bit != 0 }
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")).map { ($0 as NSString).lastPathComponent }
        let others = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? [])
            .filter { $0 != me }
            .filter { (mask("SigBlk", in: "/proc/self/task/\($0)/status") ?? 0) & bit == 0 }
        return "caught=\(caught.map(String.init) ?? "unknown") blocked=\(blocked.map(String.init) ?? "unknown") others=\(others.count)"
    }

    private static func mask(_ field: String, in path: String) -> UInt64? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return UInt64(line.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces), radix: 16)
        }
        return nil
    }
}
