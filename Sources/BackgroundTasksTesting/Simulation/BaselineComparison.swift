import Foundation
import SchedulerCore

/// A plain timer as a scheduler (docs/scenarios.md, "Comparing with timers"): what it
/// would do is run every refresh `interval` after the app submitted it, obeying only what
/// the device forbids. Apps resubmit their refresh first thing in its handler (the example
/// app and modelled apps do), so a refresh runs every `interval` while the device allows
/// it; with the example's 15-minute request and an interval of 15 minutes the timer adds
/// nothing to the request's own earliest begin date.
public struct TimerBaselinePolicy: SchedulingPolicy {
    public let name = "timer"
    /// How long after its submission a refresh runs.
    public let interval: TimeInterval

    /// A timer that runs each refresh `interval` after its submission.
    public init(interval: TimeInterval) { self.interval = interval }

    public func verdict(_ context: PolicyContext) -> (verdict: PolicyVerdict, wait: PolicyWait?) {
        guard context.request.kind == .appRefresh else { return (.canProceed(score: 1), nil) }
        let fires = context.request.submittedAt.addingTimeInterval(interval)
        return fires > context.now ? (.mustNotProceed, .until(fires)) : (.canProceed(score: 1), nil)
    }

    public func evaluate(_ context: PolicyContext) -> PolicyDecision {
        let (verdict, wait) = self.verdict(context)
        let rationale = context.request.kind != .appRefresh
            ? "the timer runs only refreshes on its own clock"
            : "a timer every \(DurationText.spoken(interval)) after the submission"
        return PolicyDecision(policy: name, verdict: verdict, rationale: rationale, wait: wait)
    }
}

extension PolicySet {
    /// What a device forbids and nothing else: required power, the network for work that
    /// needs it (refreshes fetch content), critical battery and Low Power Mode. No
    /// prediction, rate limit, budget, throttle, coalescing or herd spreading. With an
    /// `interval`, refreshes also wait for a ``TimerBaselinePolicy``.
    public static func deviceRulesOnly(timerInterval interval: TimeInterval? = nil) -> PolicySet {
        var policies: [any SchedulingPolicy] = [RequiredExternalPowerPolicy(), RequiredNetworkPolicy(), CriticalBatteryPolicy(), LowPowerModePolicy()]
        if let interval { policies.append(TimerBaselinePolicy(interval: interval)) }
        return PolicySet(configuration: PolicyConfiguration(herdSpreadWindow: 0, coalescingTolerance: 0), policies: policies)
    }
}

/// The full policy against two timers on one life (docs/scenarios.md, "Comparing with
/// timers"), over several seeds:
///
/// - **timer15**: every refresh 15 minutes after its submission (what the example app asks
///   for anyway), obeying only what the device forbids
///   (``PolicySet/deviceRulesOnly(timerInterval:)``);
/// - **equalBudgetTimer**: the same timer with the interval at which it wakes the device
///   as often as the policy did (found by bisection, over the same seeds).
///
/// The goals, which must hold on every life with one configuration: the policy wakes at
/// most a quarter as often as timer15, its median staleness at launch is at most 1.25 times
/// timer15's, and its p90 is no worse than the equal-budget timer's.
public struct BaselineComparison: Sendable {
    /// One scheduler's figures over every seed.
    public struct Figures: Hashable, Sendable, Encodable {
        /// Median age of the app's content at the user's launches (pooled over seeds), in
        /// minutes. A launch that found no content yet counts as older than any content, so
        /// nil (`null` in JSON) says that the launch at the median found none (or that there
        /// was no launch: ``launches`` is 0).
        @NullWhenAbsent public var stalenessMedianMinutes: Double?
        /// 90th percentile of the same (nil when the launch at that rank found no content).
        @NullWhenAbsent public var stalenessP90Minutes: Double?
        /// Device wakeups (instants at which runs started) per simulated day.
        public var wakeupsPerDay: Double
        /// Estimated joules of background runs per simulated day.
        public var joulesPerDay: Double
        /// The user's launches of the app, over every seed.
        public var launches: Int
        /// Launches before any refresh had succeeded (in the staleness figures as older
        /// than any content).
        public var launchesWithoutContent: Int
        /// Successful refreshes per simulated day.
        public var refreshesPerDay: Double

        /// The share of the launches that found no content (0 without launches).
        var unfedShare: Double { launches > 0 ? Double(launchesWithoutContent) / Double(launches) : 0 }

        /// Whether every scheduler of `compared` had launches and none of them found
        /// content: their staleness says nothing about which schedules better.
        static func noneFed(_ compared: [Figures]) -> Bool {
            compared.allSatisfy { $0.launches > 0 && $0.launchesWithoutContent == $0.launches }
        }

        /// Whether this scheduler's staleness `figure` is at most `factor` times `other`'s (a
        /// staleness goal, ``Goals/judging(policy:timer15:equalBudgetTimer:)``): a launch at
        /// the rank that found no content is infinitely stale, and when neither fed it the one
        /// that left the smaller share of launches without content is the fresher. Not when
        /// either had no launch, or neither fed any (nothing to compare).
        func holds(_ figure: KeyPath<Figures, Double?>, against other: Figures, within factor: Double) -> Bool {
            guard !Self.noneFed([self, other]), let mine = rankedStaleness(figure), let theirs = other.rankedStaleness(figure) else { return false }
            return mine.isInfinite && theirs.isInfinite ? unfedShare <= other.unfedShare : mine <= factor * theirs
        }

        /// A staleness figure for comparing: its value, infinity when the launch at its
        /// rank found no content, nil when there was no launch.
        func rankedStaleness(_ figure: KeyPath<Figures, Double?>) -> Double? {
            launches == 0 ? nil : self[keyPath: figure] ?? .infinity
        }

        /// A staleness figure for people: its minutes (times `factor`, for a goal's bound)
        /// followed by `unit`, "no content" (the launch at its rank found none) or "n/a" (no
        /// launch).
        public func stalenessText(_ figure: KeyPath<Figures, Double?>, times factor: Double = 1, unit: String = " min") -> String {
            guard let value = rankedStaleness(figure) else { return "n/a" }
            return value.isFinite ? String(format: "%.1f", value * factor) + unit : "no content"
        }
    }

    /// Whether each goal holds.
    public struct Goals: Hashable, Sendable, Encodable {
        /// Policy wakeups at most a quarter of timer15's.
        public var wakeups: Bool
        /// Policy median staleness at most 1.25 times timer15's.
        public var median: Bool
        /// Policy p90 staleness no worse than the equal-budget timer's.
        public var p90: Bool
        /// All three.
        public var all: Bool { wakeups && median && p90 }

        /// The goals of `policy` against the two timers. A launch that found no content is
        /// staler than any that found some: a figure without a value (the launch at its rank
        /// found none) is infinitely stale, so a policy that leaves launches without content
        /// where a timer fed them cannot pass on the ages of the few it fed. When neither fed
        /// the launch at the rank, the one that left the smaller share of launches without
        /// content is the fresher. A life without launches under some scheduler compares
        /// nothing, nor does one where no launch found content under either scheduler of a
        /// goal (a device never online: "no worse" would be vacuous): the staleness goals do
        /// not hold.
        public static func judging(policy: Figures, timer15: Figures, equalBudgetTimer: Figures) -> Goals {
            Goals(
                wakeups: policy.wakeupsPerDay <= timer15.wakeupsPerDay / 4,
                median: policy.holds(\.stalenessMedianMinutes, against: timer15, within: 1.25),
                p90: policy.holds(\.stalenessP90Minutes, against: equalBudgetTimer, within: 1))
        }
    }

    /// Which app is simulated.
    public enum Subject: Sendable {
        /// Apps whose handlers are modelled (by default the example feed reader's model).
        case modelled([ModelledApp])
        /// Real handler code, installed by this closure on each fresh device.
        case real(app: AppID, install: @Sendable (SimulatedDevice) throws -> Void)
    }

    /// The scenario's name.
    public var scenario: String
    /// Days simulated per seed.
    public var days: Int
    /// The seeds.
    public var seeds: [UInt64]
    /// The app whose staleness is measured.
    public var app: AppID
    /// The full policy's figures.
    public var policy: Figures
    /// The 15-minute timer's.
    public var timer15: Figures
    /// The equal-budget timer's.
    public var equalBudgetTimer: Figures
    /// The equal-budget timer's interval, in seconds.
    public var equalBudgetInterval: TimeInterval

    /// The goals, judged from the figures (``Goals/judging(policy:timer15:equalBudgetTimer:)``).
    public var goals: Goals { Goals.judging(policy: policy, timer15: timer15, equalBudgetTimer: equalBudgetTimer) }

    /// Whether the equal-budget timer woke the device about as often as the policy
    /// (``equalBudgetMatches(policy:equalBudgetTimer:)``).
    public var equalBudgetMatched: Bool { Self.equalBudgetMatches(policy: policy, equalBudgetTimer: equalBudgetTimer) }

    /// Whether `equalBudgetTimer` wakes the device about as often as `policy`: within a tenth
    /// (or 0.1 a day). No timer interval in ``intervalRange`` may come close: a policy that
    /// wakes less than a timer every 7 days would (clean-ups that need power wake it too), or
    /// more than the 15-minute timer. Goal 3 still compares with the closest timer; the
    /// outputs say that it is not an equal budget.
    public static func equalBudgetMatches(policy: Figures, equalBudgetTimer: Figures) -> Bool {
        abs(equalBudgetTimer.wakeupsPerDay - policy.wakeupsPerDay) <= max(0.1 * policy.wakeupsPerDay, 0.1)
    }

    /// The sentence that says the equal-budget timer is not one, or nil when it is.
    public static func equalBudgetNote(policy: Figures, equalBudgetTimer: Figures, interval: TimeInterval) -> String? {
        guard !equalBudgetMatches(policy: policy, equalBudgetTimer: equalBudgetTimer) else { return nil }
        return "no timer interval tried between \(DurationText.spoken(intervalRange.lowerBound)) and \(DurationText.spoken(intervalRange.upperBound)) woke the device within a tenth as often as the policy"
            + " (\(String(format: "%.1f", policy.wakeupsPerDay)) a day): the closest, every \(DurationText.spoken(interval)), wakes it"
            + " \(String(format: "%.1f", equalBudgetTimer.wakeupsPerDay)) a day, and goal 3 compares with it"
    }

    /// The shortest and longest intervals the equal-budget timer is looked for in.
    static let intervalRange: ClosedRange<TimeInterval> = 15 * 60...7 * 86_400

    /// The bisection, on a log scale, for the timer interval that wakes the device as often
    /// as the policy did (wakeups fall as the interval grows): ask ``next`` for an interval
    /// to try, ``record(_:for:)`` what it gave, until ``next`` is `nil`; ``best`` is the
    /// closest tried. At most 14 tries; done early within 1 % (or 0.05 a day).
    struct EqualBudgetSearch {
        let target: Double
        private var low = log(BaselineComparison.intervalRange.lowerBound)
        private var high = log(BaselineComparison.intervalRange.upperBound)
        private var tries = 0
        private var done = false
        /// The closest interval tried so far and its figures (timer15's to begin with).
        private(set) var best: (interval: TimeInterval, figures: Figures)

        /// A search for the policy's `target` wakeups a day, starting from timer15's figures.
        init(target: Double, timer15: Figures) {
            self.target = target
            best = (BaselineComparison.intervalRange.lowerBound, timer15)
        }

        /// The interval to try next, or `nil` when the search is over.
        var next: TimeInterval? { done || tries >= 14 ? nil : exp((low + high) / 2) }

        /// What the timer at `interval` gave.
        mutating func record(_ figures: Figures, for interval: TimeInterval) {
            tries += 1
            if abs(figures.wakeupsPerDay - target) < abs(best.figures.wakeupsPerDay - target) { best = (interval, figures) }
            if figures.wakeupsPerDay > target { low = log(interval) } else { high = log(interval) }
            if abs(figures.wakeupsPerDay - target) <= max(0.01 * target, 0.05) { done = true }
        }
    }

    /// Runs the comparison: `subject` through `scenario` for `days` days with each seed,
    /// under `policies` (the standard set by default), timer15 and the equal-budget timer.
    public static func run(
        scenario: Scenario, days: Int, seeds: [UInt64], subject: Subject = .modelled([.feedReader()]),
        policies: PolicySet = PolicySet()
    ) async throws -> BaselineComparison {
        let app: AppID
        switch subject {
        case .modelled(let apps): app = apps.first?.app ?? AppID("")
        case .real(let real, _): app = real
        }
        // One seed's simulation at a time, reduced to its figures at once: a comparison
        // keeps no simulation (a trace of real handlers is large) while it plays the next.
        func play(_ policies: PolicySet) async throws -> Figures {
            var tally = Tally()
            for seed in seeds {
                let simulation = Simulation(scenario: scenario, days: days, seed: seed, policies: policies)
                switch subject {
                case .modelled(let apps): tally.add(try simulation.run(modelled: apps, recordsTrace: false), app: app)
                case .real(_, let install): tally.add(try await simulation.run(installing: install), app: app)
                }
            }
            return tally.figures
        }
        let policy = try await play(policies)
        let timer15 = try await play(.deviceRulesOnly(timerInterval: 15 * 60))
        var search = EqualBudgetSearch(target: policy.wakeupsPerDay, timer15: timer15)
        while let interval = search.next {
            search.record(try await play(.deviceRulesOnly(timerInterval: interval)), for: interval)
        }
        return BaselineComparison(
            scenario: scenario.name, days: days, seeds: seeds, app: app,
            policy: policy, timer15: timer15, equalBudgetTimer: search.best.figures, equalBudgetInterval: search.best.interval
        )
    }

    /// What the figures need of each seed's simulation, added up as the seeds are played.
    struct Tally {
        private var ages: [Double] = []
        private var launches = 0
        private var withoutContent = 0
        private var wakeups = 0
        private var joules = 0.0
        private var refreshes = 0
        private var days = 0.0

        /// Adds one seed's simulation, as seen by `app`.
        mutating func add(_ result: SimulationResult, app: AppID) {
            for staleness in result.staleness(of: app) {
                launches += 1
                if let age = staleness.age { ages.append(age / 60) } else { withoutContent += 1 }
            }
            wakeups += result.wakeups
            joules += result.joules()
            refreshes += result.runs.filter { $0.app == app && $0.request.kind == .appRefresh && $0.outcome == .success }.count
            days += result.days
        }

        /// Staleness pooled over every launch (one without content older than any content),
        /// rates averaged over every simulated day.
        var figures: Figures {
            let perDay = max(days, 1)
            func staleness(_ fraction: Double) -> Double? {
                SimulationResult.Staleness.percentile(fraction, ages: ages, withoutContent: withoutContent)
            }
            return Figures(
                stalenessMedianMinutes: staleness(0.5),
                stalenessP90Minutes: staleness(0.9),
                wakeupsPerDay: Double(wakeups) / perDay, joulesPerDay: joules / perDay,
                launches: launches, launchesWithoutContent: withoutContent, refreshesPerDay: Double(refreshes) / perDay
            )
        }
    }

    // MARK: Output

    /// The comparison for people: one row per scheduler, then the goals.
    public func text() -> String {
        let seedsText = seeds.count == 1 ? "seed \(seeds[0])" : "seeds \(seeds.first!)-\(seeds.last!)"
        return Self.text(
            heading: "\(scenario): \(CountText.counted(days, "day")) x \(seedsText), staleness of \(app) at the user's launches",
            policy: policy, timer15: timer15, equalBudgetTimer: equalBudgetTimer, equalBudgetInterval: equalBudgetInterval)
    }

    /// The table of three schedulers' figures under `heading`, then the goals (for one
    /// life, and for a fleet).
    public static func text(heading: String, policy: Figures, timer15: Figures, equalBudgetTimer: Figures, equalBudgetInterval: TimeInterval) -> String {
        func row(_ name: String, _ figures: Figures) -> String {
            name.padding(toLength: 22, withPad: " ", startingAt: 0)
                + figures.stalenessText(\.stalenessMedianMinutes).leftPadded(to: 11) + figures.stalenessText(\.stalenessP90Minutes).leftPadded(to: 12)
                + "\(figures.launchesWithoutContent)/\(figures.launches)".leftPadded(to: 11)
                + String(format: "%.1f", figures.wakeupsPerDay).leftPadded(to: 13) + String(format: "%.0f J", figures.joulesPerDay).leftPadded(to: 11)
        }
        var lines = [
            heading,
            "",
            "scheduler".padding(toLength: 22, withPad: " ", startingAt: 0) + "median".leftPadded(to: 11) + "p90".leftPadded(to: 12)
                + "no content".leftPadded(to: 11) + "wakeups/day".leftPadded(to: 13) + "energy/day".leftPadded(to: 11),
            row("policy", policy),
            row("timer, 15 min", timer15),
            row("timer, equal budget", equalBudgetTimer) + "   (every \(DurationText.spoken(equalBudgetInterval)))",
            "",
        ]
        if let note = equalBudgetNote(policy: policy, equalBudgetTimer: equalBudgetTimer, interval: equalBudgetInterval) {
            lines += ["note: " + note, ""]
        }
        let goals = Goals.judging(policy: policy, timer15: timer15, equalBudgetTimer: equalBudgetTimer)
        let verdict = Self.verdict
        lines.append("goal 1, wakeups <= 1/4 of the 15-min timer's: \(String(format: "%.1f", policy.wakeupsPerDay)) vs \(String(format: "%.1f", timer15.wakeupsPerDay / 4))  \(verdict(goals.wakeups))")
        lines.append("goal 2, median <= 1.25 x the 15-min timer's: \(policy.stalenessText(\.stalenessMedianMinutes)) vs \(timer15.stalenessText(\.stalenessMedianMinutes, times: 1.25))  \(verdict(goals.median, policy, timer15))")
        lines.append("goal 3, p90 <= the equal-budget timer's: \(policy.stalenessText(\.stalenessP90Minutes)) vs \(equalBudgetTimer.stalenessText(\.stalenessP90Minutes))  \(verdict(goals.p90, policy, equalBudgetTimer))")
        return lines.joined(separator: "\n") + "\n"
    }

    /// A goal's verdict for people: PASS or MISS, and for a staleness goal whose
    /// `compared` schedulers include one whose life had no launches (no staleness to
    /// compare: the goal does not hold, ``Goals/judging(policy:timer15:equalBudgetTimer:)``)
    /// the reason, not a bare MISS beside "n/a".
    public static func verdict(_ holds: Bool, comparing compared: Figures...) -> String {
        if compared.contains(where: { $0.launches == 0 }) { return "MISS (no launches: nothing to compare)" }
        if compared.count > 1, Figures.noneFed(compared) { return "MISS (no launch found content under either scheduler: nothing to compare)" }
        return holds ? "PASS" : "MISS"
    }

    /// The comparison as JSON (keys sorted): `policy`, `timer15`, `equalBudgetTimer` with
    /// their figures, `equalBudgetIntervalMinutes`, `equalBudgetMatched`, and `goals`.
    public func json() -> String {
        ReportJSON.text(Document(
            scenario: scenario, days: days, seeds: seeds, app: app.rawValue, policy: policy, timer15: timer15,
            equalBudgetTimer: equalBudgetTimer, equalBudgetIntervalMinutes: equalBudgetInterval / 60,
            equalBudgetMatched: equalBudgetMatched, goals: goals
        ))
    }

    private struct Document: Encodable {
        var scenario: String
        var days: Int
        var seeds: [UInt64]
        var app: String
        var policy: Figures
        var timer15: Figures
        var equalBudgetTimer: Figures
        var equalBudgetIntervalMinutes: Double
        var equalBudgetMatched: Bool
        var goals: Goals
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? " " + self : String(repeating: " ", count: width - count) + self
    }
}
