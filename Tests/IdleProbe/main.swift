// bgtask-idle-probe: an embedded app that runs one task of each ordinary handler kind and
// then idles, for the idle-wakeup test (Tests/BackgroundTasksTests/IdleWakeupTests.swift).
//
//   bgtask-idle-probe <state-dir>
//
// Reads ProcessInfo's Low Power Mode and thermal state first (no app context yet: the
// machine's, leaving the bootstrap open), then bootstraps the embedded scheduler (no
// daemon, its state in <state-dir>, fixed favourable conditions) as an ordinary app does,
// observes a lifecycle notification on the main queue, registers handlers of each kind
// and finishes launching; then, from a thread of its own (the main thread runs
// dispatchMain(), so main-actor code runs), submits one request per identifier and
// launches each with simulateLaunch:
//   .main            a main-actor handler (written in top-level code), completes at once
//   .main-expire     a main-actor handler whose main-actor expiration handler completes it
//                    (simulateExpiration)
//   .nil             a nonisolated handler registered `using: nil`
//   .queue           a nonisolated handler on a serial queue of the app's
//   .nil-expire      a nonisolated handler whose nonisolated expiration handler completes it
// then takes and ends a background assertion (beginBackgroundTask with a main-actor
// expiration handler), runs performExpiringActivity, and waits for the completion handlers
// of getPendingTaskRequests and submitTaskRequest. It writes one line per step and
// `done <pid>` once everything completed, then idles in dispatchMain() until killed.
// Nothing here uses DispatchQueue.global() or Swift concurrency's global executor: any
// wakeup of this process once it is idle is the scheduler's (the `async -> Bool` handler
// kind is not run: its handler runs on the global executor by Swift's rules).
// Diagnostics go to standard error.
import BackgroundTasks
import DeviceConditions
import Foundation
import ProbeSupport
import SchedulerCore

let probe = Probe(name: "bgtask-idle-probe")
let pid = getpid()
let arguments = CommandLine.arguments
guard arguments.count == 2 else { probe.fail("usage: bgtask-idle-probe <state-dir>", status: 64) }

let app = AppID("com.example.idle")
let names = ["main", "main-expire", "nil", "queue", "nil-expire", "extra"]
let identifiers = names.map { "com.example.idle.\($0)" }
@Sendable func id(_ name: String) -> String { "com.example.idle.\(name)" }

let manifest = AppManifest(appID: app, permittedIdentifiers: identifiers, backgroundModes: ["processing"], source: "bgtask-idle-probe")
// A library's look at the device before the app bootstraps (a check before heavy work, in
// a static initializer): with no app context yet it reads the machine, and must not make
// the process's scheduler, or the bootstrap below would be refused as too late.
probe.say("device lowPowerMode \(ProcessInfo.processInfo.isLowPowerModeEnabled) thermal \(ProcessInfo.processInfo.thermalState.rawValue)")
do {
    try EmbeddedScheduler.bootstrap(.init(
        app: app,
        manifest: manifest,
        stateDirectory: URL(fileURLWithPath: arguments[1], isDirectory: true),
        scheduler: EmbeddedScheduler.defaultSchedulerConfiguration(environment: [:], machineIDFile: nil),
        conditions: FixedConditions(.favorable),
        log: .standardError(minimumLevel: .info),
        daemon: .never
    ))
} catch {
    probe.fail("\(error)", status: 1)
}

/// Signalled by each step's last piece of app code.
let stepDone = DispatchSemaphore(value: 0)
/// Signalled by the handlers that wait for their expiration, once they run.
let running = DispatchSemaphore(value: 0)

// A lifecycle notification, observed on the main queue as iOS code does.
let observer = NotificationCenter.default.addObserver(forName: UIApplication.didBecomeActiveNotification, object: nil, queue: .main) { _ in
    probe.say("notification didBecomeActive")
}

// Top-level code is main-actor isolated: these handlers run on the main actor.
BGTaskScheduler.shared.register(forTaskWithIdentifier: id("main"), using: nil) { task in
    dispatchPrecondition(condition: .onQueue(.main))
    task.setTaskCompleted(success: true)
    probe.say("ran main")
    stepDone.signal()
}
BGTaskScheduler.shared.register(forTaskWithIdentifier: id("main-expire"), using: nil) { task in
    dispatchPrecondition(condition: .onQueue(.main))
    task.expirationHandler = {
        dispatchPrecondition(condition: .onQueue(.main))
        task.setTaskCompleted(success: false)
        probe.say("expired main-expire")
        stepDone.signal()
    }
    running.signal()
}

/// Handlers written in a nonisolated function are nonisolated: they run on their queue.
nonisolated func registerNonisolatedHandlers() {
    BGTaskScheduler.shared.register(forTaskWithIdentifier: id("nil"), using: nil) { task in
        task.setTaskCompleted(success: true)
        probe.say("ran nil")
        stepDone.signal()
    }
    let queue = DispatchQueue(label: "com.example.idle.handlers")
    BGTaskScheduler.shared.register(forTaskWithIdentifier: id("queue"), using: queue) { task in
        dispatchPrecondition(condition: .onQueue(queue))
        task.setTaskCompleted(success: true)
        probe.say("ran queue")
        stepDone.signal()
    }
    BGTaskScheduler.shared.register(forTaskWithIdentifier: id("nil-expire"), using: nil) { task in
        task.expirationHandler = {
            task.setTaskCompleted(success: false)
            probe.say("expired nil-expire")
            stepDone.signal()
        }
        running.signal()
    }
    BGTaskScheduler.shared.register(forTaskWithIdentifier: id("extra"), using: nil) { task in
        task.setTaskCompleted(success: true)
    }
}
registerNonisolatedHandlers()
UIApplication.shared.finishLaunching()

/// Waits for `semaphore`, failing the probe after 30 s.
@Sendable nonisolated func wait(_ semaphore: DispatchSemaphore, _ what: String) {
    if semaphore.wait(timeout: .now() + 30) == .timedOut { probe.fail("timed out waiting for \(what)", status: 1) }
}

/// The steps, on a plain thread of the probe's (not a Dispatch or Swift concurrency pool).
@Sendable nonisolated func runSteps() {
    let scheduler = BGTaskScheduler.shared
    do {
        for identifier in identifiers.dropLast() {
            let request = BGProcessingTaskRequest(identifier: identifier)
            request.earliestBeginDate = Date(timeIntervalSinceNow: 86_400)
            try scheduler.submit(request)
        }
        for name in ["main", "nil", "queue"] {
            try scheduler.simulateLaunch(forTaskWithIdentifier: id(name))
            wait(stepDone, "the handler of \(name)")
        }
        for name in ["main-expire", "nil-expire"] {
            try scheduler.simulateLaunch(forTaskWithIdentifier: id(name))
            wait(running, "the handler of \(name)")
            try scheduler.simulateExpiration(forTaskWithIdentifier: id(name))
            wait(stepDone, "the expiration handler of \(name)")
        }
    } catch {
        probe.fail("\(error)", status: 1)
    }

    let assertion = UIApplication.shared.beginBackgroundTask(withName: "idle-probe") {
        probe.say("assertion expired (unexpected)")
    }
    if assertion == .invalid { probe.fail("beginBackgroundTask returned .invalid", status: 1) }
    UIApplication.shared.endBackgroundTask(assertion)
    probe.say("assertion ended")

    ProcessInfo.processInfo.performExpiringActivity(withReason: "idle-probe") { expired in
        if !expired {
            probe.say("expiring activity ran")
            stepDone.signal()
        }
    }
    wait(stepDone, "performExpiringActivity's block")

    scheduler.getPendingTaskRequests { requests in
        probe.say("pending \(requests.count)")
        stepDone.signal()
    }
    wait(stepDone, "getPendingTaskRequests' completion handler")
    let extra = BGProcessingTaskRequest(identifier: id("extra"))
    extra.earliestBeginDate = Date(timeIntervalSinceNow: 86_400)
    scheduler.submitTaskRequest(extra) { error in
        probe.say("submitted \(error.map { "\($0)" } ?? "ok")")
        stepDone.signal()
    }
    wait(stepDone, "submitTaskRequest's completion handler")
    // The runtime's own bookkeeping after the app's last call (the runs' ends, the
    // continuations after isolated calls) settles within this.
    Thread.sleep(forTimeInterval: 0.5)
    probe.say("done \(pid)")
}
let steps = Thread { runSteps() }
steps.name = "idle-probe.steps"
steps.start()
_ = observer
dispatchMain()
