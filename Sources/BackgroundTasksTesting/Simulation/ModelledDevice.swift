import BackgroundTasks
import Foundation
import SchedulerCore

/// A device whose apps are modelled (``ModelledApp``) rather than run: the real engine and
/// policies, driven by a single-threaded discrete-event loop in virtual time, with no
/// store, no threads and no handler code. What fleets and year-long simulations use; the
/// same scenario and seed give the same runs every time.
///
/// It plays the part ``SchedulerDriver`` plays for real apps: it feeds the engine events
/// (condition changes, foreground sessions, timers, completions) and carries out its
/// effects the way a well-behaved app and driver would: a modelled handler resubmits its
/// request first thing, works for its duration, completes; on expiration it stops and
/// completes unsuccessfully at once.
public struct ModelledDevice: Sendable {
    /// What the loop records.
    public struct Options: Sendable {
        /// The engine's tunables (``SchedulerConfiguration/simulation(simulatesExpiration:environment:)``
        /// by default: nothing read from the environment). A device salt of 0
        /// is replaced by the script's seed, so devices of a fleet spread differently.
        public var configuration: SchedulerConfiguration
        /// The policies (the standard set by default).
        public var policies: PolicySet
        /// Turns CPU and wall time into joules.
        public var energy: EnergyModel
        /// Whether to keep the full trace (timelines, reports, the JSON trace); fleets turn
        /// it off and read only the runs and launches.
        public var recordsTrace: Bool

        /// Creates options.
        public init(
            configuration: SchedulerConfiguration = .simulation(),
            policies: PolicySet = PolicySet(),
            energy: EnergyModel = .init(),
            recordsTrace: Bool = true
        ) {
            self.configuration = configuration
            self.policies = policies
            self.energy = energy
            self.recordsTrace = recordsTrace
        }
    }

    private enum Event: Sendable {
        case conditions(Conditions)
        case sessionStarted(String?)
        case sessionEnded(String?)
        case wake
        case workDone(RunID)
    }

    /// When an event happens: by instant, then in the order it was scheduled.
    private struct Moment: Comparable, Sendable {
        var at: Date
        var sequence: UInt64
        static func < (lhs: Moment, rhs: Moment) -> Bool { (lhs.at, lhs.sequence) < (rhs.at, rhs.sequence) }
    }

    private var engine: SchedulerEngine
    private let options: Options
    private let apps: [ModelledApp]
    private var tasks: [RequestKey: ModelledTask] = [:]
    /// What happens next, in order. A superseded wake stays queued and is skipped when it
    /// comes up (see ``scheduledWake``): cheaper than finding it to remove it.
    private var queue = EventQueue()
    private var nextSequence: UInt64 = 0
    /// The engine's pending wake: when, and its place in the queue (replaced, not stacked).
    private var scheduledWake: (at: Date, sequence: UInt64)?
    private var random: SeededRandom
    private var now: Date
    private var running: [RunID: RunRecord] = [:]
    private var lastWake: Date?
    /// Per app, the script's sessions open now: sessions may overlap, and the app is in
    /// the foreground from the first one's start to the last one's end.
    private var openSessions: [AppID: Int] = [:]

    /// The finished runs, in the order they ended.
    public private(set) var runs: [RunRecord] = []
    /// The user's foreground sessions: which app came to the foreground, when.
    public private(set) var launches: [AppLaunch] = []
    /// Instants at which at least one run started (the device woke for background work).
    public private(set) var wakeups = 0
    /// Everything that happened, in order (empty unless ``Options/recordsTrace``).
    public private(set) var trace: [SchedulerTraceEvent] = []

    /// A device at `script.start` in `script`'s conditions, with `apps` installed (launched
    /// into the background: the script's sessions alone are the user opening them), and
    /// `script`'s condition changes and foreground sessions queued.
    /// Each task's first request asks for a seeded random point within its first interval,
    /// as if the app had been installed at some earlier moment: devices of a fleet do not
    /// all start in step (which would be a stampede of the simulation's own making).
    /// - Parameter history: foreground sessions before `script.start` the usage model learns
    ///   from first (a device whose apps were installed earlier); no runs come of them.
    public init(apps: [ModelledApp], script: ScenarioScript, options: Options = .init(), history: [ScenarioScript.ForegroundSession] = []) {
        self.apps = apps
        self.options = options
        now = script.start
        random = SeededRandom(seed: script.seed, stream: 0x6D6F_6465_6C6C_6564)  // "modelled"
        var configuration = options.configuration.salted(by: script.seed)
        if !options.recordsTrace { configuration.explainsLaunches = false }
        engine = SchedulerEngine(configuration: configuration, conditions: script.initialConditions, policies: options.policies)
        for change in script.changes { schedule(.conditions(change.conditions), at: change.at) }
        for session in script.sessions {
            schedule(.sessionStarted(session.app), at: session.start)
            schedule(.sessionEnded(session.app), at: session.end)
        }
        if options.recordsTrace { trace.append(.conditionsChanged(script.initialConditions, at: now)) }
        for app in apps {
            engine.register(AppRegistration(app: app.app, manifest: app.manifest))
            for task in app.tasks { tasks[RequestKey(app: app.app, identifier: task.identifier)] = task }
        }
        // Nothing is pending yet, so learning the past changes no request and launches nothing.
        // As the script's sessions: one that starts while another of the app is open is
        // no foreground (history is in order of start).
        var openUntil: [AppID: Date] = [:]
        for session in history where session.start < script.start {
            for app in apps where session.app == nil || session.app == app.app.rawValue {
                if let until = openUntil[app.app], session.start < until {
                    openUntil[app.app] = max(until, session.end)
                    continue
                }
                openUntil[app.app] = session.end
                _ = engine.handle(.appForegrounded(app.app), at: session.start)
            }
        }
        for app in apps {
            for task in app.tasks {
                var first = task.nextRequest(for: app.app, at: now)
                first.earliestBeginDate = now.addingTimeInterval(task.interval * random.unit())
                submit(first)
            }
        }
    }

    /// The instant the device has reached.
    public var currentTime: Date { now }

    /// When the device will next wake the engine (tests check it against ``engineNextWake``).
    var scheduledWakeInstant: Date? { scheduledWake?.at }

    /// When the engine needs its next wake.
    var engineNextWake: Date? { engine.nextWake }

    /// The foregrounds `app`'s usage model has learned (tests check the history's).
    func foregroundsLearned(by app: AppID) -> Int { engine.policyState(of: app)?.usage.foregroundCount ?? 0 }

    /// Runs the device until `end`, handling everything due on the way in order.
    public mutating func run(until end: Date) {
        while let next = queue.popFirst(notAfter: end) {
            if case .wake = next.event, next.moment.sequence != scheduledWake?.sequence { continue }  // superseded
            now = max(now, next.moment.at)
            handle(next.event)
        }
        now = max(now, end)
    }

    // MARK: Events

    private mutating func handle(_ event: Event) {
        switch event {
        case .conditions(let conditions):
            if options.recordsTrace { trace.append(.conditionsChanged(conditions, at: now)) }
            apply(engine.handle(.conditionsChanged(conditions), at: now))
        case .sessionStarted(let app):
            for modelled in apps where app == nil || app == modelled.app.rawValue {
                openSessions[modelled.app, default: 0] += 1
                // A session that starts while another is open opens nothing: the app is
                // already in the foreground.
                guard openSessions[modelled.app] == 1 else { continue }
                launches.append(AppLaunch(app: modelled.app, at: now))
                if options.recordsTrace { trace.append(.lifecycle(modelled.app, from: .background, to: .active, at: now)) }
                apply(engine.handle(.appForegrounded(modelled.app), at: now))
            }
        case .sessionEnded(let app):
            for modelled in apps where app == nil || app == modelled.app.rawValue {
                let open = (openSessions[modelled.app] ?? 0) - 1
                openSessions[modelled.app] = max(0, open)
                guard open == 0 else { continue }  // another session keeps it in the foreground
                if options.recordsTrace { trace.append(.lifecycle(modelled.app, from: .active, to: .background, at: now)) }
            }
        case .wake:
            scheduledWake = nil
            apply(engine.handle(.timerFired, at: now))
        case .workDone(let run):
            guard let record = running[run] else { return }  // expired and completed already
            let succeeded = !(tasks[record.request.key]?.requiresNetwork ?? false) || engine.conditions.networkAvailable
            apply(engine.handle(.taskCompleted(run, success: succeeded), at: now))
        }
    }

    /// Carries out the engine's effects, in order, as an app and a driver would.
    private mutating func apply(_ effects: [EngineEffect]) {
        for effect in effects {
            switch effect {
            case .launch(let record, let budget, let evaluation):
                launched(record, budget: budget, evaluation: evaluation)
            case .expire(let run, let reason, _):
                guard let record = running[run] else { continue }
                if options.recordsTrace { trace.append(.expired(run, record.request.key, reason: reason, at: now)) }
                // A well-behaved handler: stop the work, complete at once, unsuccessfully.
                apply(engine.handle(.expirationDelivered(run, handlerWasSet: true), at: now))
                apply(engine.handle(.taskCompleted(run, success: false), at: now))
            case .runFinished(let finished):
                running[finished.id] = nil
                let record = CostModel(cpuShare: tasks[finished.request.key]?.cpuShare ?? CostModel.defaultCPUShare).measured(finished, energy: options.energy)
                engine.recordEnergy(record.energyJoules ?? 0, for: record.app, at: now)
                runs.append(record)
                if options.recordsTrace { trace.append(.finished(record)) }
            case .terminate(let run, let reason):
                if options.recordsTrace, let record = running[run] {
                    trace.append(.terminated(run, record.request.key, reason: reason, at: now))
                }
            case .retryScheduled(let request):
                if options.recordsTrace { trace.append(.submitted(request, at: now)) }
            case .sampleProgress:
                continue  // modelled apps have no continued-processing work
            case .requestsMoved(let transitions):
                guard options.recordsTrace else { continue }
                for transition in transitions { trace.append(.moved(transition.key, transition.location, at: now, heldBy: transition.heldBy)) }
            case .wake:
                // Not the instant this effect carries: effects handled before it may have fed
                // the engine further events (a launched handler resubmits, an expired one
                // completes), and their own, later wake was applied already. The engine's
                // next wake now is the one that holds; the carried instant may be stale.
                rescheduleWake(engine.nextWake)
            }
        }
    }

    private mutating func launched(_ record: RunRecord, budget: TimeInterval?, evaluation: PolicyEvaluation?) {
        running[record.id] = record
        if lastWake != now {
            lastWake = now
            wakeups += 1
        }
        if options.recordsTrace { trace.append(.launched(record, budget: budget, evaluation: evaluation)) }
        guard let task = tasks[record.request.key] else { return }
        // The handler resubmits first thing, as Apple's sample code does.
        submit(task.nextRequest(for: record.app, at: now))
        let jitter = task.durationJitter > 0 ? (random.unit() * 2 - 1) * min(1, task.durationJitter) : 0
        schedule(.workDone(record.id), at: now.addingTimeInterval(max(0.001, task.duration * (1 + jitter))))
    }

    private mutating func submit(_ request: PendingRequest) {
        do throws(SubmitRejection) {
            try engine.checkSubmit(request, at: now)
        } catch {
            return  // a modelled app that asks for something refused simply goes without
        }
        if options.recordsTrace { trace.append(.submitted(request, at: now)) }
        apply(engine.submit(request, at: now))
    }

    private mutating func rescheduleWake(_ instant: Date?) {
        guard instant != scheduledWake?.at else { return }
        // The previous wake, if any, is skipped when it comes up: its sequence is no longer
        // the scheduled one.
        scheduledWake = instant.map { ($0, schedule(.wake, at: max($0, now))) }
    }

    /// Queues `event` at `instant` and returns its sequence number.
    @discardableResult
    private mutating func schedule(_ event: Event, at instant: Date) -> UInt64 {
        nextSequence += 1
        queue.insert(event, at: Moment(at: instant, sequence: nextSequence))
        return nextSequence
    }

    /// A binary min-heap of events by moment: the device's timeline.
    private struct EventQueue {
        private var entries: [(moment: Moment, event: Event)] = []

        mutating func insert(_ event: Event, at moment: Moment) {
            entries.append((moment, event))
            var child = entries.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard entries[child].moment < entries[parent].moment else { break }
                entries.swapAt(child, parent)
                child = parent
            }
        }

        /// Removes and returns the earliest event if it happens at or before `limit`.
        mutating func popFirst(notAfter limit: Date) -> (moment: Moment, event: Event)? {
            guard let first = entries.first, first.moment.at <= limit else { return nil }
            let last = entries.removeLast()
            guard !entries.isEmpty else { return first }
            entries[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                guard left < entries.count else { break }
                let right = left + 1
                let smaller = right < entries.count && entries[right].moment < entries[left].moment ? right : left
                guard entries[smaller].moment < entries[parent].moment else { break }
                entries.swapAt(parent, smaller)
                parent = smaller
            }
            return first
        }
    }
}

/// The user brought an app to the foreground.
public struct AppLaunch: Hashable, Sendable, Codable {
    /// The app.
    public var app: AppID
    /// When.
    public var at: Date

    /// Creates a launch.
    public init(app: AppID, at: Date) {
        self.app = app
        self.at = at
    }
}
