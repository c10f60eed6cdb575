#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Waiting for an exclusive `flock(2)` on an open lock file, shared by the lock files that
/// take turns: the state directory's owner (`StateDirectoryLock`) and two servers binding
/// one socket path (`FrameServer`'s binding lock).
///
/// A blocking `flock` could wait for ever on a holder that hangs; this tries without
/// blocking and polls until `patience` has passed, so a caller names the holder instead.
public enum ExclusiveFileLock {
    /// Takes the exclusive lock of `descriptor`, trying every `interval` for at most
    /// `patience`: `nil` once held, else the errno of the last try (`EWOULDBLOCK` when
    /// another held it all along). An interrupted try is tried again at once.
    public static func take(_ descriptor: Int32, patience: Duration, interval: Duration) -> Int32? {
        let deadline = ContinuousClock.now + patience
        let pause = max(0, interval.components.seconds * 1_000_000 + interval.components.attoseconds / 1_000_000_000_000)
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let failure = errno
            if failure == EINTR { continue }
            guard failure == EWOULDBLOCK, ContinuousClock.now < deadline else { return failure }
            usleep(useconds_t(clamping: pause))
        }
        return nil
    }
}
