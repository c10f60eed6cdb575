import BackgroundTasks
import Foundation
import Synchronization
import SchedulerCore

/// Virtual time for the simulator: a queue of timers ordered by (instant, insertion order),
/// as SwiftNIO's embedded event loop does. Nothing happens until the simulator advances
/// time, and then everything due happens in a deterministic order.
public final class VirtualClock: DriverClock {
    private struct Entry {
        var instant: Date
        var action: @Sendable () -> Void
    }

    private struct Key: Comparable, Hashable {
        var instant: Date
        var sequence: UInt64
        static func < (lhs: Key, rhs: Key) -> Bool { (lhs.instant, lhs.sequence) < (rhs.instant, rhs.sequence) }
    }

    private struct State {
        var now: Date
        /// The wall instant the current unit of app work started (see ``instant(forWallClockDate:)``).
        var wallAnchor = Date()
        var nextSequence: UInt64 = 0
        var queue = IndexedHeap<UInt64, Key>()
        var actions: [UInt64: @Sendable () -> Void] = [:]
    }

    private let state: Mutex<State>

    /// Starts the clock at `start`.
    public init(start: Date) {
        state = Mutex(State(now: start))
    }

    public func now() -> Date { state.withLock { $0.now } }

    public func schedule(at instant: Date, _ action: @escaping @Sendable () -> Void) -> any DriverTimer {
        let sequence = state.withLock { state -> UInt64 in
            state.nextSequence += 1
            // A timer for the past fires at the current instant, after what is already due.
            state.queue.update(state.nextSequence, priority: Key(instant: max(instant, state.now), sequence: state.nextSequence))
            state.actions[state.nextSequence] = action
            return state.nextSequence
        }
        return Timer(clock: self, sequence: sequence)
    }

    /// The virtual instant for a date app code computed from the wall clock
    /// (`Date(timeIntervalSinceNow: 900)`), added to virtual now as an offset.
    ///
    /// The app computed the date at some wall instant between the start of the current unit
    /// of work (app code starting on its thread, an async handler resuming from a sleep, a
    /// timer's action, the code between two `run` calls: see ``appWorkStarted()``) and now,
    /// so the offset it meant lies between `date - now` and `date - start`, however long the
    /// machine took on either side (a slow debug build, a loaded machine, a blocking call).
    /// Of that interval the roundest value is taken: a multiple of an hour, else of a minute,
    /// of a second, of a tenth, of a millisecond. An offset written as whole seconds or
    /// minutes, as apps write them, is then found exactly whatever the wall time spent, and
    /// traces do not depend on the machine's speed; an offset with a fraction is found
    /// exactly while the slop stays under that fraction's granularity.
    ///
    /// A date Foundation accepts whose offset lands outside Foundation's range
    /// (`Date.distantPast` itself, which apps pass for "as soon as possible", moved back
    /// from a virtual now years before the wall clock's) is kept within it: the earliest
    /// instant is `Date.distantPast`, and an offset that does not fit stays the app's own
    /// date, so the engine judges (and names) what the app wrote, as it does outside the
    /// simulator.
    public func instant(forWallClockDate date: Date) -> Date {
        let (anchor, now) = state.withLock { ($0.wallAnchor, $0.now) }
        let longest = date.timeIntervalSince(anchor)
        let shortest = date.timeIntervalSinceNow
        guard longest.isFinite, shortest.isFinite else { return date }
        let instant = now.addingTimeInterval(Self.roundestOffset(from: min(shortest, longest), to: longest))
        guard instant.timeIntervalSinceReferenceDate.isFinite, instant <= .distantFuture else { return date }
        return date >= .distantPast ? max(instant, .distantPast) : instant
    }

    /// The wall-clock date as far from the wall clock's now as `instant` is from virtual
    /// now: what an app that computed a date from the wall clock reads back for it (a
    /// pending request's `earliestBeginDate`), so that comparing it with `Date()` says
    /// whether it has passed in virtual time. A date outside Foundation's range stays as it
    /// is, as in ``instant(forWallClockDate:)``.
    public func wallClockDate(forInstant instant: Date) -> Date {
        // "As soon as possible" reads back as the app wrote it (the submit clamps there).
        if instant <= .distantPast { return instant }
        let now = state.withLock { $0.now }
        let offset = instant.timeIntervalSince(now)
        guard offset.isFinite else { return instant }
        let date = Date().addingTimeInterval(offset)
        guard date.timeIntervalSinceReferenceDate.isFinite, date <= .distantFuture, date >= .distantPast else { return instant }
        return date
    }

    /// The multiple of the coarsest of 1 h, 1 min, 1 s, 0.1 s, 1 ms that lies in
    /// `low...high` (with a microsecond of slack for floating point), the largest such
    /// multiple when several do; `high` itself when none does.
    static func roundestOffset(from low: TimeInterval, to high: TimeInterval) -> TimeInterval {
        let slack = 0.000_001
        for granularity in [3_600, 60, 1, 0.1, 0.001] as [TimeInterval] {
            let candidate = ((high + slack) / granularity).rounded(.down) * granularity
            if candidate >= low - slack { return candidate }
        }
        return high
    }

    /// Marks the start of a unit of app work at the current virtual instant: dates the
    /// app computes from the wall clock are measured from this wall instant on. The driver
    /// marks it as app code starts on its thread (so the time a busy machine takes to
    /// schedule that thread does not count), an async handler as it resumes from a sleep
    /// on ``SimulatedClock``, the simulator before an app's `didFinishLaunching`; popping a
    /// timer and advancing the clock mark it too.
    public func appWorkStarted() {
        let wall = Date()
        state.withLock { $0.wallAnchor = wall }
    }

    /// The instant of the next timer, if any.
    public var nextInstant: Date? { state.withLock { $0.queue.min?.priority.instant } }

    /// Number of timers pending.
    public var pendingTimerCount: Int { state.withLock { $0.queue.count } }

    /// Drops every pending timer, unrun: a simulation that is over lets go of what they
    /// would have called (their closures may hold app code, and app code the device).
    public func cancelAll() {
        let dropped = state.withLock { state -> [UInt64: @Sendable () -> Void] in
            state.queue = IndexedHeap()
            defer { state.actions.removeAll() }
            return state.actions
        }
        _ = dropped  // released here, outside the lock: a closure's deinit may be anything
    }

    /// Removes the next timer due at or before `limit`, moves the clock to its instant,
    /// and returns its action; `nil` when none is due by then.
    func popNext(notAfter limit: Date) -> (@Sendable () -> Void)? {
        let wall = Date()
        return state.withLock { state in
            guard let next = state.queue.min, next.priority.instant <= limit else { return nil }
            state.queue.remove(next.key)
            state.now = max(state.now, next.priority.instant)
            state.wallAnchor = wall
            return state.actions.removeValue(forKey: next.key)
        }
    }

    /// Moves the clock forward to `instant` (never backward); the code that runs next
    /// (the caller's, until it runs the clock again) is a new unit of work.
    func advance(to instant: Date) {
        let wall = Date()
        state.withLock {
            $0.now = max($0.now, instant)
            $0.wallAnchor = wall
        }
    }

    private func cancel(_ sequence: UInt64) -> Bool {
        state.withLock { state in
            state.queue.remove(sequence)
            return state.actions.removeValue(forKey: sequence) != nil
        }
    }

    private struct Timer: DriverTimer {
        let clock: VirtualClock
        let sequence: UInt64
        func cancel() { _ = clock.cancel(sequence) }
    }

    /// Cancels a timer; `true` when it had not fired yet.
    func cancelTimer(_ timer: any DriverTimer) -> Bool {
        guard let timer = timer as? Timer else { return false }
        return cancel(timer.sequence)
    }
}

/// A Swift `Clock` over a ``VirtualClock``, for app code that sleeps (`try await
/// clock.sleep(for: .seconds(12))`): the sleep parks until the simulator reaches its
/// deadline, so simulated work takes simulated time and expiration can interrupt it.
/// Cancellation (expiration of an async handler) ends the sleep early with
/// `CancellationError`.
public struct SimulatedClock: Clock, Sendable {
    /// An instant of virtual time.
    public struct Instant: InstantProtocol, Sendable {
        /// Seconds since 1970, as `Date` measures.
        public var date: Date
        public func advanced(by duration: Duration) -> Instant { Instant(date: date.addingTimeInterval(duration.timeInterval)) }
        public func duration(to other: Instant) -> Duration { .seconds(other.date.timeIntervalSince(date)) }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.date < rhs.date }
    }

    let virtual: VirtualClock
    let activity: BGActivityTracker

    public var now: Instant { Instant(date: virtual.now()) }
    public var minimumResolution: Duration { .nanoseconds(1) }

    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
        let tracked = activity.isCurrentTaskTracked
        let once = Mutex<CheckedContinuation<Void, any Error>?>(nil)
        let timer = Mutex<(any DriverTimer)?>(nil)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                once.withLock { $0 = continuation }
                let scheduled = virtual.schedule(at: deadline.date) { [activity] in
                    guard let continuation = once.withLock({ value -> CheckedContinuation<Void, any Error>? in defer { value = nil }; return value }) else { return }
                    if tracked { activity.enter() }  // the sleeper runs again
                    continuation.resume()
                }
                timer.withLock { $0 = scheduled }
                if tracked { activity.leave() }  // parked: time may advance
            }
            virtual.appWorkStarted()  // the sleeper's code runs again from here
        } onCancel: { [virtual, activity] in
            guard let continuation = once.withLock({ value -> CheckedContinuation<Void, any Error>? in defer { value = nil }; return value }) else { return }
            if let scheduled = timer.withLock({ $0 }) { _ = virtual.cancelTimer(scheduled) }
            if tracked { activity.enter() }
            continuation.resume(throwing: CancellationError())
        }
    }
}

extension Duration {
    /// The duration in seconds, as a `TimeInterval`.
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
