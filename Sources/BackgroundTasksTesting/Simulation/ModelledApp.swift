import Foundation
import SchedulerCore

/// One task of an app whose handlers are not run but modelled: what it asks for and what
/// a run of it costs. A modelled handler behaves as a well-written iOS one: it resubmits
/// its request first thing, works for ``duration``, completes, and on expiration stops and
/// completes at once (unsuccessfully).
public struct ModelledTask: Hashable, Sendable, Codable {
    /// The task identifier (one of the manifest's permitted identifiers).
    public var identifier: String
    /// Refresh or processing.
    public var kind: TaskKind
    /// The `earliestBeginDate` the handler asks for its next run, from the start of this one.
    public var interval: TimeInterval
    /// `requiresNetworkConnectivity` (processing), or whether a refresh needs the network
    /// to succeed (a refresh run while offline fails).
    public var requiresNetwork: Bool
    /// `requiresExternalPower` (processing only).
    public var requiresExternalPower: Bool
    /// How long a run's work takes, in seconds.
    public var duration: TimeInterval
    /// How much a run's duration varies: each run takes `duration × (1 ± durationJitter)`,
    /// drawn from the simulation's seed (0...1).
    public var durationJitter: Double
    /// The share of one core the work keeps busy (0...1).
    public var cpuShare: Double

    /// Creates a modelled task.
    public init(
        identifier: String,
        kind: TaskKind,
        interval: TimeInterval,
        requiresNetwork: Bool = true,
        requiresExternalPower: Bool = false,
        duration: TimeInterval,
        durationJitter: Double = 0.25,
        cpuShare: Double = CostModel.defaultCPUShare
    ) {
        self.identifier = identifier
        self.kind = kind
        self.interval = interval
        self.requiresNetwork = requiresNetwork
        self.requiresExternalPower = requiresExternalPower
        self.duration = duration
        self.durationJitter = durationJitter
        self.cpuShare = cpuShare
    }

    /// A refresh every 15 minutes that needs the network and takes about 4 s.
    public static func refresh(_ identifier: String) -> ModelledTask {
        ModelledTask(identifier: identifier, kind: .appRefresh, interval: 15 * 60, duration: 4)
    }

    /// A clean-up asked for every 6 hours at the earliest that needs network and power
    /// (so in practice it runs while the device charges) and takes about 3 minutes.
    public static func processing(_ identifier: String) -> ModelledTask {
        ModelledTask(identifier: identifier, kind: .processing, interval: 6 * 3600, requiresExternalPower: true, duration: 180, cpuShare: 0.8)
    }

    /// The request a handler submits at `now` for the next run.
    func nextRequest(for app: AppID, at now: Date) -> PendingRequest {
        PendingRequest(
            app: app,
            identifier: identifier,
            kind: kind,
            earliestBeginDate: now.addingTimeInterval(interval),
            requiresNetworkConnectivity: kind == .appRefresh ? false : requiresNetwork,
            requiresExternalPower: kind == .appRefresh ? false : requiresExternalPower,
            submittedAt: now
        )
    }
}

/// An app whose handlers are modelled (``ModelledTask``): for fleets, long simulations and
/// `bgtask simulate --app manifest.json`, where running real handler code is too slow or
/// there is none.
public struct ModelledApp: Hashable, Sendable {
    /// The app's manifest (its `appID` is required).
    public var manifest: AppManifest
    /// The app's identity.
    public var app: AppID
    /// Its tasks; each is submitted when the app first launches.
    public var tasks: [ModelledTask]

    /// Creates a modelled app.
    public init(app: AppID, manifest: AppManifest, tasks: [ModelledTask]) {
        self.app = app
        self.manifest = manifest
        self.tasks = tasks
    }

    /// A model of an app from its manifest alone, with documented defaults: each permitted
    /// identifier (wildcards excepted) becomes a task. With only the `fetch` mode it is a
    /// refresh; with only `processing`, a processing task; with both, identifiers that
    /// mention "refresh" or "fetch" after the app's own prefix (`com.fetchly.app.sync` is
    /// processing) are refreshes and the others processing. Refreshes are
    /// ``ModelledTask/refresh(_:)``, processing tasks ``ModelledTask/processing(_:)``.
    /// Returns `nil` when the manifest cannot be modelled (``modelling(_:)`` says why).
    public init?(manifest: AppManifest) {
        guard case .success(let app) = Self.modelling(manifest) else { return nil }
        self = app
    }

    /// Why a manifest cannot be modelled: each cause its own, so the user is told what to
    /// add to the manifest.
    public enum Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        /// No `CFBundleIdentifier`.
        case noAppIdentifier
        /// `BGTaskSchedulerPermittedIdentifiers` absent or empty.
        case noTaskIdentifiers
        /// Only `prefix.*` wildcards, which permit continued-processing tasks: the simulator
        /// models refresh and processing tasks, each named in full.
        case onlyWildcards([String])
        /// Neither `fetch` nor `processing` among `UIBackgroundModes` (those found).
        case noBackgroundMode([String])

        /// The cause in a sentence, naming the manifest key to add or fix.
        public var description: String {
            switch self {
            case .noAppIdentifier:
                return "the manifest names no app: CFBundleIdentifier is missing"
            case .noTaskIdentifiers:
                return "the manifest lists no task identifier: BGTaskSchedulerPermittedIdentifiers is missing or empty"
            case .onlyWildcards(let patterns):
                return "the manifest lists only wildcard identifiers (\(patterns.joined(separator: ", "))), which permit continued-processing tasks; "
                    + "the simulator models refresh and processing tasks, each named in full in BGTaskSchedulerPermittedIdentifiers"
            case .noBackgroundMode(let modes):
                let found = modes.isEmpty ? "none" : modes.joined(separator: ", ")
                return "UIBackgroundModes has neither fetch (refresh tasks) nor processing (processing tasks); found: \(found)"
            }
        }
    }

    /// A model of an app from its manifest (see ``init(manifest:)``), or why there is none.
    public static func modelling(_ manifest: AppManifest) -> Result<ModelledApp, Refusal> {
        guard let app = manifest.appID else { return .failure(.noAppIdentifier) }
        guard !manifest.permittedIdentifiers.isEmpty else { return .failure(.noTaskIdentifiers) }
        let fetch = manifest.backgroundModes.contains("fetch")
        let processing = manifest.backgroundModes.contains("processing")
        guard fetch || processing else { return .failure(.noBackgroundMode(manifest.backgroundModes.sorted())) }
        let named = manifest.permittedIdentifiers.filter { !$0.hasSuffix("*") }
        guard !named.isEmpty else { return .failure(.onlyWildcards(manifest.permittedIdentifiers)) }
        let tasks = named.map { identifier -> ModelledTask in
            // Only the task's own name: an app called com.fetchly must not make every task a refresh.
            let ownName = identifier.hasPrefix(app.rawValue + ".") ? String(identifier.dropFirst(app.rawValue.count + 1)) : identifier
            let lower = ownName.lowercased()
            let looksLikeRefresh = lower.contains("refresh") || lower.contains("fetch")
            if fetch && processing { return looksLikeRefresh ? .refresh(identifier) : .processing(identifier) }
            return fetch ? .refresh(identifier) : .processing(identifier)
        }
        return .success(ModelledApp(app: app, manifest: manifest, tasks: tasks))
    }

    /// The example feed reader as a model: a refresh every 15 minutes (about 4 s) and a
    /// clean-up every 6 hours at the earliest needing network and power (about 3 minutes).
    public static func feedReader(app: AppID = AppID("com.example.feedreader")) -> ModelledApp {
        let refresh = "\(app.rawValue).refresh"
        let cleanup = "\(app.rawValue).cleanup"
        return ModelledApp(
            app: app,
            manifest: AppManifest(appID: app, permittedIdentifiers: [refresh, cleanup], backgroundModes: ["fetch", "processing"], source: "modelled feed reader"),
            tasks: [.refresh(refresh), .processing(cleanup)]
        )
    }
}
