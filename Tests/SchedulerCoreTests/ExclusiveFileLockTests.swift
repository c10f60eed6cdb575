#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SchedulerCore
import Testing

/// Two opens of one lock file contend as two processes would (`flock` locks belong to the
/// open file): the second waits its patience and is told the file is held, then takes it
/// once the first lets go.
@Suite struct ExclusiveFileLockTests {
    @Test func aHeldLockIsWaitedForThenRefusedAndTakenOnceReleased() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("exclusive-\(UUID().uuidString).lock").path
        defer { unlink(path) }
        let first = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        let second = open(path, O_RDWR | O_CLOEXEC)
        try #require(first >= 0 && second >= 0)
        defer { close(second) }
        #expect(ExclusiveFileLock.take(first, patience: .zero, interval: .milliseconds(1)) == nil)
        let began = ContinuousClock.now
        #expect(ExclusiveFileLock.take(second, patience: .milliseconds(50), interval: .milliseconds(5)) == EWOULDBLOCK)
        #expect(ContinuousClock.now - began >= .milliseconds(50), "it waited its patience before refusing")
        close(first)
        #expect(ExclusiveFileLock.take(second, patience: .zero, interval: .milliseconds(1)) == nil)
        #expect(ExclusiveFileLock.take(-1, patience: .seconds(5), interval: .milliseconds(1)) == EBADF, "another failure at once")
    }
}
