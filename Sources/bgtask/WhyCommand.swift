import BackgroundTasks
import DeviceConditions
import Foundation
import PostgreSQLStore
import SchedulerStore
import SchedulerCore

/// `bgtask why <app> <identifier> [--json] [--state DIR | --store URL] [--policy FILE]
/// [--socket PATH]`: why hasn't my task run? Asks bgtaskd's live engine when the app is
/// installed with it (main.swift); else rebuilds the engine's view from the app's store
/// (pending requests, what the policies learned, runs in progress) and the device's current
/// conditions, and asks it.
enum WhyCommand {
    struct Options: Equatable {
        var app: String
        var identifier: String
        var json = false
        var state: String?
        var policy: String?
        /// `--store URL`: the store replicas share on PostgreSQL.
        var store: String?
        /// `--socket PATH`: the bgtaskd to ask, which must be running there.
        var socket: String?
    }

    static func parse(_ arguments: [String]) -> Result<Options, UsageError> {
        var positional: [String] = []
        var options = Options(app: "", identifier: "")
        var index = 0
        // An option of one value given twice is refused (docs/cli.md), as in every command.
        var given: Set<String> = []
        while index < arguments.count {
            let argument = arguments[index]
            if ["--state", "--policy", "--store"].contains(argument), !given.insert(argument).inserted {
                return .failure(UsageError(message: "\(argument) given more than once"))
            }
            switch argument {
            case "--json":
                options.json = true
            case "--socket":
                if let error = DaemonCommand.readSocket(arguments, at: &index, into: &options.socket) { return .failure(error) }
            case "--state", "--policy", "--store":
                let what = argument == "--state" ? "a directory" : argument == "--store" ? "a PostgreSQL address (postgresql://...)" : "a file path"
                switch OptionValue.take(arguments, at: &index, for: argument, what: what) {
                case .success(let value):
                    switch argument {
                    case "--state": options.state = value
                    case "--store": options.store = value
                    default: options.policy = value
                    }
                case .failure(let error): return .failure(error)
                }
            default:
                guard !argument.hasPrefix("--") else { return .failure(UsageError(message: "unknown option for why: '\(argument)'")) }
                if let error = OptionValue.positional(argument, what: positional.isEmpty ? "an app identifier" : "a task identifier", command: "why") {
                    return .failure(error)
                }
                positional.append(argument)
            }
            index += 1
        }
        guard positional.count == 2 else {
            return .failure(UsageError(message: "why needs an app and a task identifier, got \(positional.count) argument(s)"))
        }
        if case .failure(let error) = OptionValue.app(positional[0], for: "why <app>") { return .failure(error) }
        if case .failure(let error) = OptionValue.taskIdentifier(positional[1], for: "why <identifier>") { return .failure(error) }
        options.app = positional[0]
        options.identifier = positional[1]
        if options.state != nil, options.store != nil {
            return .failure(UsageError(message: "--state and --store name two stores; give one"))
        }
        // --socket asks the daemon's engine, which judges with its own store and policy:
        // another place or policy would be silently ignored.
        if options.socket != nil, let other = options.state != nil ? "--state" : options.store != nil ? "--store" : options.policy != nil ? "--policy" : nil {
            return .failure(UsageError(message: "--socket asks bgtaskd, which judges with its own store and policy; \(other) answers from here instead: give one"))
        }
        return .success(options)
    }

    /// An error the user can act on (missing state, bad policy file).
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func run(_ options: Options, environment: [String: String], now: Date, conditions: Conditions) throws -> String {
        let app = AppID(options.app)
        // The policy the app judges with: the file given, else its own BGTASK_POLICY.
        let policy = try options.policy.map { path throws in try PolicyConfiguration.load(path: path) } ?? EmbeddedScheduler.defaultPolicyConfiguration(environment: environment)
        if let address = SharedStoreAddress.chosen(given: options.store, otherPlaceGiven: options.state != nil, otherPlace: "--state DIR", environment: environment) {
            // The store replicas share, read-only: a run without an end is one a replica
            // claimed and has not ended (or whose lease ran out and no sweep ended yet).
            return try address.reading { store in
                let pending = try store.pendingRequests(app: app)
                let (explanation, unfinished) = try explain(options, app: app, store: store, pending: pending, policy: policy, environment: environment, now: now, conditions: conditions)
                return options.json
                    ? ExplanationReport.json(explanation, app: app, identifier: options.identifier, running: unfinished, notes: [], conditions: conditions, now: now)
                    : ExplanationReport.text(explanation, app: app, identifier: options.identifier, running: unfinished, runningWhere: unfinished.map { _ in "a replica of \(store.storeDescription)" }, notes: [], conditions: conditions)
            }
        }
        let database: URL
        if let state = options.state {
            // The directory or the store file itself, as `log` and `energy` take it.
            database = try StateOption.store(named: state)
        } else {
            database = try EmbeddedScheduler.stateRoot(environment: environment).appendingPathComponent(app.rawValue).appendingPathComponent("scheduler.sqlite")
        }
        switch BoundedFile.lookupProblem(at: database.path) {
        case .missing?:
            if let socket = options.socket {
                // The daemon named was asked first (DaemonCommand.liveWhy): say so, not only
                // that the embedded scheduler's state is missing.
                throw Failure(description: "\(app) is not installed with the bgtaskd at \(socket), and there is no embedded scheduler state for it at \(database.path) (bgtask apps --socket \(socket) lists what is installed)")
            }
            throw Failure(description: "no scheduler state for \(app) at \(database.path): has the app run with the embedded scheduler? (use --state DIR for another place)")
        case let problem?:
            // A link loop on the way is there, not missing: "has the app run?" would mislead.
            throw Failure(description: "the scheduler state for \(app) at \(database.path) cannot be read: it is \(problem.found)")
        case nil:
            break
        }
        // Read-only, beside the app that may own the store and be running the task: a
        // diagnostic recovers nothing (docs/ARCHITECTURE.md, "One owner per state directory").
        let store = try SchedulerStore.openForReading(at: database)
        // One unreadable row hides nothing else; it is listed instead.
        let (pending, unreadable) = try store.readablePendingRequests(app: app)
        let (explanation, unfinished) = try explain(options, app: app, store: store, pending: pending, policy: policy, environment: environment, now: now, conditions: conditions)
        // A run without an end is in progress only while its owner lives (holds the lock).
        let owner = SchedulerStore.owner(of: database)
        let running = owner == nil ? nil : unfinished
        var notes = unreadable.map { "unreadable pending request \($0.app)/\($0.identifier): \($0.reason) (the app quarantines it when it starts)" }
        if let unfinished, owner == nil {
            notes.append("\(unfinished.id) started \(unfinished.startedAt) and never ended, and no process owns the store: the app stopped during it; it will be recorded as interrupted when the app starts, \(unfinished.request.cutOffFate)")
        }
        let cutOff = owner == nil ? unfinished : nil
        return options.json
            ? ExplanationReport.json(explanation, app: app, identifier: options.identifier, running: running, notes: notes, conditions: conditions, now: now, cutOff: cutOff)
            : ExplanationReport.text(explanation, app: app, identifier: options.identifier, running: running, runningWhere: owner.map { "\($0)" }, notes: notes, conditions: conditions, cutOff: cutOff)
    }
}

/// `bgtask policy [--json] [--check FILE] [--socket PATH]`: the policy configuration and
/// its defaults.
enum PolicyCommand {
    static func parse(_ arguments: [String]) -> Result<(json: Bool, check: String?, socket: String?), UsageError> {
        var json = false
        var check: String?
        var socket: String?
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "--json":
                // Refused twice, as the daemon commands' --json is.
                guard !json else { return .failure(UsageError(message: "--json given more than once")) }
                json = true
            case "--check":
                guard check == nil else { return .failure(UsageError(message: "--check given more than once")) }
                switch OptionValue.take(arguments, at: &index, for: "--check", what: "a file path") {
                case .success(let path): check = path
                case .failure(let error): return .failure(error)
                }
            case "--socket":
                if let error = DaemonCommand.readSocket(arguments, at: &index, into: &socket) { return .failure(error) }
            default: return .failure(UsageError(message: "unknown option for policy: '\(arguments[index])'"))
            }
            index += 1
        }
        // --check validates a file here and never asks bgtaskd.
        if check != nil, socket != nil {
            return .failure(UsageError(message: "--check FILE validates the file here and --socket asks bgtaskd; give one"))
        }
        return .success((json, check, socket))
    }

    /// The configuration of FILE (validated); else the one an embedded app started with
    /// `environment` judges with (`BGTASK_POLICY`: a profile or a policy file), refused
    /// when it cannot be used (an app would fall back to the phone's profile, warning);
    /// else the defaults.
    static func run(json: Bool, check: String?, environment: [String: String] = [:]) throws -> String {
        var configuration = PolicyConfiguration()
        var source = "defaults"
        if let check {
            configuration = try PolicyConfiguration.load(path: check)
            source = "from \(check)"
        } else if let value = environment["BGTASK_POLICY"], !value.isEmpty {
            switch EmbeddedScheduler.policyConfiguration(from: value) {
            case .success(let chosen):
                configuration = chosen
                source = "from BGTASK_POLICY=\(value)"
            case .failure(let error):
                // The variable is named once: its own error starts with it when the value is
                // not a file (a file's error names the file).
                let reason = error.source == "BGTASK_POLICY" ? error.message : "\(error)"
                throw WhyCommand.Failure(description: "BGTASK_POLICY=\(value) cannot be used (an app started so would warn and judge with the phone's profile): \(reason)")
            }
        }
        if json { return configuration.json() + "\n" }
        return configuration.summary(source: source)
    }
}

extension WhyCommand {
    /// The engine's explanation of the request, rebuilt from `store` (what the policies
    /// learned, the app's switch) and `pending`, and the task's run without an end, if any.
    fileprivate static func explain(
        _ options: Options, app: AppID, store: any SchedulerStorage, pending: [PendingRequest], policy: PolicyConfiguration,
        environment: [String: String], now: Date, conditions: Conditions
    ) throws -> (Explanation, RunRecord?) {
        // The embedded scheduler's own tunables (its herd and lead-time salt from this
        // machine's identity), so `why` predicts the instants the scheduler will pick. No
        // pending limits: the store's owner may have been configured with larger ones (an
        // app's own `SchedulerConfiguration`), and what it kept is what there is to explain,
        // not what the default limits would have refused at submission.
        var configuration = EmbeddedScheduler.defaultSchedulerConfiguration(environment: environment)
        configuration.pendingLimits = [:]
        var engine = SchedulerEngine(
            configuration: configuration,
            conditions: conditions, lastRunID: try store.maxRunID(), policies: PolicySet(configuration: policy))
        let refresh = try store.appSetting(app: app, name: AppSettingName.backgroundRefresh) != "off"
        engine.register(AppRegistration(app: app, manifest: AppManifest(appID: app, permittedIdentifiers: [], backgroundModes: [], source: "store"), backgroundRefreshEnabled: refresh))
        if let saved = try store.appSetting(app: app, name: AppSettingName.policyState),
           let state = try? JSONDecoder().decode(AppPolicyState.self, from: Data(saved.utf8)) {
            engine.restorePolicyState(state, of: app)
        }
        engine.restore(pending, at: now)
        let explanation = engine.explain(RequestKey(app: app, identifier: options.identifier), at: now)
        // A damaged run row elsewhere in the app's log does not stop the answer.
        let unfinished = try store.readableRuns(app: app, since: nil).runs.last { $0.identifier == options.identifier && $0.endedAt == nil }
        return (explanation, unfinished)
    }
}
