import Dispatch
import Foundation
import Synchronization

// Calling app closures where their isolation says they belong.
//
// iOS code registers handlers from main-actor types (every `AppDelegate` is `@MainActor`),
// so the closures it passes are main-actor isolated: they touch main-actor state
// synchronously. The API takes them as `@isolated(any)` functions, whose `isolation` says
// where they must run: an isolated closure is run on its actor (the main actor: the main
// dispatch queue), a nonisolated one on the queue the API documents (the handler queue,
// the expiration queue), synchronously, exactly as before. docs/porting.md explains it.

/// An app closure with its argument, ready to be called on its isolation.
protocol AppCall: Sendable {
    /// Where the closure must run; `nil` for anywhere.
    var isolation: (any Actor)? { get }
    /// Calls the closure. `nonisolated(nonsending)`: it runs on the caller's executor, so
    /// a nonisolated synchronous closure is called without any hop.
    nonisolated(nonsending) func call() async
}

/// A launch handler and its task.
struct LaunchHandlerCall: AppCall, @unchecked Sendable {
    // @unchecked: both members are Sendable; `@isolated(any)` function values are not
    // yet recognised as such inside a struct by the checker in every position.
    let body: @isolated(any) @Sendable (BGTask) -> Void
    let task: BGTask
    var isolation: (any Actor)? { body.isolation }
    nonisolated(nonsending) func call() async { await body(task) }
}

/// An expiration handler (a task's, or an assertion's).
struct ExpirationHandlerCall: AppCall, @unchecked Sendable {
    // @unchecked: `BGTask.expirationHandler` is not `@Sendable` (as on iOS, it is set from
    // anywhere and captures what the app likes); the handler is called once, on its
    // isolation when it has one, else on the expiration queue, never concurrently with itself.
    let body: @isolated(any) () -> Void
    var isolation: (any Actor)? { body.isolation }
    nonisolated(nonsending) func call() async { await body() }
}

extension AppContext {
    /// How long an isolated app closure may wait for its actor before the app is told why
    /// nothing happens (a main thread that runs no loop never drains the main queue).
    static let isolatedCallStallWarning: TimeInterval = 5

    /// Calls `call` as app work: on its actor when it is isolated, else synchronously on
    /// `queue`; `then` runs after it returned (on the same executor). `what` names the
    /// closure in the diagnostic given when its actor does not run it within
    /// ``isolatedCallStallWarning``.
    func invoke(_ call: some AppCall, otherwiseOn queue: DispatchQueue, what: String, then: (@Sendable () -> Void)? = nil) {
        guard let isolation = call.isolation else {
            dispatch(on: queue) {
                // Starts synchronously on this thread; a nonisolated synchronous closure
                // runs to its end before `immediate` returns, on this queue.
                Task.immediate {
                    await call.call()
                    then?()
                }
            }
            return
        }
        let box = StartedFlag()
        driver.runAppWork {
            self.driver.activity.enter()
            Task.immediate {
                await AppContext.$current.withValue(self) {
                    await AppContext.run(on: isolation, call, started: box, clock: self.driver.clock)
                }
                then?()
                self.driver.activity.leave()
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + AppContext.isolatedCallStallWarning) { [weak self] in
                guard let self, !box.flag.load(ordering: .acquiring) else { return }
                let actor = (isolation as AnyObject) === MainActor.shared ? "the main actor" : "actor \(type(of: isolation))"
                let hint = (isolation as AnyObject) === MainActor.shared
                    ? "the main queue is not being drained: end main with dispatchMain() or RunLoop.main.run() (or await something in an async main), or make the closure nonisolated"
                    : "that actor is busy"
                self.driver.log(.error, app: self.app, "\(what) is isolated to \(actor) and has not started after \(DurationText.spoken(AppContext.isolatedCallStallWarning)): \(hint)")
            }
        }
    }

    /// Runs `call` on `actor` (its own isolation, so calling it does not hop).
    private static func run(on actor: isolated any Actor, _ call: some AppCall, started: StartedFlag, clock: any DriverClock) async {
        started.flag.store(true, ordering: .releasing)
        // The app's code starts now, on its actor: dates it computes from the wall clock are
        // measured from here (the simulator's exact virtual dates), not from before the hop.
        clock.appWorkStarted()
        await call.call()
    }
}

/// Whether an isolated call started (read by the stall diagnostic).
final class StartedFlag: Sendable {
    let flag = Atomic<Bool>(false)
}
