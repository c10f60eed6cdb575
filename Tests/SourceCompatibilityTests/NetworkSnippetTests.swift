import BackgroundTasks
import BackgroundTasksTesting
import Foundation
import IOSShapedApp
import Network
import SchedulerCore
import Synchronization
import Testing

/// What NetworkSnippets.swift and the Swift 5 ConnectivityMonitor compile, run on a
/// simulated device whose network changes.
@Suite struct NetworkSnippetTests {
    static let start = Date(timeIntervalSince1970: 1_796_083_200)

    /// Yields until `condition` holds: the service's task runs on the cooperative pool, not
    /// on the simulator's clock. Gives up (failing) after 60 s of wall time, never hangs: the
    /// pool has a thread per core, and in a full `swift test` other suites' blocking waits
    /// held it for more than 10 s (CI has two cores).
    static func waitUntil(_ condition: () async -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while !(await condition()) {
            guard ContinuousClock.now < deadline else {
                Issue.record("the condition did not hold within 60 s")
                return
            }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    @Test func aGateWithoutCellularAnswersFromItsFirstPath() async throws {
        let device = try SimulatedDevice(start: Self.start, conditions: Conditions(externalPower: true, networkAvailable: true, networkMetered: true))
        let app = AppID("com.example.gate")
        let answers = Mutex<[Bool]>([])
        let manifest = AppManifest(appID: app, permittedIdentifiers: ["com.example.gate.refresh"], backgroundModes: ["fetch"], source: "test")
        let context = device.install(app: app, manifest: manifest) {}
        context.withCurrent { checkNetworkWithoutCellular { answer in answers.withLock { $0.append(answer) } } }
        await device.run(for: 1)
        device.setConditions(Conditions(externalPower: true, networkAvailable: true, networkMetered: false))
        context.withCurrent { checkNetworkWithoutCellular { answer in answers.withLock { $0.append(answer) } } }
        await device.run(for: 1)
        #expect(answers.withLock { $0 } == [false, true])
    }

    @Test func theStatusNamesAndLinkNamesOfBothLanguageModes() {
        #expect(ConnectivityMonitor.describe(.satisfied) == "online")
        #expect(ConnectivityMonitor.describe(.requiresConnection) == "waiting")
        #expect(statusServer.debugDescription == "status.example.com:443")
        #expect(localGateway?.debugDescription == "192.168.1.1")
    }

    /// A modelled app whose refresh handler uses the Swift 5 gate: it fetches on Wi-Fi and
    /// skips on a metered network.
    @Test func aRefreshGatedOnAnUnmeteredNetworkFetchesOnlyOffCellular() async throws {
        let device = try SimulatedDevice(start: Self.start, conditions: Conditions(externalPower: true, networkAvailable: true, networkMetered: true))
        let app = AppID("com.example.gated")
        let identifier = "com.example.gated.refresh"
        let fetches = Mutex(0)
        let manifest = AppManifest(appID: app, permittedIdentifiers: [identifier], backgroundModes: ["fetch"], source: "test")
        device.install(app: app, manifest: manifest) {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { task in
                ConnectivityMonitor.handleRefresh(task as! BGAppRefreshTask) { done in
                    fetches.withLock { $0 += 1 }
                    done(true)
                }
                try? BGTaskScheduler.shared.submit(BGAppRefreshTaskRequest(identifier: identifier))
            }
            try? BGTaskScheduler.shared.submit(BGAppRefreshTaskRequest(identifier: identifier))
        }
        await device.run(for: 6 * 3_600)
        let metered = device.runs(of: identifier).count
        #expect(metered > 0, "the refresh ran on the metered network")
        #expect(fetches.withLock { $0 } == 0, "and fetched nothing there")
        device.setConditions(Conditions(externalPower: true, networkAvailable: true, networkMetered: false))
        await device.run(for: 6 * 3_600)
        #expect(device.runs(of: identifier).count > metered)
        #expect(fetches.withLock { $0 } > 0, "on Wi-Fi it fetched")
    }

    @Test func theReachabilityServiceFollowsTheSimulatedNetworkUntilCancelled() async throws {
        let device = try SimulatedDevice(start: Self.start, conditions: Conditions(externalPower: true, networkAvailable: true, networkMetered: false))
        let app = AppID("com.example.reach")
        let made = Mutex<NWPathMonitor?>(nil)
        let manifest = AppManifest(appID: app, permittedIdentifiers: ["com.example.reach.refresh"], backgroundModes: ["fetch"], source: "test")
        device.install(app: app, manifest: manifest) {
            made.withLock { $0 = NWPathMonitor() }
        }
        let monitor = try #require(made.withLock { $0 })
        let service = ReachabilityService()
        let following = Task { await service.follow(monitor) }
        // The first path is yielded when the sequence starts; wait for it without the clock.
        try await Self.waitUntil { await service.updates >= 1 }
        #expect(await service.latest == ReachabilityStatus(online: true, link: "Wi-Fi", expensive: false))
        device.setConditions(Conditions(externalPower: true, networkAvailable: true, networkMetered: true), at: Self.start + 60)
        await device.run(for: 120)
        try await Self.waitUntil { await service.updates >= 2 }
        #expect(await service.latest == ReachabilityStatus(online: true, link: "Cellular", expensive: true))
        monitor.cancel()
        await following.value
        #expect(await service.updates == 2)
    }
}
