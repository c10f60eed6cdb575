import Foundation
@testable import SchedulerCore

/// Immutable fixtures shared by the engine, index and lifecycle tests: apps, manifests,
/// requests and a fixed reference instant. Nothing here is mutable, so tests stay parallel.
enum EngineFixtures {
    /// The reference instant every test counts from (never `Date()`).
    static let t0 = Date(timeIntervalSinceReferenceDate: 800_000_000)

    static let app = AppID("com.example.app")
    static let otherApp = AppID("com.example.other")

    static let refreshID = "com.example.app.refresh"
    static let secondRefreshID = "com.example.app.refresh2"
    static let syncID = "com.example.app.sync"
    static let researchID = "com.example.app.research"
    static let exportPrefix = "com.example.app.export"
    static let otherRefreshID = "com.example.other.refresh"

    /// `com.example.app.proc0` ... `proc11`: enough processing identifiers to hit the limit.
    static func processingID(_ number: Int) -> String { "com.example.app.proc\(number)" }

    /// `com.example.app.export.<name>`: continued-processing identifiers matched by the wildcard.
    static func exportID(_ name: String) -> String { "\(exportPrefix).\(name)" }

    static let manifest = AppManifest(
        appID: app,
        permittedIdentifiers: [refreshID, secondRefreshID, syncID, researchID, "\(exportPrefix).*"]
            + (0...11).map(processingID),
        backgroundModes: ["fetch", "processing"],
        source: "fixtures/app/Info.plist"
    )

    static let otherManifest = AppManifest(
        appID: otherApp,
        permittedIdentifiers: [otherRefreshID],
        backgroundModes: ["fetch"],
        source: "fixtures/other/Info.plist"
    )

    static func key(_ identifier: String, app: AppID = app) -> RequestKey {
        RequestKey(app: app, identifier: identifier)
    }

    static func refresh(
        _ identifier: String = refreshID, app: AppID = app, submittedAt: Date = t0, earliest: Date? = nil
    ) -> PendingRequest {
        PendingRequest(app: app, identifier: identifier, kind: .appRefresh, earliestBeginDate: earliest, submittedAt: submittedAt)
    }

    static func processing(
        _ identifier: String = syncID, app: AppID = app, kind: TaskKind = .processing, submittedAt: Date = t0,
        earliest: Date? = nil, network: Bool = false, power: Bool = false
    ) -> PendingRequest {
        PendingRequest(
            app: app, identifier: identifier, kind: kind, earliestBeginDate: earliest,
            requiresNetworkConnectivity: network, requiresExternalPower: power, submittedAt: submittedAt)
    }

    static func continued(
        _ name: String = "photos", app: AppID = app, strategy: ContinuedProcessingStrategy = .queue,
        title: String = "Exporting photos", resources: [String] = [], submittedAt: Date = t0, earliest: Date? = nil
    ) -> PendingRequest {
        PendingRequest(
            app: app, identifier: exportID(name), kind: .continuedProcessing, earliestBeginDate: earliest,
            continuedProcessing: ContinuedProcessingOptions(
                title: title, subtitle: "", strategy: strategy, requiredResources: resources),
            submittedAt: submittedAt)
    }

    /// An engine that knows `app` and `otherApp`.
    static func engine(
        _ configuration: SchedulerConfiguration = .init(), conditions: Conditions = .favorable, lastRunID: RunID? = nil,
        policies: PolicySet = .foundation
    ) -> SchedulerEngine {
        // The foundation's rules alone, so each test isolates one rule; PolicyTests and
        // EnginePolicyTests cover the full set.
        var engine = SchedulerEngine(configuration: configuration, conditions: conditions, lastRunID: lastRunID, policies: policies)
        engine.register(AppRegistration(app: app, manifest: manifest))
        engine.register(AppRegistration(app: otherApp, manifest: otherManifest))
        return engine
    }

    /// The driver's two-phase submission: check, then apply.
    static func submit(_ request: PendingRequest, to engine: inout SchedulerEngine, at now: Date) throws(SubmitRejection) -> EngineEffectSummary {
        try engine.checkSubmit(request, at: now)
        return EngineEffectSummary(engine.submit(request, at: now))
    }

    /// The rejection `checkSubmit` reports, or `nil` when it accepts the request.
    static func rejection(of request: PendingRequest, by engine: SchedulerEngine, at now: Date) -> SubmitRejection? {
        do {
            try engine.checkSubmit(request, at: now)
            return nil
        } catch {
            return error
        }
    }

    static let noPower = Conditions(externalPower: false, networkAvailable: true)
    static let noNetwork = Conditions(externalPower: true, networkAvailable: false)
    static let nothing = Conditions(externalPower: false, networkAvailable: false)
}

/// The effects of one engine call, sorted by case so tests can ask precise questions.
struct EngineEffectSummary {
    let all: [EngineEffect]

    init(_ effects: [EngineEffect]) { all = effects }

    var launched: [RunRecord] {
        all.compactMap { if case .launch(let record, _, _) = $0 { record } else { nil } }
    }

    var launchBudgets: [TimeInterval?] {
        all.compactMap { if case .launch(_, let budget, _) = $0 { .some(budget) } else { nil } }
    }

    var expired: [RunID] {
        all.compactMap { if case .expire(let id, _, _) = $0 { id } else { nil } }
    }

    var expireReasons: [String] {
        all.compactMap { if case .expire(_, let reason, _) = $0 { reason } else { nil } }
    }

    var expireGraces: [TimeInterval] {
        all.compactMap { if case .expire(_, _, let grace) = $0 { grace } else { nil } }
    }

    var finished: [RunRecord] {
        all.compactMap { if case .runFinished(let record) = $0 { record } else { nil } }
    }

    var terminated: [RunID] {
        all.compactMap { if case .terminate(let id, _) = $0 { id } else { nil } }
    }

    var sampled: [RunID] {
        all.compactMap { if case .sampleProgress(let id) = $0 { id } else { nil } }
    }

    var moves: [EligibilityIndex.Transition] {
        all.flatMap { effect -> [EligibilityIndex.Transition] in
            if case .requestsMoved(let transitions) = effect { return transitions } else { return [] }
        }
    }

    /// The `.wake(at:)` effect, which must be the last effect of every call.
    var wake: Date?? {
        guard case .wake(let date)? = all.last else { return .none }
        return .some(date)
    }

    var launchedIdentifiers: [String] { launched.map(\.identifier) }
}
