#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import BGTaskDaemon
import SchedulerCore

/// Recognising an app's process by its executable. The test process itself is a real peer:
/// `getpid()` runs the test bundle, `/proc/self/exe`. The "(deleted)" and mismatch cases use
/// a fake procfs tree. Nothing here changes the process's state.
@Suite("Executable identity")
struct ExecutableIdentityTests {
    /// The file this process executes, as the kernel names it.
    static func ownExecutable() throws -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        try #require(count > 0)
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func installed(_ app: String, executable: String) -> InstalledApp {
        InstalledApp(
            app: AppID(app), manifestPath: "/apps/\(app)/Info.plist", executable: executable,
            permittedIdentifiers: [], backgroundModes: [], installedAt: Date(timeIntervalSinceReferenceDate: 0))
    }

    /// A directory for one test, removed when released.
    final class Directory {
        let path = FileManager.default.temporaryDirectory.path + "/executable-identity-\(UUID().uuidString)"
        init() throws { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false) }
        deinit { try? FileManager.default.removeItem(atPath: path) }

        /// A regular file at `name`.
        @discardableResult
        func file(_ name: String) throws -> String {
            let file = path + "/" + name
            try Data("#!/bin/sh\n".utf8).write(to: URL(fileURLWithPath: file))
            return file
        }

        /// A fake `<procRoot>/<pid>/exe` link to `target`.
        func fakeProcess(_ pid: Int32, exe target: String) throws -> String {
            let root = path + "/proc"
            try FileManager.default.createDirectory(atPath: "\(root)/\(pid)", withIntermediateDirectories: true)
            #expect(symlink(target, "\(root)/\(pid)/exe") == 0)
            return root
        }
    }

    @Test func theTestProcessIsItsOwnExecutable() throws {
        let own = try Self.ownExecutable()
        let app = Self.installed("com.example.self", executable: own)
        #expect(try ExecutableIdentity.check(pid: getpid(), installed: app) == own)
    }

    @Test func anotherSpellingOfTheSamePathIsTheSameFile() throws {
        let own = try Self.ownExecutable()
        let directory = (own as NSString).deletingLastPathComponent
        let spelled = directory + "/./../" + (directory as NSString).lastPathComponent + "/" + (own as NSString).lastPathComponent
        try ExecutableIdentity.check(pid: getpid(), installed: Self.installed("com.example.self", executable: spelled))
    }

    @Test func anotherExecutableIsRefused() throws {
        let other = Self.installed("com.example.shell", executable: "/bin/sh")
        let error = try #require(throws: ExecutableIdentityError.self) { try ExecutableIdentity.check(pid: getpid(), installed: other) }
        #expect(error.code == .mismatch)
        #expect(error.pid == getpid())
        let own = try Self.ownExecutable()
        #expect(error.message == "process \(getpid()) runs \(own), which is not the executable of com.example.shell, /bin/sh")
    }

    @Test func aProcessThatDoesNotExistIsUnreadable() throws {
        let directory = try Directory()
        let app = Self.installed("com.example.app", executable: try directory.file("app"))
        let error = try #require(throws: ExecutableIdentityError.self) {
            try ExecutableIdentity.check(pid: 424_242, installed: app, procRoot: directory.path + "/empty-proc")
        }
        #expect(error.code == .unreadable)
        #expect(error.message.contains("process 424242"))
        #expect(error.message.contains("no such process"))
    }

    @Test func aDeletedExecutableIsRefusedWithThatReason() throws {
        let directory = try Directory()
        let executable = try directory.file("app")
        // The kernel's spelling for a file unlinked or replaced after the process started.
        let procRoot = try directory.fakeProcess(777, exe: executable + " (deleted)")
        let app = Self.installed("com.example.app", executable: executable)
        let error = try #require(throws: ExecutableIdentityError.self) { try ExecutableIdentity.check(pid: 777, installed: app, procRoot: procRoot) }
        #expect(error.code == .deleted)
        #expect(error.message == "process 777 runs \(executable), which was deleted or replaced since it started; expected the executable of com.example.app, \(executable) as installed")
        #expect(ExecutableIdentity.appOwning(pid: 777, among: [app], procRoot: procRoot) == nil)
    }

    @Test func inodesDecideNotPaths() throws {
        let directory = try Directory()
        let installedFile = try directory.file("app")
        let impostor = try directory.file("impostor")
        #expect(link(installedFile, directory.path + "/hardlink") == 0)
        let app = Self.installed("com.example.app", executable: installedFile)

        let viaImpostor = try directory.fakeProcess(10, exe: impostor)
        let error = try #require(throws: ExecutableIdentityError.self) { try ExecutableIdentity.check(pid: 10, installed: app, procRoot: viaImpostor) }
        #expect(error.code == .mismatch)
        #expect(error.message.contains("runs \(impostor), which is not the executable of com.example.app"))

        // Another name for the same inode is the same file.
        let viaHardLink = try directory.fakeProcess(11, exe: directory.path + "/hardlink")
        try ExecutableIdentity.check(pid: 11, installed: app, procRoot: viaHardLink)
    }

    @Test func aRemovedInstalledExecutableIsReported() throws {
        let directory = try Directory()
        let running = try directory.file("running")
        let procRoot = try directory.fakeProcess(12, exe: running)
        let app = Self.installed("com.example.app", executable: directory.path + "/gone")
        let error = try #require(throws: ExecutableIdentityError.self) { try ExecutableIdentity.check(pid: 12, installed: app, procRoot: procRoot) }
        #expect(error.code == .installedExecutableMissing)
        #expect(error.message.contains("\(directory.path)/gone cannot be examined"))
    }

    @Test func theAppOwningAProcessIsFoundByItsExecutable() throws {
        let own = try Self.ownExecutable()
        let shell = Self.installed("com.example.shell", executable: "/bin/sh")
        let me = Self.installed("com.example.self", executable: own)
        #expect(ExecutableIdentity.appOwning(pid: getpid(), among: [shell, me]) == me)
        #expect(ExecutableIdentity.appOwning(pid: getpid(), among: [shell]) == nil)
        #expect(ExecutableIdentity.appOwning(pid: getpid(), among: []) == nil)

        // Found by inode when no installed path is spelled as the kernel spells it.
        let directory = (own as NSString).deletingLastPathComponent
        let spelled = Self.installed("com.example.spelled", executable: directory + "/./" + (own as NSString).lastPathComponent)
        #expect(ExecutableIdentity.appOwning(pid: getpid(), among: [shell, spelled]) == spelled)
        #expect(ExecutableIdentity.appOwning(pid: 424_242, among: [me], procRoot: "/nonexistent-proc") == nil)
    }
}

/// Which manifest paths name bgtaskd's own process (`DaemonService.namesTheDaemonsOwnProcess`),
/// judged in this process as bgtaskd judges them in its own: its pid, `self`, a thread's id.
@Suite struct DaemonOwnProcessPathTests {
    /// A thread's id, written by the thread before it signals and read after the wait
    /// (`@unchecked`: the semaphore orders the two).
    final class ThreadID: @unchecked Sendable { var value: Int32 = 0 }

    @Test func theProcessItsThreadsAndItsDescriptorsAreItsOwn() throws {
        for path in ["/proc/self/environ", "/proc/thread-self/cmdline", "/proc/\(getpid())/environ", "/dev/fd/2", "/dev/stdin", "/proc//./self/../self/environ"] {
            #expect(DaemonService.namesTheDaemonsOwnProcess(path), "\(path)")
        }
        // A thread of this process, kept alive while judged: its id is not the pid.
        let started = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let tid = ThreadID()
        let thread = Thread {
            tid.value = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")).flatMap { Int32($0.split(separator: "/").last ?? "") } ?? 0
            started.signal()
            release.wait()
        }
        thread.start()
        started.wait()
        defer { release.signal() }
        #expect(tid.value != getpid())
        #expect(DaemonService.namesTheDaemonsOwnProcess("/proc/\(tid.value)/environ"))
        // Another process's, and ordinary files, are not.
        #expect(!DaemonService.namesTheDaemonsOwnProcess("/proc/1/environ") || getpid() == 1)
        for path in ["/etc/hostname", "/home/user/app.json", "/procedures/self/x", "/proc"] {
            #expect(!DaemonService.namesTheDaemonsOwnProcess(path), "\(path)")
        }
    }
}
