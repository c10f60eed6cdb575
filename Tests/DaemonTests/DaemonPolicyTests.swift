#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// bgtaskd's policy configuration (`--policy FILE`, SIGHUP) and `bgtask policy` and
/// `bgtask conditions` answered by the daemon (docs/daemon.md, "Policy configuration").
extension DaemonProcessTests {
    @Suite struct Policy {
        @Test("bgtaskd --policy FILE judges with it; bgtask policy says so; SIGHUP reads it again; a bad file is refused, at start and on SIGHUP")
        func policyFileAndReload() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let file = harness.root + "/policy.json"
            try #"{"threshold": 0.6, "minimumLaunchInterval": 120}"#.write(toFile: file, atomically: true, encoding: .utf8)

            // A file that does not parse stops the start, naming the file and the key.
            let bad = harness.root + "/bad-policy.json"
            try #"{"threshold": 7}"#.write(toFile: bad, atomically: true, encoding: .utf8)
            let refused = try await harness.run(harness.bgtaskd, harness.daemonFlags + ["--policy", bad])
            #expect(refused.status == 1, "\(refused)")
            #expect(refused.error.contains(bad) && refused.error.contains("threshold"), "\(refused.error)")

            try await harness.startDaemon(["--policy", file])
            let text = try await harness.bgtask("policy")
            #expect(text.status == 0, "\(text)")
            #expect(text.output.contains("threshold 0.6") && text.output.contains("at least 120 s apart"), "\(text.output)")
            #expect(text.output.contains("bgtaskd (pid \(harness.daemon?.pid ?? 0)): \(file)"), "\(text.output)")
            #expect(try await policyJSON(harness)["threshold"] as? Double == 0.6)
            #expect(try await harness.bgtask("status").output.contains("policy configuration: \(file)"))

            // Changed and read again on SIGHUP.
            try #"{"threshold": 0.5}"#.write(toFile: file, atomically: true, encoding: .utf8)
            harness.daemon?.signal(SIGHUP)
            #expect(await harness.poll(timeout: .seconds(5)) { (try? await policyJSON(harness)["threshold"] as? Double) == 0.5 })
            #expect(try await policyJSON(harness)["minimumLaunchInterval"] as? Double == 60, "keys not given are the defaults again")

            // A broken file on SIGHUP: logged, and the configuration in force stays.
            try "{".write(toFile: file, atomically: true, encoding: .utf8)
            harness.daemon?.signal(SIGHUP)
            #expect(await harness.poll(timeout: .seconds(5)) { harness.daemon?.standardError.contains("the configuration in force stays") == true },
                    "\(harness.daemon?.standardError ?? "")")
            #expect(try await policyJSON(harness)["threshold"] as? Double == 0.5)

            // --check FILE validates the file here, whatever the daemon runs with.
            let check = try await harness.bgtask("policy", "--check", bad)
            #expect(check.status == 1 && check.error.contains("threshold"), "\(check)")
        }

        @Test("bgtask conditions answers with the daemon's reading (its own state directory's overrides), and reads the device itself without a daemon")
        func conditionsFromTheDaemon() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            try await harness.startDaemon()
            let override = harness.stateDirectory + "/low-power-mode"
            try "on".write(toFile: override, atomically: true, encoding: .utf8)
            let live = try await harness.bgtask("conditions")
            #expect(live.status == 0, "\(live)")
            #expect(live.output.contains("override \(override)"), "\(live.output)")
            let json = try await harness.bgtask("conditions", "--json")
            let document = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
            #expect(document != nil, "\(json.output)")

            _ = try await harness.stopDaemon()
            let direct = try await harness.bgtask("conditions")
            #expect(direct.status == 0, "\(direct)")
            #expect(!direct.output.contains(override), "without a daemon the tool reads the device with its own state root: \(direct.output)")
        }

        @Test("bgtask why, conditions and policy take --socket as the other daemon commands do: the daemon there answers, and none running there is a failure, not an answer from here")
        func judgementCommandsTakeSocket() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            // Not the default socket: without --socket, no daemon is found.
            let socket = harness.root + "/other/socket"
            try await harness.startDaemon(["--socket", socket])
            let override = harness.stateDirectory + "/low-power-mode"
            try "on".write(toFile: override, atomically: true, encoding: .utf8)
            let app = "com.example.testapp"
            let manifest = try harness.writeManifest(app: app, executable: harness.testApp, arguments: [], identifiers: [app + ".refresh"])
            #expect(try await harness.run(harness.bgtask, ["install", manifest, "--socket", socket]).status == 0)

            let conditions = try await harness.run(harness.bgtask, ["conditions", "--socket", socket])
            #expect(conditions.status == 0 && conditions.output.contains("override \(override)"), "\(conditions)")
            let here = try await harness.bgtask("conditions")
            #expect(here.status == 0 && !here.output.contains(override), "\(here)")
            let policy = try await harness.run(harness.bgtask, ["policy", "--socket", socket])
            #expect(policy.status == 0 && policy.output.contains("bgtaskd (pid \(harness.daemon?.pid ?? 0))"), "\(policy)")
            let why = try await harness.run(harness.bgtask, ["why", app, app + ".refresh", "--socket", socket, "--json"])
            #expect(why.status == 0, "\(why)")
            #expect((try? JSONSerialization.jsonObject(with: Data(why.output.utf8))) != nil, "\(why.output)")
            // Without it, the app's own store (it has none): the daemon was not asked.
            let whyHere = try await harness.bgtask("why", app, app + ".refresh")
            #expect(whyHere.status == 1 && whyHere.error.contains("no scheduler state for \(app)"), "\(whyHere)")
            // With it, for an app the daemon does not have (nor the embedded scheduler): both said.
            let stranger = try await harness.run(harness.bgtask, ["why", "com.example.stranger", "com.example.stranger.refresh", "--socket", socket])
            #expect(stranger.status == 1 && stranger.error.contains("com.example.stranger is not installed with the bgtaskd at \(socket), and there is no embedded scheduler state for it"), "\(stranger)")

            let nowhere = harness.root + "/none/socket"
            for command in [["conditions"], ["policy", "--json"], ["why", app, app + ".refresh"]] {
                let result = try await harness.run(harness.bgtask, command + ["--socket", nowhere])
                #expect(result.status == 1, "\(command): \(result)")
                #expect(result.output.isEmpty, "\(command): answered from here: \(result.output)")
                #expect(result.error.hasPrefix("bgtask \(command[0]): no daemon is running: there is no socket at \(nowhere)"), "\(command): \(result.error)")
                #expect(result.error.contains("start it with `bgtaskd &`"), "\(command): \(result.error)")
            }
        }

        private func policyJSON(_ harness: DaemonHarness) async throws -> [String: Any] {
            let result = try await harness.bgtask("policy", "--json")
            return (try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]) ?? [:]
        }
    }
}
