import BackgroundTasks
import Foundation
import Synchronization

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
    /// (`Date(timeIntervalSinceNow: 900)`): its offset from the wall instant at which the
    /// current unit of work started (app code starting on its thread, an async handler
    /// resuming from a sleep, a timer's action, the code between two `run` calls: see
    /// ``appWorkStarted()``), added to virtual now.
    ///
    /// Measured from the start of the work, not from the moment of submission, so the wall
    /// time app code spends between computing the date and submitting it (a slow debug
    /// build, a blocking call) does not shorten the offset: traces do not depend on the
    /// machine's speed. The offset is rounded down to the tenth of a second (with a
    /// millisecond of slack for floating point), which absorbs the wall time code spends
    /// from the start of its work to computing the date, as long as that stays under
    /// 0.1 s; offsets the app means are taken to be whole tenths of a second.
    public func instant(forWallClockDate date: Date) -> Date {
        let (anchor, now) = state.withLock { ($0.wallAnchor, $0.now) }
        let offset = date.timeIntervalSince(anchor)
        guard offset.isFinite else { return date }
        return now.addingTimeInterval(((offset * 10) + 0.01).rounded(.down) / 10)
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
    let activity: ActivityTracker

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
