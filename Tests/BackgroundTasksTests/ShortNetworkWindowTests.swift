import BackgroundTasks
@testable import BackgroundTasksTesting
import Foundation
import SchedulerCore
import Testing

/// A device online a few minutes a day (found from outside the project: herd spreading's turn and
/// the usage policy's placement both came after the network had gone, every day): from the
/// second day on, the device's own history of network stays puts the refresh inside the
/// window (docs/policies.md, "Short network stays").
@Suite("Short network windows") struct ShortNetworkWindowTests {
    /// On power all day, online from 03:17 for `minutes` a day, opened at 03:40 and at 15:00.
    static func life(minutes: Int) -> Scenario {
        Scenario(name: "window-\(minutes)", battery: .init(level: 0.9, drainPerHour: 0.01, chargePerHour: 0.5), days: [
            .init(power: [.init(from: 0, to: 1440)], network: [.init(from: 197, to: 197 + minutes)],
                  launches: [.init(at: 220, minutes: 10), .init(at: 900)]),
        ])
    }

    @Test(arguments: [2, 5, 10])
    func everyDayAfterTheFirstRefreshesInTheWindow(minutes: Int) throws {
        let days = 6
        let start = Simulation.defaultStart
        for seed: UInt64 in [1, 2, 3] {
            let script = Self.life(minutes: minutes).script(start: start, days: days, seed: seed)
            var device = ModelledDevice(apps: [ModelledApp.feedReader()], script: script,
                                        options: .init(configuration: .simulation(environment: [:]), recordsTrace: false))
            device.run(until: script.end)
            let refreshes = device.runs.filter { $0.identifier == "com.example.feedreader.refresh" && $0.success == true }
            for day in 1..<days {
                let window = start.addingTimeInterval(Double(day) * 86_400 + 197 * 60)
                let ran = refreshes.contains { $0.startedAt >= window && $0.startedAt < window.addingTimeInterval(Double(minutes) * 60) }
                #expect(ran, "window of \(minutes) min, seed \(seed), day \(day): no successful refresh in it")
            }
        }
    }
}
