import BackgroundTasks
import BackgroundTasksTesting
import FeedReaderExample
import Foundation

/// `bgtask demo`: the example app's real handlers through simulated days.
enum Demo {
    static func run(days: Int) async throws -> String {
        // A fixed midnight (UTC) so every run prints the same timeline.
        let start = Date(timeIntervalSince1970: 1_796_083_200)  // 2026-12-01 00:00 UTC
        let device = try SimulatedDevice(start: start, conditions: DemoDay.midnight)
        let service = SimulatedFeedService(device: device)
        // A large backlog: the first clean-up cannot finish in its 10 minutes, expires,
        // and the next one resumes from its checkpoint.
        let reader = FeedReader(service: service, workClock: device.swiftClock, database: FeedDatabase(backlog: 8_000))
        let context = device.install(app: FeedReader.manifest.appID!, manifest: FeedReader.manifest) {
            reader.didFinishLaunching()
        }
        for day in 0..<days {
            let midnight = start.addingTimeInterval(Double(day) * 86_400)
            if day > 0 { device.setConditions(DemoDay.midnight, at: midnight) }
            DemoDay.script(device, from: midnight)
            // The user opens the app at lunch, writes a draft, and leaves it.
            device.schedule(at: midnight.addingTimeInterval(12 * 3600)) {
                context.withCurrent { context.application.enterForeground() }
            }
            device.schedule(at: midnight.addingTimeInterval(12 * 3600 + 300)) {
                context.withCurrent {
                    context.application.enterBackground()
                    reader.didEnterBackground()
                }
            }
        }
        let began = ContinuousClock.now
        await device.run(until: start.addingTimeInterval(Double(days) * 86_400))
        let elapsed = ContinuousClock.now - began

        var output = "bgtask demo: the example feed reader through \(days) simulated day\(days == 1 ? "" : "s")\n"
        output += "(refresh every 15 min; nightly clean-up needs network and power; a draft saved on backgrounding)\n\n"
        output += Timeline(trace: device.trace, start: start).render() + "\n\n"
        let runs = device.runs()
        for identifier in [FeedReader.refreshIdentifier, FeedReader.cleanupIdentifier] {
            let mine = runs.filter { $0.identifier == identifier }
            let outcomes = Dictionary(grouping: mine, by: { $0.outcome ?? .failure }).map { "\($0.value.count) \($0.key)" }.sorted()
            output += "\(identifier): \(mine.count) runs (\(outcomes.joined(separator: ", ")))\n"
        }
        let warnings = device.log.messages.filter { $0.level >= .warning }
        if !warnings.isEmpty {
            output += "\nwarnings:\n" + warnings.map { "  \($0)" }.joined(separator: "\n") + "\n"
        }
        output += "\nsimulated \(days * 24) h in \(elapsed.formatted(.units(allowed: [.milliseconds], width: .abbreviated)))\n"
        return output
    }
}
