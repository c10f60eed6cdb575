#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// The parent of every suite that spawns processes, sends signals or changes the process
/// environment. Swift Testing runs tests in parallel in one process; these must not, so
/// they live in extensions of this serialized suite (for example
/// `extension ProcessTests { @Suite struct Durability { ... } }`).
@Suite(.serialized) struct ProcessTests {
    static let setpriv = "/usr/bin/setpriv"

    /// Runs the built `bgtask` with `arguments` and returns its exit status, standard output
    /// and standard error. With `unprivileged`, as uid 65534 through setpriv when this
    /// process is root: root may read and write any file whatever its mode, so what another
    /// user meets (a file it cannot read, a directory it cannot write) is only seen so.
    /// `environment` is the child's whole environment (`nil`: this process's).
    static func bgtask(
        _ arguments: [String], scratch: URL, unprivileged: Bool = false, environment: [String: String]? = nil
    ) async throws -> (status: Int32, output: String, error: String) {
        let bgtask = try ProductBinary.locate("bgtask")
        let child: ChildProcess
        if unprivileged, getuid() == 0 {
            child = try ChildProcess(
                URL(fileURLWithPath: setpriv), arguments: ["--reuid=65534", "--regid=65534", "--clear-groups", bgtask.path] + arguments,
                scratch: scratch, environment: environment)
        } else {
            child = try ChildProcess(bgtask, arguments: arguments, scratch: scratch, environment: environment)
        }
        let termination = await child.termination()
        await child.output.waitForEndOfFile()
        #expect(termination.reason == .exit, "\(termination)")
        return (termination.status, child.output.lines.map { $0 + "\n" }.joined(), child.standardError())
    }
}
