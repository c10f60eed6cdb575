import BackgroundTasks
@testable import BackgroundTasksTesting
import Foundation
import SchedulerCore
import Testing

/// A reader who opens the app every few minutes in three hours a day (docs/lives/burst-checker.json,
/// found from outside the project): every plan spent its 24 hours afresh, and the days spent
/// 25 background launches for a budget of 22 (the wakeups goal's bound was 23.7). The launch
/// ledger makes the placement spend less while the last week spent more (docs/policies.md,
/// "What a day really spends").
@Suite("Launch budget") struct LaunchBudgetTests {
    @Test func aBurstReadersWeeksStayWithinTheRefreshBudget() throws {
        let life = try Scenario.load(from: BaselineComparisonTests.livesDirectory.appendingPathComponent("burst-checker.json"))
        let start = Simulation.defaultStart
        let budget = UsageModelConfiguration().refreshBudgetShare * 86_400 / UsageModel.standardRefreshInterval
        for seed: UInt64 in [1, 2] {
            let script = life.script(start: start, days: 21, seed: seed)
            var device = ModelledDevice(apps: [ModelledApp.feedReader()], script: script,
                                        options: .init(configuration: .simulation(environment: [:]), recordsTrace: false))
            // The first week learns the habit (and spends as the budget allows while it is unsure).
            device.run(until: start.addingTimeInterval(7 * 86_400))
            let learned = device.wakeups
            device.run(until: script.end)
            let perDay = Double(device.wakeups - learned) / 14
            #expect(perDay <= budget, "seed \(seed): \(perDay) background launches a day in weeks 2-3, budget \(budget)")
        }
    }
}
