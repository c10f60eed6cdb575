// bgtask-ownership-probe: one process of an app for the two-process ownership test
// (Tests/BackgroundTasksTests/OwnershipProcessTests.swift).
//
//   bgtask-ownership-probe <state-dir> <count>
//
// Builds the app `com.example.owner` exactly as a real embedded app does
// (`EmbeddedScheduler.makeContext`: the store in <state-dir>, its ownership lock, crash
// recovery, quarantine), with fixed favourable conditions. Registers handlers for
// `com.example.owner.0` ... `com.example.owner.9`, each of which writes
// `running <pid> <identifier>` and then blocks forever (a run in progress). Submits
// <count> processing requests a day ahead, writing one line per submit:
// `accepted <id>` or `refused <id> <code>: <message>`, then `ready <pid>`.
// Then reads commands from standard input, one per line, answering each:
//   launch    -> launches `com.example.owner.0` now (simulateLaunch); its handler answers
//   pending   -> `pending <n> <id>,<id>...` (the scheduler's pending requests, sorted)
//   cancelAll -> `cancelled`
//   exit      -> exits 0
// Diagnostics go to standard error.
import BackgroundTasks
import DeviceConditions
import Foundation
import ProbeSupport
import SchedulerCore

let app = AppID("com.example.owner")
let pid = getpid()

let probe = Probe(name: "bgtask-ownership-probe")

let arguments = CommandLine.arguments
guard arguments.count == 3, let count = Int(arguments[2]), (0...10).contains(count) else {
    FileHandle.standardError.write(Data("usage: bgtask-ownership-probe <state-dir> <count 0...10>\n".utf8))
    exit(64)
}
let identifiers = (0..<10).map { "com.example.owner.\($0)" }
let manifest = AppManifest(appID: app, permittedIdentifiers: identifiers, backgroundModes: ["processing"], source: "bgtask-ownership-probe")
let configuration = EmbeddedScheduler.Configuration(
    app: app,
    manifest: manifest,
    stateDirectory: URL(fileURLWithPath: arguments[1], isDirectory: true),
    scheduler: EmbeddedScheduler.defaultSchedulerConfiguration(environment: [:], machineIDFile: nil),
    conditions: FixedConditions(.favorable),
    log: .standardError(minimumLevel: .info)
)
let context = EmbeddedScheduler.makeContext(configuration)
let scheduler = context.scheduler

/// Registers the handlers from a nonisolated function: a closure written in top-level code
/// is main-actor isolated and would run on the main queue, which this probe never drains
/// (its main thread reads standard input).
nonisolated func registerHandlers(_ identifiers: [String], on scheduler: BGTaskScheduler, pid: Int32) {
    for identifier in identifiers {
        scheduler.register(forTaskWithIdentifier: identifier, using: nil) { task in
            probe.say("running \(pid) \(task.identifier)")
            // A run in progress until the process dies.
            while true { pause() }
        }
    }
}
registerHandlers(identifiers, on: scheduler, pid: pid)
// Launches are delivered once the app has finished launching (every handler registered).
context.application.finishLaunching()

let notBefore = Date().addingTimeInterval(86_400)
for identifier in identifiers.prefix(count) {
    let request = BGProcessingTaskRequest(identifier: identifier)
    request.earliestBeginDate = notBefore
    do {
        try scheduler.submit(request)
        probe.say("accepted \(identifier)")
    } catch let error as BGTaskScheduler.Error {
        // The error's own description names its code ("BGTaskScheduler.Error(unavailable): ...").
        probe.say("refused \(identifier) \(error)")
    } catch {
        probe.say("refused \(identifier) \(error)")
    }
}
probe.say("ready \(pid)")

while let command = readLine() {
    switch command {
    case "launch":
        do {
            try scheduler.simulateLaunch(forTaskWithIdentifier: identifiers[0])
        } catch {
            probe.say("launch failed: \(error)")
        }
    case "pending":
        let pending = context.driver.pendingRequests(of: app).map(\.identifier).sorted()
        probe.say("pending \(pending.count) \(pending.joined(separator: ","))")
    case "cancelAll":
        scheduler.cancelAllTaskRequests()
        probe.say("cancelled")
    case "exit":
        exit(0)
    default:
        probe.say("unknown command \(command)")
    }
}
exit(0)
