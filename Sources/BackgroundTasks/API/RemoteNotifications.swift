import Foundation
import Synchronization
import SchedulerCore

// Remote wakes: bgtaskd's analogue of a silent push (`content-available: 1`). `bgtask push
// <app> [--payload JSON]` makes the daemon launch the app's system request
// `<app>.remote-notification` (an app refresh, launched at once, rate-limited per app) and
// the app's remote-notification handler runs with the payload as `userInfo`, as iOS calls
// `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`
// (docs/daemon.md, "Remote wake"). The manifest needs `remote-notification` in
// `UIBackgroundModes`.

/// The identifiers and keys of remote wakes.
public enum RemoteWake {
    /// The app-refresh identifier a remote wake runs as: `<app id>.remote-notification`.
    public static func identifier(for app: AppID) -> String { app.rawValue + ".remote-notification" }

    /// The `UIBackgroundModes` entry an app needs to be woken by a push.
    public static let backgroundMode = "remote-notification"

    /// The most bytes a push payload may have (as APNs allows for a push).
    public static let maximumPayloadBytes = 4_096

    /// What is wrong with `payload` as a push's payload, in one sentence naming it; `nil`
    /// when it is a JSON object of at most ``maximumPayloadBytes`` (what `userInfo` is
    /// decoded from). The CLI checks before it sends, the daemon again when it receives.
    public static func payloadProblem(_ payload: String) -> String? {
        let count = payload.utf8.count
        guard count <= maximumPayloadBytes else {
            return "the push payload is \(count) bytes; at most \(maximumPayloadBytes) (as APNs allows for a push)"
        }
        let data = Data(payload.utf8)
        do {
            try StrictJSON.validate(data)
        } catch {
            return "\(error.verdict(on: "the push payload")): \(error.placedExplanation(in: data))"
        }
        guard let value = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else {
            return "the push payload is not valid JSON"
        }
        guard value is [String: Any] else {
            return "the push payload must be a JSON object ({\"key\": value}), found \(SerializedValue.describe(value))"
        }
        return nil
    }
}

/// The app delegate's remote-notification method, as set, and the app's registration.
struct RemoteNotificationState {
    var handler: (@isolated(any) @Sendable (RemoteNotificationUserInfo, @escaping @Sendable (UIBackgroundFetchResult) -> Void) -> Void)?
    /// `isRegisteredForRemoteNotifications`: registered in this process, not unregistered since.
    var registered = false
    /// Whether the application has a delegate to tell the outcome of a registration (kept
    /// here, off the main actor, so that registering never waits for a main queue that an
    /// app without a delegate may not drain).
    var delegateIsSet = false
}

/// A push's `userInfo`: the payload's JSON object, as iOS hands it to the app delegate.
public struct RemoteNotificationUserInfo: @unchecked Sendable {
    // @unchecked: the dictionary is decoded from the push's JSON for one call and never
    // shared or mutated afterwards (JSON values are strings, numbers, arrays, dictionaries).
    /// The payload (`[:]` when the push had none).
    public let userInfo: [AnyHashable: Any]
}

/// A remote-notification handler and its completion handler.
struct RemoteNotificationCall: AppCall, @unchecked Sendable {
    // @unchecked: every member is Sendable (the closures are, the user info is by its own justification).
    let body: @isolated(any) @Sendable (RemoteNotificationUserInfo, @escaping @Sendable (UIBackgroundFetchResult) -> Void) -> Void
    let userInfo: RemoteNotificationUserInfo
    let completion: @Sendable (UIBackgroundFetchResult) -> Void
    var isolation: (any Actor)? { body.isolation }
    nonisolated(nonsending) func call() async { await body(userInfo, completion) }
}

extension BGApplication {
    /// Sets the app delegate's `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`:
    /// called when a remote wake arrives (`bgtask push`), with the payload's JSON object;
    /// call the completion handler once with what the wake found, within the window of an
    /// app refresh. Like a launch handler, it runs on the actor it was written in.
    @preconcurrency
    public func setRemoteNotificationHandler(
        @_inheritActorContext _ handler: @escaping @isolated(any) @Sendable (_ userInfo: RemoteNotificationUserInfo, _ completionHandler: @escaping @Sendable (UIBackgroundFetchResult) -> Void) -> Void
    ) {
        remoteNotifications.withLock { $0.handler = handler }
    }

    /// Registers the system's handler for remote wakes (called when the context is made).
    /// Always: only bgtaskd launches the identifier, and only when the installed manifest
    /// has `remote-notification` (the manifest in the app's code may differ).
    func registerRemoteWakeHandler() {
        let context = requiredContext
        let application = self
        context.scheduler.registerInternally(forTaskWithIdentifier: RemoteWake.identifier(for: context.app)) { task in
            application.performRemoteWake(task)
        }
    }

    private func performRemoteWake(_ task: BGTask) {
        let context = requiredContext
        guard let handler = remoteNotifications.withLock({ $0.handler }) else {
            context.driver.log(.error, app: context.app, "a remote notification arrived but no handler is set: call UIApplication.shared.setRemoteNotificationHandler { userInfo, completion in ... } before finishLaunching(); the run is recorded as failed")
            task.setTaskCompleted(success: false)
            return
        }
        var userInfo: [AnyHashable: Any] = [:]
        if let payload = task.remoteNotificationPayload,
           let object = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any] {
            for (key, value) in object { userInfo[AnyHashable(key)] = value }
        }
        let completion: @Sendable (UIBackgroundFetchResult) -> Void = { result in
            task.setTaskCompleted(success: result != .failed)
        }
        context.invoke(
            RemoteNotificationCall(body: handler, userInfo: RemoteNotificationUserInfo(userInfo: userInfo), completion: completion),
            otherwiseOn: context.defaultHandlerQueue,
            what: "the remote notification handler")
    }
}

extension BGApplication {
    /// Registers the app for remote notifications (Apple: `registerForRemoteNotifications()`).
    /// As on iOS the answer comes later, on the main actor, to the app delegate:
    /// `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)` with the app's
    /// ``remoteNotificationDeviceToken``, or, when the manifest's `UIBackgroundModes` lacks
    /// `remote-notification` (without it `bgtask push` cannot wake the app: the only remote
    /// notifications Linux delivers are silent pushes),
    /// `application(_:didFailToRegisterForRemoteNotificationsWithError:)` with an `NSError`
    /// naming the manifest, of the domain and code iOS gives an app without the push
    /// entitlement (`NSCocoaErrorDomain` 3000). Without a delegate only
    /// ``isRegisteredForRemoteNotifications`` changes.
    public func registerForRemoteNotifications() {
        let context = requiredContext
        let failure: String? = context.manifest.hasBackgroundMode(RemoteWake.backgroundMode) ? nil
            : "\(context.app) cannot receive remote notifications: UIBackgroundModes of \(context.manifest.source ?? "the manifest") has no \"remote-notification\" (bgtask push wakes only apps that declare it)"
        let tellsDelegate = remoteNotifications.withLock { state in
            state.registered = failure == nil
            return state.delegateIsSet
        }
        if let failure { context.driver.log(.warning, app: context.app, "registerForRemoteNotifications: \(failure)") }
        guard tellsDelegate else { return }
        let application = self
        let token = remoteNotificationDeviceToken
        let what = failure == nil ? "application(_:didRegisterForRemoteNotificationsWithDeviceToken:)" : "application(_:didFailToRegisterForRemoteNotificationsWithError:)"
        context.invoke(AppClosureCall(body: { @MainActor in
            guard let delegate = application.delegate else { return }
            if let failure {
                let error = NSError(domain: NSCocoaErrorDomain, code: 3000, userInfo: [NSLocalizedDescriptionKey: failure])
                delegate.application(application, didFailToRegisterForRemoteNotificationsWithError: error)
            } else {
                delegate.application(application, didRegisterForRemoteNotificationsWithDeviceToken: token)
            }
        }), otherwiseOn: context.expirationQueue, what: "the app delegate's \(what)")
    }

    /// Unregisters the app (Apple: `unregisterForRemoteNotifications()`):
    /// ``isRegisteredForRemoteNotifications`` becomes `false`. It is this process's record
    /// only: `bgtask push` still wakes an app whose manifest has `remote-notification` (take
    /// the mode out of the manifest to stop the wakes).
    public func unregisterForRemoteNotifications() {
        remoteNotifications.withLock { $0.registered = false }
    }

    /// Whether the app registered for remote notifications in this process and was given
    /// its token (Apple: `isRegisteredForRemoteNotifications`): `false` until
    /// ``registerForRemoteNotifications()`` succeeds, and after
    /// ``unregisterForRemoteNotifications()``. Not kept across launches.
    public var isRegisteredForRemoteNotifications: Bool {
        remoteNotifications.withLock { $0.registered }
    }

    /// The device token a registration gives the app delegate: the app identifier's UTF-8
    /// bytes, which identify the app to `bgtask push` on this machine
    /// (`String(decoding: deviceToken, as: UTF8.self)` is the `<app>` of `bgtask push <app>`),
    /// where an APNs token identifies the app on one device to Apple's servers. The same in
    /// every launch.
    public var remoteNotificationDeviceToken: Data { Data(requiredContext.app.rawValue.utf8) }
}

extension AppManifest {
    /// The identifiers the system schedules for an app without its manifest listing them
    /// (iOS needs no identifier for either): each with the background mode that permits it,
    /// and, when the app's own code never submits it, what alone schedules it. The legacy
    /// fetch's is submitted by the app (`setMinimumBackgroundFetchInterval`); the remote
    /// wake's only by `bgtask push`, within its rate limit.
    private static func systemIdentifiers(for app: AppID) -> [(mode: String, identifier: String, onlyScheduledBy: String?)] {
        [("fetch", BGApplication.backgroundFetchTaskIdentifier(for: app), nil),
         (RemoteWake.backgroundMode, RemoteWake.identifier(for: app), "bgtask push")]
    }

    /// Whether `BGTaskSchedulerPermittedIdentifiers` lists identifiers of the app's own,
    /// beyond those ``permittingSystemIdentifiers(for:)`` adds for the system: on iOS 13 and
    /// later such a list turns the legacy background fetch off.
    func listsTaskIdentifiersOfItsOwn(app: AppID) -> Bool {
        let system = Set(Self.systemIdentifiers(for: app).map(\.identifier))
        return permittedIdentifiers.contains { !system.contains($0) }
    }

    /// The manifest with the identifiers the system schedules for the app itself: the
    /// legacy fetch's when `UIBackgroundModes` has `fetch` and the manifest lists no
    /// `BGTaskSchedulerPermittedIdentifiers` of its own (a list of its own turns the legacy
    /// fetch off, as on iOS 13 and later: its request is then not permitted, so bgtaskd's
    /// reinstall removes one kept from before, and a submit of it is refused), the remote
    /// wake's when it has `remote-notification` (iOS needs no identifier for either).
    public func permittingSystemIdentifiers(for app: AppID) -> AppManifest {
        var additions: [String] = []
        let fetchIsOff = listsTaskIdentifiersOfItsOwn(app: app)
        for system in Self.systemIdentifiers(for: app)
        where hasBackgroundMode(system.mode) && !permits(identifier: system.identifier, allowWildcard: false)
            && !(system.mode == "fetch" && fetchIsOff) {
            additions.append(system.identifier)
        }
        guard !additions.isEmpty else { return self }
        // One append: the identifier index is rebuilt once (bgtaskd starts 10,000 apps).
        var manifest = self
        manifest.permittedIdentifiers += additions
        return manifest
    }

    /// The refusal (`notPermitted`, worded as for any identifier the manifest does not
    /// list) of `identifier` when `app` asks for it itself but only the system schedules it
    /// (the remote wake's), and this manifest, as written, does not list it; `nil` otherwise.
    /// bgtaskd checks an app's submissions and retry policies with it: the engine's copy of
    /// the manifest permits the identifier (``permittingSystemIdentifiers(for:)``) so that
    /// the system's own wake passes the engine's checks, and an app's submission of it
    /// would otherwise be a remote wake outside the push limit, in the app's refresh slot.
    public func systemOnlyIdentifierRefusal(_ identifier: String, of app: AppID) -> SubmitRejection? {
        guard let scheduler = Self.systemIdentifiers(for: app).first(where: { $0.identifier == identifier })?.onlyScheduledBy,
              !permits(identifier: identifier, allowWildcard: false) else { return nil }
        return .notListed(identifier, in: self, why: "it is the system's own identifier, scheduled only by \(scheduler)")
    }
}
