#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PostgreSQLStore
import SchedulerCore
import Synchronization
import Testing

/// Replicas as processes (bgtask-replica-probe, the embedded scheduler of an app that only
/// sets BGTASK_STORE_URL) on a real server (docs/replicas.md, "The guarantee").
extension PostgreSQLServerTests {
    @Suite("Replica processes")
    struct ReplicaProcesses {
        /// One probe process: its standard output in a file, killed at the end.
        final class Probe: Sendable {
            let pid: pid_t
            let output: String

            init(_ arguments: [String], replica: String, address: String, lease: Int, directory: String) throws {
                output = "\(directory)/\(replica).out"
                let executable = try Self.locate("bgtask-replica-probe")
                // The replicas judge with a calm machine's CPU pressure, not this one's: the
                // server profile holds processing while the CPU is busy, and the test run's
                // other suites keep it busy (a replica would then launch nothing in time).
                let proc = "\(directory)/proc"
                try FileManager.default.createDirectory(atPath: "\(proc)/pressure", withIntermediateDirectories: true)
                try "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
                    .write(toFile: "\(proc)/pressure/cpu", atomically: true, encoding: .utf8)
                let environment = [
                    "PATH=/usr/bin:/bin", "HOME=\(directory)", "XDG_STATE_HOME=\(directory)/state", "XDG_RUNTIME_DIR=\(directory)/run",
                    "BGTASK_STORE_URL=\(address)", "BGTASK_REPLICA=\(replica)", "BGTASK_STORE_LEASE=\(lease)", "BGTASK_POLICY=server",
                    "BGTASK_PROC_ROOT=\(proc)",
                ]
                var actions = posix_spawn_file_actions_t()
                posix_spawn_file_actions_init(&actions)
                defer { posix_spawn_file_actions_destroy(&actions) }
                posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
                posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
                posix_spawn_file_actions_addopen(&actions, 2, "\(directory)/\(replica).err", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
                let argv = ([executable] + arguments).map { strdup($0) } + [nil]
                let envp = environment.map { strdup($0) } + [nil]
                defer { for pointer in argv + envp { free(pointer) } }
                var pid: pid_t = 0
                let status = posix_spawn(&pid, executable, &actions, nil, argv, envp)
                guard status == 0 else { throw TestServerError(description: "cannot start \(executable): error \(status)") }
                self.pid = pid
            }

            static func locate(_ name: String) throws -> String {
                let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
                let candidate = ((executable as NSString).deletingLastPathComponent as NSString).appendingPathComponent(name)
                guard FileManager.default.isExecutableFile(atPath: candidate) else {
                    throw TestServerError(description: "\(candidate) was not found; it is built by `swift build --build-tests`")
                }
                return candidate
            }

            /// What it wrote to standard error so far (for failure messages).
            var errors: String {
                (try? String(contentsOfFile: output.replacingOccurrences(of: ".out", with: ".err"), encoding: .utf8)) ?? ""
            }

            /// The lines it printed so far.
            var lines: [String] {
                ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            }

            func kill(_ signal: Int32 = SIGKILL) {
                _ = Glibc.kill(pid, signal)
                var status: Int32 = 0
                _ = waitpid(pid, &status, 0)
            }
        }

        /// A directory for one test's probes.
        private func directory() throws -> String {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-replicas-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            return path
        }

        /// Polls `condition` every 20 ms until it holds or `timeout` passes (processes and
        /// a server: no virtual time to drive).
        private func poll(timeout: Duration, _ condition: () -> Bool) -> Bool {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if condition() { return true }
                usleep(20_000)
            }
            return condition()
        }

        /// The identifiers `probes` ran, with repeats.
        private func ran(_ probes: [Probe]) -> [String] {
            probes.flatMap(\.lines).filter { $0.hasPrefix("ran ") }.map { String($0.split(separator: " ")[1]) }
        }

        @Test("three replica processes and 1,000 requests submitted from all of them: each runs once")
        func exactlyOnce() throws {
            let server = try TestPostgreSQLServer.shared()
            let address = server.address(database: try server.createDatabase())
            let place = try directory()
            defer { try? FileManager.default.removeItem(atPath: place) }
            let probes = try (0..<3).map { number in
                try Probe(["--count", "1000", "--submit-from", "\(number)", "--submit-stride", "3"], replica: "r\(number)", address: address, lease: 30, directory: place)
            }
            defer { for probe in probes { probe.kill() } }
            #expect(poll(timeout: .seconds(120)) { ran(probes).count >= 1000 }, "ran \(ran(probes).count)")
            // Late doubles would come within a moment: none may.
            usleep(300_000)
            let all = ran(probes)
            #expect(all.count == 1000)
            #expect(Set(all).count == 1000, "a request ran twice")
            #expect(probes.allSatisfy { $0.lines.filter { $0.hasPrefix("ran ") }.count > 0 }, "every replica took a share")
        }

        @Test("kill -9 of a replica mid-run: another replica runs the request once the lease runs out")
        func aKilledReplicasRunIsTakenOver() throws {
            let server = try TestPostgreSQLServer.shared()
            let database = try server.createDatabase()
            let address = server.address(database: database)
            let place = try directory()
            defer { try? FileManager.default.removeItem(atPath: place) }
            let hung = "com.example.replica.0"
            // Replica a submits the one request and claims it (due now); its handler hangs.
            let a = try Probe(["--count", "1", "--submit-from", "0", "--submit-stride", "1", "--hang", hung], replica: "a", address: address, lease: 2, directory: place)
            defer { a.kill() }
            #expect(poll(timeout: .seconds(30)) { a.lines.contains("hung \(hung) a") }, "out: \(a.lines) err: \(a.errors)")
            // Replica b starts (submitting nothing) and sees a's run in progress.
            let b = try Probe(["--count", "1", "--submit-from", "1", "--submit-stride", "1"], replica: "b", address: address, lease: 2, directory: place)
            defer { b.kill() }
            #expect(poll(timeout: .seconds(30)) { b.lines.contains("done submitting") })
            a.kill()
            // The lease (2 s) runs out; b's heartbeat (every 2/3 s) ends the run and restores it.
            #expect(poll(timeout: .seconds(30)) { b.lines.contains("ran \(hung) b") }, "out: \(b.lines) err: \(b.errors)")
            // "ran" is printed by the handler; its run's end is committed just after.
            let query = "SELECT replica, outcome FROM bgtask_runs WHERE identifier = '\(hung)' ORDER BY replica"
            let ended = poll(timeout: .seconds(10)) { (try? server.query(query, in: database))?.last?.last == "success" }
            let interrupted = try server.query(query, in: database)
            #expect(ended && interrupted == [["a", "interrupted"], ["b", "success"]], "\(interrupted)")
        }

        @Test("PostgreSQL stopped and started again in the middle of a submit loop: nothing acknowledged is lost, the loop resumes")
        func aServerRestartLosesNothingAcknowledged() throws {
            let server = try TestPostgreSQLServer.start(name: "replica-restart")
            defer { server.remove() }
            let database = try server.createDatabase()
            let address = server.address(database: database)
            let place = try directory()
            defer { try? FileManager.default.removeItem(atPath: place) }
            let probe = try Probe(["--count", "3000", "--submit-from", "0", "--submit-stride", "1"], replica: "r", address: address, lease: 30, directory: place)
            defer { probe.kill() }
            func acknowledged() -> [String] { probe.lines.filter { $0.hasPrefix("submitted ") }.map { String($0.dropFirst(10)) } }
            #expect(poll(timeout: .seconds(60)) { acknowledged().count >= 200 })
            try server.stop()
            let whileDown = acknowledged().count
            usleep(500_000)
            try server.start()
            #expect(poll(timeout: .seconds(120)) { probe.lines.contains("done submitting") }, "the loop resumed: \(acknowledged().count) acknowledged, \(whileDown) before the restart")
            #expect(acknowledged().count == 3000)
            // Every acknowledged request ran, or is pending, or is being run.
            let ranOrPending = Set(try server.query("SELECT identifier FROM bgtask_runs UNION SELECT identifier FROM bgtask_pending_requests", in: database).compactMap(\.first).compactMap { $0 })
            let lost = Set(acknowledged()).subtracting(ranOrPending)
            #expect(lost.isEmpty, "acknowledged but not in the store: \(lost.sorted().prefix(5))")
        }
    }
}

extension PostgreSQLServerTests {
    /// `bgtask log`, `energy`, `pending` and `why` on the shared store (docs/cli.md).
    @Suite("bgtask on the shared store")
    struct Commands {
        /// Runs bgtask with `arguments` and `environment`; its output, error and status.
        private func bgtask(_ arguments: [String], environment: [String: String] = [:]) throws -> (output: String, error: String, status: Int32) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try PostgreSQLServerTests.ReplicaProcesses.Probe.locate("bgtask"))
            process.arguments = arguments
            process.environment = ["PATH": "/usr/bin:/bin", "HOME": FileManager.default.temporaryDirectory.path].merging(environment) { _, new in new }
            let output = Pipe()
            let error = Pipe()
            process.standardOutput = output
            process.standardError = error
            try process.run()
            let out = output.fileHandleForReading.readDataToEndOfFile()
            let err = error.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self), process.terminationStatus)
        }

        @Test("log, energy, pending and why read the store replicas share, from --store or BGTASK_STORE_URL; a bad address is named without its password")
        func readsTheSharedStore() throws {
            let server = try TestPostgreSQLServer.shared()
            let database = try server.createDatabase()
            let address = server.address(database: database)
            let a = try PostgreSQLStore.open(address: address, replica: "a", now: Sample.now)
            let b = try PostgreSQLStore.open(address: address, replica: "b", now: Sample.now)
            let done = Sample.request("done")
            let waiting = Sample.request("waiting")
            try a.upsertRequests([done, waiting])
            #expect(try b.claimRun(Sample.run(1, of: done), lease: 30))
            try b.recordRunFinished(Sample.finished(Sample.run(1, of: done), after: 3))

            let log = try bgtask(["log", "--store", address, "--json"])
            #expect(log.status == 0, "\(log)")
            #expect(log.output.contains("\"done\""), "\(log.output)")
            // Run numbers are each replica's: the log says whose run it is.
            #expect(log.output.contains(#""replica" : "b""#), "\(log.output)")
            let table = try bgtask(["log", "--store", address])
            #expect(table.status == 0 && table.output.contains("REPLICA") && table.output.contains(" b "), "\(table)")
            let fromEnvironment = try bgtask(["log"], environment: ["BGTASK_STORE_URL": address])
            #expect(fromEnvironment.status == 0 && fromEnvironment.output.contains("done"), "\(fromEnvironment)")
            let energy = try bgtask(["energy", "--store", address])
            #expect(energy.status == 0, "\(energy)")
            let pending = try bgtask(["pending", "--store", address])
            #expect(pending.status == 0 && pending.output.contains("waiting") && !pending.output.contains("done"), "\(pending)")
            // The report names the task whatever it found: what it read is in "pending".
            let why = try bgtask(["why", Sample.app.rawValue, "waiting", "--store", address, "--json"])
            #expect(why.status == 0 && why.output.contains(#""pending" : true"#), "\(why)")
            let whyDone = try bgtask(["why", Sample.app.rawValue, "done", "--store", address, "--json"])
            #expect(whyDone.status == 0 && whyDone.output.contains(#""pending" : false"#), "\(whyDone)")
            #expect(try bgtask(["log", "--store", address, "--state", "/tmp"]).status == 64)

            // A database no replica opened, and an address with a password that is wrong.
            let empty = try bgtask(["log", "--store", server.address(database: try server.createDatabase())])
            #expect(empty.status == 1 && empty.error.contains("no scheduler store"), "\(empty)")
            let secret = "Wr0ng-S3cret"
            let refused = try bgtask(["pending", "--store", "postgresql://\(TestPostgreSQLServer.passwordRole):\(secret)@/\(database)?host=\(server.socketDirectory)"])
            #expect(refused.status == 1 && !refused.error.contains(secret) && !refused.output.contains(secret), "\(refused)")
        }
    }
}
