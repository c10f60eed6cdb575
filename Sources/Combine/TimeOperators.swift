// Operators that move values to a scheduler or in time (Apple: `receive(on:)`,
// `subscribe(on:)`, `debounce`, `throttle`, `delay`). Each hands values to its subscriber
// through a Funnel (Combining.swift): in order, one at a time, as far as it asked for them.
import Foundation

/// The state of `debounce` or `throttle` for one subscriber. @unchecked Sendable: every
/// `var` is read and written only under `lock`.
final class TimedGate<Value>: @unchecked Sendable {
    let lock = NSLock()
    var generation = 0
    var pending: Value?
    var windowOpen = false
}

extension Publishers {
    /// A publisher whose subscriber is given values and completion on a scheduler.
    public struct ReceiveOn<Upstream: Publisher, Context: Scheduler>: Publisher {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure
        let upstream: Upstream
        let scheduler: Context
        let options: Context.SchedulerOptions?

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            let scheduler = self.scheduler, options = self.options
            let funnel = Funnel<Output, Failure>(AnySubscriber(subscriber), deliverer: { scheduler.schedule(options: options, $0) })
            funnel.start()
            funnel.follow(upstream, onValue: { value in scheduler.schedule(options: options) { funnel.send(value) } },
                          onCompletion: { completion in scheduler.schedule(options: options) { funnel.finish(completion) } })
        }
    }

    /// A publisher of the values that were followed by none for a while (``Publisher/debounce(for:scheduler:options:)``),
    /// or of at most one value per interval (``Publisher/throttle(for:scheduler:latest:)``),
    /// or of every value later (``Publisher/delay(for:tolerance:scheduler:options:)``).
    public struct Timed<Upstream: Publisher, Context: Scheduler>: Publisher {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure
        enum Kind { case debounce, throttle(latest: Bool), delay }
        let upstream: Upstream
        let interval: Context.SchedulerTimeType.Stride
        let scheduler: Context
        let kind: Kind

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            let funnel = Funnel<Output, Failure>(AnySubscriber(subscriber))
            funnel.start()
            let gate = TimedGate<Output>()
            let scheduler = self.scheduler, interval = self.interval, kind = self.kind
            /// Ends a throttle window: sends the value held during it and opens another, or closes.
            func closeWindow() {
                gate.lock.lock()
                guard let held = gate.pending else {
                    gate.windowOpen = false
                    gate.lock.unlock()
                    return
                }
                gate.pending = nil
                gate.lock.unlock()
                funnel.send(held)
                scheduler.schedule(after: scheduler.now.advanced(by: interval)) { closeWindow() }
            }
            funnel.follow(upstream, onValue: { value in
                    switch kind {
                    case .delay:
                        scheduler.schedule(after: scheduler.now.advanced(by: interval)) { funnel.send(value) }
                    case .debounce:
                        gate.lock.lock()
                        gate.generation += 1
                        let mine = gate.generation
                        gate.pending = value
                        gate.lock.unlock()
                        scheduler.schedule(after: scheduler.now.advanced(by: interval)) {
                            gate.lock.lock()
                            guard gate.generation == mine, let pending = gate.pending else { gate.lock.unlock(); return }
                            gate.pending = nil
                            gate.lock.unlock()
                            funnel.send(pending)
                        }
                    case .throttle(let latest):
                        gate.lock.lock()
                        if gate.windowOpen {
                            if latest || gate.pending == nil { gate.pending = value }
                            gate.lock.unlock()
                            return
                        }
                        gate.windowOpen = true
                        gate.lock.unlock()
                        scheduler.schedule { funnel.send(value) }
                        scheduler.schedule(after: scheduler.now.advanced(by: interval)) { closeWindow() }
                    }
                }, onCompletion: { completion in
                    let finish = {
                        gate.lock.lock()
                        let pending = gate.pending
                        gate.pending = nil
                        gate.generation += 1
                        gate.lock.unlock()
                        // A throttle's value held for the window's end goes out before the end;
                        // a debounce's pending value does not, as Apple's (OpenCombine's
                        // compatibility tests, run against Apple's Combine, show only the
                        // completion): its quiet period never came.
                        if case .finished = completion, case .throttle = kind, let pending { funnel.send(pending) }
                        funnel.finish(completion)
                    }
                    if case .delay = kind {
                        scheduler.schedule(after: scheduler.now.advanced(by: interval), finish)
                    } else {
                        scheduler.schedule(finish)
                    }
                })
        }
    }
}

extension Publisher {
    /// Gives the subscriber values and the completion on `scheduler` (`DispatchQueue.main`,
    /// `RunLoop.main`: the main queue).
    public func receive<S: Scheduler>(on scheduler: S, options: S.SchedulerOptions? = nil) -> Publishers.ReceiveOn<Self, S> {
        Publishers.ReceiveOn(upstream: self, scheduler: scheduler, options: options)
    }

    /// Subscribes to this publisher on `scheduler`.
    public func subscribe<S: Scheduler>(on scheduler: S, options: S.SchedulerOptions? = nil) -> AnyPublisher<Output, Failure> {
        let upstream = self
        return AnyPublisher(Deferred { () -> AnyPublisher<Output, Failure> in
            AnyPublisher(SubscribeOn(upstream: upstream, schedule: { scheduler.schedule(options: options, $0) }))
        })
    }

    /// A value once `dueTime` passed without another (the last of a burst, as typing stops);
    /// a value still pending when the upstream finishes is dropped, as Apple's is: only the
    /// completion follows.
    public func debounce<S: Scheduler>(for dueTime: S.SchedulerTimeType.Stride, scheduler: S, options: S.SchedulerOptions? = nil) -> Publishers.Timed<Self, S> {
        Publishers.Timed(upstream: self, interval: dueTime, scheduler: scheduler, kind: .debounce)
    }

    /// At most one value per `interval`: the first at once, then the latest (or first) that
    /// came during each interval.
    public func throttle<S: Scheduler>(for interval: S.SchedulerTimeType.Stride, scheduler: S, latest: Bool) -> Publishers.Timed<Self, S> {
        Publishers.Timed(upstream: self, interval: interval, scheduler: scheduler, kind: .throttle(latest: latest))
    }

    /// Every value, and the completion, `interval` later.
    public func delay<S: Scheduler>(for interval: S.SchedulerTimeType.Stride, tolerance: S.SchedulerTimeType.Stride? = nil,
                                    scheduler: S, options: S.SchedulerOptions? = nil) -> Publishers.Timed<Self, S> {
        Publishers.Timed(upstream: self, interval: interval, scheduler: scheduler, kind: .delay)
    }
}

/// Subscribes to `upstream` from a scheduled closure.
private struct SubscribeOn<Upstream: Publisher>: Publisher {
    typealias Output = Upstream.Output
    typealias Failure = Upstream.Failure
    let upstream: Upstream
    let schedule: (@escaping () -> Void) -> Void
    func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
        let upstream = self.upstream
        schedule { upstream.subscribe(subscriber) }
    }
}

/// The values `collect(.byTime(...))` holds between two publications. @unchecked Sendable:
/// `values` is read and written only under `lock`.
final class TimedBatch<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Value] = []

    /// Adds `value`; returns the batch when it reached `limit` (and starts a new one).
    func add(_ value: Value, limit: Int?) -> [Value]? {
        lock.lock()
        defer { lock.unlock() }
        values.append(value)
        guard let limit, values.count >= limit else { return nil }
        defer { values = [] }
        return values
    }

    /// The values held, if any (and starts a new batch).
    func take() -> [Value]? {
        lock.lock()
        defer { lock.unlock() }
        guard !values.isEmpty else { return nil }
        defer { values = [] }
        return values
    }
}

/// A repeating timer held among a funnel's upstreams, so that the funnel's end or its
/// subscriber's cancellation stops it. @unchecked Sendable: `timer` is set once.
final class TimerHold: Subscription, @unchecked Sendable {
    private let timer: any Cancellable
    init(_ timer: any Cancellable) { self.timer = timer }
    func request(_ demand: Subscribers.Demand) {}
    func cancel() { timer.cancel() }
}

extension Publishers {
    /// How `collect(_:options:)` groups values in time (Apple: `Publishers.TimeGroupingStrategy`).
    public enum TimeGroupingStrategy<Context: Scheduler> {
        /// Every interval on the scheduler, the values that came during it.
        case byTime(Context, Context.SchedulerTimeType.Stride)
        /// The same, and also as soon as that many values came.
        case byTimeOrCount(Context, Context.SchedulerTimeType.Stride, Int)
    }

    /// A publisher of the values grouped in time (Apple: `Publishers.CollectByTime`).
    public struct CollectByTime<Upstream: Publisher, Context: Scheduler>: Publisher {
        public typealias Output = [Upstream.Output]
        public typealias Failure = Upstream.Failure
        /// The publisher whose values are grouped.
        public let upstream: Upstream
        /// How they are grouped.
        public let strategy: TimeGroupingStrategy<Context>
        /// The scheduler's options.
        public let options: Context.SchedulerOptions?

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            let funnel = Funnel<Output, Failure>(AnySubscriber(subscriber))
            funnel.start()
            let (scheduler, interval, limit): (Context, Context.SchedulerTimeType.Stride, Int?)
            switch strategy {
            case .byTime(let context, let stride): (scheduler, interval, limit) = (context, stride, nil)
            case .byTimeOrCount(let context, let stride, let count): (scheduler, interval, limit) = (context, stride, max(1, count))
            }
            let options = self.options
            let batch = TimedBatch<Upstream.Output>()
            let timer = scheduler.schedule(after: scheduler.now.advanced(by: interval), interval: interval,
                                           tolerance: scheduler.minimumTolerance, options: options) {
                if let values = batch.take() { funnel.send(values) }
            }
            let hold = TimerHold(timer)
            funnel.attach(hold, owner: hold, demand: .none)
            funnel.follow(upstream, onValue: { value in
                    // A full batch goes out on the scheduler too, in order with the timer's.
                    if let full = batch.add(value, limit: limit) { scheduler.schedule(options: options) { funnel.send(full) } }
                }, onCompletion: { completion in
                    scheduler.schedule(options: options) {
                        // What is held goes out before the end; a failure drops it.
                        if case .finished = completion, let rest = batch.take() { funnel.send(rest) }
                        funnel.finish(completion)
                    }
                })
        }
    }
}

extension Publisher {
    /// Groups values in time: every interval of `strategy` on its scheduler, the values that
    /// came during it (none: nothing is published), or, with `.byTimeOrCount`, as soon as
    /// that many came; what is held when the upstream finishes goes out before the end.
    public func collect<S: Scheduler>(_ strategy: Publishers.TimeGroupingStrategy<S>, options: S.SchedulerOptions? = nil) -> Publishers.CollectByTime<Self, S> {
        Publishers.CollectByTime(upstream: self, strategy: strategy, options: options)
    }
}
