#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// Writing to standard output and standard error without ever trapping.
///
/// `FileHandle.write(_:)` traps (a `try!` inside Foundation) when the write fails: a daemon
/// whose stderr reader went away (EPIPE) or whose log disk is full (ENOSPC) would die at its
/// next log line. These write with write(2), retrying interrupted and partial writes, with
/// SIGPIPE blocked, and report failure instead.
public enum StandardStream {
    /// Writes `text` to standard error; whether all of it was written. A failure is
    /// dropped: there is nowhere left to report it.
    @discardableResult
    public static func writeError(_ text: String) -> Bool { write(text, to: STDERR_FILENO) == nil }

    /// Writes `text` to standard output: `nil` when all of it was written, else the errno
    /// (a CLI exits 1 naming it, rather than claim success for output that went nowhere).
    public static func writeOutput(_ text: String) -> Int32? { write(text, to: STDOUT_FILENO) }

    /// `text` with every control character but line feed and tab written as `\u001B`, and
    /// so are the bidirectional controls (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066
    /// to U+2069) and the line and paragraph separators (U+2028, U+2029): text that comes
    /// from elsewhere (bgtaskd's replies, a run's stop reason an app gave, a file or
    /// argument named in an error) is shown, never obeyed, when it reaches a terminal or a
    /// log viewed in one (an escape sequence could clear the screen, retitle the window or
    /// hide what came before; a right-to-left override could make `evil.json` read as
    /// `nosj.live` and turn the rest of a message around).
    public static func terminalSafe(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            if isUnsafe(scalar) {
                result += "\\u" + StrictJSON.codePoint(scalar).dropFirst(2)
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Opens `/dev/null` on each of the standard descriptors (0, 1, 2) that is closed, and
    /// returns those that were. A program started with one closed (`cmd >&-`) would
    /// otherwise get it back from its next `open` or `socket`, and write its output into a
    /// connection or a database. Call first thing in `main`.
    public static func reopenClosedStandardDescriptors() -> Set<Int32> {
        var closed: Set<Int32> = []
        for descriptor: Int32 in 0...2 where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            // The lowest free descriptor: this one, since those below it are open.
            let opened = open("/dev/null", O_RDWR | O_NOCTTY)
            if opened == descriptor {
                closed.insert(descriptor)
            } else if opened >= 0 {
                close(opened)
            }
        }
        return closed
    }

    /// ``terminalSafe(_:)`` for a message that is one line (an error): a line feed in it
    /// (from a value the user gave, `'nosuch\nbgtask: done'`) is written as `\n` too, so no
    /// value can forge a line of its own.
    public static func oneLine(_ text: String) -> String {
        terminalSafe(text).replacingOccurrences(of: "\n", with: "\\n")
    }

    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: return false
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0x2028, 0x2029: return true
        default: return scalar.properties.generalCategory == .control
        }
    }

    /// Writes all of `text` to `descriptor`: `nil`, or the errno of the first real failure
    /// (`EIO` for a write that took nothing).
    ///
    /// One write at a time in the process: a line longer than a pipe takes whole (4 KiB) is
    /// written in several pieces, and two threads' lines must not interleave. A reader that
    /// went away is `EPIPE`, never the process's death: SIGPIPE is blocked in this thread for
    /// the write and the one the write raised is taken back, so an app whose standard error
    /// is a pipe nobody reads any more (a log collector that ended, `| head`) goes on running
    /// (on iOS, logging never writes to the app's standard error).
    public static func write(_ text: String, to descriptor: Int32) -> Int32? {
        var bytes = Array(text.utf8)
        return oneAtATime(on: descriptor) {
            withSIGPIPEBlocked {
                bytes.withUnsafeMutableBytes { buffer -> Int32? in
                    var offset = 0
                    while offset < buffer.count {
                        let count = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                        if count > 0 {
                            offset += count
                        } else if count < 0, errno == EINTR {
                            continue
                        } else {
                            return count < 0 ? errno : EIO
                        }
                    }
                    return nil
                }
            }
        }
    }

    /// `body` under the lock of `descriptor`'s writes: one write at a time per descriptor
    /// (standard output, standard error, any other), so a standard output nobody reads does
    /// not hold up the lines for standard error.
    private static func oneAtATime<Result>(on descriptor: Int32, _ body: () -> Result) -> Result {
        switch descriptor {
        case STDOUT_FILENO: writingOutput.withLock { _ in body() }
        case STDERR_FILENO: writingError.withLock { _ in body() }
        default: writingOther.withLock { _ in body() }
        }
    }

    /// Held for each write to standard output.
    private static let writingOutput = Mutex(())
    /// Held for each write to standard error.
    private static let writingError = Mutex(())
    /// Held for each write to any other descriptor.
    private static let writingOther = Mutex(())

    /// `body`'s errno with SIGPIPE blocked in this thread; a SIGPIPE the body raised (an
    /// `EPIPE`) is consumed, unless the thread had SIGPIPE blocked already (whoever blocked
    /// it takes its own signals).
    private static func withSIGPIPEBlocked(_ body: () -> Int32?) -> Int32? {
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
        let failure = body()
        if failure == EPIPE, sigismember(&previous, SIGPIPE) == 0 {
            // The write's SIGPIPE is directed at this thread, where it is blocked: take it
            // (the kernel hands the thread's own pending signal first; a blocked signal is
            // kept pending even when its action is to ignore it; the wait returns at once).
            var now = timespec(tv_sec: 0, tv_nsec: 0)
            while sigtimedwait(&pipeSignal, nil, &now) < 0, errno == EINTR {}
        }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        return failure
    }
}
