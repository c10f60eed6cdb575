import Dispatch
import Foundation

/// A timer handed out by a ``DriverClock``; cancelling one that already fired is harmless.
public protocol DriverTimer: Sendable {
    /// Stops the timer from firing.
    func cancel()
}

/// Where a driver gets "now" and its timers from. The real-time clock uses the wall
/// clock and Dispatch timers; the simulator's virtual clock uses an event queue.
public protocol DriverClock: AnyObject, Sendable {
    /// The current instant.
    func now() -> Date
    /// Calls `action` once at `instant` (or as soon as possible when it has passed).
    func schedule(at instant: Date, _ action: @escaping @Sendable () -> Void) -> any DriverTimer
    /// Calls `action` once at `instant`, on `queue` where the clock's timers can fire there
    /// directly (the real clock: one thread wake-up fewer than firing on its own queue and
    /// hopping, which the deadline of a run handed down by bgtaskd wants:
    /// SchedulerUplink.swift); other clocks call it as ``schedule(at:_:)`` does, in their
    /// own order, so `action` must not depend on the queue it runs on.
    func schedule(at instant: Date, on queue: DispatchQueue, _ action: @escaping @Sendable () -> Void) -> any DriverTimer
    /// This clock's instant for a date that app code computed from the wall clock
    /// (`Date(timeIntervalSinceNow:)`, as iOS code does) in the work running now. Real
    /// clocks return `date`; the simulator's virtual clock moves it to virtual time.
    func instant(forWallClockDate date: Date) -> Date
    /// The wall-clock date app code reads for one of this clock's instants (a pending
    /// request's `earliestBeginDate` handed back): the inverse of
    /// ``instant(forWallClockDate:)``, as far from the wall clock's now as `instant` is from
    /// this clock's. Real clocks return `instant`.
    func wallClockDate(forInstant instant: Date) -> Date
    /// App code starts running now (a handler, an expiration handler, a block the driver
    /// dispatched, an async handler resuming): the virtual clock measures wall-clock dates
    /// from here. Real clocks do nothing.
    func appWorkStarted()
}

extension DriverClock {
    /// The date itself: a clock that runs on wall time needs no translation.
    public func instant(forWallClockDate date: Date) -> Date { date }
    /// The instant itself: a clock that runs on wall time needs no translation.
    public func wallClockDate(forInstant instant: Date) -> Date { instant }
    /// Nothing: a clock that runs on wall time needs no mark.
    public func appWorkStarted() {}
    /// The clock's own timer: a virtual clock fires in its deterministic order, not on `queue`.
    public func schedule(at instant: Date, on queue: DispatchQueue, _ action: @escaping @Sendable () -> Void) -> any DriverTimer {
        schedule(at: instant, action)
    }
}

/// The real-time clock: `Date()` and Dispatch wall-clock timers on one serial queue.
public final class DispatchDriverClock: DriverClock {
    private let queue: DispatchQueue

    /// Creates a clock whose timers fire on `queue`.
    public init(queue: DispatchQueue = DispatchQueue(label: "bgtask.driver.timers")) {
        self.queue = queue
    }

    public func now() -> Date { Date() }

    public func schedule(at instant: Date, _ action: @escaping @Sendable () -> Void) -> any DriverTimer {
        schedule(at: instant, on: queue, action)
    }

    public func schedule(at instant: Date, on queue: DispatchQueue, _ action: @escaping @Sendable () -> Void) -> any DriverTimer {
        let source = DispatchSource.makeTimerSource(queue: queue)
        // Wall-clock deadlines keep firing at the right instant across system sleep.
        let delay = max(0, instant.timeIntervalSinceNow)
        source.schedule(wallDeadline: .now() + delay, leeway: .milliseconds(1))
        source.setEventHandler(handler: action)
        source.activate()
        return DispatchTimer(source: source)
    }

    private struct DispatchTimer: DriverTimer, @unchecked Sendable {
        // DispatchSourceTimer is thread-safe; it is just not annotated Sendable.
        let source: any DispatchSourceTimer
        func cancel() { source.cancel() }
    }
}
