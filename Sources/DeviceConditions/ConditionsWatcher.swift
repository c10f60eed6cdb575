import Dispatch
import Foundation
import Synchronization

/// Keeps a ``DeviceReading`` current without polling what the kernel announces:
///
/// - a ``KernelEventMonitor`` event re-reads just the parts it concerns (power on a
///   power-supply uevent, network on rtnetlink, thermal on a thermal uevent), after a short
///   ``settleDelay`` that folds a burst (link up, address, route) into one read;
/// - a timer every ``sampleInterval`` (30 s, the ceiling for slow readings in docs/system.md, "Properties") re-reads the
///   parts no event announces (``LinuxConditionsReader/Parts/sampled``: battery level,
///   Low Power Mode, thermal, idleness, CPU pressure), plus any part whose socket could not
///   be opened. The timer is armed only while `shouldSample()` says something depends on
///   conditions (an ``ArmedSampler``): an idle scheduler has no timer at all and wakes
///   for nothing; the owner calls ``reconsiderSampling()`` when work appears or goes;
/// - after each re-read, `onReading` gets the whole reading; the caller decides whether
///   the conditions changed.
///
/// Everything runs on ``queue``, a serial queue; the reading is confined to it.
public final class ConditionsWatcher: @unchecked Sendable {
    // @unchecked: `reading`, `pending` and `flushScheduled` are touched only on `queue`;
    // `events`, `sampler` and `problems` are set once, in init, before any handler can run.

    /// What is read.
    public let reader: LinuxConditionsReader
    /// Where events, samples and `onReading` run.
    public let queue: DispatchQueue
    /// How often slow values are sampled while something depends on them.
    public let sampleInterval: TimeInterval
    /// How long after an event the re-read waits for the rest of a burst.
    public let settleDelay: TimeInterval
    /// Why kernel events are (partly) unavailable; empty when both sockets opened or
    /// events were not asked for. Set once, in init.
    public private(set) var problems: [String] = []

    private let now: @Sendable () -> Date
    private let shouldSample: @Sendable () -> Bool
    private let onReading: @Sendable (DeviceReading) -> Void
    private var reading: DeviceReading
    private var pending: LinuxConditionsReader.Parts = []
    private var flushScheduled = false
    private var events: KernelEventMonitor?
    private var sampler: ArmedSampler?

    /// Reads once now and starts watching.
    /// - Parameters:
    ///   - kernelEvents: open the netlink sockets (tests pass `false` and call
    ///     ``kernelChanged(_:)`` themselves).
    ///   - sampling: sample on a timer while `shouldSample()` (tests pass `false` and call
    ///     ``sample()``).
    ///   - makeTimer: makes the sampling timer (tests count arms with their own).
    ///   - now: the clock for idleness (terminal activity is measured against it).
    ///   - shouldSample: whether anything depends on conditions right now.
    ///   - onReading: called on ``queue`` after every re-read.
    public init(
        reader: LinuxConditionsReader,
        queue: DispatchQueue = DispatchQueue(label: "bgtask.conditions"),
        sampleInterval: TimeInterval = 30,
        settleDelay: TimeInterval = 0.2,
        kernelEvents: Bool = true,
        sampling: Bool = true,
        makeTimer: @escaping ArmedSampler.TimerFactory = ArmedSampler.dispatchTimer,
        now: @escaping @Sendable () -> Date = { Date() },
        shouldSample: @escaping @Sendable () -> Bool,
        onReading: @escaping @Sendable (DeviceReading) -> Void
    ) {
        self.reader = reader
        self.queue = queue
        self.sampleInterval = sampleInterval
        self.settleDelay = settleDelay
        self.now = now
        self.shouldSample = shouldSample
        self.onReading = onReading
        self.reading = reader.reading(now: now())

        if kernelEvents {
            let opened = KernelEventMonitor(queue: queue) { [weak self] changes in self?.kernelChanged(changes) }
            problems = opened.problems
            events = opened.watching.isEmpty ? nil : opened
        }

        if sampling {
            let sampler = ArmedSampler(interval: sampleInterval, queue: queue, makeTimer: makeTimer, shouldRun: shouldSample) { [weak self] in
                self?.refreshSampled()
            }
            self.sampler = sampler
            sampler.reconsider()
        }
    }

    /// Arms the sampling timer if `shouldSample()` now says so, disarms it otherwise.
    /// Call it whenever what `shouldSample` reads may have changed (work appeared or went).
    public func reconsiderSampling() {
        sampler?.reconsider()
    }

    /// Whether the sampling timer is armed.
    public var isSampling: Bool { sampler?.isArmed ?? false }

    /// What the kernel monitor watches (empty without kernel events).
    public var watching: KernelEventMonitor.Changes { events?.watching ?? [] }

    /// The parts the timer samples: ``LinuxConditionsReader/Parts/sampled``, plus the
    /// network when no rtnetlink socket announces its changes.
    public var sampledParts: LinuxConditionsReader.Parts {
        watching.contains(.network) ? .sampled : LinuxConditionsReader.Parts.sampled.union(.network)
    }

    /// The latest reading (waits for the queue; do not call from it).
    public var current: DeviceReading { queue.sync { reading } }

    /// Something changed: re-read the parts concerned after ``settleDelay``. Called by the
    /// kernel monitor; tests call it to stand in for an event.
    public func kernelChanged(_ changes: KernelEventMonitor.Changes) {
        var parts: LinuxConditionsReader.Parts = []
        if changes.contains(.power) { parts.insert(.power) }
        if changes.contains(.network) { parts.insert(.network) }
        if changes.contains(.thermal) { parts.insert(.thermal) }
        guard !parts.isEmpty else { return }
        let due = parts
        queue.async { [self] in
            pending.formUnion(due)
            guard !flushScheduled else { return }
            flushScheduled = true
            queue.asyncAfter(deadline: .now() + settleDelay) { [self] in
                let due = pending
                pending = []
                flushScheduled = false
                refresh(due)
            }
        }
    }

    /// Reads every part now, on ``queue`` (so it is ordered with the events' and samples'
    /// re-reads, and the watcher's reading stays whole), hands it to `onReading`, and returns
    /// it: for `bgtask conditions`, whose fresh reading becomes the scheduler's.
    public func readEverything() -> DeviceReading {
        queue.sync {
            reading = reader.reading(now: now())
            onReading(reading)
            return reading
        }
    }

    /// One tick of the sampling timer: re-reads ``sampledParts`` if `shouldSample()`.
    public func sample() {
        queue.async { [self] in sampleOnQueue() }
    }

    private func sampleOnQueue() {
        guard shouldSample() else { return }
        refresh(sampledParts)
    }

    private func refreshSampled() {
        refresh(sampledParts)
    }

    private func refresh(_ parts: LinuxConditionsReader.Parts) {
        reader.refresh(&reading, parts: parts, now: now())
        onReading(reading)
    }

    /// Stops the timer and closes the sockets. Idempotent.
    public func cancel() {
        sampler?.cancel()
        events?.cancel()
    }

    deinit { cancel() }
}

/// A timer that repeats every ``interval`` only while `shouldRun()` holds: armed by
/// ``reconsider()`` when it starts to hold, disarmed by ``reconsider()`` when it stops (or
/// by its own next tick, which then does nothing). So a process with nothing to sample
/// has no timer and takes no wakeups.
public final class ArmedSampler: Sendable {
    /// Makes a repeating timer that calls `tick` on `queue` every `interval` seconds.
    public typealias TimerFactory = @Sendable (_ interval: TimeInterval, _ queue: DispatchQueue, _ tick: @escaping @Sendable () -> Void) -> any SamplerTimer

    /// How often it ticks while armed.
    public let interval: TimeInterval
    /// Where ticks run.
    public let queue: DispatchQueue
    private let makeTimer: TimerFactory
    private let shouldRun: @Sendable () -> Bool
    private let tick: @Sendable () -> Void
    /// The armed timer. `shouldRun()` is read and the timer changed under this one lock,
    /// so the last ``reconsider()`` sees the latest state whatever the order of callers.
    private let timer = Mutex<(any SamplerTimer)?>(nil)

    /// Creates a disarmed sampler; call ``reconsider()`` to arm it if `shouldRun()`.
    public init(
        interval: TimeInterval,
        queue: DispatchQueue,
        makeTimer: @escaping TimerFactory = ArmedSampler.dispatchTimer,
        shouldRun: @escaping @Sendable () -> Bool,
        tick: @escaping @Sendable () -> Void
    ) {
        self.interval = interval
        self.queue = queue
        self.makeTimer = makeTimer
        self.shouldRun = shouldRun
        self.tick = tick
    }

    /// Arms the timer if `shouldRun()` and it is not armed; disarms it if not `shouldRun()`.
    public func reconsider() {
        timer.withLock { timer in
            let wanted = shouldRun()
            if wanted, timer == nil {
                timer = makeTimer(interval, queue) { [weak self] in self?.fire() }
            } else if !wanted, let armed = timer {
                armed.cancel()
                timer = nil
            }
        }
    }

    /// Whether the timer is armed.
    public var isArmed: Bool { timer.withLock { $0 != nil } }

    /// Disarms the timer for good (until the next ``reconsider()``).
    public func cancel() {
        timer.withLock { timer in
            timer?.cancel()
            timer = nil
        }
    }

    private func fire() {
        let armed = timer.withLock { timer -> Bool in
            guard timer != nil else { return false }
            if shouldRun() { return true }
            timer?.cancel()
            timer = nil
            return false
        }
        if armed { tick() }
    }

    /// A Dispatch timer source (one second of leeway: slow readings need no precision).
    public static let dispatchTimer: TimerFactory = { interval, queue, tick in
        let source = DispatchSource.makeTimerSource(queue: queue)
        source.schedule(deadline: .now() + interval, repeating: interval, leeway: .seconds(1))
        source.setEventHandler(handler: tick)
        source.activate()
        return DispatchSamplerTimer(source: source)
    }

    private struct DispatchSamplerTimer: SamplerTimer, @unchecked Sendable {
        // DispatchSourceTimer is thread-safe; it is just not annotated Sendable.
        let source: any DispatchSourceTimer
        func cancel() { source.cancel() }
    }

    deinit { timer.withLock { $0?.cancel() } }
}

/// A timer made by an ``ArmedSampler/TimerFactory``.
public protocol SamplerTimer: Sendable {
    /// Stops the timer; cancelling twice is harmless.
    func cancel()
}
