// A store app's background-work scheduler (the sixteenth outside probe), an explicitly
// `@MainActor` class whose Foundation blocks call its own methods, as Linux needs it written
// in Swift 5 mode. swift-corelibs-foundation declares these blocks `@Sendable` without
// `@preconcurrency`, so `{ _ in self.pause() }` is an error here, where Apple's blocks,
// imported from Objective-C, are implicitly `@preconcurrency` (docs/porting.md, "What Linux
// cannot compile"). The fix: `MainActor.assumeIsolated` in a block that runs on the main
// queue, a main-actor `Task` in one that may run elsewhere. This file is built with warnings
// as errors: the fixed shapes compile cleanly in Swift 5 mode.
import BackgroundTasks

/// Pauses its work when the app leaves the foreground, and ticks.
@MainActor
public final class BackgroundWorkScheduler {
    public private(set) var pauses = 0
    public private(set) var ticks = 0
    private var observer: NSObjectProtocol?
    private var timer: Timer?

    public init() {}

    public func pause() { pauses += 1 }
    public func tick() { ticks += 1 }

    /// Observes `name` (the app's `didEnterBackgroundNotification` in the app) on the main
    /// queue, ticks once from the main operation queue, and every `interval` from a timer.
    public func start(pausingOn name: Notification.Name = UIApplication.didEnterBackgroundNotification, interval: TimeInterval = 60) {
        // `queue: .main`: the block runs on the main queue, so it is on the main actor.
        observer = NotificationCenter.default.addObserver(forName: name, object: nil, queue: .main) { _ in
            MainActor.assumeIsolated { self.pause() }
        }
        // The main operation queue's blocks run on the main queue too.
        OperationQueue.main.addOperation {
            MainActor.assumeIsolated { self.tick() }
        }
        // A timer fires on the run loop it was scheduled on, which is not the main actor's
        // unless the main run loop runs (an `@main` app delegate's): hop instead.
        timer = Timer.scheduledTimer(withTimeInterval: interval, repeats: true) { _ in
            Task { @MainActor in self.tick() }
        }
    }

    public private(set) var operationsRun = 0
    public private(set) var operationsCompleted = 0

    /// Runs one operation on the main operation queue, and hears its completion block,
    /// which Foundation calls on a thread of its own: hop.
    public func runOperation() {
        let operation = BlockOperation {
            MainActor.assumeIsolated { self.operationsRun += 1 }
        }
        operation.completionBlock = {
            Task { @MainActor in self.operationsCompleted += 1 }
        }
        OperationQueue.main.addOperation(operation)
    }

    public func stop() {
        observer.map(NotificationCenter.default.removeObserver)
        observer = nil
        timer?.invalidate()
        timer = nil
    }
}
