import BackgroundTasks
import BackgroundTasksTesting
import DaemonProtocol
import Foundation
import Synchronization
import Testing
import SchedulerCore

/// An uplink that records what the app tells the daemon.
private final class RecordingUplink: SchedulerUplink {
    let posted = Mutex<[AppRequest]>([])
    func call(_ request: AppRequest) throws(DaemonFailure) -> Reply { .done(nil) }
    func post(_ request: AppRequest) { posted.withLock { $0.append(request) } }
    var daemonDescription: String { "a recording uplink" }
    func stopReconnecting(reason: String) {}
}

/// An app under bgtaskd tells it when it holds background assertions, so that the daemon
/// does not suspend it meanwhile (docs/daemon.md, "Launching for tasks").
@Suite struct LinkedAssertionTests {
    @Test func theFirstAssertionAndTheEndOfTheLastAreToldToTheDaemon() throws {
        let uplink = RecordingUplink()
        let driver = SchedulerDriver(clock: VirtualClock(start: testStart), store: nil, log: .collecting(), meter: nil, uplink: uplink)
        let context = BGAppContext(app: testApp, manifest: testManifest, driver: driver, launchedInBackground: true)
        context.withCurrent { context.application.launch() }
        func assertionMessages() -> [Bool] {
            uplink.posted.withLock { $0 }.compactMap { if case .assertionsHeld(let held) = $0 { held } else { nil } }
        }
        let first = context.withCurrent { UIApplication.shared.beginBackgroundTask(withName: "one") {} }
        let second = context.withCurrent { UIApplication.shared.beginBackgroundTask(withName: "two") {} }
        #expect(first != .invalid && second != .invalid)
        #expect(assertionMessages() == [true], "only the first is news")
        context.withCurrent { UIApplication.shared.endBackgroundTask(first) }
        #expect(assertionMessages() == [true])
        context.withCurrent { UIApplication.shared.endBackgroundTask(second) }
        #expect(assertionMessages() == [true, false], "the end of the last")
        context.withCurrent { UIApplication.shared.endBackgroundTask(second) }
        #expect(assertionMessages() == [true, false], "a wrong end changes nothing")
    }
}
