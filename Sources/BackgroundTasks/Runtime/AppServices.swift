import Dispatch
import Foundation
import Synchronization
import SchedulerCore

// What the package's other Apple modules (`import UserNotifications`) need of an app's
// runtime beyond its public API (the driver's clock and log, the application): an object of
// theirs kept per app (so that their singletons resolve to the app whose code runs, as
// `BGTaskScheduler.shared` does), app work on the driver's clock, calls into app code on the
// main actor, and the process's app's state directory.

/// The objects other modules of the package keep per app, made on first use.
final class AppServiceObjects: Sendable {
    private let objects = Mutex<[ObjectIdentifier: any AnyObject & Sendable]>([:])

    func object<Service: AnyObject & Sendable>(_ type: Service.Type, make: () -> Service) -> Service {
        objects.withLock { objects in
            if let made = objects[ObjectIdentifier(type)] as? Service { return made }
            let made = make()
            objects[ObjectIdentifier(type)] = made
            return made
        }
    }

    /// The object made so far that is a `Wanted` (a protocol), if any.
    func existing<Wanted>(_ wanted: Wanted.Type) -> Wanted? {
        objects.withLock { objects in objects.values.lazy.compactMap { $0 as? Wanted }.first }
    }
}

/// What answers the user's response to one of the app's delivered notifications
/// (`bgtask respond`, through bgtaskd): the app's notification center, once the app has made
/// it (`UNUserNotificationCenter.current()`), from the module that has it.
package protocol NotificationResponding: AnyObject, Sendable {
    /// Tells the app's delegate of the response; what was wrong, when nothing was made
    /// (said in the app's log too).
    func respond(toNotificationWithIdentifier identifier: String, actionIdentifier: String, userText: String?) -> String?
}

/// App code on the main actor that may suspend (a delegate's `async` method).
struct AsyncMainActorCall: AppCall {
    let body: @MainActor @Sendable () async -> Void
    var isolation: (any Actor)? { MainActor.shared }
    nonisolated(nonsending) func call() async { await body() }
}

extension BGAppContext {
    /// The app's one `Service` (its notification center), made by `make` the first time it
    /// is asked for. `make` runs under the table's lock: it must not ask for another service.
    package func service<Service: AnyObject & Sendable>(_ type: Service.Type, make: (BGAppContext) -> Service) -> Service {
        services.object(type) { make(self) }
    }

    /// Calls `action` at `instant` on the driver's clock (virtual in the simulator), as app
    /// work of this app: bound to it and counted by the driver until it returns.
    package func scheduleAppWork(at instant: Date, on queue: DispatchQueue, _ action: @escaping @Sendable () -> Void) -> any DriverTimer {
        driver.clock.schedule(at: instant) { [weak self] in
            guard let self else { return }
            self.dispatch(on: queue, action)
        }
    }

    /// Runs `action` on `queue` as app work of this app (bound to it, counted by the driver).
    package func performAppWork(on queue: DispatchQueue, _ action: @escaping @Sendable () -> Void) {
        dispatch(on: queue, action)
    }

    /// Calls app code on the main actor, as iOS calls an app's delegates (`what` names it in
    /// the diagnostic given when the main queue does not run it). `body` may suspend (an
    /// `async` delegate method): it counts as the app's work until it returns, so the
    /// simulator settles only after it.
    package func callOnMainActor(_ what: String, _ body: @escaping @MainActor @Sendable () async -> Void) {
        invoke(AsyncMainActorCall(body: body), otherwiseOn: expirationQueue, what: what)
    }

    /// Whether this is the process's own app (not one of the apps the simulator models in
    /// one process).
    package var isProcessApp: Bool { EmbeddedScheduler.existingProcessContext === self }

    /// The process's app's state directory (created if missing), where other modules keep
    /// what must last between launches; `nil` for a modelled app, or when none can be
    /// chosen (no `HOME`).
    package var stateDirectory: URL? {
        guard isProcessApp else { return nil }
        do {
            return try EmbeddedScheduler.stateDirectory(for: app, configured: EmbeddedScheduler.processStateDirectory.withLock { $0 })
        } catch {
            driver.log(.warning, app: app, "\(error); what the app keeps between launches there (the answer to the notification request) lasts as long as the process")
            return nil
        }
    }
}

/// Who is told of the device's conditions as the app's driver reports them changing: one
/// trace observer per app context (``BGAppContext``'s), fanned out to the app's own
/// ``DeviceChangeNotifier`` and to other modules' watchers (Network's path monitors), which
/// come and go. Calls are made in the order the watchers were added, outside the lock.
final class ConditionsWatchers: Sendable {
    private let watchers = Mutex<(next: UInt64, calls: [UInt64: @Sendable (Conditions) -> Void])>((0, [:]))

    func add(_ changed: @escaping @Sendable (Conditions) -> Void) -> UInt64 {
        watchers.withLock { watchers in
            watchers.next += 1
            watchers.calls[watchers.next] = changed
            return watchers.next
        }
    }

    func remove(_ token: UInt64) {
        _ = watchers.withLock { $0.calls.removeValue(forKey: token) }
    }

    func changed(to conditions: Conditions) {
        let calls = watchers.withLock { watchers in watchers.calls.sorted { $0.key < $1.key }.map(\.value) }
        for call in calls { call(conditions) }
    }
}

/// A watch on an app's conditions (``BGAppContext/observeConditions(_:)``), until cancelled.
package final class ConditionsObservation: Sendable {
    private weak let watchers: ConditionsWatchers?
    private let token: UInt64

    init(watchers: ConditionsWatchers, token: UInt64) {
        self.watchers = watchers
        self.token = token
    }

    /// Stops the calls.
    package func cancel() { watchers?.remove(token) }
}

extension BGAppContext {
    /// Calls `changed` with the device's conditions each time the app's driver reports them
    /// changing (the simulator's script, an embedded scheduler's watcher), until the
    /// observation is cancelled. `changed` must not call app code: it runs where the driver
    /// reports, and app work goes through ``performAppWork(on:_:)``.
    package func observeConditions(_ changed: @escaping @Sendable (Conditions) -> Void) -> ConditionsObservation {
        ConditionsObservation(watchers: conditionsWatchers, token: conditionsWatchers.add(changed))
    }

    /// The device's conditions as the app's driver knows them now.
    package var deviceConditions: Conditions { driver.conditions }

    /// The app's notification center, if the app made it.
    var notificationResponder: (any NotificationResponding)? { services.existing((any NotificationResponding).self) }
}
