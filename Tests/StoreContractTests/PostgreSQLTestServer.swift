#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import PostgreSQLStore
import SchedulerStore
import Synchronization
import Testing

/// The parent of every suite here that uses a PostgreSQL server: starting one spawns
/// `initdb` and `pg_ctl`, and a test stops and restarts a server of its own, so these suites
/// run one test at a time rather than beside each other (as DaemonTests' `DaemonProcessTests`).
@Suite(.serialized) struct PostgreSQLServerTests {}

/// Why a test server could not be started, with what its tools said.
struct TestServerError: Error, CustomStringConvertible {
    var description: String
}

/// A throwaway PostgreSQL server: a cluster in a temporary directory, listening only on a
/// Unix socket in that directory (`listen_addresses=''`), run as the `postgres` user when the
/// tests run as root (PostgreSQL refuses to run as root), as the test's own user otherwise.
///
/// One server serves the whole test run (``shared``) and each test gets a fresh database of
/// its own on it (``createDatabase(owner:)``): starting a server costs a second or two, a
/// database a few milliseconds, and a database is as independent as a server for what the
/// tests check. The one test that stops and restarts a server starts its own
/// (``start(name:)``).
///
/// Clean-up does not depend on the test process ending well: a watchdog process (a shell
/// blocked reading a pipe whose only writer is this process, kept out of every other child
/// by close-on-exec) stops every server (`pg_ctl stop -m immediate`) and removes the
/// directory when the pipe closes, which the kernel does however this process ends, SIGKILL
/// included.
final class TestPostgreSQLServer: Sendable {
    /// The socket directory (the `host` of the addresses).
    let socketDirectory: String
    let dataDirectory: String
    /// The database administrator (`postgres`: the cluster's superuser, trusted on the socket).
    static let superuser = "postgres"
    /// A role that must give its password (SCRAM), for the credential tests.
    static let passwordRole = "bgtask_password"
    static let password = "Correct-Horse-Battery-9"

    /// An administrator's connection to the `postgres` database, for CREATE DATABASE. Behind
    /// a mutex: libpq connections are for one thread at a time.
    private let admin: Mutex<PostgreSQLConnection?>
    private let databaseCounter = Mutex(0)

    private init(socketDirectory: String, dataDirectory: String) {
        self.socketDirectory = socketDirectory
        self.dataDirectory = dataDirectory
        self.admin = Mutex(nil)
    }

    /// The server of the test run, started by the first test that asks.
    static func shared() throws -> TestPostgreSQLServer {
        try sharedServer.withLock { (server) throws -> TestPostgreSQLServer in
            if let server { return try server.get() }
            let started = Result { () throws -> TestPostgreSQLServer in try TestCluster.shared().startServer(name: "shared") }
            server = started
            return try started.get()
        }
    }

    private static let sharedServer = Mutex<Result<TestPostgreSQLServer, any Error>?>(nil)

    /// A server of its own for a test that stops it (the shared one must keep running).
    static func start(name: String) throws -> TestPostgreSQLServer {
        try TestCluster.shared().startServer(name: name)
    }

    fileprivate static func started(socketDirectory: String, dataDirectory: String) throws -> TestPostgreSQLServer {
        let server = TestPostgreSQLServer(socketDirectory: socketDirectory, dataDirectory: dataDirectory)
        try server.start()
        try server.administer("CREATE ROLE \(passwordRole) LOGIN PASSWORD '\(password)'")
        return server
    }

    /// The key/value address of `database` as `user` on this server.
    func address(database: String, user: String = superuser) -> String {
        "host=\(socketDirectory) port=5432 dbname=\(database) user=\(user)"
    }

    /// Creates an empty database (owned by `owner`, so that it may create the store's tables)
    /// and returns its name.
    func createDatabase(owner: String = superuser) throws -> String {
        let name = databaseCounter.withLock { counter in
            counter += 1
            return "bgtask_test_\(counter)"
        }
        // FILE_COPY: a copy of the template's files, faster than WAL_LOG for a tiny one. A
        // linguistic collation (ICU's root locale), as production databases have, so that
        // the store's own `COLLATE "C"` is what orders its names (the cluster's is C).
        try administer("CREATE DATABASE \(name) OWNER \(owner) TEMPLATE template0 STRATEGY = FILE_COPY LOCALE_PROVIDER icu ICU_LOCALE 'und' LOCALE 'C'")
        return name
    }

    /// Runs `sql` (a constant of the tests) as the superuser on the `postgres` database.
    func administer(_ sql: String) throws {
        try admin.withLock { (connection) throws in
            if connection == nil {
                connection = try PostgreSQLConnection.connect(
                    to: PostgreSQLAddress.parse(address(database: "postgres")), applicationName: "bgtask tests"
                )
            }
            try connection!.execute(sql)
        }
    }

    /// Runs `sql` as the superuser on `database` (a connection of its own, closed after).
    func administer(_ sql: String, in database: String) throws {
        let connection = try PostgreSQLConnection.connect(to: PostgreSQLAddress.parse(address(database: database)), applicationName: "bgtask tests")
        try connection.executeScript(sql)
    }

    /// The rows `sql` returns on `database` (as the superuser), as text (NULL as `nil`).
    func query(_ sql: String, in database: String) throws -> [[String?]] {
        let connection = try PostgreSQLConnection.connect(to: PostgreSQLAddress.parse(address(database: database)), applicationName: "bgtask tests")
        let result = try connection.execute(sql)
        var rows: [[String?]] = []
        for index in 0..<result.rowCount {
            let row = result.row(index)
            rows.append((0..<Int32(result.columnCount)).map { row.optionalText($0) })
        }
        return rows
    }

    /// Starts the server and waits until it accepts connections (`pg_ctl start -w` polls
    /// for that itself).
    func start() throws {
        try TestCluster.run(TestCluster.binary("pg_ctl"), [
            "-D", dataDirectory, "-l", "\(dataDirectory)/../server.log", "-w", "-t", "60", "-s",
            "-o", "-c listen_addresses='' -c unix_socket_directories='\(socketDirectory)' -c fsync=off -c full_page_writes=off",
            "start",
        ])
    }

    /// Stops the server at once (`pg_ctl stop -m immediate`: what a crash or a kill looks
    /// like to its clients), waiting until it is gone.
    func stop() throws {
        admin.withLock { $0 = nil }
        try TestCluster.run(TestCluster.binary("pg_ctl"), ["-D", dataDirectory, "-m", "immediate", "-w", "-s", "stop"])
    }

    /// Stops the server and removes its directory (the watchdog does it at the end anyway).
    func remove() {
        try? stop()
        try? FileManager.default.removeItem(atPath: socketDirectory)
    }
}

/// The temporary directory of the run's servers: a cluster made once with `initdb` (a
/// template, never started), copied for each server, and the watchdog that cleans up.
private final class TestCluster: Sendable {
    let root: String
    let template: String

    private static let instance = Mutex<Result<TestCluster, any Error>?>(nil)

    static func shared() throws -> TestCluster {
        try instance.withLock { (cluster) throws -> TestCluster in
            if let cluster { return try cluster.get() }
            let made = Result { () throws -> TestCluster in try TestCluster() }
            cluster = made
            return try made.get()
        }
    }

    /// The directory of PostgreSQL's server programs: Debian's, the newest version there.
    static let binaries: String? = {
        let base = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []
        return versions.compactMap(Int.init).sorted().last.map { "\(base)/\($0)/bin" }
    }()

    static func binary(_ name: String) throws -> String {
        guard let binaries, FileManager.default.isExecutableFile(atPath: "\(binaries)/\(name)") else {
            throw TestServerError(description: "PostgreSQL's \(name) is not in /usr/lib/postgresql/<version>/bin: install Debian's postgresql package (.ci/run does)")
        }
        return "\(binaries)/\(name)"
    }

    /// The server user's ids when the tests run as root (PostgreSQL refuses root), else `nil`.
    static let serverUser: (uid: uid_t, gid: gid_t)? = {
        guard getuid() == 0 else { return nil }
        guard let entry = getpwnam(TestPostgreSQLServer.superuser) else { return nil }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }()

    private init() throws {
        var template = Array("/tmp/bgtask-pg-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw TestServerError(description: "mkdtemp failed: errno \(errno)") }
        root = String(cString: made)
        self.template = "\(root)/template"
        if getuid() == 0 {
            guard let user = Self.serverUser else {
                throw TestServerError(description: "the tests run as root and there is no postgres user to run the server as: install Debian's postgresql package")
            }
            guard chown(root, user.uid, user.gid) == 0 else { throw TestServerError(description: "cannot give \(root) to postgres: errno \(errno)") }
        }
        try startWatchdog()
        try Self.run(Self.binary("initdb"), [
            "-D", self.template, "-U", TestPostgreSQLServer.superuser, "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync",
        ])
        // The password role must prove who it is; everyone else is trusted on the socket,
        // which only this machine's users can reach (and the directory only root and postgres).
        let hba = "local all \(TestPostgreSQLServer.passwordRole) scram-sha-256\nlocal all all trust\n"
        try Self.run("/bin/sh", ["-c", "printf '%s' \"$1\" > \"$2\"", "sh", hba, "\(self.template)/pg_hba.conf"])
    }

    /// A server from a copy of the template, in `root/name`.
    func startServer(name: String) throws -> TestPostgreSQLServer {
        let directory = "\(root)/\(name)"
        try Self.run("/bin/mkdir", [directory])
        try Self.run("/bin/cp", ["-a", template, "\(directory)/data"])
        return try TestPostgreSQLServer.started(socketDirectory: directory, dataDirectory: "\(directory)/data")
    }

    /// Starts the watchdog (see ``TestPostgreSQLServer``). The pipe's write end is this
    /// process's for its whole life, close-on-exec so that no other child keeps it open.
    private func startWatchdog() throws {
        var ends: [Int32] = [0, 0]
        // Glibc's module has no pipe2: close-on-exec is set just after. A process another
        // test spawns in between would only keep the watchdog waiting until it ends.
        guard pipe(&ends) == 0, fcntl(ends[1], F_SETFD, FD_CLOEXEC) == 0 else {
            throw TestServerError(description: "pipe failed: errno \(errno)")
        }
        defer { close(ends[0]) }
        let script = """
            cat >/dev/null
            root="$1"; shift
            for data in "$root"/*/data; do
                [ -f "$data/postmaster.pid" ] && "$@" -D "$data" -m immediate -w -s stop >/dev/null 2>&1
            done
            rm -rf "$root"
            """
        // setsid: a Ctrl-C to the test's process group does not reach it. Never waited for:
        // it ends after this process.
        _ = try Self.spawn(["/usr/bin/setsid", "/bin/sh", "-c", script, "sh", root] + Self.asServerUser(Self.binary("pg_ctl")), input: ends[0], output: -1)
        // ends[1] stays open until this process ends: that is the signal.
    }

    /// `command` as the server's user: through `setpriv` when the tests run as root.
    static func asServerUser(_ command: String) -> [String] {
        guard serverUser != nil else { return [command] }
        return ["/usr/bin/setpriv", "--reuid=\(TestPostgreSQLServer.superuser)", "--regid=\(TestPostgreSQLServer.superuser)", "--init-groups", command]
    }

    /// Runs a command as the server's user (it owns everything under the root) to its end.
    /// - Throws: ``TestServerError`` with what it printed when it fails.
    static func run(_ executable: String, _ arguments: [String]) throws {
        let command = asServerUser(executable) + arguments
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-pg-\(UUID().uuidString).log")
        let output = open(log.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw TestServerError(description: "cannot create \(log.path): errno \(errno)") }
        defer {
            close(output)
            unlink(log.path)
        }
        let pid = try spawn(command, input: -1, output: output)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw TestServerError(description: "waitpid failed: errno \(errno)") }
        }
        guard status == 0 else {
            let said = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw TestServerError(description: "\(command.joined(separator: " ")) failed (wait status \(status)): \(said)")
        }
    }

    /// Starts `command` with `input` as its standard input (`/dev/null` when negative) and
    /// `output` as its standard output and error (`/dev/null` when negative), and nothing
    /// else of this process's descriptors.
    ///
    /// Not Foundation's `Process`: it learns that a child ended when a socket the child
    /// inherited closes, and `pg_ctl start` leaves the server running with every descriptor
    /// it was given, so `waitUntilExit` would wait as long as the server runs.
    private static func spawn(_ command: [String], input: Int32, output: Int32) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if input >= 0 {
            posix_spawn_file_actions_adddup2(&actions, input, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        if output >= 0 {
            posix_spawn_file_actions_adddup2(&actions, output, 1)
            posix_spawn_file_actions_adddup2(&actions, output, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        // Glibc's module has no posix_spawn_file_actions_addclosefrom_np: bash closes every
        // descriptor above 2 before it runs the command, so that neither the command nor the
        // server it may leave running holds one of this process's (a socket another test's
        // Foundation.Process waits on, a libpq connection).
        let closer = #"for fd in /proc/$$/fd/*; do fd=${fd##*/}; if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi; done; exec "$@""#
        let environment = ["PATH=/usr/bin:/bin", "LC_ALL=C", "HOME=/tmp"]
        let arguments = (["/bin/bash", "-c", closer, "bash"] + command).map { strdup($0) } + [nil]
        let variables = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in arguments + variables { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, "/bin/bash", &actions, nil, arguments, variables)
        guard result == 0 else {
            throw TestServerError(description: "cannot start \(command[0]): error \(result)")
        }
        return pid
    }
}
