// An iOS-shaped app as a real process (Swift 5 language mode): its identifiers come from
// Bundle.main.bundleIdentifier (Info.plist beside the executable), its AppDelegate is
// main-actor, and the developer flow "submit, then trigger the launch" is used under
// BGTASK_MANUAL_LAUNCH=1. Driven by ProcessTests.IOSShapedProcess.
//
//   ios-shaped-app launch         dispatchMain(); prints events; exits 0 after the refresh
//                                 handler ran on the main queue
//   ios-shaped-app no-main-loop   the same, but the main thread sleeps instead of
//                                 draining the main queue (the diagnostic goes to stderr)
import BackgroundTasks
import IOSShapedApp

setvbuf(stdout, nil, _IOLBF, 0)
let mode = CommandLine.arguments.dropFirst().first ?? "launch"
let identifier = LegacyAppDelegate.identifierFromBundle()
print("identifier \(identifier)")

MainActor.assumeIsolated {
    let application = UIApplication.shared
    let delegate = LegacyAppDelegate(refreshIdentifier: identifier, backgroundTasks: application)
    delegate.onEvent = { event in
        print("event \(event)")
        if event.hasPrefix("refresh") { exit(event == "refresh main=true" ? 0 : 2) }
    }
    application.launch()
    _ = delegate.application(application)
    application.finishLaunching()
    delegate.scheduleAppRefresh(after: 0)
    // Called later, on the scheduler's queue (as iOS does): waited for here.
    let pending = PendingBox()
    BGTaskScheduler.shared.getPendingTaskRequests { requests in
        pending.identifiers = requests.map(\.identifier)
        pending.arrived.signal()
    }
    pending.arrived.wait()
    print("pending \(pending.identifiers.contains(identifier))")
    do {
        try BGTaskScheduler.shared.simulateLaunch(forTaskWithIdentifier: identifier)
        print("simulated")
    } catch {
        print("simulateLaunch failed: \(error)")
        exit(3)
    }
    _ = dispatchMainKeepAlive(delegate)
}

/// The identifiers getPendingTaskRequests reported.
final class PendingBox: @unchecked Sendable {
    // @unchecked: written once by the callback before it signals `arrived`, read only after
    // the wait for that signal (the semaphore orders the two).
    var identifiers: [String] = []
    let arrived = DispatchSemaphore(value: 0)
}

/// Keeps the delegate alive for the process's life.
@MainActor func dispatchMainKeepAlive(_ delegate: LegacyAppDelegate) -> Unmanaged<LegacyAppDelegate> {
    Unmanaged.passRetained(delegate)
}

if mode == "no-main-loop" {
    // A program that never drains the main queue: the main-actor handler cannot run.
    sleep(8)
    print("main queue never drained")
    exit(4)
}
dispatchMain()
