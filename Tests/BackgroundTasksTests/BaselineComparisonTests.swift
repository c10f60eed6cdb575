@testable import bgtask
import BackgroundTasks
@testable import BackgroundTasksTesting
import FeedReaderExample
import Foundation
import SchedulerCore
import Testing

/// The full policy against the two timers (`bgtask simulate --compare-baselines`), and the
/// lives of `docs/lives/` that the comparison is played on.
@Suite("Baseline comparison") struct BaselineComparisonTests {
    /// The repository's `docs/lives/`, found from this file.
    static let livesDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/lives")

    static var lifeFiles: [URL] {
        ((try? FileManager.default.contentsOfDirectory(at: livesDirectory, includingPropertiesForKeys: nil)) ?? [])
            .filter { $0.pathExtension == "json" }.sorted { $0.path < $1.path }
    }

    // MARK: The timers

    @Test func theTimerHoldsARefreshUntilItsIntervalAfterTheSubmission() {
        let submitted = Date(timeIntervalSince1970: 1_800_000_000)
        let refresh = PendingRequest(app: AppID("com.example.app"), identifier: "com.example.app.refresh", kind: .appRefresh,
                                     earliestBeginDate: submitted.addingTimeInterval(900), submittedAt: submitted)
        let timer = TimerBaselinePolicy(interval: 3600)
        func verdict(_ request: PendingRequest, at now: Date) -> (verdict: PolicyVerdict, wait: PolicyWait?) {
            timer.verdict(PolicyContext(request: request, now: now, eligibleSince: request.earliestBeginDate ?? now, conditions: .favorable,
                                        app: AppPolicyState(usage: UsageModel(createdAt: submitted))))
        }
        #expect(verdict(refresh, at: submitted.addingTimeInterval(900)).verdict == .mustNotProceed)
        #expect(verdict(refresh, at: submitted.addingTimeInterval(900)).wait == .until(submitted.addingTimeInterval(3600)))
        #expect(verdict(refresh, at: submitted.addingTimeInterval(3600)).verdict == .canProceed(score: 1))
        var processing = refresh
        processing.kind = .processing
        #expect(verdict(processing, at: submitted).verdict == .canProceed(score: 1), "only refreshes follow the timer")
        // The timers obey what the device forbids, and nothing else.
        #expect(PolicySet.deviceRulesOnly().policies.map(\.name) == ["requires-external-power", "requires-network", "critical-battery", "low-power-mode"])
        #expect(PolicySet.deviceRulesOnly(timerInterval: 60).policies.map(\.name).last == "timer")
        #expect(PolicySet.deviceRulesOnly().configuration.coalescingTolerance == 0 && PolicySet.deviceRulesOnly().configuration.herdSpreadWindow == 0)
    }

    // MARK: The comparison

    @Test func aLifeWithoutLaunchesHasEveryKeyWithNullStaleness() async throws {
        let quiet = Scenario(name: "quiet", days: [.init(network: [.init(from: 0, to: 1440)])])
        let comparison = try await BaselineComparison.run(scenario: quiet, days: 2, seeds: [1])
        #expect(comparison.policy.stalenessMedianMinutes == nil && comparison.policy.launches == 0)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(comparison.json().utf8)) as? [String: Any])
        for key in ["policy", "timer15", "equalBudgetTimer"] {
            let figures = try #require(json[key] as? [String: Any], "\(key)")
            #expect(figures["stalenessMedianMinutes"] is NSNull && figures["stalenessP90Minutes"] is NSNull, "\(key): \(figures)")
            #expect(Set(figures.keys) == ["stalenessMedianMinutes", "stalenessP90Minutes", "wakeupsPerDay", "joulesPerDay", "launches", "launchesWithoutContent", "refreshesPerDay"])
        }
        // The staleness goals do not hold, and the text says why.
        #expect(!comparison.goals.median && !comparison.goals.p90)
        let text = comparison.text()
        #expect(text.contains("goal 2, median <= 1.25 x the 15-min timer's: n/a vs n/a  MISS (no launches: nothing to compare)"), "\(text)")
        #expect(text.contains("goal 3, p90 <= the equal-budget timer's: n/a vs n/a  MISS (no launches: nothing to compare)"), "\(text)")
    }

    @Test func launchesWithoutContentCountAsStalerThanAnyContent() async throws {
        func figures(median: Double?, p90: Double?, launches: Int = 100, withoutContent: Int = 0) -> BaselineComparison.Figures {
            .init(stalenessMedianMinutes: median, stalenessP90Minutes: p90, wakeupsPerDay: 1, joulesPerDay: 1,
                  launches: launches, launchesWithoutContent: withoutContent, refreshesPerDay: 1)
        }
        let fed = figures(median: 10, p90: 60)
        // The launch at the policy's median and p90 found no content: it cannot pass on ages.
        let starved = figures(median: nil, p90: nil, withoutContent: 70)
        let goals = BaselineComparison.Goals.judging(policy: starved, timer15: fed, equalBudgetTimer: fed)
        #expect(!goals.median && !goals.p90)
        #expect(starved.stalenessText(\.stalenessMedianMinutes) == "no content")
        // Worse at p90 only where the timer fed every launch.
        let fewUnfed = figures(median: 5, p90: nil, withoutContent: 20)
        let both = BaselineComparison.Goals.judging(policy: fewUnfed, timer15: fed, equalBudgetTimer: fed)
        #expect(both.median && !both.p90)
        // No scheduler fed the launch at the rank: the smaller share without content wins.
        #expect(BaselineComparison.Goals.judging(policy: starved, timer15: starved, equalBudgetTimer: starved).median)
        let allStarved = figures(median: nil, p90: nil, withoutContent: 100)
        let halfStarved = figures(median: nil, p90: nil, withoutContent: 51)
        #expect(!BaselineComparison.Goals.judging(policy: allStarved, timer15: halfStarved, equalBudgetTimer: halfStarved).median)
        #expect(BaselineComparison.Goals.judging(policy: halfStarved, timer15: allStarved, equalBudgetTimer: allStarved).p90)
        // Every launch without content under both schedulers (a device never online): "no
        // worse" would be vacuous, so nothing passes, and the verdict says why (an outside
        // probe saw PASS for all three goals on such a life).
        #expect(!BaselineComparison.Goals.judging(policy: allStarved, timer15: allStarved, equalBudgetTimer: allStarved).median)
        #expect(!BaselineComparison.Goals.judging(policy: allStarved, timer15: allStarved, equalBudgetTimer: allStarved).p90)
        #expect(BaselineComparison.verdict(false, comparing: allStarved, allStarved) == "MISS (no launch found content under either scheduler: nothing to compare)")
        // A fed launch under either scheduler of a goal is something to compare: the smaller
        // share without content wins.
        #expect(!BaselineComparison.Goals.judging(policy: allStarved, timer15: halfStarved, equalBudgetTimer: allStarved).median)
        #expect(BaselineComparison.Goals.judging(policy: halfStarved, timer15: allStarved, equalBudgetTimer: allStarved).median)
        // No launch at all: nothing is compared, and nothing passes.
        let none = figures(median: nil, p90: nil, launches: 0)
        #expect(!BaselineComparison.Goals.judging(policy: none, timer15: none, equalBudgetTimer: none).median)
        #expect(none.stalenessText(\.stalenessP90Minutes) == "n/a")

        // End to end: three launches on an offline first day, one on a connected second:
        // the median launch found no content (the fed launch alone has an age).
        let late = Scenario(name: "late network", days: [
            .init(network: [], launches: [.init(at: 600), .init(at: 660), .init(at: 720)]),
            .init(network: [.init(from: 0, to: 1440)], launches: [.init(at: 720)]),
        ])
        let comparison = try await BaselineComparison.run(scenario: late, days: 2, seeds: [1])
        for figures in [comparison.policy, comparison.timer15] {
            #expect(figures.launches == 4 && figures.launchesWithoutContent == 3, "\(figures)")
            #expect(figures.stalenessMedianMinutes == nil && figures.stalenessP90Minutes == nil, "\(figures)")
        }
        #expect(comparison.text().contains("no content"))
    }

    @Test func anEqualBudgetTimerThatCouldNotMatchThePolicyIsSaidToBeNone() throws {
        func figures(wakeups: Double) -> BaselineComparison.Figures {
            .init(stalenessMedianMinutes: 10, stalenessP90Minutes: 60, wakeupsPerDay: wakeups, joulesPerDay: 1,
                  launches: 10, launchesWithoutContent: 0, refreshesPerDay: 1)
        }
        #expect(BaselineComparison.equalBudgetMatches(policy: figures(wakeups: 10), equalBudgetTimer: figures(wakeups: 10.9)))
        #expect(BaselineComparison.equalBudgetMatches(policy: figures(wakeups: 0), equalBudgetTimer: figures(wakeups: 0.05)))
        // A policy that wakes less than any timer does (the network comes once a day, and every
        // timer wakes for it): the closest timer is the 15-minute one.
        let unmatched = BaselineComparison(
            scenario: "window", days: 2, seeds: [1], app: AppID("com.example.feedreader"), policy: figures(wakeups: 0.3),
            timer15: figures(wakeups: 1), equalBudgetTimer: figures(wakeups: 1), equalBudgetInterval: 15 * 60)
        #expect(!unmatched.equalBudgetMatched)
        #expect(unmatched.text().contains("note: no timer interval tried between 15 min and 7 d woke the device within a tenth as often as the policy (0.3 a day): the closest, every 15 min, wakes it 1.0 a day"))
        #expect(HTMLReport.render(unmatched).contains("Note: no timer interval"))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(unmatched.json().utf8)) as? [String: Any])
        #expect(json["equalBudgetMatched"] as? Bool == false)
        var matched = unmatched
        matched.policy = figures(wakeups: 1)
        #expect(!matched.text().contains("note:") && matched.equalBudgetMatched)
        // A fleet's report says so too: a fleet that never woke against timers that did.
        let fleet = FleetComparison(policyRun: FleetResult(devices: 1, days: 1, freshWithin: 1200), timer15: figures(wakeups: 1),
                                    equalBudgetTimer: figures(wakeups: 1), equalBudgetInterval: 15 * 60)
        #expect(FleetCommand.baselineRows(fleet).contains { $0.name == "note on the equal-budget timer" && $0.value.hasPrefix("no timer interval tried") })
    }

    @Test func theComparisonMatchesTheEqualBudgetTimerToThePolicysWakeups() async throws {
        let scenario = try #require(Scenario.builtIn(named: "commuter"))
        let comparison = try await BaselineComparison.run(scenario: scenario, days: 4, seeds: [1, 2])
        #expect(comparison.timer15.wakeupsPerDay > 3 * comparison.policy.wakeupsPerDay)
        // The equal-budget timer spends what the policy spends, within a few percent.
        #expect(abs(comparison.equalBudgetTimer.wakeupsPerDay - comparison.policy.wakeupsPerDay) <= 0.1 * comparison.policy.wakeupsPerDay)
        #expect(comparison.equalBudgetInterval > 15 * 60)
        #expect(comparison.policy.launches == comparison.timer15.launches, "the same lives: the same launches")
        let goals = comparison.goals
        #expect(goals.wakeups == (comparison.policy.wakeupsPerDay <= comparison.timer15.wakeupsPerDay / 4))
        #expect(goals.median == (comparison.policy.stalenessMedianMinutes! <= 1.25 * comparison.timer15.stalenessMedianMinutes!))
        #expect(goals.p90 == (comparison.policy.stalenessP90Minutes! <= comparison.equalBudgetTimer.stalenessP90Minutes!))
        // JSON with the documented keys.
        let json = try #require(try JSONSerialization.jsonObject(with: Data(comparison.json().utf8)) as? [String: Any])
        for key in ["policy", "timer15", "equalBudgetTimer"] {
            let figures = try #require(json[key] as? [String: Any], "\(key)")
            for field in ["stalenessMedianMinutes", "stalenessP90Minutes", "wakeupsPerDay", "joulesPerDay", "launches", "launchesWithoutContent"] {
                #expect(figures[field] != nil, "\(key).\(field)")
            }
        }
        let goalsJSON = try #require(json["goals"] as? [String: Bool])
        #expect(goalsJSON == ["wakeups": goals.wakeups, "median": goals.median, "p90": goals.p90])
        #expect(comparison.text().contains("timer, equal budget"))
    }

    @Test func realHandlersCompareToo() async throws {
        let scenario = try #require(Scenario.builtIn(named: "night-charger"))
        let comparison = try await BaselineComparison.run(scenario: scenario, days: 2, seeds: [3], subject: .real(app: AppID("com.example.feedreader")) { device in
            FeedReader.install(on: device)
        })
        #expect(comparison.policy.launches > 0)
        #expect(comparison.timer15.wakeupsPerDay > comparison.policy.wakeupsPerDay)
    }

    // MARK: The command

    @Test func compareBaselinesDefaultsToFourWeeksOfFiveSeedsOfTheModelledApp() {
        #expect(SimulateCommand.parse(["commuter", "--compare-baselines"]) == .success(.init(scenario: "commuter", apps: [], days: 28, compareSeeds: 1...5)))
        #expect(SimulateCommand.parse(["office", "--compare-baselines", "--days", "3", "--seeds", "2-4", "--json", "--app", "feedreader"])
            == .success(.init(scenario: "office", apps: ["feedreader"], days: 3, json: true, compareSeeds: 2...4)))
        #expect(SimulateCommand.parse(["office", "--compare-baselines", "--seed", "9"]) == .success(.init(scenario: "office", apps: [], days: 28, compareSeeds: 9...9)))
        #expect(SimulateCommand.parse(["office", "--compare-baselines", "--seeds", "7"]) == .success(.init(scenario: "office", apps: [], days: 28, compareSeeds: 7...7)))
    }

    @Test(arguments: [
        (["commuter", "--seeds", "1-5"], "--seeds goes with --compare-baselines"),
        (["commuter", "--compare-baselines", "--seeds", "1-5", "--seed", "2"], "--seeds and --seed cannot be combined"),
        (["commuter", "--compare-baselines", "--seeds", "5-1"], "the first seed must not be above the last"),
        (["commuter", "--compare-baselines", "--seeds", "1-500"], "more than the 100 seeds"),
        (["commuter", "--compare-baselines", "--seeds", "a-b"], "--seeds must be a seed or a range A-B"),
        (["commuter", "--compare-baselines", "--seeds", "1-"], "got '1-'"),
        (["commuter", "--compare-baselines", "--app", "a.json", "--app", "b.json"], "measures one app"),
    ])
    func compareBaselinesUsageErrorsNameTheCulprit(arguments: [String], message: String) throws {
        guard case .failure(let error) = SimulateCommand.parse(arguments) else {
            Issue.record("\(arguments) parsed")
            return
        }
        #expect(error.message.contains(message), "\(error.message)")
    }

    @Test func theCommandPrintsTheComparison() async throws {
        let options = try SimulateCommand.parse(["night-charger", "--compare-baselines", "--days", "2", "--seeds", "1-2"]).get()
        let text = try await SimulateCommand.run(options)
        #expect(text.contains("night-charger: 2 days x seeds 1-2"))
        #expect(text.contains("goal 3, p90 <= the equal-budget timer's"))
        let json = try await SimulateCommand.run(try SimulateCommand.parse(["night-charger", "--compare-baselines", "--days", "2", "--seeds", "1", "--json"]).get())
        #expect(json.hasPrefix("{") && json.contains("\"equalBudgetTimer\""))
    }

    @Test func theComparisonIsAlsoAnHTMLReport() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-compare-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("compare.html").path
        let options = try SimulateCommand.parse(["night-charger", "--compare-baselines", "--days", "2", "--seeds", "1", "--report", path]).get()
        #expect(options.report == path)
        let text = try await SimulateCommand.run(options)
        #expect(text.hasSuffix("comparison report written to \(path)\n"))
        let html = try String(contentsOfFile: path, encoding: .utf8)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        for piece in ["night-charger: the policy against plain timers", "timer, 15 min", "timer, equal budget", "p90 no worse than the equal-budget timer", "Wakeups a day"] {
            #expect(html.contains(piece), "\(piece)")
        }
        // Each of the three goals with its verdict (which one a two-day run passes is not
        // what this test is about).
        let verdicts = html.components(separatedBy: "PASS").count - 1 + html.components(separatedBy: "MISS").count - 1
        #expect(verdicts >= 3, "\(verdicts) verdicts")
        #expect(!html.contains("<script"), "self-contained, no scripts")
    }

    // MARK: Lives nobody tuned for

    /// Every life in docs/lives parses, plays, and is compared (a quick version: a week,
    /// one seed). The goals are printed by bgtask-bench h over 28 days and seeds 1-5; they
    /// do not hold on every life yet (issue 10), so this checks the comparison runs and
    /// its figures are sane, not the goals.
    @Test func everyLifeInTheDocsPlaysAndCompares() async throws {
        let files = Self.lifeFiles
        #expect(files.count >= 8, "docs/lives holds \(files.count) lives")
        for file in files {
            let scenario = try Scenario.load(from: file)
            #expect(scenario.name == file.deletingPathExtension().lastPathComponent)
            #expect(Scenario.builtIn(named: scenario.name) == nil, "\(scenario.name) is a built-in")
            let comparison = try await BaselineComparison.run(scenario: scenario, days: 7, seeds: [1])
            #expect(comparison.policy.launches > 0, "\(scenario.name): no launch in a week")
            #expect(comparison.timer15.wakeupsPerDay > comparison.policy.wakeupsPerDay, "\(scenario.name)")
        }
    }
}
