#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

extension ProcessTests {
    /// `bgtask simulate` and `bgtask fleet` as processes, for what only a process shows: the
    /// message on standard error and the exit status (64 for a usage error, 1 for a file
    /// that cannot be used), and files another user cannot read (root reads everything, so
    /// those run as uid 65534 through setpriv).
    @Suite struct SimulationInput {
        /// Runs `bgtask arguments`, as uid 65534 when `unprivileged` and this process is root.
        func bgtask(_ arguments: [String], scratch: URL, unprivileged: Bool = false) async throws -> (status: Int32, error: String) {
            let result = try await ProcessTests.bgtask(arguments, scratch: scratch, unprivileged: unprivileged)
            return (result.status, result.error)
        }

        @Test func aScenarioPathThatIsALinkLoopOrLeadsNowhereIsNamedForWhatItIs() async throws {
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let loop = scratch.url.appendingPathComponent("loop.json").path
            try FileManager.default.createSymbolicLink(atPath: loop, withDestinationPath: loop)
            let looped = try await bgtask(["simulate", loop, "--days", "1"], scratch: scratch.url)
            #expect(looped.status == 1, "\(looped)")
            #expect(looped.error == "bgtask simulate: \(loop): $: expected a readable scenario file, found a symbolic link loop (too many levels of symbolic links)\n")

            let dangling = scratch.url.appendingPathComponent("trip.json").path
            try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: "gone/trip.json")
            let nowhere = try await bgtask(["simulate", dangling, "--days", "1"], scratch: scratch.url)
            #expect(nowhere.status == 1, "\(nowhere)")
            #expect(nowhere.error == "bgtask simulate: \(dangling): $: expected a readable scenario file, found a symbolic link to \"gone/trip.json\", which does not exist\n")

            // Nothing there at all stays a usage error.
            let missing = scratch.url.appendingPathComponent("missing.json").path
            let absent = try await bgtask(["simulate", missing], scratch: scratch.url)
            #expect(absent.status == 64, "\(absent)")
            #expect(absent.error.hasPrefix("bgtask: simulate: '\(missing)' is neither a built-in scenario"), "\(absent.error)")
        }

        @Test func tooManyScenarioEventsIsAUsageErrorBeforeAnythingRuns() async throws {
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let launches = (0..<1440).map { minute in "{\"at\": \"" + String(format: "%02d:%02d", minute / 60, minute % 60) + "\"}" }
            let dense = scratch.url.appendingPathComponent("dense.json")
            try Data("{\"version\": 1, \"name\": \"dense\", \"days\": [{\"launches\": [\(launches.joined(separator: ","))]}]}".utf8).write(to: dense)
            let refused = try await bgtask(["simulate", dense.path, "--days", "3660"], scratch: scratch.url)
            #expect(refused.status == 64, "\(refused)")
            #expect(refused.error.hasPrefix("bgtask: --days 3660 plays 10540800 scenario events (about 2880 a day: each interval and launch of \(dense.path) starts and ends), more than the 250000 one simulation may play, since its trace of every event is kept in memory; simulate at most 86 days\n\nusage: bgtask"), "\(refused.error)")
        }

        @Test func aReaderThatWentAwayIsAFailureThatSaysSo() throws {
            // Standard output a pipe whose reading end is closed before anything is written.
            let process = Process()
            process.executableURL = try ProductBinary.locate("bgtask")
            process.arguments = ["simulate", "commuter", "--days", "3"]
            let output = Pipe()
            let error = Pipe()
            process.standardOutput = output
            process.standardError = error
            try output.fileHandleForReading.close()
            try process.run()
            try output.fileHandleForWriting.close()
            let said = error.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(process.terminationReason == .exit, "killed by signal \(process.terminationStatus)")
            #expect(process.terminationStatus == 1)
            #expect(String(decoding: said, as: UTF8.self).hasPrefix("bgtask simulate: cannot write the output: "), "\(String(decoding: said, as: UTF8.self))")
        }

        @Test func aRepeatedOptionIsAUsageError() async throws {
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let simulate = try await bgtask(["simulate", "commuter", "--days", "2", "--days", "1"], scratch: scratch.url)
            #expect(simulate.status == 64, "\(simulate)")
            #expect(simulate.error.hasPrefix("bgtask: --days given more than once\n\nusage: bgtask"), "\(simulate.error)")
            let fleet = try await bgtask(["fleet", "--shared-outage", "07:00-08:00", "--shared-outage", "09:00-10:00"], scratch: scratch.url)
            #expect(fleet.status == 64, "\(fleet)")
            #expect(fleet.error.hasPrefix("bgtask: --shared-outage given more than once\n"), "\(fleet.error)")
        }

        @Test(.enabled(if: getuid() != 0 || FileManager.default.isExecutableFile(atPath: setpriv), "as root, reading as another user needs setpriv"))
        func aScenarioThatCannotBeReadSaysPermissionDenied() async throws {
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            // The file is there but not readable.
            let secret = scratch.url.appendingPathComponent("secret.json").path
            #expect(FileManager.default.createFile(atPath: secret, contents: Data("{}".utf8), attributes: [.posixPermissions: 0o000]))
            let unreadable = try await bgtask(["simulate", secret, "--days", "1"], scratch: scratch.url, unprivileged: true)
            #expect(unreadable.status == 1, "\(unreadable)")
            #expect(unreadable.error == "bgtask simulate: \(secret): $: expected a readable scenario file, found a file that cannot be read (Permission denied)\n")

            // Behind a directory that cannot be searched: what is there cannot even be looked at.
            let closed = scratch.url.appendingPathComponent("closed")
            try FileManager.default.createDirectory(at: closed, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            let hidden = closed.appendingPathComponent("trip.json").path
            #expect(FileManager.default.createFile(atPath: hidden, contents: Data("{}".utf8), attributes: [.posixPermissions: 0o644]))
            if getuid() == 0 { chmod(closed.path, 0o700) } else { chmod(closed.path, 0o000) }
            defer { chmod(closed.path, 0o700) }
            let behind = try await bgtask(["simulate", hidden, "--days", "1"], scratch: scratch.url, unprivileged: true)
            #expect(behind.status == 1, "\(behind)")
            #expect(behind.error == "bgtask simulate: \(hidden): $: expected a readable scenario file, found a path that cannot be reached (Permission denied: a directory on the way to it cannot be searched)\n")
        }
    }
}
