// bgtask-durability-probe: the child process of the crash-durability test
// (Tests/BackgroundTasksTests/DurabilityTests.swift).
//
//   bgtask-durability-probe <state-dir> <count>
//
// Opens `<state-dir>/scheduler.sqlite` as the embedded scheduler does
// (`EmbeddedScheduler.openStore(in:now:)`: WAL, synchronous=FULL), attaches one app whose
// manifest permits `com.example.durable.0` ... `com.example.durable.<count-1>`, and
// submits one processing request per identifier, in order, through
// `SchedulerDriver.submit`. After each submit returns, it writes the identifier and a
// newline to standard output with a bare `write(2)`: a line on stdout is an
// acknowledgement, and the test kills this process with SIGKILL mid-loop, then checks that
// every acknowledged request is in the store.
//
// Exits 0 after the last submit, 1 when a submit is refused or the store cannot be opened,
// 64 on a usage error.
//
//   bgtask-durability-probe <state-dir> --until-sigterm
//
// The child of the SIGTERM test (EmbeddedServerSignalTests): the app launches in the
// foreground with `handleTerminationSignals()`, submits `com.example.durable.long`, a
// processing task due now whose handler writes "running" and works until its expiration
// handler (which writes "expired" and completes unsuccessfully) runs.
import BackgroundTasks
import Foundation
import ProbeSupport
import SchedulerStore
import SchedulerCore

/// The app the probe submits for (the test reads its requests back).
let probeApp = AppID("com.example.durable")

let probe = Probe(name: "bgtask-durability-probe")

let arguments = CommandLine.arguments
let untilSigterm = arguments.count == 3 && arguments[2] == "--until-sigterm"
guard arguments.count == 3, untilSigterm || (Int(arguments[2]).map { $0 > 0 } ?? false) else {
    probe.fail("usage: bgtask-durability-probe <state-dir> <count> | <state-dir> --until-sigterm", status: 64)
}
let stateDirectory = URL(fileURLWithPath: arguments[1], isDirectory: true)

let store: SchedulerStore
do {
    store = try EmbeddedScheduler.openStore(in: stateDirectory, now: Date()).0
} catch {
    probe.fail("cannot open the store in \(stateDirectory.path): \(error)", status: 1)
}

if untilSigterm {
    let identifier = "com.example.durable.long"
    let driver = SchedulerDriver(conditions: .favorable, clock: DispatchDriverClock(), store: store)
    let manifest = AppManifest(appID: probeApp, permittedIdentifiers: [identifier], backgroundModes: ["processing"], source: "bgtask-durability-probe")
    let context = BGAppContext(app: probeApp, manifest: manifest, driver: driver, assertions: AssertionConfiguration(suspendDelay: 0.2))
    context.withCurrent {
        let application = BGApplication.shared
        application.launch()
        BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { task in
            task.expirationHandler = {
                probe.write("expired\n")
                task.setTaskCompleted(success: false)
            }
            probe.write("running\n")
        }
        application.handleTerminationSignals()
        application.finishLaunching()
    }
    do {
        try driver.submit(PendingRequest(app: probeApp, identifier: identifier, kind: .processing, submittedAt: driver.clock.now()))
    } catch {
        probe.fail("submit of \(identifier) refused: \(error)", status: 1)
    }
    withExtendedLifetime(context) { dispatchMain() }
}
let count = Int(arguments[2])!

var configuration = SchedulerConfiguration()
configuration.pendingLimits = [.refresh: 1, .processing: count, .continuedProcessing: 10]
let driver = SchedulerDriver(configuration: configuration, conditions: .favorable, clock: DispatchDriverClock(), store: store)
let identifiers = (0..<count).map { "com.example.durable.\($0)" }
let manifest = AppManifest(appID: probeApp, permittedIdentifiers: identifiers, backgroundModes: ["processing"], source: "bgtask-durability-probe")
let context = BGAppContext(app: probeApp, manifest: manifest, driver: driver)
// A day ahead: nothing launches, so the store holds only what was submitted.
let notBefore = Date().addingTimeInterval(86_400)

for identifier in identifiers {
    let request = PendingRequest(app: probeApp, identifier: identifier, kind: .processing, earliestBeginDate: notBefore, submittedAt: driver.clock.now())
    do {
        try driver.submit(request)
    } catch {
        probe.fail("submit of \(identifier) refused: \(error)", status: 1)
    }
    probe.write(identifier + "\n")
}
withExtendedLifetime(context) {}
exit(0)
