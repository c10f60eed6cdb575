#if canImport(Glibc)
import Glibc
#endif
import BackgroundTasks
import Foundation
import SchedulerStore
import Testing
import SchedulerCore

extension ProcessTests {
    /// `bgtask log` and `why` on a WAL store in a directory they cannot write (another
    /// user's state, a read-only mount), where SQLite cannot create the `-shm` file a reader
    /// needs. Really tested: the directory is mode 0555 and bgtask runs as uid 65534 through
    /// setpriv (as root, where the mode would not stop it), so SQLite meets the refusal
    /// itself; nothing is simulated.
    @Suite(.enabled(if: getuid() != 0 || FileManager.default.isExecutableFile(atPath: setpriv), "as root, writing as another user needs setpriv"))
    struct ReadOnlyStoreDirectory {
        static let app = AppID("com.example.feedreader")
        static let identifier = "com.example.feedreader.refresh"

        /// A store of the app with one finished run and a pending request, written in
        /// `directory`, the owner still open (its commits in the `-wal`) while `whileOpen` runs.
        func writeStore(in directory: URL, whileOpen: (URL) throws -> Void = { _ in }) throws {
            let url = directory.appendingPathComponent("scheduler.sqlite")
            let now = Date()
            let (store, _) = try SchedulerStore.open(at: url, now: now)
            let request = PendingRequest(app: Self.app, identifier: Self.identifier, kind: .appRefresh, submittedAt: now)
            let run = RunRecord(id: RunID(1), request: request, startedAt: now.addingTimeInterval(-60))
            try store.recordRunStarted(run)
            var ended = run
            ended.endedAt = now.addingTimeInterval(-55)
            ended.outcome = .success
            try store.recordRunFinished(ended)
            try store.upsertRequest(request)
            try whileOpen(url)
            store.close()
        }

        /// The child's whole environment: none of this process's (no BGTASK_POLICY of the
        /// developer's), a HOME of its own.
        func environment(_ scratch: ScratchDirectory) -> [String: String] {
            ["PATH": "/usr/bin:/bin", "HOME": scratch.url.path]
        }

        /// Makes `directory` and its files readable by everyone and the directory unwritable.
        func makeReadOnly(_ directory: URL) throws {
            for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
                try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: directory.appendingPathComponent(file).path)
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: directory.path)
        }

        /// Everything is in the database file (the owner closed it, its `-wal` is gone):
        /// read as unchanging, with nothing created beside it.
        @Test func aStoreWithoutCommitsInItsLogIsRead() async throws {
            let scratch = try ScratchDirectory()
            defer {
                try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: scratch.url.appendingPathComponent("state").path)
                scratch.remove()
            }
            let state = scratch.url.appendingPathComponent("state")
            try FileManager.default.createDirectory(at: state, withIntermediateDirectories: false)
            try writeStore(in: state)
            try makeReadOnly(state)
            #expect(!FileManager.default.fileExists(atPath: state.appendingPathComponent("scheduler.sqlite-wal").path))

            let log = try await ProcessTests.bgtask(["log", "--state", state.path, "--json"], scratch: scratch.url, unprivileged: true, environment: environment(scratch))
            #expect(log.status == 0, "\(log.error)")
            let document = try JSONSerialization.jsonObject(with: Data(log.output.utf8)) as? [String: Any]
            #expect((document?["runs"] as? [Any])?.count == 1, "\(log.output)")

            let why = try await ProcessTests.bgtask(["why", Self.app.rawValue, Self.identifier, "--state", state.path], scratch: scratch.url, unprivileged: true, environment: environment(scratch))
            #expect(why.status == 0, "\(why.error)")
            #expect(why.output.contains(Self.identifier), "\(why.output)")
            #expect(!FileManager.default.fileExists(atPath: state.appendingPathComponent("scheduler.sqlite-shm").path))
        }

        /// A store its owner has open is not read as unchanging even with an empty `-wal`
        /// (the owner may write, and a checkpoint would rewrite pages under a reader that
        /// takes no locks): refused, naming the owner.
        @Test func aStoreItsOwnerHasOpenIsNotReadAsUnchanging() async throws {
            let scratch = try ScratchDirectory()
            let state = scratch.url.appendingPathComponent("state")
            defer {
                try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: state.path)
                scratch.remove()
            }
            try FileManager.default.createDirectory(at: state, withIntermediateDirectories: false)
            try writeStore(in: state)
            let ownership = try StateDirectoryLock.acquire(in: state, name: SchedulerStore.lockFileName(for: state.appendingPathComponent("scheduler.sqlite")))
            try makeReadOnly(state)
            let log = try await ProcessTests.bgtask(["log", "--state", state.path], scratch: scratch.url, unprivileged: true, environment: environment(scratch))
            withExtendedLifetime(ownership) {}
            #expect(log.status == 1)
            #expect(log.error.contains("cannot be read while process \(getpid())"), "\(log.error)")
        }

        /// Commits only in the `-wal`, which cannot be read without a `-shm`: refused, naming
        /// the directory and saying it is not writable (it said "attempt to write a readonly
        /// database" or "unable to open database file", naming neither), never read without them.
        @Test func aStoreWithCommitsInItsLogNamesTheDirectory() async throws {
            let scratch = try ScratchDirectory()
            let state = scratch.url.appendingPathComponent("state")
            defer {
                try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: state.path)
                scratch.remove()
            }
            let source = scratch.url.appendingPathComponent("source")
            try FileManager.default.createDirectory(at: source, withIntermediateDirectories: false)
            try FileManager.default.createDirectory(at: state, withIntermediateDirectories: false)
            // A copy of the database and its -wal taken while the owner had them open: the
            // commits are in the -wal, as a store copied or mounted from a live system has them.
            try writeStore(in: source) { url in
                for suffix in ["", "-wal"] {
                    try FileManager.default.copyItem(atPath: url.path + suffix, toPath: state.appendingPathComponent("scheduler.sqlite" + suffix).path)
                }
            }
            let walSize = try #require(try FileManager.default.attributesOfItem(atPath: state.appendingPathComponent("scheduler.sqlite-wal").path)[.size] as? NSNumber)
            #expect(walSize.intValue > 0)
            try makeReadOnly(state)

            let log = try await ProcessTests.bgtask(["log", "--state", state.path], scratch: scratch.url, unprivileged: true, environment: environment(scratch))
            #expect(log.status == 1)
            #expect(log.error.contains("its directory \(state.path) is not writable"), "\(log.error)")
            #expect(log.error.contains("make \(state.path) writable"), "\(log.error)")
            let why = try await ProcessTests.bgtask(["why", Self.app.rawValue, Self.identifier, "--state", state.path], scratch: scratch.url, unprivileged: true, environment: environment(scratch))
            #expect(why.status == 1)
            #expect(why.error.contains("its directory \(state.path) is not writable"), "\(why.error)")
        }
    }
}
