import BackgroundTasks
import BackgroundTasksTesting
import FeedReaderExample
import Foundation
import SchedulerCore
import Synchronization
import Testing

/// A simulated device ends without leaving anything alive, though app code holds it.
@Suite struct SimulatedDeviceShutdownTests {
    /// Where a test keeps a device (and a context) it lets go of later.
    final class Holder: Sendable {
        let device = Mutex<SimulatedDevice?>(nil)
        let context = Mutex<BGAppContext?>(nil)
    }

    /// Whether `released()` becomes true within two seconds: the last references may go
    /// a moment after the device's work settled, on the thread that ran it.
    static func eventually(_ released: () -> Bool) async -> Bool {
        for _ in 0..<200 {
            if released() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return released()
    }

    @Test func aFinishedSimulationLeavesNothingAlive() async throws {
        // The feed reader's handlers and its simulated service hold the device, and the
        // device and its driver hold the app: the simulation's end must break that.
        weak var device: SimulatedDevice?
        weak var driver: SchedulerDriver?
        weak var clock: VirtualClock?
        weak var context: BGAppContext?
        do {
            let holder = Holder()
            let app = AppID("com.example.feedreader")
            _ = try await Simulation(scenario: try #require(Scenario.builtIn(named: "commuter")), days: 1, seed: 1).run { device in
                holder.device.withLock { $0 = device }
                FeedReader.install(on: device)
                holder.context.withLock { $0 = device.context(of: app) }
            }
            let played = try #require(holder.device.withLock { held in defer { held = nil }; return held })
            (device, driver, clock) = (played, played.driver, played.clock)
            context = holder.context.withLock { held in defer { held = nil }; return held }
        }
        #expect(await Self.eventually { device == nil && driver == nil && clock == nil && context == nil }, "a simulation's device outlived it")
    }

    @Test func shuttingDownMidRunEndsTheHandlerAndFreesTheDevice() async throws {
        // An async handler that holds the device sleeps for an hour on its clock when the
        // device shuts down: its run expires, its sleep is cancelled, and all is freed.
        weak var device: SimulatedDevice?
        weak var driver: SchedulerDriver?
        let outcome = Mutex<Bool?>(nil)
        do {
            let holder = Holder()
            let (made, context) = try makeDevice {
                BGTaskScheduler.shared.register(forTaskWithIdentifier: processingID) { _ in
                    let held = holder.device.withLock { $0 }!
                    do {
                        try await held.work(for: 3600)
                        outcome.withLock { $0 = true }
                        return true
                    } catch {
                        outcome.withLock { $0 = false }
                        return false
                    }
                }
            }
            holder.device.withLock { $0 = made }
            try submit(BGProcessingTaskRequest(identifier: processingID), in: context)
            await made.run(for: 60)
            #expect(made.driver.activeRuns.count == 1, "the handler sleeps")
            holder.device.withLock { $0 = nil }
            await made.shutDown()
            (device, driver) = (made, made.driver)
        }
        #expect(outcome.withLock { $0 } == false, "the sleep was cancelled")
        #expect(await Self.eventually { device == nil && driver == nil }, "a device shut down mid-run outlived it")
    }

    @Test func aDeviceATestBuiltIsFreedByShutDown() async throws {
        // Its driver and the app's context hold each other until shutDown().
        weak var device: SimulatedDevice?
        weak var driver: SchedulerDriver?
        weak var clock: VirtualClock?
        do {
            let app = AppID("com.example.bare")
            let bare = try SimulatedDevice(start: testStart, configuration: .simulation(environment: [:]))
            bare.install(app: app, manifest: AppManifest(appID: app, permittedIdentifiers: [], backgroundModes: [])) {}
            await bare.run(until: testStart.addingTimeInterval(3600))
            (device, driver, clock) = (bare, bare.driver, bare.clock)
            await bare.shutDown()
        }
        #expect(await Self.eventually { device == nil && driver == nil && clock == nil }, "a device's driver outlived its shutDown")
    }
}
