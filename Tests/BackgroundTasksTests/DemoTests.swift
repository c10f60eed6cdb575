import BackgroundTasks
import BackgroundTasksTesting
import FeedReaderExample
import Foundation
import Testing

@Suite struct FeedReaderSimulationTests {
    /// The example app through the demo's day; returns the device.
    private func simulateDay() async throws -> SimulatedDevice {
        let start = testStart
        let device = try SimulatedDevice(start: start, conditions: DemoDay.midnight)
        let reader = FeedReader(service: SimulatedFeedService(device: device), workClock: device.swiftClock, database: FeedDatabase(backlog: 8_000))
        device.install(app: FeedReader.manifest.appID!, manifest: FeedReader.manifest) { reader.didFinishLaunching() }
        DemoDay.script(device, from: start)
        await device.run(until: start.addingTimeInterval(86_400))
        return device
    }

    @Test func refreshRunsEveryFifteenMinutesAndFailsOnlyWithoutNetwork() async throws {
        let device = try await simulateDay()
        let refreshes = device.runs(of: FeedReader.refreshIdentifier)
        #expect(refreshes.count == 95)
        let failures = refreshes.filter { $0.outcome != .success }
        #expect(failures.count == 6)
        for failure in failures {
            let hour = failure.startedAt.timeIntervalSince(testStart) / 3600
            #expect((7..<7.67).contains(hour) || (17.5..<18.17).contains(hour), "refresh failed at hour \(hour), outside a commute")
        }
    }

    @Test func cleanupExpiresThenResumesFromItsCheckpointOnPower() async throws {
        let device = try await simulateDay()
        let cleanups = device.runs(of: FeedReader.cleanupIdentifier)
        #expect(cleanups.map(\.outcome) == [.expired, .success])
        #expect(cleanups.last?.startedAt == testStart.addingTimeInterval(23 * 3600), "waits for the charger at 23:00")
        #expect(cleanups.allSatisfy { $0.startedAt.timeIntervalSince(testStart) < 7 * 3600 || $0.startedAt.timeIntervalSince(testStart) >= 23 * 3600 })
    }

    @Test func sameScriptGivesTheSameTraceEveryTime() async throws {
        let first = try await simulateDay().trace
        let second = try await simulateDay().trace
        #expect(first == second)
    }
}
