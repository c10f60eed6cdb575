import Foundation
import SchedulerCore

/// Benchmark (b): the cost of one scheduling decision with 100,000 requests pending
/// across 10,000 apps, on the pure engine (no I/O, no clock, no locks).
///
/// Every request gets its own due instant, spread over a day (one slot every 0.864 s,
/// plus jitter, shuffled across apps with a fixed seed). A decision is timed as
/// `engine.handle(.timerFired, at: nextWake)` at the instant exactly one more request
/// becomes due: the engine moves it from waiting to ready and launches it. The run is
/// then completed (timed apart), so the concurrency slot is free for the next decision.
enum EngineDecisionBenchmark {
    static func run(apps appCount: Int, identifiersPerApp: Int, decisions: Int, warmupDecisions: Int) throws -> BenchmarkResult {
        var loaded = try LoadedEngine(apps: appCount, identifiersPerApp: identifiersPerApp)
        let requestCount = loaded.requestCount
        let registerNanoseconds = loaded.registerNanoseconds
        let submitNanoseconds = loaded.submitNanoseconds
        // Each decision consumes its request, as in the first version of this benchmark
        // (its figures stay comparable); benchmark r keeps the count constant instead.
        let (decisionSamples, completionSamples) = try loaded.decide(decisions: decisions, warmup: warmupDecisions, resubmitting: false)

        let decision = Distribution(decisionSamples)
        let completion = Distribution(completionSamples)
        let submitMilliseconds = Double(submitNanoseconds) / 1e6
        say("  setup: \(appCount) apps registered in \(format(Double(registerNanoseconds) / 1e6)) ms; \(requestCount) requests submitted in \(format(submitMilliseconds)) ms (\(format(submitMilliseconds * 1_000 / Double(requestCount), 2)) us each, checkSubmit + submit)")
        say("  decision (handle(.timerFired) launching the one due request), \(decisions) decisions after \(warmupDecisions) warm-up:")
        say("    median \(format(decision.median, 2)) us   p99 \(format(decision.percentile(99), 2)) us   mean \(format(decision.mean, 2)) us   max \(format(decision.max, 2)) us")
        say("  completion (handle(.taskCompleted)), not part of the decision: median \(format(completion.median, 2)) us   p99 \(format(completion.percentile(99), 2)) us")

        return BenchmarkResult(
            name: "engine-decision",
            title: "Choosing the next run with \(requestCount) pending requests across \(appCount) apps",
            target: "median <= 20 us",
            value: decision.median,
            unit: "us",
            pass: decision.median <= 20,
            metrics: [
                "decision_median_us": decision.median,
                "decision_p99_us": decision.percentile(99),
                "decision_mean_us": decision.mean,
                "decision_max_us": decision.max,
                "completion_median_us": completion.median,
                "completion_p99_us": completion.percentile(99),
                "submit_total_ms": submitMilliseconds,
                "submit_each_us": submitMilliseconds * 1_000 / Double(requestCount),
                "register_total_ms": Double(registerNanoseconds) / 1e6,
                "pending_requests": Double(requestCount),
                "apps": Double(appCount),
                "decisions": Double(decisions),
            ],
            notes: [
                "pure SchedulerEngine, no store, no locks; one request due per decision; each run completed before the next decision",
                "every decision runs the 17 standard policies (coalescing and the per-app rate limit set to 0 so one request launches per instant)",
                "submit = checkSubmit + submit per request (no persistence)",
            ]
        )
    }
}

/// An engine loaded as benchmark b loads it, and the decisions b times: shared with
/// benchmark r (ScaleBenchmark.swift), which loads it at other sizes.
///
/// `apps` apps, each with a manifest of `identifiersPerApp` processing identifiers and one
/// pending request per identifier. Every request gets its own due instant, spread over a
/// day (one slot every 86,400 / n seconds, plus jitter, shuffled across apps with a fixed
/// seed), so the engine holds n requests waiting for their date.
struct LoadedEngine {
    /// The instant every request is submitted at; the first becomes due 60 s later.
    static let start = Date(timeIntervalSinceReferenceDate: 800_000_000)
    /// Apps registered per step while loading: the requests of one step are built, then
    /// submitted under the timer, then dropped, so a million never sit in a second array.
    private static let appsPerStep = 1_000

    /// The loaded engine.
    private(set) var engine: SchedulerEngine
    /// How many apps are registered.
    let appCount: Int
    /// How many requests each app has pending after loading.
    let identifiersPerApp: Int
    /// Time spent building the apps' manifests and registering them.
    let registerNanoseconds: UInt64
    /// Time spent in `checkSubmit` + `submit` (the requests built before, not counted).
    let submitNanoseconds: UInt64
    /// Wall time of the whole load: building the apps, manifests, instants and requests,
    /// registering and submitting.
    let loadNanoseconds: UInt64

    /// The pending requests after loading.
    var requestCount: Int { appCount * identifiersPerApp }

    /// The identifier of task `task` of app number `app`.
    static func identifier(app: Int, task: Int) -> String { "com.example.bench.app\(app).task\(task)" }

    /// Registers the apps and submits their requests as the driver does: check, then
    /// apply (the persist step is benchmark a).
    init(apps appCount: Int, identifiersPerApp: Int) throws {
        let loadStart = monotonicNanoseconds()
        self.appCount = appCount
        self.identifiersPerApp = identifiersPerApp
        let start = Self.start
        let requestCount = appCount * identifiersPerApp
        var configuration = SchedulerConfiguration()
        configuration.pendingLimits = [.refresh: 1, .processing: identifiersPerApp, .continuedProcessing: 10]
        // The full standard policy set judges every decision; coalescing and the per-app
        // rate limit are off so that each due instant launches exactly its one request.
        let policy = PolicyConfiguration(minimumLaunchInterval: 0, coalescingTolerance: 0)
        var engine = SchedulerEngine(configuration: configuration, conditions: .favorable, policies: PolicySet(configuration: policy))

        // Apps and their manifests (timed with building the manifests, as b always was).
        var apps: [AppID] = []
        apps.reserveCapacity(appCount)
        let registerStart = monotonicNanoseconds()
        for a in 0..<appCount {
            let app = AppID("com.example.bench.app\(a)")
            let identifiers = (0..<identifiersPerApp).map { Self.identifier(app: a, task: $0) }
            engine.register(AppRegistration(app: app, manifest: AppManifest(appID: app, permittedIdentifiers: identifiers, backgroundModes: ["processing"], source: "bgtask-bench")))
            apps.append(app)
        }
        let registerNanoseconds = monotonicNanoseconds() - registerStart

        // Due instants: distinct slots over a day, assigned to requests in random order.
        let spacing = 86_400.0 / Double(requestCount)
        var generator = SeededRandom(seed: 0x5EED_B6_7A5C)
        var slots = (0..<requestCount).map { slot in
            start.addingTimeInterval(60 + Double(slot) * spacing + Double.random(in: 0..<(spacing * 0.5), using: &generator))
        }
        slots.shuffle(using: &generator)

        var submitNanoseconds: UInt64 = 0
        var requests: [PendingRequest] = []
        requests.reserveCapacity(min(requestCount, Self.appsPerStep * identifiersPerApp))
        for stepStart in stride(from: 0, to: appCount, by: Self.appsPerStep) {
            requests.removeAll(keepingCapacity: true)
            for a in stepStart..<min(appCount, stepStart + Self.appsPerStep) {
                let app = apps[a]
                for t in 0..<identifiersPerApp {
                    requests.append(PendingRequest(app: app, identifier: Self.identifier(app: a, task: t), kind: .processing, earliestBeginDate: slots[a * identifiersPerApp + t], submittedAt: start))
                }
            }
            let submitStart = monotonicNanoseconds()
            for request in requests {
                do {
                    try engine.checkSubmit(request, at: start)
                } catch {
                    throw BenchmarkError("engine refused \(request.key): \(error)")
                }
                _ = engine.submit(request, at: start)
            }
            submitNanoseconds += monotonicNanoseconds() - submitStart
        }
        // `pendingCount`, not `allPendingRequests.count`: the latter copies and sorts every
        // request, a second at a million.
        guard engine.pendingCount == requestCount else {
            throw BenchmarkError("expected \(requestCount) pending requests, the engine holds \(engine.pendingCount)")
        }
        self.engine = engine
        self.registerNanoseconds = registerNanoseconds
        self.submitNanoseconds = submitNanoseconds
        self.loadNanoseconds = monotonicNanoseconds() - loadStart
    }

    /// Times `decisions` decisions after `warmup` untimed ones, in microseconds, with the
    /// time of completing each decision's run apart.
    ///
    /// A decision is `engine.handle(.timerFired, at: nextWake)` at the instant exactly one
    /// more request becomes due: the engine moves it from waiting to ready, the policies
    /// judge it and it launches. The run is then completed (timed apart), so the
    /// concurrency slot is free for the next decision. With `resubmitting`, the app then
    /// submits the same identifier again for the same slot a day later (untimed), so every
    /// decision is made with the same number of requests pending; without it, each
    /// decision consumes its request.
    mutating func decide(decisions: Int, warmup: Int, resubmitting: Bool) throws -> (decisions: [Double], completions: [Double]) {
        var decisionSamples: [Double] = []
        var completionSamples: [Double] = []
        decisionSamples.reserveCapacity(decisions)
        completionSamples.reserveCapacity(decisions)
        let pendingBefore = engine.pendingCount
        for round in 0..<(warmup + decisions) {
            guard let due = engine.nextWake else { throw BenchmarkError("the engine has nothing left to wake for after \(round) decisions") }
            let decisionStart = monotonicNanoseconds()
            let effects = engine.handle(.timerFired, at: due)
            let decisionEnd = monotonicNanoseconds()
            var launched: [RunRecord] = []
            for case .launch(let record, _, _) in effects { launched.append(record) }
            guard launched.count == 1, launched[0].request.earliestBeginDate == due else {
                throw BenchmarkError("decision \(round) at \(due) launched \(launched.count) runs, expected exactly the one due then")
            }
            let completionStart = monotonicNanoseconds()
            let after = engine.handle(.taskCompleted(launched[0].id, success: true), at: due)
            let completionEnd = monotonicNanoseconds()
            guard after.contains(where: { if case .runFinished = $0 { return true } else { return false } }) else {
                throw BenchmarkError("completing \(launched[0].id) did not finish it")
            }
            if resubmitting {
                // The slots span exactly one day, so a day later is the same slot of the
                // next day: distinct from every other request's instant, in the same order.
                var again = launched[0].request
                again.earliestBeginDate = due.addingTimeInterval(86_400)
                again.submittedAt = due
                do {
                    try engine.checkSubmit(again, at: due)
                } catch {
                    throw BenchmarkError("engine refused the resubmission of \(again.key): \(error)")
                }
                _ = engine.submit(again, at: due)
            }
            if round >= warmup {
                decisionSamples.append(Double(decisionEnd - decisionStart) / 1_000)
                completionSamples.append(Double(completionEnd - completionStart) / 1_000)
            }
        }
        let pendingAfter = resubmitting ? pendingBefore : pendingBefore - warmup - decisions
        guard engine.pendingCount == pendingAfter, engine.activeRuns.isEmpty else {
            throw BenchmarkError("after the decisions: \(engine.pendingCount) pending (expected \(pendingAfter)), \(engine.activeRuns.count) running")
        }
        return (decisionSamples, completionSamples)
    }
}
