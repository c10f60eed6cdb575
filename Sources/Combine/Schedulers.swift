// Schedulers (Apple: `Scheduler`; DispatchQueue, RunLoop, OperationQueue and
// ImmediateScheduler conform) and the operators that use time or move delivery:
// `receive(on:)`, `debounce`, `throttle`, `delay`. On Linux the main run loop runs only when
// the program runs it (UIApplicationMain does; a program that ends with `dispatchMain()`
// does not), so work for `RunLoop.main` goes to the main queue, which it serves on iOS too.
import Foundation

/// Amounts of time a scheduler's stride can be made from (Apple: `SchedulerTimeIntervalConvertible`).
public protocol SchedulerTimeIntervalConvertible {
    /// `s` seconds.
    static func seconds(_ s: Int) -> Self
    /// `s` seconds.
    static func seconds(_ s: Double) -> Self
    /// `ms` milliseconds.
    static func milliseconds(_ ms: Int) -> Self
    /// `us` microseconds.
    static func microseconds(_ us: Int) -> Self
    /// `ns` nanoseconds.
    static func nanoseconds(_ ns: Int) -> Self
}

/// Something that runs closures now or later (Apple: `Scheduler`).
public protocol Scheduler<SchedulerTimeType> {
    /// Its time.
    associatedtype SchedulerTimeType: Strideable where SchedulerTimeType.Stride: SchedulerTimeIntervalConvertible
    /// Its options.
    associatedtype SchedulerOptions
    /// Now, in its time.
    var now: SchedulerTimeType { get }
    /// The smallest tolerance it allows.
    var minimumTolerance: SchedulerTimeType.Stride { get }
    /// Runs `action` as soon as it can.
    func schedule(options: SchedulerOptions?, _ action: @escaping () -> Void)
    /// Runs `action` at `date`.
    func schedule(after date: SchedulerTimeType, tolerance: SchedulerTimeType.Stride, options: SchedulerOptions?, _ action: @escaping () -> Void)
    /// Runs `action` at `date` and then every `interval` until cancelled.
    func schedule(after date: SchedulerTimeType, interval: SchedulerTimeType.Stride, tolerance: SchedulerTimeType.Stride,
                  options: SchedulerOptions?, _ action: @escaping () -> Void) -> any Cancellable
}

extension Scheduler {
    /// Runs `action` as soon as it can.
    public func schedule(_ action: @escaping () -> Void) { schedule(options: nil, action) }
    /// Runs `action` at `date`.
    public func schedule(after date: SchedulerTimeType, _ action: @escaping () -> Void) {
        schedule(after: date, tolerance: minimumTolerance, options: nil, action)
    }
    /// Runs `action` at `date`, within `tolerance`.
    public func schedule(after date: SchedulerTimeType, tolerance: SchedulerTimeType.Stride, _ action: @escaping () -> Void) {
        schedule(after: date, tolerance: tolerance, options: nil, action)
    }
    /// Runs `action` at `date` and then every `interval`.
    public func schedule(after date: SchedulerTimeType, interval: SchedulerTimeType.Stride, _ action: @escaping () -> Void) -> any Cancellable {
        schedule(after: date, interval: interval, tolerance: minimumTolerance, options: nil, action)
    }
}

/// A closure handed to Dispatch, which wants `@Sendable` ones. @unchecked Sendable: a
/// scheduler's contract is to run the closure where it says (a serial queue keeps values in
/// order), as Apple's Combine hands plain closures to Dispatch.
struct ScheduledAction: @unchecked Sendable {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}

/// A repeating Dispatch timer, cancelled by `cancel()`. @unchecked Sendable: the source is
/// thread-safe.
final class RepeatingTimer: Cancellable, @unchecked Sendable {
    private let source: any DispatchSourceTimer
    init(queue: DispatchQueue, first: DispatchTime, intervalNanoseconds: Int, action: ScheduledAction) {
        source = DispatchSource.makeTimerSource(queue: queue)
        // An interval of zero or less would spin: at least a millisecond.
        source.schedule(deadline: first, repeating: .nanoseconds(max(1_000_000, intervalNanoseconds)))
        source.setEventHandler { action.run() }
        source.resume()
    }
    func cancel() { source.cancel() }
    deinit { source.cancel() }
}

/// A span of scheduler time in nanoseconds, the stride of every scheduler here (Apple gives
/// DispatchQueue, RunLoop and OperationQueue a stride type each, of the same meaning; one
/// type keeps arithmetic on literals, which each such type's operators slow down in every
/// file that imports Foundation, within the compiler's limits). `0.5`, `1`,
/// `.milliseconds(300)`, `.seconds(2)` make one.
public struct SchedulerStride: SchedulerTimeIntervalConvertible, Comparable, SignedNumeric, ExpressibleByFloatLiteral, Hashable, Sendable {
    /// The span in nanoseconds.
    public var magnitude: Int
    /// The span as a Dispatch interval.
    public var timeInterval: DispatchTimeInterval { .nanoseconds(magnitude) }
    /// The span in seconds.
    public var seconds: TimeInterval { TimeInterval(magnitude) / 1_000_000_000 }
    /// A span of `nanoseconds`.
    public init(_ nanoseconds: Int) { magnitude = nanoseconds }
    /// A span of `seconds`.
    public init(_ seconds: TimeInterval) { self = .seconds(seconds) }
    /// A span of a Dispatch interval.
    public init(_ timeInterval: DispatchTimeInterval) {
        func scaled(_ value: Int, _ factor: Int) -> Int {
            let (product, overflow) = value.multipliedReportingOverflow(by: factor)
            return overflow ? (value < 0 ? Int.min : Int.max) : product
        }
        switch timeInterval {
        case .seconds(let s): magnitude = scaled(s, 1_000_000_000)
        case .milliseconds(let ms): magnitude = scaled(ms, 1_000_000)
        case .microseconds(let us): magnitude = scaled(us, 1_000)
        case .nanoseconds(let ns): magnitude = ns
        case .never: magnitude = Int.max
        @unknown default: magnitude = Int.max
        }
    }
    /// `value` seconds.
    public init(floatLiteral value: Double) { self = .seconds(value) }
    /// `value` seconds.
    public init(integerLiteral value: Int) { self = .seconds(value) }
    /// `source` seconds, as an integer literal means, if exact.
    public init?<T: BinaryInteger>(exactly source: T) {
        guard let seconds = Int(exactly: source) else { return nil }
        let (nanoseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return nil }
        magnitude = nanoseconds
    }
    public static func seconds(_ s: Int) -> SchedulerStride { SchedulerStride(DispatchTimeInterval.seconds(s)) }
    public static func seconds(_ s: Double) -> SchedulerStride {
        let ns = s * 1_000_000_000
        guard ns.isFinite else { return SchedulerStride(ns < 0 ? Int.min : Int.max) }
        return SchedulerStride(abs(ns) < 9.2e18 ? Int(ns) : (ns < 0 ? Int.min : Int.max))
    }
    public static func milliseconds(_ ms: Int) -> SchedulerStride { SchedulerStride(DispatchTimeInterval.milliseconds(ms)) }
    public static func microseconds(_ us: Int) -> SchedulerStride { SchedulerStride(DispatchTimeInterval.microseconds(us)) }
    public static func nanoseconds(_ ns: Int) -> SchedulerStride { SchedulerStride(ns) }
    public static func < (lhs: SchedulerStride, rhs: SchedulerStride) -> Bool { lhs.magnitude < rhs.magnitude }
    public static func + (lhs: SchedulerStride, rhs: SchedulerStride) -> SchedulerStride { SchedulerStride(lhs.magnitude &+ rhs.magnitude) }
    public static func - (lhs: SchedulerStride, rhs: SchedulerStride) -> SchedulerStride { SchedulerStride(lhs.magnitude &- rhs.magnitude) }
    public static func * (lhs: SchedulerStride, rhs: SchedulerStride) -> SchedulerStride { SchedulerStride(lhs.magnitude &* rhs.magnitude) }
    public static func += (lhs: inout SchedulerStride, rhs: SchedulerStride) { lhs = lhs + rhs }
    public static func -= (lhs: inout SchedulerStride, rhs: SchedulerStride) { lhs = lhs - rhs }
    public static func *= (lhs: inout SchedulerStride, rhs: SchedulerStride) { lhs = lhs * rhs }
}

extension DispatchQueue: Scheduler {
    /// A Dispatch time as a scheduler's time (Apple: `DispatchQueue.SchedulerTimeType`).
    public struct SchedulerTimeType: Strideable, Hashable, Sendable {
        /// The time.
        public var dispatchTime: DispatchTime
        /// `time` as a scheduler's time.
        public init(_ time: DispatchTime) { dispatchTime = time }
        /// From this time to `other`.
        public func distance(to other: SchedulerTimeType) -> Stride {
            Stride(Int(truncatingIfNeeded: Int64(bitPattern: other.dispatchTime.uptimeNanoseconds &- dispatchTime.uptimeNanoseconds)))
        }
        /// This time moved by `n`.
        /// This time moved by `n`, saturating (a stride past the end of time is the end of
        /// time, never a wrap to now).
        public func advanced(by n: Stride) -> SchedulerTimeType {
            let now = dispatchTime.uptimeNanoseconds
            if n.magnitude >= 0 {
                let (moved, overflow) = now.addingReportingOverflow(UInt64(n.magnitude))
                return SchedulerTimeType(overflow || moved >= DispatchTime.distantFuture.uptimeNanoseconds ? .distantFuture : DispatchTime(uptimeNanoseconds: moved))
            }
            let back = n.magnitude == Int.min ? UInt64(Int.max) + 1 : UInt64(-n.magnitude)
            return SchedulerTimeType(DispatchTime(uptimeNanoseconds: now > back ? now - back : 0))
        }
        public static func == (lhs: SchedulerTimeType, rhs: SchedulerTimeType) -> Bool { lhs.dispatchTime == rhs.dispatchTime }
        public func hash(into hasher: inout Hasher) { hasher.combine(dispatchTime.uptimeNanoseconds) }

        /// A span of time (Apple: `DispatchQueue.SchedulerTimeType.Stride`).
        public typealias Stride = SchedulerStride
    }

    /// Options for scheduling on a queue (Apple: `DispatchQueue.SchedulerOptions`).
    public struct SchedulerOptions {
        /// The work's quality of service.
        public var qos: DispatchQoS
        /// The work item's flags.
        public var flags: DispatchWorkItemFlags
        /// A group the work joins.
        public var group: DispatchGroup?
        /// Options.
        public init(qos: DispatchQoS = .unspecified, flags: DispatchWorkItemFlags = [], group: DispatchGroup? = nil) {
            self.qos = qos
            self.flags = flags
            self.group = group
        }
    }

    public var now: SchedulerTimeType { SchedulerTimeType(.now()) }
    public var minimumTolerance: SchedulerTimeType.Stride { SchedulerTimeType.Stride(0 as Int) }

    public func schedule(options: SchedulerOptions?, _ action: @escaping () -> Void) {
        let action = ScheduledAction(action)
        async(group: options?.group, qos: options?.qos ?? .unspecified, flags: options?.flags ?? []) { action.run() }
    }

    public func schedule(after date: SchedulerTimeType, tolerance: SchedulerTimeType.Stride, options: SchedulerOptions?, _ action: @escaping () -> Void) {
        let action = ScheduledAction(action)
        asyncAfter(deadline: date.dispatchTime, qos: options?.qos ?? .unspecified, flags: options?.flags ?? []) { action.run() }
    }

    public func schedule(after date: SchedulerTimeType, interval: SchedulerTimeType.Stride, tolerance: SchedulerTimeType.Stride,
                         options: SchedulerOptions?, _ action: @escaping () -> Void) -> any Cancellable {
        RepeatingTimer(queue: self, first: date.dispatchTime, intervalNanoseconds: interval.magnitude, action: ScheduledAction(action))
    }
}

/// Date-based scheduler time, shared by RunLoop and OperationQueue (Apple: their
/// `SchedulerTimeType`, a `Date` and a stride of seconds).
public struct DateSchedulerTime: Strideable, Hashable, Sendable {
    /// The time.
    public var date: Date
    /// `date` as a scheduler's time.
    public init(_ date: Date) { self.date = date }
    public func distance(to other: DateSchedulerTime) -> Stride { .seconds(other.date.timeIntervalSince(date)) }
    public func advanced(by n: Stride) -> DateSchedulerTime { DateSchedulerTime(date.addingTimeInterval(n.seconds)) }

    /// A span of time (Apple: `RunLoop.SchedulerTimeType.Stride`).
    public typealias Stride = SchedulerStride
}

/// Dispatch time for a date (a date in the past: now).
private func dispatchTime(for date: Date) -> DispatchTime {
    let seconds = date.timeIntervalSinceNow
    guard seconds > 0 else { return .now() }
    return .now() + .nanoseconds(seconds < 1e9 ? Int(seconds * 1_000_000_000) : Int.max / 2)
}

extension RunLoop: Scheduler {
    /// A run loop's time (Apple: `RunLoop.SchedulerTimeType`).
    public typealias SchedulerTimeType = DateSchedulerTime
    /// Options for scheduling on a run loop (none).
    public struct SchedulerOptions: Sendable {}

    /// The queue that serves this run loop's work: the main queue for the main run loop
    /// (which serves it on iOS; on Linux the main run loop may not be running).
    private var servingQueue: DispatchQueue? { self === RunLoop.main ? .main : nil }

    public var now: DateSchedulerTime { DateSchedulerTime(Date()) }
    public var minimumTolerance: DateSchedulerTime.Stride { DateSchedulerTime.Stride(0 as Int) }

    public func schedule(options: SchedulerOptions?, _ action: @escaping () -> Void) {
        if let queue = servingQueue {
            queue.schedule(options: nil, action)
        } else {
            let action = ScheduledAction(action)
            perform { action.run() }
        }
    }

    public func schedule(after date: DateSchedulerTime, tolerance: DateSchedulerTime.Stride, options: SchedulerOptions?, _ action: @escaping () -> Void) {
        if let queue = servingQueue {
            queue.schedule(after: .init(dispatchTime(for: date.date)), tolerance: .zero, options: nil, action)
        } else {
            let action = ScheduledAction(action)
            add(Timer(fire: date.date, interval: 0, repeats: false) { _ in action.run() }, forMode: .default)
        }
    }

    public func schedule(after date: DateSchedulerTime, interval: DateSchedulerTime.Stride, tolerance: DateSchedulerTime.Stride,
                         options: SchedulerOptions?, _ action: @escaping () -> Void) -> any Cancellable {
        if let queue = servingQueue {
            return RepeatingTimer(queue: queue, first: dispatchTime(for: date.date),
                                  intervalNanoseconds: interval.magnitude, action: ScheduledAction(action))
        }
        let action = ScheduledAction(action)
        let timer = Timer(fire: date.date, interval: max(interval.seconds, 1e-6), repeats: true) { _ in action.run() }
        add(timer, forMode: .default)
        return AnyCancellable { timer.invalidate() }
    }
}

extension OperationQueue: Scheduler {
    /// An operation queue's time (Apple: `OperationQueue.SchedulerTimeType`).
    public typealias SchedulerTimeType = DateSchedulerTime
    /// Options for scheduling on an operation queue (none).
    public struct SchedulerOptions: Sendable {}

    public var now: DateSchedulerTime { DateSchedulerTime(Date()) }
    public var minimumTolerance: DateSchedulerTime.Stride { DateSchedulerTime.Stride(0 as Int) }

    public func schedule(options: SchedulerOptions?, _ action: @escaping () -> Void) {
        let action = ScheduledAction(action)
        addOperation { action.run() }
    }

    public func schedule(after date: DateSchedulerTime, tolerance: DateSchedulerTime.Stride, options: SchedulerOptions?, _ action: @escaping () -> Void) {
        let action = ScheduledAction(action)
        let queue = ScheduledQueue(self)
        DispatchQueue.global().asyncAfter(deadline: dispatchTime(for: date.date)) { queue.queue.addOperation { action.run() } }
    }

    public func schedule(after date: DateSchedulerTime, interval: DateSchedulerTime.Stride, tolerance: DateSchedulerTime.Stride,
                         options: SchedulerOptions?, _ action: @escaping () -> Void) -> any Cancellable {
        let action = ScheduledAction(action)
        let queue = ScheduledQueue(self)
        return RepeatingTimer(queue: .global(), first: dispatchTime(for: date.date),
                              intervalNanoseconds: interval.magnitude,
                              action: ScheduledAction { queue.queue.addOperation { action.run() } })
    }
}

/// An operation queue handed to Dispatch. @unchecked Sendable: OperationQueue is thread-safe.
private struct ScheduledQueue: @unchecked Sendable {
    let queue: OperationQueue
    init(_ queue: OperationQueue) { self.queue = queue }
}

/// A scheduler that runs everything at once, on the calling thread (Apple: `ImmediateScheduler`).
public struct ImmediateScheduler: Scheduler, Sendable {
    /// Its time: a count of steps.
    public struct SchedulerTimeType: Strideable, Hashable, Sendable {
        /// A span (Immediate time does not pass).
        public typealias Stride = SchedulerStride
        public func distance(to other: SchedulerTimeType) -> Stride { Stride(0 as Int) }
        public func advanced(by n: Stride) -> SchedulerTimeType { self }
    }
    public typealias SchedulerOptions = Never
    /// The scheduler.
    public static let shared = ImmediateScheduler()
    public var now: SchedulerTimeType { SchedulerTimeType() }
    public var minimumTolerance: SchedulerTimeType.Stride { SchedulerTimeType.Stride(0 as Int) }
    public func schedule(options: Never?, _ action: @escaping () -> Void) { action() }
    public func schedule(after date: SchedulerTimeType, tolerance: SchedulerTimeType.Stride, options: Never?, _ action: @escaping () -> Void) { action() }
    public func schedule(after date: SchedulerTimeType, interval: SchedulerTimeType.Stride, tolerance: SchedulerTimeType.Stride,
                         options: Never?, _ action: @escaping () -> Void) -> any Cancellable {
        action()
        return AnyCancellable {}
    }
}
