#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// What every child process of the process tests (the durability, ownership and replica
/// probes) says and how it fails: standard output written with bare `write(2)`, unbuffered,
/// so that a line is in the pipe once the call returns, whatever happens to the process
/// next (the tests kill probes with SIGKILL and trust every line they read).
public struct Probe: Sendable {
    /// The program's name, which starts its messages on standard error.
    public let name: String

    public init(name: String) {
        self.name = name
    }

    /// Writes `text` and a newline to standard output (see ``write(_:)``).
    public func say(_ text: String) {
        write(text + "\n")
    }

    /// Writes all of `text` to standard output, unbuffered; exits 1, saying why, when
    /// standard output cannot be written.
    public func write(_ text: String) {
        let bytes = Array(text.utf8)
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(1, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    fail("cannot write to standard output: \(String(cString: strerror(errno)))", status: 1)
                }
                offset += written
            }
        }
    }

    /// Writes `message` to standard error, named, and exits with `status`.
    public func fail(_ message: String, status: Int32) -> Never {
        FileHandle.standardError.write(Data("\(name): \(message)\n".utf8))
        exit(status)
    }
}
