// bgtask-replica-probe: one replica of a service, the child process of the replica tests
// (Tests/StoreContractTests/ReplicaProcessTests.swift).
//
//   bgtask-replica-probe --count N --submit-from K --submit-stride S [--hang IDENTIFIER]
//
// Environment: BGTASK_STORE_URL (the shared PostgreSQL store), BGTASK_REPLICA (this
// replica's name), BGTASK_STORE_LEASE (seconds), BGTASK_POLICY=server.
//
// The app's manifest permits `com.example.replica.0` ... `<N-1>`, all processing. The
// probe bootstraps the embedded scheduler as any app would (the store from
// BGTASK_STORE_URL: nothing in this code names PostgreSQL), registers a handler for every
// identifier that writes `ran <identifier> <replica>` to standard output and completes
// (the one named by --hang writes `hung <identifier> <replica>` and never completes),
// submits the identifiers K, K+S, K+2S... due now, writing `submitted <identifier>` after
// each submit returns, and then serves until it is killed. Lines are written with a bare
// write(2), so a line on stdout is a fact that survives a SIGKILL right after it.
//
// Exits 1 when a submit fails for another reason than the store being unavailable
// (those are retried: the test restarts the server mid-loop), 64 on a usage error.
import BackgroundTasks
import Foundation
import ProbeSupport
import SchedulerCore

let probe = Probe(name: "bgtask-replica-probe")

var count = 0
var from = 0
var stride = 1
var hang: String?
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    guard let value = arguments.popFirst() else { probe.fail("\(flag) needs a value", status: 64) }
    switch flag {
    case "--count": count = Int(value) ?? -1
    case "--submit-from": from = Int(value) ?? -1
    case "--submit-stride": stride = Int(value) ?? -1
    case "--hang": hang = value
    default: probe.fail("unknown flag \(flag)", status: 64)
    }
}
guard (1...100_000).contains(count), from >= 0, (1...1000).contains(stride) else {
    probe.fail("usage: bgtask-replica-probe --count N --submit-from K --submit-stride S [--hang IDENTIFIER]", status: 64)
}
let replica = ProcessInfo.processInfo.environment["BGTASK_REPLICA"] ?? "replica"
let app = AppID("com.example.replica")
let identifiers = (0..<count).map { "com.example.replica.\($0)" }
var scheduler = EmbeddedScheduler.defaultSchedulerConfiguration()
scheduler.pendingLimits = [.refresh: 1, .processing: count, .continuedProcessing: 10]
scheduler.maximumConcurrentRuns = 8
let state = FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-replica-\(getpid())")
do {
    try EmbeddedScheduler.bootstrap(EmbeddedScheduler.Configuration(
        app: app,
        manifest: AppManifest(appID: app, permittedIdentifiers: identifiers, backgroundModes: ["processing"], source: "bgtask-replica-probe"),
        stateDirectory: state,
        scheduler: scheduler,
        daemon: .never))
} catch {
    probe.fail("\(error)", status: 1)
}
let application = UIApplication.shared
application.launch()
for identifier in identifiers {
    BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { task in
        if identifier == hang {
            probe.say("hung \(identifier) \(replica)")
            return
        }
        probe.say("ran \(identifier) \(replica)")
        task.setTaskCompleted(success: true)
    }
}
application.finishLaunching()
for index in Swift.stride(from: from, to: count, by: stride) {
    let identifier = identifiers[index]
    while true {
        do {
            try BGTaskScheduler.shared.submit(BGProcessingTaskRequest(identifier: identifier))
            probe.say("submitted \(identifier)")
            break
        } catch let error as BGTaskScheduler.Error where error.code == .unavailable {
            // The server is being restarted: nothing was acknowledged, so try again.
            usleep(50_000)
        } catch {
            probe.fail("submit of \(identifier) refused: \(error)", status: 1)
        }
    }
}
probe.say("done submitting")
dispatchMain()
