#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SchedulerCore

/// Ownership of scheduler state, as a fact the kernel checks: an exclusive `flock(2)` on a
/// lock file in the state directory, held for as long as this object lives.
///
/// docs/ARCHITECTURE.md ("One owner per state directory"): only the process holding the
/// lock recovers interrupted runs, launches, and enforces the pending limits; a run without
/// an end is "interrupted" only when nobody holds the lock, because the kernel releases it
/// when its holder dies, however it dies. The holder writes its process id into the file,
/// so a refused process can say who owns the state.
///
/// `flock` rather than `fcntl` record locks: an `flock` belongs to the open file description,
/// so two owners inside one process exclude each other too (an `fcntl` lock would be
/// granted again to the same process), and it does not interfere with SQLite's own `fcntl`
/// locks on the database. The descriptor is close-on-exec, so a child process never
/// inherits (and keeps alive) the lock of its parent. The lock file is never deleted:
/// unlinking a lock file lets a third process lock a new file while a second still holds
/// the old one.
///
/// The embedded scheduler's store takes one (`scheduler.sqlite.lock`) in
/// ``SchedulerStore/open(at:now:options:)``; a daemon owning several apps' state takes the
/// same kind of lock on its own state directory.
public final class StateDirectoryLock: Sendable {
    /// The lock file.
    public let url: URL
    /// The open, locked descriptor; closing it releases the lock.
    private let descriptor: Int32

    private init(url: URL, descriptor: Int32) {
        self.url = url
        self.descriptor = descriptor
    }

    deinit {
        // Forget the pid first, so a reader never names a process that no longer owns it;
        // closing the last descriptor of the open file releases the lock.
        _ = ftruncate(descriptor, 0)
        close(descriptor)
    }

    /// Takes the lock file `name` in `directory` (creating the file, mode 0600), waiting at
    /// most `waiting` seconds for another holder (a look by ``holder(in:name:)``, or a
    /// holder that keeps it only for an instant), and writes this process's id into it.
    ///
    /// - Throws: ``StoreError/Code/locked`` naming the holder's process id (from the file)
    ///   when another owner holds it, whether in another process or in this one;
    ///   ``StoreError/Code/cannotOpen`` when the file cannot be created or locked.
    /// `holding` says, for the message when another holds it, what its holder does with it.
    public static func acquire(
        in directory: URL, name: String, waiting: TimeInterval = 1,
        holding: String = "owns this scheduler state; a second owner would launch its requests twice and break the pending limits"
    ) throws(StoreError) -> StateDirectoryLock {
        let url = directory.appendingPathComponent(name)
        let path = url.path
        // O_NOFOLLOW and O_NONBLOCK: a symbolic link or a FIFO planted in its place is
        // refused, never followed or waited on.
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
        guard descriptor >= 0 else {
            // O_NOFOLLOW fails with ELOOP on a symbolic link: say what it is, not "too many levels".
            let reason = errno == ELOOP ? "it is a symbolic link, and a lock file must be a regular file; remove it" : String(cString: strerror(errno))
            throw StoreError(code: .cannotOpen, path: path, message: "cannot open the lock file \(path): \(reason)")
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw StoreError(code: .cannotOpen, path: path, message: "the lock file \(path) is not a regular file; remove what is there")
        }
        // ``holder(in:name:)`` tests the lock by taking a shared one for an instant: short
        // retries for up to a second keep such a look (`bgtask why`) from refusing the real
        // owner, even on a loaded machine. A real owner holds on for its whole life.
        let patience = waiting.isFinite ? min(max(waiting, 0), 60) : 1
        if let failure = ExclusiveFileLock.take(descriptor, patience: .milliseconds(Int((patience * 1000).rounded())), interval: .milliseconds(2)) {
            close(descriptor)
            if failure == EWOULDBLOCK {
                throw lockedError(path: path, holder: readHolder(path: path), holding: holding)
            }
            throw StoreError(
                code: .cannotOpen,
                path: path,
                message: "cannot lock \(path): \(String(cString: strerror(failure)))"
            )
        }
        let text = "\(getpid())\n"
        _ = ftruncate(descriptor, 0)
        _ = text.withCString { pwrite(descriptor, $0, strlen($0), 0) }
        return StateDirectoryLock(url: url, descriptor: descriptor)
    }

    /// The process holding the lock file `name` in `directory`, or `nil` when nobody holds
    /// it (no file, or a file nobody has locked). A holder that is still writing its id is
    /// reported as ``Holder/pid`` `nil`. Never takes the lock for more than the instant of
    /// the test, and never creates the file.
    public static func holder(in directory: URL, name: String) -> Holder? {
        let path = directory.appendingPathComponent(name).path
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        // A shared lock is granted unless someone holds the exclusive one.
        while flock(descriptor, LOCK_SH | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            return Holder(pid: readHolder(path: path))
        }
        _ = flock(descriptor, LOCK_UN)
        return nil
    }

    /// Who holds a lock.
    public struct Holder: Sendable, Equatable, CustomStringConvertible {
        /// The holder's process id, as it wrote it into the lock file (`nil` while unknown).
        public var pid: Int32?

        /// `process 1234 (this process)`, `process 1234`, or `another process (its id is not
        /// written yet)`.
        public var description: String {
            guard let pid else { return "another process (its id is not written yet)" }
            return pid == getpid() ? "process \(pid) (this process)" : "process \(pid)"
        }
    }

    private static func readHolder(path: String) -> Int32? {
        // Bounded and non-blocking: the file holds a pid and a newline.
        guard let bytes = try? BoundedFile.read(path: path, limit: 64) else { return nil }
        return Int32(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    private static func lockedError(path: String, holder: Int32?, holding: String) -> StoreError {
        let who = Holder(pid: holder).description
        var error = StoreError(
            code: .locked,
            path: path,
            message: "\(path) is held by \(who), which \(holding)"
        )
        error.holderPID = holder
        return error
    }
}
