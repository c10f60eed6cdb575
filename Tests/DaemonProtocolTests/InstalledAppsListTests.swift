#if canImport(Glibc)
import Glibc
#endif
import DaemonProtocol
import Foundation
import SchedulerCore
import Testing

/// The installed apps bgtaskd lists beside its socket, which an app reads when the daemon
/// does not answer its hello (docs/daemon.md, "The app side").
@Suite struct InstalledAppsListTests {
    @Test func aListNamesExactlyItsApps() throws {
        let directory = try TemporaryDirectory()
        let socket = directory.path + "/socket"
        try InstalledAppsList.write([AppID("com.example.b"), AppID("com.example.a")], socketPath: socket)
        #expect(InstalledAppsList.path(forSocket: socket) == socket + ".installed")
        #expect(try String(contentsOfFile: socket + ".installed", encoding: .utf8) == "com.example.a\ncom.example.b\n")
        #expect(InstalledAppsList.lists(AppID("com.example.a"), socketPath: socket) == true)
        #expect(InstalledAppsList.lists(AppID("com.example"), socketPath: socket) == false, "a prefix is another app")
        #expect(InstalledAppsList.lists(AppID("com.example.ab"), socketPath: socket) == false)
        var info = stat()
        #expect(stat(socket + ".installed", &info) == 0 && info.st_mode & 0o777 == 0o600)
        // Rewritten whole: an uninstalled app is gone, an empty list lists nothing.
        try InstalledAppsList.write([AppID("com.example.b")], socketPath: socket)
        #expect(InstalledAppsList.lists(AppID("com.example.a"), socketPath: socket) == false)
        try InstalledAppsList.write([], socketPath: socket)
        #expect(InstalledAppsList.lists(AppID("com.example.b"), socketPath: socket) == false)
    }

    @Test func noListOrOneThatCannotBeReadTellsNothing() throws {
        let directory = try TemporaryDirectory()
        let socket = directory.path + "/socket"
        #expect(InstalledAppsList.lists(AppID("com.example.a"), socketPath: socket) == nil, "no daemon has listed anything")
        // A FIFO planted in its place is not opened (its open would wait for a writer).
        #expect(mkfifo(socket + ".installed", 0o600) == 0)
        #expect(InstalledAppsList.lists(AppID("com.example.a"), socketPath: socket) == nil)
        unlink(socket + ".installed")
        #expect(mkdir(socket + ".installed", 0o700) == 0)
        #expect(InstalledAppsList.lists(AppID("com.example.a"), socketPath: socket) == nil)
        rmdir(socket + ".installed")
        // A symbolic link, even to a list of this user's that names the app, is not read: in
        // a directory someone else could make, anyone could plant it.
        let elsewhere = directory.path + "/elsewhere"
        try InstalledAppsList.write([AppID("com.example.a")], socketPath: elsewhere)
        #expect(symlink(elsewhere + ".installed", socket + ".installed") == 0)
        #expect(InstalledAppsList.lists(AppID("com.example.a"), socketPath: elsewhere) == true)
        #expect(InstalledAppsList.lists(AppID("com.example.a"), socketPath: socket) == nil)
        unlink(socket + ".installed")
        // Another user's list speaks for nobody here (a shared directory such as /tmp).
        try InstalledAppsList.write([AppID("com.example.a")], socketPath: socket)
        #expect(InstalledAppsList.lists(AppID("com.example.a"), socketPath: socket, uid: getuid() &+ 1) == nil)
    }
}
