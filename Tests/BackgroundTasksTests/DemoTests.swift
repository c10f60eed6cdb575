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
        // 96 quarter hours; the policies (throttling after the expired clean-up, coalescing)
        // move a few, and never run two within 15 minutes of each other.
        #expect((85...96).contains(refreshes.count), "\(refreshes.count) refreshes")
        for (earlier, later) in zip(refreshes, refreshes.dropFirst()) {
            #expect(later.startedAt.timeIntervalSince(earlier.startedAt) >= 15 * 60)
        }
        let failures = refreshes.filter { $0.outcome != .success }
        #expect(!failures.isEmpty)
        for failure in failures {
            let hour = failure.startedAt.timeIntervalSince(testStart) / 3600
            #expect((7..<7.67).contains(hour) || (17.5..<18.17).contains(hour), "refresh failed at hour \(hour), outside a commute")
        }
    }

    @Test func cleanupExpiresThenResumesFromItsCheckpointOnPower() async throws {
        let device = try await simulateDay()
        let cleanups = device.runs(of: FeedReader.cleanupIdentifier)
        #expect(cleanups.map(\.outcome) == [.expired, .success])
        let resumed = try #require(cleanups.last?.startedAt.timeIntervalSince(testStart))
        // Waits for the charger at 23:00, then herd spreading picks its turn within 10 minutes.
        #expect(resumed >= 23 * 3600 && resumed <= 23 * 3600 + 600, "resumed at \(resumed / 3600) h")
        #expect(cleanups.allSatisfy { $0.startedAt.timeIntervalSince(testStart) < 7 * 3600 || $0.startedAt.timeIntervalSince(testStart) >= 23 * 3600 })
    }

    @Test func sameScriptGivesTheSameTraceEveryTime() async throws {
        let first = try await simulateDay().trace
        let second = try await simulateDay().trace
        #expect(first == second)
    }
}
