import BackgroundTasks
import BackgroundTasksTesting
import Foundation
import SchedulerCore
import Testing

/// A cancel the store refuses (a full disk) leaves the request pending, in memory as on disk,
/// and says why to whoever asked: the app's log embedded, the app through bgtaskd's answer
/// (an outside full-disk probe: under bgtaskd only the daemon's log had it).
@Suite struct RefusedCancelTests {
    @Test func aRefusedCancelIsReturnedAndTheRequestStaysPending() throws {
        let store = try RefusingStore()
        let device = try SimulatedDevice(start: testStart, configuration: .init(), store: store, policies: .foundation)
        let context = device.install(app: testApp, manifest: testManifest) {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: processingID, using: nil) { $0.setTaskCompleted(success: true) }
        }
        let request = BGProcessingTaskRequest(identifier: processingID)
        request.earliestBeginDate = Date(timeIntervalSinceNow: 3_600)
        try submit(request, in: context)
        store.refusing.withLock { $0 = true }
        let key = RequestKey(app: testApp, identifier: processingID)
        let problem = try #require(device.driver.cancel(key), "the refusal is returned")
        #expect(problem.contains("could not remove '\(processingID)' from the store; it stays pending"), "\(problem)")
        #expect(device.driver.pendingRequests(of: testApp).map(\.identifier) == [processingID])
        let all = try #require(device.driver.cancelAll(of: testApp))
        #expect(all.contains("they stay pending"), "\(all)")
        store.refusing.withLock { $0 = false }
        #expect(device.driver.cancel(key) == nil)
        #expect(device.driver.pendingRequests(of: testApp).isEmpty)
        #expect(try store.inner.pendingRequests().isEmpty)
    }

    /// The Background App Refresh switch the store does not take stays as it was, and the
    /// refusal is returned for `bgtask settings` to answer with.
    @Test func aRefusedSwitchIsReturnedAndTheSwitchStays() throws {
        let store = try RefusingStore()
        let device = try SimulatedDevice(start: testStart, configuration: .init(), store: store, policies: .foundation)
        _ = device.install(app: testApp, manifest: testManifest) {}
        #expect(device.driver.backgroundRefreshEnabled(for: testApp))
        store.refusing.withLock { $0 = true }
        let refused = device.driver.setBackgroundRefreshSaying(false, for: testApp)
        #expect(refused.changed == false)
        #expect(refused.problem?.contains("could not save the Background App Refresh switch (off); it stays on") == true, "\(String(describing: refused.problem))")
        #expect(device.driver.backgroundRefreshEnabled(for: testApp))
        store.refusing.withLock { $0 = false }
        let taken = device.driver.setBackgroundRefreshSaying(false, for: testApp)
        #expect(taken.changed == true && taken.problem == nil)
    }
}
